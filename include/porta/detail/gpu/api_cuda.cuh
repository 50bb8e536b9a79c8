// SPDX-License-Identifier: Apache-2.0
// The CUDA runtime behind the vendor-neutral names that porta's GPU kernels use (alpaka's ApiCudaRt
// idea): kernels and launchers are templates on an Api struct, so one source serves CUDA and HIP.
// Only what the shared kernels and their launchers need is here; the plugin calls the CUDA runtime
// directly for everything else.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace porta::detail::gpu {

struct ApiCuda {
  using Error = cudaError_t;
  using Stream = cudaStream_t;
  static constexpr Error kSuccess = cudaSuccess;
  static constexpr Error kInvalidValue = cudaErrorInvalidValue;
  static constexpr const char* kName = "CUDA";
  static constexpr const char* kPrefix = "cuda";  // device strings: "cuda:0"
  static constexpr int kDeviceType = 1;           // porta_device_type / porta::DeviceType::cuda
  static constexpr const char* kCompiler = "nvcc";

  static const char* error_name(Error e) { return cudaGetErrorName(e); }
  static const char* error_string(Error e) { return cudaGetErrorString(e); }
  // Returns and clears the last non-sticky error of this thread (a launch failure, mostly).
  static Error get_last_error() { return cudaGetLastError(); }
  static bool is_unavailable(Error e) {
    return e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorInvalidDevice;
  }
  static bool is_out_of_memory(Error e) { return e == cudaErrorMemoryAllocation; }

  static Error get_device(int* dev) { return cudaGetDevice(dev); }
  static Error set_device(int dev) { return cudaSetDevice(dev); }
  static Error multiprocessor_count(int dev, int* n) {
    return cudaDeviceGetAttribute(n, cudaDevAttrMultiProcessorCount, dev);
  }
  template <class Kernel>
  static Error max_active_blocks(int* blocks, Kernel kernel, int threads, std::size_t smem) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, threads, smem);
  }

  // Stream-ordered memory from the device's default pool (the plugin raises its release threshold
  // so that freed blocks stay cached).
  static Error malloc_async(void** p, std::size_t bytes, Stream s) { return cudaMallocAsync(p, bytes, s); }
  static Error free_async(void* p, Stream s) { return cudaFreeAsync(p, s); }
  static Error copy_to_host_async(void* dst, const void* src, std::size_t bytes, Stream s) {
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s);
  }
  static Error stream_synchronize(Stream s) { return cudaStreamSynchronize(s); }

  // Device side. A shuffle never spans more than `width` (<= 32) lanes: porta's trees are written
  // for groups of 32, which are a whole warp on NVIDIA and half a wavefront on wave64 AMD GPUs.
#if defined(__CUDACC__)
  template <class T>
  __device__ static T shfl_down(T v, unsigned offset, int width) {
    return __shfl_down_sync(0xffffffffu, v, offset, width);
  }
#endif
};

}  // namespace porta::detail::gpu
