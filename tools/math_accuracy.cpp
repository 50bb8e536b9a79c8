// SPDX-License-Identifier: Apache-2.0
// math_accuracy: the largest error of porta's math functions (porta/detail/math*.hpp), in ulps of the
// exact value, against MPFR.
//
//   math_accuracy --exhaustive-float [--only exp,log]   every float bit pattern (unary functions)
//   math_accuracy --float N --double N [--seed S]       N random inputs per function from its
//                                                       ranges, plus the edge cases
//
// Each result is compared with the exact value computed by MPFR at 200 bits: the error is
// |y - f(x)| / ulp(f(x)) (ulp of the exact value in the result's format; the subnormal ulp below
// the normal range), to far better than 0.001 ulp. MPFR costs microseconds, so a cheap reference
// goes first: glibc's double function for float results (within ~2^-28 float ulp) and its long
// double one for double results (within ~0.002 double ulp). MPFR decides every input where that
// estimate could change an answer: above 0.9 ulp, near the largest error seen so far (double: the
// estimate is not within 0.001 ulp), within the reference's own error of 0.5 ulp, a special value
// that disagrees, a result that overflowed near the threshold, a reference that is not a normal
// number. So the counts are MPFR's, and the maximum is MPFR's or the float estimate's (1e-6 ulp).
//
// Output per function and type: inputs checked, the largest error and the argument where it occurs
// (the first one, in input order, if several tie), how many results are more than 0.5 ulp off (not
// correctly rounded), and special-value mismatches: a NaN result must be the canonical quiet NaN, an
// exact zero must come with its sign, an infinite result must be infinite. The exit status is 1 if a
// function exceeds its bound or has a special-value mismatch.
//
// A function is one line of table() below.
//
// On a machine without MPFR (the GPU machine's host), a static build carries it:
//   g++ -std=c++17 -O2 -march=x86-64-v3 -fopenmp -ffp-contract=off -Iinclude tools/math_accuracy.cpp
//       -static -o math_accuracy /usr/lib/x86_64-linux-gnu/libmpfr.a /usr/lib/x86_64-linux-gnu/libgmp.a
#include <mpfr.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

// ops.hpp first, as porta's own headers include it: the math headers build on its add_rn and mul_rn.
#include "porta/detail/ops.hpp"

#include "porta/detail/math.hpp"
#include "porta/detail/math_erf.hpp"
#include "porta/detail/math_exp_log.hpp"
#include "porta/detail/math_trig.hpp"

namespace pm = porta::detail::math;

namespace {

// ---- the table ------------------------------------------------------------------------------------
// Where random arguments come from: uniform over [lo, hi], or magnitudes log-uniform over [lo, hi]
// (lo > 0) of both signs or positive only.
enum class Dist { uniform, log_both, log_pos };
struct Range {
  double lo, hi;
  Dist dist;
};

using Mpfr1 = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);
using Mpfr2 = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t);

struct Fn {
  const char* name;
  int arity;  // 1 or 2
  float (*f1)(float);
  double (*d1)(double);
  float (*f2)(float, float);
  double (*d2)(double, double);
  Mpfr1 m1;  // the exact function, correctly rounded at the target's precision
  Mpfr2 m2;
  double (*pf1)(double);  // the cheap references: glibc in double for float, long double for double
  long double (*pd1)(long double);
  double (*pf2)(double, double);
  long double (*pd2)(long double, long double);
  std::vector<Range> x, y;    // the first and (arity 2) second argument's ranges
  std::vector<double> edges;  // points where a reduction or path changes (both signs, neighbours)
  double period;              // multiples of it are reduction edges too (0: none)
  double bound_f, bound_d;    // the largest error allowed, in ulps
};

