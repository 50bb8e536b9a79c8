// SPDX-License-Identifier: Apache-2.0
// The CUDA runtime behind vendor-neutral names (alpaka's ApiCudaRt idea): the shared kernels, their
// launchers, user kernels and the whole GPU plugin (backends/gpu/plugin.hpp) are templates on an
// Api struct, so one source serves CUDA and HIP. Every runtime call porta makes goes through here;
// api_hip.cuh has the same members with the same meaning. Included through porta/detail/gpu/api.cuh.
#pragma once

#include <cuda_runtime.h>
#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define PORTA_HAVE_NVTX3 1
#endif

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <utility>

#include "porta/complex.hpp"

namespace porta::detail::gpu {

// NVTX ranges (ApiCuda::range_push below); nothing where the toolkit has no NVTX3 headers.
inline void nvtx_range_push(const char* name) {
#ifdef PORTA_HAVE_NVTX3
  nvtxRangePushA(name);
#else
  (void)name;
#endif
}
inline void nvtx_range_pop() {
#ifdef PORTA_HAVE_NVTX3
  nvtxRangePop();
#endif
}

struct ApiCuda {
  using Error = cudaError_t;
  using Stream = cudaStream_t;
  using Event = cudaEvent_t;
  using MemPool = cudaMemPool_t;
  using DeviceProp = cudaDeviceProp;
  using MemcpyKind = cudaMemcpyKind;
  static constexpr Error kSuccess = cudaSuccess;
  static constexpr Error kInvalidValue = cudaErrorInvalidValue;
  static constexpr Error kNotReady = cudaErrorNotReady;
  static constexpr MemcpyKind kHostToDevice = cudaMemcpyHostToDevice;
  static constexpr MemcpyKind kDeviceToHost = cudaMemcpyDeviceToHost;
  static constexpr MemcpyKind kDeviceToDevice = cudaMemcpyDeviceToDevice;
  static constexpr MemcpyKind kHostToHost = cudaMemcpyHostToHost;
  static constexpr const char* kName = "CUDA";
  static constexpr const char* kPrefix = "cuda";  // device strings: "cuda:0"
  static constexpr int kDeviceType = 1;           // porta_device_type / porta::DeviceType::cuda
  static constexpr const char* kCompiler = "nvcc";
  static constexpr const char* kVendor = "NVIDIA";

  // Launch policies of the shared kernels, measured on the H200 with bench/tune_gpu.cu.
  static constexpr int kReduceBatch = 8;  // k-steps whose loads are issued before the first is combined
  static constexpr int kReduceWaves = 0;  // 0: one block per chunk; N: at most N x resident blocks

  // ---- errors -----------------------------------------------------------------------------------
  static const char* error_name(Error e) { return cudaGetErrorName(e); }
  static const char* error_string(Error e) { return cudaGetErrorString(e); }
  // Returns and clears the last non-sticky error of this thread (a launch failure, mostly).
  static Error get_last_error() { return cudaGetLastError(); }
  static Error peek_last_error() { return cudaPeekAtLastError(); }
  static bool is_unavailable(Error e) {
    return e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorInvalidDevice;
  }
  static bool is_out_of_memory(Error e) { return e == cudaErrorMemoryAllocation; }

