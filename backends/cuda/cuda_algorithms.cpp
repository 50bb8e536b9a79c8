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

porta_status check_dtype(int dt, const char* fn) noexcept {
  if (!valid_dtype(dt)) return set_error(PORTA_ERR_INVALID, "%s: unknown dtype %d", fn, dt);
  return PORTA_OK;
}

porta_status check_count(std::int64_t n, const char* fn) noexcept {
  if (n < 0) return set_error(PORTA_ERR_INVALID, "%s: negative element count %lld", fn, static_cast<long long>(n));
  return PORTA_OK;
}

porta_status check_ptrs(std::int64_t n, const void* x, const void* y, const char* fn) noexcept {
  if (n > 0 && (x == nullptr || y == nullptr)) return set_error(PORTA_ERR_INVALID, "%s: NULL array", fn);
  return PORTA_OK;
}

// Maps the launcher's vendor code to a status; `what` names the kernel.
porta_status launched(int e, const char* op, porta_dtype dt, int dev) noexcept {
  if (e == 0) return PORTA_OK;
  char what[96];
  std::snprintf(what, sizeof what, "the %s (%s)", op, dtype_name(dt));
  return launch_error(what, e, dev);
}

}  // namespace

porta_status fill(int dev, porta_dtype dt, int64_t n, porta_scalar value, void* y, porta_stream s) noexcept {
  PORTA_CUDA_CHECK(check_dtype(dt, "fill"));
  PORTA_CUDA_CHECK(check_count(n, "fill"));
  PORTA_CUDA_CHECK(check_ptrs(n, y, y, "fill"));
  PORTA_CUDA_CHECK(enter(dev, "fill"));
  PORTA_CUDA_TRY
  return launched(K::fill(dt, n, value, y, s), "fill", dt, dev);
  PORTA_CUDA_CATCH("fill")
}

porta_status iota(int dev, porta_dtype dt, int64_t n, porta_scalar start, porta_scalar step, void* y,
                  porta_stream s) noexcept {
  PORTA_CUDA_CHECK(check_dtype(dt, "iota"));
  PORTA_CUDA_CHECK(check_count(n, "iota"));
  PORTA_CUDA_CHECK(check_ptrs(n, y, y, "iota"));
  PORTA_CUDA_CHECK(enter(dev, "iota"));
  PORTA_CUDA_TRY
  return launched(K::iota(dt, n, start, step, y, s), "iota", dt, dev);
  PORTA_CUDA_CATCH("iota")
}

porta_status cast(int dev, porta_dtype from, porta_dtype to, int64_t n, const void* x, void* y,
                  porta_stream s) noexcept {
  PORTA_CUDA_CHECK(check_dtype(from, "cast"));
  PORTA_CUDA_CHECK(check_dtype(to, "cast"));
  PORTA_CUDA_CHECK(check_count(n, "cast"));
  PORTA_CUDA_CHECK(check_ptrs(n, x, y, "cast"));
  if (n > 0 && x != y) {
    // Elements of different sizes in overlapping memory would overwrite inputs not yet read.
    const auto* xb = static_cast<const unsigned char*>(x);
    const auto* yb = static_cast<const unsigned char*>(y);
    const std::size_t xs = static_cast<std::size_t>(n) * dtype_size(from);
    const std::size_t ys = static_cast<std::size_t>(n) * dtype_size(to);
    if (xb < yb + ys && yb < xb + xs)
      return set_error(PORTA_ERR_INVALID, "cast: input and output overlap without being the same array");
  } else if (n > 0 && dtype_size(from) != dtype_size(to)) {
    return set_error(PORTA_ERR_INVALID, "cast: in place between %s and %s (different element sizes)", dtype_name(from),
                     dtype_name(to));
  }
  PORTA_CUDA_CHECK(enter(dev, "cast"));
  PORTA_CUDA_TRY
  return launched(K::cast(from, to, n, x, y, s), "cast", to, dev);
  PORTA_CUDA_CATCH("cast")
}

porta_status unary(int dev, porta_unary_op op, porta_dtype dt, int64_t n, const void* x, void* y,
                   porta_stream s) noexcept {
  PORTA_CUDA_CHECK(check_dtype(dt, "unary"));
  if (op < 0 || op >= PORTA_UNARY_COUNT)
    return set_error(PORTA_ERR_INVALID, "unary: unknown unary op %d", static_cast<int>(op));
  PORTA_CUDA_CHECK(check_count(n, "unary"));
  PORTA_CUDA_CHECK(check_ptrs(n, x, y, "unary"));
  PORTA_CUDA_CHECK(enter(dev, "unary"));
  PORTA_CUDA_TRY
  return launched(K::unary(op, dt, n, x, y, s), "unary map", dt, dev);
  PORTA_CUDA_CATCH("unary")
}

