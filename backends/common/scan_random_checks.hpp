// SPDX-License-Identifier: Apache-2.0
// Argument checks of the scan and random entries, shared by the CPU backend and
// the GPU plugins so that every backend refuses the same calls with the same messages. Plain C++;
// each returns PORTA_OK or an error status with the message set (backend_error.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/common/backend_error.hpp"
#include "porta/abi/backend_v1.h"

namespace porta::detail::backend::check {

// x viewed as [outer, n, inner] scanned along n into y. An inclusive scan may run in place (y == x);
// an exclusive one writes y[i + 1] from x[i], so y must not overlap x at all.
inline porta_status scan(const porta_reduce_op& op, const porta_dtype& dt, std::uint32_t flags, std::int64_t outer,
                         std::int64_t n, std::int64_t inner, const void* x, const void* y) noexcept {
  constexpr const char* fn = "scan";
  if (!valid_dtype(dt)) return unknown_dtype(fn, dt);
  if (raw_enum(op) != PORTA_REDUCE_SUM && raw_enum(op) != PORTA_REDUCE_MAX)
    return set_error(PORTA_ERR_INVALID, "%s: op %d is not a scan op (sum or max)", fn, raw_enum(op));
  if ((flags & ~std::uint32_t(PORTA_SCAN_EXCLUSIVE)) != 0)
    return set_error(PORTA_ERR_INVALID, "%s: unknown flags 0x%x", fn, static_cast<unsigned>(flags));
  std::int64_t lines = 0, total = 0;
  if (outer < 0 || n < 0 || inner < 0 || __builtin_mul_overflow(outer, inner, &lines) ||
      __builtin_mul_overflow(lines, n, &total))
    return set_error(PORTA_ERR_INVALID, "%s: bad shape [%lld, %lld, %lld]", fn, static_cast<long long>(outer),
                     static_cast<long long>(n), static_cast<long long>(inner));
  if (total == 0) return PORTA_OK;
  if (x == nullptr || y == nullptr) return set_error(PORTA_ERR_INVALID, "%s: NULL array", fn);
  const std::size_t bytes = static_cast<std::size_t>(total) * dtype_size(dt);
  const auto* px = static_cast<const unsigned char*>(x);
  const auto* py = static_cast<const unsigned char*>(y);
  const bool overlap = px < py + bytes && py < px + bytes;
  if (overlap && ((flags & PORTA_SCAN_EXCLUSIVE) != 0 || px != py))
    return set_error(PORTA_ERR_INVALID, "%s: x and y overlap (only an inclusive scan may run in place, y == x)", fn);
  return PORTA_OK;
}

inline porta_status random(const porta_random_dist& dist, const porta_dtype& dt, std::int64_t n,
                           const void* y) noexcept {
  constexpr const char* fn = "random";
  if (!in_range(raw_enum(dist), 0, PORTA_RANDOM_COUNT))
    return set_error(PORTA_ERR_INVALID, "%s: unknown distribution %d", fn, raw_enum(dist));
  if (!valid_dtype(dt)) return unknown_dtype(fn, dt);
  if (!dtype_is_real(dt))
    return set_error(PORTA_ERR_INVALID, "%s: %s is not a floating-point dtype", fn, dtype_name(dt));
  if (n < 0) return set_error(PORTA_ERR_INVALID, "%s: negative element count %lld", fn, static_cast<long long>(n));
  if (n > 0 && y == nullptr) return set_error(PORTA_ERR_INVALID, "%s: NULL array", fn);
  return PORTA_OK;
}

}  // namespace porta::detail::backend::check
