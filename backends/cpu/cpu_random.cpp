// SPDX-License-Identifier: Apache-2.0
// Random numbers of the CPU backend: Philox4x32-10 blocks and the maps of porta/detail/philox.hpp,
// block by block over the OpenMP team. Element i depends on (seed, stream, offset, i) only, so the
// bits do not depend on the thread count and equal the GPU's.
//
// Philox is the cost: ten rounds of two 32 x 32 -> 64-bit multiplies per block, five per 32-bit
// word. On x86-64 eight blocks run side by side in AVX2 lanes where the CPU has them, else four in
// SSE2 lanes (pmuludq gives a 64-bit product per pair of lanes), and the uniform maps run on the
// same vectors: integer shifts and exact conversions, so the values are the scalar definition's bit
// for bit. Float normals on AVX2+FMA run philox.hpp's log and sin/cos on vectors, operation for
// operation; double normals take their words from the vector code and map them with philox.hpp's
// scalar functions.
#include <algorithm>
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#define PORTA_RANDOM_SSE2 1
#else
#define PORTA_RANDOM_SSE2 0
#endif
// AVX2 (eight blocks a vector) is compiled per function and chosen at run time: porta is built for
// baseline x86-64.
#if PORTA_RANDOM_SSE2 && defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define PORTA_RANDOM_AVX2 1
#define PORTA_TARGET_AVX2 __attribute__((target("avx2")))
#define PORTA_TARGET_AVX2_FMA __attribute__((target("avx2,fma")))
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
  explicit RoundKeys(std::uint64_t seed) {
    std::uint32_t k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
    for (int r = 0; r < 10; ++r) {
      if (r > 0) {
        k0 += philox::kW0;
        k1 += philox::kW1;
      }
      k[2 * r] = _mm_set1_epi32(static_cast<int>(k0));
      k[2 * r + 1] = _mm_set1_epi32(static_cast<int>(k1));
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

// Normal floats of eight blocks at y: {cos, sin} of words (0, 1), then of words (2, 3).
PORTA_TARGET_AVX2_FMA void normal_x8(const __m256i w[4], float* y) {
  __m256 c01, s01, c23, s23;
  box_muller_x8(_mm256_srli_epi32(w[0], 8), _mm256_srli_epi32(w[1], 8), c01, s01);
  box_muller_x8(_mm256_srli_epi32(w[2], 8), _mm256_srli_epi32(w[3], 8), c23, s23);
  alignas(32) float v[4][8];
  _mm256_store_ps(v[0], c01);
  _mm256_store_ps(v[1], s01);
  _mm256_store_ps(v[2], c23);
  _mm256_store_ps(v[3], s23);
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 4; ++j) y[4 * i + j] = v[j][i];
  }
}

// fill_x4 eight blocks at a time; y + b0 * per must be 32-byte aligned when Nt.
template <class T, bool Normal, bool Nt>
PORTA_TARGET_AVX2 void fill_x8(std::int64_t b0, std::int64_t b1, std::uint64_t seed, std::uint64_t stream,
                               std::uint64_t offset, T* y, bool fma) {
  constexpr std::int64_t per = philox::kPerBlock<T>;
  const RoundKeys keys(seed);
  for (std::int64_t b = b0; b < b1; b += 8) {
    __m256i w[4];
    philox_x8(keys, stream, offset + static_cast<std::uint64_t>(b), w);
    if constexpr (Normal && sizeof(T) == 4) {
      if (fma) {
        normal_x8(w, y + b * per);
        continue;
      }
    }
    if constexpr (Normal) {
      alignas(32) std::uint32_t words[4][8];
      for (int j = 0; j < 4; ++j) _mm256_store_si256(reinterpret_cast<__m256i*>(words[j]), w[j]);
      normal_blocks<T>(words, y + b * per);
    } else {
      uniform_x8<Nt>(w, y + b * per);
    }
  }
  if constexpr (Nt) _mm_sfence();
}

#endif

template <class T, bool Normal>
void fill_random(std::int64_t n, std::uint64_t seed, std::uint64_t stream, std::uint64_t offset, T* y) {
  constexpr std::int64_t per = philox::kPerBlock<T>;
  const std::int64_t blocks = (n + per - 1) / per;
  const std::int64_t whole = n / per;  // blocks whose values all land in y
  const bool nt = !Normal && n * static_cast<std::int64_t>(sizeof(T)) >= kStreamBytes &&
                  (reinterpret_cast<std::uintptr_t>(y) & 31) == 0;
#if PORTA_RANDOM_AVX2
  const bool avx2 = cpu_isa().avx2, fma = cpu_isa().fma;
#endif
  // A block costs about what a transcendental map costs per element. Ranges start at multiples of
  // 16 blocks (parallel_ranges' alignment), so an aligned y stays aligned for the streaming stores.
  parallel_ranges(blocks, kGrainTranscendental / per, [&](std::int64_t b0, std::int64_t b1) {
    std::int64_t b = b0;
#if PORTA_RANDOM_AVX2
    const std::int64_t e8 = b0 + std::max<std::int64_t>(0, std::min(b1, whole) - b0) / 8 * 8;
    if (avx2 && e8 > b0) {
      if (nt) {
        fill_x8<T, Normal, true>(b0, e8, seed, stream, offset, y, fma);
      } else {
        fill_x8<T, Normal, false>(b0, e8, seed, stream, offset, y, fma);
      }
      b = e8;
    }
#endif
#if PORTA_RANDOM_SSE2
    const std::int64_t e4 = b + std::max<std::int64_t>(0, std::min(b1, whole) - b) / 4 * 4;
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
