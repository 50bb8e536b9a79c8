// SPDX-License-Identifier: Apache-2.0
// The determinism promise (docs/determinism.md): sum, dot, norm2, mean, min, max and prod give the
// same bits on every run, stream, thread count and device, and those bits are the host reference's
// (a literal single-threaded implementation of the canonical order, tests/support/reference.hpp).
// On a GPU machine this is the cross-backend bit-equality test.
#include <cmath>
#include <cstdint>
#include <vector>

#include "porta/detail/reduce_order.hpp"
#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::Shape;
namespace ref = porta_test::ref;

namespace {

template <class T>
struct Bits {
  T sum, dot, norm2, min, max, prod;
  double mean;
  bool operator==(const Bits& o) const {
    using porta_test::same_bits;
    return same_bits(sum, o.sum) && same_bits(dot, o.dot) && same_bits(norm2, o.norm2) && same_bits(min, o.min) &&
           same_bits(max, o.max) && same_bits(prod, o.prod) && same_bits(mean, o.mean);
  }
  std::string str() const {
    using porta_test::show;
    return "sum " + show(sum) + ", dot " + show(dot) + ", norm2 " + show(norm2) + ", min " + show(min) + ", max " +
           show(max) + ", prod " + show(prod) + ", mean " + show(mean);
  }
};

template <class T>
Bits<T> run(const Array<T>& x, const Array<T>& y, const Array<T>& p, const porta::Stream& s = porta::Stream()) {
  return {porta::sum(x, s), porta::dot(x, y, s), porta::norm2(x, s), porta::min(x, s),
          porta::max(x, s), porta::prod(p, s),   porta::mean(x, s)};
}

template <class T>
Bits<T> reference(const std::vector<T>& h, const std::vector<T>& w, const std::vector<T>& hp) {
  const T s = ref::reduce(h, ref::Op::sum);
  return {s,
          ref::dot(h, w),
          ref::norm2(h),
          ref::reduce(h, ref::Op::min),
          ref::reduce(h, ref::Op::max),
          ref::reduce(hp, ref::Op::prod),
          ref::mean_from_sum(s, static_cast<std::int64_t>(h.size()))};
}

// Wide exponent range and heavy cancellation: m * 2^e with m in ±[1, 2), e in ±emax, and pairs of
// large opposite terms.
template <class T>
std::vector<T> hard_input(porta_test::Rng& rng, std::int64_t n) {
  const int emax = sizeof(T) == 4 ? 20 : 40;
  std::vector<T> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const T m = rng.uniform<T>(T(1), T(2));
    const int e = static_cast<int>(rng.uniform<std::int64_t>(-emax, emax));
    v[i] = std::ldexp(rng.coin() ? m : -m, e);
  }
  for (std::int64_t k = 0; k + 1 < n && k < n / 10; k += 2) {
    const std::int64_t i = rng.index(n), j = rng.index(n);
    const T big = std::ldexp(rng.uniform<T>(T(1), T(2)), emax + 5);
    v[i] = big;
    v[j] = -big;
  }
  return v;
}

}  // namespace

TEMPLATE_TEST_CASE("reductions: same bits on every run and stream, equal to the host reference",
                   "[reduce][determinism]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  // Warp and lane boundaries (31..33, 1023..1025), chunk boundaries (32767..32769), several chunks
  // with a ragged end (2^20 + 7) and a million.
  for (std::int64_t n : {1, 31, 32, 33, 1000, 1023, 1024, 1025, 32767, 32768, 32769, (1 << 20) + 7, 1000003}) {
    INFO("n = " << n << " on " << dev.to_string());
    const auto h = porta_test::nonzero<T>(rng, n);
    const auto w = porta_test::nonzero<T>(rng, n);
    const auto hp = porta_test::nonzero<T>(rng, n, T(0.999), T(1.001));
    const auto x = Array<T>::from(h, dev);
    const auto y = Array<T>::from(w, dev);
    const auto p = Array<T>::from(hp, dev);
    const Bits<T> expect = reference(h, w, hp);
    const Bits<T> first = run(x, y, p);
    INFO("reference: " << expect.str());
    INFO("device:    " << first.str());
    CHECK(first == expect);
    for (int rep = 0; rep < 3; ++rep) {
      porta::Stream s(dev);
      const Bits<T> again = run(x, y, p, s);
      INFO("run " << rep << ": " << again.str());
      CHECK(again == first);
    }
    // a copy of the data elsewhere in memory (other alignment of the pool block) gives the same bits
    const auto x2 = x.clone();
    CHECK(porta_test::same_bits(porta::sum(x2), first.sum));
  }
}

#if defined(_OPENMP)
TEMPLATE_TEST_CASE("reductions: the CPU's bits do not depend on the thread count", "[reduce][determinism][cpu]", float,
                   double) {
  using T = TestType;
  PORTA_RNG(rng);
  const Device cpu(porta::DeviceType::cpu);
  // 2^16 + 3 elements: 3 chunks, split into runs of lanes on any team; 1000003: 31 chunks, whole
  // chunks up to 7 threads and runs of lanes on 16 (backends/cpu/cpu_reduce.cpp).
  for (const std::int64_t n : {std::int64_t{65539}, std::int64_t{1000003}}) {
    INFO("n = " << n);
    const auto h = porta_test::nonzero<T>(rng, n);
    const auto w = porta_test::nonzero<T>(rng, n);
    const auto hp = porta_test::nonzero<T>(rng, n, T(0.999), T(1.001));
    const auto x = Array<T>::from(h, cpu);
    const auto y = Array<T>::from(w, cpu);
    const auto p = Array<T>::from(hp, cpu);
    const Bits<T> expect = reference(h, w, hp);
    const std::int64_t rows = n > 1000000 ? 3001 : 1, cols = 333;  // axis reductions of about 1e6 elements
    const auto m = Array<T>::from(h.data(), Shape{rows, cols}, cpu);
    const auto col_ref = ref::reduce_axis(h, 1, rows, cols, ref::Op::sum);
    const auto row_ref = ref::reduce_axis(h, rows, cols, 1, ref::Op::sum);
    porta_test::for_each_thread_count({1, 2, 3, 7, 16}, [&](int threads) {
      const Bits<T> got = run(x, y, p);
      INFO(threads << " threads: " << got.str() << "\nreference: " << expect.str());
      CHECK(got == expect);
      PORTA_CHECK_RESULT(porta_test::compare_exact(porta::sum(m, 0).to_vector(), col_ref));
      PORTA_CHECK_RESULT(porta_test::compare_exact(porta::sum(m, 1).to_vector(), row_ref));
    });
  }
}
#endif

