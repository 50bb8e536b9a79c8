// SPDX-License-Identifier: Apache-2.0
// Scans of the CPU backend: the canonical order of porta/detail/scan_order.hpp, tile by tile over
// the OpenMP team. Every tile's local scan and every carry is the formula's, whichever thread runs
// it, so the bits do not depend on the thread count and equal the GPU's.
//
// Two passes over the input, none over the output: pass 1 computes each tile's total only (its
// values are not kept: writing them and reading them back would move more bytes than reading the
// input again), the carries follow from the totals, pass 2 recomputes each tile's values in L1 and
// writes them once with the carry applied. The passes run in rounds of a few hundred KiB a thread
// (scan_line), so pass 2 rereads from the thread's L2 what pass 1 read from memory: a large scan
// moves 2n elements to and from memory, as a copy does, not 3n.
//
// float and double tiles run on vectors: a group's 16-element sequential scan is the formula's own
// dependence chain, so the vector lanes run different groups side by side, with the elements
// transposed in registers. Add and max on vector lanes round exactly as the scalar ops do, so the
// bits are those of scan_tile_local. SSE2 (every x86-64 CPU) runs four float or two double groups,
// AVX2 eight or four, AVX-512 sixteen or eight; the wider builds are compiled per function (porta is
// built for baseline x86-64) and chosen at run time from cpu_isa(), capped by PORTA_CPU_SCAN_ISA
// (base|avx2, read at each call) for tests and comparisons. Other types and a last partial tile run
// the scalar definition.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#define PORTA_SCAN_SSE2 1
#else
#define PORTA_SCAN_SSE2 0
#endif
#if PORTA_SCAN_SSE2 && defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define PORTA_SCAN_WIDE 1
// Everything defined between BEGIN and END, templates included, is compiled for the target.
#define PORTA_SCAN_PRAGMA(x) _Pragma(#x)
#if defined(__clang__)
#define PORTA_SCAN_TARGET_BEGIN(t) \
  PORTA_SCAN_PRAGMA(clang attribute push(__attribute__((target(t))), apply_to = function))
#define PORTA_SCAN_TARGET_END _Pragma("clang attribute pop")
#else
#define PORTA_SCAN_TARGET_BEGIN(t) _Pragma("GCC push_options") PORTA_SCAN_PRAGMA(GCC target(t))
#define PORTA_SCAN_TARGET_END _Pragma("GCC pop_options")
#endif
#else
#define PORTA_SCAN_WIDE 0
#endif

#include "cpu_common.hpp"
#include "cpu_isa.hpp"
#include "cpu_kernels.hpp"
#include "porta/detail/ops.hpp"
#include "porta/detail/scan_order.hpp"

