// SPDX-License-Identifier: Apache-2.0
// porta's own math functions (porta/detail/math.hpp): accuracy against long double (64-bit
// significand, 11 bits beyond double) over random and special inputs, the special values, the hard
// cases of trigonometric range reduction, and that the CPU backend's maps and fused expressions give
// exactly the functions' bits.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "porta/fuse.hpp"
#include "porta/math.hpp"
#include "support/support.hpp"
#include "support/ulp.hpp"

namespace pm = porta::detail::math;
using porta::Array;

namespace {

template <class T>
using Fn = porta_test::UnaryFn<T>;
using porta_test::bits;
using porta_test::check_accuracy;
using porta_test::sigmoid_ref;
using porta_test::ulp_error;

template <class T>
std::vector<Fn<T>> functions() {
  constexpr bool d = std::is_same_v<T, double>;
  std::vector<Fn<T>> fns =
      porta_test::select(PORTA_TEST_MATH_UNARY_TABLE(pm), {"exp", "log", "sin", "cos", "tanh", "sigmoid"});
  // double tanh and sigmoid: 0.59 and 0.75 ulp at most over 10^7 random inputs and the edge cases
  // against MPFR (tools/math_accuracy); sigmoid's worst cases are subnormal results (0.53 above).
  for (Fn<T>& fn : fns) {
    if (fn.name == std::string("tanh")) fn.bound = d ? 0.65 : 1.0;
    if (fn.name == std::string("sigmoid")) fn.bound = d ? 0.8 : 1.0;
  }
  return fns;
}

// Random inputs: uniform over [lo, hi], and log-uniform magnitudes of both signs over [tiny, big].
template <class T>
std::vector<T> inputs(std::uint64_t seed, T lo, T hi, T tiny, T big, int n) {
  std::mt19937_64 g(seed);
  std::vector<T> v;
  std::uniform_real_distribution<double> u(static_cast<double>(lo), static_cast<double>(hi));
  std::uniform_real_distribution<double> l(std::log2(static_cast<double>(tiny)), std::log2(static_cast<double>(big)));
  for (int i = 0; i < n; ++i) {
    v.push_back(static_cast<T>(u(g)));
    const T m = static_cast<T>(std::exp2(l(g)));
    v.push_back((g() & 1) ? -m : m);
  }
  return v;
}

}  // namespace

TEMPLATE_TEST_CASE("math: accuracy against long double on random inputs", "[math]", float, double) {
  using T = TestType;
  const T big = std::numeric_limits<T>::max(), den = std::numeric_limits<T>::denorm_min();
  const int n = 100000;
  for (const Fn<T>& fn : functions<T>()) {
    const std::string name = fn.name;
    if (name == "exp") {
      check_accuracy(fn, inputs<T>(1, T(-760), T(720), T(1e-30), T(800), n));
      check_accuracy(fn, inputs<T>(2, T(-1), T(1), den, T(1), n));
    } else if (name == "log") {
      check_accuracy(fn, inputs<T>(3, T(0.5), T(2), den, big, n));
      check_accuracy(fn, inputs<T>(4, T(0.999), T(1.001), T(1e-10), T(10), n));
    } else if (name == "sin" || name == "cos") {
      check_accuracy(fn, inputs<T>(5, T(-10), T(10), T(1e-10), T(2e6), n));
      check_accuracy(fn, inputs<T>(6, T(-1e7), T(1e7), T(1e6), big, n));  // Payne-Hanek
    } else {
      check_accuracy(fn, inputs<T>(7, T(-40), T(40), den, T(800), n));
      check_accuracy(fn, inputs<T>(8, T(-1), T(1), T(1e-12), T(1), n));
    }
  }
}

