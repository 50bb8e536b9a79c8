// SPDX-License-Identifier: Apache-2.0
// libporta_cuda.so: the GPU plugin of backends/gpu/plugin.hpp over the CUDA runtime (ApiCuda). What
// is CUDA's own lives here: why there is no device, the build line, and the glue to the vendor
// libraries it links: cuBLAS (gemm), cuSPARSE (spmm), cuSOLVER (linalg) and cuFFT (fft). Loading the library
// touches no driver: the first call that needs one is device_count, which never fails, so a CUDA
// build runs on CPU-only machines. Compiled as CUDA (nvcc), as the kernels it launches.
#include <cublas_v2.h>
#include <cufft.h>
#include <cusolverDn.h>
#include <cusparse.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <tuple>
#include <vector>

#include "backends/gpu/plugin.hpp"

#ifndef PORTA_CUDA_ARCH_TEXT
#define PORTA_CUDA_ARCH_TEXT "unknown"
#endif

namespace porta::detail::cuda {
namespace {

using backend::set_error;

// `fn` names the entry, `call` the cuBLAS routine (with `suffix` appended, for the typed ones).
porta_status blas_error(const char* fn, const char* call, cublasStatus_t st, const char* suffix = "") noexcept {
  (void)cudaGetLastError();
  return set_error(st == CUBLAS_STATUS_ALLOC_FAILED ? PORTA_ERR_OOM : PORTA_ERR_BACKEND, "%s: %s%s: %s (%s)", fn, call,
                   suffix, cublasGetStatusString(st), cublasGetStatusName(st));
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

// One handle per device, created on first use; a mutex guards each set-stream and the calls that
// follow it (gemm, linalg's batched LU), since a handle must not be used by two threads at once
// (the calls only enqueue work). Handles live
// until exit: destroying them from a static destructor could run after the runtime is gone.
struct DeviceBlas {
  std::mutex mutex;
  cublasHandle_t handle = nullptr;
};

// The device's cuBLAS handle, created on first use, set to `stream`; the caller holds ds.mutex and
// has made the device current.
porta_status blas_on(DeviceBlas& ds, cudaStream_t stream, const char* fn) noexcept {
  if (ds.handle == nullptr) {
    cublasHandle_t h = nullptr;
    const cublasStatus_t st = cublasCreate(&h);
    if (st != CUBLAS_STATUS_SUCCESS) return blas_error(fn, "cublasCreate", st);
    // Default math: fp32 stays fp32 (no TF32 unless a call asks for it through its compute type).
    const cublasStatus_t mm = cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
    if (mm != CUBLAS_STATUS_SUCCESS) {
      cublasDestroy(h);
      return blas_error(fn, "cublasSetMathMode", mm);
    }
    ds.handle = h;
  }
  const cublasStatus_t st = cublasSetStream(ds.handle, stream);
  return st == CUBLAS_STATUS_SUCCESS ? PORTA_OK : blas_error(fn, "cublasSetStream", st);
}

// ---- dense linear algebra (cuSOLVER) ------------------------------------------------------------

// cuSOLVER has no message text of its own: the status's name, and its number.
const char* solver_status_name(cusolverStatus_t st) noexcept {
  switch (st) {
    case CUSOLVER_STATUS_SUCCESS:
      return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED:
      return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED:
      return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE:
      return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH:
      return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_MAPPING_ERROR:
      return "CUSOLVER_STATUS_MAPPING_ERROR";
    case CUSOLVER_STATUS_EXECUTION_FAILED:
      return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR:
      return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED:
      return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED:
      return "CUSOLVER_STATUS_NOT_SUPPORTED";
    case CUSOLVER_STATUS_INVALID_WORKSPACE:
      return "CUSOLVER_STATUS_INVALID_WORKSPACE";
    default:
      return "cuSOLVER error";
  }
}

// `call` and `suffix` make the routine's name ("cusolverDnS" "getrf").
porta_status solver_error(const char* call, cusolverStatus_t st, const char* suffix = "") noexcept {
  (void)cudaGetLastError();
  return set_error(st == CUSOLVER_STATUS_ALLOC_FAILED ? PORTA_ERR_OOM : PORTA_ERR_BACKEND, "linalg: %s%s: %s (%d)",
                   call, suffix, solver_status_name(st), static_cast<int>(st));
}

porta_status runtime_error(const char* what, cudaError_t e, const char* fn = "linalg") noexcept {
  (void)cudaGetLastError();
  return set_error(e == cudaErrorMemoryAllocation ? PORTA_ERR_OOM : PORTA_ERR_BACKEND, "%s: %s: %s (%s)", fn, what,
                   cudaGetErrorString(e), cudaGetErrorName(e));
}

// One cuSOLVER handle per device, as for cuBLAS above; the mutex is held for a whole call, whose
// routines all run on the handle's one stream.
struct DeviceSolver {
  std::mutex mutex;
  cusolverDnHandle_t handle = nullptr;
};

porta_status solver_on(DeviceSolver& ds, cudaStream_t stream) noexcept {
  if (ds.handle == nullptr) {
    cusolverDnHandle_t h = nullptr;
    const cusolverStatus_t st = cusolverDnCreate(&h);
    if (st != CUSOLVER_STATUS_SUCCESS) return solver_error("cusolverDnCreate", st);
    ds.handle = h;
  }
  const cusolverStatus_t st = cusolverDnSetStream(ds.handle, stream);
  return st == CUSOLVER_STATUS_SUCCESS ? PORTA_OK : solver_error("cusolverDnSetStream", st);
}

// The float and double routines under one name each; kSolver and kBlas begin their names in
// messages.
template <class T>
struct Routines;
template <>
struct Routines<float> {
  static constexpr const char* kSolver = "cusolverDnS";
  static constexpr const char* kBlas = "cublasS";
  static constexpr auto getrf_bufferSize = cusolverDnSgetrf_bufferSize;
  static constexpr auto getrf = cusolverDnSgetrf;
  static constexpr auto getrs = cusolverDnSgetrs;
  static constexpr auto potrf_bufferSize = cusolverDnSpotrf_bufferSize;
  static constexpr auto potrf = cusolverDnSpotrf;
  static constexpr auto geqrf_bufferSize = cusolverDnSgeqrf_bufferSize;
  static constexpr auto geqrf = cusolverDnSgeqrf;
  static constexpr auto orgqr_bufferSize = cusolverDnSorgqr_bufferSize;
  static constexpr auto orgqr = cusolverDnSorgqr;
  static constexpr auto syevd_bufferSize = cusolverDnSsyevd_bufferSize;
  static constexpr auto syevd = cusolverDnSsyevd;
  static constexpr auto gesvd_bufferSize = cusolverDnSgesvd_bufferSize;
  static constexpr auto gesvd = cusolverDnSgesvd;
  static constexpr auto potrfBatched = cusolverDnSpotrfBatched;
  static constexpr auto syevjBatched_bufferSize = cusolverDnSsyevjBatched_bufferSize;
  static constexpr auto syevjBatched = cusolverDnSsyevjBatched;
  static constexpr auto getrfBatched = cublasSgetrfBatched;
  static constexpr auto getrsBatched = cublasSgetrsBatched;
};
template <>
struct Routines<double> {
  static constexpr const char* kSolver = "cusolverDnD";
  static constexpr const char* kBlas = "cublasD";
  static constexpr auto getrf_bufferSize = cusolverDnDgetrf_bufferSize;
  static constexpr auto getrf = cusolverDnDgetrf;
  static constexpr auto getrs = cusolverDnDgetrs;
  static constexpr auto potrf_bufferSize = cusolverDnDpotrf_bufferSize;
  static constexpr auto potrf = cusolverDnDpotrf;
  static constexpr auto geqrf_bufferSize = cusolverDnDgeqrf_bufferSize;
  static constexpr auto geqrf = cusolverDnDgeqrf;
  static constexpr auto orgqr_bufferSize = cusolverDnDorgqr_bufferSize;
  static constexpr auto orgqr = cusolverDnDorgqr;
  static constexpr auto syevd_bufferSize = cusolverDnDsyevd_bufferSize;
  static constexpr auto syevd = cusolverDnDsyevd;
  static constexpr auto gesvd_bufferSize = cusolverDnDgesvd_bufferSize;
  static constexpr auto gesvd = cusolverDnDgesvd;
  static constexpr auto potrfBatched = cusolverDnDpotrfBatched;
  static constexpr auto syevjBatched_bufferSize = cusolverDnDsyevjBatched_bufferSize;
  static constexpr auto syevjBatched = cusolverDnDsyevjBatched;
  static constexpr auto getrfBatched = cublasDgetrfBatched;
  static constexpr auto getrsBatched = cublasDgetrsBatched;
};

// The small kernels around the solver's routines: one thread per element of the batch, striding
// past the grid's end. Plain CUDA that HIP compiles as it is.
constexpr int kLinalgThreads = 256;
constexpr std::int64_t kLinalgMaxBlocks = 1 << 16;

__device__ inline std::int64_t linalg_first() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline std::int64_t linalg_step() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

// potrf leaves the other triangle as it found it; LAPACK's callers (NumPy) return zeros there.
// upper: the factor is in the upper triangle, and the strictly lower one is zeroed.
template <class T>
__global__ void __launch_bounds__(kLinalgThreads)
    zero_triangle_kernel(std::int64_t total, std::int64_t n, bool upper, T* a) {
  for (std::int64_t e = linalg_first(); e < total; e += linalg_step()) {
    const std::int64_t w = e % (n * n), row = w % n, col = w / n;
    if (upper ? row > col : row < col) a[e] = T(0);
  }
}

// R (p x n) out of geqrf's result (m x n, R on and above the diagonal, reflectors below it).
template <class T>
__global__ void __launch_bounds__(kLinalgThreads)
    copy_r_kernel(std::int64_t total, std::int64_t m, std::int64_t n, std::int64_t p, const T* a, T* r) {
  for (std::int64_t e = linalg_first(); e < total; e += linalg_step()) {
    const std::int64_t mat = e / (p * n), w = e % (p * n), i = w % p, j = w / p;
    r[e] = i <= j ? a[mat * m * n + j * m + i] : T(0);
  }
}

// The pointer arrays of the batched routines, made on the device so that no host copy waits.
template <class T>
__global__ void __launch_bounds__(kLinalgThreads)
    pointers_kernel(std::int64_t total, T* base, std::int64_t stride, T** out) {
  for (std::int64_t e = linalg_first(); e < total; e += linalg_step()) out[e] = base + e * stride;
}

// y[e] *= scale: the normalisation of a transform (cuFFT's are unnormalised).
template <class T>
__global__ void __launch_bounds__(kLinalgThreads) scale_kernel(std::int64_t total, T scale, T* y) {
  for (std::int64_t e = linalg_first(); e < total; e += linalg_step()) y[e] *= scale;
}

// The imaginary parts of bins 0 and (even n) n / 2 of each line of h complex values, zeroed.
template <class T>
__global__ void __launch_bounds__(kLinalgThreads)
    real_bins_kernel(std::int64_t lines, std::int64_t h, bool even, T* x) {
  for (std::int64_t l = linalg_first(); l < lines; l += linalg_step()) {
    x[2 * l * h + 1] = T(0);
    if (even) x[2 * (l * h + h - 1) + 1] = T(0);
  }
}

template <class... Params, class... Args>
porta_status launch_small(const char* fn, const char* what, void (*kernel)(Params...), std::int64_t total,
                          cudaStream_t s, Args... args) noexcept {
  if (total == 0) return PORTA_OK;
  const std::int64_t blocks = std::min((total + kLinalgThreads - 1) / kLinalgThreads, kLinalgMaxBlocks);
  const cudaError_t e =
      gpu::ApiCuda::launch(kernel, dim3(static_cast<unsigned>(blocks)), dim3(kLinalgThreads), 0, s, total, args...);
  return e == cudaSuccess ? PORTA_OK : runtime_error(what, e, fn);
}
template <class... Params, class... Args>
porta_status launch_linalg(const char* what, void (*kernel)(Params...), std::int64_t total, cudaStream_t s,
                           Args... args) noexcept {
  return launch_small("linalg", what, kernel, total, s, args...);
}

// One call's temporaries, from the device's stream-ordered pool and given back on the same stream
// on every way out (the free is ordered after the work that uses them), laid out in 256-byte
// aligned parts.
class StreamBuffer {
 public:
  explicit StreamBuffer(cudaStream_t s, const char* fn = "linalg") : stream_(s), fn_(fn) {}
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;
  ~StreamBuffer() {
    if (base_ != nullptr) (void)cudaFreeAsync(base_, stream_);
  }
  static std::size_t part(std::size_t bytes) { return (bytes + 255) / 256 * 256; }
  porta_status allocate(std::size_t bytes, const char* what) noexcept {
    if (bytes == 0) return PORTA_OK;
    const cudaError_t e = cudaMallocAsync(&base_, bytes, stream_);
    if (e == cudaSuccess) return PORTA_OK;
    base_ = nullptr;
    (void)cudaGetLastError();
    return set_error(e == cudaErrorMemoryAllocation ? PORTA_ERR_OOM : PORTA_ERR_BACKEND,
                     "%s: cudaMallocAsync of the %zu-byte %s: %s", fn_, bytes, what, cudaGetErrorString(e));
  }
  // The part that starts `offset` bytes in.
  template <class U>
  U* at(std::size_t offset) const {
    return reinterpret_cast<U*>(static_cast<char*>(base_) + offset);
  }

 private:
  cudaStream_t stream_;
  const char* fn_;
  void* base_ = nullptr;
};

// ---- Fourier transforms (cuFFT) ------------------------------------------------------------------

const char* fft_status_name(cufftResult r) noexcept {
  switch (r) {
    case CUFFT_INVALID_PLAN:
      return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED:
      return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_VALUE:
      return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR:
      return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED:
      return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED:
      return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE:
      return "CUFFT_INVALID_SIZE";
    case CUFFT_NOT_SUPPORTED:
      return "CUFFT_NOT_SUPPORTED";
    default:
      return "cuFFT error";
  }
}

porta_status fft_error(const char* call, cufftResult r) noexcept {
  (void)cudaGetLastError();
  return set_error(r == CUFFT_ALLOC_FAILED ? PORTA_ERR_OOM : PORTA_ERR_BACKEND, "fft: %s: %s (%d)", call,
                   fft_status_name(r), static_cast<int>(r));
}

// cuFFT plans of one device, made on first use of a shape and kept (planning costs milliseconds;
// cupy and torch cache them the same way). Auto-allocation is off: a plan whose work area is small
// keeps one of its own for the first stream that runs it, so that repeated calls there (the common
// case, and the one where a call's fixed cost shows) allocate nothing and set nothing; calls on other
// streams, and plans with large work areas, take theirs from the stream-ordered pool. A kept area is
// safe to reuse because work on one stream runs in order, and stream_destroy synchronises a stream
// before its handle can come back for another. The mutex covers set-stream and the execution that
// follows it, as for the cuBLAS handle.
struct DeviceFft {
  using Key = std::tuple<int, int, long long, long long, long long, long long>;
  struct Plan {
    cufftHandle handle = 0;
    std::size_t work = 0;
    void* kept = nullptr;  // the kept work area (cudaMalloc), for `owner` only
    cudaStream_t owner = nullptr;
    bool owned = false;
    cudaStream_t stream = nullptr;  // what the handle was last given
    void* area = nullptr;
    bool set = false;
  };
  static constexpr std::size_t kMaxPlans = 64;
  static constexpr std::size_t kMaxKept = std::size_t(64) << 20;  // bytes of a work area worth keeping
  std::mutex mutex;
  std::map<Key, Plan> plans;
};

// One linalg call, past the checks: every matrix non-empty, every size an int.
struct LinalgCall {
  int dev;
  cudaStream_t stream;
  porta_linalg_op op;
  std::int64_t batch;
  int m, n, k;
  bool full;                    // svd: U is m x m
  cublasFillMode_t fill;        // cholesky, eigh: the triangle read
  cublasOperation_t transpose;  // solve: A X = B or A^T X = B
  std::int32_t* info;
  backend::check::LinalgSizes z;
};

#define PORTA_LINALG_CHECK(expr)                                      \
  do {                                                                \
    if (const porta_status st_ = (expr); st_ != PORTA_OK) return st_; \
  } while (0)
#define PORTA_SOLVER_CALL(routine, ...)                                                       \
  do {                                                                                        \
    if (const cusolverStatus_t st_ = R::routine(__VA_ARGS__); st_ != CUSOLVER_STATUS_SUCCESS) \
      return solver_error(R::kSolver, st_, #routine);                                         \
  } while (0)

// Batches go to one call of a batched routine where cuBLAS or cuSOLVER has one: LU, Cholesky, and
// Jacobi eigenvalues (syevjBatched, which takes up to 32 x 32). On the H200 (double, batches of 16
// to 4096) cuBLAS's batched LU and cuSOLVER's batched Cholesky beat one call per matrix at every
// size tried, up to 512 x 512 (LU: 3.6x at 512 x 512 and 16 matrices, 2000x at 32 x 32 and 4096).
// Larger matrices go one by one, untried: each single factorisation is blocked and fills more of
// the device. The batch goes in chunks, since the routines count it in an int and the pointer
// arrays grow with it. The batched routines write every matrix's info code themselves.
constexpr int kBatchedFactorMaxN = 512;
constexpr int kBatchedEighMaxN = 32;
constexpr std::int64_t kBatchedChunk = std::int64_t(1) << 18;

bool batched_takes(const LinalgCall& c) {
  if (c.batch < 2) return false;
  switch (c.op) {
    case PORTA_LINALG_SOLVE:
    case PORTA_LINALG_CHOLESKY:
      return c.n <= kBatchedFactorMaxN;
    case PORTA_LINALG_EIGH:
      return c.n <= kBatchedEighMaxN;
    default:
      return false;
  }
}

// syevj's parameters (its defaults: tolerance of the type's precision, 100 sweeps, ascending
// eigenvalues), destroyed on every way out.
struct SyevjParams {
  syevjInfo_t p = nullptr;
  ~SyevjParams() {
    if (p != nullptr) (void)cusolverDnDestroySyevjInfo(p);
  }
};

template <class T>
porta_status linalg_batched(const LinalgCall& c, T* a, T* b) {
  using R = Routines<T>;
  const int n = c.n;
  const std::int64_t chunk = std::min(c.batch, kBatchedChunk);
  const std::size_t pointers = StreamBuffer::part(sizeof(T*) * static_cast<std::size_t>(chunk));
  StreamBuffer buf(c.stream);
  if (c.op == PORTA_LINALG_SOLVE) {
    // cuBLAS's batched LU (cuSOLVER has none): its info codes are getrf's.
    DeviceBlas& ds = gpu::per_device<DeviceBlas, gpu::ApiCuda>(c.dev);
    std::lock_guard<std::mutex> lock(ds.mutex);
    PORTA_LINALG_CHECK(blas_on(ds, c.stream, "linalg"));
    const std::size_t pivots = StreamBuffer::part(sizeof(int) * static_cast<std::size_t>(n * chunk));
    PORTA_LINALG_CHECK(buf.allocate(2 * pointers + pivots, "pointers and pivots of the batched LU"));
    T** pa = buf.at<T*>(0);
    T** pb = buf.at<T*>(pointers);
    int* piv = buf.at<int>(2 * pointers);
    for (std::int64_t i0 = 0; i0 < c.batch; i0 += chunk) {
      const std::int64_t count = std::min(chunk, c.batch - i0);
      PORTA_LINALG_CHECK(
          launch_linalg("the pointer-array kernel", pointers_kernel<T>, count, c.stream, a + i0 * c.z.a, c.z.a, pa));
      cublasStatus_t st = R::getrfBatched(ds.handle, n, pa, n, piv, c.info + i0, static_cast<int>(count));
      if (st != CUBLAS_STATUS_SUCCESS) return blas_error("linalg", R::kBlas, st, "getrfBatched");
      if (c.k == 0) continue;
      PORTA_LINALG_CHECK(
          launch_linalg("the pointer-array kernel", pointers_kernel<T>, count, c.stream, b + i0 * c.z.b, c.z.b, pb));
      // The host int reports bad arguments only; a zero pivot gives inf/NaN here and its code in info.
      int bad = 0;
      st = R::getrsBatched(ds.handle, c.transpose, n, c.k, pa, n, piv, pb, n, &bad, static_cast<int>(count));
      if (st != CUBLAS_STATUS_SUCCESS) return blas_error("linalg", R::kBlas, st, "getrsBatched");
      if (bad != 0) return set_error(PORTA_ERR_BACKEND, "linalg: %sgetrsBatched: argument %d rejected", R::kBlas, -bad);
    }
    return PORTA_OK;
  }
  DeviceSolver& ds = gpu::per_device<DeviceSolver, gpu::ApiCuda>(c.dev);
  std::lock_guard<std::mutex> lock(ds.mutex);
  PORTA_LINALG_CHECK(solver_on(ds, c.stream));
  cusolverDnHandle_t h = ds.handle;
  if (c.op == PORTA_LINALG_CHOLESKY) {
    PORTA_LINALG_CHECK(buf.allocate(pointers, "pointer array of the batched Cholesky"));
    T** pa = buf.at<T*>(0);
    for (std::int64_t i0 = 0; i0 < c.batch; i0 += chunk) {
      const std::int64_t count = std::min(chunk, c.batch - i0);
      PORTA_LINALG_CHECK(
          launch_linalg("the pointer-array kernel", pointers_kernel<T>, count, c.stream, a + i0 * c.z.a, c.z.a, pa));
      PORTA_SOLVER_CALL(potrfBatched, h, c.fill, n, pa, n, c.info + i0, static_cast<int>(count));
    }
    return launch_linalg("the zero-triangle kernel", zero_triangle_kernel<T>, c.batch * c.z.a, c.stream,
                         static_cast<std::int64_t>(n), c.fill == CUBLAS_FILL_MODE_UPPER, a);
  }
  // EIGH: Jacobi's batched routine reads the matrices where they are.
  SyevjParams params;
  if (const cusolverStatus_t st = cusolverDnCreateSyevjInfo(&params.p); st != CUSOLVER_STATUS_SUCCESS)
    return solver_error("cusolverDnCreateSyevjInfo", st);
  int lwork = 0;
  PORTA_SOLVER_CALL(syevjBatched_bufferSize, h, CUSOLVER_EIG_MODE_VECTOR, c.fill, n, a, n, b, &lwork, params.p,
                    static_cast<int>(chunk));
  PORTA_LINALG_CHECK(buf.allocate(sizeof(T) * static_cast<std::size_t>(std::max(lwork, 1)), "cuSOLVER workspace"));
  for (std::int64_t i0 = 0; i0 < c.batch; i0 += chunk) {
    const std::int64_t count = std::min(chunk, c.batch - i0);
    PORTA_SOLVER_CALL(syevjBatched, h, CUSOLVER_EIG_MODE_VECTOR, c.fill, n, a + i0 * c.z.a, n, b + i0 * c.z.b,
                      buf.at<T>(0), lwork, c.info + i0, params.p, static_cast<int>(count));
  }
  return PORTA_OK;
}

// One matrix after another, each routine on the call's stream: LAPACK's routines, as the CPU runs
// them. info is zeroed first; the routines whose code means something to the caller (getrf, potrf,
// syevd, gesvd) write it, the others (getrs, geqrf, orgqr: bad arguments only, which the status
// reports too) write a scratch int.
template <class T>
porta_status linalg_typed(const LinalgCall& c, T* a, T* b, T* cu, T* d) {
  using R = Routines<T>;
  if (batched_takes(c)) return linalg_batched(c, a, b);
  const int m = c.m, n = c.n, k = c.k, p = std::min(m, n);
  const auto at = [](T* base, std::int64_t size, std::int64_t i) { return base + i * size; };
  DeviceSolver& ds = gpu::per_device<DeviceSolver, gpu::ApiCuda>(c.dev);
  std::lock_guard<std::mutex> lock(ds.mutex);
  PORTA_LINALG_CHECK(solver_on(ds, c.stream));
  cusolverDnHandle_t h = ds.handle;
  if (const cudaError_t e =
          cudaMemsetAsync(c.info, 0, sizeof(std::int32_t) * static_cast<std::size_t>(c.batch), c.stream);
      e != cudaSuccess)
    return runtime_error("cudaMemsetAsync of the info codes", e);

  // Scratch first (tau for QR, pivots for LU, the unread info), then the workspace that the
  // routines ask for, for the shape of every matrix of the batch.
  const std::size_t tau_bytes =
      c.op == PORTA_LINALG_QR ? StreamBuffer::part(sizeof(T) * static_cast<std::size_t>(p) * c.batch) : 0;
  const std::size_t piv_bytes = c.op == PORTA_LINALG_SOLVE ? StreamBuffer::part(sizeof(int) * n) : 0;
  StreamBuffer scratch(c.stream);
  PORTA_LINALG_CHECK(scratch.allocate(tau_bytes + piv_bytes + sizeof(int), "scratch of the factorisation"));
  T* tau = scratch.at<T>(0);
  int* piv = scratch.at<int>(tau_bytes);
  int* unread = scratch.at<int>(tau_bytes + piv_bytes);
  int lwork = 0;
  switch (c.op) {
    case PORTA_LINALG_SOLVE:
      PORTA_SOLVER_CALL(getrf_bufferSize, h, n, n, a, n, &lwork);
      break;
    case PORTA_LINALG_CHOLESKY:
      PORTA_SOLVER_CALL(potrf_bufferSize, h, c.fill, n, a, n, &lwork);
      break;
    case PORTA_LINALG_QR: {
      int lq = 0;
      PORTA_SOLVER_CALL(geqrf_bufferSize, h, m, n, a, m, &lwork);
      PORTA_SOLVER_CALL(orgqr_bufferSize, h, m, p, p, a, m, tau, &lq);
      lwork = std::max(lwork, lq);
      break;
    }
    case PORTA_LINALG_EIGH:
      PORTA_SOLVER_CALL(syevd_bufferSize, h, CUSOLVER_EIG_MODE_VECTOR, c.fill, n, a, n, b, &lwork);
      break;
    case PORTA_LINALG_SVD:
      PORTA_SOLVER_CALL(gesvd_bufferSize, h, m, n, &lwork);
      break;
    default:
      break;
  }
  StreamBuffer work(c.stream);
  PORTA_LINALG_CHECK(work.allocate(sizeof(T) * static_cast<std::size_t>(std::max(lwork, 1)), "cuSOLVER workspace"));
  T* w = work.at<T>(0);

  const auto& z = c.z;
  switch (c.op) {
    case PORTA_LINALG_SOLVE:
      // No branch on getrf's code (the host would wait for it): a zero pivot makes getrs divide by
      // zero, and the front end raises from info.
      for (std::int64_t i = 0; i < c.batch; ++i) {
        PORTA_SOLVER_CALL(getrf, h, n, n, at(a, z.a, i), n, w, piv, c.info + i);
        if (k > 0) PORTA_SOLVER_CALL(getrs, h, c.transpose, n, k, at(a, z.a, i), n, piv, at(b, z.b, i), n, unread);
      }
      return PORTA_OK;
    case PORTA_LINALG_CHOLESKY:
      for (std::int64_t i = 0; i < c.batch; ++i)
        PORTA_SOLVER_CALL(potrf, h, c.fill, n, at(a, z.a, i), n, w, lwork, c.info + i);
      return launch_linalg("the zero-triangle kernel", zero_triangle_kernel<T>, c.batch * z.a, c.stream,
                           static_cast<std::int64_t>(n), c.fill == CUBLAS_FILL_MODE_UPPER, a);
    case PORTA_LINALG_QR:
      // All factorisations, R out of all of them in one launch, then all Qs over the reflectors.
      for (std::int64_t i = 0; i < c.batch; ++i)
        PORTA_SOLVER_CALL(geqrf, h, m, n, at(a, z.a, i), m, at(tau, p, i), w, lwork, unread);
      PORTA_LINALG_CHECK(launch_linalg("the copy-R kernel", copy_r_kernel<T>, c.batch * z.b, c.stream,
                                       static_cast<std::int64_t>(m), static_cast<std::int64_t>(n),
                                       static_cast<std::int64_t>(p), static_cast<const T*>(a), b));
      for (std::int64_t i = 0; i < c.batch; ++i)
        PORTA_SOLVER_CALL(orgqr, h, m, p, p, at(a, z.a, i), m, at(tau, p, i), w, lwork, unread);
      return PORTA_OK;
    case PORTA_LINALG_EIGH:
      for (std::int64_t i = 0; i < c.batch; ++i)
        PORTA_SOLVER_CALL(syevd, h, CUSOLVER_EIG_MODE_VECTOR, c.fill, n, at(a, z.a, i), n, at(b, z.b, i), w, lwork,
                          c.info + i);
      return PORTA_OK;
    case PORTA_LINALG_SVD: {
      // gesvd's rwork (the unconverged superdiagonal) is optional for real types.
      const signed char jobu = c.full ? 'A' : 'S';
      for (std::int64_t i = 0; i < c.batch; ++i)
        PORTA_SOLVER_CALL(gesvd, h, jobu, 'A', m, n, at(a, z.a, i), m, at(b, z.b, i), at(cu, z.c, i), m, at(d, z.d, i),
                          n, w, lwork, nullptr, c.info + i);
      return PORTA_OK;
    }
    default:
      return PORTA_OK;
  }
}

#undef PORTA_SOLVER_CALL
#undef PORTA_LINALG_CHECK

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
      int fft = 0;
      if (cufftGetVersion(&fft) != CUFFT_SUCCESS) fft = CUFFT_VERSION;
      std::snprintf(text, sizeof text, "CUDA runtime %d.%d, %s, cuFFT %d, architectures: %s", CUDART_VERSION / 1000,
                    (CUDART_VERSION % 1000) / 10, blas, fft, PORTA_CUDA_ARCH_TEXT);
    });
    return text;
  }

