// SPDX-License-Identifier: Apache-2.0
// porta's own erf and erfc in float and double, under the contract of porta/detail/math.hpp (read
// its top comment first): IEEE binary32/binary64, round-to-nearest, every operation one correctly
// rounded +, -, * or /, or exact integer work on the bits, in an order the source fixes; no calls;
// selects instead of branches, so a loop of them vectorises.
//
// Two evaluations, both computed and one selected:
// - |x| < 0.5: erf x = x (1 + Q(x^2)), the Taylor series of erf x / x - 1 through x^26 (the first
//   omitted term is below 2^-63; coefficients 2/sqrt(pi) (-1)^n / (n! (2n + 1)), correctly rounded
//   by mpmath), whose first two terms are carried as double-doubles, so that erfc x = 1 - erf x
//   keeps its accuracy too.
// - |x| >= 0.5: erfc |x| = e^(-x^2) erfcx |x|, erfcx x = e^(x^2) erfc x being smooth and slowly
//   varying. e^(-x^2) is evaluated as 2^n (hi + lo) with x^2 an exact product and the reduced
//   argument's exponential in double-double (to about 2^-60); erfcx is a polynomial in t = x - c on
//   12 intervals [0.5, 0.75), [0.75, 1), [1, 1.5), ..., [16, 24), [24, 28] (c the midpoint, so t is
//   exact), whose last two Horner steps are double-double. The coefficients are Chebyshev
//   interpolants of degree 12 to 19 computed in 180-bit arithmetic (mpmath) and rounded to double
//   (c0 and c1 to double-doubles); so rounded, each stays within 2^-61.5 of erfcx on its interval.
//   erf x = 1 - erfc x and erfc(-x) = 2 - erfc x from there.
// erfc x underflows through the subnormals to +0 from about 26.6 (double) and 10.0 (float); erf x
// rounds to +-1 from |x| = 6 (double; erfc 6 is below 2^-54) and erfc x to 2 below -6.
//
// float: the double evaluation without the double-double corrections (its error, a few 2^-53 plus
// e^(-x^2)'s 2^-46 for x <= 10, is far below a float ulp), rounded once.
//
// Accuracy (tests/algorithms/test_math_trig_erf.cpp asserts 1 ulp; the worst errors measured against
// long double over 10^7 random inputs per function and type, erfc through its subnormal range):
// double erf 0.52 ulp, erfc 0.59; float 0.5000, and so over every float of |x| in [2^-12, 6] for
// erf and of x in [-6, -2^-12] and [2^-12, 10.125] for erfc (against glibc's double functions).
//
// Selects: tr_select() of math_trig.hpp (on the bits), so that both paths stay straight-line code;
// the interval's coefficients are selected too (11 selects each), not loaded from a table: an
// indexed load would need a gather, which GCC's generic tunings do not emit, so the loop would not
// vectorise. The selects cost most of the time: double erf and erfc run at 1.2-2x glibc's time on
// one core, against 0.1-0.7x for the functions of math_trig.hpp.
//
// Special values: erf(+-0) = +-0, erf(+-inf) = +-1, erfc(+inf) = +0, erfc(-inf) = 2; a NaN input
// gives the canonical quiet NaN.
#pragma once

#include "porta/detail/math_trig.hpp"

// erfcx_poly's interval selects make it larger than GCC's inlining limits, and a call left in a loop
// stops the loop from vectorising.
#if defined(__GNUC__) || defined(__clang__)
#define PORTA_DETAIL_MATH_ERF_INLINE __attribute__((always_inline)) inline
#else
#define PORTA_DETAIL_MATH_ERF_INLINE inline
#endif

