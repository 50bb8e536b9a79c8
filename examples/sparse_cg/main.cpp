// SPDX-License-Identifier: Apache-2.0
// Conjugate gradient on the 2-D Poisson problem -Δu = f on the unit square, u = 0 on the boundary,
// in double precision: the 5-point Laplacian on an n x n interior grid (h^2 times the usual
// operator: 4 on the diagonal, -1 for each neighbour) is a porta::sparse::Csr of n^2 rows, built
// once on the host; A p is porta::sparse::spmm into a vector kept across iterations, dots are
// porta's reproducible reductions, x += alpha p and r -= alpha A p are porta::axpy, and
// p = r + beta p is two array operators (each rounded: no FMA). examples/cg is the same loop on a
// dense matrix.
//
// The answer is known: u* is a smooth polynomial that vanishes on the boundary, rounded to
// multiples of 2^-30 so that b = A u* is exact in double (A's entries are 4 and -1, |u*| < 2).
// So u* solves A u = b exactly, and ||u - u*|| / ||u*|| <= cond(A) ||b - A u|| / ||b||, with
// cond(A) = cot^2(pi h / 2) for h = 1 / (n + 1). The program recomputes the true residual on the
// host from the stencil (not from the CSR arrays) in long double, and exits non-zero unless CG
// converged, the true residual is within 10 times the tolerance and the error within its bound.
//
//   sparse_cg [--n N] [--algorithm own|vendor]     N x N interior grid, N^2 unknowns (default 64)
//
// vendor is cuSPARSE on CUDA devices and porta's own kernel elsewhere; own is porta's kernel
// everywhere, the same bits on every device (docs/determinism.md, "Sparse products").
#include <porta/porta.hpp>
#include <porta/sparse.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

namespace sparse = porta::sparse;

constexpr double kPi = 3.14159265358979323846;

// The 5-point Laplacian on the n x n interior points (row-major, point (i, j) is unknown i n + j),
// the neighbours of a point on the edge being boundary values (0) that drop out. Each row's
// entries in increasing column order.
sparse::Csr<double> laplacian(std::int64_t n, porta::Device dev) {
  const std::int64_t N = n * n;
  std::vector<std::int32_t> indptr, indices;
  std::vector<double> values;
  indptr.reserve(static_cast<std::size_t>(N + 1));
  indices.reserve(static_cast<std::size_t>(5 * N));
  values.reserve(static_cast<std::size_t>(5 * N));
  indptr.push_back(0);
  const auto entry = [&](std::int64_t col, double v) {
    indices.push_back(static_cast<std::int32_t>(col));
    values.push_back(v);
  };
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t row = i * n + j;
      if (i > 0) entry(row - n, -1.0);
      if (j > 0) entry(row - 1, -1.0);
      entry(row, 4.0);
      if (j + 1 < n) entry(row + 1, -1.0);
      if (i + 1 < n) entry(row + n, -1.0);
      indptr.push_back(static_cast<std::int32_t>(indices.size()));
    }
  return sparse::Csr<double>::from_host(N, N, indptr, indices, values, dev);
}

// u*(x, y) = 8 x (1 - x) y (1 - y) (1 + 2 x + 3 y^2) at the interior points, to multiples of 2^-30.
// Not an eigenvector of A (a sine mode would be, and CG would stop after one step).
std::vector<double> exact_solution(std::int64_t n) {
  std::vector<double> u(static_cast<std::size_t>(n * n));
  const double h = 1.0 / static_cast<double>(n + 1);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const double x = static_cast<double>(j + 1) * h, y = static_cast<double>(i + 1) * h;
      const double v = 8.0 * x * (1.0 - x) * y * (1.0 - y) * (1.0 + 2.0 * x + 3.0 * y * y);
      u[static_cast<std::size_t>(i * n + j)] = std::ldexp(std::nearbyint(std::ldexp(v, 30)), -30);
    }
  return u;
}

