// SPDX-License-Identifier: Apache-2.0
// The one GPU implementation of porta's canonical reduction order (porta/detail/reduce_order.hpp),
// shared by the built-in reductions of the CUDA and HIP plugins and by user transform_reduce.
//
// The contract, restated in the two forms the kernels use. A chunk of len <= kReduceChunk
// elements has kReduceLanes = 1024 lanes; lane l folds y[l], y[l + 1024], ... in order, starting
// from the op's identity; then the lanes meet in the tree "for s = 512 .. 1: acc[l] = op(acc[l],
// acc[l + s])". Equivalently, read the lanes in bit-reversed order (leaf j holds lane
// bitrev10(j)): the tree is the balanced in-order pairwise tree over leaves 0..1023, whose root is
// op(tree(leaves 0..511), tree(leaves 512..1023)). Lanes that hold no element hold the identity,
// and op(a, identity) == a exactly for every op, so a chunk whose lanes past P = min(1024,
// pow2ceil(len)) are empty is the same tree over P leaves (lane bitrev_p(j)).
//
// 1. reduce_rows_kernel, for contiguous rows (full reductions, dot, user transform_reduce, axis
//    reductions of the last axis): a block of 256 threads owns one chunk at a time; thread t
//    holds lanes 4t..4t+3 and reads them with 16-byte loads. The tree: every thread parks its 4
//    lanes in shared memory; after one barrier, the first 32 threads each take the 8 slots t, t+32,
//    ..., t+224 and do the steps s = 512, 256, 128 (thread pairs t / t+128, t / t+64, t / t+32) in
//    registers, then s = 64 .. 4 (thread pairs t / t+16 .. t / t+1) with shuffles inside that group
//    of 32, then s = 2 and 1 inside the thread. Every step pairs exactly the lanes of the canonical
//    tree, so the bits do not depend on the warp size: a shuffle never crosses 32 lanes, which is a
//    whole warp on NVIDIA and on wave32 AMD GPUs, and half a wavefront on wave64 ones.
// 2. reduce_group_kernel, for rows of at most 128 elements: the block mapping shrunk to G <= 32
//    threads per row (the lane tree over 4G lanes), several rows per block.
// 3. reduce_strided_kernel, for columns ([outer, n, inner] with inner > 1): a block
//    of TX x TY threads serves TX outputs (consecutive along inner: coalesced), each chunk split
//    into TY in-order subtrees of leaves; a thread streams its leaves in order and merges them with
//    a binary counter (the in-order tree needs one pending value per level), then the TY subtree
//    results meet in the in-order tree through shared memory.
// Chunks larger than one go through partials: p[c] = chunk c, then the canonical reduction of p,
// recursively, exactly as reduce_canonical on the CPU.
#pragma once

#include <cstddef>
#include <cstdint>

#include "porta/detail/gpu/api.cuh"
#include "porta/detail/ops.hpp"
#include "porta/detail/reduce_order.hpp"