TEMPLATE_TEST_CASE("math: special values", "[math][ieee]", float, double) {
  using T = TestType;
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const T big = std::numeric_limits<T>::max(), den = std::numeric_limits<T>::denorm_min();
  const std::uint64_t canonical = bits(nan);
  for (const T x : {nan, -nan}) {
    for (const Fn<T>& fn : functions<T>()) {
      INFO(fn.name);
      CHECK(bits(fn.f(x)) == canonical);
    }
  }
  CHECK(pm::exp(T(0)) == T(1));
  CHECK(pm::exp(T(-0.0)) == T(1));
  CHECK(pm::exp(inf) == inf);
  CHECK(pm::exp(-inf) == T(0));
  CHECK(pm::exp(big) == inf);
  CHECK(pm::exp(-big) == T(0));
  CHECK(!std::signbit(pm::exp(-big)));
  // The smallest subnormal and its neighbours: e^x rounds through the subnormal range.
  const T lo = std::is_same_v<T, float> ? T(-103.27893f) : T(-745.13321910194110842);
  CHECK(pm::exp(lo) == den);
  CHECK(ulp_error(pm::exp(T(1)), 2.718281828459045235360287L) <= 1.0L);
  CHECK(pm::log(T(1)) == T(0));
  CHECK(!std::signbit(pm::log(T(1))));
  CHECK(pm::log(T(0)) == -inf);
  CHECK(pm::log(T(-0.0)) == -inf);
  CHECK(pm::log(inf) == inf);
  CHECK(bits(pm::log(T(-1))) == canonical);
  CHECK(bits(pm::log(-inf)) == canonical);
  CHECK(bits(pm::log(-den)) == canonical);
  CHECK(pm::log(den) == static_cast<T>(std::log(static_cast<long double>(den))));
  CHECK(pm::sin(T(0)) == T(0));
  CHECK(std::signbit(pm::sin(T(-0.0))));
  CHECK(pm::sin(-den) == -den);
  CHECK(pm::cos(T(0)) == T(1));
  CHECK(pm::cos(T(-0.0)) == T(1));
  for (const T x : {inf, -inf}) {
    CHECK(bits(pm::sin(x)) == canonical);
    CHECK(bits(pm::cos(x)) == canonical);
  }
  CHECK(pm::tanh(T(0)) == T(0));
  CHECK(std::signbit(pm::tanh(T(-0.0))));
  CHECK(pm::tanh(den) == den);
  CHECK(pm::tanh(inf) == T(1));
  CHECK(pm::tanh(-inf) == T(-1));
  CHECK(pm::tanh(big) == T(1));
  CHECK(pm::sigmoid(T(0)) == T(0.5));
  CHECK(pm::sigmoid(inf) == T(1));
  CHECK(pm::sigmoid(-inf) == T(0));
  CHECK(pm::sigmoid(big) == T(1));
  // Gradual underflow: sigmoid(x) ~ e^x for very negative x, not 1 / (1 + inf) = 0.
  const T neg = std::is_same_v<T, float> ? T(-95) : T(-720);
  CHECK(pm::sigmoid(neg) > T(0));
  CHECK(ulp_error(pm::sigmoid(neg), sigmoid_ref(neg)) <= 1.0L);
}

TEST_CASE("math: sin and cos where range reduction cancels", "[math]") {
  // The doubles nearest k pi/2 (the reduced argument is then tiny, so every bit of pi/2 the
  // reduction uses shows), on both paths, and the double whose reduction is the hardest known:
  // 6381956970095103 * 2^797 is within 2^-60.9 of a multiple of pi/2.
  std::vector<double> xs = {std::ldexp(6381956970095103.0, 797), -std::ldexp(6381956970095103.0, 797),
                            5.319372648326541e+255, 1e22, 1e300};
  const long double pio2 = 1.5707963267948966192313216916397514L;
  for (long k = 1; k < (1L << 22); k = k * 3 / 2 + 1) {
    const double x = static_cast<double>(static_cast<long double>(k) * pio2);
    xs.push_back(x);
    xs.push_back(std::nextafter(x, 0.0));
    xs.push_back(-x);
  }
  for (const Fn<double>& fn : functions<double>()) {
    const std::string name = fn.name;
    if (name == "sin" || name == "cos") check_accuracy(fn, xs);
  }
  std::vector<float> fs;
  for (long k = 1; k < (1L << 26); k = k * 5 / 4 + 1) {
    const float x = static_cast<float>(static_cast<long double>(k) * pio2);
    fs.push_back(x);
    fs.push_back(std::nextafter(x, 0.0f));
  }
  for (const Fn<float>& fn : functions<float>()) {
    const std::string name = fn.name;
    if (name == "sin" || name == "cos") check_accuracy(fn, fs);
  }
}

