// SPDX-License-Identifier: Apache-2.0
// float16 and bfloat16 arrays on every device: conversions against a nearest-value search over the
// formats' every value, casts between every pair of dtypes, elementwise ops computed in float and
// rounded once (long double references), reductions accumulated in float (the bits of the float
// reduction of the widened values, and long double bounds), views and printing, and the errors for
// what the 16-bit types do not have yet.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "porta/fuse.hpp"
#include "support/support.hpp"

using porta::Array;
using porta::bfloat16;
using porta::Device;
using porta::float16;
using porta::Shape;

namespace {

using LD = long double;

// The format's value of bits b, from its definition (sign, biased exponent, mantissa): independent
// of porta's conversion code.
template <class H>
LD value_of(std::uint16_t b) {
  constexpr bool f16 = std::is_same_v<H, float16>;
  constexpr int mbits = f16 ? 10 : 7, bias = f16 ? 15 : 127, emax = f16 ? 31 : 255;
  const int e = (b >> mbits) & emax;
  const int m = b & ((1 << mbits) - 1);
  LD v;
  if (e == emax) {
    v = m == 0 ? std::numeric_limits<LD>::infinity() : std::numeric_limits<LD>::quiet_NaN();
  } else if (e == 0) {
    v = std::ldexp(static_cast<LD>(m), 1 - bias - mbits);
  } else {
    v = std::ldexp(static_cast<LD>(m + (1 << mbits)), e - bias - mbits);
  }
  return (b & 0x8000u) ? -v : v;
}

// Every finite non-negative value of H in increasing order (index == bits).
template <class H>
const std::vector<LD>& magnitudes() {
  static const std::vector<LD> table = [] {
    std::vector<LD> t;
    const std::uint16_t inf = std::numeric_limits<H>::infinity().bits;
    for (std::uint32_t b = 0; b < inf; ++b) t.push_back(value_of<H>(static_cast<std::uint16_t>(b)));
    return t;
  }();
  return table;
}

// x rounded to the nearest H, ties to the even bit pattern, beyond the largest value + half its ulp
// to infinity (IEEE round to nearest): by search, not by porta's conversion.
template <class H>
std::uint16_t nearest(LD x) {
  if (std::isnan(x)) return std::numeric_limits<H>::quiet_NaN().bits;
  const std::uint16_t sign = std::signbit(x) ? 0x8000u : 0u;
  const LD a = std::fabs(x);
  const auto& t = magnitudes<H>();
  const std::uint16_t inf = std::numeric_limits<H>::infinity().bits;
  const LD top = t.back(), half_ulp = (t.back() - t[t.size() - 2]) / 2;
  if (a >= top + half_ulp) return static_cast<std::uint16_t>(sign | inf);  // the tie goes to inf (max is odd)
  const auto hi = std::lower_bound(t.begin(), t.end(), a);
  if (hi == t.end()) return static_cast<std::uint16_t>(sign | (t.size() - 1));
  auto b = static_cast<std::uint16_t>(hi - t.begin());
  if (*hi != a && b > 0) {
    const LD up = *hi - a, down = a - t[b - 1];
    if (down < up || (down == up && ((b - 1) & 1) == 0)) --b;
  }
  return static_cast<std::uint16_t>(sign | b);
}

template <class H>
const char* name_of() {
  return std::is_same_v<H, float16> ? "float16" : "bfloat16";
}

// Random finite values of H spread over its exponents, with zeros, infinities, NaN and subnormals.
template <class H>
std::vector<H> random_values(porta_test::Rng& rng, std::int64_t n, bool specials = true) {
  std::vector<H> v(static_cast<std::size_t>(n));
  const std::uint16_t inf = std::numeric_limits<H>::infinity().bits;
  for (auto& h : v) {
    std::uint16_t b = static_cast<std::uint16_t>(rng.engine()() % inf);
    if (rng.coin()) b |= 0x8000u;
    h = H::from_bits(b);
  }
  if (specials && n > 8) {
    v[0] = H::from_bits(0x0000);
    v[1] = H::from_bits(0x8000);
    v[2] = std::numeric_limits<H>::infinity();
    v[3] = H::from_bits(static_cast<std::uint16_t>(inf | 0x8000u));
    v[4] = std::numeric_limits<H>::quiet_NaN();
    v[5] = H::from_bits(0x0001);
    v[6] = std::numeric_limits<H>::max();
  }
  return v;
}

// Values of moderate size (|x| in [1/16, 16)), so that sums and products stay in range.
template <class H>
std::vector<H> moderate_values(porta_test::Rng& rng, std::int64_t n) {
  std::vector<H> v(static_cast<std::size_t>(n));
  for (auto& h : v) h = H(rng.uniform<float>(0.0625f, 16.0f) * (rng.coin() ? 1.0f : -1.0f));
  return v;
}

// The canonical NaN compares by bits; any other value by bits too.
template <class H>
std::int64_t mismatches(const std::vector<H>& got, const std::vector<std::uint16_t>& want, std::int64_t* first) {
  std::int64_t bad = 0;
  *first = -1;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i].bits != want[i]) {
      if (*first < 0) *first = static_cast<std::int64_t>(i);
      ++bad;
    }
  return bad;
}

