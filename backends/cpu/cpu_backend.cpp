// SPDX-License-Identifier: Apache-2.0
// The CPU backend's porta_backend_v1 table: one device ("cpu", index 0) made of the host's cores.
//
// Execution model: every entry runs to completion before it returns, on the calling thread and
// (for large enough work) an OpenMP team it starts. Streams and events therefore carry no work:
// a stream is always idle, synchronising is a no-op, and an event is just the time it was
// recorded. Streams are still distinct objects so that code written for GPUs (one stream per
// task, events between them) keeps working unchanged and can tell its streams apart.
#include "backends/builtin.hpp"

#include <sys/utsname.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>

#include "backends/common/abi_entries.hpp"
#include "cpu_common.hpp"
#include "cpu_kernels.hpp"
#include "cpu_map_common.hpp"
#include "cpu_memory.hpp"

namespace porta::detail::cpu {

// ---- errors -------------------------------------------------------------------------------------

porta_status check_device(int dev, const char* fn) noexcept {
  if (dev == 0) return PORTA_OK;
  return set_error(PORTA_ERR_INVALID, "%s: the cpu backend has one device (index 0), not %d", fn, dev);
}

namespace {

// ---- device -------------------------------------------------------------------------------------
struct CpuIdentity {
  char name[256] = "";
  char vendor[64] = "";
  char arch[64] = "";
};

// Truncating copy into a fixed field of the ABI struct (always NUL-terminated).
void copy_text(char* dst, std::size_t size, const char* src) {
  std::size_t i = 0;
  for (; i + 1 < size && src[i] != '\0'; ++i) dst[i] = src[i];
  dst[i] = '\0';
}

// "model name : Intel(R) Xeon(R) ..." -> the value, trimmed.
bool cpuinfo_field(const char* line, const char* key, char* out, std::size_t size) {
  const std::size_t klen = std::strlen(key);
  if (std::strncmp(line, key, klen) != 0) return false;
  const char* p = line + klen;
  while (*p == ' ' || *p == '\t') ++p;
  if (*p != ':') return false;
  ++p;
  while (*p == ' ' || *p == '\t') ++p;
  copy_text(out, size, p);
  std::size_t len = std::strlen(out);
  while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == ' ' || out[len - 1] == '\r')) out[--len] = '\0';
  return len > 0;
}

const CpuIdentity& cpu_identity() {
  static const CpuIdentity id = [] {
    CpuIdentity r;
    struct utsname u;
    if (::uname(&u) == 0) copy_text(r.arch, sizeof r.arch, u.machine);
    char implementer[64] = "", hardware[256] = "";
    if (std::FILE* f = std::fopen("/proc/cpuinfo", "r")) {
      char line[512];
      while (std::fgets(line, sizeof line, f) != nullptr) {
        // x86 has "model name" and "vendor_id"; Arm kernels have "CPU implementer" and sometimes
        // "Hardware" or "model name"; POWER has "cpu".
        if (r.name[0] == '\0') cpuinfo_field(line, "model name", r.name, sizeof r.name);
        if (r.name[0] == '\0') cpuinfo_field(line, "cpu", r.name, sizeof r.name);
        if (r.vendor[0] == '\0') cpuinfo_field(line, "vendor_id", r.vendor, sizeof r.vendor);
        if (implementer[0] == '\0') cpuinfo_field(line, "CPU implementer", implementer, sizeof implementer);
        if (hardware[0] == '\0') cpuinfo_field(line, "Hardware", hardware, sizeof hardware);
      }
      std::fclose(f);
    }
    if (r.name[0] == '\0' && hardware[0] != '\0') copy_text(r.name, sizeof r.name, hardware);
    if (r.name[0] == '\0') std::snprintf(r.name, sizeof r.name, "%s CPU", r.arch[0] ? r.arch : "host");
    if (r.vendor[0] == '\0' && implementer[0] != '\0') {
      const long code = std::strtol(implementer, nullptr, 0);
      const char* v = code == 0x41   ? "ARM"
                      : code == 0x61 ? "Apple"
                      : code == 0x48 ? "HiSilicon"
                      : code == 0x4e ? "NVIDIA"
                      : code == 0x51 ? "Qualcomm"
                      : code == 0xc0 ? "Ampere"
                                     : nullptr;
      if (v != nullptr) {
        copy_text(r.vendor, sizeof r.vendor, v);
      } else {
        std::snprintf(r.vendor, sizeof r.vendor, "implementer %s", implementer);
      }
    }
    if (r.vendor[0] == '\0') std::snprintf(r.vendor, sizeof r.vendor, "unknown");
    if (r.arch[0] == '\0') std::snprintf(r.arch, sizeof r.arch, "unknown");
    return r;
  }();
  return id;
}

