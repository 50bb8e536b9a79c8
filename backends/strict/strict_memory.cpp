// SPDX-License-Identifier: Apache-2.0
// cpu:strict's memory (docs/strict.md): every block is its own mapping with a guard page on each
// side, the data placed against the end guard (64-byte aligned) so that an overrun faults at
// once. Device blocks are PROT_NONE except while the queue runs strict work (open_all/close_all);
// freed blocks stay PROT_NONE in a bounded FIFO quarantine before their address space is reused.
// A SIGSEGV/SIGBUS handler finds the block an address belongs to and prints which Array it was
// and what to do, then exits with status 70; faults elsewhere go to the previous handler.
//
// The registry is a fixed array in static storage so that the handler can read it without
// locking or allocating (it runs on a thread that may hold any lock); everything else changes it
// under one mutex.
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <vector>

#include "backends/common/backend_error.hpp"
#include "backends/cpu/cpu_memory.hpp"
#include "backends/strict/strict_memory.hpp"

namespace porta::detail::strict {
namespace {

using backend::set_error;

constexpr int kMaxRecords = 1 << 14;  // live blocks plus quarantine
constexpr std::size_t kQuarantine = 1024;
constexpr std::size_t kAlign = 64;
constexpr int kFrames = 16;
constexpr int kFaultExit = 70;  // EX_SOFTWARE

enum State : int { kEmpty = 0, kLive, kFreeing, kFreed };
enum Kind : int { kDevice = 1, kHost };

struct Record {
  std::atomic<std::uintptr_t> begin{0};  // the whole mapping, guard pages included; 0: unused slot
  std::atomic<std::uintptr_t> end{0};
  std::atomic<int> state{kEmpty};
  std::uintptr_t user = 0;  // the block porta hands out
  std::size_t bytes = 0;
  int kind = 0;
  int prot = PROT_NONE;       // current protection of the data pages
  int reads = 0, writes = 0;  // host buffers: queued copies from it / into it
  char what[160] = "";
  void* frames[kFrames] = {};
  int nframes = 0;
};

Record g_records[kMaxRecords];
std::atomic<const char*> g_running{nullptr};
std::atomic<bool> g_open_flag{false};  // for the handler: is strict work running now?

struct Registry {
  std::mutex mutex;
  std::map<std::uintptr_t, int> live;  // user address -> record, for live and freeing blocks
  std::deque<int> quarantine;
  std::vector<int> spare;  // unused slots
  bool open = false;
  // Device blocks only: in_use drops when a free is asked for, mapped when it has run.
  std::uint64_t in_use = 0, mapped = 0, peak = 0, count = 0;
  std::uint64_t freeing = 0;  // device blocks whose queued free has not run yet
  Registry() {
    spare.reserve(kMaxRecords);
    for (int i = kMaxRecords - 1; i >= 0; --i) spare.push_back(i);
  }
};
Registry& reg() {
  static Registry* r = new Registry;  // never destroyed: arrays may be freed by late static destructors
  return *r;
}

std::size_t page_size() {
  static const std::size_t p = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return p;
}

std::uintptr_t data_begin(const Record& r) {
  return r.begin.load(std::memory_order_relaxed) + page_size();
}
std::uintptr_t data_end(const Record& r) {
  return r.end.load(std::memory_order_relaxed) - page_size();
}

// The protection a block should have now. Under reg().mutex.
int wanted_prot(const Record& r, bool open) {
  const int state = r.state.load(std::memory_order_relaxed);
  if (state == kFreed) return PROT_NONE;
  if (open) return PROT_READ | PROT_WRITE;
  if (r.kind == kDevice) return PROT_NONE;
  if (r.writes > 0) return PROT_NONE;  // a queued copy will write it: reading now sees old bytes
  if (r.reads > 0) return PROT_READ;   // a queued copy will read it: writing now changes what it copies
  return PROT_READ | PROT_WRITE;
}

void apply(Record& r, bool open) {
  const int want = wanted_prot(r, open);
  if (want == r.prot) return;
  ::mprotect(reinterpret_cast<void*>(data_begin(r)), data_end(r) - data_begin(r), want);
  r.prot = want;
}

// The live record holding [p, p + bytes); -1 when none. Under reg().mutex.
int find_live(std::uintptr_t p, std::size_t bytes) {
  Registry& g = reg();
  auto it = g.live.upper_bound(p);
  if (it == g.live.begin()) return -1;
  --it;
  const Record& r = g_records[it->second];
  if (p < r.user || p - r.user > r.bytes || bytes > r.bytes - (p - r.user)) return -1;
  return it->second;
}

// ---- the fault report: async-signal-safe output only (write(2), no allocation) ----------------
void out(const char* s) {
  std::size_t n = std::strlen(s);
  while (n > 0) {
    const ssize_t w = ::write(2, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}
void out_num(std::uint64_t v, int base = 10) {
  char buf[32];
  int i = sizeof buf - 1;
  buf[i] = '\0';
  do {
    const int d = static_cast<int>(v % static_cast<std::uint64_t>(base));
    buf[--i] = static_cast<char>(d < 10 ? '0' + d : 'a' + d - 10);
    v /= static_cast<std::uint64_t>(base);
  } while (v != 0 && i > 0);
  if (base == 16) out("0x");
  out(buf + i);
}

// Frames outside libporta (the user's code), at most `max`.
void out_frames(void* const* frames, int n, int max) {
  Dl_info self{};
  ::dladdr(reinterpret_cast<void*>(&out_frames), &self);
  int shown = 0;
  for (int i = 0; i < n && shown < max; ++i) {
    Dl_info d{};
    if (::dladdr(frames[i], &d) != 0 && d.dli_fbase == self.dli_fbase) continue;
    out("    ");
    ::backtrace_symbols_fd(frames + i, 1, 2);
    ++shown;
  }
  if (shown == 0) out("    (no frames outside libporta)\n");
}

// The handler our last (re)installation displaced, called once for a fault that is not ours: a
// test framework's (Catch2 installs its own per test case, over ours) or a sanitizer's report.
struct sigaction g_displaced_segv, g_displaced_bus;
std::atomic<bool> g_chained{false};

bool write_access(void* context) {
#if defined(__x86_64__)
  const auto* uc = static_cast<const ucontext_t*>(context);
  return (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#else
  (void)context;
  return false;
#endif
}

void report(const Record& r, std::uintptr_t addr, bool write, const char* running) {
  const int state = r.state.load(std::memory_order_relaxed);
  const bool freed = state == kFreed;
  const bool host = r.kind == kHost;
  const std::uintptr_t lo = r.user, hi = r.user + r.bytes;
  const char* what = r.what[0] != '\0' ? r.what : (host ? "a HostArray" : "an allocation");

  out("\nporta: cpu:strict caught a memory error\n  ");
  if (running != nullptr) {
    out("while running ");
    out(running);
    out(" (queued work of cpu:strict), ");
  } else {
    out("host code ");
  }
  out(write ? "wrote " : "accessed ");
  out("address ");
  out_num(addr, 16);
  if (addr < lo) {
    out(", ");
    out_num(lo - addr);
    out(" bytes before the start of ");
  } else if (addr >= hi) {
    out(", ");
    out_num(addr - hi + 1);
    out(" bytes past the end of ");
  } else {
    out(", byte ");
    out_num(addr - lo);
    out(" of ");
  }
  out(what);
  out(" (");
  out_num(r.bytes);
  out(" bytes)");
  if (freed) out(", which was FREED");
  out("\n");
  if (r.nframes > 0) {
    out("  allocated at:\n");
    out_frames(r.frames, r.nframes, 6);
  }
  out("  what happened: ");
  if (addr < lo || addr >= hi) {
    out("an index outside the array (out of bounds).\n  what to do: check the index against the array's size.\n");
  } else if (freed) {
    out(host ? "the HostArray was destroyed while something still used it.\n"
             : "the Array was destroyed while a View, pointer or data() of it was still in use (use after "
               "free); on a GPU this reads garbage or faults.\n");
    out("  what to do: keep the Array alive until every kernel and call that uses its View has finished "
        "(synchronize the stream before it goes out of scope).\n");
  } else if (host && r.writes > 0) {
    out("a device -> host copy into this HostArray is queued and has not run: copies are asynchronous, as on "
        "a GPU, so reading it now sees old bytes.\n  what to do: synchronize the stream (s.synchronize()) or an "
        "event recorded after the copy before reading it.\n");
  } else if (host && r.reads > 0) {
    out("a host -> device copy from this HostArray is queued and has not run: writing it now changes what the "
        "device receives.\n  what to do: synchronize the stream (or an event recorded after the copy) before "
        "writing it.\n");
  } else {
    out("this is device memory of cpu:strict: as on a GPU, host code cannot read or write it directly.\n"
        "  what to do: copy it to the host first (x.to_vector(), x.copy_to_host(p), or porta::copy into a "
        "HostArray and synchronize), or do the work on the device (a porta call or porta::parallel_for).\n");
  }
  out("  the access, at:\n");
  void* frames[kFrames];
  const int n = ::backtrace(frames, kFrames);
  // Skip this handler and the signal trampoline.
  if (n > 2) out_frames(frames + 2, n - 2, 8);
  out("  (frames show binary(+offset): addr2line -Cfpe <binary> <offset> names the line)\n");
}

void on_fault(int sig, siginfo_t* info, void* context) {
  const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (const Record& r : g_records) {
    const std::uintptr_t b = r.begin.load(std::memory_order_acquire);
    if (b == 0 || addr < b || addr >= r.end.load(std::memory_order_acquire)) continue;
    report(r, addr, write_access(context), g_open_flag.load() ? g_running.load() : nullptr);
    ::_exit(kFaultExit);
  }
  // Not ours: once to the handler we displaced, then the default action (the access faults again
  // when we return, and the process dies as usual; a signal the other handler raised is delivered
  // then too).
  struct sigaction& prev = sig == SIGBUS ? g_displaced_bus : g_displaced_segv;
  if (!g_chained.exchange(true)) {
    if ((prev.sa_flags & SA_SIGINFO) != 0 && prev.sa_sigaction != nullptr) {
      prev.sa_sigaction(sig, info, context);
    } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
      prev.sa_handler(sig);
    }
  }
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
}

// Makes on_fault the handler of SIGSEGV and SIGBUS again if something replaced it (a test
// framework installs its own for each test case): a fault on strict memory must reach the report.
// Called at every allocation and every run of the queue; one system call when nothing changed.
void ensure_handler() {
  for (int sig : {SIGSEGV, SIGBUS}) {
    struct sigaction cur;
    if (::sigaction(sig, nullptr, &cur) != 0) continue;
    if ((cur.sa_flags & SA_SIGINFO) != 0 && cur.sa_sigaction == &on_fault) continue;
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = &on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, sig == SIGBUS ? &g_displaced_bus : &g_displaced_segv);
    g_chained.store(false);
  }
}

void install_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    void* warm[2];
    (void)::backtrace(warm, 2);  // loads libgcc's unwinder now, not inside the handler
  });
  ensure_handler();
}

