// SPDX-License-Identifier: Apache-2.0
// Built-in algorithms: usable from plain C++ on every device, compiled inside each backend.
// Every function takes an optional Stream (the arrays' device's default stream when omitted) and
// is asynchronous on GPU streams; functions that return a host value synchronize.
// Arrays in one call must be on one device (else DeviceMismatch).
//
//   auto x = porta::Array<float>::from(h, dev);
//   auto y = porta::full<float>({n}, 2.0f, dev);
//   porta::axpy(2.0f, x, y);              // y = 2x + y
//   float s = porta::sum(y);              // same bits on every backend
//   auto z = porta::exp(x) * 3.0f + y;    // maps allocate their result
//   auto C = porta::matmul(A, B);         // cuBLAS / rocBLAS / BLAS underneath
//   auto colsum = porta::sum(C, 0);       // along axis 0 of a 2-D array
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "porta/array.hpp"
#include "porta/stream.hpp"

namespace porta {

// ---- maps ------------------------------------------------------------------------------------
// Binary maps accept equal shapes, or broadcasting of b over a 2-D a: b of shape {cols} or
// {1, cols} is added to every row; b of shape {rows, 1} to every column. `out` must have a's shape
// and may alias a or b.
#define PORTA_DECLARE_BINARY(name)                                                                 \
  template <class T>                                                                               \
  void name(const Array<T>& a, const Array<T>& b, Array<T>& out, const Stream& stream = Stream()); \
  template <class T>                                                                               \
  Array<T> name(const Array<T>& a, const Array<T>& b, const Stream& stream = Stream());            \
  template <class T>                                                                               \
  void name(const Array<T>& a, T b, Array<T>& out, const Stream& stream = Stream());               \
  template <class T>                                                                               \
  Array<T> name(const Array<T>& a, T b, const Stream& stream = Stream());                          \
  template <class T>                                                                               \
  void name(T a, const Array<T>& b, Array<T>& out, const Stream& stream = Stream());               \
  template <class T>                                                                               \
  Array<T> name(T a, const Array<T>& b, const Stream& stream = Stream());
PORTA_DECLARE_BINARY(add)
PORTA_DECLARE_BINARY(sub)
PORTA_DECLARE_BINARY(mul)
PORTA_DECLARE_BINARY(div)
PORTA_DECLARE_BINARY(minimum)
PORTA_DECLARE_BINARY(maximum)
PORTA_DECLARE_BINARY(pow)
#undef PORTA_DECLARE_BINARY

// grad * (x > 0): the backward pass of relu.
template <class T>
Array<T> relu_grad(const Array<T>& grad, const Array<T>& x, const Stream& stream = Stream());
template <class T>
void relu_grad(const Array<T>& grad, const Array<T>& x, Array<T>& out, const Stream& stream = Stream());

#define PORTA_DECLARE_UNARY(name)                                               \
  template <class T>                                                            \
  void name(const Array<T>& x, Array<T>& out, const Stream& stream = Stream()); \
  template <class T>                                                            \
  Array<T> name(const Array<T>& x, const Stream& stream = Stream());
PORTA_DECLARE_UNARY(neg)
PORTA_DECLARE_UNARY(abs)
PORTA_DECLARE_UNARY(sqrt)
PORTA_DECLARE_UNARY(exp)
PORTA_DECLARE_UNARY(log)
PORTA_DECLARE_UNARY(sin)
PORTA_DECLARE_UNARY(cos)
PORTA_DECLARE_UNARY(tanh)
PORTA_DECLARE_UNARY(relu)
PORTA_DECLARE_UNARY(sigmoid)
PORTA_DECLARE_UNARY(square)
PORTA_DECLARE_UNARY(conj)  // the complex conjugate; a real or integer array is copied
#undef PORTA_DECLARE_UNARY

// ---- complex arrays --------------------------------------------------------------------------
// Of complex64 and complex128 arrays (porta/complex.hpp) the maps above are defined for add, sub,
// mul, div, neg, sqrt, exp, log, square and conj; those that need an order (minimum, maximum,
// relu, comparisons other than == and !=, sorting, cummax) or have no complex form in porta yet
// (sin, cos, tanh, sigmoid, pow, fused expressions) raise porta::Unavailable naming the dtype.
//   porta::Array<porta::complex<double>> z = ...;
//   porta::Array<double> m = porta::abs(z), re = porta::real(z), im = porta::imag(z);
//   porta::complex<double> s = porta::vdot(z, z);   // sum of conj(z) * z = |z|^2, as numpy.vdot
// |z| (numpy.abs of a complex array): a real array of z's precision.
template <class T>
Array<T> abs(const Array<complex<T>>& z, const Stream& stream = Stream());
// The real and imaginary parts (numpy.real, numpy.imag), as new arrays.
template <class T>
Array<T> real(const Array<complex<T>>& z, const Stream& stream = Stream());
template <class T>
Array<T> imag(const Array<complex<T>>& z, const Stream& stream = Stream());
// re + i im from two real arrays of one shape.
template <class T>
Array<complex<T>> make_complex(const Array<T>& re, const Array<T>& im, const Stream& stream = Stream());
// The same memory, no copy: a complex array seen as a real one with a last axis of 2 (re, im), as
// torch.view_as_real (NumPy: z.view(np.float64).reshape(*z.shape, 2)), and back, as
// torch.view_as_complex. The result is a view: writes through it change the original, which it
// keeps alive. z must be contiguous with at most 3 axes; x contiguous with a last axis of 2.
//   auto spectrum = porta::view_as_complex(porta::fft::rfft(signal));   // (n/2 + 1) complex values
template <class T>
Array<T> view_as_real(const Array<complex<T>>& z);
template <class T>
Array<complex<T>> view_as_complex(const Array<T>& x);

// y = alpha * x + y
template <class T>
void axpy(T alpha, const Array<T>& x, Array<T>& y, const Stream& stream = Stream());
template <class T>
void fill(Array<T>& y, T value, const Stream& stream = Stream());
// A temporary view: porta::fill(m.row(3), 7.0f) is NumPy's m[3] = 7.
template <class T>
void fill(Array<T>&& y, T value, const Stream& stream = Stream()) {
  fill(y, value, stream);
}
// y[i] = start + i * step
template <class T>
void iota(Array<T>& y, T start = T(0), T step = T(1), const Stream& stream = Stream());
// dst = src (same size). Across devices this is the explicit move of data that porta never does
// implicitly.
template <class T>
void copy(const Array<T>& src, Array<T>& dst, const Stream& stream = Stream());
// Elementwise conversion with porta's one definition (ConvertOp in porta/detail/ops.hpp): NaN to an
// integer is 0, out-of-range values saturate, integer narrowing wraps. Not a plain static_cast,
// whose result differs between CPUs and GPUs there.
template <class To, class From>
Array<To> cast(const Array<From>& x, const Stream& stream = Stream());

// ---- reductions --------------------------------------------------------------------------------
// Full reductions return the value on the host. Floating-point results follow the canonical order
// (docs/determinism.md): the same bits on every backend, thread count and run. NaN propagates (as
// the canonical quiet NaN). Empty input: sum 0, prod 1; min, max and mean throw InvalidArgument.
// Integer sum, prod and dot compute in the array's type and wrap (two's complement, the same on every
// backend); for a wider result cast first: porta::sum(porta::cast<std::int64_t>(x)).
template <class T>
T sum(const Array<T>& x, const Stream& stream = Stream());
template <class T>
T prod(const Array<T>& x, const Stream& stream = Stream());
template <class T>
T min(const Array<T>& x, const Stream& stream = Stream());
template <class T>
T max(const Array<T>& x, const Stream& stream = Stream());
// sum / size, divided on the host (so as deterministic as sum). Integers accumulate in double, as
// NumPy does: the mean of {INT32_MAX, INT32_MAX} is 2147483647, not a wrapped sum over 2.
template <class T>
double mean(const Array<T>& x, const Stream& stream = Stream());
template <class T>
T dot(const Array<T>& x, const Array<T>& y, const Stream& stream = Stream());
// sum of conj(x[i]) * y[i] (numpy.vdot); dot does not conjugate, as numpy.dot.
template <class T>
complex<T> vdot(const Array<complex<T>>& x, const Array<complex<T>>& y, const Stream& stream = Stream());
// The mean of a complex array, a complex number (sum / size, divided on the host).
template <class T>
complex<T> mean(const Array<complex<T>>& x, const Stream& stream = Stream());
// sqrt(sum of |x|^2), a real number.
template <class T>
T norm2(const Array<complex<T>>& x, const Stream& stream = Stream());
// sqrt(sum of squares) (floating point only)
template <class T>
T norm2(const Array<T>& x, const Stream& stream = Stream());

// Along `axis` of an array of rank >= 1 (the result drops that axis: {m, n} along 0 gives {n}; a
// 1-D array gives a rank-0 array holding one element). A negative axis counts from the end
// (-1 = last), as in NumPy. An empty axis gives sum 0 and prod 1; min, max and mean of an empty
// axis throw InvalidArgument unless the result itself is empty.
// Same determinism contract as the full reductions, for each output element.
template <class T>
Array<T> sum(const Array<T>& x, int axis, const Stream& stream = Stream());
template <class T>
Array<T> prod(const Array<T>& x, int axis, const Stream& stream = Stream());
template <class T>
Array<T> min(const Array<T>& x, int axis, const Stream& stream = Stream());
template <class T>
Array<T> max(const Array<T>& x, int axis, const Stream& stream = Stream());
template <class T>
Array<T> mean(const Array<T>& x, int axis, const Stream& stream = Stream());  // floating point only

// ---- matmul ------------------------------------------------------------------------------------
enum class Precision {
  highest,  // full fp32/fp64 arithmetic
  tf32      // fp32 inputs on TF32 tensor cores where the device has them (~1e-3 relative error)
};
enum class GemmAlgorithm {
  vendor,  // cuBLAS, rocBLAS/hipBLAS, BLAS on the CPU (falls back to porta's kernel when absent)
  own      // porta's own tiled kernel, in a fixed order: the same bits on every device, thread count
           // and shape (docs/determinism.md, "Matrix products"); what the HIP backend uses without
           // rocBLAS. Slower than the vendor's: see bench/README.md.
};
struct MatmulOptions {
  Precision precision = Precision::highest;
  GemmAlgorithm algorithm = GemmAlgorithm::vendor;
};

// Reproducible products: porta::MatmulOptions{porta::Precision::highest, porta::GemmAlgorithm::own}.
//
// C = A * B for 2-D A (m x k) and B (k x n); with a 1-D operand, matrix-vector (A m x k, x of k:
// y of m) and vector-matrix (x of k, B k x n: y of n), as NumPy's matmul, through the vendor BLAS
// (a gemm of one column, which every backend runs as a gemv). Views pass without a copy where
// BLAS can read them (row or column blocks, transposed views, vectors with a positive stride).
//   auto y = porta::matmul(A, x);        // A.dim(0) elements
//   auto r = porta::matmul(x, B);        // B.dim(1) elements
template <class T>
Array<T> matmul(const Array<T>& a, const Array<T>& b, const MatmulOptions& options = {},
                const Stream& stream = Stream());
// C = alpha * op(A) * op(B) + beta * C, op(X) = X or X^T. beta == 0 overwrites C (a NaN in C does not
// propagate); alpha == 0 reads neither A nor B (BLAS's rule: C = beta * C even if A holds NaN), on
// every backend and algorithm.
template <class T>
void gemm(T alpha, const Array<T>& a, bool trans_a, const Array<T>& b, bool trans_b, T beta, Array<T>& c,
          const MatmulOptions& options = {}, const Stream& stream = Stream());
// 2-D transpose into a new array.
template <class T>
Array<T> transpose(const Array<T>& x, const Stream& stream = Stream());

// ---- operators -------------------------------------------------------------------------------
namespace detail {

// A scalar of any arithmetic type as the array's T, as NumPy and PyTorch convert a Python number
// to the array's dtype (x * 2 and 2.0 * x for a float x stay float). An integer that T cannot hold
// is an InvalidArgument (NumPy 2 raises too); a floating-point scalar with an integer array does
// not compile, since converting 2.5 to 2 would silently change the arithmetic: cast the array
// (porta::cast<double>(x) * 2.5) or the scalar. A double beyond float's range becomes +-inf. With a
// complex array a real scalar s is s + 0i; a complex scalar with a real array does not compile.
template <class T, class S>
T scalar_as(S s, const char* fn) {
  static_assert(std::is_arithmetic_v<S> || is_complex_v<S> || is_half_v<S>,
                "porta: a scalar operand must be an arithmetic type");
  static_assert(!is_complex_v<S> || is_complex_v<T>,
                "porta: a complex scalar with a real array: cast the array to complex first");
  static_assert(!(std::is_integral_v<T> && (std::is_floating_point_v<S> || is_half_v<S>)),
                "porta: a floating-point scalar with an integer array would be truncated: cast the array "
                "(porta::cast<double>(x)) or the scalar (std::int64_t(s)) first");
  if constexpr (is_complex_v<T>) {  // a real scalar is (s, 0); a complex one of the other precision is rounded
    if constexpr (is_complex_v<S>) {
      return static_cast<T>(s);
    } else {
      return T(scalar_as<real_type_t<T>>(s, fn));
    }
  } else if constexpr (std::is_integral_v<T> && std::is_integral_v<S> && !std::is_same_v<S, bool>) {
    const bool fits =
        std::is_signed_v<S>
            ? (static_cast<long long>(s) >= static_cast<long long>(std::numeric_limits<T>::min()) &&
               static_cast<long long>(s) <= static_cast<long long>(std::numeric_limits<T>::max()))
            : (static_cast<unsigned long long>(s) <= static_cast<unsigned long long>(std::numeric_limits<T>::max()));
    if (!fits)
      throw_invalid(
          fn, ("the scalar " + std::to_string(s) + " does not fit in the array's dtype " + dtype_name(dtype_of<T>()))
                  .c_str());
    return static_cast<T>(s);
  } else if constexpr (std::is_same_v<T, float> && std::is_floating_point_v<S> && sizeof(S) > sizeof(float)) {
    // Converting a double outside float's range is undefined in C++: saturate to inf as IEEE does.
    const auto big = static_cast<S>(std::numeric_limits<float>::max());
    if (s > big) return std::numeric_limits<float>::infinity();
    if (s < -big) return -std::numeric_limits<float>::infinity();
    return static_cast<float>(s);
  } else {
    return static_cast<T>(s);
  }
}

template <class S>
using if_scalar = std::enable_if_t<std::is_arithmetic_v<S> || is_complex_v<S> || is_half_v<S>, int>;

}  // namespace detail

// a + b, a - b, a * b, a / b for arrays (maps, broadcasting as add() does) and with a scalar of any
// arithmetic type on either side: 2 * x, x * 2.0 and x * 2 + 1 keep x's dtype. Views are accepted.
#define PORTA_DEFINE_OPERATOR(op, name)                                              \
  template <class T>                                                                 \
  Array<T> operator op(const Array<T>& a, const Array<T>& b) {                       \
    return name(a, b);                                                               \
  }                                                                                  \
  template <class T, class S, detail::if_scalar<S> = 0>                              \
  Array<T> operator op(const Array<T>& a, S b) {                                     \
    return name(a, detail::scalar_as<T>(b, "porta::operator" #op));                  \
  }                                                                                  \
  template <class T, class S, detail::if_scalar<S> = 0>                              \
  Array<T> operator op(S a, const Array<T>& b) {                                     \
    return name(detail::scalar_as<T>(a, "porta::operator" #op), b);                  \
  }                                                                                  \
  /* In place: a op= b writes a (also a view: x.row(0) += 1 changes x). */           \
  template <class T>                                                                 \
  Array<T>& operator op##=(Array<T>& a, const Array<T>& b) {                         \
    name(a, b, a);                                                                   \
    return a;                                                                        \
  }                                                                                  \
  template <class T, class S, detail::if_scalar<S> = 0>                              \
  Array<T>& operator op##=(Array<T>& a, S b) {                                       \
    name(a, detail::scalar_as<T>(b, "porta::operator" #op "="), a);                  \
    return a;                                                                        \
  }                                                                                  \
  /* A temporary view, as in x.row(0) += y: writes through to the array it views. */ \
  template <class T>                                                                 \
  Array<T>& operator op##=(Array<T>&& a, const Array<T>& b) {                        \
    return a op## = b;                                                               \
  }                                                                                  \
  template <class T, class S, detail::if_scalar<S> = 0>                              \
  Array<T>& operator op##=(Array<T>&& a, S b) {                                      \
    return a op## = b;                                                               \
  }
PORTA_DEFINE_OPERATOR(+, add)
PORTA_DEFINE_OPERATOR(-, sub)
PORTA_DEFINE_OPERATOR(*, mul)
PORTA_DEFINE_OPERATOR(/, div)
#undef PORTA_DEFINE_OPERATOR

template <class T>
Array<T> operator-(const Array<T>& a) {
  return neg(a);
}

}  // namespace porta
