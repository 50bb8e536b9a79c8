// SPDX-License-Identifier: Apache-2.0
// Shared plumbing of the CPU backend: error reporting across the C ABI, argument checks, dtype
// dispatch and the OpenMP work splitting that every kernel file uses.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>

#include "backends/common/backend_error.hpp"
#include "backends/common/checks.hpp"
#include "porta/abi/backend_v1.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

// Loops that must vectorise even when the output may alias an input (in-place maps, y == x): a
// distance-0 alias is safe for SIMD, but the compiler's runtime overlap check would send it to the
// scalar loop. Without OpenMP the build passes -fopenmp-simd, which honours only this pragma.
#if defined(_OPENMP) || defined(PORTA_HAVE_OPENMP_SIMD)
#define PORTA_SIMD _Pragma("omp simd")
#else
#define PORTA_SIMD
#endif

namespace porta::detail::cpu {

// ---- errors -------------------------------------------------------------------------------------
// The thread-local message behind last_error(): backends/common/backend_error.hpp.
using backend::dtype_name;
using backend::last_error;
using backend::set_error;

porta_status check_device(int dev, const char* fn) noexcept;
// The argument checks every backend shares, one message per mistake.
namespace check = backend::check;
// Enum arguments are read through their bytes (backends/common/backend_error.hpp says why).
using backend::in_range;
using backend::raw_enum;

// The facts of a dtype and its one message: backends/common/dtype.hpp, backend_error.hpp.
using backend::dtype_size;
using backend::unknown_dtype;
using backend::valid_dtype;

// Every ABI entry converts C++ exceptions (std::bad_alloc from a temporary buffer, mostly) into a
// status: nothing may unwind through the C table.
#define PORTA_CPU_TRY try {
#define PORTA_CPU_CATCH(fn)                                                                              \
  }                                                                                                      \
  catch (const std::bad_alloc&) {                                                                        \
    return ::porta::detail::cpu::set_error(PORTA_ERR_OOM, "%s: out of host memory for a temporary", fn); \
  }                                                                                                      \
  catch (...) {                                                                                          \
    return ::porta::detail::cpu::set_error(PORTA_ERR_BACKEND, "%s: unexpected C++ exception", fn);       \
  }

using backend::scalar_value;
using backend::unsupported_dtype;
using backend::with_dtype;
using backend::with_dtype_for;

// ---- threading ----------------------------------------------------------------------------------
// Work below these sizes runs on the calling thread: waking a team costs a few microseconds,
// about what a memory-bound loop needs for 32 Ki elements.
inline constexpr std::int64_t kGrainCheap = std::int64_t(1) << 15;           // memory-bound maps
inline constexpr std::int64_t kGrainTranscendental = std::int64_t(1) << 11;  // exp, pow, ...

inline bool in_parallel_region() noexcept {
#if defined(_OPENMP)
  return omp_in_parallel() != 0;
#else
  return false;
#endif
}

inline int max_threads() noexcept {
#if defined(_OPENMP)
  // Inside a caller's parallel region nested teams are usually disabled; asking for one anyway only
  // adds overhead, so run on the calling thread.
  return omp_in_parallel() ? 1 : omp_get_max_threads();
#else
  return 1;
#endif
}

// Threads worth using for `work` units when each thread should get at least `grain` of them.
inline int threads_for(std::int64_t work, std::int64_t grain) noexcept {
  const int mt = max_threads();
  if (mt <= 1 || work < 2 * grain) return 1;
  const std::int64_t t = work / grain;
  return t < mt ? static_cast<int>(t) : mt;
}

// f(begin, end) over contiguous pieces of [0, n), one per thread, boundaries on multiples of
// `align` elements so that each piece starts on a cache line and the inner loop stays a clean,
// vectorisable range.
template <class F>
void parallel_ranges(std::int64_t n, std::int64_t grain, F&& f, std::int64_t align = 16) {
  const int nt = threads_for(n, grain);
  if (nt <= 1) {
    if (n > 0) f(std::int64_t(0), n);
    return;
  }
#if defined(_OPENMP)
#pragma omp parallel num_threads(nt)
  {
    const std::int64_t t = omp_get_thread_num(), T = omp_get_num_threads();
    const std::int64_t per = ((n + T - 1) / T + align - 1) / align * align;
    const std::int64_t b = std::min(n, t * per), e = std::min(n, b + per);
    if (b < e) f(b, e);
  }
#else
  (void)align;
  f(std::int64_t(0), n);
#endif
}

// f(i, thread) for every task i in [0, count), statically spread over threads (results must
// never depend on which thread runs a task); thread in [0, max_threads()) indexes per-thread
// scratch. `cost` is the approximate element count of one task.
template <class F>
void parallel_tasks(std::int64_t count, std::int64_t cost, F&& f) {
  const std::int64_t per_thread_tasks = std::max<std::int64_t>(1, kGrainCheap / std::max<std::int64_t>(cost, 1));
  const int nt = threads_for(count, per_thread_tasks);
  if (nt <= 1) {
    for (std::int64_t i = 0; i < count; ++i) f(i, 0);
    return;
  }
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) num_threads(nt)
  for (std::int64_t i = 0; i < count; ++i) f(i, omp_get_thread_num());
#endif
}

}  // namespace porta::detail::cpu
