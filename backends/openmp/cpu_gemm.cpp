// SPDX-License-Identifier: Apache-2.0
// gemm of the CPU backend: the system BLAS for float and double when the build found one, porta's
// own cache-blocked kernel (cpu_gemm_kernel.inc) otherwise, for integers, and on request
// (PORTA_GEMM_OWN_KERNEL).
//
// BLAS is column-major; porta is row-major. A row-major matrix is the column-major view of its
// transpose, so C = op(A) op(B) is computed as the column-major C^T = op(B)^T op(A)^T: the same
// call with A and B (and their transposes and leading dimensions) swapped, and no copies.
//
// Threads: Debian's libopenblas0 is the pthreads flavour (openblas_get_parallel() == 1): it runs
// its own thread pool, separate from libgomp's. Both pools would compete for the cores if both were
// busy at once, which happens only when gemm is called from inside an OpenMP parallel region
// (each caller would start OpenBLAS's full pool). So:
//   - inside a parallel region, gemm runs porta's own kernel on the calling thread;
//   - otherwise OpenBLAS gets as many threads as an OpenMP region of porta would
//     (omp_get_max_threads(), i.e. OMP_NUM_THREADS), unless the user set OPENBLAS_NUM_THREADS.
// OpenBLAS's and libgomp's idle workers spin for a while before they sleep, so alternating gemm
// with OpenMP maps costs a little, but both run in turn, never at once.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cpu_common.hpp"
#include "cpu_kernels.hpp"

#if defined(PORTA_HAVE_BLAS)
extern "C" {
// Fortran BLAS with 32-bit integers (LP64), the ABI of Debian's libblas3/libopenblas0. The two
// trailing arguments are the hidden lengths of the character arguments.
void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c, const int* ldc,
            std::size_t transa_len, std::size_t transb_len);
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc, std::size_t transa_len, std::size_t transb_len);
}
#endif

namespace porta::detail::cpu {

// One build of the own kernel per instruction set (cpu_gemm_isa_*.cpp).
#define PORTA_DECLARE_GEMM_OWN(isa)                                                                           \
  namespace isa {                                                                                             \
  porta_status gemm_own(porta_dtype dt, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,     \
                        porta_scalar alpha, const void* a, std::int64_t lda, const void* b, std::int64_t ldb, \
                        porta_scalar beta, void* c, std::int64_t ldc, int threads);                           \
  }
PORTA_DECLARE_GEMM_OWN(base)
#if defined(PORTA_GEMM_X86_DISPATCH)
PORTA_DECLARE_GEMM_OWN(avx2)
PORTA_DECLARE_GEMM_OWN(avx512)
#endif
#undef PORTA_DECLARE_GEMM_OWN

namespace {

enum class Isa { base, avx2, avx512 };

// The best build this CPU runs; PORTA_CPU_GEMM_ISA=base|avx2|avx512 caps it (for tests and
// for comparing kernels on one machine).
Isa detect_isa() {
  Isa best = Isa::base;
#if defined(PORTA_GEMM_X86_DISPATCH)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) best = Isa::avx2;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    best = Isa::avx512;
#endif
  if (const char* cap = std::getenv("PORTA_CPU_GEMM_ISA")) {
    if (std::strcmp(cap, "base") == 0) best = Isa::base;
    if (std::strcmp(cap, "avx2") == 0 && best == Isa::avx512) best = Isa::avx2;
  }
  return best;
}

Isa isa() {
  static const Isa value = detect_isa();
  return value;
}

porta_status gemm_own(porta_dtype dt, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,
                      porta_scalar alpha, const void* a, std::int64_t lda, const void* b, std::int64_t ldb,
                      porta_scalar beta, void* c, std::int64_t ldc) {
  // A thread is worth it for ~16 MFLOP (0.1-1 ms on one core): below that, waking the team and
  // packing the same A twice cost more than the thread brings.
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const int mt = max_threads();
  const int threads = static_cast<int>(std::max(1.0, std::min(static_cast<double>(mt), flops / 16e6)));
  switch (isa()) {
#if defined(PORTA_GEMM_X86_DISPATCH)
    case Isa::avx512:
      return avx512::gemm_own(dt, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, threads);
    case Isa::avx2:
      return avx2::gemm_own(dt, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, threads);
#endif
    default:
      return base::gemm_own(dt, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, threads);
  }
}

#if defined(PORTA_HAVE_BLAS)
using SetThreadsFn = void (*)(int);
using GetIntFn = int (*)();
using GetConfigFn = char* (*)();

template <class Fn>
Fn blas_symbol(const char* name) {
  return reinterpret_cast<Fn>(::dlsym(RTLD_DEFAULT, name));
}

// Keeps OpenBLAS's pthread pool at the size porta's OpenMP regions use (see the top of the file).
void match_blas_threads() {
#if !defined(_OPENMP)
  return;  // porta itself is single-threaded then; OpenBLAS keeps its own default
#endif
  static const SetThreadsFn set = [] {
    if (std::getenv("OPENBLAS_NUM_THREADS") != nullptr || std::getenv("GOTO_NUM_THREADS") != nullptr)
      return SetThreadsFn{nullptr};
    const GetIntFn parallel = blas_symbol<GetIntFn>("openblas_get_parallel");
    if (parallel != nullptr && parallel() == 2) return SetThreadsFn{nullptr};  // OpenMP flavour: follows omp itself
    return blas_symbol<SetThreadsFn>("openblas_set_num_threads");
  }();
  static std::atomic<int> current{-1};
  if (set == nullptr) return;
  const int want = max_threads();
  if (current.exchange(want) != want) set(want);
}

bool fits_int(std::int64_t v) {
  return v >= 0 && v <= INT_MAX;
}

template <class T>
void blas_gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a, std::int64_t lda,
               const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  const char opb = tb ? 'T' : 'N', opa = ta ? 'T' : 'N';
  const int M = static_cast<int>(n), N = static_cast<int>(m), K = static_cast<int>(k);
  const int LDB = static_cast<int>(ldb), LDA = static_cast<int>(lda), LDC = static_cast<int>(ldc);
  match_blas_threads();
  if constexpr (std::is_same_v<T, float>) {
    sgemm_(&opb, &opa, &M, &N, &K, &alpha, b, &LDB, a, &LDA, &beta, c, &LDC, 1, 1);
  } else {
    dgemm_(&opb, &opa, &M, &N, &K, &alpha, b, &LDB, a, &LDA, &beta, c, &LDC, 1, 1);
  }
}
#endif

const char* isa_name(Isa i) {
  switch (i) {
    case Isa::avx512:
      return "avx512";
    case Isa::avx2:
      return "avx2+fma";
    default:
      return "baseline";
  }
}

// Rows x cols matrix with row stride ld: the last element must be addressable.
bool extent_ok(std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  if (rows == 0 || cols == 0) return true;
  std::int64_t last = 0;
  return !__builtin_mul_overflow(rows - 1, ld, &last) && !__builtin_add_overflow(last, cols, &last);
}

}  // namespace

