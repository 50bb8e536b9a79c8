// SPDX-License-Identifier: Apache-2.0
// porta::math: scalar functions with the same bits on every device, for user kernels.
//
// The built-in operators (porta::exp(x), porta::sin(x), porta::pow(x, y), ...) use these functions
// on every backend. In your own kernels, `std::exp` and `a * b + c` are the device's: libdevice, ocml or
// glibc give different last bits, and nvcc (by default) or g++ with -mfma may contract a multiply
// and an add into one fused operation. porta::math gives one result everywhere:
//
//   #include <porta/kernels.hpp>
//   #include <porta/math.hpp>
//   namespace pm = porta::math;
//   porta::parallel_for(dev, n, PORTA_KERNEL((std::int64_t i) {
//     y(i) = pm::add(pm::mul(a, x(i)), pm::exp(y(i)));   // a * x + e^y, rounded twice, everywhere
//   }));
//
// - add, sub, mul, div, sqrt: the correctly rounded IEEE operation, never contracted;
//   fma(a, b, c): a * b + c rounded once (hardware FMA where the device has one). A NaN result is
//   the canonical quiet NaN (x86 and NVIDIA GPUs make different NaNs of inf - inf or sqrt(-1)).
// - porta's own functions of float and double (porta/detail/math*.hpp), each within 1 ulp of the
//   exact value (docs/determinism.md lists the measured maxima), a NaN result the canonical NaN:
//     exp exp2 exp10 expm1 log log2 log10 log1p pow cbrt hypot
//     sin cos tan sincos(x, &s, &c) asin acos atan atan2 sinh cosh tanh sigmoid erf erfc
// The vendor's functions stay available for kernels that prefer them, under the same names in
// porta::fast (porta/fast_math.hpp, included below): usually faster on a GPU, and different in the
// last bits from device to device (docs/determinism.md, "porta::fast", states the difference).
// Nothing here is valid under -ffast-math / -use_fast_math, which allow the compiler to reorder.
#pragma once

#include <cmath>

#include "porta/detail/config.hpp"
#include "porta/detail/math.hpp"
#include "porta/detail/math_erf.hpp"
#include "porta/detail/math_exp_log.hpp"
#include "porta/detail/math_trig.hpp"
#include "porta/detail/rounding.hpp"

namespace porta::math {

PORTA_DETAIL_MATH_FUNCTIONS(PORTA_DETAIL_USING_MATH)

// a + b, a - b, a * b, a / b, each correctly rounded (float or double).
template <class T>
PORTA_HOST_DEVICE inline T add(T a, T b) {
  return porta::detail::canonical_nan(porta::detail::add_rn(a, b));
}
template <class T>
PORTA_HOST_DEVICE inline T sub(T a, T b) {
  return porta::detail::canonical_nan(porta::detail::add_rn(a, -b));
}
template <class T>
PORTA_HOST_DEVICE inline T mul(T a, T b) {
  return porta::detail::canonical_nan(porta::detail::mul_rn(a, b));
}
PORTA_HOST_DEVICE inline float div(float a, float b) {
  return porta::detail::canonical_nan(porta::detail::math::impl::div(a, b));
}
PORTA_HOST_DEVICE inline double div(double a, double b) {
  return porta::detail::canonical_nan(porta::detail::math::impl::div(a, b));
}

// a * b + c with one rounding.
PORTA_HOST_DEVICE inline float fma(float a, float b, float c) {
#if PORTA_DEVICE_PASS
  return porta::detail::canonical_nan(__fmaf_rn(a, b, c));
#else
  return porta::detail::canonical_nan(std::fma(a, b, c));
#endif
}
PORTA_HOST_DEVICE inline double fma(double a, double b, double c) {
#if PORTA_DEVICE_PASS
  return porta::detail::canonical_nan(__fma_rn(a, b, c));
#else
  return porta::detail::canonical_nan(std::fma(a, b, c));
#endif
}

// The correctly rounded square root (also under nvcc's -prec-sqrt=false).
PORTA_HOST_DEVICE inline float sqrt(float x) {
#if PORTA_DEVICE_PASS && defined(__HIP_DEVICE_COMPILE__)
  // HIP's __fsqrt_rn is ocml's native (approximate) square root in ROCm 5.x; sqrtf is the correctly
  // rounded one (clang's -fhip-fp32-correctly-rounded-divide-sqrt, on by default), as the eager
  // operator has it.
  return porta::detail::canonical_nan(::sqrtf(x));
#elif PORTA_DEVICE_PASS
  return porta::detail::canonical_nan(__fsqrt_rn(x));
#else
  return porta::detail::canonical_nan(std::sqrt(x));
#endif
}
PORTA_HOST_DEVICE inline double sqrt(double x) {
#if PORTA_DEVICE_PASS
  return porta::detail::canonical_nan(__dsqrt_rn(x));
#else
  return porta::detail::canonical_nan(std::sqrt(x));
#endif
}

}  // namespace porta::math

#include "porta/fast_math.hpp"
