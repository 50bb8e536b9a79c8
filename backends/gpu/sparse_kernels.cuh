// SPDX-License-Identifier: Apache-2.0
// porta's own CSR products: definitions of SparseKernels<Api, T> (kernels.hpp). They serve
// PORTA_SPARSE_OWN_KERNEL and every sparse product of the HIP backend (no rocSPARSE is linked).
//
// Each output element is one thread's sum over its row in storage order
// (porta/detail/sparse_order.hpp), so the bits are the CPU's. A thread per row alone reads the
// matrix badly: neighbouring threads' entries lie a row length apart, so each load instruction of
// a warp touches several times the cache lines it uses. So a block of kSpmvRows rows first copies
// its rows' entries (values and columns, one contiguous span) into shared memory with coalesced
// loads, then each thread sums its row from there. A block whose span does not fit (long rows)
// reads global memory directly; the order is the same either way.
//
// With k > 1 right-hand sides, thread g computes output (g / k, g % k): the threads of one row
// read one row of X together (coalesced), and the row's entries are broadcast to them.
#pragma once

#include <cstdint>

#include "backends/gpu/kernels.hpp"
#include "porta/detail/gpu/api.cuh"
#include "porta/detail/sparse_order.hpp"

namespace porta::detail::gpu {

inline constexpr int kSpmvRows = 128;    // rows (and threads) per block
inline constexpr int kSpmvStage = 1024;  // entries a block stages in shared memory (8 per row)
inline constexpr int kSpmmThreads = 256;

template <class T, class I>
__global__ void __launch_bounds__(kSpmvRows)
    spmv_kernel(std::int64_t rows, const I* __restrict__ row_ptr, const I* __restrict__ col,
                const T* __restrict__ values, T alpha, const T* __restrict__ x, std::int64_t ldx, T beta,
                T* __restrict__ y, std::int64_t ldy) {
  __shared__ T stage_v[kSpmvStage];
  __shared__ I stage_c[kSpmvStage];
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.x) * kSpmvRows;
  const std::int64_t r1 = r0 + kSpmvRows < rows ? r0 + kSpmvRows : rows;
  const std::int64_t i = r0 + threadIdx.x;
  const std::int64_t base = row_ptr[r0], span = static_cast<std::int64_t>(row_ptr[r1]) - base;
  if (span <= kSpmvStage) {  // the same for the whole block: the barrier is reached by all or none
    for (std::int64_t e = threadIdx.x; e < span; e += kSpmvRows) {
      stage_v[e] = values[base + e];
      stage_c[e] = col[base + e];
    }
    __syncthreads();
    if (i < r1) {
      const T acc = sparse_row_sum(stage_v, stage_c, static_cast<std::int64_t>(row_ptr[i]) - base,
                                   static_cast<std::int64_t>(row_ptr[i + 1]) - base, x, ldx);
      y[i * ldy] = sparse_finish(acc, alpha, beta, y + i * ldy);
    }
  } else if (i < r1) {
    const T acc = sparse_row_sum(values, col, row_ptr[i], row_ptr[i + 1], x, ldx);
    y[i * ldy] = sparse_finish(acc, alpha, beta, y + i * ldy);
  }
}

template <class T, class I>
__global__ void __launch_bounds__(kSpmmThreads)
    spmm_kernel(std::int64_t rows, const I* __restrict__ row_ptr, const I* __restrict__ col,
                const T* __restrict__ values, std::int64_t k, T alpha, const T* __restrict__ x, std::int64_t ldx,
                T beta, T* __restrict__ y, std::int64_t ldy) {
  const std::int64_t total = rows * k;
  for (std::int64_t g = static_cast<std::int64_t>(blockIdx.x) * kSpmmThreads + threadIdx.x; g < total;
       g += static_cast<std::int64_t>(gridDim.x) * kSpmmThreads) {
    const std::int64_t i = g / k, c = g - i * k;
    const T acc = sparse_row_sum(values, col, row_ptr[i], row_ptr[i + 1], x + c, ldx);
    T* out = y + i * ldy + c;
    *out = sparse_finish(acc, alpha, beta, out);
  }
}

template <class Api, class T, class I>
int spmm_launch(std::int64_t rows, const I* row_ptr, const I* col, const T* values, std::int64_t k, T alpha, const T* x,
                std::int64_t ldx, T beta, T* y, std::int64_t ldy, void* stream) {
  if (rows <= 0 || k <= 0) return 0;
  const auto s = static_cast<typename Api::Stream>(stream);
  if (k == 1) {
    const std::int64_t blocks = (rows + kSpmvRows - 1) / kSpmvRows;
    if (blocks > kMaxGrid) return static_cast<int>(Api::kInvalidValue);  // 2^38 rows: beyond any device memory
    return static_cast<int>(Api::launch(spmv_kernel<T, I>, static_cast<unsigned>(blocks), kSpmvRows, 0, s, rows,
                                        row_ptr, col, values, alpha, x, ldx, beta, y, ldy));
  }
  const std::int64_t want = (rows * k + kSpmmThreads - 1) / kSpmmThreads;
  const unsigned grid = static_cast<unsigned>(want < kMaxGrid ? want : kMaxGrid);
  return static_cast<int>(Api::launch(spmm_kernel<T, I>, grid, kSpmmThreads, 0, s, rows, row_ptr, col, values, k, alpha,
                                      x, ldx, beta, y, ldy));
}

template <class Api, class T>
int SparseKernels<Api, T>::spmm(std::int64_t rows, const std::int32_t* row_ptr, const std::int32_t* col,
                                const T* values, std::int64_t k, T alpha, const T* x, std::int64_t ldx, T beta, T* y,
                                std::int64_t ldy, void* stream) {
  return spmm_launch<Api>(rows, row_ptr, col, values, k, alpha, x, ldx, beta, y, ldy, stream);
}

template <class Api, class T>
int SparseKernels<Api, T>::spmm(std::int64_t rows, const std::int64_t* row_ptr, const std::int64_t* col,
                                const T* values, std::int64_t k, T alpha, const T* x, std::int64_t ldx, T beta, T* y,
                                std::int64_t ldy, void* stream) {
  return spmm_launch<Api>(rows, row_ptr, col, values, k, alpha, x, ldx, beta, y, ldy, stream);
}

}  // namespace porta::detail::gpu
