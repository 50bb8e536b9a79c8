// SPDX-License-Identifier: Apache-2.0
// Reductions over host buffers of a run-time dtype with porta's op semantics (ops.hpp): what
// porta::distributed's thread engine (distributed/thread_engine.cpp) and the MPI plugin's
// user-defined MPI_Ops (backends/mpi) apply, so that every host transport combines ranks exactly
// as porta's own reductions combine elements. Below both, so that neither reaches into the other.
#pragma once

#include <cstdint>

#include "backends/common/dtype.hpp"
#include "porta/abi/backend_v1.h"
#include "porta/detail/ops.hpp"

namespace porta::detail::backend {

// False, computing nothing, for an op that T does not have (a complex min).
template <class T, class Op>
bool combine_as(Op op, const void* in, void* inout, std::int64_t n) {
  if constexpr (op_defined_v<Op, T>) {
    const T* a = static_cast<const T*>(in);
    T* b = static_cast<T*>(inout);
    for (std::int64_t i = 0; i < n; ++i) b[i] = op(b[i], a[i]);
    return true;
  } else {
    return false;
  }
}

// inout[i] = op(inout[i], in[i]) for i < n. False for an op or dtype it does not know.
inline bool combine(porta_dtype dt, porta_reduce_op op, const void* in, void* inout, std::int64_t n) {
  bool ok = false;
  with_dtype(dt, [&](auto t) {
    using T = decltype(t);
    switch (op) {
      case PORTA_REDUCE_SUM:
        ok = combine_as<T>(SumOp{}, in, inout, n);
        break;
      case PORTA_REDUCE_PROD:
        ok = combine_as<T>(ProdOp{}, in, inout, n);
        break;
      case PORTA_REDUCE_MIN:
        ok = combine_as<T>(MinOp{}, in, inout, n);
        break;
      case PORTA_REDUCE_MAX:
        ok = combine_as<T>(MaxOp{}, in, inout, n);
        break;
      default:
        break;
    }
  });
  return ok;
}

}  // namespace porta::detail::backend
