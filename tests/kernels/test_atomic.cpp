// SPDX-License-Identifier: Apache-2.0
// porta::atomic_add, atomic_min and atomic_max in user kernels (porta/atomic.hpp), every dtype, on
// every device this translation unit can launch on: histograms whose counts must be exact,
// per-bucket minima and maxima against a host reference with porta's NaN and signed-zero rules,
// and the old values returned, which must be a permutation when every thread adds 1 to one counter.
#include "porta/atomic.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "kernel_devices.hpp"
#include "porta/kernels.hpp"
#include "support/support.hpp"

using porta::Array;
using porta::Device;
namespace ref = porta_test::ref;

#define PORTA_TEST_TYPES float, double, std::int32_t, std::int64_t

// The docs/sorting.md example: a histogram of bins with integer counts.
TEST_CASE("atomic_add: a histogram, exact on every device", "[kernels][atomic]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  for (const std::int64_t bins : {1, 7, 256, 100000}) {
    const std::int64_t n = 1000003;
    INFO(bins << " bins on " << dev.to_string());
    const auto h = porta_test::uniform<std::int32_t>(rng, n, 0, static_cast<std::int32_t>(bins - 1));
    const auto x = Array<std::int32_t>::from(h, dev);
    // example-begin histogram
    auto hist = porta::zeros<std::int64_t>({bins}, dev);
    auto hv = hist.view();
    auto xv = x.view();
    porta::parallel_for(
        dev, n, PORTA_LAMBDA(std::int64_t i) { porta::atomic_add(&hv[xv[i]], 1); });
    // example-end histogram
    std::vector<std::int64_t> expect(static_cast<std::size_t>(bins), 0);
    for (std::int32_t b : h) ++expect[static_cast<std::size_t>(b)];
    PORTA_CHECK_RESULT(porta_test::compare_exact(hist.to_vector(), expect));
  }
}

TEMPLATE_TEST_CASE("atomic_add counts and sums exactly where the arithmetic is exact", "[kernels][atomic]",
                   PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t n = 300007, bins = 37;
  const auto b = porta_test::uniform<std::int32_t>(rng, n, 0, bins - 1);
  // Small integers: every partial sum is exact in float and double too, so any order gives the
  // same total.
  const auto w = porta_test::uniform<T>(rng, n, T(-100), T(100));
  std::vector<T> wi(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) wi[i] = static_cast<T>(std::llround(static_cast<double>(w[i])));
  const auto bd = Array<std::int32_t>::from(b, dev);
  const auto wd = Array<T>::from(wi, dev);
  auto sums = porta::zeros<T>({bins}, dev);
  auto sv = sums.view();
  auto bv = bd.view();
  auto wv = wd.view();
  porta::parallel_for(
      dev, n, PORTA_LAMBDA(std::int64_t i) { porta::atomic_add(&sv[bv[i]], wv[i]); });
  std::vector<T> expect(static_cast<std::size_t>(bins), T(0));
  for (std::size_t i = 0; i < b.size(); ++i)
    expect[static_cast<std::size_t>(b[i])] = ref::add(expect[static_cast<std::size_t>(b[i])], wi[i]);
  PORTA_CHECK_RESULT(porta_test::compare_exact(sums.to_vector(), expect));

  // Every thread adds 1 to one counter: the old values it gets back are 0, 1, ..., n - 1 in some
  // order (exact in float up to 2^24).
  const std::int64_t m = 100003;
  auto counter = porta::zeros<T>({1}, dev);
  auto olds = porta_test::poisoned<T>(porta::Shape{m}, dev);
  auto cv = counter.view();
  auto ov = olds.view();
  porta::parallel_for(
      dev, m, PORTA_LAMBDA(std::int64_t i) { ov[i] = porta::atomic_add(&cv[0], T(1)); });
  auto got = olds.to_vector();
  std::sort(got.begin(), got.end());
  std::vector<T> perm(static_cast<std::size_t>(m));
  std::iota(perm.begin(), perm.end(), T(0));
  PORTA_CHECK_RESULT(porta_test::compare_exact(got, perm));
  CHECK(counter.to_vector()[0] == T(m));
}

TEMPLATE_TEST_CASE("atomic_add on integers wraps", "[kernels][atomic]", std::int32_t, std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_KERNEL_DEVICE();
  auto a = Array<T>::from({std::numeric_limits<T>::max(), std::numeric_limits<T>::lowest()}, dev);
  auto av = a.view();
  porta::parallel_for(
      dev, 1, PORTA_LAMBDA(std::int64_t) {
        porta::atomic_add(&av[0], T(1));
        porta::atomic_add(&av[1], T(-1));
      });
  CHECK(a.to_vector() == std::vector<T>{std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max()});
}

