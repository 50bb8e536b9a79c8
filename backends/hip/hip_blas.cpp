// SPDX-License-Identifier: Apache-2.0
// float, double, complex64 and complex128 gemm through rocBLAS (or hipBLAS) when the build found one. Neither is
// packaged by Debian, so the default build of this plugin has neither and every gemm runs porta's own kernel
// (backends/gpu); this file then only says "not taken".
#include <climits>
#include <cstdint>
#include <memory>
#include <mutex>
#include <type_traits>

#include "backends/common/backend_error.hpp"
#include "backends/gpu/plugin.hpp"
#include "backends/hip/hip_blas.hpp"

#if defined(PORTA_HIP_HAVE_ROCBLAS)
#if __has_include(<rocblas/rocblas.h>)
#include <rocblas/rocblas.h>
#else
#include <rocblas.h>
#endif
#elif defined(PORTA_HIP_HAVE_HIPBLAS)
#if __has_include(<hipblas/hipblas.h>)
#include <hipblas/hipblas.h>
#else
#include <hipblas.h>
#endif
#endif

namespace porta::detail::hip {

using backend::set_error;

#if defined(PORTA_HIP_HAVE_ROCBLAS) || defined(PORTA_HIP_HAVE_HIPBLAS)

namespace {

// The vendor's complex gemm with porta::complex arguments: its complex type (rocblas_float_complex,
// hipblasComplex or hipComplex, depending on the library and its version) is read off the
// function's signature; every one of them is the interleaved (re, im) pair of porta::complex.
template <class St, class H, class O, class Z, class T>
St call_complex(St (*f)(H, O, O, int, int, int, const Z*, const Z*, int, const Z*, int, const Z*, Z*, int), H h, O ta,
                O tb, int m, int n, int k, const T* alpha, const T* a, int lda, const T* b, int ldb, const T* beta,
                T* c, int ldc) {
  static_assert(sizeof(Z) == sizeof(T), "the vendor's complex type is not an interleaved pair");
  return f(h, ta, tb, m, n, k, reinterpret_cast<const Z*>(alpha), reinterpret_cast<const Z*>(a), lda,
           reinterpret_cast<const Z*>(b), ldb, reinterpret_cast<const Z*>(beta), reinterpret_cast<Z*>(c), ldc);
}

#if defined(PORTA_HIP_HAVE_ROCBLAS)
using Handle = rocblas_handle;
using Op = rocblas_operation;
constexpr const char* kLibrary = "rocBLAS";
const Op kOpN = rocblas_operation_none;
const Op kOpT = rocblas_operation_transpose;
bool ok(rocblas_status st) {
  return st == rocblas_status_success;
}
const char* status_text(rocblas_status st) {
  return rocblas_status_to_string(st);
}
rocblas_status create(Handle* h) {
  return rocblas_create_handle(h);
}
rocblas_status set_stream(Handle h, hipStream_t s) {
  return rocblas_set_stream(h, s);
}
rocblas_status call_gemm(Handle h, Op ta, Op tb, int m, int n, int k, const float* alpha, const float* a, int lda,
                         const float* b, int ldb, const float* beta, float* c, int ldc) {
  return rocblas_sgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
rocblas_status call_gemm(Handle h, Op ta, Op tb, int m, int n, int k, const double* alpha, const double* a, int lda,
                         const double* b, int ldb, const double* beta, double* c, int ldc) {
  return rocblas_dgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
rocblas_status call_gemm(Handle h, Op ta, Op tb, int m, int n, int k, const porta::complex<float>* alpha,
                         const porta::complex<float>* a, int lda, const porta::complex<float>* b, int ldb,
                         const porta::complex<float>* beta, porta::complex<float>* c, int ldc) {
  return call_complex(rocblas_cgemm, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
rocblas_status call_gemm(Handle h, Op ta, Op tb, int m, int n, int k, const porta::complex<double>* alpha,
                         const porta::complex<double>* a, int lda, const porta::complex<double>* b, int ldb,
                         const porta::complex<double>* beta, porta::complex<double>* c, int ldc) {
  return call_complex(rocblas_zgemm, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
#else
using Handle = hipblasHandle_t;
using Op = hipblasOperation_t;
constexpr const char* kLibrary = "hipBLAS";
const Op kOpN = HIPBLAS_OP_N;
const Op kOpT = HIPBLAS_OP_T;
bool ok(hipblasStatus_t st) {
  return st == HIPBLAS_STATUS_SUCCESS;
}
const char* status_text(hipblasStatus_t st) {
  return hipblasStatusToString(st);
}
hipblasStatus_t create(Handle* h) {
  return hipblasCreate(h);
}
hipblasStatus_t set_stream(Handle h, hipStream_t s) {
  return hipblasSetStream(h, s);
}
hipblasStatus_t call_gemm(Handle h, Op ta, Op tb, int m, int n, int k, const float* alpha, const float* a, int lda,
                          const float* b, int ldb, const float* beta, float* c, int ldc) {
  return hipblasSgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
hipblasStatus_t call_gemm(Handle h, Op ta, Op tb, int m, int n, int k, const double* alpha, const double* a, int lda,
                          const double* b, int ldb, const double* beta, double* c, int ldc) {
  return hipblasDgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
hipblasStatus_t call_gemm(Handle h, Op ta, Op tb, int m, int n, int k, const porta::complex<float>* alpha,
                          const porta::complex<float>* a, int lda, const porta::complex<float>* b, int ldb,
                          const porta::complex<float>* beta, porta::complex<float>* c, int ldc) {
  return call_complex(hipblasCgemm, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
hipblasStatus_t call_gemm(Handle h, Op ta, Op tb, int m, int n, int k, const porta::complex<double>* alpha,
                          const porta::complex<double>* a, int lda, const porta::complex<double>* b, int ldb,
                          const porta::complex<double>* beta, porta::complex<double>* c, int ldc) {
  return call_complex(hipblasZgemm, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
#endif

// One handle per device, shared by all threads: a handle is bound to the device that was current
// when it was made, and it must not be used by two threads at once, so calls take its mutex (the
// call only enqueues work). Handles live until the process exits: destroying them from a static
// destructor could run after the HIP runtime has been torn down.
struct DeviceBlas {
  std::once_flag once;
  Handle handle = nullptr;
  bool created = false;
  std::mutex mutex;
};

bool fits_int(std::int64_t v) {
  return v >= 0 && v <= INT_MAX;
}

template <class T>
porta_status gemm_t(int dev, int trans_a, int trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
                    const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc,
                    porta_stream s) {
  constexpr const char* fn = "gemm";
  DeviceBlas& blas = gpu::per_device<DeviceBlas, gpu::ApiHip>(dev);
  std::call_once(blas.once, [&blas] { blas.created = ok(create(&blas.handle)); });
  if (!blas.created) return set_error(PORTA_ERR_BACKEND, "%s: cannot create a %s handle on hip:%d", fn, kLibrary, dev);
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: the same buffers, with the
  // operands swapped and m, n exchanged.
  std::lock_guard<std::mutex> lock(blas.mutex);
  auto st = set_stream(blas.handle, reinterpret_cast<hipStream_t>(s));
  if (!ok(st)) return set_error(PORTA_ERR_BACKEND, "%s: %s set_stream failed: %s", fn, kLibrary, status_text(st));
  st = call_gemm(blas.handle, trans_b ? kOpT : kOpN, trans_a ? kOpT : kOpN, static_cast<int>(n), static_cast<int>(m),
                 static_cast<int>(k), &alpha, b, static_cast<int>(ldb), a, static_cast<int>(lda), &beta, c,
                 static_cast<int>(ldc));
  if (!ok(st))
    return set_error(PORTA_ERR_BACKEND, "%s: %s gemm (%lld x %lld x %lld) failed: %s", fn, kLibrary,
                     static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k), status_text(st));
  return PORTA_OK;
}

}  // namespace

bool vendor_gemm_takes(porta_dtype dt, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda,
                       std::int64_t ldb, std::int64_t ldc, std::uint32_t flags) noexcept {
  if (flags & PORTA_GEMM_OWN_KERNEL) return false;
  if (dt != PORTA_F32 && dt != PORTA_F64 && dt != PORTA_C64 && dt != PORTA_C128) return false;
  // Empty products and k == 0 (C = beta C) are left to porta's kernel, which defines them for
  // every leading dimension; BLAS rejects ld < 1.
  if (m <= 0 || n <= 0 || k <= 0) return false;
  return fits_int(m) && fits_int(n) && fits_int(k) && fits_int(lda) && fits_int(ldb) && fits_int(ldc);
}

porta_status vendor_gemm(int dev, porta_dtype dt, int trans_a, int trans_b, std::int64_t m, std::int64_t n,
                         std::int64_t k, porta_scalar alpha, const void* a, std::int64_t lda, const void* b,
                         std::int64_t ldb, porta_scalar beta, void* c, std::int64_t ldc, porta_stream s) noexcept try {
  porta_status st = set_error(PORTA_ERR_UNSUPPORTED, "gemm: no vendor gemm for %s", backend::dtype_name(dt));
  backend::with_dtype(dt, [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_floating_point_v<T> || is_complex_v<T>)
      st = gemm_t<T>(dev, trans_a, trans_b, m, n, k, backend::scalar_value<T>(alpha), static_cast<const T*>(a), lda,
                     static_cast<const T*>(b), ldb, backend::scalar_value<T>(beta), static_cast<T*>(c), ldc, s);
  });
  return st;
} catch (...) {
  return set_error(PORTA_ERR_BACKEND, "gemm: unexpected C++ exception around the vendor BLAS");
}

#else  // no vendor BLAS in this build

bool vendor_gemm_takes(porta_dtype, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                       std::uint32_t) noexcept {
  return false;
}

porta_status vendor_gemm(int, porta_dtype, int, int, std::int64_t, std::int64_t, std::int64_t, porta_scalar,
                         const void*, std::int64_t, const void*, std::int64_t, porta_scalar, void*, std::int64_t,
                         porta_stream) noexcept {
  return set_error(PORTA_ERR_UNSUPPORTED, "gemm: this libporta_hip.so was built without rocBLAS or hipBLAS");
}

#endif

}  // namespace porta::detail::hip
