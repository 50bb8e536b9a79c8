// SPDX-License-Identifier: Apache-2.0
// Reductions of the CPU backend, in the canonical order of porta/detail/reduce_order.hpp.
//
// The order (chunks of kReduceChunk elements, kReduceLanes lanes per chunk fed row by row, a
// pairwise tree over the lanes, the chunk results reduced again the same way) is what the GPU
// kernels evaluate too, so the bits agree across backends. Only the schedule is ours:
//
// - A chunk is one task. Tasks are spread over the OpenMP team; each writes its own partial, so
//   the result cannot depend on the thread count. The partials are then reduced by the same code.
// - Lanes are an array in L1 and each row of a chunk is one contiguous vector update, so memory
//   is read sequentially and the loop vectorises without reassociating anything: lane l only ever
//   combines with itself.
// - Lanes that never received an element hold the identity, and op(a, identity) == a bit for
//   bit (even for a NaN a, which op(identity, x) has already quietened), so tree steps whose
//   right operand is such a lane are skipped. That makes short sequences (n = 3) cost 3 ops
//   instead of 1023, which matters when there are millions of them (a reduction over a short axis).
// - Along an inner axis (inner > 1), a task takes a strip of consecutive outputs and evaluates
//   the lane tree depth first (StripTree), so it holds 11 strip-wide buffers instead of 1024 and
//   every row of the strip is one long contiguous read. Many short rows (inner == 1, n <= 256) are
//   done 16 at a time with their trees vectorised across rows (group_short).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "cpu_common.hpp"
#include "cpu_kernels.hpp"
#include "porta/detail/ops.hpp"
#include "porta/detail/reduce_order.hpp"

