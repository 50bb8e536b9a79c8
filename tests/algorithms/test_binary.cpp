// SPDX-License-Identifier: Apache-2.0
// Binary maps: every op and dtype on every device; array-array, scalar on either side,
// broadcasting over rows and columns, outputs aliasing an input; integer wrap and division by zero.
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

template <class T>
constexpr bool is_fp = std::is_floating_point_v<T>;

template <class T>
T div_ref(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return T(0);
    if (b == T(-1)) return porta_test::ref::sub(T(0), a);
    return static_cast<T>(a / b);
  } else {
    return a / b;
  }
}
template <class T>
long double pow_ref(T a, T b) {
  if constexpr (is_fp<T>) {
    return std::pow(static_cast<long double>(a), static_cast<long double>(b));
  } else {
    // Integer pow is exact and wraps (two's complement), like integer * : repeated 64-bit
    // multiplication modulo 2^64, truncated to T, is the same residue.
    if (b < 0) return a == T(1) ? 1.0L : (a == T(-1) ? ((b % 2) ? -1.0L : 1.0L) : 0.0L);
    std::uint64_t r = 1;
    for (T e = 0; e < b; ++e) r *= static_cast<std::uint64_t>(static_cast<std::int64_t>(a));
    return static_cast<long double>(static_cast<T>(static_cast<std::make_unsigned_t<T>>(r)));
  }
}

template <class T>
struct BinaryCase {
  const char* name;
  std::function<Array<T>(const Array<T>&, const Array<T>&)> aa;
  std::function<void(const Array<T>&, const Array<T>&, Array<T>&)> aa_into;
  std::function<Array<T>(const Array<T>&, T)> as;
  std::function<void(const Array<T>&, T, Array<T>&)> as_into;
  std::function<Array<T>(T, const Array<T>&)> sa;
  std::function<void(T, const Array<T>&, Array<T>&)> sa_into;
  std::function<long double(T, T)> ref;
  bool exact;  // false: pow (transcendental)
};

template <class T>
std::vector<BinaryCase<T>> binary_cases() {
  std::vector<BinaryCase<T>> c;
#define PORTA_BINARY(nm, ref_expr, exact)                                                                  \
  c.push_back(BinaryCase<T>{#nm, [](const Array<T>& a, const Array<T>& b) { return porta::nm(a, b); },     \
                            [](const Array<T>& a, const Array<T>& b, Array<T>& o) { porta::nm(a, b, o); }, \
                            [](const Array<T>& a, T b) { return porta::nm(a, b); },                        \
                            [](const Array<T>& a, T b, Array<T>& o) { porta::nm(a, b, o); },               \
                            [](T a, const Array<T>& b) { return porta::nm(a, b); },                        \
                            [](T a, const Array<T>& b, Array<T>& o) { porta::nm(a, b, o); },               \
                            [](T a, T b) -> long double { return ref_expr; }, exact})
  PORTA_BINARY(add, static_cast<long double>(porta_test::ref::add(a, b)), true);
  PORTA_BINARY(sub, static_cast<long double>(porta_test::ref::sub(a, b)), true);
  PORTA_BINARY(mul, static_cast<long double>(porta_test::ref::mul(a, b)), true);
  PORTA_BINARY(div, static_cast<long double>(div_ref(a, b)), true);
  PORTA_BINARY(minimum, static_cast<long double>(porta_test::ref::min(a, b)), true);
  PORTA_BINARY(maximum, static_cast<long double>(porta_test::ref::max(a, b)), true);
  PORTA_BINARY(pow, pow_ref(a, b), false);
#undef PORTA_BINARY
  return c;
}

