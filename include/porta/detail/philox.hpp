// SPDX-License-Identifier: Apache-2.0
// porta's random numbers, one definition for the CPU, CUDA, HIP and user kernels: the
// Philox4x32-10 counter-based generator (Salmon, Moraes, Dror, Shaw, "Parallel Random Numbers: As
// Easy as 1, 2, 3", SC11; the same function as Random123's philox4x32 with 10 rounds and as cuRAND's
// Philox4_32_10) and the maps from its 32-bit words to uniform and normal floats and doubles.
//
// Same bits everywhere, by construction:
// - the generator is integer arithmetic only;
// - uniforms are integers times a power of two (exact);
// - normals (Box-Muller) use porta's own log and sin/cos below, never the platform's (glibc's and
//   CUDA's logf/sinf differ in the last bits), built from +, -, *, / and sqrt (IEEE-exact on every
//   backend: nvcc and hipcc default to correctly rounded division and square root) and explicit
//   fused multiply-adds (std::fma, __fma_rn: exact everywhere). Every multiply that feeds an add is
//   written as an fma, so no compiler's contraction (nvcc fuses a * b + c by default, g++ with FMA
//   targets too) has anything left to change. Compiling a kernel with --use_fast_math or
//   -ffast-math voids the promise.
//
// Layout of the stream (what the built-ins and Philox below agree on, docs/random-and-scans.md):
// block b of stream s under seed k is philox4x32_10(counter = {lo(b), hi(b), lo(s), hi(s)},
// key = {lo(k), hi(k)}), four 32-bit words; word j of the stream is word j % 4 of block j / 4. This
// is cuRAND's curand_init(seed, subsequence = s, offset = j) word for word.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "porta/detail/config.hpp"

namespace porta::detail::philox {

struct Words {
  std::uint32_t v[4];
};

inline constexpr std::uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // round multipliers
inline constexpr std::uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // key schedule (Weyl)

// Random123's philox4x32_R(10, ctr, key): ten rounds, the key bumped before rounds 2..10.
PORTA_HOST_DEVICE inline Words philox4x32_10(Words c, std::uint32_t k0, std::uint32_t k1) {
#if PORTA_GPU_COMPILER
#pragma unroll
#endif
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    const std::uint64_t p0 = static_cast<std::uint64_t>(kM0) * c.v[0];
    const std::uint64_t p1 = static_cast<std::uint64_t>(kM1) * c.v[2];
    c = Words{{static_cast<std::uint32_t>(p1 >> 32) ^ c.v[1] ^ k0, static_cast<std::uint32_t>(p1),
               static_cast<std::uint32_t>(p0 >> 32) ^ c.v[3] ^ k1, static_cast<std::uint32_t>(p0)}};
  }
  return c;
}

// Block `b` of stream `s` under `seed` (the layout above).
PORTA_HOST_DEVICE inline Words block(std::uint64_t seed, std::uint64_t s, std::uint64_t b) {
  const Words c{{static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b >> 32), static_cast<std::uint32_t>(s),
                 static_cast<std::uint32_t>(s >> 32)}};
  return philox4x32_10(c, static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
}

// ---- exact arithmetic helpers -------------------------------------------------------------------

template <class T>
PORTA_HOST_DEVICE inline T fma_rn(T a, T b, T c) {
#if PORTA_DEVICE_PASS && defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) {
    return __fmaf_rn(a, b, c);
  } else {
    return __fma_rn(a, b, c);
  }
#elif PORTA_DEVICE_PASS
  if constexpr (std::is_same_v<T, float>) {
    return __builtin_fmaf(a, b, c);
  } else {
    return __builtin_fma(a, b, c);
  }
#else
  return std::fma(a, b, c);
#endif
}

// The unsigned integer of T's width and T's bits (explicit, exact).
template <class T>
using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