  // float, double and their complex types go to cuBLAS (64-bit interface: every size fits) unless
  // porta's kernel was asked for; k == 0 (C = beta C) is porta's kernel, which defines it for every
  // leading dimension.
  static bool blas_takes(porta_dtype dt, std::int64_t, std::int64_t, std::int64_t k, std::int64_t, std::int64_t,
                         std::int64_t, std::uint32_t flags) noexcept {
    return (dt == PORTA_F32 || dt == PORTA_F64 || dt == PORTA_C64 || dt == PORTA_C128 || dt == PORTA_F16 ||
            dt == PORTA_BF16) &&
           (flags & PORTA_GEMM_OWN_KERNEL) == 0 && k > 0;
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
    if (const porta_status ps = blas_on(ds, reinterpret_cast<cudaStream_t>(s), "gemm"); ps != PORTA_OK) return ps;
    const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    // cuBLAS wants leading dimensions of at least 1 even for empty operands.
    if (lda < 1) lda = 1;
    if (ldb < 1) ldb = 1;
    // Single precision (float, complex64) computes in float, TF32 on request; the scalars are read
    // as the matrices' type, which every member of the porta_scalar union starts at.
    // 16-bit matrices accumulate in float (CUBLAS_COMPUTE_32F) with float scalars.
    const bool half = dt == PORTA_F16 || dt == PORTA_BF16;
    const bool single = dt == PORTA_F32 || dt == PORTA_C64 || half;
    const cudaDataType_t type = dt == PORTA_F32    ? CUDA_R_32F
                                : dt == PORTA_F64  ? CUDA_R_64F
                                : dt == PORTA_C64  ? CUDA_C_32F
                                : dt == PORTA_F16  ? CUDA_R_16F
                                : dt == PORTA_BF16 ? CUDA_R_16BF
                                                   : CUDA_C_64F;
    const cublasComputeType_t compute = !single                                    ? CUBLAS_COMPUTE_64F
                                        : (flags & PORTA_GEMM_ALLOW_TF32) && !half ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                                   : CUBLAS_COMPUTE_32F;
    const float half_alpha = !half ? 0.0f : dt == PORTA_F16 ? float(alpha.f16) : float(alpha.bf16);
    const float half_beta = !half ? 0.0f : dt == PORTA_F16 ? float(beta.f16) : float(beta.bf16);
    const void* al = half ? static_cast<const void*>(&half_alpha) : static_cast<const void*>(&alpha);
    const void* be = half ? static_cast<const void*>(&half_beta) : static_cast<const void*>(&beta);
    const cublasStatus_t st = cublasGemmEx_64(ds.handle, op_b, op_a, n, m, k, al, b, type, ldb, a, type, lda, be, c,
                                              type, ldc, compute, CUBLAS_GEMM_DEFAULT);
    if (st != CUBLAS_STATUS_SUCCESS) return blas_error("gemm", "cublasGemmEx", st);
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

  // cuFFT, out of place, on the call's stream; C2R works on a copy (cuFFT overwrites its input).
  static porta_status fft(int dev, porta_fft_kind kind, porta_dtype dt, std::int32_t rank, std::int64_t n0,
                          std::int64_t n1, std::int64_t n2, std::int64_t batch, const void* x, void* y, double scale,
                          porta_stream s) noexcept try {
    backend::check::FftSizes z;
    if (const porta_status st = backend::check::fft(kind, dt, rank, n0, n1, n2, batch, x, y, scale, &z); st != PORTA_OK)
      return st;
    const int k = backend::raw_enum(kind);
    const bool f32 = dt == PORTA_F32;
    const cufftType type = k == PORTA_FFT_R2C   ? (f32 ? CUFFT_R2C : CUFFT_D2Z)
                           : k == PORTA_FFT_C2R ? (f32 ? CUFFT_C2R : CUFFT_Z2D)
                                                : (f32 ? CUFFT_C2C : CUFFT_Z2Z);
    const cudaStream_t stream = reinterpret_cast<cudaStream_t>(s);
    DeviceFft& df = gpu::per_device<DeviceFft, Api>(dev);
    std::lock_guard<std::mutex> lock(df.mutex);
    const DeviceFft::Key key{static_cast<int>(type), rank, z.n[0], z.n[1], z.n[2], batch};
    auto it = df.plans.find(key);
    if (it == df.plans.end()) {
      if (df.plans.size() >= DeviceFft::kMaxPlans) {
        // Work enqueued with the old plans must finish before they go.
        const cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess) return runtime_error("cudaDeviceSynchronize", e, "fft");
        for (auto& p : df.plans) {
          (void)cufftDestroy(p.second.handle);
          if (p.second.kept != nullptr) (void)cudaFree(p.second.kept);
        }
        df.plans.clear();
      }
      DeviceFft::Plan plan;
      cufftResult r = cufftCreate(&plan.handle);
      if (r != CUFFT_SUCCESS) return fft_error("cufftCreate", r);
      long long dims[3] = {z.n[0], z.n[1], z.n[2]};
      r = cufftSetAutoAllocation(plan.handle, 0);
      if (r == CUFFT_SUCCESS)
        r = cufftMakePlanMany64(plan.handle, rank, dims, nullptr, 1, 0, nullptr, 1, 0, type, batch, &plan.work);
      if (r != CUFFT_SUCCESS) {
        (void)cufftDestroy(plan.handle);
        return fft_error("cufftMakePlanMany64", r);
      }
      it = df.plans.emplace(key, plan).first;
    }
    DeviceFft::Plan& plan = it->second;
    if (!plan.owned && plan.work > 0 && plan.work <= DeviceFft::kMaxKept) {
      plan.owned = true;  // tried once; without memory for it, this plan takes the pool's
      plan.owner = stream;
      if (cudaMalloc(&plan.kept, plan.work) != cudaSuccess) {
        (void)cudaGetLastError();
        plan.kept = nullptr;
      }
    }
    const bool use_kept = plan.kept != nullptr && plan.owner == stream;
    const std::size_t pooled_work = use_kept ? 0 : plan.work;
    const std::size_t elem = f32 ? sizeof(float) : sizeof(double);
    const std::size_t copy_bytes = k == PORTA_FFT_C2R ? static_cast<std::size_t>(z.x * batch) * elem : 0;
    StreamBuffer buf(stream, "fft");
    if (const porta_status st =
            buf.allocate(StreamBuffer::part(pooled_work) + StreamBuffer::part(copy_bytes), "workspace");
        st != PORTA_OK)
      return st;
    void* const area = use_kept ? plan.kept : plan.work > 0 ? buf.at<void>(0) : nullptr;
    cufftResult r = CUFFT_SUCCESS;
    if (!plan.set || plan.stream != stream) r = cufftSetStream(plan.handle, stream);
    if (r == CUFFT_SUCCESS && (!plan.set || plan.area != area)) r = cufftSetWorkArea(plan.handle, area);
    plan.set = r == CUFFT_SUCCESS;
    plan.stream = stream, plan.area = area;
    if (r != CUFFT_SUCCESS) return fft_error("cufftSetStream", r);
    void* in = const_cast<void*>(x);  // cuFFT's signatures are not const; C2C and R2C leave it intact
    if (copy_bytes > 0) {
      in = buf.at<void>(StreamBuffer::part(pooled_work));
      const cudaError_t e = cudaMemcpyAsync(in, x, copy_bytes, cudaMemcpyDeviceToDevice, stream);
      if (e != cudaSuccess) return runtime_error("cudaMemcpyAsync", e, "fft");
      // A 1-D C2R reads the zero frequency (and n / 2) as real, as NumPy and the CPU do; cuFFT may not.
      if (rank == 1) {
        const std::int64_t h = z.n[0] / 2 + 1;
        const bool even = z.n[0] % 2 == 0;
        const porta_status st = f32 ? launch_small("fft", "the real-bins kernel", real_bins_kernel<float>, batch,
                                                   stream, h, even, static_cast<float*>(in))
                                    : launch_small("fft", "the real-bins kernel", real_bins_kernel<double>, batch,
                                                   stream, h, even, static_cast<double*>(in));
        if (st != PORTA_OK) return st;
      }
    }
    switch (type) {
      case CUFFT_C2C:
        r = cufftExecC2C(plan.handle, static_cast<cufftComplex*>(in), static_cast<cufftComplex*>(y),
                         k == PORTA_FFT_INVERSE ? CUFFT_INVERSE : CUFFT_FORWARD);
        break;
      case CUFFT_Z2Z:
        r = cufftExecZ2Z(plan.handle, static_cast<cufftDoubleComplex*>(in), static_cast<cufftDoubleComplex*>(y),
                         k == PORTA_FFT_INVERSE ? CUFFT_INVERSE : CUFFT_FORWARD);
        break;
      case CUFFT_R2C:
        r = cufftExecR2C(plan.handle, static_cast<cufftReal*>(in), static_cast<cufftComplex*>(y));
        break;
      case CUFFT_D2Z:
        r = cufftExecD2Z(plan.handle, static_cast<cufftDoubleReal*>(in), static_cast<cufftDoubleComplex*>(y));
        break;
      case CUFFT_C2R:
        r = cufftExecC2R(plan.handle, static_cast<cufftComplex*>(in), static_cast<cufftReal*>(y));
        break;
      default:
        r = cufftExecZ2D(plan.handle, static_cast<cufftDoubleComplex*>(in), static_cast<cufftDoubleReal*>(y));
    }
    if (r != CUFFT_SUCCESS) return fft_error("cufftExec", r);
    if (scale == 1.0) return PORTA_OK;
    const std::int64_t total = z.y * batch;
    if (f32)
      return launch_small("fft", "the scale kernel", scale_kernel<float>, total, stream, static_cast<float>(scale),
                          static_cast<float*>(y));
    return launch_small("fft", "the scale kernel", scale_kernel<double>, total, stream, scale, static_cast<double*>(y));
  } catch (const std::bad_alloc&) {
    return set_error(PORTA_ERR_OOM, "fft: out of host memory");
  } catch (...) {
    return set_error(PORTA_ERR_BACKEND, "fft: unexpected C++ exception around cuFFT");
  }

