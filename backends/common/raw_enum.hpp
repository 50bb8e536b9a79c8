// SPDX-License-Identifier: Apache-2.0
// Reading an enum argument of the C ABI safely. C lets any int through a C enum; in C++, loading
// an enum object that holds a value outside its range is undefined (UBSan's -fsanitize=enum flags
// it), so every backend reads enum arguments through their bytes before it trusts them.
#pragma once

namespace porta::detail::backend {

// The value of an enum argument as the C caller passed it. __builtin_memcpy rather than <cstring>:
// this header reaches the GPU kernels' translation units (through dtype.hpp) before the HIP runtime
// header, and a <cstring> read first would hide HIP's device memcpy from std::memcpy in device code.
template <class E>
inline int raw_enum(const E& e) noexcept {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized on the supported ABIs");
  int v;
  __builtin_memcpy(&v, &e, sizeof v);
  return v;
}
inline bool in_range(int v, int lo, int count) noexcept {
  return v >= lo && v < lo + count;
}

}  // namespace porta::detail::backend
