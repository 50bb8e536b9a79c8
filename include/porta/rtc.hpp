// SPDX-License-Identifier: Apache-2.0
// Run-time compiled kernels: PyCUDA's SourceModule and CuPy's RawKernel for porta, from
// plain C++. A kernel is source text in porta's small dialect (docs/rtc.md): a function marked
// PORTA_RTC_KERNEL whose first parameter is the index, then the launch's arguments. It is compiled
// for the device it runs on at its first launch there (NVRTC on CUDA, hiprtc on HIP, the host C++
// compiler on the CPU), cached on disk and in the process, and launched on porta Arrays:
//
//   porta::rtc::Module m(R"(
//     PORTA_RTC_KERNEL void saxpy(porta_index i, float a, porta::rtc::View<const float> x,
//                                 porta::rtc::View<float> y) { y[i] = a * x[i] + y[i]; })");
//   porta::rtc::Kernel k = m.kernel("saxpy");
//   k.launch(porta::Device(porta::DeviceType::cpu), n, 2.0f, x, y);   // x: const Array<float>&, y: Array<float>&
//
// Arguments: a const Array<T>& becomes View<const T>, an Array<T>& View<T> (contiguous arrays of the
// launch's device), float, double, std::int32_t and std::int64_t pass by value and must match the
// parameter's type exactly. A mismatch, like any error in the source, is a porta::CompileError with
// the compiler's log and the line in the user's source.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "porta/array.hpp"
#include "porta/device.hpp"
#include "porta/error.hpp"
#include "porta/stream.hpp"

namespace porta {

// A run-time kernel did not compile: what() names the kernel and quotes the log; log() is the
// compiler's whole output, line() the first line of the user's source it names (0: none).
//
//   try { k.launch(dev, n, x); } catch (const porta::CompileError& e) { std::cerr << e.log(); }
class CompileError : public InvalidArgument {
 public:
  CompileError(const std::string& what, std::string log, int line)
      : InvalidArgument(what), log_(std::move(log)), line_(line) {}
  const std::string& log() const noexcept { return log_; }
  int line() const noexcept { return line_; }

 private:
  std::string log_;
  int line_;
};

namespace rtc {

namespace detail {
// One launch argument as the generated wrapper sees it: its C++ type in the dialect, its bytes.
struct Arg {
  const char* type;  // "float", "porta::rtc::View<const float>", ...
  std::size_t size;  // bytes of the value (and its alignment)
  const void* value;
  Device device;  // of an array
  bool is_array;
  const char* kind;  // "const Array&" for messages
  bool contiguous;
};
struct ViewBits {
  const void* ptr;
  std::int64_t count;
};
template <class T>
constexpr const char* scalar_type() {
  if constexpr (std::is_same_v<T, float>) {
    return "float";
  } else if constexpr (std::is_same_v<T, double>) {
    return "double";
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return "int";
  } else {
    static_assert(std::is_same_v<T, std::int64_t>, "a new dtype (dtypes.inc): give it its run-time kernel type here");
    return "long long";
  }
}
template <class T, bool Const>
constexpr const char* view_type() {
  if constexpr (std::is_same_v<T, float>) {
    return Const ? "porta::rtc::View<const float>" : "porta::rtc::View<float>";
  } else if constexpr (std::is_same_v<T, double>) {
    return Const ? "porta::rtc::View<const double>" : "porta::rtc::View<double>";
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return Const ? "porta::rtc::View<const int>" : "porta::rtc::View<int>";
  } else {
    static_assert(std::is_same_v<T, std::int64_t>, "a new dtype (dtypes.inc): give it its run-time kernel type here");
    return Const ? "porta::rtc::View<const long long>" : "porta::rtc::View<long long>";
  }
}
template <class T>
Arg make_arg(const Array<T>& a, ViewBits& bits) {
  bits = ViewBits{a.valid() ? a.data() : nullptr, a.valid() ? a.size() : -1};
  return Arg{view_type<T, true>(),          sizeof(ViewBits), &bits, a.device(), true, "const Array&",
             a.valid() && a.is_contiguous()};
}
template <class T>
Arg make_arg(Array<T>& a, ViewBits& bits) {
  bits = ViewBits{a.valid() ? a.data() : nullptr, a.valid() ? a.size() : -1};
  return Arg{view_type<T, false>(),         sizeof(ViewBits), &bits, a.device(), true, "Array&",
             a.valid() && a.is_contiguous()};
}
template <class T, class = std::enable_if_t<porta::detail::is_supported_v<T>>>
Arg make_arg(const T& v, ViewBits&) {
  return Arg{scalar_type<T>(), sizeof(T), &v, Device(), false, "scalar", true};
}

struct ModuleState;
// Compiles (or finds in the caches) and launches; libporta, runtime/rtc.cpp. cover: the entry's index
// is a vector's work (porta's generated fused kernels; the backend's rtc_launch_cover).
void launch(const std::shared_ptr<ModuleState>& module, const std::string& kernel, Device device, const Stream* stream,
            std::int64_t n, const std::vector<Arg>& args, bool cover = false);
std::shared_ptr<ModuleState> make_module(std::string source, std::string options, std::string source_name);
// The whole program a launch with `args` compiles (prelude, source, generated entry), for tests that
// compile it with NVRTC without a GPU (tests/rtc/test_nvrtc.cpp).
std::string program_text(const std::string& source, const std::string& kernel, const std::vector<Arg>& args);
}  // namespace detail

// One kernel of a Module, by name. Cheap to copy; launches from several threads are safe.
class Kernel {
 public:
  // Runs name(i, args...) for i in [0, n) on `device`'s default stream (asynchronously on GPUs).
  // The first launch on a device with these argument types compiles (or loads from the disk cache).
  //   k.launch(porta::Device::cuda(0), x.size(), 2.0f, x, y);
  template <class... A>
  void launch(Device device, std::int64_t n, A&&... args) const {
    run(device, nullptr, n, std::forward<A>(args)...);
  }
  // The same on `stream` (its device).
  template <class... A>
  void launch(const Stream& stream, std::int64_t n, A&&... args) const {
    run(stream.device(), &stream, n, std::forward<A>(args)...);
  }
  const std::string& name() const noexcept { return name_; }

