// SPDX-License-Identifier: Apache-2.0
// porta::float16 and porta::bfloat16: the element types of float16 and bfloat16 arrays, and 16-bit
// floats in user kernels on every device.
//
// Each is the 16 bits of its format (IEEE binary16: 5 exponent bits, 10 mantissa bits; bfloat16:
// float's 8 exponent bits, 7 mantissa bits), laid out as CUDA's __half / __nv_bfloat16, HIP's
// types, NumPy's float16 and torch.bfloat16, so a buffer of any of those is a buffer of these.
//
//   porta::Array<porta::float16> h = porta::cast<porta::float16>(x);    // rounded once from float
//   auto y = h * h + h;                    // each op computed in float, rounded once to float16
//   float s = float(porta::sum(h));        // the sum accumulates in float (porta's order)
//   porta::parallel_for(dev, n, PORTA_KERNEL((std::int64_t i) { v(i) = porta::float16(2.0f * float(u(i))); }));
//
// Arithmetic is computed in float and rounded once to the 16-bit format (what CUDA's, PyTorch's
// and NumPy's half arithmetic does), so a + b is float16(float(a) + float(b)) on every device.
// Conversion to float is exact and implicit; conversion from float, double and integers rounds to
// nearest, ties to even, and is explicit (a narrowing that loses bits is written out). A NaN becomes
// the format's canonical quiet NaN (0x7e00, 0x7fc0; porta's NaN policy, porta/detail/rounding.hpp).
// The conversions are exact integer arithmetic on the host (the same bits as F16C, CUDA's cvt and
// NumPy) and CUDA's cvt instructions in its device code.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "porta/detail/config.hpp"
#include "porta/detail/math.hpp"

namespace porta {
namespace detail::half_bits {

// A float's bits and back: porta::math's, which device code and the host both compile.
using math::impl::bits;
using math::impl::from_bits;

inline constexpr std::uint16_t f16_nan = 0x7e00;
inline constexpr std::uint16_t bf16_nan = 0x7fc0;

// float -> binary16, round to nearest even. Every path is computed and the result selected, so a
// loop over an array vectorises (the compiler turns the selects into blends).
PORTA_HOST_DEVICE inline std::uint16_t f32_to_f16(float f) {
#if defined(__CUDA_ARCH__)
  if (f != f) return f16_nan;
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  const std::uint32_t u = bits(f);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const std::uint32_t a = u & 0x7fffffffu;
  // From 2^-14 on: rebias the exponent 127 -> 15, round to nearest even, drop 13 bits (a carry out
  // of the mantissa moves to the next exponent, and from 65520 on to infinity's pattern).
  const std::uint32_t normal = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13;
  // Below 2^-14 (a subnormal or zero binary16): adding 0.5 puts the value's bits at 2^-24 units into
  // the low mantissa bits of the sum, rounded to nearest even by the float addition itself.
  const std::uint32_t tiny = bits(from_bits(a) + 0.5f) - 0x3f000000u;
  std::uint32_t h = a < 0x38800000u ? tiny : normal;
  h = a >= 0x47800000u ? 0x7c00u : h;  // from 2^16 on: infinity
  h |= sign;
  return static_cast<std::uint16_t>(a > 0x7f800000u ? std::uint32_t(f16_nan) : h);
#endif
}

// binary16 -> float, exact (a NaN becomes float's canonical NaN); selects only, as above.
PORTA_HOST_DEVICE inline float f16_to_f32(std::uint16_t h) {
#if defined(__CUDA_ARCH__)
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f != f ? __uint_as_float(0x7fc00000u) : f;
#else
  const std::uint32_t sign = (std::uint32_t(h) & 0x8000u) << 16;
  const std::uint32_t a = std::uint32_t(h) & 0x7fffu;
  const std::uint32_t normal = (a << 13) + 0x38000000u;
  const std::uint32_t tiny =
      bits(static_cast<float>(static_cast<std::int32_t>(a)) * from_bits(0x33800000u));  // a * 2^-24
  std::uint32_t m = a >= 0x0400u ? normal : tiny;
  m = a >= 0x7c00u ? 0x7f800000u : m;
  m |= sign;
  return from_bits(a > 0x7c00u ? 0x7fc00000u : m);
#endif
}

// float -> bfloat16, round to nearest even (overflow rounds to infinity, as IEEE).
PORTA_HOST_DEVICE inline std::uint16_t f32_to_bf16(float f) {
  if (f != f) return bf16_nan;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  const std::uint32_t u = bits(f);
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#endif
}

// bfloat16 -> float, exact: the same top 16 bits.
PORTA_HOST_DEVICE inline float bf16_to_f32(std::uint16_t h) {
  const float f = from_bits(std::uint32_t(h) << 16);
  return f != f ? from_bits(0x7fc00000u) : f;
}

// double -> float rounded to odd (an inexact result gets an odd last bit): rounding that to a
// 16-bit format then gives the correctly rounded 16-bit value, which double -> float -> 16 bits
// with two roundings to nearest would not always.
PORTA_HOST_DEVICE inline float f64_to_f32_odd(double d) {
  // Beyond float's range every 16-bit result is an infinity (and C++ leaves that conversion undefined).
  if (d > 0x1.fffffep127) return from_bits(0x7f800000u);
  if (d < -0x1.fffffep127) return from_bits(0xff800000u);
  const float f = static_cast<float>(d);
  const double back = static_cast<double>(f);
  if (back == d || d != d) return f;
  std::uint32_t u = bits(f);
  if ((u & 1u) == 0u) {
    const bool above = back < 0 ? -back > -d : back > d;  // |f| rounded away from zero
    u = above ? u - 1u : u + 1u;
  }
  return from_bits(u);
}

// A 64-bit integer as a double rounded to odd (only values beyond 2^53 are inexact).
PORTA_HOST_DEVICE inline double i64_to_f64_odd(std::int64_t v) {
  const std::uint64_t mag = v < 0 ? std::uint64_t(0) - std::uint64_t(v) : std::uint64_t(v);
  if (mag < (std::uint64_t(1) << 53)) return static_cast<double>(v);
  int shift = 0;
  std::uint64_t m = mag;
  while (m >= (std::uint64_t(1) << 53)) {
    const bool lost = (m & 1u) != 0;
    m = (m >> 1) | (lost ? 1u : 0u);
    ++shift;
  }
  double r = static_cast<double>(m);
  for (int i = 0; i < shift; ++i) r *= 2.0;
  return v < 0 ? -r : r;
}

struct f16_format {
  PORTA_HOST_DEVICE static std::uint16_t from_float(float f) { return f32_to_f16(f); }
  PORTA_HOST_DEVICE static float to_float(std::uint16_t h) { return f16_to_f32(h); }
  static constexpr std::uint16_t nan = f16_nan;
};
struct bf16_format {
  PORTA_HOST_DEVICE static std::uint16_t from_float(float f) { return f32_to_bf16(f); }
  PORTA_HOST_DEVICE static float to_float(std::uint16_t h) { return bf16_to_f32(h); }
  static constexpr std::uint16_t nan = bf16_nan;
};

}  // namespace detail::half_bits

// A 16-bit float of Format (detail::half_bits::f16_format or bf16_format): porta::float16 and
// porta::bfloat16 below. Trivially copyable and default-constructible, so the C ABI's porta_scalar
// can hold one.
template <class Format>
struct alignas(2) half_float {
  std::uint16_t bits;

