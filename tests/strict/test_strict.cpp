// SPDX-License-Identifier: Apache-2.0
// cpu:strict's own rules (docs/strict.md): its name, that it is never chosen by itself, that its
// work completes only at a synchronize, and that it refuses what would only work where device
// memory is host memory. The faults themselves end a process: tests/strict/mistakes.cpp.
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "porta/detail/math.hpp"
#include "porta/host_array.hpp"
#include "porta/kernels.hpp"
#include "support/support.hpp"

using porta::Device;
using porta_test::Contains;

namespace {
const Device kStrict = Device::cpu_strict();
}

TEST_CASE("cpu:strict: its name, and never chosen by itself", "[strict]") {
  CHECK(Device::parse("cpu:strict") == kStrict);
  CHECK(kStrict.to_string() == "cpu:strict");
  CHECK(kStrict.is_strict());
  CHECK_FALSE(kStrict.is_gpu());
  CHECK_FALSE(Device::parse("cpu").is_strict());
  CHECK(porta::select_device("cpu:strict") == kStrict);
  CHECK(porta::is_available(kStrict));
  for (const char* bad : {"cpu:Strict", "cpu:strictx", "cpu:strict:0", "strict", "cuda:strict"})
    CHECK_THROWS_AS(Device::parse(bad), porta::InvalidArgument);
  CHECK_THROWS_WITH(Device::parse("cpu:STRICT"), Contains("lower case"));
  CHECK_THROWS_WITH(Device::parse("nonsense"), Contains("cpu:strict"));  // listed among the forms
  // A mode of the CPU, not a device of the machine: not in devices(), never the default.
  for (const Device& d : porta::devices()) CHECK_FALSE(d.is_strict());
  CHECK_FALSE(porta::select_device("auto").is_strict());
  CHECK(porta::describe(kStrict).rfind("cpu:strict ", 0) == 0);
  // The neighbours stay what they were.
  CHECK_THROWS_AS(porta::Array<float>({4}, Device(porta::DeviceType::cpu, 1)), porta::Unavailable);
}

TEST_CASE("cpu:strict: work completes at synchronize, in order", "[strict][stream]") {
  PORTA_RNG(rng);
  const std::int64_t n = 5000;
  const auto hx = porta_test::nonzero<double>(rng, n);
  porta::Stream s(kStrict);
  auto x = porta::Array<double>::from(hx.data(), porta::Shape{n}, kStrict, s);
  auto y = porta::exp(x, s);
  porta::HostArray<double> h({n}, kStrict);
  for (std::int64_t i = 0; i < n; ++i) h[i] = -1.0;  // not written: the copy has not been queued yet
  porta::copy(y, h, s);
  porta::Event e(kStrict);
  e.record(s);
  // Queued, not run: the first query says so (and runs it, so that a polling loop ends).
  CHECK_THROWS_WITH(porta::Event::elapsed_ms(e, e), Contains("has not completed"));
  CHECK_FALSE(s.query());
  CHECK(s.query());
  CHECK(e.query());
  for (std::int64_t i = 0; i < n; ++i) {
    INFO("i = " << i);
    REQUIRE(h[i] == porta::detail::math::exp(hx[static_cast<std::size_t>(i)]));  // the CPU's exp
  }
  CHECK(porta::Event::elapsed_ms(e, e) == 0.0f);
}

TEST_CASE("cpu:strict: events order the streams' work", "[strict][stream]") {
  porta::Stream a(kStrict), b(kStrict);
  auto x = porta::full<float>({1000}, 2.0f, kStrict, a);
  porta::Event done(kStrict);
  done.record(a);
  CHECK_FALSE(done.query());
  done.synchronize();
  CHECK(done.query());
  b.wait(done);
  auto y = porta::sqrt(x, b);
  const std::vector<float> got = y.to_vector(b);
  for (float v : got) REQUIRE(v == std::sqrt(2.0f));
}

