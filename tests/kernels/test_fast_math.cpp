// SPDX-License-Identifier: Apache-2.0
// porta::fast (porta/fast_math.hpp) in user kernels: on every device each function is the vendor's
// own, within the maximum error the vendor documents, of a long double reference, over fresh random
// arguments in each function's range, and gives NaN for NaN, the exact infinities and signed zeros
// the vendors guarantee.
//
// Not checked, on purpose: that the bits equal porta::math's, or that two devices agree. That is
// exactly what porta::fast does not promise (docs/determinism.md, "porta::fast");
// test_math_kernels.cpp checks it for porta::math.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernel_devices.hpp"
#include "porta/kernels.hpp"
#include "porta/math.hpp"
#include "support/ulp.hpp"

using porta::Array;
using porta::Device;
using porta::DeviceType;
using porta::Shape;

namespace {

// The functions by number, so that one kernel evaluates any of them: the unary and binary ones of
// support/ulp.hpp, then sincos's two results.
enum Fn {
#define PORTA_TEST_ENUM(ns, name, reference) fn_##name,
  PORTA_TEST_MATH_UNARY(PORTA_TEST_ENUM, ns) PORTA_TEST_MATH_BINARY(PORTA_TEST_ENUM, ns)
#undef PORTA_TEST_ENUM
      fn_sincos_sin,
  fn_sincos_cos,
  fn_count
};
const char* const kNames[] = {
#define PORTA_TEST_NAME(ns, name, reference) #name,
    PORTA_TEST_MATH_UNARY(PORTA_TEST_NAME, ns) PORTA_TEST_MATH_BINARY(PORTA_TEST_NAME, ns)
#undef PORTA_TEST_NAME
        "sincos (sin)",
    "sincos (cos)"};
static_assert(sizeof(kNames) / sizeof(kNames[0]) == fn_count, "one name per function");

bool binary(int fn) {
  return fn == fn_pow || fn == fn_atan2 || fn == fn_hypot;
}

template <class T>
PORTA_HOST_DEVICE T call(int fn, T x, T y) {
  namespace pf = porta::fast;
  T s = 0, c = 0;
  switch (fn) {
#define PORTA_TEST_CALL_1(ns, name, reference) \
  case fn_##name:                              \
    return ns::name(x);
#define PORTA_TEST_CALL_2(ns, name, reference) \
  case fn_##name:                              \
    return ns::name(x, y);
    PORTA_TEST_MATH_UNARY(PORTA_TEST_CALL_1, pf)
    PORTA_TEST_MATH_BINARY(PORTA_TEST_CALL_2, pf)
#undef PORTA_TEST_CALL_1
#undef PORTA_TEST_CALL_2
    case fn_sincos_sin:
      pf::sincos(x, &s, &c);
      return s;
    case fn_sincos_cos:
      pf::sincos(x, &s, &c);
      return c;
    default:
      return x;
  }
}

long double reference(int fn, long double x, long double y) {
  (void)y;
  switch (fn) {
#define PORTA_TEST_REF(ns, name, reference) \
  case fn_##name:                           \
    return reference;
    PORTA_TEST_MATH_UNARY(PORTA_TEST_REF, ns)
    PORTA_TEST_MATH_BINARY(PORTA_TEST_REF, ns)
#undef PORTA_TEST_REF
    case fn_sincos_sin:
      return std::sin(x);
    case fn_sincos_cos:
      return std::cos(x);
    default:
      return 0;
  }
}

// The vendors' documented maximum errors, in ulps of the correctly rounded result:
// - CUDA: CUDA C++ Programming Guide, "Mathematical Functions" appendix, "Standard Functions",
//   single- and double-precision tables (full range, without -use_fast_math).
// - glibc: its manual, "Known Maximum Errors in Math Functions", the x86_64 column.
// - HIP: ROCm's "HIP math API" page, which measures against the C++ standard library's function
//   (glibc), not the exact value: its bound is taken on top of glibc's.
// sigmoid is 1 / (1 + e^-x) (e^x / (1 + e^x) for x < 0) with the vendor's exp: see sigmoid_bound.
struct Documented {
  const char* name;
  double cuda_f, cuda_d, glibc_f, glibc_d, hip_f, hip_d;
};
constexpr Documented kDocumented[] = {
    {"exp", 2, 1, 1, 1, 1, 1},  {"exp2", 2, 1, 1, 1, 1, 1},  {"exp10", 2, 1, 1, 2, 1, 1}, {"expm1", 1, 1, 1, 1, 1, 2},
    {"log", 1, 1, 1, 1, 2, 1},  {"log2", 1, 1, 1, 2, 1, 1},  {"log10", 2, 1, 2, 2, 2, 1}, {"log1p", 1, 1, 1, 1, 1, 1},
    {"cbrt", 1, 1, 1, 4, 2, 1}, {"sin", 2, 2, 1, 1, 1, 1},   {"cos", 2, 2, 1, 1, 1, 1},   {"tan", 4, 2, 1, 1, 2, 2},
    {"asin", 2, 2, 1, 1, 2, 1}, {"acos", 2, 2, 1, 1, 1, 1},  {"atan", 2, 2, 1, 1, 2, 1},  {"sinh", 3, 2, 2, 2, 1, 1},
    {"cosh", 2, 1, 2, 2, 1, 1}, {"tanh", 2, 1, 2, 2, 2, 1},  {"erf", 2, 2, 1, 1, 4, 4},   {"erfc", 4, 5, 3, 5, 2, 2},
    {"pow", 4, 2, 1, 1, 1, 1},  {"atan2", 3, 2, 2, 1, 3, 2}, {"hypot", 3, 2, 1, 1, 1, 1},
};

double documented(const std::string& name, DeviceType type, bool dbl) {
  const std::string key = name.rfind("sincos", 0) == 0 ? std::string(name == "sincos (sin)" ? "sin" : "cos") : name;
  for (const Documented& d : kDocumented) {
    if (key != d.name) continue;
    const double glibc = dbl ? d.glibc_d : d.glibc_f;
    if (type == DeviceType::cuda) return dbl ? d.cuda_d : d.cuda_f;
    if (type == DeviceType::hip) return (dbl ? d.hip_d : d.hip_f) + glibc;
    return glibc;
  }
  return -1;
}

// The bound a test accepts against the exact value: the documented error is to the correctly
// rounded result, itself up to 1/2 ulp from the exact value.
double bound(int fn, DeviceType type, bool dbl) {
  if (fn == fn_sigmoid) {
    // With exp within E ulps of the exact value (relative error E 2^(1-p)): for x >= 0,
    // 1 / (1 + t) with t = e^-x <= 1 is within E + 2 ulps (1 + t halves t's error, two roundings);
    // for x < 0, e / (1 + e) with e = e^x < 1 within 3 E + 2 (the quotient is below 1/2, where one
    // relative 2^-p is up to an ulp).
    const double e = documented("exp", type, dbl) + 0.5;
    return 3 * e + 2;
  }
  return documented(kNames[fn], type, dbl) + 0.5;
}

template <class T>
struct Evaluate {
  porta::View<const T> x, y;
  porta::View<T> out;
  int fn;
  PORTA_HOST_DEVICE void operator()(std::int64_t i) const { out[i] = call(fn, x[i], y[i]); }
};

// Fresh arguments for one function: half log-uniform magnitudes of both signs from 2^-30 to 2^30
// (every range of every reduction, overflow and underflow), half from the function's own range.
template <class T>
void arguments(int fn, porta_test::Rng& rng, std::int64_t n, std::vector<T>& xs, std::vector<T>& ys) {
  constexpr bool d = std::is_same_v<T, double>;
  const double emax = d ? 709.8 : 88.7;  // where e^x overflows
  const double lo_exp = d ? -1074 : -149, hi_exp = d ? 1023 : 127;
  const auto log_uniform = [&](double e0, double e1, bool signed_) {
    const T m = static_cast<T>(std::exp2(rng.uniform<double>(e0, e1)));
    return signed_ && rng.coin() ? -m : m;
  };
  xs.clear(), ys.clear();
  for (std::int64_t i = 0; i < n; ++i) {
    if (i % 2 == 0) {
      xs.push_back(log_uniform(-30, 30, true)), ys.push_back(log_uniform(-30, 30, true));
      continue;
    }
    T x = 0, y = T(1);
    switch (fn) {
      case fn_exp:
      case fn_expm1:
      case fn_sinh:
      case fn_cosh:
        x = rng.uniform<T>(T(-emax - 30), T(emax + 2));
        break;
      case fn_sigmoid:
        x = rng.uniform<T>(T(-emax - 30), T(emax + 30));
        break;
      case fn_exp2:
        x = rng.uniform<T>(T(lo_exp - 2), T(hi_exp + 2));
        break;
      case fn_exp10:
        x = rng.uniform<T>(T(d ? -325 : -46), T(d ? 309 : 39));
        break;
      case fn_log:
      case fn_log2:
      case fn_log10:
        x = log_uniform(lo_exp, hi_exp, false);
        break;
      case fn_log1p:
        x = rng.coin() ? rng.uniform<T>(T(-1), T(1)) : log_uniform(-60, hi_exp, false);
        break;
      case fn_cbrt:
      case fn_atan:
        x = log_uniform(lo_exp, hi_exp, true);
        break;
      case fn_asin:
      case fn_acos:
        x = rng.uniform<T>(T(-1), T(1));
        break;
      case fn_tanh:
      case fn_erf:
        x = rng.uniform<T>(T(-8), T(8));
        break;
      case fn_erfc:
        x = rng.uniform<T>(T(-6), T(d ? 27.3 : 10.1));
        break;
      case fn_pow: {  // x > 0 anywhere, y such that y ln x covers the results from underflow to overflow
        x = log_uniform(lo_exp, hi_exp, false);
        const double range = d ? 745.5 : 104.0;
        y = static_cast<T>(rng.uniform<double>(-range, range) / std::log(static_cast<double>(x)));
        if (!std::isfinite(y)) y = T(2);
        break;
      }
      case fn_atan2:
      case fn_hypot: {  // both signs, exponents within 2^+-40 of each other
        const double e = rng.uniform<double>(lo_exp + 40, hi_exp - 40);
        x = log_uniform(e, e + 0.001, true), y = log_uniform(e - 40, e + 40, true);
        break;
      }
      default:
        x = rng.uniform<T>(T(-10), T(10));
        break;  // sin, cos, tan, sincos
    }
    xs.push_back(x), ys.push_back(y);
  }
}

}  // namespace

