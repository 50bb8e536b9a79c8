// SPDX-License-Identifier: Apache-2.0
// Elementwise maps of the front end: validate, allocate, dispatch through the backend table.
//
// ---- How to add a front-end function (after ArrayFire's src/api/c/exampleFunction.cpp) --------
//
//   template <class T>
//   Array<T> my_op(const Array<T>& x, const Array<T>& y, const Stream& stream) {
//     constexpr const char* fn = "porta::my_op";   // every message starts with it
//
//     // 1. Validate everything before touching memory, so that bad input never crashes, never
//     //    leaves an output half written and never leaks. check_args throws InvalidArgument for a
//     //    moved-from array and DeviceMismatch for arrays on different devices, naming both.
//     const detail::ArgRef rx = detail::arg("x", x), ry = detail::arg("y", y);
//     const Device dev = detail::check_args(fn, {rx, ry});
//     if (x.shape() != y.shape()) detail::throw_shapes_differ(fn, rx, ry);
//
//     // 2. The backend table of the device (Unavailable with the reason if it is not there) and
//     //    the native stream (DeviceMismatch if the stream is on another device).
//     const detail::BackendCall c = detail::make_call(fn, dev, stream);
//
//     // 3. Allocate the output on the same device and stream. It is an Array, so it is freed if
//     //    anything below throws.
//     Array<T> out = new_output<T>(fn, x.shape(), dev, stream);
//     if (out.size() == 0) return out;            // backends need not handle n == 0
//
//     // 4. Call the backend's entry with the dtype and the op: c.run calls it on the call's
//     //    device and turns a failing status into a porta::Error (detail::throw_status, which
//     //    prefixes fn to the backend's message).
//     c.run(c.table->my_entry, detail::dtype_of<T>(), out.size(), x.data(), y.data(), out.data(),
//           c.stream);
//     return out;
//   }
//
//   // 5. Instantiate it for every dtype at the bottom of the file (PORTA_FOR_EACH_DTYPE) and
//   //    declare it in include/porta/algorithms.hpp. A new backend entry goes at the END of
//   //    porta_backend_v1 (the runtime stubs entries that older plugins lack) and is implemented in
//   //    backends/cpu and backends/gpu.
// ------------------------------------------------------------------------------------------------
#include <cstdint>
#include <memory>
#include <type_traits>

#include "algorithms/common.hpp"
#include "algorithms/strided.hpp"
#include "porta/algorithms.hpp"

