// SPDX-License-Identifier: Apache-2.0
// Random numbers: Philox4x32-10 against the published known answers, the built-ins on every device
// against the host (bit for bit: the generator's words mapped by this file's own arithmetic for
// uniforms, porta::random::Philox on the host for normals) and against a long double reference of
// the Box-Muller formula, streams and offsets, statistics, and [determinism]: the same bits under
// 1, 2 and 3 OpenMP threads and on every device.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "porta/random.hpp"
#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::Shape;
using porta_test::Contains;
namespace philox = porta::detail::philox;

namespace {

const std::int64_t kSizes[] = {1, 2, 3, 4, 5, 7, 1023, 4097, 100003};

// The words of block b of stream s (philox4x32_10 itself is checked against the known answers).
philox::Words words(std::uint64_t seed, std::uint64_t s, std::uint64_t b) {
  const philox::Words c{{static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b >> 32),
                         static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(s >> 32)}};
  return philox::philox4x32_10(c, static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
}

// Uniforms from the words, with this file's arithmetic: float = (w >> 8) / 2^24, double = the top 53
// bits of (w0 << 32 | w1) / 2^53, element i from block offset + i / per.
template <class T>
std::vector<T> expected_uniform(std::uint64_t seed, porta::random::Counter at, std::int64_t n) {
  std::vector<T> out(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    if constexpr (sizeof(T) == 4) {
      const philox::Words w = words(seed, at.stream, at.offset + static_cast<std::uint64_t>(i / 4));
      out[static_cast<std::size_t>(i)] = static_cast<float>(std::ldexp(static_cast<double>(w.v[i % 4] >> 8), -24));
    } else {
      const philox::Words w = words(seed, at.stream, at.offset + static_cast<std::uint64_t>(i / 2));
      const std::uint64_t k = ((static_cast<std::uint64_t>(w.v[2 * (i % 2)]) << 32) | w.v[2 * (i % 2) + 1]) >> 11;
      out[static_cast<std::size_t>(i)] = std::ldexp(static_cast<double>(k), -53);
    }
  }
  return out;
}

// The Box-Muller formula in long double, and the radius (for the tolerance).
template <class T>
long double normal_reference(std::uint64_t seed, porta::random::Counter at, std::int64_t i, long double* radius) {
  constexpr long double two_pi = 6.283185307179586476925286766559L;
  long double a, b;
  int which;
  if constexpr (sizeof(T) == 4) {
    const philox::Words w = words(seed, at.stream, at.offset + static_cast<std::uint64_t>(i / 4));
    const int p = static_cast<int>(i % 4) / 2;
    a = std::ldexp(static_cast<long double>(w.v[2 * p] >> 8) + 1, -24);
    b = std::ldexp(static_cast<long double>(w.v[2 * p + 1] >> 8), -24);
    which = static_cast<int>(i % 2);
  } else {
    const philox::Words w = words(seed, at.stream, at.offset + static_cast<std::uint64_t>(i / 2));
    const std::uint64_t ka = ((static_cast<std::uint64_t>(w.v[0]) << 32) | w.v[1]) >> 11;
    const std::uint64_t kb = ((static_cast<std::uint64_t>(w.v[2]) << 32) | w.v[3]) >> 11;
    a = std::ldexp(static_cast<long double>(ka) + 1, -53);
    b = std::ldexp(static_cast<long double>(kb), -53);
    which = static_cast<int>(i % 2);
  }
  const long double r = std::sqrt(-2 * std::log(a));
  *radius = r;
  return which == 0 ? r * std::cos(two_pi * b) : r * std::sin(two_pi * b);
}

template <class T>
std::vector<T> host_normals(std::uint64_t seed, porta::random::Counter at, std::int64_t n) {
  porta::random::Philox rng(seed, at.stream, at.offset);
  std::vector<T> out(static_cast<std::size_t>(n));
  for (auto& v : out) v = rng.normal<T>();
  return out;
}

std::uint64_t fresh_seed(porta_test::Rng& rng) {
  return rng.engine()();
}

}  // namespace

