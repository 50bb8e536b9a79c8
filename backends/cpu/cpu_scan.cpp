// SPDX-License-Identifier: Apache-2.0
// Scans of the CPU backend: the canonical order of porta/detail/scan_order.hpp, tile by tile over
// the OpenMP team. Every tile's local scan and every carry is the formula's, whichever thread runs
// it, so the bits do not depend on the thread count and equal the GPU's.
//
// Two passes over the input, none over the output: pass 1 computes each tile's total only (its
// values are not kept: writing them and reading them back would move more bytes than reading the
// input again), the carries follow from the totals, pass 2 recomputes each tile's values in L1 and
// writes them once with the carry applied. Pass 1 reads n elements, pass 2 reads n and writes n, so a
// large scan moves 3n elements where a copy moves 2n: that, not arithmetic, bounds it.
//
// float and double tiles run on SSE2 (every x86-64 CPU has it): a group's 16-element sequential scan
// is the formula's own dependence chain, so the vector lanes run different groups side by side,
// with the elements transposed in registers. Add and max on vector lanes round exactly as the scalar
// ops do, so the bits are those of scan_tile_local. Other types and a last partial tile run the
// scalar definition.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#define PORTA_SCAN_SSE2 1
#else
#define PORTA_SCAN_SSE2 0
#endif

#include "cpu_common.hpp"
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

// Vector lanes of float and double: loads, stores, the transposes between a block of groups and
// vectors that hold one element of each group, and the ops with the scalar ops' exact results.
struct F32x4 {
  using T = float;
  using V = __m128;
  static constexpr int kLanes = 4;
  static V load(const T* p) { return _mm_loadu_ps(p); }
  static V load_aligned(const T* p) { return _mm_load_ps(p); }
  static void store(T* p, V v) { _mm_store_ps(p, v); }
  static V set1(T v) { return _mm_set1_ps(v); }
  static V add(V a, V b) { return _mm_add_ps(a, b); }
  static V max_raw(V a, V b) { return _mm_max_ps(a, b); }
  static V eq(V a, V b) { return _mm_cmpeq_ps(a, b); }
  static V unord(V a, V b) { return _mm_cmpunord_ps(a, b); }
  static V and_(V a, V b) { return _mm_and_ps(a, b); }
  static V andnot(V m, V b) { return _mm_andnot_ps(m, b); }
  static V or_(V a, V b) { return _mm_or_ps(a, b); }
  static bool any(V m) { return _mm_movemask_ps(m) != 0; }
  // Part q of a block of 4 groups at x: t[i] = element 4q + i of the four groups (a 4 x 4 transpose).
  static constexpr int kPart = 4;
  static void load_part(const T* x, int q, V* t) {
    V r0 = _mm_loadu_ps(x + 4 * q), r1 = _mm_loadu_ps(x + 16 + 4 * q), r2 = _mm_loadu_ps(x + 32 + 4 * q),
      r3 = _mm_loadu_ps(x + 48 + 4 * q);
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    t[0] = r0;
    t[1] = r1;
    t[2] = r2;
    t[3] = r3;
  }
  // The inverse into 16-byte aligned out, with non-temporal stores when `nt`.
  static void store_part(T* out, int q, const V* t, bool nt) {
    V r0 = t[0], r1 = t[1], r2 = t[2], r3 = t[3];
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    if (nt) {
      _mm_stream_ps(out + 4 * q, r0);
      _mm_stream_ps(out + 16 + 4 * q, r1);
      _mm_stream_ps(out + 32 + 4 * q, r2);
      _mm_stream_ps(out + 48 + 4 * q, r3);
    } else {
      _mm_store_ps(out + 4 * q, r0);
      _mm_store_ps(out + 16 + 4 * q, r1);
      _mm_store_ps(out + 32 + 4 * q, r2);
      _mm_store_ps(out + 48 + 4 * q, r3);
    }
  }
};

