// SPDX-License-Identifier: Apache-2.0
// Eight host threads using porta at once on one device, each on its own stream: every result must
// be right. Also built with ThreadSanitizer in CI (scripts/test.sh, the tsan preset), which checks
// the runtime's own synchronization (plugin loading, the pools, error state, caches).
#include <atomic>
#include <cmath>
#include <cstdint>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "support/support.hpp"

namespace {

// Catch2's assertions are not thread-safe: workers return what went wrong, the main thread checks.
std::string worker(porta::Device dev, int id, const porta::Array<double>& shared, const std::vector<double>& shared_h,
                   int iterations) {
  const std::string tag = "threads:" + std::to_string(id);
  porta_test::Rng rng(tag.c_str());
  porta::Stream s(dev);
  for (int it = 0; it < iterations; ++it) {
    const std::int64_t n = 1000 + 4099 * id + 17 * it;  // different sizes: different pool classes
    const auto hx = porta_test::nonzero<double>(rng, n);
    const auto hy = porta_test::nonzero<double>(rng, n);
    const double a = rng.uniform<double>(-2.0, 2.0);

    porta::HostArray<double> in = porta::HostArray<double>::from(hx, dev);
    porta::Array<double> x({n}, dev, s);
    porta::copy(in, x, s);
    auto y = porta::Array<double>::from(hy.data(), porta::Shape{n}, dev, s);
    porta::axpy(a, x, y, s);                     // y = a x + y
    const double d = porta::dot(x, y, s);        // on the host when it returns
    const double total = porta::sum(shared, s);  // every thread reads one array
    const std::int64_t m = 24 + id;
    auto A = porta::Array<double>::from(std::vector<double>(hx.begin(), hx.begin() + m * 16), porta::Shape{m, 16}, dev);
    auto B = porta::Array<double>::from(std::vector<double>(hy.begin(), hy.begin() + 16 * 8), porta::Shape{16, 8}, dev);
    auto C = porta::matmul(A, B, {}, s);
    porta::HostArray<double> out({n}, dev);
    porta::copy(y, out, s);
    const auto hc = C.to_vector(s);
    s.synchronize();

    std::vector<double> ry(static_cast<std::size_t>(n));
    long double rd = 0;
    for (std::size_t i = 0; i < ry.size(); ++i) {
      ry[i] = a * hx[i] + hy[i];  // fused or not, within 1 ulp of porta's rounded product + sum
      rd += static_cast<long double>(hx[i]) * ry[i];
    }
    for (std::size_t i = 0; i < ry.size(); ++i)
      if (std::fabs(out[static_cast<std::int64_t>(i)] - ry[i]) > 4e-16 * (std::fabs(a * hx[i]) + std::fabs(hy[i])))
        return tag + " iteration " + std::to_string(it) + ": axpy element " + std::to_string(i) + " is " +
               std::to_string(out[static_cast<std::int64_t>(i)]) + ", expected " + std::to_string(ry[i]);
    long double bound = 0;
    for (std::size_t i = 0; i < ry.size(); ++i) bound += std::fabs(static_cast<long double>(hx[i]) * ry[i]);
    if (std::fabs(static_cast<long double>(d) - rd) > 1e-13L * bound)
      return tag + ": dot " + std::to_string(d) + ", expected " + std::to_string(static_cast<double>(rd));
    long double rt = 0, bt = 0;
    for (double v : shared_h) {
      rt += v;
      bt += std::fabs(v);
    }
    if (std::fabs(static_cast<long double>(total) - rt) > 1e-13L * bt)
      return tag + ": sum of the shared array " + std::to_string(total) + ", expected " +
             std::to_string(static_cast<double>(rt));
    for (std::int64_t r = 0; r < m; ++r)
      for (std::int64_t c = 0; c < 8; ++c) {
        long double ref = 0, b = 0;
        for (std::int64_t k = 0; k < 16; ++k) {
          ref += static_cast<long double>(hx[static_cast<std::size_t>(r * 16 + k)]) *
                 hy[static_cast<std::size_t>(k * 8 + c)];
          b += std::fabs(static_cast<long double>(hx[static_cast<std::size_t>(r * 16 + k)]) *
                         hy[static_cast<std::size_t>(k * 8 + c)]);
        }
        const double got = hc[static_cast<std::size_t>(r * 8 + c)];
        if (std::fabs(static_cast<long double>(got) - ref) > 1e-14L * b)
          return tag + ": matmul element (" + std::to_string(r) + ", " + std::to_string(c) + ") " +
                 std::to_string(got) + ", expected " + std::to_string(static_cast<double>(ref));
      }
  }
  return {};
}

}  // namespace

TEST_CASE("eight host threads, one device, a stream each: every result is right", "[threads]") {
  const porta::Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t n = 100003;
  const auto shared_h = porta_test::nonzero<double>(rng, n);
  const auto shared = porta::Array<double>::from(shared_h, dev);
  constexpr int kThreads = 8;
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> ready{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      // Start together, so the threads really overlap in the runtime.
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      try {
        errors[static_cast<std::size_t>(t)] = worker(dev, t, shared, shared_h, 6);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(t)] = std::string("thread ") + std::to_string(t) + " threw: " + e.what();
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    INFO(errors[static_cast<std::size_t>(t)]);
    CHECK(errors[static_cast<std::size_t>(t)].empty());
  }
}

TEST_CASE("threads that look up devices and the default device concurrently agree", "[threads]") {
  constexpr int kThreads = 8;
  std::vector<std::string> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::string s;
      for (int i = 0; i < 50; ++i) {
        s = porta::default_device().to_string();
        for (const porta::Device d : porta::devices()) s += "," + d.to_string();
      }
      seen[static_cast<std::size_t>(t)] = s;
    });
  for (auto& th : threads) th.join();
  for (int t = 1; t < kThreads; ++t) CHECK(seen[static_cast<std::size_t>(t)] == seen[0]);
}
