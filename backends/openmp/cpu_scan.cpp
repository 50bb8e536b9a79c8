// SPDX-License-Identifier: Apache-2.0
// Scans of the CPU backend: the canonical order of porta/detail/scan_order.hpp, tile by tile over
// the OpenMP team. Every tile's local scan and every carry is the formula's, whichever thread runs
// it, so the bits do not depend on the thread count and equal the GPU's.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "backends/common/scan_random_checks.hpp"
#include "cpu_common.hpp"
#include "cpu_kernels.hpp"
#include "porta/detail/ops.hpp"
#include "porta/detail/scan_order.hpp"

namespace porta::detail::cpu {
namespace {

// One contiguous sequence x[0..n) into y (y == x allowed when inclusive). `parallel`: spread its
// tiles over the team (else the calling thread does everything, for one of many sequences).
template <class T, class Op>
void scan_line(const T* x, std::int64_t n, T* y, Op op, bool exclusive, bool parallel) {
  if (n <= 0) return;
  const std::int64_t tiles = scan_tile_count(n);
  const std::int64_t shift = exclusive ? 1 : 0;
  std::vector<T> S(static_cast<std::size_t>(tiles)), C(static_cast<std::size_t>(tiles));
  // Pass 1: each tile's local values, written where its outputs go (shifted by one when
  // exclusive: the last input's value is dropped), and its total.
  const auto local = [&](std::int64_t t) {
    alignas(64) T buf[kScanTile];
    const std::int64_t b = t * kScanTile;
    const std::int64_t len = std::min(kScanTile, n - b);
    S[static_cast<std::size_t>(t)] = scan_tile_local(x + b, len, buf, op);
    const std::int64_t m = std::min(len, n - shift - b);
    for (std::int64_t i = 0; i < m; ++i) y[b + shift + i] = buf[i];
  };
  // Pass 2 (after the carries): y = C[t] ⊕ L, NaN canonical.
  const auto finish = [&](std::int64_t t) {
    const std::int64_t b = t * kScanTile;
    const std::int64_t m = std::min(kScanTile, n - shift - b);
    const T c = C[static_cast<std::size_t>(t)];
    T* out = y + b + shift;
    for (std::int64_t i = 0; i < m; ++i) out[i] = canonical_nan(op(c, out[i]));
  };
  if (parallel) {
    parallel_tasks(tiles, kScanTile, [&](std::int64_t t, int) { local(t); });
  } else {
    for (std::int64_t t = 0; t < tiles; ++t) local(t);
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
  if (inner == 1) {
    // Rows: one row at a time over the team when rows are few, else whole rows per thread.
    if (lines < max_threads()) {
      for (std::int64_t r = 0; r < lines; ++r) scan_line(x + r * n, n, y + r * n, op, exclusive, true);
    } else {
      parallel_tasks(lines, n, [&](std::int64_t r, int) { scan_line(x + r * n, n, y + r * n, op, exclusive, false); });
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
    scan_line(buf.data(), n, buf.data() + n, op, exclusive, false);
    for (std::int64_t q = 0; q < n; ++q) dst[q * inner] = buf[static_cast<std::size_t>(n + q)];
  });
}

}  // namespace

porta_status scan(int dev, porta_reduce_op op, porta_dtype dt, std::uint32_t flags, std::int64_t outer, std::int64_t n,
                  std::int64_t inner, const void* x, void* y, porta_stream) noexcept {
  constexpr const char* fn = "scan";
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  if (porta_status st = backend::check::scan(op, dt, flags, outer, n, inner, x, y); st != PORTA_OK) return st;
  if (outer == 0 || n == 0 || inner == 0) return PORTA_OK;
  const bool exclusive = (flags & PORTA_SCAN_EXCLUSIVE) != 0;
  PORTA_CPU_TRY
  with_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    const T* xs = static_cast<const T*>(x);
    T* ys = static_cast<T*>(y);
    if (raw_enum(op) == PORTA_REDUCE_SUM) {
      scan_typed(outer, n, inner, xs, ys, SumOp{}, exclusive);
    } else {
      scan_typed(outer, n, inner, xs, ys, MaxOp{}, exclusive);
    }
  });
  return PORTA_OK;
  PORTA_CPU_CATCH(fn)
}

}  // namespace porta::detail::cpu
