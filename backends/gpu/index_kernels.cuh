// SPDX-License-Identifier: Apache-2.0
// Definitions of IndexKernels<Api, T> (index_kernels.hpp): strided copies for views, comparisons
// into int32 masks, where, take (gather) and scatter. Grid-stride kernels over the output,
// one element per thread-step; the comparisons are ops.hpp's functors, shared with the CPU.
//
// scatter's rule for repeated indices (the last occurrence in index order wins, as on the CPU):
// a first kernel stores j + 1 for every j into winner[idx[j]] with atomicMax, a second writes
// the rows whose j is the winner. The result does not depend on scheduling.
#pragma once

#include <cstdint>

#include "backends/common/compare_ops.hpp"
#include "backends/gpu/index_kernels.hpp"
#include "porta/detail/gpu/api.cuh"
#include "porta/detail/ops.hpp"

namespace porta::detail::gpu {

// A shape and two strides by value (kernel arguments), padded to 4-D with leading axes of one.
struct StridedCopy4 {
  std::int64_t d[4];
  std::int64_t ss[4];
  std::int64_t ds[4];
};

template <class T>
__global__ void __launch_bounds__(kBlockThreads)
    copy_strided_kernel(std::int64_t n, StridedCopy4 g, const T* __restrict__ src, T* __restrict__ dst) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    std::int64_t rest = i, so = 0, dof = 0;
    for (int k = 3; k >= 0; --k) {
      const std::int64_t q = rest / g.d[k], c = rest - q * g.d[k];
      so += c * g.ss[k];
      dof += c * g.ds[k];
      rest = q;
    }
    dst[dof] = src[so];
  }
}

template <class Op, class T>
__global__ void __launch_bounds__(kBlockThreads)
    compare_kernel(std::int64_t rows, std::int64_t cols, const T* a, std::int64_t a_rs, std::int64_t a_cs, const T* b,
                   std::int64_t b_rs, std::int64_t b_cs, std::int32_t* y) {
  const std::int64_t n = rows * cols;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::int64_t r = i / cols, c = i - r * cols;
    y[i] = Op{}(a[r * a_rs + c * a_cs], b[r * b_rs + c * b_cs]);
  }
}

template <class T>
__global__ void __launch_bounds__(kBlockThreads)
    where_kernel(std::int64_t n, const std::int32_t* mask, const T* a, std::int64_t a_step, const T* b,
                 std::int64_t b_step, T* y) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = mask[i] != 0 ? a[i * a_step] : b[i * b_step];
}

// y[o, j, c] = x[o, idx[j], c]; an index outside [0, n) gives 0 (never a read out of bounds).
template <class T>
__global__ void __launch_bounds__(kBlockThreads)
    take_kernel(std::int64_t total, std::int64_t n, std::int64_t inner, std::int64_t m, const T* x,
                const std::int64_t* idx, T* y) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const std::int64_t r = i / inner, c = i - r * inner, o = r / m, j = r - o * m;
    const std::int64_t k = idx[j];
    y[i] = (k >= 0 && k < n) ? x[(o * n + k) * inner + c] : T(0);
  }
}

// Templates over the dtype only so that each instantiation file has its own symbols.
template <class T>
__global__ void __launch_bounds__(kBlockThreads) zero_u64_kernel(std::int64_t n, unsigned long long* w) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) w[i] = 0;
}

// winner[idx[j]] = max over j of (j + 1): the last occurrence.
template <class T>
__global__ void __launch_bounds__(kBlockThreads)
    scatter_winner_kernel(std::int64_t m, std::int64_t n, const std::int64_t* idx, unsigned long long* winner) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < m; j += stride) {
    const std::int64_t k = idx[j];
    if (k >= 0 && k < n) atomicMax(winner + k, static_cast<unsigned long long>(j) + 1ull);
  }
}

template <class T>
__global__ void __launch_bounds__(kBlockThreads)
    scatter_write_kernel(std::int64_t total, std::int64_t n, std::int64_t inner, std::int64_t m, T* y,
                         const std::int64_t* idx, const T* v, const unsigned long long* winner) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const std::int64_t r = i / inner, c = i - r * inner, o = r / m, j = r - o * m;
    const std::int64_t k = idx[j];
    if (k >= 0 && k < n && winner[k] == static_cast<unsigned long long>(j) + 1ull) y[(o * n + k) * inner + c] = v[i];
  }
}

