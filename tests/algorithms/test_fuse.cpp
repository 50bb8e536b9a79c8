// SPDX-License-Identifier: Apache-2.0
// Fused expressions (porta/fuse.hpp): one pass through map_program must give the eager chain's bits
// for every op and dtype on every device, and bad expressions typed errors.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "porta/fuse.hpp"
#include "porta/rtc.hpp"
#include "support/cpu_cache.hpp"
#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::Expr;
using porta::Shape;

#define PORTA_TEST_TYPES float, double, std::int32_t, std::int64_t

namespace {

template <class T>
void require_same_bits(const std::vector<T>& got, const std::vector<T>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    // NaNs too: every NaN result, fused or eager, is the canonical quiet NaN (docs/determinism.md).
    if (porta_test::same_bits(got[i], want[i])) continue;
    FAIL("element " << i << ": fused " << porta_test::show(got[i]) << ", eager " << porta_test::show(want[i]));
  }
}

// Inputs that suit every op: positive for sqrt/log/pow bases, small for exp and integer pow.
template <class T>
std::vector<T> moderate(porta_test::Rng& rng, std::int64_t n) {
  if constexpr (std::is_floating_point_v<T>) {
    return porta_test::uniform<T>(rng, n, T(0.25), T(3));
  } else {
    return porta_test::uniform<T>(rng, n, T(-9), T(9));
  }
}

// PORTA_FUSE set for a scope (fuse_jit.cpp reads it at every evaluation), the old value restored.
class FuseMode {
 public:
  explicit FuseMode(const char* mode) {
    const char* old = std::getenv("PORTA_FUSE");
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv("PORTA_FUSE", mode, 1);
  }
  ~FuseMode() {
    if (had_) {
      setenv("PORTA_FUSE", old_.c_str(), 1);
    } else {
      unsetenv("PORTA_FUSE");
    }
  }
  FuseMode(const FuseMode&) = delete;
  FuseMode& operator=(const FuseMode&) = delete;

 private:
  bool had_ = false;
  std::string old_;
};

std::uint64_t rtc_kernel_uses() {
  const porta::rtc::Stats s = porta::rtc::stats();
  return s.compiles + s.disk_hits + s.memory_hits;
}

}  // namespace

TEMPLATE_TEST_CASE("fused: generated kernels and the interpreter both give the eager bits", "[fuse][map][rtc]", float,
                   double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::string why = porta::rtc::unavailable_reason(dev);
  for (std::int64_t n : {1, 7, 8, 9, 1000, 100003}) {
    INFO("n = " << n << " on " << dev.to_string());
    // One slot more, so that the slices [1, n + 1) are not 16-byte aligned: the element path.
    const Array<T> xs = Array<T>::from(porta_test::uniform<T>(rng, n + 1, T(0.25), T(3)), dev);
    const Array<T> ys = Array<T>::from(porta_test::uniform<T>(rng, n + 1, T(-2), T(2)), dev);
    const Array<T> zs = Array<T>::from(porta_test::uniform<T>(rng, n + 1, T(-2), T(2)), dev);
    for (const bool aligned : {true, false}) {
      INFO((aligned ? "aligned" : "offset by one element"));
      const std::int64_t b = aligned ? 0 : 1;
      const Array<T> xa = xs.slice({{b, b + n}}), ya = ys.slice({{b, b + n}}), za = zs.slice({{b, b + n}});
      const auto x = porta::lazy(xa), y = porta::lazy(ya), z = porta::lazy(za);
      const T half = T(0.5), two = T(2);
      // Every unary op (values kept where each is defined) and every binary op, with scalars on
      // either side and operands in both stack orders (BINARY and BINARY_REV).
      const auto unary_e = porta::sigmoid(porta::tanh(porta::cos(
          porta::sin(porta::log(porta::exp(porta::sqrt(porta::abs(-porta::relu(porta::square(y - half) - half)))))))));
      const Array<T> unary_w = porta::sigmoid(porta::tanh(porta::cos(
          porta::sin(porta::log(porta::exp(porta::sqrt(porta::abs(-porta::relu(porta::square(ya - half) - half)))))))));
      const auto binary_e = porta::pow(x, y) - porta::minimum(y, z) / (two + x * y) +
                            porta::maximum(half, z) * (z - porta::minimum(x * half, y + z));
      const Array<T> binary_w =
          porta::pow(xa, ya) - porta::minimum(ya, za) / (two + xa * ya) +
          porta::maximum(Array<T>(porta::full<T>(Shape{n}, half, dev)), za) * (za - porta::minimum(xa * half, ya + za));
      const auto grad_e = Expr<T>::binary(PORTA_BINARY_RELU_GRAD, x * y, z - half) + T(1);
      const Array<T> grad_w = porta::relu_grad(xa * ya, za - half) + T(1);
      for (const char* mode : {"jit", "interpret"}) {
        INFO("PORTA_FUSE=" << mode);
        if (std::string(mode) == "jit" && !why.empty()) {
          WARN("no run-time compiler for " << dev.to_string() << ": " << why);
          continue;
        }
        const FuseMode m(mode);
        const std::uint64_t before = rtc_kernel_uses();
        Array<T> out = porta_test::poisoned<T>(Shape{n}, dev);
        out.assign(unary_e);
        require_same_bits(out.to_vector(), unary_w.to_vector());
        require_same_bits(Array<T>(binary_e).to_vector(), binary_w.to_vector());
        require_same_bits(Array<T>(grad_e).to_vector(), grad_w.to_vector());
        // The path asked for is the path taken: three run-time kernels, or none. The unary chain
        // (exp, sin, ...) and the binary one (pow) are generated on every device: run-time kernels
        // compile porta's own math, so they have the eager bits (checked above).
        CHECK(rtc_kernel_uses() - before == (std::string(mode) == "jit" ? 3u : 0u));
      }
    }
  }
}