// Inputs for op `name`: a and b (b is the exponent for pow).
template <class T>
std::vector<T> inputs_a(porta_test::Rng& rng, const std::string& name, std::int64_t n) {
  if (name == "pow")
    return is_fp<T> ? porta_test::uniform<T>(rng, n, T(0.1), T(4)) : porta_test::nonzero<T>(rng, n, T(1), T(10));
  if constexpr (std::is_integral_v<T>) {
    // add, sub and mul wrap: use the whole range
    if (name == "add" || name == "sub" || name == "mul")
      return porta_test::uniform<T>(rng, n, std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max());
    if (name == "div") return porta_test::nonzero<T>(rng, n, T(1), T(100000));
  }
  return porta_test::nonzero<T>(rng, n);
}
template <class T>
std::vector<T> inputs_b(porta_test::Rng& rng, const std::string& name, std::int64_t n) {
  if (name == "pow")
    return is_fp<T> ? porta_test::nonzero<T>(rng, n, T(0.1), T(3)) : porta_test::uniform<T>(rng, n, T(-2), T(6));
  return inputs_a<T>(rng, name, n);
}
template <class T>
T scalar_for(porta_test::Rng& rng, const std::string& name, bool as_exponent) {
  if (name == "pow") return as_exponent ? (is_fp<T> ? T(1.5) : T(3)) : (is_fp<T> ? T(1.75) : T(-3));
  return porta_test::nonzero<T>(rng, 1).front();
}

template <class T>
porta_test::Result check(const BinaryCase<T>& bc, Device dev, const std::vector<T>& got,
                         const std::vector<long double>& ref) {
  if (bc.exact) {
    std::vector<T> r(ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i) r[i] = static_cast<T>(ref[i]);
    return porta_test::compare_exact(got, r);
  }
  if constexpr (is_fp<T>) {
    return porta_test::compare_ulps(got, ref, porta_test::transcendental_ulps(dev) * 2);
  } else {
    return porta_test::compare_ulps(got, ref, 0.0, dev.is_gpu() ? 1.0L : 0.0L);
  }
}

// Every pair of a value of `as` with one of `bs`: pair i is (ha[i], hb[i]).
template <class T>
struct AllPairs {
  std::vector<T> ha, hb;
  AllPairs(const std::vector<T>& as, const std::vector<T>& bs) {
    for (T a : as)
      for (T b : bs) {
        ha.push_back(a);
        hb.push_back(b);
      }
  }
  // f(ha[i], hb[i]) for every pair: a binary map's host reference.
  template <class F>
  std::vector<T> host(F f) const {
    std::vector<T> r(ha.size());
    for (std::size_t i = 0; i < ha.size(); ++i) r[i] = f(ha[i], hb[i]);
    return r;
  }
};

// Sizes either side of the CPU maps' thresholds (backends/cpu/cpu_map_common.hpp): the calling
// thread below 2^16 elements, the whole team from there; streaming stores once the arrays of a call
// exceed the last-level cache, here by 2x for two arrays and 3x for three.
template <class T>
std::vector<std::int64_t> threshold_sizes() {
  const std::int64_t llc = porta_test::cpu_cache_bytes();
  return {(1 << 16) - 1, 1 << 16, (1 << 16) + 17, std::min<std::int64_t>(llc / sizeof(T), 1 << 25) + 13};
}

// a with IEEE special values (and the largest and smallest integers) sprinkled in.
template <class T>
void sprinkle_specials(std::vector<T>& a) {
  std::vector<T> sp = {std::numeric_limits<T>::max(), std::numeric_limits<T>::lowest(), T(0)};
  if constexpr (is_fp<T>) {
    sp = {std::numeric_limits<T>::quiet_NaN(),
          std::numeric_limits<T>::infinity(),
          -std::numeric_limits<T>::infinity(),
          T(-0.0),
          T(0),
          std::numeric_limits<T>::denorm_min()};
  }
  for (std::size_t i = 0; i < a.size(); i += 997) a[i] = sp[(i / 997) % sp.size()];
}

}  // namespace

#define PORTA_TEST_TYPES float, double, std::int32_t, std::int64_t