  half_float() = default;
  // Rounded to nearest even. From double and integers directly (not through float's rounding).
  template <class U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
  PORTA_HOST_DEVICE explicit half_float(U v) : bits(from(v)) {}
  PORTA_HOST_DEVICE operator float() const { return Format::to_float(bits); }  // NOLINT: exact, implicit

  // The value with these bits (porta::float16::from_bits(0x3c00) is 1).
  PORTA_HOST_DEVICE static half_float from_bits(std::uint16_t b) {
    half_float h;
    h.bits = b;
    return h;
  }

 private:
  template <class U>
  PORTA_HOST_DEVICE static std::uint16_t from(U v) {
    if constexpr (std::is_same_v<U, float>) {
      return Format::from_float(v);
    } else if constexpr (std::is_same_v<U, double>) {
      return Format::from_float(detail::half_bits::f64_to_f32_odd(v));
    } else if constexpr (std::is_same_v<U, bool>) {
      return Format::from_float(v ? 1.0f : 0.0f);
    } else if constexpr (std::is_integral_v<U> && sizeof(U) <= 2) {
      return Format::from_float(static_cast<float>(v));  // exact in float
    } else if constexpr (std::is_integral_v<U> && std::is_signed_v<U>) {
      return Format::from_float(detail::half_bits::f64_to_f32_odd(detail::half_bits::i64_to_f64_odd(v)));
    } else if constexpr (std::is_integral_v<U>) {
      const std::uint64_t u = v;  // beyond int64: every such value is infinite in 16 bits anyway
      return Format::from_float(u > std::uint64_t(INT64_MAX) ? static_cast<float>(u)
                                                             : detail::half_bits::f64_to_f32_odd(
                                                                   detail::half_bits::i64_to_f64_odd(std::int64_t(u))));
    } else {
      return Format::from_float(static_cast<float>(v));  // long double: platform-dependent width
    }
  }
};

// IEEE binary16 (NumPy's float16, CUDA's __half): 11 significant bits, largest finite 65504.
using float16 = half_float<detail::half_bits::f16_format>;
// bfloat16 (torch.bfloat16, CUDA's __nv_bfloat16): float's range, 8 significant bits.
using bfloat16 = half_float<detail::half_bits::bf16_format>;

template <class T>
struct is_half : std::false_type {};
template <class F>
struct is_half<half_float<F>> : std::true_type {};
// True for porta::float16 and porta::bfloat16.
template <class T>
inline constexpr bool is_half_v = is_half<T>::value;

namespace detail {
// The rounding primitives of rounding.hpp for 16-bit floats (ops.hpp's functors compute them in
// float; these serve code written for any floating-point T).
template <class F>
PORTA_HOST_DEVICE inline bool is_nan(half_float<F> h) {
  return (h.bits & 0x7fffu) > (std::is_same_v<F, half_bits::f16_format> ? 0x7c00u : 0x7f80u);
}
template <class F>
PORTA_HOST_DEVICE inline half_float<F> canonical_nan(half_float<F> h) {
  return is_nan(h) ? half_float<F>::from_bits(F::nan) : h;
}
}  // namespace detail

// ---- arithmetic: computed in float, rounded once --------------------------------------------------
template <class F>
PORTA_HOST_DEVICE inline half_float<F> operator+(half_float<F> a) {
  return a;
}
template <class F>
PORTA_HOST_DEVICE inline half_float<F> operator-(half_float<F> a) {
  return half_float<F>::from_bits(static_cast<std::uint16_t>(a.bits ^ 0x8000u));  // exact
}
#define PORTA_DETAIL_HALF_OP(op)                                                              \
  template <class F>                                                                          \
  PORTA_HOST_DEVICE inline half_float<F> operator op(half_float<F> a, half_float<F> b) {      \
    return half_float<F>(float(a) op float(b));                                               \
  }                                                                                           \
  template <class F>                                                                          \
  PORTA_HOST_DEVICE inline half_float<F>& operator op##=(half_float<F>& a, half_float<F> b) { \
    return a = a op b;                                                                        \
  }
