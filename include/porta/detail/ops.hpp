// SPDX-License-Identifier: Apache-2.0
// One definition of every built-in op, used by the CPU backend, the shared GPU kernels and user
// kernels alike, so that the backends cannot drift apart in semantics (NaN, signed zero, integer
// overflow). Device-side rounding intrinsics keep products from being contracted into FMAs where a
// reduction's bits depend on it.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "porta/complex.hpp"
#include "porta/detail/config.hpp"
#include "porta/detail/math.hpp"
#include "porta/detail/math_exp_log.hpp"
#include "porta/detail/rounding.hpp"
#include "porta/half.hpp"

namespace porta::detail {

// 16-bit floats (porta::float16, porta::bfloat16) compute every op in float and round the result
// once: the first branch of each functor below. Results that are not of the argument's type
// (comparisons' masks) are returned as they are.
template <class H, class Op, class... A>
PORTA_HOST_DEVICE inline auto in_float(Op op, A... a) {
  const auto r = op(static_cast<float>(a)...);
  if constexpr (std::is_same_v<std::remove_const_t<decltype(r)>, float>) {
    return H(r);
  } else {
    return r;
  }
}

// The type a reduction (sum, prod, dot, norm, min, max) of T accumulates in: float for the 16-bit
// floats (each element widened exactly, the result rounded once at the end), T otherwise.
template <class T>
using accumulate_t = std::conditional_t<is_half_v<T>, float, T>;

// max/min propagate NaN (as NumPy), as the canonical NaN, and order -0.0 below +0.0, which makes
// them associative and commutative on every input, so any evaluation order gives the same bits
// (also the order in which atomic_max/atomic_min's threads arrive: a NaN, once stored, stays).
template <class T>
PORTA_HOST_DEVICE inline T max_op(T a, T b) {
  if constexpr (is_half_v<T>) return T(max_op(float(a), float(b)));
  if (a > b) return a;
  if (b > a) return b;
  if constexpr (std::is_floating_point_v<T>) {
    if (a == b) return std::signbit(a) ? b : a;
    return std::numeric_limits<T>::quiet_NaN();  // unordered: at least one NaN
  } else {
    return a;
  }
}

template <class T>
PORTA_HOST_DEVICE inline T min_op(T a, T b) {
  if constexpr (is_half_v<T>) return T(min_op(float(a), float(b)));
  if (a < b) return a;
  if (b < a) return b;
  if constexpr (std::is_floating_point_v<T>) {
    if (a == b) return std::signbit(a) ? a : b;
    return std::numeric_limits<T>::quiet_NaN();
  } else {
    return a;
  }
}

// Reduction combiners with their identities (what the canonical order pads with). sum's identity
// is -0.0, the exact identity of IEEE addition (x + -0.0 == x for every x, +0.0 included), so
// padding lanes never change a bit. The reduction and the elementwise binary op of max and of min
// are one functor each, MaxOp and MinOp; sum and prod are AddOp and MulOp elementwise (below),
// the same arithmetic under the binary operation's name, less the NaN canonicalisation of each
// step, which a reduction or a scan does once on the values it writes.
struct SumOp {
  template <class T>
  PORTA_HOST_DEVICE static T identity() {
    if constexpr (is_complex_v<T>) {
      using R = real_type_t<T>;
      return T(R(-0.0), R(-0.0));
    } else if constexpr (std::is_floating_point_v<T> || is_half_v<T>) {
      return T(-0.0);
    } else {
      return T(0);
    }
  }
  template <class T>
  PORTA_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_half_v<T>) {
      return in_float<T>(*this, a, b);
    } else {
      return add_rn(a, b);
    }
  }
};

struct ProdOp {
  template <class T>
  PORTA_HOST_DEVICE static T identity() {
    return T(1);
  }
  template <class T>
  PORTA_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_half_v<T>) {
      return in_float<T>(*this, a, b);
    } else {
      return mul_rn(a, b);
    }
  }
};

struct MaxOp {
  template <class T>
  PORTA_HOST_DEVICE static T identity() {
    if constexpr (std::is_floating_point_v<T> || is_half_v<T>) {
      return -std::numeric_limits<T>::infinity();
    } else {
      return std::numeric_limits<T>::lowest();
    }
  }
  template <class T>
  PORTA_HOST_DEVICE T operator()(T a, T b) const {
    return max_op(a, b);
  }
};

