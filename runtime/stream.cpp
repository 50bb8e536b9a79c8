// SPDX-License-Identifier: Apache-2.0
// porta::Stream and porta::Event over the backend table.
#include <cstdint>
#include <string>

#include "porta/debug.hpp"
#include "porta/detail/runtime.hpp"
#include "porta/detail/tools.hpp"
#include "porta/error.hpp"
#include "porta/stream.hpp"
#include "runtime/registry.hpp"

namespace porta {
namespace {

porta_stream native(const Stream& s) {
  return static_cast<porta_stream>(s.native_handle());
}
porta_event native(const Event& e) {
  return static_cast<porta_event>(e.native_handle());
}

void require_device(const Stream& s, const char* fn) {
  if (!s.has_device())
    detail::throw_invalid(fn,
                          "this is the placeholder Stream(), which has no device; use Stream(device) or "
                          "Stream::default_stream(device)");
}

void require_event(const Event& e, const char* fn) {
  if (e.native_handle() == nullptr) detail::throw_invalid(fn, "the event was moved from");
  if (!e.recorded()) detail::throw_invalid(fn, "the event was never recorded");
}

}  // namespace

Stream::Stream(Device device) : device_(device), has_device_(true) {
  constexpr const char* fn = "porta::Stream";
  const porta_backend_v1& t = detail::backend_for(device, fn);
  porta_stream h = nullptr;
  detail::check(t.stream_create(device.index, &h), fn, device);
  handle_ = h;
  owned_ = true;
}

Stream::~Stream() {
  // A backend may represent a stream by NULL (the CPU runs everything in the calling thread);
  // there is nothing to destroy then.
  if (!owned_ || handle_ == nullptr) return;
  try {
    const porta_backend_v1& t = detail::backend_for(device_, nullptr);
    (void)t.stream_destroy(device_.index, native(*this));
    (void)detail::take_missing_entry();
  } catch (...) {
  }
}

void Stream::synchronize() const {
  constexpr const char* fn = "porta::Stream::synchronize";
  require_device(*this, fn);
  const porta_backend_v1& t = detail::backend_for(device_, fn);
  const std::uint64_t fence = detail::tools::active() ? detail::tools::begin_fence(fn, device_) : 0;
  const porta_status st = t.stream_synchronize(device_.index, native(*this));
  if (fence != 0) detail::tools::end_fence(fence);
  detail::check(st, fn, device_);
  detail::raise_kernel_faults(device_, fn);
}

bool Stream::query() const {
  constexpr const char* fn = "porta::Stream::query";
  require_device(*this, fn);
  const porta_backend_v1& t = detail::backend_for(device_, fn);
  int done = 0;
  detail::check(t.stream_query(device_.index, native(*this), &done), fn, device_);
  return done != 0;
}

void Stream::wait(const Event& event) const {
  constexpr const char* fn = "porta::Stream::wait";
  // The placeholder stands for the default stream of the event's device.
  const Device dev = has_device_ ? device_ : event.device();
  if (event.device() != dev)
    throw DeviceMismatch(std::string(fn) + ": stream is on " + dev.to_string() + ", the event on " +
                         event.device().to_string());
  if (event.native_handle() == nullptr) detail::throw_invalid(fn, "the event was moved from");
  // As cudaStreamWaitEvent: waiting for an event that was never recorded waits for nothing.
  if (!event.recorded()) return;
  const porta_backend_v1& t = detail::backend_for(dev, fn);
  detail::check(t.stream_wait_event(dev.index, native(*this), native(event)), fn, dev);
}

Event::Event(Device device) : device_(device) {
  constexpr const char* fn = "porta::Event";
  const porta_backend_v1& t = detail::backend_for(device, fn);
  porta_event h = nullptr;
  detail::check(t.event_create(device.index, &h), fn, device);
  if (h == nullptr)
    throw BackendError(std::string(fn) + ": the " + to_string(device.type) + " backend returned no event");
  handle_ = h;
}

Event::~Event() {
  if (handle_ == nullptr) return;
  try {
    const porta_backend_v1& t = detail::backend_for(device_, nullptr);
    (void)t.event_destroy(device_.index, native(*this));
    (void)detail::take_missing_entry();
  } catch (...) {
  }
}

void Event::record(const Stream& stream) {
  constexpr const char* fn = "porta::Event::record";
  if (handle_ == nullptr) detail::throw_invalid(fn, "the event was moved from");
  if (stream.has_device() && stream.device() != device_)
    throw DeviceMismatch(std::string(fn) + ": stream is on " + stream.device().to_string() + ", the event on " +
                         device_.to_string());
  const porta_backend_v1& t = detail::backend_for(device_, fn);
  detail::check(t.event_record(device_.index, native(*this), native(stream)), fn, device_);
  recorded_ = true;
}

void Event::synchronize() const {
  constexpr const char* fn = "porta::Event::synchronize";
  require_event(*this, fn);
  const porta_backend_v1& t = detail::backend_for(device_, fn);
  const std::uint64_t fence = detail::tools::active() ? detail::tools::begin_fence(fn, device_) : 0;
  const porta_status st = t.event_synchronize(device_.index, native(*this));
  if (fence != 0) detail::tools::end_fence(fence);
  detail::check(st, fn, device_);
  detail::raise_kernel_faults(device_, fn);
}

bool Event::query() const {
  constexpr const char* fn = "porta::Event::query";
  require_event(*this, fn);
  const porta_backend_v1& t = detail::backend_for(device_, fn);
  int done = 0;
  detail::check(t.event_query(device_.index, native(*this), &done), fn, device_);
  return done != 0;
}

float Event::elapsed_ms(const Event& start, const Event& end) {
  constexpr const char* fn = "porta::Event::elapsed_ms";
  require_event(start, fn);
  require_event(end, fn);
  if (start.device() != end.device())
    throw DeviceMismatch(std::string(fn) + ": start is on " + start.device().to_string() + ", end on " +
                         end.device().to_string());
  const porta_backend_v1& t = detail::backend_for(start.device(), fn);
  float ms = 0.0f;
  detail::check(t.event_elapsed_ms(start.device().index, native(start), native(end), &ms), fn, start.device());
  return ms;
}

}  // namespace porta
