// SPDX-License-Identifier: Apache-2.0
// libporta_cuda.so: the GPU plugin of backends/gpu/plugin.hpp over the CUDA runtime (ApiCuda). What
// is CUDA's own lives here: why there is no device, the build line, and the cuBLAS glue. Loading
// the library touches no driver: the first call that needs one is device_count, which never fails,
// so a CUDA build runs on CPU-only machines. Compiled as CUDA (nvcc), as the kernels it launches.
#include <cublas_v2.h>
#include <cusparse.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "backends/gpu/plugin.hpp"

#ifndef PORTA_CUDA_ARCH_TEXT
#define PORTA_CUDA_ARCH_TEXT "unknown"
#endif

namespace porta::detail::cuda {
namespace {

using backend::set_error;

porta_status blas_error(const char* call, cublasStatus_t st) noexcept {
  (void)cudaGetLastError();
  return set_error(st == CUBLAS_STATUS_ALLOC_FAILED ? PORTA_ERR_OOM : PORTA_ERR_BACKEND, "gemm: %s: %s (%s)", call,
                   cublasGetStatusString(st), cublasGetStatusName(st));
}

porta_status sparse_error(const char* call, cusparseStatus_t st) noexcept {
  (void)cudaGetLastError();
  return set_error(st == CUSPARSE_STATUS_ALLOC_FAILED ? PORTA_ERR_OOM : PORTA_ERR_BACKEND, "spmm: %s: %s (%s)", call,
                   cusparseGetErrorString(st), cusparseGetErrorName(st));
}

// One cuSPARSE handle per device, as for cuBLAS below.
struct DeviceSparse {
  std::mutex mutex;
  cusparseHandle_t handle = nullptr;
};

// The descriptors of one call, destroyed on every way out.
struct SparseDescriptors {
  cusparseConstSpMatDescr_t a = nullptr;
  cusparseConstDnVecDescr_t xv = nullptr;
  cusparseDnVecDescr_t yv = nullptr;
  cusparseConstDnMatDescr_t xm = nullptr;
  cusparseDnMatDescr_t ym = nullptr;
  ~SparseDescriptors() {
    if (a != nullptr) (void)cusparseDestroySpMat(a);
    if (xv != nullptr) (void)cusparseDestroyDnVec(xv);
    if (yv != nullptr) (void)cusparseDestroyDnVec(yv);
    if (xm != nullptr) (void)cusparseDestroyDnMat(xm);
    if (ym != nullptr) (void)cusparseDestroyDnMat(ym);
  }
};

// One handle per device, created on first use; a mutex guards each set-stream + gemm pair, since
// a handle must not be used by two threads at once (the call only enqueues work). Handles live
// until exit: destroying them from a static destructor could run after the runtime is gone.
struct DeviceBlas {
  std::mutex mutex;
  cublasHandle_t handle = nullptr;
};

struct Cuda {
  using Api = gpu::ApiCuda;
  // The collectives library (backends/gpu/collectives.hpp), dlopen()ed at first use, never linked.
  static constexpr const char* kCollName = "NCCL";
  static constexpr const char* kCollLibrary = "libnccl.so.2";

