// SPDX-License-Identifier: Apache-2.0
// porta's own tan, sincos, asin, acos, atan, atan2, erf and erfc (porta/detail/math_trig.hpp and
// math_erf.hpp): accuracy against long double (64-bit significand, 11 bits beyond double) on random
// inputs in every sub-range of each function's evaluation, dense runs at the edges of those ranges
// and at the hard cases (tan next to its poles, acos next to 1, erfc through its underflow), the
// special values of C99 Annex F bit for bit, and sincos giving exactly sin's and cos's bits.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "porta/math.hpp"
#include "support/support.hpp"
#include "support/ulp.hpp"

namespace pm = porta::detail::math;

namespace {

using porta_test::bits;
using porta_test::check_accuracy;
using porta_test::uniform;
template <class T>
using Fn = porta_test::UnaryFn<T>;

template <class T>
std::vector<Fn<T>> functions() {
  return porta_test::select(PORTA_TEST_MATH_UNARY_TABLE(pm), {"tan", "asin", "acos", "atan", "erf", "erfc"});
}

template <class T>
Fn<T> function(const std::string& name) {
  return porta_test::function(functions<T>(), name);
}

// Log-uniform magnitudes over [2^e0, 2^e1], both signs.
template <class T>
std::vector<T> log_uniform(std::uint64_t seed, double e0, double e1, int n) {
  return porta_test::log_uniform_exponents<T>(seed, e0, e1, true, n);
}

// The 2k + 1 consecutive T values centred on c (and their negatives when both_signs).
template <class T>
void add_run(std::vector<T>& v, T c, int k, bool both_signs = true) {
  for (const T x : porta_test::run(c, k)) {
    v.push_back(x);
    if (both_signs) v.push_back(-x);
  }
}

}  // namespace

TEMPLATE_TEST_CASE("math trig/erf: accuracy on random inputs in every sub-range", "[math]", float, double) {
  using T = TestType;
  constexpr bool d = std::is_same_v<T, double>;
  const int n = 40000;
  // tan: the tiny path, the Cody-Waite reduction (float and double degrees), Payne-Hanek.
  const Fn<T> tan = function<T>("tan");
  check_accuracy(tan, log_uniform<T>(1, -40, -20, n));
  check_accuracy(tan, uniform<T>(2, -7, 7, n));
  check_accuracy(tan, log_uniform<T>(3, -20, 20.5, n));
  check_accuracy(tan, log_uniform<T>(4, 20.5, d ? 1023 : 127, n));
  // asin and acos: tiny, |x| <= 1/2 (no swap in the atan2 core), 1/2 < |x| <= 1, next to 1.
  for (const char* name : {"asin", "acos"}) {
    const Fn<T> f = function<T>(name);
    check_accuracy(f, log_uniform<T>(5, d ? -1074 : -149, -20, n));
    check_accuracy(f, uniform<T>(6, -0.5, 0.5, n));
    check_accuracy(f, uniform<T>(7, -1, 1, n));
    check_accuracy(f, log_uniform<T>(8, -30, -1, n / 2));
    std::vector<T> near1;
    for (T x : log_uniform<T>(9, d ? -53 : -24, -1, n / 2)) near1.push_back(x < 0 ? T(-1) - x : T(1) - x);
    check_accuracy(f, near1);
  }
  // atan: every k = round(8u), u = |x| or 1 / |x|, tiny, huge.
  const Fn<T> atan = function<T>("atan");
  check_accuracy(atan, uniform<T>(10, -1, 1, n));
  check_accuracy(atan, uniform<T>(11, -16, 16, n));
  check_accuracy(atan, log_uniform<T>(12, d ? -1074 : -149, d ? 1024 : 128, n));
  // erf and erfc: the Taylor range, each erfcx interval, erf's and erfc's saturation, erfc's
  // underflow through the subnormals.
  for (const char* name : {"erf", "erfc"}) {
    const Fn<T> f = function<T>(name);
    check_accuracy(f, log_uniform<T>(13, d ? -1074 : -149, -1, n));
    check_accuracy(f, uniform<T>(14, -3, 3, n));
    check_accuracy(f, uniform<T>(15, -7, 7, n));
    check_accuracy(f, uniform<T>(16, -30, 30, n));
  }
  check_accuracy(function<T>("erfc"), uniform<T>(17, d ? 26 : 9, d ? 27.5 : 10.5, n));
}

