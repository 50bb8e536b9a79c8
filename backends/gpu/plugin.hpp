// SPDX-License-Identifier: Apache-2.0
// The GPU backend plugin, written once for CUDA and HIP: every entry of the porta_backend_v1 table
// as a template over a vendor struct V, which names the runtime (V::Api, porta/detail/gpu/api_*.cuh)
// and supplies only what truly differs between vendors:
//
//   using Api = gpu::ApiCuda;                                   // or gpu::ApiHip
//   static std::string no_device_reason(Api::Error e, int n);  // why there is no device, actionably
//   static const char* build_info() noexcept;                  // toolkit, BLAS, architectures
//   static bool blas_takes(porta_dtype, m, n, k, lda, ldb, ldc, flags) noexcept;
//   static porta_status blas_gemm(<the gemm entry's arguments>) noexcept;  // after the checks
//   static bool sparse_takes(nnz, k, ldx, ldy, flags) noexcept;  // the vendor's sparse library?
//   static porta_status sparse_spmm(<the spmm entry's arguments but flags>) noexcept;
//   static porta_status linalg(<the linalg entry's arguments>) noexcept;  // after the checks
//   static porta_status fft(<the fft entry's arguments>) noexcept;        // after the checks
//
// V::linalg and V::fft see non-empty calls only, with the device entered. A backend without a
// solver or FFT library answers PORTA_ERR_UNSUPPORTED with a message, and the front end runs the
// call on the CPU.
//
// backends/cuda/cuda_plugin.cpp and backends/hip/hip_plugin.cpp define V and export
// porta_backend_entry_v1() returning Plugin<V>::table(). Compiled as CUDA or HIP (api.cuh needs it).
//
// Rules every entry follows, so that both plugins behave alike under the one ABI:
// - arguments are checked first, by the checks every backend shares (backends/common/checks.hpp);
// - the device is validated and made current by a DeviceGuard that restores the caller's device;
// - nothing throws across the table: bad_alloc becomes PORTA_ERR_OOM, anything else
//   PORTA_ERR_BACKEND;
// - a failed runtime call becomes "<entry>: <Api> <call>: <text> (<error name>)" with
//   PORTA_ERR_OOM / PORTA_ERR_UNAVAILABLE / PORTA_ERR_BACKEND by the error's kind, and the
//   runtime's non-sticky last error is cleared so that it cannot surface in a later, unrelated call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "backends/common/abi_entries.hpp"
#include "backends/common/backend_error.hpp"
#include "backends/common/checks.hpp"
#include "backends/common/program.hpp"
#include "backends/gpu/collectives.hpp"
#include "backends/gpu/index_kernels.hpp"
#include "backends/gpu/kernels.hpp"
#include "backends/gpu/rtc.hpp"
#include "porta/abi/backend_v1.h"
#include "porta/detail/gpu/api.cuh"

namespace porta::detail::gpu {

namespace check = backend::check;

// One T per device of Api, created on first use and kept until exit (a vendor handle destroyed
// from a static destructor could outlive its runtime). `dev` must have been validated.
template <class T, class Api>
T& per_device(int dev) {
  static std::once_flag once;
  static T* slots = nullptr;
  std::call_once(once, [] {
    int n = 0;
    if (Api::get_device_count(&n) != Api::kSuccess) n = 0;
    slots = new T[n > 0 ? n : 1];
  });
  return slots[dev];
}

// The collectives entries (coll_*, collective) come from the base, written in collectives.hpp; the
// run-time kernels (rtc_*) from the base in rtc.hpp.
template <class V>
struct Plugin : Collectives<V, Plugin<V>>, Rtc<V, Plugin<V>> {
  using Api = typename V::Api;
  using Error = typename Api::Error;
  using Launch = KernelDispatch<Api>;  // the built-ins, from the ABI's run-time dtype to their launchers

  // ---- errors -----------------------------------------------------------------------------------

  // "<text> (<name>)", once when the runtime's text only repeats the name (ROCm 5.2 often does).
  static porta_status fail(const char* fn, const char* call, Error e) noexcept {
    (void)Api::get_last_error();
    const porta_status st =
        Api::is_out_of_memory(e) ? PORTA_ERR_OOM : (Api::is_unavailable(e) ? PORTA_ERR_UNAVAILABLE : PORTA_ERR_BACKEND);
    const char* name = Api::error_name(e);
    const char* text = Api::error_string(e);
    if (name == nullptr) name = "unknown error";
    if (text == nullptr || std::strcmp(text, name) == 0)
      return backend::set_error(st, "%s: %s %s: %s (%d)", fn, Api::kName, call, name, static_cast<int>(e));
    return backend::set_error(st, "%s: %s %s: %s (%s)", fn, Api::kName, call, text, name);
  }

  // A kernel launcher's vendor code (kernels.hpp) as a status; `op` names the kernel. Launchers
  // return the out-of-memory code when the pool had no room for their temporaries.
  static porta_status launched(int code, const char* op, porta_dtype dt, int dev) noexcept {
    if (code == 0) return PORTA_OK;
    const auto e = static_cast<Error>(code);
    (void)Api::get_last_error();
    if (Api::is_out_of_memory(e)) {
      std::size_t free_b = 0, total_b = 0;
      (void)Api::mem_get_info(&free_b, &total_b);
      (void)Api::get_last_error();
      return backend::set_error(
          PORTA_ERR_OOM, "no device memory for the temporaries of the %s (%s) on %s:%d (%zu of %zu bytes free; %s)", op,
          backend::dtype_name(dt), Api::kPrefix, dev, free_b, total_b, Api::error_name(e));
    }
    return backend::set_error(Api::is_unavailable(e) ? PORTA_ERR_UNAVAILABLE : PORTA_ERR_BACKEND,
                              "the %s (%s) kernel on %s:%d: %s (%s)", op, backend::dtype_name(dt), Api::kPrefix, dev,
                              Api::error_string(e), Api::error_name(e));
  }

