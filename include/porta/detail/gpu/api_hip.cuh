// SPDX-License-Identifier: Apache-2.0
// The HIP runtime behind the vendor-neutral names of api_cuda.cuh (same members, same meaning).
// Wavefronts are 64 lanes on CDNA (gfx90a) and 32 on RDNA (gfx1030): nothing here or in the kernels
// assumes either, shuffles stay inside groups of 32 lanes, which exist on both.
#pragma once

#include <dlfcn.h>
#include <hip/hip_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <utility>

#include "porta/complex.hpp"

namespace porta::detail::gpu {

struct ApiHip {
  using Error = hipError_t;
  using Stream = hipStream_t;
  using Event = hipEvent_t;
  using MemPool = hipMemPool_t;
  using DeviceProp = hipDeviceProp_t;
  using MemcpyKind = hipMemcpyKind;
  static constexpr Error kSuccess = hipSuccess;
  static constexpr Error kInvalidValue = hipErrorInvalidValue;
  static constexpr Error kNotReady = hipErrorNotReady;
  static constexpr MemcpyKind kHostToDevice = hipMemcpyHostToDevice;
  static constexpr MemcpyKind kDeviceToHost = hipMemcpyDeviceToHost;
  static constexpr MemcpyKind kDeviceToDevice = hipMemcpyDeviceToDevice;
  static constexpr MemcpyKind kHostToHost = hipMemcpyHostToHost;
  static constexpr const char* kName = "HIP";
  static constexpr const char* kPrefix = "hip";
  static constexpr int kDeviceType = 2;
  static constexpr const char* kCompiler = "hipcc";
  static constexpr const char* kVendor = "AMD";

  // Launch policies: the H200's (api_cuda.cuh) until an AMD GPU has been swept with tune_gpu.
  static constexpr int kReduceBatch = 8;
  static constexpr int kReduceWaves = 0;

  // ---- errors -----------------------------------------------------------------------------------
  static const char* error_name(Error e) { return hipGetErrorName(e); }
  static const char* error_string(Error e) { return hipGetErrorString(e); }
  static Error get_last_error() { return hipGetLastError(); }
  static Error peek_last_error() { return hipPeekAtLastError(); }
  static bool is_unavailable(Error e) {
    return e == hipErrorNoDevice || e == hipErrorInsufficientDriver || e == hipErrorInvalidDevice;
  }
  static bool is_out_of_memory(Error e) { return e == hipErrorOutOfMemory || e == hipErrorMemoryAllocation; }

  // ---- devices ----------------------------------------------------------------------------------
  static Error get_device_count(int* n) { return hipGetDeviceCount(n); }
  static Error get_device(int* dev) { return hipGetDevice(dev); }
  static Error set_device(int dev) { return hipSetDevice(dev); }
  static Error device_synchronize() { return hipDeviceSynchronize(); }
  static Error device_properties(DeviceProp* p, int dev) { return hipGetDeviceProperties(p, dev); }
  static const char* device_name(const DeviceProp& p) { return p.name[0] ? p.name : p.gcnArchName; }
  // The full target id ("gfx90a:sramecc+:xnack-"): code objects are built per feature setting.
  static void arch_name(const DeviceProp& p, char* out, std::size_t size) {
    std::snprintf(out, size, "%s", p.gcnArchName);
  }
  static Error driver_version(int* v) { return hipDriverGetVersion(v); }
  static Error runtime_version(int* v) { return hipRuntimeGetVersion(v); }
  static Error mem_get_info(std::size_t* free_bytes, std::size_t* total_bytes) {
    return hipMemGetInfo(free_bytes, total_bytes);
  }
  static Error multiprocessor_count(int dev, int* n) {
    return hipDeviceGetAttribute(n, hipDeviceAttributeMultiprocessorCount, dev);
  }
  template <class Kernel>
  static Error max_active_blocks(int* blocks, Kernel kernel, int threads, std::size_t smem) {
    return hipOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, threads, smem);
  }
  template <class Kernel>
  static Error kernel_limits(Kernel kernel, int* max_threads, std::size_t* static_smem, int* max_dynamic_smem) {
    hipFuncAttributes a{};
    const Error e = hipFuncGetAttributes(&a, reinterpret_cast<const void*>(kernel));
    *max_threads = a.maxThreadsPerBlock;
    *static_smem = a.sharedSizeBytes;
    *max_dynamic_smem = a.maxDynamicSharedSizeBytes;
    return e;
  }
  static Error max_shared_per_block(int dev, int* bytes) {
    return hipDeviceGetAttribute(bytes, hipDeviceAttributeMaxSharedMemoryPerBlock, dev);
  }
  template <class Kernel>
  static Error allow_dynamic_shared(Kernel kernel, int bytes) {
    return hipFuncSetAttribute(reinterpret_cast<const void*>(kernel), hipFuncAttributeMaxDynamicSharedMemorySize,
                               bytes);
  }