TEMPLATE_TEST_CASE("binary maps either side of the CPU's team and streaming-store sizes", "[map][binary][sizes]",
                   PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  namespace ref = porta_test::ref;
  for (std::int64_t n : threshold_sizes<T>()) {
    INFO("n = " << n << " on " << dev.to_string());
    auto ha = inputs_a<T>(rng, "add", n), hb = inputs_b<T>(rng, "add", n);
    sprinkle_specials(ha);
    const T s = porta_test::nonzero<T>(rng, 1).front();
    const auto a = Array<T>::from(ha, dev), b = Array<T>::from(hb, dev);
    const auto map_ref = [&](auto f) {
      std::vector<T> r(ha.size());
      for (std::size_t i = 0; i < r.size(); ++i) r[i] = f(ha[i], hb[i]);
      return r;
    };
    const std::vector<T> sum = map_ref(ref::add<T>);
    porta_test::poison_pool<T>(n, dev);
    PORTA_CHECK_RESULT(porta_test::compare_exact((a + b).to_vector(), sum));
    PORTA_CHECK_RESULT(porta_test::compare_exact((a - b).to_vector(), map_ref(ref::sub<T>)));
    PORTA_CHECK_RESULT(porta_test::compare_exact((a * b).to_vector(), map_ref(ref::mul<T>)));
    PORTA_CHECK_RESULT(porta_test::compare_exact(porta::maximum(a, b).to_vector(), map_ref(ref::max<T>)));
    PORTA_CHECK_RESULT(porta_test::compare_exact((a * s).to_vector(), map_ref([s](T x, T) { return ref::mul(x, s); })));
    PORTA_CHECK_RESULT(porta_test::compare_exact((s - b).to_vector(), map_ref([s](T, T y) { return ref::sub(s, y); })));
    // Into an output that starts one element past a 64-byte line: the element-wise head before the
    // streamed lines, and a tail after them.
    auto wide = porta_test::poisoned<T>(Shape{n + 2}, dev);
    auto out = wide.slice({{1, n + 1}});
    porta::add(a, b, out);
    const auto w = wide.to_vector();
    PORTA_CHECK_RESULT(porta_test::compare_exact(std::vector<T>(w.begin() + 1, w.end() - 1), sum));
    CHECK(porta_test::is_poison(w.front()));
    CHECK(porta_test::is_poison(w.back()));
    // In place: the output is an input, stored normally.
    auto a2 = a.clone();
    porta::sub(a2, b, a2);
    PORTA_CHECK_RESULT(porta_test::compare_exact(a2.to_vector(), map_ref(ref::sub<T>)));
    auto b2 = b.clone();
    porta::mul(s, b2, b2);
    PORTA_CHECK_RESULT(porta_test::compare_exact(b2.to_vector(), map_ref([s](T, T y) { return ref::mul(s, y); })));
  }
}