namespace porta::detail::cpu {
namespace {

// Outputs at least this large are written with non-temporal stores: they cannot stay in cache for
// a later reader anyway, and streaming them saves the read-for-ownership of every output line.
inline constexpr std::int64_t kStreamBytes = std::int64_t(8) << 20;

// Generic tiles: the scalar definition.
template <class T, class Op>
struct ScalarTile {
  static constexpr std::uintptr_t kAlign = 1;
  static T total(const T* x, std::int64_t len, Op op) {
    alignas(64) T buf[kScanTile];
    return scan_tile_local(x, len, buf, op);
  }
  // out[i] = canonical_nan(c ⊕ L[i]) for i < len (plain stores).
  static void values(const T* x, std::int64_t len, T c, T* out, Op op, bool) {
    scan_tile_local(x, len, out, op);
    for (std::int64_t i = 0; i < len; ++i) out[i] = canonical_nan(op(c, out[i]));
  }
};

#if PORTA_SCAN_SSE2

// ---- SSE2 lanes: four float or two double groups --------------------------------------------------

namespace sse2 {

// max_op of ops.hpp on lanes: the larger; of equal values the one without the sign bit (+0 over -0,
// which for equal values is their bitwise and); unordered gives a NaN (all ones here, canonicalised
// on output).
struct F32x4 {
  using T = float;
  using V = __m128;
  using M = __m128;
  static constexpr int kLanes = 4;
  static V loadu(const T* p) { return _mm_loadu_ps(p); }
  static V load(const T* p) { return _mm_load_ps(p); }
  static void store(T* p, V v) { _mm_store_ps(p, v); }
  static void stream(T* p, V v) { _mm_stream_ps(p, v); }
  static V set1(T v) { return _mm_set1_ps(v); }
  static V add(V a, V b) { return _mm_add_ps(a, b); }
  static V max_op(V a, V b) {
    const V e = _mm_cmpeq_ps(a, b);
    const V m = _mm_or_ps(_mm_and_ps(e, _mm_and_ps(a, b)), _mm_andnot_ps(e, _mm_max_ps(a, b)));
    return _mm_or_ps(m, _mm_cmpunord_ps(a, b));
  }
  static M no_nan() { return _mm_setzero_ps(); }
  static M nan_or(M m, V v) { return _mm_or_ps(m, _mm_cmpunord_ps(v, v)); }
  static bool any(M m) { return _mm_movemask_ps(m) != 0; }
  static V canonical_nan(V v) {
    const V nan = _mm_cmpunord_ps(v, v);
    return _mm_or_ps(_mm_andnot_ps(nan, v), _mm_and_ps(nan, _mm_set1_ps(std::numeric_limits<T>::quiet_NaN())));
  }
  static void transpose(V* r) { _MM_TRANSPOSE4_PS(r[0], r[1], r[2], r[3]); }
};

struct F64x2 {
  using T = double;
  using V = __m128d;
  using M = __m128d;
  static constexpr int kLanes = 2;
  static V loadu(const T* p) { return _mm_loadu_pd(p); }
  static V load(const T* p) { return _mm_load_pd(p); }
  static void store(T* p, V v) { _mm_store_pd(p, v); }
  static void stream(T* p, V v) { _mm_stream_pd(p, v); }
  static V set1(T v) { return _mm_set1_pd(v); }
  static V add(V a, V b) { return _mm_add_pd(a, b); }
  static V max_op(V a, V b) {
    const V e = _mm_cmpeq_pd(a, b);
    const V m = _mm_or_pd(_mm_and_pd(e, _mm_and_pd(a, b)), _mm_andnot_pd(e, _mm_max_pd(a, b)));
    return _mm_or_pd(m, _mm_cmpunord_pd(a, b));
  }
  static M no_nan() { return _mm_setzero_pd(); }
  static M nan_or(M m, V v) { return _mm_or_pd(m, _mm_cmpunord_pd(v, v)); }
  static bool any(M m) { return _mm_movemask_pd(m) != 0; }
  static V canonical_nan(V v) {
    const V nan = _mm_cmpunord_pd(v, v);
    return _mm_or_pd(_mm_andnot_pd(nan, v), _mm_and_pd(nan, _mm_set1_pd(std::numeric_limits<T>::quiet_NaN())));
  }
  static void transpose(V* r) {
    const V a = _mm_unpacklo_pd(r[0], r[1]), b = _mm_unpackhi_pd(r[0], r[1]);
    r[0] = a;
    r[1] = b;
  }
};

#include "cpu_scan_tile.inc"

}  // namespace sse2

#if PORTA_SCAN_WIDE

// ---- AVX2 lanes: eight float or four double groups ------------------------------------------------

PORTA_SCAN_TARGET_BEGIN("avx2")
namespace avx2 {

struct F32x8 {
  using T = float;
  using V = __m256;
  using M = __m256;
  static constexpr int kLanes = 8;
  static V loadu(const T* p) { return _mm256_loadu_ps(p); }
  static V load(const T* p) { return _mm256_load_ps(p); }
  static void store(T* p, V v) { _mm256_store_ps(p, v); }
  static void stream(T* p, V v) { _mm256_stream_ps(p, v); }
  static V set1(T v) { return _mm256_set1_ps(v); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V max_op(V a, V b) {
    const V e = _mm256_cmp_ps(a, b, _CMP_EQ_OQ);
    const V m = _mm256_blendv_ps(_mm256_max_ps(a, b), _mm256_and_ps(a, b), e);
    return _mm256_or_ps(m, _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
  }
  static M no_nan() { return _mm256_setzero_ps(); }
  static M nan_or(M m, V v) { return _mm256_or_ps(m, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)); }
  static bool any(M m) { return _mm256_movemask_ps(m) != 0; }
  static V canonical_nan(V v) {
    return _mm256_blendv_ps(v, _mm256_set1_ps(std::numeric_limits<T>::quiet_NaN()), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  static void transpose(V* r) {
    const V t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const V t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const V t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const V t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const V s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xee);
    const V s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xee);
    const V s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xee);
    const V s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xee);
    r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
    r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
    r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
    r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
    r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
    r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
    r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
    r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
  }
};

struct F64x4 {
  using T = double;
  using V = __m256d;
  using M = __m256d;
  static constexpr int kLanes = 4;
  static V loadu(const T* p) { return _mm256_loadu_pd(p); }
  static V load(const T* p) { return _mm256_load_pd(p); }
  static void store(T* p, V v) { _mm256_store_pd(p, v); }
  static void stream(T* p, V v) { _mm256_stream_pd(p, v); }
  static V set1(T v) { return _mm256_set1_pd(v); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static V max_op(V a, V b) {
    const V e = _mm256_cmp_pd(a, b, _CMP_EQ_OQ);
    const V m = _mm256_blendv_pd(_mm256_max_pd(a, b), _mm256_and_pd(a, b), e);
    return _mm256_or_pd(m, _mm256_cmp_pd(a, b, _CMP_UNORD_Q));
  }
  static M no_nan() { return _mm256_setzero_pd(); }
  static M nan_or(M m, V v) { return _mm256_or_pd(m, _mm256_cmp_pd(v, v, _CMP_UNORD_Q)); }
  static bool any(M m) { return _mm256_movemask_pd(m) != 0; }
  static V canonical_nan(V v) {
    return _mm256_blendv_pd(v, _mm256_set1_pd(std::numeric_limits<T>::quiet_NaN()), _mm256_cmp_pd(v, v, _CMP_UNORD_Q));
  }
  static void transpose(V* r) {
    const V t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
    const V t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
    r[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    r[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    r[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    r[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
  }
};

#include "cpu_scan_tile.inc"

}  // namespace avx2
PORTA_SCAN_TARGET_END

// ---- AVX-512 lanes: sixteen float or eight double groups ------------------------------------------

PORTA_SCAN_TARGET_BEGIN("avx512f,avx512dq")
namespace avx512 {

// max_op: vrange's max (imm 5: the larger, sign from the comparison, so +0 over -0) where ordered;
// vrange returns an operand for a NaN operand, so unordered lanes take a + b (a NaN); the scan
// writes every NaN as the canonical one, which is what max_op returns.
struct F32x16 {
  using T = float;
  using V = __m512;
  using M = __mmask16;
  static constexpr int kLanes = 16;
  static V loadu(const T* p) { return _mm512_loadu_ps(p); }
  static V load(const T* p) { return _mm512_load_ps(p); }
  static void store(T* p, V v) { _mm512_store_ps(p, v); }
  static void stream(T* p, V v) { _mm512_stream_ps(p, v); }
  static V set1(T v) { return _mm512_set1_ps(v); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V max_op(V a, V b) {
    return _mm512_mask_add_ps(_mm512_range_ps(a, b, 5), _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q), a, b);
  }
  static M no_nan() { return 0; }
  static M nan_or(M m, V v) { return static_cast<M>(m | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q)); }
  static bool any(M m) { return m != 0; }
  static V canonical_nan(V v) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v,
                                _mm512_set1_ps(std::numeric_limits<T>::quiet_NaN()));
  }
  // Pairs of rows interleaved, then pairs of pairs (as doubles), then 128-bit quarters twice.
  static void transpose(V* r) {
    V t[16], u[16];
    for (int i = 0; i < 16; i += 2) {
      t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
      t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
      const __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 1]);
      const __m512d c = _mm512_castps_pd(t[i + 2]), d = _mm512_castps_pd(t[i + 3]);
      u[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
      u[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
      u[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
      u[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    // u[4k + j] holds element 4c + j of rows 4k..4k+3 in its quarter c.
    for (int j = 0; j < 4; ++j) {
      t[j] = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88);
      t[4 + j] = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xdd);
      t[8 + j] = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);
      t[12 + j] = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xdd);
    }
    for (int j = 0; j < 4; ++j) {
      r[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88);
      r[4 + j] = _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0x88);
      r[8 + j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xdd);
      r[12 + j] = _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0xdd);
    }
  }
};

struct F64x8 {
  using T = double;
  using V = __m512d;
  using M = __mmask8;
  static constexpr int kLanes = 8;
  static V loadu(const T* p) { return _mm512_loadu_pd(p); }
  static V load(const T* p) { return _mm512_load_pd(p); }
  static void store(T* p, V v) { _mm512_store_pd(p, v); }
  static void stream(T* p, V v) { _mm512_stream_pd(p, v); }
  static V set1(T v) { return _mm512_set1_pd(v); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
  static V max_op(V a, V b) {
    return _mm512_mask_add_pd(_mm512_range_pd(a, b, 5), _mm512_cmp_pd_mask(a, b, _CMP_UNORD_Q), a, b);
  }
  static M no_nan() { return 0; }
  static M nan_or(M m, V v) { return static_cast<M>(m | _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q)); }
  static bool any(M m) { return m != 0; }
  static V canonical_nan(V v) {
    return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q), v,
                                _mm512_set1_pd(std::numeric_limits<T>::quiet_NaN()));
  }
  static void transpose(V* r) {
    V t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
      t[i] = _mm512_unpacklo_pd(r[i], r[i + 1]);
      t[i + 1] = _mm512_unpackhi_pd(r[i], r[i + 1]);
    }
    // t[2k] holds elements 2c of rows 2k, 2k+1 in quarter c; t[2k + 1] elements 2c + 1.
    for (int k = 0; k < 8; k += 4) {
      u[k] = _mm512_shuffle_f64x2(t[k], t[k + 2], 0x88);
      u[k + 1] = _mm512_shuffle_f64x2(t[k + 1], t[k + 3], 0x88);
      u[k + 2] = _mm512_shuffle_f64x2(t[k], t[k + 2], 0xdd);
      u[k + 3] = _mm512_shuffle_f64x2(t[k + 1], t[k + 3], 0xdd);
    }
    for (int j = 0; j < 4; ++j) {
      r[j] = _mm512_shuffle_f64x2(u[j], u[4 + j], 0x88);
      r[4 + j] = _mm512_shuffle_f64x2(u[j], u[4 + j], 0xdd);
    }
  }
};

