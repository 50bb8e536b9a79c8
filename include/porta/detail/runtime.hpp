// SPDX-License-Identifier: Apache-2.0
// Untyped entry points of libporta that the header templates (Array<T>, kernels) call. Not part
// of the public API: names and signatures may change between releases.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "porta/abi/backend_v1.h"
#include "porta/device.hpp"

namespace porta {
class Stream;
namespace detail {

// The C++ type of each line of porta/abi/dtypes.inc: its porta_dtype and its porta_scalar member.
// Any other type has no dtype.
template <class T>
struct DtypeOf {
  static constexpr bool supported = false;
};
#define PORTA_DTYPE(NAME, name, ctype, ...)                     \
  template <>                                                   \
  struct DtypeOf<ctype> {                                       \
    static constexpr bool supported = true;                     \
    static constexpr porta_dtype value = PORTA_##NAME;          \
    static void store(porta_scalar& s, ctype v) { s.name = v; } \
  };
#include "porta/abi/dtypes.inc"
#undef PORTA_DTYPE

template <class T>
inline constexpr bool is_supported_v = DtypeOf<T>::supported;

template <class T>
constexpr porta_dtype dtype_of() {
  static_assert(is_supported_v<T>, "porta has no dtype for this type (the list: porta/abi/dtypes.inc)");
  return DtypeOf<T>::value;
}

template <class T>
porta_scalar to_scalar(T v) {
  porta_scalar s;
  DtypeOf<T>::store(s, v);
  return s;
}

// The facts of porta/abi/dtypes.inc for libporta's callers (backends/common/dtype.hpp derives
// them): "float32", ... ("unknown dtype" outside the list), and bytes per element (0 outside it).
const char* dtype_name(porta_dtype dt) noexcept;
std::size_t dtype_size(porta_dtype dt) noexcept;

// The backend table of a device, loading plugins on first use; throws Unavailable with the reason.
const porta_backend_v1& backend_for(Device device);
// Throws the porta::Error subclass matching `status`, with "fn: " and the backend's message.
[[noreturn]] void throw_status(porta_status status, const char* fn, Device device);
inline void check(porta_status status, const char* fn, Device device) {
  if (status != PORTA_OK) throw_status(status, fn, device);
}

// The stream handle to use on `device` for `stream` (the placeholder -> default stream); a
// stream of another device is a DeviceMismatch naming `fn`.
porta_stream stream_for(const Stream& stream, Device device, const char* fn);

void* device_alloc(Device device, std::size_t bytes, porta_stream s, const char* fn);
void device_free(Device device, void* ptr, porta_stream s) noexcept;
// Host memory from `device`'s backend: page-locked for a GPU backend, aligned ordinary memory for
// the CPU. Freed by the same backend.
void* host_alloc(Device device, std::size_t bytes, const char* fn);
void host_free(Device device, void* ptr) noexcept;
// Host <-> device copies; synchronous when `sync` is true (needed for pageable host memory).
void copy_to_host(Device src_device, const void* src, void* dst, std::size_t bytes, porta_stream s, bool sync);
void copy_from_host(Device dst_device, void* dst, const void* src, std::size_t bytes, porta_stream s, bool sync);
// A few bytes (<= 64) device -> host, waiting for the stream: through a pinned per-thread buffer
// on GPUs. Anything larger goes as copy_to_host.
void copy_small_to_host(Device src_device, const void* src, void* dst, std::size_t bytes, porta_stream s);
// That per-thread pinned buffer of `device`'s GPU backend (kPinnedScratchBytes, made on first use,
// freed when the thread ends), or nullptr: on the CPU, when the backend cannot pin, or in the
// thread's teardown. GPU kernels may write it directly (pinned memory is mapped into every device's
// address space). Its user must have waited for every write into it before it returns or throws:
// the next user on this thread may be another stream's.
inline constexpr std::size_t kPinnedScratchBytes = 64;
void* pinned_scratch(Device device) noexcept;
// Between devices (possibly of different backends: staged through the host).
void copy_between(Device dst_device, void* dst, Device src_device, const void* src, std::size_t bytes, porta_stream s);
void fill(Device device, porta_dtype dt, std::int64_t n, porta_scalar value, void* y, porta_stream s);
void iota(Device device, porta_dtype dt, std::int64_t n, porta_scalar start, porta_scalar step, void* y,
          porta_stream s);

[[noreturn]] void throw_invalid(const char* fn, const char* message);

// n elements of elem bytes, in bytes; InvalidArgument when that does not fit in a size_t (an
// array of 2^61 doubles would otherwise ask for 0 bytes and look valid).
inline std::size_t checked_bytes(std::int64_t n, std::size_t elem, const char* fn) {
  if (n < 0 || static_cast<std::uint64_t>(n) > std::numeric_limits<std::size_t>::max() / elem)
    throw_invalid(fn, ("an array of " + std::to_string(n) + " elements of " + std::to_string(elem) +
                       " bytes does not fit in the address space")
                          .c_str());
  return static_cast<std::size_t>(n) * elem;
}
[[noreturn]] void throw_moved_from(const char* fn);

// Views: "fn: <name> is a strided view (<shape>); this function needs contiguous memory:
// pass <name>.contiguous()".
[[noreturn]] void throw_not_contiguous(const char* fn, const char* name, const char* shape);
// dst[index . dst_strides] = src[index . src_strides] for every index of `dims` (rank 0..4; strides
// in elements, src strides may be 0 to broadcast), on `device`'s stream s. Overlapping src and dst
// go through a temporary, so the result is as if src were read whole first.
void copy_strided(Device device, porta_dtype dt, int rank, const std::int64_t* dims, const void* src,
                  const std::int64_t* src_strides, void* dst, const std::int64_t* dst_strides, porta_stream s,
                  const char* fn);

}  // namespace detail
}  // namespace porta