namespace porta::detail::gpu {

inline constexpr int kReduceThreads = static_cast<int>(kReduceLanes / 4);
static_assert(kReduceThreads == 256, "the block mapping holds 4 lanes per thread");
inline constexpr int kReduceGroup = 32;  // threads of the shuffle stage; must divide every warp size
// Rows of the last axis up to this long use the group kernel, longer ones the block kernel.
inline constexpr std::int64_t kReduceShortRow = 4 * kReduceGroup;

// Lanes 4t..4t+3 of thread t.
template <class T>
struct alignas(16) Quad {
  T x, y, z, w;
};

template <class T, class Op>
__device__ __forceinline__ void combine4(Quad<T>& a, const Quad<T>& b, Op op) {
  a.x = op(a.x, b.x);
  a.y = op(a.y, b.y);
  a.z = op(a.z, b.z);
  a.w = op(a.w, b.w);
}

template <class T>
__device__ __forceinline__ Quad<T> load_quad_aligned(const T* p) {
  if constexpr (sizeof(T) == 4) {
    const Pack<T, 4> a = *reinterpret_cast<const Pack<T, 4>*>(p);
    return {a.v[0], a.v[1], a.v[2], a.v[3]};
  } else {
    const Pack<T, 2> a = *reinterpret_cast<const Pack<T, 2>*>(p);
    const Pack<T, 2> b = *reinterpret_cast<const Pack<T, 2>*>(p + 2);
    return {a.v[0], a.v[1], b.v[0], b.v[1]};
  }
}

// ---- loaders: element i of the sequence being reduced -------------------------------------------
// load4<true>(i) may use vector loads; the kernels call it only where vec_ok(chunk start) holds
// (i is then chunk start + a multiple of 4).

template <class T>
struct ContigLoad {
  const T* p;
  __device__ T load(std::int64_t i) const { return p[i]; }
  __device__ bool vec_ok(std::int64_t i) const { return is_aligned(p + i, 16); }
  template <bool Vec>
  __device__ Quad<T> load4(std::int64_t i) const {
    if constexpr (Vec) {
      return load_quad_aligned(p + i);
    } else {
      return {p[i], p[i + 1], p[i + 2], p[i + 3]};
    }
  }
};

// 16-bit floats, each widened (exactly) to float, which the reduction accumulates in
// (ops.hpp's accumulate_t). Four of them are one 8-byte load.
template <class H>
struct WidenLoad {
  const H* p;
  __device__ float load(std::int64_t i) const { return static_cast<float>(p[i]); }
  __device__ bool vec_ok(std::int64_t i) const { return is_aligned(p + i, 8); }
  template <bool Vec>
  __device__ Quad<float> load4(std::int64_t i) const {
    if constexpr (Vec) {
      const Pack<H, 4> a = *reinterpret_cast<const Pack<H, 4>*>(p + i);
      return {static_cast<float>(a.v[0]), static_cast<float>(a.v[1]), static_cast<float>(a.v[2]),
              static_cast<float>(a.v[3])};
    } else {
      return {load(i), load(i + 1), load(i + 2), load(i + 3)};
    }
  }
};
// The loader of a plain array of T: its elements as accumulate_t<T>.
template <class T>
using PlainLoad = std::conditional_t<is_half_v<T>, WidenLoad<T>, ContigLoad<T>>;

// x[i] * x[i], the product rounded before it is summed (PORTA_REDUCE_SUMSQ, norm2); In loads
// x as T (a 16-bit x through WidenLoad, as float).
template <class T, class In = ContigLoad<T>>
struct SquareLoad {
  In in;
  __device__ T load(std::int64_t i) const {
    const T v = in.load(i);
    return mul_rn(v, v);
  }
  __device__ bool vec_ok(std::int64_t i) const { return in.vec_ok(i); }
  template <bool Vec>
  __device__ Quad<T> load4(std::int64_t i) const {
    const Quad<T> v = in.template load4<Vec>(i);
    return {mul_rn(v.x, v.x), mul_rn(v.y, v.y), mul_rn(v.z, v.z), mul_rn(v.w, v.w)};
  }
};

// x[i] * w[i], rounded before the sum (dot).
template <class T, class In = ContigLoad<T>>
struct DotLoad {
  In a, b;
  __device__ T load(std::int64_t i) const { return mul_rn(a.load(i), b.load(i)); }
  __device__ bool vec_ok(std::int64_t i) const { return a.vec_ok(i) && b.vec_ok(i); }
  template <bool Vec>
  __device__ Quad<T> load4(std::int64_t i) const {
    const Quad<T> u = a.template load4<Vec>(i);
    const Quad<T> v = b.template load4<Vec>(i);
    return {mul_rn(u.x, v.x), mul_rn(u.y, v.y), mul_rn(u.z, v.z), mul_rn(u.w, v.w)};
  }
};

// f(i) of a user's transform_reduce.
template <class T, class F>
struct FuncLoad {
  F f;
  __device__ T load(std::int64_t i) const { return static_cast<T>(f(i)); }
  __device__ bool vec_ok(std::int64_t) const { return true; }
  template <bool Vec>
  __device__ Quad<T> load4(std::int64_t i) const {
    return {static_cast<T>(f(i)), static_cast<T>(f(i + 1)), static_cast<T>(f(i + 2)), static_cast<T>(f(i + 3))};
  }
};

// ---- block mapping (contiguous rows) ------------------------------------------------------------

// Step 1 of a chunk for lanes 4t..4t+3: acc[l] = op(acc[l], y[k * 1024 + l]) for k = 0, 1, ...
template <int Batch, bool Vec, class T, class Op, class L>
__device__ __forceinline__ Quad<T> chunk_lanes(const L& ld, std::int64_t base, int len, int t, Op op) {
  const T id = Op::template identity<T>();
  Quad<T> acc{id, id, id, id};
  const int l0 = 4 * t;
  const int full = len / static_cast<int>(kReduceLanes);  // k-steps that give every lane an element
  int k = 0;
  for (; k + Batch <= full; k += Batch) {
    Quad<T> v[Batch];
#pragma unroll
    for (int j = 0; j < Batch; ++j) v[j] = ld.template load4<Vec>(base + (k + j) * kReduceLanes + l0);
#pragma unroll
    for (int j = 0; j < Batch; ++j) combine4(acc, v[j], op);
  }
  for (; k < full; ++k) combine4(acc, ld.template load4<Vec>(base + k * kReduceLanes + l0), op);
  const int rem = len - full * static_cast<int>(kReduceLanes);  // lanes [0, rem) get one more element
  if (l0 < rem) {
    const std::int64_t i = base + full * kReduceLanes + l0;
    if (l0 + 4 <= rem) {
      combine4(acc, ld.template load4<Vec>(i), op);
    } else {
      acc.x = op(acc.x, ld.load(i));
      if (l0 + 1 < rem) acc.y = op(acc.y, ld.load(i + 1));
      if (l0 + 2 < rem) acc.z = op(acc.z, ld.load(i + 2));
    }
  }
  return acc;
}

// Step 2: the lane tree. `buf` holds kReduceThreads quads; the result is valid in thread 0. Callers
// alternate between two buffers, so one barrier per chunk is enough: a thread can only overwrite a
// buffer after the barrier of the next chunk, which the readers of this one have passed.
template <class Api, class T, class Op>
__device__ __forceinline__ T block_tree(const Quad<T>& acc, Quad<T>* buf, int t, Op op) {
  buf[t] = acc;
  __syncthreads();
  T result = acc.x;
  if (t < kReduceGroup) {
    static_assert(kReduceThreads / kReduceGroup == 8, "the slot tree below is written for 8 slots");
    Quad<T> v0 = buf[t], v1 = buf[t + 32], v2 = buf[t + 64], v3 = buf[t + 96];
    const Quad<T> v4 = buf[t + 128], v5 = buf[t + 160], v6 = buf[t + 192], v7 = buf[t + 224];
    // Thread pairs (t, t + 128), (t, t + 64), (t, t + 32): lane steps s = 512, 256, 128. (Written
    // out: a loop over a Quad array here ends up in local memory for the branchy min/max ops.)
    combine4(v0, v4, op);
    combine4(v1, v5, op);
    combine4(v2, v6, op);
    combine4(v3, v7, op);
    combine4(v0, v2, op);
    combine4(v1, v3, op);
    combine4(v0, v1, op);
    // Thread pairs (t, t + o) for o = 16 .. 1: lane steps s = 64 .. 4.
#pragma unroll
    for (int o = kReduceGroup / 2; o >= 1; o /= 2) {
      Quad<T> u;
      u.x = Api::shfl_down(v0.x, o, kReduceGroup);
      u.y = Api::shfl_down(v0.y, o, kReduceGroup);
      u.z = Api::shfl_down(v0.z, o, kReduceGroup);
      u.w = Api::shfl_down(v0.w, o, kReduceGroup);
      combine4(v0, u, op);
    }
    // Lane steps s = 2 and 1 inside the thread.
    result = op(op(v0.x, v0.z), op(v0.y, v0.w));
  }
  return result;
}

// out[r * chunks + c] = chunk c of row r of x viewed as rows x n (row r starts at element r * n).
// The final pass (chunks == 1) writes the canonical NaN.
template <class Api, int Batch, class T, class Op, class L>
__global__ void __launch_bounds__(kReduceThreads)
    reduce_rows_kernel(L ld, Op op, std::int64_t rows, std::int64_t n, std::int64_t chunks, T* out) {
  __shared__ Quad<T> buf[2][kReduceThreads];
  const int t = static_cast<int>(threadIdx.x);
  const std::int64_t items = rows * chunks;
  int parity = 0;
  for (std::int64_t it = blockIdx.x; it < items; it += gridDim.x) {
    const std::int64_t row = it / chunks;
    const std::int64_t c = it - row * chunks;
    const std::int64_t base = row * n + c * kReduceChunk;
    const std::int64_t left = n - c * kReduceChunk;
    const int len = static_cast<int>(left < kReduceChunk ? left : kReduceChunk);
    const Quad<T> acc = ld.vec_ok(base) ? chunk_lanes<Batch, true, T>(ld, base, len, t, op)
                                        : chunk_lanes<Batch, false, T>(ld, base, len, t, op);
    const T r = block_tree<Api, T>(acc, buf[parity], t, op);
    parity ^= 1;
    if (t == 0) out[it] = chunks == 1 ? canonical_nan(r) : r;
  }
}

// ---- group mapping (short rows) -----------------------------------------------------------------

// Rows of n <= 4G elements, G threads per row (G a power of two up to kReduceGroup). Only lanes
// 0..n-1 hold an element and the others hold the identity, so the steps s >= P = 4G of the lane
// tree pair identities only and change nothing: what is left is the tree over P lanes. Thread t of
// a group holds lanes 4t..4t+3 as in the block mapping, the steps s = 2G .. 4 are the shuffles
// t / t + o for o = G/2 .. 1 inside the group, s = 2 and 1 happen in the thread. A row's loads are
// one coalesced 16-byte access per thread. This is always the last pass (n <= 128 is one chunk).
template <class Api, class T, class Op, class L>
__global__ void __launch_bounds__(kReduceThreads)
    reduce_group_kernel(L ld, Op op, std::int64_t rows, std::int64_t n, int group, T* out) {
  const int t = static_cast<int>(threadIdx.x) % group;
  const int rows_per_block = kReduceThreads / group;
  const int len = static_cast<int>(n);
  const int l0 = 4 * t;
  // The loop bound is the same for the whole block, so every lane of every warp reaches every
  // shuffle (rows past the end carry identities).
  for (std::int64_t r0 = static_cast<std::int64_t>(blockIdx.x) * rows_per_block; r0 < rows;
       r0 += static_cast<std::int64_t>(gridDim.x) * rows_per_block) {
    const std::int64_t row = r0 + static_cast<int>(threadIdx.x) / group;
    const T id = Op::template identity<T>();
    Quad<T> acc{id, id, id, id};
    if (row < rows && l0 < len) {
      const std::int64_t i = row * n + l0;
      if (l0 + 4 <= len) {
        combine4(acc, ld.vec_ok(row * n) ? ld.template load4<true>(i) : ld.template load4<false>(i), op);
      } else {
        acc.x = op(acc.x, ld.load(i));
        if (l0 + 1 < len) acc.y = op(acc.y, ld.load(i + 1));
        if (l0 + 2 < len) acc.z = op(acc.z, ld.load(i + 2));
      }
    }
    for (int o = group / 2; o >= 1; o /= 2) {
      Quad<T> u;
      u.x = Api::shfl_down(acc.x, o, group);
      u.y = Api::shfl_down(acc.y, o, group);
      u.z = Api::shfl_down(acc.z, o, group);
      u.w = Api::shfl_down(acc.w, o, group);
      combine4(acc, u, op);
    }
    const T r = op(op(acc.x, acc.z), op(acc.y, acc.w));
    if (t == 0 && row < rows) out[row] = canonical_nan(r);
  }
}

// ---- strided mapping (columns, short rows) ------------------------------------------------------

PORTA_HOST_DEVICE inline int reduce_leaf_bits(int len) {
  // log2 of P = min(kReduceLanes, pow2ceil(len)); len 0 and 1 give 0.
  int p = 0;
  while (p < 10 && (1 << p) < len) ++p;
  return p;
}

// Lane l of a chunk whose element q sits at x[base + q * stride]: the fold of step 1.
template <class T, class L, class Op>
__device__ __forceinline__ T strided_lane(const L& ld, std::int64_t base, std::int64_t stride, int l, int len, Op op) {
  T acc = Op::template identity<T>();
  if (l >= len) return acc;
  const int steps = (len - 1 - l) / static_cast<int>(kReduceLanes) + 1;
  int k = 0;
  constexpr int kB = 8;
  for (; k + kB <= steps; k += kB) {
    T v[kB];
#pragma unroll
    for (int j = 0; j < kB; ++j) v[j] = ld.load(base + ((k + j) * kReduceLanes + l) * stride);
#pragma unroll
    for (int j = 0; j < kB; ++j) acc = op(acc, v[j]);
  }
  for (; k < steps; ++k) acc = op(acc, ld.load(base + (k * kReduceLanes + l) * stride));
  return acc;
}

// The in-order tree over leaves [j0, j0 + count) of a chunk of 2^p leaves; count is a power of two.
// A binary counter of pending left subtrees (one per level) keeps everything in registers.
template <class T, class L, class Op>
__device__ __forceinline__ T strided_subtree(const L& ld, std::int64_t base, std::int64_t stride, int len, int p,
                                             int j0, int count, Op op) {
  T pending[10];
  T v = Op::template identity<T>();
  for (int q = 0; q < count; ++q) {
    const int j = j0 + q;
    const int l = p == 0 ? 0 : static_cast<int>(__brev(static_cast<unsigned>(j)) >> (32 - p));
    v = strided_lane<T>(ld, base, stride, l, len, op);
    // Merge with the pending left subtrees of the levels where q has 1-bits, then park the result at
    // the lowest 0-bit. (Predicated instead of a break, which would put pending[] in local memory.)
    bool open = true;
#pragma unroll
    for (int d = 0; d < 10; ++d) {
      if (open) {
        if ((q >> d) & 1) {
          v = op(pending[d], v);
        } else {
          pending[d] = v;
          open = false;
        }
      }
    }
  }
  return v;
}

// x viewed as [outer, n, inner], output u = o * inner + i reduces x[(o * n + q) * inner + i] over q.
// out[(o * chunks + c) * inner + i] = chunk c of output u. Block: TX (outputs) x TY (subtrees).
template <class Api, class T, class Op, class L>
__global__ void __launch_bounds__(kReduceThreads)
    reduce_strided_kernel(L ld, Op op, std::int64_t outer, std::int64_t n, std::int64_t inner, std::int64_t chunks,
                          T* out) {
  __shared__ T sm[kReduceThreads];
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int TX = static_cast<int>(blockDim.x), TY = static_cast<int>(blockDim.y);
  const std::int64_t outputs = outer * inner;
  const std::int64_t tiles = (outputs + TX - 1) / TX;
  const std::int64_t items = tiles * chunks;
  for (std::int64_t it = blockIdx.x; it < items; it += gridDim.x) {
    const std::int64_t tile = it / chunks;
    const std::int64_t c = it - tile * chunks;
    const std::int64_t u = tile * TX + tx;
    const std::int64_t left = n - c * kReduceChunk;
    const int len = static_cast<int>(left < kReduceChunk ? left : kReduceChunk);
    const int p = reduce_leaf_bits(len);
    const int leaves = 1 << p;
    const int per = leaves >= TY ? leaves / TY : 1;
    const int j0 = ty * per;
    std::int64_t o = 0, i = 0;
    T r = Op::template identity<T>();
    if (u < outputs) {
      o = u / inner;
      i = u - o * inner;
      if (j0 < leaves) r = strided_subtree<T>(ld, (o * n + c * kReduceChunk) * inner + i, inner, len, p, j0, per, op);
    }
    // Subtrees ty = 0 .. TY-1 are consecutive in leaf order: pair neighbours, bottom up.
    sm[ty * TX + tx] = r;
    __syncthreads();
    for (int h = TY / 2; h >= 1; h /= 2) {
      T v = r;
      if (ty < h) v = op(sm[(2 * ty) * TX + tx], sm[(2 * ty + 1) * TX + tx]);
      __syncthreads();
      if (ty < h) sm[ty * TX + tx] = v;
      __syncthreads();
    }
    if (ty == 0 && u < outputs) {
      const T res = sm[tx];
      out[(o * chunks + c) * inner + i] = chunks == 1 ? canonical_nan(res) : res;
    }
    // sm[tx] is read only by its own thread (ty == 0), which writes it next: no barrier needed.
  }
}

// ---- host side ----------------------------------------------------------------------------------

inline std::int64_t reduce_chunks(std::int64_t n) {
  return n <= kReduceChunk ? 1 : reduce_chunk_count(n);
}

// Elements of temporary memory the reduction of [outer, n, inner] needs for its partials.
inline std::int64_t reduce_scratch_elems(std::int64_t outer, std::int64_t n, std::int64_t inner) {
  std::int64_t total = 0;
  while (n > kReduceChunk) {
    n = reduce_chunk_count(n);
    total += outer * inner * n;
  }
  return total;
}

// Block shape of the strided kernel: TX outputs x TY = 256 / TX subtrees. Few outputs or long
// chunks get more subtrees (more threads per output); TY never exceeds the leaves of a chunk.
inline void reduce_strided_shape(std::int64_t outputs, std::int64_t n, std::int64_t chunks, int* tx, int* ty) {
  const int len = static_cast<int>(n < kReduceChunk ? n : kReduceChunk);
  const int leaves = 1 << reduce_leaf_bits(len);
  int x = 1;
  while (x < kReduceThreads && x < outputs) x *= 2;
  const int min_x = kReduceThreads / leaves > 1 ? kReduceThreads / leaves : 1;
  if (x < min_x) x = min_x;
  constexpr std::int64_t kWantThreads = std::int64_t(1) << 20;  // a few waves on the largest GPUs
  while (x > 8 && x / 2 >= min_x && ((outputs + x - 1) / x) * kReduceThreads * chunks < kWantThreads) x /= 2;
  *tx = x;
  *ty = kReduceThreads / x;
}

// One pass: out gets reduce_chunks(n) chunk results per output ([outer][chunks][inner]).
template <class Api, class T, class Op, class L>
typename Api::Error reduce_pass(const L& ld, Op op, std::int64_t outer, std::int64_t n, std::int64_t inner, T* out,
                                typename Api::Stream s) {
  const std::int64_t chunks = reduce_chunks(n);
  if (inner == 1 && n <= kReduceShortRow) {
    int group = 1;
    while (4 * group < n) group *= 2;
    const std::int64_t rows_per_block = kReduceThreads / group;
    const std::int64_t grid = clamp_grid((outer + rows_per_block - 1) / rows_per_block, kMaxGrid);
    return Api::launch(reduce_group_kernel<Api, T, Op, L>, static_cast<unsigned>(grid), kReduceThreads, 0, s, ld, op,
                       outer, n, group, out);
  }
  if (inner == 1) {
    // Api::kReduceBatch and kReduceWaves: the vendor's launch policy (api_cuda.cuh).
    auto kernel = reduce_rows_kernel<Api, Api::kReduceBatch, T, Op, L>;
    const std::int64_t items = outer * chunks;
    std::int64_t grid = items;
    if (Api::kReduceWaves > 0 || items > kMaxGrid) {
      std::int64_t resident = 0;
      const typename Api::Error e = resident_grid<Api>(kernel, kReduceThreads, 0, &resident);
      if (e != Api::kSuccess) return e;
      grid = clamp_grid(items, resident * (Api::kReduceWaves > 0 ? Api::kReduceWaves : 64));
    }
    return Api::launch(kernel, static_cast<unsigned>(grid), kReduceThreads, 0, s, ld, op, outer, n, chunks, out);
  }
  auto kernel = reduce_strided_kernel<Api, T, Op, L>;
  int tx = 0, ty = 0;
  reduce_strided_shape(outer * inner, n, chunks, &tx, &ty);
  const std::int64_t items = ((outer * inner + tx - 1) / tx) * chunks;
  std::int64_t resident = 0;
  const typename Api::Error e = resident_grid<Api>(kernel, kReduceThreads, 0, &resident);
  if (e != Api::kSuccess) return e;
  const std::int64_t grid = clamp_grid(items, resident * 4);
  return Api::launch(kernel, static_cast<unsigned>(grid), dim3(tx, ty), 0, s, ld, op, outer, n, inner, chunks, out);
}

// y[outer * inner] = the canonical reductions of x viewed as [outer, n, inner]; scratch holds
// reduce_scratch_elems(outer, n, inner) elements (unused when n <= kReduceChunk). Asynchronous.
template <class Api, class T, class Op, class L>
typename Api::Error reduce_run(const L& ld, Op op, std::int64_t outer, std::int64_t n, std::int64_t inner, T* y,
                               T* scratch, typename Api::Stream s) {
  if (outer * inner == 0) return Api::kSuccess;
  if (n <= kReduceChunk) return reduce_pass<Api, T>(ld, op, outer, n, inner, y, s);
  const std::int64_t m = reduce_chunk_count(n);
  const typename Api::Error e = reduce_pass<Api, T>(ld, op, outer, n, inner, scratch, s);
  if (e != Api::kSuccess) return e;
  return reduce_run<Api, T>(ContigLoad<T>{scratch}, op, outer, m, inner, y, scratch + outer * m * inner, s);
}

}  // namespace porta::detail::gpu