namespace porta::detail::cpu {
namespace {

// The kernels below are built twice, for AVX2 and for the baseline ISA, and the loader picks one
// (GCC target_clones, an ifunc): sums stream at memory speed either way, but the branchy min/max
// functors, once if-converted, need AVX2's blends to keep up. Inlined helpers inherit the ISA.
// Not under ThreadSanitizer: it instruments the ifunc resolver, which the dynamic loader runs
// before TSan's runtime is initialised (a crash at load time).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(PORTA_NO_TARGET_CLONES) && !defined(__SANITIZE_THREAD__)
#define PORTA_REDUCE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define PORTA_REDUCE_CLONES
#endif
#define PORTA_INLINE inline __attribute__((always_inline))

constexpr std::int64_t kLanes = kReduceLanes;
constexpr std::int64_t kChunk = kReduceChunk;
static_assert((kLanes & (kLanes - 1)) == 0, "lane count must be a power of two");

// How element i of the flat [outer, n, inner] input is produced.
// Asks for elements [i, i + count) ahead of use, a cache line at a time.
template <class T>
inline void prefetch_range(const T* p, std::int64_t count) {
  const char* b = reinterpret_cast<const char*>(p);
  for (std::int64_t off = 0; off < count * static_cast<std::int64_t>(sizeof(T)); off += 64) __builtin_prefetch(b + off);
}

// Elements of T as the reduction's accumulator type A (accumulate_t: float for 16-bit floats).
template <class T>
struct Plain {
  using A = accumulate_t<T>;
  const T* x;
  A operator()(std::int64_t i) const { return A(x[i]); }
  void prefetch(std::int64_t i, std::int64_t count) const { prefetch_range(x + i, count); }
};
template <class T>
struct Squares {  // SUMSQ: the product is rounded before it is added (no contraction)
  using A = accumulate_t<T>;
  const T* x;
  A operator()(std::int64_t i) const { return SquareOp{}(A(x[i])); }
  void prefetch(std::int64_t i, std::int64_t count) const { prefetch_range(x + i, count); }
};
template <class T>
struct Products {  // dot
  using A = accumulate_t<T>;
  const T* x;
  const T* w;
  A operator()(std::int64_t i) const { return MulOp{}(A(x[i]), A(w[i])); }
  void prefetch(std::int64_t i, std::int64_t count) const {
    prefetch_range(x + i, count);
    prefetch_range(w + i, count);
  }
};

// The lane tree of reduce_order.hpp over `used` lanes of `width` values each (lane l at
// acc + l * width); lanes >= used hold the identity and are skipped (see the top of the file).
template <class T, class Op>
PORTA_INLINE void lane_tree(T* acc, std::int64_t used, std::int64_t width, Op op) {
  for (std::int64_t s = kLanes / 2; s >= 1; s /= 2) {
    if (used <= s) continue;
    const std::int64_t pairs = used - s;  // <= s, so the two ranges below never overlap
    if (width == 1) {
      PORTA_SIMD
      for (std::int64_t l = 0; l < pairs; ++l) acc[l] = op(acc[l], acc[l + s]);
    } else {
      for (std::int64_t l = 0; l < pairs; ++l) {
        T* a = acc + l * width;
        const T* b = acc + (l + s) * width;
        PORTA_SIMD
        for (std::int64_t i = 0; i < width; ++i) a[i] = op(a[i], b[i]);
      }
    }
    used = s;
  }
}

// One chunk of a contiguous sequence: elements src(first + j), j in [0, len), 0 < len <= kChunk.
template <class T, class Op, class Src>
PORTA_REDUCE_CLONES T chunk_flat(const Src& src, std::int64_t first, std::int64_t len) {
  alignas(64) T acc[kLanes];
  const Op op{};
  const T id = Op::template identity<T>();
  const std::int64_t used = std::min(len, kLanes);
  // The first row initialises the lanes: op(identity, x), exactly as the canonical order says.
  PORTA_SIMD
  for (std::int64_t l = 0; l < used; ++l) acc[l] = op(id, src(first + l));
  std::int64_t base = used;
  for (; base + kLanes <= len; base += kLanes) {
    const std::int64_t row = first + base;
    PORTA_SIMD
    for (std::int64_t l = 0; l < kLanes; ++l) acc[l] = op(acc[l], src(row + l));
  }
  const std::int64_t rest = len - base, row = first + base;
  for (std::int64_t l = 0; l < rest; ++l) acc[l] = op(acc[l], src(row + l));
  lane_tree(acc, used, 1, op);
  return acc[0];
}

// Lanes [l0, l1) of chunk_flat's lane array: the operations chunk_flat runs on those lanes, in its
// order, so that runs of lanes of one chunk can be given to different threads (lanes never meet
// before the tree).
template <class T, class Op, class Src>
PORTA_REDUCE_CLONES void chunk_lanes(const Src& src, std::int64_t first, std::int64_t len, std::int64_t l0,
                                     std::int64_t l1, T* acc) {
  const Op op{};
  const T id = Op::template identity<T>();
  const std::int64_t used = std::min(len, kLanes);
  const std::int64_t u1 = std::min(l1, used);
  PORTA_SIMD
  for (std::int64_t l = l0; l < u1; ++l) acc[l] = op(id, src(first + l));
  std::int64_t base = used;
  for (; base + kLanes <= len; base += kLanes) {
    const std::int64_t row = first + base;
    PORTA_SIMD
    for (std::int64_t l = l0; l < l1; ++l) acc[l] = op(acc[l], src(row + l));
  }
  const std::int64_t rest = std::min(len - base, l1), row = first + base;
  for (std::int64_t l = l0; l < rest; ++l) acc[l] = op(acc[l], src(row + l));
}

// min and max are associative and commutative on every input (ops.hpp: NaN propagates, -0.0 is
// below +0.0), so their result does not depend on the order and a chunk of them may skip the lane
// array. Floating-point values are compared as integer keys that order them totally (the sign
// flips the magnitude bits), with a separate "saw a NaN" flag: integer max/min and a compare
// vectorise to a few instructions per vector, where max_op's branches cost 2x (f32) to 4x (f64)
// the memory time (measured: 0.71x / 0.56x a plain `reduction(max:)` loop on 16 cores).
template <class T>
struct MinMaxKey {
  using I = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
  typedef I __attribute__((may_alias)) AliasI;
  static constexpr I kMagnitude = std::numeric_limits<I>::max();  // every bit but the sign
  static PORTA_INLINE I key(I bits) { return bits ^ ((bits >> (8 * sizeof(I) - 1)) & kMagnitude); }
};

template <class T, bool IsMax>
PORTA_REDUCE_CLONES T chunk_minmax(const T* x, std::int64_t len) {
  constexpr std::int64_t kW = 128 / static_cast<std::int64_t>(sizeof(T));  // independent lanes
  if constexpr (std::is_integral_v<T>) {
    T acc[kW];
    for (std::int64_t l = 0; l < kW; ++l) acc[l] = x[0];
    std::int64_t i = 0;
    for (; i + kW <= len; i += kW) {
      PORTA_SIMD
      for (std::int64_t l = 0; l < kW; ++l) acc[l] = IsMax ? std::max(acc[l], x[i + l]) : std::min(acc[l], x[i + l]);
    }
    T r = x[0];
    for (std::int64_t l = 0; l < kW; ++l) r = IsMax ? std::max(r, acc[l]) : std::min(r, acc[l]);
    for (; i < len; ++i) r = IsMax ? std::max(r, x[i]) : std::min(r, x[i]);
    return r;
  } else {
    using K = MinMaxKey<T>;
    using I = typename K::I;
    const auto* xi = reinterpret_cast<const typename K::AliasI*>(x);
    I inf_bits;
    const T inf = std::numeric_limits<T>::infinity();
    std::memcpy(&inf_bits, &inf, sizeof inf);
    const I first = K::key(xi[0]);
    I acc[kW], nan[kW];
    for (std::int64_t l = 0; l < kW; ++l) {
      acc[l] = first;
      nan[l] = 0;
    }
    std::int64_t i = 0;
    for (; i + kW <= len; i += kW) {
      PORTA_SIMD
      for (std::int64_t l = 0; l < kW; ++l) {
        const I b = xi[i + l];
        const I k = K::key(b);
        acc[l] = IsMax ? (k > acc[l] ? k : acc[l]) : (k < acc[l] ? k : acc[l]);
        nan[l] |= static_cast<I>((b & K::kMagnitude) > inf_bits);
      }
    }
    I r = first, any_nan = 0;
    for (std::int64_t l = 0; l < kW; ++l) {
      r = IsMax ? std::max(r, acc[l]) : std::min(r, acc[l]);
      any_nan |= nan[l];
    }
    for (; i < len; ++i) {
      const I b = xi[i];
      r = IsMax ? std::max(r, K::key(b)) : std::min(r, K::key(b));
      any_nan |= static_cast<I>((b & K::kMagnitude) > inf_bits);
    }
    if (any_nan) return std::numeric_limits<T>::quiet_NaN();  // canonicalised with the final value
    const I bits = K::key(r);                                 // key() is its own inverse
    T out;
    std::memcpy(&out, &bits, sizeof out);
    return out;
  }
}

// One contiguous chunk of any op: the order-free min/max kernel where it applies.
template <class T, class Op, class Src>
PORTA_INLINE T chunk_contiguous(const Src& src, std::int64_t first, std::int64_t len) {
  if constexpr (std::is_same_v<Src, Plain<T>> && (std::is_same_v<Op, MaxOp> || std::is_same_v<Op, MinOp>)) {
    return chunk_minmax<T, std::is_same_v<Op, MaxOp>>(src.x + first, len);
  } else {
    return chunk_flat<T, Op>(src, first, len);
  }
}

// kGroup short sequences (len <= kLanes) of a contiguous input, sequence g at
// src(first + g*len + j): each element is its own lane, and the lane trees of all the sequences
// run together, vectorised across sequences (lane j of sequence g at acc[j*kGroup + g]). Writes
// final results (canonical NaN).
constexpr std::int64_t kGroup = 16;
template <class T, class Op, class Src>
PORTA_REDUCE_CLONES void group_short(const Src& src, std::int64_t first, std::int64_t len, T* acc, T* out) {
  const Op op{};
  const T id = Op::template identity<T>();
  for (std::int64_t g = 0; g < kGroup; ++g) {
    const std::int64_t row = first + g * len;
    for (std::int64_t j = 0; j < len; ++j) acc[j * kGroup + g] = op(id, src(row + j));
  }
  lane_tree(acc, len, kGroup, op);
  for (std::int64_t g = 0; g < kGroup; ++g) out[g] = canonical_nan(acc[g]);
}

// One chunk of `width` interleaved sequences: element j of sequence i is src(first + j*stride + i),
// j in [0, len), 0 < len <= kChunk, evaluated depth first. Writing R(c, t) for lane c after the
// tree steps s >= t (R(c, kLanes) is lane c's sequential run), the canonical tree is
//   R(c, s) = op(R(c, 2s), R(c + s, 2s))   (just R(c, 2s) when lane c + s never got an element)
// and the result is R(0, 1). Evaluating that recursion depth first needs one width-wide buffer
// per level (11) instead of all kLanes lanes, so strips can be wide and each row of a strip is a
// long contiguous read, whatever n is. Same operations, same association: same bits.
constexpr int kLaneLevels = [] {
  int l = 0;
  for (std::int64_t s = 1; s < kLanes; s *= 2) ++l;
  return l;
}();

// Lanes of at least this many rows are run row by row (see StripTree::lanes).
constexpr std::int64_t kLongLane = 8;

template <class T, class Op, class Src>
struct StripTree {
  const Src& src;
  std::int64_t first, stride, len, used, width;
  T* scratch;  // (kLaneLevels + 1) * width
  Op op;

