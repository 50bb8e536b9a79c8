// SPDX-License-Identifier: Apache-2.0
// gemm of the CPU backend: porta's own matrix-vector kernel for n == 1 or m == 1
// (cpu_gemv_kernel.inc), the system BLAS for other float and double shapes when the build found
// one and it runs kernels as fast as this CPU allows (cpu_blas.cpp), porta's own cache-blocked
// kernel (cpu_gemm_kernel.inc) otherwise, for integers, and on request (PORTA_GEMM_OWN_KERNEL: every
// shape, in the fixed order that gives the GPU kernel's bits).
//
// BLAS is column-major; porta is row-major. A row-major matrix is the column-major view of its
// transpose, so C = op(A) op(B) is computed as the column-major C^T = op(B)^T op(A)^T: the same
// call with A and B (and their transposes and leading dimensions) swapped, and no copies.
//
// Threads: every thread that works for the CPU backend is one of libgomp's, so a solver loop that
// alternates gemm with maps and reductions never has two pools competing for the cores.
//   - An OpenMP OpenBLAS (openblas_get_parallel() == 2; CMake prefers Debian's
//     libopenblas0-openmp) runs its threads on the same OpenMP runtime: it is called as is.
//   - A pthreads OpenBLAS (Debian's default libopenblas0-pthread) keeps a pool of its own whose
//     workers busy-wait for 2^OPENBLAS_THREAD_TIMEOUT (default 2^28) cycles after every call, about
//     0.1 s: long enough to take the cores from every OpenMP region of a solver iteration. It is set
//     to one thread, and porta's OpenMP team calls it on disjoint blocks of C instead.
//   - A sequential OpenBLAS is called when one thread is what the call is worth; larger calls take
//     porta's own kernel (a sequential build need not be safe to call from several threads).
//   - Another BLAS (no openblas_get_parallel) is called as is, with whatever threading it has.
//   - Inside a caller's parallel region, gemm runs porta's own kernel on the calling thread.
#include <algorithm>
#include <climits>
#include <utility>

#include "cpu_blas.hpp"
#include "cpu_common.hpp"
#include "cpu_isa.hpp"
#include "cpu_kernels.hpp"
#include "cpu_memory.hpp"

