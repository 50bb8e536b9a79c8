// SPDX-License-Identifier: Apache-2.0
// porta's own transcendental functions: exp, log, sin, cos, tanh and sigmoid in float and double.
//
// Why: a vendor libm (glibc on the CPU, libdevice on CUDA, ocml on ROCm) gives different last bits
// on each device, so a program that calls exp cannot give the same bits everywhere. These functions
// are plain C++ over IEEE-754 binary32/binary64 with round-to-nearest: every operation is one
// correctly rounded +, -, * or / (add_rn/mul_rn of ops.hpp and div_rn below, which on a GPU are the
// _rn intrinsics, so nvcc cannot contract them into FMAs) or exact integer work on the bits, in an
// order the source fixes. Any IEEE machine that evaluates them as written gets the same bits. The
// CPU backend builds them with -ffp-contract=off and without -ffast-math; that is the contract.
//
// How they vectorise: no calls, no tables, no data-dependent branches on the common path. Range
// reduction rounds with the 1.5 * 2^52 trick and reads the integer out of the bits; scaling by 2^n
// builds the exponent field with 64-bit integer adds and shifts (SSE2 has both); special cases
// (NaN, inf, overflow, zero, sign) are selects over values computed anyway. GCC -O3 vectorises a
// loop of them at SSE2 and at AVX2 width. sin and cos of |x| >= kTrigFastLimit need Payne-Hanek
// reduction, which reads a table of 2/pi: *_fast gives the vectorisable path for |x| below it,
// and the full functions branch to the large-argument path (the CPU loops run the fast path over
// a block and fix up the rare large elements afterwards).
//
// float exp, log, sin and cos are evaluated in float, with twice the vector lanes of double: the
// reductions carry the reduced argument exactly or as an exact double-float sum (see "float
// evaluated in float" below) and the polynomials keep their largest terms exact, so each result is
// within 0.78 ulp (checked over every float of the fast paths). float sin and cos take this path for
// |x| < kTrigFastLimitF (400); up to kTrigFastLimit they are the double evaluation rounded once,
// then Payne-Hanek. float tanh and sigmoid are computed in double and rounded once at the end:
// the double evaluation is accurate to about 2^-33 relative, so the float result is the correctly
// rounded one except when the exact value lies within that distance of a midpoint between two
// floats, and never more than 0.51 ulp away.
//
// Accuracy, every function within 1 ulp (faithful), measured against MPFR by tools/math_accuracy
// (tests/algorithms/test_math.cpp asserts the bounds against long double): float exp, log, sin, cos
// 0.78 ulp at most over every float of their fast paths, tanh and sigmoid 0.50x; double, over 10^7
// random arguments, the edge cases and dense runs where the errors peak, exp 0.97, log 0.84, sin
// 0.79, cos 0.77, tanh 0.59, sigmoid 0.53 (0.75 where the result is subnormal: the quotient is
// rounded once before the scaling to 2^n rounds it again). double tanh and sigmoid carry e^r - 1 as a double-double
// (expm1_dd) so that their quotients see it to about 2^-60; with a plain expm1_poly they reached 1.5 and 1.3 ulp.
//
// Special values: a NaN input gives the canonical quiet NaN (std::numeric_limits<T>::quiet_NaN(),
// the NaN porta's reductions return), so the bits agree across devices whose NaN payloads differ;
// so do the invalid cases log(x < 0), sin(+-inf), cos(+-inf). exp overflows to +inf and
// underflows through the subnormals to +0; log(+-0) = -inf, log(+inf) = +inf; sin(-0) = -0,
// tanh(-0) = -0; tanh(+-inf) = +-1; sigmoid(+inf) = 1, sigmoid(-inf) = +0 and sigmoid(x) for very
// negative x underflows gracefully (it is computed as e^x / (1 + e^x) there, not 1 / (1 + inf)).
//
// Polynomials: Taylor coefficients, each the correctly rounded value of an exact rational (1/k!,
// 2/(2k+1)) that the compiler computes from the literals below, so there is nothing to copy and
// nothing to trust but the series. Minimax coefficients would save two or three terms per function;
// the degrees here were chosen so that the truncation error is below 2^-56 (double), 2^-34 (float
// through double) and 2^-29 (float in float, against float's 2^-24) on the reduced interval.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "porta/detail/config.hpp"
#include "porta/detail/rounding.hpp"

// Every function of porta::math, named once: porta/math.hpp and the run-time kernels' prelude
// (rtc_prelude.hpp) each expand it into their using-declarations, so the two lists cannot drift.
// The functions themselves are in this header, math_exp_log.hpp, math_trig.hpp and math_erf.hpp.
// clang-format off
#define PORTA_DETAIL_MATH_FUNCTIONS(X)                                                                   \
  X(acos) X(asin) X(atan) X(atan2) X(cbrt) X(cos) X(cosh) X(erf) X(erfc) X(exp) X(exp10) X(exp2) X(expm1) \
  X(hypot) X(log) X(log10) X(log1p) X(log2) X(pow) X(sigmoid) X(sin) X(sincos) X(sinh) X(tan) X(tanh)
// clang-format on
#define PORTA_DETAIL_USING_MATH(name) using porta::detail::math::name;

