// SPDX-License-Identifier: Apache-2.0
// map_program (fused expressions): ProgramKernels<Api, T> (kernels.hpp), a precompiled
// interpreter of porta_program_op lists, so that a fused expression written in plain C++ runs as
// one pass over memory without a compiler at run time.
//
// Each thread takes U 16-byte vectors of every input (all loads issued first, as the map kernel of
// porta/detail/gpu/map.cuh does), then walks the program once for all of them. The program sits in
// shared memory and every thread of a block reads the same op, so the op switch is uniform across
// the warp and paid once per U x V elements. The top of the stack is in registers; the values below
// it are in shared memory (a slot chosen at run time costs one access there, where registers cost a
// select per register and slot); the inputs are registers chosen by switches. Two kernels: short
// programs (at most 2 inputs, depth 3, such as sin(x)*cos(y)+x*y) take U = 4, the rest U = 1 with a
// stack of PORTA_PROGRAM_MAX_STACK. (The first version, U = 1 and every slot in registers, reached
// half of porta::map's bandwidth on the chain at 2^28 on the H200: the selects and the op dispatch
// per vector made it instruction-bound.) Every op is the functor of porta/detail/ops.hpp
// (backends/common/elementwise_ops.hpp), and these files build with -fmad=false, as the eager maps
// do: the eager chain's bits.
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

// in[k][u] for a k that is uniform across the warp, without indexing the array at run time (which
// would put the inputs in local memory).
template <int N, int U, class P>
__device__ __forceinline__ P read_slot(const P (&s)[N][U], int k, int u) {
  P r = s[0][u];
#pragma unroll
  for (int j = 1; j < N; ++j)
    if (k == j) r = s[j][u];
  return r;
}

// The values below the top of the stack, for U vectors of each thread of the block, in shared
// memory: slot j of vector u of thread t at (j * U + u) * kBlockThreads + t, so that a warp's
// accesses are 32 consecutive 16-byte packs (no bank conflicts) and a slot's index may vary at run
// time at the cost of one load or store (in registers it would cost a select per register and slot).
template <class T, int V, int U>
struct ProgramStack {
  Pack<T, V>* base;  // this thread's first pack
  __device__ __forceinline__ Pack<T, V>& at(int slot, int u) const { return base[(slot * U + u) * kBlockThreads]; }
};

// The program's value for U x V elements (U vectors of V) whose inputs are in `in`. The top of the
// stack lives in registers (`acc`), the values below it in `st`, so that a unary op touches no
// memory and a load or a binary op one slot.
template <class T, int V, int U, int NIn>
__device__ __forceinline__ void run_program(const porta_program_op* ops, int nops, const Pack<T, V> (&in)[NIn][U],
                                            const ProgramStack<T, V, U>& st, Pack<T, V> (&acc)[U]) {
  int below = 0;  // values in st
  bool empty = true;
  for (int k = 0; k < nops; ++k) {
    const porta_program_op op = ops[k];
    if (op.kind == PORTA_PROGRAM_INPUT || op.kind == PORTA_PROGRAM_SCALAR) {
      if (!empty) {
#pragma unroll
        for (int u = 0; u < U; ++u) st.at(below, u) = acc[u];
        ++below;
      }
      empty = false;
      if (op.kind == PORTA_PROGRAM_INPUT) {
#pragma unroll
        for (int u = 0; u < U; ++u) acc[u] = read_slot(in, op.arg, u);
      } else {
        const T v = backend::scalar_value<T>(op.value);
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
          for (int e = 0; e < V; ++e) acc[u].v[e] = v;
      }
    } else if (op.kind == PORTA_PROGRAM_UNARY) {
      backend::with_unary_op(static_cast<porta_unary_op>(op.arg), 0, [&](auto f) {
        if constexpr (op_defined_v<decltype(f), T>) {  // (the check refused the others)
#pragma unroll
          for (int u = 0; u < U; ++u)
#pragma unroll
            for (int e = 0; e < V; ++e) acc[u].v[e] = f(acc[u].v[e]);
        }
        return 0;
      });
    } else {
      --below;
      // BINARY: op(below, top); BINARY_REV: op(top, below). One call of the functor either way.
      const bool rev = op.kind == PORTA_PROGRAM_BINARY_REV;
      backend::with_binary_op(static_cast<porta_binary_op>(op.arg), 0, [&](auto f) {
        if constexpr (op_defined_v<decltype(f), T>) {
#pragma unroll
          for (int u = 0; u < U; ++u) {
            const Pack<T, V> under = st.at(below, u);
#pragma unroll
            for (int e = 0; e < V; ++e) acc[u].v[e] = rev ? f(acc[u].v[e], under.v[e]) : f(under.v[e], acc[u].v[e]);
          }
        }
        return 0;
      });
    }
  }
}

