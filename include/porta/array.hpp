// SPDX-License-Identifier: Apache-2.0
// Arrays that live on a device: owning, contiguous, row-major, up to 4-D, move-only.
//
//   std::vector<float> h(1000, 1.0f);
//   auto x = porta::Array<float>::from(h, dev);          // host -> device
//   auto y = porta::full<float>({1000}, 2.0f, dev);
//   auto m = porta::zeros<double>({3, 4}, dev);           // 3 rows, 4 columns
//   std::vector<float> back = y.to_vector();              // device -> host (synchronizes)
//   auto z = y.clone();                                   // copies; Array itself is move-only
//   auto c = y.to(porta::Device::parse("cpu"));           // copy to another device
//
// Device memory comes from the backend's stream-ordered pool, so allocating temporaries in a loop
// does not call the driver each time.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "porta/detail/config.hpp"
#include "porta/detail/runtime.hpp"
#include "porta/device.hpp"
#include "porta/error.hpp"
#include "porta/stream.hpp"

namespace porta {

class Shape {
 public:
  static constexpr int kMaxRank = 4;

  Shape() noexcept = default;  // rank 0: one element
  // InvalidArgument for a rank above 4, a negative dimension, or dimensions whose product overflows
  // a 64-bit integer. As in NumPy, zero dimensions do not excuse the others: {2^32, 2^32, 0} is
  // rejected too, so that every sub-product (a matmul result, the outer and inner extents of an
  // axis reduction, a reshape) of a valid Shape is itself valid and size() never overflows.
  Shape(std::initializer_list<std::int64_t> dims) {
    if (dims.size() > static_cast<std::size_t>(kMaxRank)) detail::throw_invalid("porta::Shape", "rank above 4");
    std::int64_t nonzero = 1;
    bool overflow = false;
    for (std::int64_t d : dims) {
      if (d < 0)
        detail::throw_invalid(
            "porta::Shape",
            ("negative dimension " + std::to_string(d) + " (dimension " + std::to_string(rank_) + ")").c_str());
      if (d > 0) {
        overflow = overflow || nonzero > std::numeric_limits<std::int64_t>::max() / d;
        if (!overflow) nonzero *= d;
      }
      dims_[static_cast<std::size_t>(rank_++)] = d;
    }
    if (overflow)
      detail::throw_invalid("porta::Shape", (to_string() + " has more elements than a 64-bit integer counts (the "
                                                           "product of its dimensions exceeds 2^63 - 1)")
                                                .c_str());
  }
  int rank() const noexcept { return rank_; }
  std::int64_t operator[](int i) const noexcept { return dims_[static_cast<std::size_t>(i)]; }
  // Cannot overflow: the constructor checked the product.
  std::int64_t size() const noexcept {
    std::int64_t n = 1;
    for (int i = 0; i < rank_; ++i) n *= dims_[static_cast<std::size_t>(i)];
    return n;
  }
  // "3x4"; "scalar" for rank 0
  std::string to_string() const {
    if (rank_ == 0) return "scalar";
    std::string s;
    for (int i = 0; i < rank_; ++i) s += (i ? "x" : "") + std::to_string(dims_[static_cast<std::size_t>(i)]);
    return s;
  }
  friend bool operator==(const Shape& a, const Shape& b) noexcept {
    if (a.rank_ != b.rank_) return false;
    for (int i = 0; i < a.rank_; ++i)
      if (a[i] != b[i]) return false;
    return true;
  }
  friend bool operator!=(const Shape& a, const Shape& b) noexcept { return !(a == b); }

 private:
  std::array<std::int64_t, kMaxRank> dims_{};
  int rank_ = 0;
};

// A trivially copyable window on an Array's memory for kernels: pass it by value into
// PORTA_LAMBDA bodies. Valid while the Array lives; dereference only on the Array's device.
template <class T>
struct View {
  T* data = nullptr;
  std::int64_t size = 0;
  std::int64_t rows = 1;  // 2-D helpers: a rank-2 array is rows x cols; other ranks: 1 x size
  std::int64_t cols = 0;