TEST_CASE("cpu:strict: user kernels are queued like launches", "[strict][kernels]") {
  porta::Stream s(kStrict);
  auto x = porta::full<std::int64_t>({300}, 0, kStrict, s);
  auto xv = x.view();
  porta::parallel_for(
      kStrict, 300, PORTA_LAMBDA(std::int64_t i) { xv[i] = 3 * i; }, s);
  CHECK_FALSE(s.query());
  porta::parallel_for(
      kStrict, porta::range(10, 30), PORTA_LAMBDA(std::int64_t i, std::int64_t j) { xv[i * 30 + j] += 1; }, s);
  auto y = porta::empty<std::int64_t>({300}, kStrict);
  porta::map(
      s, y, PORTA_LAMBDA(std::int64_t v) { return v * 2; }, x);
  // transform_reduce needs its value now: everything queued on s runs first.
  const std::int64_t total = porta::transform_reduce(
      kStrict, 300, std::int64_t{0}, porta::plus{}, PORTA_LAMBDA(std::int64_t i) { return xv[i]; }, s);
  std::int64_t want = 0;
  for (std::int64_t i = 0; i < 300; ++i) want += 3 * i + 1;
  CHECK(total == want);
  const auto got = y.to_vector();
  for (std::int64_t i = 0; i < 300; ++i) REQUIRE(got[static_cast<std::size_t>(i)] == 2 * (3 * i + 1));
}

TEST_CASE("cpu:strict: a kernel that throws is reported by the next synchronize", "[strict][kernels][errors]") {
  porta::Stream s(kStrict);
  auto x = porta::full<float>({100}, 0.0f, kStrict, s);
  porta::parallel_for(
      kStrict, 100,
      [](std::int64_t i) {
        if (i == 42) throw std::runtime_error("bad index 42");
      },
      s);
  CHECK_THROWS_WITH(s.synchronize(), Contains("porta::parallel_for threw bad index 42"));
  s.synchronize();  // reported once; the stream is usable again
  CHECK(porta::sum(x, s) == 0.0f);
}

TEST_CASE("cpu:strict: what only works where device memory is host memory is refused", "[strict][errors]") {
  auto x = porta::zeros<float>({16}, kStrict);
  std::vector<float> host(16, 1.0f);
  // Host memory where device memory belongs: a copy of the wrong kind, as cudaMemcpy refuses.
  CHECK_THROWS_WITH(porta::detail::copy_from_host(kStrict, host.data(), x.data(), 64, nullptr, true),
                    Contains("not (all) device memory of cpu:strict"));
  CHECK_THROWS_WITH(porta::detail::copy_to_host(kStrict, host.data(), x.data(), 64, nullptr, true),
                    Contains("device memory of cpu:strict"));
  // Past the end of the block.
  CHECK_THROWS_WITH(porta::detail::copy_to_host(kStrict, x.data(), host.data(), 128, nullptr, true),
                    Contains("not (all) device memory"));
  // Memory porta did not allocate cannot become a strict Array.
  CHECK_THROWS_WITH(porta::Array<float>::borrow(host.data(), {16}, kStrict, nullptr),
                    Contains("cpu:strict can only borrow its own device memory"));
  auto again = porta::Array<float>::borrow(x.data() + 4, {12}, kStrict, nullptr);  // its own memory: fine
  CHECK(again.to_vector() == std::vector<float>(12, 0.0f));
  // Copies with cpu go through the copy entries, both ways.
  auto c = x.to(Device::parse("cpu"));
  auto back = c.to(kStrict);
  CHECK(back.to_vector() == std::vector<float>(16, 0.0f));
}

TEST_CASE("cpu:strict: memory_stats count a free when it is asked for", "[strict][memory]") {
  const porta::MemoryStats s0 = porta::memory_stats(kStrict);
  {
    porta::Stream s(kStrict);
    auto a = porta::full<double>({1 << 16}, 1.0, kStrict, s);
    const porta::MemoryStats s1 = porta::memory_stats(kStrict);
    CHECK(s1.bytes_in_use == s0.bytes_in_use + a.nbytes());
    CHECK(s1.bytes_reserved >= s1.bytes_in_use);
    CHECK(s1.peak_bytes_in_use >= s1.bytes_in_use);
  }
  CHECK(porta::memory_stats(kStrict).bytes_in_use == s0.bytes_in_use);
}

TEST_CASE("cpu:strict: frees still queued do not exhaust its blocks", "[strict][memory]") {
  // More arrays made and dropped without a synchronize than cpu:strict tracks at once (16384): the
  // frees wait in the queue, and an allocation short of blocks runs it, as a GPU's pool reclaims
  // the blocks of completed frees.
  porta::Stream s(kStrict);
  for (int i = 0; i < 20000; ++i) {
    INFO("array " << i);
    auto a = porta::full<float>({4}, static_cast<float>(i), kStrict, s);
  }
  auto last = porta::full<float>({4}, 2.5f, kStrict, s);
  CHECK(last.to_vector(s) == std::vector<float>(4, 2.5f));
}
