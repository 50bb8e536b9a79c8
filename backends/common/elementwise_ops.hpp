// SPDX-License-Identifier: Apache-2.0
// porta_unary_op and porta_binary_op -> their functors (porta/detail/ops.hpp), the one switch for
// the CPU backend's maps, the GPU plugins' map kernels and the fused-expression interpreters of both
// (on host and device), as compare_ops.hpp is for comparisons. The switches have no default arm:
// the backends compile with -Werror=switch, so a new op that is not mapped here stops the build
// instead of computing another one.
#pragma once

#include "porta/abi/backend_v1.h"
#include "porta/detail/config.hpp"
#include "porta/detail/ops.hpp"

namespace porta::detail::backend {

// f(functor) for a valid op; `invalid` (the caller's "bad argument" code) for anything else. f may
// be a host or a device lambda (nvcc's host/device call check is off for these templates).
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <class R, class F>
PORTA_HOST_DEVICE inline R with_unary_op(porta_unary_op op, R invalid, F&& f) {
  switch (op) {
    case PORTA_UNARY_NEG:
      return f(NegOp{});
    case PORTA_UNARY_ABS:
      return f(AbsOp{});
    case PORTA_UNARY_SQRT:
      return f(SqrtOp{});
    case PORTA_UNARY_EXP:
      return f(ExpOp{});
    case PORTA_UNARY_LOG:
      return f(LogOp{});
    case PORTA_UNARY_SIN:
      return f(SinOp{});
    case PORTA_UNARY_COS:
      return f(CosOp{});
    case PORTA_UNARY_TANH:
      return f(TanhOp{});
    case PORTA_UNARY_RELU:
      return f(ReluOp{});
    case PORTA_UNARY_SIGMOID:
      return f(SigmoidOp{});
    case PORTA_UNARY_SQUARE:
      return f(SquareOp{});
    case PORTA_UNARY_CONJ:
      return f(ConjOp{});
    case PORTA_UNARY_COUNT:
      break;
  }
  return invalid;
}

#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <class R, class F>
PORTA_HOST_DEVICE inline R with_binary_op(porta_binary_op op, R invalid, F&& f) {
  switch (op) {
    case PORTA_BINARY_ADD:
      return f(AddOp{});
    case PORTA_BINARY_SUB:
      return f(SubOp{});
    case PORTA_BINARY_MUL:
      return f(MulOp{});
    case PORTA_BINARY_DIV:
      return f(DivOp{});
    case PORTA_BINARY_MIN:
      return f(MinOp{});
    case PORTA_BINARY_MAX:
      return f(MaxOp{});
    case PORTA_BINARY_POW:
      return f(PowOp{});
    case PORTA_BINARY_RELU_GRAD:
      return f(ReluGradOp{});
    case PORTA_BINARY_COUNT:
      break;
  }
  return invalid;
}

}  // namespace porta::detail::backend
