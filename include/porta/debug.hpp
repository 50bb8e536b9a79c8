// SPDX-License-Identifier: Apache-2.0
// Debugging kernels: bounds-checked views and porta::fail, on every device (docs/debugging.md).
//
// Bounds checks, off by default. Define PORTA_BOUNDS_CHECK to 1 before the first porta include of
// a translation unit (or configure porta with -DPORTA_BOUNDS_CHECK=ON, which defines it for every
// target linking porta::porta, installed consumers too). Then every View accessor (v[i], v(r, c))
// checks its index against the view's extent, each dimension on its own, and a violation fails the
// call with a porta::KernelError naming the array's label, its shape, the index and the kernel:
//
//   porta::parallel_for: kernel 'smooth' on cpu: index 12 is out of bounds for array 'u' of shape (10)
//
// On the CPU (cpu, cpu:strict) the accessor throws, so the violating index and the rest of the
// thread's indices never run; cpu raises at the launch, cpu:strict at the next wait (its kernels
// run there). A GPU kernel records the first violation on its device, touches a
// harmless dummy element instead of the bad address, and runs on; the next wait on that device
// (Stream::synchronize, Event::synchronize, porta::synchronize, a copy to the host) raises the
// error and clears the record, so the device stays usable. Off, an accessor is the plain load it
// always was: no branch, no extra code.
//
// porta::fail("message", values...) reports a failure from inside a kernel on every device, with
// up to four numbers (integers or floating point) printed after the message:
//
//   PORTA_KERNEL((std::int64_t i) { if (rho[i] < 0) porta::fail("negative density at", i, rho[i]); })
//   // porta::parallel_for: kernel 'eos' on cuda:0: negative density at 17 -0.25
//
// On the CPU it throws (the thread's remaining indices stay unrun, as for any throwing kernel). On a
// GPU it records the first failure (the message cut to 127 characters) and returns: the rest of
// that thread's work, and every other thread's, still runs, so a kernel that must not go on after
// a failure returns right after calling it. The next wait on the device raises it.
//
// ---- how the launches name the kernel (kernels.hpp and detail/gpu/user_kernels.cuh) ------------
// CPU: the accessors and fail() throw detail::KernelFault, a KernelError whose message names no
// kernel (they cannot know it). A CPU launch that knows its kernel's name catches it and calls
//   detail::name_fault(fault, fn, name, device);      // throws KernelError("fn: kernel 'name' on cpu: ...")
// A launch queued on cpu:strict (it runs at the next synchronize) catches it inside the task and
// calls detail::defer_fault(device, fault, name) instead: the next wait raises it, as on a GPU.
// GPU: every launch calls detail::gpu_faults::prepare_faults(device, name) (detail/gpu/faults.cuh),
// which points this translation unit's kernels at the device's fault record and remembers the
// name; libporta raises what the record holds after each of its waits (runtime/faults.cpp).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>

#include "porta/detail/config.hpp"
#include "porta/device.hpp"
#include "porta/error.hpp"

// 1 where View accessors check their indices in this translation unit. PORTA_BOUNDS_CHECK defined
// empty (-DPORTA_BOUNDS_CHECK, #define PORTA_BOUNDS_CHECK) counts as on, 0 as off.
#if defined(PORTA_BOUNDS_CHECK) && ((PORTA_BOUNDS_CHECK + 0) != 0 || (0 - PORTA_BOUNDS_CHECK - 1) == 1)
#define PORTA_DETAIL_BOUNDS true
#else
#define PORTA_DETAIL_BOUNDS false
#endif

// The report paths stay out of line and out of the accessor's hot code.
#if defined(__GNUC__) || defined(__clang__)
#define PORTA_DETAIL_COLD __attribute__((noinline, cold))
#else
#define PORTA_DETAIL_COLD
#endif

