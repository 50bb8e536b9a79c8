// SPDX-License-Identifier: Apache-2.0
// The built-in algorithms of the HIP plugin: argument checks, then the shared kernels of
// backends/gpu, instantiated for ApiHip by compiling backends/gpu/instantiate/*.cu as HIP; gemm
// goes to rocBLAS/hipBLAS where the build has one (hip_blas.hip).
//
// The argument checks are backends/gpu/table_checks.hpp, shared with the CUDA plugin, so that
// both GPU backends reject the same calls with the same messages.
#include <cstdint>
#include <cstdio>

#include "backends/gpu/kernels.hpp"
#include "backends/gpu/table_checks.hpp"
#include "backends/hip/hip_backend.hpp"
#include "backends/hip/hip_blas.hpp"
#include "backends/hip/hip_common.hpp"

namespace porta::detail::gpu {
PORTA_GPU_EXTERN_KERNELS(ApiHip)
}

namespace porta::detail::hip {

namespace {

using K = gpu::Kernels<gpu::ApiHip>;

#define PORTA_HIP_RETURN_IF(expr)                                     \
  do {                                                                \
    if (const porta_status st_ = (expr); st_ != PORTA_OK) return st_; \
  } while (0)

// Declared here rather than in a header: nothing else enters a device this way.
#define PORTA_HIP_ENTER(guard, dev, fn) \
  DeviceGuard guard(dev, fn);           \
  if (guard.status() != PORTA_OK) return guard.status()

#define PORTA_HIP_TRY try {
#define PORTA_HIP_CATCH(fn)                                                                        \
  }                                                                                                \
  catch (...) {                                                                                    \
    return ::porta::detail::hip::set_error(PORTA_ERR_BACKEND, "%s: unexpected C++ exception", fn); \
  }

// Maps a launcher's hipError_t (as int) to a status; `op` names the kernel. The launchers return
// hipErrorOutOfMemory when the pool has no room for their temporaries.
porta_status launched(int code, const char* op, porta_dtype dt, int dev) noexcept {
  if (code == 0) return PORTA_OK;
  const auto e = static_cast<hipError_t>(code);
  (void)hipGetLastError();
  if (e == hipErrorOutOfMemory) {
    std::size_t free_b = 0, total_b = 0;
    (void)hipMemGetInfo(&free_b, &total_b);
    (void)hipGetLastError();
    return set_error(PORTA_ERR_OOM,
                     "hipMallocAsync: no device memory for the temporaries of the %s (%s) on hip:%d (%zu of %zu bytes "
                     "free; hipErrorOutOfMemory)",
                     op, dtype_name(dt), dev, free_b, total_b);
  }
  const porta_status st = (e == hipErrorNoDevice || e == hipErrorInvalidDevice || e == hipErrorInsufficientDriver)
                              ? PORTA_ERR_UNAVAILABLE
                              : PORTA_ERR_BACKEND;
  return set_error(st, "the %s (%s) kernel: %s", op, dtype_name(dt), describe(e));
}

}  // namespace

porta_status fill(int dev, porta_dtype dt, int64_t n, porta_scalar value, void* y, porta_stream s) noexcept {
  PORTA_HIP_RETURN_IF(gpu::check::elementwise(dt, n, y, y, "fill"));
  PORTA_HIP_ENTER(guard, dev, "fill");
  PORTA_HIP_TRY
  return launched(K::fill(dt, n, value, y, s), "fill", dt, dev);
  PORTA_HIP_CATCH("fill")
}

porta_status iota(int dev, porta_dtype dt, int64_t n, porta_scalar start, porta_scalar step, void* y,
                  porta_stream s) noexcept {
  PORTA_HIP_RETURN_IF(gpu::check::elementwise(dt, n, y, y, "iota"));
  PORTA_HIP_ENTER(guard, dev, "iota");
  PORTA_HIP_TRY
  return launched(K::iota(dt, n, start, step, y, s), "iota", dt, dev);
  PORTA_HIP_CATCH("iota")
}

porta_status cast(int dev, porta_dtype from, porta_dtype to, int64_t n, const void* x, void* y,
                  porta_stream s) noexcept {
  PORTA_HIP_RETURN_IF(gpu::check::cast(from, to, n, x, y));
  PORTA_HIP_ENTER(guard, dev, "cast");
  PORTA_HIP_TRY
  return launched(K::cast(from, to, n, x, y, s), "cast", to, dev);
  PORTA_HIP_CATCH("cast")
}