#define CHECK_BITS(got_vec, want_vec, inputs)                                                                 \
  do {                                                                                                        \
    std::int64_t first_ = -1;                                                                                 \
    const auto& g_ = (got_vec);                                                                               \
    const auto& w_ = (want_vec);                                                                              \
    REQUIRE(g_.size() == w_.size());                                                                          \
    const std::int64_t bad_ = mismatches(g_, w_, &first_);                                                    \
    if (bad_ > 0)                                                                                             \
      UNSCOPED_INFO("first mismatch at " << first_ << ": got 0x" << std::hex << g_[first_].bits << " want 0x" \
                                         << w_[first_] << std::dec << " " << inputs(first_));                 \
    CHECK(bad_ == 0);                                                                                         \
  } while (0)

template <class H>
std::vector<std::uint16_t> bits_of(const Array<H>& a) {
  std::vector<std::uint16_t> b;
  for (const H h : a.to_vector()) b.push_back(h.bits);
  return b;
}

// Steps between two bit patterns along the number line (both finite or both the canonical NaN).
template <class H>
int ulps_apart(std::uint16_t a, std::uint16_t b) {
  const auto key = [](std::uint16_t v) { return (v & 0x8000u) ? -int(v & 0x7fffu) : int(v); };
  return std::abs(key(a) - key(b));
}

}  // namespace

TEMPLATE_TEST_CASE("16-bit floats convert exactly to float and round to nearest even from it", "[half][cast]", float16,
                   bfloat16) {
  using H = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  static_assert(sizeof(H) == 2 && alignof(H) == 2 && std::is_trivially_copyable_v<H>);
  // every pattern: to float is the format's value; back gives the same bits (NaN: the canonical one)
  std::vector<H> all(65536);
  for (std::uint32_t b = 0; b < 65536; ++b) all[b] = H::from_bits(static_cast<std::uint16_t>(b));
  const auto x = Array<H>::from(all, dev);
  const auto wide = porta::cast<float>(x).to_vector();
  const auto back = porta::cast<H>(porta::cast<float>(x)).to_vector();
  const auto wide64 = porta::cast<double>(x).to_vector();
  std::int64_t bad = 0;
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const LD v = value_of<H>(static_cast<std::uint16_t>(b));
    const bool nan = std::isnan(v);
    if (nan ? !(std::isnan(wide[b]) && porta_test::same_bits(wide[b], std::numeric_limits<float>::quiet_NaN()))
            : (LD(wide[b]) != v || std::signbit(wide[b]) != std::signbit(v)))
      ++bad;
    if (back[b].bits != (nan ? std::numeric_limits<H>::quiet_NaN().bits : b)) ++bad;
    if (!nan && LD(wide64[b]) != v) ++bad;
    if (!nan && static_cast<float>(all[b]) != wide[b]) ++bad;  // the host conversion agrees
  }
  CHECK(bad == 0);
  // float -> H: random floats of every size, and exact ties and near-ties between neighbours
  const std::int64_t n = 1 << 16;
  std::vector<float> f(static_cast<std::size_t>(n));
  const auto& t = magnitudes<H>();
  for (std::int64_t i = 0; i < n; ++i) {
    const int kind = static_cast<int>(i % 4);
    if (kind == 0) {
      f[i] = std::ldexp(rng.uniform<float>(1.0f, 2.0f), static_cast<int>(rng.index(300)) - 150);
    } else {
      const std::size_t k = static_cast<std::size_t>(rng.index(static_cast<std::int64_t>(t.size()) - 1));
      const LD mid = (t[k] + t[k + 1]) / 2;
      const float m = static_cast<float>(mid);  // exact for both formats' ties
      f[i] = kind == 1 ? m : (kind == 2 ? std::nextafter(m, 0.0f) : std::nextafter(m, 1e30f));
    }
    if (rng.coin()) f[i] = -f[i];
  }
  f[0] = 65520.0f;  // float16's first value that rounds to infinity
  f[1] = std::nextafter(65520.0f, 0.0f);
  f[2] = std::numeric_limits<float>::max();
  f[3] = std::numeric_limits<float>::denorm_min();
  f[4] = -std::numeric_limits<float>::quiet_NaN();
  std::vector<std::uint16_t> want(f.size());
  for (std::size_t i = 0; i < f.size(); ++i) want[i] = nearest<H>(f[i]);
  const auto from_f32 = porta::cast<H>(Array<float>::from(f, dev)).to_vector();
  CHECK_BITS(from_f32, want, [&](std::int64_t i) { return "from float " + std::to_string(f[i]); });
  std::vector<H> host(f.size());
  for (std::size_t i = 0; i < f.size(); ++i) host[i] = H(f[i]);
  CHECK_BITS(host, want, [&](std::int64_t i) { return "host, from float " + std::to_string(f[i]); });
  // double -> H rounds once: values just off a tie that a rounding to float first would put on it
  std::vector<double> d(f.size());
  for (std::size_t i = 0; i < f.size(); ++i) {
    d[i] = static_cast<double>(f[i]);
    if (i % 4 == 1) d[i] += (rng.coin() ? 1 : -1) * std::ldexp(std::fabs(d[i]), -40);
    want[i] = nearest<H>(d[i]);
  }
  const auto from_f64 = porta::cast<H>(Array<double>::from(d, dev)).to_vector();
  CHECK_BITS(from_f64, want, [&](std::int64_t i) { return "from double " + std::to_string(d[i]); });
  // integers: int32 and int64 (beyond 2^53 too: one rounding), and back (float -> integer rules)
  std::vector<std::int64_t> i64(static_cast<std::size_t>(n));
  for (auto& v : i64) {
    const int bits = static_cast<int>(rng.index(63));
    v = static_cast<std::int64_t>(rng.engine()() >> (63 - bits)) * (rng.coin() ? 1 : -1);
  }
  i64[0] = std::numeric_limits<std::int64_t>::min();
  i64[1] = (std::int64_t(1) << 62) + (std::int64_t(1) << 54) + 1;  // above a bfloat16 tie by 1
  std::vector<std::int32_t> i32(i64.size());
  for (std::size_t i = 0; i < i64.size(); ++i) i32[i] = static_cast<std::int32_t>(i64[i] % 100000);
  for (std::size_t i = 0; i < i64.size(); ++i) want[i] = nearest<H>(static_cast<LD>(i64[i]));
  CHECK_BITS(porta::cast<H>(Array<std::int64_t>::from(i64, dev)).to_vector(), want,
             [&](std::int64_t i) { return "from int64 " + std::to_string(i64[i]); });
  for (std::size_t i = 0; i < i32.size(); ++i) want[i] = nearest<H>(static_cast<LD>(i32[i]));
  const auto h32 = porta::cast<H>(Array<std::int32_t>::from(i32, dev));
  CHECK_BITS(h32.to_vector(), want, [&](std::int64_t i) { return "from int32 " + std::to_string(i32[i]); });
  const auto to32 = porta::cast<std::int32_t>(h32).to_vector();
  bool ints_ok = true;
  for (std::size_t i = 0; i < i32.size(); ++i) {
    const LD v = value_of<H>(want[i]);
    const LD sat = std::min<LD>(std::max<LD>(std::trunc(v), INT32_MIN), INT32_MAX);
    ints_ok = ints_ok && to32[i] == static_cast<std::int32_t>(sat);
  }
  CHECK(ints_ok);
  // the other 16-bit format and complex: through float, one rounding (float16 <-> bfloat16 differ
  // in range and precision both ways)
  using Other = std::conditional_t<std::is_same_v<H, float16>, bfloat16, float16>;
  const auto vals = random_values<H>(rng, n);
  const auto hv = Array<H>::from(vals, dev);
  const auto other = porta::cast<Other>(hv).to_vector();
  const auto c64 = porta::cast<porta::complex<float>>(hv).to_vector();
  std::vector<std::uint16_t> want_other(vals.size());
  for (std::size_t i = 0; i < vals.size(); ++i) want_other[i] = nearest<Other>(value_of<H>(vals[i].bits));
  CHECK_BITS(other, want_other, [&](std::int64_t i) { return "from " + std::to_string(float(vals[i])); });
  bool cplx = true;
  for (std::size_t i = 0; i < vals.size(); ++i)
    cplx = cplx && porta_test::same_bits(c64[i].re, static_cast<float>(vals[i])) && c64[i].im == 0.0f;
  CHECK(cplx);
  const auto from_c = porta::cast<H>(porta::cast<porta::complex<double>>(Array<double>::from(d, dev))).to_vector();
  for (std::size_t i = 0; i < d.size(); ++i) want[i] = nearest<H>(d[i]);
  CHECK_BITS(from_c, want, [&](std::int64_t i) { return "from complex (" + std::to_string(d[i]) + ", 0)"; });
}

