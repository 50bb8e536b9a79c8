// SPDX-License-Identifier: Apache-2.0
// The examples' self-check: each compares its results with a host computation and exits non-zero
// on a wrong one, so that ctest runs every example as a test (examples/CMakeLists.txt).
#pragma once

#include <cstdio>

namespace example {

// How many of the program's checks failed.
inline int failures = 0;

// One check: a wrong result is counted and named.
inline void expect(bool ok, const char* what) {
  if (!ok) {
    ++failures;
    std::printf("  WRONG: %s\n", what);
  }
}

// main's exit status once every check has run: 0 when all passed, else 1; says which.
inline int summary() {
  if (failures != 0) {
    std::printf("%d check(s) WRONG\n", failures);
    return 1;
  }
  std::printf("all checks OK\n");
  return 0;
}

}  // namespace example
