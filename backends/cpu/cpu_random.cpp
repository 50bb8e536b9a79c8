// SPDX-License-Identifier: Apache-2.0
// Random numbers of the CPU backend: Philox4x32-10 blocks and the maps of porta/detail/philox.hpp,
// block by block over the OpenMP team. Element i depends on (seed, stream, offset, i) only, so the
// bits do not depend on the thread count and equal the GPU's.
//
// Philox is the cost: ten rounds of two 32 x 32 -> 64-bit multiplies per block, five per 32-bit
// word. On x86-64 sixteen blocks run side by side in AVX-512 lanes where the CPU has them, else
// eight in AVX2 lanes, else four in SSE2 lanes (pmuludq gives a 64-bit product per pair of lanes),
// and the uniform maps run on the same vectors: integer shifts and exact conversions, so the values
// are the scalar definition's bit for bit. Normals on AVX-512 and on AVX2+FMA run philox.hpp's log
// and sin/cos on vectors, operation for operation; on SSE2 they take their words from the vector
// code and map them with philox.hpp's scalar functions.
// PORTA_CPU_RANDOM_ISA=base|avx2 caps the path (read once), so that one machine tests them all.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#define PORTA_RANDOM_SSE2 1
#else
#define PORTA_RANDOM_SSE2 0
#endif
// AVX2 (eight blocks a vector) and AVX-512 (sixteen) are compiled per function and chosen at run
// time: porta is built for baseline x86-64.
#if PORTA_RANDOM_SSE2 && defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define PORTA_RANDOM_AVX2 1
#define PORTA_TARGET_AVX2 __attribute__((target("avx2")))
#define PORTA_TARGET_AVX2_FMA __attribute__((target("avx2,fma")))
// AVX-512 F/DQ/BW/VL: cpu_isa()'s avx512 set. DQ converts between 64-bit integers and doubles.
#define PORTA_TARGET_AVX512 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma")))
#else
#define PORTA_RANDOM_AVX2 0
#endif

#include "cpu_common.hpp"
#include "cpu_isa.hpp"
#include "cpu_kernels.hpp"
#include "porta/detail/philox.hpp"

namespace porta::detail::cpu {
namespace {

// Outputs at least this large are written with non-temporal stores (when 16-byte aligned): nobody
// reads them from cache soon, and streaming saves the read-for-ownership of every line.
inline constexpr std::int64_t kStreamBytes = std::int64_t(8) << 20;

#if PORTA_RANDOM_SSE2

// The round keys of `seed`, broadcast: k[2r], k[2r + 1] for round r (made once per range, not per
// block).
struct RoundKeys {
  __m128i k[20];
  std::uint32_t s[20];  // the same keys as scalars, for broadcasts into wider vectors
  explicit RoundKeys(std::uint64_t seed) {
    std::uint32_t k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
    for (int r = 0; r < 10; ++r) {
      if (r > 0) {
        k0 += philox::kW0;
        k1 += philox::kW1;
      }
      k[2 * r] = _mm_set1_epi32(static_cast<int>(k0));
      k[2 * r + 1] = _mm_set1_epi32(static_cast<int>(k1));
      s[2 * r] = k0;
      s[2 * r + 1] = k1;
    }
  }
};

// Word j of blocks first .. first + 3 in w[j] (lane i: block first + i).
void philox_x4(const RoundKeys& keys, std::uint64_t stream, std::uint64_t first, __m128i w[4]) {
  const auto lo = [](std::uint64_t v) { return static_cast<int>(static_cast<std::uint32_t>(v)); };
  const auto hi = [](std::uint64_t v) { return static_cast<int>(static_cast<std::uint32_t>(v >> 32)); };
  __m128i c0 = _mm_setr_epi32(lo(first), lo(first + 1), lo(first + 2), lo(first + 3));
  __m128i c1 = _mm_setr_epi32(hi(first), hi(first + 1), hi(first + 2), hi(first + 3));
  __m128i c2 = _mm_set1_epi32(lo(stream));
  __m128i c3 = _mm_set1_epi32(hi(stream));
  const __m128i m0 = _mm_set1_epi32(static_cast<int>(philox::kM0));
  const __m128i m1 = _mm_set1_epi32(static_cast<int>(philox::kM1));
  // a * m as 64-bit products: lanes 0 and 2 from pmuludq on a, lanes 1 and 3 on a shifted down.
  const auto mul = [](__m128i a, __m128i m, __m128i& p_lo, __m128i& p_hi) {
    const __m128i e = _mm_shuffle_epi32(_mm_mul_epu32(a, m), _MM_SHUFFLE(3, 1, 2, 0));
    const __m128i o = _mm_shuffle_epi32(_mm_mul_epu32(_mm_srli_epi64(a, 32), m), _MM_SHUFFLE(3, 1, 2, 0));
    p_lo = _mm_unpacklo_epi32(e, o);
    p_hi = _mm_unpackhi_epi32(e, o);
  };
  for (int r = 0; r < 10; ++r) {
    __m128i p0_lo, p0_hi, p1_lo, p1_hi;
    mul(c0, m0, p0_lo, p0_hi);
    mul(c2, m1, p1_lo, p1_hi);
    c0 = _mm_xor_si128(_mm_xor_si128(p1_hi, c1), keys.k[2 * r]);
    c1 = p1_lo;
    c2 = _mm_xor_si128(_mm_xor_si128(p0_hi, c3), keys.k[2 * r + 1]);
    c3 = p0_lo;
  }
  w[0] = c0;
  w[1] = c1;
  w[2] = c2;
  w[3] = c3;
}

template <bool Nt>
void put(float* p, __m128 v) {
  if constexpr (Nt) {
    _mm_stream_ps(p, v);
  } else {
    _mm_storeu_ps(p, v);
  }
}
template <bool Nt>
void put(double* p, __m128d v) {
  if constexpr (Nt) {
    _mm_stream_pd(p, v);
  } else {
    _mm_storeu_pd(p, v);
  }
}

// Uniform floats of four blocks at y: (w >> 8) * 2^-24, converted exactly (w >> 8 < 2^24).
template <bool Nt>
void uniform_x4(const __m128i w[4], float* y) {
  const __m128 scale = _mm_set1_ps(5.9604644775390625e-08f);
  __m128 v[4];
  for (int j = 0; j < 4; ++j) v[j] = _mm_mul_ps(_mm_cvtepi32_ps(_mm_srli_epi32(w[j], 8)), scale);
  _MM_TRANSPOSE4_PS(v[0], v[1], v[2], v[3]);  // word-major to block-major
  for (int b = 0; b < 4; ++b) put<Nt>(y + 4 * b, v[b]);
}

// Uniform doubles of two words (hi, lo) per lane pair: k = (hi:lo) >> 11 < 2^53, as k_hi 2^32 + k_lo,
// each half converted exactly through the 2^52 bias, their sum exact, times 2^-53.
inline __m128d uniform53(__m128i hi_lo) {
  const __m128i k = _mm_srli_epi64(hi_lo, 11);
  const __m128i bias = _mm_set1_epi64x(0x4330000000000000LL);
  const __m128d two52 = _mm_set1_pd(4503599627370496.0);
  const __m128d dlo =
      _mm_sub_pd(_mm_castsi128_pd(_mm_or_si128(_mm_and_si128(k, _mm_set1_epi64x(0xFFFFFFFFLL)), bias)), two52);
  const __m128d dhi = _mm_sub_pd(_mm_castsi128_pd(_mm_or_si128(_mm_srli_epi64(k, 32), bias)), two52);
  const __m128d v = _mm_add_pd(_mm_mul_pd(dhi, _mm_set1_pd(4294967296.0)), dlo);
  return _mm_mul_pd(v, _mm_set1_pd(1.1102230246251565404236316680908203125e-16));
}

// Uniform doubles of four blocks at y: element 2b from words (0, 1) of block b, 2b + 1 from (2, 3).
template <bool Nt>
void uniform_x4(const __m128i w[4], double* y) {
  // 64-bit lanes (hi << 32) | lo, blocks 0, 1 from the low halves, 2, 3 from the high ones.
  const __m128d a01 = uniform53(_mm_unpacklo_epi32(w[1], w[0])), a23 = uniform53(_mm_unpackhi_epi32(w[1], w[0]));
  const __m128d b01 = uniform53(_mm_unpacklo_epi32(w[3], w[2])), b23 = uniform53(_mm_unpackhi_epi32(w[3], w[2]));
  put<Nt>(y, _mm_unpacklo_pd(a01, b01));
  put<Nt>(y + 2, _mm_unpackhi_pd(a01, b01));
  put<Nt>(y + 4, _mm_unpacklo_pd(a23, b23));
  put<Nt>(y + 6, _mm_unpackhi_pd(a23, b23));
}

// Normal values of L consecutive blocks whose Philox words lie lane by lane in words[j][lane]
// (as the vector generators store them), by the scalar definition.
template <class T, int L>
void normal_blocks(const std::uint32_t (&words)[4][L], T* y) {
  for (int i = 0; i < L; ++i)
    philox::block_values<T, true>(philox::Words{{words[0][i], words[1][i], words[2][i], words[3][i]}},
                                  y + i * philox::kPerBlock<T>);
}

// Blocks [b0, b1) of four at a time, all their values inside y.
template <class T, bool Normal, bool Nt>
void fill_x4(std::int64_t b0, std::int64_t b1, std::uint64_t seed, std::uint64_t stream, std::uint64_t offset, T* y) {
  constexpr std::int64_t per = philox::kPerBlock<T>;
  const RoundKeys keys(seed);
  for (std::int64_t b = b0; b < b1; b += 4) {
    __m128i w[4];
    philox_x4(keys, stream, offset + static_cast<std::uint64_t>(b), w);
    if constexpr (Normal) {
      alignas(16) std::uint32_t words[4][4];
      for (int j = 0; j < 4; ++j) _mm_store_si128(reinterpret_cast<__m128i*>(words[j]), w[j]);
      normal_blocks<T>(words, y + b * per);
    } else {
      uniform_x4<Nt>(w, y + b * per);
    }
  }
  if constexpr (Nt) _mm_sfence();
}

#endif

#if PORTA_RANDOM_AVX2

// philox_x4 on eight blocks: every shuffle and unpack works within 128-bit halves, so each half is
// the SSE2 code's four blocks.
PORTA_TARGET_AVX2 void mul_x8(__m256i a, __m256i m, __m256i& p_lo, __m256i& p_hi) {
  const __m256i e = _mm256_shuffle_epi32(_mm256_mul_epu32(a, m), _MM_SHUFFLE(3, 1, 2, 0));
  const __m256i o = _mm256_shuffle_epi32(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), m), _MM_SHUFFLE(3, 1, 2, 0));
  p_lo = _mm256_unpacklo_epi32(e, o);
  p_hi = _mm256_unpackhi_epi32(e, o);
}

