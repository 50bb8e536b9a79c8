// SPDX-License-Identifier: Apache-2.0
// porta's own pow, expm1, log1p, exp2, log2, exp10, log10, sinh, cosh, cbrt and hypot in float and
// double, under the contract of porta/detail/math.hpp (read its top comment first): IEEE binary32
// and binary64 with round-to-nearest, every operation one correctly rounded +, -, * or / or exact
// integer work on the bits, in an order the source fixes; no libm, no FMA, no tables, no square
// root instruction (hypot's root is Newton's, corrected once). Any IEEE machine that evaluates them
// as written gets the same bits.
//
// Where double needs more than double: pow's log(x) is carried as a double-double to 2^-67
// relative (log_dd), because y log x can reach 745 and each 2^-53 of relative error there is an ulp
// of the result; the exponential then takes the double-double argument (exp_dd). expm1, log1p and
// sinh near 0 keep the leading term exact and add the small ones to it; log2 and log10 multiply
// log_dd by a double-double constant so that log2(2^k) and log10(10^k) come out exact; cbrt ends
// with a Newton step whose residual y^3 - x is computed exactly; hypot sums the squares exactly and
// corrects the square root once, after scaling by a power of two so nothing overflows or underflows.
// float evaluates in double and rounds once (float pow takes double log and exp: |y log x| < 2^7
// keeps their error near 2^-45, far below float's half ulp).
//
// Accuracy, measured against long double over 10^7 random inputs per function and type across
// every part of each reduction (tests/algorithms/test_math_exp_log.cpp asserts 1 ulp): double pow,
// expm1, exp2, exp10, sinh and cosh at most 0.64 ulp, log1p, log2, log10, cbrt and hypot 0.50x;
// float at most 0.51 ulp for all of them.
//
// Branch-free on the common path: special values, signs and the ranges of sinh are selects over
// values computed anyway, so a loop of any of them vectorises (GCC needs -fno-trapping-math to turn
// the selects into blends, as the CPU backend builds).
//
// Special values follow C99 Annex F; every NaN result is the canonical quiet NaN.
#pragma once

#include <cstdint>

#include "porta/detail/math.hpp"