#include "cpu_scan_tile.inc"

}  // namespace avx512
PORTA_SCAN_TARGET_END

#endif  // PORTA_SCAN_WIDE

// dst[0..bytes) = src[...], the aligned middle with non-temporal stores (fenced: the stores must be
// visible to whichever thread reads the output after the parallel region).
void stream_copy(void* dst, const void* src, std::size_t bytes) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  const std::size_t head = std::min(bytes, (16 - (reinterpret_cast<std::uintptr_t>(d) & 15)) & 15);
  std::memcpy(d, s, head);
  std::size_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
  }
  for (; i + 16 <= bytes; i += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
  }
  std::memcpy(d + i, s + i, bytes - i);
  _mm_sfence();
}

void store_fence() {
  _mm_sfence();
}

#else

void stream_copy(void* dst, const void* src, std::size_t bytes) {
  std::memcpy(dst, src, bytes);
}

void store_fence() {}

#endif

// The vector width the tiles run at.
enum class ScanIsa { scalar, sse2, avx2, avx512 };

// The CPU's widest, capped by PORTA_CPU_SCAN_ISA (base: SSE2, avx2). Read at each call, not once,
// so that a test can run every path in one process; a getenv costs nothing beside a scan.
ScanIsa scan_isa() {
#if PORTA_SCAN_SSE2
  ScanIsa best = ScanIsa::sse2;
#if PORTA_SCAN_WIDE
  if (cpu_isa().avx512) {
    best = ScanIsa::avx512;
  } else if (cpu_isa().avx2) {
    best = ScanIsa::avx2;
  }
#endif
  if (const char* cap = std::getenv("PORTA_CPU_SCAN_ISA")) {
    if (std::strcmp(cap, "base") == 0) best = ScanIsa::sse2;
    if (std::strcmp(cap, "avx2") == 0 && best == ScanIsa::avx512) best = ScanIsa::avx2;
  }
  return best;
#else
  return ScanIsa::scalar;
#endif
}

