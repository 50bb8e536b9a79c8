// SPDX-License-Identifier: Apache-2.0
// Reductions over host buffers of a run-time dtype with porta's op semantics (ops.hpp): what the
// thread engine and the MPI plugin's user-defined MPI_Ops apply, so that every host transport
// combines ranks exactly as porta's own reductions combine elements.
#pragma once

#include <cstdint>
#include <cstring>

#include "porta/abi/backend_v1.h"
#include "porta/detail/ops.hpp"

namespace porta::detail::dist {

// f(T{}) for the C++ type of dt; false for a dtype outside the enum.
template <class F>
bool with_dtype(porta_dtype dt, F&& f) {
  switch (dt) {
    case PORTA_F32:
      f(float{});
      return true;
    case PORTA_F64:
      f(double{});
      return true;
    case PORTA_I32:
      f(std::int32_t{});
      return true;
    case PORTA_I64:
      f(std::int64_t{});
      return true;
  }
  return false;
}

template <class T, class Op>
void combine_as(Op op, const void* in, void* inout, std::int64_t n) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (std::int64_t i = 0; i < n; ++i) b[i] = op(b[i], a[i]);
}

// inout[i] = op(inout[i], in[i]) for i < n. False for an op or dtype it does not know.
inline bool combine(porta_dtype dt, porta_reduce_op op, const void* in, void* inout, std::int64_t n) {
  bool ok = false;
  with_dtype(dt, [&](auto t) {
    using T = decltype(t);
    switch (op) {
      case PORTA_REDUCE_SUM:
        combine_as<T>(SumOp{}, in, inout, n);
        ok = true;
        break;
      case PORTA_REDUCE_PROD:
        combine_as<T>(ProdOp{}, in, inout, n);
        ok = true;
        break;
      case PORTA_REDUCE_MIN:
        combine_as<T>(MinOp{}, in, inout, n);
        ok = true;
        break;
      case PORTA_REDUCE_MAX:
        combine_as<T>(MaxOp{}, in, inout, n);
        ok = true;
        break;
      default:
        break;
    }
  });
  return ok;
}

}  // namespace porta::detail::dist
