// SPDX-License-Identifier: Apache-2.0
// Scans of the GPU plugins: definitions of ScanKernels<Api, T> (kernels.hpp), the canonical order of
// porta/detail/scan_order.hpp in one pass over the input.
//
// scan_rows_kernel: a block of 128 threads owns one tile of 4096 elements of one row. The tile is
// read into shared memory (16-byte loads when the row's alignment allows, coalesced scalars
// otherwise; padded every 128 bytes: no bank conflicts in either direction); thread t scans groups
// t and t + 128 (elements 16g .. 16g + 15) in place there (step 1 of the order), two independent
// chains, and keeps only their totals; the warp scan of group totals is the Kogge-Stone shuffle
// ladder d = 1 .. 16 over groups of 32 lanes (step 2: the bits do not depend on the warp size, 32
// or 64; warp w scans the totals of group warps w and w + 4), the 8 group-warp totals meet in
// shared memory in order (step 3), and step 4 is applied with the carry on the way out. Tile data
// stays in shared memory rather than registers because a tile spends much of its life waiting for
// its carry: fewer registers per thread, more tiles (and bytes) in flight per multiprocessor.
// Two groups per thread rather than one (256 threads) fit more tiles on a multiprocessor, since
// threads (2048) rather than shared memory were the limit: 2^28 floats on the H200, 1.02 ms with
// 256 threads and 0.71 with 128 (CUB 0.70); 64 threads were slower again (0.85). The output goes
// out with evict-first stores (Api::store_streaming): 0.71 -> 0.68-0.69 ms for floats, 1.44-1.45
// -> 1.41 for doubles (CUB 1.32); evict-first loads as well helped floats (0.67) but cost
// doubles (1.45), and loads alone cost both.
//
// Step 5, the carry. Every tile publishes its total S[k] as soon as its local scan is done,
// waiting for nothing. The carry's blocks (scan_order.hpp: for each set bit j of k, the aligned
// block of 2^j tiles that ends just before k with k's bits below j cleared) are pairwise trees
// over tile totals, and the last warp (whose lane 31 holds S) gets them from three levels:
// - bits 0-4 lie in k's 32-window (the 32 tiles of its row that share k >> 5): lane l < k mod 32
//   waits for S of window tile l, and a shuffle tree folds them; the block of bit j is node
//   ((k mod 32) >> j) - 1 of level j;
// - bits 5-7 lie in k's 256-window: its 32-blocks are published ("mids") by the last tile of each
//   32-window, from that tree (its own S at position 31); lane q < (k >> 5) mod 8 waits for 32-block
//   q and a second shuffle tree folds them the same way;
// - bits 8 and up are blocks of 2^8 tiles or more, published in a slot by the tile m that completes
//   them (m mod 256 = 255, j0 >= 8 trailing ones): its 256-window's block folded under its left
//   siblings of 2^8 .. 2^(j0 - 1) tiles, slots m - 2^i, which are also its carry's blocks of those
//   bits. Lane j >= 8 waits for slot ((k >> j) << j) - 1.
// A 32-block is published as soon as its window's S are in, before its tile waits for anything
// else, so no publication waits for a chain of publications; the earlier designs (Fenwick slots
// for every tile; a window of 256 S values per tile) cost 1.23 and 1.08 ms for 2^28 floats on the
// H200, this one 1.08 with far fewer reads, 1.01-1.03 with the sleep before its first poll (256
// threads per tile; CUB DeviceScan: 0.69; that kernel with the carries left out, wrong but timed:
// 0.67-0.81).
// The values and their order are those of scan_order.hpp; only who computes them changed.
//
// Forward progress: tile indices come from an atomic counter, taken by a block that is already
// running, and everything a tile waits for belongs to an earlier tile of its row: S values need
// nothing, 32-blocks need S values, slots need 32-blocks and earlier slots, so by induction on the
// index every wait ends however the hardware schedules blocks.
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

inline constexpr int kScanThreads = 128;
inline constexpr int kScanGroupsPerThread = static_cast<int>(kScanGroups) / kScanThreads;
static_assert(kScanGroupsPerThread * kScanThreads == kScanGroups && kScanThreads % kScanWarp == 0,
              "threads own whole warps of groups");

// Shared-memory slot of tile element i: one pad element every 128 bytes, so that thread t's reads of
// 16t + j (step 1) and the coalesced i = t + 128r both hit 32 different banks.
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
  ScanWord<T>* slots;           // blocks of 2^8 tiles or more, (bits, ~bits) once published, (0, 0) before
  ScanWord<T>* totals;          // the same for the S of every tile
  ScanWord<T>* mids;            // the same for the blocks of 32 tiles
};

