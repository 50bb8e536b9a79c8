// SPDX-License-Identifier: Apache-2.0
// Conjugate gradient on a dense symmetric positive definite system A x = b, in double precision:
// the matrix-vector product is porta::matmul (n x n by n x 1), dots and updates are porta's
// built-ins, and the one update porta has no built-in for, p = r + beta p, is a user kernel.
//
// A = B^T B / n + s I with B uniform in [-1, 1) from a fixed seed and s = 0.1: B^T B is positive
// semidefinite, so every eigenvalue of A is at least s and CG converges. The solution is checked
// against a Cholesky solve on the host; the true residual b - A x is recomputed on the host too.
//
//   cg [--n N]      N x N system (default 512)
#include <porta/kernels.hpp>
#include <porta/porta.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

constexpr double kShift = 0.1;  // s: the smallest eigenvalue of A is at least this
constexpr double kTol = 1e-10;  // stop when ||r|| <= kTol ||b||

struct System {
  std::int64_t n;
  std::vector<double> a, b;  // row-major n x n; n
};

System make_system(std::int64_t n) {
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> bm(static_cast<std::size_t>(n * n));
  for (double& v : bm) v = uniform(rng);
  System s{n, std::vector<double>(static_cast<std::size_t>(n * n), 0.0),
           std::vector<double>(static_cast<std::size_t>(n))};
  for (std::int64_t k = 0; k < n; ++k)  // A += row k of B, outer product with itself
    for (std::int64_t i = 0; i < n; ++i) {
      const double bki = bm[k * n + i] / static_cast<double>(n);
      for (std::int64_t j = 0; j < n; ++j) s.a[i * n + j] += bki * bm[k * n + j];
    }
  for (std::int64_t i = 0; i < n; ++i) s.a[i * n + i] += kShift;
  for (double& v : s.b) v = uniform(rng);
  return s;
}

// Conjugate gradient from x = 0. Returns the number of iterations; `rel` gets ||r|| / ||b|| of the
// recurrence (the residual CG updates, not recomputed).
int conjugate_gradient(porta::Device dev, const porta::Array<double>& A, const porta::Array<double>& b,
                       porta::Array<double>& x, int max_iterations, double* rel) {
  const std::int64_t n = b.size();
  porta::fill(x, 0.0);
  auto r = b.clone();  // r = b - A x = b
  auto p = b.clone();
  double rr = porta::dot(r, r);
  const double bb = rr;
  int k = 0;
  while (k < max_iterations && rr > kTol * kTol * bb) {
    const auto Ap = porta::matmul(A, p);  // n x 1
    const double alpha = rr / porta::dot(p, Ap);
    porta::axpy(alpha, p, x);
    porta::axpy(-alpha, Ap, r);
    const double rr_next = porta::dot(r, r);
    const double beta = rr_next / rr;
    rr = rr_next;
    // p = r + beta p: porta has axpy (y = a x + y) but no y = x + b y, so a user kernel.
    const auto rv = r.view();
    const auto pv = p.view();
    porta::parallel_for(dev, n, PORTA_KERNEL((std::int64_t i) { pv[i] = rv[i] + beta * pv[i]; }));
    ++k;
    if (k % 10 == 0) std::printf("  iteration %4d  ||r|| / ||b|| = %.3e\n", k, std::sqrt(rr / bb));
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

int main(int argc, char** argv) try {
  std::int64_t n = 512;
  for (int a = 1; a < argc; ++a) {
    if (std::strcmp(argv[a], "--n") == 0 && a + 1 < argc) {
      n = std::atoll(argv[++a]);
    } else {
      std::fprintf(stderr, "usage: %s [--n N (>= 1)]\n", argv[0]);
      return 2;
    }
  }
  if (n < 1) {
    std::fprintf(stderr, "cg: --n must be >= 1\n");
    return 2;
  }
  const porta::Device dev = porta::default_device();
  std::printf("cg on %s: dense SPD system, n = %lld\n", porta::describe(dev).c_str(), static_cast<long long>(n));

  const System s = make_system(n);
  const auto A = porta::Array<double>::from(s.a.data(), porta::Shape{n, n}, dev);
  const auto b = porta::Array<double>::from(s.b.data(), porta::Shape{n, 1}, dev);
  auto x = porta::zeros<double>({n, 1}, dev);
  double rel = 0;
  // In exact arithmetic CG ends within n iterations; rounding can ask for a few more.
  const int iterations = conjugate_gradient(dev, A, b, x, static_cast<int>(2 * n + 10), &rel);
  const std::vector<double> got = x.to_vector();

  // The true residual, recomputed on the host.
  std::vector<double> res(s.b);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) res[i] -= s.a[i * n + j] * got[j];
  const double true_rel = norm(res) / norm(s.b);

  const std::vector<double> want = cholesky_solve(s);
  std::vector<double> diff(want.size());
  for (std::size_t i = 0; i < want.size(); ++i) diff[i] = got[i] - want[i];
  const double err = norm(diff) / norm(want);

  // ||x - x*|| / ||x*|| <= cond(A) ||b - A x|| / ||b||, and cond(A) <= ||A||_inf / s (the largest
  // eigenvalue is at most any matrix norm; the smallest at least s). The Cholesky reference is itself
  // within about cond(A) n 2^-53 of x*; 8 times that is allowed on top.
  double norm_inf = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    double row = 0;
    for (std::int64_t j = 0; j < n; ++j) row += std::fabs(s.a[i * n + j]);
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
  return converged && ok_residual && ok_solution ? 0 : 1;
} catch (const porta::Error& e) {
  std::fprintf(stderr, "porta error: %s\n", e.what());
  return 2;
}
