// SPDX-License-Identifier: Apache-2.0
// Must NOT compile: a floating-point scalar with an integer array would be truncated (2.5 -> 2).
#include <cstdint>

#include "porta/porta.hpp"

porta::Array<std::int32_t> scale(const porta::Array<std::int32_t>& x) {
  return x * 2.5;
}