  // Columns are done kBlock at a time with a lane's running values in registers, so a lane of
  // r rows costs r loads and one store per column instead of r loads and r stores.
  static constexpr std::int64_t kBlock = 64 / static_cast<std::int64_t>(sizeof(T));

  // Lane c's run (rows c, c + kLanes, ... of the chunk) for columns [i0, i0 + bw) into a.
  PORTA_INLINE void lane_block(std::int64_t c, std::int64_t i0, std::int64_t bw, T* a) const {
    const T id = Op::template identity<T>();
    const std::int64_t r0 = first + c * stride + i0;
    PORTA_SIMD
    for (std::int64_t k = 0; k < bw; ++k) a[k] = op(id, src(r0 + k));
    for (std::int64_t j = c + kLanes; j < len; j += kLanes) {
      const std::int64_t r = first + j * stride + i0;
      PORTA_SIMD
      for (std::int64_t k = 0; k < bw; ++k) a[k] = op(a[k], src(r + k));
    }
  }

  // Lane c's run into dst, one whole row of the strip at a time.
  PORTA_INLINE void lane_rows(std::int64_t c, T* dst) const {
    const T id = Op::template identity<T>();
    std::int64_t row = first + c * stride;
    PORTA_SIMD
    for (std::int64_t i = 0; i < width; ++i) dst[i] = op(id, src(row + i));
    for (std::int64_t j = c + kLanes; j < len; j += kLanes) {
      row = first + j * stride;
      if (j + kLanes < len) src.prefetch(first + (j + kLanes) * stride, width);
      PORTA_SIMD
      for (std::int64_t i = 0; i < width; ++i) dst[i] = op(dst[i], src(row + i));
    }
  }