template <class T>
PORTA_HOST_DEVICE inline Bits<T> to_bits(T x) {
  Bits<T> b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
template <class T>
PORTA_HOST_DEVICE inline T from_bits(Bits<T> b) {
  T x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// Bits of randomness per uniform: 24 for float, 53 for double (all a T's significand holds).
template <class T>
inline constexpr int kUniformBits = sizeof(T) == 4 ? 24 : 53;

// k * 2^-bits for an integer k < 2^bits: exact.
template <class T>
PORTA_HOST_DEVICE inline T scale_down(Bits<T> k) {
  return static_cast<T>(k) *
         (sizeof(T) == 4 ? T(5.9604644775390625e-08) : T(1.1102230246251565404236316680908203125e-16));
}

// The integer behind one uniform: the top 24 bits of one word (float) or the top 53 of two (double).
PORTA_HOST_DEVICE inline std::uint32_t uniform_int24(std::uint32_t w) {
  return w >> 8;
}
PORTA_HOST_DEVICE inline std::uint64_t uniform_int53(std::uint32_t hi, std::uint32_t lo) {
  return ((static_cast<std::uint64_t>(hi) << 32) | lo) >> 11;
}

// ---- porta's own log and sin/cos ----------------------------------------------------------------

// ln(u) for a normal u in (0, 1]: u = m * 2^e with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s),
// s = (m - 1) / (m + 1), |s| < 0.172, from its odd series (Horner in s^2, one fma per term).
// A few ulp from the true value; what matters here is that it is the same function everywhere.
template <class T>
PORTA_HOST_DEVICE inline T log_unit(T u) {
  using B = Bits<T>;
  constexpr int kMant = sizeof(T) == 4 ? 23 : 52;
  constexpr int kBias = sizeof(T) == 4 ? 127 : 1023;
  const B bits = to_bits(u);
  int e = static_cast<int>(bits >> kMant) - kBias;
  const B one = static_cast<B>(kBias) << kMant;
  T m = from_bits<T>((bits & ((B(1) << kMant) - 1)) | one);  // [1, 2)
  if (m > T(1.41421356237309504880)) {
    m = m * T(0.5);  // exact
    e += 1;
  }
  const T f = m - T(1);  // exact (Sterbenz)
  const T s = f / (m + T(1));
  const T z = s * s;
  T p;
  if constexpr (sizeof(T) == 4) {  // 2 / (2k + 1), k = 6 .. 1
    p = T(2.0 / 13);
    p = fma_rn(p, z, T(2.0 / 11));
    p = fma_rn(p, z, T(2.0 / 9));
    p = fma_rn(p, z, T(2.0 / 7));
    p = fma_rn(p, z, T(2.0 / 5));
    p = fma_rn(p, z, T(2.0 / 3));
  } else {  // k = 11 .. 1
    p = T(2.0 / 23);
    p = fma_rn(p, z, T(2.0 / 21));
    p = fma_rn(p, z, T(2.0 / 19));
    p = fma_rn(p, z, T(2.0 / 17));
    p = fma_rn(p, z, T(2.0 / 15));
    p = fma_rn(p, z, T(2.0 / 13));
    p = fma_rn(p, z, T(2.0 / 11));
    p = fma_rn(p, z, T(2.0 / 9));
    p = fma_rn(p, z, T(2.0 / 7));
    p = fma_rn(p, z, T(2.0 / 5));
    p = fma_rn(p, z, T(2.0 / 3));
  }
  const T lnm = fma_rn(s * z, p, s + s);
  // ln 2 = hi + lo with e * hi exact (fdlibm's split).
  const T ln2_hi = sizeof(T) == 4 ? T(0.693138122558593750) : T(0.693147180369123816490);
  const T ln2_lo = sizeof(T) == 4 ? T(9.0580013515594172321e-06) : T(1.908214929270587816144e-10);
  const T fe = static_cast<T>(e);
  return fma_rn(fe, ln2_hi, fma_rn(fe, ln2_lo, lnm));
}

template <class T>
struct SinCos {
  T sin, cos;
};

// sin and cos of the angle 2 pi k / 2^bits (bits = kUniformBits<T>) for an integer k in [0, 2^bits):
// the nearest quarter turn q comes from k exactly, the rest is 2 pi f with f = k / 2^bits - q / 4,
// |f| <= 1/8, exact too; sin(2 pi f) and cos(2 pi f) are Taylor polynomials in f (coefficients
// (2 pi)^n / n!, Horner in f^2, one fma per term), then rotated by q quarter turns (exact).
template <class T>
PORTA_HOST_DEVICE inline SinCos<T> sincos_turn(Bits<T> k) {
  constexpr int kB = kUniformBits<T>;
  const std::int64_t qn = static_cast<std::int64_t>((k + (Bits<T>(1) << (kB - 3))) >> (kB - 2));  // 0 .. 4
  const std::int64_t r = static_cast<std::int64_t>(k) - (qn << (kB - 2));      // [-2^(bits-3), 2^(bits-3)]
  const T f = static_cast<T>(r) * (sizeof(T) == 4 ? T(5.9604644775390625e-08)  // 2^-24
                                                  : T(1.1102230246251565404236316680908203125e-16));  // 2^-53
  const T f2 = f * f;
  T s, c;
  if constexpr (sizeof(T) == 4) {
    s = T(42.05869394489765314);                  // (2pi)^9 / 9!
    s = fma_rn(s, f2, T(-76.70585975306138584));  // -(2pi)^7 / 7!
    s = fma_rn(s, f2, T(81.60524927607505420));   // (2pi)^5 / 5!
    s = fma_rn(s, f2, T(-41.34170224039976023));  // -(2pi)^3 / 3!
    s = fma_rn(s, f2, T(6.283185307179586477));   // 2pi
    c = T(-26.42625678337439745);                 // -(2pi)^10 / 10!
    c = fma_rn(c, f2, T(60.24464137187666036));   // (2pi)^8 / 8!
    c = fma_rn(c, f2, T(-85.45681720669372774));  // -(2pi)^6 / 6!
    c = fma_rn(c, f2, T(64.93939402266829149));   // (2pi)^4 / 4!
    c = fma_rn(c, f2, T(-19.73920880217871724));  // -(2pi)^2 / 2!
    c = fma_rn(c, f2, T(1));
  } else {
    s = T(0.1042291622081398411727);                  // (2pi)^17 / 17!
    s = fma_rn(s, f2, T(-0.7181223017785005122317));  // -(2pi)^15 / 15!
    s = fma_rn(s, f2, T(3.819952584848282127734));    // (2pi)^13 / 13!
    s = fma_rn(s, f2, T(-15.09464257682299039183));   // -(2pi)^11 / 11!
    s = fma_rn(s, f2, T(42.05869394489765314499));    // (2pi)^9 / 9!
    s = fma_rn(s, f2, T(-76.70585975306138584163));   // -(2pi)^7 / 7!
    s = fma_rn(s, f2, T(81.60524927607505420340));    // (2pi)^5 / 5!
    s = fma_rn(s, f2, T(-41.34170224039976023397));   // -(2pi)^3 / 3!
    s = fma_rn(s, f2, T(6.283185307179586476925));    // 2pi
    c = T(-0.03638284114254567077175);                // -(2pi)^18 / 18!
    c = fma_rn(c, f2, T(0.2820059684557912150703));   // (2pi)^16 / 16!
    c = fma_rn(c, f2, T(-1.714390711088672065422));   // -(2pi)^14 / 14!
    c = fma_rn(c, f2, T(7.903536371318468804212));    // (2pi)^12 / 12!
    c = fma_rn(c, f2, T(-26.42625678337439745290));   // -(2pi)^10 / 10!
    c = fma_rn(c, f2, T(60.24464137187666036272));    // (2pi)^8 / 8!
    c = fma_rn(c, f2, T(-85.45681720669372773602));   // -(2pi)^6 / 6!
    c = fma_rn(c, f2, T(64.93939402266829149096));    // (2pi)^4 / 4!
    c = fma_rn(c, f2, T(-19.73920880217871723767));   // -(2pi)^2 / 2!
    c = fma_rn(c, f2, T(1));
  }
  s = s * f;
  switch (qn & 3) {
    case 0:
      return {s, c};
    case 1:
      return {c, -s};
    case 2:
      return {-s, -c};
    default:
      return {-c, s};
  }
}

// ---- distributions ------------------------------------------------------------------------------

// Uniform in [0, 1): float from one word, double from two (hi, lo).
PORTA_HOST_DEVICE inline float uniform_float(std::uint32_t w) {
  return scale_down<float>(uniform_int24(w));
}
PORTA_HOST_DEVICE inline double uniform_double(std::uint32_t hi, std::uint32_t lo) {
  return scale_down<double>(uniform_int53(hi, lo));
}

// Box-Muller: two standard normals from two uniform integers a (radius) and b (angle) of
// kUniformBits<T> bits: r = sqrt(-2 ln u), u = (a + 1) / 2^bits in (0, 1]; angle 2 pi b / 2^bits.
// {r cos, r sin}.
template <class T>
PORTA_HOST_DEVICE inline SinCos<T> box_muller(Bits<T> a, Bits<T> b) {
  const T u = scale_down<T>(a + 1);
  const T r = std::sqrt(T(-2) * log_unit(u));
  const SinCos<T> sc = sincos_turn<T>(b);
  return {r * sc.sin, r * sc.cos};
}

// Normals of one block: float gives four ({cos, sin} of words 0, 1 then of words 2, 3), double two
// ({cos, sin} of the 53-bit integers of words 0, 1 and 2, 3).
template <class T>
PORTA_HOST_DEVICE inline SinCos<T> normal_pair(std::uint32_t w0, std::uint32_t w1, std::uint32_t w2, std::uint32_t w3) {
  if constexpr (sizeof(T) == 4) {
    (void)w2;
    (void)w3;
    return box_muller<T>(uniform_int24(w0), uniform_int24(w1));
  } else {
    return box_muller<T>(uniform_int53(w0, w1), uniform_int53(w2, w3));
  }
}

// Values of T per Philox block: uniform float 4, uniform double 2, normal float 4, normal double 2.
template <class T>
inline constexpr int kPerBlock = sizeof(T) == 4 ? 4 : 2;

// Element j (0 <= j < kPerBlock<T>) of a block, for the built-ins: uniform or normal.
template <class T, bool Normal>
PORTA_HOST_DEVICE inline void block_values(const Words& w, T* out) {
  if constexpr (!Normal) {
    if constexpr (sizeof(T) == 4) {
      for (int j = 0; j < 4; ++j) out[j] = uniform_float(w.v[j]);
    } else {
      out[0] = uniform_double(w.v[0], w.v[1]);
      out[1] = uniform_double(w.v[2], w.v[3]);
    }
  } else if constexpr (sizeof(T) == 4) {
    const SinCos<float> a = normal_pair<float>(w.v[0], w.v[1], 0, 0);
    const SinCos<float> b = normal_pair<float>(w.v[2], w.v[3], 0, 0);
    out[0] = a.cos;
    out[1] = a.sin;
    out[2] = b.cos;
    out[3] = b.sin;
  } else {
    const SinCos<double> a = normal_pair<double>(w.v[0], w.v[1], w.v[2], w.v[3]);
    out[0] = a.cos;
    out[1] = a.sin;
  }
}

}  // namespace porta::detail::philox
