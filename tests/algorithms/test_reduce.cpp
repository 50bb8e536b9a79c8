// SPDX-License-Identifier: Apache-2.0
// Reductions: sum, prod, min, max, mean, dot, norm2; full and along an axis; every dtype on every
// device; results compared bit for bit with the host's canonical-order reference
// (tests/support/reference.hpp); the empty-array rules; NaN and signed zero.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::Shape;
using porta_test::Contains;
namespace ref = porta_test::ref;

#define PORTA_TEST_TYPES float, double, std::int32_t, std::int64_t

namespace {

// Sizes around the lane (1024) and chunk (32768) boundaries of the canonical order.
const std::int64_t kSizes[] = {1, 2, 7, 1023, 1024, 1025, 32767, 32768, 32769, 65537, 1000003};

// Products of many terms stay finite and non-zero: floats ±[0.999, 1.001], integers odd (so the
// wrapped product never collapses to zero).
template <class T>
std::vector<T> prod_inputs(porta_test::Rng& rng, std::int64_t n) {
  if constexpr (std::is_floating_point_v<T>) {
    return porta_test::nonzero<T>(rng, n, T(0.999), T(1.001));
  } else {
    auto v = porta_test::nonzero<T>(rng, n, T(1), T(99));
    for (auto& x : v) x = (x % 2 == 0) ? x + 1 : x;
    return v;
  }
}

template <class T>
std::string show(T v) {
  return porta_test::show(v);
}

#define CHECK_BITS(got, expected)                                         \
  do {                                                                    \
    const auto g_ = (got);                                                \
    const auto e_ = (expected);                                           \
    INFO(#got " = " << show(g_) << ", canonical reference " << show(e_)); \
    CHECK(porta_test::same_bits(g_, e_));                                 \
  } while (0)

}  // namespace

TEMPLATE_TEST_CASE("full reductions equal the canonical order bit for bit", "[reduce]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : kSizes) {
    INFO("n = " << n << " on " << dev.to_string());
    const auto h = porta_test::nonzero<T>(rng, n);
    const auto w = porta_test::nonzero<T>(rng, n);
    const auto hp = prod_inputs<T>(rng, n);
    const auto x = Array<T>::from(h, dev);
    const auto y = Array<T>::from(w, dev);
    const auto p = Array<T>::from(hp, dev);
    const T s = ref::reduce(h, ref::Op::sum);
    CHECK_BITS(porta::sum(x), s);
    CHECK_BITS(porta::prod(p), ref::reduce(hp, ref::Op::prod));
    CHECK_BITS(porta::min(x), ref::reduce(h, ref::Op::min));
    CHECK_BITS(porta::max(x), ref::reduce(h, ref::Op::max));
    CHECK_BITS(porta::dot(x, y), ref::dot(h, w));
    // mean is sum / size, divided on the host
    CHECK_BITS(porta::mean(x), ref::mean_from_sum(s, n));
    if constexpr (std::is_floating_point_v<T>) {
      CHECK_BITS(porta::norm2(x), ref::norm2(h));
      // and the canonical sum is accurate: within the pairwise bound of the exact sum
      long double sum_abs = 0;
      for (T v : h) sum_abs += std::fabs(static_cast<long double>(v));
      const long double exact = ref::accurate_sum(h);
      INFO("exact " << porta_test::show_ld(exact) << ", bound "
                    << porta_test::show_ld(porta_test::sum_tolerance<T>(n, sum_abs)));
      CHECK(std::fabs(static_cast<long double>(porta::sum(x)) - exact) <= porta_test::sum_tolerance<T>(n, sum_abs));
    }
    // 2-D arrays reduce over all elements, in row-major order
    if (n % 7 == 0 || n == 1024) {
      const auto x2 = Array<T>::from(h, Shape{n % 7 == 0 ? 7 : 32, n % 7 == 0 ? n / 7 : 32}, dev);
      CHECK_BITS(porta::sum(x2), s);
    }
  }
  // the input is untouched
  const auto h = porta_test::nonzero<T>(rng, 5000);
  const auto x = Array<T>::from(h, dev);
  (void)porta::sum(x);
  (void)porta::max(x);
  PORTA_CHECK_RESULT(porta_test::compare_exact(x.to_vector(), h));
}

TEMPLATE_TEST_CASE("integer reductions wrap", "[reduce][int]", std::int32_t, std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const auto h = porta_test::uniform<T>(rng, 100003, std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max());
  const auto w = porta_test::uniform<T>(rng, 100003, std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max());
  const auto x = Array<T>::from(h, dev);
  CHECK(porta::sum(x) == ref::reduce(h, ref::Op::sum));
  CHECK(porta::dot(x, Array<T>::from(w, dev)) == ref::dot(h, w));
  CHECK(porta::min(x) == ref::reduce(h, ref::Op::min));
  CHECK(porta::max(x) == ref::reduce(h, ref::Op::max));
  const std::vector<T> ext = {std::numeric_limits<T>::max(), std::numeric_limits<T>::max(), T(3)};
  const auto e = Array<T>::from(ext, dev);
  CHECK(porta::sum(e) == ref::add(ref::add(ext[0], ext[1]), ext[2]));
  CHECK(porta::min(e) == T(3));
}

