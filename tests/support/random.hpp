// SPDX-License-Identifier: Apache-2.0
// Fresh random inputs on every run, with the seed printed on failure:
//
//   PORTA_RNG(rng);                                  // seeded from PORTA_TEST_SEED (or random) + file:line
//   auto x = porta_test::nonzero<float>(rng, n);     // ±[0.1, 1]: never zero
//
// The base seed is printed by the runner at start, and every PORTA_RNG adds an INFO line, so a
// failure shows how to replay it: PORTA_TEST_SEED=<base> ./porta_algorithm_tests "<test name>".
#pragma once

#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "porta/porta.hpp"

namespace porta_test {

// PORTA_TEST_SEED if set, else a fresh random seed; fixed for the process.
std::uint64_t base_seed();

class Rng {
 public:
  explicit Rng(const char* tag);
  std::uint64_t seed() const noexcept { return seed_; }
  std::mt19937_64& engine() noexcept { return eng_; }

  // Uniform in [lo, hi] (integers) or [lo, hi) (floating point).
  template <class T>
  T uniform(T lo, T hi) {
    if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(
          std::uniform_real_distribution<double>(static_cast<double>(lo), static_cast<double>(hi))(eng_));
    } else {
      return static_cast<T>(std::uniform_int_distribution<long long>(lo, hi)(eng_));
    }
  }
  bool coin() { return (eng_() >> 17) & 1u; }
  std::int64_t index(std::int64_t n) { return std::uniform_int_distribution<std::int64_t>(0, n - 1)(eng_); }

 private:
  std::uint64_t seed_;
  std::mt19937_64 eng_;
};

#define PORTA_TEST_STR2(x) #x
#define PORTA_TEST_STR(x) PORTA_TEST_STR2(x)
// Declares `name`, a generator seeded for this place in the tests, and records its seed in the
// failure messages of the enclosing scope.
#define PORTA_RNG(name)                                          \
  ::porta_test::Rng name(__FILE__ ":" PORTA_TEST_STR(__LINE__)); \
  INFO("random seed " << name.seed() << " (replay: PORTA_TEST_SEED=" << ::porta_test::base_seed() << ")")

// Values of either sign bounded away from zero: ±[0.1, 1] for floating point, ±[1, 100] for integers.
template <class T>
std::vector<T> nonzero(Rng& rng, std::int64_t n, T lo = T(-1), T hi = T(-1)) {
  std::vector<T> v(static_cast<std::size_t>(n));
  T a, b;
  if (lo == T(-1) && hi == T(-1)) {
    a = std::is_floating_point_v<T> ? T(0.1) : T(1);
    b = std::is_floating_point_v<T> ? T(1) : T(100);
  } else {
    a = lo;
    b = hi;
  }
  for (auto& x : v) {
    T m = rng.uniform<T>(a, b);
    x = rng.coin() ? m : T(-m);
  }
  return v;
}

// Uniform in [lo, hi].
template <class T>
std::vector<T> uniform(Rng& rng, std::int64_t n, T lo, T hi) {
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = rng.uniform<T>(lo, hi);
  return v;
}

// Strictly positive: [0.1, 10] for floating point, [1, 1000] for integers.
template <class T>
std::vector<T> positive(Rng& rng, std::int64_t n) {
  return std::is_floating_point_v<T> ? uniform<T>(rng, n, T(0.1), T(10)) : uniform<T>(rng, n, T(1), T(1000));
}

// ---- poison: what an output holds before a call, so that an element the call forgot shows -------
template <class T>
constexpr T poison() {
  if constexpr (std::is_floating_point_v<T>) {
    return std::numeric_limits<T>::quiet_NaN();
  } else if constexpr (sizeof(T) == 4) {
    return T(0x5EADBEEF);
  } else {
    return T(0x5EADBEEF5EADBEEFLL);
  }
}
template <class T>
bool is_poison(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return v != v;
  } else {
    return v == poison<T>();
  }
}

// An array of `shape` on `dev` whose every element is poison.
template <class T>
porta::Array<T> poisoned(porta::Shape shape, porta::Device dev) {
  std::vector<T> h(static_cast<std::size_t>(shape.size()), poison<T>());
  return porta::Array<T>::from(h.data(), shape, dev);
}

// Allocates and frees a poisoned block of n elements, so that the pool is likely to hand the same
// memory to the result of the next allocating call (catches results with unwritten elements).
template <class T>
void poison_pool(std::int64_t n, porta::Device dev) {
  if (n > 0) (void)poisoned<T>(porta::Shape{n}, dev);
}

// Index of the first poison element, or -1.
template <class T>
std::int64_t first_poison(const std::vector<T>& v) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (is_poison(v[i])) return static_cast<std::int64_t>(i);
  return -1;
}

}  // namespace porta_test
