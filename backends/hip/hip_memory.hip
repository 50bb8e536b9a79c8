// SPDX-License-Identifier: Apache-2.0
// Device memory of the HIP plugin: stream-ordered allocation from each device's default memory
// pool, copies, pinned host memory and the pool statistics behind porta::memory_stats.
//
// hipMallocAsync/hipFreeAsync exist in ROCm 5.2's headers, but AMD marks the stream-ordered
// allocator "beta" there, and a device may not support it (hipDeviceAttributeMemoryPoolsSupported).
// Where it is missing, or where PORTA_HIP_MALLOC_ASYNC=0 turns it off, the plugin falls back to
// hipMalloc/hipFree: correct (hipFree waits for the device) but a driver call per allocation.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <unordered_map>

#include "backends/hip/hip_backend.hpp"
#include "backends/hip/hip_common.hpp"

namespace porta::detail::hip {
namespace {

struct DeviceMemory {
  std::once_flag init;
  bool use_pool = false;
  hipMemPool_t pool = nullptr;
  std::mutex mutex;
  // Sizes of live allocations: the statistics count porta's bytes, not the pool's granularity.
  std::unordered_map<void*, std::size_t> sizes;
  std::uint64_t in_use = 0;
  std::uint64_t peak = 0;
  std::uint64_t count = 0;
};

bool pool_disabled_by_env() {
  const char* v = std::getenv("PORTA_HIP_MALLOC_ASYNC");
  return v != nullptr && (std::strcmp(v, "0") == 0 || std::strcmp(v, "off") == 0 || std::strcmp(v, "OFF") == 0);
}

// One slot per device, created on first use; check_device has made sure that dev is in range.
DeviceMemory& memory_of(int dev) {
  static std::once_flag once;
  static std::unique_ptr<DeviceMemory[]> slots;
  std::call_once(once, [] { slots.reset(new DeviceMemory[device_count_cached(nullptr)]); });
  DeviceMemory& m = slots[dev];
  std::call_once(m.init, [&m, dev] {
    if (pool_disabled_by_env()) return;
    int supported = 0;
    if (hipDeviceGetAttribute(&supported, hipDeviceAttributeMemoryPoolsSupported, dev) != hipSuccess ||
        supported == 0) {
      (void)hipGetLastError();
      return;
    }
    hipMemPool_t pool = nullptr;
    if (hipDeviceGetDefaultMemPool(&pool, dev) != hipSuccess || pool == nullptr) {
      (void)hipGetLastError();
      return;
    }
    // Keep freed blocks in the pool instead of returning them at every synchronisation, so that a
    // loop of temporaries does not reach the driver; empty_cache() gives them back.
    std::uint64_t threshold = UINT64_MAX;
    if (hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &threshold) != hipSuccess) {
      (void)hipGetLastError();
      return;
    }
    m.pool = pool;
    m.use_pool = true;
  });
  return m;
}

porta_status out_of_memory(int dev, std::size_t bytes, const char* fn) {
  std::size_t free_bytes = 0, total_bytes = 0;
  if (hipMemGetInfo(&free_bytes, &total_bytes) != hipSuccess) (void)hipGetLastError();
  return set_error(PORTA_ERR_OOM, "%s: out of memory on hip:%d allocating %zu bytes (%zu of %zu bytes free)", fn, dev,
                   bytes, free_bytes, total_bytes);
}

hipMemcpyKind to_hip(porta_copy_kind kind) {
  switch (kind) {
    case PORTA_COPY_HOST_TO_DEVICE:
      return hipMemcpyHostToDevice;
    case PORTA_COPY_DEVICE_TO_HOST:
      return hipMemcpyDeviceToHost;
    case PORTA_COPY_DEVICE_TO_DEVICE:
      return hipMemcpyDeviceToDevice;
    case PORTA_COPY_HOST_TO_HOST:
      return hipMemcpyHostToHost;
  }
  return hipMemcpyDefault;
}

}  // namespace

porta_status alloc(int dev, size_t bytes, porta_stream s, void** out) noexcept {
  constexpr const char* fn = "alloc";
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "%s: out is NULL", fn);
  *out = nullptr;
  if (bytes == 0) return PORTA_OK;
  DeviceGuard guard(dev, fn);
  if (guard.status() != PORTA_OK) return guard.status();
  try {
    DeviceMemory& m = memory_of(dev);
    void* p = nullptr;
    const auto attempt = [&]() {
      return m.use_pool ? hipMallocAsync(&p, bytes, reinterpret_cast<hipStream_t>(s)) : hipMalloc(&p, bytes);
    };
    hipError_t e = attempt();
    if (e == hipErrorOutOfMemory && m.use_pool) {
      // The pool may hold blocks whose frees on other streams have not run yet, or memory in
      // pieces too small for this request: wait for pending frees, give back what is unused, and
      // try once more (as the CUDA plugin does).
      (void)hipGetLastError();
      PORTA_HIP_CHECK(fn, hipDeviceSynchronize());
      PORTA_HIP_CHECK(fn, hipMemPoolTrimTo(m.pool, 0));
      e = attempt();
    }
    if (e == hipErrorOutOfMemory) {
      (void)hipGetLastError();
      return out_of_memory(dev, bytes, fn);
    }
    if (e != hipSuccess) return fail(e, fn, m.use_pool ? "hipMallocAsync" : "hipMalloc");
    {
      std::lock_guard<std::mutex> lock(m.mutex);
      m.sizes[p] = bytes;
      m.in_use += bytes;
      if (m.in_use > m.peak) m.peak = m.in_use;
      ++m.count;
    }
    *out = p;
    return PORTA_OK;
  } catch (const std::bad_alloc&) {
    return set_error(PORTA_ERR_OOM, "%s: out of host memory for porta's allocation table", fn);
  } catch (...) {
    return set_error(PORTA_ERR_BACKEND, "%s: unexpected C++ exception", fn);
  }
}

