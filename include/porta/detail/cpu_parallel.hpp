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
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>

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