  PORTA_HOST_DEVICE T& operator[](std::int64_t i) const { return data[i]; }
  PORTA_HOST_DEVICE T& operator()(std::int64_t r, std::int64_t c) const { return data[r * cols + c]; }
};

template <class T>
class Array {
  static_assert(detail::is_supported_v<T>, "porta::Array supports float, double, std::int32_t and std::int64_t");

 public:
  using value_type = T;

  // A null array (as after a move): every use other than assignment is an InvalidArgument.
  Array() noexcept = default;

  // Uninitialised storage of `shape` on `device`.
  explicit Array(Shape shape, Device device = default_device(), const Stream& stream = Stream())
      : shape_(shape), device_(device) {
    const std::size_t bytes = detail::checked_bytes(shape.size(), sizeof(T), "porta::Array");
    porta_stream s = detail::stream_for(stream, device, "porta::Array");
    data_ = static_cast<T*>(detail::device_alloc(device, bytes, s, "porta::Array"));
    live_ = true;
  }

  static Array from(const std::vector<T>& host, Device device = default_device()) {
    return from(host.data(), Shape{static_cast<std::int64_t>(host.size())}, device);
  }
  static Array from(const std::vector<T>& host, Shape shape, Device device = default_device()) {
    if (shape.size() != static_cast<std::int64_t>(host.size()))
      detail::throw_invalid("porta::Array::from",
                            ("shape " + shape.to_string() + " holds " + std::to_string(shape.size()) +
                             " elements, the vector " + std::to_string(host.size()))
                                .c_str());
    return from(host.data(), shape, device);
  }
  // Copies shape.size() elements from host memory.
  static Array from(const T* host, Shape shape, Device device = default_device(), const Stream& stream = Stream()) {
    Array a(shape, device, stream);
    a.copy_from_host(host, stream);
    return a;
  }
  // Wraps memory that porta did not allocate (a DLPack tensor of NumPy, PyTorch or CuPy, a buffer
  // of the user's own CUDA code) without copying: `data` holds shape.size() contiguous row-major
  // elements on `device`. porta never frees it; `keep_alive` (which may be null when the caller
  // guarantees the lifetime) is released with the last Array it moved into, without waiting for
  // work still queued on the memory: synchronize first where the owner may reuse it.
  static Array borrow(T* data, Shape shape, Device device, std::shared_ptr<void> keep_alive) {
    Array a;
    a.data_ = data;
    a.shape_ = shape;
    a.device_ = device;
    a.live_ = true;
    a.borrowed_ = true;
    a.keep_alive_ = std::move(keep_alive);
    return a;
  }
  bool borrowed() const noexcept { return borrowed_; }

  Array(Array&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        shape_(std::exchange(o.shape_, Shape())),
        device_(o.device_),
        live_(std::exchange(o.live_, false)),
        borrowed_(std::exchange(o.borrowed_, false)),
        keep_alive_(std::move(o.keep_alive_)) {}
  Array& operator=(Array&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      shape_ = std::exchange(o.shape_, Shape());
      device_ = o.device_;
      live_ = std::exchange(o.live_, false);
      borrowed_ = std::exchange(o.borrowed_, false);
      keep_alive_ = std::move(o.keep_alive_);
    }
    return *this;
  }
  // Move-only. A kernel (PORTA_LAMBDA) that names an Array tries to copy it: capture x.view() instead;
  // for a copy of the data, x.clone().
  Array(const Array&) = delete;  // in a kernel, capture x.view(), not the Array
  Array& operator=(const Array&) = delete;
  ~Array() { release(); }

  bool valid() const noexcept { return live_; }
  explicit operator bool() const noexcept { return valid(); }

  const Shape& shape() const noexcept { return shape_; }
  int rank() const noexcept { return shape_.rank(); }
  std::int64_t dim(int i) const noexcept { return shape_[i]; }
  std::int64_t size() const noexcept { return valid() ? shape_.size() : 0; }
  std::size_t nbytes() const noexcept { return static_cast<std::size_t>(shape_.size()) * sizeof(T); }
  Device device() const noexcept { return device_; }
  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }

  // Throws InvalidArgument naming `fn` if this array was moved from.
  void check_valid(const char* fn) const {
    if (!valid()) detail::throw_moved_from(fn);
  }

  // Device -> host; waits for the copy (and the stream's earlier work).
  std::vector<T> to_vector(const Stream& stream = Stream()) const {
    check_valid("porta::Array::to_vector");
    std::vector<T> out(static_cast<std::size_t>(size()));
    copy_to_host(out.data(), stream);
    return out;
  }
  void copy_to_host(T* host, const Stream& stream = Stream()) const {
    check_valid("porta::Array::copy_to_host");
    porta_stream s = detail::stream_for(stream, device_, "porta::Array::copy_to_host");
    detail::copy_to_host(device_, data_, host, nbytes(), s, true);
  }
  void copy_from_host(const T* host, const Stream& stream = Stream()) {
    check_valid("porta::Array::copy_from_host");
    porta_stream s = detail::stream_for(stream, device_, "porta::Array::copy_from_host");
    detail::copy_from_host(device_, data_, host, nbytes(), s, true);
  }

  // A copy on `device` (the same device gives a clone).
  Array to(Device device, const Stream& stream = Stream()) const {
    check_valid("porta::Array::to");
    const Stream placeholder;  // both branches lvalues: Stream is move-only, a prvalue would be copied
    Array out(shape_, device, device == device_ ? stream : placeholder);
    porta_stream s = detail::stream_for(stream, device_, "porta::Array::to");
    detail::copy_between(device, out.data_, device_, data_, nbytes(), s);
    return out;
  }
  Array clone(const Stream& stream = Stream()) const { return to(device_, stream); }

  // Same elements, new shape of the same size.
  void reshape(Shape shape) {
    check_valid("porta::Array::reshape");
    if (shape.size() != shape_.size())
      detail::throw_invalid("porta::Array::reshape",
                            ("cannot reshape " + shape_.to_string() + " (" + std::to_string(shape_.size()) +
                             " elements) to " + shape.to_string())
                                .c_str());
    shape_ = shape;
  }
  Array reshaped(Shape shape) && {
    reshape(shape);
    return std::move(*this);
  }

  View<T> view() {
    check_valid("porta::Array::view");
    return make_view<T>(data_);
  }
  View<const T> view() const {
    check_valid("porta::Array::view");
    return make_view<const T>(data_);
  }

 private:
  template <class U>
  View<U> make_view(U* p) const {
    View<U> v;
    v.data = p;
    v.size = shape_.size();
    if (shape_.rank() == 2) {
      v.rows = shape_[0];
      v.cols = shape_[1];
    } else {
      v.rows = 1;
      v.cols = v.size;
    }
    return v;
  }
  void release() noexcept {
    if (data_ && !borrowed_) detail::device_free(device_, data_, nullptr);
    keep_alive_.reset();
    borrowed_ = false;
    data_ = nullptr;
    live_ = false;
  }

  T* data_ = nullptr;
  Shape shape_{};
  Device device_{};
  bool live_ = false;      // zero-element arrays own no memory but are valid until moved from
  bool borrowed_ = false;  // made by borrow(): data_ is not porta's to free
  std::shared_ptr<void> keep_alive_;
};

