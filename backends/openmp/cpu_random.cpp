// SPDX-License-Identifier: Apache-2.0
// Random numbers of the CPU backend: Philox4x32-10 blocks and the maps of porta/detail/philox.hpp,
// block by block over the OpenMP team. Element i depends on (seed, stream, offset, i) only, so the
// bits do not depend on the thread count and equal the GPU's.
//
// Philox is the cost: ten rounds of two 32 x 32 -> 64-bit multiplies per block, five per 32-bit
// word. On x86-64 four blocks run side by side in SSE2 lanes (pmuludq gives two 64-bit products per
// instruction), and the uniform maps run on the same vectors: integer shifts and exact conversions,
// so the values are the scalar definition's bit for bit. Normals take their words from the same
// vector code and map them with philox.hpp's own log and sin/cos, unchanged.
#include <algorithm>
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#define PORTA_RANDOM_SSE2 1
#else
#define PORTA_RANDOM_SSE2 0
#endif

#include "backends/common/scan_random_checks.hpp"
#include "cpu_common.hpp"
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
      for (int i = 0; i < 4; ++i) {
        philox::block_values<T, true>(philox::Words{{words[0][i], words[1][i], words[2][i], words[3][i]}},
                                      y + (b + i) * per);
      }
    } else {
      uniform_x4<Nt>(w, y + b * per);
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
                  (reinterpret_cast<std::uintptr_t>(y) & 15) == 0;
  // A block costs about what a transcendental map costs per element. Ranges start at multiples of
  // 16 blocks (parallel_ranges' alignment), so an aligned y stays aligned for the streaming stores.
  parallel_ranges(blocks, kGrainTranscendental / per, [&](std::int64_t b0, std::int64_t b1) {
    std::int64_t b = b0;
#if PORTA_RANDOM_SSE2
    const std::int64_t e4 = b0 + (std::min(b1, whole) - b0) / 4 * 4;
    if (e4 > b0) {
      if (nt) {
        fill_x4<T, Normal, true>(b0, e4, seed, stream, offset, y);
      } else {
        fill_x4<T, Normal, false>(b0, e4, seed, stream, offset, y);
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
  if (porta_status st = backend::check::random(dist, dt, n, y); st != PORTA_OK) return st;
  if (n == 0) return PORTA_OK;
  const bool normal = raw_enum(dist) == PORTA_RANDOM_NORMAL;
  PORTA_CPU_TRY
  if (raw_enum(dt) == PORTA_F32) {
    if (normal) {
      fill_random<float, true>(n, seed, stream, offset, static_cast<float*>(y));
    } else {
      fill_random<float, false>(n, seed, stream, offset, static_cast<float*>(y));
    }
  } else if (normal) {
    fill_random<double, true>(n, seed, stream, offset, static_cast<double*>(y));
  } else {
    fill_random<double, false>(n, seed, stream, offset, static_cast<double*>(y));
  }
  return PORTA_OK;
  PORTA_CPU_CATCH(fn)
}

}  // namespace porta::detail::cpu
