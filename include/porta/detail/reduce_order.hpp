// SPDX-License-Identifier: Apache-2.0
// The canonical order of porta's reductions: the contract that makes sum, prod, dot, norm2, mean,
// min and max return the same bits on every backend, thread count, GPU model and run.
//
// A sequence x[0..n) (contiguous, strided, or produced by a function) is reduced as follows:
//
//   reduce(n) = chunk(x[0..n))                           if n <= kReduceChunk
//             = reduce(p[0..m)),  m = ceil(n / kReduceChunk),
//               p[c] = chunk(x[c*kReduceChunk .. min(n, (c+1)*kReduceChunk)))   otherwise
//
//   chunk(y[0..len)), len <= kReduceChunk:
//     1. lanes:  acc[l] = identity for l in [0, kReduceLanes); then for k = 0, 1, ... in order,
//                acc[l] = op(acc[l], y[k*kReduceLanes + l]) where that index is < len.
//     2. tree:   for s = kReduceLanes/2, kReduceLanes/4, ..., 1:  acc[l] = op(acc[l], acc[l+s]), l < s.
//     result acc[0].
//
// Every backend evaluates exactly these operations in exactly this association; which hardware
// thread evaluates a chunk or a lane does not matter. Lanes past the end hold the identity, which
// is exact for every op (-0.0 for sum), so padding never changes a bit. A NaN result is returned
// as the canonical quiet NaN. The error bound is that of pairwise summation over the tree plus a
// short sequential run (kReduceChunk / kReduceLanes = 32 terms) in each lane.
//
// GPU mapping (backends/gpu): a block of 256 threads owns a chunk; thread t holds lanes 4t..4t+3
// and reads them with one 16-byte load per k; the tree runs through shared memory and shuffles.
// CPU mapping (this file): chunks are spread over OpenMP threads; lanes are a vectorised array.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "porta/detail/ops.hpp"

namespace porta::detail {

inline constexpr std::int64_t kReduceLanes = 1024;
inline constexpr std::int64_t kReduceChunk = 32768;

inline std::int64_t reduce_chunk_count(std::int64_t n) {
  return (n + kReduceChunk - 1) / kReduceChunk;
}

// Lane tree over acc[0..kReduceLanes).
template <class T, class Op>
inline T reduce_lane_tree(T* acc, Op op) {
  for (std::int64_t s = kReduceLanes / 2; s >= 1; s /= 2) {
    for (std::int64_t l = 0; l < s; ++l) acc[l] = op(acc[l], acc[l + s]);
  }
  return acc[0];
}

// One chunk of len <= kReduceChunk elements; load(i) gives element i of the chunk.
template <class T, class Op, class Load>
inline T reduce_chunk(std::int64_t len, Op op, Load load) {
  alignas(64) T acc[kReduceLanes];
  const T id = Op::template identity<T>();
  for (std::int64_t l = 0; l < kReduceLanes; ++l) acc[l] = id;
  std::int64_t base = 0;
  for (; base + kReduceLanes <= len; base += kReduceLanes) {
    for (std::int64_t l = 0; l < kReduceLanes; ++l) acc[l] = op(acc[l], load(base + l));
  }
  for (std::int64_t l = 0; base + l < len; ++l) acc[l] = op(acc[l], load(base + l));
  return reduce_lane_tree(acc, op);
}

// The same for a contiguous chunk; written with a pointer so that the compiler vectorises lanes.
template <class T, class Op>
inline T reduce_chunk_contiguous(const T* x, std::int64_t len, Op op) {
  return reduce_chunk<T>(len, op, [x](std::int64_t i) { return x[i]; });
}

// Reads the chunk results of one level for the next. A named type, not a lambda: a lambda inside
// reduce_canonical would be a new type in every instantiation, so the recursion below would
// instantiate reduce_canonical without end (compilers queue function bodies rather than nest them,
// so no depth limit stops it: the translation unit just never finishes compiling).
template <class T>
struct ReducePartials {
  const T* p;
  T operator()(std::int64_t i) const { return p[i]; }
};

// The canonical reduction of n elements given by load(i). parallel == true spreads chunks over
// OpenMP threads (the result does not depend on how). Returns the raw result (NaN not canonicalised).
template <class T, class Op, class Load>
T reduce_canonical(std::int64_t n, Op op, Load load, bool parallel = true) {
  if (n <= kReduceChunk) return reduce_chunk<T>(n, op, load);
  const std::int64_t m = reduce_chunk_count(n);
  std::vector<T> partial(static_cast<std::size_t>(m));
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) if (parallel && m > 1)
#endif
  for (std::int64_t c = 0; c < m; ++c) {
    const std::int64_t begin = c * kReduceChunk;
    const std::int64_t len = std::min(kReduceChunk, n - begin);
    partial[static_cast<std::size_t>(c)] =
        reduce_chunk<T>(len, op, [&load, begin](std::int64_t i) { return load(begin + i); });
  }
  (void)parallel;
  return reduce_canonical<T>(m, op, ReducePartials<T>{partial.data()}, false);
}

}  // namespace porta::detail