TEMPLATE_TEST_CASE("16-bit elementwise ops compute in float and round once", "[half][maps]", float16, bfloat16) {
  using H = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : {std::int64_t(1), std::int64_t(1000), std::int64_t(1 << 16) + 3}) {
    INFO("n = " << n << " on " << dev.to_string());
    const auto ha = random_values<H>(rng, n), hb = random_values<H>(rng, n);
    const auto a = Array<H>::from(ha, dev), b = Array<H>::from(hb, dev);
    const auto in2 = [&](std::int64_t i) {
      return "a = " + std::to_string(float(ha[i])) + ", b = " + std::to_string(float(hb[i]));
    };
    // + - * / min max: float's correctly rounded result (exact in long double for + - *), then H
    const auto f32 = [](LD v) { return static_cast<LD>(static_cast<float>(v)); };
    std::vector<std::uint16_t> add(n), sub(n), mul(n), div(n), mn(n), mx(n), neg(n), sq(n), rt(n), rl(n);
    for (std::int64_t i = 0; i < n; ++i) {
      const LD x = value_of<H>(ha[i].bits), y = value_of<H>(hb[i].bits);
      add[i] = nearest<H>(f32(x + y));
      sub[i] = nearest<H>(f32(x - y));
      mul[i] = nearest<H>(f32(x * y));
      div[i] = nearest<H>(f32(x / y));
      const bool any_nan = std::isnan(x) || std::isnan(y);
      mn[i] = any_nan ? nearest<H>(NAN) : nearest<H>(x < y || (x == y && std::signbit(x)) ? x : y);
      mx[i] = any_nan ? nearest<H>(NAN) : nearest<H>(x > y || (x == y && !std::signbit(x)) ? x : y);
      neg[i] = nearest<H>(-x);
      sq[i] = nearest<H>(f32(x * x));
      rt[i] = nearest<H>(x < 0 ? NAN : f32(std::sqrt(x)));
      rl[i] = nearest<H>(std::isnan(x) ? x : (x > 0 ? x : 0.0L));
    }
    CHECK_BITS((a + b).to_vector(), add, in2);
    CHECK_BITS((a - b).to_vector(), sub, in2);
    CHECK_BITS((a * b).to_vector(), mul, in2);
    CHECK_BITS((a / b).to_vector(), div, in2);
    CHECK_BITS(porta::minimum(a, b).to_vector(), mn, in2);
    CHECK_BITS(porta::maximum(a, b).to_vector(), mx, in2);
    CHECK_BITS((-a).to_vector(), neg, in2);
    CHECK_BITS(porta::square(a).to_vector(), sq, in2);
    CHECK_BITS(porta::sqrt(a).to_vector(), rt, in2);
    CHECK_BITS(porta::relu(a).to_vector(), rl, in2);
    // with a scalar of another type, converted to H first (NumPy's rule)
    std::vector<std::uint16_t> scaled(n);
    const LD s = value_of<H>(H(0.3).bits);
    for (std::int64_t i = 0; i < n; ++i) scaled[i] = nearest<H>(f32(value_of<H>(ha[i].bits) * s));
    CHECK_BITS((a * 0.3).to_vector(), scaled, in2);
    // axpy: alpha * x rounded in float, + y in float, then H
    auto y = Array<H>::from(hb, dev);
    porta::axpy(H(0.3), a, y);
    std::vector<std::uint16_t> ax(n);
    for (std::int64_t i = 0; i < n; ++i)
      ax[i] = nearest<H>(f32(f32(s * value_of<H>(ha[i].bits)) + value_of<H>(hb[i].bits)));
    CHECK_BITS(y.to_vector(), ax, in2);
    // comparisons: float's (NaN unordered, -0 == +0)
    const auto lt = porta::less(a, b).to_vector(), eq = porta::equal(a, b).to_vector();
    bool cmp = true;
    for (std::int64_t i = 0; i < n; ++i) {
      const float x = ha[i], w = hb[i];
      cmp = cmp && lt[i] == (x < w ? 1 : 0) && eq[i] == (x == w ? 1 : 0);
    }
    CHECK(cmp);
  }
  // transcendental functions: porta's float function, rounded once: within one step of the
  // correctly rounded H of the exact value (the float result is within an ulp of float)
  const std::int64_t n = 1 << 14;
  auto hx = moderate_values<H>(rng, n);
  const auto x = Array<H>::from(hx, dev);
  struct Fn {
    const char* name;
    std::function<Array<H>(const Array<H>&)> run;
    std::function<LD(LD)> exact;
  };
  const std::vector<Fn> fns = {
      {"exp", [](const Array<H>& v) { return porta::exp(porta::cast<H>(porta::cast<float>(v) * 0.25f)); },
       [](LD v) { return std::exp(static_cast<LD>(static_cast<float>(v) * 0.25f)); }},
      {"log", [](const Array<H>& v) { return porta::log(porta::abs(v)); }, [](LD v) { return std::log(std::fabs(v)); }},
      {"sin", [](const Array<H>& v) { return porta::sin(v); }, [](LD v) { return std::sin(v); }},
      {"cos", [](const Array<H>& v) { return porta::cos(v); }, [](LD v) { return std::cos(v); }},
      {"tanh", [](const Array<H>& v) { return porta::tanh(v); }, [](LD v) { return std::tanh(v); }},
      {"sigmoid", [](const Array<H>& v) { return porta::sigmoid(v); }, [](LD v) { return 1 / (1 + std::exp(-v)); }},
  };
  for (const auto& fn : fns) {
    INFO(fn.name << " on " << dev.to_string());
    const auto got = fn.run(x).to_vector();
    int worst = 0;
    std::int64_t at = -1;
    for (std::int64_t i = 0; i < n; ++i) {
      const LD arg =
          fn.name == std::string("exp") ? static_cast<LD>(static_cast<float>(hx[i])) : value_of<H>(hx[i].bits);
      const int d = ulps_apart<H>(got[i].bits, nearest<H>(fn.exact(arg)));
      if (d > worst) worst = d, at = i;
    }
    INFO("worst " << worst << " steps at x = " << (at >= 0 ? float(hx[at]) : 0.0f));
    CHECK(worst <= 1);
  }
  // pow: float's pow of the widened values, rounded once
  const auto p = porta::pow(porta::abs(x), porta::cast<H>(Array<float>::from(std::vector<float>(n, 1.5f), dev)));
  const auto gp = p.to_vector();
  int worst = 0;
  for (std::int64_t i = 0; i < n; ++i)
    worst = std::max(worst, ulps_apart<H>(gp[i].bits, nearest<H>(std::pow(std::fabs(value_of<H>(hx[i].bits)), 1.5L))));
  CHECK(worst <= 1);
}

