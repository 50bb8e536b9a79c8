// SPDX-License-Identifier: Apache-2.0
// How the CPU backend's elementwise maps (cpu_maps.cpp, and the fused-expression interpreter in
// cpu_program.cpp) use the cores, the vector units and memory. The yardstick is the loop a user
// would write instead, `#pragma omp parallel for` over arrays (BabelStream's OpenMP version), so
// each choice below is that loop's, or one that can only beat it:
//
// - The team. From kMapTeamFrom elements on, a cheap map runs on the whole OpenMP team (at least
//   kMapPerThread elements each), as `omp parallel for` does. The earlier rule, a thread per 32 Ki
//   elements, ran 2^16 elements on 2 of 16 cores and 2^18 on 8, while the loop used all 16.
// - The split is OpenMP's schedule(static) over [0, n) (each thread q or q + 1 consecutive
//   elements), each inner boundary moved down to a 64-byte line of the output: a thread touches the
//   same part on every call, and the same part porta::full touched first (its pages, its caches),
//   and no two threads write one line.
// - The loops are built for AVX2 and for the baseline ISA, picked at load time (GCC target_clones),
//   as the reductions are; inlined helpers inherit the ISA.
// - Streaming stores. When the arrays of a call together exceed the last-level cache and the output
//   is not also an input, each thread computes a tile of the output in L1 and writes it with
//   non-temporal stores: a plain store first reads the output's line (write-allocate), so a copy
//   moves three arrays' worth of memory instead of two and an add four instead of three. Below that
//   size the output would still be in cache for the next call, which streaming stores would throw
//   away. In-place maps (y = y + x) read the line anyway: they store normally.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cpu_common.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// Not under ThreadSanitizer: it instruments the ifunc resolver, which the dynamic loader runs before
// TSan's runtime is initialised (a crash at load time).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(PORTA_NO_TARGET_CLONES) && !defined(__SANITIZE_THREAD__)
#define PORTA_MAP_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define PORTA_MAP_CLONES
#endif
#define PORTA_MAP_INLINE inline __attribute__((always_inline))

namespace porta::detail::cpu {

// ---- threads and the split ------------------------------------------------------------------------
inline constexpr std::int64_t kMapTeamFrom = std::int64_t(1) << 16;
inline constexpr std::int64_t kMapPerThread = std::int64_t(1) << 11;

// Threads for a map of n elements. Below kMapTeamFrom a cheap map stays on the calling thread: a team
// that has gone to sleep takes longer to wake than 2^16 adds take. An expensive element (exp, pow,
// integer division) is worth a thread from 2 * kMapPerThread elements on.
inline int map_threads(std::int64_t n, bool expensive) noexcept {
  const int mt = max_threads();
  if (mt <= 1 || n < (expensive ? 2 * kMapPerThread : kMapTeamFrom)) return 1;
  const std::int64_t t = n / kMapPerThread;
  return t < mt ? static_cast<int>(t) : mt;
}

// f(begin, end) on each thread of a team of `threads` over OpenMP's static split of [0, n), every
// inner boundary moved down to a 64-byte line of `out` (the array the map writes).
template <class T, class F>
void map_split(std::int64_t n, int threads, const T* out, F&& f) {
  if (threads <= 1) {
    if (n > 0) f(std::int64_t(0), n);
    return;
  }
#if defined(_OPENMP)
  const auto base = reinterpret_cast<std::uintptr_t>(out);
#pragma omp parallel num_threads(threads)
  {
    const std::int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
    const std::int64_t q = n / nt, r = n % nt;
    const auto bound = [&](std::int64_t k) -> std::int64_t {
      if (k == 0) return 0;
      if (k == nt) return n;
      const std::uintptr_t at = base + static_cast<std::uintptr_t>(k * q + (k < r ? k : r)) * sizeof(T);
      const std::uintptr_t line = at & ~static_cast<std::uintptr_t>(63);
      return line <= base ? 0 : static_cast<std::int64_t>((line - base) / sizeof(T));
    };
    const std::int64_t b = bound(t), e = bound(t + 1);
    if (b < e) f(b, e);
  }
#else
  f(std::int64_t(0), n);
#endif
}

// Whether [p, p + pn) and [q, q + qn) (in bytes) share memory.
inline bool bytes_overlap(const void* p, std::size_t pn, const void* q, std::size_t qn) noexcept {
  const auto a = reinterpret_cast<std::uintptr_t>(p), b = reinterpret_cast<std::uintptr_t>(q);
  return a < b + qn && b < a + pn;
}

// ---- streaming stores -----------------------------------------------------------------------------
#if defined(__SSE2__)
inline constexpr bool kHaveStreamingStores = true;
#else
inline constexpr bool kHaveStreamingStores = false;
#endif

// The last-level cache a thread sees (cpu_maps.cpp): the L3 (else L2) the kernel lists for CPU 0,
// else the C library's figure, else 32 MiB. The kernel's first: on AMD EPYC guests glibc reports
// ten times the one L3 there is (320 MiB for 32 MiB), which would keep streaming stores off at every
// size that matters.
std::int64_t last_level_cache_bytes() noexcept;
// Whether a map whose arrays span `footprint` bytes together writes its output with streaming
// stores (see the top of the file); never when the output is also one of its inputs.
inline bool stream_output(double footprint, bool out_is_input) noexcept {
  return kHaveStreamingStores && !out_is_input && footprint > static_cast<double>(last_level_cache_bytes());
}

// The tile a thread computes in L1 before streaming it out: 2 KiB, 32 lines.
inline constexpr std::int64_t kStreamTileBytes = 2048;

// body(dst, i0, len) computes output elements [i0, i0 + len) into dst[0, len). Runs it over [lo, hi)
// of y: straight into y, or, when `stream`, tile by tile through L1 and out with streaming stores
// (the few elements before y's first 64-byte line and after its last whole tile are stored
// normally).
template <class T, class Body>
PORTA_MAP_INLINE void write_range(T* y, std::int64_t lo, std::int64_t hi, bool stream, const Body& body) {
#if defined(__SSE2__)
  if (stream) {
    constexpr std::int64_t tile = kStreamTileBytes / static_cast<std::int64_t>(sizeof(T));
    const auto misalign = reinterpret_cast<std::uintptr_t>(y + lo) & 63;
    std::int64_t i = lo + std::min<std::int64_t>(hi - lo, static_cast<std::int64_t>((64 - misalign) & 63) / sizeof(T));
    if (i > lo) body(y + lo, lo, i - lo);
    alignas(64) T buf[tile];
    for (; i + tile <= hi; i += tile) {
      body(buf, i, tile);
      auto* d = reinterpret_cast<__m128i*>(y + i);
      const auto* s = reinterpret_cast<const __m128i*>(buf);
      for (std::int64_t k = 0; k < kStreamTileBytes / 16; ++k) _mm_stream_si128(d + k, _mm_load_si128(s + k));
    }
    if (i < hi) body(y + i, i, hi - i);
    _mm_sfence();  // streaming stores are weakly ordered: make them visible before the team's barrier
    return;
  }
#else
  (void)stream;
#endif
  body(y + lo, lo, hi - lo);
}

// dst = src, `bytes` of them, not overlapping: a map as the others are (team, split, streaming
// stores past the cache). The copy entry of cpu_backend.cpp; defined in cpu_maps.cpp.
void copy_bytes(void* dst, const void* src, std::size_t bytes) noexcept;

}  // namespace porta::detail::cpu
