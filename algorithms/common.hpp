// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the front-end algorithms: argument checks with messages that name the
// function and the values, and the "call" that bundles a device, its table and a stream handle.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>

#include "porta/array.hpp"
#include "porta/detail/runtime.hpp"
#include "porta/detail/tools.hpp"
#include "porta/error.hpp"
#include "porta/stream.hpp"
#include "runtime/registry.hpp"

namespace porta::detail {

// One array argument as the checks see it (type-erased, so cast<To, From> mixes dtypes freely).
struct ArgRef {
  const char* name;  // "a", "x", "out": the parameter name the message uses
  bool valid;
  Device device;
  const Shape* shape;
  bool contiguous;  // false: a strided view, which check_args refuses (arg_strided: accepted)
};

// An argument that must be contiguous: a strided view is an InvalidArgument naming the function
// and the fix (x.contiguous()). Every built-in gets that check through check_args.
template <class T>
ArgRef arg(const char* name, const Array<T>& a) {
  return ArgRef{name, a.valid(), a.device(), &a.shape(), !a.valid() || a.is_contiguous()};
}
// An argument the function handles as a strided view itself.
template <class T>
ArgRef arg_strided(const char* name, const Array<T>& a) {
  return ArgRef{name, a.valid(), a.device(), &a.shape(), true};
}

// All arrays valid and on one device; returns that device. The first failing check throws.
inline Device check_args(const char* fn, std::initializer_list<ArgRef> args) {
  for (const ArgRef& a : args) {
    if (a.valid) continue;
    if (args.size() == 1) throw_moved_from(fn);
    throw_invalid(fn, (std::string("the array ") + a.name + " was moved from (or default-constructed)").c_str());
  }
  for (const ArgRef& a : args)
    if (!a.contiguous) throw_not_contiguous(fn, a.name, a.shape->to_string().c_str());
  const ArgRef& first = *args.begin();
  for (const ArgRef& a : args) {
    if (a.device == first.device) continue;
    throw DeviceMismatch(std::string(fn) + ": arrays are on different devices (" + first.name + " on " +
                         first.device.to_string() + ", " + a.name + " on " + a.device.to_string() + ")");
  }
  return first.device;
}

// "shapes differ (a is 3x4, b is 5)"
[[noreturn]] inline void throw_shapes_differ(const char* fn, const ArgRef& a, const ArgRef& b) {
  throw_invalid(fn, (std::string("shapes differ (") + a.name + " is " + a.shape->to_string() + ", " + b.name + " is " +
                     b.shape->to_string() + ")")
                        .c_str());
}

// `out` must have `like`'s shape: "out is 3x3, expected 3x4 (the shape of a)".
inline void check_out_shape(const char* fn, const ArgRef& out, const ArgRef& like) {
  if (*out.shape == *like.shape) return;
  throw_invalid(fn, (std::string(out.name) + " is " + out.shape->to_string() + ", expected " + like.shape->to_string() +
                     " (the shape of " + like.name + ")")
                        .c_str());
}

// The tools::Kind of a table entry that runs a kernel, as an int; -1 for the others (streams,
// memory, synchronisation), which a tool does not see as launches.
int traced_kind(const porta_backend_v1& table, const void* entry) noexcept;

// One call of a built-in algorithm into a backend: the device, its backend table, the stream
// handle, and the public function's name for messages. Entries are called through run():
//   c.run(c.table->reduce, op, dtype_of<T>(), 1, n, 1, x.data(), y, c.stream);
// is c.table->reduce(c.device.index, op, ...) with a failing status thrown as the porta::Error it
// means, its message prefixed with fn.
struct BackendCall {
  Device device;
  const porta_backend_v1* table;
  porta_stream stream;
  const char* fn;

