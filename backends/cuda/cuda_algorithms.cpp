// SPDX-License-Identifier: Apache-2.0
// The built-in algorithms of the CUDA plugin: argument checks, then the shared kernels of
// backends/gpu (instantiated for ApiCuda), and cuBLAS for float/double gemm.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <mutex>

#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_common.hpp"
#include "backends/gpu/kernels.hpp"
#include "backends/gpu/table_checks.hpp"

namespace porta::detail::gpu {
PORTA_GPU_EXTERN_KERNELS(ApiCuda)
}

namespace porta::detail::cuda {

namespace {

using K = gpu::Kernels<gpu::ApiCuda>;

#define PORTA_CUDA_CHECK(expr)                                        \
  do {                                                                \
    if (const porta_status st_ = (expr); st_ != PORTA_OK) return st_; \
  } while (0)

// Maps the launcher's vendor code to a status; `what` names the kernel.
porta_status launched(int e, const char* op, porta_dtype dt, int dev) noexcept {
  if (e == 0) return PORTA_OK;
  char what[96];
  std::snprintf(what, sizeof what, "the %s (%s)", op, dtype_name(dt));
  return launch_error(what, e, dev);
}

}  // namespace

porta_status fill(int dev, porta_dtype dt, int64_t n, porta_scalar value, void* y, porta_stream s) noexcept {
  PORTA_CUDA_CHECK(gpu::check::elementwise(dt, n, y, y, "fill"));
  PORTA_CUDA_CHECK(enter(dev, "fill"));
  PORTA_CUDA_TRY
  return launched(K::fill(dt, n, value, y, s), "fill", dt, dev);
  PORTA_CUDA_CATCH("fill")
}

porta_status iota(int dev, porta_dtype dt, int64_t n, porta_scalar start, porta_scalar step, void* y,
                  porta_stream s) noexcept {
  PORTA_CUDA_CHECK(gpu::check::elementwise(dt, n, y, y, "iota"));
  PORTA_CUDA_CHECK(enter(dev, "iota"));
  PORTA_CUDA_TRY
  return launched(K::iota(dt, n, start, step, y, s), "iota", dt, dev);
  PORTA_CUDA_CATCH("iota")
}

porta_status cast(int dev, porta_dtype from, porta_dtype to, int64_t n, const void* x, void* y,
                  porta_stream s) noexcept {
  PORTA_CUDA_CHECK(gpu::check::cast(from, to, n, x, y));
  PORTA_CUDA_CHECK(enter(dev, "cast"));
  PORTA_CUDA_TRY
  return launched(K::cast(from, to, n, x, y, s), "cast", to, dev);
  PORTA_CUDA_CATCH("cast")
}

porta_status unary(int dev, porta_unary_op op, porta_dtype dt, int64_t n, const void* x, void* y,
                   porta_stream s) noexcept {
  PORTA_CUDA_CHECK(gpu::check::unary(op, dt, n, x, y));
  PORTA_CUDA_CHECK(enter(dev, "unary"));
  PORTA_CUDA_TRY
  return launched(K::unary(op, dt, n, x, y, s), "unary map", dt, dev);
  PORTA_CUDA_CATCH("unary")
}

porta_status binary(int dev, porta_binary_op op, porta_dtype dt, int64_t rows, int64_t cols, const void* a,
                    int64_t a_rs, int64_t a_cs, const void* b, int64_t b_rs, int64_t b_cs, void* y,
                    porta_stream s) noexcept {
  PORTA_CUDA_CHECK(gpu::check::binary(op, dt, rows, cols, a, b, y));
  PORTA_CUDA_CHECK(enter(dev, "binary"));
  PORTA_CUDA_TRY
  return launched(K::binary(op, dt, rows, cols, a, a_rs, a_cs, b, b_rs, b_cs, y, s), "binary map", dt, dev);
  PORTA_CUDA_CATCH("binary")
}

porta_status binary_scalar(int dev, porta_binary_op op, porta_dtype dt, int64_t n, const void* x, porta_scalar value,
                           int scalar_first, void* y, porta_stream s) noexcept {
  PORTA_CUDA_CHECK(gpu::check::binary_scalar(op, dt, n, x, y));
  PORTA_CUDA_CHECK(enter(dev, "binary_scalar"));
  PORTA_CUDA_TRY
  return launched(K::binary_scalar(op, dt, n, x, value, scalar_first, y, s), "binary map", dt, dev);
  PORTA_CUDA_CATCH("binary_scalar")
}

porta_status axpy(int dev, porta_dtype dt, int64_t n, porta_scalar alpha, const void* x, void* y,
                  porta_stream s) noexcept {
  PORTA_CUDA_CHECK(gpu::check::elementwise(dt, n, x, y, "axpy"));
  PORTA_CUDA_CHECK(enter(dev, "axpy"));
  PORTA_CUDA_TRY
  return launched(K::axpy(dt, n, alpha, x, y, s), "axpy", dt, dev);
  PORTA_CUDA_CATCH("axpy")
}

porta_status reduce(int dev, porta_reduce_op op, porta_dtype dt, int64_t outer, int64_t n, int64_t inner, const void* x,
                    void* y, porta_stream s) noexcept {
  PORTA_CUDA_CHECK(gpu::check::reduce(op, dt, outer, n, inner, x, y));
  PORTA_CUDA_CHECK(enter(dev, "reduce"));
  PORTA_CUDA_TRY
  return launched(K::reduce(op, dt, outer, n, inner, x, y, s), "reduction", dt, dev);
  PORTA_CUDA_CATCH("reduce")
}

porta_status dot(int dev, porta_dtype dt, int64_t n, const void* x, const void* w, void* y, porta_stream s) noexcept {
  PORTA_CUDA_CHECK(gpu::check::dot(dt, n, x, w, y));
  PORTA_CUDA_CHECK(enter(dev, "dot"));
  PORTA_CUDA_TRY
  return launched(K::dot(dt, n, x, w, y, s), "dot", dt, dev);
  PORTA_CUDA_CATCH("dot")
}

// ---- gemm ---------------------------------------------------------------------------------------

namespace {

porta_status blas_error(const char* call, cublasStatus_t st) noexcept {
  (void)cudaGetLastError();
  return set_error(st == CUBLAS_STATUS_ALLOC_FAILED ? PORTA_ERR_OOM : PORTA_ERR_BACKEND, "%s: %s (%s)", call,
                   cublasGetStatusString(st), cublasGetStatusName(st));
}

// Row-major C[m x n] = alpha op(A) op(B) + beta C through column-major cuBLAS: the buffers of
// row-major A, B, C are column-major A^T, B^T, C^T, and C^T = op(B)^T op(A)^T, so cuBLAS gets the
// operands swapped, each with its own transpose flag, and the dimensions n x m x k.
porta_status blas_gemm(int dev, porta_dtype dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k, porta_scalar alpha,
                       const void* a, int64_t lda, const void* b, int64_t ldb, porta_scalar beta, void* c, int64_t ldc,
                       bool tf32, porta_stream s) noexcept {
  DeviceState& ds = device_state(dev);
  std::lock_guard<std::mutex> lock(ds.blas_mutex);
  if (ds.blas == nullptr) {
    cublasHandle_t h = nullptr;
    const cublasStatus_t st = cublasCreate(&h);
    if (st != CUBLAS_STATUS_SUCCESS) return blas_error("cublasCreate", st);
    // Default math: fp32 stays fp32 (no TF32 unless a call asks for it through its compute type).
    const cublasStatus_t mm = cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
    if (mm != CUBLAS_STATUS_SUCCESS) {
      cublasDestroy(h);
      return blas_error("cublasSetMathMode", mm);
    }
    ds.blas = h;
  }
  cublasStatus_t st = cublasSetStream(ds.blas, native(s));
  if (st != CUBLAS_STATUS_SUCCESS) return blas_error("cublasSetStream", st);
  const cublasOperation_t op_a = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (dt == PORTA_F32) {
    const float al = alpha.f32, be = beta.f32;
    st = cublasGemmEx_64(ds.blas, op_b, op_a, n, m, k, &al, b, CUDA_R_32F, ldb, a, CUDA_R_32F, lda, &be, c, CUDA_R_32F,
                         ldc, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  } else {
    const double al = alpha.f64, be = beta.f64;
    st = cublasGemmEx_64(ds.blas, op_b, op_a, n, m, k, &al, b, CUDA_R_64F, ldb, a, CUDA_R_64F, lda, &be, c, CUDA_R_64F,
                         ldc, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
  }
  if (st != CUBLAS_STATUS_SUCCESS) return blas_error("cublasGemmEx", st);
  return PORTA_OK;
}

}  // namespace

porta_status gemm(int dev, porta_dtype dt, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                  porta_scalar alpha, const void* a, int64_t lda, const void* b, int64_t ldb, porta_scalar beta,
                  void* c, int64_t ldc, uint32_t flags, porta_stream s) noexcept {
  PORTA_CUDA_CHECK(gpu::check::gemm(dt, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc));
  if (m == 0 || n == 0) return PORTA_OK;
  PORTA_CUDA_CHECK(enter(dev, "gemm"));
  PORTA_CUDA_TRY
  const bool vendor = (dt == PORTA_F32 || dt == PORTA_F64) && (flags & PORTA_GEMM_OWN_KERNEL) == 0 && k > 0;
  if (vendor) {
    // cuBLAS wants leading dimensions of at least 1 even for empty operands.
    return blas_gemm(dev, dt, trans_a != 0, trans_b != 0, m, n, k, alpha, a, lda > 0 ? lda : 1, b, ldb > 0 ? ldb : 1,
                     beta, c, ldc, (flags & PORTA_GEMM_ALLOW_TF32) != 0, s);
  }
  return launched(K::gemm(dt, trans_a != 0, trans_b != 0, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s), "gemm", dt,
                  dev);
  PORTA_CUDA_CATCH("gemm")
}

const char* cublas_version() noexcept {
  static char text[64] = "";
  static std::once_flag once;
  std::call_once(once, []() noexcept {
    int major = 0, minor = 0, patch = 0;
    if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS) {
      std::snprintf(text, sizeof text, "cuBLAS %d.%d.%d", major, minor, patch);
    } else {
      std::snprintf(text, sizeof text, "cuBLAS %d.%d (headers)", CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR);
    }
  });
  return text;
}

}  // namespace porta::detail::cuda
