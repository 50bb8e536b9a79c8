// SPDX-License-Identifier: Apache-2.0
// Built-in reductions: definitions of ReduceKernels<Api, T> (kernels.hpp) on top of the one
// canonical GPU reduction of porta/detail/gpu/reduce.cuh, which user transform_reduce shares.
// Compile the instantiations with contraction off (-fmad=false / -ffp-contract=off): the products
// of SUMSQ and dot use mul_rn already, this keeps anything else from being fused.
#pragma once

#include <cstdint>

#include "backends/gpu/kernels.hpp"
#include "porta/detail/gpu/api.cuh"
#include "porta/detail/gpu/reduce.cuh"
#include "porta/detail/ops.hpp"

namespace porta::detail::gpu {

// Runs the canonical reduction with partials from the stream-ordered pool (freed on the stream, so
// the memory returns to the pool as soon as the kernels that use it are done).
template <class Api, class T, class Op, class L>
int reduce_with_scratch(const L& ld, Op op, std::int64_t outer, std::int64_t n, std::int64_t inner, T* y,
                        void* stream) {
  const auto s = static_cast<typename Api::Stream>(stream);
  const std::int64_t need = reduce_scratch_elems(outer, n, inner);
  void* scratch = nullptr;
  if (need > 0) {
    const typename Api::Error e = Api::malloc_async(&scratch, static_cast<std::size_t>(need) * sizeof(T), s);
    if (e != Api::kSuccess) return static_cast<int>(e);
  }
  typename Api::Error e = reduce_run<Api, T>(ld, op, outer, n, inner, y, static_cast<T*>(scratch), s);
  if (scratch != nullptr) {
    const typename Api::Error f = Api::free_async(scratch, s);
    if (e == Api::kSuccess) e = f;
  }
  return static_cast<int>(e);
}

// The same into y of T, accumulated in accumulate_t<T>: a 16-bit T's float results go to a float
// buffer from the pool first and are rounded once, by the map family's cast.
template <class Api, class T, class Op, class L>
int reduce_rounded(const L& ld, Op op, std::int64_t outer, std::int64_t n, std::int64_t inner, T* y, void* stream) {
  using A = accumulate_t<T>;
  if constexpr (std::is_same_v<A, T>) {
    return reduce_with_scratch<Api, T>(ld, op, outer, n, inner, y, stream);
  } else {
    const auto s = static_cast<typename Api::Stream>(stream);
    const std::int64_t outputs = outer * inner;
    void* acc = nullptr;
    typename Api::Error e = Api::malloc_async(&acc, static_cast<std::size_t>(outputs) * sizeof(A), s);
    if (e != Api::kSuccess) return static_cast<int>(e);
    int code = reduce_with_scratch<Api, A>(ld, op, outer, n, inner, static_cast<A*>(acc), stream);
    if (code == 0) code = MapKernels<Api, T>::cast_from(PORTA_F32, outputs, acc, y, stream);
    e = Api::free_async(acc, s);
    return code != 0 ? code : static_cast<int>(e);
  }
}

template <class Api, class T>
int ReduceKernels<Api, T>::reduce(porta_reduce_op op, std::int64_t outer, std::int64_t n, std::int64_t inner,
                                  const T* x, T* y, void* stream) {
  using A = accumulate_t<T>;
  const PlainLoad<T> in{x};
  switch (op) {
    case PORTA_REDUCE_SUM:
      return reduce_rounded<Api, T>(in, SumOp{}, outer, n, inner, y, stream);
    case PORTA_REDUCE_PROD:
      return reduce_rounded<Api, T>(in, ProdOp{}, outer, n, inner, y, stream);
    case PORTA_REDUCE_MIN:
    case PORTA_REDUCE_MAX:
    case PORTA_REDUCE_SUMSQ:
      if constexpr (is_complex_v<T>) {  // the entry's checks refused these for complex types
        break;
      } else if (op == PORTA_REDUCE_MIN) {
        return reduce_rounded<Api, T>(in, MinOp{}, outer, n, inner, y, stream);
      } else if (op == PORTA_REDUCE_MAX) {
        return reduce_rounded<Api, T>(in, MaxOp{}, outer, n, inner, y, stream);
      } else {
        return reduce_rounded<Api, T>(SquareLoad<A, PlainLoad<T>>{in}, SumOp{}, outer, n, inner, y, stream);
      }
    case PORTA_REDUCE_COUNT:
      break;
  }
  return static_cast<int>(Api::kInvalidValue);  // the entry validated op: unreachable
}

template <class Api, class T>
int ReduceKernels<Api, T>::dot(std::int64_t n, const T* x, const T* w, T* y, void* stream) {
  using A = accumulate_t<T>;
  return reduce_rounded<Api, T>(DotLoad<A, PlainLoad<T>>{PlainLoad<T>{x}, PlainLoad<T>{w}}, SumOp{}, 1, n, 1, y,
                                stream);
}

}  // namespace porta::detail::gpu