  // entry(device.index, args...), checked. A kernel entry is a launch named fn for a loaded
  // profiling tool (traced_kind says which entries are); with none, one flag load.
  template <class... Params, class... Args>
  void run(porta_status (*entry)(int, Params...), Args&&... args) const {
    check(status_of(entry, std::forward<Args>(args)...));
  }
  // The same call, its status returned rather than thrown (a caller that has a way around it).
  template <class... Params, class... Args>
  porta_status status_of(porta_status (*entry)(int, Params...), Args&&... args) const {
    if (!tools::active()) return entry(device.index, std::forward<Args>(args)...);
    const int kind = traced_kind(*table, reinterpret_cast<const void*>(entry));
    if (kind < 0) return entry(device.index, std::forward<Args>(args)...);
    const char* name = tools::builtin_name();  // a porta::launch_name scope's, else the function's
    const std::uint64_t id =
        tools::begin_kernel(static_cast<tools::Kind>(kind), name != nullptr ? name : fn, device, stream);
    const porta_status st = entry(device.index, std::forward<Args>(args)...);
    tools::end_kernel(static_cast<tools::Kind>(kind), id, device, stream);
    return st;
  }
  void check(porta_status st) const {
    if (st != PORTA_OK) throw_status(st, fn, device);
  }
};

inline BackendCall make_call(const char* fn, Device device, const Stream& stream) {
  const porta_backend_v1& t = backend_for(device, fn);
  return BackendCall{device, &t, stream_for(stream, device, fn), fn};
}

// Reads one small device result (a full reduction's value) back to the host, waiting for the
// stream: `enqueue(y)` queues the work that writes *y. No allocation and no copy on the way
// (small calls):
// - the CPU's device memory is host memory and its entries finish before they return: y is r;
// - a GPU's kernel writes the calling thread's pinned buffer (pinned_scratch) directly, and the
//   value is read after one stream_synchronize: one launch and one wait, as PyTorch's
//   x.sum().item() (whose result lives in its caching allocator) minus its device-to-host copy;
// - cpu:strict (whose device memory the host may not touch) and a GPU whose backend cannot pin
//   take stream-ordered device scratch, freed on the call's own stream, and a copy.
// Every caller synchronizes before it returns, also when it throws, so the next one on this thread
// (maybe on another stream) finds the pinned buffer unused.
template <class T, class Enqueue>
T read_device_scalar(const BackendCall& c, Enqueue&& enqueue) {
  static_assert(sizeof(T) <= kPinnedScratchBytes, "a scalar result fits the pinned buffer");
  T r{};
  if (c.device.host_accessible()) {
    enqueue(&r);
    return r;
  }
  if (void* slot = c.device.is_gpu() ? pinned_scratch(c.device) : nullptr) {
    try {
      enqueue(static_cast<T*>(slot));
    } catch (...) {
      (void)c.table->stream_synchronize(c.device.index, c.stream);  // a kernel may have been queued before the error
      throw;
    }
    c.run(c.table->stream_synchronize, c.stream);
    std::memcpy(&r, slot, sizeof(T));
    return r;
  }
  struct Scratch {
    const BackendCall& c;
    void* p;
    ~Scratch() { device_free(c.device, p, c.stream); }
  } scratch{c, device_alloc(c.device, sizeof(T), c.stream, c.fn)};
  enqueue(static_cast<T*>(scratch.p));
  copy_small_to_host(c.device, scratch.p, &r, sizeof(T), c.stream);
  return r;
}

// make_shape(dims, rank): porta/array.hpp.

// An algorithm's output array: running out of memory for it is reported under the algorithm's name
// (fn), not porta::Array's, with the same numbers.
template <class T>
Array<T> new_output(const char* fn, Shape shape, Device dev, const Stream& stream) {
  try {
    return Array<T>(shape, dev, stream);
  } catch (const OutOfMemory& e) {
    throw OutOfMemory(std::string(fn) + ": " + e.what(), e.device(), e.requested_bytes(), e.free_bytes());
  }
}

// A shape seen as [outer, n, inner] around `axis` (negative counts from the end, as in NumPy), and
// the shape without that axis: what the functions along an axis (argmax, ...) share.
struct AxisSplit {
  std::int64_t outer = 1, n = 0, inner = 1;
  Shape result;
};

inline AxisSplit split_axis(const char* fn, const Shape& shape, int axis) {
  const int rank = shape.rank();
  if (rank == 0) throw_invalid(fn, "an axis reduction needs an array of rank 1 or more (x is a scalar)");
  if (axis < -rank || axis >= rank)
    throw_invalid(
        fn, ("axis " + std::to_string(axis) + " is out of range for a " + std::to_string(rank) + "-D array").c_str());
  const int ax = axis < 0 ? axis + rank : axis;
  AxisSplit a;
  std::int64_t dims[Shape::kMaxRank] = {};
  int r = 0;
  for (int i = 0; i < rank; ++i) {
    if (i < ax) a.outer *= shape[i];
    if (i > ax) a.inner *= shape[i];
    if (i != ax) dims[r++] = shape[i];
  }
  a.n = shape[ax];
  a.result = make_shape(dims, rank - 1);
  return a;
}

}  // namespace porta::detail

// The front end's instantiations: every type of porta/abi/dtypes.inc (macros cannot read that list
// here; cast<To, From> in map.cpp and sort_by_key's value types in sort.cpp list the pairs too).
static_assert(PORTA_DTYPE_COUNT == 8,
              "a new dtype: add it to PORTA_FOR_EACH_DTYPE and to the pair lists of "
              "cast (map.cpp) and sort_by_key (sort.cpp)");
#define PORTA_FOR_EACH_DTYPE(X) \
  X(float)                      \
  X(double)                     \
  X(std::int32_t)               \
  X(std::int64_t)               \
  X(porta::complex<float>)      \
  X(porta::complex<double>)     \
  X(porta::float16)             \
  X(porta::bfloat16)
// The types with an order (real and integer): what sorting, min and max and the real-only maps
// are instantiated for.
#define PORTA_FOR_EACH_ORDERED_DTYPE(X) \
  X(float)                              \
  X(double)                             \
  X(std::int32_t)                       \
  X(std::int64_t)                       \
  X(porta::float16)                     \
  X(porta::bfloat16)