TEMPLATE_TEST_CASE("binary maps: array op array", "[map][binary]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (const BinaryCase<T>& bc : binary_cases<T>()) {
    INFO("op " << bc.name << " on " << dev.to_string());
    for (std::int64_t n : {0, 1, 7, 1000, 1000003}) {
      INFO("n = " << n);
      const auto ha = inputs_a<T>(rng, bc.name, n);
      const auto hb = inputs_b<T>(rng, bc.name, n);
      std::vector<long double> ref(static_cast<std::size_t>(n));
      for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = bc.ref(ha[i], hb[i]);
      const auto a = Array<T>::from(ha, dev);
      const auto b = Array<T>::from(hb, dev);
      porta_test::poison_pool<T>(n, dev);
      const Array<T> y = bc.aa(a, b);
      CHECK(y.shape() == Shape{n});
      CHECK(y.device() == dev);
      PORTA_CHECK_RESULT(check(bc, dev, y.to_vector(), ref));
      if (n > 1000) continue;
      auto out = porta_test::poisoned<T>(Shape{n}, dev);
      bc.aa_into(a, b, out);
      PORTA_CHECK_RESULT(check(bc, dev, out.to_vector(), ref));
      // out aliasing a, then b
      auto a2 = a.clone();
      bc.aa_into(a2, b, a2);
      PORTA_CHECK_RESULT(check(bc, dev, a2.to_vector(), ref));
      auto b2 = b.clone();
      bc.aa_into(a, b2, b2);
      PORTA_CHECK_RESULT(check(bc, dev, b2.to_vector(), ref));
      // a op a with everything aliased (not integer pow: a^a overflows, and converting an
      // out-of-range double to an integer is undefined)
      if (std::is_integral_v<T> && std::string(bc.name) == "pow") continue;
      auto s = a.clone();
      bc.aa_into(s, s, s);
      std::vector<long double> ref_self(ha.size());
      for (std::size_t i = 0; i < ha.size(); ++i) ref_self[i] = bc.ref(ha[i], ha[i]);
      PORTA_CHECK_RESULT(check(bc, dev, s.to_vector(), ref_self));
      PORTA_CHECK_RESULT(porta_test::compare_exact(a.to_vector(), ha));
      PORTA_CHECK_RESULT(porta_test::compare_exact(b.to_vector(), hb));
    }
    // equal 2-D and 4-D shapes
    for (const Shape& shape : {Shape{1, 17}, Shape{17, 1}, Shape{9, 33}, Shape{2, 3, 4, 5}}) {
      INFO("shape " << shape.to_string());
      const auto ha = inputs_a<T>(rng, bc.name, shape.size());
      const auto hb = inputs_b<T>(rng, bc.name, shape.size());
      std::vector<long double> ref(ha.size());
      for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = bc.ref(ha[i], hb[i]);
      const Array<T> y = bc.aa(Array<T>::from(ha, shape, dev), Array<T>::from(hb, shape, dev));
      CHECK(y.shape() == shape);
      PORTA_CHECK_RESULT(check(bc, dev, y.to_vector(), ref));
    }
  }
}

TEMPLATE_TEST_CASE("binary maps: scalar on either side", "[map][binary][scalar]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (const BinaryCase<T>& bc : binary_cases<T>()) {
    INFO("op " << bc.name << " on " << dev.to_string());
    for (std::int64_t n : {0, 1, 7, 100003}) {
      INFO("n = " << n);
      // array op scalar: the array holds bases, the scalar an exponent for pow
      const auto ha = inputs_a<T>(rng, bc.name, n);
      const T s_right = scalar_for<T>(rng, bc.name, true);
      std::vector<long double> ref(ha.size());
      for (std::size_t i = 0; i < ha.size(); ++i) ref[i] = bc.ref(ha[i], s_right);
      const auto a = Array<T>::from(ha, dev);
      INFO("array op " << porta_test::show(s_right));
      porta_test::poison_pool<T>(n, dev);
      PORTA_CHECK_RESULT(check(bc, dev, bc.as(a, s_right).to_vector(), ref));
      // scalar op array: the array holds exponents for pow
      const auto hb = inputs_b<T>(rng, bc.name, n);
      const T s_left = scalar_for<T>(rng, bc.name, false);
      std::vector<long double> ref2(hb.size());
      for (std::size_t i = 0; i < hb.size(); ++i) ref2[i] = bc.ref(s_left, hb[i]);
      const auto b = Array<T>::from(hb, dev);
      INFO(porta_test::show(s_left) << " op array");
      porta_test::poison_pool<T>(n, dev);
      PORTA_CHECK_RESULT(check(bc, dev, bc.sa(s_left, b).to_vector(), ref2));
      if (n > 1000) continue;
      auto o1 = porta_test::poisoned<T>(Shape{n}, dev);
      bc.as_into(a, s_right, o1);
      PORTA_CHECK_RESULT(check(bc, dev, o1.to_vector(), ref));
      auto o2 = porta_test::poisoned<T>(Shape{n}, dev);
      bc.sa_into(s_left, b, o2);
      PORTA_CHECK_RESULT(check(bc, dev, o2.to_vector(), ref2));
      auto a2 = a.clone();
      bc.as_into(a2, s_right, a2);
      PORTA_CHECK_RESULT(check(bc, dev, a2.to_vector(), ref));
      auto b2 = b.clone();
      bc.sa_into(s_left, b2, b2);
      PORTA_CHECK_RESULT(check(bc, dev, b2.to_vector(), ref2));
    }
  }
}

