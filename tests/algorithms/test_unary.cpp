// SPDX-License-Identifier: Apache-2.0
// Unary maps: every op and dtype on every device, against host references.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "support/cpu_cache.hpp"
#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::Shape;

namespace {

enum class Kind { exact, transcendental };

// One unary op: porta's two forms, a host reference, the inputs it is tested on.
template <class T>
struct UnaryCase {
  const char* name;
  std::function<Array<T>(const Array<T>&)> make;
  std::function<void(const Array<T>&, Array<T>&)> into;
  std::function<long double(T)> ref;  // exact ops: the T result; others: long double
  std::function<std::vector<T>(porta_test::Rng&, std::int64_t)> inputs;
  Kind kind;
};

template <class T>
constexpr bool is_fp = std::is_floating_point_v<T>;

// Integers: computed in double and converted (ops.hpp's via_double). The reference is the
// function in long double rounded to double, then converted: porta's double functions are within
// 1 ulp, and a naive double formula would not be (1 / (1 + e^-37) rounds to 1, the exact value to
// 1 - 2^-53, which converts to 0).
template <class T, class F>
long double via_double(T x, F f) {
  if constexpr (is_fp<T>) {
    return f(static_cast<long double>(x));
  } else {
    return static_cast<long double>(static_cast<T>(static_cast<double>(f(static_cast<long double>(x)))));
  }
}

template <class T>
T wrap_neg(T x) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(U(0) - static_cast<U>(x));
  } else {
    return -x;
  }
}

template <class T>
T abs_ref(T x) {
  if constexpr (std::is_integral_v<T>) {
    return x < T(0) ? wrap_neg(x) : x;  // abs(lowest) wraps to lowest
  } else {
    return std::fabs(x);
  }
}

template <class T>
std::vector<T> with_int_extremes(std::vector<T> v) {
  if constexpr (std::is_integral_v<T>) {
    const T special[] = {std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max(), T(-1), T(1),
                         static_cast<T>(std::numeric_limits<T>::max() / 3)};
    for (std::size_t i = 0; i < v.size() && i < 5; ++i) v[v.size() - 1 - i] = special[i];
  }
  return v;
}

template <class T>
std::vector<UnaryCase<T>> unary_cases() {
  using porta_test::Rng;
  auto nonzero = [](Rng& r, std::int64_t n) { return with_int_extremes(porta_test::nonzero<T>(r, n)); };
  auto positive = [](Rng& r, std::int64_t n) {
    return is_fp<T> ? porta_test::uniform<T>(r, n, T(0.1), T(10)) : porta_test::uniform<T>(r, n, T(1), T(1000000));
  };
  auto small = [](T lo, T hi) {
    return [lo, hi](Rng& r, std::int64_t n) { return porta_test::nonzero<T>(r, n, lo, hi); };
  };
  // Float inputs: ±[0.1, hi]; integer inputs: ±[1, ihi].
  auto range = [small](double hi, long long ihi) {
    return is_fp<T> ? small(T(0.1), static_cast<T>(hi)) : small(T(1), static_cast<T>(ihi));
  };
  std::vector<UnaryCase<T>> c;
#define PORTA_UNARY(nm, ref_expr, inputs_expr, kind)                                \
  c.push_back(UnaryCase<T>{#nm, [](const Array<T>& x) { return porta::nm(x); },     \
                           [](const Array<T>& x, Array<T>& o) { porta::nm(x, o); }, \
                           [](T x) -> long double { return ref_expr; }, inputs_expr, Kind::kind})
  PORTA_UNARY(neg, static_cast<long double>(wrap_neg(x)), nonzero, exact);
  PORTA_UNARY(abs, static_cast<long double>(abs_ref(x)), nonzero, exact);
  PORTA_UNARY(sqrt,
              static_cast<long double>(is_fp<T> ? static_cast<T>(std::sqrt(x))
                                                : static_cast<T>(std::sqrt(static_cast<double>(x)))),
              positive, exact);
  PORTA_UNARY(square, static_cast<long double>(porta_test::ref::mul(x, x)), nonzero, exact);
  PORTA_UNARY(relu, static_cast<long double>(x > T(0) ? x : T(0)), nonzero, exact);
  PORTA_UNARY(exp, via_double(x, [](auto v) { return std::exp(v); }), range(10, 10), transcendental);
  PORTA_UNARY(log, via_double(x, [](auto v) { return std::log(v); }), positive, transcendental);
  PORTA_UNARY(sin, via_double(x, [](auto v) { return std::sin(v); }), range(3, 100), transcendental);
  PORTA_UNARY(cos, via_double(x, [](auto v) { return std::cos(v); }), range(3, 100), transcendental);
  PORTA_UNARY(tanh, via_double(x, [](auto v) { return std::tanh(v); }), range(5, 30), transcendental);
  PORTA_UNARY(sigmoid, via_double(x, [](auto v) { return decltype(v)(1) / (decltype(v)(1) + std::exp(-v)); }),
              range(8, 50), transcendental);
#undef PORTA_UNARY
  return c;
}

