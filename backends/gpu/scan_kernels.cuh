// SPDX-License-Identifier: Apache-2.0
// Scans of the GPU plugins: definitions of ScanKernels<Api, T> (kernels.hpp), the canonical order of
// porta/detail/scan_order.hpp in one pass over the input.
//
// scan_rows_kernel: a block of 256 threads owns one tile of 4096 elements of one row. The tile is
// read into shared memory (16-byte loads when the row's alignment allows, coalesced scalars
// otherwise; padded every 128 bytes: no bank conflicts in either direction); thread t holds group
// t (elements 16t .. 16t + 15) in registers and scans it (step 1 of the order); the warp scan of
// group totals is the Kogge-Stone shuffle ladder d = 1 .. 16 over groups of 32 lanes (step 2: the
// bits do not depend on the warp size, 32 or 64), the 8 warp totals meet in shared memory in order
// (step 3), giving the local values (step 4).
//
// Step 5 as a Fenwick tree. Of the blocks B(m, j), only those of even m are ever read (a carry
// block, or the left sibling of a block being built, is always the left half of its parent), and
// B(m, j) for even m is completed by tile (m + 1) * 2^j - 1, whose index has exactly j trailing
// ones. So every tile k publishes exactly one block, in slot k: the block B(k >> j0, j0) that it
// completes, j0 = the trailing ones of k, folded as B_{j0-1} ⊕ (... ⊕ (B_0 ⊕ S[k])) from its left
// siblings B_i, which sit in slots k - 2^i. Tile k's carry folds, largest first, the blocks of its
// binary decomposition: for each set bit j of k, the block that ends just before k with its bits
// below j cleared, in slot ((k >> j) << j) - 1 (for j < j0 these are the left siblings again). The
// values and their order are those of scan_order.hpp; only where they are kept changed.
//
// Who waits for what. After the local scan, warp 7 (whose lane 31 holds S[k]) publishes S[k] on
// its own when k is odd (below), waits for the left siblings in parallel (lane 30 - i for B_i),
// folds them with shuffles and publishes slot k. Warp 0 waits for the carry's blocks in parallel
// (lane j for bit j) into shared memory, and after a barrier every thread folds them in the order's
// sequence. The carry's last block ends at tile k - 1; when k - 1 is odd, slot k - 1 would cost tile
// k - 1's own round of sibling waits first, so warp 0 builds that block itself from S[k - 1] and the
// same siblings (lanes jl .. 0, jl = the lowest set bit of k), in the same fold: the same bits, one
// round trip less on the critical path (CUB's look-back likewise reads its predecessor's aggregate).
// A publication waits only for left siblings, never for a carry, and warps 0 and 7 are different
// wavefronts on AMD GPUs too, so a tile's carry waits never hold up its publication. Forward
// progress: tile indices come from an atomic counter, taken by a block that is already running, and
// every value a tile waits for belongs to an earlier tile of its row; by induction on the index,
// tile k publishes once the tiles before it have (tile 0 waits for nothing, S[k] waits for nothing,
// and slot k needs only earlier slots), so every wait ends however the hardware schedules blocks.
//
// Memory ordering without fences: nothing but the published pairs passes between blocks, and each is
// written once per launch (zeroed before) as the pair (bits, ~bits) by two volatile stores. A
// reader takes a pair when its second word is the complement of its first; each word holds
// either 0 or its final value, so an accepted pair carries the published bits whatever order the
// two words arrive in ((0, 0) is never accepted; (v, 0) only when v is all ones, which is then the
// value; (0, ~v) only when v is 0).
//
// Columns (inner > 1) are transposed into scratch, scanned as rows and transposed back.
#pragma once

#include <cstdint>
#include <type_traits>

#include "backends/gpu/kernels.hpp"
#include "porta/detail/gpu/api.cuh"
#include "porta/detail/ops.hpp"
#include "porta/detail/scan_order.hpp"