template <class T, class Op, ScanIsa I>
struct TileFor {
  using type = ScalarTile<T, Op>;
};
#if PORTA_SCAN_SSE2
template <class Op>
struct TileFor<float, Op, ScanIsa::sse2> {
  using type = sse2::VectorTile<sse2::F32x4, Op>;
};
template <class Op>
struct TileFor<double, Op, ScanIsa::sse2> {
  using type = sse2::VectorTile<sse2::F64x2, Op>;
};
#endif
#if PORTA_SCAN_WIDE
template <class Op>
struct TileFor<float, Op, ScanIsa::avx2> {
  using type = avx2::VectorTile<avx2::F32x8, Op>;
};
template <class Op>
struct TileFor<double, Op, ScanIsa::avx2> {
  using type = avx2::VectorTile<avx2::F64x4, Op>;
};
template <class Op>
struct TileFor<float, Op, ScanIsa::avx512> {
  using type = avx512::VectorTile<avx512::F32x16, Op>;
};
template <class Op>
struct TileFor<double, Op, ScanIsa::avx512> {
  using type = avx512::VectorTile<avx512::F64x8, Op>;
};
#endif

// Tiles a thread scans per round of the blocked passes (below): its pass-1 reads must still be in
// its L2 when pass 2 rereads them, beside pass 2's own tile buffers, on a core whose L2 may be
// shared by two hardware threads.
inline constexpr std::int64_t kRoundBytes = std::int64_t(512) << 10;

