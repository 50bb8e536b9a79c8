// SPDX-License-Identifier: Apache-2.0
// Device information, memory (stream-ordered pool), copies, streams and events of the CUDA plugin.
// A porta_stream is the cudaStream_t and a porta_event the cudaEvent_t, so user kernels can use
// them directly; NULL is the legacy default stream, which orders after every blocking stream (the
// runtime frees Arrays on it, after the work of user streams).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_common.hpp"

namespace porta::detail::cuda {

#define PORTA_CUDA_ENTER(dev, fn)                                             \
  do {                                                                        \
    if (const porta_status st_ = enter(dev, fn); st_ != PORTA_OK) return st_; \
  } while (0)
// PORTA_CUDA_CALL(cudaStreamSynchronize, (stream)): a failure reports the call by its name.
#define PORTA_CUDA_CALL(fn, args)                                                      \
  do {                                                                                 \
    if (const cudaError_t e_ = fn args; e_ != cudaSuccess) return cuda_error(#fn, e_); \
  } while (0)

porta_status device_info(int dev, porta_device_info_v1* out) noexcept {
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "device_info: NULL output");
  PORTA_CUDA_ENTER(dev, "device_info");
  cudaDeviceProp p;
  std::memset(&p, 0, sizeof p);
  PORTA_CUDA_CALL(cudaGetDeviceProperties, (&p, dev));
  std::size_t free_b = 0, total_b = 0;
  PORTA_CUDA_CALL(cudaMemGetInfo, (&free_b, &total_b));
  int driver = 0, runtime = 0;
  PORTA_CUDA_CALL(cudaDriverGetVersion, (&driver));
  PORTA_CUDA_CALL(cudaRuntimeGetVersion, (&runtime));
  std::memset(out, 0, sizeof *out);
  std::snprintf(out->name, sizeof out->name, "%s", p.name);
  std::snprintf(out->vendor, sizeof out->vendor, "NVIDIA");
  std::snprintf(out->arch, sizeof out->arch, "sm_%d%d", p.major, p.minor);
  out->total_memory = total_b != 0 ? total_b : p.totalGlobalMem;
  out->free_memory = free_b;
  out->compute_units = p.multiProcessorCount;
  out->warp_size = p.warpSize;
  out->max_threads_per_block = p.maxThreadsPerBlock;
  out->driver_version = driver;
  out->runtime_version = runtime;
  out->pci_bus_id = p.pciBusID;
  return PORTA_OK;
}

porta_status synchronize(int dev) noexcept {
  PORTA_CUDA_ENTER(dev, "synchronize");
  PORTA_CUDA_CALL(cudaDeviceSynchronize, ());
  return PORTA_OK;
}

// ---- memory -------------------------------------------------------------------------------------

porta_status alloc(int dev, size_t bytes, porta_stream s, void** out) noexcept {
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "alloc: NULL output");
  *out = nullptr;
  PORTA_CUDA_ENTER(dev, "alloc");
  if (bytes == 0) return PORTA_OK;
  cudaMemPool_t pool = nullptr;
  bool pooled = false;
  if (const porta_status st = pool_of(dev, &pool, &pooled); st != PORTA_OK) return st;
  const auto attempt = [&]() { return pooled ? cudaMallocAsync(out, bytes, native(s)) : cudaMalloc(out, bytes); };
  cudaError_t e = attempt();
  if (e == cudaErrorMemoryAllocation && pooled) {
    // The pool may hold freed blocks that frees on other streams have not released yet, or memory
    // in pieces too small for this request: wait for pending frees, return what is unused to the
    // driver, and try once more.
    (void)cudaGetLastError();
    PORTA_CUDA_CALL(cudaDeviceSynchronize, ());
    PORTA_CUDA_CALL(cudaMemPoolTrimTo, (pool, 0));
    e = attempt();
  }
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    std::size_t free_b = 0, total_b = 0;
    (void)cudaMemGetInfo(&free_b, &total_b);
    (void)cudaGetLastError();
    *out = nullptr;
    return set_error(PORTA_ERR_OOM, "%s: out of memory on cuda:%d: asked for %zu bytes, %zu of %zu bytes free (%s)",
                     pooled ? "cudaMallocAsync" : "cudaMalloc", dev, bytes, free_b, total_b,
                     cudaGetErrorName(cudaErrorMemoryAllocation));
  }
  if (e != cudaSuccess) {
    *out = nullptr;
    return cuda_error(pooled ? "cudaMallocAsync" : "cudaMalloc", e);
  }
  device_state(dev).alloc_count.fetch_add(1, std::memory_order_relaxed);
  return PORTA_OK;
}

