// SPDX-License-Identifier: Apache-2.0
// Scans of the GPU plugins: definitions of ScanKernels<Api, T> (kernels.hpp), the canonical order of
// porta/detail/scan_order.hpp in one pass over the input.
//
// scan_rows_kernel: a block of 256 threads owns one tile of 4096 elements of one row. Tiles take
// their index from an atomic counter (so every tile a block waits for has already started: no
// deadlock however the hardware schedules blocks). The tile is read with coalesced loads into
// shared memory (padded every 128 bytes: no bank conflicts in either direction); thread t holds
// group t (elements 16t .. 16t + 15) in registers and scans it (step 1 of the order); the warp
// scan of group totals is the Kogge-Stone shuffle ladder d = 1 .. 16 over groups of 32 lanes
// (step 2: the bits do not depend on the warp size, 32 or 64), the 8 warp totals meet in shared
// memory in order (step 3), giving the local values (step 4). Thread 255, which holds the tile's
// total, publishes it and every aligned block of tiles it completes (step 5: B(k, j + 1) =
// B(2k, j) ⊕ B(2k + 1, j), waiting only for the left sibling), then folds the blocks of its tile
// index's binary decomposition into the carry, largest first. Block sums depend on tile totals
// only, never on carries, so a tile waits for O(log tiles) values that are ready almost at once:
// no serial chain through the grid, and the input is read once (CUB's decoupled look-back has the
// same traffic but adds whichever predecessors are ready, an order that changes from run to run).
//
// Columns (inner > 1) are transposed into scratch, scanned as rows and transposed back.
#pragma once

#include <cstdint>

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

// The published block sums of all rows: row r's blocks start at r * per_row; level j's at the sum of
// (tiles >> i) for i < j; a flag per block says that its value is there.
template <class T>
struct ScanCarries {
  unsigned long long* counter;  // the next tile index; NULL when every row is one tile
  int* flags;
  T* values;
  std::int64_t per_row;
};

template <class T>
__device__ __forceinline__ void scan_publish(const ScanCarries<T>& st, std::int64_t i, T v) {
  *static_cast<volatile T*>(st.values + i) = v;
  __threadfence();
  atomicExch(st.flags + i, 1);
}

template <class T>
__device__ __forceinline__ T scan_wait(const ScanCarries<T>& st, std::int64_t i) {
  const volatile int* f = st.flags + i;
  while (*f == 0) {
  }
  __threadfence();
  return *static_cast<const volatile T*>(st.values + i);
}

// Zeroes the counter and the flags of a launch (stream-ordered scratch is not initialised).
__global__ inline void scan_init_kernel(unsigned long long* counter, int* flags, std::int64_t n) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i == 0) *counter = 0;
  for (std::int64_t k = i; k < n; k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) flags[k] = 0;
}

