// SPDX-License-Identifier: Apache-2.0
// Array labels: one copy of each label's characters for the program's life, so that a profiling
// tool, a View and an error can keep the pointer without owning anything; and the live memory of
// labelled arrays for memory_report.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "porta/array.hpp"

namespace porta::detail {
namespace {

struct Live {
  std::uint64_t arrays = 0;
  std::uint64_t bytes = 0;
};

// Never destroyed: arrays in other statics may be freed after this file's statics would be.
struct Labels {
  std::mutex mutex;
  std::unordered_set<std::string> names;                   // nodes never move: c_str() stays valid
  std::map<std::tuple<int, int, const char*>, Live> live;  // (device type, index, label)
};
Labels& labels() {
  static auto* l = new Labels();
  return *l;
}

std::string human_bytes(std::uint64_t b) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, unit[u]);
  return buf;
}

}  // namespace

const char* intern_label(std::string_view label) {
  Labels& l = labels();
  const std::lock_guard<std::mutex> lock(l.mutex);
  return l.names.emplace(label).first->c_str();
}

const char* stable_name(std::string_view name) noexcept {
  struct Entry {
    const char* data = nullptr;  // the caller's characters, as last seen at this address
    std::size_t size = 0;
    const char* interned = nullptr;
  };
  thread_local Entry cache[8];
  thread_local unsigned next = 0;
  for (const Entry& e : cache)
    // The same address may hold other characters now (a reused std::string): compare them too.
    if (e.data == name.data() && e.size == name.size() && e.interned != nullptr &&
        std::memcmp(e.interned, name.data(), name.size()) == 0)
      return e.interned;
  try {
    const char* s = intern_label(name);
    cache[next++ % 8] = Entry{name.data(), name.size(), s};
    return s;
  } catch (...) {
    return "";
  }
}

void count_labelled(Device device, const char* label, std::size_t bytes, bool allocated) noexcept {
  Labels& l = labels();
  const std::lock_guard<std::mutex> lock(l.mutex);
  try {
    Live& e = l.live[{static_cast<int>(device.type), device.index, label}];
    if (allocated) {
      ++e.arrays;
      e.bytes += bytes;
    } else if (e.arrays > 0) {
      --e.arrays;
      e.bytes -= std::min<std::uint64_t>(e.bytes, bytes);
    }
  } catch (...) {  // no memory for the entry: the report misses this array, the program goes on
  }
}

}  // namespace porta::detail

namespace porta {

std::string memory_report(Device device) {
  const MemoryStats s = memory_stats(device);
  std::vector<std::pair<const char*, detail::Live>> rows;
  {
    detail::Labels& l = detail::labels();
    const std::lock_guard<std::mutex> lock(l.mutex);
    for (const auto& [key, live] : l.live)
      if (std::get<0>(key) == static_cast<int>(device.type) && std::get<1>(key) == device.index && live.arrays > 0)
        rows.emplace_back(std::get<2>(key), live);
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.second.bytes != b.second.bytes ? a.second.bytes > b.second.bytes
                                            : std::string_view(a.first) < std::string_view(b.first);
  });
  std::uint64_t labelled = 0;
  for (const auto& r : rows) labelled += r.second.bytes;
  std::string out = device.to_string() + ": " + detail::human_bytes(s.bytes_in_use) + " in use by " +
                    std::to_string(s.alloc_count) + " allocations (peak " + detail::human_bytes(s.peak_bytes_in_use) +
                    ", reserved " + detail::human_bytes(s.bytes_reserved) + ")\n";
  char line[256];
  for (const auto& [label, live] : rows) {
    std::snprintf(line, sizeof line, "  %-32s %6llu array%s %12s\n", label,
                  static_cast<unsigned long long>(live.arrays), live.arrays == 1 ? " " : "s",
                  detail::human_bytes(live.bytes).c_str());
    out += line;
  }
  // Pool rounding and other callers' memory (built-ins' scratch, borrowed arrays are not counted by
  // the pool) make this a remainder, not a count of arrays.
  const std::uint64_t rest = s.bytes_in_use > labelled ? s.bytes_in_use - labelled : 0;
  std::snprintf(line, sizeof line, "  %-32s %19s\n", "(unlabelled)", detail::human_bytes(rest).c_str());
  out += line;
  return out;
}

}  // namespace porta