TEMPLATE_TEST_CASE("binary maps: broadcasting rows and columns", "[map][binary][broadcast]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  struct RC {
    std::int64_t rows, cols;
  };
  for (const BinaryCase<T>& bc : binary_cases<T>()) {
    INFO("op " << bc.name << " on " << dev.to_string());
    for (RC rc : {RC{1, 1}, RC{1, 7}, RC{7, 1}, RC{5, 3}, RC{33, 1025}, RC{300, 301}}) {
      const std::int64_t rows = rc.rows, cols = rc.cols;
      INFO("a is " << rows << "x" << cols);
      const auto ha = inputs_a<T>(rng, bc.name, rows * cols);
      const auto a = Array<T>::from(ha, Shape{rows, cols}, dev);
      struct B {
        Shape shape;
        bool per_row;  // b indexed by column (a row vector) or by row (a column vector)
      };
      for (const B& bs : {B{Shape{cols}, true}, B{Shape{1, cols}, true}, B{Shape{rows, 1}, false}}) {
        INFO("b is " << bs.shape.to_string());
        const auto hb = inputs_b<T>(rng, bc.name, bs.shape.size());
        const auto b = Array<T>::from(hb, bs.shape, dev);
        std::vector<long double> ref(ha.size());
        for (std::int64_t r = 0; r < rows; ++r)
          for (std::int64_t c = 0; c < cols; ++c) ref[r * cols + c] = bc.ref(ha[r * cols + c], hb[bs.per_row ? c : r]);
        porta_test::poison_pool<T>(rows * cols, dev);
        const Array<T> y = bc.aa(a, b);
        CHECK(y.shape() == Shape{rows, cols});
        PORTA_CHECK_RESULT(check(bc, dev, y.to_vector(), ref));
        auto out = porta_test::poisoned<T>(Shape{rows, cols}, dev);
        bc.aa_into(a, b, out);
        PORTA_CHECK_RESULT(check(bc, dev, out.to_vector(), ref));
        auto a2 = a.clone();
        bc.aa_into(a2, b, a2);  // in place over a
        PORTA_CHECK_RESULT(check(bc, dev, a2.to_vector(), ref));
        PORTA_CHECK_RESULT(porta_test::compare_exact(b.to_vector(), hb));
      }
    }
  }
}

TEMPLATE_TEST_CASE("relu_grad", "[map][binary]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : {0, 1, 7, 1000003}) {
    INFO("n = " << n);
    const auto hg = porta_test::nonzero<T>(rng, n);
    const auto hx = porta_test::nonzero<T>(rng, n);
    std::vector<T> ref(hg.size());
    for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = hx[i] > T(0) ? hg[i] : T(0);
    const auto g = Array<T>::from(hg, dev);
    const auto x = Array<T>::from(hx, dev);
    porta_test::poison_pool<T>(n, dev);
    PORTA_CHECK_RESULT(porta_test::compare_exact(porta::relu_grad(g, x).to_vector(), ref));
    auto out = porta_test::poisoned<T>(Shape{n}, dev);
    porta::relu_grad(g, x, out);
    PORTA_CHECK_RESULT(porta_test::compare_exact(out.to_vector(), ref));
  }
}

