// SPDX-License-Identifier: Apache-2.0
// Dense linear algebra on the default device (porta/linalg.hpp), checked against answers known in
// closed form. The 1-D Laplacian A = tridiag(-1, 2, -1) of order n, with h = pi / (n + 1), has
//   eigenvalues     2 - 2 cos(k h), k = 1..n (ascending), which are also its singular values;
//   eigenvectors    sqrt(2 / (n + 1)) sin(i k h), i = 1..n (up to sign);
//   Cholesky factor L[i][i] = sqrt((i + 2) / (i + 1)), L[i + 1][i] = -sqrt((i + 1) / (i + 2));
//   A x = ones      x[i] = (i + 1) (n - i) / 2 (0-based i).
// Then a least-squares fit by QR: the quadratic through m samples of 1 + 2 t + 3 t^2, and the
// Laplacian scaled by 1, 2, 3 and 4 as one stack of four matrices.
//
//   linalg [--n N]     order of the Laplacian (default 200)
#include <porta/porta.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/check.hpp"

namespace linalg = porta::linalg;

namespace {

constexpr double kPi = 3.14159265358979323846;

std::vector<double> laplacian(std::int64_t n, double scale = 1.0) {
  std::vector<double> a(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    a[i * n + i] = 2 * scale;
    if (i > 0) a[i * n + i - 1] = -scale;
    if (i + 1 < n) a[i * n + i + 1] = -scale;
  }
  return a;
}

double max_diff(const std::vector<double>& got, const std::vector<double>& want) {
  double m = 0;
  for (std::size_t i = 0; i < got.size(); ++i) m = std::max(m, std::fabs(got[i] - want[i]));
  return m;
}

void report(const char* what, double err, double tol) {
  std::printf("  %-34s max error %.2e (tolerance %.0e)\n", what, err, tol);
  example::expect(err <= tol, what);
}

}  // namespace

int main(int argc, char** argv) try {
  std::int64_t n = 200;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--n") == 0) n = std::atoll(argv[i + 1]);
  const porta::Device dev = porta::default_device();
  std::printf("dense linear algebra on %s, the 1-D Laplacian of order %lld\n", dev.to_string().c_str(),
              static_cast<long long>(n));
  const double h = kPi / static_cast<double>(n + 1);
  std::vector<double> lambda(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) lambda[k] = 2 - 2 * std::cos(static_cast<double>(k + 1) * h);

  const auto A = porta::Array<double>::from(laplacian(n), porta::Shape{n, n}, dev);

  // A x = ones.
  const porta::Array<double> x = linalg::solve(A, porta::full<double>(porta::Shape{n}, 1.0, dev));
  std::vector<double> x_exact(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) x_exact[i] = static_cast<double>((i + 1) * (n - i)) / 2;
  const double x_scale = x_exact[static_cast<std::size_t>(n / 2)];
  report("solve: x / max x", max_diff(x.to_vector(), x_exact) / x_scale, 1e-11);

  // A = L L^T.
  const std::vector<double> l = linalg::cholesky(A).to_vector();
  std::vector<double> l_exact(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    l_exact[i * n + i] = std::sqrt(static_cast<double>(i + 2) / static_cast<double>(i + 1));
    if (i + 1 < n) l_exact[(i + 1) * n + i] = -std::sqrt(static_cast<double>(i + 1) / static_cast<double>(i + 2));
  }
  report("cholesky: L", max_diff(l, l_exact), 1e-13);

  // A V = V diag(w).
  const auto [w, V] = linalg::eigh(A);
  report("eigh: eigenvalues", max_diff(w.to_vector(), lambda), 1e-12);
  std::vector<double> v = V.to_vector(), v_exact(v.size());
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t k = 0; k < n; ++k) {
      v_exact[i * n + k] =
          std::sqrt(2.0 / static_cast<double>(n + 1)) * std::fabs(std::sin(static_cast<double>((i + 1) * (k + 1)) * h));
      v[i * n + k] = std::fabs(v[i * n + k]);
    }
  // Eigenvectors of close eigenvalues are determined less well: the gap shrinks as h^2.
  report("eigh: |eigenvectors|", max_diff(v, v_exact), 1e-13 / (h * h));

  // The singular values of a symmetric positive definite matrix are its eigenvalues, descending.
  const linalg::SVD<double> f = linalg::svd(A, false);
  std::vector<double> s_exact(lambda.rbegin(), lambda.rend());
  report("svd: singular values", max_diff(f.S.to_vector(), s_exact), 1e-12);

  // Least squares: the quadratic c0 + c1 t + c2 t^2 through m samples of 1 + 2 t + 3 t^2.
  const std::int64_t m = 50;
  std::vector<double> vandermonde, samples;
  for (std::int64_t i = 0; i < m; ++i) {
    const double t = static_cast<double>(i) / static_cast<double>(m - 1);
    vandermonde.insert(vandermonde.end(), {1.0, t, t * t});
    samples.push_back(1 + 2 * t + 3 * t * t);
  }
  const auto M = porta::Array<double>::from(vandermonde, porta::Shape{m, 3}, dev);
  const auto y = porta::Array<double>::from(samples, porta::Shape{m}, dev);
  // min |M c - y|: M = Q R, then R c = Q^T y.
  const auto [Q, R] = linalg::qr(M);
  const porta::Array<double> c = linalg::solve(R, porta::matmul(porta::transpose(Q), y));
  report("qr: least-squares coefficients", max_diff(c.to_vector(), {1.0, 2.0, 3.0}), 1e-12);

  // Four scaled Laplacians in one call: the eigenvalues of s A are s times A's.
  std::vector<double> stack, w_exact;
  for (int s = 1; s <= 4; ++s) {
    const std::vector<double> as = laplacian(n, s);
    stack.insert(stack.end(), as.begin(), as.end());
    for (const double l_k : lambda) w_exact.push_back(s * l_k);
  }
  const linalg::Eigh<double> e4 = linalg::eigh(porta::Array<double>::from(stack, porta::Shape{4, n, n}, dev));
  report("eigh of a stack of 4: eigenvalues", max_diff(e4.eigenvalues.to_vector(), w_exact), 4e-12);
  return example::summary();
} catch (const porta::Error& e) {
  std::fprintf(stderr, "linalg: %s\n", e.what());
  return 1;
}