  // dst = lane(c)                       (Kind::lane)
  // dst = op(lane(c), lane(d))          (Kind::pair)
  // dst = op(dst, lane(c))              (Kind::accumulate)
  enum class Kind { lane, pair, accumulate };
  template <Kind kind>
  PORTA_INLINE void lanes(std::int64_t c, std::int64_t d, T* dst) const {
    if (len >= kLongLane * kLanes) {
      // Long lanes (>= 8 rows): register blocks would read 8+ rows a cache line at a time, too
      // many streams for the prefetcher; run whole rows into an L1 buffer instead.
      T* tmp = scratch + kLaneLevels * width;
      if constexpr (kind == Kind::lane) {
        lane_rows(c, dst);
      } else if constexpr (kind == Kind::pair) {
        lane_rows(c, dst);
        lane_rows(d, tmp);
        PORTA_SIMD
        for (std::int64_t i = 0; i < width; ++i) dst[i] = op(dst[i], tmp[i]);
      } else {
        lane_rows(c, tmp);
        PORTA_SIMD
        for (std::int64_t i = 0; i < width; ++i) dst[i] = op(dst[i], tmp[i]);
      }
      return;
    }
    std::int64_t i0 = 0;
    for (; i0 + kBlock <= width; i0 += kBlock) apply<kind>(c, d, i0, kBlock, dst);
    if (i0 < width) apply<kind>(c, d, i0, width - i0, dst);
  }
  template <Kind kind>
  PORTA_INLINE void apply(std::int64_t c, std::int64_t d, std::int64_t i0, std::int64_t bw, T* dst) const {
    alignas(64) T a[kBlock];
    lane_block(c, i0, bw, a);
    if constexpr (kind == Kind::lane) {
      PORTA_SIMD
      for (std::int64_t k = 0; k < bw; ++k) dst[i0 + k] = a[k];
    } else if constexpr (kind == Kind::pair) {
      alignas(64) T b[kBlock];
      lane_block(d, i0, bw, b);
      PORTA_SIMD
      for (std::int64_t k = 0; k < bw; ++k) dst[i0 + k] = op(a[k], b[k]);
    } else {
      PORTA_SIMD
      for (std::int64_t k = 0; k < bw; ++k) dst[i0 + k] = op(dst[i0 + k], a[k]);
    }
  }