template <class T>
porta_test::Result check(const UnaryCase<T>& uc, Device dev, const std::vector<T>& got, const std::vector<T>& in) {
  std::vector<long double> ref(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) ref[i] = uc.ref(in[i]);
  if (uc.kind == Kind::exact) {
    std::vector<T> r(ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i) r[i] = static_cast<T>(ref[i]);
    return porta_test::compare_exact(got, r);
  }
  if constexpr (is_fp<T>) {
    return porta_test::compare_ulps(got, ref, porta_test::transcendental_ulps(dev));
  } else {
    // Integers go through double: exact, except that a GPU's double math may land one ulp on the
    // other side of an integer.
    return porta_test::compare_ulps(got, ref, 0.0, dev.is_gpu() ? 1.0L : 0.0L);
  }
}

}  // namespace

TEMPLATE_TEST_CASE("unary maps match host references", "[map][unary]", float, double, std::int32_t, std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (const UnaryCase<T>& uc : unary_cases<T>()) {
    INFO("op " << uc.name << " on " << dev.to_string());
    for (std::int64_t n : {0, 1, 7, 1000, 1000003}) {
      INFO("n = " << n);
      const std::vector<T> in = uc.inputs(rng, n);
      const auto x = Array<T>::from(in, dev);
      // allocating form
      porta_test::poison_pool<T>(n, dev);
      const Array<T> y = uc.make(x);
      CHECK(y.shape() == x.shape());
      CHECK(y.device() == dev);
      PORTA_CHECK_RESULT(check(uc, dev, y.to_vector(), in));
      if (n > 1000) continue;
      // into a poisoned output
      auto out = porta_test::poisoned<T>(Shape{n}, dev);
      uc.into(x, out);
      PORTA_CHECK_RESULT(check(uc, dev, out.to_vector(), in));
      // in place
      auto z = x.clone();
      uc.into(z, z);
      PORTA_CHECK_RESULT(check(uc, dev, z.to_vector(), in));
      // the input is untouched
      PORTA_CHECK_RESULT(porta_test::compare_exact(x.to_vector(), in));
    }
    // 2-D and 4-D shapes keep their shape
    for (const Shape& shape : {Shape{1, 13}, Shape{13, 1}, Shape{7, 33}, Shape{2, 3, 4, 5}}) {
      INFO("shape " << shape.to_string());
      const std::vector<T> in = uc.inputs(rng, shape.size());
      const auto x = Array<T>::from(in, shape, dev);
      const Array<T> y = uc.make(x);
      CHECK(y.shape() == shape);
      PORTA_CHECK_RESULT(check(uc, dev, y.to_vector(), in));
    }
  }
}

