// SPDX-License-Identifier: Apache-2.0
// The HIP runtime behind the vendor-neutral names of api_cuda.cuh. Wavefronts are 64 lanes on
// CDNA (gfx90a) and 32 on RDNA (gfx1030): nothing here or in the kernels assumes either, shuffles
// stay inside groups of 32 lanes, which exist on both.
#pragma once

#include <hip/hip_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace porta::detail::gpu {

struct ApiHip {
  using Error = hipError_t;
  using Stream = hipStream_t;
  static constexpr Error kSuccess = hipSuccess;
  static constexpr Error kInvalidValue = hipErrorInvalidValue;
  static constexpr const char* kName = "HIP";
  static constexpr const char* kPrefix = "hip";
  static constexpr int kDeviceType = 2;
  static constexpr const char* kCompiler = "hipcc";

  static const char* error_name(Error e) { return hipGetErrorName(e); }
  static const char* error_string(Error e) { return hipGetErrorString(e); }
  static Error get_last_error() { return hipGetLastError(); }
  static bool is_unavailable(Error e) {
    return e == hipErrorNoDevice || e == hipErrorInsufficientDriver || e == hipErrorInvalidDevice;
  }
  static bool is_out_of_memory(Error e) { return e == hipErrorOutOfMemory; }

  static Error get_device(int* dev) { return hipGetDevice(dev); }
  static Error set_device(int dev) { return hipSetDevice(dev); }
  static Error multiprocessor_count(int dev, int* n) {
    return hipDeviceGetAttribute(n, hipDeviceAttributeMultiprocessorCount, dev);
  }
  template <class Kernel>
  static Error max_active_blocks(int* blocks, Kernel kernel, int threads, std::size_t smem) {
    return hipOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, threads, smem);
  }

  // ROCm 5.2 ships the stream-ordered allocator as beta and not every device supports it, so the
  // temporaries of kernels come from it only where the current device says it does (and
  // PORTA_HIP_MALLOC_ASYNC=0 has not turned it off), exactly as libporta_hip.so decides for arrays;
  // elsewhere hipMalloc/hipFree, which are correct but synchronise. The choice is made once per
  // device, so a free always matches its allocation.
  static bool use_pool() {
    int dev = 0;
    if (hipGetDevice(&dev) != hipSuccess) {
      (void)hipGetLastError();
      return true;  // the allocation call itself reports the problem
    }
    constexpr int kSlots = 64;
    static std::atomic<int> state[kSlots];  // 0: not asked yet, 1: pool, 2: no pool
    const int cached = dev >= 0 && dev < kSlots ? state[dev].load(std::memory_order_relaxed) : 0;
    if (cached != 0) return cached == 1;
    bool pool = true;
    if (const char* v = std::getenv("PORTA_HIP_MALLOC_ASYNC"))
      pool = !(std::strcmp(v, "0") == 0 || std::strcmp(v, "off") == 0 || std::strcmp(v, "OFF") == 0);
    int supported = 0;
    if (pool && (hipDeviceGetAttribute(&supported, hipDeviceAttributeMemoryPoolsSupported, dev) != hipSuccess ||
                 supported == 0)) {
      (void)hipGetLastError();
      pool = false;
    }
    if (dev >= 0 && dev < kSlots) state[dev].store(pool ? 1 : 2, std::memory_order_relaxed);
    return pool;
  }
  static Error malloc_async(void** p, std::size_t bytes, Stream s) {
    return use_pool() ? hipMallocAsync(p, bytes, s) : hipMalloc(p, bytes);
  }
  static Error free_async(void* p, Stream s) { return use_pool() ? hipFreeAsync(p, s) : hipFree(p); }
  static Error copy_to_host_async(void* dst, const void* src, std::size_t bytes, Stream s) {
    return hipMemcpyAsync(dst, src, bytes, hipMemcpyDeviceToHost, s);
  }
  static Error stream_synchronize(Stream s) { return hipStreamSynchronize(s); }

#if defined(__HIP__)
  template <class T>
  __device__ static T shfl_down(T v, unsigned offset, int width) {
    // Lanes outside the caller's group of `width` are inactive or unread; no mask is needed.
    return __shfl_down(v, offset, width);
  }
#endif
};

}  // namespace porta::detail::gpu
