// SPDX-License-Identifier: Apache-2.0
// Arrays that live on a device: row-major, up to 4-D, move-only; slices and reshapes are views
// that share (and keep alive) the memory of the array they come from.
//
//   std::vector<float> h(1000, 1.0f);
//   auto x = porta::Array<float>::from(h, dev);          // host -> device
//   auto y = porta::full<float>({1000}, 2.0f, dev);
//   auto m = porta::zeros<double>({3, 4}, dev);           // 3 rows, 4 columns
//   std::vector<float> back = y.to_vector();              // device -> host (synchronizes)
//   auto z = y.clone();                                   // copies; Array itself is move-only
//   auto c = y.to(porta::Device::parse("cpu"));           // copy to another device
//   auto r = m.row(1);                                    // a view: m[1], no copy
//   float v = m.item(1, 2);                               // one element (synchronous, slow)
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
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "porta/debug.hpp"
#include "porta/detail/config.hpp"
#include "porta/detail/runtime.hpp"
#include "porta/detail/strict.hpp"
#include "porta/detail/tools.hpp"
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
// PORTA_KERNEL bodies. Valid while the Array lives; dereference only on the Array's device.
//
// With PORTA_BOUNDS_CHECK (porta/debug.hpp) the accessors check the index against the view's
// extent, each dimension of v(r, c) on its own, and report a violation with the label. The check is
// a template argument, not a preprocessor branch inside one function: the macro is per translation
// unit, and an accessor that was one symbol in every TU would be merged by the linker, so one TU's
// choice would silently apply to another's kernels. v[i] is operator[]<true> in a checked TU and
// operator[]<false> elsewhere: two symbols, each TU keeps its own. Unchecked, it is the plain load.
template <class T>
struct View {
  T* data = nullptr;
  std::int64_t size = 0;
  std::int64_t rows = 1;  // 2-D helpers: a rank-2 array is rows x cols; other ranks: 1 x size
  std::int64_t cols = 0;
  const char* label = nullptr;  // the Array's label (interned, never freed); present in every build

  template <bool Check = PORTA_DETAIL_BOUNDS>
  PORTA_HOST_DEVICE T& operator[](std::int64_t i) const {
    if constexpr (Check) {
      // One unsigned compare covers both ends.
      if (static_cast<std::uint64_t>(i) >= static_cast<std::uint64_t>(size))
        return *detail::bounds_fault<T>(label, size, rows, cols, 1, i, 0);
    }
    return data[i];
  }
  template <bool Check = PORTA_DETAIL_BOUNDS>
  PORTA_HOST_DEVICE T& operator()(std::int64_t r, std::int64_t c) const {
    if constexpr (Check) {
      if ((static_cast<std::uint64_t>(r) >= static_cast<std::uint64_t>(rows)) |
          (static_cast<std::uint64_t>(c) >= static_cast<std::uint64_t>(cols)))
        return *detail::bounds_fault<T>(label, size, rows, cols, 2, r, c);
    }
    return data[r * cols + c];
  }
};

// One axis of Array::slice, as NumPy's start:stop:step. porta::none for start or stop means "from
// the first element" or "to the end", counted in the step's direction; negative values count from
// the end; bounds past either end are clamped, as in NumPy. A zero step is an InvalidArgument.
//
//   x.slice({{1, 3}})                       // x[1:3]
//   x.slice({{}, {porta::none, porta::none, 2}})   // x[:, ::2]
//   x.slice({{porta::none, porta::none, -1}})      // x[::-1]
inline constexpr std::int64_t none = std::numeric_limits<std::int64_t>::min();
struct Slice {
  std::int64_t start = none;
  std::int64_t stop = none;
  std::int64_t step = 1;
};