porta_status binary(int dev, porta_binary_op op, porta_dtype dt, int64_t rows, int64_t cols, const void* a,
                    int64_t a_rs, int64_t a_cs, const void* b, int64_t b_rs, int64_t b_cs, void* y,
                    porta_stream s) noexcept {
  PORTA_CUDA_CHECK(check_dtype(dt, "binary"));
  if (op < 0 || op >= PORTA_BINARY_COUNT)
    return set_error(PORTA_ERR_INVALID, "binary: unknown binary op %d", static_cast<int>(op));
  std::int64_t n = 0;
  if (rows < 0 || cols < 0 || __builtin_mul_overflow(rows, cols, &n))
    return set_error(PORTA_ERR_INVALID, "binary: bad shape %lld x %lld", static_cast<long long>(rows),
                     static_cast<long long>(cols));
  if (n > 0 && (a == nullptr || b == nullptr || y == nullptr))
    return set_error(PORTA_ERR_INVALID, "binary: NULL array");
  PORTA_CUDA_CHECK(enter(dev, "binary"));
  PORTA_CUDA_TRY
  return launched(K::binary(op, dt, rows, cols, a, a_rs, a_cs, b, b_rs, b_cs, y, s), "binary map", dt, dev);
  PORTA_CUDA_CATCH("binary")
}

porta_status binary_scalar(int dev, porta_binary_op op, porta_dtype dt, int64_t n, const void* x, porta_scalar value,
                           int scalar_first, void* y, porta_stream s) noexcept {
  PORTA_CUDA_CHECK(check_dtype(dt, "binary_scalar"));
  if (op < 0 || op >= PORTA_BINARY_COUNT)
    return set_error(PORTA_ERR_INVALID, "binary_scalar: unknown binary op %d", static_cast<int>(op));
  PORTA_CUDA_CHECK(check_count(n, "binary_scalar"));
  PORTA_CUDA_CHECK(check_ptrs(n, x, y, "binary_scalar"));
  PORTA_CUDA_CHECK(enter(dev, "binary_scalar"));
  PORTA_CUDA_TRY
  return launched(K::binary_scalar(op, dt, n, x, value, scalar_first, y, s), "binary map", dt, dev);
  PORTA_CUDA_CATCH("binary_scalar")
}

porta_status axpy(int dev, porta_dtype dt, int64_t n, porta_scalar alpha, const void* x, void* y,
                  porta_stream s) noexcept {
  PORTA_CUDA_CHECK(check_dtype(dt, "axpy"));
  PORTA_CUDA_CHECK(check_count(n, "axpy"));
  PORTA_CUDA_CHECK(check_ptrs(n, x, y, "axpy"));
  PORTA_CUDA_CHECK(enter(dev, "axpy"));
  PORTA_CUDA_TRY
  return launched(K::axpy(dt, n, alpha, x, y, s), "axpy", dt, dev);
  PORTA_CUDA_CATCH("axpy")
}

porta_status reduce(int dev, porta_reduce_op op, porta_dtype dt, int64_t outer, int64_t n, int64_t inner, const void* x,
                    void* y, porta_stream s) noexcept {
  PORTA_CUDA_CHECK(check_dtype(dt, "reduce"));
  if (op < 0 || op >= PORTA_REDUCE_COUNT)
    return set_error(PORTA_ERR_INVALID, "reduce: unknown reduction %d", static_cast<int>(op));
  std::int64_t outputs = 0, total = 0;
  if (outer < 0 || n < 0 || inner < 0 || __builtin_mul_overflow(outer, inner, &outputs) ||
      __builtin_mul_overflow(outputs, n, &total))
    return set_error(PORTA_ERR_INVALID, "reduce: bad shape [%lld, %lld, %lld]", static_cast<long long>(outer),
                     static_cast<long long>(n), static_cast<long long>(inner));
  if (outputs > 0 && (y == nullptr || (n > 0 && x == nullptr)))
    return set_error(PORTA_ERR_INVALID, "reduce: NULL array");
  PORTA_CUDA_CHECK(enter(dev, "reduce"));
  PORTA_CUDA_TRY
  return launched(K::reduce(op, dt, outer, n, inner, x, y, s), "reduction", dt, dev);
  PORTA_CUDA_CATCH("reduce")
}

porta_status dot(int dev, porta_dtype dt, int64_t n, const void* x, const void* w, void* y, porta_stream s) noexcept {
  PORTA_CUDA_CHECK(check_dtype(dt, "dot"));
  PORTA_CUDA_CHECK(check_count(n, "dot"));
  if (y == nullptr || (n > 0 && (x == nullptr || w == nullptr))) return set_error(PORTA_ERR_INVALID, "dot: NULL array");
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
  PORTA_CUDA_CHECK(check_dtype(dt, "gemm"));
  if (m < 0 || n < 0 || k < 0)
    return set_error(PORTA_ERR_INVALID, "gemm: negative dimension (m %lld, n %lld, k %lld)", static_cast<long long>(m),
                     static_cast<long long>(n), static_cast<long long>(k));
  // Stored shapes: A is m x k (k x m when transposed), B is k x n (n x k), C is m x n; row-major.
  const int64_t a_rows = trans_a ? k : m, a_cols = trans_a ? m : k;
  const int64_t b_rows = trans_b ? n : k, b_cols = trans_b ? k : n;
  if ((a_rows > 0 && lda < a_cols) || (b_rows > 0 && ldb < b_cols) || (m > 0 && ldc < n))
    return set_error(PORTA_ERR_INVALID, "gemm: leading dimension too small (lda %lld, ldb %lld, ldc %lld)",
                     static_cast<long long>(lda), static_cast<long long>(ldb), static_cast<long long>(ldc));
  if (m == 0 || n == 0) return PORTA_OK;
  if (c == nullptr || (k > 0 && (a == nullptr || b == nullptr)))
    return set_error(PORTA_ERR_INVALID, "gemm: NULL array");
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
