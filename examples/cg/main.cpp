// SPDX-License-Identifier: Apache-2.0
// Conjugate gradient on a dense symmetric positive definite system A x = b, in double precision:
// the matrix-vector product is porta::matmul (n x n by n) with porta's own fixed-order kernel,
// dots are porta's reproducible reductions, the updates x += alpha p and r -= alpha A p are
// porta::axpy, and the one update porta has no built-in for, p = r + beta p, is a user kernel.
//
// A = B^T B / n + s I with B uniform in [-1, 1) from porta's Philox and s = 0.1: B^T B is positive
// semidefinite, so every eigenvalue of A is at least s and CG converges. The solution is checked
// against a Cholesky solve on the host; the true residual b - A x is recomputed on the host too.
//
// The rows of A, x, r and p are split over ranks (uneven splits too); each iteration gathers p
// whole on every rank for the product. Every step is the same sequence of correctly rounded
// operations wherever it runs, so the final x has the same bits on every device and for any number
// of ranks: the program prints `sha256 <hex>` of x's bytes for scripts to compare
// (examples/digests.cmake, docs/determinism.md "Whole programs").
//
//   cg [--n N]                      N x N system (default 512), one rank (MPI if launched)
//   cg --threads K [--n N]          K ranks as threads of one process
//   mpirun -np K cg [--n N]         one rank per process
#include <porta/distributed.hpp>
#include <porta/kernels.hpp>
#include <porta/math.hpp>
#include <porta/porta.hpp>
#include <porta/random.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "common/ranks.hpp"
#include "common/rows.hpp"
#include "common/sha256.hpp"

namespace dist = porta::distributed;
namespace pm = porta::math;

constexpr double kShift = 0.1;  // s: the smallest eigenvalue of A is at least this
constexpr double kTol = 1e-10;  // stop when ||r|| <= kTol ||b||

// The system's inputs, from one Philox stream on the host: the same bits wherever the program runs
// (a <random> distribution is the standard library's, which may change between versions).
struct System {
  std::int64_t n, first, last;  // rows [first, last) of A
  std::vector<double> a, b;     // row-major (last - first) x n; all n of b
};

System make_system(std::int64_t n, std::int64_t first, std::int64_t last) {
  porta::random::Philox rng(12);
  const auto uniform = [&rng] { return 2.0 * rng.uniform<double>() - 1.0; };  // exact: 53-bit multiples
  std::vector<double> bm(static_cast<std::size_t>(n * n));
  for (double& v : bm) v = uniform();
  const std::int64_t rows = last - first;
  System s{n, first, last, std::vector<double>(static_cast<std::size_t>(rows * n), 0.0),
           std::vector<double>(static_cast<std::size_t>(n))};
  // A += row k of B, outer product with itself, for k in order: explicit fma, so the sum's rounding
  // does not depend on whether the host compiler contracts.
  for (std::int64_t k = 0; k < n; ++k)
    for (std::int64_t i = first; i < last; ++i) {
      const double bki = pm::div(bm[k * n + i], static_cast<double>(n));
      double* row = &s.a[(i - first) * n];
      for (std::int64_t j = 0; j < n; ++j) row[j] = pm::fma(bki, bm[k * n + j], row[j]);
    }
  for (std::int64_t i = first; i < last; ++i) s.a[(i - first) * n + i] += kShift;
  for (double& v : s.b) v = uniform();
  return s;
}