template <class Ref>
Fn unary(const char* name, float (*f)(float), double (*d)(double), Mpfr1 m, Ref ref, std::vector<Range> x,
         std::vector<double> edges, double period, double bound_f, double bound_d) {
  Fn fn{};
  fn.name = name, fn.arity = 1, fn.f1 = f, fn.d1 = d, fn.m1 = m, fn.pf1 = ref, fn.pd1 = ref;
  fn.x = std::move(x), fn.edges = std::move(edges), fn.period = period, fn.bound_f = bound_f, fn.bound_d = bound_d;
  return fn;
}
template <class Ref>
Fn binary(const char* name, float (*f)(float, float), double (*d)(double, double), Mpfr2 m, Ref ref,
          std::vector<Range> x, std::vector<Range> y, std::vector<double> edges, double bound_f, double bound_d) {
  Fn fn{};
  fn.name = name, fn.arity = 2, fn.f2 = f, fn.d2 = d, fn.m2 = m, fn.pf2 = ref, fn.pd2 = ref;
  fn.x = std::move(x), fn.y = std::move(y), fn.edges = std::move(edges), fn.bound_f = bound_f, fn.bound_d = bound_d;
  return fn;
}

// sigmoid(x) = 1 / (1 + e^-x), with 20 guard bits: its two roundings stay far below the 200 bits.
int mpfr_sigmoid(mpfr_ptr r, mpfr_srcptr x, mpfr_rnd_t rnd) {
  mpfr_t t;
  mpfr_init2(t, mpfr_get_prec(r) + 20);
  mpfr_neg(t, x, MPFR_RNDN);
  mpfr_exp(t, t, MPFR_RNDN);
  mpfr_add_ui(t, t, 1, MPFR_RNDN);
  const int inex = mpfr_ui_div(r, 1, t, rnd);
  mpfr_clear(t);
  return inex;
}

// sincos as two functions of one argument.
template <class T>
T sincos_sin(T x) {
  T s, c;
  pm::sincos(x, &s, &c);
  return s;
}
template <class T>
T sincos_cos(T x) {
  T s, c;
  pm::sincos(x, &s, &c);
  return c;
}

// One entry per function: UNARY(name, MPFR function, reference expression in x, ranges, edges,
// period, float bound, double bound); the reference is evaluated in double and in long double.
// UNARY_AS names an expression instead of pm::name(x); BINARY is a function of two arguments,
// ranges for each, edges shared.
#define UNARY_AS(label, expr, mpfr_fn, ref, ...)                                                               \
  unary(                                                                                                       \
      label, [](float x) { return expr; }, [](double x) { return expr; }, mpfr_fn, [](auto x) { return ref; }, \
      __VA_ARGS__)
#define UNARY(fn, mpfr_fn, ref, ...) UNARY_AS(#fn, pm::fn(x), mpfr_fn, ref, __VA_ARGS__)
#define BINARY(fn, mpfr_fn, ref, ...)                                                                               \
  binary(                                                                                                           \
      #fn, [](float x, float y) { return pm::fn(x, y); }, [](double x, double y) { return pm::fn(x, y); }, mpfr_fn, \
      [](auto x, auto y) { return ref; }, __VA_ARGS__)

