// SPDX-License-Identifier: Apache-2.0
// Argument checks of the issue-15 part-1 entries (copy_strided, compare, where, take, scatter),
// shared by the CPU backend and the GPU plugins so that every backend rejects the same calls with
// the same messages. Each returns PORTA_OK or an error status with the message set; on success the
// element counts come back through the out-parameters. Plain C++.
#pragma once

#include <cstdint>

#include "backends/common/backend_error.hpp"
#include "porta/abi/backend_v1.h"

namespace porta::detail::backend::index_check {

inline porta_status dtype(const porta_dtype& dt_arg, const char* fn) noexcept {
  const int dt = raw_enum(dt_arg);
  if (dt < PORTA_F32 || dt > PORTA_I64) return set_error(PORTA_ERR_INVALID, "%s: unknown dtype %d", fn, dt);
  return PORTA_OK;
}

// a * b into *n when both are >= 0 and the product fits in an int64.
inline porta_status extents(std::int64_t a, std::int64_t b, std::int64_t* n, const char* fn) noexcept {
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, n))
    return set_error(PORTA_ERR_INVALID, "%s: bad extents %lld x %lld", fn, static_cast<long long>(a),
                     static_cast<long long>(b));
  return PORTA_OK;
}

inline porta_status null_array(const char* fn) noexcept {
  return set_error(PORTA_ERR_INVALID, "%s: NULL array", fn);
}

// *n: the number of elements copied.
inline porta_status copy_strided(const porta_dtype& dt, std::int32_t rank, const std::int64_t* shape, const void* src,
                                 const std::int64_t* src_strides, void* dst, const std::int64_t* dst_strides,
                                 std::int64_t* n) noexcept {
  constexpr const char* fn = "copy_strided";
  if (const porta_status st = dtype(dt, fn); st != PORTA_OK) return st;
  if (rank < 1 || rank > 4 || shape == nullptr || src_strides == nullptr || dst_strides == nullptr)
    return set_error(PORTA_ERR_INVALID, "%s: rank %d (1 to 4) or NULL shape or strides", fn, static_cast<int>(rank));
  *n = 1;
  for (int i = 0; i < rank; ++i)
    if (const porta_status st = extents(*n, shape[i], n, fn); st != PORTA_OK) return st;
  if (*n > 0 && (src == nullptr || dst == nullptr)) return null_array(fn);
  return PORTA_OK;
}

inline porta_status compare(const porta_compare_op& op, const porta_dtype& dt, std::int64_t rows, std::int64_t cols,
                            const void* a, const void* b, const std::int32_t* y, std::int64_t* n) noexcept {
  constexpr const char* fn = "compare";
  if (const porta_status st = dtype(dt, fn); st != PORTA_OK) return st;
  if (!in_range(raw_enum(op), 0, PORTA_COMPARE_COUNT))
    return set_error(PORTA_ERR_INVALID, "%s: unknown comparison %d", fn, raw_enum(op));
  if (const porta_status st = extents(rows, cols, n, fn); st != PORTA_OK) return st;
  if (*n > 0 && (a == nullptr || b == nullptr || y == nullptr)) return null_array(fn);
  return PORTA_OK;
}

inline porta_status where(const porta_dtype& dt, std::int64_t n, const std::int32_t* mask, const void* a,
                          std::int64_t a_step, const void* b, std::int64_t b_step, const void* y) noexcept {
  constexpr const char* fn = "where";
  if (const porta_status st = dtype(dt, fn); st != PORTA_OK) return st;
  if (n < 0) return set_error(PORTA_ERR_INVALID, "%s: negative element count %lld", fn, static_cast<long long>(n));
  if ((a_step != 0 && a_step != 1) || (b_step != 0 && b_step != 1))
    return set_error(PORTA_ERR_INVALID, "%s: steps must be 0 or 1 (a_step %lld, b_step %lld)", fn,
                     static_cast<long long>(a_step), static_cast<long long>(b_step));
  if (n > 0 && (mask == nullptr || a == nullptr || b == nullptr || y == nullptr)) return null_array(fn);
  return PORTA_OK;
}

// take and scatter: x (or y) is [outer, n, inner], the other side [outer, m, inner]. *rows is
// outer * m, *total the elements of the [outer, m, inner] side.
inline porta_status gather_scatter(const char* fn, const porta_dtype& dt, std::int64_t outer, std::int64_t n,
                                   std::int64_t inner, const void* big, std::int64_t m, const std::int64_t* idx,
                                   const void* small, std::int64_t* rows, std::int64_t* total) noexcept {
  std::int64_t big_total = 0;
  if (const porta_status st = dtype(dt, fn); st != PORTA_OK) return st;
  if (const porta_status st = extents(outer, m, rows, fn); st != PORTA_OK) return st;
  if (const porta_status st = extents(*rows, inner, total, fn); st != PORTA_OK) return st;
  if (const porta_status st = extents(outer, n, &big_total, fn); st != PORTA_OK) return st;
  if (const porta_status st = extents(big_total, inner, &big_total, fn); st != PORTA_OK) return st;
  if (*total > 0 && (idx == nullptr || small == nullptr || (big_total > 0 && big == nullptr))) return null_array(fn);
  return PORTA_OK;
}

}  // namespace porta::detail::backend::index_check
