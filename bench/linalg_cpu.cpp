// SPDX-License-Identifier: Apache-2.0
// The linalg cases on the CPU (linalg_common.hpp says what runs): porta::linalg as a user writes it
// ("porta"), beside LAPACK called directly ("lapack": the Fortran routines of the library porta
// links, OpenBLAS's) as a user holding the same row-major arrays would call it. LAPACK overwrites
// its operands, so every call starts by copying A (and b) into work buffers made once, then:
//
//   solve          getrf, then getrs with trans 'T' (the row-major A is the column-major A^T, and
//                  A^T's factors solve A x = b): the same plain copy and flag porta uses
//   solve_batched  `omp parallel for` over the matrices, each thread copying its matrix and
//                  calling getrf and getrs on it, LAPACK single-threaded inside the region
//   cholesky       potrf with uplo 'U' on the row-major buffer: its column-major reading is
//                  S^T = S, and the 'U' factor read row-major is L (above the diagonal the buffer
//                  keeps S's values, which a user of L must ignore; porta writes zeros there)
//   eigh           syevd ('V', 'U': the triangle porta reads); the eigenvectors come back as the
//                  buffer's rows, where porta returns them as columns
//   svd            gesdd ('S'): for the column-major A^T = U' S V'^T, V'^T read row-major is A's U
//                  and U' read row-major is A's Vh, so no transposing copy either
//
// Workspaces and pivot arrays are sized by LAPACK's queries once, outside the timing. Before
// timing, every result is checked on the host (linalg_common.hpp) and porta's is compared with
// LAPACK's: x, L's lower triangle, the eigenvalues, the singular values (the vectors' signs are
// the library's choice).
#include <porta/linalg.hpp>
#include <porta/porta.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "host_buffer.hpp"
#include "kernels_common.hpp"
#include "linalg_common.hpp"

#if defined(_OPENMP)
#define PBL_OMP(directive) _Pragma(directive)
#else
#define PBL_OMP(directive)
#endif

#if defined(PORTA_BENCH_HAVE_LAPACK)
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