TEMPLATE_TEST_CASE("porta::fast in a user kernel is within the vendor's documented error on every device",
                   "[kernels][math]", float, double) {
  using T = TestType;
  constexpr bool d = std::is_same_v<T, double>;
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t n = 20000;
  std::vector<T> hx, hy;
  for (int fn = 0; fn < fn_count; ++fn) {
    arguments<T>(fn, rng, n, hx, hy);
    const auto x = Array<T>::from(hx, dev), y = Array<T>::from(hy, dev);
    Array<T> out = porta_test::poisoned<T>(Shape{n}, dev);
    porta::parallel_for(dev, n, Evaluate<T>{x.view(), y.view(), out.view(), fn});
    const auto got = out.to_vector();
    porta_test::WorstUlp<T> worst;
    for (std::size_t i = 0; i < got.size(); ++i)
      worst.add(got[i], reference(fn, static_cast<long double>(hx[i]), static_cast<long double>(hy[i])), hx[i], hy[i]);
    const double b = bound(fn, dev.type, d);
    INFO(worst.describe(kNames[fn], binary(fn)) << " on " << dev.to_string() << "; the vendor documents "
                                                << documented(fn == fn_sigmoid ? "exp" : kNames[fn], dev.type, d)
                                                << (fn == fn_sigmoid ? " for exp" : "") << ", accepted " << b);
    CHECK(worst.ulp <= b);
  }
}

