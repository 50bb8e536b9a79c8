// SPDX-License-Identifier: Apache-2.0
// What GPU code shares between vendors: the Api of the compiler at hand (NativeApi: CUDA under nvcc,
// HIP under hipcc; api_cuda.cuh lists what an Api offers, kernel launch included), a guard that
// makes a device current and restores the caller's, fixed-width vector types for 16-byte memory
// accesses, and grid sizing from occupancy. Included only by code compiled as CUDA or HIP.
//
// Launching: every kernel goes through Api::launch(kernel, grid, block, smem, stream, args...),
// which returns the launch's Api::Error; grid and block are dim3 (1-, 2- or 3-D, or one unsigned).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

#include "porta/detail/config.hpp"

#if defined(__HIP__)
#include "porta/detail/gpu/api_hip.cuh"
namespace porta::detail::gpu {
using NativeApi = ApiHip;
}
#elif defined(__CUDACC__)
#include "porta/detail/gpu/api_cuda.cuh"
namespace porta::detail::gpu {
using NativeApi = ApiCuda;
}
#else
#error "porta/detail/gpu/api.cuh is for translation units compiled as CUDA or HIP"
#endif

namespace porta::detail::gpu {

// Threads per block of the memory-bound kernels: a multiple of every warp and wavefront size.
inline constexpr int kBlockThreads = 256;

// Makes a device current for the guard's lifetime and then restores the caller's current device:
// porta's callers may use the vendor runtime themselves, and the ABI passes the device as an
// argument, not as thread state, so an entry must not leave it changed.
template <class Api>
class DeviceGuard {
 public:
  DeviceGuard() = default;
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  ~DeviceGuard() {
    if (previous_ >= 0) (void)Api::set_device(previous_);
  }
  // Makes `dev` current (no runtime call when it already is). kSuccess or the vendor's error.
  typename Api::Error enter(int dev) {
    int current = -1;
    typename Api::Error e = Api::get_device(&current);
    if (e != Api::kSuccess || current == dev) return e;
    e = Api::set_device(dev);
    if (e == Api::kSuccess) previous_ = current;
    return e;
  }

 private:
  int previous_ = -1;
};

// N elements of T in one aligned register group, read or written with one 16-byte (or 8-byte)
// access when the address is aligned to the whole group.
template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

// Elements of T per 16-byte access.
template <class T>
inline constexpr int kVec16 = static_cast<int>(16 / sizeof(T));

PORTA_HOST_DEVICE inline bool is_aligned(const void* p, std::size_t bytes) {
  return (reinterpret_cast<std::uintptr_t>(p) & (bytes - 1)) == 0;
}

// Blocks of `threads` that `kernel` can keep resident on the whole current device: the grid of a
// grid-stride kernel that fills every multiprocessor exactly once. Cached per kernel and device,
// since the occupancy calculator is far slower than a launch.
template <class Api, class Kernel>
typename Api::Error resident_grid(Kernel kernel, int threads, std::size_t smem, std::int64_t* grid) {
  using Key = std::tuple<const void*, int, int, std::size_t>;
  static std::mutex mutex;
  static std::map<Key, std::int64_t> cache;
  int dev = 0;
  typename Api::Error e = Api::get_device(&dev);
  if (e != Api::kSuccess) return e;
  const Key key{reinterpret_cast<const void*>(kernel), dev, threads, smem};
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) {
      *grid = it->second;
      return Api::kSuccess;
    }
  }
  int sms = 0, per_sm = 0;
  e = Api::multiprocessor_count(dev, &sms);
  if (e != Api::kSuccess) return e;
  e = Api::max_active_blocks(&per_sm, kernel, threads, smem);
  if (e != Api::kSuccess) return e;
  const std::int64_t g = static_cast<std::int64_t>(sms > 0 ? sms : 1) * (per_sm > 0 ? per_sm : 1);
  {
    std::lock_guard<std::mutex> lock(mutex);
    cache[key] = g;
  }
  *grid = g;
  return Api::kSuccess;
}

// Grids are one-dimensional and at most this many blocks; kernels stride over the rest.
inline constexpr std::int64_t kMaxGrid = 2147483647;

inline std::int64_t clamp_grid(std::int64_t want, std::int64_t cap) {
  if (want > cap) want = cap;
  if (want > kMaxGrid) want = kMaxGrid;
  return want < 1 ? 1 : want;
}

}  // namespace porta::detail::gpu