TEST_CASE("Philox4x32-10 gives Random123's known answers", "[random]") {
  // Random123 1.14 (D. E. Shaw Research), tests/kat_vectors, the three "philox4x32 10" lines:
  // counter (4 words), key (2 words) -> output (4 words).
  struct Kat {
    philox::Words ctr;
    std::uint32_t k0, k1;
    philox::Words out;
  };
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
      {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
       0xffffffff,
       0xffffffff,
       {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
       0xa4093822,
       0x299f31d0,
       {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
  };
  for (const Kat& k : kats) {
    const philox::Words got = philox::philox4x32_10(k.ctr, k.k0, k.k1);
    for (int j = 0; j < 4; ++j) CHECK(got.v[j] == k.out.v[j]);
  }
  // The stream layout: block b of stream s under seed k is the counter {b, s} with key k, which is
  // cuRAND's curand_init(k, s, 4b) word for word.
  const philox::Words w =
      porta::random::Philox(0x299f31d0a4093822ull, 0x0370734413198a2eull).block(0x85a308d3243f6a88ull);
  CHECK(w.v[0] == 0xd16cfe09u);
  CHECK(w.v[3] == 0x24126ea1u);
  porta::random::Philox rng(0, 0, 0);
  CHECK(rng.next_u32() == 0x6627e8d5u);
  CHECK(rng.next_u32() == 0xe169c58du);
}

TEMPLATE_TEST_CASE("random::uniform: the generator's words on every device, bit for bit", "[random]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : kSizes) {
    const std::uint64_t seed = fresh_seed(rng);
    const porta::random::Counter at{rng.engine()() % 5, rng.engine()() % 1000};
    INFO(dev.to_string() << ", n = " << n << ", seed " << seed << ", stream " << at.stream << ", offset " << at.offset);
    const std::vector<T> expect = expected_uniform<T>(seed, at, n);
    const Array<T> u = porta::random::uniform<T>(Shape{n}, seed, dev, at);
    const std::vector<T> got = u.to_vector();
    PORTA_CHECK_RESULT(porta_test::compare_exact(got, expect));
    for (T v : got) {
      if (!(v >= T(0) && v < T(1))) {
        FAIL_CHECK("outside [0, 1): " << porta_test::show(v));
        break;
      }
    }
    // In place: the same draws; the host generator draws the same values in order.
    Array<T> y = Array<T>::from(std::vector<T>(static_cast<std::size_t>(n), std::numeric_limits<T>::quiet_NaN()), dev);
    porta::random::uniform(y, seed, at);
    PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), expect));
    porta::random::Philox host(seed, at.stream, at.offset);
    std::vector<T> seq(static_cast<std::size_t>(n));
    for (auto& v : seq) v = host.uniform<T>();
    PORTA_CHECK_RESULT(porta_test::compare_exact(seq, expect));
  }
}

TEMPLATE_TEST_CASE("random::normal: porta's Box-Muller on every device, bit for bit, near the exact formula",
                   "[random]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : kSizes) {
    const std::uint64_t seed = fresh_seed(rng);
    const porta::random::Counter at{rng.engine()() % 5, rng.engine()() % 1000};
    INFO(dev.to_string() << ", n = " << n << ", seed " << seed << ", stream " << at.stream << ", offset " << at.offset);
    const std::vector<T> got = porta::random::normal<T>(Shape{n}, seed, dev, at).to_vector();
    PORTA_CHECK_RESULT(porta_test::compare_exact(got, host_normals<T>(seed, at, n)));
    // porta's log, sin and cos are a few ulp from the truth: |error| <= 16 eps (1 + r).
    for (std::int64_t i = 0; i < n; ++i) {
      long double r = 0;
      const long double want = normal_reference<T>(seed, at, i, &r);
      const long double err = std::fabs(static_cast<long double>(got[static_cast<std::size_t>(i)]) - want);
      if (!(err <= 16 * porta_test::eps<T>() * (1 + r))) {
        FAIL_CHECK("element " << i << ": " << porta_test::show(got[static_cast<std::size_t>(i)]) << ", formula "
                              << porta_test::show_ld(want) << ", radius " << porta_test::show_ld(r));
        break;
      }
    }
  }
}