TEMPLATE_TEST_CASE("unary maps either side of the CPU's team and streaming-store sizes", "[map][unary][sizes]", float,
                   double, std::int32_t, std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  // The whole team from 2^16 elements; streaming stores once input and output exceed the last-level
  // cache (backends/cpu/cpu_map_common.hpp).
  const std::int64_t llc = porta_test::cpu_cache_bytes();
  for (const UnaryCase<T>& uc : unary_cases<T>()) {
    if (std::string(uc.name) != "neg") continue;  // one loop template serves every op
    INFO("op " << uc.name << " on " << dev.to_string());
    for (std::int64_t n :
         {std::int64_t{65535}, std::int64_t{65536}, std::min<std::int64_t>(llc / sizeof(T), 1 << 25) + 5}) {
      INFO("n = " << n);
      const std::vector<T> in = uc.inputs(rng, n);
      const auto x = Array<T>::from(in, dev);
      porta_test::poison_pool<T>(n, dev);
      PORTA_CHECK_RESULT(check(uc, dev, uc.make(x).to_vector(), in));
      // into an output one element past a 64-byte line
      auto wide = porta_test::poisoned<T>(Shape{n + 1}, dev);
      auto out = wide.slice({{1, n + 1}});
      uc.into(x, out);
      PORTA_CHECK_RESULT(check(uc, dev, out.to_vector(), in));
      CHECK(porta_test::is_poison(wide.item(0)));
      // in place: stored normally
      auto z = x.clone();
      uc.into(z, z);
      PORTA_CHECK_RESULT(check(uc, dev, z.to_vector(), in));
    }
  }
}

TEMPLATE_TEST_CASE("unary maps on special values", "[map][unary][ieee]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  const T inf = std::numeric_limits<T>::infinity();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T den = std::numeric_limits<T>::denorm_min();
  const std::vector<T> in = {
      T(0), T(-0.0), inf, -inf, nan, -nan, den, -den, std::numeric_limits<T>::max(), std::numeric_limits<T>::lowest(),
      T(1), T(-1)};
  const auto x = Array<T>::from(in, dev);
  auto host = [&](auto f) {
    std::vector<T> r(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) r[i] = f(in[i]);
    return r;
  };
  SECTION("exact ops follow IEEE and ops.hpp on every special") {
    PORTA_CHECK_RESULT(porta_test::compare_exact(porta::neg(x).to_vector(), host([](T v) { return -v; })));
    PORTA_CHECK_RESULT(porta_test::compare_exact(porta::abs(x).to_vector(), host([](T v) { return std::fabs(v); })));
    PORTA_CHECK_RESULT(porta_test::compare_exact(porta::sqrt(x).to_vector(), host([](T v) { return std::sqrt(v); })));
    PORTA_CHECK_RESULT(porta_test::compare_exact(porta::square(x).to_vector(), host([](T v) { return v * v; })));
    // relu: +0.0 for every non-positive input (-0.0 included), NaN stays NaN
    PORTA_CHECK_RESULT(porta_test::compare_exact(porta::relu(x).to_vector(),
                                                 host([](T v) { return v > T(0) ? v : (v != v ? v : T(0)); })));
  }
  SECTION("signs of zero and NaN results") {
    const auto n = porta::neg(x).to_vector();
    CHECK(std::signbit(n[0]));   // -(+0) = -0
    CHECK(!std::signbit(n[1]));  // -(-0) = +0
    const auto a = porta::abs(x).to_vector();
    CHECK(!std::signbit(a[1]));
    const auto r = porta::relu(x).to_vector();
    CHECK(!std::signbit(r[1]));
    CHECK(std::isnan(r[4]));
  }
  SECTION("transcendental ops at their limits") {
    const auto e = porta::exp(x).to_vector();
    CHECK(e[0] == T(1));
    CHECK(e[1] == T(1));
    CHECK(e[2] == inf);
    CHECK(e[3] == T(0));
    CHECK(std::isnan(e[4]));
    CHECK(e[8] == inf);
    CHECK(e[9] == T(0));
    const auto l = porta::log(x).to_vector();
    CHECK(l[0] == -inf);
    CHECK(l[1] == -inf);
    CHECK(l[2] == inf);
    CHECK(std::isnan(l[3]));
    CHECK(std::isnan(l[11]));
    CHECK(l[10] == T(0));
    const auto t = porta::tanh(x).to_vector();
    CHECK(t[2] == T(1));
    CHECK(t[3] == T(-1));
    CHECK(std::signbit(t[1]));
    const auto s = porta::sigmoid(x).to_vector();
    CHECK(s[0] == T(0.5));
    CHECK(s[2] == T(1));
    CHECK(s[3] == T(0));
    CHECK(std::isnan(s[4]));
    const auto sn = porta::sin(x).to_vector();
    CHECK(std::isnan(sn[2]));
    CHECK(std::signbit(sn[1]));
    CHECK(sn[0] == T(0));
    const auto c = porta::cos(x).to_vector();
    CHECK(c[0] == T(1));
    CHECK(std::isnan(c[3]));
  }
}