TEMPLATE_TEST_CASE("math trig/erf: dense runs at the edges and hard cases", "[math]", float, double) {
  using T = TestType;
  constexpr bool d = std::is_same_v<T, double>;
  const long double pio2 = 1.5707963267948966192313216916397514L;
  // tan next to its poles and zeros: the T values nearest k pi/2, on every path.
  std::vector<T> xs;
  for (long k = 1; k < (d ? (1L << 40) : (1L << 24)); k = k * 3 / 2 + 1) add_run(xs, static_cast<T>(k * pio2), 3);
  check_accuracy(function<T>("tan"), xs);
  if constexpr (d) {  // the double whose reduction is the hardest known (within 2^-60.9 of a multiple of pi/2)
    check_accuracy(function<T>("tan"), std::vector<T>{std::ldexp(6381956970095103.0, 797), 1e22, 1e300});
  }
  // asin and acos next to +-1, +-1/2 and the tiny threshold; atan at the edges of k = round(8u),
  // at 1 (the swap) and its thresholds.
  xs.clear();
  for (T c : {T(1), T(0.5), T(0x1p-26), T(0x1p-27)}) add_run(xs, c, 200);
  check_accuracy(function<T>("asin"), xs);
  check_accuracy(function<T>("acos"), xs);
  xs.clear();
  for (int k = 0; k < 8; ++k) {
    add_run(xs, static_cast<T>((2 * k + 1) / 16.0), 50);
    add_run(xs, static_cast<T>(16.0 / (2 * k + 1)), 50);
  }
  for (T c : {T(1), T(0x1p-27), T(0x1p60)}) add_run(xs, c, 50);
  check_accuracy(function<T>("atan"), xs);
  // erf and erfc at the ends of their evaluations and of erfcx's intervals, and through erfc's
  // underflow.
  xs.clear();
  for (T c : {T(0.5), T(0.75), T(1), T(1.5), T(2), T(3), T(4), T(6), T(8), T(12), T(16), T(24), T(28)})
    add_run(xs, c, 100);
  check_accuracy(function<T>("erf"), xs);
  check_accuracy(function<T>("erfc"), xs);
  xs.clear();
  for (double c = d ? 26.5 : 9.8; c < (d ? 27.3 : 10.1); c += 0.01) add_run(xs, static_cast<T>(c), 5, false);
  check_accuracy(function<T>("erfc"), xs);
  check_accuracy(function<T>("erf"), std::vector<T>{std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::min(),
                                                    T(d ? 0x1p-900 : 0x1p-120), T(d ? 0x1.fffp-901 : 0x1.fffp-121)});
}

TEMPLATE_TEST_CASE("math trig/erf: atan2 in every quadrant against long double", "[math]", float, double) {
  using T = TestType;
  constexpr bool d = std::is_same_v<T, double>;
  std::mt19937_64 g(21);
  std::uniform_real_distribution<double> u(-1, 1), l(d ? -1074 : -149, d ? 1023 : 127), m(-40, 40);
  porta_test::WorstUlp<T> worst;
  const auto check = [&](T y, T x) {
    worst.add(pm::atan2(y, x), std::atan2(static_cast<long double>(y), static_cast<long double>(x)), y, x);
  };
  for (int i = 0; i < 40000; ++i) {
    check(static_cast<T>(u(g)), static_cast<T>(u(g)));
    const T a = static_cast<T>(std::exp2(m(g))), b = static_cast<T>(std::exp2(m(g)));
    check((g() & 1) ? -a : a, (g() & 1) ? -b : b);
    const T c = static_cast<T>(std::exp2(l(g))), e = static_cast<T>(std::exp2(l(g)));
    check((g() & 1) ? -c : c, (g() & 1) ? -e : e);  // quotients that overflow, underflow, go subnormal
  }
  INFO(worst.describe("atan2", true));
  CHECK(worst.ulp <= 1.0);
}