// A grid-stride kernel over n items on a grid that covers them, at most one resident wave.
template <class Api, class Kernel, class... Args>
int launch_over(std::int64_t n, void* stream, Kernel kernel, Args... args) {
  if (n <= 0) return 0;
  std::int64_t resident = 0;
  typename Api::Error e = resident_grid<Api>(kernel, kBlockThreads, 0, &resident);
  if (e != Api::kSuccess) return static_cast<int>(e);
  const std::int64_t grid = clamp_grid((n + kBlockThreads - 1) / kBlockThreads, resident);
  return static_cast<int>(Api::launch(kernel, static_cast<unsigned>(grid), kBlockThreads, 0,
                                      static_cast<typename Api::Stream>(stream), args...));
}

template <class Api, class T>
int IndexKernels<Api, T>::copy_strided(int rank, const std::int64_t* shape, const T* src,
                                       const std::int64_t* src_strides, T* dst, const std::int64_t* dst_strides,
                                       void* stream) {
  StridedCopy4 g{{1, 1, 1, 1}, {0, 0, 0, 0}, {0, 0, 0, 0}};
  std::int64_t n = 1;
  for (int i = 0; i < rank; ++i) {
    const int k = 4 - rank + i;
    g.d[k] = shape[i];
    g.ss[k] = src_strides[i];
    g.ds[k] = dst_strides[i];
    n *= shape[i];
  }
  return launch_over<Api>(n, stream, copy_strided_kernel<T>, n, g, src, dst);
}

template <class Api, class T>
int IndexKernels<Api, T>::compare(porta_compare_op op, std::int64_t rows, std::int64_t cols, const T* a,
                                  std::int64_t a_rs, std::int64_t a_cs, const T* b, std::int64_t b_rs,
                                  std::int64_t b_cs, std::int32_t* y, void* stream) {
  return backend::with_compare_op(op, static_cast<int>(Api::kInvalidValue), [&](auto o) {
    using Op = decltype(o);
    if constexpr (op_defined_v<Op, T>) {
      return launch_over<Api>(rows * cols, stream, compare_kernel<Op, T>, rows, cols, a, a_rs, a_cs, b, b_rs, b_cs, y);
    } else {  // < <= > >= of complex numbers: the entry's checks refused them
      return static_cast<int>(Api::kInvalidValue);
    }
  });
}

template <class Api, class T>
int IndexKernels<Api, T>::where(std::int64_t n, const std::int32_t* mask, const T* a, std::int64_t a_step, const T* b,
                                std::int64_t b_step, T* y, void* stream) {
  return launch_over<Api>(n, stream, where_kernel<T>, n, mask, a, a_step, b, b_step, y);
}

template <class Api, class T>
int IndexKernels<Api, T>::take(std::int64_t outer, std::int64_t n, std::int64_t inner, const T* x, std::int64_t m,
                               const std::int64_t* idx, T* y, void* stream) {
  const std::int64_t total = outer * m * inner;
  return launch_over<Api>(total, stream, take_kernel<T>, total, n, inner, m, x, idx, y);
}

template <class Api, class T>
int IndexKernels<Api, T>::scatter(std::int64_t outer, std::int64_t n, std::int64_t inner, T* y, std::int64_t m,
                                  const std::int64_t* idx, const T* v, void* stream) {
  const std::int64_t total = outer * m * inner;
  if (total <= 0 || n <= 0) return 0;
  const auto s = static_cast<typename Api::Stream>(stream);
  void* scratch = nullptr;
  typename Api::Error e = Api::malloc_async(&scratch, static_cast<std::size_t>(n) * sizeof(unsigned long long), s);
  if (e != Api::kSuccess) return static_cast<int>(e);
  auto* winner = static_cast<unsigned long long*>(scratch);
  int code = launch_over<Api>(n, stream, zero_u64_kernel<T>, n, winner);
  if (code == 0) code = launch_over<Api>(m, stream, scatter_winner_kernel<T>, m, n, idx, winner);
  if (code == 0)
    code = launch_over<Api>(total, stream, scatter_write_kernel<T>, total, n, inner, m, y, idx, v,
                            static_cast<const unsigned long long*>(winner));
  const typename Api::Error f = Api::free_async(scratch, s);
  return code != 0 ? code : static_cast<int>(f);
}

}  // namespace porta::detail::gpu
