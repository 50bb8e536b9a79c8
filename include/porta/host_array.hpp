// SPDX-License-Identifier: Apache-2.0
// Host memory for asynchronous copies. A GPU can only copy asynchronously, and at full speed, from
// and to page-locked ("pinned") host memory; HostArray<T> gets it from the GPU plugin of the device
// it is made for, and is ordinary aligned memory for the CPU. Its copies to and from an Array are
// asynchronous on GPU streams: keep both arrays alive, and read the result only after the stream
// (or an event recorded after the copy) is synchronized.
//
//   porta::Stream s(dev);
//   porta::HostArray<float> in({n}, dev), out({n}, dev);   // pinned when dev is a GPU
//   porta::Array<float> x({n}, dev, s);
//   porta::copy(in, x, s);            // host -> device, returns at once on a GPU
//   porta::exp(x, x, s);
//   porta::copy(x, out, s);           // device -> host, returns at once on a GPU
//   s.synchronize();                  // now out holds exp(in)
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "porta/array.hpp"
#include "porta/detail/runtime.hpp"
#include "porta/device.hpp"
#include "porta/error.hpp"
#include "porta/stream.hpp"

namespace porta {

// Owning, contiguous, move-only host memory of `shape` elements; the elements are uninitialised.
template <class T>
class HostArray {
  static_assert(detail::is_supported_v<T>, "porta::HostArray supports the element types of porta::Array");

 public:
  using value_type = T;

  HostArray() noexcept = default;
  // Pinned by `device`'s backend when it is a GPU (OutOfMemory when the system refuses to pin
  // that much), ordinary aligned memory for the CPU.
  explicit HostArray(Shape shape, Device device = default_device()) : shape_(shape), device_(device) {
    data_ = static_cast<T*>(detail::host_alloc(
        device, detail::checked_bytes(shape.size(), sizeof(T), "porta::HostArray"), "porta::HostArray"));
    live_ = true;
  }
  static HostArray from(const std::vector<T>& values, Device device = default_device()) {
    HostArray a(Shape{static_cast<std::int64_t>(values.size())}, device);
    std::copy(values.begin(), values.end(), a.data_);
    return a;
  }

  HostArray(HostArray&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        shape_(std::exchange(o.shape_, Shape{})),
        device_(o.device_),
        live_(std::exchange(o.live_, false)) {}
  HostArray& operator=(HostArray&& o) noexcept {
    HostArray tmp(std::move(o));
    std::swap(data_, tmp.data_);
    std::swap(shape_, tmp.shape_);
    std::swap(device_, tmp.device_);
    std::swap(live_, tmp.live_);
    return *this;
  }
  HostArray(const HostArray&) = delete;
  HostArray& operator=(const HostArray&) = delete;
  // Frees at once: the caller must have synchronized any stream still copying from or to it.
  ~HostArray() { detail::host_free(device_, data_); }

  bool valid() const noexcept { return live_; }
  const Shape& shape() const noexcept { return shape_; }
  // 0 for a moved-from or default-constructed HostArray, whose shape is the empty (rank-0) one.
  std::int64_t size() const noexcept { return live_ ? shape_.size() : 0; }
  std::size_t nbytes() const noexcept { return static_cast<std::size_t>(size()) * sizeof(T); }
  // The device whose backend allocated the memory; pinned() when that is a GPU.
  Device device() const noexcept { return device_; }
  bool pinned() const noexcept { return live_ && device_.type != DeviceType::cpu; }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  T& operator[](std::int64_t i) noexcept { return data_[i]; }
  const T& operator[](std::int64_t i) const noexcept { return data_[i]; }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + size(); }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size(); }
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

  void check_valid(const char* fn) const {
    if (!valid()) detail::throw_moved_from(fn);
  }

 private:
  T* data_ = nullptr;
  Shape shape_{};
  Device device_{};
  bool live_ = false;
};

namespace detail {
template <class T>
void check_host_copy(const HostArray<T>& h, const Array<T>& a, const char* fn) {
  h.check_valid(fn);
  a.check_contiguous(fn, "the device array");  // a strided view: copy through a.contiguous()
  if (h.size() != a.size())
    throw_invalid(fn, ("the host array has " + std::to_string(h.size()) + " elements, the device array " +
                       std::to_string(a.size()))
                          .c_str());
}
}  // namespace detail

// host -> device, enqueued on `stream` (the placeholder: dst's default stream). Asynchronous on a
// GPU stream; on the CPU backend it is done on return. Shapes may differ; sizes must not.
template <class T>
void copy(const HostArray<T>& src, Array<T>& dst, const Stream& stream = Stream()) {
  constexpr const char* fn = "porta::copy";
  detail::check_host_copy(src, dst, fn);
  porta_stream s = detail::stream_for(stream, dst.device(), fn);
  detail::copy_from_host(dst.device(), dst.data(), src.data(), dst.nbytes(), s, false);
}

// device -> host, enqueued on `stream`; synchronize it before reading dst.
template <class T>
void copy(const Array<T>& src, HostArray<T>& dst, const Stream& stream = Stream()) {
  constexpr const char* fn = "porta::copy";
  detail::check_host_copy(dst, src, fn);
  porta_stream s = detail::stream_for(stream, src.device(), fn);
  detail::copy_to_host(src.device(), src.data(), dst.data(), src.nbytes(), s, false);
}

}  // namespace porta
