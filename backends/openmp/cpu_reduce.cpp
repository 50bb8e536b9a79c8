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
// - Along an inner axis (inner > 1), the lanes of a strip of consecutive outputs are updated
//   together: row k of the strip is contiguous in memory, and lane (k mod kReduceLanes) of every
//   output in the strip takes its element. Each output still sees exactly its canonical sequence.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "cpu_common.hpp"
#include "cpu_kernels.hpp"
#include "porta/detail/ops.hpp"
#include "porta/detail/reduce_order.hpp"

namespace porta::detail::cpu {
namespace {

constexpr std::int64_t kLanes = kReduceLanes;
constexpr std::int64_t kChunk = kReduceChunk;
static_assert((kLanes & (kLanes - 1)) == 0, "lane count must be a power of two");

// How element i of the flat [outer, n, inner] input is produced.
template <class T>
struct Plain {
  const T* x;
  T operator()(std::int64_t i) const { return x[i]; }
};
template <class T>
struct Squares {  // SUMSQ: the product is rounded before it is added (no contraction)
  const T* x;
  T operator()(std::int64_t i) const { return SquareOp{}(x[i]); }
};
template <class T>
struct Products {  // dot
  const T* x;
  const T* w;
  T operator()(std::int64_t i) const { return MulOp{}(x[i], w[i]); }
};

// The lane tree of reduce_order.hpp over `used` lanes of `width` values each (lane l at
// acc + l * width); lanes >= used hold the identity and are skipped (see the top of the file).
template <class T, class Op>
inline void lane_tree(T* acc, std::int64_t used, std::int64_t width, Op op) {
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
T chunk_flat(const Src& src, std::int64_t first, std::int64_t len) {
  alignas(64) T acc[kLanes];
  const Op op{};
  const T id = Op::template identity<T>();
  const std::int64_t used = std::min(len, kLanes);
  for (std::int64_t l = 0; l < used; ++l) acc[l] = id;
  std::int64_t base = 0;
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

// One chunk of `width` interleaved sequences: element j of sequence i is src(first + j*stride + i),
// j in [0, len), 0 < len <= kChunk. Writes the width results to out[0..width).
template <class T, class Op, class Src>
void chunk_strip(const Src& src, std::int64_t first, std::int64_t stride, std::int64_t len, std::int64_t width, T* acc,
                 T* out) {
  const Op op{};
  const T id = Op::template identity<T>();
  const std::int64_t used = std::min(len, kLanes);
  std::fill(acc, acc + used * width, id);
  for (std::int64_t j = 0; j < len; ++j) {
    T* a = acc + (j & (kLanes - 1)) * width;
    const std::int64_t row = first + j * stride;
    PORTA_SIMD
    for (std::int64_t i = 0; i < width; ++i) a[i] = op(a[i], src(row + i));
  }
  lane_tree(acc, used, width, op);
  std::memcpy(out, acc, static_cast<std::size_t>(width) * sizeof(T));
}

// Lane storage of one strip: the strip is as wide as fits here, so that the lanes stay in L2
// while rows stream through them.
constexpr std::int64_t kStripBytes = std::int64_t(256) << 10;

template <class T, class Op, class Src>
void reduce_impl(std::int64_t outer, std::int64_t n, std::int64_t inner, const Src& src, T* y) {
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

  if (inner == 1) {
    parallel_tasks(outer * m, std::min(n, kChunk), [&](std::int64_t t, int) {
      const std::int64_t o = t / m, c = t % m;
      const std::int64_t begin = c * kChunk, len = std::min(kChunk, n - begin);
      dst[t] = chunk_flat<T, Op>(src, o * n + begin, len);
    });
  } else {
    const std::int64_t used = std::min(std::min(n, kChunk), kLanes);
    const std::int64_t align = std::max<std::int64_t>(1, 64 / static_cast<std::int64_t>(sizeof(T)));
    std::int64_t width = std::max(align, kStripBytes / static_cast<std::int64_t>(sizeof(T)) / used / align * align);
    // Few outputs and few chunks: narrower strips, so that every thread gets some.
    const std::int64_t want = 4 * static_cast<std::int64_t>(max_threads());
    if (outer * m * ((inner + width - 1) / width) < want) {
      const std::int64_t strips = (want + outer * m - 1) / (outer * m);
      width = std::max(align, ((inner + strips - 1) / strips + align - 1) / align * align);
    }
    width = std::min(width, inner);
    const std::int64_t strips = (inner + width - 1) / width;
    const std::int64_t rows = std::min(n, kChunk);
    // Lane storage, one slice per thread, allocated here: nothing may throw inside the team.
    const std::int64_t slice = used * width;
    std::vector<T> lanes(static_cast<std::size_t>(slice * max_threads()));
    parallel_tasks(outer * m * strips, rows * width, [&](std::int64_t t, int thread) {
      const std::int64_t s = t % strips, oc = t / strips;
      const std::int64_t o = oc / m, c = oc % m;
      const std::int64_t i0 = s * width, w = std::min(width, inner - i0);
      const std::int64_t begin = c * kChunk, len = std::min(kChunk, n - begin);
      T* acc = lanes.data() + slice * thread;
      chunk_strip<T, Op>(src, (o * n + begin) * inner + i0, inner, len, w, acc, dst + oc * inner + i0);
    });
  }
  if (m > 1) reduce_impl<T, Op>(outer, m, inner, Plain<T>{part.data()}, y);
}

template <class T, class Op>
void reduce_op(porta_reduce_op op, std::int64_t outer, std::int64_t n, std::int64_t inner, const void* x, void* y) {
  const T* xs = static_cast<const T*>(x);
  T* ys = static_cast<T*>(y);
  if (op == PORTA_REDUCE_SUMSQ) {
    reduce_impl<T, Op>(outer, n, inner, Squares<T>{xs}, ys);
  } else {
    reduce_impl<T, Op>(outer, n, inner, Plain<T>{xs}, ys);
  }
}

}  // namespace

porta_status reduce(int dev, porta_reduce_op op, porta_dtype dt, std::int64_t outer, std::int64_t n, std::int64_t inner,
                    const void* x, void* y, porta_stream) noexcept {
  constexpr const char* fn = "reduce";
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  if (!valid_dtype(dt)) return set_error(PORTA_ERR_INVALID, "%s: unknown dtype %d", fn, static_cast<int>(dt));
  if (op < PORTA_REDUCE_SUM || op >= PORTA_REDUCE_COUNT)
    return set_error(PORTA_ERR_INVALID, "%s: unknown reduce op %d", fn, static_cast<int>(op));
  std::int64_t outputs = 0, total = 0;
  if (outer < 0 || n < 0 || inner < 0 || __builtin_mul_overflow(outer, inner, &outputs) ||
      __builtin_mul_overflow(outputs, n, &total))
    return set_error(PORTA_ERR_INVALID, "%s: bad shape [%lld, %lld, %lld]", fn, static_cast<long long>(outer),
                     static_cast<long long>(n), static_cast<long long>(inner));
  if (outputs == 0) return PORTA_OK;
  if (y == nullptr || (total > 0 && x == nullptr)) return set_error(PORTA_ERR_INVALID, "%s: NULL array", fn);
  PORTA_CPU_TRY
  dispatch_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    switch (op) {
      case PORTA_REDUCE_SUM:
      case PORTA_REDUCE_SUMSQ:
        reduce_op<T, SumOp>(op, outer, n, inner, x, y);
        break;
      case PORTA_REDUCE_PROD:
        reduce_op<T, ProdOp>(op, outer, n, inner, x, y);
        break;
      case PORTA_REDUCE_MIN:
        reduce_op<T, MinOp>(op, outer, n, inner, x, y);
        break;
      default:
        reduce_op<T, MaxOp>(op, outer, n, inner, x, y);
        break;
    }
  });
  return PORTA_OK;
  PORTA_CPU_CATCH(fn)
}

porta_status dot(int dev, porta_dtype dt, std::int64_t n, const void* x, const void* w, void* y,
                 porta_stream) noexcept {
  constexpr const char* fn = "dot";
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  if (!valid_dtype(dt)) return set_error(PORTA_ERR_INVALID, "%s: unknown dtype %d", fn, static_cast<int>(dt));
  if (porta_status st = check_count(n, fn); st != PORTA_OK) return st;
  if (y == nullptr || (n > 0 && (x == nullptr || w == nullptr)))
    return set_error(PORTA_ERR_INVALID, "%s: NULL array", fn);
  PORTA_CPU_TRY
  dispatch_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    reduce_impl<T, SumOp>(1, n, 1, Products<T>{static_cast<const T*>(x), static_cast<const T*>(w)}, static_cast<T*>(y));
  });
  return PORTA_OK;
  PORTA_CPU_CATCH(fn)
}

}  // namespace porta::detail::cpu
