// SPDX-License-Identifier: Apache-2.0
// axpy, fill, iota, copy, cast and the operators, on every device.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "support/cpu_cache.hpp"
#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::Shape;

#define PORTA_TEST_TYPES float, double, std::int32_t, std::int64_t

namespace {

// n elements of T just past the last-level cache: where the CPU's maps write with streaming stores
// (backends/cpu/cpu_map_common.hpp).
template <class T>
std::int64_t past_cache() {
  return std::min<std::int64_t>(porta_test::cpu_cache_bytes() / sizeof(T), 1 << 25) + 3;
}

}  // namespace

TEMPLATE_TEST_CASE("axpy", "[map][axpy]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  // 65535 and 65536: either side of the CPU's whole team
  for (std::int64_t n : {0, 1, 7, 1000, 65535, 65536, 1000003}) {
    INFO("n = " << n);
    const auto hx = porta_test::nonzero<T>(rng, n);
    const auto hy = porta_test::nonzero<T>(rng, n);
    const T alpha = porta_test::nonzero<T>(rng, 1, std::is_floating_point_v<T> ? T(0.5) : T(2),
                                           std::is_floating_point_v<T> ? T(4) : T(1000))
                        .front();
    INFO("alpha = " << porta_test::show(alpha));
    const auto x = Array<T>::from(hx, dev);
    auto y = Array<T>::from(hy, dev);
    porta::axpy(alpha, x, y);
    const auto got = y.to_vector();
    if constexpr (std::is_floating_point_v<T>) {
      // One rounding (fused) or two (product, then sum): within eps * (|alpha x| + |alpha x + y|).
      std::vector<long double> ref(hx.size()), bound(hx.size());
      for (std::size_t i = 0; i < hx.size(); ++i) {
        const long double ax = static_cast<long double>(alpha) * hx[i];
        ref[i] = ax + hy[i];
        bound[i] = porta_test::eps<T>() * (std::fabs(ax) + std::fabs(ref[i]));
      }
      PORTA_CHECK_RESULT(porta_test::compare_bound(got, ref, bound));
    } else {
      std::vector<T> ref(hx.size());
      for (std::size_t i = 0; i < hx.size(); ++i)
        ref[i] = porta_test::ref::add(porta_test::ref::mul(alpha, hx[i]), hy[i]);
      PORTA_CHECK_RESULT(porta_test::compare_exact(got, ref));
    }
    PORTA_CHECK_RESULT(porta_test::compare_exact(x.to_vector(), hx));
  }
  // x aliasing y: y = (alpha + 1) y
  auto y = porta::full<T>({10}, T(3), dev);
  porta::axpy(T(2), y, y);
  PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), std::vector<T>(10, T(9))));
  // 2-D
  auto a = porta::full<T>({3, 4}, T(1), dev);
  auto b = porta::full<T>({3, 4}, T(2), dev);
  porta::axpy(T(5), a, b);
  CHECK(b.shape() == Shape{3, 4});
  PORTA_CHECK_RESULT(porta_test::compare_exact(b.to_vector(), std::vector<T>(12, T(7))));
}

TEMPLATE_TEST_CASE("fill", "[map][fill]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{7}, std::int64_t{65535}, std::int64_t{65536},
                         std::int64_t{1000003}, past_cache<T>()}) {
    INFO("n = " << n);
    const T v = porta_test::nonzero<T>(rng, 1).front();
    auto y = porta_test::poisoned<T>(Shape{n}, dev);
    porta::fill(y, v);
    PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), std::vector<T>(static_cast<std::size_t>(n), v)));
  }
  auto m = porta_test::poisoned<T>(Shape{3, 5, 2}, dev);
  porta::fill(m, T(4));
  PORTA_CHECK_RESULT(porta_test::compare_exact(m.to_vector(), std::vector<T>(30, T(4))));
}