struct MinOp {
  template <class T>
  PORTA_HOST_DEVICE static T identity() {
    if constexpr (std::is_floating_point_v<T> || is_half_v<T>) {
      return std::numeric_limits<T>::infinity();
    } else {
      return std::numeric_limits<T>::max();
    }
  }
  template <class T>
  PORTA_HOST_DEVICE T operator()(T a, T b) const {
    return min_op(a, b);
  }
};

// ---- elementwise ops --------------------------------------------------------------------------
// Integer division by zero yields 0 instead of trapping; integer sqrt/exp/... go through double.

// Elementwise conversion, static_cast except where C++ leaves it undefined: float -> integer
// maps NaN to 0 and saturates out-of-range values (what CUDA's __float2int_rz does), integer ->
// integer narrowing wraps (two's complement). Used by cast and by integer math through double.
template <class To>
struct ConvertOp {
  template <class From>
  PORTA_HOST_DEVICE To operator()(From v) const {
    if constexpr (is_half_v<From>) {
      return ConvertOp<To>{}(static_cast<float>(v));  // exact, then float's conversion
    } else if constexpr (is_half_v<To> && is_complex_v<From>) {
      return ConvertOp<To>{}(v.re);
    } else if constexpr (is_half_v<To>) {
      return To(v);  // rounded once to nearest even, also from double and 64-bit integers
    } else if constexpr (is_complex_v<From> && is_complex_v<To>) {
      return To(v);
    } else if constexpr (is_complex_v<From>) {
      return ConvertOp<To>{}(v.re);  // NumPy's cast of complex to real: the real part
    } else if constexpr (is_complex_v<To>) {
      return To(ConvertOp<real_type_t<To>>{}(v));
    } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
      // -2^(bits-1) is exactly representable in float and double, so both bounds are exact.
      constexpr From lo = static_cast<From>(std::numeric_limits<To>::min());
      constexpr From hi = -lo;
      if (!(v == v)) return To(0);
      if (v < lo) return std::numeric_limits<To>::min();
      if (v >= hi) return std::numeric_limits<To>::max();
      return static_cast<To>(v);
    } else if constexpr (std::is_integral_v<From> && std::is_integral_v<To>) {
      return static_cast<To>(static_cast<std::make_unsigned_t<To>>(v));
    } else {
      return static_cast<To>(v);
    }
  }
};

template <class T>
PORTA_HOST_DEVICE inline T via_double(double v) {
  return ConvertOp<T>{}(v);
}

struct NegOp {
  template <class T>
  PORTA_HOST_DEVICE T operator()(T x) const {
    if constexpr (is_half_v<T>) {
      return in_float<T>(*this, x);
    } else if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(U(0) - static_cast<U>(x));
    } else {
      return canonical_nan(-x);
    }
  }
};
// |x|; of a complex number its modulus, a real number (NumPy's abs), so the unary entry writes
// the real dtype of that precision.
struct AbsOp {
  template <class T>
  PORTA_HOST_DEVICE real_type_t<T> operator()(T x) const {
    if constexpr (is_half_v<T>) {
      return in_float<T>(*this, x);
    } else if constexpr (std::is_integral_v<T>) {
      return x < 0 ? NegOp{}(x) : x;
    } else if constexpr (is_complex_v<T>) {
      return porta::abs(x);
    } else {
      return canonical_nan(std::fabs(x));
    }
  }
};
// exp, log, sin, cos, tanh, sigmoid and pow are porta's own (detail/math.hpp and math_exp_log.hpp)
// on every backend, so their bits do not depend on the
// device's math library; integer arguments go through double. sqrt is IEEE's correctly rounded one
// everywhere.
// The complex functions are porta/complex.hpp's; complex_undefined marks an op without one, which
// op_defined_v (below) keeps the backends from instantiating.
template <class T>
PORTA_HOST_DEVICE T complex_undefined(T x) {
  static_assert(!is_complex_v<T>, "porta: this op has no complex form (op_defined_v)");
  return x;
}
#define PORTA_DETAIL_MATH_OP(Name, fn, complex_fn)        \
  struct Name {                                           \
    template <class T>                                    \
    PORTA_HOST_DEVICE T operator()(T x) const {           \
      if constexpr (is_half_v<T>) {                       \
        return in_float<T>(*this, x);                     \
      } else if constexpr (std::is_floating_point_v<T>) { \
        return canonical_nan(fn(x));                      \
      } else if constexpr (is_complex_v<T>) {             \
        return complex_fn(x);                             \
      } else {                                            \
        return via_double<T>(fn(static_cast<double>(x))); \
      }                                                   \
    }                                                     \
  };