template <class T>
__device__ __forceinline__ void scan_publish(ScanWord<T>* pairs, std::int64_t i, T v) {
  ScanWord<T> b;
  __builtin_memcpy(&b, &v, sizeof b);  // not std::memcpy: host-only in HIP device code
  volatile ScanWord<T>* s = pairs + 2 * i;
  s[0] = b;
  s[1] = ~b;
}

// A published pair in two steps: scan_read issues the first read of the pair at p (NULL: none), so
// that the reads of several pairs are in flight together; scan_take spins until the pair is
// complete and gives its value (unchanged v for NULL).
template <class T>
struct ScanPair {
  const volatile ScanWord<T>* p;
  ScanWord<T> w0, w1;
};
template <class T>
__device__ __forceinline__ ScanPair<T> scan_read(const ScanWord<T>* p) {
  ScanPair<T> r{p, 0, 0};
  if (p != nullptr) {
    r.w0 = r.p[0];
    r.w1 = r.p[1];
  }
  return r;
}
template <class T>
__device__ __forceinline__ void scan_take(ScanPair<T>& r, T* v) {
  if (r.p == nullptr) return;
  while (r.w1 != static_cast<ScanWord<T>>(~r.w0)) {
    r.w0 = r.p[0];
    r.w1 = r.p[1];
  }
  __builtin_memcpy(v, &r.w0, sizeof(T));
}

// The pairwise tree of scan_order.hpp's blocks over the values v of lanes 0 .. 2^Levels - 1 of a
// group of 32 (lane l at position l): after level j, lane p 2^j holds node p, the block of positions
// [p 2^j, (p + 1) 2^j). The carry's block of bit j < Levels of r, node (r >> j) - 1, goes to
// out[j]. Returns the lane's value: lane 0 holds the whole tree, complete when r = 2^Levels - 1.
// Every lane of the group must call it (shuffles).
template <class Api, int Levels, class T, class Op>
__device__ __forceinline__ T scan_tree(T v, int r, int lane, Op op, T* out) {
  constexpr int kWarp = static_cast<int>(kScanWarp);
  if ((r & 1) != 0 && lane == r - 1) out[0] = v;
#pragma unroll
  for (int j = 1; j <= Levels; ++j) {
    const T right = Api::shfl_down(v, 1u << (j - 1), kWarp);
    if ((lane & ((1 << j) - 1)) == 0) v = op(v, right);
    if (j < Levels && ((r >> j) & 1) != 0 && lane == (((r >> j) - 1) << j)) out[j] = v;
  }
  return v;
}

// Zeroes the counter and the slot words of a launch (stream-ordered scratch is not initialised).
template <class W>
__global__ void scan_init_kernel(unsigned long long* counter, W* words, std::int64_t n) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i == 0) *counter = 0;
  for (std::int64_t k = i; k < n; k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) words[k] = 0;
}

// Resident blocks per multiprocessor that the register budget must allow, and how long the
// carry's warp sleeps before its first poll. A tile's lifetime is mostly waiting (loads, the
// carry), so throughput grows with the tiles in flight until fewer registers per thread cost more;
// polling at once costs more than it saves (CUB's look-back also sleeps about one L2 write latency
// first). Measured on the H200 with 128 threads, before the evict-first stores (2^28, ms; CUB 0.70
// / 1.32): floats 0.87 / 0.84 / 0.78 / 0.76 / 0.78 at 6 / 7 / 8 / 9 / 10 blocks with a 1 us sleep,
// 0.714 / 0.713-0.716 at 9 blocks and 1.5 / 2 us (0.74 at 8 blocks and 2.5 us); doubles (6 blocks
// fill the shared memory) 1.54 / 1.45 / 1.47 at 4 / 5 / 6 blocks with 2 us, and 1.45 / 1.45 / 1.44
// at 5 blocks and 1.5 / 2 / 2.5 us.
template <class T>
inline constexpr int kScanMinBlocks = sizeof(T) == 4 ? 9 : 5;
template <class T>
inline constexpr unsigned kScanSleepNs = sizeof(T) == 4 ? 1500u : 2500u;

