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

}  // namespace porta::detail::backend