  // ---- devices ----------------------------------------------------------------------------------

  struct DeviceState {
    std::once_flag pool_once;
    Error pool_error{};
    const char* pool_call = "";
    bool pooled = false;
    typename Api::MemPool pool{};
    std::mutex mutex;
    // Sizes of live allocations: the statistics count porta's bytes, not the pool's granularity,
    // and a pointer that is not porta's is an error instead of a crash in the runtime.
    std::unordered_map<void*, std::size_t> sizes;
    std::uint64_t in_use = 0, peak = 0, count = 0;
    // Peer access from this device to each other one: 0 not asked yet, 1 enabled, -1 not possible.
    std::mutex peer_mutex;
    std::unique_ptr<signed char[]> peer;
  };

  struct Devices {
    int count = 0;
    std::string reason;
    std::unique_ptr<DeviceState[]> states;
  };

  // Enumerated once per process; the reason for zero devices is the vendor's (V::no_device_reason).
  static const Devices& devices() noexcept {
    static const Devices d = []() noexcept {
      Devices r;
      int n = 0;
      const Error e = Api::get_device_count(&n);
      if (e != Api::kSuccess || n <= 0) {
        // A failed enumeration leaves a sticky last error in some runtimes.
        (void)Api::get_last_error();
        try {
          r.reason = V::no_device_reason(e, e == Api::kSuccess ? n : 0);
        } catch (...) {
        }
        return r;
      }
      try {
        r.states.reset(new DeviceState[static_cast<std::size_t>(n)]);
        r.count = n;
      } catch (...) {
        r.reason = std::string("out of host memory while setting up the ") + Api::kName + " backend";
      }
      return r;
    }();
    return d;
  }

  static int device_count(const char** reason) noexcept {
    const Devices& d = devices();
    if (reason != nullptr) *reason = d.count > 0 ? "" : d.reason.c_str();
    return d.count;
  }

  // Validates `dev` and makes it current through `guard`. Every entry that takes a device calls it.
  static porta_status enter(DeviceGuard<Api>& guard, int dev, const char* fn) noexcept {
    const Devices& d = devices();
    if (d.count == 0) return backend::set_error(PORTA_ERR_UNAVAILABLE, "%s: %s", fn, d.reason.c_str());
    if (dev < 0 || dev >= d.count)
      return backend::set_error(PORTA_ERR_INVALID, "%s: %s:%d does not exist (this process sees %d %s device%s)", fn,
                                Api::kPrefix, dev, d.count, Api::kName, d.count == 1 ? "" : "s");
    const Error e = guard.enter(dev);
    return e == Api::kSuccess ? PORTA_OK : fail(fn, "set_device", e);
  }

  // The device's memory state; its default pool is set up on first use to keep freed blocks, so
  // that a loop of temporaries never returns memory to the driver.
  static porta_status memory_of(int dev, const char* fn, DeviceState** out) noexcept {
    DeviceState& s = devices().states[static_cast<std::size_t>(dev)];
    std::call_once(s.pool_once, [&s, dev]() noexcept {
      if (!Api::pools_supported(dev)) return;
      s.pool_call = "default_pool";
      s.pool_error = Api::default_pool(&s.pool, dev);
      if (s.pool_error == Api::kSuccess) {
        s.pool_call = "pool_keep_freed";
        s.pool_error = Api::pool_keep_freed(s.pool);
      }
      s.pooled = s.pool_error == Api::kSuccess;
    });
    if (s.pool_error != Api::kSuccess) return fail(fn, s.pool_call, s.pool_error);
    *out = &s;
    return PORTA_OK;
  }

  static typename Api::Stream native(porta_stream s) noexcept { return reinterpret_cast<typename Api::Stream>(s); }
  static typename Api::Event native(porta_event e) noexcept { return reinterpret_cast<typename Api::Event>(e); }

// Entry plumbing: PORTA_GPU_ENTER validates the device and holds it current until the entry
// returns; PORTA_GPU_CALL reports a failing runtime call by its Api name.
#define PORTA_GPU_CHECK(expr)                                         \
  do {                                                                \
    if (const porta_status st_ = (expr); st_ != PORTA_OK) return st_; \
  } while (0)
#define PORTA_GPU_ENTER(dev, fn) \
  DeviceGuard<Api> guard_;       \
  PORTA_GPU_CHECK(enter(guard_, dev, fn))
#define PORTA_GPU_CALL(fn, call, ...)                                                             \
  do {                                                                                            \
    if (const Error e_ = Api::call(__VA_ARGS__); e_ != Api::kSuccess) return fail(fn, #call, e_); \
  } while (0)
#define PORTA_GPU_TRY try {
#define PORTA_GPU_CATCH(fn)                                                           \
  }                                                                                   \
  catch (const std::bad_alloc&) {                                                     \
    return backend::set_error(PORTA_ERR_OOM, "%s: out of host memory", fn);           \
  }                                                                                   \
  catch (...) {                                                                       \
    return backend::set_error(PORTA_ERR_BACKEND, "%s: unexpected C++ exception", fn); \
  }

  static porta_status device_info(int dev, porta_device_info_v1* out) noexcept {
    constexpr const char* fn = "device_info";
    if (out == nullptr) return backend::set_error(PORTA_ERR_INVALID, "%s: NULL output", fn);
    PORTA_GPU_ENTER(dev, fn);
    typename Api::DeviceProp p{};
    PORTA_GPU_CALL(fn, device_properties, &p, dev);
    std::size_t free_b = 0, total_b = 0;
    PORTA_GPU_CALL(fn, mem_get_info, &free_b, &total_b);
    std::memset(out, 0, sizeof *out);
    std::snprintf(out->name, sizeof out->name, "%s", Api::device_name(p));
    std::snprintf(out->vendor, sizeof out->vendor, "%s", Api::kVendor);
    Api::arch_name(p, out->arch, sizeof out->arch);
    out->total_memory = total_b != 0 ? total_b : p.totalGlobalMem;
    out->free_memory = free_b;
    out->compute_units = p.multiProcessorCount;
    out->warp_size = p.warpSize;  // 64 on CDNA, 32 on RDNA and NVIDIA: always the device's own
    out->max_threads_per_block = p.maxThreadsPerBlock;
    int v = 0;
    out->driver_version = Api::driver_version(&v) == Api::kSuccess ? v : 0;
    v = 0;
    out->runtime_version = Api::runtime_version(&v) == Api::kSuccess ? v : 0;
    (void)Api::get_last_error();
    out->pci_bus_id = p.pciBusID;
    return PORTA_OK;
  }