TEST_CASE("fused: PORTA_FUSE takes auto, jit or interpret", "[fuse][errors]") {
  const Device dev = PORTA_TEST_DEVICE();
  const auto a = porta::full<float>(Shape{4}, 1.0f, dev);
  const FuseMode m("fast");
  REQUIRE_THROWS_WITH(Array<float>(porta::lazy(a) * 2.0f),
                      porta_test::Contains("PORTA_FUSE=fast: expected auto, jit or interpret"));
}

TEMPLATE_TEST_CASE("fused: every unary op gives the eager op's bits", "[fuse][map]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : {1, 7, 1000, 100003}) {
    INFO("n = " << n << " on " << dev.to_string());
    const Array<T> xa = Array<T>::from(moderate<T>(rng, n), dev);
    const auto x = porta::lazy(xa);
    const auto check = [&](const char* name, Array<T> fused, const Array<T>& eager) {
      INFO("op " << name);
      require_same_bits(fused.to_vector(), eager.to_vector());
    };
    // Each op after a binary one, so that the value it reads came out of the interpreter's stack.
    const Array<T> base = xa + xa;
    check("neg", -(x + x), -base);
    check("abs", porta::abs(x - x * T(2)), porta::abs(xa - xa * T(2)));
    check("sqrt", porta::sqrt(x + x), porta::sqrt(base));
    check("exp", porta::exp(x + x), porta::exp(base));
    check("log", porta::log(x + x), porta::log(base));
    check("sin", porta::sin(x + x), porta::sin(base));
    check("cos", porta::cos(x + x), porta::cos(base));
    check("tanh", porta::tanh(x + x), porta::tanh(base));
    check("relu", porta::relu(x - T(1)), porta::relu(xa - T(1)));
    check("sigmoid", porta::sigmoid(x + x), porta::sigmoid(base));
    check("square", porta::square(x + x), porta::square(base));
    check("neg()", porta::neg(x), porta::neg(xa));
  }
}