namespace porta::detail::gpu {

inline constexpr int kScanThreads = static_cast<int>(kScanGroups);
static_assert(kScanThreads == 256 && kScanItems == 16, "the block mapping holds one group per thread");

// Shared-memory slot of tile element i: one pad element every 128 bytes, so that thread t's reads of
// 16t + j (step 1) and the coalesced i = t + 256r both hit 32 different banks.
template <class T>
inline constexpr int kScanPadEvery = static_cast<int>(128 / sizeof(T));
template <class T>
__device__ __forceinline__ int scan_slot(int i) {
  return i + i / kScanPadEvery<T>;
}
template <class T>
inline constexpr int kScanSmem = static_cast<int>(kScanTile) + static_cast<int>(kScanTile) / kScanPadEvery<T>;

// The bits of a T, as the words of a published pair.
template <class T>
using ScanWord = std::conditional_t<sizeof(T) == 8, unsigned long long, unsigned int>;

// The published blocks of all rows: the tile of index i (row i / tiles_per_row) writes the pair at
// slots[2i].
template <class T>
struct ScanCarries {
  unsigned long long* counter;  // the next tile index; NULL when every row is one tile
  ScanWord<T>* slots;           // (bits, ~bits) once published, (0, 0) before
  ScanWord<T>* totals;          // the same for S of the odd tiles (header comment)
};

template <class T>
__device__ __forceinline__ void scan_publish(ScanWord<T>* pairs, std::int64_t i, T v) {
  ScanWord<T> b;
  __builtin_memcpy(&b, &v, sizeof b);  // not std::memcpy: host-only in HIP device code
  volatile ScanWord<T>* s = pairs + 2 * i;
  s[0] = b;
  s[1] = ~b;
}

template <class T>
__device__ __forceinline__ T scan_wait(const ScanWord<T>* pairs, std::int64_t i) {
  const volatile ScanWord<T>* s = pairs + 2 * i;
  ScanWord<T> a = s[0], b = s[1];
  while (b != static_cast<ScanWord<T>>(~a)) {
    a = s[0];
    b = s[1];
  }
  T v;
  __builtin_memcpy(&v, &a, sizeof v);
  return v;
}

// Zeroes the counter and the slot words of a launch (stream-ordered scratch is not initialised).
template <class W>
__global__ void scan_init_kernel(unsigned long long* counter, W* words, std::int64_t n) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i == 0) *counter = 0;
  for (std::int64_t k = i; k < n; k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) words[k] = 0;
}

// Resident blocks per multiprocessor that the register budget must allow: a tile's lifetime is
// mostly waiting (loads, the carry), so throughput grows with the tiles in flight. On sm_90 that is
// 48 registers for 4-byte types and 64 for 8-byte ones, with spills of 4 to 32 bytes (to L1); the
// first version held three blocks of floats and two of doubles.
template <class T>
inline constexpr int kScanMinBlocks = sizeof(T) == 4 ? 5 : 4;

