// SPDX-License-Identifier: Apache-2.0
// porta's own pow, expm1, log1p, exp2, log2, exp10, log10, sinh, cosh, cbrt and hypot
// (porta/detail/math_exp_log.hpp): accuracy against long double (64-bit significand, 11 bits beyond
// double) over random inputs in every part of each reduction, dense runs at the reductions' edges
// and the hard cases, exact results where the exact value is a float or double, and C99 Annex F's
// special values bit for bit, every NaN the canonical one.
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

using porta_test::append;
using porta_test::bits;
using porta_test::check_accuracy;
using porta_test::check_binary_accuracy;
using porta_test::function;
using porta_test::log_uniform;
using porta_test::run;
using porta_test::ulp_error;
using porta_test::uniform;
template <class T>
using Unary = porta_test::UnaryFn<T>;

// Every function is asserted within 1 ulp (faithful: UnaryFn's and check_binary_accuracy's bound).
// Measured over 10^7 random inputs per function and type on the dev VM: double pow, expm1, exp2,
// exp10, sinh and cosh at most 0.64 ulp, log1p, log2, log10, cbrt and hypot 0.50x; float at most
// 0.51 (evaluated in double, rounded once).
constexpr long double kBound = 1.0L;

template <class T>
std::vector<Unary<T>> unary_functions() {
  return porta_test::select(PORTA_TEST_MATH_UNARY_TABLE(pm),
                            {"expm1", "log1p", "exp2", "log2", "exp10", "log10", "sinh", "cosh", "cbrt"});
}

}  // namespace

TEMPLATE_TEST_CASE("math_exp_log: unary functions against long double on random inputs", "[math]", float, double) {
  using T = TestType;
  constexpr bool d = std::is_same_v<T, double>;
  const double big = std::numeric_limits<T>::max(), den = std::numeric_limits<T>::denorm_min();
  const double emax = d ? 709.8 : 88.8, emin = d ? -745.2 : -103.3;  // e^x's range
  const int n = 40000;
  for (const Unary<T>& fn : unary_functions<T>()) {
    const std::string name = fn.name;
    if (name == "expm1") {
      check_accuracy(fn, uniform<T>(1, -50, emax + 1, n));
      check_accuracy(fn, uniform<T>(2, -1.5, 1.5, n));           // n = -2 .. 2, where 2^n - 1 cancels
      check_accuracy(fn, log_uniform<T>(3, 1e-25, 1, true, n));  // n = 0: the series alone
    } else if (name == "log1p") {
      check_accuracy(fn, uniform<T>(4, -1, 1, n));
      check_accuracy(fn, log_uniform<T>(5, 1e-25, 1, true, n));
      check_accuracy(fn, log_uniform<T>(6, den, big, false, n));
    } else if (name == "exp2") {
      check_accuracy(fn, uniform<T>(7, d ? -1080 : -155, d ? 1030 : 130, n));
      check_accuracy(fn, log_uniform<T>(8, 1e-25, 2, true, n));
    } else if (name == "exp10") {
      check_accuracy(fn, uniform<T>(9, d ? -330 : -47, d ? 310 : 40, n));
      check_accuracy(fn, log_uniform<T>(10, 1e-25, 2, true, n));
    } else if (name == "log2" || name == "log10") {
      check_accuracy(fn, log_uniform<T>(11, den, big, false, n));
      check_accuracy(fn, uniform<T>(12, 0.5, 2, n));
    } else if (name == "sinh" || name == "cosh") {
      check_accuracy(fn, uniform<T>(13, -emax - 2, emax + 2, n));
      check_accuracy(fn, uniform<T>(14, -2, 2, n));  // sinh: the series below 1/2, e^r from there
      check_accuracy(fn, log_uniform<T>(15, den, 4, true, n));
    } else if (name == "cbrt") {
      check_accuracy(fn, log_uniform<T>(16, den, big, true, n));
      check_accuracy(fn, uniform<T>(17, -8, 8, n));
    }
  }
  (void)emin;
}