namespace porta::detail::math {
namespace impl {

// ---- double-double pieces -------------------------------------------------------------------------
// a + b = s + e exactly, for |a| >= |b| (or a = 0): Fast2Sum, three operations.
PORTA_HOST_DEVICE inline double fast_two_sum(double a, double b, double* e) {
  const double s = add(a, b);
  *e = sub(b, sub(s, a));
  return s;
}

PORTA_HOST_DEVICE inline double abs_bits(double x) {
  return from_bits(bits(x) & ~(std::uint64_t(1) << 63));
}

// ln 2, 1/ln 2, ln 10 and 1/ln 10 as unevaluated sums hi + lo (each hi correctly rounded, lo the
// correctly rounded rest): enough for 2^-106 relative.
inline constexpr double kLn2H = 0x1.62e42fefa39efp-1, kLn2L = 0x1.abc9e3b39803fp-56;
inline constexpr double kInvLn2H = 0x1.71547652b82fep+0, kInvLn2L = 0x1.777d0ffda0d24p-56;
inline constexpr double kLn10H = 0x1.26bb1bbb55516p+1, kLn10L = -0x1.f48ad494ea3e9p-53;
inline constexpr double kInvLn10H = 0x1.bcb7b1526e50ep-2, kInvLn10L = 0x1.95355baaafad3p-57;

// ---- log as a double-double -----------------------------------------------------------------------
// log(x + xl) = *lo + the return value, for finite x > 0 and |xl| <= ulp(x)/2 (xl = 0 where x is
// subnormal; other inputs give unspecified values), to 2^-67 relative (2^-67.8 at most against
// quad precision over 2 * 10^6 inputs; worst just below sqrt(1/2), where k ln2 and log m cancel
// by a factor 2). As log_d:
// x = 2^k m, m in [sqrt(1/2), sqrt(2)), f = m - 1, s = f / (2 + f), and
// log m = 2 atanh(s) = 2s + s^3 T(s^2), T(z) = 2/3 + 2z/5 + 2z^2/7 + ...
// Here s is a double-double (the quotient's exact remainder gives its low part), s^3 T(s^2) is a
// double-double product whose T carries 2/3 + 2z/5 as a double-double (both constants as hi + lo),
// and only the terms from 2z^2/7 on, below 2^-11 of T (and T is below 2^-6.7 of log m), are plain
// doubles. The series stops at 2z^11/25: |z| <= 0.0295 leaves the rest below 2^-61 of T.
PORTA_HOST_DEVICE inline double log_dd(double x, double xl, double* lo) {
  const bool tiny = x < 0x1p-1022;
  const double xs = tiny ? mul(x, 0x1p54) : x;
  const std::uint64_t ix = bits(xs);
  const std::uint64_t kb = (ix + (0x3ff0000000000000u - 0x3fe6a09e667f3bcdu)) >> 52;  // k + 1023
  const double m = from_bits(ix - ((kb - 1023u) << 52));
  const double k = sub(sub(from_bits(0x4330000000000000u | kb), 0x1p52), tiny ? 1077.0 : 1023.0);
  // f + fl = m + xl 2^-k - 1 exactly, normalised so that fl is below half an ulp of f (log1p's
  // 1 + x can round to a neighbour of 1 that is twice as far from it as 1 + x is).
  // 2^-k = 2^(1025 - kb) / 4, the first factor normal for every kb in [2, 2047].
  const std::uint64_t kbc = kb < 2u ? 2u : kb;
  double fl;
  const double f = fast_two_sum(sub(m, 1.0), mul(mul(xl, from_bits((2048u - kbc) << 52)), 0.25), &fl);
  double dl;
  const double dh = fast_two_sum(2.0, f, &dl);
  dl = add(dl, fl);
  const double sh = div(f, dh);
  double pe;
  const double p = two_prod(sh, dh, &pe);
  // s's low part from the exact remainder f + fl - sh (dh + dl); f - p is exact (Sterbenz).
  const double sl = div(sub(add(sub(sub(f, p), pe), fl), mul(sh, dl)), dh);
  // z = s^2 and s^3 = s z as double-doubles.
  double ze;
  const double zh = two_prod(sh, sh, &ze);
  const double zl = add(ze, mul(add(sh, sh), sl));
  double ce;
  const double ch = two_prod(sh, zh, &ce);
  const double cl = add(ce, add(mul(sh, zl), mul(sl, zh)));
  // T = 2/3 + 2z/5 + z^2 R(z).
  double ae;
  const double ah = two_prod(zh, 0x1.999999999999ap-2, &ae);  // 2z/5, with 2/5 as hi + lo
  const double al = add(ae, add(mul(zh, -0x1.999999999999ap-56), mul(zl, 0x1.999999999999ap-2)));
  const double R =
      horner(zh, 2.0 / 7, 2.0 / 9, 2.0 / 11, 2.0 / 13, 2.0 / 15, 2.0 / 17, 2.0 / 19, 2.0 / 21, 2.0 / 23, 2.0 / 25);
  double te;
  const double th0 = fast_two_sum(0x1.5555555555555p-1, ah, &te);  // 2/3 as hi + lo
  const double tl0 = add(add(te, add(0x1.5555555555555p-55, al)), mul(mul(zh, zh), R));
  double tl;
  const double th = fast_two_sum(th0, tl0, &tl);
  // s^3 T.
  double ue;
  const double uh = two_prod(ch, th, &ue);
  const double ul = add(ue, add(mul(ch, tl), mul(cl, th)));
  // k ln2 + 2s + s^3 T, the large terms summed exactly; k kLn2Hi is exact (32 significant bits).
  double e1, e2;
  const double h1 = two_sum(add(sh, sh), uh, &e1);
  const double h = two_sum(mul(k, kLn2Hi), h1, &e2);
  const double l = add(add(add(e1, e2), add(add(sl, sl), ul)), mul(k, kLn2Lo));
  return fast_two_sum(h, l, lo);
}

// ---- exp of a double-double -----------------------------------------------------------------------
// e^(r + rl) for |r| <= ln2/2 + a little, |rl| <= 2^-40: 1 + r exactly as a sum, the rest added to
// its low part, one rounding at the end. Double or float degree.
template <bool Double>
PORTA_HOST_DEVICE inline double exp_small(double r, double rl, double* lo) {
  const double q = mul(mul(r, r), Double ? exp_q_d(r) : exp_q_f(r));  // e^r - 1 - r
  double se;
  const double s = fast_two_sum(1.0, r, &se);
  const double l = add(add(se, q), mul(rl, add(1.0, add(r, q))));
  return fast_two_sum(s, l, lo);
}

// p 2^n for an integer-valued n in [-1100, 1100]: exact unless the result is subnormal, rounded once
// there (the two factors are normal), and inf where it overflows.
PORTA_HOST_DEVICE inline double scale2(double p, double n) {
  const double n1 = round_int(mul(n, 0.5));
  return mul(mul(p, pow2(n1)), pow2(sub(n, n1)));
}

// (ph + pl) 2^n rounded once, for ph in [1/2, 2), |pl| <= ulp(ph) and an integer-valued n in
// [-1100, 1100]. A subnormal result is rounded at the subnormals' spacing directly: scaled by 2^200,
// ph + 2^-822 puts the rounding point where 2^-1022 puts it for the result; subtracting 2^-822 and
// scaling back are exact. (Rounding ph + pl to double first would add up to a quarter ulp.)
PORTA_HOST_DEVICE inline double scale2_dd(double ph, double pl, double n) {
  const double normal = scale2(add(ph, pl), n);
  const double t = pow2(n < -900.0 ? add(n, 200.0) : 0.0);
  const double a = mul(ph, t);
  double e;
  const double s = fast_two_sum(0x1p-822, a, &e);
  const double sub_normal = mul(sub(add(s, add(e, mul(pl, t))), 0x1p-822), 0x1p-200);
  return a < 0x1p-822 ? sub_normal : normal;
}

// e^(xh + xl), |xl| <= 2^-40 |xh|; NaN gives unspecified values. Overflows to inf and underflows
// through the subnormals as e^x does (the clamps keep the scaling in range).
PORTA_HOST_DEVICE inline double exp_dd(double xh, double xl) {
  const bool over = xh > 710.0, under = xh < -746.0;
  const double x = over ? 710.0 : (under ? -746.0 : xh);
  const double n = round_int(mul(x, kLog2e));
  const double a = sub(x, mul(n, kLn2Hi));  // exact (Sterbenz; n kLn2Hi is exact)
  double rl;
  const double r = two_sum(a, -mul(n, kLn2Lo), &rl);
  rl = add(rl, over || under ? 0.0 : xl);
  double pl;
  const double ph = exp_small<true>(r, rl, &pl);
  return scale2_dd(ph, pl, n);
}

// ---- pow ------------------------------------------------------------------------------------------
// C99 F.9.4.4 around core = |x|^y (computed for finite nonzero x; anything elsewhere).
PORTA_HOST_DEVICE inline double pow_special(double x, double y, double core) {
  // Whether y is an integer, and an odd one: below 2^51, y rounded by the kRound trick (exact
  // there) and the low bit of that integer; from 2^51 to 2^52 (a spacing of 1/2), an integer when
  // the significand's last bit is clear, odd when the one above it is set; from 2^52 to 2^53, the
  // last bit; beyond, every double is an even integer.
  const double ay0 = abs_bits(y);
  const bool below = ay0 < 0x1p51;
  const bool halves = !below && ay0 < 0x1p52;
  const std::uint64_t yb = bits(y);
  // y itself where y is an integer, NaN (unequal to everything) where it is not.
  const double yr = below ? round_int(y) : ((halves && (yb & 1u)) ? qnan() : y);
  const std::uint64_t low = below ? bits(add(y, kRound)) : (halves ? yb >> 1 : yb);
  const std::uint64_t odd = (yr == y && ay0 < 0x1p53) ? (low & 1u) : 0u;
  // An odd y gives the result x's sign (-0 and -inf included). Plain selects over doubles and one
  // mask, not a chain of && over the conditions: GCC vectorises these, not the mixed boolean widths.
  const std::uint64_t sign = (0u - odd) & bits(x) & (std::uint64_t(1) << 63);
  const double ax = abs_bits(x);
  double out = core;
  // x = +-0 or +-inf: 0 or inf.
  const double mag = ((ax == 0.0) == (y < 0.0)) ? inf() : 0.0;
  out = (ax == 0.0 || ax == inf()) ? mag : out;
  // y = +-inf (never odd).
  const double yinf = ax == 1.0 ? 1.0 : (((ax < 1.0) == (y < 0.0)) ? inf() : 0.0);
  out = ay0 == inf() ? yinf : out;
  out = from_bits(bits(out) ^ sign);
  // A finite negative base and a non-integer power.
  const double neg_fin = (x < 0.0 && ax != inf()) ? qnan() : out;
  out = yr != y ? neg_fin : out;
  out = (x != x || y != y) ? qnan() : out;
  return (y == 0.0 || x == 1.0) ? 1.0 : out;
}

// |y| beyond 2^64 gives the same result as 2^64 (with y's sign) for every x != 1: |log x| >= 2^-53
// then makes |y log x| > 2^11, far beyond the range. The clamp keeps the products below finite.
PORTA_HOST_DEVICE inline double pow_clamp_y(double y) {
  return abs_bits(y) > 0x1p64 ? with_sign(0x1p64, y) : y;
}

// |x|^y for finite nonzero x: e^(y log|x|) with log|x| as a double-double. Other x and y give
// garbage (no traps, no undefined behaviour) that pow_special replaces. Selecting safe inputs here
// instead would cost twice: GCC then duplicates log_dd's arithmetic on both sides of the select.
PORTA_HOST_DEVICE inline double pow_core_d(double x, double y) {
  const double yy = pow_clamp_y(y);
  double ll;
  const double lh = log_dd(abs_bits(x), 0.0, &ll);
  double te;
  const double th = two_prod(yy, lh, &te);
  return exp_dd(th, add(te, mul(yy, ll)));
}

// float: log_d and exp_core take 0, inf and NaN without harm, and pow_special replaces what they give.
PORTA_HOST_DEVICE inline double pow_core_f(double x, double y) {
  return exp_core<true>(mul(pow_clamp_y(y), log_d<true>(abs_bits(x))));
}

// ---- expm1 ----------------------------------------------------------------------------------------
// e^x - 1 = 2^n (e^r - 1) + (2^n - 1), x = n ln2 + r + rl: the two large terms summed exactly, the
// rest added to their low part. Beyond n = 1000 the power is applied in two steps, so that the
// result overflows to inf as e^x does.
template <bool Double>
PORTA_HOST_DEVICE inline double expm1_d(double x) {
  double xc = x > 710.0 ? 710.0 : x;
  xc = xc < -40.0 ? -40.0 : xc;  // e^-40 is below half an ulp of 1
  const double n = round_int(mul(xc, kLog2e));
  const double a = sub(xc, mul(n, kLn2Hi));
  double rl;
  const double r = two_sum(a, -mul(n, kLn2Lo), &rl);
  const double nc = n > 1000.0 ? 1000.0 : n;
  const double t = pow2(nc);
  // 2^n - 1 = tm + tme exactly.
  double tme;
  const double tm = two_sum(t, -1.0, &tme);
  double e;
  const double h = two_sum(tm, mul(t, r), &e);
  double y;
  if constexpr (Double) {
    // e^r - 1 - r = r^2/2 + r^3 Q3(r): r^2/2 exact as a double-double and summed exactly too, so that
    // only terms below r^3/6 round before the end (a rounded r^2 Q(r) costs up to 0.35 ulp).
    double r2e, e2;
    const double r2 = two_prod(r, r, &r2e);
    const double h2 = two_sum(h, mul(t, mul(0.5, r2)), &e2);
    const double q3 =
        mul(mul(r, r2), horner(r, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320, 1.0 / 362880,
                               1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800));
    const double q = add(mul(0.5, r2), q3);
    const double low = add(add(mul(0.5, r2e), q3), add(rl, mul(rl, add(r, q))));
    const double l = add(add(add(e, e2), tme), mul(t, low));
    y = mul(add(h2, l), pow2(sub(n, nc)));
  } else {
    const double q = mul(mul(r, r), exp_q_f(r));
    const double l = add(add(e, tme), mul(t, add(q, add(rl, mul(rl, add(r, q))))));
    y = mul(add(h, l), pow2(sub(n, nc)));
  }
  // |x| < 2^-54: e^x - 1 rounds to x (and -0 stays -0).
  const double out = abs_bits(x) < 0x1p-54 ? x : y;
  return x != x ? qnan() : out;
}

// ---- log1p ----------------------------------------------------------------------------------------
// 1 + x = u + ul exactly (TwoSum), and log_dd takes the sum as it is.
PORTA_HOST_DEVICE inline double log1p_dd(double x) {
  double ul;
  const double u = two_sum(1.0, x, &ul);
  double ll;
  const double lh = log_dd(u, ul, &ll);  // garbage for x <= -1, inf and NaN, replaced below
  const double y = add(lh, ll);
  // |x| < 2^-53: log1p x = x - x^2/2 + ... rounds to x (and -0 stays -0).
  double out = abs_bits(x) < 0x1p-53 ? x : y;
  out = x == inf() ? x : out;
  out = x == -1.0 ? -inf() : out;
  return x < -1.0 || x != x ? qnan() : out;
}

PORTA_HOST_DEVICE inline double log1p_f(double x) {
  double ul;
  const double u = two_sum(1.0, x, &ul);
  const double y = add(log_d<false>(u), div(ul, u));
  double out = x == 0.0 ? x : y;
  out = x == inf() ? x : out;
  out = x == -1.0 ? -inf() : out;
  return x < -1.0 || x != x ? qnan() : out;
}

// ---- exp2 and exp10 -------------------------------------------------------------------------------
// 2^x = 2^n e^(r ln2), n = round(x), r = x - n exact, r ln2 a double-double product: exact powers of
// two stay exact.
template <bool Double>
PORTA_HOST_DEVICE inline double exp2_d(double x) {
  double xc = x > 1030.0 ? 1030.0 : x;
  xc = xc < -1080.0 ? -1080.0 : xc;
  const double n = round_int(xc);
  const double r0 = sub(xc, n);
  double ae;
  const double a = two_prod(r0, kLn2H, &ae);
  double pl;
  const double ph = exp_small<Double>(a, add(ae, mul(r0, kLn2L)), &pl);
  const double y = Double ? scale2_dd(ph, pl, n) : scale2(add(ph, pl), n);
  return x != x ? qnan() : y;
}

// 10^x = e^(x ln10), x ln10 a double-double product.
PORTA_HOST_DEVICE inline double exp10_dd(double x) {
  double xc = x > 310.0 ? 310.0 : x;
  xc = xc < -330.0 ? -330.0 : xc;
  double te;
  const double th = two_prod(xc, kLn10H, &te);
  const double y = exp_dd(th, add(te, mul(xc, kLn10L)));
  return x != x ? qnan() : y;
}

// ---- log2 and log10 -------------------------------------------------------------------------------
// log x times a double-double constant c (1/ln2 or 1/ln10), rounded once.
PORTA_HOST_DEVICE inline double log_scaled_dd(double x, double ch, double cl) {
  double ll;
  const double lh = log_dd(x, 0.0, &ll);  // garbage for x <= 0, inf and NaN, replaced below
  double pe;
  const double p = two_prod(lh, ch, &pe);
  const double y = add(p, add(pe, add(mul(lh, cl), mul(ll, ch))));
  double out = x == 0.0 ? -inf() : y;
  out = x == inf() ? x : out;
  return x < 0.0 || x != x ? qnan() : out;
}

// ---- sinh and cosh --------------------------------------------------------------------------------
// |x| < 1/2, sinh only: x + x^3 S(x^2), Taylor through x^17 (double; the first omitted term is below
// 2^-75 of x) or x^11 (float results, 2^-35).
template <bool Double>
PORTA_HOST_DEVICE inline double sinh_small(double x) {
  const double z = mul(x, x);
  const double S = Double ? horner(z, 1.0 / 6, 1.0 / 120, 1.0 / 5040, 1.0 / 362880, 1.0 / 39916800, 1.0 / 6227020800,
                                   1.0 / 1307674368000, 1.0 / 355687428096000)
                          : horner(z, 1.0 / 6, 1.0 / 120, 1.0 / 5040, 1.0 / 362880, 1.0 / 39916800);
  return add(x, mul(mul(x, z), S));
}

// sinh |x| (Cosh = false) or cosh x as 2^(n-1) (p -+ 2^-2n / p), |x| = n ln2 + r, p = e^r as a
// double-double, the quotient refined with its exact remainder, one rounding before the (exact)
// scaling. sinh takes this path from |x| = 1/2 (n >= 1), where p - 2^-2n/p keeps more than half of
// p and the errors stay below 0.57 ulp; the series' rounding errors grow past 0.6 ulp above 1/2.
template <bool Double, bool Cosh>
PORTA_HOST_DEVICE inline double sinh_cosh_large(double x) {
  const double ax = abs_bits(x);
  const double xc = ax < 711.0 ? ax : 711.0;  // beyond, both overflow; NaN too (replaced later)
  const double n = round_int(mul(xc, kLog2e));
  const double a = sub(xc, mul(n, kLn2Hi));
  double rl;
  const double r = two_sum(a, -mul(n, kLn2Lo), &rl);
  double pl;
  const double ph = exp_small<Double>(r, rl, &pl);
  const double c = pow2(n > 100.0 ? -200.0 : mul(-2.0, n));
  const double ih = div(c, ph);
  double pe;
  const double pp = two_prod(ih, ph, &pe);
  const double il = div(sub(sub(sub(c, pp), pe), mul(ih, pl)), ph);
  double ve;
  const double v = two_sum(ph, Cosh ? ih : -ih, &ve);
  const double inner = add(v, add(ve, Cosh ? add(pl, il) : sub(pl, il)));
  return scale2(inner, sub(n, 1.0));
}

template <bool Double>
PORTA_HOST_DEVICE inline double sinh_d(double x) {
  const double large = with_sign(sinh_cosh_large<Double, false>(x), x);
  const double y = abs_bits(x) < 0.5 ? sinh_small<Double>(x) : large;
  return x != x ? qnan() : y;
}

template <bool Double>
PORTA_HOST_DEVICE inline double cosh_d(double x) {
  const double y = sinh_cosh_large<Double, true>(x);
  return x != x ? qnan() : y;
}

// ---- cbrt -----------------------------------------------------------------------------------------
// |x| = 2^(3k + j) m, m in [1, 2), j in {-1, 0, 1}; cbrt = 2^k cbrt(u), u = 2^j m in [1/2, 4). A
// cubic through cbrt at the Chebyshev nodes of [1, 2] (2^-13 relative) times cbrt(2^j), one Halley
// step (2^-39), and for double one Newton step whose residual y^3 - u is exact, so that the last
// rounding is the only sizeable error.
template <bool Double>
PORTA_HOST_DEVICE inline double cbrt_d(double x) {
  const double ax = abs_bits(x);
  const bool tiny = ax < 0x1p-1022;
  const double xs = tiny ? mul(ax, 0x1p54) : ax;
  const std::uint64_t ix = bits(xs);
  const double m = from_bits((ix & 0x000fffffffffffffu) | 0x3ff0000000000000u);
  const double e = sub(sub(from_bits(0x4330000000000000u | (ix >> 52)), 0x1p52), 1023.0);
  const double k = round_int(mul(e, 0x1.5555555555555p-2));
  const double j = sub(e, mul(3.0, k));
  const double u = j < 0.0 ? mul(m, 0.5) : (j > 0.0 ? mul(m, 2.0) : m);
  const double cj = j < 0.0 ? 0x1.965fea53d6e3dp-1 : (j > 0.0 ? 0x1.428a2f98d728bp+0 : 1.0);
  double y =
      mul(cj, horner(m, 0x1.1c90a1fb896b6p-1, 0x1.296213a52f007p-1, -0x1.44f0d2e840325p-3, 0x1.6ae260afe4fb3p-6));
  const double y3 = mul(mul(y, y), y);
  y = mul(y, div(add(y3, add(u, u)), add(add(y3, y3), u)));
  if constexpr (Double) {
    double y2e, y3e;
    const double y2 = two_prod(y, y, &y2e);
    const double c = two_prod(y2, y, &y3e);
    const double res = add(sub(c, u), add(y3e, mul(y2e, y)));  // c - u is exact (Sterbenz)
    y = sub(y, div(res, mul(3.0, y2)));
  }
  const double r = mul(y, pow2(tiny ? sub(k, 18.0) : k));
  double out = (ax == 0.0 || ax == inf()) ? ax : r;
  out = with_sign(out, x);
  return x != x ? qnan() : out;
}

// ---- hypot ----------------------------------------------------------------------------------------
// sqrt(sh + sl) for normal sh > 0, |sl| <= ulp(sh), rounded once: the bit trick's 1/sqrt (3.4%),
// three Newton steps (2^-35), y = sh times that, and one correction by the exact remainder
// sh - y^2 + sl: the root is the return value plus *d, added by the caller. Not the hardware square
// root: without -fno-math-errno GCC keeps a libm call beside each sqrt for errno, and the loop of
// hypot would not vectorise.
PORTA_HOST_DEVICE inline double sqrt_dd(double sh, double sl, double* d) {
  double r = from_bits(0x5fe6eb50c7b537a9u - (bits(sh) >> 1));
  const double hs = mul(0.5, sh);
  r = mul(r, sub(1.5, mul(hs, mul(r, r))));
  r = mul(r, sub(1.5, mul(hs, mul(r, r))));
  r = mul(r, sub(1.5, mul(hs, mul(r, r))));
  const double y = mul(sh, r);
  double ye;
  const double yy = two_prod(y, y, &ye);
  *d = div(add(sub(sub(sh, yy), ye), sl), add(y, y));  // sh - yy is exact (Sterbenz)
  return y;
}

// sqrt(a^2 + b^2) with a >= b scaled by 2^-600 or 2^600 into a range where the squares neither
// overflow nor lose anything that matters; the sum of squares as a double-double, the square root
// corrected once with its exact remainder (sqrt_dd).
PORTA_HOST_DEVICE inline double hypot_dd(double x, double y) {
  const double ax = abs_bits(x), ay = abs_bits(y);
  const double big = ax > ay ? ax : ay, small = ax > ay ? ay : ax;
  const double s = big > 0x1p500 ? 0x1p-600 : (big < 0x1p-500 ? 0x1p600 : 1.0);
  const double b = mul(big, s), c = mul(small, s);
  const bool finite = big < inf();
  const double bb = finite ? b : 1.0, cc = finite && c == c ? c : 0.0;
  double e1, e2, e3;
  const double p1 = two_prod(bb, bb, &e1);
  const double p2 = two_prod(cc, cc, &e2);
  const double sh = two_sum(p1, p2, &e3);
  const double sl = add(add(e1, e2), e3);
  double d;
  const double r = sqrt_dd(sh, sl, &d);
  const double h = mul(add(r, d), div(1.0, s));
  // A subnormal result (r below 2^-422 when scaled by 2^600) is rounded at the subnormals' spacing
  // directly, as in scale2_dd: r + 2^-422 rounds where the result's last bit is.
  double e;
  const double rc = fast_two_sum(0x1p-422, r, &e);
  const double h_sub = mul(sub(add(rc, add(e, d)), 0x1p-422), 0x1p-600);
  const double up = r < 0x1p-422 ? h_sub : h;
  double out = s > 1.0 ? up : h;
  out = big == 0.0 ? 0.0 : out;
  out = (x != x || y != y) ? qnan() : out;
  return (ax == inf() || ay == inf()) ? inf() : out;
}

PORTA_HOST_DEVICE inline double hypot_f(double x, double y) {
  const double ss = add(mul(x, x), mul(y, y));  // exact squares of floats, one rounding
  double d;
  const double r = sqrt_dd(ss > 0.0 ? ss : 1.0, 0.0, &d);
  const double out0 = ss > 0.0 ? add(r, d) : 0.0;
  const double out = (x != x || y != y) ? qnan() : out0;
  return (abs_bits(x) == inf() || abs_bits(y) == inf()) ? inf() : out;
}

}  // namespace impl

// ---- the functions --------------------------------------------------------------------------------
PORTA_HOST_DEVICE inline double pow(double x, double y) {
  return impl::pow_special(x, y, impl::pow_core_d(x, y));
}
PORTA_HOST_DEVICE inline float pow(float x, float y) {
  const double xd = x, yd = y;
  return static_cast<float>(impl::pow_special(xd, yd, impl::pow_core_f(xd, yd)));
}
PORTA_HOST_DEVICE inline double expm1(double x) {
  return impl::expm1_d<true>(x);
}
PORTA_HOST_DEVICE inline float expm1(float x) {
  return static_cast<float>(impl::expm1_d<false>(x));
}
PORTA_HOST_DEVICE inline double log1p(double x) {
  return impl::log1p_dd(x);
}
PORTA_HOST_DEVICE inline float log1p(float x) {
  return static_cast<float>(impl::log1p_f(x));
}
PORTA_HOST_DEVICE inline double exp2(double x) {
  return impl::exp2_d<true>(x);
}
PORTA_HOST_DEVICE inline float exp2(float x) {
  return static_cast<float>(impl::exp2_d<false>(x));
}
PORTA_HOST_DEVICE inline double exp10(double x) {
  return impl::exp10_dd(x);
}
PORTA_HOST_DEVICE inline float exp10(float x) {
  const double xd = x;
  const double y = impl::exp_core<false>(impl::mul(xd, impl::kLn10H));
  return static_cast<float>(xd != xd ? impl::qnan() : y);
}
PORTA_HOST_DEVICE inline double log2(double x) {
  return impl::log_scaled_dd(x, impl::kInvLn2H, impl::kInvLn2L);
}
PORTA_HOST_DEVICE inline float log2(float x) {
  return static_cast<float>(impl::mul(impl::log_d<true>(x), impl::kInvLn2H));
}
PORTA_HOST_DEVICE inline double log10(double x) {
  return impl::log_scaled_dd(x, impl::kInvLn10H, impl::kInvLn10L);
}
PORTA_HOST_DEVICE inline float log10(float x) {
  return static_cast<float>(impl::mul(impl::log_d<true>(x), impl::kInvLn10H));
}
PORTA_HOST_DEVICE inline double sinh(double x) {
  return impl::sinh_d<true>(x);
}
PORTA_HOST_DEVICE inline float sinh(float x) {
  return static_cast<float>(impl::sinh_d<false>(x));
}
PORTA_HOST_DEVICE inline double cosh(double x) {
  return impl::cosh_d<true>(x);
}
PORTA_HOST_DEVICE inline float cosh(float x) {
  return static_cast<float>(impl::cosh_d<false>(x));
}
PORTA_HOST_DEVICE inline double cbrt(double x) {
  return impl::cbrt_d<true>(x);
}
PORTA_HOST_DEVICE inline float cbrt(float x) {
  return static_cast<float>(impl::cbrt_d<false>(x));
}
PORTA_HOST_DEVICE inline double hypot(double x, double y) {
  return impl::hypot_dd(x, y);
}
PORTA_HOST_DEVICE inline float hypot(float x, float y) {
  return static_cast<float>(impl::hypot_f(x, y));
}

}  // namespace porta::detail::math