TEMPLATE_TEST_CASE("16-bit reductions accumulate in float in porta's order", "[half][reduce]", float16, bfloat16) {
  using H = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : {std::int64_t(1), std::int64_t(777), std::int64_t(1 << 17) + 5}) {
    INFO("n = " << n << " on " << dev.to_string());
    const auto hx = moderate_values<H>(rng, n), hw = moderate_values<H>(rng, n);
    const auto x = Array<H>::from(hx, dev), w = Array<H>::from(hw, dev);
    const auto xf = porta::cast<float>(x), wf = porta::cast<float>(w);
    // the bits: the float reduction of the widened values, rounded once (the same on every device)
    CHECK(porta::sum(x).bits == H(porta::sum(xf)).bits);
    CHECK(porta::dot(x, w).bits == H(porta::dot(xf, wf)).bits);
    CHECK(porta::max(x).bits == H(porta::max(xf)).bits);
    CHECK(porta::min(x).bits == H(porta::min(xf)).bits);
    CHECK(porta::norm2(x).bits == H(porta::norm2(xf)).bits);
    CHECK(porta_test::same_bits(porta::mean(x), porta::mean(xf)));
    // and close to the exact values: float accumulation's bound plus one rounding to H
    LD sum = 0, dot = 0, mag = 0, dmag = 0, sq = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const LD a = value_of<H>(hx[i].bits), b = value_of<H>(hw[i].bits);
      sum += a;
      dot += a * b;
      mag += std::fabs(a);
      dmag += std::fabs(a * b);
      sq += a * a;
    }
    const LD eps_f = std::numeric_limits<float>::epsilon(),
             eps_h = static_cast<float>(std::numeric_limits<H>::epsilon());
    const LD growth = 2 * std::log2(static_cast<LD>(n) + 1) + 4;
    // a result beyond H's range is an infinity of its sign (float16 dots of 2^17 terms get there)
    const auto near = [&](H got, LD want, LD bound) {
      if (std::fabs(want) - bound > LD(float(std::numeric_limits<H>::max())))
        return (std::isinf(float(got)) || std::fabs(float(got)) == float(std::numeric_limits<H>::max())) &&
               (float(got) > 0) == (want > 0);
      return std::fabs(LD(float(got)) - want) <= eps_h * std::fabs(want) + bound;
    };
    CHECK(near(porta::sum(x), sum, growth * eps_f * mag));
    CHECK(near(porta::dot(x, w), dot, growth * eps_f * dmag));
    CHECK(std::fabs(LD(float(porta::norm2(x))) - std::sqrt(sq)) <= eps_h * std::sqrt(sq) * (1 + growth * eps_f));
    CHECK(std::fabs(LD(porta::mean(x)) - sum / n) <= (growth + 1) * eps_f * mag / n);
  }
  // along an axis: the float reduction's bits rounded once; the mean divides before rounding
  const auto hx = moderate_values<H>(rng, 37 * 129);
  const auto x = Array<H>::from(hx, Shape{37, 129}, dev);
  const auto xf = porta::cast<float>(x);
  for (int axis : {0, 1}) {
    INFO("axis " << axis);
    CHECK(bits_of(porta::sum(x, axis)) == bits_of(porta::cast<H>(porta::sum(xf, axis))));
    CHECK(bits_of(porta::max(x, axis)) == bits_of(porta::cast<H>(porta::max(xf, axis))));
    CHECK(bits_of(porta::mean(x, axis)) == bits_of(porta::cast<H>(porta::mean(xf, axis))));
  }
  // float16's sums do not overflow where the elements' float sum does not: 4096 x 60000 is far
  // beyond 65504, and the sum of squares behind norm2 too
  if constexpr (std::is_same_v<H, float16>) {
    const auto big = porta::full<H>(Shape{4096}, H(60000.0f), dev);
    CHECK(std::isinf(float(porta::sum(big))));  // the result itself does not fit float16
    CHECK(porta::mean(big) == 60000.0);
    const auto mid = porta::full<H>(Shape{4096}, H(300.0f), dev);
    CHECK(float(porta::norm2(mid)) == float(H(300.0f * 64.0f)));
  }
}