porta_status free(int dev, void* ptr, porta_stream s) noexcept {
  if (ptr == nullptr) return PORTA_OK;
  PORTA_CUDA_ENTER(dev, "free");
  cudaMemPool_t pool = nullptr;
  bool pooled = false;
  if (const porta_status st = pool_of(dev, &pool, &pooled); st != PORTA_OK) return st;
  if (pooled) {
    PORTA_CUDA_CALL(cudaFreeAsync, (ptr, native(s)));
  } else {
    PORTA_CUDA_CALL(cudaFree, (ptr));
  }
  return PORTA_OK;
}

porta_status copy(int dev, void* dst, const void* src, size_t bytes, porta_copy_kind kind, porta_stream s) noexcept {
  if (bytes == 0) return PORTA_OK;
  if (dst == nullptr || src == nullptr) return set_error(PORTA_ERR_INVALID, "copy: NULL pointer");
  cudaMemcpyKind k;
  switch (kind) {
    case PORTA_COPY_HOST_TO_DEVICE:
      k = cudaMemcpyHostToDevice;
      break;
    case PORTA_COPY_DEVICE_TO_HOST:
      k = cudaMemcpyDeviceToHost;
      break;
    case PORTA_COPY_DEVICE_TO_DEVICE:
      k = cudaMemcpyDeviceToDevice;
      break;
    case PORTA_COPY_HOST_TO_HOST:
      k = cudaMemcpyHostToHost;
      break;
    default:
      return set_error(PORTA_ERR_INVALID, "copy: unknown copy kind %d", static_cast<int>(kind));
  }
  PORTA_CUDA_ENTER(dev, "copy");
  PORTA_CUDA_CALL(cudaMemcpyAsync, (dst, src, bytes, k, native(s)));
  return PORTA_OK;
}

porta_status host_alloc(size_t bytes, void** out) noexcept {
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "host_alloc: NULL output");
  *out = nullptr;
  if (bytes == 0) return PORTA_OK;
  const char* why = nullptr;
  if (device_count(&why) == 0) return set_error(PORTA_ERR_UNAVAILABLE, "host_alloc: %s", why);
  // Portable: pinned for every device's context, not only the current one.
  const cudaError_t e = cudaHostAlloc(out, bytes, cudaHostAllocPortable);
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    *out = nullptr;
    return set_error(PORTA_ERR_OOM, "cudaHostAlloc: cannot pin %zu bytes of host memory (cudaErrorMemoryAllocation)",
                     bytes);
  }
  if (e != cudaSuccess) {
    *out = nullptr;
    return cuda_error("cudaHostAlloc", e);
  }
  return PORTA_OK;
}

porta_status host_free(void* ptr) noexcept {
  if (ptr == nullptr) return PORTA_OK;
  PORTA_CUDA_CALL(cudaFreeHost, (ptr));
  return PORTA_OK;
}

porta_status memory_stats(int dev, porta_memory_stats_v1* out) noexcept {
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "memory_stats: NULL output");
  PORTA_CUDA_ENTER(dev, "memory_stats");
  cudaMemPool_t pool = nullptr;
  bool pooled = false;
  if (const porta_status st = pool_of(dev, &pool, &pooled); st != PORTA_OK) return st;
  std::memset(out, 0, sizeof *out);
  if (pooled) {
    std::uint64_t v = 0;
    PORTA_CUDA_CALL(cudaMemPoolGetAttribute, (pool, cudaMemPoolAttrUsedMemCurrent, &v));
    out->bytes_in_use = v;
    PORTA_CUDA_CALL(cudaMemPoolGetAttribute, (pool, cudaMemPoolAttrReservedMemCurrent, &v));
    out->bytes_reserved = v;
    PORTA_CUDA_CALL(cudaMemPoolGetAttribute, (pool, cudaMemPoolAttrUsedMemHigh, &v));
    out->peak_bytes_in_use = v;
  }
  out->alloc_count = device_state(dev).alloc_count.load(std::memory_order_relaxed);
  return PORTA_OK;
}

porta_status empty_cache(int dev) noexcept {
  PORTA_CUDA_ENTER(dev, "empty_cache");
  cudaMemPool_t pool = nullptr;
  bool pooled = false;
  if (const porta_status st = pool_of(dev, &pool, &pooled); st != PORTA_OK) return st;
  if (!pooled) return PORTA_OK;
  // Frees still pending on streams hold their blocks until they run.
  PORTA_CUDA_CALL(cudaDeviceSynchronize, ());
  PORTA_CUDA_CALL(cudaMemPoolTrimTo, (pool, 0));
  return PORTA_OK;
}

// ---- streams and events -------------------------------------------------------------------------

porta_status stream_create(int dev, porta_stream* out) noexcept {
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "stream_create: NULL output");
  *out = nullptr;
  PORTA_CUDA_ENTER(dev, "stream_create");
  cudaStream_t s = nullptr;
  // Blocking (default flags): the legacy default stream waits for it, so frees issued there come
  // after this stream's work.
  PORTA_CUDA_CALL(cudaStreamCreate, (&s));
  *out = reinterpret_cast<porta_stream>(s);
  return PORTA_OK;
}

