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
//     const detail::Call c = detail::make_call(fn, dev, stream);
//
//     // 3. Allocate the output on the same device and stream. It is an Array, so it is freed if
//     //    anything below throws.
//     Array<T> out = new_output<T>(fn, x.shape(), dev, stream);
//     if (out.size() == 0) return out;            // backends need not handle n == 0
//
//     // 4. Call the backend with the dtype and the op, and turn its status into a porta::Error
//     //    (c.check -> detail::throw_status, which prefixes fn to the backend's message).
//     c.check(c.t().my_entry(c.dev(), detail::dtype_of<T>(), out.size(), x.data(), y.data(),
//                            out.data(), c.stream));
//     return out;
//   }
//
//   // 5. Instantiate it for every dtype at the bottom of the file (PORTA_FOR_EACH_DTYPE) and
//   //    declare it in include/porta/algorithms.hpp. A new backend entry goes at the END of
//   //    porta_backend_v1 (the runtime stubs entries that older plugins lack) and is implemented in
//   //    backends/openmp and backends/gpu.
// ------------------------------------------------------------------------------------------------
#include <cstdint>
#include <type_traits>

#include "algorithms/common.hpp"
#include "porta/algorithms.hpp"

namespace porta {
namespace detail {
namespace {

// How the backend's strided binary entry walks a and b to produce a contiguous out of a's shape.
struct BinaryPlan {
  std::int64_t rows, cols, a_rs, a_cs, b_rs, b_cs;
};

// Equal shapes are one contiguous row; a 2-D a broadcasts b of shape {cols} or {1, cols} over its
// rows (b_rs = 0) and b of shape {rows, 1} over its columns (b_cs = 0).
bool plan_binary(const Shape& a, const Shape& b, BinaryPlan& p) {
  if (a == b) {
    const std::int64_t n = a.size();
    p = {1, n, n, 1, n, 1};
    return true;
  }
  if (a.rank() != 2) return false;
  const std::int64_t rows = a[0], cols = a[1];
  if ((b.rank() == 1 && b[0] == cols) || (b.rank() == 2 && b[0] == 1 && b[1] == cols)) {
    p = {rows, cols, cols, 1, 0, 1};
    return true;
  }
  if (b.rank() == 2 && b[0] == rows && b[1] == 1) {
    p = {rows, cols, cols, 1, 1, 0};
    return true;
  }
  return false;
}

struct BinaryNames {
  const char* a;
  const char* b;
};
constexpr BinaryNames kAB{"a", "b"};

template <class T>
void binary_run(const Call& c, porta_binary_op op, const BinaryPlan& p, const Array<T>& a, const Array<T>& b,
                Array<T>& out) {
  if (p.rows == 0 || p.cols == 0) return;
  c.check(c.t().binary(c.dev(), op, dtype_of<T>(), p.rows, p.cols, a.data(), p.a_rs, p.a_cs, b.data(), p.b_rs, p.b_cs,
                       out.data(), c.stream));
}

template <class T>
void binary_into(porta_binary_op op, const char* fn, BinaryNames names, const Array<T>& a, const Array<T>& b,
                 Array<T>& out, const Stream& stream) {
  const ArgRef ra = arg(names.a, a), rb = arg(names.b, b), ro = arg("out", out);
  const Device dev = check_args(fn, {ra, rb, ro});
  BinaryPlan p{};
  if (!plan_binary(a.shape(), b.shape(), p)) throw_shapes_differ(fn, ra, rb);
  check_out_shape(fn, ro, ra);
  const Call c = make_call(fn, dev, stream);
  binary_run(c, op, p, a, b, out);
}

template <class T>
Array<T> binary_new(porta_binary_op op, const char* fn, BinaryNames names, const Array<T>& a, const Array<T>& b,
                    const Stream& stream) {
  const ArgRef ra = arg(names.a, a), rb = arg(names.b, b);
  const Device dev = check_args(fn, {ra, rb});
  BinaryPlan p{};
  if (!plan_binary(a.shape(), b.shape(), p)) throw_shapes_differ(fn, ra, rb);
  const Call c = make_call(fn, dev, stream);
  Array<T> out = new_output<T>(fn, a.shape(), dev, stream);
  binary_run(c, op, p, a, b, out);
  return out;
}

// x op value, or value op x when scalar_first.
template <class T>
void scalar_into(porta_binary_op op, const char* fn, const Array<T>& x, T value, bool scalar_first, Array<T>& out,
                 const Stream& stream) {
  const ArgRef rx = arg(scalar_first ? "b" : "a", x), ro = arg("out", out);
  const Device dev = check_args(fn, {rx, ro});
  check_out_shape(fn, ro, rx);
  const Call c = make_call(fn, dev, stream);
  if (x.size() == 0) return;
  c.check(c.t().binary_scalar(c.dev(), op, dtype_of<T>(), x.size(), x.data(), to_scalar(value), scalar_first ? 1 : 0,
                              out.data(), c.stream));
}

template <class T>
Array<T> scalar_new(porta_binary_op op, const char* fn, const Array<T>& x, T value, bool scalar_first,
                    const Stream& stream) {
  const Device dev = check_args(fn, {arg(scalar_first ? "b" : "a", x)});
  const Call c = make_call(fn, dev, stream);
  Array<T> out = new_output<T>(fn, x.shape(), dev, stream);
  if (x.size() == 0) return out;
  c.check(c.t().binary_scalar(c.dev(), op, dtype_of<T>(), x.size(), x.data(), to_scalar(value), scalar_first ? 1 : 0,
                              out.data(), c.stream));
  return out;
}

template <class T>
void unary_into(porta_unary_op op, const char* fn, const Array<T>& x, Array<T>& out, const Stream& stream) {
  const ArgRef rx = arg("x", x), ro = arg("out", out);
  const Device dev = check_args(fn, {rx, ro});
  check_out_shape(fn, ro, rx);
  const Call c = make_call(fn, dev, stream);
  if (x.size() == 0) return;
  c.check(c.t().unary(c.dev(), op, dtype_of<T>(), x.size(), x.data(), out.data(), c.stream));
}

template <class T>
Array<T> unary_new(porta_unary_op op, const char* fn, const Array<T>& x, const Stream& stream) {
  const Device dev = check_args(fn, {arg("x", x)});
  const Call c = make_call(fn, dev, stream);
  Array<T> out = new_output<T>(fn, x.shape(), dev, stream);
  if (x.size() == 0) return out;
  c.check(c.t().unary(c.dev(), op, dtype_of<T>(), x.size(), x.data(), out.data(), c.stream));
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
#undef PORTA_DEFINE_UNARY

// ---- axpy, fill, iota, copy, cast ------------------------------------------------------------------
template <class T>
void axpy(T alpha, const Array<T>& x, Array<T>& y, const Stream& stream) {
  constexpr const char* fn = "porta::axpy";
  const detail::ArgRef rx = detail::arg("x", x), ry = detail::arg("y", y);
  const Device dev = detail::check_args(fn, {rx, ry});
  if (x.shape() != y.shape()) detail::throw_shapes_differ(fn, rx, ry);
  const detail::Call c = detail::make_call(fn, dev, stream);
  if (x.size() == 0) return;
  c.check(c.t().axpy(c.dev(), detail::dtype_of<T>(), x.size(), detail::to_scalar(alpha), x.data(), y.data(), c.stream));
}

template <class T>
void fill(Array<T>& y, T value, const Stream& stream) {
  constexpr const char* fn = "porta::fill";
  const Device dev = detail::check_args(fn, {detail::arg("y", y)});
  const detail::Call c = detail::make_call(fn, dev, stream);
  if (y.size() == 0) return;
  c.check(c.t().fill(c.dev(), detail::dtype_of<T>(), y.size(), detail::to_scalar(value), y.data(), c.stream));
}

template <class T>
void iota(Array<T>& y, T start, T step, const Stream& stream) {
  constexpr const char* fn = "porta::iota";
  const Device dev = detail::check_args(fn, {detail::arg("y", y)});
  const detail::Call c = detail::make_call(fn, dev, stream);
  if (y.size() == 0) return;
  c.check(c.t().iota(c.dev(), detail::dtype_of<T>(), y.size(), detail::to_scalar(start), detail::to_scalar(step),
                     y.data(), c.stream));
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
  const Device dev = detail::check_args(fn, {detail::arg("x", x)});
  const detail::Call c = detail::make_call(fn, dev, stream);
  Array<To> out(x.shape(), dev, stream);
  if (x.size() == 0) return out;
  if constexpr (std::is_same_v<To, From>) {
    c.check(c.t().copy(c.dev(), out.data(), x.data(), static_cast<std::size_t>(x.size()) * sizeof(To),
                       PORTA_COPY_DEVICE_TO_DEVICE, c.stream));
  } else {
    c.check(c.t().cast(c.dev(), detail::dtype_of<From>(), detail::dtype_of<To>(), x.size(), x.data(), out.data(),
                       c.stream));
  }
  return out;
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

#define PORTA_INSTANTIATE_MAPS(T)                                                         \
  PORTA_INSTANTIATE_BINARY(add, T)                                                        \
  PORTA_INSTANTIATE_BINARY(sub, T)                                                        \
  PORTA_INSTANTIATE_BINARY(mul, T)                                                        \
  PORTA_INSTANTIATE_BINARY(div, T)                                                        \
  PORTA_INSTANTIATE_BINARY(minimum, T)                                                    \
  PORTA_INSTANTIATE_BINARY(maximum, T)                                                    \
  PORTA_INSTANTIATE_BINARY(pow, T)                                                        \
  template Array<T> relu_grad<T>(const Array<T>&, const Array<T>&, const Stream&);        \
  template void relu_grad<T>(const Array<T>&, const Array<T>&, Array<T>&, const Stream&); \
  PORTA_INSTANTIATE_UNARY(neg, T)                                                         \
  PORTA_INSTANTIATE_UNARY(abs, T)                                                         \
  PORTA_INSTANTIATE_UNARY(sqrt, T)                                                        \
  PORTA_INSTANTIATE_UNARY(exp, T)                                                         \
  PORTA_INSTANTIATE_UNARY(log, T)                                                         \
  PORTA_INSTANTIATE_UNARY(sin, T)                                                         \
  PORTA_INSTANTIATE_UNARY(cos, T)                                                         \
  PORTA_INSTANTIATE_UNARY(tanh, T)                                                        \
  PORTA_INSTANTIATE_UNARY(relu, T)                                                        \
  PORTA_INSTANTIATE_UNARY(sigmoid, T)                                                     \
  PORTA_INSTANTIATE_UNARY(square, T)                                                      \
  template void axpy<T>(T, const Array<T>&, Array<T>&, const Stream&);                    \
  template void fill<T>(Array<T>&, T, const Stream&);                                     \
  template void iota<T>(Array<T>&, T, T, const Stream&);                                  \
  template void copy<T>(const Array<T>&, Array<T>&, const Stream&);                       \
  template Array<T> cast<T, float>(const Array<float>&, const Stream&);                   \
  template Array<T> cast<T, double>(const Array<double>&, const Stream&);                 \
  template Array<T> cast<T, std::int32_t>(const Array<std::int32_t>&, const Stream&);     \
  template Array<T> cast<T, std::int64_t>(const Array<std::int64_t>&, const Stream&);

PORTA_FOR_EACH_DTYPE(PORTA_INSTANTIATE_MAPS)

}  // namespace porta
