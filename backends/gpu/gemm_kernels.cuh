// SPDX-License-Identifier: Apache-2.0
// porta's own GEMM: definitions of GemmKernels<Api, T> (kernels.hpp). It serves the integer
// dtypes, PORTA_GEMM_OWN_KERNEL, and the HIP backend when no rocBLAS is found.
//
// Every element of C is porta's fixed-order chain (docs/determinism.md), as in the CPU kernel
// (backends/cpu/cpu_gemm_kernel.inc), so the two give the same bits: s = fma over k in order from
// +0, then alpha * s, then + beta * C, each rounded, NaN canonical.
//
// The classic register-blocked SGEMM: a block of 256 threads computes a 128 x 128 tile of C,
// stepping through k 8 at a time. op(A) and op(B) tiles are staged in shared memory k-major
// (As[p][i], Bs[p][j]) with a 16-byte pad per row, double buffered, so one barrier per k-step
// suffices and the next tile's global loads overlap the current tile's arithmetic. Thread (tx, ty)
// of a 16 x 16 grid owns the 8 x 8 outputs rows {ty*4 + 0..3, 64 + ty*4 + 0..3} x columns
// {tx*4 + 0..3, 64 + tx*4 + 0..3}: per k it reads 2 + 2 16-byte vectors from shared memory (the
// A reads of a warp are broadcasts, the B reads consecutive) and does 64 multiply-adds. Global
// loads are scalar and guarded, so any shape, leading dimension and transpose works; each thread
// loads 4 elements of each operand along the operand's contiguous direction (coalesced for all
// four transpose combinations). Nothing depends on the warp size: only __syncthreads.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "backends/gpu/kernels.hpp"
#include "porta/detail/gpu/api.cuh"
#include "porta/detail/ops.hpp"

namespace porta::detail::gpu {

inline constexpr int kGemmBM = 128;
inline constexpr int kGemmBN = 128;
inline constexpr int kGemmBK = 8;
inline constexpr int kGemmThreads = 256;
inline constexpr int kGemmGroupM = 8;  // tiles are visited in bands of 8 tile rows, for L2 reuse

template <class T>
__device__ __forceinline__ T gemm_madd(T acc, T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return ::fma(a, b, acc);
  } else {
    return add_rn(acc, mul_rn(a, b));  // integers wrap
  }
}

template <class T>
__device__ __forceinline__ void load8_shared(const T* row, int off, T* out) {
  // Elements off..off+3 and off+64..off+67 of a shared-memory row (16-byte aligned).
  if constexpr (sizeof(T) == 4) {
    const Pack<T, 4> u = *reinterpret_cast<const Pack<T, 4>*>(row + off);
    const Pack<T, 4> v = *reinterpret_cast<const Pack<T, 4>*>(row + 64 + off);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      out[e] = u.v[e];
      out[4 + e] = v.v[e];
    }
  } else {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const Pack<T, 2> u = *reinterpret_cast<const Pack<T, 2>*>(row + off + 2 * h);
      const Pack<T, 2> v = *reinterpret_cast<const Pack<T, 2>*>(row + 64 + off + 2 * h);
      out[2 * h] = u.v[0];
      out[2 * h + 1] = u.v[1];
      out[4 + 2 * h] = v.v[0];
      out[4 + 2 * h + 1] = v.v[1];
    }
  }
}