  // R(c, t) into dst; `level` = log2(t) picks the scratch buffer of a right operand. A subtree
  // whose lanes have no partners below level t is just lane c (R(c, t) = R(c, 2t) = ... when
  // c + t >= used), which lets leaves be read straight into the operation that consumes them.
  PORTA_REDUCE_CLONES void eval(std::int64_t c, std::int64_t t, int level, T* dst) const {
    if (c + t >= used) return lanes<Kind::lane>(c, 0, dst);
    if (c + 2 * t >= used) return lanes<Kind::pair>(c, c + t, dst);
    eval(c, 2 * t, level + 1, dst);
    const std::int64_t right = c + t;
    if (right + 2 * t >= used) return lanes<Kind::accumulate>(right, 0, dst);
    T* rhs = scratch + level * width;
    eval(right, 2 * t, level + 1, rhs);
    PORTA_SIMD
    for (std::int64_t i = 0; i < width; ++i) dst[i] = op(dst[i], rhs[i]);
  }
};

// Strip width target: long enough rows that reading a strip streams memory, short enough that the
// level buffers (kLaneLevels of them) stay in L1/L2.
constexpr std::int64_t kStripBytes = std::int64_t(8) << 10;
// Sequences of at most this many elements along the last axis take group_short.
constexpr std::int64_t kShortRun = 256;

// Lane runs per chunk for a contiguous full reduction of n elements in m chunks: enough that the
// team has 4 tasks per thread, from 2^16 elements on (where a map takes the whole team too:
// cpu_map_common.hpp), with runs at least 16 lanes wide; 1: whole chunks. Not for min and max of a
// plain array, whose chunks take the order-free kernel.
template <class T, class Op, class Src>
std::int64_t runs_of_lanes(std::int64_t n, std::int64_t m, int threads) {
  if constexpr (std::is_same_v<Src, Plain<T>> && (std::is_same_v<Op, MaxOp> || std::is_same_v<Op, MinOp>)) {
    return 1;
  } else {
    if (threads <= 1 || n < (std::int64_t(1) << 16)) return 1;
    std::int64_t runs = 1;
    while (m * runs < 4 * threads && kLanes / runs > 16) runs *= 2;
    return runs;
  }
}

template <class T, class Op, class Src>
void reduce_impl(std::int64_t outer, std::int64_t n, std::int64_t inner, const Src& src, T* y) {
  // Results are written once, by the task that computes them, already with the canonical NaN (the
  // GPU kernels do the same on their last write); partials of a first level keep their payloads.
  const auto final_value = [](T v) { return canonical_nan(v); };
  const std::int64_t outputs = outer * inner;
  if (n == 0) {
    const T id = Op::template identity<T>();
    std::fill(y, y + outputs, id);
    return;
  }
  const std::int64_t m = reduce_chunk_count(n);
  // With one chunk per output the results go straight to y; otherwise each task writes its chunk's
  // partial(s) into part[(o*m + c)*inner + i], which is itself an [outer, m, inner] reduction.
  std::vector<T> part;
  if (m > 1) part.resize(static_cast<std::size_t>(outer * m * inner));
  T* dst = m > 1 ? part.data() : y;
  const std::int64_t align = std::max<std::int64_t>(1, 64 / static_cast<std::int64_t>(sizeof(T)));
  const int threads = max_threads();
  const std::int64_t want_tasks = threads > 1 ? 4 * static_cast<std::int64_t>(threads) : 1;

  if (inner == 1 && n <= kShortRun && outer >= kGroup) {
    // Whole groups of kGroup rows; the last few rows (if any) are one task each.
    const std::int64_t groups = outer / kGroup, rest = outer - groups * kGroup;
    std::vector<T> lanes(static_cast<std::size_t>(n * kGroup * threads));
    parallel_tasks(groups + rest, n * kGroup, [&](std::int64_t t, int thread) {
      if (t < groups) {
        group_short<T, Op>(src, t * kGroup * n, n, lanes.data() + n * kGroup * thread, y + t * kGroup);
      } else {
        const std::int64_t o = groups * kGroup + (t - groups);
        y[o] = final_value(chunk_flat<T, Op>(src, o * n, n));
      }
    });
  } else if (inner == 1 && outer == 1 && runs_of_lanes<T, Op, Src>(n, m, threads) > 1) {
    // Fewer chunks than 4 tasks per thread (a full reduction of up to 2^21 elements on 16 threads):
    // each chunk's lanes in runs, one task per run, then the chunks' trees, on the whole team, as a
    // plain `omp parallel for reduction` would use it. Same operations per lane, same trees.
    const std::int64_t runs = runs_of_lanes<T, Op, Src>(n, m, threads), width = kLanes / runs;
    std::vector<T> lanes(static_cast<std::size_t>(m * kLanes));
    const auto run = [&](std::int64_t u) {
      const std::int64_t c = u / runs, l0 = (u % runs) * width, begin = c * kChunk;
      chunk_lanes<T, Op>(src, begin, std::min(kChunk, n - begin), l0, l0 + width, lanes.data() + c * kLanes);
    };
    const auto tree = [&](std::int64_t c) {
      T* acc = lanes.data() + c * kLanes;
      lane_tree(acc, std::min({kChunk, n - c * kChunk, kLanes}), 1, Op{});
      dst[c] = m > 1 ? acc[0] : final_value(acc[0]);
    };
#if defined(_OPENMP)
#pragma omp parallel num_threads(threads)
    {
#pragma omp for schedule(static)
      for (std::int64_t u = 0; u < m * runs; ++u) run(u);
#pragma omp for schedule(static)
      for (std::int64_t c = 0; c < m; ++c) tree(c);
    }
#else
    for (std::int64_t u = 0; u < m * runs; ++u) run(u);
    for (std::int64_t c = 0; c < m; ++c) tree(c);
#endif
  } else if (inner == 1) {
    parallel_tasks(outer * m, std::min(n, kChunk), [&](std::int64_t t, int) {
      const std::int64_t o = t / m, c = t % m;
      const std::int64_t begin = c * kChunk, len = std::min(kChunk, n - begin);
      const T r = chunk_contiguous<T, Op>(src, o * n + begin, len);
      dst[t] = m > 1 ? r : final_value(r);
    });
  } else {
    std::int64_t width = std::max(align, kStripBytes / static_cast<std::int64_t>(sizeof(T)));
    // Few outputs and few chunks: narrower strips, so that every thread gets some.
    if (outer * m * ((inner + width - 1) / width) < want_tasks) {
      const std::int64_t strips = (want_tasks + outer * m - 1) / (outer * m);
      width = std::max(align, ((inner + strips - 1) / strips + align - 1) / align * align);
    }
    width = std::min(width, inner);
    const std::int64_t strips = (inner + width - 1) / width;
    const std::int64_t rows = std::min(n, kChunk);
    // Level buffers, one set per thread, allocated here: nothing may throw inside the team.
    const std::int64_t slice = (kLaneLevels + 1) * width;
    std::vector<T> scratch(static_cast<std::size_t>(slice * max_threads()));
    parallel_tasks(outer * m * strips, rows * width, [&](std::int64_t t, int thread) {
      const std::int64_t s = t % strips, oc = t / strips;
      const std::int64_t o = oc / m, c = oc % m;
      const std::int64_t i0 = s * width, w = std::min(width, inner - i0);
      const std::int64_t begin = c * kChunk, len = std::min(kChunk, n - begin);
      const StripTree<T, Op, Src> tree{src, (o * n + begin) * inner + i0,    inner, len, std::min(len, kLanes),
                                       w,   scratch.data() + slice * thread, Op{}};
      T* out = dst + oc * inner + i0;
      tree.eval(0, 1, 0, out);
      if (m == 1 && std::is_floating_point_v<T>)
        for (std::int64_t i = 0; i < w; ++i) out[i] = final_value(out[i]);
    });
  }
  if (m > 1) reduce_impl<T, Op>(outer, m, inner, Plain<T>{part.data()}, y);
}

// The reductions of src into y (of T), accumulated in accumulate_t<T>: for the 16-bit floats into
// float results first, each then rounded once.
template <class T, class Op, class Src>
void reduce_into(std::int64_t outer, std::int64_t inner, std::int64_t n, const Src& src, T* y) {
  using A = accumulate_t<T>;
  if constexpr (std::is_same_v<A, T>) {
    reduce_impl<T, Op>(outer, n, inner, src, y);
  } else {
    std::vector<A> acc(static_cast<std::size_t>(outer * inner));
    reduce_impl<A, Op>(outer, n, inner, src, acc.data());
    for (std::size_t i = 0; i < acc.size(); ++i) y[i] = T(acc[i]);
  }
}

template <class T, class Op>
void reduce_op(porta_reduce_op op, std::int64_t outer, std::int64_t n, std::int64_t inner, const void* x, void* y) {
  const T* xs = static_cast<const T*>(x);
  T* ys = static_cast<T*>(y);
  if (op == PORTA_REDUCE_SUMSQ) {
    reduce_into<T, Op>(outer, inner, n, Squares<T>{xs}, ys);
  } else {
    reduce_into<T, Op>(outer, inner, n, Plain<T>{xs}, ys);
  }
}

}  // namespace

porta_status reduce(int dev, porta_reduce_op op, porta_dtype dt, std::int64_t outer, std::int64_t n, std::int64_t inner,
                    const void* x, void* y, porta_stream) noexcept {
  constexpr const char* fn = "reduce";
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  if (porta_status st = check::reduce(op, dt, outer, n, inner, x, y); st != PORTA_OK) return st;
  if (outer == 0 || inner == 0) return PORTA_OK;
  PORTA_CPU_TRY
  const auto run = [&](auto combiner) {
    using Op = decltype(combiner);
    return with_dtype_for<Op>(fn, dt, [&](auto tag) { reduce_op<decltype(tag), Op>(op, outer, n, inner, x, y); });
  };
  switch (op) {
    case PORTA_REDUCE_SUM:
      return run(SumOp{});
    case PORTA_REDUCE_SUMSQ:  // check::reduce refused it for complex types
      return run(SumOp{});
    case PORTA_REDUCE_PROD:
      return run(ProdOp{});
    case PORTA_REDUCE_MIN:
      return run(MinOp{});
    case PORTA_REDUCE_MAX:
      return run(MaxOp{});
    case PORTA_REDUCE_COUNT:  // validated above
      break;
  }
  return PORTA_OK;
  PORTA_CPU_CATCH(fn)
}

porta_status dot(int dev, porta_dtype dt, std::int64_t n, const void* x, const void* w, void* y,
                 porta_stream) noexcept {
  constexpr const char* fn = "dot";
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  if (porta_status st = check::dot(dt, n, x, w, y); st != PORTA_OK) return st;
  PORTA_CPU_TRY
  return with_dtype_for<SumOp>(fn, dt, [&](auto tag) {
    using T = decltype(tag);
    reduce_into<T, SumOp>(1, 1, n, Products<T>{static_cast<const T*>(x), static_cast<const T*>(w)}, static_cast<T*>(y));
  });
  PORTA_CPU_CATCH(fn)
}

}  // namespace porta::detail::cpu