namespace porta::detail::cpu {

// One build of the own kernels per instruction set (cpu_gemm_isa_*.cpp).
#define PORTA_DECLARE_GEMM_OWN(isa)                                                                                   \
  namespace isa {                                                                                                     \
  porta_status gemm_own(porta_dtype dt, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,             \
                        porta_scalar alpha, const void* a, std::int64_t lda, const void* b, std::int64_t ldb,         \
                        porta_scalar beta, void* c, std::int64_t ldc, int threads);                                   \
  porta_status gemv_own(porta_dtype dt, bool cols, std::int64_t m, std::int64_t k, porta_scalar alpha, const void* a, \
                        std::int64_t lda, const void* x, std::int64_t incx, porta_scalar beta, void* y,               \
                        std::int64_t incy, int threads);                                                              \
  }
PORTA_DECLARE_GEMM_OWN(base)
#if defined(PORTA_GEMM_X86_DISPATCH)
PORTA_DECLARE_GEMM_OWN(avx2)
PORTA_DECLARE_GEMM_OWN(avx512)
#endif
#undef PORTA_DECLARE_GEMM_OWN

namespace {

IsaLevel isa() {
  return own_kernel_level();
}

// The build of `fn` (gemm_own or gemv_own) for this CPU, called with the arguments that follow.
#if defined(PORTA_GEMM_X86_DISPATCH)
#define PORTA_CALL_ISA(fn, ...)                        \
  (isa() == IsaLevel::avx512 ? avx512::fn(__VA_ARGS__) \
   : isa() == IsaLevel::avx2 ? avx2::fn(__VA_ARGS__)   \
                             : base::fn(__VA_ARGS__))
#else
#define PORTA_CALL_ISA(fn, ...) base::fn(__VA_ARGS__)
#endif

// Threads for a gemm of m x n x k: one is worth it for ~16 MFLOP (0.1-1 ms on one core); below
// that, waking the team and packing the same panels twice cost more than the thread brings.
int gemm_threads(std::int64_t m, std::int64_t n, std::int64_t k) {
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  return static_cast<int>(std::max(1.0, std::min(static_cast<double>(max_threads()), flops / 16e6)));
}

porta_status gemm_own(porta_dtype dt, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,
                      porta_scalar alpha, const void* a, std::int64_t lda, const void* b, std::int64_t ldb,
                      porta_scalar beta, void* c, std::int64_t ldc) {
  const int threads = gemm_threads(m, n, k);
  return PORTA_CALL_ISA(gemm_own, dt, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, threads);
}

// gemv is memory-bound: a thread is worth it for 256 KiB of traffic, the grain of the maps
// (kGrainCheap elements of a three-array float map). Counting bytes, not rows, keeps a few long
// rows parallel and many short ones serial.
constexpr double kGemvGrainBytes = 256.0 * 1024;

// The matrix-vector shapes of gemm: n == 1 (C is a column: y = op(A) x) or m == 1 (C is a row:
// y^T = x^T op(B), i.e. y = op(B)^T x). Each becomes y = M x with M read along its rows ("dot")
// or down its columns ("cols") as cpu_gemv_kernel.inc describes.
porta_status gemv_dispatch(porta_dtype dt, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,
                           porta_scalar alpha, const void* a, std::int64_t lda, const void* b, std::int64_t ldb,
                           porta_scalar beta, void* c, std::int64_t ldc) {
  const std::size_t es = dtype_size(dt);
  bool cols;
  std::int64_t rows, ld, incx, incy;
  const void *mat, *x;
  if (n == 1) {  // C[i] = sum_p op(A)[i][p] op(B)[p][0]
    rows = m, mat = a, ld = lda, cols = ta;
    x = b, incx = tb ? 1 : ldb;
    incy = ldc;
  } else {  // m == 1: C[j] = sum_p op(A)[0][p] op(B)[p][j]
    rows = n, mat = b, ld = ldb, cols = !tb;
    x = a, incx = ta ? lda : 1;
    incy = 1;
  }
  // One output read down a column of unit stride is a contiguous dot product.
  if (cols && rows == 1 && ld == 1) cols = false, ld = k;
  const double bytes = static_cast<double>(es) * (static_cast<double>(rows) * static_cast<double>(k) +
                                                  static_cast<double>(k) + 2.0 * static_cast<double>(rows));
  const int threads =
      static_cast<int>(std::max(1.0, std::min(static_cast<double>(max_threads()), bytes / kGemvGrainBytes)));
  return PORTA_CALL_ISA(gemv_own, dt, cols, rows, k, alpha, mat, ld, x, incx, beta, c, incy, threads);
}

#if defined(PORTA_HAVE_BLAS)
bool fits_int(std::int64_t v) {
  return v >= 0 && v <= INT_MAX;
}

template <class T>
void blas_call(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a, std::int64_t lda,
               const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  const char opb = tb ? 'T' : 'N', opa = ta ? 'T' : 'N';
  const int M = static_cast<int>(n), N = static_cast<int>(m), K = static_cast<int>(k);
  const int LDB = static_cast<int>(ldb), LDA = static_cast<int>(lda), LDC = static_cast<int>(ldc);
  if constexpr (std::is_same_v<T, float>) {
    sgemm_(&opb, &opa, &M, &N, &K, &alpha, b, &LDB, a, &LDA, &beta, c, &LDC, 1, 1);
  } else if constexpr (std::is_same_v<T, double>) {
    dgemm_(&opb, &opa, &M, &N, &K, &alpha, b, &LDB, a, &LDA, &beta, c, &LDC, 1, 1);
  } else {
    using R = real_type_t<T>;
    const auto* pa = reinterpret_cast<const R*>(a);
    const auto* pb = reinterpret_cast<const R*>(b);
    auto* pc = reinterpret_cast<R*>(c);
    const auto* al = reinterpret_cast<const R*>(&alpha);
    const auto* be = reinterpret_cast<const R*>(&beta);
    if constexpr (std::is_same_v<R, float>) {
      cgemm_(&opb, &opa, &M, &N, &K, al, pb, &LDB, pa, &LDA, be, pc, &LDC, 1, 1);
    } else {
      zgemm_(&opb, &opa, &M, &N, &K, al, pb, &LDB, pa, &LDA, be, pc, &LDC, 1, 1);
    }
  }
}

// A pr x pc grid of blocks of C for `threads` threads: as many threads as blocks of at least 16
// rows and columns allow, then the squarest blocks (each thread packs its own panels of A and B,
// whose size is proportional to the block's rows plus columns).
void block_grid(std::int64_t m, std::int64_t n, int threads, int& pr, int& pc) {
  const std::int64_t mu = (m + 15) / 16, nu = (n + 15) / 16;
  pr = pc = 1;
  double best_edge = static_cast<double>(m + n);
  for (int r = 1; r <= threads && r <= mu; ++r) {
    const int q = static_cast<int>(std::min<std::int64_t>(threads / r, nu));
    const double edge = static_cast<double>(m) / r + static_cast<double>(n) / q;
    if (r * q > pr * pc || (r * q == pr * pc && edge < best_edge)) pr = r, pc = q, best_edge = edge;
  }
}

// false: porta's own kernel should take this call instead.
template <class T>
bool blas_gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a, std::int64_t lda,
               const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  const BlasRuntime& rt = blas_runtime();
#if defined(_OPENMP)
  const int threads = gemm_threads(m, n, k);
  if (rt.kind == BlasThreads::sequential && threads > 1) return false;
  if (rt.kind == BlasThreads::pthreads) {
    // Concurrent callers all ask for 1, so this check-then-set cannot leave another value behind.
    if (rt.get() != 1) rt.set(1);
    int pr = 1, pc = 1;
    if (threads > 1) block_grid(m, n, threads, pr, pc);
    const std::int64_t mu = (m + 15) / 16, nu = (n + 15) / 16;
#pragma omp parallel for schedule(static) num_threads(pr* pc) if (pr * pc > 1)
    for (int t = 0; t < pr * pc; ++t) {
      const int r = t / pc, q = t % pc;
      const std::int64_t i0 = std::min(m, mu * r / pr * 16), i1 = std::min(m, mu * (r + 1) / pr * 16);
      const std::int64_t j0 = std::min(n, nu * q / pc * 16), j1 = std::min(n, nu * (q + 1) / pc * 16);
      if (i1 > i0 && j1 > j0)
        blas_call<T>(ta, tb, i1 - i0, j1 - j0, k, alpha, ta ? a + i0 : a + i0 * lda, lda, tb ? b + j0 * ldb : b + j0,
                     ldb, beta, c + i0 * ldc + j0, ldc);
    }
    return true;
  }
#endif
  (void)rt;
  blas_call<T>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  return true;
}
#endif

// rows x cols values of H (leading dimension ldx) widened to float (exact), or float rounded to H,
// into y (leading dimension ldy); on the team for large blocks.
template <class To, class From>
void convert_block(const From* x, std::int64_t ldx, To* y, std::int64_t ldy, std::int64_t rows, std::int64_t cols) {
  if (cols == ldx && cols == ldy) cols *= std::exchange(rows, std::int64_t(1));  // one contiguous span
  const std::int64_t chunk = std::max<std::int64_t>(1, (std::int64_t(1) << 14) / std::max<std::int64_t>(cols, 1));
  const std::int64_t pieces = rows == 1 ? (cols + (std::int64_t(1) << 14) - 1) >> 14 : (rows + chunk - 1) / chunk;
#if defined(_OPENMP)
#pragma omp parallel for if (rows * cols >= (std::int64_t(1) << 18) && !in_parallel_region()) schedule(static)
#endif
  for (std::int64_t p = 0; p < pieces; ++p) {
    if (rows == 1) {
      const std::int64_t lo = p << 14, hi = std::min(cols, lo + (std::int64_t(1) << 14));
      for (std::int64_t j = lo; j < hi; ++j) y[j] = ConvertOp<To>{}(x[j]);
    } else {
      for (std::int64_t i = p * chunk; i < std::min(rows, (p + 1) * chunk); ++i)
        for (std::int64_t j = 0; j < cols; ++j) y[i * ldy + j] = ConvertOp<To>{}(x[i * ldx + j]);
    }
  }
}

// 16-bit GEMM: the operands widened to float, the float gemm of the same flags (the vendor's or
// porta's kernel), C's block rounded once; the GPU plugins' gemm_widened computes the same steps.
// With beta == 0 C is not read (gemm's rule), so it is not widened either.
porta_status gemm_widened(int dev, porta_dtype dt, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,
                          porta_scalar alpha, const void* a, std::int64_t lda, const void* b, std::int64_t ldb,
                          porta_scalar beta, void* c, std::int64_t ldc, std::uint32_t flags) {
  porta_status status = PORTA_OK;
  with_dtype(dt, [&](auto tag) {
    using H = decltype(tag);
    if constexpr (is_half_v<H>) {
      // op(A) is m x k: A stored as (ta ? k x m : m x k) rows of lda
      const std::int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
      // From the pool, as the device's arrays: fresh pages for 3 operands at every call cost as
      // long as the gemm itself on a 16-core VM (bench/README.md). Every element the gemm reads is
      // written first.
      PoolBuffer pa, pb, pc;
      const auto bytes = [](std::int64_t count) {
        return static_cast<std::size_t>(std::max<std::int64_t>(count, 1)) * 4;
      };
      if ((status = pa.allocate(bytes(ar * ac))) != PORTA_OK || (status = pb.allocate(bytes(br * bc))) != PORTA_OK ||
          (status = pc.allocate(bytes(m * n))) != PORTA_OK)
        return;
      float *fa = pa.as<float>(), *fb = pb.as<float>(), *fc = pc.as<float>();
      convert_block(static_cast<const H*>(a), lda, fa, ac, ar, ac);
      convert_block(static_cast<const H*>(b), ldb, fb, bc, br, bc);
      H* ch = static_cast<H*>(c);
      const float fbeta = float(scalar_value<H>(beta));
      if (fbeta != 0.0f) convert_block(static_cast<const H*>(ch), ldc, fc, n, m, n);
      porta_scalar fal{}, fbe{};
      fal.f32 = float(scalar_value<H>(alpha));
      fbe.f32 = fbeta;
      status = gemm(dev, PORTA_F32, ta, tb, m, n, k, fal, fa, std::max<std::int64_t>(ac, 1), fb,
                    std::max<std::int64_t>(bc, 1), fbe, fc, std::max<std::int64_t>(n, 1), flags, nullptr);
      if (status == PORTA_OK) convert_block(static_cast<const float*>(fc), n, ch, ldc, m, n);
    }
  });
  return status;
}

}  // namespace

