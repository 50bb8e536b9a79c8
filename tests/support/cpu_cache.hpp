// SPDX-License-Identifier: Apache-2.0
// The last-level cache as the CPU backend reads it (last_level_cache_bytes in
// backends/cpu/cpu_maps.cpp), for tests that need sizes either side of where its maps switch to
// streaming stores.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

namespace porta_test {

inline std::int64_t cpu_cache_bytes() {
  for (const char* index : {"index3", "index2"}) {
    std::ifstream f(std::string("/sys/devices/system/cpu/cpu0/cache/") + index + "/size");
    std::string s;
    if (!(f >> s) || s.empty()) continue;
    const long long k = std::atoll(s.c_str());
    if (k > 0) return s.back() == 'M' ? k << 20 : (s.back() == 'K' ? k << 10 : k);
  }
  const long c = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return c > 0 ? c : std::int64_t(32) << 20;
}

}  // namespace porta_test