  static porta_status synchronize(int dev) noexcept {
    PORTA_GPU_ENTER(dev, "synchronize");
    PORTA_GPU_CALL("synchronize", device_synchronize);
    return PORTA_OK;
  }

  // ---- memory -----------------------------------------------------------------------------------

  static porta_status alloc(int dev, size_t bytes, porta_stream s, void** out) noexcept {
    constexpr const char* fn = "alloc";
    if (out == nullptr) return backend::set_error(PORTA_ERR_INVALID, "%s: NULL output", fn);
    *out = nullptr;
    PORTA_GPU_ENTER(dev, fn);
    if (bytes == 0) return PORTA_OK;
    PORTA_GPU_TRY
    DeviceState* m = nullptr;
    PORTA_GPU_CHECK(memory_of(dev, fn, &m));
    void* p = nullptr;
    const auto attempt = [&]() {
      return m->pooled ? Api::malloc_async(&p, bytes, native(s)) : Api::malloc_sync(&p, bytes);
    };
    Error e = attempt();
    if (Api::is_out_of_memory(e) && m->pooled) {
      // The pool may hold blocks whose frees on other streams have not run yet, or memory in
      // pieces too small for this request: wait for pending frees, give back what is unused, and
      // try once more.
      (void)Api::get_last_error();
      PORTA_GPU_CALL(fn, device_synchronize);
      PORTA_GPU_CALL(fn, pool_trim, m->pool);
      e = attempt();
    }
    if (Api::is_out_of_memory(e)) {
      (void)Api::get_last_error();
      std::size_t free_b = 0, total_b = 0;
      (void)Api::mem_get_info(&free_b, &total_b);
      (void)Api::get_last_error();
      return backend::set_error(PORTA_ERR_OOM,
                                "%s: out of memory on %s:%d: asked for %zu bytes, %zu of %zu bytes free (%s)", fn,
                                Api::kPrefix, dev, bytes, free_b, total_b, Api::error_name(e));
    }
    if (e != Api::kSuccess) return fail(fn, m->pooled ? "malloc_async" : "malloc", e);
    {
      std::lock_guard<std::mutex> lock(m->mutex);
      try {
        m->sizes[p] = bytes;
      } catch (...) {
        (void)(m->pooled ? Api::free_async(p, native(s)) : Api::free_sync(p));
        throw;
      }
      m->in_use += bytes;
      if (m->in_use > m->peak) m->peak = m->in_use;
      ++m->count;
    }
    *out = p;
    return PORTA_OK;
    PORTA_GPU_CATCH(fn)
  }

  static porta_status free(int dev, void* ptr, porta_stream s) noexcept {
    constexpr const char* fn = "free";
    if (ptr == nullptr) return PORTA_OK;
    PORTA_GPU_ENTER(dev, fn);
    DeviceState* m = nullptr;
    PORTA_GPU_CHECK(memory_of(dev, fn, &m));
    {
      std::lock_guard<std::mutex> lock(m->mutex);
      const auto it = m->sizes.find(ptr);
      if (it == m->sizes.end())
        return backend::set_error(PORTA_ERR_INVALID,
                                  "%s: %p was not allocated by porta on %s:%d (or was freed already)", fn, ptr,
                                  Api::kPrefix, dev);
      m->in_use -= it->second;
      m->sizes.erase(it);
    }
    if (m->pooled) {
      PORTA_GPU_CALL(fn, free_async, ptr, native(s));
    } else {
      PORTA_GPU_CALL(fn, free_sync, ptr);
    }
    return PORTA_OK;
  }

  static porta_status copy(int dev, void* dst, const void* src, size_t bytes, porta_copy_kind kind,
                           porta_stream s) noexcept {
    constexpr const char* fn = "copy";
    if (!backend::in_range(backend::raw_enum(kind), 0, 4))
      return backend::set_error(PORTA_ERR_INVALID, "%s: unknown copy kind %d", fn, backend::raw_enum(kind));
    if (bytes == 0) return PORTA_OK;
    if (dst == nullptr || src == nullptr) return backend::set_error(PORTA_ERR_INVALID, "%s: NULL pointer", fn);
    typename Api::MemcpyKind k = Api::kHostToHost;
    switch (kind) {
      case PORTA_COPY_HOST_TO_DEVICE:
        k = Api::kHostToDevice;
        break;
      case PORTA_COPY_DEVICE_TO_HOST:
        k = Api::kDeviceToHost;
        break;
      case PORTA_COPY_DEVICE_TO_DEVICE:
        k = Api::kDeviceToDevice;
        break;
      case PORTA_COPY_HOST_TO_HOST:  // through the stream too, so that it stays ordered with its work
        k = Api::kHostToHost;
        break;
    }
    PORTA_GPU_ENTER(dev, fn);
    PORTA_GPU_CALL(fn, memcpy_async, dst, src, bytes, k, native(s));
    return PORTA_OK;
  }