const std::vector<Fn>& table() {
  constexpr double ln2 = 0.69314718055994530942, pi = 3.14159265358979323846, log10_2 = 0.30102999566398119521;
  constexpr Dist U = Dist::uniform, L = Dist::log_both, P = Dist::log_pos;
  static const std::vector<Fn> t = {
      UNARY(exp, mpfr_exp, std::exp(x), {{-746, 710, U}, {1e-20, 750, L}},
            {709.782712893384, -708.39641853226, -745.133219101941, 88.7228, -87.3365, -103.2789, 0x1p-25, 0x1p-54},
            ln2 / 2, 1.0, 1.0),
      UNARY(log, mpfr_log, std::log(x), {{0.5, 2, U}, {4.9e-324, 1.7e308, P}},
            {1.0, 1.4142135623730951, 0x1p-1022, 0x1p-126, 0.9999, 1.0001}, 0.0, 1.0, 1.0),
      UNARY(sin, mpfr_sin, std::sin(x), {{-10, 10, U}, {1e-10, 2e6, L}, {1e6, 1.7e308, L}},
            {400.0, 1.5e6, 0x1p-12, 0x1p-27}, pi / 4, 1.0, 1.0),
      UNARY(cos, mpfr_cos, std::cos(x), {{-10, 10, U}, {1e-10, 2e6, L}, {1e6, 1.7e308, L}},
            {400.0, 1.5e6, 0x1p-12, 0x1p-27}, pi / 4, 1.0, 1.0),
      UNARY(tanh, mpfr_tanh, std::tanh(x), {{-20, 20, U}, {1e-300, 800, L}, {0.17, 0.18, U}, {-0.18, -0.17, U}},
            {20.0, 19.0, 0.17328679513998632, 0.5, 1e-8}, ln2 / 4, 1.0, 1.0),
      UNARY(sigmoid, mpfr_sigmoid, 1 / (1 + std::exp(-x)), {{-40, 40, U}, {1e-300, 800, L}, {-746, -36, U}},
            {745.133219101941, 708.39641853226, 36.7368005696771, 1e-8}, ln2 / 2, 1.0, 1.0),
      // porta/detail/math_exp_log.hpp
      UNARY(exp2, mpfr_exp2, std::exp2(x), {{-1076, 1025, U}, {1e-20, 1100, L}},
            {1024.0, 1022.0, 1074.0, 1075.0, 126.0, 149.0}, 0.5, 1.0, 1.0),
      UNARY(exp10, mpfr_exp10, std::pow(decltype(x)(10), x), {{-324, 309, U}, {1e-20, 330, L}},
            {308.2547155599167, 307.6526555685888, 323.3062153431158, 38.23080944932561, 44.85346, 1.0, 2.0, 22.0},
            log10_2 / 2, 1.0, 1.0),
      UNARY(expm1, mpfr_expm1, std::expm1(x), {{-1, 1, U}, {1e-300, 720, L}},
            {709.782712893384, 0x1p-54, 0x1p-25, 37.5}, ln2 / 2, 1.0, 1.0),
      UNARY(log2, mpfr_log2, std::log2(x), {{0.5, 2, U}, {4.9e-324, 1.7e308, P}}, {1.0, 1.4142135623730951, 0x1p-1022},
            0.0, 1.0, 1.0),
      UNARY(log10, mpfr_log10, std::log10(x), {{0.5, 2, U}, {4.9e-324, 1.7e308, P}}, {1.0, 10.0, 1e22, 1e-5, 1e300},
            0.0, 1.0, 1.0),
      UNARY(log1p, mpfr_log1p, std::log1p(x), {{-1, 1, U}, {1e-300, 1.7e308, P}, {1e-300, 1, L}},
            {1.0, 0x1p-54, 0.41421356237309503, 0.29289321881345248}, 0.0, 1.0, 1.0),
      UNARY(sinh, mpfr_sinh, std::sinh(x), {{-20, 20, U}, {1e-300, 720, L}},
            {710.475860073944, 89.4159851, 0x1p-26, 0.5}, ln2 / 2, 1.0, 1.0),
      UNARY(cosh, mpfr_cosh, std::cosh(x), {{-20, 20, U}, {1e-300, 720, L}},
            {710.475860073944, 89.4159851, 0x1p-26, 0.5}, ln2 / 2, 1.0, 1.0),
      UNARY(cbrt, mpfr_cbrt, std::cbrt(x), {{-10, 10, U}, {4.9e-324, 1.7e308, L}}, {1.0, 8.0, 27.0, 0x1p-1022}, 0.0,
            1.0, 1.0),
      BINARY(pow, mpfr_pow, std::pow(x, y), {{1e-3, 1e3, P}, {0.5, 2, U}, {1e-300, 1e300, P}, {-10, 10, U}},
             {{-50, 50, U}, {1e-5, 1e4, L}}, {1.0, 2.0, 0.5, 3.0, 10.0}, 1.0, 1.0),
      BINARY(hypot, mpfr_hypot, std::hypot(x, y), {{-10, 10, U}, {1e-320, 1e308, L}},
             {{-10, 10, U}, {1e-320, 1e308, L}}, {1.0, 3.0, 0x1p-1022, 0x1p1000}, 1.0, 1.0),
      // porta/detail/math_trig.hpp
      UNARY(tan, mpfr_tan, std::tan(x), {{-10, 10, U}, {1e-10, 2e6, L}, {1e6, 1.7e308, L}},
            {400.0, 1.5e6, 0x1p-12, 0x1p-27}, pi / 4, 1.0, 1.0),
      UNARY_AS("sincos.s", sincos_sin(x), mpfr_sin, std::sin(x), {{-10, 10, U}, {1e-10, 2e6, L}, {1e6, 1.7e308, L}},
               {400.0, 1.5e6, 0x1p-12, 0x1p-27}, pi / 4, 1.0, 1.0),
      UNARY_AS("sincos.c", sincos_cos(x), mpfr_cos, std::cos(x), {{-10, 10, U}, {1e-10, 2e6, L}, {1e6, 1.7e308, L}},
               {400.0, 1.5e6, 0x1p-12, 0x1p-27}, pi / 4, 1.0, 1.0),
      UNARY(asin, mpfr_asin, std::asin(x), {{-1, 1, U}, {1e-300, 1, L}}, {1.0, 0.5, 0x1p-26}, 0.0, 1.0, 1.0),
      UNARY(acos, mpfr_acos, std::acos(x), {{-1, 1, U}, {1e-300, 1, L}}, {1.0, 0.5, 0x1p-26}, 0.0, 1.0, 1.0),
      UNARY(atan, mpfr_atan, std::atan(x), {{-10, 10, U}, {1e-300, 1.7e308, L}}, {1.0, 0x1p60, 0x1p-27, 0.0625}, 0.125,
            1.0, 1.0),
      BINARY(atan2, mpfr_atan2, std::atan2(x, y), {{-10, 10, U}, {1e-320, 1e308, L}},
             {{-10, 10, U}, {1e-320, 1e308, L}}, {1.0, 0x1p-28, 0x1p1000, 0x1p-1000}, 1.0, 1.0),
      // porta/detail/math_erf.hpp
      UNARY(erf, mpfr_erf, std::erf(x), {{-6, 6, U}, {1e-300, 30, L}}, {0.84375, 0.5, 0.625, 6.0, 0x1p-28}, 0.0, 1.0,
            1.0),
      UNARY(erfc, mpfr_erfc, std::erfc(x), {{-6, 28, U}, {1e-300, 30, L}},
            {0.84375, 0.5, 0.625, 6.0, 10.0, 24.0, 26.55, 27.2, 28.0}, 0.0, 1.0, 1.0),
  };
  return t;
}
#undef UNARY_AS
#undef UNARY
#undef BINARY