struct F64x2 {
  using T = double;
  using V = __m128d;
  static constexpr int kLanes = 2;
  static V load(const T* p) { return _mm_loadu_pd(p); }
  static V load_aligned(const T* p) { return _mm_load_pd(p); }
  static void store(T* p, V v) { _mm_store_pd(p, v); }
  static V set1(T v) { return _mm_set1_pd(v); }
  static V add(V a, V b) { return _mm_add_pd(a, b); }
  static V max_raw(V a, V b) { return _mm_max_pd(a, b); }
  static V eq(V a, V b) { return _mm_cmpeq_pd(a, b); }
  static V unord(V a, V b) { return _mm_cmpunord_pd(a, b); }
  static V and_(V a, V b) { return _mm_and_pd(a, b); }
  static V andnot(V m, V b) { return _mm_andnot_pd(m, b); }
  static V or_(V a, V b) { return _mm_or_pd(a, b); }
  static bool any(V m) { return _mm_movemask_pd(m) != 0; }
  // Part q of a block of 2 groups at x: t[i] = element 2q + i of the two groups.
  static constexpr int kPart = 2;
  static void load_part(const T* x, int q, V* t) {
    const V r0 = _mm_loadu_pd(x + 2 * q), r1 = _mm_loadu_pd(x + 16 + 2 * q);
    t[0] = _mm_unpacklo_pd(r0, r1);
    t[1] = _mm_unpackhi_pd(r0, r1);
  }
  static void store_part(T* out, int q, const V* t, bool nt) {
    const V r0 = _mm_unpacklo_pd(t[0], t[1]), r1 = _mm_unpackhi_pd(t[0], t[1]);
    if (nt) {
      _mm_stream_pd(out + 2 * q, r0);
      _mm_stream_pd(out + 16 + 2 * q, r1);
    } else {
      _mm_store_pd(out + 2 * q, r0);
      _mm_store_pd(out + 16 + 2 * q, r1);
    }
  }
};

template <class A, class Op>
struct VecOp;
template <class A>
struct VecOp<A, SumOp> {
  static typename A::V op(typename A::V a, typename A::V b) { return A::add(a, b); }
};
// max_op: the larger; of equal values the one without the sign bit (+0 over -0, which for equal
// values is their bitwise and); unordered gives a NaN (all ones here, canonicalised on output).
template <class A>
struct VecOp<A, MaxOp> {
  static typename A::V op(typename A::V a, typename A::V b) {
    const typename A::V e = A::eq(a, b);
    const typename A::V m = A::or_(A::and_(e, A::and_(a, b)), A::andnot(e, A::max_raw(a, b)));
    return A::or_(m, A::unord(a, b));
  }
};

template <class A>
typename A::V canonical_nan_v(typename A::V v) {
  using T = typename A::T;
  const typename A::V nan = A::unord(v, v);
  return A::or_(A::andnot(nan, v), A::and_(nan, A::set1(std::numeric_limits<T>::quiet_NaN())));
}

template <class A, class Op>
struct VectorTile {
  using T = typename A::T;
  using V = typename A::V;
  static constexpr int W = A::kLanes;
  static constexpr int kVecs = static_cast<int>(kScanItems);

  // Step 1 for W groups at x: st[j] = s[g][j] across the groups, returned: their totals.
  static V groups(const T* x, V* st) {
    constexpr int P = A::kPart;
    V s = A::set1(Op::template identity<T>());
    for (int q = 0; q < kVecs / P; ++q) {
      V t[P];
      A::load_part(x, q, t);
      for (int i = 0; i < P; ++i) {
        s = q == 0 && i == 0 ? t[0] : VecOp<A, Op>::op(s, t[i]);
        st[q * P + i] = s;
      }
    }
    return s;
  }