  // Whether the current device, `dev`, reaches `peer`'s memory directly; asked, and enabled where it
  // can be, once per direction (enabling maps every allocation of peer, its pool's included).
  static porta_status peer_link(int dev, int peer, const char* fn) noexcept {
    const Devices& d = devices();
    DeviceState& st = d.states[static_cast<std::size_t>(dev)];
    std::lock_guard<std::mutex> lock(st.peer_mutex);
    if (!st.peer) {
      st.peer.reset(new (std::nothrow) signed char[static_cast<std::size_t>(d.count)]());
      if (!st.peer) return backend::set_error(PORTA_ERR_OOM, "%s: out of host memory", fn);
    }
    signed char& state = st.peer[peer];
    if (state != 0) return PORTA_OK;
    int ok = 0;
    PORTA_GPU_CALL(fn, can_access_peer, &ok, dev, peer);
    if (ok != 0) {
      PORTA_GPU_CALL(fn, enable_peer_access, peer);
      // Arrays come from peer's stream-ordered pool, whose access is granted per pool, not by the
      // call above (without it the H200 pair copied at 35 GB/s instead of ~370).
      DeviceState* pst = nullptr;
      PORTA_GPU_CHECK(memory_of(peer, fn, &pst));
      if (pst->pooled) PORTA_GPU_CALL(fn, pool_grant_access, pst->pool, dev);
    }
    state = ok != 0 ? 1 : -1;
    return PORTA_OK;
  }

  // Events that exist for one call's ordering only; destroying a recorded event is allowed, its
  // waits still hold.
  struct OrderingEvents {
    typename Api::Event before{}, after{};
    ~OrderingEvents() {
      if (before) (void)Api::event_destroy(before);
      if (after) (void)Api::event_destroy(after);
    }
  };

  static porta_status copy_peer(int dev, const void* src, int dst_dev, void* dst, size_t bytes,
                                porta_stream s) noexcept {
    constexpr const char* fn = "copy_peer";
    if (bytes == 0) return PORTA_OK;
    if (dst == nullptr || src == nullptr) return backend::set_error(PORTA_ERR_INVALID, "%s: NULL pointer", fn);
    if (dev == dst_dev) return copy(dev, dst, src, bytes, PORTA_COPY_DEVICE_TO_DEVICE, s);
    OrderingEvents ev;
    {  // On the destination: its reach to the source, and a mark after the work queued there so far.
      DeviceGuard<Api> guard;
      PORTA_GPU_CHECK(enter(guard, dst_dev, fn));
      PORTA_GPU_CHECK(peer_link(dst_dev, dev, fn));
      PORTA_GPU_CALL(fn, event_create_ordering, &ev.before);
      PORTA_GPU_CALL(fn, event_record, ev.before, typename Api::Stream{});
    }
    {  // On the source's stream: wait for that mark, copy, and mark the end of the copy.
      DeviceGuard<Api> guard;
      PORTA_GPU_CHECK(enter(guard, dev, fn));
      PORTA_GPU_CHECK(peer_link(dev, dst_dev, fn));
      PORTA_GPU_CALL(fn, event_create_ordering, &ev.after);
      PORTA_GPU_CALL(fn, stream_wait_event, native(s), ev.before);
      PORTA_GPU_CALL(fn, memcpy_peer_async, dst, dst_dev, src, dev, bytes, native(s));
      PORTA_GPU_CALL(fn, event_record, ev.after, native(s));
    }
    // The destination's default stream (and, through it, its blocking streams) waits for the copy.
    DeviceGuard<Api> guard;
    PORTA_GPU_CHECK(enter(guard, dst_dev, fn));
    PORTA_GPU_CALL(fn, stream_wait_event, typename Api::Stream{}, ev.after);
    return PORTA_OK;
  }

  static porta_status host_alloc(size_t bytes, void** out) noexcept {
    constexpr const char* fn = "host_alloc";
    if (out == nullptr) return backend::set_error(PORTA_ERR_INVALID, "%s: NULL output", fn);
    *out = nullptr;
    if (bytes == 0) return PORTA_OK;
    // Pinning needs a device; without one the runtimes say only "invalid device".
    const char* why = nullptr;
    if (device_count(&why) == 0)
      return backend::set_error(PORTA_ERR_UNAVAILABLE, "%s: cannot pin host memory without a %s device: %s", fn,
                                Api::kName, why);
    const Error e = Api::host_alloc(out, bytes);
    if (e == Api::kSuccess) return PORTA_OK;
    *out = nullptr;
    if (Api::is_out_of_memory(e)) {
      (void)Api::get_last_error();
      return backend::set_error(PORTA_ERR_OOM, "%s: cannot pin %zu bytes of host memory (%s)", fn, bytes,
                                Api::error_name(e));
    }
    return fail(fn, "host_alloc", e);
  }

  static porta_status host_free(void* ptr) noexcept {
    if (ptr == nullptr) return PORTA_OK;
    PORTA_GPU_CALL("host_free", host_free, ptr);
    return PORTA_OK;
  }

  // Both ends of the range are checked: a borrow of n elements from an allocation of fewer fails
  // here rather than as an illegal address in a kernel later. Pinned and managed memory are
  // reachable from every device; pageable host memory only where the device says so (HMM, ATS).
  static porta_status check_pointer(int dev, const void* ptr, size_t bytes) noexcept {
    constexpr const char* fn = "check_pointer";
    if (ptr == nullptr || bytes == 0) return PORTA_OK;
    PORTA_GPU_ENTER(dev, fn);
    const auto* first = static_cast<const unsigned char*>(ptr);
    const unsigned char* ends[2] = {first, first + (bytes - 1)};
    for (int i = 0; i < 2; ++i) {
      typename Api::Pointer kind = Api::Pointer::other;
      int owner = -1;
      PORTA_GPU_CALL(fn, pointer_kind, ends[i], &kind, &owner);
      const char* which = i == 0 ? "its first byte" : "its last byte";
      if (kind == Api::Pointer::device && owner != dev)
        return backend::set_error(PORTA_ERR_INVALID, "the memory at %p (%s) is memory of %s:%d, not of %s:%d", ptr,
                                  which, Api::kPrefix, owner, Api::kPrefix, dev);
      if (kind == Api::Pointer::other) {
        int pageable = 0;
        if (Api::pageable_access(dev, &pageable) != Api::kSuccess) {
          (void)Api::get_last_error();
          pageable = 0;
        }
        if (!pageable)
          return backend::set_error(PORTA_ERR_INVALID,
                                    "the memory at %p (%s, %zu bytes in all) is not %s device memory: ordinary host "
                                    "memory, or past the end of an allocation; copy host data with Array::from",
                                    ptr, which, bytes, Api::kName);
      }
    }
    return PORTA_OK;
  }