  // ---- memory -----------------------------------------------------------------------------------
  // ROCm 5.2 ships the stream-ordered allocator as beta and not every device supports it, so it is
  // used only where the device says it does and PORTA_HIP_MALLOC_ASYNC=0 has not turned it off;
  // elsewhere hipMalloc/hipFree, which are correct but synchronise. Decided once per device, for
  // the plugin's arrays and the kernels' temporaries alike, so a free always matches its allocation.
  static bool pools_supported(int dev) {
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
  static bool use_pool() {
    int dev = 0;
    if (hipGetDevice(&dev) != hipSuccess) {
      (void)hipGetLastError();
      return true;  // the allocation call itself reports the problem
    }
    return pools_supported(dev);
  }
  static Error default_pool(MemPool* pool, int dev) { return hipDeviceGetDefaultMemPool(pool, dev); }
  static Error pool_keep_freed(MemPool pool) {
    std::uint64_t keep = UINT64_MAX;
    return hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &keep);
  }
  // Lets device `peer` read and write the memory of `pool` (stream-ordered pools ignore
  // hipDeviceEnablePeerAccess: without this, copies between pools are staged through the host).
  static Error pool_grant_access(MemPool pool, int peer) {
    hipMemAccessDesc desc{};
    desc.location.type = hipMemLocationTypeDevice;
    desc.location.id = peer;
    desc.flags = hipMemAccessFlagsProtReadWrite;
    return hipMemPoolSetAccess(pool, &desc, 1);
  }
  static Error pool_trim(MemPool pool) { return hipMemPoolTrimTo(pool, 0); }
  static Error pool_reserved(MemPool pool, std::uint64_t* bytes) {
    return hipMemPoolGetAttribute(pool, hipMemPoolAttrReservedMemCurrent, bytes);
  }
  static Error malloc_async(void** p, std::size_t bytes, Stream s) {
    return use_pool() ? hipMallocAsync(p, bytes, s) : hipMalloc(p, bytes);
  }
  static Error free_async(void* p, Stream s) { return use_pool() ? hipFreeAsync(p, s) : hipFree(p); }
  static Error malloc_sync(void** p, std::size_t bytes) { return hipMalloc(p, bytes); }
  static Error free_sync(void* p) { return hipFree(p); }
  static Error host_alloc(void** p, std::size_t bytes) { return hipHostMalloc(p, bytes, hipHostMallocDefault); }
  static Error host_free(void* p) { return hipHostFree(p); }
  // Host -> a __device__ variable of the calling translation unit, on the current device (synchronous).
  template <class T>
  static Error memcpy_to_symbol(const T& symbol, const void* src, std::size_t bytes) {
    return hipMemcpyToSymbol(HIP_SYMBOL(symbol), src, bytes, 0, hipMemcpyHostToDevice);
  }
  static Error memcpy_async(void* dst, const void* src, std::size_t bytes, MemcpyKind kind, Stream s) {
    return hipMemcpyAsync(dst, src, bytes, kind, s);
  }
  static Error copy_to_host_async(void* dst, const void* src, std::size_t bytes, Stream s) {
    return hipMemcpyAsync(dst, src, bytes, hipMemcpyDeviceToHost, s);
  }
  enum class Pointer { device, managed, pinned, other };
  static Error pointer_kind(const void* p, Pointer* kind, int* owner) {
    hipPointerAttribute_t a{};
    const hipError_t e = hipPointerGetAttributes(&a, p);
    if (e == hipErrorInvalidValue) {  // ROCm's answer for memory it did not allocate
      (void)hipGetLastError();
      *kind = Pointer::other;
      *owner = -1;
      return hipSuccess;
    }
    if (e != hipSuccess) return e;
#if HIP_VERSION_MAJOR >= 6
    const hipMemoryType t = a.type;
#else
    const hipMemoryType t = a.memoryType;
#endif
    *owner = a.device;
    *kind = a.isManaged                ? Pointer::managed
            : t == hipMemoryTypeDevice ? Pointer::device
            : t == hipMemoryTypeHost   ? Pointer::pinned
                                       : Pointer::other;
    return e;
  }
  static Error pageable_access(int dev, int* ok) {
    return hipDeviceGetAttribute(ok, hipDeviceAttributePageableMemoryAccess, dev);
  }
  // Between two devices of this runtime. Without peer access the runtime stages the copy itself.
  static Error can_access_peer(int* ok, int dev, int peer) {
    return hipDeviceCanAccessPeer(ok, dev, peer);
  }
  // From the current device to `peer`'s memory; enabling twice is not an error here.
  static Error enable_peer_access(int peer) {
    const hipError_t e = hipDeviceEnablePeerAccess(peer, 0);
    if (e != hipErrorPeerAccessAlreadyEnabled) return e;
    (void)hipGetLastError();
    return hipSuccess;
  }
  static Error memcpy_peer_async(void* dst, int dst_dev, const void* src, int src_dev, std::size_t bytes, Stream s) {
    return hipMemcpyPeerAsync(dst, dst_dev, src, src_dev, bytes, s);
  }
  // An event only for ordering (no timing): cheaper to record and to wait on.
  static Error event_create_ordering(Event* e) {
    return hipEventCreateWithFlags(e, hipEventDisableTiming);
  }

