// SPDX-License-Identifier: Apache-2.0
// What every backend (the CPU one inside libporta, the CUDA and HIP plugins) needs to report an
// error across the C ABI (and, through backends/common/dtype.hpp, name a dtype): a status plus a thread-local message
// that the table's last_error() returns. Header-only, so each shared library gets its own buffer: the plugins hide
// every symbol but their entry point (exports.map), and a message from one backend never shows up as another's.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "backends/common/dtype.hpp"
#include "backends/common/raw_enum.hpp"
#include "porta/abi/backend_v1.h"
#include "porta/detail/ops.hpp"

namespace porta::detail::backend {

inline char* message_buffer() noexcept {
  thread_local char buffer[1024] = "";
  return buffer;
}

// Formats the message for last_error() and returns `status`, so that an entry can
// `return set_error(PORTA_ERR_INVALID, "...", ...);`.
__attribute__((format(printf, 2, 3))) inline porta_status set_error(porta_status status, const char* fmt,
                                                                    ...) noexcept {
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(message_buffer(), 1024, fmt, args);
  va_end(args);
  return status;
}

inline const char* last_error() noexcept {
  return message_buffer();
}

// The one message for a dtype outside include/porta/abi/dtypes.inc, from every backend.
inline porta_status unknown_dtype(const char* fn, const porta_dtype& dt) noexcept {
  return set_error(PORTA_ERR_INVALID, "%s: unknown dtype %d", fn, raw_enum(dt));
}

// The one message for an op that a dtype of the list does not have (complex numbers have no order,
// ops.hpp's op_defined_v), from every backend.
inline porta_status unsupported_dtype(const char* fn, const porta_dtype& dt) noexcept {
  return set_error(PORTA_ERR_UNSUPPORTED, "%s: not defined for %s", fn, dtype_name(dt));
}

// with_dtype for an entry that computes `Op`: f(T{}) for dt's C++ type T and PORTA_OK, when Op is
// defined for T; unsupported_dtype when it is not (a complex min), unknown_dtype for a value outside
// the list. The op's instantiation for such a T never exists, in any backend.
template <class Op, class F>
porta_status with_dtype_for(const char* fn, const porta_dtype& dt, F&& f) {
  porta_status st = PORTA_OK;
  const bool known = with_dtype(dt, [&](auto tag) {
    if constexpr (op_defined_v<Op, decltype(tag)>) {
      f(tag);
    } else {
      st = unsupported_dtype(fn, dt);
    }
  });
  return known ? st : unknown_dtype(fn, dt);
}

}  // namespace porta::detail::backend
