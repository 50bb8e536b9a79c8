// SPDX-License-Identifier: Apache-2.0
// The CPU backend's transcendental maps (exp, log, sin, cos, tanh, sigmoid of float and double):
// porta's own functions (porta/detail/math.hpp) in vectorised loops, built per ISA. The eager unary
// map (cpu_maps.cpp) and the fused-expression interpreter (cpu_program.cpp) both come here, so an
// element gets the same bits whichever way it is computed. Integer dtypes keep ops.hpp's functors.
#pragma once

#include <cstdint>

#include "porta/abi/backend_v1.h"

namespace porta::detail::cpu {

// Whether op of dtype dt runs here.
bool math_handles(porta_unary_op op, porta_dtype dt) noexcept;

// y[i] = op(x[i]) for i in [0, n) on the calling thread; y may be x. op must be handled.
void math_block(porta_unary_op op, const float* x, float* y, std::int64_t n) noexcept;
void math_block(porta_unary_op op, const double* x, double* y, std::int64_t n) noexcept;

// op(x) for one value (a scalar operand of a fused expression).
float math_scalar(porta_unary_op op, float x) noexcept;
double math_scalar(porta_unary_op op, double x) noexcept;

// The whole unary map, split over the OpenMP team.
porta_status math_unary(porta_unary_op op, porta_dtype dt, std::int64_t n, const void* x, void* y) noexcept;

}  // namespace porta::detail::cpu