porta_status unary(int dev, porta_unary_op op, porta_dtype dt, int64_t n, const void* x, void* y,
                   porta_stream s) noexcept {
  PORTA_HIP_RETURN_IF(gpu::check::unary(op, dt, n, x, y));
  PORTA_HIP_ENTER(guard, dev, "unary");
  PORTA_HIP_TRY
  return launched(K::unary(op, dt, n, x, y, s), "unary map", dt, dev);
  PORTA_HIP_CATCH("unary")
}

porta_status binary(int dev, porta_binary_op op, porta_dtype dt, int64_t rows, int64_t cols, const void* a,
                    int64_t a_rs, int64_t a_cs, const void* b, int64_t b_rs, int64_t b_cs, void* y,
                    porta_stream s) noexcept {
  PORTA_HIP_RETURN_IF(gpu::check::binary(op, dt, rows, cols, a, b, y));
  PORTA_HIP_ENTER(guard, dev, "binary");
  PORTA_HIP_TRY
  return launched(K::binary(op, dt, rows, cols, a, a_rs, a_cs, b, b_rs, b_cs, y, s), "binary map", dt, dev);
  PORTA_HIP_CATCH("binary")
}

porta_status binary_scalar(int dev, porta_binary_op op, porta_dtype dt, int64_t n, const void* x, porta_scalar value,
                           int scalar_first, void* y, porta_stream s) noexcept {
  PORTA_HIP_RETURN_IF(gpu::check::binary_scalar(op, dt, n, x, y));
  PORTA_HIP_ENTER(guard, dev, "binary_scalar");
  PORTA_HIP_TRY
  return launched(K::binary_scalar(op, dt, n, x, value, scalar_first, y, s), "binary map", dt, dev);
  PORTA_HIP_CATCH("binary_scalar")
}

porta_status axpy(int dev, porta_dtype dt, int64_t n, porta_scalar alpha, const void* x, void* y,
                  porta_stream s) noexcept {
  PORTA_HIP_RETURN_IF(gpu::check::elementwise(dt, n, x, y, "axpy"));
  PORTA_HIP_ENTER(guard, dev, "axpy");
  PORTA_HIP_TRY
  return launched(K::axpy(dt, n, alpha, x, y, s), "axpy", dt, dev);
  PORTA_HIP_CATCH("axpy")
}

porta_status reduce(int dev, porta_reduce_op op, porta_dtype dt, int64_t outer, int64_t n, int64_t inner, const void* x,
                    void* y, porta_stream s) noexcept {
  PORTA_HIP_RETURN_IF(gpu::check::reduce(op, dt, outer, n, inner, x, y));
  PORTA_HIP_ENTER(guard, dev, "reduce");
  PORTA_HIP_TRY
  return launched(K::reduce(op, dt, outer, n, inner, x, y, s), "reduction", dt, dev);
  PORTA_HIP_CATCH("reduce")
}

porta_status dot(int dev, porta_dtype dt, int64_t n, const void* x, const void* w, void* y, porta_stream s) noexcept {
  PORTA_HIP_RETURN_IF(gpu::check::dot(dt, n, x, w, y));
  PORTA_HIP_ENTER(guard, dev, "dot");
  PORTA_HIP_TRY
  return launched(K::dot(dt, n, x, w, y, s), "dot", dt, dev);
  PORTA_HIP_CATCH("dot")
}

porta_status gemm(int dev, porta_dtype dt, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                  porta_scalar alpha, const void* a, int64_t lda, const void* b, int64_t ldb, porta_scalar beta,
                  void* c, int64_t ldc, uint32_t flags, porta_stream s) noexcept {
  PORTA_HIP_RETURN_IF(gpu::check::gemm(dt, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc));
  if (m == 0 || n == 0) return PORTA_OK;
  PORTA_HIP_ENTER(guard, dev, "gemm");
  PORTA_HIP_TRY
  // PORTA_GEMM_ALLOW_TF32 is a permission, not a request: ROCm 5.2's rocBLAS has no TF32 path.
  if (vendor_gemm_takes(dt, m, n, k, lda, ldb, ldc, flags))
    return vendor_gemm(dev, dt, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
  return launched(K::gemm(dt, trans_a != 0, trans_b != 0, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s), "gemm", dt,
                  dev);
  PORTA_HIP_CATCH("gemm")
}

}  // namespace porta::detail::hip