PORTA_DETAIL_MATH_OP(SqrtOp, std::sqrt, porta::sqrt)
PORTA_DETAIL_MATH_OP(ExpOp, math::exp, porta::exp)
PORTA_DETAIL_MATH_OP(LogOp, math::log, porta::log)
PORTA_DETAIL_MATH_OP(SinOp, math::sin, complex_undefined)
PORTA_DETAIL_MATH_OP(CosOp, math::cos, complex_undefined)
PORTA_DETAIL_MATH_OP(TanhOp, math::tanh, complex_undefined)
PORTA_DETAIL_MATH_OP(SigmoidOp, math::sigmoid, complex_undefined)
#undef PORTA_DETAIL_MATH_OP

// The complex conjugate; a real or integer x is its own conjugate.
struct ConjOp {
  template <class T>
  PORTA_HOST_DEVICE T operator()(T x) const {
    if constexpr (is_half_v<T>) {
      return in_float<T>(*this, x);
    } else if constexpr (is_complex_v<T>) {
      return canonical_nan(porta::conj(x));
    } else {
      return canonical_nan(x);
    }
  }
};

struct ReluOp {
  template <class T>
  PORTA_HOST_DEVICE T operator()(T x) const {
    if constexpr (is_half_v<T>) {
      return in_float<T>(*this, x);
    } else {
      return x > T(0) ? x : (is_nan(x) ? canonical_nan(x) : T(0));
    }
  }
};
struct SquareOp {
  template <class T>
  PORTA_HOST_DEVICE T operator()(T x) const {
    if constexpr (is_half_v<T>) {
      return in_float<T>(*this, x);
    } else {
      return canonical_nan(mul_rn(x, x));
    }
  }
};

struct AddOp {
  template <class T>
  PORTA_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_half_v<T>) {
      return in_float<T>(*this, a, b);
    } else {
      return canonical_nan(add_rn(a, b));
    }
  }
};
struct SubOp {
  template <class T>
  PORTA_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_half_v<T>) {
      return in_float<T>(*this, a, b);
    } else if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
    } else {
      return canonical_nan(a - b);
    }
  }
};
struct MulOp {
  template <class T>
  PORTA_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_half_v<T>) {
      return in_float<T>(*this, a, b);
    } else {
      return canonical_nan(mul_rn(a, b));
    }
  }
};
struct DivOp {
  template <class T>
  PORTA_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_half_v<T>) {
      return in_float<T>(*this, a, b);
    } else if constexpr (std::is_integral_v<T>) {
      if (b == 0) return T(0);
      if (b == T(-1)) return NegOp{}(a);  // lowest / -1 overflows
      return a / b;
    } else {
      return canonical_nan(a / b);
    }
  }
};
// Elementwise minimum and maximum: MinOp and MaxOp (the reduction combiners above).

struct PowOp {
  template <class T>
  PORTA_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_half_v<T>) {
      return in_float<T>(*this, a, b);
    } else if constexpr (std::is_floating_point_v<T>) {
      return canonical_nan(math::pow(a, b));
    } else {
      // Exact, wrapping integer power by squaring: double pow is not exact on every device.
      if (b < 0) return a == T(1) ? T(1) : (a == T(-1) ? ((b & 1) ? T(-1) : T(1)) : T(0));
      T result = T(1);
      T base = a;
      while (b > 0) {
        if (b & 1) result = mul_rn(result, base);
        base = mul_rn(base, base);
        b = static_cast<T>(b >> 1);
      }
      return result;
    }
  }
};
// Element i of iota(start, step): start + T(i) * step, each element on its own (never a running
// sum), so it is rounded the same way on every backend; 16-bit types compute it in float and round
// once. Integer indices past the type's range wrap, like the arithmetic.
template <class T>
PORTA_HOST_DEVICE inline T iota_value(T start, T step, std::int64_t i) {
  if constexpr (is_half_v<T>) {
    return T(iota_value<float>(float(start), float(step), i));
  } else if constexpr (std::is_integral_v<T>) {
    return AddOp{}(start, MulOp{}(static_cast<T>(static_cast<std::make_unsigned_t<T>>(i)), step));
  } else {
    return AddOp{}(start, MulOp{}(static_cast<T>(i), step));
  }
}

// y = alpha * x + y (axpy): alpha * x rounded, then + y, never an FMA on any device; one NaN
// canonicalisation, of the sum (a NaN's payload never decides whether the sum is a NaN).
template <class T>
struct AxpyOp {
  T alpha;
  PORTA_HOST_DEVICE T operator()(T x, T y) const {
    if constexpr (is_half_v<T>) {
      return T(AxpyOp<float>{float(alpha)}(float(x), float(y)));
    } else {
      return canonical_nan(add_rn(mul_rn(alpha, x), y));
    }
  }
};