namespace porta::detail::math {
namespace impl {

// erf x for |x| < 0.5 as hi + *lo (the float variant: *lo = 0). x (1 + c0 + c1 z + z^2 Q2(z)),
// z = x^2, with c0 + c1 z as a double-double: the rest is below 0.7% of erf x / x, so its roundings
// stay below 2^-59 of the result.
template <bool Double>
PORTA_HOST_DEVICE PORTA_DETAIL_MATH_ERF_INLINE double erf_small(double x, double* lo) {
  const double c0h = 0x1.06eba8214db69p-3, c0l = -0x1.ca38add602500p-57;  // 2/sqrt(pi) - 1
  const double c1h = -0x1.812746b0379e7p-2, c1l = 0x1.ee12e49cab700p-57;  // -2/(3 sqrt(pi))
  double zl;
  const double zh = Double ? two_prod(x, x, &zl) : mul(x, x);
  const double Q2 =
      horner(zh, 0x1.ce2f21a042be2p-4, -0x1.b82ce31288b51p-6, 0x1.565bcd0e6a53fp-8, -0x1.c02db40040b86p-11,
             0x1.f9a326f9b89b7p-14, -0x1.f4d25c3e0c2ebp-17, 0x1.b9e6c9dc651a3p-20, -0x1.5f742ec43e71ap-23,
             0x1.fcc5720624c1cp-27, -0x1.51d7181c5d36dp-30, 0x1.9e6ad5e55a730p-34, -0x1.d8453cb0c46eap-38);
  if constexpr (!Double) {
    *lo = 0.0;
    return add(x, mul(x, add(c0h, mul(zh, add(c1h, mul(zh, Q2))))));
  }
  double pe, qe, e;
  const double p = two_prod(c1h, zh, &pe);
  const double qh = two_sum(c0h, p, &qe);
  const double ql = add(add(qe, c0l), add(add(pe, add(mul(c1l, zh), mul(c1h, zl))), mul(mul(zh, zh), Q2)));
  const double xq = two_prod(x, qh, &pe);
  const double s = two_sum(x, xq, &e);
  return tr_fast_two_sum(s, add(e, add(pe, mul(x, ql))), lo);
}

// e^(-x^2) for 0.5 <= x (below 28 for a non-zero result) as 2^(*n) (hi + *lo).
template <bool Double>
PORTA_HOST_DEVICE PORTA_DETAIL_MATH_ERF_INLINE double exp_negsq(double x, double* lo, double* n) {
  double sl;
  const double sh = Double ? two_prod(x, x, &sl) : mul(x, x);
  const double k = round_int(mul(-tr_select(sh < 800.0, sh, 800.0), kLog2e));
  *n = k;
  // -x^2 = k ln2 + rh + rl: k kLn2Hi is exact and so is the difference (Sterbenz, or k = 0).
  const double a = sub(-sh, mul(k, kLn2Hi));
  // x^2's rounding error goes in before the sum, so that rl stays below half an ulp of rh and
  // rl (1 + rh) stands for rl e^rh.
  double rl;
  const double rh = two_sum(a, Double ? sub(-mul(k, kLn2Lo), sl) : -mul(k, kLn2Lo), &rl);
  // e^r = 1 + r + r^2/2 + r^3 (1/3! + r/4! + ... through r^13); the first three as double-doubles.
  const double tail = horner(rh, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320, 1.0 / 362880,
                             1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800);
  if constexpr (!Double) {
    *lo = 0.0;
    return add(1.0, add(rh, mul(mul(rh, rh), add(0.5, mul(rh, tail)))));
  }
  double e1, e2, qe;
  const double h1 = two_sum(1.0, rh, &e1);
  const double q = mul(0.5, two_prod(rh, rh, &qe));
  const double h2 = two_sum(h1, q, &e2);
  const double low = add(add(e1, e2), add(add(mul(0.5, qe), mul(rl, add(1.0, rh))), mul(mul(q, rh), add(tail, tail))));
  return tr_fast_two_sum(h2, low, lo);
}

// erfcx x = e^(x^2) erfc x for 0.5 <= x <= 28 as hi + *lo (other x: a finite, meaningless value).
template <bool Double>
PORTA_HOST_DEVICE PORTA_DETAIL_MATH_ERF_INLINE double erfcx_poly(double x, double* lo) {
  // clang-format off
  // The value for x's interval: v0 for [0.5, 0.75), v1 for [0.75, 1), ..., v11 for [24, 28]. A
  // macro, not a function, so that it is inlined however large the caller grows; the comparisons
  // are made once.
  const bool g1 = x >= 0.75, g2 = x >= 1.0, g3 = x >= 1.5, g4 = x >= 2.0, g5 = x >= 3.0, g6 = x >= 4.0, g7 = x >= 6.0,
             g8 = x >= 8.0, g9 = x >= 12.0, g10 = x >= 16.0, g11 = x >= 24.0;
#define PORTA_DETAIL_ERFCX_PICK(v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11)                            \
  tr_select(g11, v11, tr_select(g10, v10, tr_select(g9, v9, tr_select(g8, v8, tr_select(g7, v7, tr_select(g6, v6, tr_select(g5, v5, \
  tr_select(g4, v4, tr_select(g3, v3, tr_select(g2, v2, tr_select(g1, v1, v0)))))))))))
  // Per interval: the midpoint c, then c0 and c1 (hi and lo), c2 ... c19 of erfcx(c + t).
  const double c = PORTA_DETAIL_ERFCX_PICK(0x1.4000000000000p-1, 0x1.c000000000000p-1, 0x1.4000000000000p+0, 0x1.c000000000000p+0, 0x1.4000000000000p+1, 0x1.c000000000000p+1,
                      0x1.4000000000000p+2, 0x1.c000000000000p+2, 0x1.4000000000000p+3, 0x1.c000000000000p+3, 0x1.4000000000000p+4, 0x1.a000000000000p+4);
  const double c0h = PORTA_DETAIL_ERFCX_PICK(0x1.1d16b5809eaf6p-1, 0x1.db747ee409ac5p-2, 0x1.78a692138767ap-2, 0x1.23cfc2f1dc7e0p-2, 0x1.afbb3f3b7343bp-3, 0x1.3e0a99a0ee914p-3,
                      0x1.c57239e943d1ap-4, 0x1.46dc6bf900f68p-4, 0x1.cbe831f997124p-5, 0x1.494bb2ce2924fp-5, 0x1.cd9bc89b73548p-6, 0x1.63438bf2c3ee9p-6);
  const double c0l = PORTA_DETAIL_ERFCX_PICK(0x1.043e5f49b4044p-55, -0x1.55a083acba9f3p-56, 0x1.4797400f19192p-63, 0x1.3c1b1cd31543bp-57, -0x1.9f3b078db2f8dp-58, -0x1.91055872371e0p-60,
                      -0x1.0e682190858dbp-59, -0x1.9c3bae12ae446p-59, -0x1.eda4c8a9f88b5p-60, 0x1.5741133d175cep-59, -0x1.c826601a2f019p-65, -0x1.1f682e97bf891p-61);
  const double c1h = PORTA_DETAIL_ERFCX_PICK(-0x1.babd0e4f1a24dp-2, -0x1.4369f60195edcp-2, -0x1.abaacdbfa8b07p-3, -0x1.0c3d538446447p-3, -0x1.3086d7f01ac85p-4, -0x1.5285d2eb1ef74p-5,
                      -0x1.5d843497d4f3ap-6, -0x1.6e4b45246f91fp-7, -0x1.6c55c82b4b6b8p-8, -0x1.76711f8b6cf4dp-9, -0x1.705e8c0688050p-10, -0x1.b49a775427ef7p-11);
  const double c1l = PORTA_DETAIL_ERFCX_PICK(0x1.851496ca41c13p-56, -0x1.a75422b0c533bp-58, 0x1.c56785ba305ffp-57, -0x1.e7547f4055e9bp-57, -0x1.0fa71d718f060p-59, 0x1.b05afe5219890p-59,
                      0x1.2b4b11fef3bd5p-60, -0x1.7ca7056536215p-61, -0x1.e295a62dbe222p-63, -0x1.341e64bf14719p-64, 0x1.03ab8a3e7ba75p-64, -0x1.0eff9f4d55d1ep-65);
  const double c2h = PORTA_DETAIL_ERFCX_PICK(0x1.2577420fcd07dp-2, 0x1.80ef8f454cf88p-3, 0x1.b56f45eef7e58p-4, 0x1.c8d0cef0f8107p-5, 0x1.98958a7a8e4a3p-6, 0x1.5d581133378eep-7,
                      0x1.08cf82b79a11cp-8, 0x1.96a3de47d5b16p-10, 0x1.1f3df0de32f5ep-11, 0x1.a8b73429cebccp-13, 0x1.259993494e472p-14, 0x1.0c15fcc6f7fe8p-15);
  const double c3 = PORTA_DETAIL_ERFCX_PICK(-0x1.59c35c06f8049p-3, -0x1.9d5868de0b5b2p-4, -0x1.9b635ac624aacp-5, -0x1.6cb52fe48945cp-6, -0x1.0632076809dfcp-7, -0x1.5e5d7e9899182p-9,
                      -0x1.8abc198707c87p-11, -0x1.bf5070ee1923bp-13, -0x1.c2c9072e92bb2p-15, -0x1.e08bef3ab5256p-17, -0x1.d36fe3dd9000ep-19, -0x1.48fb6bc69793ap-20);
  const double c4 = PORTA_DETAIL_ERFCX_PICK(0x1.72d46a9b3f12cp-4, 0x1.9831c2c85005dp-5, 0x1.68a25a6641f0fp-6, 0x1.13648a12017fcp-7, 0x1.435c04e207cd1p-9, 0x1.5632136d8c871p-11,
                      0x1.219f2c33533fbp-13, 0x1.e7af6eeff6894p-16, 0x1.60131845d02c8p-18, 0x1.0f30b59c10925p-20, 0x1.73a4ded43df1bp-23, 0x1.936a6b39af682p-25);
  const double c5 = PORTA_DETAIL_ERFCX_PICK(-0x1.6fce5df094b21p-5, -0x1.779dd2a3c1faap-6, -0x1.299636d6cc780p-7, -0x1.8bf716a8ec6bep-9, -0x1.809ce8ab533f2p-11, -0x1.460abd6b257aap-13,
                      -0x1.a2a81d24cae27p-16, -0x1.078bfe34dabfcp-18, -0x1.11b748bb0b530p-21, -0x1.3156aeb7fb008p-24, -0x1.271eee8116c99p-27, -0x1.ee543f9175d53p-30);
  const double c6 = PORTA_DETAIL_ERFCX_PICK(0x1.552fe6ffede27p-6, 0x1.452648d61c374p-7, 0x1.d1b695aac3b75p-9, 0x1.106bd5bb7a2eep-10, 0x1.ba8a67cfb709dp-13, 0x1.2f839e54cd10cp-15,
                      0x1.2a41152e3b520p-18, 0x1.1a6f6b79ff7d5p-21, 0x1.a7aa3a006d1cdp-25, 0x1.56f43e58a2b55p-28, 0x1.d42321f85f97ap-32, 0x1.2ea50cf8f23e3p-34);
  const double c7 = PORTA_DETAIL_ERFCX_PICK(-0x1.2a7f5037c7d74p-7, -0x1.0ab3837e6b6ebp-8, -0x1.5b8bc93be2cfcp-10, -0x1.68388845b02b1p-12, -0x1.edd423990bb19p-15, -0x1.146bc406f87d7p-17,
                      -0x1.a3193cf53d1a2p-21, -0x1.2c2db9e407820p-24, -0x1.4669c867b16f8p-28, -0x1.8046e7a06395bp-32, -0x1.72d795926c203p-36, -0x1.724f1c724809ep-39);
  const double c8 = PORTA_DETAIL_ERFCX_PICK(0x1.efd03cd65c86cp-9, 0x1.a0ef7f4e8c75ep-10, 0x1.f0fe6fa38ae29p-12, 0x1.cb4c7627a9281p-14, 0x1.0bcba3251b0bap-16, 0x1.ed2a955d8df2ep-20,
                      0x1.228a789e7cbf3p-23, 0x1.3c768d8ae99dep-27, 0x1.f4bfefc733514p-32, 0x1.ad8cef6e608cep-36, 0x1.2569bb8cb1f99p-40, 0x1.c4c5ef9f1e8cep-44);
  const double c9 = PORTA_DETAIL_ERFCX_PICK(-0x1.88edeea8df9ebp-10, -0x1.37fd5ccdfe8c2p-11, -0x1.55c091473d69dp-13, -0x1.1b2919f9d4442p-15, -0x1.1ad10db083879p-18, -0x1.af5d64282a7e5p-22,
                      -0x1.8dabbb1710a25p-26, -0x1.4affde9592433p-30, -0x1.7e6cb8caa0342p-35, -0x1.df04da3dd3643p-40, -0x1.cfbddec867938p-45, -0x1.1499a439df4e1p-48);
  const double c10 = PORTA_DETAIL_ERFCX_PICK(0x1.2a699677438d1p-11, 0x1.c0b22068051e4p-13, 0x1.c5704c211f94ap-15, 0x1.5269f21f31c3cp-17, 0x1.234feb1579b9ap-20, 0x1.725027c5bf1e9p-24,
                      0x1.0cc74ee2afccfp-28, 0x1.578846ac63c23p-33, 0x1.22cd41ab92a02p-38, 0x1.0a769667651e8p-43, 0x1.6e089a7f054c3p-49, 0x1.51a6c68b01c46p-53);
  const double c11 = PORTA_DETAIL_ERFCX_PICK(-0x1.b690531586a93p-13, -0x1.38c37d777e9abp-14, -0x1.22ef171276aeep-16, -0x1.88f0ad9976924p-19, -0x1.2514a1511da02p-22, -0x1.384594a15adbap-26,
                      -0x1.66f78b85770f7p-31, -0x1.61db63737737ap-36, -0x1.b8612041f51b9p-42, -0x1.27c59b3f4674ap-47, -0x1.208fb4493e1b7p-53, -0x1.9bf308b2249d8p-58);
  const double c12 = PORTA_DETAIL_ERFCX_PICK(0x1.34d5e93bfe9b8p-14, 0x1.a2ffb9d8e1e9ep-16, 0x1.6a0a03aa8bdd0p-18, 0x1.c3515d18ecf45p-21, 0x1.205eed5227c12p-24, 0x1.02b1e305bf75dp-28,
                      0x1.d9d96e20ca88dp-34, 0x1.69c8f0803b167p-39, 0x1.4c0a8c40220c6p-45, 0x1.4786521e96b20p-51, 0x1.c670385e444d2p-58, 0x1.00508147e946dp-62);
  const double c13 = PORTA_DETAIL_ERFCX_PICK(0.0, 0.0, -0x1.be7acdc5ba9a0p-20, -0x1.f0bcbed45e35cp-23, -0x1.15cbc8ca96cb6p-26, -0x1.a5f476d20075dp-31,
                      -0x1.35475cd5de3d2p-36, -0x1.6e819aa509cd8p-42, -0x1.f2a3b208bb68bp-49, -0x1.68d03b6ab2e29p-55, -0x1.65a91084f22f2p-62, -0x1.3841a57c0d81fp-67);
  const double c14 = PORTA_DETAIL_ERFCX_PICK(0.0, 0.0, 0x1.06619375fc922p-21, 0.0, 0x1.05e759218a9b9p-28, 0x1.604abf62ed135p-33,
                      0x1.8f3cb9b239f68p-39, 0x1.7160ce340d7f6p-45, 0x1.7517e0c930061p-52, 0x1.8db94e45a9551p-59, 0x1.18f5c9c319dd9p-66, 0.0);
  const double c15 = PORTA_DETAIL_ERFCX_PICK(0.0, 0.0, 0.0, 0.0, -0x1.e53297e19ce34p-31, -0x1.16441025d9425p-35,
                      -0x1.fab5cc2463cd2p-42, -0x1.8b65d369f2ed8p-48, -0x1.15dc16253daf7p-55, -0x1.db4d1a1287ebbp-63, -0x1.b18a8a2d4a3a4p-71, 0.0);
  const double c16 = PORTA_DETAIL_ERFCX_PICK(0.0, 0.0, 0.0, 0.0, 0x1.d2f097a4b0ae8p-33, 0.0,
                      0x1.404da52fb89b5p-44, 0x1.88a6a5525f6ffp-51, 0x1.9654c8cdc5fa5p-59, 0x1.04ac50a1231cbp-66, 0x1.53cbb8b8aef50p-75, 0.0);
  const double c17 = PORTA_DETAIL_ERFCX_PICK(0.0, 0.0, 0.0, 0.0, -0x1.a0766f546afa8p-35, 0.0,
                      -0x1.c3999d032d0cap-47, 0.0, -0x1.2c47231009e6fp-62, 0.0, -0x1.44d837e044195p-79, 0.0);
  const double c18 = PORTA_DETAIL_ERFCX_PICK(0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                      0x1.1726ff6c4ef8bp-49, 0.0, 0x1.094dbcf817135p-65, 0.0, 0x1.fbc11f9e81a18p-84, 0.0);
  const double c19 = PORTA_DETAIL_ERFCX_PICK(0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                      0.0, 0.0, -0x1.84791fa128cc3p-69, 0.0, 0.0, 0.0);
  // clang-format on
#undef PORTA_DETAIL_ERFCX_PICK
  const double t = sub(x, c);  // exact (Sterbenz: x is within a factor 1.5 of c)
  const double P = horner(t, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17, c18, c19);
  const double s2 = add(c2h, mul(t, P));
  if constexpr (!Double) {
    *lo = 0.0;
    return add(c0h, mul(t, add(c1h, mul(t, s2))));
  }
  // c0 + t (c1 + t s2) with both steps in double-double: t s2 is below 5% of the result, so its
  // roundings stay below 2^-57 of it.
  double e, pe;
  const double s1 = two_sum(c1h, mul(t, s2), &e);
  const double s1l = add(e, c1l);
  const double p = two_prod(t, s1, &pe);
  const double g = two_sum(c0h, p, &e);
  return tr_fast_two_sum(g, add(add(e, c0l), add(pe, mul(t, s1l))), lo);
}

// erfc |x| for |x| >= 0.5 as 2^(*n) (hi + *lo).
template <bool Double>
PORTA_HOST_DEVICE PORTA_DETAIL_MATH_ERF_INLINE double erfc_big(double ax, double* lo, double* n) {
  double El, Gl;
  const double Eh = exp_negsq<Double>(ax, &El, n);
  const double Gh = erfcx_poly<Double>(ax, &Gl);
  if constexpr (!Double) {
    *lo = 0.0;
    return mul(Eh, Gh);
  }
  double pe;
  const double p = two_prod(Eh, Gh, &pe);
  return tr_fast_two_sum(p, add(pe, add(mul(Eh, Gl), mul(El, Gh))), lo);
}

template <bool Double>
PORTA_HOST_DEVICE PORTA_DETAIL_MATH_ERF_INLINE double erf_d(double x) {
  const double ax = from_bits(bits(x) & ~(std::uint64_t(1) << 63));
  // Below 2^-900, erf x is evaluated 2^600 times larger (it is linear there), so that the exact
  // products stay in the normal range and a subnormal result rounds once.
  const bool tiny = ax < 0x1p-900;
  double sl;
  const double sh = erf_small<Double>(tr_select(tiny, mul(x, 0x1p600), x), &sl);
  // erf is odd; the sign is put back because the double-double sums turn erf(-0) into +0.
  const double small = with_sign(mul(add(sh, sl), tr_select(tiny, 0x1p-600, 1.0)), x);
  // 1 - erfc |x| for 0.5 <= |x| < 6: erfc |x| >= 2^-55 there, so 2^n scales it exactly.
  double bl, n;
  const double bh = erfc_big<Double>(tr_select(ax < 6.0, ax, 6.0), &bl, &n);
  const double sc = pow2(n);
  double e;
  const double one = two_sum(1.0, -mul(bh, sc), &e);
  const double big = with_sign(add(one, sub(e, mul(bl, sc))), x);
  double y = tr_select(ax < 0.5, small, big);
  y = tr_select(ax >= 6.0, with_sign(1.0, x), y);
  return tr_select(x != x, qnan(), y);
}

template <bool Double>
PORTA_HOST_DEVICE PORTA_DETAIL_MATH_ERF_INLINE double erfc_d(double x) {
  const double ax = from_bits(bits(x) & ~(std::uint64_t(1) << 63));
  // 1 - erf x for |x| < 0.5.
  double sl, e;
  const double sh = erf_small<Double>(x, &sl);
  const double g = two_sum(1.0, -sh, &e);
  const double small = add(g, sub(e, sl));
  // erfc |x| = 2^n (bh + bl) for |x| >= 0.5, scaled in two factors, each within the normal range.
  // The first scaling is exact. In the normal range the second is too, after bh + bl is rounded.
  // Below it, the second rounds bh to the subnormal grid, and what that dropped (exact: Sterbenz)
  // plus bl, rounded to the same grid, is added exactly: one rounding, not bh + bl rounded to 53
  // bits and then to fewer. 2 - that for x <= -0.5.
  double bl, n;
  const double bh = erfc_big<Double>(tr_select(ax < 28.0, ax, 28.0), &bl, &n);
  const double n1 = round_int(mul(n, 0.5)), n2 = sub(n, n1);
  const double h = mul(bh, pow2(n1)), l = mul(bl, pow2(n1)), s2 = pow2(n2);
  const double hs = mul(h, s2);
  const double sub_pos = add(hs, mul(add(sub(h, mul(hs, pow2(-n2))), l), s2));
  const double pos = tr_select(Double && hs < 0x1p-1022, sub_pos, mul(add(h, l), s2));
  const double sc = pow2(tr_select(n < -1000.0, -1000.0, n));
  const double two = two_sum(2.0, -mul(bh, sc), &e);
  const double neg = add(two, sub(e, mul(bl, sc)));
  double y = tr_select(ax < 0.5, small, tr_select(x > 0.0, pos, neg));
  y = tr_select(x >= 28.0, 0.0, y);
  y = tr_select(x <= -6.0, 2.0, y);
  return tr_select(x != x, qnan(), y);
}

}  // namespace impl

PORTA_HOST_DEVICE PORTA_DETAIL_MATH_ERF_INLINE double erf(double x) {
  return impl::erf_d<true>(x);
}
PORTA_HOST_DEVICE PORTA_DETAIL_MATH_ERF_INLINE float erf(float x) {
  return static_cast<float>(impl::erf_d<false>(static_cast<double>(x)));
}
PORTA_HOST_DEVICE PORTA_DETAIL_MATH_ERF_INLINE double erfc(double x) {
  return impl::erfc_d<true>(x);
}
PORTA_HOST_DEVICE PORTA_DETAIL_MATH_ERF_INLINE float erfc(float x) {
  return static_cast<float>(impl::erfc_d<false>(static_cast<double>(x)));
}

}  // namespace porta::detail::math

#undef PORTA_DETAIL_MATH_ERF_INLINE
