// SPDX-License-Identifier: Apache-2.0
// Sparse products on the CPU: porta's own row-ordered kernel (porta/detail/sparse_order.hpp), the
// only one here (there is no vendor sparse library to defer to), so the CPU always gives the bits
// that PORTA_SPARSE_OWN_KERNEL promises on every device.
//
// Rows are split over threads by work, not by count: each thread takes a contiguous block of rows
// holding about the same number of stored entries plus rows, found by binary search in row_ptr,
// so that a matrix with a few dense rows does not leave one thread with most of the work (a
// static `omp for` over rows does). Each output element is still computed by one thread in the
// one order, so the split never changes a bit.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "backends/cpu/cpu_common.hpp"
#include "backends/cpu/cpu_kernels.hpp"
#include "porta/detail/sparse_order.hpp"

namespace porta::detail::cpu {
namespace {

// The first row r in [0, rows] with row_ptr[r] + r >= target (row_ptr is non-decreasing).
template <class I>
std::int64_t row_for_work(const I* row_ptr, std::int64_t rows, std::int64_t target) {
  std::int64_t lo = 0, hi = rows;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (static_cast<std::int64_t>(row_ptr[mid]) + mid < target)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

template <class T, class I>
void spmv_rows(std::int64_t r0, std::int64_t r1, const I* __restrict row_ptr, const I* __restrict col,
               const T* __restrict values, const T* __restrict x, T* __restrict y) {
  for (std::int64_t i = r0; i < r1; ++i)
    y[i] = canonical_nan(sparse_row_sum(values, col, row_ptr[i], row_ptr[i + 1], x, std::int64_t{1}));
}

template <class T, class I>
void spmm_rows(std::int64_t r0, std::int64_t r1, const I* row_ptr, const I* col, const T* values, std::int64_t k,
               T alpha, const T* x, std::int64_t ldx, T beta, T* y, std::int64_t ldy) {
  if (k == 1 && ldx == 1 && ldy == 1 && alpha == T(1) && beta == T(0)) {
    // y = A x, the common call: the same sums as sparse_row_sum and sparse_finish (1 * acc is acc),
    // on pointers the compiler may assume apart, with the row's bounds loaded once.
    spmv_rows(r0, r1, row_ptr, col, values, x, y);
    return;
  }
  if (k == 1) {
    for (std::int64_t i = r0; i < r1; ++i) {
      const T acc = sparse_row_sum(values, col, row_ptr[i], row_ptr[i + 1], x, ldx);
      y[i * ldy] = sparse_finish(acc, alpha, beta, y + i * ldy);
    }
    return;
  }
  // Several right-hand sides: the products of one stored entry go across a row of X, which
  // vectorises; each column's sum still runs over the row's entries in storage order.
  std::vector<T> acc(static_cast<std::size_t>(k));
  for (std::int64_t i = r0; i < r1; ++i) {
    std::fill(acc.begin(), acc.end(), T(0));
    T* a = acc.data();
    for (std::int64_t j = row_ptr[i]; j < static_cast<std::int64_t>(row_ptr[i + 1]); ++j) {
      const T v = values[j];
      const T* xr = x + static_cast<std::int64_t>(col[j]) * ldx;
      PORTA_SIMD
      for (std::int64_t c = 0; c < k; ++c) a[c] = add_rn(a[c], mul_rn(v, xr[c]));
    }
    T* yr = y + i * ldy;
    for (std::int64_t c = 0; c < k; ++c) yr[c] = sparse_finish(a[c], alpha, beta, yr + c);
  }
}

template <class T, class I>
void spmm_typed(std::int64_t rows, std::int64_t nnz, const I* row_ptr, const I* col, const T* values, std::int64_t k,
                T alpha, const T* x, std::int64_t ldx, T beta, T* y, std::int64_t ldy) {
  // Work of a row: its entries times the right-hand sides, plus the row's own output.
  const std::int64_t work = (nnz + rows) * k;
  const int nt = threads_for(work, kGrainCheap);
  if (nt <= 1) {
    spmm_rows(0, rows, row_ptr, col, values, k, alpha, x, ldx, beta, y, ldy);
    return;
  }
#if defined(_OPENMP)
#pragma omp parallel num_threads(nt)
  {
    const std::int64_t t = omp_get_thread_num(), T_ = omp_get_num_threads();
    const std::int64_t total = nnz + rows;
    const std::int64_t r0 = row_for_work(row_ptr, rows, total / T_ * t + std::min(t, total % T_));
    const std::int64_t r1 =
        t + 1 == T_ ? rows : row_for_work(row_ptr, rows, total / T_ * (t + 1) + std::min(t + 1, total % T_));
    if (r0 < r1) spmm_rows(r0, r1, row_ptr, col, values, k, alpha, x, ldx, beta, y, ldy);
  }
#else
  spmm_rows(0, rows, row_ptr, col, values, k, alpha, x, ldx, beta, y, ldy);
#endif
}

}  // namespace

porta_status spmm(int dev, porta_dtype dt, porta_dtype index_dt, std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                  const void* row_ptr, const void* col_idx, const void* values, std::int64_t k, porta_scalar alpha,
                  const void* x, std::int64_t ldx, porta_scalar beta, void* y, std::int64_t ldy, std::uint32_t,
                  porta_stream) noexcept {
  constexpr const char* fn = "spmm";
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  if (porta_status st = check::spmm(dt, index_dt, rows, cols, nnz, row_ptr, col_idx, values, k, x, ldx, y, ldy);
      st != PORTA_OK)
    return st;
  if (rows == 0 || k == 0) return PORTA_OK;
  PORTA_CPU_TRY
  const auto run = [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    spmm_typed<T, I>(rows, nnz, static_cast<const I*>(row_ptr), static_cast<const I*>(col_idx),
                     static_cast<const T*>(values), k, scalar_value<T>(alpha), static_cast<const T*>(x), ldx,
                     scalar_value<T>(beta), static_cast<T*>(y), ldy);
  };
  const auto by_index = [&](auto t) {
    if (index_dt == PORTA_I32)
      run(t, std::int32_t{});
    else
      run(t, std::int64_t{});
  };
  if (dt == PORTA_F32)
    by_index(float{});
  else
    by_index(double{});
  return PORTA_OK;
  PORTA_CPU_CATCH(fn)
}

}  // namespace porta::detail::cpu