TEMPLATE_TEST_CASE("iota", "[map][iota]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  struct Case {
    double start, step;
  };
  // starts and steps whose multiples are exact in every dtype up to n = 1000003, and in all but
  // float past the cache
  const std::int64_t big = std::is_same_v<T, float> ? 1000003 : past_cache<T>();
  for (Case c : {Case{0, 1}, Case{-7, 3}, Case{100, -2}, Case{5, 0}}) {
    for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{7}, std::int64_t{1000003}, big}) {
      INFO("start " << c.start << " step " << c.step << " n " << n);
      std::vector<T> ref(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) ref[i] = static_cast<T>(c.start + static_cast<double>(i) * c.step);
      auto y = porta_test::poisoned<T>(Shape{n}, dev);
      porta::iota(y, static_cast<T>(c.start), static_cast<T>(c.step));
      PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), ref));
    }
  }
  auto d = porta_test::poisoned<T>(Shape{6}, dev);
  porta::iota(d);
  PORTA_CHECK_RESULT(porta_test::compare_exact(d.to_vector(), std::vector<T>{0, 1, 2, 3, 4, 5}));
  if constexpr (std::is_floating_point_v<T>) {
    auto f = porta_test::poisoned<T>(Shape{5}, dev);
    porta::iota(f, T(-1), T(0.25));
    PORTA_CHECK_RESULT(porta_test::compare_exact(f.to_vector(), std::vector<T>{-1, -0.75, -0.5, -0.25, 0}));
  }
}

TEMPLATE_TEST_CASE("copy", "[map][copy]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : {0, 1, 7, 1000003}) {
    INFO("n = " << n);
    const auto h = porta_test::nonzero<T>(rng, n);
    const auto src = Array<T>::from(h, dev);
    auto dst = porta_test::poisoned<T>(Shape{n}, dev);
    porta::copy(src, dst);
    PORTA_CHECK_RESULT(porta_test::compare_exact(dst.to_vector(), h));
  }
  // same size, different shape
  const auto h = porta_test::nonzero<T>(rng, 12);
  auto dst = porta_test::poisoned<T>(Shape{3, 4}, dev);
  porta::copy(Array<T>::from(h, dev), dst);
  CHECK(dst.shape() == Shape{3, 4});
  PORTA_CHECK_RESULT(porta_test::compare_exact(dst.to_vector(), h));
}

namespace {

template <class From>
std::vector<From> cast_inputs(porta_test::Rng& rng, std::int64_t n, bool to_int32, bool to_int) {
  if constexpr (std::is_floating_point_v<From>) {
    // values with fractions of both signs; in the target's range
    return porta_test::nonzero<From>(rng, n, From(0.01), From(to_int ? 30000 : 1e6));
  } else if constexpr (sizeof(From) == 8) {
    // large int64 values exercise rounding to float/double; int32 targets get in-range values
    return to_int32 ? porta_test::nonzero<From>(rng, n, From(1), From(2000000000))
                    : porta_test::nonzero<From>(rng, n, From(1), From(1) << 62);
  } else {
    return porta_test::nonzero<From>(rng, n, From(1), std::numeric_limits<From>::max());
  }
}

template <class To, class From>
void check_cast(Device dev, porta_test::Rng& rng) {
  INFO("cast " << porta::detail::dtype_name(porta::detail::dtype_of<From>()) << " -> "
               << porta::detail::dtype_name(porta::detail::dtype_of<To>()));
  for (std::int64_t n : {0, 1, 7, 100003}) {
    INFO("n = " << n);
    const auto h = cast_inputs<From>(rng, n, std::is_same_v<To, std::int32_t>, std::is_integral_v<To>);
    std::vector<To> ref(h.size());
    for (std::size_t i = 0; i < h.size(); ++i) ref[i] = static_cast<To>(h[i]);
    const auto x = Array<From>::from(h, dev);
    porta_test::poison_pool<To>(n, dev);
    const Array<To> y = porta::cast<To>(x);
    CHECK(y.shape() == x.shape());
    CHECK(y.device() == dev);
    PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), ref));
  }
  auto m = porta::cast<To>(porta::full<From>({2, 3}, From(7), dev));
  CHECK(m.shape() == Shape{2, 3});
  PORTA_CHECK_RESULT(porta_test::compare_exact(m.to_vector(), std::vector<To>(6, To(7))));
}

}  // namespace

