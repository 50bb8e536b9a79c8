// SPDX-License-Identifier: Apache-2.0
// Streams and events. Work on one stream runs in order; work on different streams of a GPU may
// overlap. On the CPU backend every call runs synchronously in the calling thread, so a CPU
// stream is always complete (docs/guide.md, "Streams, events, host memory: the execution model").
//
//   porta::Stream s(dev);
//   porta::Event start(dev), stop(dev);
//   start.record(s);
//   porta::axpy(2.0f, x, y, s);          // asynchronous on GPUs
//   stop.record(s);
//   s.synchronize();
//   float ms = porta::Event::elapsed_ms(start, stop);
#pragma once

#include <utility>

#include "porta/device.hpp"

namespace porta {

class Event;

class Stream {
 public:
  // The "use the default stream of the arrays' device" placeholder that algorithms take by
  // default; it has no device of its own.
  Stream() noexcept = default;
  // A new stream on `device`.
  explicit Stream(Device device);
  // The default stream of `device` (not owned).
  static Stream default_stream(Device device) noexcept { return Stream(device, nullptr, false); }

  Stream(Stream&& other) noexcept { swap(other); }
  Stream& operator=(Stream&& other) noexcept {
    Stream tmp(std::move(other));
    swap(tmp);
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();  // waits for pending work of an owned stream, then destroys it

  bool has_device() const noexcept { return has_device_; }
  Device device() const noexcept { return device_; }
  // cudaStream_t / hipStream_t on GPU backends (nullptr = the default stream).
  void* native_handle() const noexcept { return handle_; }

  void synchronize() const;
  bool query() const;  // true when all work is done
  void wait(const Event& event) const;

 private:
  Stream(Device d, void* h, bool owned) noexcept : device_(d), handle_(h), owned_(owned), has_device_(true) {}
  void swap(Stream& o) noexcept {
    std::swap(device_, o.device_);
    std::swap(handle_, o.handle_);
    std::swap(owned_, o.owned_);
    std::swap(has_device_, o.has_device_);
  }
  Device device_{};
  void* handle_ = nullptr;
  bool owned_ = false;
  bool has_device_ = false;
};

class Event {
 public:
  explicit Event(Device device);
  Event(Event&& other) noexcept
      : device_(other.device_), handle_(std::exchange(other.handle_, nullptr)), recorded_(other.recorded_) {}
  Event& operator=(Event&& other) noexcept {
    std::swap(device_, other.device_);
    std::swap(handle_, other.handle_);
    std::swap(recorded_, other.recorded_);
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();

  Device device() const noexcept { return device_; }
  void* native_handle() const noexcept { return handle_; }
  bool recorded() const noexcept { return recorded_; }

  // Records on `stream` (the device's default stream for a placeholder Stream). A stream of
  // another device is a DeviceMismatch.
  void record(const Stream& stream = Stream());
  void synchronize() const;  // InvalidArgument if never recorded
  bool query() const;        // InvalidArgument if never recorded
  // Milliseconds between two recorded events of one device.
  static float elapsed_ms(const Event& start, const Event& end);

 private:
  Device device_;
  void* handle_ = nullptr;
  bool recorded_ = false;
};

}  // namespace porta