// The tile carries of step 5 as the totals arrive in tile order: level[j][k] = B(k, j) as soon as
// tiles [0, (k + 1) 2^j) are known. The blocks, their operations and each carry's fold are those
// of scan_tile_carries, so the bits are too.
template <class T, class Op>
class CarryBuilder {
 public:
  CarryBuilder(const T* S, std::int64_t tiles, Op op) : S_(S), op_(op) {
    for (std::int64_t size = tiles / 2; size >= 1; size /= 2) level_.emplace_back(static_cast<std::size_t>(size));
  }
  // S[0, end) is known: builds the blocks inside it.
  void extend(std::int64_t end) {
    for (std::size_t j = 1; j <= level_.size(); ++j) {
      const T* prev = j == 1 ? S_ : level_[j - 2].data();
      std::vector<T>& cur = level_[j - 1];
      for (std::int64_t k = built_ >> j; k < end >> j; ++k) {
        cur[static_cast<std::size_t>(k)] = op_(prev[2 * k], prev[2 * k + 1]);
      }
    }
    built_ = end;
  }
  // C[t] for t in [begin, end), end at most extend's: its blocks all lie before t.
  void carries(std::int64_t begin, std::int64_t end, T* C) const {
    for (std::int64_t t = begin; t < end; ++t) {
      T c = Op::template identity<T>();
      std::int64_t pos = 0;
      for (int j = static_cast<int>(level_.size()); j >= 0; --j) {
        if ((t >> j) & 1) {
          const T* lv = j == 0 ? S_ : level_[static_cast<std::size_t>(j - 1)].data();
          c = op_(c, lv[pos >> j]);
          pos += std::int64_t(1) << j;
        }
      }
      C[t] = c;
    }
  }

 private:
  const T* S_;
  Op op_;
  std::vector<std::vector<T>> level_;  // level_[j - 1] holds B(., j)
  std::int64_t built_ = 0;
};

