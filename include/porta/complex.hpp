// SPDX-License-Identifier: Apache-2.0
// porta::complex<float> and porta::complex<double>: the element types of complex64 and complex128
// arrays, and the complex numbers of user kernels on every device.
//
// Laid out as std::complex<T>, C99's T _Complex, cuComplex / hipComplex and NumPy's complex64 /
// complex128 (real part, then imaginary part; aligned to its size, as float2 / double2), so a
// buffer of any of those is a buffer of these. Converts implicitly to and from std::complex<T> on
// the host; std::complex itself is not usable in device code, this type is.
//
//   porta::Array<porta::complex<float>> z = porta::from_host(dev, host_values, {n});
//   auto w = z * z + porta::complex<float>(1.0f, 2.0f);    // elementwise, complex arithmetic
//   porta::Array<float> r = porta::abs(w);                 // |w|, a float array
//   porta::parallel_for(dev, n, PORTA_KERNEL((std::int64_t i) { v(i) = porta::exp(u(i)); }));
//
// The arithmetic has one definition for every backend and the same bits on each: a product is
// (ac - bd) + (ad + bc)i with every product rounded before its sum (never contracted into an FMA),
// a quotient is Smith's algorithm (what NumPy uses), abs is porta::math::hypot, exp, log and sqrt
// are built from porta::math's functions. A NaN part of a result is the canonical NaN (the NaN
// policy of porta/detail/rounding.hpp). This is a plain aggregate of two values, so it lives in
// the C ABI's porta_scalar too.
#pragma once

#include <complex>
#include <type_traits>

#include "porta/detail/config.hpp"
#include "porta/detail/math.hpp"
#include "porta/detail/math_exp_log.hpp"
#include "porta/detail/math_trig.hpp"
#include "porta/detail/rounding.hpp"
#include "porta/math.hpp"

namespace porta {

template <class T>
struct alignas(2 * sizeof(T)) complex {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "porta::complex<T> is porta::complex<float> or porta::complex<double>");
  using value_type = T;

  T re;
  T im;

  complex() = default;  // trivial, so the type stays a C-compatible aggregate in porta_scalar
  PORTA_HOST_DEVICE constexpr complex(T real, T imag = T(0)) : re(real), im(imag) {}
  // Between precisions: explicit, as narrowing loses bits (double -> float rounds each part).
  template <class U, std::enable_if_t<!std::is_same_v<U, T>, int> = 0>
  PORTA_HOST_DEVICE constexpr explicit complex(const complex<U>& z)
      : re(static_cast<T>(z.re)), im(static_cast<T>(z.im)) {}
  complex(const std::complex<T>& z) : re(z.real()), im(z.imag()) {}  // NOLINT: implicit by design
  operator std::complex<T>() const { return {re, im}; }              // NOLINT: implicit by design

  PORTA_HOST_DEVICE constexpr T real() const { return re; }
  PORTA_HOST_DEVICE constexpr T imag() const { return im; }
};

template <class T>
struct is_complex : std::false_type {};
template <class T>
struct is_complex<complex<T>> : std::true_type {};
// True for porta::complex<float> and porta::complex<double>.
template <class T>
inline constexpr bool is_complex_v = is_complex<T>::value;

namespace detail {
// The real type of a dtype: T for complex<T>, T itself otherwise.
template <class T>
struct real_type {
  using type = T;
};
template <class T>
struct real_type<complex<T>> {
  using type = T;
};
template <class T>
using real_type_t = typename real_type<T>::type;

// The rounding primitives of rounding.hpp, part by part; ops.hpp's functors call these by name.
template <class T>
PORTA_HOST_DEVICE inline bool is_nan(complex<T> z) {
  return is_nan(z.re) || is_nan(z.im);
}
template <class T>
PORTA_HOST_DEVICE inline complex<T> canonical_nan(complex<T> z) {
  return {canonical_nan(z.re), canonical_nan(z.im)};
}
template <class T>
PORTA_HOST_DEVICE inline complex<T> add_rn(complex<T> a, complex<T> b) {
  return {add_rn(a.re, b.re), add_rn(a.im, b.im)};
}
template <class T>
PORTA_HOST_DEVICE inline complex<T> mul_rn(complex<T> a, complex<T> b) {
  // Each product rounded on its own: (ac - bd) is never fma(a, c, -bd), on any compiler.
  return {add_rn(mul_rn(a.re, b.re), -mul_rn(a.im, b.im)), add_rn(mul_rn(a.re, b.im), mul_rn(a.im, b.re))};
}
template <class T>
PORTA_HOST_DEVICE inline T abs_part(T x) {
  return x < T(0) ? -x : x;
}
// Smith's algorithm: the ratio of the smaller to the larger part of b keeps the intermediates in
// range; b == 0 divides each part by |b.re| so that the infinities and NaNs are IEEE's.
template <class T>
PORTA_HOST_DEVICE inline complex<T> div_smith(complex<T> a, complex<T> b) {
  const T ac = abs_part(b.re), ad = abs_part(b.im);
  if (ac >= ad) {
    if (ac == T(0) && ad == T(0)) return {math::impl::div(a.re, ac), math::impl::div(a.im, ac)};
    const T r = math::impl::div(b.im, b.re);
    const T den = add_rn(b.re, mul_rn(b.im, r));
    return {math::impl::div(add_rn(a.re, mul_rn(a.im, r)), den), math::impl::div(add_rn(a.im, -mul_rn(a.re, r)), den)};
  }
  const T r = math::impl::div(b.re, b.im);
  const T den = add_rn(mul_rn(b.re, r), b.im);
  return {math::impl::div(add_rn(mul_rn(a.re, r), a.im), den), math::impl::div(add_rn(mul_rn(a.im, r), -a.re), den)};
}
}  // namespace detail

