// SPDX-License-Identifier: Apache-2.0
// Accuracy of float and double math functions against long double (64-bit significand, 11 bits
// beyond double): the error in ulps, the functions of porta::math and porta::fast by name with their
// references, random and consecutive inputs, and checks that report the worst input.
//
//   template <class T> std::vector<porta_test::UnaryFn<T>> functions() {
//     return porta_test::select(PORTA_TEST_MATH_UNARY_TABLE(porta::math), {"exp", "log"});
//   }
//   porta_test::check_accuracy(fn, porta_test::uniform<T>(1, -10, 10, n));
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/check.hpp"

namespace porta_test {

// |y - ref| in units of T's ulp at ref (the subnormal ulp below the normal range). An overflow to
// inf where the exact value is beyond T's range counts as correct; NaN must meet NaN.
template <class T>
long double ulp_error(T y, long double ref) {
  if (std::isnan(ref)) return std::isnan(y) ? 0 : 1e30L;
  if (std::isnan(y)) return 1e30L;
  if (std::isinf(y) || std::isinf(ref)) {
    if (y == ref) return 0;
    const long double big = std::numeric_limits<T>::max();
    return (std::isinf(y) && std::fabs(ref) > big && std::signbit(y) == std::signbit(ref)) ? 0 : 1e30L;
  }
  int e = 0;
  std::frexp(ref, &e);
  e = std::max(e, std::numeric_limits<T>::min_exponent);
  const long double ulp = std::ldexp(1.0L, e - std::numeric_limits<T>::digits);
  return std::fabs(static_cast<long double>(y) - ref) / ulp;
}

template <class T>
const char* type_name() {
  return sizeof(T) == 4 ? "float" : "double";
}

inline long double sigmoid_ref(long double x) {
  return 1.0L / (1.0L + std::exp(-x));
}

// The functions of one argument that porta::math and porta::fast share, each with its long double
// reference (of x): X(ns, name, reference).
#define PORTA_TEST_MATH_UNARY(X, ns)           \
  X(ns, exp, std::exp(x))                      \
  X(ns, exp2, std::exp2(x))                    \
  X(ns, exp10, std::pow(10.0L, x))             \
  X(ns, expm1, std::expm1(x))                  \
  X(ns, log, std::log(x))                      \
  X(ns, log2, std::log2(x))                    \
  X(ns, log10, std::log10(x))                  \
  X(ns, log1p, std::log1p(x))                  \
  X(ns, cbrt, std::cbrt(x))                    \
  X(ns, sin, std::sin(x))                      \
  X(ns, cos, std::cos(x))                      \
  X(ns, tan, std::tan(x))                      \
  X(ns, asin, std::asin(x))                    \
  X(ns, acos, std::acos(x))                    \
  X(ns, atan, std::atan(x))                    \
  X(ns, sinh, std::sinh(x))                    \
  X(ns, cosh, std::cosh(x))                    \
  X(ns, tanh, std::tanh(x))                    \
  X(ns, sigmoid, ::porta_test::sigmoid_ref(x)) \
  X(ns, erf, std::erf(x))                      \
  X(ns, erfc, std::erfc(x))
// The functions of two arguments, each with its long double reference (of x and y).
#define PORTA_TEST_MATH_BINARY(X, ns) \
  X(ns, pow, std::pow(x, y))          \
  X(ns, atan2, std::atan2(x, y))      \
  X(ns, hypot, std::hypot(x, y))

template <class T>
struct UnaryFn {
  const char* name;
  T (*f)(T);
  long double (*ref)(long double);
  double bound = 1.0;  // the largest ulp error the checks accept
};

// std::vector<porta_test::UnaryFn<T>> of every function of PORTA_TEST_MATH_UNARY in namespace ns,
// where T names the argument type (a template parameter).
#define PORTA_TEST_MATH_UNARY_ENTRY(ns, name, reference)                \
  ::porta_test::UnaryFn<T>{#name, [](T x) -> T { return ns::name(x); }, \
                           [](long double x) -> long double { return reference; }, 1.0},
#define PORTA_TEST_MATH_UNARY_TABLE(ns)                    \
  std::vector<::porta_test::UnaryFn<T>> {                  \
    PORTA_TEST_MATH_UNARY(PORTA_TEST_MATH_UNARY_ENTRY, ns) \
  }

// The functions of `all` named in `names`, in that order.
template <class T>
std::vector<UnaryFn<T>> select(const std::vector<UnaryFn<T>>& all, std::initializer_list<const char*> names) {
  std::vector<UnaryFn<T>> out;
  for (const char* name : names) {
    const auto it =
        std::find_if(all.begin(), all.end(), [&](const UnaryFn<T>& f) { return std::string(name) == f.name; });
    if (it == all.end()) FAIL("no function " << name);
    out.push_back(*it);
  }
  return out;
}

template <class T>
UnaryFn<T> function(const std::vector<UnaryFn<T>>& all, const std::string& name) {
  for (const UnaryFn<T>& fn : all)
    if (name == fn.name) return fn;
  FAIL("no function " << name);
  return {};
}

// The largest error over a set of results, and the arguments that gave it.
template <class T>
struct WorstUlp {
  long double ulp = 0;
  T x = 0, y = 0;
  std::size_t count = 0;
  void add(T got, long double ref, T at_x, T at_y = T(0)) {
    ++count;
    const long double e = ulp_error(got, ref);
    if (e > ulp) ulp = e, x = at_x, y = at_y;
  }
  std::string describe(const char* name, bool binary = false) const {
    return std::string(name) + "(" + type_name<T>() + ") worst " + std::to_string(static_cast<double>(ulp)) +
           " ulp at " + (binary ? "(" + show(x) + ", " + show(y) + ")" : show(x)) + " over " + std::to_string(count) +
           " inputs";
  }
};

template <class T>
void check_accuracy(const UnaryFn<T>& fn, const std::vector<T>& xs) {
  WorstUlp<T> worst;
  for (const T x : xs) worst.add(fn.f(x), fn.ref(static_cast<long double>(x)), x);
  INFO(worst.describe(fn.name));
  CHECK(worst.ulp <= fn.bound);
}

template <class T, class F, class R>
void check_binary_accuracy(const char* name, F f, R ref, const std::vector<T>& xs, const std::vector<T>& ys,
                           double bound = 1.0) {
  WorstUlp<T> worst;
  for (std::size_t i = 0; i < xs.size(); ++i)
    worst.add(f(xs[i], ys[i]), ref(static_cast<long double>(xs[i]), static_cast<long double>(ys[i])), xs[i], ys[i]);
  INFO(worst.describe(name, true));
  CHECK(worst.ulp <= bound);
}

// Random inputs: uniform over [lo, hi], and log-uniform magnitudes over [tiny, big] = [2^e0, 2^e1]
// (of both signs when signed_).
template <class T>
std::vector<T> uniform(std::uint64_t seed, double lo, double hi, int n) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T> v;
  for (int i = 0; i < n; ++i) v.push_back(static_cast<T>(u(g)));
  return v;
}
template <class T>
std::vector<T> log_uniform_exponents(std::uint64_t seed, double e0, double e1, bool signed_, int n) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> l(e0, e1);
  std::vector<T> v;
  for (int i = 0; i < n; ++i) {
    const T m = static_cast<T>(std::exp2(l(g)));
    v.push_back(signed_ && (g() & 1) ? -m : m);
  }
  return v;
}
template <class T>
std::vector<T> log_uniform(std::uint64_t seed, double tiny, double big, bool signed_, int n) {
  return log_uniform_exponents<T>(seed, std::log2(tiny), std::log2(big), signed_, n);
}

// 2 half + 1 consecutive values of T centred on c.
template <class T>
std::vector<T> run(T c, int half) {
  const T inf = std::numeric_limits<T>::infinity();
  T x = c;
  for (int i = 0; i < half; ++i) x = std::nextafter(x, -inf);
  std::vector<T> v;
  for (int i = 0; i <= 2 * half; ++i, x = std::nextafter(x, inf)) v.push_back(x);
  return v;
}

template <class T>
void append(std::vector<T>& to, const std::vector<T>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace porta_test
