// SPDX-License-Identifier: Apache-2.0
// The ABI's run-time element type (porta_dtype, porta_scalar) in C++, for every backend (the CPU
// one inside libporta, the GPU plugins' table code) and libporta's front end. Every fact here is
// derived from the one list of dtypes, include/porta/abi/dtypes.inc: one function per fact, and one
// behaviour for a value outside the list (C callers can pass any int): no function here computes
// with a guess, none throws. Plain C++.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "backends/common/raw_enum.hpp"
#include "porta/abi/backend_v1.h"
#include "porta/detail/config.hpp"

namespace porta::detail::backend {

// True for a value of the list. Reads dt through its bytes, so any int a C caller passed is safe.
inline bool valid_dtype(const porta_dtype& dt) noexcept {
  switch (raw_enum(dt)) {
#define PORTA_DTYPE(NAME, name, ctype, value, ...) \
  case value:                                      \
    return true;
#include "porta/abi/dtypes.inc"
#undef PORTA_DTYPE
  }
  return false;
}

// Bytes per element; 0 for a value outside the list.
inline std::size_t dtype_size(const porta_dtype& dt) noexcept {
  switch (raw_enum(dt)) {
#define PORTA_DTYPE(NAME, name, ctype, value, ...) \
  case value:                                      \
    return sizeof(ctype);
#include "porta/abi/dtypes.inc"
#undef PORTA_DTYPE
  }
  return 0;
}

// "float32", ... for messages; "unknown dtype" for a value outside the list.
inline const char* dtype_name(const porta_dtype& dt) noexcept {
  switch (raw_enum(dt)) {
#define PORTA_DTYPE(NAME, name, ctype, value, display, ...) \
  case value:                                               \
    return display;
#include "porta/abi/dtypes.inc"
#undef PORTA_DTYPE
  }
  return "unknown dtype";
}

// True for a floating-point type of the list (random numbers exist for those only).
inline bool dtype_is_real(const porta_dtype& dt) noexcept {
  switch (raw_enum(dt)) {
#define PORTA_DTYPE(NAME, name, ctype, value, ...) \
  case value:                                      \
    return std::is_floating_point_v<ctype>;
#include "porta/abi/dtypes.inc"
#undef PORTA_DTYPE
  }
  return false;
}

// True for a complex type of the list.
inline bool dtype_is_complex(const porta_dtype& dt) noexcept {
  switch (raw_enum(dt)) {
#define PORTA_DTYPE(NAME, name, ctype, value, ...) \
  case value:                                      \
    return is_complex_v<ctype>;
#include "porta/abi/dtypes.inc"
#undef PORTA_DTYPE
  }
  return false;
}

// True for a 16-bit float of the list (float16, bfloat16).
inline bool dtype_is_half(const porta_dtype& dt) noexcept {
  switch (raw_enum(dt)) {
#define PORTA_DTYPE(NAME, name, ctype, value, ...) \
  case value:                                      \
    return is_half_v<ctype>;
#include "porta/abi/dtypes.inc"
#undef PORTA_DTYPE
  }
  return false;
}

// The dispatch from a run-time dtype to its C++ type, for every backend and front end:
// calls f(T{}) with T the C++ type of dt and returns true; for a value outside the list it
// returns false without calling f. f's own result is not returned: a caller that needs one keeps
// it in a variable. Every caller handles false, although after its argument checks it cannot
// happen (an ABI entry returns backend_error.hpp's unknown_dtype(fn, dt)): a bad dtype is never
// computed as another type. Exceptions from f propagate, so an ABI entry that may throw inside f
// catches them (nothing unwinds through the C table).
template <class F>
bool with_dtype(const porta_dtype& dt, F&& f) {
  switch (raw_enum(dt)) {
#define PORTA_DTYPE(NAME, name, ctype, value, ...) \
  case value:                                      \
    f(ctype{});                                    \
    return true;
#include "porta/abi/dtypes.inc"
#undef PORTA_DTYPE
  }
  return false;
}

// The member of a porta_scalar that holds a T (also in device code: the fused-expression kernels),
// one branch per dtype of the list.
template <class T>
PORTA_HOST_DEVICE inline T scalar_value(porta_scalar s) {
#define PORTA_DTYPE(NAME, name, ctype, ...) \
  if constexpr (std::is_same_v<T, ctype>) { \
    return s.name;                          \
  } else
#include "porta/abi/dtypes.inc"
#undef PORTA_DTYPE
  {
    static_assert(!std::is_same_v<T, T>, "scalar_value: T is not a type of porta/abi/dtypes.inc");
    return T{};
  }
}

}  // namespace porta::detail::backend
