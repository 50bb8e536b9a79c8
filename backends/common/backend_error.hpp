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

// The value of an enum argument as the C caller passed it. C lets any int through a C enum; in
// C++, loading an enum object that holds a value outside its range is undefined (UBSan's
// -fsanitize=enum flags it), so every backend checks enum arguments through their bytes first.
template <class E>
inline int raw_enum(const E& e) noexcept {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized on the supported ABIs");
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}
inline bool in_range(int v, int lo, int count) noexcept {
  return v >= lo && v < lo + count;
}

}  // namespace porta::detail::backend