// Factories. `device` defaults to default_device().
template <class T>
Array<T> empty(Shape shape, Device device = default_device()) {
  return Array<T>(shape, device);
}
template <class T>
Array<T> full(Shape shape, T value, Device device = default_device(), const Stream& stream = Stream()) {
  Array<T> a(shape, device, stream);
  detail::fill(device, detail::dtype_of<T>(), a.size(), detail::to_scalar(value), a.data(),
               detail::stream_for(stream, device, "porta::full"));
  return a;
}
template <class T>
Array<T> zeros(Shape shape, Device device = default_device()) {
  return full<T>(shape, T(0), device);
}
template <class T>
Array<T> ones(Shape shape, Device device = default_device()) {
  return full<T>(shape, T(1), device);
}
namespace detail {

// The length of arange(start, stop, step): NumPy's ceil((stop - start) / step), exact for integers
// (a double would drop the last units above 2^53). Where that is not a length, an InvalidArgument
// naming arange and the cause, not a float-to-integer conversion that C++ leaves undefined: a NaN
// (NumPy: "cannot compute length") or infinite argument, or more elements than an int64 counts.
template <class T>
std::int64_t arange_length(T start, T stop, T step) {
  constexpr const char* fn = "porta::arange";
  if (step == T(0)) throw_invalid(fn, "step is zero");
  if constexpr (std::is_floating_point_v<T>) {
    const char* names[] = {"start", "stop", "step"};
    const T values[] = {start, stop, step};
    for (int i = 0; i < 3; ++i) {
      if (std::isnan(values[i]))
        throw_invalid(fn, (std::string(names[i]) + " is NaN: the length is undefined").c_str());
      if (std::isinf(values[i]))
        throw_invalid(fn, (std::string(names[i]) + " is " + (values[i] > 0 ? "inf" : "-inf") +
                           ": start, stop and step must be finite")
                              .c_str());
    }
    const double count =
        std::ceil((static_cast<double>(stop) - static_cast<double>(start)) / static_cast<double>(step));
    if (!(count < 9223372036854775808.0))  // 2^63; also catches a quotient that overflowed to inf
      throw_invalid(
          fn, ("(stop - start) / step = " + std::to_string(count) + " elements: more than a 64-bit integer counts")
                  .c_str());
    return count > 0 ? static_cast<std::int64_t>(count) : 0;
  } else {
    if (stop == start || (step > 0) != (stop > start)) return 0;
    using U = std::make_unsigned_t<T>;
    // Distances and |step| in the unsigned type: exact, where stop - start or -step can overflow T.
    const std::uint64_t dist = step > 0 ? U(U(stop) - U(start)) : U(U(start) - U(stop));
    const std::uint64_t mag = step > 0 ? U(step) : U(U(0) - U(step));
    const std::uint64_t n = dist / mag + (dist % mag != 0 ? 1 : 0);
    if (n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      throw_invalid(fn, (std::to_string(n) + " elements: more than a 64-bit integer counts").c_str());
    return static_cast<std::int64_t>(n);
  }
}

}  // namespace detail

// start, start + step, ... below stop (above stop for a negative step), as NumPy's arange.
// InvalidArgument for a zero step, a NaN or infinite argument, or a length above 2^63 - 1.
template <class T>
Array<T> arange(T start, T stop, T step = T(1), Device device = default_device()) {
  const std::int64_t n = detail::arange_length(start, stop, step);
  (void)detail::checked_bytes(n, sizeof(T), "porta::arange");  // name arange, not Array, in the error
  Array<T> a(Shape{n}, device);
  detail::iota(device, detail::dtype_of<T>(), n, detail::to_scalar(start), detail::to_scalar(step), a.data(), nullptr);
  return a;
}
// 0, 1, ..., n-1 (empty for n <= 0, as NumPy's arange(n)). For an integer T, n - 1 must fit in T.
template <class T>
Array<T> arange(std::int64_t n, Device device = default_device()) {
  if constexpr (std::is_integral_v<T>) {
    // Not arange(T(0), T(n)): T(n) would wrap (arange<int32_t>(2^32 + 5) would give 5 elements).
    if (n > 0 && n - 1 > static_cast<std::int64_t>(std::numeric_limits<T>::max()))
      detail::throw_invalid("porta::arange", ("n = " + std::to_string(n) + ": the last value " + std::to_string(n - 1) +
                                              " does not fit in " + detail::dtype_name(detail::dtype_of<T>()))
                                                 .c_str());
  }
  const std::int64_t len = n > 0 ? n : 0;
  (void)detail::checked_bytes(len, sizeof(T), "porta::arange");
  Array<T> a(Shape{len}, device);
  detail::iota(device, detail::dtype_of<T>(), len, detail::to_scalar(T(0)), detail::to_scalar(T(1)), a.data(), nullptr);
  return a;
}

}  // namespace porta
