// SPDX-License-Identifier: Apache-2.0
// map_program (issue 16, fused expressions): ProgramKernels<Api, T> (kernels.hpp), a precompiled
// interpreter of porta_program_op lists, so that a fused expression written in plain C++ runs as
// one pass over memory without a compiler at run time.
//
// Each thread takes one 16-byte vector of every input (all loads issued first, as the map kernel of
// porta/detail/gpu/map.cuh does), then walks the program. The program sits in shared memory and
// every thread of a block reads the same op, so the op switch is uniform across the warp; the
// stack and the inputs are arrays of registers whose slots are chosen by switches (read_slot,
// write_slot) instead of a computed index, which would put them in local memory. Kernels come in
// two sizes of register file (inputs x stack slots: 2 x 4 and 8 x 8) so that a short program keeps
// the occupancy of a plain map. Every op is the functor of porta/detail/ops.hpp
// (backends/common/elementwise_ops.hpp), and these files build with -fmad=false: the eager chain's bits.
#pragma once

#include <cstdint>
#include <type_traits>

#include "backends/common/dtype.hpp"
#include "backends/common/elementwise_ops.hpp"
#include "backends/common/program.hpp"
#include "backends/gpu/kernels.hpp"
#include "porta/detail/gpu/api.cuh"
#include "porta/detail/ops.hpp"

namespace porta::detail::gpu {

template <class T>
struct ProgramArgs {
  porta_program_op ops[PORTA_PROGRAM_MAX_OPS];
  const T* in[PORTA_PROGRAM_MAX_INPUTS];
  std::int32_t nops;
  std::int32_t ninputs;
};

// s[k] for a k that is uniform across the warp, without indexing the array at run time.
template <int N, class P>
__device__ __forceinline__ P read_slot(const P (&s)[N], int k) {
  P r = s[0];
#pragma unroll
  for (int j = 1; j < N; ++j)
    if (k == j) r = s[j];
  return r;
}

template <int N, class P>
__device__ __forceinline__ void write_slot(P (&s)[N], int k, const P& v) {
#pragma unroll
  for (int j = 0; j < N; ++j)
    if (k == j) s[j] = v;
}

// The program's value for V elements whose inputs are in `in`. The top of the stack lives in `acc`
// and the slots below it in `st`, so that a unary op touches no slot and a load or a binary op one.
template <class T, int V, int NIn, int NSt>
__device__ __forceinline__ Pack<T, V> run_program(const porta_program_op* ops, int nops, const Pack<T, V> (&in)[NIn]) {
  Pack<T, V> st[NSt - 1];
  Pack<T, V> acc;
  int below = 0;  // values in st
  bool empty = true;
  for (int k = 0; k < nops; ++k) {
    const porta_program_op op = ops[k];
    if (op.kind == PORTA_PROGRAM_INPUT || op.kind == PORTA_PROGRAM_SCALAR) {
      if (!empty) write_slot(st, below++, acc);
      empty = false;
      if (op.kind == PORTA_PROGRAM_INPUT) {
        acc = read_slot(in, op.arg);
      } else {
        const T v = backend::scalar_value<T>(op.value);
#pragma unroll
        for (int e = 0; e < V; ++e) acc.v[e] = v;
      }
    } else if (op.kind == PORTA_PROGRAM_UNARY) {
      backend::with_unary_op(static_cast<porta_unary_op>(op.arg), 0, [&](auto f) {
#pragma unroll
        for (int e = 0; e < V; ++e) acc.v[e] = f(acc.v[e]);
        return 0;
      });
    } else {
      const Pack<T, V> below_top = read_slot(st, --below);
      // BINARY: op(below, top); BINARY_REV: op(top, below). One call of the functor either way.
      const bool rev = op.kind == PORTA_PROGRAM_BINARY_REV;
      const Pack<T, V> a = rev ? acc : below_top, b = rev ? below_top : acc;
      backend::with_binary_op(static_cast<porta_binary_op>(op.arg), 0, [&](auto f) {
#pragma unroll
        for (int e = 0; e < V; ++e) acc.v[e] = f(a.v[e], b.v[e]);
        return 0;
      });
    }
  }
  return acc;
}

static_assert(kBlockThreads >= PORTA_PROGRAM_MAX_OPS, "program_kernel copies one op per thread");

// Elements [0, nvec * V) as V-wide vectors (Vectorised: every pointer 16-byte aligned), the rest
// one by one. y may be one of the inputs: each element is read and written by one thread.
template <class T, int V, int NIn, int NSt>
__global__ void __launch_bounds__(kBlockThreads)
    program_kernel(const ProgramArgs<T> p, std::int64_t n, std::int64_t nvec, T* y) {
  __shared__ porta_program_op ops[PORTA_PROGRAM_MAX_OPS];
  // One op per thread (a computed index into the parameters is a constant-bank load, no copy).
  if (static_cast<int>(threadIdx.x) < p.nops) ops[threadIdx.x] = p.ops[threadIdx.x];
  __syncthreads();
  const int nops = p.nops;
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t nthreads = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t v = tid; v < nvec; v += nthreads) {
    Pack<T, V> in[NIn];
#pragma unroll
    for (int k = 0; k < NIn; ++k)
      if (k < p.ninputs) in[k] = *reinterpret_cast<const Pack<T, V>*>(p.in[k] + v * V);
    *reinterpret_cast<Pack<T, V>*>(y + v * V) = run_program<T, V, NIn, NSt>(ops, nops, in);
  }
  for (std::int64_t i = nvec * V + tid; i < n; i += nthreads) {
    Pack<T, 1> in[NIn];
#pragma unroll
    for (int k = 0; k < NIn; ++k)
      if (k < p.ninputs) in[k].v[0] = p.in[k][i];
    y[i] = run_program<T, 1, NIn, NSt>(ops, nops, in).v[0];
  }
}

