// SPDX-License-Identifier: Apache-2.0
#include "support/support.hpp"

#include <algorithm>
#include <cstdlib>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace porta_test {

std::uint64_t base_seed() {
  static const std::uint64_t seed = [] {
    if (const char* s = std::getenv("PORTA_TEST_SEED"); s && *s) return static_cast<std::uint64_t>(std::stoull(s));
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }();
  return seed;
}

namespace {
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
std::uint64_t fnv1a(const char* s) {
  std::uint64_t h = 1469598103934665603ull;
  for (; *s; ++s) h = (h ^ static_cast<unsigned char>(*s)) * 1099511628211ull;
  return h;
}
}  // namespace

Rng::Rng(const char* tag) : seed_(splitmix64(base_seed() ^ fnv1a(tag))), eng_(seed_) {}

const std::vector<porta::Device>& test_devices() {
  static const std::vector<porta::Device> devs = [] {
    std::vector<porta::Device> all = porta::devices();
    const char* env = std::getenv("PORTA_TEST_DEVICES");
    if (!env || !*env || std::string(env) == "all") return all;
    std::vector<porta::Device> out;
    std::stringstream ss(env);
    std::string item;
    while (std::getline(ss, item, ',')) {
      if (item.empty()) continue;
      bool matched = false;
      const bool bare = item.find(':') == std::string::npos;
      const porta::Device want = porta::Device::parse(item);
      // cpu:strict is a mode of the CPU, never one of devices(): it is tested when named.
      if (want.is_strict()) {
        if (porta::is_available(want) && std::find(out.begin(), out.end(), want) == out.end()) out.push_back(want);
        continue;
      }
      for (const porta::Device& d : all) {
        if ((bare && d.type == want.type) || (!bare && d == want)) {
          bool dup = false;
          for (const porta::Device& o : out) dup = dup || o == d;
          if (!dup) out.push_back(d);
          matched = true;
        }
      }
      if (!matched)
        throw std::runtime_error("PORTA_TEST_DEVICES names " + item + ", which is not available here (" +
                                 porta::unavailable_reason(want.type) + ")");
    }
    if (out.empty()) throw std::runtime_error("PORTA_TEST_DEVICES selects no device");
    return out;
  }();
  return devs;
}

std::optional<porta::Device> other_device(porta::Device dev) {
  const std::vector<porta::Device> all = porta::devices();
  for (const porta::Device& d : all)
    if (d.type != dev.type) return d;
  for (const porta::Device& d : all)
    if (d != dev) return d;
  return std::nullopt;
}

std::optional<std::pair<porta::Device, porta::Device>> two_devices() {
  const std::vector<porta::Device> all = porta::devices();
  if (all.empty()) return std::nullopt;
  if (auto o = other_device(all.front())) return std::make_pair(all.front(), *o);
  return std::nullopt;
}

std::optional<porta::Device> first_gpu() {
  for (const porta::Device& d : porta::devices())
    if (d.is_gpu()) return d;
  return std::nullopt;
}

void for_each_thread_count(std::initializer_list<int> counts, const std::function<void(int)>& body) {
#if defined(_OPENMP)
  struct Restore {
    int saved = omp_get_max_threads();
    ~Restore() { omp_set_num_threads(saved); }
  } restore;
  for (const int threads : counts) {
    omp_set_num_threads(threads);
    body(threads);
  }
#else
  (void)counts;
  body(1);
#endif
}

}  // namespace porta_test