// x and y are [rows, n]; tiles_per_row = ceil(n / 4096). y == x is allowed when inclusive.
template <class Api, bool Exclusive, class T, class Op>
__global__ void __launch_bounds__(kScanThreads, kScanMinBlocks<T>)
    scan_rows_kernel(const T* x, T* y, std::int64_t n, std::int64_t tiles_per_row, ScanCarries<T> st, Op op) {
  constexpr int kItems = static_cast<int>(kScanItems), kWarp = static_cast<int>(kScanWarp);
  constexpr int V = kVec16<T>;  // elements per 16-byte access
  __shared__ T sm[kScanSmem<T>];
  __shared__ T warp_total[kScanThreads / kWarp];
  __shared__ T carry_block[kWarp];  // carry_block[j]: the carry's block for bit j of k
  __shared__ std::int64_t tile_index;
  const int t = static_cast<int>(threadIdx.x);
  if (t == 0) tile_index = st.counter != nullptr ? static_cast<std::int64_t>(atomicAdd(st.counter, 1ull)) : blockIdx.x;
  __syncthreads();
  const std::int64_t tile = tile_index;
  const std::int64_t row = tile / tiles_per_row;
  const std::int64_t k = tile - row * tiles_per_row;  // < 2^31: the grid is at most kMaxGrid tiles
  const std::int64_t base = row * n + k * kScanTile;
  const std::int64_t left = n - k * kScanTile;
  const int len = static_cast<int>(left < kScanTile ? left : kScanTile);
  const T id = Op::template identity<T>();

  // Load, padded with identities.
  if (len == static_cast<int>(kScanTile) && is_aligned(x + base, 16)) {
#pragma unroll
    for (int r = 0; r < kItems / V; ++r) {
      const int c = t + r * kScanThreads;
      const Pack<T, V> p = *reinterpret_cast<const Pack<T, V>*>(x + base + c * V);
#pragma unroll
      for (int e = 0; e < V; ++e) sm[scan_slot<T>(c * V + e)] = p.v[e];
    }
  } else {
#pragma unroll
    for (int r = 0; r < kItems; ++r) {
      const int i = t + r * kScanThreads;
      sm[scan_slot<T>(i)] = i < len ? x[base + i] : id;
    }
  }
  __syncthreads();

  // Step 1: the thread's group.
  T v[kScanItems];
#pragma unroll
  for (int j = 0; j < kItems; ++j) v[j] = sm[scan_slot<T>(t * kItems + j)];
#pragma unroll
  for (int j = 1; j < kItems; ++j) v[j] = op(v[j - 1], v[j]);

  // Step 2: Kogge-Stone over the 32 group totals of each warp.
  const int lane = t % kWarp, warp = t / kWarp;
  T inc = v[kScanItems - 1];
#pragma unroll
  for (int d = 1; d < kWarp; d *= 2) {
    const T up = Api::shfl_up(inc, static_cast<unsigned>(d), kWarp);
    if (lane >= d) inc = op(up, inc);
  }
  T excl = Api::shfl_up(inc, 1u, kWarp);
  if (lane == 0) excl = id;
  if (lane == kWarp - 1) warp_total[warp] = inc;
  __syncthreads();  // also: every thread has read its group from sm

  // Steps 3 and 4: the warp's prefix, in order from the identity, then the local values.
  T wp = id;
  for (int q = 0; q < warp; ++q) wp = op(wp, warp_total[q]);
  const T p = op(wp, excl);
#pragma unroll
  for (int j = 0; j < kItems; ++j) v[j] = op(p, v[j]);

  // Step 5 (header comment). The row's last tile completes no block that anyone reads.
  const bool chained = st.counter != nullptr;
  const unsigned kb = static_cast<unsigned>(k);  // k's bits
  const std::int64_t row_slots = tile - k;       // the slot of the row's tile 0
  if (chained && warp == kScanThreads / kWarp - 1 && k + 1 < tiles_per_row) {
    const int j0 = __ffs(static_cast<int>(~kb)) - 1;  // trailing ones of k (bit 31 of ~kb is set)
    T acc = v[kScanItems - 1];                        // S[k] in lane 31; lane 30 - i waits for B_i
    if (j0 > 0 && lane == kWarp - 1) scan_publish<T>(st.totals, tile, acc);
    if (lane < kWarp - 1 && kWarp - 1 - lane <= j0) acc = scan_wait<T>(st.slots, tile - (1u << (kWarp - 2 - lane)));
    for (int s = 1; s <= j0; ++s) {  // uniform over the warp: every lane shuffles
      const T right = Api::shfl_down(acc, 1u, kWarp);
      if (lane == kWarp - 1 - s) acc = op(acc, right);
    }
    if (lane == kWarp - 1 - j0) scan_publish<T>(st.slots, tile, acc);
  }
  if (chained && warp == 0 && k > 0) {
    // The last block, which ends at tile k - 1, is folded here from S[k - 1] and the left
    // siblings of tile k - 1 when k - 1 is odd (jl > 0), exactly as tile k - 1 folds it: lane jl
    // holds S[k - 1], lane jl - 1 - i the sibling B_i in slot k - 1 - 2^i.
    const int jl = __ffs(static_cast<int>(kb)) - 1;  // the lowest set bit of k
    T acc = id;
    if (jl > 0 && lane == jl) {
      acc = scan_wait<T>(st.totals, tile - 1);
    } else if (lane < jl) {
      acc = scan_wait<T>(st.slots, tile - 1 - (1u << (jl - 1 - lane)));
    } else if (lane < kWarp - 1 && ((kb >> lane) & 1u) != 0) {
      acc = scan_wait<T>(st.slots, row_slots + ((kb >> lane) << lane) - 1u);
    }
    for (int s = 1; s <= jl; ++s) {  // uniform over the warp: every lane shuffles
      const T right = Api::shfl_down(acc, 1u, kWarp);
      if (lane == jl - s) acc = op(acc, right);
    }
    if (lane == 0 || (lane > jl && lane < kWarp - 1 && ((kb >> lane) & 1u) != 0))
      carry_block[lane == 0 ? jl : lane] = acc;
  }
  __syncthreads();
  T cy = id;
  if (chained) {
    for (unsigned m = kb; m != 0;) {  // the set bits, largest first
      const int j = 31 - __clz(static_cast<int>(m));
      cy = op(cy, carry_block[j]);
      m ^= 1u << j;
    }
  }
#pragma unroll
  for (int j = 0; j < kItems; ++j) sm[scan_slot<T>(t * kItems + j)] = canonical_nan(op(cy, v[j]));
  __syncthreads();

  // Store; exclusive: shifted by one, the row's last value dropped, y[row, 0] first.
  if (len == static_cast<int>(kScanTile) && is_aligned(y + base, 16)) {
    // Chunk c of y's tile is y[base + cV ..]; exclusive, its elements come from one place earlier,
    // chunk 0 writes only its last V - 1 and the tile's last value lands in the next tile's first.
#pragma unroll
    for (int r = 0; r < kItems / V; ++r) {
      const int c = t + r * kScanThreads;
      Pack<T, V> q;
#pragma unroll
      for (int e = 0; e < V; ++e) q.v[e] = sm[scan_slot<T>(c * V + e - (Exclusive && c * V + e > 0 ? 1 : 0))];
      if (Exclusive && c == 0) {
#pragma unroll
        for (int e = 1; e < V; ++e) y[base + e] = q.v[e];
      } else {
        *reinterpret_cast<Pack<T, V>*>(y + base + c * V) = q;
      }
      if (Exclusive && c == static_cast<int>(kScanTile) / V - 1 && k + 1 < tiles_per_row)
        y[base + kScanTile] = sm[scan_slot<T>(static_cast<int>(kScanTile) - 1)];
    }
  } else {
    const int shift = Exclusive ? 1 : 0;
    const int end = static_cast<int>(left <= kScanTile ? left : kScanTile + 1);  // the row's room from base
#pragma unroll
    for (int r = 0; r < kItems; ++r) {
      const int i = t + r * kScanThreads;
      if (i < len && i + shift < end) y[base + i + shift] = sm[scan_slot<T>(i)];
    }
  }
  if (Exclusive && k == 0 && t == 0) y[base] = scan_exclusive_first<T>(op);
}