  // Run-time kernels (backends/gpu/rtc.hpp): NVRTC of this plugin's CUDA major, dlopen()ed at
  // first use; cubins loaded through the runtime's library calls (no driver API to link).
  static const gpu::RtcNames& rtc_names() {
    static const std::string major = "libnvrtc.so." + std::to_string(CUDART_VERSION / 1000);
    static const gpu::RtcNames n{
        "NVRTC", {major.c_str(), "libnvrtc.so"}, "nvrtc", "nvrtcGetCUBINSize", "nvrtcGetCUBIN"};
    return n;
  }
  // A cubin for the device's own architecture; no contraction into FMAs (the eager operators' bits).
  static std::vector<std::string> rtc_options(const char* arch) {
    return {std::string("--gpu-architecture=") + arch, "--std=c++17", "--fmad=false"};
  }
  static cudaError_t rtc_module_load(const void* code, const char* name, void** fn) {
    cudaLibrary_t lib = nullptr;
    cudaError_t e = cudaLibraryLoadData(&lib, code, nullptr, nullptr, 0, nullptr, nullptr, 0);
    if (e != cudaSuccess) return e;
    cudaKernel_t k = nullptr;
    e = cudaLibraryGetKernel(&k, lib, name);
    if (e != cudaSuccess) {
      (void)cudaLibraryUnload(lib);
      return e;
    }
    *fn = reinterpret_cast<void*>(k);
    return cudaSuccess;
  }
  // cudaLaunchKernel takes a cudaKernel_t cast to a function pointer.
  static cudaError_t rtc_module_launch(void* fn, unsigned grid, unsigned block, void** args, cudaStream_t s) {
    return cudaLaunchKernel(reinterpret_cast<const void*>(fn), dim3(grid), dim3(block), args, 0, s);
  }
  // The runtime's occupancy calculator takes a cudaKernel_t cast the same way.
  static cudaError_t rtc_resident_blocks(void* fn, int block, int* blocks) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, reinterpret_cast<const void*>(fn), block, 0);
  }

  static std::string no_device_reason(cudaError_t e, int) {
    char buf[512];
    int runtime = 0;
    (void)cudaRuntimeGetVersion(&runtime);
    if (e == cudaErrorInsufficientDriver) {
      std::snprintf(buf, sizeof buf,
                    "CUDA driver is not installed, or is older than CUDA runtime %d.%d needs "
                    "(cudaErrorInsufficientDriver: %s)",
                    runtime / 1000, (runtime % 1000) / 10, cudaGetErrorString(e));
    } else if (e == cudaErrorNoDevice) {
      const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
      std::snprintf(buf, sizeof buf, "no CUDA device found (cudaErrorNoDevice: %s)%s%s%s", cudaGetErrorString(e),
                    visible ? "; CUDA_VISIBLE_DEVICES=\"" : "", visible ? visible : "", visible ? "\"" : "");
    } else if (e != cudaSuccess) {
      std::snprintf(buf, sizeof buf, "cudaGetDeviceCount failed: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
    } else {
      std::snprintf(buf, sizeof buf, "no CUDA device found (cudaGetDeviceCount returned 0)");
    }
    return buf;
  }

  // The runtime this plugin was built with (the shared libcudart it loads must match its major)
  // and the cuBLAS it runs with.
  static const char* build_info() noexcept {
    static char text[320] = "";
    static std::once_flag once;
    std::call_once(once, []() noexcept {
      int major = 0, minor = 0, patch = 0;
      char blas[64];
      if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
          cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
          cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS) {
        std::snprintf(blas, sizeof blas, "cuBLAS %d.%d.%d", major, minor, patch);
      } else {
        std::snprintf(blas, sizeof blas, "cuBLAS %d.%d (headers)", CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR);
      }
      std::snprintf(text, sizeof text, "CUDA runtime %d.%d, %s, architectures: %s", CUDART_VERSION / 1000,
                    (CUDART_VERSION % 1000) / 10, blas, PORTA_CUDA_ARCH_TEXT);
    });
    return text;
  }

  // float/double go to cuBLAS (64-bit interface: every size fits) unless porta's kernel was asked
  // for; k == 0 (C = beta C) is porta's kernel, which defines it for every leading dimension.
  static bool blas_takes(porta_dtype dt, std::int64_t, std::int64_t, std::int64_t k, std::int64_t, std::int64_t,
                         std::int64_t, std::uint32_t flags) noexcept {
    return (dt == PORTA_F32 || dt == PORTA_F64) && (flags & PORTA_GEMM_OWN_KERNEL) == 0 && k > 0;
  }