  // Steps 2-4 of the canonical order from the group totals: p[g] = P[warp of g] ⊕ e[lane of g], the
  // prefix that step 4 applies to group g's values. Returns the tile's total S = p[255] ⊕
  // total[255] (its L[4095]). A lane l < d of a Kogge-Stone step keeps its value; here it takes
  // identity ⊕ value instead, the same value (a NaN stays a NaN, canonicalised on output), so that
  // every step is whole vectors: a warp's lanes sit after kPad identities.
  static T prefixes(const T* total, T* p, Op op) {
    constexpr std::int64_t kPad = 16;
    const T id = Op::template identity<T>();
    T warp_total[kScanGroups / kScanWarp];
    alignas(64) T excl[kScanGroups / kScanWarp][kPad + kScanWarp];
    for (std::int64_t w = 0; w < kScanGroups / kScanWarp; ++w) {
      alignas(64) T a[kPad + kScanWarp], b[kPad + kScanWarp];
      for (std::int64_t l = 0; l < kPad; ++l) a[l] = b[l] = id;
      for (std::int64_t l = 0; l < kScanWarp; ++l) a[kPad + l] = total[w * kScanWarp + l];
      T* v = a;
      T* nv = b;
      for (std::int64_t d = 1; d < kScanWarp; d *= 2) {
        for (std::int64_t l = 0; l < kScanWarp; l += W) {
          A::store(nv + kPad + l, VecOp<A, Op>::op(A::load(v + kPad + l - d), A::load_aligned(v + kPad + l)));
        }
        std::swap(v, nv);
      }
      for (std::int64_t l = 0; l < kPad + kScanWarp; ++l) excl[w][l] = v[l];
      warp_total[w] = v[kPad + kScanWarp - 1];
    }
    T warp_prefix = id;
    for (std::int64_t w = 0; w < kScanGroups / kScanWarp; ++w) {
      if (w > 0) warp_prefix = op(warp_prefix, warp_total[w - 1]);
      const V pv = A::set1(warp_prefix);
      for (std::int64_t l = 0; l < kScanWarp; l += W) {
        A::store(p + w * kScanWarp + l, VecOp<A, Op>::op(pv, A::load(&excl[w][kPad - 1 + l])));
      }
    }
    return op(p[kScanGroups - 1], total[kScanGroups - 1]);
  }

  static T total(const T* x, std::int64_t len, Op op) {
    if (len < kScanTile) return ScalarTile<T, Op>::total(x, len, op);
    alignas(64) T tot[kScanGroups];
    alignas(64) T p[kScanGroups];
    for (std::int64_t g = 0; g < kScanGroups; g += W) {
      V st[kVecs];
      A::store(tot + g, groups(x + g * kScanItems, st));
    }
    return prefixes(tot, p, op);
  }

  // out[i] = canonical_nan(c ⊕ L[i]); a full tile's out must be 16-byte aligned, and is written
  // with non-temporal stores when `nt`.
  static void values(const T* x, std::int64_t len, T c, T* out, Op op, bool nt) {
    if (len < kScanTile) {
      ScalarTile<T, Op>::values(x, len, c, out, op, nt);
      return;
    }
    constexpr int P = A::kPart;
    alignas(64) T tot[kScanGroups];
    alignas(64) T p[kScanGroups];
    // The tile's s[g][j], transposed (block of W groups after block), kept in L1 for the second step.
    alignas(64) T s[kScanTile];
    for (std::int64_t g = 0; g < kScanGroups; g += W) {
      V* st = reinterpret_cast<V*>(s + g * kScanItems);
      A::store(tot + g, groups(x + g * kScanItems, st));
    }
    prefixes(tot, p, op);
    const V cv = A::set1(c);
    for (std::int64_t g = 0; g < kScanGroups; g += W) {
      const V pv = A::load_aligned(p + g);
      for (int q = 0; q < kVecs / P; ++q) {
        V t[P];
        V nan = A::set1(T(0));
        for (int i = 0; i < P; ++i) {
          const V l = VecOp<A, Op>::op(pv, A::load_aligned(s + g * kScanItems + (q * P + i) * W));
          t[i] = VecOp<A, Op>::op(cv, l);
          nan = A::or_(nan, A::unord(t[i], t[i]));
        }
        if (A::any(nan)) {
          for (int i = 0; i < P; ++i) t[i] = canonical_nan_v<A>(t[i]);
        }
        A::store_part(out + g * kScanItems, q, t, nt);
      }
    }
  }
};

template <class T, class Op>
struct TileFor {
  using type = ScalarTile<T, Op>;
};
template <class Op>
struct TileFor<float, Op> {
  using type = VectorTile<F32x4, Op>;
};
template <class Op>
struct TileFor<double, Op> {
  using type = VectorTile<F64x2, Op>;
};

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

template <class T, class Op>
struct TileFor {
  using type = ScalarTile<T, Op>;
};

void stream_copy(void* dst, const void* src, std::size_t bytes) {
  std::memcpy(dst, src, bytes);
}

void store_fence() {}

#endif