TEMPLATE_TEST_CASE("random: offsets continue a draw, streams are independent, moments are right", "[random]", float,
                   double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::uint64_t seed = fresh_seed(rng);
  const std::int64_t n = 1000, skip = 37;
  const std::vector<T> whole = porta::random::normal<T>(Shape{n}, seed, dev).to_vector();
  const std::int64_t first = skip * philox::kPerBlock<T>;  // the offset counts blocks
  const std::vector<T> tail =
      porta::random::normal<T>(Shape{n - first}, seed, dev, {0, static_cast<std::uint64_t>(skip)}).to_vector();
  PORTA_CHECK_RESULT(porta_test::compare_exact(tail, std::vector<T>(whole.begin() + first, whole.end())));
  const std::vector<T> other = porta::random::normal<T>(Shape{n}, seed, dev, {1, 0}).to_vector();
  std::int64_t equal = 0;
  for (std::int64_t i = 0; i < n; ++i)
    equal += whole[static_cast<std::size_t>(i)] == other[static_cast<std::size_t>(i)];
  CHECK(equal == 0);
  CHECK(porta::random::blocks_for<float>(5) == 2);
  CHECK(porta::random::blocks_for<double>(5) == 3);
  CHECK(porta::random::blocks_for<double>(0) == 0);

  // Moments of 2^20 draws, 6 standard errors wide: mean and variance of uniform (1/2, 1/12) and
  // normal (0, 1).
  const std::int64_t m = std::int64_t(1) << 20;
  const std::vector<T> u = porta::random::uniform<T>(Shape{m}, seed, dev).to_vector();
  const std::vector<T> z = porta::random::normal<T>(Shape{m}, seed + 1, dev).to_vector();
  long double su = 0, suu = 0, sz = 0, szz = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    su += u[static_cast<std::size_t>(i)];
    suu += static_cast<long double>(u[static_cast<std::size_t>(i)]) * u[static_cast<std::size_t>(i)];
    sz += z[static_cast<std::size_t>(i)];
    szz += static_cast<long double>(z[static_cast<std::size_t>(i)]) * z[static_cast<std::size_t>(i)];
  }
  const long double se = 6 / std::sqrt(static_cast<long double>(m));
  CHECK(std::fabs(su / m - 0.5L) < se * 0.29L);
  CHECK(std::fabs(suu / m - su * su / m / m - 1.0L / 12) < se * 0.09L);
  CHECK(std::fabs(sz / m) < se);
  CHECK(std::fabs(szz / m - 1) < se * 1.42L);
}

TEST_CASE("random: empty arrays and bad arguments", "[random]") {
  const Device dev = PORTA_TEST_DEVICE();
  CHECK(porta::random::uniform<float>(Shape{0}, 1, dev).size() == 0);
  Array<double> e(Shape{2, 0}, dev);
  porta::random::normal(e, 1);
  CHECK(e.size() == 0);
  const auto two_d = porta::random::uniform<double>(Shape{3, 5}, 9, dev);
  CHECK(two_d.shape() == Shape{3, 5});
  PORTA_CHECK_RESULT(porta_test::compare_exact(two_d.to_vector(), expected_uniform<double>(9, {}, 15)));
  Array<float> moved = porta::random::uniform<float>(Shape{4}, 1, dev);
  Array<float> taken = std::move(moved);
  CHECK_THROWS_AS(porta::random::normal(moved, 1), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::random::normal(moved, 1), Contains("porta::random::normal"));
  CHECK_THROWS_WITH(porta::random::uniform<float>(Shape{-1}, 1, dev), Contains("negative dimension"));
  if (const auto other = porta_test::other_device(dev)) {
    porta::Stream s(*other);
    CHECK_THROWS_AS(porta::random::uniform(taken, 1, {}, s), porta::DeviceMismatch);
  }
}