// ---- ulps -----------------------------------------------------------------------------------------
template <class T>
struct Fmt;
template <>
struct Fmt<float> {
  using Ref = double;                  // the cheap reference's type
  static constexpr double tol = 1e-6;  // how far its estimate can be off, in ulps
  static std::uint64_t bits(float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    return u;
  }
};
template <>
struct Fmt<double> {
  using Ref = long double;
  static constexpr double tol = 1e-2;
  static std::uint64_t bits(double x) {
    std::uint64_t u;
    std::memcpy(&u, &x, 8);
    return u;
  }
};
template <class T>
constexpr int kDigits = std::numeric_limits<T>::digits;
template <class T>
constexpr int kMinExp = std::numeric_limits<T>::min_exponent;  // frexp's exponent of the smallest normal
template <class T>
constexpr int kMaxExp = std::numeric_limits<T>::max_exponent;

// The special-value checks both error functions share: what is wrong (or nullptr) for a result y
// when the exact value is NaN, infinite or zero. *done says whether the check settled the error.
template <class T>
const char* special(T y, bool ref_nan, bool ref_inf, bool ref_neg, bool ref_zero, bool* done) {
  *done = true;
  if (ref_nan) {
    if (!std::isnan(y)) return "a number where NaN is exact";
    return Fmt<T>::bits(y) == Fmt<T>::bits(std::numeric_limits<T>::quiet_NaN()) ? nullptr : "a non-canonical NaN";
  }
  if (std::isnan(y)) return "NaN for a number";
  if (ref_inf) return (std::isinf(y) && std::signbit(y) == ref_neg) ? nullptr : "finite for an exact infinity";
  if (ref_zero && y == 0) return std::signbit(y) == ref_neg ? nullptr : "the wrong sign of zero";
  if (y == 0 && std::signbit(y) != ref_neg) return "the wrong sign of zero";
  *done = false;
  return nullptr;
}