PORTA_TARGET_AVX2 void philox_x8(const RoundKeys& keys, std::uint64_t stream, std::uint64_t first, __m256i w[4]) {
  std::uint32_t lo[8], hi[8];
  for (int i = 0; i < 8; ++i) {
    lo[i] = static_cast<std::uint32_t>(first + static_cast<std::uint64_t>(i));
    hi[i] = static_cast<std::uint32_t>((first + static_cast<std::uint64_t>(i)) >> 32);
  }
  __m256i c0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lo));
  __m256i c1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(hi));
  __m256i c2 = _mm256_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(stream)));
  __m256i c3 = _mm256_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(stream >> 32)));
  const __m256i m0 = _mm256_set1_epi32(static_cast<int>(philox::kM0));
  const __m256i m1 = _mm256_set1_epi32(static_cast<int>(philox::kM1));
  for (int r = 0; r < 10; ++r) {
    __m256i p0_lo, p0_hi, p1_lo, p1_hi;
    mul_x8(c0, m0, p0_lo, p0_hi);
    mul_x8(c2, m1, p1_lo, p1_hi);
    c0 = _mm256_xor_si256(_mm256_xor_si256(p1_hi, c1), _mm256_broadcastsi128_si256(keys.k[2 * r]));
    c1 = p1_lo;
    c2 = _mm256_xor_si256(_mm256_xor_si256(p0_hi, c3), _mm256_broadcastsi128_si256(keys.k[2 * r + 1]));
    c3 = p0_lo;
  }
  w[0] = c0;
  w[1] = c1;
  w[2] = c2;
  w[3] = c3;
}

template <bool Nt>
PORTA_TARGET_AVX2 void put8(float* p, __m256 v) {
  if constexpr (Nt) {
    _mm256_stream_ps(p, v);
  } else {
    _mm256_storeu_ps(p, v);
  }
}
template <bool Nt>
PORTA_TARGET_AVX2 void put8(double* p, __m256d v) {
  if constexpr (Nt) {
    _mm256_stream_pd(p, v);
  } else {
    _mm256_storeu_pd(p, v);
  }
}

template <bool Nt>
PORTA_TARGET_AVX2 void uniform_x8(const __m256i w[4], float* y) {
  const __m256 scale = _mm256_set1_ps(5.9604644775390625e-08f);
  __m256 v[4];
  for (int j = 0; j < 4; ++j) v[j] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(w[j], 8)), scale);
  // Word-major to block-major: r[b] holds block b in its low half and block b + 4 in its high one.
  const __m256 t0 = _mm256_unpacklo_ps(v[0], v[1]), t1 = _mm256_unpackhi_ps(v[0], v[1]);
  const __m256 t2 = _mm256_unpacklo_ps(v[2], v[3]), t3 = _mm256_unpackhi_ps(v[2], v[3]);
  const __m256 r0 = _mm256_shuffle_ps(t0, t2, 0x44), r1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 r2 = _mm256_shuffle_ps(t1, t3, 0x44), r3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  put8<Nt>(y, _mm256_permute2f128_ps(r0, r1, 0x20));
  put8<Nt>(y + 8, _mm256_permute2f128_ps(r2, r3, 0x20));
  put8<Nt>(y + 16, _mm256_permute2f128_ps(r0, r1, 0x31));
  put8<Nt>(y + 24, _mm256_permute2f128_ps(r2, r3, 0x31));
}

