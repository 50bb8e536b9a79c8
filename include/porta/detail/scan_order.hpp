// SPDX-License-Identifier: Apache-2.0
// The canonical order of porta's scans (inclusive and exclusive sum and max): the contract that
// makes cumsum return the same bits on every backend, thread count, GPU model and run, as
// reduce_order.hpp is for reductions. Every backend evaluates exactly these operations in exactly
// this association; which thread evaluates what does not matter.
//
// A sequence x[0..n) is cut into tiles of kScanTile = 4096 elements; tile t holds x[4096t ..).
// Positions past the end hold the op's identity (-0.0 for sum, -inf / lowest for max), which is
// exact: op(a, identity) == a for every a. ⊕ is the op (add_rn, max_op of ops.hpp).
//
//   1. Groups. A tile is 256 groups of kScanItems = 16 consecutive elements. Group g runs its own
//      sequential scan: s[g][0] = x[16g], s[g][j] = s[g][j-1] ⊕ x[16g + j]; its total is s[g][15].
//   2. Warps. Groups form 8 warps of 32. Within a warp, the totals are scanned by the Kogge-Stone
//      steps d = 1, 2, 4, 8, 16: v[l] = v[l - d] ⊕ v[l] for lanes l >= d (all lanes at once), giving
//      w[l]. The group's in-warp prefix is e[l] = w[l - 1], the identity for lane 0.
//   3. Warp prefixes. W[v] = the total of warp v (its w[31]); warp v's prefix is
//      P[v] = (((identity ⊕ W[0]) ⊕ W[1]) ... ⊕ W[v - 1]), the identity for warp 0.
//   4. Local values. L[16g + j] = (P[warp of g] ⊕ e[lane of g]) ⊕ s[g][j]. The tile's total S[t] is
//      its L[4095].
//   5. Tile carries (Fenwick). Blocks of tiles aligned to powers of two have fixed sums:
//      B(k, 0) = S[k], B(k, j + 1) = B(2k, j) ⊕ B(2k + 1, j). Tile t's carry folds, from the
//      identity, the blocks of t's binary decomposition, largest first: for t = 2^a + 2^b + ...
//      (a > b > ...), C[t] = ((identity ⊕ B(0, a)) ⊕ B(2^(a-b), b)) ⊕ ... ; C[0] = identity.
//   6. Output. inclusive: y[4096t + i] = C[t] ⊕ L[i]. exclusive: y[0] = 0 for sum (+0.0, as NumPy
//      and CUB give) or the identity for max, y[i] = inclusive y[i - 1] bit for bit. A NaN output is
//      the canonical quiet NaN (payloads differ between CPUs and GPUs).
//
// Why this shape: it is what a GPU does in one pass at memory speed (a thread scans 16 items in
// registers, a warp scans with shuffles, a block of threads owns a tile), and step 5 lets a tile
// find its carry from O(log tiles) published block sums, each a fixed pairwise tree, instead of the
// order-dependent look-back of CUB's decoupled scan or a second pass over the input. The CPU
// reproduces it tile by tile. Integers wrap (ops.hpp), so any order gives their exact result; the
// order matters for floating point.
//
// Implementations: the GPU kernels in backends/gpu/scan_kernels.cuh; the CPU backend in
// backends/cpu/cpu_scan.cpp, on top of the tile functions here; scan_canonical below is the
// serial definition.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "porta/detail/ops.hpp"