// The estimate from the cheap reference r. A result that overflowed counts as exact when r is
// beyond the overflow threshold by more than r's own error; *unsure says when it cannot tell.
template <class T>
double ulps_approx(T y, typename Fmt<T>::Ref r, const char** why, bool* unsure) {
  using R = typename Fmt<T>::Ref;
  bool done;
  *why = special<T>(y, std::isnan(r), std::isinf(r), std::signbit(r), r == 0, &done);
  *unsure = !done && r != 0 && !std::isnormal(r);
  if (done) return 0;
  if (std::isinf(y)) {
    const R thr = std::ldexp(R(1), kMaxExp<T>) * (1 - std::ldexp(R(1), -kDigits<T> - 1));
    const R ar = std::fabs(r);
    if (ar > thr * (1 + R(1e-12)) && std::signbit(y) == std::signbit(r)) return 0;
    *unsure = true;
    return 1e30;
  }
  int e = 0;
  std::frexp(r, &e);
  e = std::max(e, kMinExp<T>);
  return static_cast<double>(std::fabs(static_cast<R>(y) - r) * std::ldexp(R(1), kDigits<T> - e));
}

// The exact error from MPFR's value r (d and thr are scratch).
template <class T>
double ulps_exact(T y, mpfr_srcptr r, mpfr_ptr d, mpfr_ptr thr, const char** why) {
  bool done;
  *why = special<T>(y, mpfr_nan_p(r), mpfr_inf_p(r), mpfr_signbit(r), mpfr_zero_p(r), &done);
  if (done) return 0;
  if (std::isinf(y)) {  // exact if |r| >= the overflow threshold, 2^emax (1 - 2^-(p+1))
    mpfr_set_ui_2exp(thr, 1, kMaxExp<T>, MPFR_RNDN);
    mpfr_set_ui_2exp(d, 1, kMaxExp<T> - kDigits<T> - 1, MPFR_RNDN);
    mpfr_sub(thr, thr, d, MPFR_RNDN);
    if (mpfr_cmpabs(r, thr) >= 0 && std::signbit(y) == static_cast<bool>(mpfr_signbit(r))) return 0;
    *why = "infinite for a finite value";
    return 0;
  }
  if (sizeof(T) == 4) {
    mpfr_set_flt(d, static_cast<float>(y), MPFR_RNDN);
  } else {
    mpfr_set_d(d, static_cast<double>(y), MPFR_RNDN);
  }
  mpfr_sub(d, d, r, MPFR_RNDN);
  const long e = mpfr_zero_p(r) ? kMinExp<T> : std::max<long>(mpfr_get_exp(r), kMinExp<T>);
  mpfr_mul_2si(d, d, kDigits<T> - e, MPFR_RNDN);
  return std::fabs(mpfr_get_d(d, MPFR_RNDN));
}

// ---- checking -------------------------------------------------------------------------------------
template <class T>
struct Stats {
  std::uint64_t n = 0, over_half = 0, over_bound = 0, specials = 0, exact_calls = 0;
  double max = 0;
  T at_x = 0, at_y = 0;
  std::uint64_t at_index = ~std::uint64_t(0);  // input order, so that ties resolve the same way
  const char* special_what = nullptr;
  T special_x = 0, special_y = 0;