TEMPLATE_TEST_CASE("reductions along an axis equal the canonical order per element", "[reduce][axis]",
                   PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  struct RC {
    std::int64_t rows, cols;
  };
  for (RC rc : {RC{1, 1}, RC{1, 1000}, RC{1000, 1}, RC{7, 13}, RC{33, 1025}, RC{1025, 3}, RC{3, 70001}, RC{40000, 2}}) {
    const std::int64_t rows = rc.rows, cols = rc.cols;
    INFO(rows << "x" << cols << " on " << dev.to_string());
    const auto h = porta_test::nonzero<T>(rng, rows * cols);
    const auto hp = prod_inputs<T>(rng, rows * cols);
    const auto x = Array<T>::from(h, Shape{rows, cols}, dev);
    const auto p = Array<T>::from(hp, Shape{rows, cols}, dev);
    for (int axis : {0, 1}) {
      INFO("axis " << axis);
      const std::int64_t outer = axis == 0 ? 1 : rows, len = axis == 0 ? rows : cols, inner = axis == 0 ? cols : 1;
      const Shape out_shape = axis == 0 ? Shape{cols} : Shape{rows};
      struct R {
        const char* name;
        Array<T> got;
        std::vector<T> expect;
      };
      porta_test::poison_pool<T>(outer * inner, dev);
      R rs[] = {
          {"sum", porta::sum(x, axis), ref::reduce_axis(h, outer, len, inner, ref::Op::sum)},
          {"prod", porta::prod(p, axis), ref::reduce_axis(hp, outer, len, inner, ref::Op::prod)},
          {"min", porta::min(x, axis), ref::reduce_axis(h, outer, len, inner, ref::Op::min)},
          {"max", porta::max(x, axis), ref::reduce_axis(h, outer, len, inner, ref::Op::max)},
      };
      for (R& r : rs) {
        INFO(r.name);
        CHECK(r.got.shape() == out_shape);
        CHECK(r.got.device() == dev);
        PORTA_CHECK_RESULT(porta_test::compare_exact(r.got.to_vector(), r.expect));
      }
      if constexpr (std::is_floating_point_v<T>) {
        const auto m = porta::mean(x, axis);
        CHECK(m.shape() == out_shape);
        const auto& sums = rs[0].expect;
        std::vector<long double> mref(sums.size()), bound(sums.size());
        for (std::size_t i = 0; i < sums.size(); ++i) {
          long double sum_abs = 0;
          for (std::int64_t j = 0; j < len; ++j)
            sum_abs += std::fabs(static_cast<long double>(h[((i / inner) * len + j) * inner + i % inner]));
          mref[i] = static_cast<long double>(sums[i]) / len;
          bound[i] = (porta_test::sum_tolerance<T>(len, sum_abs) / len) + 2 * porta_test::eps<T>() * std::fabs(mref[i]);
        }
        PORTA_CHECK_RESULT(porta_test::compare_bound(m.to_vector(), mref, bound));
      }
    }
  }
}

TEMPLATE_TEST_CASE("reductions along each axis of 3-D and 1-D arrays", "[reduce][axis]", float, double, std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t d0 = 3, d1 = 5, d2 = 7;
  const auto h = porta_test::nonzero<T>(rng, d0 * d1 * d2);
  const auto x = Array<T>::from(h, Shape{d0, d1, d2}, dev);
  const Shape shapes[] = {Shape{d1, d2}, Shape{d0, d2}, Shape{d0, d1}};
  const std::int64_t outer[] = {1, d0, d0 * d1}, len[] = {d0, d1, d2}, inner[] = {d1 * d2, d2, 1};
  for (int axis = 0; axis < 3; ++axis) {
    INFO("axis " << axis);
    const auto s = porta::sum(x, axis);
    CHECK(s.shape() == shapes[axis]);
    PORTA_CHECK_RESULT(porta_test::compare_exact(
        s.to_vector(), ref::reduce_axis(h, outer[axis], len[axis], inner[axis], ref::Op::sum)));
    const auto mx = porta::max(x, axis);
    CHECK(mx.shape() == shapes[axis]);
    PORTA_CHECK_RESULT(porta_test::compare_exact(
        mx.to_vector(), ref::reduce_axis(h, outer[axis], len[axis], inner[axis], ref::Op::max)));
  }
  // a negative axis counts from the end
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::sum(x, -1).to_vector(), porta::sum(x, 2).to_vector()));
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::min(x, -3).to_vector(), porta::min(x, 0).to_vector()));
  CHECK(porta::max(x, -2).shape() == shapes[1]);
  // 1-D along axis 0: the axis is dropped, leaving a scalar-shaped array of one element
  const auto v = Array<T>::from(h, dev);
  const auto s = porta::sum(v, 0);
  CHECK(s.rank() == 0);
  REQUIRE(s.size() == 1);
  CHECK(porta_test::same_bits(s.to_vector()[0], ref::reduce(h, ref::Op::sum)));
}