namespace detail {

// The one copy of a label's characters, kept for the program's life (labels are few: a profiling
// tool, an error and a View may hold the pointer long after the Array is gone).
const char* intern_label(std::string_view label);
// intern_label for a launch's name, from a small per-thread cache first, so that a launch named
// by a literal pays a pointer compare, not the shared set's lock. Never throws ("" when out of
// memory).
const char* stable_name(std::string_view name) noexcept;
// The live bytes of labelled arrays, for memory_report (unlabelled ones cost nothing here).
void count_labelled(Device device, const char* label, std::size_t bytes, bool allocated) noexcept;

// Frees an Array's device memory when the last Array sharing it (the owner or a view) is gone,
// telling a loaded profiling tool under the label the memory was allocated with.
struct DeviceDeleter {
  Device device;
  const char* label;
  std::size_t bytes;
  void operator()(void* p) const noexcept {
    if (*label != '\0') count_labelled(device, label, bytes, false);
    if (tools::active()) tools::deallocate(device, label, p, bytes);
    device_free(device, p, nullptr);
  }
};

using Strides = std::array<std::int64_t, Shape::kMaxRank>;

// A Shape from the first `rank` entries of `dims` (Shape has only an initializer-list constructor).
inline Shape make_shape(const std::int64_t* d, int rank) {
  switch (rank) {
    case 0:
      return Shape{};
    case 1:
      return Shape{d[0]};
    case 2:
      return Shape{d[0], d[1]};
    case 3:
      return Shape{d[0], d[1], d[2]};
    default:
      return Shape{d[0], d[1], d[2], d[3]};
  }
}

inline Strides row_major_strides(const Shape& s) noexcept {
  Strides st{};
  std::int64_t step = 1;
  for (int i = s.rank() - 1; i >= 0; --i) {
    st[static_cast<std::size_t>(i)] = step;
    step *= s[i];
  }
  return st;
}

// A negative axis counts from the end; InvalidArgument naming fn otherwise.
inline int normalize_axis(const char* fn, int axis, int rank) {
  const int a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw_invalid(
        fn, ("axis " + std::to_string(axis) + " is out of range for an array of rank " + std::to_string(rank)).c_str());
  return a;
}

// An index of an axis of size n: negative counts from the end; InvalidArgument outside [-n, n).
inline std::int64_t normalize_index(const char* fn, std::int64_t i, int axis, std::int64_t n) {
  const std::int64_t j = i < 0 ? i + n : i;
  if (j < 0 || j >= n)
    throw_invalid(fn, ("index " + std::to_string(i) + " is out of range for axis " + std::to_string(axis) +
                       " of size " + std::to_string(n))
                          .c_str());
  return j;
}

// An index of any integer type as int64: an unsigned one above 2^63 - 1 would wrap to a negative
// index, which counts from the end, so it is out of range instead.
template <class I>
std::int64_t signed_index(const char* fn, I i) {
  if constexpr (std::is_unsigned_v<I> && sizeof(I) >= sizeof(std::int64_t)) {
    if (i > static_cast<std::make_unsigned_t<std::int64_t>>(std::numeric_limits<std::int64_t>::max()))
      throw_invalid(fn, ("index " + std::to_string(i) + " is out of range (above 2^63 - 1)").c_str());
  }
  return static_cast<std::int64_t>(i);
}

// First index and length of `s` on an axis of size n, by Python's slice rules.
struct SliceRange {
  std::int64_t start, length;
};
inline SliceRange normalize_slice(const char* fn, Slice s, int axis, std::int64_t n) {
  if (s.step == 0 || s.step == none)
    throw_invalid(fn, ("step " + (s.step == 0 ? std::string("0") : std::to_string(s.step)) + " on axis " +
                       std::to_string(axis) + ": a step must be non-zero and above -2^63")
                          .c_str());
  const auto clamp = [](std::int64_t v, std::int64_t lo, std::int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); };
  std::int64_t start = 0, length = 0;
  if (s.step > 0) {
    start = s.start == none ? 0 : clamp(s.start < 0 ? s.start + n : s.start, 0, n);
    const std::int64_t stop = s.stop == none ? n : clamp(s.stop < 0 ? s.stop + n : s.stop, 0, n);
    length = stop > start ? (stop - start - 1) / s.step + 1 : 0;
  } else {
    start = s.start == none ? n - 1 : clamp(s.start < 0 ? s.start + n : s.start, -1, n - 1);
    const std::int64_t stop = s.stop == none ? -1 : clamp(s.stop < 0 ? s.stop + n : s.stop, -1, n - 1);
    length = start > stop ? (start - stop - 1) / (-s.step) + 1 : 0;
  }
  return {length > 0 ? start : 0, length};
}

}  // namespace detail