struct ReluGradOp {
  template <class T>
  PORTA_HOST_DEVICE T operator()(T grad, T x) const {
    if constexpr (is_half_v<T>) {
      return in_float<T>(*this, grad, x);
    } else {
      return canonical_nan(x > T(0) ? grad : T(0));
    }
  }
};

// Comparisons (porta_compare_op): IEEE semantics on every backend, so NaN is
// unequal to everything (only != is true) and -0.0 == 0.0. The result is porta's mask value.
struct EqOp {
  template <class T>
  PORTA_HOST_DEVICE std::int32_t operator()(T a, T b) const {
    return a == b ? 1 : 0;
  }
};
struct NeOp {
  template <class T>
  PORTA_HOST_DEVICE std::int32_t operator()(T a, T b) const {
    return a != b ? 1 : 0;
  }
};
struct LtOp {
  template <class T>
  PORTA_HOST_DEVICE std::int32_t operator()(T a, T b) const {
    return a < b ? 1 : 0;
  }
};
struct LeOp {
  template <class T>
  PORTA_HOST_DEVICE std::int32_t operator()(T a, T b) const {
    return a <= b ? 1 : 0;
  }
};
struct GtOp {
  template <class T>
  PORTA_HOST_DEVICE std::int32_t operator()(T a, T b) const {
    return a > b ? 1 : 0;
  }
};
struct GeOp {
  template <class T>
  PORTA_HOST_DEVICE std::int32_t operator()(T a, T b) const {
    return a >= b ? 1 : 0;
  }
};

// Whether op exists for element type T. Complex numbers have no order (no min, max, relu, <, <=,
// >, >=, sorting) and porta has no complex sin, cos, tanh, sigmoid or pow yet (nor fused programs
// with them: map_program's check refuses those per op): a backend answers
// those with PORTA_ERR_UNSUPPORTED (backend_error.hpp's unsupported_dtype) and never instantiates
// them, and the front end does not declare them for complex arrays.
template <class Op>
struct defined_for_complex : std::false_type {};
#define PORTA_DETAIL_COMPLEX_OP(Op) \
  template <>                       \
  struct defined_for_complex<Op> : std::true_type {};
PORTA_DETAIL_COMPLEX_OP(SumOp)
PORTA_DETAIL_COMPLEX_OP(ProdOp)
PORTA_DETAIL_COMPLEX_OP(NegOp)
PORTA_DETAIL_COMPLEX_OP(AbsOp)
PORTA_DETAIL_COMPLEX_OP(SqrtOp)
PORTA_DETAIL_COMPLEX_OP(ExpOp)
PORTA_DETAIL_COMPLEX_OP(LogOp)
PORTA_DETAIL_COMPLEX_OP(ConjOp)
PORTA_DETAIL_COMPLEX_OP(SquareOp)
PORTA_DETAIL_COMPLEX_OP(AddOp)
PORTA_DETAIL_COMPLEX_OP(SubOp)
PORTA_DETAIL_COMPLEX_OP(MulOp)
PORTA_DETAIL_COMPLEX_OP(DivOp)
PORTA_DETAIL_COMPLEX_OP(EqOp)
PORTA_DETAIL_COMPLEX_OP(NeOp)
// Kernel families that are more than one elementwise op, named for op_defined_v: sorting and the
// arg reductions (an order of keys), scans, fused programs and GEMM.
struct SortFamily {};
struct ScanFamily {};
struct ProgramFamily {};
struct GemmFamily {};
PORTA_DETAIL_COMPLEX_OP(ProgramFamily)  // of the ops above that complex numbers have
PORTA_DETAIL_COMPLEX_OP(GemmFamily)
// The 16-bit floats have every elementwise op, reduction, fused program and GEMM (computed in
// float). The kernels do not sort or scan them: the front end sorts and scans their float values
// (algorithms/sort.cpp, scan.cpp).
template <class Op>
struct defined_for_half : std::true_type {};
template <>
struct defined_for_half<SortFamily> : std::false_type {};
template <>
struct defined_for_half<ScanFamily> : std::false_type {};
#undef PORTA_DETAIL_COMPLEX_OP
template <class Op, class T>
inline constexpr bool op_defined_v = (!is_complex_v<T> || defined_for_complex<Op>::value) &&
                                     (!is_half_v<T> || defined_for_half<Op>::value);

}  // namespace porta::detail