TEMPLATE_TEST_CASE("fused: every binary op, with arrays and scalars on either side", "[fuse][map]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : {1, 5, 1000, 100003}) {
    INFO("n = " << n << " on " << dev.to_string());
    const Array<T> aa = Array<T>::from(moderate<T>(rng, n), dev);
    const Array<T> ba = Array<T>::from(moderate<T>(rng, n), dev);
    const auto a = porta::lazy(aa), b = porta::lazy(ba);
    const auto check = [&](const char* name, Array<T> fused, const Array<T>& eager) {
      INFO("op " << name);
      require_same_bits(fused.to_vector(), eager.to_vector());
    };
    check("a + b", a + b, aa + ba);
    check("a - b", a - b, aa - ba);
    check("a * b", a * b, aa * ba);
    check("a / b", a / b, aa / ba);  // integer division by zero is 0 on both paths
    check("minimum", porta::minimum(a, b), porta::minimum(aa, ba));
    check("maximum", porta::maximum(a, b), porta::maximum(aa, ba));
    check("pow", porta::pow(a, T(3)), porta::pow(aa, T(3)));
    check("pow arrays", porta::pow(a, porta::abs(b)), porta::pow(aa, porta::abs(ba)));
    // An Array operand on either side, a scalar on either side.
    check("expr + array", a * b + aa, aa * ba + aa);
    check("array - expr", ba - a * b, ba - aa * ba);
    check("3 - expr", 3 - a, 3 - aa);
    check("expr / 2", a / 2, aa / 2);
    check("minimum(array, expr)", porta::minimum(ba, a + 1), porta::minimum(ba, aa + 1));
    // A temporary Array operand: owned by the expression.
    check("expr * temporary", a * porta::abs(ba), aa * porta::abs(ba));
    check("lazy(temporary)", porta::lazy(aa + ba) * 2, (aa + ba) * 2);
  }
}

TEMPLATE_TEST_CASE("fused: scalars of other types convert as the eager operators do", "[fuse][map]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const Array<T> xa = Array<T>::from(moderate<T>(rng, 1001), dev);
  const auto x = porta::lazy(xa);
  require_same_bits(Array<T>(x * 2 + 1).to_vector(), (xa * 2 + 1).to_vector());
  require_same_bits(Array<T>(x * 3L - short(2)).to_vector(), (xa * 3L - short(2)).to_vector());
  if constexpr (std::is_floating_point_v<T>) {
    // A double scalar with float arrays is rounded to float first, as x * 0.1 does eagerly.
    require_same_bits(Array<T>(x * 0.1 + 0.3f).to_vector(), (xa * 0.1 + 0.3f).to_vector());
  } else {
    // An integer that the dtype cannot hold: the eager operators' InvalidArgument.
    REQUIRE_THROWS_AS(x + (static_cast<unsigned long long>(std::numeric_limits<T>::max()) * 2 + 1),
                      porta::InvalidArgument);
  }
}