TEMPLATE_TEST_CASE("16-bit arrays fill, view, print, and refuse what they do not have yet", "[half][errors]", float16,
                   bfloat16) {
  using H = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  auto x = porta::full<H>(Shape{4, 5}, H(1.5f), dev);
  porta::fill(x.row(2), H(-0.25f));
  const auto hx = x.to_vector();
  CHECK(hx[2 * 5 + 3].bits == H(-0.25f).bits);
  CHECK(hx[3 * 5].bits == H(1.5f).bits);
  CHECK(porta::detail::dtype_of<H>() == (std::is_same_v<H, float16> ? PORTA_F16 : PORTA_BF16));
  std::ostringstream printed;
  printed << Array<H>::from(std::vector<H>{H(3.0f), H(-1.5f)}, dev);
  INFO(printed.str());
  CHECK(printed.str().find("3, -1.5]") != std::string::npos);
  CHECK(printed.str().find(std::string("dtype=") + name_of<H>()) != std::string::npos);
  // arange / iota: start + i * step in float, rounded once per element
  const auto r = porta::arange<H>(H(0.1f), H(300.0f), H(0.1f), dev).to_vector();
  const float s0 = float(H(0.1f)), st = float(H(0.1f));
  REQUIRE(r.size() == static_cast<std::size_t>(std::ceil((300.0f - s0) / st)));
  std::int64_t bad_iota = 0;
  for (std::size_t i = 0; i < r.size(); ++i)
    if (r[i].bits != H(s0 + static_cast<float>(i) * st).bits) ++bad_iota;
  CHECK(bad_iota == 0);
  // where and take move 16-bit values unchanged
  const auto pick = Array<std::int32_t>::from(std::vector<std::int32_t>{1, 0, 1, 0}, dev);
  const auto wa = Array<H>::from(std::vector<H>{H(1.0f), H(2.0f), H(3.0f), H(4.0f)}, dev);
  const auto wb = Array<H>::from(std::vector<H>{H(-1.0f), H(-2.0f), H(-3.0f), H(-4.0f)}, dev);
  CHECK(bits_of(porta::where(pick, wa, wb)) ==
        std::vector<std::uint16_t>{H(1.0f).bits, H(-2.0f).bits, H(3.0f).bits, H(-4.0f).bits});
  const auto idx = Array<std::int64_t>::from(std::vector<std::int64_t>{3, 0}, dev);
  CHECK(bits_of(porta::take(wa, idx, 0)) == std::vector<std::uint16_t>{H(4.0f).bits, H(1.0f).bits});
  // a strided view and its copy
  const auto col = x.col(1).contiguous().to_vector();
  CHECK(col.size() == 4);
  CHECK(col[2].bits == H(-0.25f).bits);
  // not there yet for 16-bit types: refused by name
  using Catch::Matchers::Contains;
  const auto synced = [&](auto f) {
    return [f, dev] {
      (void)f();
      porta::synchronize(dev);
    };
  };
}

