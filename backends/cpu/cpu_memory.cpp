// SPDX-License-Identifier: Apache-2.0
// Host memory pool of the CPU backend.
//
// Why a pool on the CPU at all: code written for GPUs allocates temporaries in loops (the GPU
// backends serve them from stream-ordered pools), and glibc hands large blocks back to the kernel
// on every free, so each new temporary would pay mmap + page faults again. Freed blocks are kept
// in per-size-class free lists (4 classes per power of two, so at most 25% slack) and served
// again; empty_cache() and any allocation that would otherwise fail give them back.
//
// Blocks of 4 MiB and more come straight from mmap, aligned to 2 MiB and marked for transparent
// huge pages (fewer TLB misses when streaming large arrays); smaller ones are 64-byte aligned.
//
// Linux overcommits: malloc(2^40) may "succeed" and the process is killed when the pages are
// touched. So requests are first checked against physical memory + swap (and, for large ones,
// against what is available now), and fail cleanly with PORTA_ERR_OOM.
#include "cpu_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cpu_common.hpp"

namespace porta::detail::cpu {
namespace {

constexpr std::size_t kSmallAlign = 64;
constexpr std::size_t kHugePage = std::size_t(2) << 20;
constexpr std::size_t kLargeBlock = std::size_t(4) << 20;       // from here on: mmap + 2 MiB alignment
constexpr std::size_t kCheckAvailable = std::size_t(64) << 20;  // from here on: compare with MemAvailable
constexpr std::size_t kMaxRequest = std::size_t(1) << 62;       // keeps the class arithmetic in range

// Reads "Key: <n> kB" values of /proc/meminfo; 0 when absent.
bool read_meminfo(std::uint64_t* total, std::uint64_t* avail, std::uint64_t* swap_total, std::uint64_t* swap_free) {
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (f == nullptr) return false;
  char line[256];
  bool have_avail = false;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned long long v = 0;
    if (std::sscanf(line, "MemTotal: %llu kB", &v) == 1)
      *total = v * 1024;
    else if (std::sscanf(line, "MemAvailable: %llu kB", &v) == 1)
      *avail = v * 1024, have_avail = true;
    else if (std::sscanf(line, "SwapTotal: %llu kB", &v) == 1)
      *swap_total = v * 1024;
    else if (std::sscanf(line, "SwapFree: %llu kB", &v) == 1)
      *swap_free = v * 1024;
  }
  std::fclose(f);
  return *total != 0 && have_avail;
}

// One number from a cgroup file; false for "max" or a missing file.
bool read_cgroup_value(const char* path, std::uint64_t* out) {
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return false;
  unsigned long long v = 0;
  const bool ok = std::fscanf(f, "%llu", &v) == 1;
  std::fclose(f);
  if (ok) *out = v;
  return ok;
}

std::size_t class_size(std::size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes <= 1024) return (bytes + kSmallAlign - 1) / kSmallAlign * kSmallAlign;
  int k = 63 - __builtin_clzll(static_cast<unsigned long long>(bytes - 1));  // 2^k < bytes <= 2^(k+1)
  const std::size_t step = std::size_t(1) << (k - 2);
  std::size_t c = (bytes + step - 1) / step * step;
  if (c >= kLargeBlock) c = (c + kHugePage - 1) / kHugePage * kHugePage;
  return c;
}

void* raw_alloc(std::size_t size) {
  if (size < kLargeBlock) return std::aligned_alloc(kSmallAlign, size);
  const std::size_t span = size + kHugePage;
  void* m = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  const auto base = reinterpret_cast<std::uintptr_t>(m);
  const std::uintptr_t aligned = (base + kHugePage - 1) & ~static_cast<std::uintptr_t>(kHugePage - 1);
  if (aligned > base) ::munmap(m, aligned - base);
  const std::uintptr_t end = aligned + size;
  if (base + span > end) ::munmap(reinterpret_cast<void*>(end), base + span - end);
#if defined(MADV_HUGEPAGE)
  ::madvise(reinterpret_cast<void*>(aligned), size, MADV_HUGEPAGE);  // a hint: failure changes nothing
#endif
  return reinterpret_cast<void*>(aligned);
}

