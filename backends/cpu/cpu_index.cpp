// SPDX-License-Identifier: Apache-2.0
// The CPU backend's view and indexing entries: strided copies (views), comparisons into int32
// masks, where, take (gather) and scatter. Each runs to completion before it returns, split over an
// OpenMP team when large; the results never depend on the thread count (scatter's rule for
// repeated indices is decided by one serial pass in index order).
#include <cstring>
#include <vector>

#include "backends/common/compare_ops.hpp"
#include "cpu_common.hpp"
#include "cpu_kernels.hpp"

namespace porta::detail::cpu {
namespace {

// Elements are moved as raw 2-, 4-, 8- or 16-byte words: a copy never changes a bit (NaN payloads, -0.0).
struct alignas(16) Word16 {
  std::uint64_t lo, hi;
};

template <class F>
porta_status with_word(const char* fn, porta_dtype dt, F&& f) {
  switch (dtype_size(dt)) {
    case 2:  // float16, bfloat16
      f(std::uint16_t{});
      return PORTA_OK;
    case 4:
      f(std::uint32_t{});
      return PORTA_OK;
    case 8:
      f(std::uint64_t{});
      return PORTA_OK;
    case 16:  // complex128
      f(Word16{});
      return PORTA_OK;
    default:
      return unknown_dtype(fn, dt);
  }
}

}  // namespace

porta_status copy_strided(int dev, porta_dtype dt, std::int32_t rank, const std::int64_t* shape, const void* src,
                          const std::int64_t* src_strides, void* dst, const std::int64_t* dst_strides,
                          porta_stream) noexcept {
  constexpr const char* fn = "copy_strided";
  std::int64_t n = 0;
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  if (porta_status st = check::copy_strided(dt, rank, shape, src, src_strides, dst, dst_strides, &n); st != PORTA_OK)
    return st;
  if (n == 0) return PORTA_OK;
  // Padded to 4-D with leading axes of one element.
  std::int64_t d[4] = {1, 1, 1, 1}, ss[4] = {0, 0, 0, 0}, ds[4] = {0, 0, 0, 0};
  for (int i = 0; i < rank; ++i) {
    const int k = 4 - rank + i;
    d[k] = shape[i];
    ss[k] = src_strides[i];
    ds[k] = dst_strides[i];
  }
  PORTA_CPU_TRY
  return with_word(fn, dt, [&](auto word) {
    using W = decltype(word);
    const W* s = static_cast<const W*>(src);
    W* y = static_cast<W*>(dst);
    const std::int64_t rows = d[0] * d[1] * d[2], cols = d[3];
    // One task per innermost row; the row index decomposes into the three outer axes.
    parallel_tasks(rows, cols, [&](std::int64_t r, int) {
      const std::int64_t i2 = r % d[2], i1 = (r / d[2]) % d[1], i0 = r / (d[2] * d[1]);
      const W* sr = s + i0 * ss[0] + i1 * ss[1] + i2 * ss[2];
      W* yr = y + i0 * ds[0] + i1 * ds[1] + i2 * ds[2];
      if (ss[3] == 1 && ds[3] == 1) {
        std::memcpy(yr, sr, static_cast<std::size_t>(cols) * sizeof(W));
      } else {
        for (std::int64_t c = 0; c < cols; ++c) yr[c * ds[3]] = sr[c * ss[3]];
      }
    });
  });
  PORTA_CPU_CATCH(fn)
}

porta_status compare(int dev, porta_compare_op op, porta_dtype dt, std::int64_t rows, std::int64_t cols, const void* a,
                     std::int64_t a_rs, std::int64_t a_cs, const void* b, std::int64_t b_rs, std::int64_t b_cs,
                     std::int32_t* y, porta_stream) noexcept {
  constexpr const char* fn = "compare";
  std::int64_t n = 0;
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  if (porta_status st = check::compare(op, dt, rows, cols, a, b, y, &n); st != PORTA_OK) return st;
  if (n == 0) return PORTA_OK;
  return backend::with_compare_op(op, PORTA_ERR_INVALID, [&](auto o) {
    return with_dtype_for<decltype(o)>(fn, dt, [&](auto tag) {
      using T = decltype(tag);
      const T* pa = static_cast<const T*>(a);
      const T* pb = static_cast<const T*>(b);
      parallel_ranges(n, kGrainCheap, [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t i = lo; i < hi; ++i) {
          const std::int64_t r = i / cols, c = i - r * cols;
          y[i] = o(pa[r * a_rs + c * a_cs], pb[r * b_rs + c * b_cs]);
        }
      });
    });
  });
}

