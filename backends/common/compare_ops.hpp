// SPDX-License-Identifier: Apache-2.0
// porta_compare_op -> its functor (porta/detail/ops.hpp), for the CPU backend and the GPU kernels
// alike. The switch has no default arm: the backends compile with -Werror=switch, so a new
// comparison that is not mapped here stops the build instead of computing another one.
#pragma once

#include "porta/abi/backend_v1.h"
#include "porta/detail/ops.hpp"

namespace porta::detail::backend {

// f(functor) for a valid op; `invalid` (the caller's "bad argument" code) for anything else.
template <class R, class F>
R with_compare_op(porta_compare_op op, R invalid, F&& f) {
  switch (op) {
    case PORTA_COMPARE_EQ:
      return f(EqOp{});
    case PORTA_COMPARE_NE:
      return f(NeOp{});
    case PORTA_COMPARE_LT:
      return f(LtOp{});
    case PORTA_COMPARE_LE:
      return f(LeOp{});
    case PORTA_COMPARE_GT:
      return f(GtOp{});
    case PORTA_COMPARE_GE:
      return f(GeOp{});
    case PORTA_COMPARE_COUNT:
      break;
  }
  return invalid;
}

}  // namespace porta::detail::backend