TEMPLATE_TEST_CASE("math_exp_log: pow and hypot against long double on random inputs", "[math]", float, double) {
  using T = TestType;
  constexpr bool d = std::is_same_v<T, double>;
  const auto f = [](T x, T y) { return pm::pow(x, y); };
  const auto ref = [](long double x, long double y) { return std::pow(x, y); };
  const int n = 40000;
  std::mt19937_64 g(20);
  std::uniform_real_distribution<double> u(0, 1);
  const double lmin = std::log2(static_cast<double>(std::numeric_limits<T>::denorm_min()));
  const double lmax = std::log2(static_cast<double>(std::numeric_limits<T>::max()));
  const double range = d ? 745.5 : 104.0;  // |y log x| where results stop being 0 or inf
  // x log-uniform over all of T, y such that y ln x is uniform over the whole range of results
  // (subnormal results and overflow included); x near 1 with huge y; negative x, integer y.
  std::vector<T> xs, ys;
  for (int i = 0; i < n; ++i) {
    const T x = static_cast<T>(std::exp2(lmin + (lmax - lmin) * u(g)));
    const T y = static_cast<T>((2 * u(g) - 1) * range / std::log(static_cast<double>(x)));
    if (!std::isfinite(y)) continue;
    xs.push_back(x), ys.push_back(y);
  }
  for (int i = 0; i < n; ++i) {
    const T x = static_cast<T>(1 + (2 * u(g) - 1) * (d ? 1e-6 : 1e-3));
    xs.push_back(x), ys.push_back(static_cast<T>((2 * u(g) - 1) * range / std::log(static_cast<double>(x))));
  }
  for (int i = 0; i < n; ++i) {
    xs.push_back(static_cast<T>(-std::exp2(8 * u(g) - 4)));
    ys.push_back(static_cast<T>(std::round((2 * u(g) - 1) * (d ? 500 : 60))));
  }
  for (int i = 0; i < n; ++i) {  // small x and y, the common case
    xs.push_back(static_cast<T>(4 * u(g))), ys.push_back(static_cast<T>(8 * u(g) - 4));
  }
  check_binary_accuracy<T>("pow", f, ref, xs, ys);

  // hypot: exponents over the whole range, the two within 2^-40..2^40 (float 2^-20..2^20) of each other.
  std::vector<T> hx, hy;
  for (int i = 0; i < 2 * n; ++i) {
    const double e1 = lmin + (lmax - lmin) * u(g), e2 = e1 + (2 * u(g) - 1) * (d ? 40 : 20);
    const T x = static_cast<T>(std::exp2(e1)), y = static_cast<T>(std::exp2(std::min(e2, lmax)));
    hx.push_back(u(g) < 0.5 ? -x : x), hy.push_back(u(g) < 0.5 ? -y : y);
  }
  check_binary_accuracy<T>(
      "hypot", [](T x, T y) { return pm::hypot(x, y); },
      [](long double x, long double y) { return std::sqrt(x * x + y * y); }, hx, hy);
}

