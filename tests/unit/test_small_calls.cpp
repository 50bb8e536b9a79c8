// SPDX-License-Identifier: Apache-2.0
// The host path of a full reduction's value (small calls; algorithms/common.hpp's
// read_device_scalar): on the CPU and on GPUs it allocates no device memory (the CPU's entry writes
// the caller's variable, a GPU's kernel the thread's pinned buffer), cpu:strict takes device
// scratch and frees it. The pinned buffer is per thread and reused by every call, so these tests
// reuse it hard: threads at once, streams of one thread one after the other, and several devices.
// The values are small integers, so every sum is exact and compared exactly.
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::Shape;

namespace {

// Small integers as T: exact sums in every dtype at these lengths.
template <class T>
std::vector<T> small_ints(porta_test::Rng& rng, std::int64_t n) {
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& e : v) e = static_cast<T>(rng.uniform<int>(-8, 8));
  return v;
}

template <class T>
T host_sum(const std::vector<T>& v) {
  double s = 0;
  for (T e : v) s += static_cast<double>(e);
  return static_cast<T>(s);
}

}  // namespace

TEMPLATE_TEST_CASE("full reductions return their value without allocating device memory", "[reduce][small-calls]",
                   float, double, std::int32_t, std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{1024}, std::int64_t{100003}}) {
    INFO("n = " << n);
    const auto h = small_ints<T>(rng, n);
    const auto w = small_ints<T>(rng, n);
    auto x = Array<T>::from(h, Shape{n}, dev);
    auto y = Array<T>::from(w, Shape{n}, dev);
    porta::synchronize(dev);
    const porta::MemoryStats before = porta::memory_stats(dev);
    T dot_ref = 0, max_ref = h[0];
    for (std::size_t i = 0; i < h.size(); ++i) {
      dot_ref = static_cast<T>(dot_ref + h[i] * w[i]);
      if (h[i] > max_ref) max_ref = h[i];
    }
    CHECK(porta::sum(x) == host_sum(h));
    CHECK(porta::dot(x, y) == dot_ref);
    CHECK(porta::max(x) == max_ref);
    porta::synchronize(dev);
    const porta::MemoryStats after = porta::memory_stats(dev);
    CHECK(after.bytes_in_use == before.bytes_in_use);
    if (dev.is_strict()) {
      CHECK(after.alloc_count > before.alloc_count);  // stream-ordered device scratch, freed again
    } else {
      CHECK(after.alloc_count == before.alloc_count);
    }
  }
}

TEST_CASE("full reductions from many threads at once, each with its own stream", "[reduce][small-calls][threads]") {
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  constexpr int kThreads = 8, kCalls = 50;
  std::vector<std::vector<float>> data;
  for (int t = 0; t < kThreads; ++t) data.push_back(small_ints<float>(rng, 1000 + 37 * t));
  std::vector<int> wrong(kThreads, 0);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        porta::Stream s(dev);
        auto x = Array<float>::from(data[t], Shape{static_cast<std::int64_t>(data[t].size())}, dev);
        const float want = host_sum(data[t]);
        for (int k = 0; k < kCalls; ++k) {
          // odd calls on the thread's stream, even ones on the default stream: the same buffer
          if (((k & 1) ? porta::sum(x, s) : porta::sum(x)) != want) ++wrong[t];
        }
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread " << t);
    CHECK(errors[t].empty());
    CHECK(wrong[t] == 0);
  }
}

TEST_CASE("a small reduction right after long work on another stream reads its own value",
          "[reduce][small-calls][stream]") {
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  porta::Stream busy(dev), other(dev);
  const std::int64_t big = std::int64_t{1} << 22;
  const auto hb = small_ints<float>(rng, big);
  const auto hs = small_ints<float>(rng, 1024);
  auto b = Array<float>::from(hb, Shape{big}, dev);
  auto s = Array<float>::from(hs, Shape{1024}, dev);
  porta::synchronize(dev);
  const float want_b = host_sum(hb), want_s = host_sum(hs);
  for (int k = 0; k < 5; ++k) {
    // queued work on `busy` that the reduction on `other` does not wait for
    auto b2 = b * 1.0f;
    auto b3 = b2 + 0.0f;
    (void)b3;
    CHECK(porta::sum(s, other) == want_s);
    CHECK(porta::sum(b, busy) == want_b);
    CHECK(porta::sum(s, other) == want_s);
  }
}

TEST_CASE("small reductions alternate between every device from one thread", "[reduce][small-calls][devices]") {
  PORTA_RNG(rng);
  const auto& devs = porta_test::test_devices();
  std::vector<Array<std::int64_t>> xs;
  std::vector<std::int64_t> want;
  for (const Device& d : devs) {
    const auto h = small_ints<std::int64_t>(rng, 777);
    xs.push_back(Array<std::int64_t>::from(h, Shape{777}, d));
    want.push_back(host_sum(h));
  }
  for (int round = 0; round < 10; ++round)
    for (std::size_t i = 0; i < devs.size(); ++i) {
      INFO(devs[i].to_string() << ", round " << round);
      CHECK(porta::sum(xs[i]) == want[i]);
      CHECK(porta::argmax(xs[i]) >= 0);
    }
}
