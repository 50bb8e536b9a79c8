// SPDX-License-Identifier: Apache-2.0
// Argument checks of the GPU plugins' algorithm entries, one per entry, shared by the CUDA and the
// HIP plugin so that both reject the same calls with the same messages. Plain C++: the plugins'
// table code calls them before it makes a device current. Each returns PORTA_OK or an
// error status with the message set (backends/common/backend_error.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/common/backend_error.hpp"
#include "porta/abi/backend_v1.h"

namespace porta::detail::gpu::check {

using backend::in_range;
using backend::raw_enum;
using backend::set_error;

// Every enum argument is checked through its bytes before it is loaded as an enum: a C caller may
// pass any int, and loading an out-of-range value is undefined in C++.

using backend::dtype_size;

inline porta_status dtype(const porta_dtype& dt, const char* fn) noexcept {
  if (!backend::valid_dtype(dt)) return backend::unknown_dtype(fn, dt);
  return PORTA_OK;
}

inline porta_status count(std::int64_t n, const char* fn) noexcept {
  if (n < 0) return set_error(PORTA_ERR_INVALID, "%s: negative element count %lld", fn, static_cast<long long>(n));
  return PORTA_OK;
}

inline porta_status pointers(std::int64_t n, const void* x, const void* y, const char* fn) noexcept {
  if (n > 0 && (x == nullptr || y == nullptr)) return set_error(PORTA_ERR_INVALID, "%s: NULL array", fn);
  return PORTA_OK;
}

// dtype, count and pointers: what every elementwise entry checks.
inline porta_status elementwise(const porta_dtype& dt, std::int64_t n, const void* x, const void* y,
                                const char* fn) noexcept {
  if (const porta_status st = dtype(dt, fn); st != PORTA_OK) return st;
  if (const porta_status st = count(n, fn); st != PORTA_OK) return st;
  return pointers(n, x, y, fn);
}

inline porta_status cast(const porta_dtype& from, const porta_dtype& to, std::int64_t n, const void* x,
                         const void* y) noexcept {
  if (const porta_status st = dtype(from, "cast"); st != PORTA_OK) return st;
  if (const porta_status st = elementwise(to, n, x, y, "cast"); st != PORTA_OK) return st;
  if (n > 0 && x != y) {
    // Elements of different sizes in overlapping memory would overwrite inputs not yet read.
    const auto* xb = static_cast<const unsigned char*>(x);
    const auto* yb = static_cast<const unsigned char*>(y);
    const std::size_t xs = static_cast<std::size_t>(n) * dtype_size(from);
    const std::size_t ys = static_cast<std::size_t>(n) * dtype_size(to);
    if (xb < yb + ys && yb < xb + xs)
      return set_error(PORTA_ERR_INVALID, "cast: input and output overlap without being the same array");
  } else if (n > 0 && dtype_size(from) != dtype_size(to)) {
    return set_error(PORTA_ERR_INVALID, "cast: in place between %s and %s (different element sizes)",
                     backend::dtype_name(from), backend::dtype_name(to));
  }
  return PORTA_OK;
}

inline porta_status unary(const porta_unary_op& op, const porta_dtype& dt, std::int64_t n, const void* x,
                          const void* y) noexcept {
  if (const porta_status st = dtype(dt, "unary"); st != PORTA_OK) return st;
  if (!in_range(raw_enum(op), 0, PORTA_UNARY_COUNT))
    return set_error(PORTA_ERR_INVALID, "unary: unknown unary op %d", raw_enum(op));
  return elementwise(dt, n, x, y, "unary");
}

inline porta_status binary(const porta_binary_op& op, const porta_dtype& dt, std::int64_t rows, std::int64_t cols,
                           const void* a, const void* b, const void* y) noexcept {
  if (const porta_status st = dtype(dt, "binary"); st != PORTA_OK) return st;
  if (!in_range(raw_enum(op), 0, PORTA_BINARY_COUNT))
    return set_error(PORTA_ERR_INVALID, "binary: unknown binary op %d", raw_enum(op));
  std::int64_t n = 0;
  if (rows < 0 || cols < 0 || __builtin_mul_overflow(rows, cols, &n))
    return set_error(PORTA_ERR_INVALID, "binary: bad shape %lld x %lld", static_cast<long long>(rows),
                     static_cast<long long>(cols));
  if (n > 0 && (a == nullptr || b == nullptr || y == nullptr))
    return set_error(PORTA_ERR_INVALID, "binary: NULL array");
  return PORTA_OK;
}

inline porta_status binary_scalar(const porta_binary_op& op, const porta_dtype& dt, std::int64_t n, const void* x,
                                  const void* y) noexcept {
  if (const porta_status st = dtype(dt, "binary_scalar"); st != PORTA_OK) return st;
  if (!in_range(raw_enum(op), 0, PORTA_BINARY_COUNT))
    return set_error(PORTA_ERR_INVALID, "binary_scalar: unknown binary op %d", raw_enum(op));
  return elementwise(dt, n, x, y, "binary_scalar");
}

inline porta_status reduce(const porta_reduce_op& op, const porta_dtype& dt, std::int64_t outer, std::int64_t n,
                           std::int64_t inner, const void* x, const void* y) noexcept {
  if (const porta_status st = dtype(dt, "reduce"); st != PORTA_OK) return st;
  if (!in_range(raw_enum(op), 0, PORTA_REDUCE_COUNT))
    return set_error(PORTA_ERR_INVALID, "reduce: unknown reduction %d", raw_enum(op));
  std::int64_t outputs = 0, total = 0;
  if (outer < 0 || n < 0 || inner < 0 || __builtin_mul_overflow(outer, inner, &outputs) ||
      __builtin_mul_overflow(outputs, n, &total))
    return set_error(PORTA_ERR_INVALID, "reduce: bad shape [%lld, %lld, %lld]", static_cast<long long>(outer),
                     static_cast<long long>(n), static_cast<long long>(inner));
  if (outputs > 0 && (y == nullptr || (n > 0 && x == nullptr)))
    return set_error(PORTA_ERR_INVALID, "reduce: NULL array");
  return PORTA_OK;
}

inline porta_status dot(const porta_dtype& dt, std::int64_t n, const void* x, const void* w, const void* y) noexcept {
  if (const porta_status st = dtype(dt, "dot"); st != PORTA_OK) return st;
  if (const porta_status st = count(n, "dot"); st != PORTA_OK) return st;
  if (y == nullptr || (n > 0 && (x == nullptr || w == nullptr))) return set_error(PORTA_ERR_INVALID, "dot: NULL array");
  return PORTA_OK;
}

// Row-major shapes: A is m x k (k x m when transposed), B is k x n (n x k), C is m x n. An empty
// C (m or n zero) passes without its pointers being looked at: the entry has nothing to do.
inline porta_status gemm(const porta_dtype& dt, int trans_a, int trans_b, std::int64_t m, std::int64_t n,
                         std::int64_t k, const void* a, std::int64_t lda, const void* b, std::int64_t ldb,
                         const void* c, std::int64_t ldc) noexcept {
  if (const porta_status st = dtype(dt, "gemm"); st != PORTA_OK) return st;
  if (m < 0 || n < 0 || k < 0)
    return set_error(PORTA_ERR_INVALID, "gemm: negative dimension (m %lld, n %lld, k %lld)", static_cast<long long>(m),
                     static_cast<long long>(n), static_cast<long long>(k));
  const std::int64_t a_rows = trans_a ? k : m, a_cols = trans_a ? m : k;
  const std::int64_t b_rows = trans_b ? n : k, b_cols = trans_b ? k : n;
  if ((a_rows > 0 && lda < a_cols) || (b_rows > 0 && ldb < b_cols) || (m > 0 && ldc < n))
    return set_error(PORTA_ERR_INVALID, "gemm: leading dimension too small (lda %lld, ldb %lld, ldc %lld)",
                     static_cast<long long>(lda), static_cast<long long>(ldb), static_cast<long long>(ldc));
  if (m == 0 || n == 0) return PORTA_OK;
  if (c == nullptr || (k > 0 && (a == nullptr || b == nullptr)))
    return set_error(PORTA_ERR_INVALID, "gemm: NULL array");
  return PORTA_OK;
}

}  // namespace porta::detail::gpu::check