// porta's order written from its definition, on the values: NaN after everything, -0 below +0.
// Descending keeps NaN last (docs/sorting.md).
bool porta_before(LD a, LD b, bool descending) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  if (a == b) return descending ? (!std::signbit(a) && std::signbit(b)) : (std::signbit(a) && !std::signbit(b));
  return descending ? a > b : a < b;
}

TEMPLATE_TEST_CASE("16-bit sort, argsort, sort_by_key, argmax and argmin follow porta's order of the values",
                   "[half][sort]", float16, bfloat16) {
  using H = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::uint16_t nan = std::numeric_limits<H>::quiet_NaN().bits;
  for (const std::int64_t n : {std::int64_t(1), std::int64_t(300), std::int64_t(70001)}) {
    // every bit pattern may come: NaNs of both signs and any payload, infinities, signed zeros
    std::vector<H> hx(static_cast<std::size_t>(n));
    for (auto& h : hx) h = H::from_bits(static_cast<std::uint16_t>(rng.engine()() & 0xffffu));
    const auto x = Array<H>::from(hx, dev);
    for (const bool descending : {false, true}) {
      INFO("n = " << n << (descending ? ", descending" : ", ascending") << " on " << dev.to_string());
      const auto order = descending ? porta::SortOrder::descending : porta::SortOrder::ascending;
      std::vector<std::int64_t> ref(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) ref[i] = i;
      std::stable_sort(ref.begin(), ref.end(), [&](std::int64_t a, std::int64_t b) {
        return porta_before(value_of<H>(hx[a].bits), value_of<H>(hx[b].bits), descending);
      });
      std::vector<std::uint16_t> want(ref.size());
      for (std::size_t i = 0; i < ref.size(); ++i)
        want[i] = std::isnan(value_of<H>(hx[ref[i]].bits)) ? nan : hx[ref[i]].bits;
      CHECK(porta::argsort(x, order).to_vector() == ref);
      CHECK(bits_of(porta::sort(x, order)) == want);
      // values of every size follow their keys: 4 bytes, 2 (this format) and 16 (complex<double>)
      std::vector<std::int32_t> v32(hx.size());
      std::vector<H> v16(hx.size());
      std::vector<porta::complex<double>> v128(hx.size());
      for (std::size_t i = 0; i < hx.size(); ++i) {
        v32[i] = static_cast<std::int32_t>(i) * 7 - 5;
        v16[i] = H::from_bits(static_cast<std::uint16_t>(i * 40503u));
        v128[i] = porta::complex<double>(static_cast<double>(i), -0.5 * static_cast<double>(i));
      }
      const auto [k1, s32] = porta::sort_by_key(x, Array<std::int32_t>::from(v32, dev), order);
      const auto [k2, s16] = porta::sort_by_key(x, Array<H>::from(v16, dev), order);
      const auto [k3, s128] = porta::sort_by_key(Array<std::int32_t>::from(v32, dev),
                                                 Array<porta::complex<double>>::from(v128, dev), order);
      CHECK(bits_of(k1) == want);
      CHECK(bits_of(k2) == want);
      const auto g32 = s32.to_vector(), g16 = s16.to_vector(), g128 = s128.to_vector();
      std::int64_t bad = 0;
      for (std::size_t i = 0; i < ref.size(); ++i) {
        bad += g32[i] != v32[ref[i]];
        bad += g16[i].bits != v16[ref[i]].bits;
        // int32 keys 7i - 5 ascend with i: the complex values keep their order, or reverse it
        const std::size_t j = descending ? ref.size() - 1 - i : i;
        bad += g128[i].real() != v128[j].real() || g128[i].imag() != v128[j].imag();
      }
      CHECK(bad == 0);
    }
    // argmax / argmin: the first largest / smallest, -0 below +0, the first NaN wins both
    std::int64_t amax = 0, amin = 0;
    for (std::int64_t i = 1; i < n; ++i) {
      const LD v = value_of<H>(hx[i].bits), vmax = value_of<H>(hx[amax].bits), vmin = value_of<H>(hx[amin].bits);
      if (!std::isnan(vmax) && (std::isnan(v) || porta_before(vmax, v, false))) amax = i;
      if (!std::isnan(vmin) && (std::isnan(v) || porta_before(v, vmin, false))) amin = i;
    }
    CHECK(porta::argmax(x) == amax);
    CHECK(porta::argmin(x) == amin);
    if (n == 300) {
      const auto m = x.reshaped(Shape{20, 15});
      const auto rows = porta::argmax(m, 1).to_vector();
      for (std::int64_t r = 0; r < 20; ++r) {
        std::int64_t best = 0;
        for (std::int64_t c = 1; c < 15; ++c) {
          const LD v = value_of<H>(hx[r * 15 + c].bits), b = value_of<H>(hx[r * 15 + best].bits);
          if (!std::isnan(b) && (std::isnan(v) || porta_before(b, v, false))) best = c;
        }
        CHECK(rows[r] == best);
      }
    }
  }
}