TEMPLATE_TEST_CASE("random: the same bits under 1, 2 and 3 threads and on every device", "[random][determinism]", float,
                   double) {
  using T = TestType;
  PORTA_RNG(rng);
  const std::uint64_t seed = fresh_seed(rng);
  const std::int64_t n = 300001;
  const porta::random::Counter at{3, 12345};
  const std::vector<T> expect_u = expected_uniform<T>(seed, at, n);
  const std::vector<T> expect_z = host_normals<T>(seed, at, n);
  for (const Device dev : porta_test::test_devices()) {
    porta_test::for_each_thread_count({1, 2, 3}, [&](int threads) {
      INFO(dev.to_string() << ", " << threads << " threads");
      PORTA_CHECK_RESULT(
          porta_test::compare_exact(porta::random::uniform<T>(Shape{n}, seed, dev, at).to_vector(), expect_u));
      PORTA_CHECK_RESULT(
          porta_test::compare_exact(porta::random::normal<T>(Shape{n}, seed, dev, at).to_vector(), expect_z));
    });
  }
}

// The CPU fills 16, 8 or 4 blocks at a time (AVX-512, AVX2, SSE2: the widest the CPU has, capped by
// PORTA_CPU_RANDOM_ISA=avx2|base, which the test list also runs this file under), then block by
// block, and streams its stores past the cache from 8 MiB on. Sizes around each width, counters
// whose low word wraps inside a vector, streams with both words set, and fills large enough to
// stream, against the scalar definition.
TEMPLATE_TEST_CASE("random: every vector width, tail, counter carry and streaming fill, bit for bit", "[random]", float,
                   double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const char* cap = std::getenv("PORTA_CPU_RANDOM_ISA");
  constexpr std::int64_t per = philox::kPerBlock<T>;
  const std::int64_t big = (std::int64_t(8) << 20) / static_cast<std::int64_t>(sizeof(T)) + 3 * per + 1;
  const std::int64_t sizes[] = {4 * per - 1, 8 * per + 1,  16 * per - 1, 16 * per,   16 * per + 3, 31 * per,
                                32 * per,    45 * per + 1, 64 * per + 7, 1000 * per, 4099,         big};
  const std::uint64_t offsets[] = {0, 5, 0xFFFFFFFFull - 6, 0x1FFFFFFF8ull, ~std::uint64_t(0) - 20};
  const std::uint64_t streams[] = {0, 7, 0x0123456789ABCDEFull};
  int k = 0;
  for (std::int64_t n : sizes) {
    for (bool normal : {false, true}) {
      const std::uint64_t seed = fresh_seed(rng);
      const porta::random::Counter at{streams[k % 3], offsets[k % 5]};
      ++k;
      INFO(dev.to_string() << " (PORTA_CPU_RANDOM_ISA=" << (cap ? cap : "") << "), " << (normal ? "normal" : "uniform")
                           << ", n = " << n << ", seed " << seed << ", stream " << at.stream << ", offset "
                           << at.offset);
      const std::vector<T> got = normal ? porta::random::normal<T>(Shape{n}, seed, dev, at).to_vector()
                                        : porta::random::uniform<T>(Shape{n}, seed, dev, at).to_vector();
      const std::vector<T> expect = normal ? host_normals<T>(seed, at, n) : expected_uniform<T>(seed, at, n);
      PORTA_CHECK_RESULT(porta_test::compare_exact(got, expect));
    }
  }
}

TEST_CASE("random: filling a strided view is refused with the fix", "[random]") {
  const Device dev = PORTA_TEST_DEVICE();
  auto m = porta::random::uniform<float>(Shape{4, 3}, 5, dev);
  auto col = m.col(0);
  REQUIRE(!col.is_contiguous());
  CHECK_THROWS_AS(porta::random::normal(col, 1), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::random::normal(col, 1), Contains("porta::random::normal") && Contains("contiguous"));
}
