// SPDX-License-Identifier: Apache-2.0
// An allocation failure in the middle of a chain of calls: the call that could not get
// its memory throws OutOfMemory, its inputs and every earlier result are unchanged, nothing it
// allocated stays in use, and the chain goes on with correct results on the same pool.
//
// GPU devices only: on the CPU an allocation of more than the machine has may be granted by the
// kernel's overcommit and then fail only when it is touched, which no library can turn into an
// exception. Tagged [oom]: under compute-sanitizer memcheck each failed cudaMallocAsync is an API
// error on purpose, so run this executable with --report-api-errors no (docs/testing.md).
#include <cstdint>
#include <vector>

#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::Shape;

namespace {

std::uint64_t in_use(Device dev) {
  porta::synchronize(dev);  // frees are stream-ordered: count them once they are done
  return porta::memory_stats(dev).bytes_in_use;
}

// x + y on the host, from the device's own y: add is correctly rounded on every backend.
std::vector<float> host_add(const std::vector<float>& x, const std::vector<float>& y) {
  std::vector<float> z(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) z[i] = x[i] + y[i];
  return z;
}

}  // namespace

TEST_CASE("an impossible output in the middle of a chain leaves inputs and pool intact", "[faults][oom]") {
  const Device dev = PORTA_TEST_DEVICE();
  if (!dev.is_gpu()) PORTA_SKIP("GPU devices only (the CPU's overcommit makes an impossible allocation a crash)");
  PORTA_RNG(rng);
  const std::uint64_t baseline = in_use(dev);
  {
    const std::int64_t n = std::int64_t{1} << 20;
    const auto hx = porta_test::nonzero<float>(rng, n);
    const auto x = Array<float>::from(hx, dev);
    const auto y = porta::exp(x);
    const auto hy = y.to_vector();
    // 2^20 x 1 times 1 x 2^20: 4 MiB of inputs, a 4 TiB result no GPU has.
    const auto ha = porta_test::nonzero<float>(rng, n);
    const auto hb = porta_test::nonzero<float>(rng, n);
    const auto a = Array<float>::from(ha, Shape{n, 1}, dev);
    const auto b = Array<float>::from(hb, Shape{1, n}, dev);
    const std::uint64_t before = in_use(dev);
    try {
      auto c = porta::matmul(a, b);
      FAIL("matmul of a 4 TiB result returned");
    } catch (const porta::OutOfMemory& e) {
      INFO(e.what());
      CHECK(e.requested_bytes() == (std::uint64_t{1} << 40) * sizeof(float));
      CHECK(e.device() == dev);
      CHECK(e.free_bytes() < e.requested_bytes());
    }
    CHECK(in_use(dev) == before);
    // and a direct allocation of 1 PiB, between two calls of the chain
    CHECK_THROWS_AS(Array<double>(Shape{std::int64_t{1} << 47}, dev), porta::OutOfMemory);
    CHECK(in_use(dev) == before);
    // the chain goes on: same pool, right answers, inputs untouched
    const auto z = porta::add(x, y);
    PORTA_CHECK_RESULT(porta_test::compare_exact(z.to_vector(), host_add(hx, hy)));
    PORTA_CHECK_RESULT(porta_test::compare_exact(x.to_vector(), hx));
    PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), hy));
    PORTA_CHECK_RESULT(porta_test::compare_exact(a.to_vector(), ha));
    PORTA_CHECK_RESULT(porta_test::compare_exact(b.to_vector(), hb));
    // a small matmul on the same inputs' device works
    const auto c = porta::matmul(porta::ones<float>({4, 3}, dev), porta::ones<float>({3, 2}, dev));
    PORTA_CHECK_RESULT(porta_test::compare_exact(c.to_vector(), std::vector<float>(8, 3.0f)));
  }
  CHECK(in_use(dev) == baseline);
}

TEST_CASE("a device filled to the last GiB: the failing call throws, the chain resumes", "[faults][oom]") {
  const Device dev = PORTA_TEST_DEVICE();
  if (!dev.is_gpu()) PORTA_SKIP("GPU devices only (filling the CPU's memory would bring in the OOM killer)");
  PORTA_RNG(rng);
  const std::uint64_t baseline = in_use(dev);
  const std::int64_t gib_floats = std::int64_t{1} << 28;  // 1 GiB of floats
  const std::uint64_t total = porta::device_info(dev).total_memory;
  const std::int64_t cap = static_cast<std::int64_t>(total >> 30) + 8;  // never loop without end
  {
    const std::int64_t n = 1 << 16;
    const auto hx = porta_test::nonzero<float>(rng, n);
    const auto x = Array<float>::from(hx, dev);
    const auto y = porta::sin(x);
    const auto hy = y.to_vector();
    auto first = porta::full<float>({gib_floats}, 0.25f, dev);  // an input the failing call will read

    std::vector<Array<float>> hog;
    bool full = false;
    std::uint64_t asked = 0;
    for (std::int64_t i = 0; i < cap && !full; ++i) {
      try {
        hog.emplace_back(Shape{gib_floats}, dev);
      } catch (const porta::OutOfMemory& e) {
        full = true;
        asked = e.requested_bytes();
      }
    }
    INFO(hog.size() << " GiB taken before OutOfMemory, device total " << total << " bytes");
    REQUIRE(full);
    CHECK(asked == (std::uint64_t{1} << 30));
    // The device has less than 1 GiB free: a call whose output needs 2 GiB fails in the call.
    CHECK_THROWS_AS(porta::cast<double>(first), porta::OutOfMemory);
    CHECK_THROWS_AS(porta::mul(first, first), porta::OutOfMemory);
    // Give the memory back; the pool must serve the rest of the chain.
    hog.clear();
    hog.shrink_to_fit();
    const auto d = porta::cast<double>(first);  // the call that failed above
    CHECK(porta::sum(d) == 0.25 * static_cast<double>(gib_floats));
    const auto z = porta::add(x, y);
    PORTA_CHECK_RESULT(porta_test::compare_exact(z.to_vector(), host_add(hx, hy)));
    PORTA_CHECK_RESULT(porta_test::compare_exact(x.to_vector(), hx));
    PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), hy));
    CHECK(porta::max(first) == 0.25f);
    CHECK(porta::min(first) == 0.25f);
  }
  CHECK(in_use(dev) == baseline);
}