static_assert(kBlockThreads >= PORTA_PROGRAM_MAX_OPS, "program_kernel copies one op per thread");

// Elements [0, nvec * V) as V-wide vectors (every pointer 16-byte aligned), U vectors per thread and
// step, all loads issued before the program runs (several in flight per thread, as porta::map's
// kernel does); the rest one by one. y may be one of the inputs: each element is read and written by
// one thread.
template <class T, int V, int U, int NIn, int NSt>
__global__ void __launch_bounds__(kBlockThreads)
    program_kernel(const ProgramArgs<T> p, std::int64_t n, std::int64_t nvec, T* y) {
  __shared__ porta_program_op ops[PORTA_PROGRAM_MAX_OPS];
  __shared__ Pack<T, V> stack_mem[(NSt - 1) * U * kBlockThreads];
  // One op per thread (a computed index into the parameters is a constant-bank load, no copy).
  if (static_cast<int>(threadIdx.x) < p.nops) ops[threadIdx.x] = p.ops[threadIdx.x];
  __syncthreads();
  const int nops = p.nops;
  const int ninputs = p.ninputs;
  const ProgramStack<T, V, U> st{stack_mem + threadIdx.x};
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x * U;
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * blockDim.x * U + threadIdx.x; base < nvec;
       base += step) {
    Pack<T, V> in[NIn][U];
#pragma unroll
    for (int k = 0; k < NIn; ++k)
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const std::int64_t v = base + static_cast<std::int64_t>(u) * kBlockThreads;
        if (k < ninputs && v < nvec) {
          in[k][u] = *reinterpret_cast<const Pack<T, V>*>(p.in[k] + v * V);
        } else {
          in[k][u] = Pack<T, V>{};
        }
      }
    Pack<T, V> acc[U];
    run_program<T, V, U, NIn>(ops, nops, in, st, acc);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t v = base + static_cast<std::int64_t>(u) * kBlockThreads;
      if (v < nvec) *reinterpret_cast<Pack<T, V>*>(y + v * V) = acc[u];
    }
  }
  const ProgramStack<T, 1, 1> st1{reinterpret_cast<Pack<T, 1>*>(stack_mem) + threadIdx.x};
  for (std::int64_t i = nvec * V + static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    Pack<T, 1> in[NIn][1];
#pragma unroll
    for (int k = 0; k < NIn; ++k) in[k][0].v[0] = k < ninputs ? p.in[k][i] : T{};
    Pack<T, 1> acc[1];
    run_program<T, 1, 1, NIn>(ops, nops, in, st1, acc);
    y[i] = acc[0].v[0];
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

template <class Api, class T, int U, int NIn, int NSt>
int launch_program(const ProgramArgs<T>& p, std::int64_t n, T* y, void* stream) {
  constexpr int V = kVec16<T>;
  bool aligned = is_aligned(y, 16);
  for (int k = 0; k < p.ninputs; ++k) aligned = aligned && is_aligned(p.in[k], 16);
  const std::int64_t nvec = aligned ? n / V : 0;
  // U vectors per thread over the whole array (no striding): blocks retire while the memory
  // system stays busy, what the built-in maps measured best on the H200.
  const std::int64_t work = nvec > 0 ? (nvec + U - 1) / U : n;
  const std::int64_t grid = clamp_grid((work + kBlockThreads - 1) / kBlockThreads, kMaxGrid);
  return static_cast<int>(Api::launch(program_kernel<T, V, U, NIn, NSt>, static_cast<unsigned>(grid), kBlockThreads, 0,
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
  // A short program: four vectors per thread (the dispatch of each op paid once for them, four
  // loads of every input in flight); a long one: one, so that its deep stack fits in shared memory.
  if (ninputs <= 2 && program_depth(ops, nops) <= 3) return launch_program<Api, T, 4, 2, 3>(p, n, y, stream);
  return launch_program<Api, T, 1, PORTA_PROGRAM_MAX_INPUTS, PORTA_PROGRAM_MAX_STACK>(p, n, y, stream);
}

}  // namespace porta::detail::gpu