TEMPLATE_TEST_CASE("integer division by zero and overflow", "[map][binary][int]", std::int32_t, std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  const T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
  const std::vector<T> as = {lo, hi, T(-7), T(7), T(0), T(1), T(-1), T(100)};
  const std::vector<T> bs = {T(0), T(-1), T(1), T(2), T(-3), lo, hi};
  const AllPairs<T> p(as, bs);
  const auto a = Array<T>::from(p.ha, dev);
  const auto b = Array<T>::from(p.hb, dev);
  // x / 0 == 0, lowest / -1 == lowest (wraps), others truncate toward zero
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::div(a, b).to_vector(), p.host(div_ref<T>)));
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::add(a, b).to_vector(), p.host(porta_test::ref::add<T>)));
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::sub(a, b).to_vector(), p.host(porta_test::ref::sub<T>)));
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::mul(a, b).to_vector(), p.host(porta_test::ref::mul<T>)));
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::div(a, T(0)).to_vector(), std::vector<T>(p.ha.size(), T(0))));
  PORTA_CHECK_RESULT(
      porta_test::compare_exact(porta::div(T(5), b).to_vector(), p.host([](T, T y) { return div_ref(T(5), y); })));
  const auto negs = porta::div(a, T(-1)).to_vector();
  PORTA_CHECK_RESULT(porta_test::compare_exact(negs, p.host([](T x, T) { return porta_test::ref::sub(T(0), x); })));
}

TEMPLATE_TEST_CASE("binary maps on IEEE special values", "[map][binary][ieee]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const std::vector<T> vals = {T(0), T(-0.0), T(1), T(-1), T(-2), T(0.5), inf, -inf, nan};
  const AllPairs<T> p(vals, vals);
  const auto a = Array<T>::from(p.ha, dev);
  const auto b = Array<T>::from(p.hb, dev);
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::add(a, b).to_vector(), p.host([](T x, T y) { return x + y; })));
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::sub(a, b).to_vector(), p.host([](T x, T y) { return x - y; })));
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::mul(a, b).to_vector(), p.host([](T x, T y) { return x * y; })));
  // x / ±0 is ±inf, 0 / 0 is NaN
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::div(a, b).to_vector(), p.host([](T x, T y) { return x / y; })));
  // maximum / minimum: NaN propagates, -0.0 orders below +0.0
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::maximum(a, b).to_vector(), p.host(porta_test::ref::max<T>)));
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::minimum(a, b).to_vector(), p.host(porta_test::ref::min<T>)));
  // pow's special cases are exact in C99 Annex F (pow(x, ±0) = 1, pow(1, y) = 1, pow(-2, 2) = 4, ...)
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::pow(a, b).to_vector(),
                                               p.host([](T x, T y) { return static_cast<T>(std::pow(x, y)); })));
  const auto mx = porta::maximum(Array<T>::from(std::vector<T>{T(-0.0), T(0)}, dev),
                                 Array<T>::from(std::vector<T>{T(0), T(-0.0)}, dev))
                      .to_vector();
  CHECK_FALSE(std::signbit(mx[0]));
  CHECK_FALSE(std::signbit(mx[1]));
  const auto mn = porta::minimum(Array<T>::from(std::vector<T>{T(-0.0), T(0)}, dev),
                                 Array<T>::from(std::vector<T>{T(0), T(-0.0)}, dev))
                      .to_vector();
  CHECK(std::signbit(mn[0]));
  CHECK(std::signbit(mn[1]));
}

namespace {

// Every NaN of `got` has the canonical quiet NaN's bits; `got` is a NaN wherever an operand is,
// when `propagates` (pow(NaN, 0) and relu_grad(NaN, -1) are numbers).
template <class T>
void require_canonical_nans(const char* what, const std::vector<T>& got, const std::vector<T>& a,
                            const std::vector<T>& b, bool propagates) {
  const T q = std::numeric_limits<T>::quiet_NaN();
  REQUIRE(got.size() == a.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const T bi = b.size() == 1 ? b[0] : b[i % b.size()];
    if (propagates && (std::isnan(a[i]) || std::isnan(bi))) CHECK(std::isnan(got[i]));
    if (std::isnan(got[i]) && !porta_test::same_bits(got[i], q))
      FAIL_CHECK(what << "[" << i << "] of " << porta_test::show(a[i]) << " and " << porta_test::show(bi) << " is "
                      << porta_test::show(got[i]) << ", not the canonical NaN");
  }
}

}  // namespace