TEMPLATE_TEST_CASE("16-bit scans accumulate in float and round every output once", "[half][scan]", float16, bfloat16) {
  using H = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  // multiples of 1/4 in [-8, 8]: every partial sum is exact in float in any order, so the result
  // is the exact running sum rounded once to H, which the nearest-value search gives; bfloat16's 8
  // bits round most of them, and an accumulation in H would drift from it at once
  for (const std::int64_t n : {std::int64_t(1), std::int64_t(1000), std::int64_t(70001)}) {
    std::vector<H> hx(static_cast<std::size_t>(n));
    for (auto& h : hx) h = H(static_cast<float>(rng.uniform<int>(-32, 32)) * 0.25f);
    const auto x = Array<H>::from(hx, dev);
    INFO("n = " << n << " on " << dev.to_string());
    std::vector<std::uint16_t> inc(hx.size()), exc(hx.size()), peak(hx.size());
    LD s = 0, top = -std::numeric_limits<LD>::infinity();
    for (std::size_t i = 0; i < hx.size(); ++i) {
      exc[i] = nearest<H>(s);
      s += value_of<H>(hx[i].bits);
      inc[i] = nearest<H>(s);
      top = std::max(top, value_of<H>(hx[i].bits));
      peak[i] = nearest<H>(top);
    }
    CHECK(bits_of(porta::cumsum(x)) == inc);
    CHECK(bits_of(porta::exclusive_scan(x)) == exc);
    CHECK(bits_of(porta::cummax(x)) == peak);
  }
  // along an axis, and a NaN: the canonical NaN from there on
  std::vector<H> hm(6 * 50);
  for (auto& h : hm) h = H(static_cast<float>(rng.uniform<int>(-32, 32)) * 0.25f);
  hm[2 * 50 + 7] = H::from_bits(static_cast<std::uint16_t>(std::numeric_limits<H>::quiet_NaN().bits | 0x8001u));
  const auto m = Array<H>::from(hm, Shape{6, 50}, dev);
  for (const int axis : {0, 1}) {
    INFO("axis " << axis);
    std::vector<std::uint16_t> want(hm.size());
    const int outer = axis == 0 ? 50 : 6, len = axis == 0 ? 6 : 50;
    for (int o = 0; o < outer; ++o) {
      LD acc = 0;
      for (int k = 0; k < len; ++k) {
        const int at = axis == 0 ? k * 50 + o : o * 50 + k;
        acc += value_of<H>(hm[at].bits);
        want[at] = nearest<H>(acc);
      }
    }
    CHECK(bits_of(porta::cumsum(m, axis)) == want);
  }
}

TEMPLATE_TEST_CASE("16-bit fused expressions give the eager chain's bits", "[half][fuse]", float16, bfloat16) {
  using H = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (const std::int64_t n : {std::int64_t(1), std::int64_t(9), std::int64_t(100003)}) {
    INFO("n = " << n << " on " << dev.to_string());
    std::vector<H> hx(static_cast<std::size_t>(n)), hy(hx.size()), hz(hx.size());
    for (std::size_t i = 0; i < hx.size(); ++i) {
      hx[i] = H(rng.uniform<float>(0.25f, 3.0f));
      hy[i] = H(rng.uniform<float>(-2.0f, 2.0f));
      hz[i] = H(rng.uniform<float>(-2.0f, 2.0f));
    }
    if (n > 8) hy[3] = std::numeric_limits<H>::quiet_NaN();  // NaN results are canonical both ways
    const auto xa = Array<H>::from(hx, dev), ya = Array<H>::from(hy, dev), za = Array<H>::from(hz, dev);
    const auto x = porta::lazy(xa), y = porta::lazy(ya), z = porta::lazy(za);
    const H half(0.5f), two(2.0f), s(-1.75f);
    // every op rounds to the 16-bit format before the next one reads it, fused or not
    const Array<H> unary_f = porta::sigmoid(porta::tanh(porta::cos(
        porta::sin(porta::log(porta::exp(porta::sqrt(porta::abs(-porta::relu(porta::square(y - half) - half)))))))));
    const Array<H> unary_e = porta::sigmoid(porta::tanh(porta::cos(
        porta::sin(porta::log(porta::exp(porta::sqrt(porta::abs(-porta::relu(porta::square(ya - half) - half)))))))));
    CHECK(bits_of(unary_f) == bits_of(unary_e));
    const Array<H> binary_f = porta::pow(x, y) - porta::minimum(y, z) / (two + x * y) + porta::maximum(x, z) * z;
    const Array<H> binary_e =
        porta::pow(xa, ya) - porta::minimum(ya, za) / (two + xa * ya) + porta::maximum(xa, za) * za;
    CHECK(bits_of(binary_f) == bits_of(binary_e));
    // sums of scaled arrays (the CPU's compiled loops) and a float scalar, rounded to H once
    const Array<H> triad_f = x + s * y - z * two, triad_e = xa + s * ya - za * two;
    CHECK(bits_of(triad_f) == bits_of(triad_e));
    const Array<H> scaled_f = x * 0.1f + y, scaled_e = xa * 0.1f + ya;
    CHECK(bits_of(scaled_f) == bits_of(scaled_e));
    // a fused reduction: the expression's values, then the float-accumulated sum
    CHECK(porta::sum(x * z + H(1.0f)).bits == porta::sum(Array<H>(xa * za + H(1.0f))).bits);
  }
}