namespace porta::detail {

inline constexpr std::int64_t kScanItems = 16;
inline constexpr std::int64_t kScanGroups = 256;
inline constexpr std::int64_t kScanWarp = 32;
inline constexpr std::int64_t kScanTile = kScanItems * kScanGroups;

inline std::int64_t scan_tile_count(std::int64_t n) {
  return (n + kScanTile - 1) / kScanTile;
}

// y[0] of an exclusive scan: +0 for sum (not the -0.0 identity: NumPy and CUB start at 0), the
// identity for max.
template <class T, class Op>
PORTA_HOST_DEVICE inline T scan_exclusive_first(Op) {
  if constexpr (std::is_same_v<Op, SumOp>) {
    return T(0);
  } else {
    return Op::template identity<T>();
  }
}

// Steps 1-4 for one tile of len <= kScanTile elements: L[i] for i < len (L may alias x). Returns
// the tile's total S (L[4095] of the padded tile, which equals L[len - 1]: padding adds identities).
template <class T, class Op>
T scan_tile_local(const T* x, std::int64_t len, T* L, Op op) {
  const T id = Op::template identity<T>();
  T total[kScanGroups];
  for (std::int64_t g = 0; g < kScanGroups; ++g) {
    const std::int64_t b = g * kScanItems;
    T s = id;
    if (b < len) {
      const std::int64_t e = len - b < kScanItems ? len - b : kScanItems;
      s = x[b];
      L[b] = s;
      for (std::int64_t j = 1; j < e; ++j) {
        s = op(s, x[b + j]);
        L[b + j] = s;
      }
    }
    total[g] = s;
  }
  T warp_total[kScanGroups / kScanWarp];
  T excl[kScanGroups];
  for (std::int64_t w = 0; w < kScanGroups / kScanWarp; ++w) {
    T v[kScanWarp];
    for (std::int64_t l = 0; l < kScanWarp; ++l) v[l] = total[w * kScanWarp + l];
    for (std::int64_t d = 1; d < kScanWarp; d *= 2) {
      for (std::int64_t l = kScanWarp - 1; l >= d; --l) v[l] = op(v[l - d], v[l]);  // top down: reads old v[l - d]
    }
    excl[w * kScanWarp] = id;
    for (std::int64_t l = 1; l < kScanWarp; ++l) excl[w * kScanWarp + l] = v[l - 1];
    warp_total[w] = v[kScanWarp - 1];
  }
  T warp_prefix = id;
  T last = id;
  for (std::int64_t w = 0; w < kScanGroups / kScanWarp; ++w) {
    if (w > 0) warp_prefix = op(warp_prefix, warp_total[w - 1]);
    for (std::int64_t l = 0; l < kScanWarp; ++l) {
      const std::int64_t g = w * kScanWarp + l;
      const T p = op(warp_prefix, excl[g]);
      const std::int64_t b = g * kScanItems;
      for (std::int64_t j = 0; j < kScanItems && b + j < len; ++j) L[b + j] = op(p, L[b + j]);
      if (g == kScanGroups - 1) last = op(p, total[g]);
    }
  }
  return last;
}

// Step 5: C[t] for t in [0, tiles) from the tile totals S[0 .. tiles - 1) (S[tiles - 1] unused).
template <class T, class Op>
void scan_tile_carries(const T* S, std::int64_t tiles, T* C, Op op) {
  const T id = Op::template identity<T>();
  std::vector<std::vector<T>> level;  // level[j][k] = B(k, j) for complete blocks
  level.emplace_back(S, S + (tiles > 0 ? tiles : 0));
  while (level.back().size() >= 2) {
    const std::vector<T>& prev = level.back();
    std::vector<T> next(prev.size() / 2);
    for (std::size_t k = 0; k < next.size(); ++k) next[k] = op(prev[2 * k], prev[2 * k + 1]);
    level.push_back(std::move(next));
  }
  for (std::int64_t t = 0; t < tiles; ++t) {
    T c = id;
    std::int64_t pos = 0;
    for (int j = static_cast<int>(level.size()) - 1; j >= 0; --j) {
      if ((t >> j) & 1) {
        c = op(c, level[static_cast<std::size_t>(j)][static_cast<std::size_t>(pos >> j)]);
        pos += std::int64_t(1) << j;
      }
    }
    C[t] = c;
  }
}

// The serial definition: the scan of x[0..n) into y (y may alias x for an inclusive scan only).
template <class T, class Op>
void scan_canonical(const T* x, std::int64_t n, T* y, Op op, bool exclusive) {
  if (n <= 0) return;
  const std::int64_t tiles = scan_tile_count(n);
  std::vector<T> L(static_cast<std::size_t>(n)), S(static_cast<std::size_t>(tiles)), C(static_cast<std::size_t>(tiles));
  for (std::int64_t t = 0; t < tiles; ++t) {
    const std::int64_t b = t * kScanTile;
    S[t] = scan_tile_local(x + b, n - b < kScanTile ? n - b : kScanTile, L.data() + b, op);
  }
  scan_tile_carries(S.data(), tiles, C.data(), op);
  const std::int64_t shift = exclusive ? 1 : 0;
  for (std::int64_t i = 0; i + shift < n; ++i) y[i + shift] = canonical_nan(op(C[i / kScanTile], L[i]));
  if (exclusive) y[0] = scan_exclusive_first<T>(op);
}

}  // namespace porta::detail