int hardware_threads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
#endif
}

}  // namespace

// ---- the table's entries ----------------------------------------------------------------------
const char* last_error_entry() noexcept {
  return last_error();
}

int device_count(const char** reason) noexcept {
  if (reason != nullptr) *reason = "";
  return 1;
}

porta_status device_info(int dev, porta_device_info_v1* out) noexcept {
  if (porta_status st = check_device(dev, "device_info"); st != PORTA_OK) return st;
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "device_info: out is NULL");
  std::memset(out, 0, sizeof *out);
  const CpuIdentity& id = cpu_identity();
  copy_text(out->name, sizeof out->name, id.name);
  copy_text(out->vendor, sizeof out->vendor, id.vendor);
  copy_text(out->arch, sizeof out->arch, id.arch);
  const SystemMemory sm = system_memory();
  out->total_memory = sm.total;
  out->free_memory = sm.available;
  out->compute_units = hardware_threads();
  out->warp_size = 1;
  // The CPU's "block" is the OpenMP team of one parallel region.
  out->max_threads_per_block = out->compute_units;
  out->driver_version = 0;
#if defined(_OPENMP)
  out->runtime_version = _OPENMP;
#else
  out->runtime_version = 0;
#endif
  out->pci_bus_id = -1;
  return PORTA_OK;
}

porta_status synchronize(int dev) noexcept {
  return check_device(dev, "synchronize");
}

// ---- memory -------------------------------------------------------------------------------------
porta_status alloc(int dev, size_t bytes, porta_stream, void** out) noexcept {
  if (porta_status st = check_device(dev, "alloc"); st != PORTA_OK) return st;
  return pool_alloc(bytes, out);
}

porta_status free(int dev, void* ptr, porta_stream) noexcept {
  if (porta_status st = check_device(dev, "free"); st != PORTA_OK) return st;
  return pool_free(ptr);
}

porta_status memory_stats(int dev, porta_memory_stats_v1* out) noexcept {
  if (porta_status st = check_device(dev, "memory_stats"); st != PORTA_OK) return st;
  return pool_stats(out);
}

// Every address is the CPU's (cpu:strict checks its own separate space: strict_check_borrow).
porta_status check_pointer(int dev, const void*, size_t) noexcept {
  return check_device(dev, "check_pointer");
}

// Profilers' ranges are a GPU vendor's (NVTX, roctx): the CPU has none to open.
porta_status range_push(int dev, const char*) noexcept {
  return check_device(dev, "range_push");
}
porta_status range_pop(int dev) noexcept {
  return check_device(dev, "range_pop");
}

porta_status empty_cache(int dev) noexcept {
  if (porta_status st = check_device(dev, "empty_cache"); st != PORTA_OK) return st;
  pool_empty_cache();
  return PORTA_OK;
}

porta_status copy(int dev, void* dst, const void* src, size_t bytes, porta_copy_kind kind, porta_stream) noexcept {
  if (porta_status st = check_device(dev, "copy"); st != PORTA_OK) return st;
  if (!in_range(raw_enum(kind), 0, 4))
    return set_error(PORTA_ERR_INVALID, "copy: unknown copy kind %d", raw_enum(kind));
  if (bytes == 0 || dst == src) return PORTA_OK;
  if (dst == nullptr || src == nullptr) return set_error(PORTA_ERR_INVALID, "copy: NULL pointer with %zu bytes", bytes);
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  if (d < s + bytes && s < d + bytes) {  // overlapping: only memmove is defined, and it is serial
    std::memmove(d, s, bytes);
    return PORTA_OK;
  }
  // One core cannot saturate memory bandwidth on most servers: a copy is split and stored as the
  // maps are (cpu_map_common.hpp).
  copy_bytes(d, s, bytes);
  return PORTA_OK;
}

// The CPU backend has one device, so a copy "between devices" is a copy within it.
porta_status copy_peer(int dev, const void* src, int dst_dev, void* dst, size_t bytes, porta_stream s) noexcept {
  if (porta_status st = check_device(dst_dev, "copy_peer"); st != PORTA_OK) return st;
  return copy(dev, dst, src, bytes, PORTA_COPY_DEVICE_TO_DEVICE, s);
}