// An n-dimensional array on one device (up to 4-D), row-major by default. Move-only: clone()
// copies. Slices, rows, columns and reshaped() give *views*: Arrays that share this one's memory
// (writes through a view change the original) and keep it alive, as NumPy's base and PyTorch's
// storage do; a view may be strided (is_contiguous() is false). Built-ins that need contiguous
// memory say so with an InvalidArgument; contiguous() makes a compact copy where one is needed.
template <class T>
class Array {
  static_assert(detail::is_supported_v<T>,
                "porta::Array supports float, double, std::int32_t, std::int64_t, porta::complex<float> and "
                "porta::complex<double>");

 public:
  using value_type = T;

  // A null array (as after a move): every use other than assignment is an InvalidArgument.
  Array() noexcept = default;

  // Uninitialised storage of `shape` on `device`.
  explicit Array(Shape shape, Device device = default_device(), const Stream& stream = Stream())
      : Array(shape, device, std::string_view(), stream) {}
  // The same with a label, which profiling tools, porta-info's reports and the errors of
  // bounds-checked views name it by (Kokkos's View label):
  //   porta::Array<double> u({ny, nx}, dev, "temperature");
  Array(Shape shape, Device device, std::string_view label, const Stream& stream = Stream())
      : shape_(shape), strides_(detail::row_major_strides(shape)), device_(device) {
    const std::size_t bytes = detail::checked_bytes(shape.size(), sizeof(T), "porta::Array");
    porta_stream s = detail::stream_for(stream, device, "porta::Array");
    if (!label.empty()) label_ = detail::intern_label(label);
    data_ = static_cast<T*>(detail::device_alloc(device, bytes, s, "porta::Array"));
    // The memory's owner, shared with every view of it. If making the owner fails, shared_ptr
    // frees the memory itself.
    if (data_ != nullptr) {
      keep_alive_ = std::shared_ptr<void>(data_, detail::DeviceDeleter{device, label_, bytes});
      if (*label_ != '\0') detail::count_labelled(device, label_, bytes, true);
      if (detail::tools::active()) detail::tools::allocate(device, label_, data_, bytes);
    }
    live_ = true;
    if (!device.host_accessible()) {  // what a report of a bad access names (docs/strict.md)
      std::int64_t d[Shape::kMaxRank] = {};
      for (int i = 0; i < shape.rank(); ++i) d[i] = shape[i];
      detail::describe_allocation(device, data_, detail::dtype_of<T>(), d, shape.rank());
    }
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
  // guarantees the lifetime) is released with the last Array (or view) that holds it, without
  // waiting for work still queued on the memory: synchronize first where the owner may reuse it.
  // Memory that `device` cannot use (host memory for a GPU, another GPU's memory, a range past the
  // end of an allocation: both ends are checked) is an InvalidArgument saying what it is instead.
  static Array borrow(T* data, Shape shape, Device device, std::shared_ptr<void> keep_alive) {
    if (data == nullptr && shape.size() > 0)
      detail::throw_invalid("porta::Array::borrow", ("data is a null pointer for " + std::to_string(shape.size()) +
                                                     " elements (" + shape.to_string() + ")")
                                                        .c_str());
    detail::check_borrow(device, data, static_cast<std::size_t>(shape.size()) * sizeof(T), "porta::Array::borrow");
    Array a;
    a.data_ = data;
    a.shape_ = shape;
    a.strides_ = detail::row_major_strides(shape);
    a.device_ = device;
    a.live_ = true;
    a.borrowed_ = true;
    a.keep_alive_ = std::move(keep_alive);
    return a;
  }
  // True when this Array did not allocate its memory: made by borrow(), or a view of another Array.
  bool borrowed() const noexcept { return borrowed_; }

  // The array's name ("" when it has none). Views of an array start with its label; relabelling
  // one Array changes no other (a profiling tool keeps the label the memory was allocated with).
  const char* label() const noexcept { return label_; }
  void set_label(std::string_view label) { label_ = label.empty() ? "" : detail::intern_label(label); }

  Array(Array&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        shape_(std::exchange(o.shape_, Shape())),
        strides_(std::exchange(o.strides_, detail::Strides{})),
        device_(o.device_),
        live_(std::exchange(o.live_, false)),
        borrowed_(std::exchange(o.borrowed_, false)),
        label_(std::exchange(o.label_, "")),
        keep_alive_(std::move(o.keep_alive_)) {}
  Array& operator=(Array&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      shape_ = std::exchange(o.shape_, Shape());
      strides_ = std::exchange(o.strides_, detail::Strides{});
      device_ = o.device_;
      live_ = std::exchange(o.live_, false);
      borrowed_ = std::exchange(o.borrowed_, false);
      label_ = std::exchange(o.label_, "");
      keep_alive_ = std::move(o.keep_alive_);
    }
    return *this;
  }
  // Move-only. A kernel (PORTA_KERNEL) that names an Array tries to copy it: capture x.view() instead;
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
  // The first element. For a strided view the elements are data()[sum of index * stride(axis)].
  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  // Elements between neighbours along axis i (row-major for a contiguous array; 0 <= i < rank()).
  std::int64_t stride(int i) const noexcept { return strides_[static_cast<std::size_t>(i)]; }
  const std::array<std::int64_t, Shape::kMaxRank>& strides() const noexcept { return strides_; }
  // True when the elements are dense and row-major (always for arrays porta allocates; a view may
  // not be). Axes of size 1 may have any stride.
  bool is_contiguous() const noexcept {
    if (shape_.size() == 0) return true;
    std::int64_t expect = 1;
    for (int i = shape_.rank() - 1; i >= 0; --i) {
      if (shape_[i] != 1 && strides_[static_cast<std::size_t>(i)] != expect) return false;
      expect *= shape_[i];
    }
    return true;
  }

  // Throws InvalidArgument naming `fn` if this array was moved from.
  void check_valid(const char* fn) const {
    if (!valid()) detail::throw_moved_from(fn);
  }
  // Throws InvalidArgument naming `fn` unless this array is valid and contiguous.
  void check_contiguous(const char* fn, const char* name = "the array") const {
    check_valid(fn);
    if (!is_contiguous()) detail::throw_not_contiguous(fn, name, shape_.to_string().c_str());
  }

  // Device -> host; waits for the copy (and the stream's earlier work). A strided view is gathered.
  std::vector<T> to_vector(const Stream& stream = Stream()) const {
    check_valid("porta::Array::to_vector");
    std::vector<T> out(static_cast<std::size_t>(size()));
    copy_to_host(out.data(), stream);
    return out;
  }
  void copy_to_host(T* host, const Stream& stream = Stream()) const {
    check_valid("porta::Array::copy_to_host");
    if (!is_contiguous()) return contiguous(stream).copy_to_host(host, stream);
    porta_stream s = detail::stream_for(stream, device_, "porta::Array::copy_to_host");
    detail::copy_to_host(device_, data_, host, nbytes(), s, true);
  }
  // Host -> device, row-major; into a strided view through a compact temporary.
  void copy_from_host(const T* host, const Stream& stream = Stream()) {
    check_valid("porta::Array::copy_from_host");
    if (!is_contiguous()) {
      Array tmp = from(host, shape_, device_, stream);
      assign_from(tmp, stream, "porta::Array::copy_from_host");
      return;
    }
    porta_stream s = detail::stream_for(stream, device_, "porta::Array::copy_from_host");
    detail::copy_from_host(device_, data_, host, nbytes(), s, true);
  }

  // A copy on `device` (the same device gives a clone); always contiguous.
  Array to(Device device, const Stream& stream = Stream()) const {
    check_valid("porta::Array::to");
    if (!is_contiguous()) {
      Array c = contiguous(stream);
      return device == device_ ? std::move(c) : c.to(device, stream);
    }
    const Stream placeholder;  // both branches lvalues: Stream is move-only, a prvalue would be copied
    Array out(shape_, device, label_, device == device_ ? stream : placeholder);  // a copy keeps the label
    porta_stream s = detail::stream_for(stream, device_, "porta::Array::to");
    detail::copy_between(device, out.data_, device_, data_, nbytes(), s);
    return out;
  }
  Array clone(const Stream& stream = Stream()) const { return to(device_, stream); }

  // Contiguous elements: this array's own memory, shared, when it is contiguous already (no copy,
  // as PyTorch's contiguous()); otherwise a compact row-major copy on the same device.
  Array contiguous(const Stream& stream = Stream()) const {
    constexpr const char* fn = "porta::Array::contiguous";
    check_valid(fn);
    if (is_contiguous()) return share(data_, shape_, strides_);
    Array out(shape_, device_, label_, stream);
    out.assign_from(*this, stream, fn);
    return out;
  }

  // Same elements, new shape of the same size, in place. Needs a contiguous array.
  void reshape(Shape shape) {
    constexpr const char* fn = "porta::Array::reshape";
    check_reshape(fn, shape);
    shape_ = shape;
    strides_ = detail::row_major_strides(shape);
  }
  Array reshaped(Shape shape) && {
    reshape(shape);
    return std::move(*this);
  }
  // A view with another shape of the same size, sharing this array's memory (no copy), as NumPy's
  // reshape of a contiguous array and PyTorch's view(). A strided view is an InvalidArgument:
  // x.contiguous().reshaped(shape) copies first.
  //   auto m = porta::arange<float>(12, dev).reshaped({3, 4});   // rvalue: moved, no view needed
  //   auto v = m.reshaped({2, 6});                                // a view of m
  Array reshaped(Shape shape) const& {
    check_reshape("porta::Array::reshaped", shape);
    return share(data_, shape, detail::row_major_strides(shape));
  }

  // ---- views --------------------------------------------------------------------------------
  // A view of the elements picked by one Slice per leading axis (axes without one are kept whole).
  //   auto block = m.slice({{1, 3}, {0, 2}});        // m[1:3, 0:2]
  //   auto even  = v.slice({{porta::none, porta::none, 2}});  // v[::2]
  Array slice(std::initializer_list<Slice> slices) const {
    constexpr const char* fn = "porta::Array::slice";
    check_valid(fn);
    if (static_cast<int>(slices.size()) > rank())
      detail::throw_invalid(fn, (std::to_string(slices.size()) + " slices for an array of rank " +
                                 std::to_string(rank()) + " (" + shape_.to_string() + ")")
                                    .c_str());
    std::int64_t dims[Shape::kMaxRank] = {};
    detail::Strides st = strides_;
    std::int64_t offset = 0;
    for (int i = 0; i < rank(); ++i) dims[i] = shape_[i];
    int axis = 0;
    for (const Slice& s : slices) {
      const detail::SliceRange r = detail::normalize_slice(fn, s, axis, shape_[axis]);
      offset += r.start * strides_[static_cast<std::size_t>(axis)];
      dims[axis] = r.length;
      if (r.length > 1) st[static_cast<std::size_t>(axis)] = strides_[static_cast<std::size_t>(axis)] * s.step;
      ++axis;
    }
    return share(data_ + offset, detail::make_shape(dims, rank()), st);
  }
  // One axis: x.slice(axis, start, stop, step) is x[..., start:stop:step, ...] along `axis`.
  Array slice(int axis, std::int64_t start, std::int64_t stop, std::int64_t step = 1) const {
    constexpr const char* fn = "porta::Array::slice";
    check_valid(fn);
    const int a = detail::normalize_axis(fn, axis, rank());
    const detail::SliceRange r = detail::normalize_slice(fn, Slice{start, stop, step}, a, shape_[a]);
    std::int64_t dims[Shape::kMaxRank] = {};
    for (int i = 0; i < rank(); ++i) dims[i] = shape_[i];
    dims[a] = r.length;
    detail::Strides st = strides_;
    if (r.length > 1) st[static_cast<std::size_t>(a)] = strides_[static_cast<std::size_t>(a)] * step;
    return share(data_ + r.start * strides_[static_cast<std::size_t>(a)], detail::make_shape(dims, rank()), st);
  }
  // The view at `index` of `axis`, which the result drops (NumPy's x[i], PyTorch's select);
  // a negative index counts from the end.
  Array select(int axis, std::int64_t index) const {
    constexpr const char* fn = "porta::Array::select";
    check_valid(fn);
    const int a = detail::normalize_axis(fn, axis, rank());
    const std::int64_t i = detail::normalize_index(fn, index, a, shape_[a]);
    std::int64_t dims[Shape::kMaxRank] = {};
    detail::Strides st{};
    int r = 0;
    for (int k = 0; k < rank(); ++k) {
      if (k == a) continue;
      dims[r] = shape_[k];
      st[static_cast<std::size_t>(r++)] = strides_[static_cast<std::size_t>(k)];
    }
    return share(data_ + i * strides_[static_cast<std::size_t>(a)], detail::make_shape(dims, r), st);
  }
  // Row i (x[i]) and, of a 2-D array, column j (x[:, j], strided).
  Array row(std::int64_t i) const { return select(0, i); }
  Array col(std::int64_t j) const {
    if (valid() && rank() != 2)
      detail::throw_invalid("porta::Array::col",
                            ("col() needs a 2-D array, not " + shape_.to_string() + ": use select(axis, j)").c_str());
    return select(1, j);
  }

  // ---- element access: synchronous, one copy per call; for loops, copy the array with to_vector() --
  //   float v = m.item(1, 2);     // m[1, 2]; negative indices count from the end
  //   m.set(1, 2, 5.0f);          // m[1, 2] = 5
  //   double s = porta::sum(x, 0).item();   // the one element of a size-1 array
  template <class... I>
  T item(I... index) const {
    static_assert(sizeof...(I) <= Shape::kMaxRank && (std::is_integral_v<I> && ...),
                  "porta::Array::item takes up to 4 integer indices");
    constexpr const char* fn = "porta::Array::item";
    const std::int64_t at = element_offset(fn, {detail::signed_index(fn, index)...});
    T v{};
    detail::copy_small_to_host(device_, data_ + at, &v, sizeof(T), nullptr);
    return v;
  }
  void set(std::int64_t i0, T value) { set_at({i0}, value); }
  void set(std::int64_t i0, std::int64_t i1, T value) { set_at({i0, i1}, value); }
  void set(std::int64_t i0, std::int64_t i1, std::int64_t i2, T value) { set_at({i0, i1, i2}, value); }
  void set(std::int64_t i0, std::int64_t i1, std::int64_t i2, std::int64_t i3, T value) {
    set_at({i0, i1, i2, i3}, value);
  }

  // Copies src's elements into this array (same shape; either may be a strided view), on this
  // array's device: x.row(0).assign(y) is NumPy's x[0] = y.
  void assign(const Array& src, const Stream& stream = Stream()) { assign_from(src, stream, "porta::Array::assign"); }
  // r.assign(expr) for a fused expression (porta/fuse.hpp): evaluated into this array in one pass.
  template <class E, class = decltype(std::declval<const E&>().evaluate_into(std::declval<Array&>(),
                                                                             std::declval<const Stream&>()))>
  void assign(const E& expr, const Stream& stream = Stream()) {
    expr.evaluate_into(*this, stream);
  }

  View<T> view() {
    check_view();
    return make_view<T>(data_, label_);
  }
  View<const T> view() const {
    check_view();
    return make_view<const T>(data_, label_);
  }

 private:
  // A view of this array's memory (which it keeps alive).
  Array share(T* data, Shape shape, const detail::Strides& strides) const {
    Array a;
    a.data_ = data;
    a.shape_ = shape;
    a.strides_ = strides;
    a.device_ = device_;
    a.live_ = true;
    a.borrowed_ = true;
    a.label_ = label_;
    a.keep_alive_ = keep_alive_;
    return a;
  }
  void check_reshape(const char* fn, const Shape& shape) const {
    check_valid(fn);
    if (shape.size() != shape_.size())
      detail::throw_invalid(fn, ("cannot reshape " + shape_.to_string() + " (" + std::to_string(shape_.size()) +
                                 " elements) to " + shape.to_string())
                                    .c_str());
    if (!is_contiguous())
      detail::throw_invalid(fn, ("the array is a strided view (" + shape_.to_string() +
                                 "): a reshape without a copy needs contiguous memory; x.contiguous() copies first")
                                    .c_str());
  }
  void check_view() const {
    check_valid("porta::Array::view");
    if (!is_contiguous())
      detail::throw_invalid("porta::Array::view", ("the array is a strided view (" + shape_.to_string() +
                                                   "); kernels index contiguous memory: make a copy first "
                                                   "(auto c = x.contiguous();) and capture c.view()")
                                                      .c_str());
  }
  std::int64_t element_offset(const char* fn, std::initializer_list<std::int64_t> index) const {
    check_valid(fn);
    if (index.size() == 0) {
      if (shape_.size() != 1)
        detail::throw_invalid(fn, ("no index given for an array of " + std::to_string(shape_.size()) + " elements (" +
                                   shape_.to_string() + "): only a one-element array has a single item")
                                      .c_str());
      return 0;
    }
    if (static_cast<int>(index.size()) != rank())
      detail::throw_invalid(fn, (std::to_string(index.size()) + " indices for an array of rank " +
                                 std::to_string(rank()) + " (" + shape_.to_string() + ")")
                                    .c_str());
    std::int64_t at = 0;
    int axis = 0;
    for (std::int64_t i : index) {
      at += detail::normalize_index(fn, i, axis, shape_[axis]) * strides_[static_cast<std::size_t>(axis)];
      ++axis;
    }
    return at;
  }
  void set_at(std::initializer_list<std::int64_t> index, T value) {
    constexpr const char* fn = "porta::Array::set";
    const std::int64_t at = element_offset(fn, index);
    detail::copy_from_host(device_, data_ + at, &value, sizeof(T), nullptr, true);
  }
  void assign_from(const Array& src, const Stream& stream, const char* fn) {
    check_valid(fn);
    src.check_valid(fn);
    if (src.shape_ != shape_)
      detail::throw_invalid(
          fn, ("shapes differ (destination is " + shape_.to_string() + ", source is " + src.shape_.to_string() + ")")
                  .c_str());
    if (src.device_ != device_)
      throw DeviceMismatch(std::string(fn) + ": the destination is on " + device_.to_string() + ", the source on " +
                           src.device_.to_string() + " (copy it with to() first)");
    detail::copy_strided(device_, detail::dtype_of<T>(), rank(), &shape_dims()[0], src.data_, src.strides_.data(),
                         data_, strides_.data(), detail::stream_for(stream, device_, fn), fn);
  }
  std::array<std::int64_t, Shape::kMaxRank> shape_dims() const noexcept {
    std::array<std::int64_t, Shape::kMaxRank> d{};
    for (int i = 0; i < rank(); ++i) d[static_cast<std::size_t>(i)] = shape_[i];
    return d;
  }
  template <class U>
  View<U> make_view(U* p, const char* label) const {
    View<U> v;
    v.data = p;
    v.label = label;
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
    keep_alive_.reset();  // frees the memory when this was its last holder
    borrowed_ = false;
    label_ = "";
    data_ = nullptr;
    live_ = false;
  }

  T* data_ = nullptr;  // the first element
  Shape shape_{};
  detail::Strides strides_{};  // in elements
  Device device_{};
  bool live_ = false;                 // zero-element arrays own no memory but are valid until moved from
  bool borrowed_ = false;             // made by borrow() or a view: the memory is not this Array's allocation
  const char* label_ = "";            // interned (intern_label): outlives every copy of the pointer
  std::shared_ptr<void> keep_alive_;  // the memory's owner, shared by every view of it
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
  if constexpr (is_half_v<T>) {
    return arange_length(static_cast<float>(start), static_cast<float>(stop), static_cast<float>(step));
  } else if constexpr (std::is_floating_point_v<T>) {
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