// Sums of two or three scaled arrays run on the CPU as one loop per shape (an input alone as 1 * x),
// everything else through the interpreter (backends/cpu/cpu_program.cpp). Every shape, both tree
// orientations, scalars on either side of their product, in place and not, IEEE special values, and
// sizes either side of the CPU's whole team (2^16) and of streaming stores (past the last-level
// cache).
TEMPLATE_TEST_CASE("fused: sums of scaled arrays give the eager bits", "[fuse][map][sizes]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t llc = porta_test::cpu_cache_bytes();
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{1000}, std::int64_t{65535}, std::int64_t{65536},
                         std::min<std::int64_t>(llc / sizeof(T) / 2, 1 << 24) + 7}) {
    INFO("n = " << n << " on " << dev.to_string());
    std::vector<T> ha = moderate<T>(rng, n), hb = moderate<T>(rng, n), hc = moderate<T>(rng, n);
    if constexpr (std::is_floating_point_v<T>) {
      const T sp[] = {std::numeric_limits<T>::quiet_NaN(),
                      std::numeric_limits<T>::infinity(),
                      -std::numeric_limits<T>::infinity(),
                      T(-0.0),
                      T(0),
                      std::numeric_limits<T>::denorm_min()};
      for (std::size_t i = 0; i < ha.size(); i += 101) ha[i] = sp[(i / 101) % 6], hc[i / 2] = sp[(i / 7) % 6];
    }
    const Array<T> aa = Array<T>::from(ha, dev), ba = Array<T>::from(hb, dev), ca = Array<T>::from(hc, dev);
    const auto a = porta::lazy(aa), b = porta::lazy(ba), c = porta::lazy(ca);
    const T s = T(3), t = std::is_floating_point_v<T> ? T(-0.375) : T(-5);
    const auto check = [&](const char* name, const Expr<T>& e, const Array<T>& eager) {
      INFO("expression " << name);
      porta_test::poison_pool<T>(n, dev);
      require_same_bits(Array<T>(e).to_vector(), eager.to_vector());
    };
    check("b + s * c (triad)", b + s * c, ba + s * ca);
    check("a + (b + s * c) (nstream)", a + (b + s * c), aa + (ba + s * ca));
    check("s * (a + b), not a sum of scaled arrays: the interpreter", s * (a + b), s * (aa + ba));
    if (n <= 65536) {  // past the cache, the shapes above are enough for the streaming stores
      check("a + b", a + b, aa + ba);
      check("a - b", a - b, aa - ba);
      check("s * a + b", s * a + b, s * aa + ba);
      check("a * s - b", a * s - b, aa * s - ba);
      check("b - s * c", b - s * c, ba - s * ca);
      check("s * a + t * b", s * a + t * b, s * aa + t * ba);
      check("a * s - b * t", a * s - b * t, aa * s - ba * t);
      check("(a + b) + s * c", (a + b) + s * c, (aa + ba) + s * ca);
      check("(a - b) - c * t", (a - b) - c * t, (aa - ba) - ca * t);
      check("s * c - (a - b)", s * c - (a - b), s * ca - (aa - ba));
      check("c - (s * a + t * b)", c - (s * a + t * b), ca - (s * aa + t * ba));
      check("(s * a - b) + t * c", (s * a - b) + t * c, (s * aa - ba) + t * ca);
      check("a + (a - s * a), one array three times", a + (a - s * a), aa + (aa - s * aa));
      // Not sums of scaled arrays: the interpreter.
      check("a * b + c", a * b + c, aa * ba + ca);
      check("s * a + t", s * a + t, s * aa + t);
    }
    // Into an input (nstream in place) and into an output that starts one element past a 64-byte line.
    Array<T> x = aa.clone();
    const auto lx = porta::lazy(x);
    x.assign(lx + (b + s * c));
    require_same_bits(x.to_vector(), (aa + (ba + s * ca)).to_vector());
    auto wide = porta_test::poisoned<T>(Shape{n + 1}, dev);
    auto out = wide.slice({{1, n + 1}});
    porta::evaluate(b + s * c, out);
    require_same_bits(out.to_vector(), (ba + s * ca).to_vector());
    REQUIRE(porta_test::is_poison(wide.item(0)));
    porta::evaluate(s * (a + b), out);
    require_same_bits(out.to_vector(), (s * (aa + ba)).to_vector());
  }
}

// The chain sin(x) * cos(y) + x * y of the fused benchmarks, and a Black-Scholes pricer.
TEST_CASE("fused: the sin-cos chain and Black-Scholes give the eager bits", "[fuse][map]") {
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t n = 1 << 18;
  {
    const auto xa = Array<float>::from(porta_test::uniform<float>(rng, n, -4.0f, 4.0f), dev);
    const auto ya = Array<float>::from(porta_test::uniform<float>(rng, n, -4.0f, 4.0f), dev);
    const auto x = porta::lazy(xa), y = porta::lazy(ya);
    porta_test::poison_pool<float>(n, dev);
    const Array<float> fused = porta::sin(x) * porta::cos(y) + x * y;
    const Array<float> eager = porta::sin(xa) * porta::cos(ya) + xa * ya;
    require_same_bits(fused.to_vector(), eager.to_vector());
    // Against a double reference: each op rounds once to float, so a few ulps of the magnitudes.
    const auto hx = xa.to_vector(), hy = ya.to_vector(), hf = fused.to_vector();
    for (std::size_t i = 0; i < hf.size(); i += 997) {
      const double r = std::sin(double(hx[i])) * std::cos(double(hy[i])) + double(hx[i]) * double(hy[i]);
      REQUIRE(std::fabs(double(hf[i]) - r) <= 1e-5 * (1.0 + std::fabs(double(hx[i]) * double(hy[i]))));
    }
    // The reduction of the expression: porta::sum of the eager array, bit for bit.
    REQUIRE(porta_test::same_bits(porta::sum(porta::sin(x) * porta::cos(y) + x * y), porta::sum(eager)));
  }
  {
    // Black-Scholes call price, with the normal CDF as 0.5 * (1 + tanh(0.7978845608 * (d + 0.044715 d^3))).
    const auto sa = Array<double>::from(porta_test::uniform<double>(rng, n, 10.0, 100.0), dev);
    const auto ka = Array<double>::from(porta_test::uniform<double>(rng, n, 10.0, 100.0), dev);
    const auto ta = Array<double>::from(porta_test::uniform<double>(rng, n, 0.25, 2.0), dev);
    const double r = 0.02, v = 0.3;
    const auto S = porta::lazy(sa), K = porta::lazy(ka), Tm = porta::lazy(ta);
    // d1 is read four times by the two CDFs: one pass into an array, then the price in one pass.
    const Array<double> d1a = (porta::log(S / K) + (r + 0.5 * v * v) * Tm) / (v * porta::sqrt(Tm));
    const auto d1 = porta::lazy(d1a);
    const auto d2 = d1 - v * porta::sqrt(Tm);
    const auto cdf = [](const Expr<double>& d) {
      return 0.5 * (1.0 + porta::tanh(0.7978845608 * (d + 0.044715 * d * d * d)));
    };
    const Array<double> fused = S * cdf(d1) - K * porta::exp(-r * Tm) * cdf(d2);
    const auto ed1 = (porta::log(sa / ka) + (r + 0.5 * v * v) * ta) / (v * porta::sqrt(ta));
    const auto ed2 = ed1 - v * porta::sqrt(ta);
    const auto ecdf = [](const Array<double>& d) {
      return 0.5 * (1.0 + porta::tanh(0.7978845608 * (d + 0.044715 * d * d * d)));
    };
    const Array<double> eager = sa * ecdf(ed1) - ka * porta::exp(-r * ta) * ecdf(ed2);
    require_same_bits(fused.to_vector(), eager.to_vector());
  }
}