PORTA_TARGET_AVX2 __m256d uniform53_x8(__m256i hi_lo) {
  const __m256i k = _mm256_srli_epi64(hi_lo, 11);
  const __m256i bias = _mm256_set1_epi64x(0x4330000000000000LL);
  const __m256d two52 = _mm256_set1_pd(4503599627370496.0);
  const __m256d dlo = _mm256_sub_pd(
      _mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(k, _mm256_set1_epi64x(0xFFFFFFFFLL)), bias)), two52);
  const __m256d dhi = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64(k, 32), bias)), two52);
  const __m256d v = _mm256_add_pd(_mm256_mul_pd(dhi, _mm256_set1_pd(4294967296.0)), dlo);
  return _mm256_mul_pd(v, _mm256_set1_pd(1.1102230246251565404236316680908203125e-16));
}

template <bool Nt>
PORTA_TARGET_AVX2 void uniform_x8(const __m256i w[4], double* y) {
  // Halves: blocks 0, 1 | 4, 5 from the low words, 2, 3 | 6, 7 from the high ones.
  const __m256d a01 = uniform53_x8(_mm256_unpacklo_epi32(w[1], w[0]));
  const __m256d a23 = uniform53_x8(_mm256_unpackhi_epi32(w[1], w[0]));
  const __m256d b01 = uniform53_x8(_mm256_unpacklo_epi32(w[3], w[2]));
  const __m256d b23 = uniform53_x8(_mm256_unpackhi_epi32(w[3], w[2]));
  const __m256d u0 = _mm256_unpacklo_pd(a01, b01), u1 = _mm256_unpackhi_pd(a01, b01);
  const __m256d u2 = _mm256_unpacklo_pd(a23, b23), u3 = _mm256_unpackhi_pd(a23, b23);
  put8<Nt>(y, _mm256_permute2f128_pd(u0, u1, 0x20));
  put8<Nt>(y + 4, _mm256_permute2f128_pd(u2, u3, 0x20));
  put8<Nt>(y + 8, _mm256_permute2f128_pd(u0, u1, 0x31));
  put8<Nt>(y + 12, _mm256_permute2f128_pd(u2, u3, 0x31));
}

// Float normals of eight blocks, philox.hpp's box_muller on vectors: the same operations in the same
// order (its fma_rn are vfmadd, its / and sqrt correctly rounded as the scalar ones are), with its
// branches as blends, so the bits are the scalar function's.
PORTA_TARGET_AVX2_FMA __m256 log_unit_x8(__m256 u) {
  const __m256i bits = _mm256_castps_si256(u);
  __m256i e = _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127));
  __m256 m = _mm256_castsi256_ps(
      _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x7FFFFF)), _mm256_set1_epi32(0x3F800000)));
  const __m256 big = _mm256_cmp_ps(m, _mm256_set1_ps(float(1.41421356237309504880)), _CMP_GT_OQ);
  m = _mm256_blendv_ps(m, _mm256_mul_ps(m, _mm256_set1_ps(0.5f)), big);
  e = _mm256_sub_epi32(e, _mm256_castps_si256(big));  // mask lanes are -1
  const __m256 f = _mm256_sub_ps(m, _mm256_set1_ps(1.0f));
  const __m256 s = _mm256_div_ps(f, _mm256_add_ps(m, _mm256_set1_ps(1.0f)));
  const __m256 z = _mm256_mul_ps(s, s);
  __m256 p = _mm256_set1_ps(float(2.0 / 13));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(float(2.0 / 11)));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(float(2.0 / 9)));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(float(2.0 / 7)));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(float(2.0 / 5)));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(float(2.0 / 3)));
  const __m256 lnm = _mm256_fmadd_ps(_mm256_mul_ps(s, z), p, _mm256_add_ps(s, s));
  const __m256 fe = _mm256_cvtepi32_ps(e);
  return _mm256_fmadd_ps(fe, _mm256_set1_ps(float(0.693138122558593750)),
                         _mm256_fmadd_ps(fe, _mm256_set1_ps(float(9.0580013515594172321e-06)), lnm));
}

// {r cos, r sin} of Box-Muller from 24-bit integers a (radius) and b (angle).
PORTA_TARGET_AVX2_FMA void box_muller_x8(__m256i a, __m256i b, __m256& out_cos, __m256& out_sin) {
  const __m256 u = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(a, _mm256_set1_epi32(1))),
                                 _mm256_set1_ps(5.9604644775390625e-08f));
  const __m256 r = _mm256_sqrt_ps(_mm256_mul_ps(_mm256_set1_ps(-2.0f), log_unit_x8(u)));
  const __m256i qn = _mm256_srli_epi32(_mm256_add_epi32(b, _mm256_set1_epi32(1 << 21)), 22);
  const __m256i rr = _mm256_sub_epi32(b, _mm256_slli_epi32(qn, 22));
  const __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(rr), _mm256_set1_ps(5.9604644775390625e-08f));
  const __m256 f2 = _mm256_mul_ps(f, f);
  __m256 s = _mm256_set1_ps(float(42.05869394489765314));
  s = _mm256_fmadd_ps(s, f2, _mm256_set1_ps(float(-76.70585975306138584)));
  s = _mm256_fmadd_ps(s, f2, _mm256_set1_ps(float(81.60524927607505420)));
  s = _mm256_fmadd_ps(s, f2, _mm256_set1_ps(float(-41.34170224039976023)));
  s = _mm256_fmadd_ps(s, f2, _mm256_set1_ps(float(6.283185307179586477)));
  __m256 c = _mm256_set1_ps(float(-26.42625678337439745));
  c = _mm256_fmadd_ps(c, f2, _mm256_set1_ps(float(60.24464137187666036)));
  c = _mm256_fmadd_ps(c, f2, _mm256_set1_ps(float(-85.45681720669372774)));
  c = _mm256_fmadd_ps(c, f2, _mm256_set1_ps(float(64.93939402266829149)));
  c = _mm256_fmadd_ps(c, f2, _mm256_set1_ps(float(-19.73920880217871724)));
  c = _mm256_fmadd_ps(c, f2, _mm256_set1_ps(1.0f));
  s = _mm256_mul_ps(s, f);
  // Quarter turns: odd q gives {c, -s}, q of 2 or 3 negates both.
  const __m256 sign = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(0x80000000u)));
  const __m256 odd =
      _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(qn, _mm256_set1_epi32(1)), _mm256_set1_epi32(1)));
  const __m256 neg = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_srli_epi32(qn, 1), 31));
  const __m256 sn = _mm256_blendv_ps(s, c, odd);
  const __m256 cs = _mm256_blendv_ps(c, _mm256_xor_ps(s, sign), odd);
  out_sin = _mm256_mul_ps(r, _mm256_xor_ps(sn, neg));
  out_cos = _mm256_mul_ps(r, _mm256_xor_ps(cs, neg));
}

// Normal floats of eight blocks at y: {cos, sin} of words (0, 1), then of words (2, 3), transposed
// to block-major order as uniform_x8 does.
template <bool Nt>
PORTA_TARGET_AVX2_FMA void normal_x8(const __m256i w[4], float* y) {
  __m256 v[4];
  box_muller_x8(_mm256_srli_epi32(w[0], 8), _mm256_srli_epi32(w[1], 8), v[0], v[1]);
  box_muller_x8(_mm256_srli_epi32(w[2], 8), _mm256_srli_epi32(w[3], 8), v[2], v[3]);
  const __m256 t0 = _mm256_unpacklo_ps(v[0], v[1]), t1 = _mm256_unpackhi_ps(v[0], v[1]);
  const __m256 t2 = _mm256_unpacklo_ps(v[2], v[3]), t3 = _mm256_unpackhi_ps(v[2], v[3]);
  const __m256 r0 = _mm256_shuffle_ps(t0, t2, 0x44), r1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 r2 = _mm256_shuffle_ps(t1, t3, 0x44), r3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  put8<Nt>(y, _mm256_permute2f128_ps(r0, r1, 0x20));
  put8<Nt>(y + 8, _mm256_permute2f128_ps(r2, r3, 0x20));
  put8<Nt>(y + 16, _mm256_permute2f128_ps(r0, r1, 0x31));
  put8<Nt>(y + 24, _mm256_permute2f128_ps(r2, r3, 0x31));
}

