// SPDX-License-Identifier: Apache-2.0
// Dense linear algebra on the CPU: the LAPACK that libporta was linked with (OpenBLAS carries one),
// the routines NumPy calls for the same functions (getrf/getrs, potrf, geqrf/orgqr, syevd, gesdd).
// Without LAPACK the entry answers PORTA_ERR_UNAVAILABLE, naming the build option.
//
// A batch of small matrices runs one matrix per thread, each LAPACK call on the calling thread
// (OpenBLAS's OpenMP build runs single-threaded inside a parallel region); a batch of large ones
// runs one matrix after another, each on LAPACK's own threads.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include "backends/cpu/cpu_blas.hpp"
#include "backends/cpu/cpu_common.hpp"
#include "backends/cpu/cpu_kernels.hpp"

#if defined(PORTA_HAVE_LAPACK)
extern "C" {
// Fortran LAPACK with 32-bit integers (LP64); the trailing size_t arguments are the hidden lengths
// of the character arguments.
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda, const int* ipiv,
             float* b, const int* ldb, int* info, std::size_t);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info, std::size_t);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, std::size_t);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, std::size_t);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work, const int* lwork,
             int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork,
             int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau, float* work,
             const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work,
             const int* lwork, int* info);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w, float* work,
             const int* lwork, int* iwork, const int* liwork, int* info, std::size_t, std::size_t);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info, std::size_t, std::size_t);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s, float* u, const int* ldu,
             float* vt, const int* ldvt, float* work, const int* lwork, int* iwork, int* info, std::size_t);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
             const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork, int* info,
             std::size_t);
}
#endif

namespace porta::detail::cpu {
namespace {

#if defined(PORTA_HAVE_LAPACK)

// The float and double routines under one name each.
template <class T>
struct Lapack;
template <>
struct Lapack<float> {
  static constexpr auto getrf = sgetrf_;
  static constexpr auto getrs = sgetrs_;
  static constexpr auto potrf = spotrf_;
  static constexpr auto geqrf = sgeqrf_;
  static constexpr auto orgqr = sorgqr_;
  static constexpr auto syevd = ssyevd_;
  static constexpr auto gesdd = sgesdd_;
};
template <>
struct Lapack<double> {
  static constexpr auto getrf = dgetrf_;
  static constexpr auto getrs = dgetrs_;
  static constexpr auto potrf = dpotrf_;
  static constexpr auto geqrf = dgeqrf_;
  static constexpr auto orgqr = dorgqr_;
  static constexpr auto syevd = dsyevd_;
  static constexpr auto gesdd = dgesdd_;
};

// A workspace size LAPACK reported through its query (lwork = -1) in a T.
template <class T>
int work_size(T w) {
  return std::max(1, static_cast<int>(w));
}

// One thread's buffers for the matrices of one call (all of one shape): sized by LAPACK's
// workspace queries once, reused for every matrix the thread takes.
template <class T>
struct Solver {
  porta_linalg_op op;
  int m, n, k;
  bool full;       // svd: U is m x m
  bool upper;      // cholesky, eigh: the upper triangle
  bool transpose;  // solve: A^T X = B
  std::vector<T> work, tau;
  std::vector<int> iwork;

  Solver(porta_linalg_op op_, int m_, int n_, int k_, std::uint32_t flags, T* a, T* b, T* c, T* d)
      : op(op_),
        m(m_),
        n(n_),
        k(k_),
        full((flags & PORTA_LINALG_SVD_FULL) != 0u),
        upper((flags & PORTA_LINALG_UPPER) != 0u),
        transpose((flags & PORTA_LINALG_TRANSPOSE) != 0u) {
    using L = Lapack<T>;
    int info = 0, lwork = -1;
    T q = T(0);
    switch (op) {
      case PORTA_LINALG_SOLVE:
        iwork.resize(static_cast<std::size_t>(n));
        break;
      case PORTA_LINALG_QR: {
        const int p = std::min(m, n);
        tau.resize(static_cast<std::size_t>(std::max(p, 1)));
        L::geqrf(&m, &n, a, &m, tau.data(), &q, &lwork, &info);
        T q2 = T(0);
        L::orgqr(&m, &p, &p, a, &m, tau.data(), &q2, &lwork, &info);
        work.resize(static_cast<std::size_t>(std::max(work_size(q), work_size(q2))));
        break;
      }
      case PORTA_LINALG_EIGH: {
        int liwork = -1, iq = 0;
        L::syevd("V", upper ? "U" : "L", &n, a, &n, b, &q, &lwork, &iq, &liwork, &info, 1, 1);
        work.resize(static_cast<std::size_t>(work_size(q)));
        iwork.resize(static_cast<std::size_t>(std::max(iq, 1)));
        break;
      }
      case PORTA_LINALG_SVD: {
        iwork.resize(static_cast<std::size_t>(8 * std::max(n, 1)));
        L::gesdd(full ? "A" : "S", &m, &n, a, &m, b, c, &m, d, &n, &q, &lwork, iwork.data(), &info, 1);
        work.resize(static_cast<std::size_t>(work_size(q)));
        break;
      }
      default:
        break;
    }
  }