TEMPLATE_TEST_CASE("reductions of empty arrays", "[reduce][empty]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  const auto e = porta::zeros<T>({0}, dev);
  CHECK(porta::sum(e) == T(0));
  CHECK(porta::prod(e) == T(1));
  CHECK(porta::dot(e, e) == T(0));
  if constexpr (std::is_floating_point_v<T>) CHECK(porta::norm2(e) == T(0));
  CHECK_THROWS_AS(porta::min(e), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::max(e), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::mean(e), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::min(e), Contains("porta::min"));
  CHECK_THROWS_WITH(porta::max(e), Contains("porta::max"));
  CHECK_THROWS_WITH(porta::mean(e), Contains("porta::mean"));
  const auto e2 = porta::zeros<T>({0, 4}, dev);
  CHECK(porta::sum(e2) == T(0));
  // along an empty axis: sum gives zeros, prod ones, min/max throw
  const auto s = porta::sum(e2, 0);
  CHECK(s.shape() == Shape{4});
  PORTA_CHECK_RESULT(porta_test::compare_exact(s.to_vector(), std::vector<T>(4, T(0))));
  const auto p = porta::prod(e2, 0);
  PORTA_CHECK_RESULT(porta_test::compare_exact(p.to_vector(), std::vector<T>(4, T(1))));
  CHECK_THROWS_AS(porta::min(e2, 0), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::max(e2, 0), porta::InvalidArgument);
  // an empty result (nothing to reduce into) is fine
  const auto r = porta::sum(e2, 1);
  CHECK(r.shape() == Shape{0});
}

TEMPLATE_TEST_CASE("reductions propagate NaN as the canonical quiet NaN", "[reduce][ieee]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  using B = porta_test::bits_t<T>;
  // a negative NaN with a payload: its bits differ from the canonical quiet NaN's
  const B neg_payload = sizeof(T) == 4 ? B(0xFFC00123u) : B(0xFFF8000000000123ull);
  T odd_nan;
  std::memcpy(&odd_nan, &neg_payload, sizeof odd_nan);
  REQUIRE(std::isnan(odd_nan));
  const T qnan = std::numeric_limits<T>::quiet_NaN();
  for (std::int64_t n : {1, 2, 1025, 32769, 100003}) {
    INFO("n = " << n << " on " << dev.to_string());
    auto h = porta_test::nonzero<T>(rng, n);
    const std::int64_t at = rng.index(n);
    h[at] = odd_nan;
    INFO("NaN at " << at);
    const auto x = Array<T>::from(h, dev);
    const auto ones = porta::ones<T>({n}, dev);
    CHECK_BITS(porta::sum(x), qnan);
    CHECK_BITS(porta::prod(x), qnan);
    CHECK_BITS(porta::min(x), qnan);
    CHECK_BITS(porta::max(x), qnan);
    CHECK_BITS(porta::dot(x, ones), qnan);
    CHECK_BITS(porta::dot(ones, x), qnan);
    CHECK_BITS(porta::norm2(x), qnan);
    CHECK(std::isnan(porta::mean(x)));
    // along an axis: the NaN's row or column is NaN
    if (n % 2 == 0) {
      const auto x2 = Array<T>::from(h, Shape{2, n / 2}, dev);
      const auto s = porta::sum(x2, 0).to_vector();
      const auto m = porta::max(x2, 1).to_vector();
      CHECK(porta_test::same_bits(s[at % (n / 2)], qnan));
      CHECK(porta_test::same_bits(m[at / (n / 2)], qnan));
    }
  }
  // inf - inf
  const T inf = std::numeric_limits<T>::infinity();
  const auto x = Array<T>::from(std::vector<T>{T(1), inf, T(2), -inf}, dev);
  CHECK_BITS(porta::sum(x), qnan);
  CHECK_BITS(porta::max(x), inf);
  CHECK_BITS(porta::min(x), -inf);
  // overflow to inf without NaN
  const auto big = porta::full<T>({4}, std::numeric_limits<T>::max(), dev);
  CHECK_BITS(porta::sum(big), inf);
}