// ---- streams and events -------------------------------------------------------------------------
namespace {

struct CpuStream {
  int id;
};
struct CpuEvent {
  std::chrono::steady_clock::time_point time;
  bool recorded = false;
};

// Live handles, so that a stale or foreign handle is an error instead of a crash.
struct Handles {
  std::mutex mutex;
  std::unordered_set<const void*> streams, events;
  int next_stream = 1;
};
Handles& handles() {
  static Handles* h = new Handles;  // never destroyed: handles may be released during static destruction
  return *h;
}

bool live_stream(porta_stream s) {
  if (s == nullptr) return true;  // the default stream
  Handles& h = handles();
  std::lock_guard<std::mutex> lock(h.mutex);
  return h.streams.count(s) != 0;
}

CpuEvent* live_event(porta_event e) {
  if (e == nullptr) return nullptr;
  Handles& h = handles();
  std::lock_guard<std::mutex> lock(h.mutex);
  return h.events.count(e) != 0 ? reinterpret_cast<CpuEvent*>(e) : nullptr;
}

porta_status bad_stream(const char* fn, porta_stream s) {
  return set_error(PORTA_ERR_INVALID, "%s: %p is not a live cpu stream", fn, static_cast<void*>(s));
}
porta_status bad_event(const char* fn, porta_event e) {
  return set_error(PORTA_ERR_INVALID, "%s: %p is not a live cpu event", fn, static_cast<void*>(e));
}

}  // namespace

porta_status stream_create(int dev, porta_stream* out) noexcept {
  if (porta_status st = check_device(dev, "stream_create"); st != PORTA_OK) return st;
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "stream_create: out is NULL");
  PORTA_CPU_TRY
  Handles& h = handles();
  std::lock_guard<std::mutex> lock(h.mutex);
  auto s = std::make_unique<CpuStream>(CpuStream{h.next_stream++});
  h.streams.insert(s.get());
  *out = reinterpret_cast<porta_stream>(s.release());
  return PORTA_OK;
  PORTA_CPU_CATCH("stream_create")
}

porta_status stream_destroy(int dev, porta_stream s) noexcept {
  if (porta_status st = check_device(dev, "stream_destroy"); st != PORTA_OK) return st;
  if (s == nullptr) return PORTA_OK;  // the default stream is not owned by anyone
  Handles& h = handles();
  std::lock_guard<std::mutex> lock(h.mutex);
  if (h.streams.erase(s) == 0) return bad_stream("stream_destroy", s);
  delete reinterpret_cast<CpuStream*>(s);
  return PORTA_OK;
}

porta_status stream_synchronize(int dev, porta_stream s) noexcept {
  if (porta_status st = check_device(dev, "stream_synchronize"); st != PORTA_OK) return st;
  return live_stream(s) ? PORTA_OK : bad_stream("stream_synchronize", s);
}

porta_status stream_query(int dev, porta_stream s, int* done) noexcept {
  if (porta_status st = check_device(dev, "stream_query"); st != PORTA_OK) return st;
  if (done == nullptr) return set_error(PORTA_ERR_INVALID, "stream_query: done is NULL");
  if (!live_stream(s)) return bad_stream("stream_query", s);
  *done = 1;
  return PORTA_OK;
}

porta_status stream_wait_event(int dev, porta_stream s, porta_event e) noexcept {
  if (porta_status st = check_device(dev, "stream_wait_event"); st != PORTA_OK) return st;
  if (!live_stream(s)) return bad_stream("stream_wait_event", s);
  if (live_event(e) == nullptr) return bad_event("stream_wait_event", e);
  return PORTA_OK;
}

porta_status event_create(int dev, porta_event* out) noexcept {
  if (porta_status st = check_device(dev, "event_create"); st != PORTA_OK) return st;
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "event_create: out is NULL");
  PORTA_CPU_TRY
  Handles& h = handles();
  std::lock_guard<std::mutex> lock(h.mutex);
  auto e = std::make_unique<CpuEvent>();
  h.events.insert(e.get());
  *out = reinterpret_cast<porta_event>(e.release());
  return PORTA_OK;
  PORTA_CPU_CATCH("event_create")
}

