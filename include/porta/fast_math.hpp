// SPDX-License-Identifier: Apache-2.0
// porta::fast: the vendor's math functions under porta::math's names, for user kernels that
// prefer speed over the same bits on every device.
//
//   #include <porta/math.hpp>            // includes this header
//   namespace pf = porta::fast;
//   porta::parallel_for(dev, n, PORTA_KERNEL((std::int64_t i) { y(i) = pf::exp(x(i)); }));
//
// The same 25 functions as porta::math, float and double:
//   exp exp2 exp10 expm1 log log2 log10 log1p pow cbrt hypot
//   sin cos tan sincos(x, &s, &c) asin acos atan atan2 sinh cosh tanh sigmoid erf erfc
// Each one is the vendor's own function of the device the kernel runs on:
// - CUDA device code: CUDA's math library (libdevice: expf / exp, sincosf, ...), within the
//   maximum ulp errors of the CUDA C++ Programming Guide's "Mathematical Functions" appendix
//   (1 to 4 ulp in float, 1 to 5 in double). Not the __expf-style intrinsics, whose errors grow
//   to many ulp over the range: nothing here is less accurate than the vendor's default.
// - HIP device code: ROCm's ocml, through the same names.
// - The CPU: the C++ library's std::exp and friends (glibc on Linux: within the "known maximum
//   errors" of its manual, 1 or 2 ulp for most of these, double cbrt 4, erfc 3 and 5). glibc's vector
//   functions (libmvec) are used only under -ffast-math, which porta does not use, so a CPU kernel
//   calls the scalar function per element.
// sigmoid has no vendor function: it is 1 / (1 + e^-x) (e^x / (1 + e^x) for x < 0, so that it
// underflows gradually) with the vendor's exp.
//
// What porta::fast does not promise: the same bits across devices (libdevice, ocml and glibc round
// differently in the last bits), or porta::math's bits anywhere; NaN payloads and the sign of a
// NaN are the vendor's, not the canonical NaN. docs/determinism.md ("porta::fast") states the
// difference per function. Under nvcc -use_fast_math the compiler itself replaces the CUDA
// functions by the intrinsics; porta's own builds never use it.
#pragma once

#include <cmath>

#include "porta/detail/config.hpp"

namespace porta::fast {

// One unary function in float and double: in a device pass the vendor's global names (CUDA and HIP
// both declare expf / exp, ...), on the host std::.
#if PORTA_DEVICE_PASS
#define PORTA_FAST_UNARY(name)                     \
  PORTA_HOST_DEVICE inline float name(float x) {   \
    return ::name##f(x);                           \
  }                                                \
  PORTA_HOST_DEVICE inline double name(double x) { \
    return ::name(x);                              \
  }
#define PORTA_FAST_BINARY(name)                              \
  PORTA_HOST_DEVICE inline float name(float x, float y) {    \
    return ::name##f(x, y);                                  \
  }                                                          \
  PORTA_HOST_DEVICE inline double name(double x, double y) { \
    return ::name(x, y);                                     \
  }
#else
#define PORTA_FAST_UNARY(name)                     \
  PORTA_HOST_DEVICE inline float name(float x) {   \
    return std::name(x);                           \
  }                                                \
  PORTA_HOST_DEVICE inline double name(double x) { \
    return std::name(x);                           \
  }
#define PORTA_FAST_BINARY(name)                              \
  PORTA_HOST_DEVICE inline float name(float x, float y) {    \
    return std::name(x, y);                                  \
  }                                                          \
  PORTA_HOST_DEVICE inline double name(double x, double y) { \
    return std::name(x, y);                                  \
  }
#endif

PORTA_FAST_UNARY(exp)
PORTA_FAST_UNARY(exp2)
PORTA_FAST_UNARY(expm1)
PORTA_FAST_UNARY(log)
PORTA_FAST_UNARY(log2)
PORTA_FAST_UNARY(log10)
PORTA_FAST_UNARY(log1p)
PORTA_FAST_UNARY(cbrt)
PORTA_FAST_UNARY(sin)
PORTA_FAST_UNARY(cos)
PORTA_FAST_UNARY(tan)
PORTA_FAST_UNARY(asin)
PORTA_FAST_UNARY(acos)
PORTA_FAST_UNARY(atan)
PORTA_FAST_UNARY(sinh)
PORTA_FAST_UNARY(cosh)
PORTA_FAST_UNARY(tanh)
PORTA_FAST_UNARY(erf)
PORTA_FAST_UNARY(erfc)
PORTA_FAST_BINARY(pow)
PORTA_FAST_BINARY(atan2)
PORTA_FAST_BINARY(hypot)

#undef PORTA_FAST_UNARY
#undef PORTA_FAST_BINARY

// 10^x: CUDA and HIP have exp10f / exp10, glibc has them as GNU extensions (under _GNU_SOURCE,
// which g++ defines); C++ has no std:: form, so elsewhere it is pow(10, x), within pow's bound.
PORTA_HOST_DEVICE inline float exp10(float x) {
#if PORTA_DEVICE_PASS || (defined(__GLIBC__) && defined(__USE_GNU))
  return ::exp10f(x);
#else
  return std::pow(10.0f, x);
#endif
}
PORTA_HOST_DEVICE inline double exp10(double x) {
#if PORTA_DEVICE_PASS || (defined(__GLIBC__) && defined(__USE_GNU))
  return ::exp10(x);
#else
  return std::pow(10.0, x);
#endif
}

// sin and cos from one reduction where the vendor has it (CUDA, HIP); on the host std::sin and
// std::cos, since C++ has no sincos.
PORTA_HOST_DEVICE inline void sincos(float x, float* s, float* c) {
#if PORTA_DEVICE_PASS
  ::sincosf(x, s, c);
#else
  *s = std::sin(x);
  *c = std::cos(x);
#endif
}
PORTA_HOST_DEVICE inline void sincos(double x, double* s, double* c) {
#if PORTA_DEVICE_PASS
  ::sincos(x, s, c);
#else
  *s = std::sin(x);
  *c = std::cos(x);
#endif
}

namespace detail {
// 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) for x < 0: the exponential is then at most 1, so
// it never overflows, and sigmoid(x) ~ e^x goes through the subnormals instead of jumping to 0 where
// e^-x overflows. NaN stays NaN through exp.
template <class T>
PORTA_HOST_DEVICE inline T sigmoid(T x) {
  const bool negative = x < T(0);
  const T e = porta::fast::exp(negative ? x : -x);
  return (negative ? e : T(1)) / (T(1) + e);
}
}  // namespace detail

PORTA_HOST_DEVICE inline float sigmoid(float x) {
  return detail::sigmoid(x);
}
PORTA_HOST_DEVICE inline double sigmoid(double x) {
  return detail::sigmoid(x);
}

}  // namespace porta::fast