template <bool TA, bool TB, class T>
__global__ void __launch_bounds__(kGemmThreads, sizeof(T) == 4 ? 2 : 1)
    gemm_kernel(std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* __restrict__ A, std::int64_t lda,
                const T* __restrict__ B, std::int64_t ldb, T beta, T* C, std::int64_t ldc) {
  constexpr int kPad = static_cast<int>(16 / sizeof(T));
  alignas(16) __shared__ T As[2][kGemmBK][kGemmBM + kPad];
  alignas(16) __shared__ T Bs[2][kGemmBK][kGemmBN + kPad];
  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % 16, ty = tid / 16;
  // Loader coordinates: 4 consecutive elements along each operand's contiguous direction.
  const int a_i = TA ? (tid % 32) * 4 : tid / 2;  // !TA: row i, k offsets a_p..a_p+3; TA: k row a_p, rows a_i..+3
  const int a_p = TA ? tid / 32 : (tid % 2) * 4;
  const int b_j = TB ? tid / 2 : (tid % 32) * 4;
  const int b_p = TB ? (tid % 2) * 4 : tid / 32;

  const std::int64_t mtiles = (m + kGemmBM - 1) / kGemmBM;
  const std::int64_t ntiles = (n + kGemmBN - 1) / kGemmBN;
  const std::int64_t ktiles = (k + kGemmBK - 1) / kGemmBK;
  for (std::int64_t tile = blockIdx.x; tile < mtiles * ntiles; tile += gridDim.x) {
    const std::int64_t band = tile / (kGemmGroupM * ntiles);
    const std::int64_t first_m = band * kGemmGroupM;
    const std::int64_t band_rows = mtiles - first_m < kGemmGroupM ? mtiles - first_m : kGemmGroupM;
    const std::int64_t in_band = tile - band * kGemmGroupM * ntiles;
    const std::int64_t i0 = (first_m + in_band % band_rows) * kGemmBM;
    const std::int64_t j0 = (in_band / band_rows) * kGemmBN;

    // Per tile, each thread's 4 A elements are rows a_i (+e when TA) at k offset a_p (+e when !TA):
    // a moving pointer plus the bounds that stay fixed; likewise for B. (Recomputing 64-bit
    // addresses per element would cost more registers than the 8 x 8 accumulators.)
    const std::int64_t ai = i0 + a_i, bj = j0 + b_j;
    const T* pa = TA ? A + static_cast<std::int64_t>(a_p) * lda + ai : A + ai * lda + a_p;
    const T* pb = TB ? B + bj * ldb + b_p : B + static_cast<std::int64_t>(b_p) * ldb + bj;
    const std::int64_t a_step = TA ? kGemmBK * lda : kGemmBK;
    const std::int64_t b_step = TB ? kGemmBK : kGemmBK * ldb;
    unsigned a_ok = 0, b_ok = 0;  // fixed bounds: bit e set when element e's row (A) / column (B) exists
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      if (TA ? ai + e < m : ai < m) a_ok |= 1u << e;
      if (TB ? bj < n : bj + e < n) b_ok |= 1u << e;
    }
    // Padding past k multiplies +0 by -0: fma(+0, -0, s) is s for every s, -0 included (+0 * +0
    // would turn a sum of -0 into +0), so the tail of k leaves the fixed-order chain as it is.
    const T kNegZero = std::is_floating_point_v<T> ? -T(0) : T(0);
    T ra[4], rb[4];
    const auto fetch = [&](std::int64_t p0) {
      const std::int64_t kleft = k - p0;  // k offsets below kleft exist
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const bool ka = TA ? a_p < kleft : a_p + e < kleft;
        ra[e] = ((a_ok >> e) & 1u) && ka ? pa[e] : T(0);
        const bool kb = TB ? b_p + e < kleft : b_p < kleft;
        rb[e] = ((b_ok >> e) & 1u) && kb ? pb[e] : kNegZero;
      }
      pa += a_step;
      pb += b_step;
    };
    const auto stage = [&](int buf) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        if (TA) {
          As[buf][a_p][a_i + e] = ra[e];
        } else {
          As[buf][a_p + e][a_i] = ra[e];
        }
        if (TB) {
          Bs[buf][b_p + e][b_j] = rb[e];
        } else {
          Bs[buf][b_p][b_j + e] = rb[e];
        }
      }
    };

    T acc[8][8];
