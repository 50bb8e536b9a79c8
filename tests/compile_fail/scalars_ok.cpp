// SPDX-License-Identifier: Apache-2.0
// Must compile: scalars of any arithmetic type with any array, keeping the array's dtype (the
// control case of float_scalar_int_array.cpp).
#include <cstdint>
#include <type_traits>

#include "porta/porta.hpp"

void scalars(porta::Array<float>& f, porta::Array<std::int32_t>& i, porta::Array<double>& d) {
  auto a = f * 2 + 1;
  auto b = 2.0 * f;
  auto c = i * 2LL - 1u;
  auto e = 1 / d;
  static_assert(std::is_same_v<decltype(a), porta::Array<float>>, "float stays float");
  static_assert(std::is_same_v<decltype(b), porta::Array<float>>, "float stays float");
  static_assert(std::is_same_v<decltype(c), porta::Array<std::int32_t>>, "int32 stays int32");
  static_assert(std::is_same_v<decltype(e), porta::Array<double>>, "double stays double");
  f += 1;
  i *= short(3);
  f.row(0) -= 0.5;
  auto m = porta::where(porta::greater(f, 0), f, 0);
  (void)m;
}