  // ---- devices ----------------------------------------------------------------------------------
  static Error get_device_count(int* n) { return cudaGetDeviceCount(n); }
  static Error get_device(int* dev) { return cudaGetDevice(dev); }
  static Error set_device(int dev) { return cudaSetDevice(dev); }
  static Error device_synchronize() { return cudaDeviceSynchronize(); }
  static Error device_properties(DeviceProp* p, int dev) { return cudaGetDeviceProperties(p, dev); }
  static const char* device_name(const DeviceProp& p) { return p.name; }
  static void arch_name(const DeviceProp& p, char* out, std::size_t size) {
    std::snprintf(out, size, "sm_%d%d", p.major, p.minor);
  }
  static Error driver_version(int* v) { return cudaDriverGetVersion(v); }
  static Error runtime_version(int* v) { return cudaRuntimeGetVersion(v); }
  static Error mem_get_info(std::size_t* free_bytes, std::size_t* total_bytes) {
    return cudaMemGetInfo(free_bytes, total_bytes);
  }
  static Error multiprocessor_count(int dev, int* n) {
    return cudaDeviceGetAttribute(n, cudaDevAttrMultiProcessorCount, dev);
  }
  template <class Kernel>
  static Error max_active_blocks(int* blocks, Kernel kernel, int threads, std::size_t smem) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, threads, smem);
  }
  // What a team launch may ask of `kernel`: threads per block (its registers decide), its static
  // shared memory and the dynamic shared memory it may have now; the shared memory a block may have on `dev` once a
  // kernel opts in.
  template <class Kernel>
  static Error kernel_limits(Kernel kernel, int* max_threads, std::size_t* static_smem, int* max_dynamic_smem) {
    cudaFuncAttributes a{};
    const Error e = cudaFuncGetAttributes(&a, kernel);
    *max_threads = a.maxThreadsPerBlock;
    *static_smem = a.sharedSizeBytes;
    *max_dynamic_smem = a.maxDynamicSharedSizeBytes;
    return e;
  }
  static Error max_shared_per_block(int dev, int* bytes) {
    return cudaDeviceGetAttribute(bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
  }
  // The opt-in for more than 48 KiB of dynamic shared memory.
  template <class Kernel>
  static Error allow_dynamic_shared(Kernel kernel, int bytes) {
    return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  }

  // ---- memory -----------------------------------------------------------------------------------
  // Whether `dev` has stream-ordered pools; asked once per device by the plugin.
  static bool pools_supported(int dev) {
    int ok = 0;
    if (cudaDeviceGetAttribute(&ok, cudaDevAttrMemoryPoolsSupported, dev) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    return ok != 0;
  }
  static Error default_pool(MemPool* pool, int dev) { return cudaDeviceGetDefaultMemPool(pool, dev); }
  // Keep freed blocks cached in the pool (release threshold at its maximum).
  static Error pool_keep_freed(MemPool pool) {
    std::uint64_t keep = UINT64_MAX;
    return cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  }
  // Lets device `peer` read and write the memory of `pool` (stream-ordered pools ignore
  // cudaDeviceEnablePeerAccess: without this, copies between pools are staged through the host).
  static Error pool_grant_access(MemPool pool, int peer) {
    cudaMemAccessDesc desc{};
    desc.location.type = cudaMemLocationTypeDevice;
    desc.location.id = peer;
    desc.flags = cudaMemAccessFlagsProtReadWrite;
    return cudaMemPoolSetAccess(pool, &desc, 1);
  }
  static Error pool_trim(MemPool pool) { return cudaMemPoolTrimTo(pool, 0); }
  static Error pool_reserved(MemPool pool, std::uint64_t* bytes) {
    return cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, bytes);
  }
  // Stream-ordered memory from the device's default pool: temporaries of kernels and, where the
  // device has pools, every Array.
  static Error malloc_async(void** p, std::size_t bytes, Stream s) { return cudaMallocAsync(p, bytes, s); }
  static Error free_async(void* p, Stream s) { return cudaFreeAsync(p, s); }
  static Error malloc_sync(void** p, std::size_t bytes) { return cudaMalloc(p, bytes); }
  static Error free_sync(void* p) { return cudaFree(p); }
  // Pinned for every device's context, not only the current one.
  static Error host_alloc(void** p, std::size_t bytes) { return cudaHostAlloc(p, bytes, cudaHostAllocPortable); }
  static Error host_free(void* p) { return cudaFreeHost(p); }
  // Host -> a __device__ variable of the calling translation unit, on the current device (synchronous).
  template <class T>
  static Error memcpy_to_symbol(const T& symbol, const void* src, std::size_t bytes) {
    return cudaMemcpyToSymbol(symbol, src, bytes);
  }
  static Error memcpy_async(void* dst, const void* src, std::size_t bytes, MemcpyKind kind, Stream s) {
    return cudaMemcpyAsync(dst, src, bytes, kind, s);
  }
  static Error copy_to_host_async(void* dst, const void* src, std::size_t bytes, Stream s) {
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s);
  }
  // What `p` points to (Array::borrow checks it): device memory of *owner, managed memory, page-locked
  // host memory, or other (ordinary host memory, or nothing the runtime allocated).
  enum class Pointer { device, managed, pinned, other };
  static Error pointer_kind(const void* p, Pointer* kind, int* owner) {
    cudaPointerAttributes a{};
    const cudaError_t e = cudaPointerGetAttributes(&a, p);
    if (e != cudaSuccess) return e;
    *owner = a.device;
    *kind = a.type == cudaMemoryTypeDevice    ? Pointer::device
            : a.type == cudaMemoryTypeManaged ? Pointer::managed
            : a.type == cudaMemoryTypeHost    ? Pointer::pinned
                                              : Pointer::other;
    return e;
  }
  // Whether the device's kernels reach ordinary (pageable) host memory (HMM, ATS).
  static Error pageable_access(int dev, int* ok) {
    return cudaDeviceGetAttribute(ok, cudaDevAttrPageableMemoryAccess, dev);
  }
  // Between two devices of this runtime. Without peer access the driver stages the copy itself.
  static Error can_access_peer(int* ok, int dev, int peer) { return cudaDeviceCanAccessPeer(ok, dev, peer); }
  // From the current device to `peer`'s memory; enabling twice is not an error here.
  static Error enable_peer_access(int peer) {
    const cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
    if (e != cudaErrorPeerAccessAlreadyEnabled) return e;
    (void)cudaGetLastError();
    return cudaSuccess;
  }
  static Error memcpy_peer_async(void* dst, int dst_dev, const void* src, int src_dev, std::size_t bytes, Stream s) {
    return cudaMemcpyPeerAsync(dst, dst_dev, src, src_dev, bytes, s);
  }
  // An event only for ordering (no timing): cheaper to record and to wait on.
  static Error event_create_ordering(Event* e) { return cudaEventCreateWithFlags(e, cudaEventDisableTiming); }

  // ---- profiler ranges --------------------------------------------------------------------------
  // NVTX3 is header-only: its first call looks for the injection library a profiler names in
  // NVTX_INJECTION64_PATH (nsys, ncu set it) and loads it; without one every call returns at once.
  // Nothing is linked, so a plugin built with ranges runs where no profiler is installed.
  static void range_push(const char* name) { nvtx_range_push(name); }
  static void range_pop() { nvtx_range_pop(); }

  // ---- streams and events -----------------------------------------------------------------------
  // Blocking (default flags): the legacy default stream, where porta frees Arrays, waits for it.
  static Error stream_create(Stream* s) { return cudaStreamCreate(s); }
  static Error stream_destroy(Stream s) { return cudaStreamDestroy(s); }
  static Error stream_synchronize(Stream s) { return cudaStreamSynchronize(s); }
  static Error stream_query(Stream s) { return cudaStreamQuery(s); }
  static Error stream_wait_event(Stream s, Event e) { return cudaStreamWaitEvent(s, e, 0); }
  // With timing: the ABI offers elapsed_ms on every pair of events.
  static Error event_create(Event* e) { return cudaEventCreate(e); }
  static Error event_destroy(Event e) { return cudaEventDestroy(e); }
  static Error event_record(Event e, Stream s) { return cudaEventRecord(e, s); }
  static Error event_synchronize(Event e) { return cudaEventSynchronize(e); }
  static Error event_query(Event e) { return cudaEventQuery(e); }
  static Error event_elapsed_ms(float* ms, Event start, Event end) { return cudaEventElapsedTime(ms, start, end); }