// Double normals on four lanes: philox.hpp's double log_unit, sincos_turn and box_muller,
// operation for operation. AVX2 has no 64-bit integer <-> double conversion; the ones needed are
// exact by construction: small signed integers (|e| < 2^11, |r| <= 2^50) through the 1.5 * 2^52
// bias, and a + 1 <= 2^53 as its two 32-bit halves, whose scaled sum is exact.
PORTA_TARGET_AVX2_FMA inline __m256d small_int_to_double(__m256i x) {
  const __m256d magic = _mm256_set1_pd(6755399441055744.0);  // 1.5 * 2^52
  return _mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(x, _mm256_castpd_si256(magic))), magic);
}

PORTA_TARGET_AVX2_FMA inline __m256d uint53_to_double(__m256i k) {
  const __m256i bias = _mm256_set1_epi64x(0x4330000000000000LL);
  const __m256d two52 = _mm256_set1_pd(4503599627370496.0);
  const __m256d dlo = _mm256_sub_pd(
      _mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(k, _mm256_set1_epi64x(0xFFFFFFFFLL)), bias)), two52);
  const __m256d dhi = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64(k, 32), bias)), two52);
  return _mm256_add_pd(_mm256_mul_pd(dhi, _mm256_set1_pd(4294967296.0)), dlo);
}

PORTA_TARGET_AVX2_FMA inline __m256d log_unit_x4d(__m256d u) {
  const __m256i bits = _mm256_castpd_si256(u);
  __m256i e = _mm256_sub_epi64(_mm256_srli_epi64(bits, 52), _mm256_set1_epi64x(1023));
  __m256d m = _mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi64x(0xFFFFFFFFFFFFFLL)),
                                                  _mm256_set1_epi64x(0x3FF0000000000000LL)));
  const __m256d big = _mm256_cmp_pd(m, _mm256_set1_pd(1.41421356237309504880), _CMP_GT_OQ);
  m = _mm256_blendv_pd(m, _mm256_mul_pd(m, _mm256_set1_pd(0.5)), big);
  e = _mm256_sub_epi64(e, _mm256_castpd_si256(big));  // mask lanes are -1
  const __m256d f = _mm256_sub_pd(m, _mm256_set1_pd(1.0));
  const __m256d s = _mm256_div_pd(f, _mm256_add_pd(m, _mm256_set1_pd(1.0)));
  const __m256d z = _mm256_mul_pd(s, s);
  __m256d p = _mm256_set1_pd(2.0 / 23);
  p = _mm256_fmadd_pd(p, z, _mm256_set1_pd(2.0 / 21));
  p = _mm256_fmadd_pd(p, z, _mm256_set1_pd(2.0 / 19));
  p = _mm256_fmadd_pd(p, z, _mm256_set1_pd(2.0 / 17));
  p = _mm256_fmadd_pd(p, z, _mm256_set1_pd(2.0 / 15));
  p = _mm256_fmadd_pd(p, z, _mm256_set1_pd(2.0 / 13));
  p = _mm256_fmadd_pd(p, z, _mm256_set1_pd(2.0 / 11));
  p = _mm256_fmadd_pd(p, z, _mm256_set1_pd(2.0 / 9));
  p = _mm256_fmadd_pd(p, z, _mm256_set1_pd(2.0 / 7));
  p = _mm256_fmadd_pd(p, z, _mm256_set1_pd(2.0 / 5));
  p = _mm256_fmadd_pd(p, z, _mm256_set1_pd(2.0 / 3));
  const __m256d lnm = _mm256_fmadd_pd(_mm256_mul_pd(s, z), p, _mm256_add_pd(s, s));
  const __m256d fe = small_int_to_double(e);
  return _mm256_fmadd_pd(fe, _mm256_set1_pd(0.693147180369123816490),
                         _mm256_fmadd_pd(fe, _mm256_set1_pd(1.908214929270587816144e-10), lnm));
}

PORTA_TARGET_AVX2_FMA inline void box_muller_x4d(__m256i a, __m256i b, __m256d& out_cos, __m256d& out_sin) {
  const __m256d two_m53 = _mm256_set1_pd(1.1102230246251565404236316680908203125e-16);
  const __m256d u = _mm256_mul_pd(uint53_to_double(_mm256_add_epi64(a, _mm256_set1_epi64x(1))), two_m53);
  const __m256d r = _mm256_sqrt_pd(_mm256_mul_pd(_mm256_set1_pd(-2.0), log_unit_x4d(u)));
  const __m256i qn = _mm256_srli_epi64(_mm256_add_epi64(b, _mm256_set1_epi64x(std::int64_t(1) << 50)), 51);
  const __m256i rr = _mm256_sub_epi64(b, _mm256_slli_epi64(qn, 51));
  const __m256d f = _mm256_mul_pd(small_int_to_double(rr), two_m53);
  const __m256d f2 = _mm256_mul_pd(f, f);
  __m256d s = _mm256_set1_pd(0.1042291622081398411727);
  s = _mm256_fmadd_pd(s, f2, _mm256_set1_pd(-0.7181223017785005122317));
  s = _mm256_fmadd_pd(s, f2, _mm256_set1_pd(3.819952584848282127734));
  s = _mm256_fmadd_pd(s, f2, _mm256_set1_pd(-15.09464257682299039183));
  s = _mm256_fmadd_pd(s, f2, _mm256_set1_pd(42.05869394489765314499));
  s = _mm256_fmadd_pd(s, f2, _mm256_set1_pd(-76.70585975306138584163));
  s = _mm256_fmadd_pd(s, f2, _mm256_set1_pd(81.60524927607505420340));
  s = _mm256_fmadd_pd(s, f2, _mm256_set1_pd(-41.34170224039976023397));
  s = _mm256_fmadd_pd(s, f2, _mm256_set1_pd(6.283185307179586476925));
  __m256d c = _mm256_set1_pd(-0.03638284114254567077175);
  c = _mm256_fmadd_pd(c, f2, _mm256_set1_pd(0.2820059684557912150703));
  c = _mm256_fmadd_pd(c, f2, _mm256_set1_pd(-1.714390711088672065422));
  c = _mm256_fmadd_pd(c, f2, _mm256_set1_pd(7.903536371318468804212));
  c = _mm256_fmadd_pd(c, f2, _mm256_set1_pd(-26.42625678337439745290));
  c = _mm256_fmadd_pd(c, f2, _mm256_set1_pd(60.24464137187666036272));
  c = _mm256_fmadd_pd(c, f2, _mm256_set1_pd(-85.45681720669372773602));
  c = _mm256_fmadd_pd(c, f2, _mm256_set1_pd(64.93939402266829149096));
  c = _mm256_fmadd_pd(c, f2, _mm256_set1_pd(-19.73920880217871723767));
  c = _mm256_fmadd_pd(c, f2, _mm256_set1_pd(1.0));
  s = _mm256_mul_pd(s, f);
  const __m256d sign = _mm256_set1_pd(-0.0);
  const __m256d odd =
      _mm256_castsi256_pd(_mm256_cmpeq_epi64(_mm256_and_si256(qn, _mm256_set1_epi64x(1)), _mm256_set1_epi64x(1)));
  const __m256d neg = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_srli_epi64(qn, 1), 63));
  const __m256d sn = _mm256_blendv_pd(s, c, odd);
  const __m256d cs = _mm256_blendv_pd(c, _mm256_xor_pd(s, sign), odd);
  out_sin = _mm256_mul_pd(r, _mm256_xor_pd(sn, neg));
  out_cos = _mm256_mul_pd(r, _mm256_xor_pd(cs, neg));
}