porta_status stream_destroy(int dev, porta_stream s) noexcept {
  if (s == nullptr) return PORTA_OK;  // the default stream is not ours to destroy
  PORTA_CUDA_ENTER(dev, "stream_destroy");
  const cudaError_t sync = cudaStreamSynchronize(native(s));
  const cudaError_t destroy = cudaStreamDestroy(native(s));
  if (sync != cudaSuccess) return cuda_error("cudaStreamSynchronize", sync);
  if (destroy != cudaSuccess) return cuda_error("cudaStreamDestroy", destroy);
  return PORTA_OK;
}

porta_status stream_synchronize(int dev, porta_stream s) noexcept {
  PORTA_CUDA_ENTER(dev, "stream_synchronize");
  PORTA_CUDA_CALL(cudaStreamSynchronize, (native(s)));
  return PORTA_OK;
}

porta_status stream_query(int dev, porta_stream s, int* done) noexcept {
  if (done == nullptr) return set_error(PORTA_ERR_INVALID, "stream_query: NULL output");
  PORTA_CUDA_ENTER(dev, "stream_query");
  const cudaError_t e = cudaStreamQuery(native(s));
  if (e == cudaErrorNotReady) {
    if (cudaPeekAtLastError() == cudaErrorNotReady) (void)cudaGetLastError();
    *done = 0;
    return PORTA_OK;
  }
  if (e != cudaSuccess) return cuda_error("cudaStreamQuery", e);
  *done = 1;
  return PORTA_OK;
}

porta_status stream_wait_event(int dev, porta_stream s, porta_event ev) noexcept {
  if (ev == nullptr) return set_error(PORTA_ERR_INVALID, "stream_wait_event: NULL event");
  PORTA_CUDA_ENTER(dev, "stream_wait_event");
  PORTA_CUDA_CALL(cudaStreamWaitEvent, (native(s), native(ev), 0));
  return PORTA_OK;
}

porta_status event_create(int dev, porta_event* out) noexcept {
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "event_create: NULL output");
  *out = nullptr;
  PORTA_CUDA_ENTER(dev, "event_create");
  cudaEvent_t e = nullptr;
  PORTA_CUDA_CALL(cudaEventCreate, (&e));  // timing enabled: Event::elapsed_ms works on any pair
  *out = reinterpret_cast<porta_event>(e);
  return PORTA_OK;
}

porta_status event_destroy(int dev, porta_event ev) noexcept {
  if (ev == nullptr) return PORTA_OK;
  PORTA_CUDA_ENTER(dev, "event_destroy");
  PORTA_CUDA_CALL(cudaEventDestroy, (native(ev)));
  return PORTA_OK;
}

porta_status event_record(int dev, porta_event ev, porta_stream s) noexcept {
  if (ev == nullptr) return set_error(PORTA_ERR_INVALID, "event_record: NULL event");
  PORTA_CUDA_ENTER(dev, "event_record");
  PORTA_CUDA_CALL(cudaEventRecord, (native(ev), native(s)));
  return PORTA_OK;
}

porta_status event_synchronize(int dev, porta_event ev) noexcept {
  if (ev == nullptr) return set_error(PORTA_ERR_INVALID, "event_synchronize: NULL event");
  PORTA_CUDA_ENTER(dev, "event_synchronize");
  PORTA_CUDA_CALL(cudaEventSynchronize, (native(ev)));
  return PORTA_OK;
}

porta_status event_query(int dev, porta_event ev, int* done) noexcept {
  if (ev == nullptr || done == nullptr) return set_error(PORTA_ERR_INVALID, "event_query: NULL argument");
  PORTA_CUDA_ENTER(dev, "event_query");
  const cudaError_t e = cudaEventQuery(native(ev));
  if (e == cudaErrorNotReady) {
    if (cudaPeekAtLastError() == cudaErrorNotReady) (void)cudaGetLastError();
    *done = 0;
    return PORTA_OK;
  }
  if (e != cudaSuccess) return cuda_error("cudaEventQuery", e);
  *done = 1;
  return PORTA_OK;
}

porta_status event_elapsed_ms(int dev, porta_event start, porta_event end, float* ms) noexcept {
  if (start == nullptr || end == nullptr || ms == nullptr)
    return set_error(PORTA_ERR_INVALID, "event_elapsed_ms: NULL argument");
  PORTA_CUDA_ENTER(dev, "event_elapsed_ms");
  PORTA_CUDA_CALL(cudaEventElapsedTime, (ms, native(start), native(end)));
  return PORTA_OK;
}

}  // namespace porta::detail::cuda