// The stack depth the program reaches (the entry checked it).
inline int program_depth(const porta_program_op* ops, std::int32_t nops) {
  int depth = 0, most = 0;
  for (std::int32_t k = 0; k < nops; ++k) {
    if (ops[k].kind == PORTA_PROGRAM_INPUT || ops[k].kind == PORTA_PROGRAM_SCALAR) ++depth;
    if (ops[k].kind == PORTA_PROGRAM_BINARY || ops[k].kind == PORTA_PROGRAM_BINARY_REV) --depth;
    if (depth > most) most = depth;
  }
  return most;
}

template <class Api, class T, int NIn, int NSt>
int launch_program(const ProgramArgs<T>& p, std::int64_t n, T* y, void* stream) {
  constexpr int V = kVec16<T>;
  bool aligned = is_aligned(y, 16);
  for (int k = 0; k < p.ninputs; ++k) aligned = aligned && is_aligned(p.in[k], 16);
  const std::int64_t nvec = aligned ? n / V : 0;
  // One vector per thread over the whole array (no striding): blocks retire while the memory
  // system stays busy, what the built-in maps measured best on the H200.
  const std::int64_t work = nvec > 0 ? nvec : n;
  const std::int64_t grid = clamp_grid((work + kBlockThreads - 1) / kBlockThreads, kMaxGrid);
  return static_cast<int>(Api::launch(program_kernel<T, V, NIn, NSt>, static_cast<unsigned>(grid), kBlockThreads, 0,
                                      static_cast<typename Api::Stream>(stream), p, n, nvec, y));
}

template <class Api, class T>
int ProgramKernels<Api, T>::map_program(std::int64_t n, const porta_program_op* ops, std::int32_t nops,
                                        const T* const* inputs, std::int32_t ninputs, T* y, void* stream) {
  if (n <= 0) return 0;
  ProgramArgs<T> p{};
  for (std::int32_t k = 0; k < nops; ++k) p.ops[k] = ops[k];
  for (std::int32_t k = 0; k < ninputs; ++k) p.in[k] = inputs[k];
  p.nops = nops;
  p.ninputs = ninputs;
  if (ninputs <= 2 && program_depth(ops, nops) <= 4) return launch_program<Api, T, 2, 4>(p, n, y, stream);
  return launch_program<Api, T, PORTA_PROGRAM_MAX_INPUTS, PORTA_PROGRAM_MAX_STACK>(p, n, y, stream);
}

}  // namespace porta::detail::gpu