  // One matrix; returns LAPACK's info.
  int run(T* a, T* b, T* c, T* d) {
    using L = Lapack<T>;
    int info = 0;
    const int lwork = static_cast<int>(work.size());
    switch (op) {
      case PORTA_LINALG_SOLVE:
        L::getrf(&n, &n, a, &n, iwork.data(), &info);
        // A zero pivot makes the solve divide by zero: the front end raises for this matrix.
        if (info == 0 && k > 0) L::getrs(transpose ? "T" : "N", &n, &k, a, &n, iwork.data(), b, &n, &info, 1);
        return info;
      case PORTA_LINALG_CHOLESKY:
        L::potrf(upper ? "U" : "L", &n, a, &n, &info, 1);
        // potrf leaves the other triangle as it was; NumPy's factor has zeros there.
        for (int j = 0; j < n; ++j) {
          T* col = a + static_cast<std::int64_t>(j) * n;
          if (upper)
            std::fill(col + j + 1, col + n, T(0));
          else
            std::fill(col, col + j, T(0));
        }
        return info;
      case PORTA_LINALG_QR: {
        const int p = std::min(m, n);
        L::geqrf(&m, &n, a, &m, tau.data(), work.data(), &lwork, &info);
        if (info != 0) return info;
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < p; ++i)
            b[static_cast<std::int64_t>(j) * p + i] = i <= j ? a[static_cast<std::int64_t>(j) * m + i] : T(0);
        L::orgqr(&m, &p, &p, a, &m, tau.data(), work.data(), &lwork, &info);
        return info;
      }
      case PORTA_LINALG_EIGH: {
        const int liwork = static_cast<int>(iwork.size());
        L::syevd("V", upper ? "U" : "L", &n, a, &n, b, work.data(), &lwork, iwork.data(), &liwork, &info, 1, 1);
        return info;
      }
      case PORTA_LINALG_SVD:
        L::gesdd(full ? "A" : "S", &m, &n, a, &m, b, c, &m, d, &n, work.data(), &lwork, iwork.data(), &info, 1);
        // gesdd rejects a matrix holding NaN as a bad argument 4 (A); NumPy reports it as an SVD that
        // did not converge, and so does the entry.
        return info == -4 ? n + 1 : info;
      default:
        return 0;
    }
  }
};

template <class T>
void linalg_typed(porta_linalg_op op, std::int64_t batch, int m, int n, int k, std::uint32_t flags, T* a, T* b, T* c,
                  T* d, std::int32_t* info, const backend::check::LinalgSizes& z) {
  const auto at = [&](T* base, std::int64_t size, std::int64_t i) { return base == nullptr ? base : base + i * size; };
  // Small matrices go one per thread (with LAPACK on that thread); a large one gets LAPACK's threads.
  // OpenBLAS on its own pthreads pool is not entered from several threads at once.
  const std::int64_t flops = static_cast<std::int64_t>(std::max(m, n)) * m * n;
  const bool per_thread = batch > 1 && flops <= (std::int64_t(1) << 21) && !in_parallel_region() &&
                          blas_runtime().kind != BlasThreads::pthreads;
  const int nt = per_thread ? threads_for(batch * std::max<std::int64_t>(flops, 1), std::int64_t(1) << 18) : 1;
  if (nt <= 1) {
    // No parallel region around LAPACK, not even an inactive one: OpenBLAS's OpenMP build would open
    // every one of its BLAS calls as a nested region, a new team each time (on the 16-core host,
    // syevd of 1024 x 1024 took 40 times as long).
    Solver<T> s(op, m, n, k, flags, a, b, c, d);
    for (std::int64_t i = 0; i < batch; ++i)
      info[i] = s.run(at(a, z.a, i), at(b, z.b, i), at(c, z.c, i), at(d, z.d, i));
    return;
  }
  bool oom = false;  // a workspace that could not be allocated: nothing may unwind out of the region
#if defined(_OPENMP)
#pragma omp parallel num_threads(nt)
#endif
  {
    std::unique_ptr<Solver<T>> s;
    try {
      s = std::make_unique<Solver<T>>(op, m, n, k, flags, a, b, c, d);
    } catch (...) {
#if defined(_OPENMP)
#pragma omp atomic write
#endif
      oom = true;
    }
#if defined(_OPENMP)
#pragma omp for schedule(dynamic, 1)
#endif
    for (std::int64_t i = 0; i < batch; ++i)
      if (s) info[i] = s->run(at(a, z.a, i), at(b, z.b, i), at(c, z.c, i), at(d, z.d, i));
  }
  if (oom) throw std::bad_alloc();
}

#endif  // PORTA_HAVE_LAPACK

}  // namespace

porta_status linalg(int dev, porta_linalg_op op, porta_dtype dt, std::int64_t batch, std::int64_t m, std::int64_t n,
                    std::int64_t k, void* a, void* b, void* c, void* d, std::int32_t* info, std::uint32_t flags,
                    porta_stream) noexcept {
  constexpr const char* fn = "linalg";
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  backend::check::LinalgSizes z;
  if (porta_status st = check::linalg(op, dt, batch, m, n, k, a, b, c, d, info, flags, &z); st != PORTA_OK) return st;
#if defined(PORTA_HAVE_LAPACK)
  if (batch == 0) return PORTA_OK;
  if (m == 0 || n == 0) {
    std::fill(info, info + batch, 0);
    return PORTA_OK;
  }
  PORTA_CPU_TRY
  const porta_linalg_op o = static_cast<porta_linalg_op>(raw_enum(op));
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  if (dt == PORTA_F32)
    linalg_typed(o, batch, mi, ni, ki, flags, static_cast<float*>(a), static_cast<float*>(b), static_cast<float*>(c),
                 static_cast<float*>(d), info, z);
  else
    linalg_typed(o, batch, mi, ni, ki, flags, static_cast<double*>(a), static_cast<double*>(b), static_cast<double*>(c),
                 static_cast<double*>(d), info, z);
  return PORTA_OK;
  PORTA_CPU_CATCH(fn)
#else
  (void)z;
  return set_error(PORTA_ERR_UNAVAILABLE,
                   "%s: this libporta was built without LAPACK (PORTA_USE_BLAS=OFF, or no LAPACK was found)", fn);
#endif
}

}  // namespace porta::detail::cpu