  // Row-major C[m x n] = alpha op(A) op(B) + beta C through column-major cuBLAS: the buffers of
  // row-major A, B, C are column-major A^T, B^T, C^T, and C^T = op(B)^T op(A)^T, so cuBLAS gets the
  // operands swapped, each with its own transpose flag, and the dimensions n x m x k.
  static porta_status blas_gemm(int dev, porta_dtype dt, int trans_a, int trans_b, std::int64_t m, std::int64_t n,
                                std::int64_t k, porta_scalar alpha, const void* a, std::int64_t lda, const void* b,
                                std::int64_t ldb, porta_scalar beta, void* c, std::int64_t ldc, std::uint32_t flags,
                                porta_stream s) noexcept try {
    DeviceBlas& ds = gpu::per_device<DeviceBlas, Api>(dev);
    std::lock_guard<std::mutex> lock(ds.mutex);
    if (ds.handle == nullptr) {
      cublasHandle_t h = nullptr;
      const cublasStatus_t st = cublasCreate(&h);
      if (st != CUBLAS_STATUS_SUCCESS) return blas_error("cublasCreate", st);
      // Default math: fp32 stays fp32 (no TF32 unless a call asks for it through its compute type).
      const cublasStatus_t mm = cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
      if (mm != CUBLAS_STATUS_SUCCESS) {
        cublasDestroy(h);
        return blas_error("cublasSetMathMode", mm);
      }
      ds.handle = h;
    }
    cublasStatus_t st = cublasSetStream(ds.handle, reinterpret_cast<cudaStream_t>(s));
    if (st != CUBLAS_STATUS_SUCCESS) return blas_error("cublasSetStream", st);
    const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    // cuBLAS wants leading dimensions of at least 1 even for empty operands.
    if (lda < 1) lda = 1;
    if (ldb < 1) ldb = 1;
    const bool f32 = dt == PORTA_F32;
    const cudaDataType_t type = f32 ? CUDA_R_32F : CUDA_R_64F;
    const cublasComputeType_t compute = !f32                              ? CUBLAS_COMPUTE_64F
                                        : (flags & PORTA_GEMM_ALLOW_TF32) ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                          : CUBLAS_COMPUTE_32F;
    const void* al = f32 ? static_cast<const void*>(&alpha.f32) : static_cast<const void*>(&alpha.f64);
    const void* be = f32 ? static_cast<const void*>(&beta.f32) : static_cast<const void*>(&beta.f64);
    st = cublasGemmEx_64(ds.handle, op_b, op_a, n, m, k, al, b, type, ldb, a, type, lda, be, c, type, ldc, compute,
                         CUBLAS_GEMM_DEFAULT);
    if (st != CUBLAS_STATUS_SUCCESS) return blas_error("cublasGemmEx", st);
    return PORTA_OK;
  } catch (...) {
    return set_error(PORTA_ERR_BACKEND, "gemm: unexpected C++ exception around cuBLAS");
  }

  // cuSPARSE's generic SpMV / SpMM unless porta's kernel was asked for. A vector operand must be
  // contiguous there (porta's kernel takes any stride); an empty matrix is porta's too.
  static bool sparse_takes(std::int64_t nnz, std::int64_t k, std::int64_t ldx, std::int64_t ldy,
                           std::uint32_t flags) noexcept {
    return (flags & PORTA_SPARSE_OWN_KERNEL) == 0 && nnz > 0 && (k > 1 || (ldx == 1 && ldy == 1));
  }