void raw_free(void* p, std::size_t size) {
  if (size < kLargeBlock) {
    std::free(p);
  } else {
    ::munmap(p, size);
  }
}

// Physical memory + swap: no request above it can ever be backed. Read once; it does not change.
std::uint64_t memory_ceiling() {
  static const std::uint64_t ceiling = [] {
    const SystemMemory sm = system_memory();
    return sm.total + sm.swap_total;
  }();
  return ceiling;
}

class Pool {
 public:
  porta_status alloc(std::size_t bytes, void** out) {
    if (bytes > kMaxRequest) return oom(bytes, system_memory());
    const std::size_t cls = class_size(bytes);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = cache_.find(cls);
      if (it != cache_.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        cached_ -= cls;
        return served(p, cls, out);
      }
    }
    void* p = nullptr;
    const porta_status st = fresh(bytes, cls, &p);
    if (st != PORTA_OK) return st;
    std::lock_guard<std::mutex> lock(mutex_);
    reserved_ += cls;
    return served(p, cls, out);
  }

  porta_status free(void* p) {
    if (p == nullptr) return PORTA_OK;
    std::size_t cls = 0;
    bool keep = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = live_.find(p);
      if (it == live_.end())
        return set_error(PORTA_ERR_INVALID, "free: %p was not allocated by the cpu backend (or was freed already)", p);
      cls = it->second;
      live_.erase(it);
      in_use_ -= cls;
      keep = cached_ + cls <= cache_limit();
      if (keep) {
        try {
          cache_[cls].push_back(p);
          cached_ += cls;
        } catch (...) {
          keep = false;
        }
      }
      if (!keep) reserved_ -= cls;
    }
    if (!keep) raw_free(p, cls);
    return PORTA_OK;
  }

  void empty_cache() {
    std::unordered_map<std::size_t, std::vector<void*>> blocks;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      blocks.swap(cache_);
      reserved_ -= cached_;
      cached_ = 0;
    }
    for (auto& [cls, list] : blocks)
      for (void* p : list) raw_free(p, cls);
  }

  void stats(porta_memory_stats_v1* out) {
    std::lock_guard<std::mutex> lock(mutex_);
    out->bytes_in_use = in_use_;
    out->bytes_reserved = reserved_;
    out->peak_bytes_in_use = peak_;
    out->alloc_count = alloc_count_;
  }

 private:
  porta_status served(void* p, std::size_t cls, void** out) {  // mutex_ held
    try {
      live_.emplace(p, cls);
    } catch (...) {
      reserved_ -= cls;
      raw_free(p, cls);
      return set_error(PORTA_ERR_OOM, "cannot allocate the pool's bookkeeping on cpu");
    }
    in_use_ += cls;
    if (in_use_ > peak_) peak_ = in_use_;
    ++alloc_count_;
    *out = p;
    return PORTA_OK;
  }

  porta_status fresh(std::size_t bytes, std::size_t cls, void** out) {
    if (cls > memory_ceiling()) return oom(bytes, system_memory());
    if (cls >= kCheckAvailable) {
      SystemMemory sm = system_memory();
      if (cls > sm.available + sm.swap_free) {
        empty_cache();
        sm = system_memory();
        if (cls > sm.available + sm.swap_free) return oom(bytes, sm);
      }
    }
    void* p = raw_alloc(cls);
    if (p == nullptr) {
      empty_cache();
      p = raw_alloc(cls);
      if (p == nullptr) return oom(bytes, system_memory());
    }
    *out = p;
    return PORTA_OK;
  }

  static porta_status oom(std::size_t bytes, const SystemMemory& sm) {
    return set_error(PORTA_ERR_OOM, "cannot allocate %llu bytes on cpu (%llu bytes available)",
                     static_cast<unsigned long long>(bytes),
                     static_cast<unsigned long long>(sm.available + sm.swap_free));
  }

  // Cached blocks are resident memory that nothing uses; cap them at a quarter of RAM so that a
  // long-running program does not crowd out its neighbours.
  std::uint64_t cache_limit() {
    static const std::uint64_t limit = system_memory().total / 4;
    return limit;
  }

  std::mutex mutex_;
  std::unordered_map<void*, std::size_t> live_;
  std::unordered_map<std::size_t, std::vector<void*>> cache_;
  std::uint64_t cached_ = 0, reserved_ = 0, in_use_ = 0, peak_ = 0, alloc_count_ = 0;
};