// Conjugate gradient from x = 0 over this rank's rows. Returns the number of iterations; `rel`
// gets ||r|| / ||b|| of the recurrence (the residual CG updates, not recomputed). Every dot is the
// communicator's, which has the bits of porta::dot over the whole vectors for any split.
int conjugate_gradient(const dist::Communicator& comm, porta::Device dev, const porta::Array<double>& A,
                       const porta::Array<double>& b_mine, const porta::Array<double>& b_whole,
                       example::Rows<double>& rows, porta::Array<double>& x, int max_iterations, double* rel) {
  const std::int64_t m = rows.rows();
  porta::MatmulOptions own;
  own.algorithm = porta::GemmAlgorithm::own;  // one fixed order on every backend (BLAS has its own)
  porta::fill(x, 0.0);
  auto r = b_mine.clone();  // r = b - A x = b
  auto p = b_mine.clone();
  auto p_whole = b_whole.clone();
  double rr = comm.dot(r, r);
  const double bb = rr;
  int k = 0;
  while (k < max_iterations && rr > kTol * kTol * bb) {
    const auto Ap = porta::matmul(A, p_whole, own);  // this rank's rows of A p
    const double alpha = rr / comm.dot(p, Ap);
    porta::axpy(alpha, p, x);  // alpha * p rounded, then added: never an FMA, on any backend
    porta::axpy(-alpha, Ap, r);
    const double rr_next = comm.dot(r, r);
    const double beta = rr_next / rr;
    rr = rr_next;
    // p = r + beta p: porta has axpy (y = a x + y) but no y = x + b y, so a user kernel. Written
    // with porta::math so that no compiler can contract or reorder it differently.
    const auto rv = r.view();
    const auto pv = p.view();
    if (m > 0) porta::parallel_for(dev, m, PORTA_KERNEL((std::int64_t i) { pv[i] = pm::fma(beta, pv[i], rv[i]); }));
    example::gather_rows(comm, dev, rows, p, p_whole);
    ++k;
    if (k % 10 == 0 && comm.rank() == 0) std::printf("  iteration %4d  ||r|| / ||b|| = %.3e\n", k, std::sqrt(rr / bb));
  }
  *rel = std::sqrt(rr / bb);
  return k;
}

// x = A^-1 b by Cholesky (A = L L^T), in double on the host.
std::vector<double> cholesky_solve(const System& s) {
  const std::int64_t n = s.n;
  std::vector<double> l = s.a;
  for (std::int64_t j = 0; j < n; ++j) {
    double d = l[j * n + j];
    for (std::int64_t k = 0; k < j; ++k) d -= l[j * n + k] * l[j * n + k];
    d = std::sqrt(d);
    l[j * n + j] = d;
    for (std::int64_t i = j + 1; i < n; ++i) {
      double v = l[i * n + j];
      for (std::int64_t k = 0; k < j; ++k) v -= l[i * n + k] * l[j * n + k];
      l[i * n + j] = v / d;
    }
  }
  std::vector<double> y(s.b);
  for (std::int64_t i = 0; i < n; ++i) {  // L y = b
    for (std::int64_t k = 0; k < i; ++k) y[i] -= l[i * n + k] * y[k];
    y[i] /= l[i * n + i];
  }
  for (std::int64_t i = n - 1; i >= 0; --i) {  // L^T x = y
    for (std::int64_t k = i + 1; k < n; ++k) y[i] -= l[k * n + i] * y[k];
    y[i] /= l[i * n + i];
  }
  return y;
}

double norm(const std::vector<double>& v) {
  double s = 0;
  for (double e : v) s += e * e;
  return std::sqrt(s);
}