namespace porta {
namespace detail {

// ---- what a failure records: written by a GPU kernel into pinned host memory, or built on the CPU

enum FaultKind : int { kFaultNone = 0, kFaultBounds = 1, kFaultFail = 2 };
enum FaultValueKind : int { kValueSigned = 1, kValueUnsigned = 2, kValueFloat = 3, kValueDouble = 4 };
inline constexpr int kFaultMaxValues = 4;
inline constexpr int kFaultMessageBytes = 128;  // 127 characters and the terminator

struct FaultValue {
  int kind;
  std::int64_t i;  // integers (an unsigned one as its bits)
  double f;        // floating point (a float exactly, as a double)
};

struct FaultInfo {
  int kind;                       // FaultKind
  int rank;                       // bounds: 1 for v[i], 2 for v(r, c)
  const char* label;              // bounds: the view's label, an interned host string (nullptr or "": none)
  std::int64_t index[2];          // bounds: i, or (r, c)
  std::int64_t size, rows, cols;  // bounds: the view's extents
  int nvalues;                    // fail: values used
  FaultValue values[kFaultMaxValues];
  char message[kFaultMessageBytes];  // fail: the message, cut to fit
};

// One per GPU device, in pinned host memory that the device writes directly. state turns 1 once a
// kernel has written info in full (it claims the record first through `claim`, in device memory,
// so that only the first failure writes it).
struct FaultRecord {
  volatile int state;
  int reserved;
  FaultInfo info;
};

// What a translation unit's kernels are pointed at (detail/gpu/faults.cuh).
struct FaultSlot {
  unsigned* claim;      // device memory, 0 while the record is free
  FaultRecord* record;  // pinned host memory
};

template <class V>
PORTA_HOST_DEVICE FaultValue fault_value(V v) {
  static_assert(std::is_arithmetic_v<V>, "porta::fail: the values after the message must be numbers");
  FaultValue r{0, 0, 0.0};
  if constexpr (std::is_floating_point_v<V>) {
    r.kind = sizeof(V) == sizeof(float) ? kValueFloat : kValueDouble;
    r.f = static_cast<double>(v);
  } else if constexpr (std::is_signed_v<V>) {
    r.kind = kValueSigned;
    r.i = static_cast<std::int64_t>(v);
  } else {
    r.kind = kValueUnsigned;
    r.i = static_cast<std::int64_t>(static_cast<std::uint64_t>(v));
  }
  return r;
}

// ---- the host side: messages and the exception -----------------------------------------------

// "index 12 is out of bounds for array 'u' of shape (10)", "message 17 -0.25": what failed, with
// no call, kernel or device.
inline std::string describe_fault(const FaultInfo& f) {
  char buf[64];
  if (f.kind == kFaultBounds) {
    const std::string name = f.label != nullptr && *f.label != '\0' ? "array '" + std::string(f.label) + "'"
                                                                    : std::string("array <unnamed>");
    std::string s;
    if (f.rank == 2) {
      s = "index (" + std::to_string(f.index[0]) + ", " + std::to_string(f.index[1]) + ") is out of bounds for " +
          name + " of shape (" + std::to_string(f.rows) + ", " + std::to_string(f.cols) + ")";
    } else {
      s = "index " + std::to_string(f.index[0]) + " is out of bounds for " + name;
      // A rank-2 array read through v[i] has a flat index: its shape and its element count.
      if (f.rows > 1 && f.rows * f.cols == f.size)
        s += " of shape (" + std::to_string(f.rows) + ", " + std::to_string(f.cols) + ") (" + std::to_string(f.size) +
             " elements)";
      else
        s += " of shape (" + std::to_string(f.size) + ")";
    }
    return s;
  }
  std::string s(f.message);
  for (int k = 0; k < f.nvalues && k < kFaultMaxValues; ++k) {
    const FaultValue& v = f.values[k];
    switch (v.kind) {
      case kValueSigned:
        std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v.i));
        break;
      case kValueUnsigned:
        std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(static_cast<std::uint64_t>(v.i)));
        break;
      case kValueFloat:  // enough digits to give the float back exactly
        std::snprintf(buf, sizeof buf, "%.9g", v.f);
        break;
      default:
        std::snprintf(buf, sizeof buf, "%.17g", v.f);
        break;
    }
    s += (s.empty() ? "" : " ") + std::string(buf);
  }
  return s;
}

// "fn: kernel 'name' on cuda:0: what" (the name left out where the launch has none).
inline std::string kernel_error_message(const char* fn, const char* name, Device device, const std::string& what) {
  std::string s = std::string(fn != nullptr ? fn : "porta") + ": kernel ";
  if (name != nullptr && *name != '\0') s += "'" + std::string(name) + "' ";
  return s + "on " + device.to_string() + ": " + what;
}