TEMPLATE_TEST_CASE("fused: assignment, evaluate, eval and in place", "[fuse][map]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t n = 4099;
  Array<T> xa = Array<T>::from(moderate<T>(rng, n), dev);
  const Array<T> ya = Array<T>::from(moderate<T>(rng, n), dev);
  const auto want = (xa * ya + xa).to_vector();
  const auto x = porta::lazy(xa), y = porta::lazy(ya);
  auto out = porta_test::poisoned<T>(Shape{n}, dev);
  out.assign(x * y + x);
  require_same_bits(out.to_vector(), want);
  auto out2 = porta_test::poisoned<T>(Shape{n}, dev);
  porta::evaluate(x * y + x, out2);
  require_same_bits(out2.to_vector(), want);
  require_same_bits((x * y + x).eval().to_vector(), want);
  // Into a leaf itself (elementwise in place): xa = xa * ya + xa.
  xa.assign(x * y + x);
  require_same_bits(xa.to_vector(), want);
  // Expressions read their arrays when evaluated, not when built.
  const auto later = x * 2;
  porta::fill(xa, T(1));
  require_same_bits(Array<T>(later).to_vector(), std::vector<T>(static_cast<std::size_t>(n), T(2)));
}

TEMPLATE_TEST_CASE("fused: strided views as leaves and as the output", "[fuse][map][views]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const Array<T> m = Array<T>::from(moderate<T>(rng, 37 * 41), Shape{37, 41}, dev);
  const Array<T> w = Array<T>::from(moderate<T>(rng, 37), dev);
  // A column (stride 41) as a leaf: compacted first, same bits.
  const Array<T> col = m.col(3);
  const auto e = porta::lazy(col) * porta::lazy(w) - T(1);
  require_same_bits(Array<T>(e).to_vector(), (col * w - T(1)).to_vector());
  // Into a column of another matrix: the rest untouched.
  Array<T> target = porta_test::poisoned<T>(Shape{37, 41}, dev);
  porta::evaluate(e, target.col(5));
  require_same_bits(target.col(5).contiguous().to_vector(), (col * w - T(1)).to_vector());
  const auto h = target.to_vector();
  REQUIRE(porta_test::is_poison(h[4]));
  // A 2-D expression keeps its shape.
  const auto mm = porta::lazy(m);
  const Array<T> sq = mm * mm;
  REQUIRE(sq.shape() == m.shape());
  require_same_bits(sq.to_vector(), (m * m).to_vector());
}