TEMPLATE_TEST_CASE("cast between every pair of dtypes", "[map][cast]", PORTA_TEST_TYPES) {
  using From = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  check_cast<float, From>(dev, rng);
  check_cast<double, From>(dev, rng);
  check_cast<std::int32_t, From>(dev, rng);
  check_cast<std::int64_t, From>(dev, rng);
}

TEST_CASE("cast rounds to nearest and keeps special values", "[map][cast][ieee]") {
  const Device dev = PORTA_TEST_DEVICE();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> h = {1.0 + 0x1p-24, 1.0 + 0x1p-23 + 0x1p-24, -0.0, inf, -inf, 1e300, 0x1p-140};
  const auto f = porta::cast<float>(Array<double>::from(h, dev)).to_vector();
  std::vector<float> ref(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) ref[i] = static_cast<float>(h[i]);
  PORTA_CHECK_RESULT(porta_test::compare_exact(f, ref));
  const auto nan = porta::cast<double>(Array<float>::from(std::vector<float>{std::nanf("")}, dev)).to_vector();
  CHECK(std::isnan(nan[0]));
  // float -> int truncates toward zero
  const auto t =
      porta::cast<std::int32_t>(Array<float>::from(std::vector<float>{-2.75f, 2.75f, -0.5f}, dev)).to_vector();
  PORTA_CHECK_RESULT(porta_test::compare_exact(t, std::vector<std::int32_t>{-2, 2, 0}));
}

TEMPLATE_TEST_CASE("operators", "[map][operators]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t n = 1001;
  const auto ha = porta_test::nonzero<T>(rng, n);
  const auto hb = porta_test::nonzero<T>(rng, n);
  const T s = porta_test::nonzero<T>(rng, 1).front();
  const auto a = Array<T>::from(ha, dev);
  const auto b = Array<T>::from(hb, dev);
  auto host = [&](auto f) {
    std::vector<T> r(ha.size());
    for (std::size_t i = 0; i < ha.size(); ++i) r[i] = f(ha[i], hb[i]);
    return r;
  };
  using porta_test::compare_exact;
  namespace ref = porta_test::ref;
  PORTA_CHECK_RESULT(compare_exact((a + b).to_vector(), host([](T x, T y) { return ref::add(x, y); })));
  PORTA_CHECK_RESULT(compare_exact((a - b).to_vector(), host([](T x, T y) { return ref::sub(x, y); })));
  PORTA_CHECK_RESULT(compare_exact((a * b).to_vector(), host([](T x, T y) { return ref::mul(x, y); })));
  PORTA_CHECK_RESULT(compare_exact((a / b).to_vector(), host([](T x, T y) { return static_cast<T>(x / y); })));
  PORTA_CHECK_RESULT(compare_exact((a + s).to_vector(), host([s](T x, T) { return ref::add(x, s); })));
  PORTA_CHECK_RESULT(compare_exact((s + a).to_vector(), host([s](T x, T) { return ref::add(s, x); })));
  PORTA_CHECK_RESULT(compare_exact((a - s).to_vector(), host([s](T x, T) { return ref::sub(x, s); })));
  PORTA_CHECK_RESULT(compare_exact((s - a).to_vector(), host([s](T x, T) { return ref::sub(s, x); })));
  PORTA_CHECK_RESULT(compare_exact((a * s).to_vector(), host([s](T x, T) { return ref::mul(x, s); })));
  PORTA_CHECK_RESULT(compare_exact((s * a).to_vector(), host([s](T x, T) { return ref::mul(s, x); })));
  PORTA_CHECK_RESULT(compare_exact((a / s).to_vector(), host([s](T x, T) { return static_cast<T>(x / s); })));
  PORTA_CHECK_RESULT(compare_exact((s / a).to_vector(), host([s](T x, T) { return static_cast<T>(s / x); })));
  PORTA_CHECK_RESULT(compare_exact((-a).to_vector(), host([](T x, T) { return ref::sub(T(0), x); })));
  // a chain: (a * 2 + b) / a
  const auto chain = ((a * T(2) + b) / a).to_vector();
  PORTA_CHECK_RESULT(
      compare_exact(chain, host([](T x, T y) { return static_cast<T>(ref::add(ref::mul(x, T(2)), y) / x); })));
}