porta_status oom(std::size_t bytes, const char* why) {
  const cpu::SystemMemory sm = cpu::system_memory();
  return set_error(PORTA_ERR_OOM, "cannot allocate %llu bytes on cpu:strict (%llu bytes available%s)",
                   static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(sm.available + sm.swap_free),
                   why);
}

// Unmaps a freed block and makes its slot spare. Under reg().mutex.
void release(int i) {
  Record& r = g_records[i];
  const std::uintptr_t b = r.begin.load(), e = r.end.load();
  r.begin.store(0, std::memory_order_release);
  r.state.store(kEmpty);
  ::munmap(reinterpret_cast<void*>(b), e - b);
  reg().spare.push_back(i);  // capacity for every slot was reserved
}

// Releases the oldest quarantined block's address space. Under reg().mutex.
void evict_oldest() {
  Registry& g = reg();
  const int i = g.quarantine.front();
  g.quarantine.pop_front();
  release(i);
}

porta_status map_block(std::size_t bytes, int kind, void** out) noexcept {
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "alloc: out is NULL");
  *out = nullptr;
  if (bytes == 0) return PORTA_OK;
  install_handler();
  const std::size_t page = page_size();
  if (bytes > (SIZE_MAX >> 1)) return oom(bytes, "");
  // Reading /proc costs more than a small mapping; MAP_NORESERVE would grant any size, so large
  // requests are checked against what the system has, as the CPU pool does.
  if (bytes >= (std::size_t{64} << 20)) {
    const cpu::SystemMemory sm = cpu::system_memory();
    if (bytes > sm.available + sm.swap_free) return oom(bytes, "");
  }
  const std::size_t data = (bytes + page - 1) / page * page;
  const std::size_t total = data + 2 * page;
  void* m = ::mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return oom(bytes, "");
  const auto b = reinterpret_cast<std::uintptr_t>(m);
  const std::uintptr_t user = (b + page + data - bytes) & ~static_cast<std::uintptr_t>(kAlign - 1);
  void* frames[kFrames];
  const int nframes = ::backtrace(frames, kFrames);

  Registry& g = reg();
  std::lock_guard<std::mutex> lock(g.mutex);
  if (g.spare.empty() && !g.quarantine.empty()) evict_oldest();
  if (g.spare.empty()) {
    ::munmap(m, total);
    return oom(bytes, "; cpu:strict tracks at most 16384 live blocks");
  }
  const int i = g.spare.back();
  try {
    g.live.emplace(user, i);
  } catch (...) {
    ::munmap(m, total);
    return oom(bytes, "");
  }
  g.spare.pop_back();
  Record& r = g_records[i];
  r.user = user;
  r.bytes = bytes;
  r.kind = kind;
  r.prot = PROT_NONE;
  r.reads = r.writes = 0;
  r.what[0] = '\0';
  std::memcpy(r.frames, frames, sizeof frames);
  r.nframes = nframes;
  r.end.store(b + total, std::memory_order_relaxed);
  r.state.store(kLive, std::memory_order_relaxed);
  r.begin.store(b, std::memory_order_release);
  apply(r, g.open);
  if (kind == kDevice) {
    g.mapped += bytes;
    g.in_use += bytes;
    if (g.in_use > g.peak) g.peak = g.in_use;
    ++g.count;
  }
  *out = reinterpret_cast<void*>(user);
  return PORTA_OK;
}