// Normal doubles of eight blocks at y: as uniform_x8 pairs the words, blocks 0, 1 | 4, 5 from the
// low words and 2, 3 | 6, 7 from the high ones, {cos, sin} interleaved to element order.
template <bool Nt>
PORTA_TARGET_AVX2_FMA void normal_x8(const __m256i w[4], double* y) {
  __m256d c01, s01, c23, s23;
  box_muller_x4d(_mm256_srli_epi64(_mm256_unpacklo_epi32(w[1], w[0]), 11),
                 _mm256_srli_epi64(_mm256_unpacklo_epi32(w[3], w[2]), 11), c01, s01);
  box_muller_x4d(_mm256_srli_epi64(_mm256_unpackhi_epi32(w[1], w[0]), 11),
                 _mm256_srli_epi64(_mm256_unpackhi_epi32(w[3], w[2]), 11), c23, s23);
  const __m256d u0 = _mm256_unpacklo_pd(c01, s01), u1 = _mm256_unpackhi_pd(c01, s01);
  const __m256d u2 = _mm256_unpacklo_pd(c23, s23), u3 = _mm256_unpackhi_pd(c23, s23);
  put8<Nt>(y, _mm256_permute2f128_pd(u0, u1, 0x20));
  put8<Nt>(y + 4, _mm256_permute2f128_pd(u2, u3, 0x20));
  put8<Nt>(y + 8, _mm256_permute2f128_pd(u0, u1, 0x31));
  put8<Nt>(y + 12, _mm256_permute2f128_pd(u2, u3, 0x31));
}

// fill_x4 eight blocks at a time (normals need FMA too: the AVX2 level has it); y + b0 * per must
// be 32-byte aligned when Nt.
template <class T, bool Normal, bool Nt>
PORTA_TARGET_AVX2_FMA void fill_x8(std::int64_t b0, std::int64_t b1, std::uint64_t seed, std::uint64_t stream,
                                   std::uint64_t offset, T* y) {
  constexpr std::int64_t per = philox::kPerBlock<T>;
  const RoundKeys keys(seed);
  for (std::int64_t b = b0; b < b1; b += 8) {
    __m256i w[4];
    philox_x8(keys, stream, offset + static_cast<std::uint64_t>(b), w);
    if constexpr (Normal) {
      normal_x8<Nt>(w, y + b * per);
    } else {
      uniform_x8<Nt>(w, y + b * per);
    }
  }
  if constexpr (Nt) _mm_sfence();
}

#endif

#if PORTA_RANDOM_AVX2

// philox_x4 on sixteen blocks, as two vectors of eight 64-bit lanes whose low halves hold the
// words: vpmuludq reads only those halves and writes the whole product, so a round is a multiply,
// a shift for the high word and one vpternlogd for the two xors per pair of words, with no
// shuffles; the high halves carry junk that nothing reads. w[j][h] holds word j of blocks
// 8h .. 8h + 7.
PORTA_TARGET_AVX512 inline void philox_x16(const RoundKeys& keys, std::uint64_t stream, std::uint64_t first,
                                           __m512i w[4][2]) {
  const __m512i m0 = _mm512_set1_epi64(philox::kM0), m1 = _mm512_set1_epi64(philox::kM1);
  // The counters: 64-bit block numbers give lo(b) below and hi(b) above, the carry included.
  __m512i c0[2], c1[2], c2[2], c3[2];
  for (int h = 0; h < 2; ++h) {
    c0[h] = _mm512_add_epi64(
        _mm512_set1_epi64(static_cast<long long>(first)),
        _mm512_setr_epi64(8 * h, 8 * h + 1, 8 * h + 2, 8 * h + 3, 8 * h + 4, 8 * h + 5, 8 * h + 6, 8 * h + 7));
    c1[h] = _mm512_srli_epi64(c0[h], 32);
    c2[h] = _mm512_set1_epi64(static_cast<long long>(stream));
    c3[h] = _mm512_set1_epi64(static_cast<long long>(stream >> 32));
  }
  for (int r = 0; r < 10; ++r) {
    const __m512i k0 = _mm512_set1_epi32(static_cast<int>(keys.s[2 * r]));
    const __m512i k1 = _mm512_set1_epi32(static_cast<int>(keys.s[2 * r + 1]));
    for (int h = 0; h < 2; ++h) {
      const __m512i p0 = _mm512_mul_epu32(c0[h], m0), p1 = _mm512_mul_epu32(c2[h], m1);
      c0[h] = _mm512_ternarylogic_epi32(_mm512_srli_epi64(p1, 32), c1[h], k0, 0x96);
      c1[h] = p1;
      c2[h] = _mm512_ternarylogic_epi32(_mm512_srli_epi64(p0, 32), c3[h], k1, 0x96);
      c3[h] = p0;
    }
  }
  for (int h = 0; h < 2; ++h) {
    w[0][h] = c0[h];
    w[1][h] = c1[h];
    w[2][h] = c2[h];
    w[3][h] = c3[h];
  }
}

// Two words side by side: 64-bit lane b = (lo word of x, lo word of y) = x | y << 32.
PORTA_TARGET_AVX512 inline __m512i pair_words(__m512i x, __m512i y) {
  return _mm512_mask_shuffle_epi32(x, 0xAAAA, y, _MM_PERM_CDAB);
}

// Word j of all sixteen blocks in 32-bit lanes.
PORTA_TARGET_AVX512 inline __m512i pack_words(const __m512i (&w)[2]) {
  return _mm512_permutex2var_epi32(w[0], _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30),
                                   w[1]);
}

// Four vectors of sixteen 32-bit lanes, v[j] lane b = word j of block b, to block-major order:
// v[r] holds blocks 4r .. 4r + 3, four words each.
PORTA_TARGET_AVX512 inline void transpose_4x16(__m512i v[4]) {
  const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  // Pairs (v0, v1) and (v2, v3) of blocks 0 .. 7 and 8 .. 15 in 64-bit lanes.
  const __m512i a0 = _mm512_permutex2var_epi32(v[0], lo, v[1]), a1 = _mm512_permutex2var_epi32(v[0], hi, v[1]);
  const __m512i b0 = _mm512_permutex2var_epi32(v[2], lo, v[3]), b1 = _mm512_permutex2var_epi32(v[2], hi, v[3]);
  const __m512i qlo = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), qhi = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
  v[0] = _mm512_permutex2var_epi64(a0, qlo, b0);
  v[1] = _mm512_permutex2var_epi64(a0, qhi, b0);
  v[2] = _mm512_permutex2var_epi64(a1, qlo, b1);
  v[3] = _mm512_permutex2var_epi64(a1, qhi, b1);
}