 private:
  friend class Module;
  Kernel(std::shared_ptr<detail::ModuleState> m, std::string name) : module_(std::move(m)), name_(std::move(name)) {}

  template <class... A>
  void run(Device device, const Stream* stream, std::int64_t n, A&&... args) const {
    static_assert(sizeof...(A) <= 32, "porta::rtc: at most 32 kernel arguments");
    detail::ViewBits bits[sizeof...(A) > 0 ? sizeof...(A) : 1];
    std::size_t k = 0;
    std::vector<detail::Arg> list{detail::make_arg(args, bits[k++])...};
    (void)k;
    detail::launch(module_, name_, device, stream, n, list);
  }

  std::shared_ptr<detail::ModuleState> module_;
  std::string name_;
};

// Source text in porta's dialect, with the options for the compiler (passed to NVRTC, hiprtc or the
// host compiler as they are; "-DTILE=4" works for all three). Nothing is compiled until a launch.
//   porta::rtc::Module m(source);                     // or Module::from_file("kernels.porta")
//   m.kernel("saxpy").launch(dev, n, 2.0f, x, y);
class Module {
 public:
  explicit Module(std::string source, std::string options = std::string())
      : state_(detail::make_module(std::move(source), std::move(options), "porta_rtc_source")) {}
  // Reads the source from `path`; compiler messages name the file.
  static Module from_file(const std::string& path, std::string options = std::string());
  Kernel kernel(std::string name) const { return Kernel(state_, std::move(name)); }

 private:
  explicit Module(std::shared_ptr<detail::ModuleState> s) : state_(std::move(s)) {}
  std::shared_ptr<detail::ModuleState> state_;
};

// What the caches did in this process: compiler runs, kernels read from the disk cache (and
// entries found corrupt there), launches served by the in-process cache.
struct Stats {
  std::uint64_t compiles = 0;
  std::uint64_t disk_hits = 0;
  std::uint64_t disk_corrupt = 0;
  std::uint64_t memory_hits = 0;
};
Stats stats();

// Whether `device`'s backend can compile run-time kernels: empty when it can, else why not
// ("NVRTC not found: libnvrtc.so.13: cannot open shared object file"). Never throws for a known
// backend that did not load: the reason is the backend's.
std::string unavailable_reason(Device device);
// The compiler and target the cache key names ("g++ 12.2.0 x86_64 ...", "NVRTC 13.0 sm_90").
std::string compiler_info(Device device);

// The directory of the disk cache: $PORTA_CACHE_DIR, else $XDG_CACHE_HOME/porta, else
// ~/.cache/porta (run-time kernels live in its rtc/ folder).
std::string cache_dir();

}  // namespace rtc
}  // namespace porta