// The block leaves the live set for the quarantine: inaccessible, its pages given back. Under
// reg().mutex.
void retire(int i) {
  Registry& g = reg();
  Record& r = g_records[i];
  g.live.erase(r.user);
  if (r.kind == kDevice) g.mapped -= r.bytes;  // a quarantined block holds no memory
  r.state.store(kFreed);
  apply(r, g.open);
  ::madvise(reinterpret_cast<void*>(data_begin(r)), data_end(r) - data_begin(r), MADV_DONTNEED);
  try {
    g.quarantine.push_back(i);
  } catch (...) {  // no room to remember it: release it now
    release(i);
    return;
  }
  if (g.quarantine.size() > kQuarantine) evict_oldest();
}

}  // namespace

porta_status device_alloc(std::size_t bytes, void** out) noexcept {
  return map_block(bytes, kDevice, out);
}

porta_status device_free_begin(void* ptr) noexcept {
  if (ptr == nullptr) return PORTA_OK;
  Registry& g = reg();
  std::lock_guard<std::mutex> lock(g.mutex);
  const auto it = g.live.find(reinterpret_cast<std::uintptr_t>(ptr));
  if (it == g.live.end() || g_records[it->second].kind != kDevice || g_records[it->second].state.load() != kLive)
    return set_error(PORTA_ERR_INVALID,
                     "free: %p is not a live allocation of cpu:strict (freed already, or not porta's)", ptr);
  Record& r = g_records[it->second];
  r.state.store(kFreeing);
  g.in_use -= r.bytes;
  ++g.freeing;
  return PORTA_OK;
}