  void merge(const Stats& o) {
    n += o.n, over_half += o.over_half, over_bound += o.over_bound, specials += o.specials;
    exact_calls += o.exact_calls;
    if (o.max > max || (o.max == max && o.at_index < at_index))
      max = o.max, at_x = o.at_x, at_y = o.at_y, at_index = o.at_index;
    if (!special_what && o.special_what)
      special_what = o.special_what, special_x = o.special_x, special_y = o.special_y;
  }
};

// One thread's checker: its MPFR variables and statistics.
template <class T>
class Checker {
 public:
  explicit Checker(const Fn& fn) : fn_(fn) {
    // MPFR's exponent range is per thread: widen it so that nothing here overflows before T does.
    mpfr_set_emin(mpfr_get_emin_min());
    mpfr_set_emax(mpfr_get_emax_max());
    for (mpfr_ptr v : {a_, b_, r_, d_, thr_}) mpfr_init2(v, 200);
  }
  ~Checker() {
    for (mpfr_ptr v : {a_, b_, r_, d_, thr_}) mpfr_clear(v);
  }
  Checker(const Checker&) = delete;
  Checker& operator=(const Checker&) = delete;

  void check(T x, T y, std::uint64_t index) {
    using R = typename Fmt<T>::Ref;
    const bool two = fn_.arity == 2;
    T v;
    R ref;
    if constexpr (sizeof(T) == 4) {
      v = two ? fn_.f2(x, y) : fn_.f1(x);
      ref = two ? fn_.pf2(x, y) : fn_.pf1(x);
    } else {
      v = two ? fn_.d2(x, y) : fn_.d1(x);
      ref = two ? fn_.pd2(x, y) : fn_.pd1(x);
    }
    const char* why;
    bool unsure;
    double err = ulps_approx<T>(v, ref, &why, &unsure);
    const double tol = Fmt<T>::tol;
    // The largest error is settled by MPFR only where the estimate is not already within 0.001 ulp.
    const double verify_above = tol < 1e-3 ? 0.9 : std::min(0.9, s.max);
    if (why || unsure || err > verify_above - tol || std::fabs(err - 0.5) < tol) {
      err = exact(v, x, y, &why);
      ++s.exact_calls;
    }
    ++s.n;
    if (why) {
      if (s.specials++ == 0) s.special_what = why, s.special_x = x, s.special_y = y;
      return;
    }
    if (err > 0.5) ++s.over_half;
    if (err > (sizeof(T) == 4 ? fn_.bound_f : fn_.bound_d)) ++s.over_bound;
    if (err > s.max || (err == s.max && index < s.at_index)) s.max = err, s.at_x = x, s.at_y = y, s.at_index = index;
  }

  Stats<T> s;

 private:
  double exact(T v, T x, T y, const char** why) {
    const auto set = [](mpfr_ptr m, T t) {
      if constexpr (sizeof(T) == 4) {
        mpfr_set_flt(m, t, MPFR_RNDN);
      } else {
        mpfr_set_d(m, t, MPFR_RNDN);
      }
    };
    set(a_, x);
    if (fn_.arity == 2) {
      set(b_, y);
      fn_.m2(r_, a_, b_, MPFR_RNDN);
    } else {
      fn_.m1(r_, a_, MPFR_RNDN);
    }
    return ulps_exact<T>(v, r_, d_, thr_, why);
  }

  const Fn& fn_;
  mpfr_t a_, b_, r_, d_, thr_;
};

int threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}
int thread_id() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

// Runs check over inputs 0..count-1 (make(i, &x, &y) gives input i) on every thread, in chunks.
template <class T, class Make>
Stats<T> run(const Fn& fn, std::uint64_t count, Make make) {
  const std::uint64_t chunk = 1 << 16, chunks = (count + chunk - 1) / chunk;
  std::vector<Stats<T>> per(threads());
#pragma omp parallel
  {
    Checker<T> c(fn);
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(chunks); ++k) {
      const std::uint64_t end = std::min(count, (k + 1) * chunk);
      for (std::uint64_t i = k * chunk; i < end; ++i) {
        T x, y = 0;
        make(i, &x, &y);
        c.check(x, y, i);
      }
    }
    per[thread_id()] = c.s;
  }
  Stats<T> all;
  for (const Stats<T>& s : per) all.merge(s);
  return all;
}