  static porta_status memory_stats(int dev, porta_memory_stats_v1* out) noexcept {
    constexpr const char* fn = "memory_stats";
    if (out == nullptr) return backend::set_error(PORTA_ERR_INVALID, "%s: NULL output", fn);
    PORTA_GPU_ENTER(dev, fn);
    DeviceState* m = nullptr;
    PORTA_GPU_CHECK(memory_of(dev, fn, &m));
    std::memset(out, 0, sizeof *out);
    {
      std::lock_guard<std::mutex> lock(m->mutex);
      out->bytes_in_use = m->in_use;
      out->peak_bytes_in_use = m->peak;
      out->alloc_count = m->count;
    }
    out->bytes_reserved = out->bytes_in_use;
    std::uint64_t reserved = 0;
    if (m->pooled && Api::pool_reserved(m->pool, &reserved) == Api::kSuccess) {
      if (reserved > out->bytes_reserved) out->bytes_reserved = reserved;
    } else {
      (void)Api::get_last_error();
    }
    return PORTA_OK;
  }

  static porta_status empty_cache(int dev) noexcept {
    constexpr const char* fn = "empty_cache";
    PORTA_GPU_ENTER(dev, fn);
    DeviceState* m = nullptr;
    PORTA_GPU_CHECK(memory_of(dev, fn, &m));
    if (!m->pooled) return PORTA_OK;
    // Blocks freed on a stream return to the pool only when that stream gets there.
    PORTA_GPU_CALL(fn, device_synchronize);
    PORTA_GPU_CALL(fn, pool_trim, m->pool);
    return PORTA_OK;
  }

  // ---- streams and events -----------------------------------------------------------------------
  // A porta_stream is the native stream and a porta_event the native event, so user kernels use
  // them directly; NULL is the default stream, which orders after every blocking stream (the
  // runtime frees Arrays on it, after the work of user streams).

  // "Not ready" is an answer, not a failure.
  static porta_status query_result(Error e, int* done, const char* fn, const char* call) noexcept {
    if (e == Api::kNotReady) {
      if (Api::peek_last_error() == Api::kNotReady) (void)Api::get_last_error();
      *done = 0;
      return PORTA_OK;
    }
    if (e != Api::kSuccess) return fail(fn, call, e);
    *done = 1;
    return PORTA_OK;
  }

  static porta_status stream_create(int dev, porta_stream* out) noexcept {
    constexpr const char* fn = "stream_create";
    if (out == nullptr) return backend::set_error(PORTA_ERR_INVALID, "%s: NULL output", fn);
    *out = nullptr;
    PORTA_GPU_ENTER(dev, fn);
    typename Api::Stream s{};
    PORTA_GPU_CALL(fn, stream_create, &s);
    *out = reinterpret_cast<porta_stream>(s);
    return PORTA_OK;
  }

  static porta_status stream_destroy(int dev, porta_stream s) noexcept {
    constexpr const char* fn = "stream_destroy";
    if (s == nullptr) return PORTA_OK;  // the default stream is not ours to destroy
    PORTA_GPU_ENTER(dev, fn);
    const Error sync = Api::stream_synchronize(native(s));
    const Error destroy = Api::stream_destroy(native(s));
    if (sync != Api::kSuccess) return fail(fn, "stream_synchronize", sync);
    if (destroy != Api::kSuccess) return fail(fn, "stream_destroy", destroy);
    return PORTA_OK;
  }

  static porta_status stream_synchronize(int dev, porta_stream s) noexcept {
    PORTA_GPU_ENTER(dev, "stream_synchronize");
    PORTA_GPU_CALL("stream_synchronize", stream_synchronize, native(s));
    return PORTA_OK;
  }

  static porta_status stream_query(int dev, porta_stream s, int* done) noexcept {
    constexpr const char* fn = "stream_query";
    if (done == nullptr) return backend::set_error(PORTA_ERR_INVALID, "%s: NULL output", fn);
    PORTA_GPU_ENTER(dev, fn);
    return query_result(Api::stream_query(native(s)), done, fn, "stream_query");
  }

  static porta_status stream_wait_event(int dev, porta_stream s, porta_event ev) noexcept {
    constexpr const char* fn = "stream_wait_event";
    if (ev == nullptr) return backend::set_error(PORTA_ERR_INVALID, "%s: NULL event", fn);
    PORTA_GPU_ENTER(dev, fn);
    PORTA_GPU_CALL(fn, stream_wait_event, native(s), native(ev));
    return PORTA_OK;
  }

  static porta_status event_create(int dev, porta_event* out) noexcept {
    constexpr const char* fn = "event_create";
    if (out == nullptr) return backend::set_error(PORTA_ERR_INVALID, "%s: NULL output", fn);
    *out = nullptr;
    PORTA_GPU_ENTER(dev, fn);
    typename Api::Event e{};
    PORTA_GPU_CALL(fn, event_create, &e);
    *out = reinterpret_cast<porta_event>(e);
    return PORTA_OK;
  }

  static porta_status event_destroy(int dev, porta_event ev) noexcept {
    if (ev == nullptr) return PORTA_OK;
    PORTA_GPU_ENTER(dev, "event_destroy");
    PORTA_GPU_CALL("event_destroy", event_destroy, native(ev));
    return PORTA_OK;
  }