void device_free_end(void* ptr) noexcept {
  Registry& g = reg();
  std::lock_guard<std::mutex> lock(g.mutex);
  const auto it = g.live.find(reinterpret_cast<std::uintptr_t>(ptr));
  if (it == g.live.end()) return;
  if (g_records[it->second].state.load() == kFreeing) --g.freeing;
  retire(it->second);
}

bool device_frees_pending() noexcept {
  Registry& g = reg();
  std::lock_guard<std::mutex> lock(g.mutex);
  return g.freeing > 0;
}

porta_status host_alloc(std::size_t bytes, void** out) noexcept {
  return map_block(bytes, kHost, out);
}

porta_status host_free(void* ptr) noexcept {
  if (ptr == nullptr) return PORTA_OK;
  Registry& g = reg();
  std::lock_guard<std::mutex> lock(g.mutex);
  const auto it = g.live.find(reinterpret_cast<std::uintptr_t>(ptr));
  if (it == g.live.end() || g_records[it->second].kind != kHost)
    return set_error(PORTA_ERR_INVALID, "host_free: %p is not a live host buffer of cpu:strict", ptr);
  retire(it->second);
  return PORTA_OK;
}

Space space_of(const void* p, std::size_t bytes) noexcept {
  Registry& g = reg();
  std::lock_guard<std::mutex> lock(g.mutex);
  const int i = find_live(reinterpret_cast<std::uintptr_t>(p), bytes);
  if (i < 0) return Space::other;
  return g_records[i].kind == kDevice ? Space::device : Space::host_buffer;
}