// One contiguous sequence x[0..n) into y (y == x allowed when inclusive). `parallel`: spread its
// tiles over the team (else the calling thread does everything, for one of many sequences).
// `stream`: write y with non-temporal stores.
template <class T, class Op>
void scan_line(const T* x, std::int64_t n, T* y, Op op, bool exclusive, bool parallel, bool stream) {
  if (n <= 0) return;
  using Tile = typename TileFor<T, Op>::type;
  const std::int64_t tiles = scan_tile_count(n);
  const std::int64_t shift = exclusive ? 1 : 0;
  std::vector<T> S(static_cast<std::size_t>(tiles)), C(static_cast<std::size_t>(tiles));
  // Pass 1: the tile totals (the last tile's is never used by a carry).
  const auto total = [&](std::int64_t t) {
    const std::int64_t b = t * kScanTile;
    S[static_cast<std::size_t>(t)] = Tile::total(x + b, std::min(kScanTile, n - b), op);
  };
  // Pass 2: y = C[t] ⊕ L, NaN canonical, shifted by one when exclusive (the last input's value is
  // dropped). Both passes split the tiles alike (schedule(static)), so a thread rereads the inputs
  // it read in pass 1.
  const auto finish = [&](std::int64_t t) {
    const std::int64_t b = t * kScanTile;
    const std::int64_t len = std::min(kScanTile, n - b);
    const std::int64_t m = std::min(len, n - shift - b);
    if (m <= 0) return;
    T* out = y + b + shift;
    if (len == kScanTile && m == len && (reinterpret_cast<std::uintptr_t>(out) & 15) == 0) {
      Tile::values(x + b, len, C[static_cast<std::size_t>(t)], out, op, stream);
      if (stream) store_fence();
      return;
    }
    alignas(64) T buf[kScanTile];
    Tile::values(x + b, len, C[static_cast<std::size_t>(t)], buf, op, false);
    if (stream) {
      stream_copy(out, buf, static_cast<std::size_t>(m) * sizeof(T));
    } else {
      std::memcpy(out, buf, static_cast<std::size_t>(m) * sizeof(T));
    }
  };
  if (parallel) {
    parallel_tasks(tiles, kScanTile, [&](std::int64_t t, int) {
      if (t + 1 < tiles) total(t);
    });
  } else {
    for (std::int64_t t = 0; t + 1 < tiles; ++t) total(t);
  }
  scan_tile_carries(S.data(), tiles, C.data(), op);
  if (parallel) {
    parallel_tasks(tiles, kScanTile, [&](std::int64_t t, int) { finish(t); });
  } else {
    for (std::int64_t t = 0; t < tiles; ++t) finish(t);
  }
  if (exclusive) y[0] = scan_exclusive_first<T>(op);
}

template <class T, class Op>
void scan_typed(std::int64_t outer, std::int64_t n, std::int64_t inner, const T* x, T* y, Op op, bool exclusive) {
  const std::int64_t lines = outer * inner;
  const bool stream = lines * n * static_cast<std::int64_t>(sizeof(T)) >= kStreamBytes;
  if (inner == 1) {
    // Rows: one row at a time over the team when rows are few, else whole rows per thread.
    if (lines < max_threads()) {
      for (std::int64_t r = 0; r < lines; ++r) scan_line(x + r * n, n, y + r * n, op, exclusive, true, stream);
    } else {
      parallel_tasks(lines, n,
                     [&](std::int64_t r, int) { scan_line(x + r * n, n, y + r * n, op, exclusive, false, stream); });
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
    scan_line(buf.data(), n, buf.data() + n, op, exclusive, false, false);
    for (std::int64_t q = 0; q < n; ++q) dst[q * inner] = buf[static_cast<std::size_t>(n + q)];
  });
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
  const bool known = with_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    const T* xs = static_cast<const T*>(x);
    T* ys = static_cast<T*>(y);
    if (raw_enum(op) == PORTA_REDUCE_SUM) {
      scan_typed(outer, n, inner, xs, ys, SumOp{}, exclusive);
    } else {
      scan_typed(outer, n, inner, xs, ys, MaxOp{}, exclusive);
    }
  });
  return known ? PORTA_OK : unknown_dtype(fn, dt);
  PORTA_CPU_CATCH(fn)
}

}  // namespace porta::detail::cpu
