// SPDX-License-Identifier: Apache-2.0
// porta's own tan, sincos, asin, acos, atan and atan2 in float and double, under the contract of
// porta/detail/math.hpp (read its top comment first): IEEE binary32/binary64, round-to-nearest,
// every operation one correctly rounded +, -, * or /, or exact integer work on the bits, in an order
// the source fixes; no calls, no tables, selects instead of branches on the common path.
//
// tan reuses sin and cos's range reduction and evaluates sin(r) and cos(r) as double-double
// (hi + lo, the two leading terms of each series carried exactly), so that the quotient, refined
// once with its exact remainder, is rounded once: tan r = s / c in even quadrants, -c / s in odd
// ones, where a plain quotient of two rounded polynomials would lose up to 1.5 ulp next to the poles.
//
// asin, acos, atan and atan2 share one core: atan2 of two non-negative double-doubles n and d.
// u = min / max (<= 1, with its exact remainder), atan u = atan(k/8) + atan t with k = round(8u) and
// t = (u - k/8) / (1 + u k/8), |t| <= 1/16, so that seven odd Taylor terms of atan t reach 2^-60;
// then pi/2 - (swapped) and pi - (x < 0) in double-double. Nothing cancels: atan u <= pi/4, so
// pi/2 - atan u >= pi/4 and pi - that >= pi/2. asin x = atan2(|x|, sqrt(1 - x^2)) and
// acos x = atan2(sqrt(1 - x^2), x) with 1 - x^2 = (1 - |x|)(1 + |x|) carried as a double-double,
// which keeps acos accurate next to 1 (where 1 - x is exact and everything else is relative).
//
// float: every function is the double evaluation rounded once (the float variants skip the
// double-double corrections; their double error, a few 2^-53, is far below a float ulp).
//
// Square root: sqrt(1 - x^2) comes from three Newton steps on 1/sqrt (multiplications only, from a
// first guess built on the bits) and one correction with the exact remainder, as a double-double:
// no call to a square root, which GCC vectorises only under -fno-math-errno.
//
// Selects: where one operand is a long computation the other path does not need (the tiny-x,
// special-value and quadrant selects), tr_select() works on the bits, so that the compiler keeps both
// paths in straight-line code rather than moving one under a branch that it cannot vectorise
// without -fno-trapping-math.
//
// Accuracy (tests/algorithms/test_math_trig_erf.cpp asserts 1 ulp; the worst errors measured against
// long double over 10^7 random inputs per function and type, tan up to 2^1023): double tan 0.60 ulp,
// asin 0.51, acos 0.51, atan 0.51, atan2 0.54; float 0.5025 at most, and so over every float of
// |x| in [2^-12, 2^10) for tan, [2^-12, 1] for asin and acos, [2^-12, 2^24) for atan (against
// glibc's double functions). sincos gives sin's and cos's bits.
//
// Special values (C99 Annex F): asin(+-0) = +-0, atan(+-0) = +-0, atan(+-inf) = +-pi/2, acos(1) = +0,
// tan(+-0) = +-0, and every atan2 quadrant case (atan2(+-0, -0) = +-pi, atan2(+-0, +0) = +-0,
// atan2(+-inf, -inf) = +-3pi/4, ...). A NaN input, |x| > 1 for asin and acos, and tan(+-inf) give the
// canonical quiet NaN.
#pragma once

#include "porta/detail/math.hpp"