// One rank's part of the program; rank 0 also checks the solution and prints the digest.
int run(const dist::Communicator& comm, std::int64_t n) {
  const porta::Device dev = comm.local_device();
  auto rows = example::make_rows<double>(comm, dev, n, 1);
  const std::int64_t m = rows.rows();
  if (comm.rank() == 0)
    std::printf("cg on %s: dense SPD system, n = %lld, %d rank(s) (%s)\n", porta::describe(dev).c_str(),
                static_cast<long long>(n), comm.size(), comm.describe().c_str());

  // Rank 0 builds the whole system (its check needs it) and takes its rows from it.
  const System whole = comm.rank() == 0 ? make_system(n, 0, n) : System{};
  const System s =
      comm.rank() == 0
          ? System{n, rows.first, rows.last,
                   std::vector<double>(whole.a.begin() + rows.first * n, whole.a.begin() + rows.last * n), whole.b}
          : make_system(n, rows.first, rows.last);
  const auto A = porta::Array<double>::from(s.a.data(), porta::Shape{m, n}, dev);
  const auto b_whole = porta::Array<double>::from(s.b.data(), porta::Shape{n}, dev);
  const auto b_mine = porta::Array<double>::from(s.b.data() + rows.first, porta::Shape{m}, dev);
  auto x = porta::zeros<double>({m}, dev);
  double rel = 0;
  // In exact arithmetic CG ends within n iterations; rounding can ask for a few more.
  const int iterations = conjugate_gradient(comm, dev, A, b_mine, b_whole, rows, x, static_cast<int>(2 * n + 10), &rel);
  auto x_whole = porta::zeros<double>({n}, dev);
  example::gather_rows(comm, dev, rows, x, x_whole);
  if (comm.rank() != 0) return 0;
  const std::vector<double> got = x_whole.to_vector();

  // The true residual, recomputed on the host.
  std::vector<double> res(whole.b);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) res[i] -= whole.a[i * n + j] * got[j];
  const double true_rel = norm(res) / norm(whole.b);

  const std::vector<double> want = cholesky_solve(whole);
  std::vector<double> diff(want.size());
  for (std::size_t i = 0; i < want.size(); ++i) diff[i] = got[i] - want[i];
  const double err = norm(diff) / norm(want);

  // ||x - x*|| / ||x*|| <= cond(A) ||b - A x|| / ||b||, and cond(A) <= ||A||_inf / s (the largest
  // eigenvalue is at most any matrix norm; the smallest at least s). The Cholesky reference is itself
  // within about cond(A) n 2^-53 of x*; 8 times that is allowed on top.
  double norm_inf = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    double row = 0;
    for (std::int64_t j = 0; j < n; ++j) row += std::fabs(whole.a[i * n + j]);
    norm_inf = std::max(norm_inf, row);
  }
  const double cond = norm_inf / kShift;
  const double eps = std::numeric_limits<double>::epsilon() / 2;
  const double err_bound = cond * (true_rel + 8.0 * static_cast<double>(n) * eps);
  // The recurrence's residual drifts from the true one by rounding, about cond(A) 2^-53 per
  // iteration: far below kTol here, so 10 kTol is a generous bound.
  const bool converged = rel <= kTol;
  const bool ok_residual = true_rel <= 10 * kTol;
  const bool ok_solution = err <= err_bound;
  std::printf("  %d iterations, recurrence ||r|| / ||b|| = %.3e (tolerance %.0e)  %s\n", iterations, rel, kTol,
              converged ? "OK" : "NOT CONVERGED");
  std::printf("  true residual ||b - A x|| / ||b|| = %.3e (bound %.0e)  %s\n", true_rel, 10 * kTol,
              ok_residual ? "OK" : "WRONG");
  std::printf("  vs Cholesky: ||x - x_ref|| / ||x_ref|| = %.3e (bound %.3e, cond(A) <= %.1f)  %s\n", err, err_bound,
              cond, ok_solution ? "OK" : "WRONG");
  // The digest: x's n doubles, in index order, as they lie in memory.
  example::Sha256 h;
  h.update(got);
  std::printf("iterations %d\nsha256 %s\n", iterations, h.hex().c_str());
  return converged && ok_residual && ok_solution ? 0 : 1;
}

int main(int argc, char** argv) try {
  std::int64_t n = 512;
  int threads = 0;
  for (int a = 1; a < argc; ++a) {
    const bool has = a + 1 < argc;
    if (std::strcmp(argv[a], "--n") == 0 && has) {
      n = std::atoll(argv[++a]);
    } else if (std::strcmp(argv[a], "--threads") == 0 && has) {
      threads = std::atoi(argv[++a]);
    } else {
      std::fprintf(stderr, "usage: %s [--n N (>= 1)] [--threads K (ranks as threads)]\n", argv[0]);
      return 2;
    }
  }
  if (n < 1 || threads < 0) {
    std::fprintf(stderr, "cg: --n must be >= 1, --threads >= 0\n");
    return 2;
  }
  if (!example::sha256_self_check()) {
    std::fprintf(stderr, "cg: the SHA-256 known answers do not match\n");
    return 1;
  }
  return example::run_on_ranks(threads, "cg", [n](const dist::Communicator& comm) {
    if (n < comm.size()) throw porta::InvalidArgument("cg: --n must be at least the number of ranks");
    return run(comm, n);
  });
} catch (const std::exception& e) {
  std::fprintf(stderr, "cg: %s\n", e.what());
  return 2;
}