#pragma unroll
    for (int r = 0; r < 8; ++r) {
#pragma unroll
      for (int c = 0; c < 8; ++c) acc[r][c] = T(0);
    }
    if (ktiles > 0) {
      fetch(0);
      stage(0);
    }
    __syncthreads();
    for (std::int64_t kt = 0; kt < ktiles; ++kt) {
      const int cur = static_cast<int>(kt & 1);
      if (kt + 1 < ktiles) fetch((kt + 1) * kGemmBK);
#pragma unroll
      for (int p = 0; p < kGemmBK; ++p) {
        T a[8], b[8];
        load8_shared(&As[cur][p][0], ty * 4, a);
        load8_shared(&Bs[cur][p][0], tx * 4, b);
#pragma unroll
        for (int r = 0; r < 8; ++r) {
#pragma unroll
          for (int c = 0; c < 8; ++c) acc[r][c] = gemm_madd(acc[r][c], a[r], b[c]);
        }
      }
      // The other buffer was last read in step kt - 1, which every thread finished before the
      // barrier that ended it.
      if (kt + 1 < ktiles) stage(cur ^ 1);
      __syncthreads();
    }

    const bool use_c = !(beta == T(0)), use_ab = !(alpha == T(0));
#pragma unroll
    for (int r = 0; r < 8; ++r) {
      const std::int64_t i = i0 + (r < 4 ? ty * 4 + r : 64 + ty * 4 + (r - 4));
      if (i >= m) continue;
#pragma unroll
      for (int c = 0; c < 8; ++c) {
        const std::int64_t j = j0 + (c < 4 ? tx * 4 + c : 64 + tx * 4 + (c - 4));
        if (j >= n) continue;
        T* out = C + i * ldc + j;
        // alpha == 0 is C = beta * C (BLAS); beta == 0 never reads C (a NaN there stays out).
        T v = use_ab ? mul_rn(alpha, acc[r][c]) : T(0);
        if (use_c) v = use_ab ? add_rn(v, mul_rn(beta, *out)) : mul_rn(beta, *out);
        *out = canonical_nan(v);
      }
    }
  }
}

// Complex gemm in porta's fixed complex order, the CPU kernel's (cpu_gemm_kernel.inc): s = (+0, +0),
// then s = s + a b over k in order, every product and sum rounded on its own (porta::complex's
// mul_rn / add_rn), then alpha s (+ beta C), NaN parts canonical. A simpler tiling than the real
// kernel's, since a complex<double> accumulator is four registers: a block of 256 threads computes
// a 64 x 64 tile of C, thread (tx, ty) of a 16 x 16 grid the 4 x 4 outputs of rows ty + 16 r and
// columns tx + 16 c, with k-slices of op(A) and op(B) staged in shared memory (32 KiB for
// complex<double>). A warp reads consecutive columns of Bs and two rows of As (broadcasts).
inline constexpr int kCgemmTile = 64;
inline constexpr int kCgemmBK = 16;

