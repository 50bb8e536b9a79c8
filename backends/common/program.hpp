// SPDX-License-Identifier: Apache-2.0
// The argument check of map_program (fused expressions), shared by the CPU backend and
// the GPU plugins so that every backend rejects the same calls with the same messages. Plain C++;
// returns PORTA_OK or an error status with the message set (backend_error.hpp).
#pragma once

#include <cstdint>

#include "backends/common/backend_error.hpp"
#include "backends/common/checks.hpp"
#include "porta/abi/backend_v1.h"

namespace porta::detail::backend::check {

// An op of a complex program that complex numbers do not have (an order, sin, cos, tanh, sigmoid,
// pow), named as the eager entry would refuse it.
inline porta_status not_complex(const char* fn, std::int32_t k, const char* kind, std::int32_t op,
                                const porta_dtype& dt) noexcept {
  return set_error(PORTA_ERR_UNSUPPORTED, "%s: op %d (%s op %d) is not defined for %s", fn, static_cast<int>(k), kind,
                   static_cast<int>(op), dtype_name(dt));
}

// The stack depth after each op stays in 1..PORTA_PROGRAM_MAX_STACK and ends at 1; every kind, op
// and input index is in range. The message names the op's position.
inline porta_status map_program(const porta_dtype& dt, std::int64_t n, const porta_program_op* ops, std::int32_t nops,
                                const void* const* inputs, std::int32_t ninputs, const void* y) noexcept {
  constexpr const char* fn = "map_program";
  if (!valid_dtype(dt)) return set_error(PORTA_ERR_INVALID, "%s: unknown dtype %d", fn, raw_enum(dt));
  // Every dtype has an interpreter (op_defined_v<ProgramFamily, T>); a complex program may hold only
  // the ops complex numbers have, as the eager entries' checks say (below).
  if (const porta_status st = defined_for<ProgramFamily>(dt, fn); st != PORTA_OK) return st;
  const bool complex = dtype_is_complex(dt);
  if (n < 0) return set_error(PORTA_ERR_INVALID, "%s: negative element count %lld", fn, static_cast<long long>(n));
  if (ops == nullptr || nops < 1 || nops > PORTA_PROGRAM_MAX_OPS)
    return set_error(PORTA_ERR_INVALID, "%s: %d ops (1 to %d, ops not NULL)", fn, static_cast<int>(nops),
                     PORTA_PROGRAM_MAX_OPS);
  if (ninputs < 0 || ninputs > PORTA_PROGRAM_MAX_INPUTS || (ninputs > 0 && inputs == nullptr))
    return set_error(PORTA_ERR_INVALID, "%s: %d inputs (0 to %d, inputs not NULL)", fn, static_cast<int>(ninputs),
                     PORTA_PROGRAM_MAX_INPUTS);
  if (n > 0) {
    if (y == nullptr) return set_error(PORTA_ERR_INVALID, "%s: NULL array y", fn);
    for (std::int32_t k = 0; k < ninputs; ++k)
      if (inputs[k] == nullptr) return set_error(PORTA_ERR_INVALID, "%s: NULL input %d", fn, static_cast<int>(k));
  }
  int depth = 0;
  for (std::int32_t k = 0; k < nops; ++k) {
    const porta_program_op& op = ops[k];
    switch (op.kind) {
      case PORTA_PROGRAM_INPUT:
        if (op.arg < 0 || op.arg >= ninputs)
          return set_error(PORTA_ERR_INVALID, "%s: op %d loads input %d of %d", fn, static_cast<int>(k),
                           static_cast<int>(op.arg), static_cast<int>(ninputs));
        ++depth;
        break;
      case PORTA_PROGRAM_SCALAR:
        ++depth;
        break;
      case PORTA_PROGRAM_UNARY:
        if (!in_range(op.arg, 0, PORTA_UNARY_COUNT))
          return set_error(PORTA_ERR_INVALID, "%s: op %d: unknown unary op %d", fn, static_cast<int>(k),
                           static_cast<int>(op.arg));
        if (depth < 1)
          return set_error(PORTA_ERR_INVALID, "%s: op %d: unary op on an empty stack", fn, static_cast<int>(k));
        if (complex && !with_unary_op(static_cast<porta_unary_op>(op.arg), false, IsComplexOp{}))
          return not_complex(fn, k, "unary", op.arg, dt);
        break;
      case PORTA_PROGRAM_BINARY:
      case PORTA_PROGRAM_BINARY_REV:
        if (!in_range(op.arg, 0, PORTA_BINARY_COUNT))
          return set_error(PORTA_ERR_INVALID, "%s: op %d: unknown binary op %d", fn, static_cast<int>(k),
                           static_cast<int>(op.arg));
        if (depth < 2)
          return set_error(PORTA_ERR_INVALID, "%s: op %d: binary op on a stack of %d", fn, static_cast<int>(k), depth);
        if (complex && !with_binary_op(static_cast<porta_binary_op>(op.arg), false, IsComplexOp{}))
          return not_complex(fn, k, "binary", op.arg, dt);
        --depth;
        break;
      default:
        return set_error(PORTA_ERR_INVALID, "%s: op %d: unknown kind %d", fn, static_cast<int>(k),
                         static_cast<int>(op.kind));
    }
    if (depth > PORTA_PROGRAM_MAX_STACK)
      return set_error(PORTA_ERR_INVALID, "%s: op %d: stack deeper than %d", fn, static_cast<int>(k),
                       PORTA_PROGRAM_MAX_STACK);
  }
  if (depth != 1) return set_error(PORTA_ERR_INVALID, "%s: the program leaves %d values, not 1", fn, depth);
  return PORTA_OK;
}

}  // namespace porta::detail::backend::check