void pend_host(const void* p, bool write, int delta) noexcept {
  Registry& g = reg();
  std::lock_guard<std::mutex> lock(g.mutex);
  const int i = find_live(reinterpret_cast<std::uintptr_t>(p), 0);
  if (i < 0 || g_records[i].kind != kHost) return;
  Record& r = g_records[i];
  (write ? r.writes : r.reads) += delta;
  apply(r, g.open);
}

void open_all() noexcept {
  Registry& g = reg();
  std::lock_guard<std::mutex> lock(g.mutex);
  install_handler();
  g.open = true;
  g_open_flag.store(true);
  for (const auto& [user, i] : g.live) apply(g_records[i], true);
}

void close_all() noexcept {
  Registry& g = reg();
  std::lock_guard<std::mutex> lock(g.mutex);
  g.open = false;
  g_open_flag.store(false);
  g_running.store(nullptr);
  for (const auto& [user, i] : g.live) apply(g_records[i], false);
}

void set_running(const char* what) noexcept {
  g_running.store(what);
}

void describe(const void* ptr, const char* text) noexcept {
  Registry& g = reg();
  std::lock_guard<std::mutex> lock(g.mutex);
  const auto it = g.live.find(reinterpret_cast<std::uintptr_t>(ptr));
  if (it == g.live.end()) return;
  Record& r = g_records[it->second];
  std::strncpy(r.what, text, sizeof r.what - 1);
  r.what[sizeof r.what - 1] = '\0';
}

void stats(porta_memory_stats_v1* out) noexcept {
  Registry& g = reg();
  std::lock_guard<std::mutex> lock(g.mutex);
  out->bytes_in_use = g.in_use;
  out->bytes_reserved = g.mapped;
  out->peak_bytes_in_use = g.peak;
  out->alloc_count = g.count;
}

}  // namespace porta::detail::strict