template <bool TA, bool TB, class T>
__global__ void __launch_bounds__(kGemmThreads)
    cgemm_kernel(std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* __restrict__ A, std::int64_t lda,
                 const T* __restrict__ B, std::int64_t ldb, T beta, T* C, std::int64_t ldc) {
  __shared__ T As[kCgemmBK][kCgemmTile];
  __shared__ T Bs[kCgemmBK][kCgemmTile];
  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % 16, ty = tid / 16;
  const std::int64_t ntiles = (n + kCgemmTile - 1) / kCgemmTile;
  const std::int64_t tiles = ((m + kCgemmTile - 1) / kCgemmTile) * ntiles;
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::int64_t i0 = (tile / ntiles) * kCgemmTile, j0 = (tile % ntiles) * kCgemmTile;
    T acc[4][4];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[r][c] = T(0);
    }
    for (std::int64_t p0 = 0; p0 < k; p0 += kCgemmBK) {
      // 1024 elements of each operand per slice, 4 per thread, along the operand's contiguous
      // direction (coalesced): op(A)[i0 + i][p0 + p] and op(B)[p0 + p][j0 + j].
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int x = tid + e * kGemmThreads;
        const int ai = TA ? x % kCgemmTile : x / kCgemmBK, ap = TA ? x / kCgemmTile : x % kCgemmBK;
        const std::int64_t gi = i0 + ai, gp = p0 + ap;
        As[ap][ai] = gi < m && gp < k ? (TA ? A[gp * lda + gi] : A[gi * lda + gp]) : T(0);
        const int bj = TB ? x / kCgemmBK : x % kCgemmTile, bp = TB ? x % kCgemmBK : x / kCgemmTile;
        const std::int64_t gj = j0 + bj, gq = p0 + bp;
        Bs[bp][bj] = gj < n && gq < k ? (TB ? B[gj * ldb + gq] : B[gq * ldb + gj]) : T(0);
      }
      __syncthreads();
      const int kc = k - p0 < kCgemmBK ? static_cast<int>(k - p0) : kCgemmBK;  // the same for the whole block
      for (int p = 0; p < kc; ++p) {
        T a[4], b[4];
#pragma unroll
        for (int r = 0; r < 4; ++r) a[r] = As[p][ty + 16 * r];
#pragma unroll
        for (int c = 0; c < 4; ++c) b[c] = Bs[p][tx + 16 * c];
#pragma unroll
        for (int r = 0; r < 4; ++r) {
#pragma unroll
          for (int c = 0; c < 4; ++c) acc[r][c] = add_rn(acc[r][c], mul_rn(a[r], b[c]));
        }
      }
      __syncthreads();
    }
    const bool use_c = !(beta == T(0)), use_ab = !(alpha == T(0));
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const std::int64_t i = i0 + ty + 16 * r;
      if (i >= m) continue;
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const std::int64_t j = j0 + tx + 16 * c;
        if (j >= n) continue;
        T* out = C + i * ldc + j;
        // alpha == 0 is C = beta * C (BLAS); beta == 0 never reads C (a NaN there stays out).
        T v = use_ab ? mul_rn(alpha, acc[r][c]) : T(0);
        if (use_c) v = use_ab ? add_rn(v, mul_rn(beta, *out)) : mul_rn(beta, *out);
        *out = canonical_nan(v);
      }
    }
  }
}

template <class Api, class T>
int GemmKernels<Api, T>::gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
                              const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
                              std::int64_t ldc, void* stream) {
  if (m <= 0 || n <= 0) return 0;
  if (k <= 0) alpha = T(0);  // C = beta * C, as BLAS: A and B are not read
  const auto s = static_cast<typename Api::Stream>(stream);
  if constexpr (is_complex_v<T>) {
    const std::int64_t tiles = ((m + kCgemmTile - 1) / kCgemmTile) * ((n + kCgemmTile - 1) / kCgemmTile);
    const unsigned grid = static_cast<unsigned>(tiles < kMaxGrid ? tiles : kMaxGrid);
    auto kernel = trans_a ? (trans_b ? cgemm_kernel<true, true, T> : cgemm_kernel<true, false, T>)
                          : (trans_b ? cgemm_kernel<false, true, T> : cgemm_kernel<false, false, T>);
    return static_cast<int>(
        Api::launch(kernel, grid, kGemmThreads, 0, s, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
  } else {
    const std::int64_t tiles = ((m + kGemmBM - 1) / kGemmBM) * ((n + kGemmBN - 1) / kGemmBN);
    const unsigned grid = static_cast<unsigned>(tiles < kMaxGrid ? tiles : kMaxGrid);
    auto kernel = trans_a ? (trans_b ? gemm_kernel<true, true, T> : gemm_kernel<true, false, T>)
                          : (trans_b ? gemm_kernel<false, true, T> : gemm_kernel<false, false, T>);
    return static_cast<int>(
        Api::launch(kernel, grid, kGemmThreads, 0, s, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
  }
}

}  // namespace porta::detail::gpu