// float exp, log, sin and cos are evaluated in float: dense runs of consecutive floats where their
// reductions are hardest or change path: around each multiple of pi/2 (tiny reduced arguments) and
// each odd multiple of pi/4 (the ends of the reduced interval, where the quadrant changes) below the
// fast-path limit, across that limit and the tiny-argument cut; for exp, the ends of each reduced
// interval, overflow and the subnormal range; for log, where the exponent changes. (Every float of
// these fast paths was checked once against long double: sin 0.78 ulp, cos 0.78, exp 0.77, log
// 0.72.)
TEST_CASE("math: float exp, log, sin and cos at the edges of their reductions", "[math]") {
  const long double pio4 = 0.78539816339744830961566084581987572L, ln2 = 0.69314718055994530941723212145817657L;
  std::vector<float> trig;
  using porta_test::append;
  for (int k = 1; k <= 2 * 260; ++k) {  // to beyond kTrigFastLimitF (400 = 509 pi/4)
    const float c = static_cast<float>(k * pio4);
    append(trig, porta_test::run(c, 2000));
    append(trig, porta_test::run(-c, 200));
  }
  append(trig, porta_test::run(pm::kTrigFastLimitF, 20000));
  append(trig, porta_test::run(-pm::kTrigFastLimitF, 2000));
  append(trig, porta_test::run(0x1p-12f, 20000));
  append(trig, porta_test::run(-0x1p-12f, 2000));
  for (const Fn<float>& fn : functions<float>()) {
    const std::string name = fn.name;
    if (name == "sin" || name == "cos") check_accuracy(fn, trig);
  }
  std::vector<float> ex;
  for (int k = -301; k <= 257; k += 2) append(ex, porta_test::run(static_cast<float>(k * ln2 / 2), 2000));
  for (const float c : {88.72283f, -87.33655f, -103.27893f, -103.97208f, 0x1p-25f, -0x1p-25f})
    append(ex, porta_test::run(c, 20000));
  for (const Fn<float>& fn : functions<float>()) {
    const std::string name = fn.name;
    if (name == "exp") check_accuracy(fn, ex);
  }
  // log: where the exponent k changes (m = sqrt(2)), around 1, and at the subnormals' edge.
  std::vector<float> lg;
  for (int j = -140; j <= 127; ++j) append(lg, porta_test::run(std::ldexp(1.41421356f, j), 300));
  for (const float c : {1.0f, 0x1p-126f, 0x1.ffp127f}) append(lg, porta_test::run(c, 20000));
  for (const Fn<float>& fn : functions<float>()) {
    const std::string name = fn.name;
    if (name == "log") check_accuracy(fn, lg);
  }
}

// Every device's maps and fused expressions run these functions (on the CPU vectorised, built per
// ISA; on a GPU the shared map kernels): every element must have exactly the scalar function's bits
// on the host, across block boundaries, with large arguments of sin and cos in some blocks,
// specials, and in place.
TEMPLATE_TEST_CASE("math: every device's maps give the functions' bits", "[math][map]", float, double) {
  using T = TestType;
  const porta::Device cpu = PORTA_TEST_DEVICE();
  const std::int64_t n = 5000;
  std::vector<T> h = inputs<T>(9, T(-30), T(30), T(1e-20), T(100), static_cast<int>(n / 2));
  h[7] = std::numeric_limits<T>::infinity();
  h[300] = std::numeric_limits<T>::quiet_NaN();
  h[1000] = T(3e7);   // sin/cos: this block goes element by element through Payne-Hanek
  h[2000] = T(1000);  // float sin/cos: a block beyond the float path selects between it and the double one
  h[2001] = T(-5e5);
  // float sin/cos: whole blocks (of 256) beyond the float path, of both signs.
  for (std::size_t i = 3072; i < 3584; ++i) h[i] = T((i % 2 ? 1 : -1) * (400.0 + 37.25 * static_cast<double>(i)));
  h[4999] = T(-1e30);
  const Array<T> x = Array<T>::from(h, cpu);
  const auto expect = [&](T (*f)(T)) {
    std::vector<T> r(h.size());
    for (std::size_t i = 0; i < h.size(); ++i) r[i] = f(h[i]);
    return r;
  };
  const auto same_bits = [](const std::vector<T>& got, const std::vector<T>& want) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO("element " << i);
      REQUIRE(bits(got[i]) == bits(want[i]));
    }
  };
  same_bits(porta::exp(x).to_vector(), expect([](T v) { return pm::exp(v); }));
  same_bits(porta::log(porta::abs(x)).to_vector(), expect([](T v) { return pm::log(std::fabs(v)); }));
  same_bits(porta::sin(x).to_vector(), expect([](T v) { return pm::sin(v); }));
  same_bits(porta::cos(x).to_vector(), expect([](T v) { return pm::cos(v); }));
  same_bits(porta::tanh(x).to_vector(), expect([](T v) { return pm::tanh(v); }));
  same_bits(porta::sigmoid(x).to_vector(), expect([](T v) { return pm::sigmoid(v); }));
  // Fused, interpreted (scalars included): sin(x) * cos(2 x) + exp(-1).
  const auto lx = porta::lazy(x);
  const Array<T> fused = porta::sin(lx) * porta::cos(lx * T(2)) + T(pm::exp(T(-1)));
  std::vector<T> want(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) want[i] = pm::sin(h[i]) * pm::cos(h[i] * T(2)) + pm::exp(T(-1));
  same_bits(fused.to_vector(), want);
  // In place.
  Array<T> y = Array<T>::from(h, cpu);
  porta::sin(y, y);
  same_bits(y.to_vector(), expect([](T v) { return pm::sin(v); }));
}