porta_status gemm(int dev, porta_dtype dt, int trans_a, int trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                  porta_scalar alpha, const void* a, std::int64_t lda, const void* b, std::int64_t ldb,
                  porta_scalar beta, void* c, std::int64_t ldc, std::uint32_t flags, porta_stream) noexcept {
  constexpr const char* fn = "gemm";
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  if (porta_status st = check::gemm(dt, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc); st != PORTA_OK) return st;
  if (m == 0 || n == 0) return PORTA_OK;
  const bool ta = trans_a != 0, tb = trans_b != 0;
  PORTA_CPU_TRY
  if (backend::dtype_is_half(dt))
    return gemm_widened(dev, dt, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, flags);
  // Matrix-vector shapes are memory-bound: porta's kernel streams the matrix as fast as BLAS does,
  // on porta's own threads, with no BLAS call to hand over to another pool. Asked for porta's own
  // kernel, they take it too: its fixed order is the same for every shape and device.
  const bool own = (flags & PORTA_GEMM_OWN_KERNEL) != 0;
  const bool complex = backend::dtype_is_complex(dt);
  if (k > 0 && (m == 1 || n == 1) && !own && !complex)
    return gemv_dispatch(dt, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#if defined(PORTA_HAVE_BLAS)
  // Fortran BLAS takes 32-bit sizes and rejects a zero leading dimension; inside a caller's
  // parallel region its threads would oversubscribe the cores.
  const bool use_blas = (dt == PORTA_F32 || dt == PORTA_F64 || complex) && gemm_choice().path == GemmPath::blas &&
                        !own && k > 0 && fits_int(m) && fits_int(n) && fits_int(k) && fits_int(lda) && fits_int(ldb) &&
                        fits_int(ldc) && !in_parallel_region();
  if (use_blas) {
    bool done = false;
    with_dtype(dt, [&](auto t) {
      using T = decltype(t);
      if constexpr (std::is_floating_point_v<T> || is_complex_v<T>)
        done = blas_gemm<T>(ta, tb, m, n, k, scalar_value<T>(alpha), static_cast<const T*>(a), lda,
                            static_cast<const T*>(b), ldb, scalar_value<T>(beta), static_cast<T*>(c), ldc);
    });
    if (done) return PORTA_OK;
  }
#endif
  return gemm_own(dt, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  PORTA_CPU_CATCH(fn)
}

const char* gemm_kernel_isa() noexcept {
  return isa_level_name(isa());
}

}  // namespace porta::detail::cpu