// One contiguous sequence x[0..n) into y (y == x allowed when inclusive). `parallel`: spread its
// tiles over the team (else the calling thread does everything, for one of many sequences).
// `stream`: write y with non-temporal stores.
//
// Rounds of kRoundBytes a thread: each thread computes the totals of its share of the round (pass
// 1, reading it from memory), the carries of the round's tiles follow from all totals so far (a
// tile's carry needs only earlier tiles), and each thread writes its share (pass 2, rereading it
// from its own cache: both passes split the round alike). So a large scan reads its input from
// memory once and writes once, as a copy does, for two barriers a round.
template <class Tile, class T, class Op>
void scan_line(const T* x, std::int64_t n, T* y, Op op, bool exclusive, bool parallel, bool stream) {
  if (n <= 0) return;
  const std::int64_t tiles = scan_tile_count(n);
  const std::int64_t shift = exclusive ? 1 : 0;
  std::vector<T> S(static_cast<std::size_t>(tiles)), C(static_cast<std::size_t>(tiles));
  CarryBuilder<T, Op> blocks(S.data(), tiles, op);
  // Pass 1: the tile totals (the last tile's is never used by a carry).
  const auto totals = [&](std::int64_t t0, std::int64_t t1) {
    for (std::int64_t t = t0; t < t1 && t + 1 < tiles; ++t) {
      const std::int64_t b = t * kScanTile;
      S[static_cast<std::size_t>(t)] = Tile::total(x + b, std::min(kScanTile, n - b), op);
    }
  };
  // Pass 2: y = C[t] ⊕ L, NaN canonical, shifted by one when exclusive (the last input's value is
  // dropped).
  const auto finish = [&](std::int64_t t0, std::int64_t t1) {
    for (std::int64_t t = t0; t < t1; ++t) {
      const std::int64_t b = t * kScanTile;
      const std::int64_t len = std::min(kScanTile, n - b);
      const std::int64_t m = std::min(len, n - shift - b);
      if (m <= 0) continue;
      T* out = y + b + shift;
      if (len == kScanTile && m == len && (reinterpret_cast<std::uintptr_t>(out) & (Tile::kAlign - 1)) == 0) {
        Tile::values(x + b, len, C[static_cast<std::size_t>(t)], out, op, stream);
        if (stream) store_fence();
        continue;
      }
      alignas(64) T buf[kScanTile];
      Tile::values(x + b, len, C[static_cast<std::size_t>(t)], buf, op, false);
      if (stream) {
        stream_copy(out, buf, static_cast<std::size_t>(m) * sizeof(T));
      } else {
        std::memcpy(out, buf, static_cast<std::size_t>(m) * sizeof(T));
      }
    }
  };
  const std::int64_t per_thread =
      std::max<std::int64_t>(1, kRoundBytes / (kScanTile * static_cast<std::int64_t>(sizeof(T))));
  const int nt = parallel ? threads_for(tiles, std::max<std::int64_t>(1, kGrainCheap / kScanTile)) : 1;
#if defined(_OPENMP)
  if (nt > 1) {
#pragma omp parallel num_threads(nt)
    {
      const std::int64_t k = omp_get_thread_num(), team = omp_get_num_threads();
      for (std::int64_t a = 0; a < tiles; a += team * per_thread) {
        const std::int64_t r = std::min(team * per_thread, tiles - a);
        const std::int64_t t0 = a + r * k / team, t1 = a + r * (k + 1) / team;
        totals(t0, t1);
#pragma omp barrier
        // One thread extends the blocks (a few operations a tile); each folds its own tiles' carries.
#pragma omp single
        blocks.extend(a + r);
        blocks.carries(t0, t1, C.data());
        finish(t0, t1);
      }
    }
    if (exclusive) y[0] = scan_exclusive_first<T>(op);
    return;
  }
#endif
  for (std::int64_t a = 0; a < tiles; a += per_thread) {
    const std::int64_t r = std::min(per_thread, tiles - a);
    totals(a, a + r);
    blocks.extend(a + r);
    blocks.carries(a, a + r, C.data());
    finish(a, a + r);
  }
  if (exclusive) y[0] = scan_exclusive_first<T>(op);
}

