// SPDX-License-Identifier: Apache-2.0
// The one order of porta's own sparse products (PORTA_SPARSE_OWN_KERNEL), shared by the CPU
// backend and the GPU kernels so that they cannot drift apart: one output element of
// Y = alpha * A * X + beta * Y is the row's products summed in storage order, each product and
// each sum rounded on its own (no FMA), then scaled. Any split of the work over threads, blocks
// or vector lanes that keeps one output element on one thread gives these bits.
#pragma once

#include <cstdint>

#include "porta/detail/config.hpp"
#include "porta/detail/rounding.hpp"

namespace porta::detail {

// sum over j in [begin, end) of values[j] * x[col[j] * ldx], left to right from +0.
template <class T, class I>
PORTA_HOST_DEVICE inline T sparse_row_sum(const T* values, const I* col, std::int64_t begin, std::int64_t end,
                                          const T* x, std::int64_t ldx) {
  T acc = T(0);
  for (std::int64_t j = begin; j < end; ++j)
    acc = add_rn(acc, mul_rn(values[j], x[static_cast<std::int64_t>(col[j]) * ldx]));
  return acc;
}

// alpha * acc + beta * old, with beta == 0 never reading old (a NaN there does not propagate), and
// the canonical NaN for every NaN result (docs/determinism.md). alpha == 0 never reaches here: the
// front end makes it beta * Y, reading neither A nor X.
template <class T>
PORTA_HOST_DEVICE inline T sparse_finish(T acc, T alpha, T beta, const T* old) {
  T v = mul_rn(alpha, acc);
  if (beta != T(0)) v = add_rn(v, mul_rn(beta, *old));
  return canonical_nan(v);
}

}  // namespace porta::detail