template <bool Nt>
PORTA_TARGET_AVX512 inline void put16(float* p, __m512i v) {
  if constexpr (Nt) {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(p), v);
  } else {
    _mm512_storeu_si512(p, v);
  }
}
template <bool Nt>
PORTA_TARGET_AVX512 inline void put16(double* p, __m512d v) {
  if constexpr (Nt) {
    _mm512_stream_pd(p, v);
  } else {
    _mm512_storeu_pd(p, v);
  }
}

// Uniform floats of sixteen blocks. Pairing words (0, 1) and (2, 3) is the first half of the
// transpose to block order; the maps are elementwise and run between the halves.
template <bool Nt>
PORTA_TARGET_AVX512 inline void uniform_x16(const __m512i (&w)[4][2], float* y) {
  const __m512 scale = _mm512_set1_ps(5.9604644775390625e-08f);
  __m512i v[4] = {pair_words(w[0][0], w[1][0]), pair_words(w[0][1], w[1][1]), pair_words(w[2][0], w[3][0]),
                  pair_words(w[2][1], w[3][1])};
  for (int j = 0; j < 4; ++j)
    v[j] = _mm512_castps_si512(_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(v[j], 8)), scale));
  const __m512i qlo = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), qhi = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
  put16<Nt>(y, _mm512_permutex2var_epi64(v[0], qlo, v[2]));
  put16<Nt>(y + 16, _mm512_permutex2var_epi64(v[0], qhi, v[2]));
  put16<Nt>(y + 32, _mm512_permutex2var_epi64(v[1], qlo, v[3]));
  put16<Nt>(y + 48, _mm512_permutex2var_epi64(v[1], qhi, v[3]));
}

// Uniform doubles of sixteen blocks: (w0 << 32 | w1) and (w2 << 32 | w3) per block, their top 53
// bits converted exactly (AVX-512DQ), interleaved to element order.
template <bool Nt>
PORTA_TARGET_AVX512 inline void uniform_x16(const __m512i (&w)[4][2], double* y) {
  const __m512d scale = _mm512_set1_pd(1.1102230246251565404236316680908203125e-16);
  const __m512i qlo = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), qhi = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
  for (int h = 0; h < 2; ++h) {
    const __m512d a = _mm512_mul_pd(_mm512_cvtepu64_pd(_mm512_srli_epi64(pair_words(w[1][h], w[0][h]), 11)), scale);
    const __m512d b = _mm512_mul_pd(_mm512_cvtepu64_pd(_mm512_srli_epi64(pair_words(w[3][h], w[2][h]), 11)), scale);
    put16<Nt>(y + 16 * h, _mm512_permutex2var_pd(a, qlo, b));
    put16<Nt>(y + 16 * h + 8, _mm512_permutex2var_pd(a, qhi, b));
  }
}

// box_muller_x8 on sixteen lanes: philox.hpp's log_unit, sincos_turn and box_muller for float,
// operation for operation, with its branches as masked operations.
PORTA_TARGET_AVX512 inline __m512 log_unit_x16(__m512 u) {
  const __m512i bits = _mm512_castps_si512(u);
  __m512i e = _mm512_sub_epi32(_mm512_srli_epi32(bits, 23), _mm512_set1_epi32(127));
  __m512 m = _mm512_castsi512_ps(
      _mm512_or_si512(_mm512_and_si512(bits, _mm512_set1_epi32(0x7FFFFF)), _mm512_set1_epi32(0x3F800000)));
  const __mmask16 big = _mm512_cmp_ps_mask(m, _mm512_set1_ps(float(1.41421356237309504880)), _CMP_GT_OQ);
  m = _mm512_mask_mul_ps(m, big, m, _mm512_set1_ps(0.5f));
  e = _mm512_mask_add_epi32(e, big, e, _mm512_set1_epi32(1));
  const __m512 f = _mm512_sub_ps(m, _mm512_set1_ps(1.0f));
  const __m512 s = _mm512_div_ps(f, _mm512_add_ps(m, _mm512_set1_ps(1.0f)));
  const __m512 z = _mm512_mul_ps(s, s);
  __m512 p = _mm512_set1_ps(float(2.0 / 13));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(float(2.0 / 11)));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(float(2.0 / 9)));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(float(2.0 / 7)));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(float(2.0 / 5)));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(float(2.0 / 3)));
  const __m512 lnm = _mm512_fmadd_ps(_mm512_mul_ps(s, z), p, _mm512_add_ps(s, s));
  const __m512 fe = _mm512_cvtepi32_ps(e);
  return _mm512_fmadd_ps(fe, _mm512_set1_ps(float(0.693138122558593750)),
                         _mm512_fmadd_ps(fe, _mm512_set1_ps(float(9.0580013515594172321e-06)), lnm));
}

PORTA_TARGET_AVX512 inline void box_muller_x16(__m512i a, __m512i b, __m512& out_cos, __m512& out_sin) {
  const __m512 u = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(a, _mm512_set1_epi32(1))),
                                 _mm512_set1_ps(5.9604644775390625e-08f));
  const __m512 r = _mm512_sqrt_ps(_mm512_mul_ps(_mm512_set1_ps(-2.0f), log_unit_x16(u)));
  const __m512i qn = _mm512_srli_epi32(_mm512_add_epi32(b, _mm512_set1_epi32(1 << 21)), 22);
  const __m512i rr = _mm512_sub_epi32(b, _mm512_slli_epi32(qn, 22));
  const __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(rr), _mm512_set1_ps(5.9604644775390625e-08f));
  const __m512 f2 = _mm512_mul_ps(f, f);
  __m512 s = _mm512_set1_ps(float(42.05869394489765314));
  s = _mm512_fmadd_ps(s, f2, _mm512_set1_ps(float(-76.70585975306138584)));
  s = _mm512_fmadd_ps(s, f2, _mm512_set1_ps(float(81.60524927607505420)));
  s = _mm512_fmadd_ps(s, f2, _mm512_set1_ps(float(-41.34170224039976023)));
  s = _mm512_fmadd_ps(s, f2, _mm512_set1_ps(float(6.283185307179586477)));
  __m512 c = _mm512_set1_ps(float(-26.42625678337439745));
  c = _mm512_fmadd_ps(c, f2, _mm512_set1_ps(float(60.24464137187666036)));
  c = _mm512_fmadd_ps(c, f2, _mm512_set1_ps(float(-85.45681720669372774)));
  c = _mm512_fmadd_ps(c, f2, _mm512_set1_ps(float(64.93939402266829149)));
  c = _mm512_fmadd_ps(c, f2, _mm512_set1_ps(float(-19.73920880217871724)));
  c = _mm512_fmadd_ps(c, f2, _mm512_set1_ps(1.0f));
  s = _mm512_mul_ps(s, f);
  // Quarter turns: odd q gives {c, -s}, q of 2 or 3 negates both.
  const __mmask16 odd = _mm512_test_epi32_mask(qn, _mm512_set1_epi32(1));
  const __m512 neg = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_srli_epi32(qn, 1), 31));
  const __m512 sn = _mm512_mask_blend_ps(odd, s, c);
  const __m512 cs = _mm512_mask_blend_ps(odd, c, _mm512_xor_ps(s, _mm512_set1_ps(-0.0f)));
  out_sin = _mm512_mul_ps(r, _mm512_xor_ps(sn, neg));
  out_cos = _mm512_mul_ps(r, _mm512_xor_ps(cs, neg));
}

