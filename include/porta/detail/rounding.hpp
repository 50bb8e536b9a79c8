// SPDX-License-Identifier: Apache-2.0
// The rounding primitives every op is built from: correctly rounded + and * that no compiler
// contracts into an FMA (the _rn intrinsics in device code), wrapping integer + and *, and porta's
// NaN policy (canonical_nan). Their own header because both ops.hpp (the built-in ops) and the math
// functions (math.hpp, which ops.hpp includes) need them.
#pragma once

#include <limits>
#include <type_traits>

#include "porta/detail/config.hpp"

namespace porta::detail {

template <class T>
PORTA_HOST_DEVICE inline bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return x != x;
  } else {
    return false;
  }
}

// The NaN policy: every floating-point result porta computes that is a NaN is the one canonical
// quiet NaN (std::numeric_limits<T>::quiet_NaN(), 0x7fc00000 / 0x7ff8000000000000). The hardware
// disagrees: x86 passes on the first NaN operand's payload and sign (and makes 0 * inf a NaN with
// the sign bit set), NVIDIA returns 0x7fffffff, and negation or fabs flip the sign bit of a NaN.
// Each elementwise functor of ops.hpp canonicalises its own result, so the CPU loops, the GPU kernels
// and both fused-expression interpreters get the same bits, and a fused chain the eager chain's.
// On a vector this is a compare and a blend. A NaN's payload never decides whether a later result
// is a NaN, so canonicalising every step or only the last one gives the same bits (what the
// generated fused kernels do). Reductions and scans canonicalise the values they write.
// (Built from its bits in device code: numeric_limits' functions are host-only there unless the
// user's nvcc has --expt-relaxed-constexpr.)
template <class T>
PORTA_HOST_DEVICE inline T canonical_nan(T x) {
  if constexpr (std::is_same_v<T, float>) {
#if PORTA_DEVICE_PASS
    return is_nan(x) ? __int_as_float(0x7fc00000) : x;
#else
    return is_nan(x) ? std::numeric_limits<float>::quiet_NaN() : x;
#endif
  } else if constexpr (std::is_same_v<T, double>) {
#if PORTA_DEVICE_PASS
    return is_nan(x) ? __longlong_as_double(0x7ff8000000000000LL) : x;
#else
    return is_nan(x) ? std::numeric_limits<double>::quiet_NaN() : x;
#endif
  } else {
    return x;
  }
}

// Integer + and * wrap (two's complement) instead of being undefined on overflow.
template <class T>
PORTA_HOST_DEVICE inline T add_rn(T a, T b) {
  if constexpr (std::is_same_v<T, float>) {
#if PORTA_DEVICE_PASS
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
  } else if constexpr (std::is_same_v<T, double>) {
#if PORTA_DEVICE_PASS
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
  } else {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  }
}

template <class T>
PORTA_HOST_DEVICE inline T mul_rn(T a, T b) {
  if constexpr (std::is_same_v<T, float>) {
#if PORTA_DEVICE_PASS
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
  } else if constexpr (std::is_same_v<T, double>) {
#if PORTA_DEVICE_PASS
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
  } else {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  }
}

}  // namespace porta::detail