TEMPLATE_TEST_CASE("binary maps return the canonical NaN for every NaN result", "[map][binary][ieee][nan]", float,
                   double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  const T inf = std::numeric_limits<T>::infinity();
  // The NaN patterns against each other and against numbers whose pairs make NaNs (inf - inf,
  // 0 * inf, 0 / 0: x86's default NaN has the sign bit set), repeated past a few vectors.
  std::vector<T> vals = porta_test::nan_patterns<T>();
  for (T v : {T(0), T(-0.0), T(1), T(-2), inf, -inf}) vals.push_back(v);
  AllPairs<T> p(vals, vals);
  const std::size_t pairs = p.ha.size();
  for (int r = 0; r < 3; ++r)
    for (std::size_t i = 0; i < pairs; ++i) {
      p.ha.push_back(p.ha[i]);
      p.hb.push_back(p.hb[i]);
    }
  const auto a = Array<T>::from(p.ha, dev);
  const auto b = Array<T>::from(p.hb, dev);
  INFO(dev.to_string());
  require_canonical_nans("add", porta::add(a, b).to_vector(), p.ha, p.hb, true);
  require_canonical_nans("sub", porta::sub(a, b).to_vector(), p.ha, p.hb, true);
  require_canonical_nans("mul", porta::mul(a, b).to_vector(), p.ha, p.hb, true);
  require_canonical_nans("div", porta::div(a, b).to_vector(), p.ha, p.hb, true);
  require_canonical_nans("minimum", porta::minimum(a, b).to_vector(), p.ha, p.hb, true);
  require_canonical_nans("maximum", porta::maximum(a, b).to_vector(), p.ha, p.hb, true);
  require_canonical_nans("pow", porta::pow(a, b).to_vector(), p.ha, p.hb, false);
  require_canonical_nans("relu_grad", porta::relu_grad(a, b).to_vector(), p.ha, p.hb, false);
  // One operand a scalar (binary_scalar), either side, a NaN pattern or a number.
  for (const T s : vals) {
    INFO("scalar " << porta_test::show(s));
    const std::vector<T> sv{s};
    require_canonical_nans("add scalar", porta::add(a, s).to_vector(), p.ha, sv, true);
    require_canonical_nans("mul scalar", porta::mul(s, a).to_vector(), p.ha, sv, true);
    require_canonical_nans("div scalar", porta::div(a, s).to_vector(), p.ha, sv, true);
    require_canonical_nans("maximum scalar", porta::maximum(s, a).to_vector(), p.ha, sv, true);
  }
  // Broadcasting a row over the rows of a matrix (the strided map).
  const auto cols = static_cast<std::int64_t>(vals.size());
  const auto rows = static_cast<std::int64_t>(p.ha.size()) / cols;
  const auto m = Array<T>::from(p.ha, Shape{rows, cols}, dev);
  const auto row = Array<T>::from(vals, Shape{1, cols}, dev);
  require_canonical_nans("sub row", porta::sub(m, row).to_vector(), p.ha, vals, true);
  require_canonical_nans("minimum row", porta::minimum(m, row).to_vector(), p.ha, vals, true);
  // axpy: alpha * x + y, alpha a NaN pattern or a number.
  for (const T alpha : vals) {
    INFO("alpha " << porta_test::show(alpha));
    auto y = Array<T>::from(p.hb, dev);
    porta::axpy(alpha, a, y);
    const auto got = y.to_vector();
    std::vector<T> ab(p.ha.size());
    for (std::size_t i = 0; i < ab.size(); ++i) ab[i] = std::isnan(p.ha[i]) ? p.ha[i] : p.hb[i];
    require_canonical_nans("axpy", got, ab, std::vector<T>{alpha}, true);
  }
}
