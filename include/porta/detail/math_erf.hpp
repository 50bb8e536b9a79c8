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
//   23 quarter-octave intervals [0.5, 0.625), ..., [24, 28) (c the midpoint, so t is exact), whose
//   constant and linear terms are double-doubles. The coefficients are Chebyshev interpolants of
//   degree 10 to 15 computed in 160-bit arithmetic (mpmath) and rounded to double; with that
//   rounding each stays within 2^-61 of erfcx on its interval. erf x = 1 - erfc x and
//   erfc(-x) = 2 - erfc x from there.
// erfc x underflows through the subnormals to +0 from about 26.6 (double) and 10.0 (float on); erf x
// rounds to +-1 from |x| = 6 (double; erfc 6 is below 2^-54) and erfc x to 2 below -6.
//
// float: the double evaluation without the double-double corrections (its error, a few 2^-53 plus
// e^(-x^2)'s 2^-46 for x <= 10, is far below a float ulp), rounded once.
//
// Special values: erf(+-0) = +-0, erf(+-inf) = +-1, erfc(+inf) = +0, erfc(-inf) = 2; a NaN input
// gives the canonical quiet NaN.
#pragma once

#include "porta/detail/math.hpp"

namespace porta::detail::math {
namespace impl {

// hi + lo of a + b for |a| >= |b| (Fast2Sum).
PORTA_HOST_DEVICE inline double erf_fast_two_sum(double a, double b, double* e) {
  const double s = add(a, b);
  *e = sub(b, sub(s, a));
  return s;
}

// erf x for |x| < 0.5 as hi + *lo (the float variant: *lo = 0). x (1 + c0 + c1 z + z^2 Q2(z)),
// z = x^2, with c0 + c1 z as a double-double: the rest is below 0.7% of erf x / x, so its roundings
// stay below 2^-59 of the result.
template <bool Double>
PORTA_HOST_DEVICE inline double erf_small(double x, double* lo) {
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
  return erf_fast_two_sum(s, add(e, add(pe, mul(x, ql))), lo);
}

// e^(-x^2) for 0.5 <= x (below 28 for a non-zero result) as 2^(*n) (hi + *lo).
template <bool Double>
PORTA_HOST_DEVICE inline double exp_negsq(double x, double* lo, double* n) {
  double sl;
  const double sh = Double ? two_prod(x, x, &sl) : mul(x, x);
  const double k = round_int(mul(-(sh < 800.0 ? sh : 800.0), kLog2e));
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
  return erf_fast_two_sum(h2, low, lo);
}

// erfcx x = e^(x^2) erfc x for 0.5 <= x < 28 as hi + *lo (other x: a finite, meaningless value).
template <bool Double>
PORTA_HOST_DEVICE inline double erfcx_poly(double x, double* lo) {
  // Per interval: the midpoint c, then c0 (hi, lo), c1 (hi, lo), c2 ... c15 of erfcx(c + t).
  constexpr double K[23][19] = {
      {0x1.2000000000000p-1, 0x1.2b84f076e14fbp-1, 0x1.b8bd1accf8123p-55, -0x1.e18ab7052be7fp-2, 0x1.93d71a955f172p-56,
       0x1.482bd9fad9ed0p-2, -0x1.8bed65e016fa4p-3, 0x1.b1a22aa7a6c63p-4, -0x1.b65943042d43cp-5, 0x1.9dcc151637030p-6,
       -0x1.6ff69b0e496b2p-7, 0x1.364ea1241af4ep-8, -0x1.f3c4a51cfb24dp-10, 0x1.80c2d8d9a5bb4p-11, 0.0, 0.0, 0.0, 0.0,
       0.0},
      {0x1.6000000000000p-1, 0x1.0fce4e96dd619p-1, -0x1.7210607953137p-57, -0x1.97fe7bf1c60f0p-2, 0x1.93b069b9023c1p-57,
       0x1.071da7f78298dp-2, -0x1.2ecd75f4d04b3p-3, 0x1.3e0e0ed6b5e50p-4, -0x1.358dce2cc9f0fp-5, 0x1.1a31bff63d5dcp-6,
       -0x1.e5d3c82630484p-8, 0x1.8d62952308f56p-9, -0x1.36dfc32c8151bp-10, 0x1.d1b5e2ff27a79p-12, 0.0, 0.0, 0.0, 0.0,
       0.0},
      {0x1.a000000000000p-1, 0x1.f0723ff5acdf9p-2, -0x1.7b669ffa31576p-58, -0x1.5cbc2c216df00p-2, 0x1.737f44fb5e947p-57,
       0x1.aa32b83507192p-3, -0x1.d43ed8ca5d649p-4, 0x1.d7f26045a2308p-5, -0x1.ba6d6918681ebp-6, 0x1.859d3cc741daap-7,
       -0x1.44bd1cf15c9ebp-8, 0x1.01b0565453518p-9, -0x1.87be45d183bb9p-11, 0x1.1d86a19c1abcap-12, 0.0, 0.0, 0.0, 0.0,
       0.0},
      {0x1.e000000000000p-1, 0x1.c7f81382721efp-2, -0x1.3f947ee724dfcp-62, -0x1.2c84af7c10e14p-2,
       -0x1.5d59e3b8b2beep-57, 0x1.5c775dfc44978p-3, -0x1.6dcc9e7a2c8e4p-4, 0x1.61fee765ff54dp-5, -0x1.3fc8366b5215dp-6,
       0x1.102167dbb8b30p-7, -0x1.b75c9cd4c3329p-9, 0x1.524f4ea212cc7p-10, -0x1.f3d0796cd5e4ep-12,
       0x1.628a6eb7a0f2ap-13, 0.0, 0.0, 0.0, 0.0, 0.0},
      {0x1.2000000000000p+0, 0x1.9531e09b149b5p-2, -0x1.aa513235e9c37p-58, -0x1.e78b356770fbbp-3, 0x1.ef4febc1dfbe9p-57,
       0x1.05e72521ca1b8p-3, -0x1.01343a2c92275p-4, 0x1.d4e711a2df991p-6, -0x1.910a5d7bfa019p-7, 0x1.446c5166c310dp-8,
       -0x1.f38c6d75c2dd7p-10, 0x1.6fd9a5be90814p-11, -0x1.041d7d1596830p-12, 0x1.62735a11c3355p-14,
       -0x1.d50b4239215e4p-16, 0x1.2b01103f017c5p-17, 0.0, 0.0, 0.0},
      {0x1.6000000000000p+0, 0x1.5f88f52f3c76bp-2, -0x1.b8cb56b742073p-57, -0x1.797a639d8129dp-3,
       -0x1.de9a538400a91p-58, 0x1.701342cbcea83p-4, -0x1.4bcdb9d9083c7p-5, 0x1.17eba60d2c408p-6, -0x1.bdf24bcca59c2p-8,
       0x1.51aba02dd5310p-9, -0x1.e8ae68ede2684p-11, 0x1.535e9b55f3db8p-12, -0x1.c5f98c4f65df7p-14,
       0x1.269df07fc7eafp-15, -0x1.7091cf82bb3c6p-17, 0.0, 0.0, 0.0, 0.0},
      {0x1.a000000000000p+0, 0x1.3583f6644327bp-2, -0x1.89175bd0bc251p-56, -0x1.2b11e6959934cp-3, 0x1.d0563bfd539dbp-57,
       0x1.0a15ac2adab38p-4, -0x1.ba018e6428106p-6, 0x1.5a142948a5355p-7, -0x1.014eae282dc31p-8, 0x1.6d609f9101e1bp-10,
       -0x1.f1b43d65e5c08p-12, 0x1.465e39594f179p-13, -0x1.9d6181af728c5p-15, 0x1.fd09750591e0ep-17,
       -0x1.2edb7d4c6e7adp-18, 0.0, 0.0, 0.0, 0.0},
      {0x1.e000000000000p+0, 0x1.13e5743b60480p-2, 0x1.ca0c188590823p-56, -0x1.e36580c7f734ap-4, -0x1.93b99462f4055p-58,
       0x1.8a6efeed233afp-5, -0x1.2ef92f6f10798p-6, 0x1.b99589d40b789p-8, -0x1.33237c3ee8d56p-9, 0x1.99b60e622a7f2p-11,
       -0x1.070e0cc6bb470p-12, 0x1.46314bfe8f854p-14, -0x1.87a59c56f6b69p-16, 0x1.ca06226a3bae1p-18,
       -0x1.036d098c5690ep-19, 0.0, 0.0, 0.0, 0.0},
      {0x1.2000000000000p+1, 0x1.d94446d627932p-3, -0x1.a7c8fc47f8619p-58, -0x1.6a70d2bb37411p-4, 0x1.feafdc44b03a3p-62,
       0x1.0615670e25a7ap-5, -0x1.6883f9919a179p-7, 0x1.da595561f8c9ep-9, -0x1.2bd251bb2f799p-10, 0x1.6d7743d0ced6cp-12,
       -0x1.aed7ebc6d4759p-14, 0x1.ec774509181bap-16, -0x1.117a6a5f5a9a8p-17, 0x1.27a9379f9d083p-19,
       -0x1.37b3d0ebc0d92p-21, 0x1.4549d09bbbc55p-23, -0x1.47399628bd723p-25, 0.0, 0.0},
      {0x1.6000000000000p+1, 0x1.8c9eb68ff27d7p-3, -0x1.bb4e763c64a35p-57, -0x1.0305781330099p-4, 0x1.db36a9e813875p-59,
       0x1.43b98bac83823p-6, -0x1.84e9ab30e6d7ap-8, 0x1.c2c72fd7278c1p-10, -0x1.f99e41eb4d545p-12,
       0x1.131bb160848fdp-13, -0x1.2312b4ba0ec0bp-15, 0x1.2bfb5d35afb11p-17, -0x1.2d9f3453d43d3p-19,
       0x1.285365481cb12p-21, -0x1.1ff8b434248b0p-23, 0x1.0ef27b91683ddp-25, 0.0, 0.0, 0.0},
      {0x1.a000000000000p+1, 0x1.54a7a08d4bb45p-3, -0x1.6a0d91336bdc9p-61, -0x1.82a8522b868a1p-5, 0x1.08d2a0865cb26p-59,
       0x1.a7eddc9ee6425p-7, -0x1.c24b49c47a3fap-9, 0x1.d085857a18035p-11, -0x1.d25ebba129a98p-13,
       0x1.c882f022fff88p-15, -0x1.b45d04727fb05p-17, 0x1.97dd7a925a021p-19, -0x1.7539374cfb2b8p-21,
       0x1.4ebdb00378173p-23, -0x1.294e3d5afadbfp-25, 0x1.00c9bbdf5bca9p-27, 0.0, 0.0, 0.0},
      {0x1.e000000000000p+1, 0x1.2a2af19c14930p-3, -0x1.fa04a06a33f29p-57, -0x1.2aa6503acda11p-5,
       -0x1.8cfc21d54e196p-63, 0x1.22f0664f3cbf9p-7, -0x1.1434ae05873f7p-9, 0x1.fff032a0df8fep-12,
       -0x1.cfcdea1ad3706p-14, 0x1.9b50d0d2263bfp-16, -0x1.65778bb154732p-18, 0x1.30c2fc08d1ee7p-20,
       -0x1.fe3ad04be1b7dp-23, 0x1.a3bc45e5bfcd9p-25, -0x1.5649281486fa1p-27, 0x1.1074472257be5p-29, 0.0, 0.0, 0.0},
      {0x1.2000000000000p+2, 0x1.f5b2a049cf4c6p-4, -0x1.fc4bbbfb1695ap-58, -0x1.aa3eb6a946f7ep-6,
       -0x1.4535e57bc5f65p-60, 0x1.62c12cb5f7577p-8, -0x1.218ed930b236fp-10, 0x1.d00785f2ed4a2p-13,
       -0x1.6d54b133ec9bcp-15, 0x1.1ad6a32dfad8ap-17, -0x1.aef8ea15b5627p-20, 0x1.4354fafb29edap-22,
       -0x1.de099483b985bp-25, 0x1.5c64dee8492b2p-27, -0x1.f4beb087cdd64p-30, 0x1.6341a438d32d1p-32,
       -0x1.ffd7fc8b66a49p-35, 0x1.61e17f2856383p-37, 0.0},
      {0x1.6000000000000p+2, 0x1.9d8a8f2284f2cp-4, -0x1.5b02a55de827cp-58, -0x1.238ca71b93fc3p-6,
       -0x1.52a715a68af78p-60, 0x1.95252b932efe3p-9, -0x1.15976ddda3ca1p-11, 0x1.774f4826dc839p-14,
       -0x1.f4e46d179e394p-17, 0x1.4a17e19c04a19p-19, -0x1.add7ac9cae325p-22, 0x1.149cd773bfed8p-24,
       -0x1.60001e6a9d07dp-27, 0x1.bb09d9640d95dp-30, -0x1.13d9da952484cp-32, 0x1.53e473e7a14a9p-35,
       -0x1.9eb05c385855ap-38, 0x1.002c7422e2d06p-40, -0x1.326af2803dc33p-43},
      {0x1.a000000000000p+2, 0x1.5f75c42e97171p-4, -0x1.a1db408fd6128p-58, -0x1.a6e2cf277a0cbp-7,
       -0x1.23dabaaa7dd09p-61, 0x1.f75ef7a0fb2dap-10, -0x1.28787f0e7f4c6p-12, 0x1.59b29296c5d59p-15,
       -0x1.8f23feccb801cp-18, 0x1.c871a15a43635p-21, -0x1.028f4644d2ebbp-23, 0x1.22467fa851be1p-26,
       -0x1.43003b18e1c43p-29, 0x1.64477e3cbb2c5p-32, -0x1.85b76e23be8aap-35, 0x1.ad86aabd11692p-38,
       -0x1.ce1abffccf1e2p-41, 0.0, 0.0},
      {0x1.e000000000000p+2, 0x1.31742f4d8d4d3p-4, -0x1.f82bc955e371ap-59, -0x1.404455ba9f3bep-7,
       -0x1.46b8d08eb16adp-61, 0x1.4d07bba601411p-10, -0x1.5783a27fad41ap-13, 0x1.5f8a69c9ddd43p-16,
       -0x1.64fcbb7074145p-19, 0x1.67ca2bf715263p-22, -0x1.67f15034543efp-25, 0x1.657f3c3d18803p-28,
       -0x1.6089a510329a1p-31, 0x1.5941b3e7bc2fdp-34, -0x1.53d3a26873434p-37, 0x1.484a032f5c9c5p-40, 0.0, 0.0, 0.0},
      {0x1.2000000000000p+3, 0x1.fe6cc4a0f9538p-5, 0x1.c94a98960f4d3p-59, -0x1.c046699d77d51p-8, -0x1.752ad39e5b6fap-62,
       0x1.876373f4a0f3bp-11, -0x1.53c131b5cb2a0p-14, 0x1.254381038c615p-17, -0x1.f773505c34ca9p-21,
       0x1.adc5f7f328b4dp-24, -0x1.6ce6631b1a219p-27, 0x1.342c8697b07a5p-30, -0x1.02e7b6f998625p-33,
       0x1.b0c99ef3b56f6p-37, -0x1.67e2d75a2adbfp-40, 0x1.298c0ce7b9d9ep-43, -0x1.e9f3ff37d4b2fp-47,
       0x1.a2ba676b476a3p-50, -0x1.5548de31b948ep-53},
      {0x1.6000000000000p+3, 0x1.a273c57e476cep-5, -0x1.6b713ad01954ep-59, -0x1.2ddd3d589bfb0p-8,
       -0x1.aba8a480e32b0p-62, 0x1.b1c8923879d76p-12, -0x1.3672f098120aep-15, 0x1.baa1d9d84bb7dp-19,
       -0x1.3a555d7a8af6fp-22, 0x1.bcbee285404f6p-26, -0x1.39728615be803p-29, 0x1.b82d6e29d6f18p-33,
       -0x1.33ef11b7d311ep-36, 0x1.ad271f0606193p-40, -0x1.2a0ca14799993p-43, 0x1.a77c9e82ffcc1p-47,
       -0x1.23f99a5d45c3fp-50, 0.0, 0.0},
      {0x1.a000000000000p+3, 0x1.627bcc27cb4aep-5, -0x1.d4d715be2b2d6p-60, -0x1.b1be47a913fc3p-9, 0x1.63441d019dc2ep-63,
       0x1.0898f73586fcdp-12, -0x1.41e750b2e0634p-16, 0x1.8682d21857d86p-20, -0x1.d868cc70fcd1ep-24,
       0x1.1cf1ff67192f8p-27, -0x1.56cb0dcf6d8e7p-31, 0x1.9b411acedc380p-35, -0x1.ec0bb2c8030bbp-39,
       0x1.25843a8627505p-42, -0x1.5d4b07f1c5c59p-46, 0x1.a6a36579dbcf4p-50, -0x1.f43dfa9f9976fp-54, 0.0, 0.0},
      {0x1.e000000000000p+3, 0x1.33714a024097ep-5, 0x1.f3b4d0ae3b609p-59, -0x1.467f441a50cf9p-9, -0x1.3525b7a3e87e7p-68,
       0x1.59fa2994d54efp-13, -0x1.6dd369db393c8p-17, 0x1.81fb2ba7eb590p-21, -0x1.96605f1d09344p-25,
       0x1.aaf0d3b9cb2fcp-29, -0x1.bf995774feaaep-33, 0x1.d445be2adfd10p-37, -0x1.e8d7fbab3a834p-41,
       0x1.fd4c7f11e2f03p-45, -0x1.0c6b51a1f769cp-48, 0x1.167cf5f032882p-52, 0.0, 0.0, 0.0},
      {0x1.2000000000000p+4, 0x1.005fe090c5e5dp-5, -0x1.4a17d4faf57b0p-59, -0x1.c661852c5133ap-10,
       -0x1.673fef2bb58b6p-64, 0x1.920b4fb071805p-14, -0x1.63325936575edp-18, 0x1.3955a9a783b07p-22,
       -0x1.13fdbd8e85377p-26, 0x1.e578451cc08a4p-31, -0x1.aa56197432044p-35, 0x1.75d9d3b2456c6p-39,
       -0x1.475879397a50ap-43, 0x1.1e33bf7425d68p-47, -0x1.f3513415a8f59p-52, 0x1.b349a5c3bfbdep-56,
       -0x1.8c70b42552b7fp-60, 0x1.588ed44894fa9p-64, 0.0},
      {0x1.6000000000000p+4, 0x1.a3bc12161d4ebp-6, -0x1.b352d33781d73p-61, -0x1.30a253d642e9cp-10,
       -0x1.8175146c737d6p-64, 0x1.b9bd9f029a792p-15, -0x1.3ff35b4b9df71p-19, 0x1.cf017aa140a05p-24,
       -0x1.4eabfd67b379ap-28, 0x1.e35421d7de652p-33, -0x1.5ca813fdd65c7p-37, 0x1.f6830e75a25e3p-42,
       -0x1.69c4ae4c16814p-46, 0x1.042eed78dade4p-50, -0x1.75bc0f9218b5ep-55, 0x1.0c41613ee7e8bp-59,
       -0x1.8c9f4964694a9p-64, 0x1.1c1a756950205p-68, 0.0},
      {0x1.a000000000000p+4, 0x1.63438bf2c3ee9p-6, -0x1.1f682e97bf891p-61, -0x1.b49a775427ef7p-11,
       -0x1.0eff9f4d55d1ep-65, 0x1.0c15fcc6f7fe8p-15, -0x1.48fb6bc69793ap-20, 0x1.936a6b39af682p-25,
       -0x1.ee543f9175d53p-30, 0x1.2ea50cf8f23e3p-34, -0x1.724f1c724809ep-39, 0x1.c4c5ef9f1e8cep-44,
       -0x1.1499a439df4e1p-48, 0x1.51a6c68b01c46p-53, -0x1.9bf308b2249d8p-58, 0x1.00508147e946dp-62,
       -0x1.3841a57c0d81fp-67, 0.0, 0.0}};
  // The interval: x's exponent and two leading significand bits, counted from 0.5.
  const std::int64_t raw =
      static_cast<std::int64_t>(bits(x) >> 50) - static_cast<std::int64_t>(0x3fe0000000000000u >> 50);
  const int i = static_cast<int>(raw < 0 ? 0 : (raw > 22 ? 22 : raw));
  const double* k = K[i];
  const double t = sub(x, k[0]);
  const double P =
      horner(t, k[5], k[6], k[7], k[8], k[9], k[10], k[11], k[12], k[13], k[14], k[15], k[16], k[17], k[18]);
  if constexpr (!Double) {
    *lo = 0.0;
    return add(k[1], mul(t, add(k[3], mul(t, P))));
  }
  double pe, e;
  const double p = two_prod(k[3], t, &pe);
  const double g = two_sum(k[1], p, &e);
  return erf_fast_two_sum(g, add(add(e, k[2]), add(add(pe, mul(k[4], t)), mul(mul(t, t), P))), lo);
}

// erfc |x| for |x| >= 0.5 as 2^(*n) (hi + *lo).
template <bool Double>
PORTA_HOST_DEVICE inline double erfc_big(double ax, double* lo, double* n) {
  double El, Gl;
  const double Eh = exp_negsq<Double>(ax, &El, n);
  const double Gh = erfcx_poly<Double>(ax, &Gl);
  if constexpr (!Double) {
    *lo = 0.0;
    return mul(Eh, Gh);
  }
  double pe;
  const double p = two_prod(Eh, Gh, &pe);
  return erf_fast_two_sum(p, add(pe, add(mul(Eh, Gl), mul(El, Gh))), lo);
}

template <bool Double>
PORTA_HOST_DEVICE inline double erf_d(double x) {
  const double ax = from_bits(bits(x) & ~(std::uint64_t(1) << 63));
  // Below 2^-900, erf x is evaluated 2^600 times larger (it is linear there), so that the exact
  // products stay in the normal range and a subnormal result rounds once.
  const bool tiny = ax < 0x1p-900;
  double sl;
  const double sh = erf_small<Double>(tiny ? mul(x, 0x1p600) : x, &sl);
  const double small = mul(add(sh, sl), tiny ? 0x1p-600 : 1.0);
  // 1 - erfc |x| for 0.5 <= |x| < 6: erfc |x| >= 2^-55 there, so 2^n scales it exactly.
  double bl, n;
  const double bh = erfc_big<Double>(ax < 6.0 ? ax : 6.0, &bl, &n);
  const double sc = pow2(n);
  double e;
  const double one = two_sum(1.0, -mul(bh, sc), &e);
  const double big = with_sign(add(one, sub(e, mul(bl, sc))), x);
  double y = ax < 0.5 ? small : big;
  y = ax >= 6.0 ? with_sign(1.0, x) : y;
  return x != x ? qnan() : y;
}

template <bool Double>
PORTA_HOST_DEVICE inline double erfc_d(double x) {
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
  const double bh = erfc_big<Double>(ax < 28.0 ? ax : 28.0, &bl, &n);
  const double n1 = round_int(mul(n, 0.5)), n2 = sub(n, n1);
  const double h = mul(bh, pow2(n1)), l = mul(bl, pow2(n1)), s2 = pow2(n2);
  const double hs = mul(h, s2);
  const double sub_pos = add(hs, mul(add(sub(h, mul(hs, pow2(-n2))), l), s2));
  const double pos = Double && hs < 0x1p-1022 ? sub_pos : mul(add(h, l), s2);
  const double sc = pow2(n < -1000.0 ? -1000.0 : n);
  const double two = two_sum(2.0, -mul(bh, sc), &e);
  const double neg = add(two, sub(e, mul(bl, sc)));
  double y = ax < 0.5 ? small : (x > 0.0 ? pos : neg);
  y = x >= 28.0 ? 0.0 : y;
  y = x <= -6.0 ? 2.0 : y;
  return x != x ? qnan() : y;
}

}  // namespace impl

PORTA_HOST_DEVICE inline double erf(double x) {
  return impl::erf_d<true>(x);
}
PORTA_HOST_DEVICE inline float erf(float x) {
  return static_cast<float>(impl::erf_d<false>(static_cast<double>(x)));
}
PORTA_HOST_DEVICE inline double erfc(double x) {
  return impl::erfc_d<true>(x);
}
PORTA_HOST_DEVICE inline float erfc(float x) {
  return static_cast<float>(impl::erfc_d<false>(static_cast<double>(x)));
}

}  // namespace porta::detail::math