porta_status where(int dev, porta_dtype dt, std::int64_t n, const std::int32_t* mask, const void* a,
                   std::int64_t a_step, const void* b, std::int64_t b_step, void* y, porta_stream) noexcept {
  constexpr const char* fn = "where";
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  if (porta_status st = check::where(dt, n, mask, a, a_step, b, b_step, y); st != PORTA_OK) return st;
  if (n == 0) return PORTA_OK;
  return with_word(fn, dt, [&](auto word) {
    using W = decltype(word);
    const W* pa = static_cast<const W*>(a);
    const W* pb = static_cast<const W*>(b);
    W* py = static_cast<W*>(y);
    parallel_ranges(n, kGrainCheap, [&](std::int64_t lo, std::int64_t hi) {
      PORTA_SIMD
      for (std::int64_t i = lo; i < hi; ++i) py[i] = mask[i] != 0 ? pa[i * a_step] : pb[i * b_step];
    });
  });
}

porta_status take(int dev, porta_dtype dt, std::int64_t outer, std::int64_t n, std::int64_t inner, const void* x,
                  std::int64_t m, const std::int64_t* idx, void* y, porta_stream) noexcept {
  constexpr const char* fn = "take";
  std::int64_t rows = 0, total = 0;
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  if (porta_status st = check::gather_scatter(fn, dt, outer, n, inner, x, m, idx, y, &rows, &total); st != PORTA_OK)
    return st;
  if (total == 0) return PORTA_OK;
  return with_word(fn, dt, [&](auto word) {
    using W = decltype(word);
    const W* px = static_cast<const W*>(x);
    W* py = static_cast<W*>(y);
    parallel_tasks(rows, inner, [&](std::int64_t r, int) {
      const std::int64_t o = r / m, j = r - o * m, k = idx[j];
      W* out = py + r * inner;
      if (k < 0 || k >= n) {
        std::memset(out, 0, static_cast<std::size_t>(inner) * sizeof(W));  // never read out of bounds
      } else {
        std::memcpy(out, px + (o * n + k) * inner, static_cast<std::size_t>(inner) * sizeof(W));
      }
    });
  });
}

porta_status scatter(int dev, porta_dtype dt, std::int64_t outer, std::int64_t n, std::int64_t inner, void* y,
                     std::int64_t m, const std::int64_t* idx, const void* v, porta_stream) noexcept {
  constexpr const char* fn = "scatter";
  std::int64_t rows = 0, total = 0;
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  if (porta_status st = check::gather_scatter(fn, dt, outer, n, inner, y, m, idx, v, &rows, &total); st != PORTA_OK)
    return st;
  if (total == 0 || n == 0) return PORTA_OK;
  PORTA_CPU_TRY
  // winner[k]: the last j with idx[j] == k. One serial pass in index order decides every
  // duplicate the way the GPU's atomicMax does; the copies then run in parallel.
  std::vector<std::int64_t> winner(static_cast<std::size_t>(n), -1);
  for (std::int64_t j = 0; j < m; ++j)
    if (idx[j] >= 0 && idx[j] < n) winner[static_cast<std::size_t>(idx[j])] = j;
  return with_word(fn, dt, [&](auto word) {
    using W = decltype(word);
    const W* pv = static_cast<const W*>(v);
    W* py = static_cast<W*>(y);
    parallel_tasks(rows, inner, [&](std::int64_t r, int) {
      const std::int64_t o = r / m, j = r - o * m, k = idx[j];
      if (k < 0 || k >= n || winner[static_cast<std::size_t>(k)] != j) return;
      std::memcpy(py + (o * n + k) * inner, pv + r * inner, static_cast<std::size_t>(inner) * sizeof(W));
    });
  });
  PORTA_CPU_CATCH(fn)
}

}  // namespace porta::detail::cpu