porta_status event_destroy(int dev, porta_event e) noexcept {
  if (porta_status st = check_device(dev, "event_destroy"); st != PORTA_OK) return st;
  if (e == nullptr) return PORTA_OK;
  Handles& h = handles();
  std::lock_guard<std::mutex> lock(h.mutex);
  if (h.events.erase(e) == 0) return bad_event("event_destroy", e);
  delete reinterpret_cast<CpuEvent*>(e);
  return PORTA_OK;
}

porta_status event_record(int dev, porta_event e, porta_stream s) noexcept {
  if (porta_status st = check_device(dev, "event_record"); st != PORTA_OK) return st;
  CpuEvent* ev = live_event(e);
  if (ev == nullptr) return bad_event("event_record", e);
  if (!live_stream(s)) return bad_stream("event_record", s);
  ev->time = std::chrono::steady_clock::now();  // all earlier work on s has finished already
  ev->recorded = true;
  return PORTA_OK;
}

porta_status event_synchronize(int dev, porta_event e) noexcept {
  if (porta_status st = check_device(dev, "event_synchronize"); st != PORTA_OK) return st;
  return live_event(e) != nullptr ? PORTA_OK : bad_event("event_synchronize", e);
}

porta_status event_query(int dev, porta_event e, int* done) noexcept {
  if (porta_status st = check_device(dev, "event_query"); st != PORTA_OK) return st;
  if (done == nullptr) return set_error(PORTA_ERR_INVALID, "event_query: done is NULL");
  if (live_event(e) == nullptr) return bad_event("event_query", e);
  *done = 1;
  return PORTA_OK;
}

porta_status event_elapsed_ms(int dev, porta_event start, porta_event end, float* ms) noexcept {
  if (porta_status st = check_device(dev, "event_elapsed_ms"); st != PORTA_OK) return st;
  if (ms == nullptr) return set_error(PORTA_ERR_INVALID, "event_elapsed_ms: ms is NULL");
  const CpuEvent* a = live_event(start);
  const CpuEvent* b = live_event(end);
  if (a == nullptr) return bad_event("event_elapsed_ms", start);
  if (b == nullptr) return bad_event("event_elapsed_ms", end);
  if (!a->recorded || !b->recorded)
    return set_error(PORTA_ERR_INVALID, "event_elapsed_ms: the %s event was never recorded",
                     a->recorded ? "end" : "start");
  *ms = std::chrono::duration<float, std::milli>(b->time - a->time).count();
  return PORTA_OK;
}

// ---- build info ---------------------------------------------------------------------------------
namespace {

std::string openmp_description() {
#if defined(_OPENMP)
  const char* version = "";
  switch (_OPENMP) {
    case 200505:
      version = "2.5";
      break;
    case 200805:
      version = "3.0";
      break;
    case 201107:
      version = "3.1";
      break;
    case 201307:
      version = "4.0";
      break;
    case 201511:
      version = "4.5";
      break;
    case 201811:
      version = "5.0";
      break;
    case 202011:
      version = "5.1";
      break;
    case 202111:
      version = "5.2";
      break;
    default:
      break;
  }
  char buf[64];
  if (version[0] != '\0') {
    std::snprintf(buf, sizeof buf, "OpenMP %s (%d)", version, _OPENMP);
  } else {
    std::snprintf(buf, sizeof buf, "OpenMP %d", _OPENMP);
  }
  return buf;
#else
  return "no OpenMP (one thread)";
#endif
}

}  // namespace
}  // namespace porta::detail::cpu

namespace porta::detail {

const porta_backend_v1* cpu_backend() noexcept {
  static const porta_backend_v1* table = []() -> const porta_backend_v1* {
    namespace c = cpu;
    static std::string info;
    try {
      info = c::openmp_description() + ", BLAS: " + c::blas_description() + ", gemm kernel: " + c::gemm_kernel_isa() +
             ", FFT: porta's own (" + c::fft_engine_isa() + ")";
    } catch (...) {
      info = "cpu";
    }
    static porta_backend_v1 t;
    std::memset(&t, 0, sizeof t);
    t.abi_version = PORTA_ABI_VERSION;
    t.struct_size = sizeof(porta_backend_v1);
    t.name = "cpu";
    t.device_type = PORTA_DEVICE_CPU;
    t.build_info = info.c_str();
    t.last_error = c::last_error_entry;
    t.device_count = c::device_count;
#define PORTA_ABI_ENTRY(name, params, args) t.name = &c::name;
#include "porta/abi/backend_v1_entries.inc"
#undef PORTA_ABI_ENTRY
    return &t;
  }();
  return table;
}

}  // namespace porta::detail