PORTA_DETAIL_HALF_OP(+)
PORTA_DETAIL_HALF_OP(-)
PORTA_DETAIL_HALF_OP(*)
PORTA_DETAIL_HALF_OP(/)
#undef PORTA_DETAIL_HALF_OP
#define PORTA_DETAIL_HALF_CMP(op)                                               \
  template <class F>                                                            \
  PORTA_HOST_DEVICE inline bool operator op(half_float<F> a, half_float<F> b) { \
    return float(a) op float(b);                                                \
  }
PORTA_DETAIL_HALF_CMP(==)
PORTA_DETAIL_HALF_CMP(!=)
PORTA_DETAIL_HALF_CMP(<)
PORTA_DETAIL_HALF_CMP(<=)
PORTA_DETAIL_HALF_CMP(>)
PORTA_DETAIL_HALF_CMP(>=)
#undef PORTA_DETAIL_HALF_CMP

}  // namespace porta

// numeric_limits for the two formats, as for float (digits, epsilon, max, infinity, quiet_NaN, ...).
namespace std {
template <class F>
class numeric_limits<porta::half_float<F>> {
  static constexpr bool f16 = std::is_same_v<F, porta::detail::half_bits::f16_format>;
  using H = porta::half_float<F>;
  PORTA_HOST_DEVICE static H bits(std::uint16_t b) { return H::from_bits(b); }

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true;
  static constexpr std::float_denorm_style has_denorm = std::denorm_present;
  static constexpr bool is_iec559 = f16;
  static constexpr bool is_bounded = true;
  static constexpr std::float_round_style round_style = std::round_to_nearest;
  static constexpr int digits = f16 ? 11 : 8;
  static constexpr int digits10 = f16 ? 3 : 2;
  static constexpr int max_digits10 = f16 ? 5 : 4;
  static constexpr int radix = 2;
  static constexpr int min_exponent = f16 ? -13 : -125;
  static constexpr int max_exponent = f16 ? 16 : 128;
  PORTA_HOST_DEVICE static H min() { return bits(f16 ? 0x0400 : 0x0080); }
  PORTA_HOST_DEVICE static H lowest() { return bits(f16 ? 0xfbff : 0xff7f); }
  PORTA_HOST_DEVICE static H max() { return bits(f16 ? 0x7bff : 0x7f7f); }
  PORTA_HOST_DEVICE static H epsilon() { return bits(f16 ? 0x1400 : 0x3c00); }
  PORTA_HOST_DEVICE static H round_error() { return bits(f16 ? 0x3800 : 0x3f00); }
  PORTA_HOST_DEVICE static H infinity() { return bits(f16 ? 0x7c00 : 0x7f80); }
  PORTA_HOST_DEVICE static H quiet_NaN() { return bits(F::nan); }
  PORTA_HOST_DEVICE static H signaling_NaN() { return bits(f16 ? 0x7d00 : 0x7fa0); }
  PORTA_HOST_DEVICE static H denorm_min() { return bits(0x0001); }
};
}  // namespace std