// ---- inputs ---------------------------------------------------------------------------------------
// SplitMix64: seeding it per input costs nothing (a Mersenne Twister's seeding would cost more than
// the check), so input i depends only on the seed and i.
struct Rng {
  std::uint64_t s;
  std::uint64_t operator()() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>((*this)() >> 11) * 0x1p-53; }
};

template <class T>
T sample(const std::vector<Range>& ranges, Rng& g) {
  const Range& r = ranges[g() % ranges.size()];
  const double u = g.unit();
  double v;
  if (r.dist == Dist::uniform) {
    v = r.lo + (r.hi - r.lo) * u;
  } else {
    v = std::exp2(std::log2(r.lo) + (std::log2(r.hi) - std::log2(r.lo)) * u);
    if (r.dist == Dist::log_both && (g() & 1)) v = -v;
  }
  const double big = std::numeric_limits<T>::max();
  return static_cast<T>(std::max(-big, std::min(big, v)));
}

// Special values, powers of two and the function's edges, each with neighbours, in both signs.
template <class T>
std::vector<T> edge_values(const Fn& fn) {
  using L = std::numeric_limits<T>;
  std::vector<T> centres = {T(0), L::infinity(), L::max(), L::min(), L::denorm_min(), T(1)};
  for (int k = L::min_exponent - L::digits; k < L::max_exponent; ++k) centres.push_back(std::ldexp(T(1), k));
  for (double e : fn.edges) centres.push_back(static_cast<T>(e));
  for (const Range& r : fn.x) centres.push_back(static_cast<T>(r.lo)), centres.push_back(static_cast<T>(r.hi));
  if (fn.period > 0)
    for (int k = 1; k <= 2048; ++k) centres.push_back(static_cast<T>(k * fn.period));
  std::vector<T> v;
  for (T c : centres) {
    if (std::isinf(c)) {
      v.push_back(c), v.push_back(-c);
      continue;
    }
    T lo = c, hi = c;
    for (int i = 0; i < 4; ++i) {
      lo = std::nextafter(lo, -L::infinity()), hi = std::nextafter(hi, L::infinity());
      for (T t : {lo, hi}) v.push_back(t), v.push_back(-t);
    }
    v.push_back(c), v.push_back(-c);
  }
  // NaNs: the canonical one, negative, with a payload, signalling.
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  const U q = static_cast<U>(Fmt<T>::bits(L::quiet_NaN())), sign = U(1) << (8 * sizeof(T) - 1);
  const U inf = static_cast<U>(Fmt<T>::bits(L::infinity()));
  for (U u : {q, U(q | sign), U(q | 1), U(inf | 1), U(inf | sign | 1), U(~sign)}) {
    T t;
    std::memcpy(&t, &u, sizeof t);
    v.push_back(t);
  }
  return v;
}