// out[o][c][r] = in[o][r][c] for in of [outer, R, C]; 32 x 8 threads move a 32 x 32 tile.
template <class T>
__global__ void __launch_bounds__(256)
    scan_transpose_kernel(const T* in, T* out, std::int64_t outer, std::int64_t R, std::int64_t C) {
  __shared__ T tile[32][33];
  const std::int64_t tiles_r = (R + 31) / 32, tiles_c = (C + 31) / 32;
  const std::int64_t total = outer * tiles_r * tiles_c;
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  for (std::int64_t it = blockIdx.x; it < total; it += gridDim.x) {
    const std::int64_t o = it / (tiles_r * tiles_c);
    const std::int64_t rem = it - o * tiles_r * tiles_c;
    const std::int64_t r0 = (rem / tiles_c) * 32, c0 = (rem % tiles_c) * 32;
    for (int dy = ty; dy < 32; dy += 8) {
      const std::int64_t r = r0 + dy, c = c0 + tx;
      if (r < R && c < C) tile[dy][tx] = in[(o * R + r) * C + c];
    }
    __syncthreads();
    for (int dy = ty; dy < 32; dy += 8) {
      const std::int64_t c = c0 + dy, r = r0 + tx;
      if (r < R && c < C) out[(o * C + c) * R + r] = tile[tx][dy];
    }
    __syncthreads();
  }
}

template <class Api, class T>
typename Api::Error scan_transpose(const T* in, T* out, std::int64_t outer, std::int64_t R, std::int64_t C,
                                   typename Api::Stream s) {
  const std::int64_t total = outer * ((R + 31) / 32) * ((C + 31) / 32);
  const std::int64_t grid = clamp_grid(total, std::int64_t(1) << 20);
  return Api::launch(scan_transpose_kernel<T>, dim3(static_cast<unsigned>(grid)), dim3(32, 8), 0, s, in, out, outer, R,
                     C);
}