TEMPLATE_TEST_CASE("fused: empty arrays and one element", "[fuse][map]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  const Array<T> e = porta::empty<T>(Shape{0}, dev);
  const Array<T> r = porta::lazy(e) * 2 + porta::lazy(e);
  REQUIRE(r.size() == 0);
  REQUIRE(r.device() == dev);
  REQUIRE(porta::sum(porta::lazy(e) + 1) == T(0));
  const Array<T> one = porta::full<T>(Shape{1}, T(3), dev);
  REQUIRE(Array<T>(porta::lazy(one) * porta::lazy(one) - 1).to_vector() == std::vector<T>{T(8)});
}

TEST_CASE("fused: NaN and signed zero pass through as in the eager ops", "[fuse][map]") {
  const Device dev = PORTA_TEST_DEVICE();
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const auto xa = Array<float>::from(std::vector<float>{-0.0f, 0.0f, nan, inf, -inf, 1.0f, -1.0f}, dev);
  const auto ya = Array<float>::from(std::vector<float>{0.0f, -0.0f, 1.0f, nan, 2.0f, -0.0f, inf}, dev);
  const auto x = porta::lazy(xa), y = porta::lazy(ya);
  require_same_bits(Array<float>(porta::maximum(x, y) * -1.0f).to_vector(),
                    (porta::maximum(xa, ya) * -1.0f).to_vector());
  require_same_bits(Array<float>(porta::minimum(x, y) + x / y).to_vector(),
                    (porta::minimum(xa, ya) + xa / ya).to_vector());
  require_same_bits(Array<float>(porta::relu(x) - y).to_vector(), (porta::relu(xa) - ya).to_vector());
}

TEST_CASE("fused: bad expressions are typed errors naming the inputs", "[fuse][map][errors]") {
  const Device dev = PORTA_TEST_DEVICE();
  const auto a = porta::full<float>(Shape{4}, 1.0f, dev);
  const auto b = porta::full<float>(Shape{5}, 1.0f, dev);
  // Shapes differ: no broadcasting, and the message says so.
  REQUIRE_THROWS_WITH(
      Array<float>(porta::lazy(a) + porta::lazy(b)),
      porta_test::Contains("shapes differ (input 0 is 4, input 1 is 5)") && porta_test::Contains("does not broadcast"));
  // Too long a program: 65 ops.
  auto e = porta::lazy(a);
  for (int i = 0; i < 32; ++i) e = e + 1.0f;
  REQUIRE(e.ops().size() == 65);
  REQUIRE_THROWS_WITH(e.eval(),
                      porta_test::Contains("porta::Expr::eval") && porta_test::Contains("65 ops; at most 64"));
  // Too many arrays: 9 distinct leaves.
  std::vector<Array<float>> many;
  for (int i = 0; i < 9; ++i) many.push_back(porta::full<float>(Shape{4}, float(i), dev));
  auto m = porta::lazy(many[0]);
  for (int i = 1; i < 9; ++i) m = m + many[static_cast<std::size_t>(i)];
  REQUIRE_THROWS_WITH(m.eval(), porta_test::Contains("reads 9 arrays; at most 8"));
  // The same array twice is one input.
  auto twice = porta::lazy(a);
  for (int i = 0; i < 9; ++i) twice = twice + a;
  REQUIRE(Array<float>(twice).to_vector() == std::vector<float>(4, 10.0f));
  // Chains leaning either way: the deeper operand is evaluated first (BINARY_REV for a right-leaning
  // one), so neither keeps more than two values pending.
  auto left = porta::lazy(a);
  for (int i = 0; i < 20; ++i) left = left - a;
  REQUIRE(Expr<float>::depth(left.ops()) == 2);
  REQUIRE(Array<float>(left).to_vector() == std::vector<float>(4, -19.0f));
  auto right = porta::lazy(a) * 3.0f;
  for (int i = 0; i < 20; ++i) right = 2.0f - right;  // 3, -1, 3, -1, ...
  REQUIRE(Expr<float>::depth(right.ops()) == 2);
  REQUIRE(Array<float>(right).to_vector() == std::vector<float>(4, 3.0f));
  // A moved-from array in an expression.
  auto c = porta::full<float>(Shape{4}, 1.0f, dev);
  const auto ec = porta::lazy(a) + porta::lazy(c);
  Array<float> moved = std::move(c);
  REQUIRE_THROWS_AS(ec.eval(), porta::InvalidArgument);
  REQUIRE_THROWS_WITH(ec.eval(), porta_test::Contains("input 1 was moved from"));
  // The output's shape.
  auto out = porta::full<float>(Shape{5}, 0.0f, dev);
  REQUIRE_THROWS_WITH(porta::evaluate(porta::lazy(a) * 2.0f, out),
                      porta_test::Contains("porta::evaluate") && porta_test::Contains("out is 5, expected 4"));
  // Arrays on two devices.
  if (auto other = porta_test::other_device(dev)) {
    const auto d = porta::full<float>(Shape{4}, 1.0f, *other);
    REQUIRE_THROWS_AS(Array<float>(porta::lazy(a) + porta::lazy(d)), porta::DeviceMismatch);
  }
}