  static porta_status event_record(int dev, porta_event ev, porta_stream s) noexcept {
    constexpr const char* fn = "event_record";
    if (ev == nullptr) return backend::set_error(PORTA_ERR_INVALID, "%s: NULL event", fn);
    PORTA_GPU_ENTER(dev, fn);
    PORTA_GPU_CALL(fn, event_record, native(ev), native(s));
    return PORTA_OK;
  }

  static porta_status event_synchronize(int dev, porta_event ev) noexcept {
    constexpr const char* fn = "event_synchronize";
    if (ev == nullptr) return backend::set_error(PORTA_ERR_INVALID, "%s: NULL event", fn);
    PORTA_GPU_ENTER(dev, fn);
    PORTA_GPU_CALL(fn, event_synchronize, native(ev));
    return PORTA_OK;
  }

  static porta_status event_query(int dev, porta_event ev, int* done) noexcept {
    constexpr const char* fn = "event_query";
    if (ev == nullptr || done == nullptr) return backend::set_error(PORTA_ERR_INVALID, "%s: NULL argument", fn);
    PORTA_GPU_ENTER(dev, fn);
    return query_result(Api::event_query(native(ev)), done, fn, "event_query");
  }

  static porta_status event_elapsed_ms(int dev, porta_event start, porta_event end, float* ms) noexcept {
    constexpr const char* fn = "event_elapsed_ms";
    if (start == nullptr || end == nullptr || ms == nullptr)
      return backend::set_error(PORTA_ERR_INVALID, "%s: NULL argument", fn);
    PORTA_GPU_ENTER(dev, fn);
    PORTA_GPU_CALL(fn, event_elapsed_ms, ms, native(start), native(end));
    return PORTA_OK;
  }

  // ---- built-in algorithms: checks, then the shared kernels (kernels.hpp) -------------------------
  // `run` enters the device and maps the launcher's code; `op` names the kernel in messages.
  template <class F>
  static porta_status run(int dev, const char* fn, const char* op, porta_dtype dt, F&& launch) noexcept {
    PORTA_GPU_ENTER(dev, fn);
    PORTA_GPU_TRY
    return launched(launch(), op, dt, dev);
    PORTA_GPU_CATCH(fn)
  }

  static porta_status fill(int dev, porta_dtype dt, int64_t n, porta_scalar value, void* y, porta_stream s) noexcept {
    PORTA_GPU_CHECK(check::elementwise(dt, n, y, y, "fill"));
    return run(dev, "fill", "fill", dt, [&] { return Launch::fill(dt, n, value, y, s); });
  }

  static porta_status iota(int dev, porta_dtype dt, int64_t n, porta_scalar start, porta_scalar step, void* y,
                           porta_stream s) noexcept {
    PORTA_GPU_CHECK(check::elementwise(dt, n, y, y, "iota"));
    return run(dev, "iota", "iota", dt, [&] { return Launch::iota(dt, n, start, step, y, s); });
  }

  static porta_status cast(int dev, porta_dtype from, porta_dtype to, int64_t n, const void* x, void* y,
                           porta_stream s) noexcept {
    PORTA_GPU_CHECK(check::cast(from, to, n, x, y));
    PORTA_GPU_CHECK(check::cast_in_one_pass(from, to, n, x, y));
    return run(dev, "cast", "cast", to, [&] { return Launch::cast(from, to, n, x, y, s); });
  }

  static porta_status unary(int dev, porta_unary_op op, porta_dtype dt, int64_t n, const void* x, void* y,
                            porta_stream s) noexcept {
    PORTA_GPU_CHECK(check::unary(op, dt, n, x, y));
    return run(dev, "unary", "unary map", dt, [&] { return Launch::unary(op, dt, n, x, y, s); });
  }

  static porta_status binary(int dev, porta_binary_op op, porta_dtype dt, int64_t rows, int64_t cols, const void* a,
                             int64_t a_rs, int64_t a_cs, const void* b, int64_t b_rs, int64_t b_cs, void* y,
                             porta_stream s) noexcept {
    int64_t n = 0;
    PORTA_GPU_CHECK(check::binary(op, dt, rows, cols, a, b, y, &n));
    return run(dev, "binary", "binary map", dt,
               [&] { return Launch::binary(op, dt, rows, cols, a, a_rs, a_cs, b, b_rs, b_cs, y, s); });
  }

  static porta_status binary_scalar(int dev, porta_binary_op op, porta_dtype dt, int64_t n, const void* x,
                                    porta_scalar value, int scalar_first, void* y, porta_stream s) noexcept {
    PORTA_GPU_CHECK(check::binary_scalar(op, dt, n, x, y));
    return run(dev, "binary_scalar", "binary map", dt,
               [&] { return Launch::binary_scalar(op, dt, n, x, value, scalar_first, y, s); });
  }

  // Fused expressions (program_kernels.cuh).
  static porta_status map_program(int dev, porta_dtype dt, int64_t n, const porta_program_op* ops, int32_t nops,
                                  const void* const* inputs, int32_t ninputs, void* y, porta_stream s) noexcept {
    PORTA_GPU_CHECK(check::map_program(dt, n, ops, nops, inputs, ninputs, y));
    return run(dev, "map_program", "fused map", dt,
               [&] { return Launch::map_program(dt, n, ops, nops, inputs, ninputs, y, s); });
  }

  static porta_status axpy(int dev, porta_dtype dt, int64_t n, porta_scalar alpha, const void* x, void* y,
                           porta_stream s) noexcept {
    PORTA_GPU_CHECK(check::elementwise(dt, n, x, y, "axpy"));
    return run(dev, "axpy", "axpy", dt, [&] { return Launch::axpy(dt, n, alpha, x, y, s); });
  }

  static porta_status reduce(int dev, porta_reduce_op op, porta_dtype dt, int64_t outer, int64_t n, int64_t inner,
                             const void* x, void* y, porta_stream s) noexcept {
    PORTA_GPU_CHECK(check::reduce(op, dt, outer, n, inner, x, y));
    return run(dev, "reduce", "reduction", dt, [&] { return Launch::reduce(op, dt, outer, n, inner, x, y, s); });
  }

