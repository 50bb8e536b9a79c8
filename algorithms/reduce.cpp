// SPDX-License-Identifier: Apache-2.0
// Reductions of the front end. The backends follow the canonical order of
// include/porta/detail/reduce_order.hpp, so everything done here on the host (the division of a
// mean, the square root of norm2, NaN canonicalisation) is itself deterministic and keeps the
// results bit-identical across backends.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "algorithms/common.hpp"
#include "algorithms/strided.hpp"
#include "porta/algorithms.hpp"
#include "porta/detail/ops.hpp"
#include "porta/detail/reduce_order.hpp"

namespace porta {
namespace detail {
namespace {

const char* reduce_name(porta_reduce_op op) {
  switch (op) {
    case PORTA_REDUCE_MIN:
      return "min";
    case PORTA_REDUCE_MAX:
      return "max";
    default:
      return "this reduction";
  }
}

// The value of a full reduction, read back to the host (synchronises the stream).
template <class T>
T reduce_full(porta_reduce_op op, const char* fn, const Array<T>& x_in, const Stream& stream) {
  const Device dev = check_args(fn, {arg_strided("x", x_in)});
  Array<T> hold;  // a view is reduced from a compact copy (same elements, same order: same bits)
  const Array<T>& x = contiguous_input(x_in, hold, stream);
  const BackendCall c = make_call(fn, dev, stream);
  const std::int64_t n = x.size();
  if (n == 0) {
    // The backend's sum identity is -0.0 (exact for padding lanes); an empty sum is +0 as in NumPy.
    if (op == PORTA_REDUCE_SUM || op == PORTA_REDUCE_SUMSQ) return T(0);
    if (op == PORTA_REDUCE_PROD) return T(1);
    throw_invalid(fn,
                  (std::string("the array is empty (") + reduce_name(op) + " of no elements is undefined)").c_str());
  }
  const T r = read_device_scalar<T>(
      c, [&](T* y) { c.run(c.table->reduce, op, dtype_of<T>(), 1, n, 1, x.data(), y, c.stream); });
  return canonical_nan(r);
}

// Reduction along one axis of x viewed as [outer, n, inner]; the result drops that axis.
template <class T>
Array<T> reduce_axis(porta_reduce_op op, const char* fn, const Array<T>& x_in, int axis, bool mean,
                     const Stream& stream) {
  if constexpr (is_half_v<T>) {
    // A 16-bit mean is the float mean of the widened values, rounded once (sums accumulate in float
    // in the backends; the division must happen before the rounding too).
    if (mean) return cast<T>(reduce_axis<float>(op, fn, cast<float>(x_in, stream), axis, true, stream), stream);
  }
  const Device dev = check_args(fn, {arg_strided("x", x_in)});
  Array<T> hold;
  const Array<T>& x = contiguous_input(x_in, hold, stream);
  const int rank = x.rank();
  if (rank == 0) throw_invalid(fn, "an axis reduction needs an array of rank 1 or more (x is a scalar)");
  if (axis < -rank || axis >= rank)
    throw_invalid(
        fn, ("axis " + std::to_string(axis) + " is out of range for a " + std::to_string(rank) + "-D array").c_str());
  if constexpr (!std::is_floating_point_v<T> && !is_complex_v<T>) {
    if (mean)
      throw_invalid(fn, (std::string(dtype_name(dtype_of<T>())) +
                         " arrays have no mean along an axis (floating point only; cast first)")
                            .c_str());
  }
  const int ax = axis < 0 ? axis + rank : axis;
  std::int64_t outer = 1, inner = 1;
  std::int64_t dims[Shape::kMaxRank] = {};
  int r = 0;
  for (int i = 0; i < rank; ++i) {
    if (i < ax) outer *= x.dim(i);
    if (i > ax) inner *= x.dim(i);
    if (i != ax) dims[r++] = x.dim(i);
  }
  const std::int64_t n = x.dim(ax);
  const std::int64_t m = outer * inner;
  // NumPy's rule: reducing an empty axis into a non-empty result needs an identity.
  if (n == 0 && m > 0 && (mean || op == PORTA_REDUCE_MIN || op == PORTA_REDUCE_MAX))
    throw_invalid(fn, ("cannot reduce the empty axis " + std::to_string(axis) + " of a " + x.shape().to_string() +
                       " array (" + (mean ? "mean" : reduce_name(op)) + " of no elements is undefined)")
                          .c_str());
  const BackendCall c = make_call(fn, dev, stream);
  Array<T> out = new_output<T>(fn, make_shape(dims, rank - 1), dev, stream);
  if (m == 0) return out;
  if (n == 0) {
    const T identity = op == PORTA_REDUCE_PROD ? T(1) : T(0);  // +0, not the backend's -0.0
    c.run(c.table->fill, dtype_of<T>(), m, to_scalar(identity), out.data(), c.stream);
    return out;
  }
  c.run(c.table->reduce, op, dtype_of<T>(), outer, n, inner, x.data(), out.data(), c.stream);
  if (mean) {
    // Divided in T on the device, as the full mean divides in T on the host: the same bits.
    c.run(c.table->binary_scalar, PORTA_BINARY_DIV, dtype_of<T>(), m, out.data(), to_scalar(static_cast<T>(n)), 0,
          out.data(), c.stream);
  }
  return out;
}

// The sum of an integer array in double, for mean: NumPy's rule (integers accumulate in float64),
// so it never wraps where the sum in T would (the mean of int32 {INT32_MAX, INT32_MAX} is
// 2147483647, not -1). Bit for bit the canonical sum of cast<double>(x), on every backend, without
// a double copy of x: blocks of whole canonical chunks are converted into one bounded temporary,
// each chunk is summed as a row of an axis reduction (a row of kReduceChunk elements is exactly one
// chunk of the canonical order), and the chunk sums are then reduced, which is the canonical
// order's next level. Only existing backend entries (cast, reduce), so every backend has it.
template <class T>
double integer_sum_as_double(const BackendCall& c, const Array<T>& x, const Stream& stream) {
  constexpr std::int64_t kBlockChunks = 32;  // 1 Mi elements, 8 MiB of doubles per block
  const std::int64_t n = x.size();
  const std::int64_t chunks = reduce_chunk_count(n);
  const std::int64_t block = std::min(chunks, kBlockChunks) * kReduceChunk;
  Array<double> tmp(Shape{std::min(n, block)}, c.device, stream);
  Array<double> partial(Shape{chunks > 1 ? chunks : 0}, c.device, stream);
  for (std::int64_t b = 0; b < n; b += block) {
    const std::int64_t len = std::min(block, n - b);
    c.run(c.table->cast, dtype_of<T>(), PORTA_F64, len, x.data() + b, tmp.data(), c.stream);
    if (chunks == 1) break;
    const std::int64_t rows = len / kReduceChunk, tail = len % kReduceChunk;
    double* p = partial.data() + b / kReduceChunk;
    if (rows > 0) c.run(c.table->reduce, PORTA_REDUCE_SUM, PORTA_F64, rows, kReduceChunk, 1, tmp.data(), p, c.stream);
    if (tail > 0)
      c.run(c.table->reduce, PORTA_REDUCE_SUM, PORTA_F64, 1, tail, 1, tmp.data() + rows * kReduceChunk, p + rows,
            c.stream);
  }
  const double* last = chunks == 1 ? tmp.data() : partial.data();
  const std::int64_t last_n = chunks == 1 ? n : chunks;
  return read_device_scalar<double>(
      c, [&](double* y) { c.run(c.table->reduce, PORTA_REDUCE_SUM, PORTA_F64, 1, last_n, 1, last, y, c.stream); });
}

}  // namespace
}  // namespace detail

template <class T>
T sum(const Array<T>& x, const Stream& stream) {
  return detail::reduce_full<T>(PORTA_REDUCE_SUM, "porta::sum", x, stream);
}
template <class T>
T prod(const Array<T>& x, const Stream& stream) {
  return detail::reduce_full<T>(PORTA_REDUCE_PROD, "porta::prod", x, stream);
}
template <class T>
T min(const Array<T>& x, const Stream& stream) {
  return detail::reduce_full<T>(PORTA_REDUCE_MIN, "porta::min", x, stream);
}
template <class T>
T max(const Array<T>& x, const Stream& stream) {
  return detail::reduce_full<T>(PORTA_REDUCE_MAX, "porta::max", x, stream);
}

template <class T>
double mean(const Array<T>& x, const Stream& stream) {
  constexpr const char* fn = "porta::mean";
  x.check_valid(fn);
  const std::int64_t n = x.size();
  if (n == 0) {
    // Still report a missing device before the emptiness.
    (void)detail::make_call(fn, x.device(), stream);
    detail::throw_invalid(fn, "the array is empty (mean of no elements is undefined)");
  }
  if constexpr (is_half_v<T>) {
    return mean(cast<float>(x, stream), stream);  // in float, as 16-bit arithmetic computes
  } else if constexpr (std::is_floating_point_v<T>) {
    const T s = detail::reduce_full<T>(PORTA_REDUCE_SUM, fn, x, stream);
    return static_cast<double>(detail::canonical_nan(static_cast<T>(s / static_cast<T>(n))));
  } else {
    const Device dev = detail::check_args(fn, {detail::arg_strided("x", x)});
    const detail::BackendCall c = detail::make_call(fn, dev, stream);
    Array<T> hold;
    return detail::integer_sum_as_double(c, detail::contiguous_input(x, hold, stream), stream) / static_cast<double>(n);
  }
}

template <class T>
T dot(const Array<T>& x_in, const Array<T>& y_in, const Stream& stream) {
  constexpr const char* fn = "porta::dot";
  const detail::ArgRef rx = detail::arg_strided("x", x_in), ry = detail::arg_strided("y", y_in);
  const Device dev = detail::check_args(fn, {rx, ry});
  if (x_in.shape() != y_in.shape()) detail::throw_shapes_differ(fn, rx, ry);
  Array<T> hx, hy;
  const Array<T>& x = detail::contiguous_input(x_in, hx, stream);
  const Array<T>& y = detail::contiguous_input(y_in, hy, stream);
  const detail::BackendCall c = detail::make_call(fn, dev, stream);
  if (x.size() == 0) return T(0);
  const T r = detail::read_device_scalar<T>(
      c, [&](T* out) { c.run(c.table->dot, detail::dtype_of<T>(), x.size(), x.data(), y.data(), out, c.stream); });
  return detail::canonical_nan(r);
}

template <class T>
T norm2(const Array<T>& x, const Stream& stream) {
  constexpr const char* fn = "porta::norm2";
  // Instantiated for every dtype so that integer callers get a clear error instead of a link error.
  if constexpr (is_half_v<T>) {
    // In float, rounded once: the sum of squares of float16 values overflows 16 bits from a norm
    // of 256 on.
    return T(norm2(cast<float>(x, stream), stream));
  } else if constexpr (std::is_floating_point_v<T>) {
    const T ss = detail::reduce_full<T>(PORTA_REDUCE_SUMSQ, fn, x, stream);
    return detail::canonical_nan(static_cast<T>(std::sqrt(ss)));
  } else {
    x.check_valid(fn);
    detail::throw_invalid(fn, (std::string(detail::dtype_name(detail::dtype_of<T>())) +
                               " arrays are not supported (floating point only; cast first)")
                                  .c_str());
  }
}

template <class T>
Array<T> sum(const Array<T>& x, int axis, const Stream& stream) {
  return detail::reduce_axis<T>(PORTA_REDUCE_SUM, "porta::sum", x, axis, false, stream);
}
template <class T>
Array<T> prod(const Array<T>& x, int axis, const Stream& stream) {
  return detail::reduce_axis<T>(PORTA_REDUCE_PROD, "porta::prod", x, axis, false, stream);
}
template <class T>
Array<T> min(const Array<T>& x, int axis, const Stream& stream) {
  return detail::reduce_axis<T>(PORTA_REDUCE_MIN, "porta::min", x, axis, false, stream);
}
template <class T>
Array<T> max(const Array<T>& x, int axis, const Stream& stream) {
  return detail::reduce_axis<T>(PORTA_REDUCE_MAX, "porta::max", x, axis, false, stream);
}
template <class T>
Array<T> mean(const Array<T>& x, int axis, const Stream& stream) {
  return detail::reduce_axis<T>(PORTA_REDUCE_SUM, "porta::mean", x, axis, true, stream);
}

template <class T>
complex<T> vdot(const Array<complex<T>>& x, const Array<complex<T>>& y, const Stream& stream) {
  constexpr const char* fn = "porta::vdot";
  const detail::ArgRef rx = detail::arg_strided("x", x), ry = detail::arg_strided("y", y);
  (void)detail::check_args(fn, {rx, ry});
  if (x.shape() != y.shape()) detail::throw_shapes_differ(fn, rx, ry);
  return dot(conj(x, stream), y, stream);
}

template <class T>
complex<T> mean(const Array<complex<T>>& x, const Stream& stream) {
  constexpr const char* fn = "porta::mean";
  x.check_valid(fn);
  if (x.size() == 0) {
    (void)detail::make_call(fn, x.device(), stream);
    detail::throw_invalid(fn, "the array is empty (mean of no elements is undefined)");
  }
  const complex<T> s = detail::reduce_full<complex<T>>(PORTA_REDUCE_SUM, fn, x, stream);
  return detail::canonical_nan(s / complex<T>(static_cast<T>(x.size())));
}

template <class T>
T norm2(const Array<complex<T>>& x, const Stream& stream) {
  const complex<T> ss = vdot(x, x, stream);  // sum |x|^2, a real number
  return detail::canonical_nan(static_cast<T>(std::sqrt(ss.re)));
}

#define PORTA_INSTANTIATE_REDUCE(T)                                   \
  template T sum<T>(const Array<T>&, const Stream&);                  \
  template T prod<T>(const Array<T>&, const Stream&);                 \
  template T min<T>(const Array<T>&, const Stream&);                  \
  template T max<T>(const Array<T>&, const Stream&);                  \
  template T dot<T>(const Array<T>&, const Array<T>&, const Stream&); \
  template Array<T> sum<T>(const Array<T>&, int, const Stream&);      \
  template Array<T> prod<T>(const Array<T>&, int, const Stream&);     \
  template Array<T> min<T>(const Array<T>&, int, const Stream&);      \
  template Array<T> max<T>(const Array<T>&, int, const Stream&);      \
  template Array<T> mean<T>(const Array<T>&, int, const Stream&);
PORTA_FOR_EACH_DTYPE(PORTA_INSTANTIATE_REDUCE)
// The full mean and norm2 of a complex array have their own overloads above.
#define PORTA_INSTANTIATE_REDUCE_ORDERED(T)                \
  template double mean<T>(const Array<T>&, const Stream&); \
  template T norm2<T>(const Array<T>&, const Stream&);
PORTA_FOR_EACH_ORDERED_DTYPE(PORTA_INSTANTIATE_REDUCE_ORDERED)
#define PORTA_INSTANTIATE_REDUCE_COMPLEX(T)                                                       \
  template complex<T> vdot<T>(const Array<complex<T>>&, const Array<complex<T>>&, const Stream&); \
  template complex<T> mean<T>(const Array<complex<T>>&, const Stream&);                           \
  template T norm2<T>(const Array<complex<T>>&, const Stream&);
PORTA_INSTANTIATE_REDUCE_COMPLEX(float)
PORTA_INSTANTIATE_REDUCE_COMPLEX(double)

}  // namespace porta