porta_status free(int dev, void* ptr, porta_stream s) noexcept {
  constexpr const char* fn = "free";
  if (ptr == nullptr) return PORTA_OK;
  DeviceGuard guard(dev, fn);
  if (guard.status() != PORTA_OK) return guard.status();
  try {
    DeviceMemory& m = memory_of(dev);
    {
      std::lock_guard<std::mutex> lock(m.mutex);
      auto it = m.sizes.find(ptr);
      if (it == m.sizes.end())
        return set_error(PORTA_ERR_INVALID, "%s: %p was not allocated by porta on hip:%d (or was freed already)", fn,
                         ptr, dev);
      m.in_use -= it->second;
      m.sizes.erase(it);
    }
    if (m.use_pool) {
      PORTA_HIP_CHECK(fn, hipFreeAsync(ptr, reinterpret_cast<hipStream_t>(s)));
    } else {
      PORTA_HIP_CHECK(fn, hipFree(ptr));
    }
    return PORTA_OK;
  } catch (...) {
    return set_error(PORTA_ERR_BACKEND, "%s: unexpected C++ exception", fn);
  }
}

porta_status copy(int dev, void* dst, const void* src, size_t bytes, porta_copy_kind kind, porta_stream s) noexcept {
  constexpr const char* fn = "copy";
  if (bytes == 0) return PORTA_OK;
  if (dst == nullptr || src == nullptr) return set_error(PORTA_ERR_INVALID, "%s: NULL pointer", fn);
  if (kind < PORTA_COPY_HOST_TO_DEVICE || kind > PORTA_COPY_HOST_TO_HOST)
    return set_error(PORTA_ERR_INVALID, "%s: unknown copy kind %d", fn, static_cast<int>(kind));
  DeviceGuard guard(dev, fn);
  if (guard.status() != PORTA_OK) return guard.status();
  // Host-to-host copies go through the stream too, so that they stay ordered with its work.
  PORTA_HIP_CHECK(fn, hipMemcpyAsync(dst, src, bytes, to_hip(kind), reinterpret_cast<hipStream_t>(s)));
  return PORTA_OK;
}

porta_status host_alloc(size_t bytes, void** out) noexcept {
  constexpr const char* fn = "host_alloc";
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "%s: out is NULL", fn);
  *out = nullptr;
  if (bytes == 0) return PORTA_OK;
  // Pinning needs a device; without one HIP says only "invalid device".
  const char* why = nullptr;
  if (device_count_cached(&why) == 0)
    return set_error(PORTA_ERR_UNAVAILABLE, "%s: cannot pin host memory without a HIP device: %s", fn, why);
  const hipError_t e = hipHostMalloc(out, bytes, hipHostMallocDefault);
  if (e == hipErrorOutOfMemory) {
    (void)hipGetLastError();
    return set_error(PORTA_ERR_OOM, "%s: cannot pin %zu bytes of host memory (hipErrorOutOfMemory)", fn, bytes);
  }
  if (e != hipSuccess) return fail(e, fn, "hipHostMalloc");
  return PORTA_OK;
}

porta_status host_free(void* ptr) noexcept {
  if (ptr == nullptr) return PORTA_OK;
  PORTA_HIP_CHECK("host_free", hipHostFree(ptr));
  return PORTA_OK;
}

porta_status memory_stats(int dev, porta_memory_stats_v1* out) noexcept {
  constexpr const char* fn = "memory_stats";
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "%s: out is NULL", fn);
  DeviceGuard guard(dev, fn);
  if (guard.status() != PORTA_OK) return guard.status();
  try {
    DeviceMemory& m = memory_of(dev);
    {
      std::lock_guard<std::mutex> lock(m.mutex);
      out->bytes_in_use = m.in_use;
      out->peak_bytes_in_use = m.peak;
      out->alloc_count = m.count;
    }
    out->bytes_reserved = out->bytes_in_use;
    if (m.use_pool) {
      std::uint64_t reserved = 0;
      if (hipMemPoolGetAttribute(m.pool, hipMemPoolAttrReservedMemCurrent, &reserved) == hipSuccess) {
        if (reserved > out->bytes_reserved) out->bytes_reserved = reserved;
      } else {
        (void)hipGetLastError();
      }
    }
    return PORTA_OK;
  } catch (...) {
    return set_error(PORTA_ERR_BACKEND, "%s: unexpected C++ exception", fn);
  }
}

porta_status empty_cache(int dev) noexcept {
  constexpr const char* fn = "empty_cache";
  DeviceGuard guard(dev, fn);
  if (guard.status() != PORTA_OK) return guard.status();
  try {
    DeviceMemory& m = memory_of(dev);
    if (!m.use_pool) return PORTA_OK;
    // Blocks freed on a stream return to the pool only when that stream gets there.
    PORTA_HIP_CHECK(fn, hipDeviceSynchronize());
    PORTA_HIP_CHECK(fn, hipMemPoolTrimTo(m.pool, 0));
    return PORTA_OK;
  } catch (...) {
    return set_error(PORTA_ERR_BACKEND, "%s: unexpected C++ exception", fn);
  }
}

}  // namespace porta::detail::hip