// Every row of x [rows, n] into y, with the carries' scratch from the pool.
template <class Api, class T, class Op>
typename Api::Error scan_rows(const T* x, T* y, std::int64_t rows, std::int64_t n, Op op, bool exclusive,
                              typename Api::Stream s) {
  using Error = typename Api::Error;
  const std::int64_t tiles = scan_tile_count(n);
  ScanCarries<T> st{nullptr, nullptr, nullptr};
  void* scratch = nullptr;
  if (tiles > 1) {
    const std::int64_t words = 4 * rows * tiles;
    // The counter, then the slots' words, then the totals'.
    const std::size_t bytes = 8 + static_cast<std::size_t>(words) * sizeof(ScanWord<T>);
    Error e = Api::malloc_async(&scratch, bytes, s);
    if (e != Api::kSuccess) return e;
    auto* base = static_cast<unsigned char*>(scratch);
    st.counter = reinterpret_cast<unsigned long long*>(base);
    st.slots = reinterpret_cast<ScanWord<T>*>(base + 8);
    st.totals = st.slots + 2 * rows * tiles;
    const std::int64_t init_grid = clamp_grid((words + kBlockThreads - 1) / kBlockThreads, 4096);
    e = Api::launch(scan_init_kernel<ScanWord<T>>, dim3(static_cast<unsigned>(init_grid)), dim3(kBlockThreads), 0, s,
                    st.counter, st.slots, words);
    if (e != Api::kSuccess) {
      (void)Api::free_async(scratch, s);
      return e;
    }
  }
  const std::int64_t grid = rows * tiles;
  Error e = Api::kSuccess;
  if (grid > kMaxGrid) {
    e = Api::kInvalidValue;  // 2^31 tiles: 8.8e12 elements, more than any device holds
  } else if (exclusive) {
    e = Api::launch(scan_rows_kernel<Api, true, T, Op>, dim3(static_cast<unsigned>(grid)), dim3(kScanThreads), 0, s, x,
                    y, n, tiles, st, op);
  } else {
    e = Api::launch(scan_rows_kernel<Api, false, T, Op>, dim3(static_cast<unsigned>(grid)), dim3(kScanThreads), 0, s, x,
                    y, n, tiles, st, op);
  }
  if (scratch != nullptr) {
    const Error f = Api::free_async(scratch, s);
    if (e == Api::kSuccess) e = f;
  }
  return e;
}

template <class Api, class T, class Op>
int scan_typed(Op op, bool exclusive, std::int64_t outer, std::int64_t n, std::int64_t inner, const T* x, T* y,
               void* stream) {
  using Error = typename Api::Error;
  const auto s = static_cast<typename Api::Stream>(stream);
  if (inner == 1) return static_cast<int>(scan_rows<Api, T>(x, y, outer, n, op, exclusive, s));
  // [outer, n, inner] -> [outer, inner, n], rows, and back.
  const std::size_t bytes = static_cast<std::size_t>(outer * n * inner) * sizeof(T);
  void* a = nullptr;
  void* b = nullptr;
  Error e = Api::malloc_async(&a, bytes, s);
  if (e != Api::kSuccess) return static_cast<int>(e);
  e = Api::malloc_async(&b, bytes, s);
  if (e == Api::kSuccess) e = scan_transpose<Api, T>(x, static_cast<T*>(a), outer, n, inner, s);
  if (e == Api::kSuccess)
    e = scan_rows<Api, T>(static_cast<const T*>(a), static_cast<T*>(b), outer * inner, n, op, exclusive, s);
  if (e == Api::kSuccess) e = scan_transpose<Api, T>(static_cast<const T*>(b), y, outer, inner, n, s);
  if (b != nullptr) {
    const Error f = Api::free_async(b, s);
    if (e == Api::kSuccess) e = f;
  }
  const Error f = Api::free_async(a, s);
  if (e == Api::kSuccess) e = f;
  return static_cast<int>(e);
}

template <class Api, class T>
int ScanKernels<Api, T>::scan(porta_reduce_op op, bool exclusive, std::int64_t outer, std::int64_t n,
                              std::int64_t inner, const T* x, T* y, void* stream) {
  switch (op) {
    case PORTA_REDUCE_SUM:
      return scan_typed<Api, T>(SumOp{}, exclusive, outer, n, inner, x, y, stream);
    case PORTA_REDUCE_MAX:
      return scan_typed<Api, T>(MaxOp{}, exclusive, outer, n, inner, x, y, stream);
    case PORTA_REDUCE_PROD:
    case PORTA_REDUCE_MIN:
    case PORTA_REDUCE_SUMSQ:
    case PORTA_REDUCE_COUNT:
      break;
  }
  return static_cast<int>(Api::kInvalidValue);  // the entry validated op: unreachable
}

}  // namespace porta::detail::gpu