TEST_CASE("math_exp_log: dense runs at the edges of the reductions", "[math]") {
  const auto fd = unary_functions<double>();
  const auto ff = unary_functions<float>();
  const long double ln2 = 0.69314718055994530941723212145817657L;
  // exp-like functions: where n = round(x / ln2) changes (the reduced argument at +-ln2/2), and
  // where expm1's 2^n - 1 stops being exact and sinh switches from its series.
  std::vector<double> ed;
  std::vector<float> ef;
  for (int k = -120; k <= 120; k += 2) {
    append(ed, run(static_cast<double>(k * ln2 / 2), 200));
    append(ef, run(static_cast<float>(k * ln2 / 2), 500));
  }
  for (const double c : {0.5, -0.5, 37.0, 37.5, 38.0, -37.5, 0x1p-54, 709.78, 710.47, 693.0}) append(ed, run(c, 2000));
  for (const float c : {0.5f, -0.5f, 88.72f, 89.41f, 0x1p-25f}) append(ef, run(c, 5000));
  for (const char* name : {"expm1", "sinh", "cosh"}) {
    check_accuracy(function(fd, name), ed);
    check_accuracy(function(ff, name), ef);
  }
  // exp2 and exp10: half-integers (n changes), the subnormal results, overflow.
  std::vector<double> e2d;
  for (int k = -2150; k <= 2050; k += 37) append(e2d, run(k / 2.0, 50));
  for (const double c : {-1022.0, -1074.0, -1075.0, 1024.0}) append(e2d, run(c, 2000));
  check_accuracy(function(fd, "exp2"), e2d);
  std::vector<double> e10d;
  for (const double c : {-307.65, -323.3, -324.0, 308.25, 0.0, 1.0, 22.0}) append(e10d, run(c, 2000));
  check_accuracy(function(fd, "exp10"), e10d);
  // log-like functions: where the exponent k changes (m = sqrt(2)), around 1, the subnormals' edge.
  std::vector<double> ld;
  std::vector<float> lf;
  for (int j = -1074; j <= 1023; j += 7) append(ld, run(std::ldexp(1.4142135623730951, j), 20));
  for (int j = -149; j <= 127; ++j) append(lf, run(std::ldexp(1.41421356f, j), 100));
  for (const double c : {1.0, 0x1p-1022, 10.0, 0.1}) append(ld, run(c, 5000));
  for (const float c : {1.0f, 0x1p-126f, 10.0f}) append(lf, run(c, 10000));
  for (const char* name : {"log2", "log10"}) {
    check_accuracy(function(fd, name), ld);
    check_accuracy(function(ff, name), lf);
  }
  // log1p: near 0 (1 + x rounds to a neighbour of 1), near -1, where 1 + x crosses sqrt(2) and 2^k.
  std::vector<double> l1d;
  std::vector<float> l1f;
  for (const double c : {0.0, 0x1p-53, -0x1p-54, 0x1p-30, -0.5, -1.0 + 0x1p-40, 0.41421356237309503, 1.0, 3.0})
    append(l1d, run(c, 5000));
  for (const float c : {0.0f, 0x1p-24f, -0x1p-25f, -0.5f, -0.99f, 0.41421356f, 1.0f}) append(l1f, run(c, 10000));
  check_accuracy(function(fd, "log1p"), l1d);
  check_accuracy(function(ff, "log1p"), l1f);
  // cbrt: where the exponent's remainder mod 3 changes, and at the subnormals.
  std::vector<double> cd;
  std::vector<float> cf;
  for (int j = -1074; j <= 1023; j += 5) append(cd, run(std::ldexp(1.0, j), 20));
  for (int j = -149; j <= 127; ++j) append(cf, run(std::ldexp(1.0f, j), 100));
  check_accuracy(function(fd, "cbrt"), cd);
  check_accuracy(function(ff, "cbrt"), cf);
}