  // ---- profiler ranges --------------------------------------------------------------------------
  // roctx is dlopen()ed at the first range, never linked and its header never included (some ROCm
  // packages ship the library without roctx.h): the two functions' C types are declared here. Where
  // the library is absent a range is nothing. rocprof and rocsys load their roctx hooks into it.
  struct Roctx {
    int (*push)(const char*) = nullptr;
    int (*pop)() = nullptr;
  };
  static const Roctx& roctx() {
    static const Roctx r = [] {
      Roctx f;
      // ROCTracer's roctx first: every rocprof (v1, v2 and rocprofv3) reads it. ROCprofiler-SDK's
      // own, which replaces it, where ROCTracer is not installed.
      void* h = nullptr;
      for (const char* lib :
           {"libroctx64.so", "libroctx64.so.4", "librocprofiler-sdk-roctx.so", "librocprofiler-sdk-roctx.so.1"})
        if (h == nullptr) h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
      if (h == nullptr) return f;
      void* push = dlsym(h, "roctxRangePushA");
      void* pop = dlsym(h, "roctxRangePop");
      if (push == nullptr || pop == nullptr) return f;
      std::memcpy(&f.push, &push, sizeof push);
      std::memcpy(&f.pop, &pop, sizeof pop);
      return f;
    }();
    return r;
  }
  static void range_push(const char* name) {
    if (const Roctx& r = roctx(); r.push != nullptr) (void)r.push(name);
  }
  static void range_pop() {
    if (const Roctx& r = roctx(); r.pop != nullptr) (void)r.pop();
  }

  // ---- streams and events -----------------------------------------------------------------------
  static Error stream_create(Stream* s) {
    return hipStreamCreateWithFlags(s, hipStreamDefault);
  }
  static Error stream_destroy(Stream s) {
    return hipStreamDestroy(s);
  }
  static Error stream_synchronize(Stream s) {
    return hipStreamSynchronize(s);
  }
  static Error stream_query(Stream s) {
    return hipStreamQuery(s);
  }
  static Error stream_wait_event(Stream s, Event e) {
    return hipStreamWaitEvent(s, e, 0);
  }
  static Error event_create(Event* e) {
    return hipEventCreateWithFlags(e, hipEventDefault);
  }
  static Error event_destroy(Event e) {
    return hipEventDestroy(e);
  }
  static Error event_record(Event e, Stream s) {
    return hipEventRecord(e, s);
  }
  static Error event_synchronize(Event e) {
    return hipEventSynchronize(e);
  }
  static Error event_query(Event e) {
    return hipEventQuery(e);
  }
  static Error event_elapsed_ms(float* ms, Event start, Event end) {
    return hipEventElapsedTime(ms, start, end);
  }

#if defined(__HIP__)
  // The one kernel launcher (api_cuda.cuh says more).
  template <class... Params, class... Args>
  static Error launch(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem, Stream s, Args&&... args) {
    kernel<<<grid, block, smem, s>>>(std::forward<Args>(args)...);
    return hipGetLastError();
  }

  template <class T>
  __device__ static T shfl_down(T v, unsigned offset, int width) {
    // Lanes outside the caller's group of `width` are inactive or unread; no mask is needed.
    if constexpr (is_complex_v<T>) {  // part by part
      return T(shfl_down(v.re, offset, width), shfl_down(v.im, offset, width));
    } else {
      return __shfl_down(v, offset, width);
    }
  }
  template <class T>
  __device__ static T shfl_up(T v, unsigned offset, int width) {
    if constexpr (is_complex_v<T>) {
      return T(shfl_up(v.re, offset, width), shfl_up(v.im, offset, width));
    } else {
      return __shfl_up(v, offset, width);
    }
  }
  // About NS nanoseconds (api_cuda.cuh): s_sleep waits 64 clocks per unit, at most 127 units;
  // 64 clocks are about 40 ns at the 1.5-2 GHz of current AMD GPUs.
  template <unsigned NS>
  __device__ static void sleep() {
    constexpr unsigned units = NS / 40 < 1 ? 1 : NS / 40 > 127 ? 127 : NS / 40;
    __builtin_amdgcn_s_sleep(units);
  }
  // 16 bytes that nothing reads again soon, stored non-temporally (api_cuda.cuh).
  template <class P>
  __device__ static void store_streaming(P* p, const P& v) {
    static_assert(sizeof(P) == 16, "16-byte stores only");
    typedef float F4 __attribute__((ext_vector_type(4)));
    F4 w;
    __builtin_memcpy(&w, &v, 16);
    __builtin_nontemporal_store(w, reinterpret_cast<F4*>(p));
  }
#endif
};

}  // namespace porta::detail::gpu