// Normal floats of sixteen blocks: {cos, sin} of words (0, 1), then of words (2, 3).
template <bool Nt>
PORTA_TARGET_AVX512 inline void normal_x16(const __m512i (&w)[4][2], float* y) {
  __m512 c01, s01, c23, s23;
  box_muller_x16(_mm512_srli_epi32(pack_words(w[0]), 8), _mm512_srli_epi32(pack_words(w[1]), 8), c01, s01);
  box_muller_x16(_mm512_srli_epi32(pack_words(w[2]), 8), _mm512_srli_epi32(pack_words(w[3]), 8), c23, s23);
  __m512i v[4] = {_mm512_castps_si512(c01), _mm512_castps_si512(s01), _mm512_castps_si512(c23),
                  _mm512_castps_si512(s23)};
  transpose_4x16(v);
  for (int r = 0; r < 4; ++r) put16<Nt>(y + 16 * r, v[r]);
}

// philox.hpp's double log_unit, sincos_turn and box_muller on eight lanes, operation for operation
// (its fma_rn are vfmadd, its / and sqrt correctly rounded; the integer <-> double conversions are
// exact: |e| < 2^11, |r| <= 2^50, a + 1 <= 2^53).
PORTA_TARGET_AVX512 inline __m512d log_unit_x8d(__m512d u) {
  const __m512i bits = _mm512_castpd_si512(u);
  __m512i e = _mm512_sub_epi64(_mm512_srli_epi64(bits, 52), _mm512_set1_epi64(1023));
  __m512d m = _mm512_castsi512_pd(_mm512_or_si512(_mm512_and_si512(bits, _mm512_set1_epi64(0xFFFFFFFFFFFFFLL)),
                                                  _mm512_set1_epi64(0x3FF0000000000000LL)));
  const __mmask8 big = _mm512_cmp_pd_mask(m, _mm512_set1_pd(1.41421356237309504880), _CMP_GT_OQ);
  m = _mm512_mask_mul_pd(m, big, m, _mm512_set1_pd(0.5));
  e = _mm512_mask_add_epi64(e, big, e, _mm512_set1_epi64(1));
  const __m512d f = _mm512_sub_pd(m, _mm512_set1_pd(1.0));
  const __m512d s = _mm512_div_pd(f, _mm512_add_pd(m, _mm512_set1_pd(1.0)));
  const __m512d z = _mm512_mul_pd(s, s);
  __m512d p = _mm512_set1_pd(2.0 / 23);
  p = _mm512_fmadd_pd(p, z, _mm512_set1_pd(2.0 / 21));
  p = _mm512_fmadd_pd(p, z, _mm512_set1_pd(2.0 / 19));
  p = _mm512_fmadd_pd(p, z, _mm512_set1_pd(2.0 / 17));
  p = _mm512_fmadd_pd(p, z, _mm512_set1_pd(2.0 / 15));
  p = _mm512_fmadd_pd(p, z, _mm512_set1_pd(2.0 / 13));
  p = _mm512_fmadd_pd(p, z, _mm512_set1_pd(2.0 / 11));
  p = _mm512_fmadd_pd(p, z, _mm512_set1_pd(2.0 / 9));
  p = _mm512_fmadd_pd(p, z, _mm512_set1_pd(2.0 / 7));
  p = _mm512_fmadd_pd(p, z, _mm512_set1_pd(2.0 / 5));
  p = _mm512_fmadd_pd(p, z, _mm512_set1_pd(2.0 / 3));
  const __m512d lnm = _mm512_fmadd_pd(_mm512_mul_pd(s, z), p, _mm512_add_pd(s, s));
  const __m512d fe = _mm512_cvtepi64_pd(e);
  return _mm512_fmadd_pd(fe, _mm512_set1_pd(0.693147180369123816490),
                         _mm512_fmadd_pd(fe, _mm512_set1_pd(1.908214929270587816144e-10), lnm));
}

// {r cos, r sin} of Box-Muller from 53-bit integers a (radius) and b (angle) in 64-bit lanes.
PORTA_TARGET_AVX512 inline void box_muller_x8d(__m512i a, __m512i b, __m512d& out_cos, __m512d& out_sin) {
  const __m512d two_m53 = _mm512_set1_pd(1.1102230246251565404236316680908203125e-16);
  const __m512d u = _mm512_mul_pd(_mm512_cvtepi64_pd(_mm512_add_epi64(a, _mm512_set1_epi64(1))), two_m53);
  const __m512d r = _mm512_sqrt_pd(_mm512_mul_pd(_mm512_set1_pd(-2.0), log_unit_x8d(u)));
  const __m512i qn = _mm512_srli_epi64(_mm512_add_epi64(b, _mm512_set1_epi64(std::int64_t(1) << 50)), 51);
  const __m512i rr = _mm512_sub_epi64(b, _mm512_slli_epi64(qn, 51));
  const __m512d f = _mm512_mul_pd(_mm512_cvtepi64_pd(rr), two_m53);
  const __m512d f2 = _mm512_mul_pd(f, f);
  __m512d s = _mm512_set1_pd(0.1042291622081398411727);
  s = _mm512_fmadd_pd(s, f2, _mm512_set1_pd(-0.7181223017785005122317));
  s = _mm512_fmadd_pd(s, f2, _mm512_set1_pd(3.819952584848282127734));
  s = _mm512_fmadd_pd(s, f2, _mm512_set1_pd(-15.09464257682299039183));
  s = _mm512_fmadd_pd(s, f2, _mm512_set1_pd(42.05869394489765314499));
  s = _mm512_fmadd_pd(s, f2, _mm512_set1_pd(-76.70585975306138584163));
  s = _mm512_fmadd_pd(s, f2, _mm512_set1_pd(81.60524927607505420340));
  s = _mm512_fmadd_pd(s, f2, _mm512_set1_pd(-41.34170224039976023397));
  s = _mm512_fmadd_pd(s, f2, _mm512_set1_pd(6.283185307179586476925));
  __m512d c = _mm512_set1_pd(-0.03638284114254567077175);
  c = _mm512_fmadd_pd(c, f2, _mm512_set1_pd(0.2820059684557912150703));
  c = _mm512_fmadd_pd(c, f2, _mm512_set1_pd(-1.714390711088672065422));
  c = _mm512_fmadd_pd(c, f2, _mm512_set1_pd(7.903536371318468804212));
  c = _mm512_fmadd_pd(c, f2, _mm512_set1_pd(-26.42625678337439745290));
  c = _mm512_fmadd_pd(c, f2, _mm512_set1_pd(60.24464137187666036272));
  c = _mm512_fmadd_pd(c, f2, _mm512_set1_pd(-85.45681720669372773602));
  c = _mm512_fmadd_pd(c, f2, _mm512_set1_pd(64.93939402266829149096));
  c = _mm512_fmadd_pd(c, f2, _mm512_set1_pd(-19.73920880217871723767));
  c = _mm512_fmadd_pd(c, f2, _mm512_set1_pd(1.0));
  s = _mm512_mul_pd(s, f);
  const __mmask8 odd = _mm512_test_epi64_mask(qn, _mm512_set1_epi64(1));
  const __m512d neg = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_srli_epi64(qn, 1), 63));
  const __m512d sn = _mm512_mask_blend_pd(odd, s, c);
  const __m512d cs = _mm512_mask_blend_pd(odd, c, _mm512_xor_pd(s, _mm512_set1_pd(-0.0)));
  out_sin = _mm512_mul_pd(r, _mm512_xor_pd(sn, neg));
  out_cos = _mm512_mul_pd(r, _mm512_xor_pd(cs, neg));
}