TEST_CASE("math_exp_log: pow's hard cases", "[math]") {
  const auto f = [](double x, double y) { return pm::pow(x, y); };
  const auto ref = [](long double x, long double y) { return std::pow(x, y); };
  std::vector<double> xs, ys;
  // x next to 1 with y large enough to bring the result near overflow and underflow: y log x is as
  // large as it gets while log x is the smallest, where log x's relative error matters most.
  for (int i = 1; i < 2000; ++i) {
    const double x = 1 + i * 0x1p-52, x2 = 1 - i * 0x1p-53;
    for (const double t : {709.7, -708.3, -744.0, 300.5}) {
      xs.push_back(x), ys.push_back(t / std::log(x));
      xs.push_back(x2), ys.push_back(t / std::log(x2));
    }
  }
  // Results near DBL_MAX and the smallest normal and subnormal: 2^(1024 - e), 2^-1022, 2^-1074.
  for (const double x : {2.0, 3.0, 10.0, 0.5, 1.0000001, 123.456}) {
    for (const double l : {1023.99, -1021.9, -1022.0, -1073.9, -1074.5}) {
      const double y = l / std::log2(x);
      for (const double yy : run(y, 50)) xs.push_back(x), ys.push_back(yy);
    }
  }
  check_binary_accuracy<double>("pow", f, ref, xs, ys);
  // Integer powers of negative bases, exact results.
  for (int k = -60; k <= 60; ++k) {
    CHECK(pm::pow(2.0, double(k)) == std::ldexp(1.0, k));
    CHECK(pm::pow(-2.0, double(k)) == (k % 2 ? -std::ldexp(1.0, k) : std::ldexp(1.0, k)));
    CHECK(pm::pow(2.0f, float(k)) == std::ldexp(1.0f, k));
  }
  CHECK(pm::pow(2.0, -1074.0) == std::numeric_limits<double>::denorm_min());
  CHECK(pm::pow(2.0, 1023.0) == std::ldexp(1.0, 1023));
  CHECK(pm::pow(-3.0, 3.0) == -27.0);
  CHECK(pm::pow(-3.0f, 3.0f) == -27.0f);
  CHECK(pm::pow(10.0, 22.0) == 1e22);
  CHECK(pm::pow(9.0, 0.5) == 3.0);
  CHECK(pm::pow(-1.0, 0x1p60) == 1.0);  // huge even y
  CHECK(pm::pow(-1.0, 0x1p52 + 1) == -1.0);
  CHECK(pm::pow(-1.0, 0x1p53 + 2) == 1.0);
  CHECK(pm::pow(-0x1.0000000000001p+0, 0x1p52 + 1) == -pm::pow(0x1.0000000000001p+0, 0x1p52 + 1));
  CHECK(pm::pow(0.5, 1e300) == 0.0);
  CHECK(pm::pow(2.0, 1e300) == std::numeric_limits<double>::infinity());
  CHECK(pm::pow(1.0000001, -1e300) == 0.0);
  CHECK(pm::pow(-std::numeric_limits<double>::max(), 3.0) == -std::numeric_limits<double>::infinity());
}

TEST_CASE("math_exp_log: exact results", "[math]") {
  for (int k = -1074; k <= 1023; ++k) {
    INFO("k = " << k);
    CHECK(pm::exp2(double(k)) == std::ldexp(1.0, k));
    CHECK(pm::log2(std::ldexp(1.0, k)) == double(k));
  }
  for (int k = -149; k <= 127; ++k) {
    INFO("k = " << k);
    CHECK(pm::exp2(float(k)) == std::ldexp(1.0f, k));
    CHECK(pm::log2(std::ldexp(1.0f, k)) == float(k));
  }
  double p = 1;
  for (int k = 0; k <= 22; ++k, p *= 10) {  // 10^k is a double up to 10^22
    INFO("k = " << k);
    CHECK(pm::exp10(double(k)) == p);
    CHECK(pm::log10(p) == double(k));
    if (k <= 10) CHECK(pm::exp10(float(k)) == static_cast<float>(p));
    if (k <= 10) CHECK(pm::log10(static_cast<float>(p)) == float(k));
  }
  for (int k = 1; k <= 200000; k += 7) {  // k^3 is exact up to 2^53
    const double c = double(k) * k * k;
    INFO("k = " << k);
    CHECK(pm::cbrt(c) == double(k));
    CHECK(pm::cbrt(-c) == -double(k));
    if (c < 0x1p24) CHECK(pm::cbrt(static_cast<float>(c)) == float(k));
  }
  CHECK(pm::hypot(3.0, 4.0) == 5.0);
  CHECK(pm::hypot(3.0f, -4.0f) == 5.0f);
  CHECK(pm::hypot(0x1p1000, 0x1p1000) == std::ldexp(1.4142135623730951, 1000));
  CHECK(pm::hypot(std::numeric_limits<double>::max(), 1.0) == std::numeric_limits<double>::max());
  CHECK(pm::hypot(std::numeric_limits<double>::max(), std::numeric_limits<double>::max()) ==
        std::numeric_limits<double>::infinity());
  for (const double x : {1.0, 3.5, 1e-300, 4.9e-324, 1.7e308}) CHECK(pm::hypot(-x, 0.0) == x);
  CHECK(pm::hypot(3 * 4.9e-324, 4 * 4.9e-324) == 5 * 4.9e-324);  // no spurious underflow
  CHECK(pm::sinh(0.0) == 0.0);
  CHECK(pm::cosh(0.0) == 1.0);
  CHECK(pm::expm1(0.0) == 0.0);
  CHECK(pm::log1p(0.0) == 0.0);
}

