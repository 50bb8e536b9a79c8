// SPDX-License-Identifier: Apache-2.0
// Argument checks of the sort and argreduce entries, shared by the CPU backend
// and the GPU plugins so that every backend rejects the same calls with the same messages. Plain
// C++; each returns PORTA_OK or an error status with the message set (backend_error.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/common/backend_error.hpp"
#include "porta/abi/backend_v1.h"

namespace porta::detail::backend::check {

inline bool overlap(const void* a, const void* b, std::size_t bytes) noexcept {
  const auto* pa = static_cast<const unsigned char*>(a);
  const auto* pb = static_cast<const unsigned char*>(b);
  return pa < pb + bytes && pb < pa + bytes;
}

// Keys (and values, when values_in is not NULL) go from their input to their output buffer, which
// must not overlap: every radix sort reads its input while it writes.
inline porta_status sort(const porta_dtype& key_dt, std::int64_t n, const void* keys_in, const void* keys_out,
                         const porta_dtype& value_dt, const void* values_in, const void* values_out,
                         std::uint32_t flags) noexcept {
  constexpr const char* fn = "sort";
  if (!valid_dtype(key_dt)) return set_error(PORTA_ERR_INVALID, "%s: unknown key dtype %d", fn, raw_enum(key_dt));
  if (n < 0) return set_error(PORTA_ERR_INVALID, "%s: negative element count %lld", fn, static_cast<long long>(n));
  if ((flags & ~std::uint32_t(PORTA_SORT_DESCENDING)) != 0)
    return set_error(PORTA_ERR_INVALID, "%s: unknown flags 0x%x", fn, static_cast<unsigned>(flags));
  if ((values_in == nullptr) != (values_out == nullptr))
    return set_error(PORTA_ERR_INVALID, "%s: values_in and values_out must both be NULL or both be arrays", fn);
  if (values_in != nullptr && !valid_dtype(value_dt))
    return set_error(PORTA_ERR_INVALID, "%s: unknown value dtype %d", fn, raw_enum(value_dt));
  if (n == 0) return PORTA_OK;
  if (keys_in == nullptr || keys_out == nullptr) return set_error(PORTA_ERR_INVALID, "%s: NULL key array", fn);
  const std::size_t count = static_cast<std::size_t>(n);
  if (overlap(keys_in, keys_out, count * dtype_size(key_dt)))
    return set_error(PORTA_ERR_INVALID, "%s: keys_in and keys_out overlap", fn);
  if (values_in != nullptr && overlap(values_in, values_out, count * dtype_size(value_dt)))
    return set_error(PORTA_ERR_INVALID, "%s: values_in and values_out overlap", fn);
  return PORTA_OK;
}

inline porta_status argreduce(const porta_arg_op& op, const porta_dtype& dt, std::int64_t outer, std::int64_t n,
                              std::int64_t inner, const void* x, const void* y) noexcept {
  constexpr const char* fn = "argreduce";
  if (!valid_dtype(dt)) return unknown_dtype(fn, dt);
  if (!in_range(raw_enum(op), 0, PORTA_ARG_COUNT))
    return set_error(PORTA_ERR_INVALID, "%s: unknown arg op %d", fn, raw_enum(op));
  std::int64_t outputs = 0, total = 0;
  if (outer < 0 || n < 0 || inner < 0 || __builtin_mul_overflow(outer, inner, &outputs) ||
      __builtin_mul_overflow(outputs, n, &total))
    return set_error(PORTA_ERR_INVALID, "%s: bad shape [%lld, %lld, %lld]", fn, static_cast<long long>(outer),
                     static_cast<long long>(n), static_cast<long long>(inner));
  if (outputs > 0 && n == 0)
    return set_error(PORTA_ERR_INVALID, "%s: an empty axis has no arg%s", fn, op == PORTA_ARG_MAX ? "max" : "min");
  if (outputs > 0 && (x == nullptr || y == nullptr)) return set_error(PORTA_ERR_INVALID, "%s: NULL array", fn);
  return PORTA_OK;
}

}  // namespace porta::detail::backend::check