// x and y are [rows, n]; tiles_per_row = ceil(n / 4096). y == x is allowed when inclusive.
template <class Api, bool Exclusive, class T, class Op>
__global__ void __launch_bounds__(kScanThreads)
    scan_rows_kernel(const T* x, T* y, std::int64_t n, std::int64_t tiles_per_row, ScanCarries<T> st, Op op) {
  __shared__ T sm[kScanSmem<T>];
  __shared__ T warp_total[kScanThreads / kScanWarp];
  __shared__ T carry;
  __shared__ std::int64_t tile_index;
  const int t = static_cast<int>(threadIdx.x);
  if (t == 0) tile_index = st.counter != nullptr ? static_cast<std::int64_t>(atomicAdd(st.counter, 1ull)) : blockIdx.x;
  __syncthreads();
  const std::int64_t tile = tile_index;
  const std::int64_t row = tile / tiles_per_row;
  const std::int64_t k = tile - row * tiles_per_row;
  const std::int64_t base = row * n + k * kScanTile;
  const std::int64_t left = n - k * kScanTile;
  const int len = static_cast<int>(left < kScanTile ? left : kScanTile);
  const T id = Op::template identity<T>();

  // Load (coalesced), padded with identities.
#pragma unroll
  for (int r = 0; r < static_cast<int>(kScanItems); ++r) {
    const int i = t + r * kScanThreads;
    sm[scan_slot<T>(i)] = i < len ? x[base + i] : id;
  }
  __syncthreads();

  // Step 1: the thread's group.
  T v[kScanItems];
#pragma unroll
  for (int j = 0; j < static_cast<int>(kScanItems); ++j) v[j] = sm[scan_slot<T>(t * static_cast<int>(kScanItems) + j)];
#pragma unroll
  for (int j = 1; j < static_cast<int>(kScanItems); ++j) v[j] = op(v[j - 1], v[j]);

  // Step 2: Kogge-Stone over the 32 group totals of each warp.
  const int lane = t % static_cast<int>(kScanWarp), warp = t / static_cast<int>(kScanWarp);
  T inc = v[kScanItems - 1];
#pragma unroll
  for (int d = 1; d < static_cast<int>(kScanWarp); d *= 2) {
    const T up = Api::shfl_up(inc, static_cast<unsigned>(d), static_cast<int>(kScanWarp));
    if (lane >= d) inc = op(up, inc);
  }
  T excl = Api::shfl_up(inc, 1u, static_cast<int>(kScanWarp));
  if (lane == 0) excl = id;
  if (lane == static_cast<int>(kScanWarp) - 1) warp_total[warp] = inc;
  __syncthreads();  // also: every thread has read its group from sm

  // Steps 3 and 4: the warp's prefix, in order from the identity, then the local values.
  T wp = id;
  for (int q = 0; q < warp; ++q) wp = op(wp, warp_total[q]);
  const T p = op(wp, excl);
#pragma unroll
  for (int j = 0; j < static_cast<int>(kScanItems); ++j) v[j] = op(p, v[j]);

  // Step 5, in the thread holding the tile's total.
  if (t == kScanThreads - 1) {
    T c = id;
    if (st.counter != nullptr) {
      const std::int64_t row_blocks = row * st.per_row;
      // Publish B(k, 0) and every block that this tile completes.
      T acc = v[kScanItems - 1];
      std::int64_t kk = k, off = 0, count = tiles_per_row;
      scan_publish(st, row_blocks + kk, acc);
      while ((kk & 1) != 0) {
        acc = op(scan_wait(st, row_blocks + off + kk - 1), acc);
        off += count;
        count >>= 1;
        kk >>= 1;
        scan_publish(st, row_blocks + off + kk, acc);
      }
      // The carry: blocks of k's binary decomposition, largest first.
      std::int64_t level_off[64];
      int levels = 0;
      for (std::int64_t o = 0, cnt = tiles_per_row; cnt > 0; cnt >>= 1) {
        level_off[levels++] = o;
        o += cnt;
      }
      std::int64_t pos = 0;
      for (int j = levels - 1; j >= 0; --j) {
        if (((k >> j) & 1) != 0) {
          c = op(c, scan_wait(st, row_blocks + level_off[j] + (pos >> j)));
          pos += std::int64_t(1) << j;
        }
      }
    }
    carry = c;
  }
  __syncthreads();
  const T cy = carry;
#pragma unroll
  for (int j = 0; j < static_cast<int>(kScanItems); ++j)
    sm[scan_slot<T>(t * static_cast<int>(kScanItems) + j)] = canonical_nan(op(cy, v[j]));
  __syncthreads();

  // Store (coalesced); exclusive: shifted by one, the row's last value dropped, y[row, 0] first.
  const std::int64_t shift = Exclusive ? 1 : 0;
  const std::int64_t row_end = (row + 1) * n;
#pragma unroll
  for (int r = 0; r < static_cast<int>(kScanItems); ++r) {
    const int i = t + r * kScanThreads;
    if (i < len && base + i + shift < row_end) y[base + i + shift] = sm[scan_slot<T>(i)];
  }
  if (Exclusive && k == 0 && t == 0) y[row * n] = scan_exclusive_first<T>(op);
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
  ScanCarries<T> st{nullptr, nullptr, nullptr, 0};
  void* scratch = nullptr;
  if (tiles > 1) {
    for (std::int64_t c = tiles; c > 0; c >>= 1) st.per_row += c;
    const std::int64_t blocks = rows * st.per_row;
    // counter, then the flags, then the values (aligned to 8 bytes).
    const std::size_t flag_bytes = (static_cast<std::size_t>(blocks) * sizeof(int) + 7) / 8 * 8;
    const std::size_t bytes = 8 + flag_bytes + static_cast<std::size_t>(blocks) * sizeof(T);
    Error e = Api::malloc_async(&scratch, bytes, s);
    if (e != Api::kSuccess) return e;
    auto* base = static_cast<unsigned char*>(scratch);
    st.counter = reinterpret_cast<unsigned long long*>(base);
    st.flags = reinterpret_cast<int*>(base + 8);
    st.values = reinterpret_cast<T*>(base + 8 + flag_bytes);
    const std::int64_t init_grid = clamp_grid((blocks + kBlockThreads - 1) / kBlockThreads, 4096);
    e = Api::launch(scan_init_kernel, dim3(static_cast<unsigned>(init_grid)), dim3(kBlockThreads), 0, s, st.counter,
                    st.flags, blocks);
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