namespace porta {
namespace detail {
namespace {

struct BinaryNames {
  const char* a;
  const char* b;
};
constexpr BinaryNames kAB{"a", "b"};

// out (contiguous, a's shape, overlapping an input only as that very input) = op(a, b), where a
// and b may be strided views: folded into the binary entry's row and column strides, or, for a
// 3-D or 4-D view that does not fold, copied to contiguous memory first.
template <class T>
void binary_run(const BackendCall& c, porta_binary_op op, BinaryNames names, const Array<T>& a, const Array<T>& b,
                Array<T>& out, const Stream& stream) {
  BinaryPlan p{};
  bool shapes_ok = false;
  if (!plan_binary(layout_of(a), layout_of(b), p, &shapes_ok)) {
    if (!shapes_ok) throw_shapes_differ(c.fn, arg(names.a, a), arg(names.b, b));
    Array<T> ha, hb;
    const Array<T>& ca = contiguous_input(a, ha, stream);
    const Array<T>& cb = contiguous_input(b, hb, stream);
    (void)plan_binary(layout_of(ca), layout_of(cb), p, &shapes_ok);  // contiguous operands always fold
    binary_run(c, op, names, ca, cb, out, stream);
    return;
  }
  if (p.rows == 0 || p.cols == 0) return;
  c.run(c.table->binary, op, dtype_of<T>(), p.rows, p.cols, a.data(), p.a_rs, p.a_cs, b.data(), p.b_rs, p.b_cs,
        out.data(), c.stream);
}

// Contiguous arrays of one shape: the common call, which skips the plan (its two strides are the
// whole array's) and the general overlap test (two such arrays overlap as the very same elements, or
// not at all, or partially when their first elements differ). The general path's plan and overlap
// test take about 0.2 us, as much as a 16-core map of 2^16 elements gains or loses against a plain
// OpenMP loop.
template <class T>
bool plain_pair(const Array<T>& x, const Array<T>& y) {
  return x.is_contiguous() && y.is_contiguous() && x.shape() == y.shape();
}
template <class T>
bool partly_overlaps(const Array<T>& x, const Array<T>& y) {
  const auto bytes = static_cast<std::uintptr_t>(x.size()) * sizeof(T);
  const auto p = reinterpret_cast<std::uintptr_t>(x.data()), q = reinterpret_cast<std::uintptr_t>(y.data());
  return p != q && p < q + bytes && q < p + bytes;
}
// out = op(a, b) for contiguous a, b and out of one shape.
template <class T>
void binary_plain(const BackendCall& c, porta_binary_op op, const Array<T>& a, const Array<T>& b, Array<T>& out) {
  if (out.size() == 0) return;
  c.run(c.table->binary, op, dtype_of<T>(), 1, out.size(), a.data(), 0, 1, b.data(), 0, 1, out.data(), c.stream);
}

// Whether `out` can be written directly: contiguous, and sharing memory with an input only as
// that very input (elementwise in place). Otherwise the map goes through a temporary.
template <class T>
bool writable_directly(const Array<T>& out, const Array<T>& a, const Array<T>* b) {
  return out.is_contiguous() && !overlaps_not_identical(out, a) && (b == nullptr || !overlaps_not_identical(out, *b));
}

template <class T>
void binary_into(porta_binary_op op, const char* fn, BinaryNames names, const Array<T>& a, const Array<T>& b,
                 Array<T>& out, const Stream& stream) {
  const ArgRef ra = arg_strided(names.a, a), rb = arg_strided(names.b, b), ro = arg_strided("out", out);
  const Device dev = check_args(fn, {ra, rb, ro});
  if (plain_pair(a, b) && plain_pair(a, out) && !partly_overlaps(out, a) && !partly_overlaps(out, b))
    return binary_plain(make_call(fn, dev, stream), op, a, b, out);
  check_binary_shapes(fn, a, names.a, b, names.b);
  check_out_shape(fn, ro, ra);
  const BackendCall c = make_call(fn, dev, stream);
  if (writable_directly(out, a, &b)) return binary_run(c, op, names, a, b, out, stream);
  Array<T> tmp = new_output<T>(fn, a.shape(), dev, stream);
  binary_run(c, op, names, a, b, tmp, stream);
  out.assign(tmp, stream);
}

template <class T>
Array<T> binary_new(porta_binary_op op, const char* fn, BinaryNames names, const Array<T>& a, const Array<T>& b,
                    const Stream& stream) {
  const Device dev = check_args(fn, {arg_strided(names.a, a), arg_strided(names.b, b)});
  const bool plain = plain_pair(a, b);
  if (!plain) check_binary_shapes(fn, a, names.a, b, names.b);
  const BackendCall c = make_call(fn, dev, stream);
  Array<T> out = new_output<T>(fn, a.shape(), dev, stream);
  if (plain) {
    binary_plain(c, op, a, b, out);
  } else {
    binary_run(c, op, names, a, b, out, stream);
  }
  return out;
}

// out = x op value, or value op x when scalar_first; x may be a strided view, out too.
template <class T>
void scalar_run(const BackendCall& c, porta_binary_op op, const Array<T>& x, T value, bool scalar_first, Array<T>& out,
                const Stream& stream) {
  if (x.size() == 0) return;
  Array<T> hold;
  const Array<T>& cx = contiguous_input(x, hold, stream);
  c.run(c.table->binary_scalar, op, dtype_of<T>(), cx.size(), cx.data(), to_scalar(value), scalar_first ? 1 : 0,
        out.data(), c.stream);
}

template <class T>
void scalar_into(porta_binary_op op, const char* fn, const Array<T>& x, T value, bool scalar_first, Array<T>& out,
                 const Stream& stream) {
  const ArgRef rx = arg_strided(scalar_first ? "b" : "a", x), ro = arg_strided("out", out);
  const Device dev = check_args(fn, {rx, ro});
  if (plain_pair(x, out) && !partly_overlaps(out, x))
    return scalar_run(make_call(fn, dev, stream), op, x, value, scalar_first, out, stream);
  check_out_shape(fn, ro, rx);
  const BackendCall c = make_call(fn, dev, stream);
  if (writable_directly(out, x, static_cast<const Array<T>*>(nullptr)))
    return scalar_run(c, op, x, value, scalar_first, out, stream);
  Array<T> tmp = new_output<T>(fn, x.shape(), dev, stream);
  scalar_run(c, op, x, value, scalar_first, tmp, stream);
  out.assign(tmp, stream);
}

template <class T>
Array<T> scalar_new(porta_binary_op op, const char* fn, const Array<T>& x, T value, bool scalar_first,
                    const Stream& stream) {
  const Device dev = check_args(fn, {arg_strided(scalar_first ? "b" : "a", x)});
  const BackendCall c = make_call(fn, dev, stream);
  Array<T> out = new_output<T>(fn, x.shape(), dev, stream);
  scalar_run(c, op, x, value, scalar_first, out, stream);
  return out;
}

template <class T>
void unary_run(const BackendCall& c, porta_unary_op op, const Array<T>& x, Array<T>& out, const Stream& stream) {
  if constexpr (is_complex_v<T>) {  // the unary entry would write reals into a complex array
    if (op == PORTA_UNARY_ABS) throw_invalid(c.fn, "|z| of a complex array is real: porta::abs(z) returns it");
  }
  if (x.size() == 0) return;
  Array<T> hold;
  const Array<T>& cx = contiguous_input(x, hold, stream);
  c.run(c.table->unary, op, dtype_of<T>(), cx.size(), cx.data(), out.data(), c.stream);
}

template <class T>
void unary_into(porta_unary_op op, const char* fn, const Array<T>& x, Array<T>& out, const Stream& stream) {
  const ArgRef rx = arg_strided("x", x), ro = arg_strided("out", out);
  const Device dev = check_args(fn, {rx, ro});
  check_out_shape(fn, ro, rx);
  const BackendCall c = make_call(fn, dev, stream);
  if (writable_directly(out, x, static_cast<const Array<T>*>(nullptr))) return unary_run(c, op, x, out, stream);
  Array<T> tmp = new_output<T>(fn, x.shape(), dev, stream);
  unary_run(c, op, x, tmp, stream);
  out.assign(tmp, stream);
}

template <class T>
Array<T> unary_new(porta_unary_op op, const char* fn, const Array<T>& x, const Stream& stream) {
  const Device dev = check_args(fn, {arg_strided("x", x)});
  const BackendCall c = make_call(fn, dev, stream);
  Array<T> out = new_output<T>(fn, x.shape(), dev, stream);
  unary_run(c, op, x, out, stream);
  return out;
}

}  // namespace
}  // namespace detail

// ---- binary maps ---------------------------------------------------------------------------------
#define PORTA_DEFINE_BINARY(name, OP)                                                    \
  template <class T>                                                                     \
  void name(const Array<T>& a, const Array<T>& b, Array<T>& out, const Stream& stream) { \
    detail::binary_into<T>(OP, "porta::" #name, detail::kAB, a, b, out, stream);         \
  }                                                                                      \
  template <class T>                                                                     \
  Array<T> name(const Array<T>& a, const Array<T>& b, const Stream& stream) {            \
    return detail::binary_new<T>(OP, "porta::" #name, detail::kAB, a, b, stream);        \
  }                                                                                      \
  template <class T>                                                                     \
  void name(const Array<T>& a, T b, Array<T>& out, const Stream& stream) {               \
    detail::scalar_into<T>(OP, "porta::" #name, a, b, false, out, stream);               \
  }                                                                                      \
  template <class T>                                                                     \
  Array<T> name(const Array<T>& a, T b, const Stream& stream) {                          \
    return detail::scalar_new<T>(OP, "porta::" #name, a, b, false, stream);              \
  }                                                                                      \
  template <class T>                                                                     \
  void name(T a, const Array<T>& b, Array<T>& out, const Stream& stream) {               \
    detail::scalar_into<T>(OP, "porta::" #name, b, a, true, out, stream);                \
  }                                                                                      \
  template <class T>                                                                     \
  Array<T> name(T a, const Array<T>& b, const Stream& stream) {                          \
    return detail::scalar_new<T>(OP, "porta::" #name, b, a, true, stream);               \
  }

PORTA_DEFINE_BINARY(add, PORTA_BINARY_ADD)
PORTA_DEFINE_BINARY(sub, PORTA_BINARY_SUB)
PORTA_DEFINE_BINARY(mul, PORTA_BINARY_MUL)
PORTA_DEFINE_BINARY(div, PORTA_BINARY_DIV)
PORTA_DEFINE_BINARY(minimum, PORTA_BINARY_MIN)
PORTA_DEFINE_BINARY(maximum, PORTA_BINARY_MAX)
PORTA_DEFINE_BINARY(pow, PORTA_BINARY_POW)
#undef PORTA_DEFINE_BINARY

template <class T>
Array<T> relu_grad(const Array<T>& grad, const Array<T>& x, const Stream& stream) {
  return detail::binary_new<T>(PORTA_BINARY_RELU_GRAD, "porta::relu_grad", {"grad", "x"}, grad, x, stream);
}
template <class T>
void relu_grad(const Array<T>& grad, const Array<T>& x, Array<T>& out, const Stream& stream) {
  detail::binary_into<T>(PORTA_BINARY_RELU_GRAD, "porta::relu_grad", {"grad", "x"}, grad, x, out, stream);
}

// ---- unary maps ------------------------------------------------------------------------------------
#define PORTA_DEFINE_UNARY(name, OP)                                  \
  template <class T>                                                  \
  void name(const Array<T>& x, Array<T>& out, const Stream& stream) { \
    detail::unary_into<T>(OP, "porta::" #name, x, out, stream);       \
  }                                                                   \
  template <class T>                                                  \
  Array<T> name(const Array<T>& x, const Stream& stream) {            \
    return detail::unary_new<T>(OP, "porta::" #name, x, stream);      \
  }
PORTA_DEFINE_UNARY(neg, PORTA_UNARY_NEG)
PORTA_DEFINE_UNARY(abs, PORTA_UNARY_ABS)
PORTA_DEFINE_UNARY(sqrt, PORTA_UNARY_SQRT)
PORTA_DEFINE_UNARY(exp, PORTA_UNARY_EXP)
PORTA_DEFINE_UNARY(log, PORTA_UNARY_LOG)
PORTA_DEFINE_UNARY(sin, PORTA_UNARY_SIN)
PORTA_DEFINE_UNARY(cos, PORTA_UNARY_COS)
PORTA_DEFINE_UNARY(tanh, PORTA_UNARY_TANH)
PORTA_DEFINE_UNARY(relu, PORTA_UNARY_RELU)
PORTA_DEFINE_UNARY(sigmoid, PORTA_UNARY_SIGMOID)
PORTA_DEFINE_UNARY(square, PORTA_UNARY_SQUARE)
PORTA_DEFINE_UNARY(conj, PORTA_UNARY_CONJ)
#undef PORTA_DEFINE_UNARY

// ---- complex parts ---------------------------------------------------------------------------------
template <class T>
Array<T> abs(const Array<complex<T>>& z, const Stream& stream) {
  constexpr const char* fn = "porta::abs";
  const Device dev = detail::check_args(fn, {detail::arg_strided("z", z)});
  const detail::BackendCall c = detail::make_call(fn, dev, stream);
  Array<T> out = detail::new_output<T>(fn, z.shape(), dev, stream);
  if (out.size() == 0) return out;
  Array<complex<T>> hold;
  const Array<complex<T>>& cz = detail::contiguous_input(z, hold, stream);
  // The unary entry writes the real dtype for ABS of a complex one.
  c.run(c.table->unary, PORTA_UNARY_ABS, detail::dtype_of<complex<T>>(), cz.size(), cz.data(), out.data(), c.stream);
  return out;
}

namespace detail {
namespace {
// A complex array's memory is (re, im) pairs of T: part `which` of every element is a strided view
// of T with twice the strides, gathered (or, `into`, scattered) by one strided copy.
template <class T>
void complex_part_copy(const char* fn, const Array<complex<T>>& z, int which, Array<T>& part, bool into,
                       const Stream& stream) {
  const Device dev = z.device();
  const int rank = z.rank() > 0 ? z.rank() : 1;
  std::int64_t dims[Shape::kMaxRank] = {1, 1, 1, 1}, zs[Shape::kMaxRank] = {}, ps[Shape::kMaxRank] = {};
  for (int i = 0; i < z.rank(); ++i) {
    dims[i] = z.dim(i);
    zs[i] = 2 * z.strides()[static_cast<std::size_t>(i)];
    ps[i] = part.strides()[static_cast<std::size_t>(i)];
  }
  if (z.rank() == 0) zs[0] = ps[0] = 1;
  T* zt = reinterpret_cast<T*>(const_cast<complex<T>*>(z.data())) + which;
  const porta_stream s = stream_for(stream, dev, fn);
  if (into) {
    copy_strided(dev, dtype_of<T>(), rank, dims, part.data(), ps, zt, zs, s, fn);
  } else {
    copy_strided(dev, dtype_of<T>(), rank, dims, zt, zs, part.data(), ps, s, fn);
  }
}

template <class T>
Array<T> complex_part(const char* fn, const Array<complex<T>>& z, int which, const Stream& stream) {
  const Device dev = check_args(fn, {arg_strided("z", z)});
  (void)make_call(fn, dev, stream);  // the stream's device check
  Array<T> out = new_output<T>(fn, z.shape(), dev, stream);
  if (out.size() > 0) complex_part_copy(fn, z, which, out, false, stream);
  return out;
}
}  // namespace
}  // namespace detail

template <class T>
Array<T> real(const Array<complex<T>>& z, const Stream& stream) {
  return detail::complex_part("porta::real", z, 0, stream);
}
template <class T>
Array<T> imag(const Array<complex<T>>& z, const Stream& stream) {
  return detail::complex_part("porta::imag", z, 1, stream);
}
template <class T>
Array<T> view_as_real(const Array<complex<T>>& z) {
  constexpr const char* fn = "porta::view_as_real";
  z.check_valid(fn);
  if (!z.is_contiguous())
    detail::throw_invalid(fn, ("z is a strided view (" + z.shape().to_string() +
                               "): a view without a copy needs contiguous memory; z.contiguous() copies first")
                                  .c_str());
  if (z.rank() >= Shape::kMaxRank)
    detail::throw_invalid(
        fn, ("z has " + std::to_string(z.rank()) + " axes; with the pair axis the view would need " +
             std::to_string(z.rank() + 1) + " (porta arrays have at most " + std::to_string(Shape::kMaxRank) + ")")
                .c_str());
  std::int64_t dims[Shape::kMaxRank] = {};
  for (int i = 0; i < z.rank(); ++i) dims[i] = z.dim(i);
  dims[z.rank()] = 2;
  auto owner = std::make_shared<Array<complex<T>>>(z.reshaped(z.shape()));  // keeps z's memory alive
  return Array<T>::borrow(reinterpret_cast<T*>(owner->data()), detail::make_shape(dims, z.rank() + 1), z.device(),
                          owner);
}
template <class T>
Array<complex<T>> view_as_complex(const Array<T>& x) {
  constexpr const char* fn = "porta::view_as_complex";
  x.check_valid(fn);
  if (x.rank() < 1 || x.dim(x.rank() - 1) != 2)
    detail::throw_invalid(
        fn, ("x must have a last axis of 2 (real, imaginary) (x is " + x.shape().to_string() + ")").c_str());
  if (!x.is_contiguous())
    detail::throw_invalid(fn, ("x is a strided view (" + x.shape().to_string() +
                               "): a view without a copy needs contiguous memory; x.contiguous() copies first")
                                  .c_str());
  // The pair must start on the complex type's alignment, as every porta allocation does; a view
  // that starts at an odd element does not.
  if (reinterpret_cast<std::uintptr_t>(x.data()) % alignof(complex<T>) != 0)
    detail::throw_invalid(fn, "x does not start on a complex element's alignment (a view at an odd offset?)");
  std::int64_t dims[Shape::kMaxRank] = {};
  for (int i = 0; i + 1 < x.rank(); ++i) dims[i] = x.dim(i);
  auto owner = std::make_shared<Array<T>>(x.reshaped(x.shape()));
  return Array<complex<T>>::borrow(reinterpret_cast<complex<T>*>(owner->data()), detail::make_shape(dims, x.rank() - 1),
                                   x.device(), owner);
}
template <class T>
Array<complex<T>> make_complex(const Array<T>& re, const Array<T>& im, const Stream& stream) {
  constexpr const char* fn = "porta::make_complex";
  const detail::ArgRef rr = detail::arg_strided("re", re), ri = detail::arg_strided("im", im);
  const Device dev = detail::check_args(fn, {rr, ri});
  if (re.shape() != im.shape()) detail::throw_shapes_differ(fn, rr, ri);
  (void)detail::make_call(fn, dev, stream);
  Array<complex<T>> out = detail::new_output<complex<T>>(fn, re.shape(), dev, stream);
  if (out.size() == 0) return out;
  detail::complex_part_copy(fn, out, 0, const_cast<Array<T>&>(re), true, stream);
  detail::complex_part_copy(fn, out, 1, const_cast<Array<T>&>(im), true, stream);
  return out;
}

// ---- axpy, fill, iota, copy, cast ------------------------------------------------------------------
template <class T>
void axpy(T alpha, const Array<T>& x, Array<T>& y, const Stream& stream) {
  constexpr const char* fn = "porta::axpy";
  const detail::ArgRef rx = detail::arg("x", x), ry = detail::arg("y", y);
  const Device dev = detail::check_args(fn, {rx, ry});
  if (x.shape() != y.shape()) detail::throw_shapes_differ(fn, rx, ry);
  const detail::BackendCall c = detail::make_call(fn, dev, stream);
  if (x.size() == 0) return;
  c.run(c.table->axpy, detail::dtype_of<T>(), x.size(), detail::to_scalar(alpha), x.data(), y.data(), c.stream);
}

template <class T>
void fill(Array<T>& y, T value, const Stream& stream) {
  constexpr const char* fn = "porta::fill";
  const Device dev = detail::check_args(fn, {detail::arg_strided("y", y)});
  const detail::BackendCall c = detail::make_call(fn, dev, stream);
  if (y.size() == 0) return;
  if (!y.is_contiguous()) {  // a view: one element, broadcast into it by a strided copy (strides 0)
    Array<T> one = full<T>(Shape{1}, value, dev, stream);
    const std::int64_t zeros[Shape::kMaxRank] = {0, 0, 0, 0};
    std::int64_t dims[Shape::kMaxRank] = {};
    for (int i = 0; i < y.rank(); ++i) dims[i] = y.dim(i);
    detail::copy_strided(dev, detail::dtype_of<T>(), y.rank(), dims, one.data(), zeros, y.data(), y.strides().data(),
                         c.stream, fn);
    return;
  }
  c.run(c.table->fill, detail::dtype_of<T>(), y.size(), detail::to_scalar(value), y.data(), c.stream);
}

template <class T>
void iota(Array<T>& y, T start, T step, const Stream& stream) {
  constexpr const char* fn = "porta::iota";
  const Device dev = detail::check_args(fn, {detail::arg("y", y)});
  const detail::BackendCall c = detail::make_call(fn, dev, stream);
  if (y.size() == 0) return;
  c.run(c.table->iota, detail::dtype_of<T>(), y.size(), detail::to_scalar(start), detail::to_scalar(step), y.data(),
        c.stream);
}

template <class T>
void copy(const Array<T>& src, Array<T>& dst, const Stream& stream) {
  constexpr const char* fn = "porta::copy";
  const detail::ArgRef rs = detail::arg("src", src), rd = detail::arg("dst", dst);
  if (!src.valid() || !dst.valid()) (void)detail::check_args(fn, {rs, rd});  // throws the moved-from error
  if (src.size() != dst.size())
    detail::throw_invalid(
        fn, ("sizes differ (src is " + src.shape().to_string() + ", dst is " + dst.shape().to_string() + ")").c_str());
  const Device sd = src.device(), dd = dst.device();
  const std::size_t bytes = static_cast<std::size_t>(src.size()) * sizeof(T);
  if (!src.is_contiguous() || !dst.is_contiguous()) {
    // Views: element by element in row-major order, so equal shapes are required (a reshape of a
    // view is not a view); between devices, through a compact copy of src.
    if (src.shape() != dst.shape())
      detail::throw_invalid(fn, ("shapes differ (src is " + src.shape().to_string() + ", dst is " +
                                 dst.shape().to_string() + "): a copy from or into a strided view needs equal shapes")
                                    .c_str());
    if (sd == dd) return dst.assign(src, stream);
    if (!dst.is_contiguous()) detail::throw_not_contiguous(fn, "dst", dst.shape().to_string().c_str());
    return copy(src.contiguous(stream), dst, stream);
  }
  if (sd == dd) {
    const porta_stream s = detail::stream_for(stream, sd, fn);
    detail::copy_between(dd, dst.data(), sd, src.data(), bytes, s);
    return;
  }
  // Between devices the stream may belong to either side. A destination stream is drained first so
  // that its earlier work on dst is ordered before the (synchronous) copy.
  porta_stream s = nullptr;
  if (stream.has_device() && stream.device() == dd) {
    stream.synchronize();
  } else if (stream.has_device() && stream.device() != sd) {
    throw DeviceMismatch(std::string(fn) + ": stream is on " + stream.device().to_string() + ", src on " +
                         sd.to_string() + " and dst on " + dd.to_string());
  } else {
    s = detail::stream_for(stream, sd, fn);
  }
  detail::copy_between(dd, dst.data(), sd, src.data(), bytes, s);
}

template <class To, class From>
Array<To> cast(const Array<From>& x, const Stream& stream) {
  constexpr const char* fn = "porta::cast";
  const Device dev = detail::check_args(fn, {detail::arg_strided("x", x)});
  const detail::BackendCall c = detail::make_call(fn, dev, stream);
  if constexpr (std::is_same_v<To, From>) {
    return x.clone(stream);  // contiguous, also from a view
  } else {
    Array<To> out(x.shape(), dev, stream);
    if (x.size() == 0) return out;
    Array<From> hold;
    const Array<From>& cx = detail::contiguous_input(x, hold, stream);
    c.run(c.table->cast, detail::dtype_of<From>(), detail::dtype_of<To>(), cx.size(), cx.data(), out.data(), c.stream);
    return out;
  }
}

// ---- explicit instantiations -----------------------------------------------------------------------
#define PORTA_INSTANTIATE_BINARY(name, T)                                            \
  template void name<T>(const Array<T>&, const Array<T>&, Array<T>&, const Stream&); \
  template Array<T> name<T>(const Array<T>&, const Array<T>&, const Stream&);        \
  template void name<T>(const Array<T>&, T, Array<T>&, const Stream&);               \
  template Array<T> name<T>(const Array<T>&, T, const Stream&);                      \
  template void name<T>(T, const Array<T>&, Array<T>&, const Stream&);               \
  template Array<T> name<T>(T, const Array<T>&, const Stream&);
#define PORTA_INSTANTIATE_UNARY(name, T)                            \
  template void name<T>(const Array<T>&, Array<T>&, const Stream&); \
  template Array<T> name<T>(const Array<T>&, const Stream&);

#define PORTA_INSTANTIATE_MAPS(T)                                                           \
  PORTA_INSTANTIATE_BINARY(add, T)                                                          \
  PORTA_INSTANTIATE_BINARY(sub, T)                                                          \
  PORTA_INSTANTIATE_BINARY(mul, T)                                                          \
  PORTA_INSTANTIATE_BINARY(div, T)                                                          \
  PORTA_INSTANTIATE_BINARY(minimum, T)                                                      \
  PORTA_INSTANTIATE_BINARY(maximum, T)                                                      \
  PORTA_INSTANTIATE_BINARY(pow, T)                                                          \
  template Array<T> relu_grad<T>(const Array<T>&, const Array<T>&, const Stream&);          \
  template void relu_grad<T>(const Array<T>&, const Array<T>&, Array<T>&, const Stream&);   \
  PORTA_INSTANTIATE_UNARY(neg, T)                                                           \
  PORTA_INSTANTIATE_UNARY(abs, T)                                                           \
  PORTA_INSTANTIATE_UNARY(sqrt, T)                                                          \
  PORTA_INSTANTIATE_UNARY(exp, T)                                                           \
  PORTA_INSTANTIATE_UNARY(log, T)                                                           \
  PORTA_INSTANTIATE_UNARY(sin, T)                                                           \
  PORTA_INSTANTIATE_UNARY(cos, T)                                                           \
  PORTA_INSTANTIATE_UNARY(tanh, T)                                                          \
  PORTA_INSTANTIATE_UNARY(relu, T)                                                          \
  PORTA_INSTANTIATE_UNARY(sigmoid, T)                                                       \
  PORTA_INSTANTIATE_UNARY(square, T)                                                        \
  PORTA_INSTANTIATE_UNARY(conj, T)                                                          \
  template void axpy<T>(T, const Array<T>&, Array<T>&, const Stream&);                      \
  template void fill<T>(Array<T>&, T, const Stream&);                                       \
  template void iota<T>(Array<T>&, T, T, const Stream&);                                    \
  template void copy<T>(const Array<T>&, Array<T>&, const Stream&);                         \
  template Array<T> cast<T, float>(const Array<float>&, const Stream&);                     \
  template Array<T> cast<T, double>(const Array<double>&, const Stream&);                   \
  template Array<T> cast<T, std::int32_t>(const Array<std::int32_t>&, const Stream&);       \
  template Array<T> cast<T, std::int64_t>(const Array<std::int64_t>&, const Stream&);       \
  template Array<T> cast<T, complex<float>>(const Array<complex<float>>&, const Stream&);   \
  template Array<T> cast<T, complex<double>>(const Array<complex<double>>&, const Stream&); \
  template Array<T> cast<T, float16>(const Array<float16>&, const Stream&);                 \
  template Array<T> cast<T, bfloat16>(const Array<bfloat16>&, const Stream&);

PORTA_FOR_EACH_DTYPE(PORTA_INSTANTIATE_MAPS)
#define PORTA_INSTANTIATE_COMPLEX_PARTS(T)                                                     \
  template Array<T> abs<T>(const Array<complex<T>>&, const Stream&);                           \
  template Array<T> real<T>(const Array<complex<T>>&, const Stream&);                          \
  template Array<T> imag<T>(const Array<complex<T>>&, const Stream&);                          \
  template Array<complex<T>> make_complex<T>(const Array<T>&, const Array<T>&, const Stream&); \
  template Array<T> view_as_real<T>(const Array<complex<T>>&);                                 \
  template Array<complex<T>> view_as_complex<T>(const Array<T>&);
PORTA_INSTANTIATE_COMPLEX_PARTS(float)
PORTA_INSTANTIATE_COMPLEX_PARTS(double)

}  // namespace porta