TEMPLATE_TEST_CASE("reductions: every device gives the same bits", "[reduce][determinism]", float, double) {
  using T = TestType;
  PORTA_RNG(rng);
  const auto& devs = porta_test::test_devices();
  // 2^27 + 3 elements (three levels of partials) where a GPU is under test: that is the
  // cross-backend comparison at scale; CPU-only runs keep to sizes their memory and time allow.
  std::vector<std::int64_t> sizes{300007};
  bool gpu_under_test = false;
  for (const Device& d : devs) gpu_under_test |= d.type != porta::DeviceType::cpu;
  if (gpu_under_test) sizes.push_back((std::int64_t(1) << 27) + 3);
  for (const std::int64_t n : sizes) {
    const auto h = porta_test::nonzero<T>(rng, n);
    const auto w = porta_test::nonzero<T>(rng, n);
    const auto hp = porta_test::nonzero<T>(rng, n, T(0.999), T(1.001));
    const Bits<T> expect = reference(h, w, hp);
    for (const Device& dev : devs) {
      const Bits<T> got = run(Array<T>::from(h, dev), Array<T>::from(w, dev), Array<T>::from(hp, dev));
      INFO("n = " << n << " on " << dev.to_string() << ": " << got.str() << "\nreference: " << expect.str());
      CHECK(got == expect);
    }
  }
  // Empty input: the identities, with their sign.
  for (const Device& dev : devs) {
    const auto e = porta::zeros<T>({0}, dev);
    CHECK(porta_test::same_bits(porta::sum(e), T(0)));
    CHECK(porta_test::same_bits(porta::prod(e), T(1)));
    CHECK_THROWS_AS(porta::min(e), porta::InvalidArgument);
    CHECK_THROWS_AS(porta::max(e), porta::InvalidArgument);
  }
  const std::int64_t n = 300007;
  const auto h = porta_test::nonzero<T>(rng, n);
  // along an axis too
  const std::int64_t rows = 300, cols = 997;  // rows * cols <= n
  std::vector<T> m(h.begin(), h.begin() + rows * cols);
  const auto col_ref = ref::reduce_axis(m, 1, rows, cols, ref::Op::sum);
  const auto row_ref = ref::reduce_axis(m, rows, cols, 1, ref::Op::sum);
  for (const Device& dev : devs) {
    INFO(dev.to_string());
    const auto a = Array<T>::from(m, Shape{rows, cols}, dev);
    PORTA_CHECK_RESULT(porta_test::compare_exact(porta::sum(a, 0).to_vector(), col_ref));
    PORTA_CHECK_RESULT(porta_test::compare_exact(porta::sum(a, 1).to_vector(), row_ref));
  }
}

TEMPLATE_TEST_CASE("sum is accurate on hard inputs (cancellation, wide exponent range)", "[reduce][accuracy]", float,
                   double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : {1000, 32769, 1000003}) {
    INFO("n = " << n);
    const auto h = hard_input<T>(rng, n);
    long double sum_abs = 0;
    for (T v : h) sum_abs += std::fabs(static_cast<long double>(v));
    const long double exact = ref::accurate_sum(h);
    const T got = porta::sum(Array<T>::from(h, dev));
    const long double bound = porta_test::sum_tolerance<T>(n, sum_abs);
    INFO("got " << porta_test::show(got) << ", exact " << porta_test::show_ld(exact) << ", |error| "
                << porta_test::show_ld(std::fabs(got - exact)) << ", bound " << porta_test::show_ld(bound));
    CHECK(std::fabs(static_cast<long double>(got) - exact) <= bound);
    CHECK(porta_test::same_bits(got, ref::reduce(h, ref::Op::sum)));
    // dot with ones is the same sum
    const T d = porta::dot(Array<T>::from(h, dev), porta::ones<T>({n}, dev));
    CHECK(porta_test::same_bits(d, got));
  }
}

TEST_CASE("the canonical order's constants are the documented ones", "[reduce][determinism]") {
  // tests/support/reference.hpp hard-codes the documented order; catch a silent change of either side.
  CHECK(porta::detail::kReduceLanes == ref::kLanes);
  CHECK(porta::detail::kReduceChunk == ref::kChunk);
}

TEST_CASE("sum above 2^31 elements", "[.][large][reduce]") {
  // Hidden (run with "[large]"): needs 8 GiB on the device.
  const Device dev = PORTA_TEST_DEVICE();
  const std::int64_t n = (std::int64_t{1} << 31) + 4099;
  auto x = porta::ones<float>({n}, dev);
  const float got = porta::sum(x);
  const float expect = ref::canonical_reduce<float>(n, ref::Op::sum, [](std::int64_t) { return 1.0f; });
  INFO("got " << porta_test::show(got) << ", expected " << porta_test::show(expect));
  CHECK(porta_test::same_bits(got, expect));
  CHECK(porta::max(x) == 1.0f);
}