namespace porta::detail::math {
namespace impl {

// Helpers carry a tr_ prefix: the other math headers have their own under other names.

// c ? a : b on the bits (see the top of this file).
PORTA_HOST_DEVICE inline double tr_select(bool c, double a, double b) {
  const std::uint64_t m = std::uint64_t(0) - static_cast<std::uint64_t>(c);
  return from_bits((bits(a) & m) | (bits(b) & ~m));
}

// |x| (clears the sign bit, so -0 and NaN too).
PORTA_HOST_DEVICE inline double tr_fabs(double x) {
  return from_bits(bits(x) & ~(std::uint64_t(1) << 63));
}
PORTA_HOST_DEVICE inline bool tr_sign_bit(double x) {
  return (bits(x) >> 63) != 0;
}

// hi + lo of a + b for |a| >= |b| (Fast2Sum), renormalising a double-double.
PORTA_HOST_DEVICE inline double tr_fast_two_sum(double a, double b, double* e) {
  const double s = add(a, b);
  *e = sub(b, sub(s, a));
  return s;
}

// (nh + nl) / (dh + dl) for normalised double-doubles: the quotient refined once with its exact
// remainder, which leaves the final rounding as the only sizeable error.
PORTA_HOST_DEVICE inline double tr_dd_div(double nh, double nl, double dh, double dl) {
  const double q = div(nh, dh);
  double pe;
  const double p = two_prod(q, dh, &pe);
  const double rem = add(sub(sub(nh, p), pe), sub(nl, mul(q, dl)));
  return add(q, div(rem, dh));
}

// ---- tan ------------------------------------------------------------------------------------------
// sin(r) and cos(r), r = rh + rl, |rh| <= ~pi/4, as normalised double-doubles. r^2 and r^3/6 are
// double-double products; the rest of each series is below 0.4% (sin) and 2.3% (cos) of the result,
// so its own roundings stay below 2^-57 of it. Taylor terms through r^17 and r^16 as in math.hpp.
PORTA_HOST_DEVICE inline void sincos_dd(double rh, double rl, double* sh, double* sl, double* ch, double* cl) {
  double zl;
  const double zh = two_prod(rh, rh, &zl);
  zl = add(zl, mul(add(rh, rh), rl));
  double r3l;
  const double r3h = two_prod(rh, zh, &r3l);
  r3l = add(r3l, add(mul(rh, zl), mul(rl, zh)));
  // r^3 / 6 with 1/6 as a double-double.
  const double k6h = 0x1.5555555555555p-3, k6l = 0x1.5555555555555p-57;
  double t6l;
  const double t6h = two_prod(r3h, k6h, &t6l);
  t6l = add(t6l, add(mul(r3h, k6l), mul(r3l, k6h)));
  const double P = horner(zh, 1.0 / 120, -1.0 / 5040, 1.0 / 362880, -1.0 / 39916800, 1.0 / 6227020800,
                          -1.0 / 1307674368000, 1.0 / 355687428096000);
  double e;
  const double s0 = two_sum(rh, -t6h, &e);
  *sh = tr_fast_two_sum(s0, add(e, add(sub(rl, t6l), mul(mul(r3h, zh), P))), sl);
  const double c0 = two_sum(1.0, mul(-0.5, zh), &e);
  *ch = tr_fast_two_sum(c0, add(e, sub(mul(mul(zh, zh), cos_c_d(zh)), mul(0.5, zl))), cl);
}

// tan of x = (4j + q) pi/2 + r: tan r for even q, -1 / tan r for odd q.
template <bool Double>
PORTA_HOST_DEVICE inline double tan_from(unsigned q, double rh, double rl) {
  const bool odd = (q & 1u) != 0;
  if constexpr (!Double) {
    const double s = sin_poly<false>(rh, rl), c = cos_poly<false>(rh, rl);
    const double y = div(tr_select(odd, c, s), tr_select(odd, s, c));
    return odd ? -y : y;
  }
  double sh, sl, ch, cl;
  sincos_dd(rh, rl, &sh, &sl, &ch, &cl);
  const double y = tr_dd_div(odd ? ch : sh, odd ? cl : sl, odd ? sh : ch, odd ? sl : cl);
  return odd ? -y : y;
}

// tan for |x| < kTrigFastLimit (other inputs give unspecified values).
template <bool Double>
PORTA_HOST_DEVICE inline double tan_fast(double x) {
  double rh, rl;
  const unsigned q = trig_reduce_fast<Double>(x, &rh, &rl);
  const double y = tan_from<Double>(q, rh, rl);
  // tiny x: tan x = x (x^3/3 is below half an ulp), and -0 stays -0.
  return tr_select(tr_fabs(x) < 0x1p-27, x, y);
}

template <bool Double>
PORTA_HOST_DEVICE inline double tan_large(double x) {
  if (!(x - x == 0.0)) return qnan();  // inf or NaN
  double rh, rl;
  const unsigned q = trig_reduce_large(x, &rh, &rl);
  return tan_from<Double>(q, rh, rl);
}

// ---- atan2 core -----------------------------------------------------------------------------------
// atan(k/8) for k = 0..8 as hi + lo (mpmath, 200 bits, rounded to nearest twice).
PORTA_HOST_DEVICE inline double atan_k8(double k, double* lo) {
  double h = 0.0, l = 0.0;
  h = tr_select(k == 1.0, 0x1.fd5ba9aac2f6ep-4, h), l = tr_select(k == 1.0, -0x1.cd37686760c17p-59, l);
  h = tr_select(k == 2.0, 0x1.f5b75f92c80ddp-3, h), l = tr_select(k == 2.0, 0x1.8ab6e3cf7afbdp-57, l);
  h = tr_select(k == 3.0, 0x1.6f61941e4def1p-2, h), l = tr_select(k == 3.0, -0x1.c63aae6f6e918p-56, l);
  h = tr_select(k == 4.0, 0x1.dac670561bb4fp-2, h), l = tr_select(k == 4.0, 0x1.a2b7f222f65e2p-56, l);
  h = tr_select(k == 5.0, 0x1.1e00babdefeb4p-1, h), l = tr_select(k == 5.0, -0x1.928df287a668fp-58, l);
  h = tr_select(k == 6.0, 0x1.4978fa3269ee1p-1, h), l = tr_select(k == 6.0, 0x1.2419a87f2a458p-56, l);
  h = tr_select(k == 7.0, 0x1.700a7c5784634p-1, h), l = tr_select(k == 7.0, -0x1.8c34d25aadef6p-56, l);
  h = tr_select(k == 8.0, 0x1.921fb54442d18p-1, h), l = tr_select(k == 8.0, 0x1.1a62633145c07p-55, l);
  *lo = l;
  return h;
}
inline constexpr double kPio2Lo_dd = 0x1.1a62633145c07p-54;  // pi/2 = kPio2Hi + this
inline constexpr double kPiHi = 0x1.921fb54442d18p+1, kPiLo = 0x1.1a62633145c07p-53;

// atan(uh + ul) for 0 <= u <= 1 (|ul| <= ulp(uh)), as hi + *lo; the float variant ignores ul and
// returns *lo = 0.
template <bool Double>
PORTA_HOST_DEVICE inline double atan_unit(double uh, double ul, double* lo) {
  const double k = round_int(mul(uh, 8.0));
  const double c = mul(k, 0.125);
  double Cl;
  const double Ch = atan_k8(k, &Cl);
  // t = (u - c) / (1 + c u); u - c is exact (Sterbenz: u is within 1/16 of c >= 1/8, or c = 0).
  if constexpr (!Double) {
    const double t = div(sub(uh, c), add(1.0, mul(c, uh)));
    const double z = mul(t, t);
    *lo = 0.0;
    return add(Ch, add(t, mul(mul(t, z), horner(z, -1.0 / 3, 1.0 / 5, -1.0 / 7, 1.0 / 9))));
  }
  double nl, pe, dl;
  const double nh = two_sum(sub(uh, c), ul, &nl);
  const double p = two_prod(c, uh, &pe);
  const double dh = two_sum(1.0, p, &dl);
  dl = add(dl, add(pe, mul(c, ul)));
  const double th = div(nh, dh);
  double qe;
  const double qp = two_prod(th, dh, &qe);
  const double tl = div(add(sub(sub(nh, qp), qe), sub(nl, mul(th, dl))), dh);
  // atan t = t + t^3 P(t^2), P = -1/3 + t^2/5 - ... through t^13: |t| <= 1/16 leaves 2^-60.
  const double z = mul(th, th);
  const double tail = mul(mul(th, z), horner(z, -1.0 / 3, 1.0 / 5, -1.0 / 7, 1.0 / 9, -1.0 / 11, 1.0 / 13));
  double e;
  const double s = two_sum(Ch, th, &e);
  return tr_fast_two_sum(s, add(e, add(Cl, add(tl, tail))), lo);
}

// atan2(n, d) for non-negative n = nh + nl, d = dh + dl, not both zero, within [2^-600, 2^600] or
// zero (so that the exact products do not overflow or underflow); pi minus it when xneg. The result
// as hi + *lo.
template <bool Double>
PORTA_HOST_DEVICE inline double atan2_pos(double nh, double nl, double dh, double dl, bool xneg, double* lo) {
  const bool swap = nh > dh;
  const double ah = tr_select(swap, dh, nh), al = tr_select(swap, dl, nl);
  const double bh = tr_select(swap, nh, dh), bl = tr_select(swap, nl, dl);
  const double uh = div(ah, bh);
  double ul = 0.0;
  if constexpr (Double) {
    double pe;
    const double p = two_prod(uh, bh, &pe);
    ul = div(add(sub(sub(ah, p), pe), sub(al, mul(uh, bl))), bh);
  }
  double Al;
  const double Ah = atan_unit<Double>(uh, ul, &Al);
  // swapped: pi/2 - A; then x < 0: pi - that.
  double e;
  const double sh = two_sum(kPio2Hi, -Ah, &e);
  const double sl = add(e, sub(kPio2Lo_dd, Al));
  const double rh = tr_select(swap, sh, Ah), rl = tr_select(swap, sl, Al);
  const double nh2 = two_sum(kPiHi, -rh, &e);
  const double nl2 = add(e, sub(kPiLo, rl));
  *lo = tr_select(xneg, nl2, rl);
  return tr_select(xneg, nh2, rh);
}

// sqrt(w) for 2^-60 <= w <= 1 to about 2^-34 relative (others: unspecified): 1/sqrt(w) from the
// bits of w (within 3.5%), three Newton steps r (3/2 - w r^2 / 2) (error 1.5 e^2 each), times w.
PORTA_HOST_DEVICE inline double sqrt_approx(double w) {
  double r = from_bits(0x5fe6eb50c7b537a9u - (bits(w) >> 1));
  const double hw = mul(0.5, w);
  for (int i = 0; i < 3; ++i) r = mul(r, sub(1.5, mul(hw, mul(r, r))));
  return mul(w, r);
}

// sqrt(1 - x^2) for |x| <= 1 as hi + *lo: 1 - x^2 = (1 - |x|)(1 + |x|), each factor carried exactly;
// the square root's error is removed with the exact remainder (w - s^2) / 2s, which leaves its
// square, below 2^-68.
template <bool Double>
PORTA_HOST_DEVICE inline double sqrt1mx2(double ax, double* lo) {
  if constexpr (!Double) {
    const double w = mul(sub(1.0, ax), add(1.0, ax));
    *lo = 0.0;
    return tr_select(w > 0.0, sqrt_approx(w), 0.0);
  }
  double ae, be, pe;
  const double a = two_sum(1.0, -ax, &ae);
  const double b = two_sum(1.0, ax, &be);
  const double p = two_prod(a, b, &pe);
  double wl;
  const double wh = tr_fast_two_sum(p, add(pe, add(mul(a, be), mul(ae, b))), &wl);
  const double s0 = sqrt_approx(wh);
  double se;
  const double ss = two_prod(s0, s0, &se);
  const double c = div(add(sub(sub(wh, ss), se), wl), add(s0, s0));
  double sl;
  const double s = tr_fast_two_sum(s0, c, &sl);
  const bool pos = wh > 0.0;
  *lo = tr_select(pos, sl, 0.0);
  return tr_select(pos, s, 0.0);
}

template <bool Double>
PORTA_HOST_DEVICE inline double asin_d(double x) {
  const double ax = tr_fabs(x);
  double sl, lo;
  const double s = sqrt1mx2<Double>(ax, &sl);
  const double hi = atan2_pos<Double>(ax, 0.0, s, sl, false, &lo);
  const double y = with_sign(add(hi, lo), x);
  // tiny x: asin x = x (x^3/6 is below half an ulp), and -0 stays -0.
  const double r = tr_select(ax < 0x1p-26, x, y);
  return tr_select(!(ax <= 1.0), qnan(), r);  // |x| > 1 or NaN
}

template <bool Double>
PORTA_HOST_DEVICE inline double acos_d(double x) {
  const double ax = tr_fabs(x);
  double sl, lo;
  const double s = sqrt1mx2<Double>(ax, &sl);
  const double hi = atan2_pos<Double>(s, sl, ax, 0.0, x < 0.0, &lo);
  return tr_select(!(ax <= 1.0), qnan(), add(hi, lo));  // |x| > 1 or NaN
}

template <bool Double>
PORTA_HOST_DEVICE inline double atan_d(double x) {
  // Beyond 2^60, atan x is pi/2 to within a quarter ulp; the clamp also keeps inf and huge x away
  // from the exact products.
  const double ax = tr_fabs(x);
  const double a = tr_select(ax < 0x1p60, ax, 0x1p60);
  double lo;
  const double hi = atan2_pos<Double>(a, 0.0, 1.0, 0.0, false, &lo);
  const double y = with_sign(add(hi, lo), x);
  const double r = tr_select(ax < 0x1p-27, x, y);  // atan x = x, and -0 stays -0
  return tr_select(x != x, qnan(), r);
}

// atan2 in the quadrant of (x, y). The magnitudes are scaled by one power of two into the range of
// atan2_pos; a quotient below 2^-28 with x > 0 is y / x itself (within 0.52 ulp), divided unscaled so
// that a subnormal result is rounded once.
template <bool Double>
PORTA_HOST_DEVICE inline double atan2_d(double y, double x) {
  const double ax = tr_fabs(x), ay = tr_fabs(y);
  const double mx = tr_select(ax > ay, ax, ay);
  const double sc = tr_select(mx > 0x1p500, 0x1p-600, tr_select(mx < 0x1p-500, 0x1p600, 1.0));
  const bool xinf = ax == inf(), yinf = ay == inf();
  double xs = Double ? mul(ax, sc) : ax, ys = Double ? mul(ay, sc) : ay;
  // Infinities: one infinite operand counts as 1 against 0, two as 1 against 1; two zeros as 0
  // against 1, giving 0 or pi.
  xs = tr_select(xinf, 1.0, tr_select(yinf, 0.0, xs));
  ys = tr_select(yinf, 1.0, tr_select(xinf, 0.0, ys));
  xs = tr_select(mx == 0.0, 1.0, xs);
  const bool xneg = tr_sign_bit(x);
  double lo;
  const double hi = atan2_pos<Double>(ys, 0.0, xs, 0.0, xneg, &lo);
  double r = add(hi, lo);
  const bool direct = mul(ay, 0x1p28) < ax;
  r = tr_select(direct & !xneg, div(ay, ax), r);
  r = with_sign(r, y);
  const bool nan = x != x, ynan = y != y;
  return tr_select(nan | ynan, qnan(), r);
}

}  // namespace impl

// ---- the functions --------------------------------------------------------------------------------
// tan in the ranges of sin and cos (math.hpp): *_fast is branch-free and holds for
// |x| < kTrigFastLimit (float too, evaluated in double); tan is every x.
PORTA_HOST_DEVICE inline double tan_fast(double x) {
  return impl::tan_fast<true>(x);
}
PORTA_HOST_DEVICE inline float tan_fast(float x) {
  return static_cast<float>(impl::tan_fast<false>(static_cast<double>(x)));
}
PORTA_HOST_DEVICE inline double tan(double x) {
  return impl::trig_is_fast(x) ? impl::tan_fast<true>(x) : impl::tan_large<true>(x);
}
PORTA_HOST_DEVICE inline float tan(float x) {
  const double xd = static_cast<double>(x);
  return static_cast<float>(impl::trig_is_fast(xd) ? impl::tan_fast<false>(xd) : impl::tan_large<false>(xd));
}

// sin and cos of one argument: the same bits as sin(x) and cos(x). On the fast paths the two calls
// inline into one expression and the compiler shares their reduction and polynomials (they are the
// same operations on the same values); the large path reduces once here.
PORTA_HOST_DEVICE inline void sincos_fast(double x, double* s, double* c) {
  *s = sin_fast(x);
  *c = cos_fast(x);
}
PORTA_HOST_DEVICE inline void sincos_fast(float x, float* s, float* c) {
  *s = sin_fast(x);
  *c = cos_fast(x);
}
PORTA_HOST_DEVICE inline void sincos_wide(float x, float* s, float* c) {
  *s = sin_wide(x);
  *c = cos_wide(x);
}

namespace impl {
template <bool Double>
PORTA_HOST_DEVICE inline void sincos_large(double x, double* s, double* c) {
  if (!(x - x == 0.0)) {  // inf or NaN
    *s = *c = qnan();
    return;
  }
  double rh, rl;
  const unsigned q = trig_reduce_large(x, &rh, &rl);
  const double sp = sin_poly<Double>(rh, rl), cp = cos_poly<Double>(rh, rl);
  // As trig_large: sin by quadrant sin r, cos r, -sin r, -cos r; cos is sin at quadrant q + 1.
  const double vs = (q & 1u) ? cp : sp, vc = ((q + 1u) & 1u) ? cp : sp;
  *s = (q & 2u) ? -vs : vs;
  *c = ((q + 1u) & 2u) ? -vc : vc;
}
}  // namespace impl

PORTA_HOST_DEVICE inline void sincos(double x, double* s, double* c) {
  if (trig_is_fast(x)) return sincos_fast(x, s, c);
  impl::sincos_large<true>(x, s, c);
}
PORTA_HOST_DEVICE inline void sincos(float x, float* s, float* c) {
  if (trig_is_fast(x)) return sincos_fast(x, s, c);
  if (trig_is_wide(x)) return sincos_wide(x, s, c);
  double sd, cd;
  impl::sincos_large<false>(static_cast<double>(x), &sd, &cd);
  *s = static_cast<float>(sd);
  *c = static_cast<float>(cd);
}

#define PORTA_DETAIL_MATH_TRIG_UNARY(name, body)                          \
  PORTA_HOST_DEVICE inline double name(double x) {                        \
    return impl::body<true>(x);                                           \
  }                                                                       \
  PORTA_HOST_DEVICE inline float name(float x) {                          \
    return static_cast<float>(impl::body<false>(static_cast<double>(x))); \
  }
PORTA_DETAIL_MATH_TRIG_UNARY(asin, asin_d)
PORTA_DETAIL_MATH_TRIG_UNARY(acos, acos_d)
PORTA_DETAIL_MATH_TRIG_UNARY(atan, atan_d)
#undef PORTA_DETAIL_MATH_TRIG_UNARY

PORTA_HOST_DEVICE inline double atan2(double y, double x) {
  return impl::atan2_d<true>(y, x);
}
PORTA_HOST_DEVICE inline float atan2(float y, float x) {
  return static_cast<float>(impl::atan2_d<false>(static_cast<double>(y), static_cast<double>(x)));
}

}  // namespace porta::detail::math