TEMPLATE_TEST_CASE("math_exp_log: special values", "[math][ieee]", float, double) {
  using T = TestType;
  const T inf = std::numeric_limits<T>::infinity(), big = std::numeric_limits<T>::max();
  const T den = std::numeric_limits<T>::denorm_min();
  const std::uint64_t canonical = bits(std::numeric_limits<T>::quiet_NaN());
  const auto same = [](T got, T want) { return bits(got) == bits(want); };
  const T nz = T(-0.0);
  // NaN inputs give the canonical NaN, whatever their sign and payload.
  for (const T x : porta_test::nan_patterns<T>()) {
    for (const Unary<T>& fn : unary_functions<T>()) {
      INFO(fn.name);
      CHECK(bits(fn.f(x)) == canonical);
    }
    CHECK(bits(pm::pow(x, T(2))) == canonical);
    CHECK(bits(pm::pow(T(2), x)) == canonical);
    CHECK(bits(pm::hypot(x, T(2))) == canonical);
    CHECK(pm::pow(x, T(0)) == T(1));  // C99: pow(x, +-0) = 1 for any x
    CHECK(pm::pow(x, nz) == T(1));
    CHECK(pm::pow(T(1), x) == T(1));  // and pow(+1, y) = 1 for any y
    CHECK(pm::hypot(x, inf) == inf);  // hypot(+-inf, NaN) = +inf
    CHECK(pm::hypot(-inf, x) == inf);
  }
  // pow, C99 F.9.4.4.
  for (const T x : {T(0), nz, T(2), T(-2), T(0.5), inf, -inf, den}) CHECK(pm::pow(x, T(0)) == T(1));
  for (const T y : {T(0.5), T(-3), inf, -inf, big}) CHECK(pm::pow(T(1), y) == T(1));
  CHECK(same(pm::pow(T(0), T(-3)), inf));
  CHECK(same(pm::pow(nz, T(-3)), -inf));
  CHECK(same(pm::pow(T(0), T(-2)), inf));
  CHECK(same(pm::pow(nz, T(-2)), inf));
  CHECK(same(pm::pow(nz, T(-0.5)), inf));
  CHECK(same(pm::pow(nz, -inf), inf));
  CHECK(same(pm::pow(T(0), T(3)), T(0)));
  CHECK(same(pm::pow(nz, T(3)), nz));
  CHECK(same(pm::pow(nz, T(2)), T(0)));
  CHECK(same(pm::pow(nz, T(0.5)), T(0)));
  CHECK(same(pm::pow(nz, inf), T(0)));
  CHECK(same(pm::pow(T(-1), inf), T(1)));
  CHECK(same(pm::pow(T(-1), -inf), T(1)));
  CHECK(same(pm::pow(T(0.5), -inf), inf));
  CHECK(same(pm::pow(T(-0.5), -inf), inf));
  CHECK(same(pm::pow(T(2), -inf), T(0)));
  CHECK(same(pm::pow(T(-2), -inf), T(0)));
  CHECK(same(pm::pow(T(0.5), inf), T(0)));
  CHECK(same(pm::pow(T(-0.5), inf), T(0)));
  CHECK(same(pm::pow(T(2), inf), inf));
  CHECK(same(pm::pow(T(-2), inf), inf));
  CHECK(same(pm::pow(-inf, T(-3)), nz));
  CHECK(same(pm::pow(-inf, T(-2)), T(0)));
  CHECK(same(pm::pow(-inf, T(-0.5)), T(0)));
  CHECK(same(pm::pow(-inf, T(3)), -inf));
  CHECK(same(pm::pow(-inf, T(2)), inf));
  CHECK(same(pm::pow(-inf, T(0.5)), inf));
  CHECK(same(pm::pow(inf, T(-0.5)), T(0)));
  CHECK(same(pm::pow(inf, T(0.5)), inf));
  CHECK(bits(pm::pow(T(-2), T(0.5))) == canonical);
  CHECK(bits(pm::pow(-den, T(1.5))) == canonical);
  CHECK(bits(pm::pow(-big, T(-0.5))) == canonical);
  CHECK(same(pm::pow(big, T(2)), inf));
  CHECK(same(pm::pow(-big, T(3)), -inf));
  CHECK(same(pm::pow(big, T(-2)), T(0)));
  CHECK(same(pm::pow(-big, T(-3)), nz));
  CHECK(same(pm::pow(T(2), T(-200000)), T(0)));
  // The odd integers at the top of the significand: 2^(digits-1) + 1 is odd, 2^digits + 2 even.
  const T odd = std::ldexp(T(1), std::numeric_limits<T>::digits - 1) + 1;
  const T even = std::ldexp(T(1), std::numeric_limits<T>::digits) + 2;
  CHECK(same(pm::pow(nz, odd), nz));
  CHECK(same(pm::pow(nz, -odd), -inf));
  CHECK(same(pm::pow(nz, even), T(0)));
  CHECK(same(pm::pow(-inf, odd), -inf));
  CHECK(same(pm::pow(-inf, even), inf));
  CHECK(same(pm::pow(T(-1), odd), T(-1)));
  CHECK(same(pm::pow(T(-1), even), T(1)));
  CHECK(bits(pm::pow(T(-1), odd / 2)) == canonical);  // 2^(digits-2) + 1/2, not an integer
  // expm1, log1p.
  CHECK(same(pm::expm1(nz), nz));
  CHECK(same(pm::expm1(inf), inf));
  CHECK(same(pm::expm1(-inf), T(-1)));
  CHECK(same(pm::expm1(big), inf));
  CHECK(same(pm::expm1(-big), T(-1)));
  CHECK(same(pm::expm1(den), den));
  CHECK(same(pm::expm1(-den), -den));
  CHECK(same(pm::log1p(nz), nz));
  CHECK(same(pm::log1p(T(-1)), -inf));
  CHECK(same(pm::log1p(inf), inf));
  CHECK(bits(pm::log1p(T(-2))) == canonical);
  CHECK(bits(pm::log1p(-inf)) == canonical);
  CHECK(same(pm::log1p(den), den));
  CHECK(same(pm::log1p(-den), -den));
  CHECK(ulp_error(pm::log1p(big), std::log1p(static_cast<long double>(big))) <= kBound);
  // exp2, exp10, log2, log10.
  for (const auto e : {+[](T x) { return pm::exp2(x); }, +[](T x) { return pm::exp10(x); }}) {
    CHECK(same(e(T(0)), T(1)));
    CHECK(same(e(nz), T(1)));
    CHECK(same(e(inf), inf));
    CHECK(same(e(-inf), T(0)));
    CHECK(same(e(big), inf));
    CHECK(same(e(-big), T(0)));
  }
  CHECK(same(pm::exp2(T(std::numeric_limits<T>::min_exponent - std::numeric_limits<T>::digits)), den));
  for (const auto l : {+[](T x) { return pm::log2(x); }, +[](T x) { return pm::log10(x); }}) {
    CHECK(same(l(T(1)), T(0)));
    CHECK(same(l(T(0)), -inf));
    CHECK(same(l(nz), -inf));
    CHECK(same(l(inf), inf));
    CHECK(bits(l(T(-1))) == canonical);
    CHECK(bits(l(-inf)) == canonical);
    CHECK(bits(l(-den)) == canonical);
  }
  CHECK(ulp_error(pm::log2(big), std::log2(static_cast<long double>(big))) <= kBound);
  CHECK(same(pm::log2(den), T(std::numeric_limits<T>::min_exponent - std::numeric_limits<T>::digits)));
  // sinh, cosh.
  CHECK(same(pm::sinh(nz), nz));
  CHECK(same(pm::sinh(den), den));
  CHECK(same(pm::sinh(-den), -den));
  CHECK(same(pm::sinh(inf), inf));
  CHECK(same(pm::sinh(-inf), -inf));
  CHECK(same(pm::sinh(big), inf));
  CHECK(same(pm::sinh(-big), -inf));
  CHECK(same(pm::cosh(nz), T(1)));
  CHECK(same(pm::cosh(inf), inf));
  CHECK(same(pm::cosh(-inf), inf));
  CHECK(same(pm::cosh(-big), inf));
  // sinh and cosh stay finite beyond the point where e^x overflows.
  const T beyond = std::is_same_v<T, double> ? T(710.0) : T(89.0);
  CHECK(std::isfinite(pm::sinh(beyond)));
  CHECK(std::isfinite(pm::cosh(-beyond)));
  CHECK(ulp_error(pm::sinh(beyond), std::sinh(static_cast<long double>(beyond))) <= kBound);
  // cbrt, hypot.
  CHECK(same(pm::cbrt(nz), nz));
  CHECK(same(pm::cbrt(T(0)), T(0)));
  CHECK(same(pm::cbrt(inf), inf));
  CHECK(same(pm::cbrt(-inf), -inf));
  CHECK(ulp_error(pm::cbrt(den), std::cbrt(static_cast<long double>(den))) <= kBound);
  CHECK(ulp_error(pm::cbrt(-big), std::cbrt(-static_cast<long double>(big))) <= kBound);
  CHECK(same(pm::hypot(T(0), nz), T(0)));
  CHECK(same(pm::hypot(nz, nz), T(0)));
  CHECK(same(pm::hypot(inf, T(1)), inf));
  CHECK(same(pm::hypot(T(1), -inf), inf));
  CHECK(ulp_error(pm::hypot(den, den), std::sqrt(2.0L) * den) <= kBound);
  CHECK(same(pm::hypot(big, big), inf));
}