#if defined(__CUDACC__)
  // The one kernel launcher: kernel<<<grid, block, smem, s>>>(args...), then the launch's own
  // error (and only it: the non-sticky error state is read and cleared). grid and block are dim3,
  // so 1-, 2- and 3-D shapes and plain unsigned counts all work.
  template <class... Params, class... Args>
  static Error launch(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem, Stream s, Args&&... args) {
    kernel<<<grid, block, smem, s>>>(std::forward<Args>(args)...);
    return cudaGetLastError();
  }

  // Device side. A shuffle never spans more than `width` (<= 32) lanes: porta's trees are written
  // for groups of 32, which are a whole warp on NVIDIA and half a wavefront on wave64 AMD GPUs.
  template <class T>
  __device__ static T shfl_down(T v, unsigned offset, int width) {
    if constexpr (is_complex_v<T>) {  // part by part
      return T(shfl_down(v.re, offset, width), shfl_down(v.im, offset, width));
    } else {
      return __shfl_down_sync(0xffffffffu, v, offset, width);
    }
  }
  // The value of lane - offset of the caller's group (its own below offset): scans.
  template <class T>
  __device__ static T shfl_up(T v, unsigned offset, int width) {
    if constexpr (is_complex_v<T>) {
      return T(shfl_up(v.re, offset, width), shfl_up(v.im, offset, width));
    } else {
      return __shfl_up_sync(0xffffffffu, v, offset, width);
    }
  }
  // Lets the calling warp sleep for about NS nanoseconds: a poll of memory that another block will
  // write costs the memory system less when it does not spin (scans).
  template <unsigned NS>
  __device__ static void sleep() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
    __nanosleep(NS);
#endif
  }
  // Stores 16 bytes that nothing reads again soon (a scan's output) with the evict-first policy
  // (st.global.cs), so that they leave the L2 before the lines still to be read: a scan of 2^28
  // elements ran 2.5-4% faster on an H200.
  template <class P>
  __device__ static void store_streaming(P* p, const P& v) {
    static_assert(sizeof(P) == 16, "16-byte stores only");
    float4 w;
    __builtin_memcpy(&w, &v, 16);
    __stcs(reinterpret_cast<float4*>(p), w);
  }
#endif
};

}  // namespace porta::detail::gpu