template <class Tile, class T, class Op>
void scan_typed(std::int64_t outer, std::int64_t n, std::int64_t inner, const T* x, T* y, Op op, bool exclusive) {
  const std::int64_t lines = outer * inner;
  const bool stream = lines * n * static_cast<std::int64_t>(sizeof(T)) >= kStreamBytes;
  if (inner == 1) {
    // Rows: one row at a time over the team when rows are few, else whole rows per thread.
    if (lines < max_threads()) {
      for (std::int64_t r = 0; r < lines; ++r) scan_line<Tile>(x + r * n, n, y + r * n, op, exclusive, true, stream);
    } else {
      parallel_tasks(lines, n, [&](std::int64_t r, int) {
        scan_line<Tile>(x + r * n, n, y + r * n, op, exclusive, false, stream);
      });
    }
    return;
  }
  // Columns of [outer, n, inner]: each gathered into a contiguous line, scanned, scattered back
  // (the same formula per line; y may be x).
  const int threads = max_threads();
  std::vector<std::vector<T>> bufs(static_cast<std::size_t>(threads));
  parallel_tasks(lines, n, [&](std::int64_t line, int thread) {
    std::vector<T>& buf = bufs[static_cast<std::size_t>(thread)];
    buf.resize(static_cast<std::size_t>(2 * n));
    const std::int64_t o = line / inner, i = line % inner;
    const T* src = x + o * n * inner + i;
    T* dst = y + o * n * inner + i;
    for (std::int64_t q = 0; q < n; ++q) buf[static_cast<std::size_t>(q)] = src[q * inner];
    scan_line<Tile>(buf.data(), n, buf.data() + n, op, exclusive, false, false);
    for (std::int64_t q = 0; q < n; ++q) dst[q * inner] = buf[static_cast<std::size_t>(n + q)];
  });
}

template <class T, class Op>
void scan_dispatch(std::int64_t outer, std::int64_t n, std::int64_t inner, const T* x, T* y, Op op, bool exclusive) {
  switch (scan_isa()) {
    case ScanIsa::avx512:
      scan_typed<typename TileFor<T, Op, ScanIsa::avx512>::type>(outer, n, inner, x, y, op, exclusive);
      return;
    case ScanIsa::avx2:
      scan_typed<typename TileFor<T, Op, ScanIsa::avx2>::type>(outer, n, inner, x, y, op, exclusive);
      return;
    case ScanIsa::sse2:
      scan_typed<typename TileFor<T, Op, ScanIsa::sse2>::type>(outer, n, inner, x, y, op, exclusive);
      return;
    case ScanIsa::scalar:
      scan_typed<ScalarTile<T, Op>>(outer, n, inner, x, y, op, exclusive);
      return;
  }
}

}  // namespace

porta_status scan(int dev, porta_reduce_op op, porta_dtype dt, std::uint32_t flags, std::int64_t outer, std::int64_t n,
                  std::int64_t inner, const void* x, void* y, porta_stream) noexcept {
  constexpr const char* fn = "scan";
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  if (porta_status st = check::scan(op, dt, flags, outer, n, inner, x, y); st != PORTA_OK) return st;
  if (outer == 0 || n == 0 || inner == 0) return PORTA_OK;
  const bool exclusive = (flags & PORTA_SCAN_EXCLUSIVE) != 0;
  PORTA_CPU_TRY
  // Not for complex (the front end scans their parts) or 16-bit types: ops.hpp's ScanFamily.
  return with_dtype_for<ScanFamily>(fn, dt, [&](auto tag) {
    using T = decltype(tag);
    const T* xs = static_cast<const T*>(x);
    T* ys = static_cast<T*>(y);
    if (raw_enum(op) == PORTA_REDUCE_SUM) {
      scan_dispatch(outer, n, inner, xs, ys, SumOp{}, exclusive);
    } else {
      scan_dispatch(outer, n, inner, xs, ys, MaxOp{}, exclusive);
    }
  });
  PORTA_CPU_CATCH(fn)
}

}  // namespace porta::detail::cpu