// Normal doubles of sixteen blocks: {cos, sin} of the 53-bit integers of words (0, 1) and (2, 3).
template <bool Nt>
PORTA_TARGET_AVX512 inline void normal_x16(const __m512i (&w)[4][2], double* y) {
  const __m512i qlo = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), qhi = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
  for (int h = 0; h < 2; ++h) {  // blocks 8h .. 8h + 7
    __m512d c, s;
    box_muller_x8d(_mm512_srli_epi64(pair_words(w[1][h], w[0][h]), 11),
                   _mm512_srli_epi64(pair_words(w[3][h], w[2][h]), 11), c, s);
    put16<Nt>(y + 16 * h, _mm512_permutex2var_pd(c, qlo, s));
    put16<Nt>(y + 16 * h + 8, _mm512_permutex2var_pd(c, qhi, s));
  }
}

// fill_x4 sixteen blocks at a time; y + b0 * per must be 64-byte aligned when Nt.
template <class T, bool Normal, bool Nt>
PORTA_TARGET_AVX512 void fill_x16(std::int64_t b0, std::int64_t b1, std::uint64_t seed, std::uint64_t stream,
                                  std::uint64_t offset, T* y) {
  constexpr std::int64_t per = philox::kPerBlock<T>;
  const RoundKeys keys(seed);
  for (std::int64_t b = b0; b < b1; b += 16) {
    __m512i w[4][2];
    philox_x16(keys, stream, offset + static_cast<std::uint64_t>(b), w);
    if constexpr (Normal) {
      normal_x16<Nt>(w, y + b * per);
    } else {
      uniform_x16<Nt>(w, y + b * per);
    }
  }
  if constexpr (Nt) _mm_sfence();
}

#endif

// The widest path this CPU runs, capped by PORTA_CPU_RANDOM_ISA (base|avx2, read once) so that an
// AVX-512 machine tests the narrower paths too. avx2 means AVX2 with FMA; baseline runs SSE2.
IsaLevel random_level() {
  static const IsaLevel value = [] {
    IsaLevel best = IsaLevel::baseline;
#if PORTA_RANDOM_AVX2
    const IsaLevel cpu = cpu_isa().level;
    if (cpu == IsaLevel::avx2 || cpu == IsaLevel::avx512) best = cpu;
#endif
    if (const char* cap = std::getenv("PORTA_CPU_RANDOM_ISA")) {
      if (std::strcmp(cap, "base") == 0) best = IsaLevel::baseline;
      if (std::strcmp(cap, "avx2") == 0 && best == IsaLevel::avx512) best = IsaLevel::avx2;
    }
    return best;
  }();
  return value;
}

template <class T, bool Normal>
void fill_random(std::int64_t n, std::uint64_t seed, std::uint64_t stream, std::uint64_t offset, T* y) {
  constexpr std::int64_t per = philox::kPerBlock<T>;
  const std::int64_t blocks = (n + per - 1) / per;
  const std::int64_t whole = n / per;  // blocks whose values all land in y
  const IsaLevel level = random_level();
  // Streaming stores need y aligned to the widest vector the path stores. Normals on SSE2 store
  // element by element and ignore it.
  const std::uintptr_t align = level == IsaLevel::avx512 ? 64 : 32;
  const bool nt =
      n * static_cast<std::int64_t>(sizeof(T)) >= kStreamBytes && reinterpret_cast<std::uintptr_t>(y) % align == 0;
  // Blocks [b, e) of whole vectors of `width` blocks, the end rounded down.
  const auto vector_end = [whole](std::int64_t b, std::int64_t b1, std::int64_t width) {
    return b + std::max<std::int64_t>(0, std::min(b1, whole) - b) / width * width;
  };
  (void)vector_end;
  (void)level;
  // A block costs about what a transcendental map costs per element. Ranges start at multiples of
  // 16 blocks (parallel_ranges' alignment), so an aligned y stays aligned for the streaming stores.
  parallel_ranges(blocks, kGrainTranscendental / per, [&](std::int64_t b0, std::int64_t b1) {
    std::int64_t b = b0;
#if PORTA_RANDOM_AVX2
    if (level == IsaLevel::avx512) {
      const std::int64_t e = vector_end(b, b1, 16);
      if (e > b) {
        if (nt) {
          fill_x16<T, Normal, true>(b, e, seed, stream, offset, y);
        } else {
          fill_x16<T, Normal, false>(b, e, seed, stream, offset, y);
        }
        b = e;
      }
    }
    if (level == IsaLevel::avx2 || level == IsaLevel::avx512) {
      const std::int64_t e = vector_end(b, b1, 8);
      if (e > b) {
        if (nt) {
          fill_x8<T, Normal, true>(b, e, seed, stream, offset, y);
        } else {
          fill_x8<T, Normal, false>(b, e, seed, stream, offset, y);
        }
        b = e;
      }
    }
#endif
#if PORTA_RANDOM_SSE2
    const std::int64_t e4 = vector_end(b, b1, 4);
    if (e4 > b) {
      if (nt) {
        fill_x4<T, Normal, true>(b, e4, seed, stream, offset, y);
      } else {
        fill_x4<T, Normal, false>(b, e4, seed, stream, offset, y);
      }
      b = e4;
    }
#endif
    for (; b < b1; ++b) {
      T v[per];
      philox::block_values<T, Normal>(philox::block(seed, stream, offset + static_cast<std::uint64_t>(b)), v);
      const std::int64_t i0 = b * per;
      const std::int64_t m = std::min(per, n - i0);
      for (std::int64_t j = 0; j < m; ++j) y[i0 + j] = v[j];
    }
  });
}

}  // namespace

porta_status random(int dev, porta_random_dist dist, porta_dtype dt, std::int64_t n, std::uint64_t seed,
                    std::uint64_t stream, std::uint64_t offset, void* y, porta_stream) noexcept {
  constexpr const char* fn = "random";
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  if (porta_status st = check::random(dist, dt, n, y); st != PORTA_OK) return st;
  if (n == 0) return PORTA_OK;
  const bool normal = raw_enum(dist) == PORTA_RANDOM_NORMAL;
  PORTA_CPU_TRY
  // Random numbers exist for the floating-point dtypes (the check above refused the others).
  bool real = false;
  with_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      real = true;
      if (normal) {
        fill_random<T, true>(n, seed, stream, offset, static_cast<T*>(y));
      } else {
        fill_random<T, false>(n, seed, stream, offset, static_cast<T*>(y));
      }
    }
  });
  return real ? PORTA_OK : check::random(dist, dt, n, y);
  PORTA_CPU_CATCH(fn)
}

}  // namespace porta::detail::cpu