// Never destroyed: blocks may be freed by static destructors of user code after ours have run.
Pool& pool() {
  static Pool* p = new Pool;
  return *p;
}

}  // namespace

SystemMemory system_memory() noexcept {
  SystemMemory sm;
  if (!read_meminfo(&sm.total, &sm.available, &sm.swap_total, &sm.swap_free)) {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
#if defined(_SC_AVPHYS_PAGES)
    const long avail = ::sysconf(_SC_AVPHYS_PAGES);
#else
    const long avail = pages;
#endif
    if (pages > 0 && page > 0) {
      sm.total = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
      sm.available = avail > 0 ? static_cast<std::uint64_t>(avail) * static_cast<std::uint64_t>(page) : sm.total;
    }
  }
  // In a container the cgroup limit, not the host's RAM, is what the OOM killer enforces.
  std::uint64_t limit = 0, usage = 0;
  if (read_cgroup_value("/sys/fs/cgroup/memory.max", &limit)) {
    read_cgroup_value("/sys/fs/cgroup/memory.current", &usage);
  } else if (read_cgroup_value("/sys/fs/cgroup/memory/memory.limit_in_bytes", &limit)) {
    read_cgroup_value("/sys/fs/cgroup/memory/memory.usage_in_bytes", &usage);
  }
  if (limit != 0 && limit < sm.total) {
    sm.total = limit;
    const std::uint64_t room = usage < limit ? limit - usage : 0;
    if (room < sm.available) sm.available = room;
  }
  return sm;
}

porta_status pool_alloc(std::size_t bytes, void** out) noexcept {
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "alloc: out is NULL");
  *out = nullptr;
  return pool().alloc(bytes, out);
}
porta_status pool_free(void* ptr) noexcept {
  return pool().free(ptr);
}
porta_status pool_stats(porta_memory_stats_v1* out) noexcept {
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "memory_stats: out is NULL");
  pool().stats(out);
  return PORTA_OK;
}
void pool_empty_cache() noexcept {
  pool().empty_cache();
}

// Pinning buys nothing on the CPU backend (copies are memcpy), so host buffers are plain aligned
// memory, checked like the pool's.
porta_status host_alloc(std::size_t bytes, void** out) noexcept {
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "host_alloc: out is NULL");
  *out = nullptr;
  const std::size_t size = bytes == 0 ? kSmallAlign : (bytes + kSmallAlign - 1) / kSmallAlign * kSmallAlign;
  bool too_big = bytes > kMaxRequest || size > memory_ceiling();
  if (!too_big && size >= kCheckAvailable) {
    const SystemMemory sm = system_memory();
    too_big = size > sm.available + sm.swap_free;
  }
  void* p = too_big ? nullptr : std::aligned_alloc(kSmallAlign, size);
  if (p == nullptr) {
    const SystemMemory sm = system_memory();
    return set_error(PORTA_ERR_OOM, "cannot allocate %llu bytes on cpu (%llu bytes available)",
                     static_cast<unsigned long long>(bytes),
                     static_cast<unsigned long long>(sm.available + sm.swap_free));
  }
  *out = p;
  return PORTA_OK;
}

porta_status host_free(void* ptr) noexcept {
  std::free(ptr);
  return PORTA_OK;
}

}  // namespace porta::detail::cpu