TEMPLATE_TEST_CASE("fused: every NaN result is the canonical NaN, as in the eager chain", "[fuse][map][nan]", float,
                   double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  // NaNs of every kind (porta_test::nan_patterns), and numbers whose sums, products and quotients
  // are NaNs (inf - inf, 0 * inf, 0 / 0).
  const T inf = std::numeric_limits<T>::infinity();
  std::vector<T> one = porta_test::nan_patterns<T>();
  for (T v : {T(0), T(-0.0), T(1), T(-2), inf, -inf}) one.push_back(v);
  std::vector<T> hx, hy;
  for (int r = 0; r < 7; ++r)
    for (std::size_t i = 0; i < one.size(); ++i) {
      hx.push_back(one[i]);
      hy.push_back(one[(i * 5 + static_cast<std::size_t>(r)) % one.size()]);
    }
  const auto n = static_cast<std::int64_t>(hx.size());
  const Array<T> xa = Array<T>::from(hx, dev), ya = Array<T>::from(hy, dev);
  const auto x = porta::lazy(xa), y = porta::lazy(ya);
  const T q = std::numeric_limits<T>::quiet_NaN();
  const auto all_canonical = [&](const std::vector<T>& v) {
    for (std::size_t i = 0; i < v.size(); ++i)
      if (std::isnan(v[i]) && !porta_test::same_bits(v[i], q))
        FAIL_CHECK("element " << i << " is " << porta_test::show(v[i]) << ", not the canonical NaN");
  };
  const std::string why = porta::rtc::unavailable_reason(dev);
  for (const char* mode : {"jit", "interpret"}) {
    INFO("PORTA_FUSE=" << mode << " on " << dev.to_string());
    if (std::string(mode) == "jit" && !why.empty()) continue;
    const FuseMode m(mode);
    struct Case {
      const char* name;
      Array<T> fused, eager;
    };
    const Case cases[] = {
        {"x + (-x)", Array<T>(x + (-x)), porta::add(xa, porta::neg(xa))},
        {"x * (-x)", Array<T>(x * (-x)), porta::mul(xa, porta::neg(xa))},
        {"-x", Array<T>(-x + T(0)), porta::add(porta::neg(xa), T(0))},
        {"abs(x) - y", Array<T>(porta::abs(x) - y), porta::sub(porta::abs(xa), ya)},
        {"relu(x) * y / x", Array<T>(porta::relu(x) * y / x), porta::div(porta::mul(porta::relu(xa), ya), xa)},
        {"max(x, y) - min(y, x)", Array<T>(porta::maximum(x, y) - porta::minimum(y, x)),
         porta::sub(porta::maximum(xa, ya), porta::minimum(ya, xa))},
        {"sqrt(x * y) + square(-y)", Array<T>(porta::sqrt(x * y) + porta::square(-y)),
         porta::add(porta::sqrt(porta::mul(xa, ya)), porta::square(porta::neg(ya)))},
        {"exp(x) - log(y)", Array<T>(porta::exp(x) - porta::log(y)), porta::sub(porta::exp(xa), porta::log(ya))},
        {"pow(x, y) + 1", Array<T>(porta::pow(x, y) + T(1)), porta::add(porta::pow(xa, ya), T(1))},
    };
    for (const Case& c : cases) {
      INFO(c.name);
      REQUIRE(c.fused.size() == n);
      const auto got = c.fused.to_vector();
      all_canonical(got);
      all_canonical(c.eager.to_vector());
      require_same_bits(got, c.eager.to_vector());
    }
  }
}