TEMPLATE_TEST_CASE("porta::fast special values on every device", "[kernels][math][ieee]", float, double) {
  using T = TestType;
  const Device dev = PORTA_KERNEL_DEVICE();
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  struct Case {
    int fn;
    T x, y, want;  // want NaN: any NaN
  };
  std::vector<Case> cases;
  // NaN in, NaN out, for every function (the other argument of a binary one ordinary: C99 makes
  // pow(NaN, 0) = 1 and hypot(NaN, inf) = inf).
  for (int fn = 0; fn < fn_count; ++fn) {
    cases.push_back({fn, nan, T(2), nan});
    if (binary(fn)) cases.push_back({fn, T(2), nan, nan});
  }
  // Signed zeros of the odd functions with f'(0) = 1, and the exact values the vendors document.
  for (const int fn :
       {fn_expm1, fn_log1p, fn_cbrt, fn_sin, fn_tan, fn_asin, fn_atan, fn_sinh, fn_tanh, fn_erf, fn_sincos_sin}) {
    cases.push_back({fn, T(0), T(1), T(0)});
    cases.push_back({fn, T(-0.0), T(1), T(-0.0)});
  }
  for (const int fn : {fn_exp, fn_exp2, fn_exp10, fn_cos, fn_cosh, fn_sincos_cos})
    cases.push_back({fn, T(-0.0), T(1), T(1)});
  for (const int fn : {fn_exp, fn_exp2, fn_exp10, fn_expm1, fn_sinh, fn_cosh}) cases.push_back({fn, inf, T(1), inf});
  for (const int fn : {fn_exp, fn_exp2, fn_exp10}) cases.push_back({fn, -inf, T(1), T(0)});
  for (const int fn : {fn_log, fn_log2, fn_log10}) {
    cases.push_back({fn, T(0), T(1), -inf});
    cases.push_back({fn, T(-0.0), T(1), -inf});
    cases.push_back({fn, inf, T(1), inf});
    cases.push_back({fn, T(1), T(1), T(0)});
    cases.push_back({fn, T(-1), T(1), nan});
  }
  cases.push_back({fn_log1p, T(-1), T(1), -inf});
  cases.push_back({fn_expm1, -inf, T(1), T(-1)});
  cases.push_back({fn_sinh, -inf, T(1), -inf});
  cases.push_back({fn_tanh, inf, T(1), T(1)});
  cases.push_back({fn_tanh, -inf, T(1), T(-1)});
  cases.push_back({fn_erf, inf, T(1), T(1)});
  cases.push_back({fn_erf, -inf, T(1), T(-1)});
  cases.push_back({fn_erfc, inf, T(1), T(0)});
  cases.push_back({fn_erfc, -inf, T(1), T(2)});
  cases.push_back({fn_sigmoid, inf, T(1), T(1)});
  cases.push_back({fn_sigmoid, -inf, T(1), T(0)});
  cases.push_back({fn_sigmoid, T(0), T(1), T(0.5)});
  for (const int fn : {fn_sin, fn_cos, fn_tan, fn_sincos_sin, fn_sincos_cos}) {
    cases.push_back({fn, inf, T(1), nan});
    cases.push_back({fn, -inf, T(1), nan});
  }
  cases.push_back({fn_asin, T(2), T(1), nan});
  cases.push_back({fn_acos, T(-2), T(1), nan});
  cases.push_back({fn_acos, T(1), T(1), T(0)});
  cases.push_back({fn_pow, T(3), T(0), T(1)});
  cases.push_back({fn_pow, nan, T(0), T(1)});
  cases.push_back({fn_pow, T(1), nan, T(1)});
  cases.push_back({fn_pow, T(-2), T(0.5), nan});
  cases.push_back({fn_pow, T(-0.0), T(3), T(-0.0)});
  cases.push_back({fn_pow, T(0), T(-1), inf});
  cases.push_back({fn_hypot, inf, nan, inf});
  cases.push_back({fn_atan2, T(0), T(1), T(0)});
  cases.push_back({fn_atan2, T(-0.0), T(1), T(-0.0)});

  // Case by case, each a one-element launch of its function.
  for (const Case& c : cases) {
    const auto x = Array<T>::from(std::vector<T>{c.x}, dev), y = Array<T>::from(std::vector<T>{c.y}, dev);
    Array<T> out = porta_test::poisoned<T>(Shape{1}, dev);
    porta::parallel_for(dev, 1, Evaluate<T>{x.view(), y.view(), out.view(), c.fn});
    const T got = out.to_vector()[0];
    INFO(kNames[c.fn] << "(" << porta_test::show(c.x) << (binary(c.fn) ? ", " + porta_test::show(c.y) : std::string())
                      << ") on " << dev.to_string() << ": got " << porta_test::show(got) << ", want "
                      << porta_test::show(c.want));
    if (std::isnan(c.want)) {
      CHECK(std::isnan(got));
    } else {
      CHECK(porta_test::same_bits(got, c.want));
    }
  }
}
