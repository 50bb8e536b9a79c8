// SPDX-License-Identifier: Apache-2.0
// How user kernels share the CPU's cores: split [0, n) items into contiguous blocks, one per
// OpenMP thread, when the work is worth waking a thread team; else run them on the calling thread.
//
// "Worth it" is decided by work, not by a count of items: an item is anything from one add to a
// whole n-body row, so a fixed threshold is wrong for someone. Unless the caller gives a grain (the
// fewest items one thread should take), the first items run on the calling thread in doubling
// blocks, timed, until about kProbeNs have passed; if what remains would take more than
// kParallelNs at the measured rate, the rest is split over the team, else it finishes here. A
// probe costs a clock read per doubling (about a dozen for a million cheap items) and nothing for
// the results: every item still runs exactly once.
//
// The probe's serial start is what a mid-sized loop pays most for (at 2^16-2^20 items on 16 cores it
// is as long as the parallel rest), and a kernel is usually called again. So each kernel type keeps
// the rate of its last probe, and a call whose items at that rate would clearly be worth the team
// splits at once. A remembered rate only ever skips the probe towards splitting: if it is stale (a
// later call's items are cheaper), the cost is one needless fork and join; a rate saying "not worth
// it" is never trusted, since that kernel's items may be dearer now, and the call probes again.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <type_traits>

#if defined(_OPENMP)
#if __has_include(<omp.h>)
#include <omp.h>
#else
// hipcc -fopenmp without its own omp.h (Debian's ROCm ships none): the OpenMP 1.0 C API.
extern "C" {
int omp_get_max_threads(void);
int omp_get_num_threads(void);
int omp_get_thread_num(void);
int omp_in_parallel(void);
}
#endif
#endif

// A function the compiler keeps out of line (GCC, clang, and nvcc's and hipcc's host compilers).
#if defined(__GNUC__) || defined(__clang__)
#define PORTA_DETAIL_NOINLINE __attribute__((noinline))
#else
#define PORTA_DETAIL_NOINLINE
#endif

namespace porta::detail {

inline constexpr std::int64_t kProbeNs = 2000;
// A warm team of 16 to 32 threads forks and joins in one or two microseconds; a few more cover a
// team that has gone to sleep and the static split's imbalance.
inline constexpr std::int64_t kParallelNs = 5000;

// Threads a CPU kernel may use here: 1 inside an enclosing parallel region (porta's loops then run
// on the caller's thread, as a nested region would by default) or without OpenMP.
inline int cpu_threads() {
#if defined(_OPENMP)
  return omp_in_parallel() ? 1 : omp_get_max_threads();
#else
  return 1;
#endif
}

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The last probe's rate of the kernel type Body, in picoseconds per item (0: none yet). One per type,
// shared by the threads that call it; a relaxed atomic, since any recent value will do.
template <class Body>
std::atomic<std::int64_t>& probe_rate_ps() {
  static std::atomic<std::int64_t> rate{0};
  return rate;
}

inline void remember_rate(std::atomic<std::int64_t>& rate, std::int64_t elapsed_ns, std::int64_t items) {
  // A probe that ended on its first block may have timed a clock read more than the items.
  if (items < 16 || elapsed_ns <= 0) return;
  const double ps = 1000.0 * static_cast<double>(elapsed_ns) / static_cast<double>(items);
  rate.store(ps > 9.0e18 ? std::int64_t(9e18) : static_cast<std::int64_t>(ps), std::memory_order_relaxed);
}

// Twice kParallelNs at the remembered rate: a margin for a rate taken on warmer or colder caches.
inline bool remembered_worth_team(std::int64_t n, const std::atomic<std::int64_t>& rate) {
  const std::int64_t ps = rate.load(std::memory_order_relaxed);
  return ps > 0 && static_cast<double>(ps) * static_cast<double>(n) >= 2000.0 * static_cast<double>(kParallelNs);
}

// body(b, e) for contiguous blocks [b, e) that cover [0, n) once. grain > 0: at most n / grain
// threads, no probe. A body that throws on a worker thread stops that thread's block; the other
// threads finish theirs and the first exception is rethrown here (GPU kernels cannot throw).
template <class Body>
void cpu_for_blocks(std::int64_t n, std::int64_t grain, Body&& body) {
  if (n <= 0) return;
  const int max_threads = cpu_threads();
  std::int64_t done = 0;
  int threads = max_threads;
  if (grain > 0) {
    const std::int64_t tasks = n / grain;
    if (tasks < threads) threads = static_cast<int>(tasks < 1 ? 1 : tasks);
  } else if (threads > 1 && remembered_worth_team(n, probe_rate_ps<std::decay_t<Body>>())) {
    // split at once: no probe
  } else if (threads > 1) {
    const std::int64_t t0 = now_ns();
    std::int64_t elapsed = 0;
    for (std::int64_t step = 1; done < n; step *= 2) {
      const std::int64_t e = n - done < step ? n : done + step;
      body(done, e);
      done = e;
      elapsed = now_ns() - t0;
      if (elapsed >= kProbeNs) break;
    }
    remember_rate(probe_rate_ps<std::decay_t<Body>>(), elapsed, done);
    if (done == n) return;
    // Remaining time at the measured rate; in double, since elapsed * n can pass 2^63.
    const double rest = static_cast<double>(elapsed) * static_cast<double>(n - done) / static_cast<double>(done);
    if (rest < static_cast<double>(kParallelNs)) threads = 1;
  }
  if (threads <= 1) {
    body(done, n);
    return;
  }
#if defined(_OPENMP)
  // The split is OpenMP's static one over all of [0, n), so that each thread touches the same part
  // call after call (caches, first-touch pages), as a plain `omp parallel for` would; the calling
  // thread (thread 0) skips the probed items its part began with. Only when the probe ran past that
  // part is the rest split afresh.
  const std::int64_t begin = done <= n / threads ? 0 : done;
  const std::int64_t len = n - begin;
  std::atomic<bool> failed{false};
  std::exception_ptr error;
#pragma omp parallel num_threads(threads)
  {
    const std::int64_t nt = omp_get_num_threads();
    const std::int64_t t = omp_get_thread_num();
    // Contiguous near-equal parts, written so that nothing overflows for any len.
    const std::int64_t q = len / nt, r = len % nt;
    std::int64_t b = begin + t * q + (t < r ? t : r);
    const std::int64_t e = b + q + (t < r ? 1 : 0);
    if (b < done) b = done < e ? done : e;  // already run by the probe
    try {
      if (b < e) body(b, e);
    } catch (...) {
      if (!failed.exchange(true)) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
#else
  body(done, n);
#endif
}

}  // namespace porta::detail