porta_status gemm(int dev, porta_dtype dt, int trans_a, int trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                  porta_scalar alpha, const void* a, std::int64_t lda, const void* b, std::int64_t ldb,
                  porta_scalar beta, void* c, std::int64_t ldc, std::uint32_t flags, porta_stream) noexcept {
  constexpr const char* fn = "gemm";
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  if (!valid_dtype(dt)) return set_error(PORTA_ERR_INVALID, "%s: unknown dtype %d", fn, raw_enum(dt));
  const bool ta = trans_a != 0, tb = trans_b != 0;
  const std::int64_t a_rows = ta ? k : m, a_cols = ta ? m : k;
  const std::int64_t b_rows = tb ? n : k, b_cols = tb ? k : n;
  if (m < 0 || n < 0 || k < 0)
    return set_error(PORTA_ERR_INVALID, "%s: negative size (m=%lld, n=%lld, k=%lld)", fn, static_cast<long long>(m),
                     static_cast<long long>(n), static_cast<long long>(k));
  if (lda < a_cols || ldb < b_cols || ldc < n)
    return set_error(PORTA_ERR_INVALID,
                     "%s: leading dimension too small (lda=%lld for %lld columns, ldb=%lld for %lld, "
                     "ldc=%lld for %lld)",
                     fn, static_cast<long long>(lda), static_cast<long long>(a_cols), static_cast<long long>(ldb),
                     static_cast<long long>(b_cols), static_cast<long long>(ldc), static_cast<long long>(n));
  if (!extent_ok(a_rows, a_cols, lda) || !extent_ok(b_rows, b_cols, ldb) || !extent_ok(m, n, ldc))
    return set_error(PORTA_ERR_INVALID, "%s: matrix extent overflows 64-bit indexing", fn);
  if (m == 0 || n == 0) return PORTA_OK;
  if (c == nullptr || (k > 0 && (a == nullptr || b == nullptr)))
    return set_error(PORTA_ERR_INVALID, "%s: NULL matrix", fn);
  PORTA_CPU_TRY
#if defined(PORTA_HAVE_BLAS)
  // Fortran BLAS takes 32-bit sizes and rejects a zero leading dimension; inside a caller's
  // parallel region its own thread pool would oversubscribe the cores.
  const bool use_blas = (dt == PORTA_F32 || dt == PORTA_F64) && (flags & PORTA_GEMM_OWN_KERNEL) == 0 && k > 0 &&
                        fits_int(m) && fits_int(n) && fits_int(k) && fits_int(lda) && fits_int(ldb) && fits_int(ldc) &&
                        !in_parallel_region();
  if (use_blas) {
    if (dt == PORTA_F32) {
      blas_gemm<float>(ta, tb, m, n, k, alpha.f32, static_cast<const float*>(a), lda, static_cast<const float*>(b), ldb,
                       beta.f32, static_cast<float*>(c), ldc);
    } else {
      blas_gemm<double>(ta, tb, m, n, k, alpha.f64, static_cast<const double*>(a), lda, static_cast<const double*>(b),
                        ldb, beta.f64, static_cast<double*>(c), ldc);
    }
    return PORTA_OK;
  }
#else
      (void)
  flags;
#endif
  return gemm_own(dt, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  PORTA_CPU_CATCH(fn)
}

const char* gemm_kernel_isa() noexcept {
  return isa_name(isa());
}

const char* blas_description() noexcept {
  static const std::string text = []() -> std::string {
#if defined(PORTA_HAVE_BLAS)
    std::string s;
    if (const GetConfigFn config = blas_symbol<GetConfigFn>("openblas_get_config")) {
      s = config();
      const GetIntFn parallel = blas_symbol<GetIntFn>("openblas_get_parallel");
      const int p = parallel != nullptr ? parallel() : -1;
      s += p == 0 ? " (sequential)" : p == 1 ? " (pthreads)" : p == 2 ? " (OpenMP)" : "";
    } else {
      s = "Fortran BLAS";
    }
    Dl_info info;
    if (::dladdr(reinterpret_cast<void*>(&sgemm_), &info) != 0 && info.dli_fname != nullptr) {
      s += " in ";
      s += info.dli_fname;
    }
    return s;
#else
    return "none (porta's own kernel)";
#endif
  }();
  return text.c_str();
}

}  // namespace porta::detail::cpu