TEMPLATE_TEST_CASE("math trig/erf: special values", "[math][ieee]", float, double) {
  using T = TestType;
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const T big = std::numeric_limits<T>::max(), den = std::numeric_limits<T>::denorm_min();
  const std::uint64_t canonical = bits(nan);
  const auto rounded = [](long double v) { return static_cast<T>(v); };
  const long double pi = 3.1415926535897932384626433832795029L;
  for (const T x : {nan, -nan}) {
    for (const Fn<T>& fn : functions<T>()) {
      INFO(fn.name);
      CHECK(bits(fn.f(x)) == canonical);
    }
    T s = 0, c = 0;
    pm::sincos(x, &s, &c);
    CHECK((bits(s) == canonical && bits(c) == canonical));
    for (const T y : {T(1), T(0), inf, nan}) {
      CHECK(bits(pm::atan2(x, y)) == canonical);
      CHECK(bits(pm::atan2(y, x)) == canonical);
    }
  }
  // Invalid: tan and sincos of inf, asin and acos beyond [-1, 1].
  for (const T x : {inf, -inf}) {
    CHECK(bits(pm::tan(x)) == canonical);
    T s = 0, c = 0;
    pm::sincos(x, &s, &c);
    CHECK((bits(s) == canonical && bits(c) == canonical));
  }
  for (const T x : {T(1.5), T(-1.5), std::nextafter(T(1), T(2)), big, inf, -inf}) {
    CHECK(bits(pm::asin(x)) == canonical);
    CHECK(bits(pm::acos(x)) == canonical);
  }
  // Signed zeros and the exact results.
  for (const T z : {T(0), T(-0.0)}) {
    CHECK(bits(pm::tan(z)) == bits(z));
    CHECK(bits(pm::asin(z)) == bits(z));
    CHECK(bits(pm::atan(z)) == bits(z));
    CHECK(bits(pm::erf(z)) == bits(z));
    CHECK(pm::erfc(z) == T(1));
    CHECK(pm::acos(z) == rounded(pi / 2));
    T s = 1, c = 0;
    pm::sincos(z, &s, &c);
    CHECK(bits(s) == bits(z));
    CHECK(c == T(1));
  }
  CHECK(bits(pm::tan(-den)) == bits(-den));
  CHECK(bits(pm::asin(-den)) == bits(-den));
  CHECK(bits(pm::atan(-den)) == bits(-den));
  CHECK(bits(pm::acos(T(1))) == bits(T(0)));
  CHECK(pm::acos(T(-1)) == rounded(pi));
  CHECK(pm::asin(T(1)) == rounded(pi / 2));
  CHECK(pm::asin(T(-1)) == -rounded(pi / 2));
  CHECK(pm::atan(inf) == rounded(pi / 2));
  CHECK(pm::atan(-inf) == -rounded(pi / 2));
  CHECK(pm::atan(big) == rounded(pi / 2));
  CHECK(pm::erf(inf) == T(1));
  CHECK(pm::erf(-inf) == T(-1));
  CHECK(pm::erf(big) == T(1));
  CHECK(bits(pm::erfc(inf)) == bits(T(0)));
  CHECK(bits(pm::erfc(big)) == bits(T(0)));
  CHECK(pm::erfc(-inf) == T(2));
  CHECK(pm::erfc(-big) == T(2));
  // atan2, C99 Annex F (G.6 and F.9.1.4): every zero and infinite case, bit for bit.
  const T p = rounded(pi), p2 = rounded(pi / 2), p4 = rounded(pi / 4), p34 = rounded(3 * pi / 4);
  for (const T s : {T(1), T(-1)}) {
    const T z = s * T(0);  // +-0 with the sign of s
    CHECK(bits(pm::atan2(z, T(-0.0))) == bits(s * p));
    CHECK(bits(pm::atan2(z, T(0))) == bits(z));
    CHECK(bits(pm::atan2(z, T(-2))) == bits(s * p));
    CHECK(bits(pm::atan2(z, -inf)) == bits(s * p));
    CHECK(bits(pm::atan2(z, T(2))) == bits(z));
    CHECK(bits(pm::atan2(z, inf)) == bits(z));
    CHECK(bits(pm::atan2(s * T(2), T(0))) == bits(s * p2));
    CHECK(bits(pm::atan2(s * T(2), T(-0.0))) == bits(s * p2));
    CHECK(bits(pm::atan2(s * T(2), -inf)) == bits(s * p));
    CHECK(bits(pm::atan2(s * T(2), inf)) == bits(z));
    CHECK(bits(pm::atan2(s * big, inf)) == bits(z));
    CHECK(bits(pm::atan2(s * inf, T(2))) == bits(s * p2));
    CHECK(bits(pm::atan2(s * inf, T(-2))) == bits(s * p2));
    CHECK(bits(pm::atan2(s * inf, T(0))) == bits(s * p2));
    CHECK(bits(pm::atan2(s * inf, -inf)) == bits(s * p34));
    CHECK(bits(pm::atan2(s * inf, inf)) == bits(s * p4));
    CHECK(bits(pm::atan2(s * den, big)) == bits(z));  // underflows to a signed zero
    CHECK(bits(pm::atan2(s * big, -big)) == bits(s * p34));
  }
}

TEMPLATE_TEST_CASE("math trig/erf: sincos gives sin's and cos's bits", "[math]", float, double) {
  using T = TestType;
  constexpr bool d = std::is_same_v<T, double>;
  std::vector<T> xs = log_uniform<T>(30, d ? -1074 : -149, d ? 1023 : 127, 50000);
  for (T x : uniform<T>(31, -1e3, 1e3, 50000)) xs.push_back(x);
  for (T x : uniform<T>(32, -2e6, 2e6, 20000)) xs.push_back(x);  // float: the fast, wide and large paths
  for (T x : {T(0), T(-0.0), std::numeric_limits<T>::max(), -std::numeric_limits<T>::max()}) xs.push_back(x);
  std::size_t bad = 0;
  T at = 0;
  for (T x : xs) {
    T s = 0, c = 0;
    pm::sincos(x, &s, &c);
    if (bits(s) != bits(pm::sin(x)) || bits(c) != bits(pm::cos(x))) ++bad, at = x;
  }
  INFO(bad << " of " << xs.size() << " differ, e.g. at " << porta_test::show(at));
  CHECK(bad == 0);
}