// ---- arithmetic --------------------------------------------------------------------------------
template <class T>
PORTA_HOST_DEVICE inline complex<T> operator+(complex<T> a) {
  return a;
}
template <class T>
PORTA_HOST_DEVICE inline complex<T> operator-(complex<T> a) {
  return {-a.re, -a.im};
}
template <class T>
PORTA_HOST_DEVICE inline complex<T> operator+(complex<T> a, complex<T> b) {
  return detail::add_rn(a, b);
}
template <class T>
PORTA_HOST_DEVICE inline complex<T> operator-(complex<T> a, complex<T> b) {
  return {detail::add_rn(a.re, -b.re), detail::add_rn(a.im, -b.im)};
}
template <class T>
PORTA_HOST_DEVICE inline complex<T> operator*(complex<T> a, complex<T> b) {
  return detail::mul_rn(a, b);
}
template <class T>
PORTA_HOST_DEVICE inline complex<T> operator/(complex<T> a, complex<T> b) {
  return detail::div_smith(a, b);
}
// With a real operand (z * 2.0f): the real one widened to (x, 0) first, as NumPy computes it.
#define PORTA_DETAIL_COMPLEX_MIXED(op)                                               \
  template <class T>                                                                 \
  PORTA_HOST_DEVICE inline complex<T> operator op(complex<T> a, T b) {               \
    return a op complex<T>(b);                                                       \
  }                                                                                  \
  template <class T>                                                                 \
  PORTA_HOST_DEVICE inline complex<T> operator op(T a, complex<T> b) {               \
    return complex<T>(a) op b;                                                       \
  }                                                                                  \
  template <class T>                                                                 \
  PORTA_HOST_DEVICE inline complex<T>& operator op##=(complex<T>& a, complex<T> b) { \
    return a = a op b;                                                               \
  }
PORTA_DETAIL_COMPLEX_MIXED(+)
PORTA_DETAIL_COMPLEX_MIXED(-)
PORTA_DETAIL_COMPLEX_MIXED(*)
PORTA_DETAIL_COMPLEX_MIXED(/)
#undef PORTA_DETAIL_COMPLEX_MIXED

// Equal when both parts are (IEEE: a NaN part is unequal to everything, -0.0 == 0.0). Complex
// numbers have no order: <, <=, >, >= do not exist.
template <class T>
PORTA_HOST_DEVICE inline bool operator==(complex<T> a, complex<T> b) {
  return a.re == b.re && a.im == b.im;
}
template <class T>
PORTA_HOST_DEVICE inline bool operator!=(complex<T> a, complex<T> b) {
  return !(a == b);
}

// ---- functions (one definition, the same bits on every device) ----------------------------------
template <class T>
PORTA_HOST_DEVICE inline T real(complex<T> z) {
  return z.re;
}
template <class T>
PORTA_HOST_DEVICE inline T imag(complex<T> z) {
  return z.im;
}
template <class T>
PORTA_HOST_DEVICE inline complex<T> conj(complex<T> z) {
  return {z.re, -z.im};
}
// |z| without overflow or underflow in between: porta::math::hypot, within 1 ulp.
template <class T>
PORTA_HOST_DEVICE inline T abs(complex<T> z) {
  return detail::canonical_nan(detail::math::hypot(z.re, z.im));
}
// The argument in [-pi, pi]: porta::math::atan2(imag, real).
template <class T>
PORTA_HOST_DEVICE inline T arg(complex<T> z) {
  return detail::canonical_nan(detail::math::atan2(z.im, z.re));
}
// e^z = e^re (cos im + i sin im); a real z (im == 0) gives (e^re, im) exactly.
template <class T>
PORTA_HOST_DEVICE inline complex<T> exp(complex<T> z) {
  const T e = detail::math::exp(z.re);
  if (z.im == T(0)) return detail::canonical_nan(complex<T>(e, z.im));
  T s, c;
  detail::math::sincos(z.im, &s, &c);
  return detail::canonical_nan(complex<T>(detail::mul_rn(e, c), detail::mul_rn(e, s)));
}
// The principal logarithm: log|z| + i arg z (log(0) is -inf + 0i).
template <class T>
PORTA_HOST_DEVICE inline complex<T> log(complex<T> z) {
  return detail::canonical_nan(complex<T>(detail::math::log(abs(z)), arg(z)));
}
// The principal square root (real part >= 0), from |z| without cancellation: for re >= 0,
// t = sqrt((re + |z|) / 2) and the root is t + i im / 2t; for re < 0 the parts swap roles.
template <class T>
PORTA_HOST_DEVICE inline complex<T> sqrt(complex<T> z) {
  if (z.re == T(0) && z.im == T(0)) return {T(0), z.im};
  const T half = T(0.5);
  const T t = porta::math::sqrt(detail::mul_rn(detail::add_rn(detail::abs_part(z.re), abs(z)), half));
  const T q = detail::math::impl::div(z.im, detail::add_rn(t, t));
  if (z.re >= T(0)) return detail::canonical_nan(complex<T>(t, q));
  return detail::canonical_nan(complex<T>(detail::abs_part(q), z.im < T(0) ? -t : t));
}

}  // namespace porta