namespace porta_bench_linalg_cpu {

namespace pb = porta_bench;
namespace pl = porta_bench_linalg;

const porta::Device kCpu{porta::DeviceType::cpu, 0};

#if defined(PORTA_BENCH_HAVE_LAPACK)
template <class T>
struct Lapack;
template <>
struct Lapack<float> {
  static constexpr auto getrf = sgetrf_;
  static constexpr auto getrs = sgetrs_;
  static constexpr auto potrf = spotrf_;
  static constexpr auto syevd = ssyevd_;
  static constexpr auto gesdd = sgesdd_;
};
template <>
struct Lapack<double> {
  static constexpr auto getrf = dgetrf_;
  static constexpr auto getrs = dgetrs_;
  static constexpr auto potrf = dpotrf_;
  static constexpr auto syevd = dsyevd_;
  static constexpr auto gesdd = dgesdd_;
};

template <class T>
struct LapackRun {
  pl::LinalgCase c;
  pb::HostBuffer<T> a, b;      // the inputs, as the user holds them
  pb::HostBuffer<T> work, x;   // LAPACK's operands: A's copy (then its factors), b's copy (then x)
  pb::HostBuffer<T> w, u, vt;  // eigh: w; svd: s in w, and gesdd's U and VT
  std::vector<int> ipiv, iwork;
  std::vector<T> lwork;
};

// A large copy split over the threads, as the copy of a matrix of 4096^2 would be written in a
// program that is otherwise parallel.
template <class T>
void parallel_copy(T* __restrict dst, const T* __restrict src, std::int64_t n) {
  PBL_OMP("omp parallel for schedule(static)")
  for (std::int64_t i = 0; i < n; ++i) dst[i] = src[i];
}

void expect_info(const char* routine, int info) {
  if (info != 0) throw std::runtime_error(std::string(routine) + " returned info " + std::to_string(info));
}

template <class T>
void lapack_call(LapackRun<T>& d) {
  using L = Lapack<T>;
  const int n = static_cast<int>(d.c.n), one = 1;
  const std::int64_t nn = d.c.n * d.c.n;
  int info = 0;
  switch (d.c.kind) {
    case pl::Kind::solve:
      if (d.c.count == 0) {
        parallel_copy(d.work.get(), d.a.get(), nn);
        std::copy(d.b.get(), d.b.get() + n, d.x.get());
        L::getrf(&n, &n, d.work.get(), &n, d.ipiv.data(), &info);
        expect_info("getrf", info);
        L::getrs("T", &n, &one, d.work.get(), &n, d.ipiv.data(), d.x.get(), &n, &info, 1);
        expect_info("getrs", info);
      } else {
        int bad = 0;
        PBL_OMP("omp parallel for schedule(static) reduction(| : bad)")
        for (std::int64_t m = 0; m < d.c.count; ++m) {
          T* a = d.work.get() + m * nn;
          T* x = d.x.get() + m * n;
          int* piv = d.ipiv.data() + m * n;
          std::copy(d.a.get() + m * nn, d.a.get() + (m + 1) * nn, a);
          std::copy(d.b.get() + m * n, d.b.get() + (m + 1) * n, x);
          int i1 = 0, i2 = 0;
          L::getrf(&n, &n, a, &n, piv, &i1);
          L::getrs("T", &n, &one, a, &n, piv, x, &n, &i2, 1);
          bad |= (i1 != 0) | (i2 != 0);
        }
        expect_info("getrf or getrs of a matrix of the batch", bad);
      }
      break;
    case pl::Kind::cholesky:
      parallel_copy(d.work.get(), d.a.get(), nn);
      L::potrf("U", &n, d.work.get(), &n, &info, 1);
      expect_info("potrf", info);
      break;
    case pl::Kind::eigh: {
      parallel_copy(d.work.get(), d.a.get(), nn);
      const int lwork = static_cast<int>(d.lwork.size()), liwork = static_cast<int>(d.iwork.size());
      L::syevd("V", "U", &n, d.work.get(), &n, d.w.get(), d.lwork.data(), &lwork, d.iwork.data(), &liwork, &info, 1, 1);
      expect_info("syevd", info);
      break;
    }
    case pl::Kind::svd: {
      parallel_copy(d.work.get(), d.a.get(), nn);
      const int lwork = static_cast<int>(d.lwork.size());
      L::gesdd("S", &n, &n, d.work.get(), &n, d.w.get(), d.u.get(), &n, d.vt.get(), &n, d.lwork.data(), &lwork,
               d.iwork.data(), &info, 1);
      expect_info("gesdd", info);
      break;
    }
  }
}

// A workspace size LAPACK reported through its query (lwork = -1) in a T.
template <class T>
int work_size(T w) {
  return std::max(1, static_cast<int>(w));
}

template <class T>
LapackRun<T> make_lapack(const std::string& id, const pl::LinalgCase& c) {
  using L = Lapack<T>;
  pl::HostLinalg<T>& h = pl::host_linalg<T>(c);
  const std::int64_t n = c.n, nn = n * n, count = c.matrices();
  LapackRun<T> d;
  d.c = c;
  d.a = pb::HostBuffer<T>(count * nn, h.a.data());
  d.work = pb::HostBuffer<T>(count * nn);
  const int ni = static_cast<int>(n);
  int info = 0, query = -1;
  T q = T(0);
  switch (c.kind) {
    case pl::Kind::solve:
      d.b = pb::HostBuffer<T>(count * n, h.b.data());
      d.x = pb::HostBuffer<T>(count * n);
      d.ipiv.resize(static_cast<std::size_t>(count * n));
      break;
    case pl::Kind::cholesky:
      break;
    case pl::Kind::eigh: {
      d.w = pb::HostBuffer<T>(n);
      int iq = 0;
      L::syevd("V", "U", &ni, d.work.get(), &ni, d.w.get(), &q, &query, &iq, &query, &info, 1, 1);
      expect_info("syevd's workspace query", info);
      d.lwork.resize(static_cast<std::size_t>(work_size(q)));
      d.iwork.resize(static_cast<std::size_t>(std::max(iq, 1)));
      break;
    }
    case pl::Kind::svd:
      d.w = pb::HostBuffer<T>(n);
      d.u = pb::HostBuffer<T>(nn);
      d.vt = pb::HostBuffer<T>(nn);
      d.iwork.resize(static_cast<std::size_t>(8 * n));
      L::gesdd("S", &ni, &ni, d.work.get(), &ni, d.w.get(), d.u.get(), &ni, d.vt.get(), &ni, &q, &query, d.iwork.data(),
               &info, 1);
      expect_info("gesdd's workspace query", info);
      d.lwork.resize(static_cast<std::size_t>(work_size(q)));
      break;
  }
  lapack_call(d);
  switch (c.kind) {
    case pl::Kind::solve:
      pl::expect_solve(id, h, d.x.get());
      break;
    case pl::Kind::cholesky:
      pl::expect_cholesky(id, h, d.work.get(), false);
      break;
    case pl::Kind::eigh:
      pl::expect_eigh(id, h, d.w.get(), d.work.get(), true);
      break;
    case pl::Kind::svd:
      pl::expect_svd(id, h, d.vt.get(), d.w.get(), d.u.get());
      break;
  }
  return d;
}
#endif

template <class T>
pl::PortaLinalg<T> make_porta(const std::string& id, const pl::LinalgCase& c) {
  pl::PortaLinalg<T> d = pl::make_porta_linalg<T>(id, c, kCpu, porta::Stream());
#if defined(PORTA_BENCH_HAVE_LAPACK)
  const LapackRun<T> p = make_lapack<T>(id + " (lapack)", c);
  const double tol = pl::linalg_tolerance<T>();
  const std::int64_t n = c.n;
  switch (c.kind) {
    case pl::Kind::solve:
      pb::expect_close(id, d.out[0].to_vector().data(), p.x.get(), c.matrices() * n, tol);
      break;
    case pl::Kind::cholesky: {
      std::vector<T> l(p.work.get(), p.work.get() + n * n);
      for (std::int64_t i = 0; i < n; ++i) std::fill(l.begin() + i * n + i + 1, l.begin() + (i + 1) * n, T(0));
      pb::expect_close(id, d.out[0].to_vector().data(), l.data(), n * n, tol);
      break;
    }
    case pl::Kind::eigh:
      pb::expect_close(id, d.out[0].to_vector().data(), p.w.get(), n, tol);
      break;
    case pl::Kind::svd:
      pb::expect_close(id, d.out[1].to_vector().data(), p.w.get(), n, tol);
      break;
  }
#endif
  return d;
}

template <class T>
void register_case(const pl::LinalgCase& c) {
  const char* dt = pb::dtype_name<T>();
  const double flops = pl::linalg_flops(c);
  pb::configure_cpu(pb::add(c.op, dt, "porta", c.size(), [=](benchmark::State& st, const std::string& id) {
    pb::timed<pl::PortaLinalg<T>>(
        st, id, [&] { return make_porta<T>(id, c); },
        [](pl::PortaLinalg<T>& d) { pl::porta_linalg(d, porta::Stream()); });
    if (flops > 0) pb::set_flops(st, flops);
  }));
#if defined(PORTA_BENCH_HAVE_LAPACK)
  pb::configure_cpu(pb::add(c.op, dt, "lapack", c.size(), [=](benchmark::State& st, const std::string& id) {
    pb::timed<LapackRun<T>>(
        st, id, [&] { return make_lapack<T>(id, c); }, [](LapackRun<T>& d) { lapack_call(d); });
    if (flops > 0) pb::set_flops(st, flops);
  }));
#endif
}

void register_all() {
  const std::vector<pl::LinalgCase> cases = pl::linalg_cases();
  if (cases.empty()) return;
  pl::add_linalg_context(cases);
  for (const pl::LinalgCase& c : cases) {
    register_case<float>(c);
    register_case<double>(c);
  }
}

}  // namespace porta_bench_linalg_cpu

void porta_bench::register_cpu_linalg() {
  porta_bench_linalg_cpu::register_all();
}