namespace porta::detail::math {

// sin and cos: |x| below this takes the Cody-Waite path (n = round(x * 2/pi) < 2^20, so n times each
// 33-bit part of pi/2 is exact); above it, and for inf and NaN, Payne-Hanek.
inline constexpr double kTrigFastLimit = 1.5e6;
// float sin and cos: |x| below this is evaluated in float (n = round(x * 2/pi) < 2^8; see
// trig_f); from it to kTrigFastLimit, in double.
inline constexpr float kTrigFastLimitF = 400.0f;

namespace impl {

PORTA_HOST_DEVICE inline std::uint64_t bits(double x) {
#if PORTA_DEVICE_PASS
  return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}
PORTA_HOST_DEVICE inline double from_bits(std::uint64_t u) {
#if PORTA_DEVICE_PASS
  return __longlong_as_double(static_cast<long long>(u));
#else
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

PORTA_HOST_DEVICE inline double add(double a, double b) {
  return add_rn(a, b);
}
PORTA_HOST_DEVICE inline double sub(double a, double b) {
  return add_rn(a, -b);
}
PORTA_HOST_DEVICE inline double mul(double a, double b) {
  return mul_rn(a, b);
}
PORTA_HOST_DEVICE inline double div(double a, double b) {
#if PORTA_DEVICE_PASS
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}

// Horner's rule c0 + z * (c1 + z * (... + z * cN)), innermost first. The coefficients are
// arguments, not arrays: a namespace-scope array is not visible to device code.
PORTA_HOST_DEVICE inline double horner(double, double c0) {
  return c0;
}
template <class... C>
PORTA_HOST_DEVICE inline double horner(double z, double c0, C... c) {
  return add(c0, mul(z, horner(z, c...)));
}

// 1.5 * 2^52: (x + kRound) - kRound is x rounded to the nearest integer (ties to even) for
// |x| < 2^51, and the low bits of x + kRound hold that integer in two's complement.
inline constexpr double kRound = 6755399441055744.0;

PORTA_HOST_DEVICE inline double round_int(double x) {
  return sub(add(x, kRound), kRound);
}

// 2^k for an integer-valued double k in [-1022, 1023], from the bits of k + kRound.
PORTA_HOST_DEVICE inline double pow2(double k) {
  return from_bits((bits(add(k, kRound)) + 1023u) << 52);
}

PORTA_HOST_DEVICE inline double qnan() {
  return from_bits(0x7ff8000000000000u);
}  // quiet_NaN()
PORTA_HOST_DEVICE inline double inf() {
  return from_bits(0x7ff0000000000000u);
}

// x with the sign of s.
PORTA_HOST_DEVICE inline double with_sign(double x, double s) {
  const std::uint64_t sign = std::uint64_t(1) << 63;
  return from_bits((bits(x) & ~sign) | (bits(s) & sign));
}

// ---- exp ------------------------------------------------------------------------------------------
inline constexpr double kLog2e = 0x1.71547652b82fep+0;
// ln 2 = kLn2Hi + kLn2Lo, kLn2Hi with 32 significant bits: n * kLn2Hi is exact for |n| < 2^21.
inline constexpr double kLn2Hi = 0x1.62e42fee00000p-1;
inline constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;

// Taylor coefficients of (e^r - 1 - r) / r^2 = 1/2! + r/3! + ...: through r^13 in double (the first
// omitted term is below 2^-58 for |r| <= ln2/2), through r^8 for float results.
PORTA_HOST_DEVICE inline double exp_q_d(double z) {
  return horner(z, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320, 1.0 / 362880,
                1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800);
}
PORTA_HOST_DEVICE inline double exp_q_f(double z) {
  return horner(z, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320);
}

// e^r - 1 for |r| <= ln2/2 (plus rounding), with the float or double degree.
template <bool Double>
PORTA_HOST_DEVICE inline double expm1_poly(double r) {
  const double q = Double ? exp_q_d(r) : exp_q_f(r);
  return add(r, mul(mul(r, r), q));
}

// x = n ln2 + r, |r| <= ln2/2: n (integer-valued) and r. x must be finite and |x| < 2^20.
PORTA_HOST_DEVICE inline double exp_reduce(double x, double* r) {
  const double n = round_int(mul(x, kLog2e));
  *r = sub(sub(x, mul(n, kLn2Hi)), mul(n, kLn2Lo));
  return n;
}

// e^x; NaN gives NaN (of unspecified payload: the callers substitute the canonical one).
template <bool Double>
PORTA_HOST_DEVICE inline double exp_core(double x) {
  // Clamping keeps n within the scaling's range; the clamped values still overflow to inf and
  // underflow to 0 as x itself would (a NaN passes the comparisons unchanged).
  double xc = x > 710.0 ? 710.0 : x;
  xc = xc < -746.0 ? -746.0 : xc;
  double r;
  const double n = exp_reduce(xc, &r);
  const double p = add(1.0, expm1_poly<Double>(r));
  // 2^n in two factors, each within the normal range, so that a result in the subnormals is
  // rounded once, by the last product.
  const double n1 = round_int(mul(n, 0.5));
  const double n2 = sub(n, n1);
  return mul(mul(p, pow2(n1)), pow2(n2));
}

template <bool Double>
PORTA_HOST_DEVICE inline double exp_d(double x) {
  const double y = exp_core<Double>(x);
  return x != x ? qnan() : y;
}

// ---- log ------------------------------------------------------------------------------------------
// Taylor coefficients of R(z) / z for 2 atanh(s) = 2s + s R(s^2): 2/3, 2/5, ...; |s| <= 0.1716.
PORTA_HOST_DEVICE inline double log_r_d(double z) {
  return horner(z, 2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11, 2.0 / 13, 2.0 / 15, 2.0 / 17, 2.0 / 19, 2.0 / 21);
}
PORTA_HOST_DEVICE inline double log_r_f(double z) {
  return horner(z, 2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11, 2.0 / 13);
}

template <bool Double>
PORTA_HOST_DEVICE inline double log_d(double x) {
  // Subnormals are scaled into the normal range first.
  const bool tiny = x < 0x1p-1022;
  const double xs = tiny ? mul(x, 0x1p54) : x;
  // x = 2^k m with m in [sqrt(1/2), sqrt(2)): adding 1 - sqrt(1/2) to the bits carries into the
  // exponent field exactly when the significand is at least sqrt(2)/2 * 2.
  const std::uint64_t ix = bits(xs);
  const std::uint64_t kb = (ix + (0x3ff0000000000000u - 0x3fe6a09e667f3bcdu)) >> 52;  // k + 1023
  const double m = from_bits(ix - ((kb - 1023u) << 52));
  const double k = sub(sub(from_bits(0x4330000000000000u | kb), 0x1p52), tiny ? 1077.0 : 1023.0);
  // log(1 + f) = 2 atanh(s), s = f / (2 + f); written as f - (f^2/2 - s (f^2/2 + R)), which keeps
  // the leading f exact (fdlibm's arrangement).
  const double f = sub(m, 1.0);
  const double s = div(f, add(2.0, f));
  const double z = mul(s, s);
  const double R = mul(z, Double ? log_r_d(z) : log_r_f(z));
  const double hfsq = mul(mul(0.5, f), f);
  const double y = add(mul(k, kLn2Hi), sub(f, sub(hfsq, add(mul(s, add(hfsq, R)), mul(k, kLn2Lo)))));
  double out = x == 0.0 ? -inf() : y;
  out = x == inf() ? inf() : out;
  return x < 0.0 || x != x ? qnan() : out;
}

// ---- sin and cos ----------------------------------------------------------------------------------
inline constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;
// pi/2 = kPio2_1 + kPio2_2 + kPio2_3 + kPio2_4; the first three have 33 significant bits.
inline constexpr double kPio2_1 = 0x1.921fb54400000p+0;
inline constexpr double kPio2_2 = 0x1.0b4611a600000p-34;
inline constexpr double kPio2_3 = 0x1.3198a2e000000p-69;
inline constexpr double kPio2_4 = 0x1.b839a252049c1p-104;
inline constexpr double kPio2Hi = 0x1.921fb54442d18p+0;
inline constexpr double kPio2Lo = 0x1.1a62633145c07p-54;

// Taylor coefficients: sin(r) = r + r^3 S(r^2), S = -1/3! + r^2/5! - ...; through r^17.
PORTA_HOST_DEVICE inline double sin_s_d(double z) {
  return horner(z, -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880, -1.0 / 39916800, 1.0 / 6227020800,
                -1.0 / 1307674368000, 1.0 / 355687428096000);
}
// cos(r) = 1 - r^2/2 + r^4 C(r^2), C = 1/4! - r^2/6! + ...; through r^16.
PORTA_HOST_DEVICE inline double cos_c_d(double z) {
  return horner(z, 1.0 / 24, -1.0 / 720, 1.0 / 40320, -1.0 / 3628800, 1.0 / 479001600, -1.0 / 87178291200,
                1.0 / 20922789888000);
}
// Through r^11 and r^10 for float results.
PORTA_HOST_DEVICE inline double sin_s_f(double z) {
  return horner(z, -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880, -1.0 / 39916800);
}
PORTA_HOST_DEVICE inline double cos_c_f(double z) {
  return horner(z, 1.0 / 24, -1.0 / 720, 1.0 / 40320, -1.0 / 3628800);
}

// a + b = s + e exactly (Knuth's TwoSum: no precondition on the magnitudes).
PORTA_HOST_DEVICE inline double two_sum(double a, double b, double* e) {
  const double s = add(a, b);
  const double bb = sub(s, a);
  *e = add(sub(a, sub(s, bb)), sub(b, bb));
  return s;
}

// a * b = p + e exactly (Veltkamp-Dekker splitting; no FMA needed).
PORTA_HOST_DEVICE inline double two_prod(double a, double b, double* e) {
  const auto split = [](double v, double* vh, double* vl) {
    const double c = mul(134217729.0, v);  // 2^27 + 1
    *vh = sub(c, sub(c, v));
    *vl = sub(v, *vh);
  };
  double ah, al, bh, bl;
  split(a, &ah, &al);
  split(b, &bh, &bl);
  const double p = mul(a, b);
  *e = add(add(add(sub(mul(ah, bh), p), mul(ah, bl)), mul(al, bh)), mul(al, bl));
  return p;
}

// sin(rh + rl) and cos(rh + rl) for |rh| <= ~pi/4, |rl| <= ulp(rh).
template <bool Double>
PORTA_HOST_DEVICE inline double sin_poly(double rh, double rl) {
  const double z = mul(rh, rh);
  if constexpr (!Double) return add(rh, mul(mul(rh, z), sin_s_f(z)));
  const double S = sin_s_d(z);
  return add(rh, add(mul(mul(rh, z), S), mul(rl, sub(1.0, mul(0.5, z)))));
}
template <bool Double>
PORTA_HOST_DEVICE inline double cos_poly(double rh, double rl) {
  const double z = mul(rh, rh);
  const double C = Double ? cos_c_d(z) : cos_c_f(z);
  const double hz = mul(0.5, z);
  const double w = sub(1.0, hz);
  // (1 - w) - hz recovers the rounding error of w exactly.
  if constexpr (!Double) return add(w, add(sub(sub(1.0, w), hz), mul(mul(z, z), C)));
  return add(w, add(sub(sub(1.0, w), hz), sub(mul(mul(z, z), C), mul(rh, rl))));
}

// x = (4j + q) pi/2 + rh + rl for |x| < kTrigFastLimit; returns q in 0..3.
// For float results rl is 0: the float inputs nearest a multiple of pi/2 leave |r| >~ 2^-30, so
// r rounded once is ample and the compensated sums are skipped.
template <bool Double>
PORTA_HOST_DEVICE inline unsigned trig_reduce_fast(double x, double* rh, double* rl) {
  const double n = round_int(mul(x, kTwoOverPi));
  const double a = sub(x, mul(n, kPio2_1));  // exact (Sterbenz)
  if constexpr (!Double) {
    *rh = sub(sub(sub(a, mul(n, kPio2_2)), mul(n, kPio2_3)), mul(n, kPio2_4));
    *rl = 0.0;
    return static_cast<unsigned>(bits(add(n, kRound))) & 3u;
  }
  double e;
  const double h = two_sum(a, -mul(n, kPio2_2), &e);
  const double lo = sub(sub(e, mul(n, kPio2_3)), mul(n, kPio2_4));
  *rh = two_sum(h, lo, rl);
  return static_cast<unsigned>(bits(add(n, kRound))) & 3u;
}

// 2/pi in 32-bit words after the binary point (2/pi = 0.a2f9836e4e441529... in hex), enough for the
// largest double exponent plus a 224-bit window.
PORTA_HOST_DEVICE inline std::uint32_t two_over_pi_word(int j) {
  constexpr std::uint32_t w[40] = {0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab,
                                   0xdebbc561, 0xb7246e3a, 0x424dd2e0, 0x06492eea, 0x09d1921c, 0xfe1deb1c, 0xb129a73e,
                                   0xe88235f5, 0x2ebb4484, 0xe99c7026, 0xb45f7e41, 0x3991d639, 0x835339f4, 0x9c845f8b,
                                   0xbdf9283b, 0x1ff897ff, 0xde05980f, 0xef2f118b, 0x5a0a6d1f, 0x6d367ecf, 0x27cb09b7,
                                   0x4f463f66, 0x9e5fea2d, 0x7527bac7, 0xebe5f17b, 0x3d0739f7, 0x8a5292ea, 0x6bfb5fb1,
                                   0x1f8d5d08, 0x56033046, 0xfc7b6bab, 0xf0cfbc20, 0x9af4361d};
  return w[j];
}

// 64 bits of the little-endian 32-bit-limb integer L starting at bit pos.
template <int N>
PORTA_HOST_DEVICE inline std::uint64_t bits_at(const std::uint32_t (&L)[N], int pos) {
  const int w = pos >> 5, off = pos & 31;
  const std::uint64_t lo = (std::uint64_t(L[w + 1]) << 32) | L[w];
  const std::uint64_t hi = L[w + 2];
  return (lo >> off) | ((hi << 32) << (32 - off));
}

// Payne-Hanek: x = (4j + q) pi/2 + rh + rl for finite |x| >= 2^20 (any finite x >= 2^-10 works).
// x = m 2^e with m < 2^53 an integer; the words of 2/pi before the window only add multiples of 4
// to x * 2/pi, the 224-bit window gives the quadrant and 126 bits of the fraction, and the words
// after it change the fraction by less than 2^-138.
PORTA_HOST_DEVICE inline unsigned trig_reduce_large(double x, double* rh, double* rl) {
  const std::uint64_t ix = bits(x) & ~(std::uint64_t(1) << 63);
  const int e = static_cast<int>(ix >> 52) - 1075;
  const std::uint64_t m = (ix & ((std::uint64_t(1) << 52) - 1)) | (std::uint64_t(1) << 52);
  const int j0 = e >= 34 ? (e - 2) >> 5 : 0;
  const int s = e - 32 * j0;  // value = m * W * 2^(s - 224), W the window
  // P = m * W in 9 limbs of 32 bits.
  std::uint32_t P[9] = {};
  const std::uint64_t mh = m >> 32, ml = m & 0xffffffffu;
  std::uint64_t carry = 0;
  for (int i = 0; i < 7; ++i) {  // limb i of W is word j0 + 6 - i
    const std::uint64_t w = two_over_pi_word(j0 + 6 - i);
    const std::uint64_t t = ml * w + P[i] + carry;
    P[i] = static_cast<std::uint32_t>(t);
    carry = t >> 32;
  }
  P[7] = static_cast<std::uint32_t>(carry);
  carry = 0;
  for (int i = 0; i < 8; ++i) {
    const std::uint64_t w = i < 7 ? two_over_pi_word(j0 + 6 - i) : 0;
    const std::uint64_t t = mh * w + P[i + 1] + carry;
    P[i + 1] = static_cast<std::uint32_t>(t);
    carry = t >> 32;
  }
  // The binary point of P is at bit 224 - s; the quadrant is the two bits above it.
  const int point = 224 - s;
  const std::uint64_t hi64 = bits_at(P, point - 62);  // 2 integer bits, 62 fraction bits
  const std::uint64_t lo64 = bits_at(P, point - 126);
  unsigned q = static_cast<unsigned>(hi64 >> 62);
  // The fraction as a signed 128-bit fixed-point number in [-1/2, 1/2): fractions of 1/2 and more
  // belong to the next quadrant.
  std::uint64_t u = (hi64 << 2) | (lo64 >> 62), v = lo64 << 2;
  const bool neg = (u >> 63) != 0;
  q = (q + (neg ? 1u : 0u)) & 3u;
  if (neg) {
    v = ~v + 1;
    u = ~u + (v == 0 ? 1 : 0);
  }
  // f = u 2^-64 + v 2^-128 as fh + fl, exact to ~2^-106 relative however many leading zeros u has.
  const double uh = static_cast<double>(u);
  const std::uint64_t uh_int = uh >= 0x1p64 ? ~std::uint64_t(0) : static_cast<std::uint64_t>(uh);
  const double fh = mul(uh, 0x1p-64);
  const double fl = add(mul(static_cast<double>(static_cast<std::int64_t>(u - uh_int)), 0x1p-64),
                        mul(static_cast<double>(v), 0x1p-128));
  // r = (fh + fl) pi/2 in double-double.
  double perr;
  const double p = two_prod(fh, kPio2Hi, &perr);
  const double tail = add(perr, add(mul(fh, kPio2Lo), mul(fl, kPio2Hi)));
  double r_lo;
  double r_hi = two_sum(p, tail, &r_lo);
  if (neg) r_hi = -r_hi, r_lo = -r_lo;
  if (x < 0) {
    r_hi = -r_hi, r_lo = -r_lo;
    q = (4u - q) & 3u;
  }
  *rh = r_hi;
  *rl = r_lo;
  return q;
}

// sin (Cos = false) or cos of x for |x| < kTrigFastLimit; other inputs give unspecified values.
template <bool Double, bool Cos>
PORTA_HOST_DEVICE inline double trig_fast(double x) {
  double rh, rl;
  const unsigned q = trig_reduce_fast<Double>(x, &rh, &rl) + (Cos ? 1u : 0u);
  const double s = sin_poly<Double>(rh, rl), c = cos_poly<Double>(rh, rl);
  // sin(x) by quadrant: sin r, cos r, -sin r, -cos r; cos(x) is sin(x + pi/2).
  const double v = (q & 1u) ? c : s;
  const double y = (q & 2u) ? -v : v;
  // tiny x: sin(x) = x exactly (the reduction would turn -0 into +0).
  return (!Cos && (x < 0x1p-27 && x > -0x1p-27)) ? x : y;
}

template <bool Double, bool Cos>
PORTA_HOST_DEVICE inline double trig_large(double x) {
  if (!(x - x == 0.0)) return qnan();  // inf or NaN
  double rh, rl;
  const unsigned q = trig_reduce_large(x, &rh, &rl) + (Cos ? 1u : 0u);
  const double v = (q & 1u) ? cos_poly<Double>(rh, rl) : sin_poly<Double>(rh, rl);
  return (q & 2u) ? -v : v;
}

PORTA_HOST_DEVICE inline bool trig_is_fast(double x) {
  return x < kTrigFastLimit && x > -kTrigFastLimit;
}

// ---- float evaluated in float ---------------------------------------------------------------------
// exp, log, sin and cos of float arguments in float arithmetic: twice the vector lanes of the double
// evaluation. Each reduction keeps the reduced argument as rh + rl, carried exactly (Sterbenz, or
// sums of multiples of a common grain that fit in 24 bits, or TwoSum) until the remaining terms are
// too small for their rounding to matter, so the only sizeable errors are the polynomial's last
// roundings.
PORTA_HOST_DEVICE inline std::uint32_t bits(float x) {
#if PORTA_DEVICE_PASS
  return static_cast<std::uint32_t>(__float_as_uint(x));
#else
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}
PORTA_HOST_DEVICE inline float from_bits(std::uint32_t u) {
#if PORTA_DEVICE_PASS
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}
PORTA_HOST_DEVICE inline float add(float a, float b) {
  return add_rn(a, b);
}
PORTA_HOST_DEVICE inline float sub(float a, float b) {
  return add_rn(a, -b);
}
PORTA_HOST_DEVICE inline float mul(float a, float b) {
  return mul_rn(a, b);
}
PORTA_HOST_DEVICE inline float div(float a, float b) {
#if PORTA_DEVICE_PASS
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
PORTA_HOST_DEVICE inline float horner(float, float c0) {
  return c0;
}
template <class... C>
PORTA_HOST_DEVICE inline float horner(float z, float c0, C... c) {
  return add(c0, mul(z, horner(z, c...)));
}
PORTA_HOST_DEVICE inline float two_sum(float a, float b, float* e) {
  const float s = add(a, b);
  const float bb = sub(s, a);
  *e = add(sub(a, sub(s, bb)), sub(b, bb));
  return s;
}

// 1.5 * 2^23: the float counterpart of kRound, for |x| < 2^22.
inline constexpr float kRoundF = 12582912.0f;

// 2^k for an integer-valued float k in [-126, 127].
PORTA_HOST_DEVICE inline float pow2(float k) {
  return from_bits((bits(add(k, kRoundF)) + 127u) << 23);
}

// e^x in float for finite x; NaN gives NaN of unspecified payload.
// x = n ln2 + rh + rl: |n| <= 150, so n * kLn2F_1 (16 significant bits) is exact and x - n kLn2F_1
// is exact (Sterbenz); TwoSum keeps the rounding of the next part; the last part's error is below
// 2^-36 absolute.
inline constexpr float kLog2eF = 0x1.715476p+0f;
inline constexpr float kLn2F_1 = 0x1.62e4p-1f;
inline constexpr float kLn2F_2 = 0x1.7f7d1cp-20f;
PORTA_HOST_DEVICE inline float exp_f(float x) {
  float xc = x > 89.0f ? 89.0f : x;  // as in exp_core: still overflows, still underflows
  xc = xc < -104.0f ? -104.0f : xc;
  const float n = sub(add(mul(xc, kLog2eF), kRoundF), kRoundF);
  const float a = sub(xc, mul(n, kLn2F_1));
  float rl;
  const float rh = two_sum(a, -mul(n, kLn2F_2), &rl);
  // e^(rh + rl) = 1 + rh + rh^2 Q(rh) + rl (1 + rh + ...); rl <= 2^-24 |rh| makes rl alone enough.
  // Q(r) = (e^r - 1 - r) / r^2 through r^6: the first omitted term is below 2^-31 for |r| <= ln2/2.
  // 1 + rh is carried exactly (Fast2Sum, 1 >= |rh|), so that only the last addition rounds much.
  const float q = horner(rh, 1.0f / 2, 1.0f / 6, 1.0f / 24, 1.0f / 120, 1.0f / 720, 1.0f / 5040);
  const float s = add(1.0f, rh);
  const float p = add(s, add(sub(rh, sub(s, 1.0f)), add(mul(mul(rh, rh), q), rl)));
  const float n1 = sub(add(mul(n, 0.5f), kRoundF), kRoundF);
  const float y = mul(mul(p, pow2(n1)), pow2(sub(n, n1)));
  return x != x ? from_bits(0x7fc00000u) : y;
}

// log x in float. x = 2^k m, m in [sqrt(1/2), sqrt(2)), f = m - 1 exact, as in log_d. k kLn2F_1 + f
// is carried exactly (TwoSum; k kLn2F_1 is exact for |k| <= 152), so the sizeable roundings are the
// last addition's and f^2 / 2's (an eighth of an ulp at most).
PORTA_HOST_DEVICE inline float log_f(float x) {
  const bool tiny = x < 0x1p-126f;
  const float xs = tiny ? mul(x, 0x1p25f) : x;
  const std::uint32_t ix = bits(xs);
  const std::uint32_t kb = (ix + (0x3f800000u - 0x3f3504f3u)) >> 23;  // k + 127
  const float m = from_bits(ix - ((kb - 127u) << 23));
  const float k = sub(sub(from_bits(0x4b000000u | kb), 0x1p23f), tiny ? 152.0f : 127.0f);
  const float f = sub(m, 1.0f);
  const float s = div(f, add(2.0f, f));
  const float z = mul(s, s);
  // 2 atanh(s) = 2s + s R(s^2) through s^9: the first omitted term is below 2^-30 for |s| <= 0.1716.
  const float R = mul(z, horner(z, 2.0f / 3, 2.0f / 5, 2.0f / 7, 2.0f / 9));
  const float hfsq = mul(mul(0.5f, f), f);
  // k ln2 + f - f^2/2 + s (f^2/2 + R): the first three terms exactly as h + lo (TwoSum, then Fast2Sum
  // as |k kLn2F_1 + f| >= f^2/2), so only terms below 0.02 round before the last addition.
  float lo;
  const float hi = two_sum(mul(k, kLn2F_1), f, &lo);
  const float h = sub(hi, hfsq);
  lo = add(lo, sub(sub(hi, h), hfsq));
  const float y = add(h, add(lo, add(mul(s, add(hfsq, R)), mul(k, kLn2F_2))));
  float out = x == 0.0f ? -from_bits(0x7f800000u) : y;
  out = x == from_bits(0x7f800000u) ? x : out;
  return x < 0.0f || x != x ? from_bits(0x7fc00000u) : out;
}

// sin and cos of float x, |x| < kTrigFastLimitF: x = (4j + q) pi/2 + rh + rl with n = 4j + q below
// 2^8 in magnitude. kPio2F_1 has 16 significant bits, so n kPio2F_1 is exact and x - n kPio2F_1
// is exact (Sterbenz); x (at least 1/2 once n != 0), n kPio2F_1 and n kPio2F_2 are multiples of
// 2^-24 and the difference is below 1, so the second step is exact too; TwoSum keeps the third
// part's rounding, and the fourth part and what lies beyond it are below 2^-32 and 2^-60 times n.
// The float inputs below 400 nearest a multiple of pi/2 leave |r| >= 2^-27.8, so rh + rl is r
// to about 2^-28 of its size there and far better elsewhere.
inline constexpr float kTwoOverPiF = 0x1.45f306p-1f;
inline constexpr float kPio2F_1 = 0x1.921ep+0f;
inline constexpr float kPio2F_2 = 0x1.b5p-16f;
inline constexpr float kPio2F_3 = 0x1.110ap-26f;
inline constexpr float kPio2F_4 = 0x1.4611a6p-42f;

template <bool Cos>
PORTA_HOST_DEVICE inline float trig_f(float x) {
  const float t = add(mul(x, kTwoOverPiF), kRoundF);
  const float n = sub(t, kRoundF);
  const float b = sub(sub(x, mul(n, kPio2F_1)), mul(n, kPio2F_2));
  float e;
  const float rh = two_sum(b, -mul(n, kPio2F_3), &e);
  const float rl = sub(e, mul(n, kPio2F_4));
  const float z = mul(rh, rh);
  const float hz = mul(0.5f, z);
  const float w = sub(1.0f, hz);
  // sin(r) = r + r^3 S(r^2) through r^9; cos(r) = 1 - r^2/2 + r^4 C(r^2) through r^10: the first
  // omitted terms are below 2^-29 and 2^-33 for |r| <= pi/4. The rl terms are rl cos(rh) and
  // -rl sin(rh) to first order; (1 - w) - hz is w's rounding error, exactly.
  const float S = horner(z, -1.0f / 6, 1.0f / 120, -1.0f / 5040, 1.0f / 362880);
  const float C = horner(z, 1.0f / 24, -1.0f / 720, 1.0f / 40320, -1.0f / 3628800);
  const float s = add(rh, add(mul(mul(rh, z), S), mul(rl, w)));
  const float c = add(w, add(sub(sub(1.0f, w), hz), sub(mul(mul(z, z), C), mul(rh, rl))));
  const unsigned q = (bits(t) + (Cos ? 1u : 0u)) & 3u;
  const float v = (q & 1u) ? c : s;
  const float y = (q & 2u) ? -v : v;
  // tiny x: sin(x) = x (x^2/6 is below half an ulp), and -0 stays -0.
  return (!Cos && (x < 0x1p-12f && x > -0x1p-12f)) ? x : y;
}

PORTA_HOST_DEVICE inline bool trig_is_fast_f(float x) {
  return x < kTrigFastLimitF && x > -kTrigFastLimitF;
}

// ---- tanh and sigmoid -----------------------------------------------------------------------------
// In double, both carry e^r - 1 as a double-double so that the quotient sees an accurate value: a
// plain expm1_poly rounds its last addition (half an ulp) and r^2 (a sixth of one), which the
// quotient then passes on almost whole.

// Taylor coefficients of (e^r - 1 - r - r^2/2) / r^3 = 1/3! + r/4! + ...: through r^15 (the first
// omitted term is below 2^-66 of e^r - 1 for |r| <= ln2/2; tanh's E = 2 e^r - 1 can cancel to 0.42,
// where a truncation after r^13, as in exp_q_d, would cost a tenth of an ulp).
PORTA_HOST_DEVICE inline double exp_q3_d(double z) {
  return horner(z, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320, 1.0 / 362880, 1.0 / 3628800,
                1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800, 1.0 / 87178291200, 1.0 / 1307674368000);
}

// x = n ln2 + rh + rl, |rh| <= ln2/2, rl the rounding of rh (exact but for n ln2's last bits, which
// are below 2^-80 n). rh is exp_reduce's r. x must be finite and |x| < 2^20.
PORTA_HOST_DEVICE inline double exp_reduce_dd(double x, double* rh, double* rl) {
  const double n = round_int(mul(x, kLog2e));
  *rh = two_sum(sub(x, mul(n, kLn2Hi)), -mul(n, kLn2Lo), rl);
  return n;
}

// e^(rh + rl) - 1 = h + *lo, |*lo| <= ulp(h), for |rh| <= ln2/2 (plus rounding), |rl| <= ulp(rh), to about 2^-58
// relative. r + r^2/2 is carried exactly: rh = hh + ht with hh's low 27 significand bits clear, so
// hh^2 is exact and ht (rh + hh) is the rest of rh^2, and r + hh^2/2 is a Fast2Sum (|r| >= r^2/2).
// The remaining terms are below a fiftieth of the result, so their roundings hardly count.
PORTA_HOST_DEVICE inline double expm1_dd(double rh, double rl, double* lo) {
  const double hh = from_bits(bits(rh) & 0xfffffffff8000000u);
  const double ht = sub(rh, hh);
  const double sq = mul(0.5, mul(hh, hh));
  const double h = add(rh, sq);
  const double e = sub(sq, sub(h, rh));
  const double sq_lo = mul(0.5, mul(ht, add(rh, hh)));
  const double cube = mul(mul(mul(rh, rh), rh), exp_q3_d(rh));
  // rl e^rh ~ rl (1 + rh): rl is below 2^-53 |rh|, so the rest is far below the result's ulp.
  const double l = add(add(e, sq_lo), add(cube, mul(rl, add(1.0, rh))));
  // Normalised (Fast2Sum, |h| >= |l|): the callers' quotients start from the high part alone.
  const double hn = add(h, l);
  *lo = sub(l, sub(hn, h));
  return hn;
}

template <bool Double>
PORTA_HOST_DEVICE inline double tanh_d(double x) {
  // tanh |x| = E / (E + 2), E = e^(2|x|) - 1; beyond 2|x| = 40 it is 1 to far more than double
  // precision. The clamp also keeps a NaN from reaching the scaling.
  const double ax = x < 0 ? -x : x;
  const double a2 = ax < 20.0 ? add(ax, ax) : 40.0;
  if constexpr (!Double) {  // float: 2^-40 is plenty
    double r;
    const double n = exp_reduce(a2, &r);
    const double t = pow2(n);
    double El;
    const double Eh = two_sum(mul(t, expm1_poly<false>(r)), sub(t, 1.0), &El);
    return x != x ? qnan() : with_sign(div(Eh, add(Eh, 2.0)), x);
  }
  // E = t (h + lo) + (t - 1), t = 2^n: t h and t - 1 are exact (n <= 58, and t - 1 is exact up to
  // n = 53, where the quotient is 1 anyway), so E is Eh + El to about 2^-57 relative.
  double rh, rl, lo;
  const double n = exp_reduce_dd(a2, &rh, &rl);
  const double t = pow2(n);
  const double h = expm1_dd(rh, rl, &lo);
  double El;
  const double Eh = two_sum(mul(t, h), sub(t, 1.0), &El);
  El = add(El, mul(t, lo));
  // The quotient, refined once with its exact remainder: a plain E / (E + 2) loses up to 2.4 ulp.
  double Dl;
  const double Dh = two_sum(Eh, 2.0, &Dl);
  Dl = add(Dl, El);
  const double q = div(Eh, Dh);
  double pe;
  const double p = two_prod(q, Dh, &pe);
  const double rem = add(sub(sub(Eh, p), pe), sub(El, mul(q, Dl)));
  const double y = add(q, div(rem, Dh));
  return x != x ? qnan() : with_sign(y, x);
}

template <bool Double>
PORTA_HOST_DEVICE inline double sigmoid_d(double x) {
  // With e = e^-|x| in (0, 1]: 1 / (1 + e) for x >= 0, e / (1 + e) for x < 0. No overflow, and a
  // very negative x underflows gradually as e^x does.
  const double ax = x < 0 ? -x : x;
  if constexpr (!Double) {
    const double e = exp_core<false>(-ax);
    return x != x ? qnan() : div(x < 0 ? e : 1.0, add(1.0, e));
  }
  // e = 2^n P, P = 1 + h + lo in [0.7, 1.5] as ph + pl (Fast2Sum: 1 >= |h|). The quotient is formed
  // at P's scale, P / (1 + e) for x < 0, and scaled by 2^n last: a result in the subnormals is
  // rounded once more there, not through a subnormal e. 2^n is two factors, each normal, as in
  // exp_core; the clamp at 746 still gives 0 and 1 at the ends (and keeps a NaN from the scaling).
  double rh, rl, lo;
  const double n = exp_reduce_dd(ax < 746.0 ? -ax : -746.0, &rh, &rl);
  const double h = expm1_dd(rh, rl, &lo);
  const double ph = add(1.0, h);
  const double pl = add(sub(h, sub(ph, 1.0)), lo);
  const double n1 = round_int(mul(n, 0.5));
  const double s1 = pow2(n1), s2 = pow2(sub(n, n1));
  double dl;
  const double dh = two_sum(1.0, mul(mul(ph, s1), s2), &dl);
  dl = add(dl, mul(mul(pl, s1), s2));
  // num / (dh + dl), refined once with its exact remainder.
  const bool neg = x < 0;
  const double nh = neg ? ph : 1.0, nl = neg ? pl : 0.0;
  const double q = div(nh, dh);
  double pe;
  const double p = two_prod(q, dh, &pe);
  const double y = add(q, div(add(sub(sub(nh, p), pe), sub(nl, mul(q, dl))), dh));
  const double out = neg ? mul(mul(y, s1), s2) : y;
  return x != x ? qnan() : out;
}

}  // namespace impl

// ---- the functions --------------------------------------------------------------------------------
// float exp, log, sin and cos are evaluated in float (above); float tanh and sigmoid are the double
// evaluation rounded once (see the top of this file).
#define PORTA_DETAIL_MATH_UNARY(name, body)                               \
  PORTA_HOST_DEVICE inline double name(double x) {                        \
    return impl::body<true>(x);                                           \
  }                                                                       \
  PORTA_HOST_DEVICE inline float name(float x) {                          \
    return static_cast<float>(impl::body<false>(static_cast<double>(x))); \
  }
PORTA_DETAIL_MATH_UNARY(tanh, tanh_d)
PORTA_DETAIL_MATH_UNARY(sigmoid, sigmoid_d)
#undef PORTA_DETAIL_MATH_UNARY
PORTA_HOST_DEVICE inline double exp(double x) {
  return impl::exp_d<true>(x);
}
PORTA_HOST_DEVICE inline float exp(float x) {
  return impl::exp_f(x);
}
PORTA_HOST_DEVICE inline double log(double x) {
  return impl::log_d<true>(x);
}
PORTA_HOST_DEVICE inline float log(float x) {
  return impl::log_f(x);
}

// sin and cos in three ranges, each branch-free (vectorisable) where it holds:
//   fast:  double |x| < kTrigFastLimit; float |x| < kTrigFastLimitF, evaluated in float
//   wide:  float |x| < kTrigFastLimit, evaluated in double and rounded once
//   large: the rest (Payne-Hanek), inf and NaN
// *_fast and *_wide give unspecified values outside their ranges.
PORTA_HOST_DEVICE inline double sin_fast(double x) {
  return impl::trig_fast<true, false>(x);
}
PORTA_HOST_DEVICE inline float sin_fast(float x) {
  return impl::trig_f<false>(x);
}
PORTA_HOST_DEVICE inline double cos_fast(double x) {
  return impl::trig_fast<true, true>(x);
}
PORTA_HOST_DEVICE inline float cos_fast(float x) {
  return impl::trig_f<true>(x);
}
PORTA_HOST_DEVICE inline float sin_wide(float x) {
  return static_cast<float>(impl::trig_fast<false, false>(static_cast<double>(x)));
}
PORTA_HOST_DEVICE inline float cos_wide(float x) {
  return static_cast<float>(impl::trig_fast<false, true>(static_cast<double>(x)));
}

PORTA_HOST_DEVICE inline bool trig_is_fast(double x) {
  return impl::trig_is_fast(x);
}
PORTA_HOST_DEVICE inline bool trig_is_fast(float x) {
  return impl::trig_is_fast_f(x);
}
PORTA_HOST_DEVICE inline bool trig_is_wide(float x) {
  return impl::trig_is_fast(static_cast<double>(x));
}

// sin and cos of every x.
PORTA_HOST_DEVICE inline double sin(double x) {
  return impl::trig_is_fast(x) ? sin_fast(x) : impl::trig_large<true, false>(x);
}
PORTA_HOST_DEVICE inline float sin(float x) {
  if (trig_is_fast(x)) return sin_fast(x);
  if (trig_is_wide(x)) return sin_wide(x);
  return static_cast<float>(impl::trig_large<false, false>(static_cast<double>(x)));
}
PORTA_HOST_DEVICE inline double cos(double x) {
  return impl::trig_is_fast(x) ? cos_fast(x) : impl::trig_large<true, true>(x);
}
PORTA_HOST_DEVICE inline float cos(float x) {
  if (trig_is_fast(x)) return cos_fast(x);
  if (trig_is_wide(x)) return cos_wide(x);
  return static_cast<float>(impl::trig_large<false, true>(static_cast<double>(x)));
}

}  // namespace porta::detail::math
