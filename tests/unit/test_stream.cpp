// SPDX-License-Identifier: Apache-2.0
// Streams and events.
#include <utility>
#include <vector>

#include "support/support.hpp"

using porta::Device;
using porta::Event;
using porta::Stream;
using porta_test::Contains;

TEST_CASE("the placeholder stream", "[stream]") {
  const Stream s;
  CHECK_FALSE(s.has_device());
  CHECK(s.native_handle() == nullptr);
  const Stream d = Stream::default_stream(Device());
  CHECK(d.has_device());
  CHECK(d.device() == Device());
}

TEST_CASE("streams: create, work, synchronize, query, move", "[stream]") {
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  Stream s(dev);
  CHECK(s.has_device());
  CHECK(s.device() == dev);
  const auto h = porta_test::nonzero<float>(rng, 100000);
  auto x = porta::Array<float>::from(h.data(), porta::Shape{100000}, dev, s);
  auto y = porta::full<float>({100000}, 1.0f, dev, s);
  porta::axpy(2.0f, x, y, s);
  s.synchronize();
  CHECK(s.query());
  std::vector<float> ref(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) ref[i] = 2.0f * h[i] + 1.0f;
  const auto got = y.to_vector(s);
  std::vector<long double> refl(ref.begin(), ref.end());
  PORTA_CHECK_RESULT(porta_test::compare_ulps(got, refl, 2.0));
  // Moves keep the stream usable.
  Stream t = std::move(s);
  CHECK(t.has_device());
  CHECK(t.device() == dev);
  CHECK_FALSE(s.has_device());
  porta::fill(y, 3.0f, t);
  t.synchronize();
  CHECK(porta::sum(y, t) == 300000.0f);
  Stream u(dev);
  u = std::move(t);
  u.synchronize();
  // The default stream of the device
  const Stream d = Stream::default_stream(dev);
  d.synchronize();
  CHECK(d.query());
  porta::synchronize(dev);
}

TEST_CASE("events: record, synchronize, query, elapsed_ms", "[stream]") {
  const Device dev = PORTA_TEST_DEVICE();
  Stream s(dev);
  Event start(dev), stop(dev);
  CHECK(start.device() == dev);
  CHECK_FALSE(start.recorded());
  start.record(s);
  CHECK(start.recorded());
  auto a = porta::ones<double>({1 << 18}, dev);
  auto b = porta::exp(a, s);
  stop.record(s);
  stop.synchronize();
  CHECK(stop.query());
  CHECK(start.query());
  const float ms = Event::elapsed_ms(start, stop);
  CHECK(ms >= 0.0f);
  // Recording on the device's default stream (placeholder stream)
  Event e(dev);
  e.record();
  e.synchronize();
  CHECK(e.query());
  // A stream waits for an event
  Stream other(dev);
  other.wait(stop);
  other.synchronize();
  // Moving an event keeps its state
  Event m = std::move(stop);
  CHECK(m.recorded());
  CHECK(m.query());
}

TEST_CASE("events that were never recorded are InvalidArgument", "[stream][errors]") {
  const Device dev = PORTA_TEST_DEVICE();
  Event e(dev);
  CHECK_THROWS_AS(e.query(), porta::InvalidArgument);
  CHECK_THROWS_AS(e.synchronize(), porta::InvalidArgument);
  Event r(dev);
  r.record();
  CHECK_THROWS_AS(Event::elapsed_ms(e, r), porta::InvalidArgument);
  CHECK_THROWS_AS(Event::elapsed_ms(r, e), porta::InvalidArgument);
}

TEST_CASE("a stream of another device is a DeviceMismatch", "[stream][errors]") {
  const Device dev = PORTA_TEST_DEVICE();
  const auto other = porta_test::other_device(dev);
  if (!other) PORTA_SKIP("only one device on this machine: no DeviceMismatch to provoke");
  INFO(dev.to_string() << " vs " << other->to_string());
  Stream s_other(*other);
  Event e(dev);
  CHECK_THROWS_AS(e.record(s_other), porta::DeviceMismatch);
  CHECK_FALSE(e.recorded());
  auto x = porta::ones<float>({16}, dev);
  auto y = porta::ones<float>({16}, dev);
  CHECK_THROWS_AS(porta::axpy(2.0f, x, y, s_other), porta::DeviceMismatch);
  CHECK_THROWS_AS(porta::sum(x, s_other), porta::DeviceMismatch);
  CHECK_THROWS_AS(porta::Array<float>(porta::Shape{4}, dev, s_other), porta::DeviceMismatch);
  CHECK_THROWS_AS(porta::full<float>({4}, 1.0f, dev, s_other), porta::DeviceMismatch);
  PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), std::vector<float>(16, 1.0f)));
  Event a(dev), b(*other);
  a.record();
  b.record();
  CHECK_THROWS_AS(Event::elapsed_ms(a, b), porta::Error);
}