// x and y are [rows, n]; tiles_per_row = ceil(n / 4096). y == x is allowed when inclusive.
template <class Api, bool Exclusive, class T, class Op>
__global__ void __launch_bounds__(kScanThreads, kScanMinBlocks<T>)
    scan_rows_kernel(const T* x, T* y, std::int64_t n, std::int64_t tiles_per_row, ScanCarries<T> st, Op op) {
  constexpr int kItems = static_cast<int>(kScanItems), kWarp = static_cast<int>(kScanWarp);
  constexpr int kTile = static_cast<int>(kScanTile);
  constexpr int G = kScanGroupsPerThread;  // thread t owns groups t + h kScanThreads, h < G
  constexpr int kWarps = kScanThreads / kWarp;
  constexpr int V = kVec16<T>;  // elements per 16-byte access
  __shared__ T sm[kScanSmem<T>];
  __shared__ T warp_total[kScanGroups / kScanWarp];
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
  if (len == kTile && is_aligned(x + base, 16)) {
#pragma unroll
    for (int r = 0; r < kTile / V / kScanThreads; ++r) {
      const int c = t + r * kScanThreads;
      const Pack<T, V> p = *reinterpret_cast<const Pack<T, V>*>(x + base + c * V);
#pragma unroll
      for (int e = 0; e < V; ++e) sm[scan_slot<T>(c * V + e)] = p.v[e];
    }
  } else {
#pragma unroll
    for (int r = 0; r < kTile / kScanThreads; ++r) {
      const int i = t + r * kScanThreads;
      sm[scan_slot<T>(i)] = i < len ? x[base + i] : id;
    }
  }
  __syncthreads();

  // Step 1: the thread's groups, scanned in place in shared memory (G independent chains). Only
  // their totals stay in registers: a tile spends much of its life waiting for its carry, so the
  // tiles in flight (and with them the bytes in flight) are what registers per thread would limit.
  T s[G];
#pragma unroll
  for (int h = 0; h < G; ++h) s[h] = sm[scan_slot<T>((t + h * kScanThreads) * kItems)];
#pragma unroll
  for (int j = 1; j < kItems; ++j) {
#pragma unroll
    for (int h = 0; h < G; ++h) {
      const int i = scan_slot<T>((t + h * kScanThreads) * kItems + j);
      s[h] = op(s[h], sm[i]);
      sm[i] = s[h];
    }
  }

  // Step 2: Kogge-Stone over the 32 group totals of each warp of groups (warp + h kWarps).
  const int lane = t % kWarp, warp = t / kWarp;
  T inc[G], excl[G];
#pragma unroll
  for (int h = 0; h < G; ++h) inc[h] = s[h];
#pragma unroll
  for (int d = 1; d < kWarp; d *= 2) {
#pragma unroll
    for (int h = 0; h < G; ++h) {
      const T up = Api::shfl_up(inc[h], static_cast<unsigned>(d), kWarp);
      if (lane >= d) inc[h] = op(up, inc[h]);
    }
  }
#pragma unroll
  for (int h = 0; h < G; ++h) {
    excl[h] = Api::shfl_up(inc[h], 1u, kWarp);
    if (lane == 0) excl[h] = id;
    if (lane == kWarp - 1) warp_total[warp + h * kWarps] = inc[h];
  }
  __syncthreads();

  // Step 3: each group warp's prefix, in order from the identity; p ⊕ (the group's scan) are its
  // local values (step 4, applied at the end with the carry), and the last thread's last group
  // gives the tile's total S.
  T p[G];
  {
    T wp = id;
    int q = 0;
#pragma unroll
    for (int h = 0; h < G; ++h) {
      for (; q < warp + h * kWarps; ++q) wp = op(wp, warp_total[q]);
      p[h] = op(wp, excl[h]);
    }
  }
  const T local_last = op(p[G - 1], s[G - 1]);  // S on the last thread

  // Step 5 (header comment), by the last warp, whose lane 31 holds S. The row's last tile
  // publishes nothing: no one reads it.
  const bool chained = st.counter != nullptr;
  const bool last = k + 1 == tiles_per_row;
  const unsigned kb = static_cast<unsigned>(k);  // k's bits
  T cy = id;
  if (chained && warp == kWarps - 1) {
    const int r5 = static_cast<int>(kb & 31u);                              // k's place in its 32-window
    const int r8 = static_cast<int>((kb >> 5) & 7u);                        // the 32-window's place in the 256-window
    const std::int64_t w256 = tile - static_cast<std::int64_t>(kb & 255u);  // the 256-window's tile 0
    const bool high = lane >= 8 && lane < kWarp - 1 && ((kb >> lane) & 1u) != 0;
    if (lane == kWarp - 1 && !last) scan_publish<T>(st.totals, tile, local_last);
    // Lane l reads S of the 32-window's tile l < r5, the 32-block q = l < r8 of the 256-window, and
    // the carry's block of bit l >= 8, all at once; it waits for the S first, and the 32-block
    // that k may publish needs nothing else (waiting for the rest first would chain the blocks).
    // Like CUB's look-back, first give the most recent publications time to arrive
    // (kScanSleepNs).
    if (kb != 0) Api::template sleep<kScanSleepNs<T>>();  // tile 0 waits for nothing
    ScanPair<T> ws = scan_read<T>(lane < r5 ? st.totals + 2 * (tile - r5 + lane) : nullptr);
    ScanPair<T> wm = scan_read<T>(lane < r8 ? st.mids + 2 * (w256 + 32 * lane + 31) : nullptr);
    ScanPair<T> wh = scan_read<T>(high ? st.slots + 2 * ((tile - k) + ((kb >> lane) << lane) - 1) : nullptr);
    T a = id, m = id, h = id;
    scan_take<T>(ws, &a);
    if (r5 == 31 && lane == kWarp - 1) a = local_last;  // a 32-block's last tile: its own S
    // Pairwise trees (scan_tree) over the S of the 32-window, then over the 32-blocks of the
    // 256-window.
    a = scan_tree<Api, 5>(a, r5, lane, op, carry_block);
    // Lane 0: the 32-window's block, complete when k is its last tile.
    if (r5 == 31 && !last && lane == 0) scan_publish<T>(st.mids, tile, a);
    scan_take<T>(wm, &m);
    scan_take<T>(wh, &h);
    if (high) carry_block[lane] = h;
    const T own = Api::shfl_up(a, 7u, kWarp);       // lane 7: the 32-window's block, position 7 of
    if ((kb & 255u) == 255u && lane == 7) m = own;  // the 256-window when k is its last tile
    m = scan_tree<Api, 3>(m, r8, lane, op, carry_block + 5);
    if ((kb & 255u) == 255u && !last) {
      // B(k >> j0, j0), j0 = the trailing ones of k: the 256-window's block (lane 0) folded under
      // the left siblings of 2^8 .. 2^(j0 - 1) tiles, which are the carry's blocks of those bits.
      const int j0 = __ffs(static_cast<int>(~kb)) - 1;
      for (int i = 8; i < j0; ++i) {  // uniform over the warp: every lane shuffles
        const T sibling = Api::shfl_down(h, static_cast<unsigned>(i), kWarp);
        if (lane == 0) m = op(sibling, m);
      }
      if (lane == 0) scan_publish<T>(st.slots, tile, m);
    }
  }
  __syncthreads();
  if (chained) {
    for (unsigned m = kb; m != 0;) {  // the set bits, largest first
      const int j = 31 - __clz(static_cast<int>(m));
      cy = op(cy, carry_block[j]);
      m ^= 1u << j;
    }
  }
#pragma unroll
  for (int h = 0; h < G; ++h) {
#pragma unroll
    for (int j = 0; j < kItems; ++j) {  // step 4 and the output: C ⊕ (p ⊕ s[g][j])
      const int i = scan_slot<T>((t + h * kScanThreads) * kItems + j);
      sm[i] = canonical_nan(op(cy, op(p[h], sm[i])));
    }
  }
  __syncthreads();

  // Store; exclusive: shifted by one, the row's last value dropped, y[row, 0] first.
  if (len == kTile && is_aligned(y + base, 16)) {
    // Chunk c of y's tile is y[base + cV ..]; exclusive, its elements come from one place earlier,
    // chunk 0 writes only its last V - 1 and the tile's last value lands in the next tile's first.
#pragma unroll
    for (int r = 0; r < kTile / V / kScanThreads; ++r) {
      const int c = t + r * kScanThreads;
      Pack<T, V> q;
#pragma unroll
      for (int e = 0; e < V; ++e) q.v[e] = sm[scan_slot<T>(c * V + e - (Exclusive && c * V + e > 0 ? 1 : 0))];
      if (Exclusive && c == 0) {
#pragma unroll
        for (int e = 1; e < V; ++e) y[base + e] = q.v[e];
      } else {
        Api::store_streaming(reinterpret_cast<Pack<T, V>*>(y + base + c * V), q);
      }
      if (Exclusive && c == kTile / V - 1 && k + 1 < tiles_per_row) y[base + kScanTile] = sm[scan_slot<T>(kTile - 1)];
    }
  } else {
    const int shift = Exclusive ? 1 : 0;
    const int end = static_cast<int>(left <= kScanTile ? left : kScanTile + 1);  // the row's room from base
#pragma unroll
    for (int r = 0; r < kTile / kScanThreads; ++r) {
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
  ScanCarries<T> st{nullptr, nullptr, nullptr, nullptr};
  void* scratch = nullptr;
  if (tiles > 1) {
    const std::int64_t words = 6 * rows * tiles;
    // The counter, then the words of the slots, the totals and the mids.
    const std::size_t bytes = 8 + static_cast<std::size_t>(words) * sizeof(ScanWord<T>);
    Error e = Api::malloc_async(&scratch, bytes, s);
    if (e != Api::kSuccess) return e;
    auto* base = static_cast<unsigned char*>(scratch);
    st.counter = reinterpret_cast<unsigned long long*>(base);
    st.slots = reinterpret_cast<ScanWord<T>*>(base + 8);
    st.totals = st.slots + 2 * rows * tiles;
    st.mids = st.totals + 2 * rows * tiles;
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