  // Descriptors per call (a few microseconds of host work, no device work); the workspace comes
  // from the device's stream-ordered pool and goes back to it on the same stream.
  static porta_status sparse_spmm(int dev, porta_dtype dt, porta_dtype index_dt, std::int64_t rows, std::int64_t cols,
                                  std::int64_t nnz, const void* row_ptr, const void* col_idx, const void* values,
                                  std::int64_t k, porta_scalar alpha, const void* x, std::int64_t ldx,
                                  porta_scalar beta, void* y, std::int64_t ldy, porta_stream s) noexcept try {
    DeviceSparse& ds = gpu::per_device<DeviceSparse, Api>(dev);
    std::lock_guard<std::mutex> lock(ds.mutex);
    if (ds.handle == nullptr) {
      cusparseHandle_t h = nullptr;
      const cusparseStatus_t st = cusparseCreate(&h);
      if (st != CUSPARSE_STATUS_SUCCESS) return sparse_error("cusparseCreate", st);
      ds.handle = h;
    }
    const cudaStream_t stream = reinterpret_cast<cudaStream_t>(s);
    cusparseStatus_t st = cusparseSetStream(ds.handle, stream);
    if (st != CUSPARSE_STATUS_SUCCESS) return sparse_error("cusparseSetStream", st);
    const bool f32 = dt == PORTA_F32;
    const cudaDataType_t type = f32 ? CUDA_R_32F : CUDA_R_64F;
    const cusparseIndexType_t index = index_dt == PORTA_I32 ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;
    const void* al = f32 ? static_cast<const void*>(&alpha.f32) : static_cast<const void*>(&alpha.f64);
    const void* be = f32 ? static_cast<const void*>(&beta.f32) : static_cast<const void*>(&beta.f64);
    SparseDescriptors d;
    st = cusparseCreateConstCsr(&d.a, rows, cols, nnz, row_ptr, col_idx, values, index, index, CUSPARSE_INDEX_BASE_ZERO,
                                type);
    if (st != CUSPARSE_STATUS_SUCCESS) return sparse_error("cusparseCreateConstCsr", st);
    std::size_t bytes = 0;
    if (k == 1) {
      st = cusparseCreateConstDnVec(&d.xv, cols, x, type);
      if (st == CUSPARSE_STATUS_SUCCESS) st = cusparseCreateDnVec(&d.yv, rows, y, type);
      if (st != CUSPARSE_STATUS_SUCCESS) return sparse_error("cusparseCreateDnVec", st);
      st = cusparseSpMV_bufferSize(ds.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, al, d.a, d.xv, be, d.yv, type,
                                   CUSPARSE_SPMV_ALG_DEFAULT, &bytes);
      if (st != CUSPARSE_STATUS_SUCCESS) return sparse_error("cusparseSpMV_bufferSize", st);
    } else {
      st = cusparseCreateConstDnMat(&d.xm, cols, k, ldx, x, type, CUSPARSE_ORDER_ROW);
      if (st == CUSPARSE_STATUS_SUCCESS) st = cusparseCreateDnMat(&d.ym, rows, k, ldy, y, type, CUSPARSE_ORDER_ROW);
      if (st != CUSPARSE_STATUS_SUCCESS) return sparse_error("cusparseCreateDnMat", st);
      st = cusparseSpMM_bufferSize(ds.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, al,
                                   d.a, d.xm, be, d.ym, type, CUSPARSE_SPMM_ALG_DEFAULT, &bytes);
      if (st != CUSPARSE_STATUS_SUCCESS) return sparse_error("cusparseSpMM_bufferSize", st);
    }
    void* work = nullptr;
    if (bytes > 0) {
      const cudaError_t e = cudaMallocAsync(&work, bytes, stream);
      if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return set_error(e == cudaErrorMemoryAllocation ? PORTA_ERR_OOM : PORTA_ERR_BACKEND,
                         "spmm: cudaMallocAsync of cuSPARSE's %zu-byte workspace: %s", bytes, cudaGetErrorString(e));
      }
    }
    st = k == 1 ? cusparseSpMV(ds.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, al, d.a, d.xv, be, d.yv, type,
                               CUSPARSE_SPMV_ALG_DEFAULT, work)
                : cusparseSpMM(ds.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, al, d.a,
                               d.xm, be, d.ym, type, CUSPARSE_SPMM_ALG_DEFAULT, work);
    if (work != nullptr) (void)cudaFreeAsync(work, stream);
    if (st != CUSPARSE_STATUS_SUCCESS) return sparse_error(k == 1 ? "cusparseSpMV" : "cusparseSpMM", st);
    return PORTA_OK;
  } catch (...) {
    return set_error(PORTA_ERR_BACKEND, "spmm: unexpected C++ exception around cuSPARSE");
  }
};

}  // namespace
}  // namespace porta::detail::cuda

extern "C" __attribute__((visibility("default"))) const porta_backend_v1* porta_backend_entry_v1(void) {
  return porta::detail::gpu::Plugin<porta::detail::cuda::Cuda>::table();
}