namespace {

// Every NaN of `got` has the canonical quiet NaN's bits, and `got` is a NaN wherever `nan_at` is.
template <class T>
void require_canonical_nans(const char* what, const std::vector<T>& got, const std::vector<bool>& nan_at) {
  const T q = std::numeric_limits<T>::quiet_NaN();
  REQUIRE(got.size() == nan_at.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (nan_at[i]) CHECK(std::isnan(got[i]));
    if (std::isnan(got[i]) && !porta_test::same_bits(got[i], q))
      FAIL_CHECK(what << "[" << i << "] is " << porta_test::show(got[i]) << ", not the canonical NaN "
                      << porta_test::show(q));
  }
}

}  // namespace

TEMPLATE_TEST_CASE("unary maps return the canonical NaN for every NaN result", "[map][unary][ieee][nan]", float,
                   double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  const T inf = std::numeric_limits<T>::infinity();
  // The NaN patterns, then inputs that make a NaN of a number (sqrt and log of negatives, sin and
  // cos of infinities, x86's negative default NaN), repeated past a few vectors and a tail.
  std::vector<T> one = porta_test::nan_patterns<T>();
  const std::size_t nans = one.size();
  for (T v : {T(-1), -inf, inf, T(0), T(-0.0), T(2)}) one.push_back(v);
  std::vector<T> h;
  std::vector<bool> nan_in;
  for (int r = 0; r < 23; ++r)
    for (std::size_t k = 0; k < one.size(); ++k) {
      h.push_back(one[k]);
      nan_in.push_back(k < nans);
    }
  const auto x = Array<T>::from(h, dev);
  INFO(dev.to_string());
  require_canonical_nans("neg", porta::neg(x).to_vector(), nan_in);
  require_canonical_nans("abs", porta::abs(x).to_vector(), nan_in);
  require_canonical_nans("sqrt", porta::sqrt(x).to_vector(), nan_in);
  require_canonical_nans("exp", porta::exp(x).to_vector(), nan_in);
  require_canonical_nans("log", porta::log(x).to_vector(), nan_in);
  require_canonical_nans("sin", porta::sin(x).to_vector(), nan_in);
  require_canonical_nans("cos", porta::cos(x).to_vector(), nan_in);
  require_canonical_nans("tanh", porta::tanh(x).to_vector(), nan_in);
  require_canonical_nans("relu", porta::relu(x).to_vector(), nan_in);
  require_canonical_nans("sigmoid", porta::sigmoid(x).to_vector(), nan_in);
  require_canonical_nans("square", porta::square(x).to_vector(), nan_in);
  // In place too (the output aliases the input: the loops without streaming stores).
  auto y = Array<T>::from(h, dev);
  porta::neg(y, y);
  require_canonical_nans("neg in place", y.to_vector(), nan_in);
}