// ---- report ---------------------------------------------------------------------------------------
template <class T>
bool report(const Fn& fn, const char* mode, const Stats<T>& s, double seconds) {
  const double bound = sizeof(T) == 4 ? fn.bound_f : fn.bound_d;
  const char* type = sizeof(T) == 4 ? "float" : "double";
  std::printf("%-8s %-6s %-10s %12" PRIu64 " inputs  max %.3f ulp", fn.name, type, mode, s.n, s.max);
  if (s.at_index != ~std::uint64_t(0)) {
    std::printf(" at %a", static_cast<double>(s.at_x));
    if (fn.arity == 2) std::printf(", %a", static_cast<double>(s.at_y));
    std::printf(" (%.17g)", static_cast<double>(s.at_x));
  }
  std::printf("  >0.5 ulp: %" PRIu64 "  >%g: %" PRIu64 "  specials wrong: %" PRIu64 "  mpfr: %" PRIu64 "  %.1f s\n",
              s.over_half, bound, s.over_bound, s.specials, s.exact_calls, seconds);
  if (s.specials) {
    std::printf("  first special mismatch: %s at %a", s.special_what, static_cast<double>(s.special_x));
    if (fn.arity == 2) std::printf(", %a", static_cast<double>(s.special_y));
    std::printf("\n");
  }
  const bool ok = s.over_bound == 0 && s.specials == 0;
  if (!ok)
    std::printf("  FAIL: %s %s exceeds its bound of %g ulp or mishandles a special value\n", fn.name, type, bound);
  std::fflush(stdout);
  return ok;
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool exhaustive_float(const Fn& fn) {
  if (fn.arity != 1) {
    std::printf("%-8s float  exhaustive: skipped (two arguments)\n", fn.name);
    return true;
  }
  const double t0 = now();
  const Stats<float> s = run<float>(fn, std::uint64_t(1) << 32, [](std::uint64_t i, float* x, float*) {
    const std::uint32_t u = static_cast<std::uint32_t>(i);
    std::memcpy(x, &u, 4);
  });
  return report(fn, "exhaustive", s, now() - t0);
}

// The edge values first, then n random inputs; input i depends only on the seed and i, not on the
// thread that checks it.
template <class T>
bool random(const Fn& fn, std::uint64_t n, std::uint64_t seed) {
  const double t0 = now();
  const std::vector<T> edges = edge_values<T>(fn);
  std::vector<T> xs, ys;  // random partners: a second argument for each edge value, and a first
  if (fn.arity == 2) {
    Rng g{~seed};
    for (std::size_t i = 0; i < edges.size(); ++i) xs.push_back(sample<T>(fn.x, g)), ys.push_back(sample<T>(fn.y, g));
  }
  const std::uint64_t ne = edges.size(), extra = fn.arity == 2 ? ne : 0;
  const Stats<T> s = run<T>(fn, ne + extra + n, [&](std::uint64_t i, T* x, T* y) {
    if (i < ne) {
      *x = edges[i];
      if (fn.arity == 2) *y = ys[i];
      return;
    }
    if (i < ne + extra) {
      *x = xs[i - ne], *y = edges[i - ne];
      return;
    }
    Rng g{Rng{seed * 0x2545f4914f6cdd1du + i}()};  // a hashed start: the streams do not overlap
    *x = sample<T>(fn.x, g);
    if (fn.arity == 2) *y = sample<T>(fn.y, g);
  });
  return report(fn, "random", s, now() - t0);
}

int usage() {
  std::fprintf(stderr,
               "usage: math_accuracy [--exhaustive-float] [--float N] [--double N] [--seed S] [--only f,g,...]\n"
               "functions:");
  for (const Fn& fn : table()) std::fprintf(stderr, " %s", fn.name);
  std::fprintf(stderr, "\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  bool exhaustive = false;
  std::uint64_t nf = 0, nd = 0, seed = 1;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--exhaustive-float") {
      exhaustive = true;
    } else if (a == "--float" && has) {
      nf = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--double" && has) {
      nd = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--seed" && has) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--only" && has) {
      only = "," + std::string(argv[++i]) + ",";
    } else {
      return usage();
    }
  }
  if (!exhaustive && nf == 0 && nd == 0) return usage();
  if (!mpfr_buildopt_tls_p()) {
#ifdef _OPENMP
    omp_set_num_threads(1);  // MPFR's state is global without thread-local storage
#endif
  }
  std::printf("math_accuracy: MPFR %s, 200 bits, %d threads\n", mpfr_get_version(), threads());
  bool ok = true;
  for (const Fn& fn : table()) {
    if (!only.empty() && only.find("," + std::string(fn.name) + ",") == std::string::npos) continue;
    if (exhaustive) ok = exhaustive_float(fn) && ok;
    if (nf) ok = random<float>(fn, nf, seed) && ok;
    if (nd) ok = random<double>(fn, nd, seed) && ok;
  }
  return ok ? 0 : 1;
}