// The stencil applied on the host: out = b - A u in long double (b empty: out = A u).
std::vector<long double> apply_stencil(std::int64_t n, const std::vector<double>& u, const std::vector<double>& b) {
  std::vector<long double> out(u.size());
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const auto at = [&](std::int64_t ii, std::int64_t jj) -> long double {
        return ii < 0 || jj < 0 || ii >= n || jj >= n
                   ? 0.0L
                   : static_cast<long double>(u[static_cast<std::size_t>(ii * n + jj)]);
      };
      const long double au = 4.0L * at(i, j) - at(i - 1, j) - at(i + 1, j) - at(i, j - 1) - at(i, j + 1);
      const auto k = static_cast<std::size_t>(i * n + j);
      out[k] = b.empty() ? au : static_cast<long double>(b[k]) - au;
    }
  return out;
}

long double norm(const std::vector<long double>& v) {
  long double s = 0;
  for (long double e : v) s += e * e;
  return std::sqrt(s);
}

// Conjugate gradient from u = 0 until ||r|| <= tol ||b|| (r the recurrence's residual) or
// max_iterations. Returns the number of iterations; `rel` gets the final ||r|| / ||b||.
int conjugate_gradient(porta::Device dev, const sparse::Csr<double>& A, const porta::Array<double>& b,
                       porta::Array<double>& u, const sparse::Options& options, double tol, int max_iterations,
                       int report_every, double* rel) {
  porta::fill(u, 0.0);
  auto r = b.clone();  // r = b - A u = b
  auto p = b.clone();
  porta::Array<double> Ap(b.shape(), dev);
  double rr = porta::dot(r, r);
  const double bb = rr;
  int k = 0;
  while (k < max_iterations && rr > tol * tol * bb) {
    sparse::spmm(1.0, A, p, 0.0, Ap, options);  // Ap = A p into a vector made once: no allocation per step
    const double alpha = rr / porta::dot(p, Ap);
    porta::axpy(alpha, p, u);
    porta::axpy(-alpha, Ap, r);
    const double rr_next = porta::dot(r, r);
    const double beta = rr_next / rr;
    rr = rr_next;
    p *= beta;  // p = r + beta p
    p += r;
    ++k;
    if (k % report_every == 0) std::printf("  iteration %6d  ||r|| / ||b|| = %.3e\n", k, std::sqrt(rr / bb));
  }
  *rel = std::sqrt(rr / bb);
  return k;
}

