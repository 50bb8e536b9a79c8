// SPDX-License-Identifier: Apache-2.0
// The ABI's runtime element type (porta_dtype, porta_scalar) turned into C++ types, for every
// backend: the CPU one inside libporta and the GPU plugins' table code. Plain C++.
#pragma once

#include <cstdint>
#include <type_traits>

#include "porta/abi/backend_v1.h"
#include "porta/detail/config.hpp"

namespace porta::detail::backend {

// Calls f(T{}) with T the C++ type of dt; dt must be valid (the table entry checked it).
template <class F>
decltype(auto) with_dtype(porta_dtype dt, F&& f) {
  switch (dt) {
    case PORTA_F32:
      return f(float{});
    case PORTA_F64:
      return f(double{});
    case PORTA_I32:
      return f(std::int32_t{});
    default:
      return f(std::int64_t{});
  }
}

// The member of a porta_scalar that holds a T (also in device code: the fused-expression kernels).
template <class T>
PORTA_HOST_DEVICE inline T scalar_value(porta_scalar s) {
  if constexpr (std::is_same_v<T, float>) {
    return s.f32;
  } else if constexpr (std::is_same_v<T, double>) {
    return s.f64;
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return s.i32;
  } else {
    return s.i64;
  }
}

// "float32", ... for messages.
inline const char* dtype_name(porta_dtype dt) noexcept {
  switch (dt) {
    case PORTA_F32:
      return "float32";
    case PORTA_F64:
      return "float64";
    case PORTA_I32:
      return "int32";
    case PORTA_I64:
      return "int64";
  }
  return "unknown dtype";
}

}  // namespace porta::detail::backend