  static porta_status dot(int dev, porta_dtype dt, int64_t n, const void* x, const void* w, void* y,
                          porta_stream s) noexcept {
    PORTA_GPU_CHECK(check::dot(dt, n, x, w, y));
    return run(dev, "dot", "dot", dt, [&] { return Launch::dot(dt, n, x, w, y, s); });
  }

  // The vendor BLAS where V takes the call (float/double, sizes it supports), else porta's kernel.
  static porta_status gemm(int dev, porta_dtype dt, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                           porta_scalar alpha, const void* a, int64_t lda, const void* b, int64_t ldb,
                           porta_scalar beta, void* c, int64_t ldc, uint32_t flags, porta_stream s) noexcept {
    PORTA_GPU_CHECK(check::gemm(dt, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc));
    if (m == 0 || n == 0) return PORTA_OK;
    if (V::blas_takes(dt, m, n, k, lda, ldb, ldc, flags)) {
      PORTA_GPU_ENTER(dev, "gemm");
      return V::blas_gemm(dev, dt, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, flags, s);
    }
    return run(dev, "gemm", "gemm", dt, [&] {
      return Launch::gemm(dt, trans_a != 0, trans_b != 0, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    });
  }

  // ---- sparse products (sparse_kernels.cuh) ------------------------------------------------------
  // The vendor's sparse library where V takes the call, else porta's row-ordered kernel.
  static porta_status spmm(int dev, porta_dtype dt, porta_dtype index_dt, int64_t rows, int64_t cols, int64_t nnz,
                           const void* row_ptr, const void* col_idx, const void* values, int64_t k, porta_scalar alpha,
                           const void* x, int64_t ldx, porta_scalar beta, void* y, int64_t ldy, uint32_t flags,
                           porta_stream s) noexcept {
    PORTA_GPU_CHECK(check::spmm(dt, index_dt, rows, cols, nnz, row_ptr, col_idx, values, k, x, ldx, y, ldy));
    if (rows == 0 || k == 0) return PORTA_OK;
    // The vendor's libraries reject more stored entries than the matrix has places (duplicates that
    // add up, which porta allows as SciPy does); porta's kernel takes those.
    const bool fits = nnz == 0 || (nnz - 1) / cols < rows;
    if (fits && V::sparse_takes(nnz, k, ldx, ldy, flags)) {
      PORTA_GPU_ENTER(dev, "spmm");
      return V::sparse_spmm(dev, dt, index_dt, rows, cols, nnz, row_ptr, col_idx, values, k, alpha, x, ldx, beta, y,
                            ldy, s);
    }
    return run(dev, "spmm", "sparse product", dt, [&] {
      return Launch::spmm(dt, index_dt, rows, row_ptr, col_idx, values, k, alpha, x, ldx, beta, y, ldy, s);
    });
  }

  // ---- dense linear algebra: the vendor's solver library or none ---------------------------------
  static porta_status linalg(int dev, porta_linalg_op op, porta_dtype dt, int64_t batch, int64_t m, int64_t n,
                             int64_t k, void* a, void* b, void* c, void* d, int32_t* info, uint32_t flags,
                             porta_stream s) noexcept {
    PORTA_GPU_CHECK(check::linalg(op, dt, batch, m, n, k, a, b, c, d, info, flags, nullptr));
    if (batch == 0) return PORTA_OK;
    if (m == 0 || n == 0) {
      // Empty matrices factor trivially, but the caller still reads one code per matrix.
      if (info == nullptr) return PORTA_OK;
      porta_scalar zero;
      std::memset(&zero, 0, sizeof zero);
      return run(dev, "linalg", "fill", PORTA_I32, [&] { return Launch::fill(PORTA_I32, batch, zero, info, s); });
    }
    PORTA_GPU_ENTER(dev, "linalg");
    return V::linalg(dev, op, dt, batch, m, n, k, a, b, c, d, info, flags, s);
  }

  // ---- Fourier transforms: the vendor's FFT library or none ---------------------------------------
  static porta_status fft(int dev, porta_fft_kind kind, porta_dtype dt, int32_t rank, int64_t n0, int64_t n1,
                          int64_t n2, int64_t batch, const void* x, void* y, double scale, porta_stream s) noexcept {
    PORTA_GPU_CHECK(check::fft(kind, dt, rank, n0, n1, n2, batch, x, y, scale, nullptr));
    if (batch == 0) return PORTA_OK;
    PORTA_GPU_ENTER(dev, "fft");
    return V::fft(dev, kind, dt, rank, n0, n1, n2, batch, x, y, scale, s);
  }

  // ---- sorting and arg-reductions (sort_kernels.cuh) ---------------------------------------------
  static porta_status sort(int dev, porta_dtype key_dt, int64_t n, const void* keys_in, void* keys_out,
                           porta_dtype value_dt, const void* values_in, void* values_out, uint32_t flags,
                           porta_stream s) noexcept {
    PORTA_GPU_CHECK(check::sort(key_dt, n, keys_in, keys_out, value_dt, values_in, values_out, flags));
    const int value_bytes = values_in == nullptr ? 0 : static_cast<int>(backend::dtype_size(value_dt));
    return run(dev, "sort", "sort", key_dt, [&] {
      return Launch::sort(key_dt, n, keys_in, keys_out, value_bytes, values_in, values_out,
                          (flags & PORTA_SORT_DESCENDING) != 0, s);
    });
  }

  static porta_status argreduce(int dev, porta_arg_op op, porta_dtype dt, int64_t outer, int64_t n, int64_t inner,
                                const void* x, int64_t* y, porta_stream s) noexcept {
    PORTA_GPU_CHECK(check::argreduce(op, dt, outer, n, inner, x, y));
    return run(dev, "argreduce", op == PORTA_ARG_MAX ? "argmax" : "argmin", dt,
               [&] { return Launch::argreduce(op, dt, outer, n, inner, x, y, s); });
  }

  // ---- views, masks, gather and scatter (index_kernels.hpp) ---------------------------------------
  using IndexLaunch = IndexDispatch<Api>;

  static porta_status copy_strided(int dev, porta_dtype dt, int32_t rank, const int64_t* shape, const void* src,
                                   const int64_t* src_strides, void* dst, const int64_t* dst_strides,
                                   porta_stream s) noexcept {
    int64_t n = 0;
    PORTA_GPU_CHECK(check::copy_strided(dt, rank, shape, src, src_strides, dst, dst_strides, &n));
    if (n == 0) return PORTA_OK;
    return run(dev, "copy_strided", "strided copy", dt,
               [&] { return IndexLaunch::copy_strided(dt, rank, shape, src, src_strides, dst, dst_strides, s); });
  }

  static porta_status compare(int dev, porta_compare_op op, porta_dtype dt, int64_t rows, int64_t cols, const void* a,
                              int64_t a_rs, int64_t a_cs, const void* b, int64_t b_rs, int64_t b_cs, int32_t* y,
                              porta_stream s) noexcept {
    int64_t n = 0;
    PORTA_GPU_CHECK(check::compare(op, dt, rows, cols, a, b, y, &n));
    if (n == 0) return PORTA_OK;
    return run(dev, "compare", "comparison", dt,
               [&] { return IndexLaunch::compare(op, dt, rows, cols, a, a_rs, a_cs, b, b_rs, b_cs, y, s); });
  }

  static porta_status where(int dev, porta_dtype dt, int64_t n, const int32_t* mask, const void* a, int64_t a_step,
                            const void* b, int64_t b_step, void* y, porta_stream s) noexcept {
    PORTA_GPU_CHECK(check::where(dt, n, mask, a, a_step, b, b_step, y));
    if (n == 0) return PORTA_OK;
    return run(dev, "where", "where", dt, [&] { return IndexLaunch::where(dt, n, mask, a, a_step, b, b_step, y, s); });
  }

  static porta_status take(int dev, porta_dtype dt, int64_t outer, int64_t n, int64_t inner, const void* x, int64_t m,
                           const int64_t* idx, void* y, porta_stream s) noexcept {
    int64_t rows = 0, total = 0;
    PORTA_GPU_CHECK(check::gather_scatter("take", dt, outer, n, inner, x, m, idx, y, &rows, &total));
    if (total == 0) return PORTA_OK;
    return run(dev, "take", "take", dt, [&] { return IndexLaunch::take(dt, outer, n, inner, x, m, idx, y, s); });
  }

  static porta_status scatter(int dev, porta_dtype dt, int64_t outer, int64_t n, int64_t inner, void* y, int64_t m,
                              const int64_t* idx, const void* v, porta_stream s) noexcept {
    int64_t rows = 0, total = 0;
    PORTA_GPU_CHECK(check::gather_scatter("scatter", dt, outer, n, inner, y, m, idx, v, &rows, &total));
    if (total == 0 || n == 0) return PORTA_OK;
    return run(dev, "scatter", "scatter", dt,
               [&] { return IndexLaunch::scatter(dt, outer, n, inner, y, m, idx, v, s); });
  }

  // ---- random numbers and scans (random_kernels.cuh, scan_kernels.cuh) --------------------------

  static porta_status random(int dev, porta_random_dist dist, porta_dtype dt, int64_t n, uint64_t seed,
                             uint64_t stream_id, uint64_t offset, void* y, porta_stream s) noexcept {
    PORTA_GPU_CHECK(check::random(dist, dt, n, y));
    if (n == 0) return PORTA_OK;
    return run(dev, "random", "random", dt, [&] { return Launch::random(dist, dt, n, seed, stream_id, offset, y, s); });
  }

  static porta_status scan(int dev, porta_reduce_op op, porta_dtype dt, uint32_t flags, int64_t outer, int64_t n,
                           int64_t inner, const void* x, void* y, porta_stream s) noexcept {
    PORTA_GPU_CHECK(check::scan(op, dt, flags, outer, n, inner, x, y));
    if (outer == 0 || n == 0 || inner == 0) return PORTA_OK;
    return run(dev, "scan", "scan", dt,
               [&] { return Launch::scan(op, dt, (flags & PORTA_SCAN_EXCLUSIVE) != 0, outer, n, inner, x, y, s); });
  }

  // ---- profiler ranges --------------------------------------------------------------------------
  // The range is the calling thread's, whatever device is current: no device is entered, so a range
  // costs the profiler library's call alone.
  static porta_status range_push(int, const char* name) noexcept {
    Api::range_push(name != nullptr ? name : "");
    return PORTA_OK;
  }
  static porta_status range_pop(int) noexcept {
    Api::range_pop();
    return PORTA_OK;
  }

#undef PORTA_GPU_CATCH
#undef PORTA_GPU_TRY
#undef PORTA_GPU_CALL
#undef PORTA_GPU_ENTER
#undef PORTA_GPU_CHECK

  // ---- the table --------------------------------------------------------------------------------

  static const porta_backend_v1* table() noexcept {
    static const porta_backend_v1 t = []() noexcept {
      porta_backend_v1 t{};
      t.abi_version = PORTA_ABI_VERSION;
      t.struct_size = sizeof(porta_backend_v1);
      t.name = Api::kPrefix;
      t.device_type = Api::kDeviceType;
      t.build_info = V::build_info();
      t.last_error = &backend::last_error;
      t.device_count = &device_count;
#define PORTA_ABI_ENTRY(name, params, args) t.name = &Plugin::name;
#include "porta/abi/backend_v1_entries.inc"
#undef PORTA_ABI_ENTRY
      return t;
    }();
    return &t;
  }
};

}  // namespace porta::detail::gpu