// Thrown on the CPU by a failing accessor or fail(): a KernelError whose message does not yet name
// the kernel (name_fault adds it). info() is what failed.
class KernelFault : public KernelError {
 public:
  explicit KernelFault(const FaultInfo& info)
      : KernelError("porta: a kernel failed: " + describe_fault(info)), info_(info) {}
  const FaultInfo& info() const noexcept { return info_; }

 private:
  FaultInfo info_;
};

// Rethrows `fault` as the KernelError of a named launch: "fn: kernel 'name' on cpu: ...".
[[noreturn]] inline void name_fault(const KernelFault& fault, const char* fn, const char* name, Device device) {
  throw KernelError(kernel_error_message(fn, name, device, describe_fault(fault.info())));
}

// ---- libporta (runtime/faults.cpp) ----------------------------------------------------------------

// GPU `device`'s fault record, made on first use; {nullptr, nullptr} when it cannot be (no pinned
// memory): the kernels then record nothing. Never throws.
FaultSlot gpu_fault_slot(Device device) noexcept;
// Remembers `name` (nullptr: an unnamed launch) as the kernel last launched on `device`. The
// pointer is kept, not the characters: it must stay valid for the process's life (kernels.hpp's
// LaunchName gives such pointers: a default name's static, or stable_name's interned copy).
void note_launch(Device device, const char* name) noexcept;
// Raises what a kernel on `device` reported since the last check, as a KernelError whose message
// starts with fn, and clears it; returns when nothing was reported. A load of the record when
// nothing was: libporta calls it after each of its waits.
void raise_kernel_faults(Device device, const char* fn);
// A CPU fault of a queued kernel (cpu:strict), for the next wait on `device` to raise.
void defer_fault(Device device, const KernelFault& fault, const char* name);
// " (the last user kernel launched on cuda:0 was 'name')", or "" when none was: for a backend
// error that a kernel may have caused (an illegal address).
std::string last_launch_note(Device device);

[[noreturn]] inline void throw_fault(const FaultInfo& info) {
  throw KernelFault(info);
}

}  // namespace detail
}  // namespace porta

#if PORTA_GPU_COMPILER
#include "porta/detail/gpu/faults.cuh"
#endif

namespace porta {
namespace detail {

// The accessors' failure path: throws on the host; on a GPU records the first violation and
// returns a dummy element for the access to land on.
template <class T>
PORTA_HOST_DEVICE PORTA_DETAIL_COLD T* bounds_fault(const char* label, std::int64_t size, std::int64_t rows,
                                                    std::int64_t cols, int rank, std::int64_t i, std::int64_t j) {
#if PORTA_DEVICE_PASS
  static_assert(sizeof(T) <= gpu_faults::kSinkBytes && alignof(T) <= 8,
                "porta: a bounds-checked View's element is too large for the dummy element");
  gpu_faults::record_bounds(label, size, rows, cols, rank, i, j);
  return static_cast<T*>(gpu_faults::sink());
#else
  FaultInfo f{};
  f.kind = kFaultBounds;
  f.rank = rank;
  f.label = label;
  f.index[0] = i;
  f.index[1] = j;
  f.size = size;
  f.rows = rows;
  f.cols = cols;
  throw_fault(f);
#endif
}

PORTA_HOST_DEVICE PORTA_DETAIL_COLD inline void report_fail(const char* message, const FaultValue* values, int n) {
#if PORTA_DEVICE_PASS
  gpu_faults::record_fail(message, values, n);
#else
  FaultInfo f{};
  f.kind = kFaultFail;
  int k = 0;
  if (message != nullptr)
    for (; k < kFaultMessageBytes - 1 && message[k] != '\0'; ++k) f.message[k] = message[k];
  f.message[k] = '\0';
  f.nvalues = n;
  for (int v = 0; v < n && v < kFaultMaxValues; ++v) f.values[v] = values[v];
  throw_fault(f);
#endif
}

}  // namespace detail

// Fails the kernel that calls it, on every device: message, then the values (up to four numbers).
// Throws on the CPU; on a GPU, records the first failure and returns (see the top of this file).
template <class... V>
PORTA_HOST_DEVICE void fail(const char* message, V... values) {
  static_assert(sizeof...(V) <= detail::kFaultMaxValues, "porta::fail: at most 4 values after the message");
  const detail::FaultValue v[sizeof...(V) + 1] = {detail::fault_value(values)..., detail::FaultValue{0, 0, 0.0}};
  detail::report_fail(message, v, static_cast<int>(sizeof...(V)));
}

}  // namespace porta
