// SPDX-License-Identifier: Apache-2.0
// One include for Catch2 v2 (single header, Debian bookworm's package or a vendored copy) and v3.
#pragma once

#if defined(PORTA_CATCH2_V3)
#include <catch2/catch_all.hpp>
#else
#include <catch2/catch.hpp>
#endif

#include <string>

namespace porta_test {

// Substring matcher under both names.
inline auto Contains(const std::string& s) {
#if defined(PORTA_CATCH2_V3)
  return Catch::Matchers::ContainsSubstring(s);
#else
  return Catch::Matchers::Contains(s);
#endif
}

}  // namespace porta_test

// Ends the current test case as skipped (v3.3+), or with a warning (v2, which has no SKIP).
#if defined(PORTA_CATCH2_V3) && defined(SKIP)
#define PORTA_SKIP(msg) SKIP(msg)
#else
#define PORTA_SKIP(msg) \
  do {                  \
    WARN(msg);          \
    return;             \
  } while (0)
#endif