int run(std::int64_t n, sparse::Algorithm algorithm) {
  const porta::Device dev = porta::default_device();
  const std::int64_t N = n * n;
  const double h = 1.0 / static_cast<double>(n + 1);
  const double cot = 1.0 / std::tan(kPi * h / 2.0);
  const double cond = cot * cot;  // lambda_max / lambda_min = cos^2 / sin^2 of pi h / 2
  const double eps = std::numeric_limits<double>::epsilon();
  // A u is rounded by up to about eps lambda_max |u| per element, while ||b|| = ||A u*|| is about
  // lambda_min ||u*|| for a smooth u*: a residual below eps cond(A) ||b|| need not be reachable.
  // The tolerance stays 16 times above that, which moves it off 1e-10 from n of about 260 on.
  const double tol = std::max(1e-10, 16.0 * eps * cond);
  // CG's bound: ||r_k|| / ||b|| <= 2 sqrt(cond) ((sqrt(cond) - 1) / (sqrt(cond) + 1))^k, within
  // sqrt(cond) / 2 ln(2 sqrt(cond) / tol) iterations; twice that, for rounding.
  const double sq = std::sqrt(cond);
  const int max_iterations = static_cast<int>(std::ceil(sq * std::log(2.0 * sq / tol))) + 100;
  const int report_every = static_cast<int>(std::max<std::int64_t>(10, n));

  const sparse::Csr<double> A = laplacian(n, dev);
  std::printf(
      "sparse_cg on %s: 2-D Poisson, 5-point Laplacian on a %lld x %lld grid (%lld unknowns, %lld stored "
      "entries), Algorithm::%s\n",
      porta::describe(dev).c_str(), static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(N),
      static_cast<long long>(A.nnz()), algorithm == sparse::Algorithm::own ? "own" : "vendor");

  const std::vector<double> u_star = exact_solution(n);
  const std::vector<long double> au = apply_stencil(n, u_star, {});
  std::vector<double> hb(au.size());
  for (std::size_t k = 0; k < au.size(); ++k) hb[k] = static_cast<double>(au[k]);  // exact: no rounding
  const auto b = porta::Array<double>::from(hb, dev);
  auto u = porta::zeros<double>({N}, dev);

  sparse::Options options;
  options.algorithm = algorithm;
  double rel = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const int iterations = conjugate_gradient(dev, A, b, u, options, tol, max_iterations, report_every, &rel);
  porta::synchronize(dev);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::vector<double> got = u.to_vector();

  const long double true_rel = norm(apply_stencil(n, got, hb)) / norm(au);
  std::vector<long double> diff(got.size()), ref(got.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    diff[k] = static_cast<long double>(got[k]) - static_cast<long double>(u_star[k]);
    ref[k] = u_star[k];
  }
  const long double err = norm(diff) / norm(ref);
  // The bound is exact for the true residual; 1% on top for the long double sums that measure both.
  const double err_bound = 1.01 * cond * static_cast<double>(true_rel);

  const bool converged = rel <= tol;
  const bool ok_residual = true_rel <= 10.0L * tol;
  const bool ok_solution = err <= err_bound;
  std::printf("  %d iterations (at most %d), recurrence ||r|| / ||b|| = %.3e (tolerance %.1e)  %s\n", iterations,
              max_iterations, rel, tol, converged ? "OK" : "NOT CONVERGED");
  std::printf("  true residual ||b - A u|| / ||b|| = %.3e (bound %.1e)  %s\n", static_cast<double>(true_rel), 10 * tol,
              ok_residual ? "OK" : "WRONG");
  std::printf("  vs u*: ||u - u*|| / ||u*|| = %.3e (bound cond(A) x residual = %.3e, cond(A) = %.4g)  %s\n",
              static_cast<double>(err), err_bound, cond, ok_solution ? "OK" : "WRONG");
  std::printf("  %.3f ms per iteration (%d iterations in %.3f s)\n", iterations > 0 ? 1e3 * seconds / iterations : 0.0,
              iterations, seconds);
  return converged && ok_residual && ok_solution ? 0 : 1;
}

int main(int argc, char** argv) try {
  std::int64_t n = 64;
  sparse::Algorithm algorithm = sparse::Algorithm::vendor;
  for (int a = 1; a < argc; ++a) {
    const bool has = a + 1 < argc;
    if (std::strcmp(argv[a], "--n") == 0 && has) {
      n = std::atoll(argv[++a]);
    } else if (std::strcmp(argv[a], "--algorithm") == 0 && has && std::strcmp(argv[a + 1], "own") == 0) {
      algorithm = sparse::Algorithm::own;
      ++a;
    } else if (std::strcmp(argv[a], "--algorithm") == 0 && has && std::strcmp(argv[a + 1], "vendor") == 0) {
      algorithm = sparse::Algorithm::vendor;
      ++a;
    } else {
      std::fprintf(stderr, "usage: %s [--n N (1 to 20000)] [--algorithm own|vendor]\n", argv[0]);
      return 2;
    }
  }
  // 5 n^2 stored entries must fit the 32-bit indices of Csr<double>.
  if (n < 1 || n > 20000) {
    std::fprintf(stderr, "sparse_cg: --n must be between 1 and 20000\n");
    return 2;
  }
  return run(n, algorithm);
} catch (const std::exception& e) {
  std::fprintf(stderr, "sparse_cg: %s\n", e.what());
  return 2;
}