// A negative base needs to know whether y is an integer and whether it is odd, also where doubles
// are spaced 1/2 apart (2^51 .. 2^52: the kRound trick stops being exact there) and 1 (2^52 .. 2^53).
TEST_CASE("math_exp_log: pow of a negative base near 2^51, 2^52 and 2^53", "[math][ieee]") {
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    double y;
    bool integer, odd;
  };
  const Case cases[] = {
      {0x1p51 - 1, true, true},     {0x1p51 - 0.5, false, false}, {0x1p51, true, false},
      {0x1p51 + 0.5, false, false}, {0x1p51 + 1, true, true},     {0x1p51 + 2, true, false},
      {0x1p52 - 0.5, false, false}, {0x1p52 - 1, true, true},     {0x1p52, true, false},
      {0x1p52 + 1, true, true},     {0x1p53 - 1, true, true},     {0x1p53, true, false},
      {0x1p53 + 2, true, false},
  };
  for (const Case& c : cases)
    for (const double sign : {1.0, -1.0}) {
      const double y = sign * c.y;
      INFO("y = " << porta_test::show(y));
      // |x| > 1: the magnitude overflows (y > 0) or underflows (y < 0); the sign is x's for odd y.
      const double big = pm::pow(-9.9, y);
      const double mag = y > 0 ? inf : 0.0;
      if (!c.integer) {
        CHECK(porta_test::same_bits(big, std::numeric_limits<double>::quiet_NaN()));
      } else {
        CHECK(porta_test::same_bits(big, c.odd ? -mag : mag));
      }
      // x = -1: exactly +-1 for integers.
      const double one = pm::pow(-1.0, y);
      if (c.integer) CHECK(one == (c.odd ? -1.0 : 1.0));
      if (!c.integer) CHECK(std::isnan(one));
    }
}
