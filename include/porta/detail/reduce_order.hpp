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
// Implementations: GPUs (built-ins and user transform_reduce) in porta/detail/gpu/reduce.cuh, whose
// header restates the mapping (a block of 256 threads per chunk, 4 lanes per thread); the CPU
// backend's built-ins in backends/cpu/cpu_reduce.cpp (chunks over OpenMP threads, lanes a
// vectorised array); user transform_reduce on the CPU here, in reduce_canonical_cpu (chunks, or
// runs of lanes when chunks are fewer than threads).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "porta/detail/cpu_parallel.hpp"
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

// Step 1 of a chunk for lanes [l0, l1) only: acc[l] = identity, then acc[l] = op(acc[l], load(k *
// kReduceLanes + l)) for k = 0, 1, ... while the index is < len. Lanes are independent, so any
// split of [0, kReduceLanes) into runs evaluates exactly the operations of the whole chunk.
template <class T, class Op, class Load>
inline void reduce_lanes(std::int64_t len, Op op, const Load& load, std::int64_t l0, std::int64_t l1, T* acc) {
  const T id = Op::template identity<T>();
  for (std::int64_t l = l0; l < l1; ++l) acc[l] = id;
  std::int64_t base = 0;
  for (; base + kReduceLanes <= len; base += kReduceLanes) {
    for (std::int64_t l = l0; l < l1; ++l) acc[l] = op(acc[l], load(base + l));
  }
  const std::int64_t tail = len - base < l1 ? len - base : l1;
  for (std::int64_t l = l0; l < tail; ++l) acc[l] = op(acc[l], load(base + l));
}

// One chunk of len <= kReduceChunk elements; load(i) gives element i of the chunk.
template <class T, class Op, class Load>
inline T reduce_chunk(std::int64_t len, Op op, const Load& load) {
  alignas(64) T acc[kReduceLanes];
  reduce_lanes<T>(len, op, load, 0, kReduceLanes, acc);
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

// Element begin + i of a chunk.
template <class Load>
struct ShiftedLoad {
  const Load* load;
  std::int64_t begin;
  auto operator()(std::int64_t i) const { return (*load)(begin + i); }
};

// The canonical reduction of n elements given by load(i), on the calling thread. Returns the raw
// result (NaN not canonicalised).
template <class T, class Op, class Load>
T reduce_canonical(std::int64_t n, Op op, const Load& load) {
  if (n <= kReduceChunk) return reduce_chunk<T>(n, op, load);
  const std::int64_t m = reduce_chunk_count(n);
  std::vector<T> partial(static_cast<std::size_t>(m));
  for (std::int64_t c = 0; c < m; ++c) {
    const std::int64_t begin = c * kReduceChunk;
    partial[static_cast<std::size_t>(c)] =
        reduce_chunk<T>(std::min(kReduceChunk, n - begin), op, ShiftedLoad<Load>{&load, begin});
  }
  return reduce_canonical<T>(m, op, ReducePartials<T>{partial.data()});
}

// Lane runs per chunk are at least this wide, so that each run still fills a few vectors.
inline constexpr std::int64_t kMinLaneRun = 16;

// The canonical reduction on the CPU's threads, split by work (cpu_parallel.hpp): whole chunks per
// task when there are enough chunks for every thread, else runs of lanes of each chunk, so that a
// reduction of a few thousand expensive items (an n-body energy) still uses every core. grain: the
// fewest items per task (0: measured). The bits are those of reduce_canonical whatever the split.
template <class T, class Op, class Load>
T reduce_canonical_cpu(std::int64_t n, Op op, const Load& load, std::int64_t grain) {
  if (n <= 0) return Op::template identity<T>();
  const std::int64_t m = reduce_chunk_count(n);
  const std::int64_t threads = cpu_threads();
  std::int64_t runs = 1;  // lane runs per chunk
  while (m * runs < 4 * threads && kReduceLanes / runs > kMinLaneRun) runs *= 2;
  const std::int64_t width = kReduceLanes / runs;
  const std::int64_t per_unit = (n + m * runs - 1) / (m * runs);
  const std::int64_t grain_units = grain > 0 ? (grain + per_unit - 1) / per_unit : 0;
  std::vector<T> partial(static_cast<std::size_t>(m));
  if (runs == 1) {
    cpu_for_blocks(m, grain_units, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t c = b; c < e; ++c) {
        const std::int64_t begin = c * kReduceChunk;
        partial[static_cast<std::size_t>(c)] =
            reduce_chunk<T>(std::min(kReduceChunk, n - begin), op, ShiftedLoad<Load>{&load, begin});
      }
    });
  } else {
    std::vector<T> acc(static_cast<std::size_t>(m * kReduceLanes));
    cpu_for_blocks(m * runs, grain_units, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t u = b; u < e; ++u) {
        const std::int64_t c = u / runs;
        const std::int64_t l0 = (u % runs) * width;
        const std::int64_t begin = c * kReduceChunk;
        reduce_lanes<T>(std::min(kReduceChunk, n - begin), op, ShiftedLoad<Load>{&load, begin}, l0, l0 + width,
                        acc.data() + c * kReduceLanes);
      }
    });
    for (std::int64_t c = 0; c < m; ++c)
      partial[static_cast<std::size_t>(c)] = reduce_lane_tree(acc.data() + c * kReduceLanes, op);
  }
  if (m == 1) return partial[0];
  return reduce_canonical<T>(m, op, ReducePartials<T>{partial.data()});
}

}  // namespace porta::detail