  // cuSOLVER's dense routines (and cuBLAS's batched LU), on the call's stream, with workspaces from
  // the device's stream-ordered pool.
  static porta_status linalg(int dev, porta_linalg_op op, porta_dtype dt, std::int64_t batch, std::int64_t m,
                             std::int64_t n, std::int64_t k, void* a, void* b, void* c, void* d, std::int32_t* info,
                             std::uint32_t flags, porta_stream s) noexcept try {
    // The entry checked the arguments already; this measures the operands.
    LinalgCall call{};
    const porta_status st = backend::check::linalg(op, dt, batch, m, n, k, a, b, c, d, info, flags, &call.z);
    if (st != PORTA_OK) return st;
    call.dev = dev;
    call.stream = reinterpret_cast<cudaStream_t>(s);
    call.op = static_cast<porta_linalg_op>(backend::raw_enum(op));
    call.batch = batch;
    call.m = static_cast<int>(m);
    call.n = static_cast<int>(n);
    call.k = static_cast<int>(k);
    call.full = (flags & PORTA_LINALG_SVD_FULL) != 0u;
    call.fill = (flags & PORTA_LINALG_UPPER) != 0u ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    call.transpose = (flags & PORTA_LINALG_TRANSPOSE) != 0u ? CUBLAS_OP_T : CUBLAS_OP_N;
    call.info = info;
    if (dt == PORTA_F32)
      return linalg_typed(call, static_cast<float*>(a), static_cast<float*>(b), static_cast<float*>(c),
                          static_cast<float*>(d));
    return linalg_typed(call, static_cast<double*>(a), static_cast<double*>(b), static_cast<double*>(c),
                        static_cast<double*>(d));
  } catch (const std::bad_alloc&) {
    return set_error(PORTA_ERR_OOM, "linalg: out of host memory");
  } catch (...) {
    return set_error(PORTA_ERR_BACKEND, "linalg: unexpected C++ exception around cuSOLVER");
  }
};

}  // namespace
}  // namespace porta::detail::cuda

extern "C" __attribute__((visibility("default"))) const porta_backend_v1* porta_backend_entry_v1(void) {
  return porta::detail::gpu::Plugin<porta::detail::cuda::Cuda>::table();
}