TEMPLATE_TEST_CASE("16-bit random numbers are the float draw rounded once", "[half][random]", float16, bfloat16) {
  using H = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  const std::uint64_t seed = 0x5eed1234u + static_cast<std::uint64_t>(sizeof(H));
  const std::int64_t n = (1 << 16) + 7;
  const porta::random::Counter at{3, 17};
  const auto u = porta::random::uniform<H>(Shape{n}, seed, dev, at).to_vector();
  const auto uf = porta::random::uniform<float>(Shape{n}, seed, dev, at).to_vector();
  const auto z = porta::random::normal<H>(Shape{n}, seed, dev, at).to_vector();
  const auto zf = porta::random::normal<float>(Shape{n}, seed, dev, at).to_vector();
  const std::uint16_t below_one = static_cast<std::uint16_t>(nearest<H>(1.0L) - 1u);
  std::int64_t bad = 0, top = 0;
  LD mean = 0, var = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint16_t want_u = std::min<std::uint16_t>(nearest<H>(uf[i]), below_one);
    if (u[i].bits != want_u || z[i].bits != nearest<H>(zf[i])) ++bad;
    const LD v = value_of<H>(u[i].bits);
    if (!(v >= 0 && v < 1)) ++bad;
    top += u[i].bits == below_one;
    mean += value_of<H>(z[i].bits);
    var += value_of<H>(z[i].bits) * value_of<H>(z[i].bits);
  }
  CHECK(bad == 0);
  CHECK(top > 0);  // the values that round to 1 are there, clamped
  CHECK(std::fabs(mean / n) < 0.03L);
  CHECK(std::fabs(var / n - 1) < 0.03L);
  CHECK(porta::random::blocks_for<H>(n) == porta::random::blocks_for<float>(n));
}

TEMPLATE_TEST_CASE("16-bit matmul and gemm accumulate in float", "[half][matmul]", float16, bfloat16) {
  using H = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (const auto& mnk :
       std::vector<std::array<std::int64_t, 3>>{{1, 1, 1}, {37, 1, 53}, {1, 29, 40}, {70, 45, 130}, {520, 521, 6}}) {
    const std::int64_t m = mnk[0], n = mnk[1], k = mnk[2];
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      INFO("m " << m << " n " << n << " k " << k << " ta " << ta << " tb " << tb << " on " << dev.to_string());
      const auto ha = moderate_values<H>(rng, m * k), hb = moderate_values<H>(rng, k * n),
                 hc = moderate_values<H>(rng, m * n);
      const auto a = Array<H>::from(ha, ta ? Shape{k, m} : Shape{m, k}, dev);
      const auto b = Array<H>::from(hb, tb ? Shape{n, k} : Shape{k, n}, dev);
      const H alpha(0.75f), beta(-1.5f);
      for (const auto algo : {porta::GemmAlgorithm::vendor, porta::GemmAlgorithm::own}) {
        porta::MatmulOptions opts;
        opts.algorithm = algo;
        auto c = Array<H>::from(hc, Shape{m, n}, dev);
        porta::gemm(alpha, a, ta, b, tb, beta, c, opts);
        const auto got = c.to_vector();
        // against long double: float accumulation's bound plus one rounding to H
        std::int64_t bad = 0;
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t j = 0; j < n; ++j) {
            LD s = 0, mag = 0;
            for (std::int64_t p = 0; p < k; ++p) {
              const LD x = value_of<H>(ha[ta ? p * m + i : i * k + p].bits);
              const LD y = value_of<H>(hb[tb ? j * k + p : p * n + j].bits);
              s += x * y;
              mag += std::fabs(x * y);
            }
            const LD cv = value_of<H>(hc[i * n + j].bits);
            const LD want = LD(float(alpha)) * s + LD(float(beta)) * cv;
            const LD bound = static_cast<float>(std::numeric_limits<H>::epsilon()) * std::fabs(want) +
                             (k + 4) * LD(std::numeric_limits<float>::epsilon()) * (mag + std::fabs(cv) * 2);
            if (!(std::fabs(value_of<H>(got[i * n + j].bits) - want) <= bound)) ++bad;
          }
        CHECK(bad == 0);
        if (algo == porta::GemmAlgorithm::own) {
          // porta's kernel: the float kernel of the widened operands, rounded once: the same bits on
          // every device
          auto cf = porta::cast<float>(Array<H>::from(hc, Shape{m, n}, dev));
          porta::gemm(float(alpha), porta::cast<float>(a), ta, porta::cast<float>(b), tb, float(beta), cf, opts);
          CHECK(bits_of(c) == bits_of(porta::cast<H>(cf)));
        }
      }
    }
  }
  // matmul of a strided view, and a poisoned output of beta = 0 never read
  const auto hx = moderate_values<H>(rng, 40 * 60);
  const auto x = Array<H>::from(hx, Shape{40, 60}, dev);
  const auto v = x.col(3);  // 40 elements, stride 60
  const auto y = porta::matmul(porta::transpose(x), v).to_vector();
  REQUIRE(y.size() == 60);
  std::int64_t bad = 0;
  for (std::int64_t j = 0; j < 60; ++j) {
    LD s = 0, mag = 0;
    for (std::int64_t i = 0; i < 40; ++i) {
      const LD p = value_of<H>(hx[i * 60 + j].bits) * value_of<H>(hx[i * 60 + 3].bits);
      s += p;
      mag += std::fabs(p);
    }
    const LD bound = static_cast<float>(std::numeric_limits<H>::epsilon()) * std::fabs(s) +
                     44 * LD(std::numeric_limits<float>::epsilon()) * mag;
    if (!(std::fabs(value_of<H>(y[j].bits) - s) <= bound)) ++bad;
  }
  CHECK(bad == 0);
}