TEMPLATE_TEST_CASE("min and max order -0.0 below +0.0; sums keep the sign of zero", "[reduce][ieee]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const T pz = T(0), nz = T(-0.0);
  CHECK_BITS(porta::max(Array<T>::from(std::vector<T>{nz, pz}, dev)), pz);
  CHECK_BITS(porta::max(Array<T>::from(std::vector<T>{pz, nz}, dev)), pz);
  CHECK_BITS(porta::min(Array<T>::from(std::vector<T>{nz, pz}, dev)), nz);
  CHECK_BITS(porta::min(Array<T>::from(std::vector<T>{pz, nz}, dev)), nz);
  CHECK_BITS(porta::sum(Array<T>::from(std::vector<T>{nz}, dev)), nz);
  CHECK_BITS(porta::sum(Array<T>::from(std::vector<T>{pz}, dev)), pz);
  for (std::int64_t n : {3, 1025, 40000}) {
    INFO("n = " << n);
    std::vector<T> h(static_cast<std::size_t>(n));
    for (auto& v : h) v = rng.coin() ? pz : nz;
    // one of each sign for sure, at distinct places
    const std::int64_t at = rng.index(n);
    h[static_cast<std::size_t>(at)] = pz;
    h[static_cast<std::size_t>((at + 1 + rng.index(n - 1)) % n)] = nz;
    const auto x = Array<T>::from(h, dev);
    CHECK_BITS(porta::max(x), pz);
    CHECK_BITS(porta::min(x), nz);
    CHECK_BITS(porta::sum(x), ref::reduce(h, ref::Op::sum));
    const auto all_neg = porta::full<T>({n}, nz, dev);
    CHECK_BITS(porta::sum(all_neg), nz);
    CHECK_BITS(porta::max(all_neg), nz);
  }
}

TEMPLATE_TEST_CASE("mean of integers is the canonical sum of the values as double, divided by n",
                   "[reduce][integer][determinism]", std::int32_t, std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  // Elements near the ends of the type, so that the sum in T wraps for every n > 2 and only the
  // double accumulation gives the mean. Sizes around the chunk (32768) and around the 32-chunk
  // blocks that porta converts at a time (1048576), so every way of splitting is compared with the
  // reference: the one canonical order over the converted values (docs/determinism.md).
  const T big = std::numeric_limits<T>::max() / 2;
  for (std::int64_t n : {1, 2, 3, 32767, 32768, 32769, 65536 + 5, 1048576, 1048577, 2 * 1048576 + 3 * 32768 + 17}) {
    INFO("n = " << n << " on " << dev.to_string());
    const auto h = porta_test::nonzero<T>(rng, n, big, std::numeric_limits<T>::max());
    std::vector<double> hd(h.size());
    for (std::size_t i = 0; i < h.size(); ++i) hd[i] = static_cast<double>(h[i]);
    const double expected = ref::reduce(hd, ref::Op::sum) / static_cast<double>(n);
    const auto x = Array<T>::from(h, dev);
    CHECK_BITS(porta::mean(x), expected);
    // the same bits as the public route: the double sum of the converted array
    CHECK_BITS(porta::mean(x), porta::sum(porta::cast<double>(x)) / static_cast<double>(n));
  }
}

TEMPLATE_TEST_CASE("reductions along an axis return the canonical NaN for every NaN input pattern",
                   "[reduce][ieee][nan]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const T q = std::numeric_limits<T>::quiet_NaN();
  for (const T nan : porta_test::nan_patterns<T>()) {
    for (const std::int64_t rows : {3, 64}) {
      const std::int64_t cols = 37;
      INFO("NaN " << porta_test::show(nan) << ", " << rows << "x" << cols << " on " << dev.to_string());
      auto h = porta_test::nonzero<T>(rng, rows * cols);
      // Row 1 holds the NaN in column 5; column 9 holds it in row 2.
      h[static_cast<std::size_t>(1 * cols + 5)] = nan;
      h[static_cast<std::size_t>(2 * cols + 9)] = nan;
      const auto x = Array<T>::from(h, Shape{rows, cols}, dev);
      for (int axis : {0, 1}) {
        INFO("axis " << axis);
        const auto check = [&](const char* what, const std::vector<T>& r) {
          for (std::size_t i = 0; i < r.size(); ++i) {
            const bool want_nan = axis == 1 ? (i == 1 || i == 2) : (i == 5 || i == 9);
            if (want_nan) {
              INFO(what << "[" << i << "] = " << porta_test::show(r[i]));
              CHECK(porta_test::same_bits(r[i], q));
            } else {
              CHECK_FALSE(std::isnan(r[i]));
            }
          }
        };
        check("sum", porta::sum(x, axis).to_vector());
        check("prod", porta::prod(x, axis).to_vector());
        check("min", porta::min(x, axis).to_vector());
        check("max", porta::max(x, axis).to_vector());
        check("mean", porta::mean(x, axis).to_vector());
      }
    }
  }
}