TEMPLATE_TEST_CASE("atomic_min and atomic_max follow porta::min and porta::max", "[kernels][atomic]",
                   PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t n = 200003, bins = 101;
  const auto b = porta_test::uniform<std::int32_t>(rng, n, 0, bins - 1);
  auto v = porta_test::nonzero<T>(rng, n);
  if constexpr (std::is_floating_point_v<T>) {
    // Signed zeros in some buckets (-0.0 must win the min and lose the max against +0.0), NaN in
    // a few (it must win both).
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (b[i] % 10 == 3) v[i] = rng.coin() ? T(0) : T(-0.0);
      if (b[i] % 10 == 7 && rng.index(20000) == 0) v[i] = std::numeric_limits<T>::quiet_NaN();
    }
  } else {
    v[0] = std::numeric_limits<T>::lowest();
    v[1] = std::numeric_limits<T>::max();
  }
  std::vector<T> lo(static_cast<std::size_t>(bins)), hi(static_cast<std::size_t>(bins));
  const T top = std::is_floating_point_v<T> ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
  const T bottom = std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  std::fill(lo.begin(), lo.end(), top);
  std::fill(hi.begin(), hi.end(), bottom);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto k = static_cast<std::size_t>(b[i]);
    lo[k] = ref::min(lo[k], v[i]);
    hi[k] = ref::max(hi[k], v[i]);
  }
  const auto bd = Array<std::int32_t>::from(b, dev);
  const auto vd = Array<T>::from(v, dev);
  auto dlo = porta::full<T>({bins}, top, dev);
  auto dhi = porta::full<T>({bins}, bottom, dev);
  auto lv = dlo.view();
  auto hv = dhi.view();
  auto bv = bd.view();
  auto vv = vd.view();
  porta::parallel_for(
      dev, n, PORTA_LAMBDA(std::int64_t i) {
        porta::atomic_min(&lv[bv[i]], vv[i]);
        porta::atomic_max(&hv[bv[i]], vv[i]);
      });
  PORTA_CHECK_RESULT(porta_test::compare_exact(dlo.to_vector(), lo));
  PORTA_CHECK_RESULT(porta_test::compare_exact(dhi.to_vector(), hi));
}

TEMPLATE_TEST_CASE("atomic_min and atomic_max keep the canonical NaN whatever the arrival order",
                   "[kernels][atomic][nan]", float, double) {
  using T = TestType;
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  // NaNs of both signs, with and without payloads, signalling patterns, racing with numbers into
  // a few cells; some cells start as a non-canonical NaN, one gets numbers only.
  const std::vector<T> nans = porta_test::nan_patterns<T>();
  const std::int64_t n = 300007, cells = 5;
  const T q = std::numeric_limits<T>::quiet_NaN();
  for (int round = 0; round < 4; ++round) {
    INFO("round " << round << " on " << dev.to_string());
    auto c = porta_test::uniform<std::int32_t>(rng, n, 0, static_cast<std::int32_t>(cells - 1));
    auto v = porta_test::nonzero<T>(rng, n);
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (c[i] == cells - 1) continue;  // the numbers-only cell
      if (rng.index(3) == 0) v[i] = nans[static_cast<std::size_t>(rng.index(static_cast<std::int64_t>(nans.size())))];
    }
    std::vector<T> start(static_cast<std::size_t>(cells), T(0));
    start[1] = nans[1];  // a negative NaN already there
    start[2] = nans[3];  // a negative payload NaN
    const auto cd = Array<std::int32_t>::from(c, dev);
    const auto vd = Array<T>::from(v, dev);
    auto lo = Array<T>::from(start, dev);
    auto hi = Array<T>::from(start, dev);
    auto lv = lo.view();
    auto hv = hi.view();
    auto cv = cd.view();
    auto vv = vd.view();
    porta::parallel_for(
        dev, n, PORTA_LAMBDA(std::int64_t i) {
          porta::atomic_min(&lv[cv[i]], vv[i]);
          porta::atomic_max(&hv[cv[i]], vv[i]);
        });
    const auto los = lo.to_vector(), his = hi.to_vector();
    for (std::int64_t k = 0; k + 1 < cells; ++k) {
      INFO("cell " << k << ": min " << porta_test::show(los[static_cast<std::size_t>(k)]) << ", max "
                   << porta_test::show(his[static_cast<std::size_t>(k)]));
      CHECK(porta_test::same_bits(los[static_cast<std::size_t>(k)], q));
      CHECK(porta_test::same_bits(his[static_cast<std::size_t>(k)], q));
    }
    CHECK_FALSE(std::isnan(los[static_cast<std::size_t>(cells - 1)]));
    CHECK_FALSE(std::isnan(his[static_cast<std::size_t>(cells - 1)]));
  }
}
