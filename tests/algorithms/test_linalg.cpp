// SPDX-License-Identifier: Apache-2.0
// porta::linalg (solve, inv, cholesky, qr, eigh, svd) on every device against the host: references
// computed in long double by the textbook algorithms (Gaussian elimination with partial pivoting,
// Cholesky-Banachiewicz, modified Gram-Schmidt, cyclic Jacobi), and the defining identities
// (A X = B, Q R = A, A V = V diag(w), U diag(S) Vh = A, orthonormal factors) checked in long
// double. Single matrices and stacks, tall, wide and empty shapes, strided views, and the errors.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::Shape;
namespace pl = porta::linalg;

namespace {

using Mat = std::vector<long double>;  // row-major host matrix

template <class T>
long double eps() {
  return static_cast<long double>(std::numeric_limits<T>::epsilon());
}

// Random entries in [-1, 1).
template <class T>
std::vector<T> random_values(porta_test::Rng& rng, std::int64_t n) {
  std::vector<T> v(static_cast<std::size_t>(n));
  for (T& x : v) x = rng.uniform<T>(T(-1), T(1));
  return v;
}

// A well-conditioned square matrix: random entries plus n on the diagonal.
template <class T>
std::vector<T> dominant(porta_test::Rng& rng, std::int64_t n) {
  std::vector<T> a = random_values<T>(rng, n * n);
  for (std::int64_t i = 0; i < n; ++i) a[static_cast<std::size_t>(i * n + i)] += static_cast<T>(n);
  return a;
}

// A symmetric positive definite matrix M M^T / n + I, rounded to T (and so exactly symmetric).
template <class T>
std::vector<T> spd(porta_test::Rng& rng, std::int64_t n) {
  const std::vector<T> m = random_values<T>(rng, n * n);
  std::vector<T> s(static_cast<std::size_t>(n * n));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j <= i; ++j) {
      long double acc = 0;
      for (std::int64_t k = 0; k < n; ++k)
        acc +=
            static_cast<long double>(m[static_cast<std::size_t>(i * n + k)]) * m[static_cast<std::size_t>(j * n + k)];
      const T v = static_cast<T>(acc / n + (i == j ? 1 : 0));
      s[static_cast<std::size_t>(i * n + j)] = s[static_cast<std::size_t>(j * n + i)] = v;
    }
  return s;
}

template <class T>
Mat widen(const T* p, std::int64_t n) {
  return Mat(p, p + n);
}

// C = A B for row-major A (m x k) and B (k x n).
Mat mul(const Mat& a, const Mat& b, std::int64_t m, std::int64_t k, std::int64_t n) {
  Mat c(static_cast<std::size_t>(m * n), 0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t p = 0; p < k; ++p)
      for (std::int64_t j = 0; j < n; ++j) c[i * n + j] += a[i * k + p] * b[p * n + j];
  return c;
}

Mat transposed(const Mat& a, std::int64_t m, std::int64_t n) {
  Mat t(a.size());
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) t[j * m + i] = a[i * n + j];
  return t;
}

long double max_abs(const Mat& a) {
  long double m = 0;
  for (long double v : a) m = std::max(m, std::fabs(v));
  return m;
}

// max |got - want|, and REQUIREs it is at most tol (with both matrices' first mismatch in the message).
void require_close(const Mat& got, const Mat& want, long double tol, const std::string& what) {
  REQUIRE(got.size() == want.size());
  long double worst = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const long double e = std::fabs(got[i] - want[i]);
    if (!(e <= worst)) {
      worst = e;
      at = i;
    }
  }
  INFO(what << ": largest difference " << static_cast<double>(worst) << " at element " << at << " (tolerance "
            << static_cast<double>(tol) << ")");
  REQUIRE(worst <= tol);
}

// Q^T Q = I for an m x p matrix with orthonormal columns.
void require_orthonormal_columns(const Mat& q, std::int64_t m, std::int64_t p, long double tol, const char* what) {
  const Mat qtq = mul(transposed(q, m, p), q, p, m, p);
  Mat id(static_cast<std::size_t>(p * p), 0);
  for (std::int64_t i = 0; i < p; ++i) id[i * p + i] = 1;
  require_close(qtq, id, tol, what);
}

// ---- references ---------------------------------------------------------------------------------

// X with A X = B (A n x n, B n x k), Gaussian elimination with partial pivoting.
Mat ref_solve(Mat a, Mat b, std::int64_t n, std::int64_t k) {
  for (std::int64_t c = 0; c < n; ++c) {
    std::int64_t p = c;
    for (std::int64_t r = c + 1; r < n; ++r)
      if (std::fabs(a[r * n + c]) > std::fabs(a[p * n + c])) p = r;
    for (std::int64_t j = 0; j < n; ++j) std::swap(a[c * n + j], a[p * n + j]);
    for (std::int64_t j = 0; j < k; ++j) std::swap(b[c * k + j], b[p * k + j]);
    for (std::int64_t r = c + 1; r < n; ++r) {
      const long double f = a[r * n + c] / a[c * n + c];
      for (std::int64_t j = c; j < n; ++j) a[r * n + j] -= f * a[c * n + j];
      for (std::int64_t j = 0; j < k; ++j) b[r * k + j] -= f * b[c * k + j];
    }
  }
  for (std::int64_t c = n - 1; c >= 0; --c)
    for (std::int64_t j = 0; j < k; ++j) {
      long double s = b[c * k + j];
      for (std::int64_t q = c + 1; q < n; ++q) s -= a[c * n + q] * b[q * k + j];
      b[c * k + j] = s / a[c * n + c];
    }
  return b;
}

Mat ref_cholesky(const Mat& a, std::int64_t n) {
  Mat l(a.size(), 0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j <= i; ++j) {
      long double s = a[i * n + j];
      for (std::int64_t k = 0; k < j; ++k) s -= l[i * n + k] * l[j * n + k];
      l[i * n + j] = i == j ? std::sqrt(s) : s / l[j * n + j];
    }
  return l;
}

// |R| of A = Q R (modified Gram-Schmidt, m >= n), row-major n x n: R's entries up to the signs of
// its rows, which Householder (LAPACK) and Gram-Schmidt choose differently.
Mat ref_abs_r(Mat a, std::int64_t m, std::int64_t n) {
  Mat r(static_cast<std::size_t>(n * n), 0);
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < j; ++i) {
      long double d = 0;
      for (std::int64_t p = 0; p < m; ++p) d += a[p * n + i] * a[p * n + j];
      r[i * n + j] = d;
      for (std::int64_t p = 0; p < m; ++p) a[p * n + j] -= d * a[p * n + i];
    }
    long double s = 0;
    for (std::int64_t p = 0; p < m; ++p) s += a[p * n + j] * a[p * n + j];
    r[j * n + j] = std::sqrt(s);
    for (std::int64_t p = 0; p < m; ++p) a[p * n + j] /= r[j * n + j];
  }
  for (long double& v : r) v = std::fabs(v);
  return r;
}

// The eigenvalues of a symmetric matrix, ascending (cyclic Jacobi).
Mat ref_eigenvalues(Mat a, std::int64_t n) {
  for (int sweep = 0; sweep < 100; ++sweep) {
    long double off = 0;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        if (i != j) off += a[i * n + j] * a[i * n + j];
    if (off < 1e-36L) break;
    for (std::int64_t p = 0; p < n; ++p)
      for (std::int64_t q = p + 1; q < n; ++q) {
        if (a[p * n + q] == 0) continue;
        const long double theta = (a[q * n + q] - a[p * n + p]) / (2 * a[p * n + q]);
        const long double t = (theta >= 0 ? 1 : -1) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        const long double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (std::int64_t k = 0; k < n; ++k) {  // A J
          const long double akp = a[k * n + p], akq = a[k * n + q];
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        for (std::int64_t k = 0; k < n; ++k) {  // J^T A J
          const long double apk = a[p * n + k], aqk = a[q * n + k];
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
      }
  }
  Mat w(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) w[i] = a[i * n + i];
  std::sort(w.begin(), w.end());
  return w;
}

// The singular values of an m x n matrix, descending: square roots of A^T A's (or A A^T's)
// eigenvalues, computed in long double.
Mat ref_singular_values(const Mat& a, std::int64_t m, std::int64_t n) {
  const std::int64_t p = std::min(m, n);
  const Mat g = m >= n ? mul(transposed(a, m, n), a, n, m, n) : mul(a, transposed(a, m, n), m, n, m);
  Mat w = ref_eigenvalues(g, p);
  for (long double& v : w) v = std::sqrt(std::max<long double>(v, 0));
  std::reverse(w.begin(), w.end());
  return w;
}

// ---- helpers over devices ---------------------------------------------------------------------------

template <class T>
Array<T> upload(const std::vector<T>& v, Shape shape, Device dev) {
  return Array<T>::from(v, shape, dev);
}

template <class T>
Mat fetch(const Array<T>& x) {
  const std::vector<T> v = x.to_vector();
  return Mat(v.begin(), v.end());
}

// Matrix b of a stack stored one after another.
Mat part(const Mat& all, std::int64_t b, std::int64_t size) {
  return Mat(all.begin() + b * size, all.begin() + (b + 1) * size);
}

struct Dims {
  std::int64_t m, n;
};

}  // namespace

TEMPLATE_TEST_CASE("linalg solve: A X = B against Gaussian elimination, vectors, matrices and stacks",
                   "[linalg][solve]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (const std::int64_t n : {1, 2, 7, 33, 130}) {
    INFO("n = " << n);
    const std::vector<T> a = dominant<T>(rng, n);
    const Array<T> da = upload(a, Shape{n, n}, dev);
    // A vector right-hand side.
    const std::vector<T> b = random_values<T>(rng, n);
    const Array<T> x = pl::solve(da, upload(b, Shape{n}, dev));
    REQUIRE(x.shape() == Shape{n});
    const long double tol = 16 * n * eps<T>();
    require_close(fetch(x), ref_solve(widen(a.data(), n * n), widen(b.data(), n), n, 1), tol, "x");
    // Several right-hand sides.
    for (const std::int64_t k : {1, 3, 8}) {
      const std::vector<T> bm = random_values<T>(rng, n * k);
      const Array<T> xm = pl::solve(da, upload(bm, Shape{n, k}, dev));
      REQUIRE(xm.shape() == Shape{n, k});
      require_close(fetch(xm), ref_solve(widen(a.data(), n * n), widen(bm.data(), n * k), n, k), tol, "X");
    }
  }
  // Stacks: one batch axis (enough small matrices that the CPU takes one per thread) and two.
  for (const Shape& lead : {Shape{64}, Shape{2, 3}}) {
    const std::int64_t count = lead.rank() == 1 ? lead[0] : lead[0] * lead[1];
    const std::int64_t n = 9, k = 2;
    std::vector<T> a, b;
    for (std::int64_t i = 0; i < count; ++i) {
      const std::vector<T> ai = dominant<T>(rng, n), bi = random_values<T>(rng, n * k);
      a.insert(a.end(), ai.begin(), ai.end());
      b.insert(b.end(), bi.begin(), bi.end());
    }
    const Shape sa = lead.rank() == 1 ? Shape{count, n, n} : Shape{lead[0], lead[1], n, n};
    const Shape sb = lead.rank() == 1 ? Shape{count, n, k} : Shape{lead[0], lead[1], n, k};
    const Array<T> x = pl::solve(upload(a, sa, dev), upload(b, sb, dev));
    REQUIRE(x.shape() == sb);
    const Mat got = fetch(x);
    for (std::int64_t i = 0; i < count; ++i)
      require_close(part(got, i, n * k),
                    ref_solve(part(widen(a.data(), count * n * n), i, n * n),
                              part(widen(b.data(), count * n * k), i, n * k), n, k),
                    16 * n * eps<T>(), "stacked X");
  }
}

TEMPLATE_TEST_CASE("linalg solve and inv read strided views and leave their inputs alone", "[linalg][views]", float,
                   double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t n = 12;
  // A is every other column of an n x 2n array; b a column of an n x 3 array.
  const std::vector<T> a = dominant<T>(rng, n);
  std::vector<T> wide(static_cast<std::size_t>(2 * n * n), T(7));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) wide[i * 2 * n + 2 * j] = a[i * n + j];
  const Array<T> dwide = upload(wide, Shape{n, 2 * n}, dev);
  const Array<T> va = dwide.slice(1, 0, 2 * n, 2);
  REQUIRE_FALSE(va.is_contiguous());
  const std::vector<T> b3 = random_values<T>(rng, n * 3);
  const Array<T> db3 = upload(b3, Shape{n, 3}, dev);
  const Array<T> x = pl::solve(va, db3.col(1));
  Mat b(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) b[i] = b3[i * 3 + 1];
  require_close(fetch(x), ref_solve(widen(a.data(), n * n), b, n, 1), 16 * n * eps<T>(), "x");
  // inv: A A^-1 = I, and the inputs are unchanged.
  const Array<T> ai = pl::inv(va);
  REQUIRE(ai.shape() == Shape{n, n});
  Mat id(static_cast<std::size_t>(n * n), 0);
  for (std::int64_t i = 0; i < n; ++i) id[i * n + i] = 1;
  require_close(mul(widen(a.data(), n * n), fetch(ai), n, n, n), id, 32 * n * eps<T>(), "A inv(A)");
  REQUIRE(dwide.to_vector() == wide);
  REQUIRE(db3.to_vector() == b3);
}

TEMPLATE_TEST_CASE("linalg cholesky: L against the host's factor, zeros above the diagonal", "[linalg][cholesky]",
                   float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (const std::int64_t n : {1, 4, 31, 100}) {
    INFO("n = " << n);
    std::vector<T> s = spd<T>(rng, n);
    const Mat ref = ref_cholesky(widen(s.data(), n * n), n);
    // Only the lower triangle is read: garbage above it changes nothing.
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = i + 1; j < n; ++j) s[i * n + j] = T(1e3);
    const Array<T> l = pl::cholesky(upload(s, Shape{n, n}, dev));
    REQUIRE(l.shape() == Shape{n, n});
    const Mat got = fetch(l);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = i + 1; j < n; ++j) REQUIRE(got[i * n + j] == 0);
    require_close(got, ref, 8 * n * eps<T>(), "L");
  }
  // A stack of 3.
  const std::int64_t n = 6;
  std::vector<T> all;
  for (int i = 0; i < 3; ++i) {
    const std::vector<T> s = spd<T>(rng, n);
    all.insert(all.end(), s.begin(), s.end());
  }
  const Mat got = fetch(pl::cholesky(upload(all, Shape{3, n, n}, dev)));
  for (std::int64_t i = 0; i < 3; ++i)
    require_close(part(got, i, n * n), ref_cholesky(part(widen(all.data(), 3 * n * n), i, n * n), n), 8 * n * eps<T>(),
                  "stacked L");
}

TEMPLATE_TEST_CASE("linalg qr: Q R = A, orthonormal Q, upper-triangular R, tall, wide and square", "[linalg][qr]",
                   float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (const Dims d : {Dims{1, 1}, Dims{5, 3}, Dims{3, 5}, Dims{40, 40}, Dims{120, 30}, Dims{17, 64}}) {
    const std::int64_t m = d.m, n = d.n, p = std::min(m, n);
    INFO(m << " x " << n);
    const std::vector<T> a = random_values<T>(rng, m * n);
    const pl::QR<T> f = pl::qr(upload(a, Shape{m, n}, dev));
    REQUIRE(f.Q.shape() == Shape{m, p});
    REQUIRE(f.R.shape() == Shape{p, n});
    const Mat q = fetch(f.Q), r = fetch(f.R);
    for (std::int64_t i = 0; i < p; ++i)
      for (std::int64_t j = 0; j < i; ++j) REQUIRE(r[i * n + j] == 0);
    const long double tol = 16 * std::max(m, n) * eps<T>();
    require_close(mul(q, r, m, p, n), widen(a.data(), m * n), tol * std::sqrt(static_cast<long double>(n)), "Q R");
    require_orthonormal_columns(q, m, p, tol, "Q^T Q");
    if (m >= n) {
      Mat ar(r.size());
      for (std::size_t i = 0; i < r.size(); ++i) ar[i] = std::fabs(r[i]);
      require_close(ar, ref_abs_r(widen(a.data(), m * n), m, n), tol * std::sqrt(static_cast<long double>(m)), "|R|");
    }
  }
  // A stack of two tall matrices.
  const std::vector<T> a = random_values<T>(rng, 2 * 7 * 4);
  const pl::QR<T> f = pl::qr(upload(a, Shape{2, 7, 4}, dev));
  REQUIRE(f.Q.shape() == Shape{2, 7, 4});
  REQUIRE(f.R.shape() == Shape{2, 4, 4});
  const Mat q = fetch(f.Q), r = fetch(f.R);
  for (std::int64_t i = 0; i < 2; ++i)
    require_close(mul(part(q, i, 28), part(r, i, 16), 7, 4, 4), part(widen(a.data(), 56), i, 28), 200 * eps<T>(),
                  "stacked Q R");
}

TEMPLATE_TEST_CASE("linalg eigh: eigenvalues against Jacobi, A V = V diag(w), orthonormal V", "[linalg][eigh]", float,
                   double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (const std::int64_t n : {1, 2, 9, 64}) {
    INFO("n = " << n);
    std::vector<T> s = random_values<T>(rng, n * n);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < i; ++j) s[j * n + i] = s[i * n + j];
    const Mat sref = widen(s.data(), n * n);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = i + 1; j < n; ++j) s[i * n + j] = T(-5);  // not read
    const pl::Eigh<T> e = pl::eigh(upload(s, Shape{n, n}, dev));
    REQUIRE(e.eigenvalues.shape() == Shape{n});
    REQUIRE(e.eigenvectors.shape() == Shape{n, n});
    const Mat w = fetch(e.eigenvalues), v = fetch(e.eigenvectors);
    const long double scale = std::max<long double>(1, max_abs(ref_eigenvalues(sref, n)));
    const long double tol = 16 * n * eps<T>() * scale;
    require_close(w, ref_eigenvalues(sref, n), tol, "eigenvalues");
    Mat vw(v.size());
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) vw[i * n + j] = v[i * n + j] * w[j];
    require_close(mul(sref, v, n, n, n), vw, tol, "A V = V diag(w)");
    require_orthonormal_columns(v, n, n, 16 * n * eps<T>(), "V^T V");
  }
  // A stack with two batch axes.
  const std::int64_t n = 5;
  std::vector<T> all;
  for (int i = 0; i < 4; ++i) {
    const std::vector<T> s = spd<T>(rng, n);
    all.insert(all.end(), s.begin(), s.end());
  }
  const pl::Eigh<T> e = pl::eigh(upload(all, Shape{2, 2, n, n}, dev));
  REQUIRE(e.eigenvalues.shape() == Shape{2, 2, n});
  const Mat w = fetch(e.eigenvalues);
  for (std::int64_t i = 0; i < 4; ++i)
    require_close(part(w, i, n), ref_eigenvalues(part(widen(all.data(), 4 * n * n), i, n * n), n), 32 * n * eps<T>(),
                  "stacked eigenvalues");
}

TEMPLATE_TEST_CASE("linalg svd: singular values against the host, U diag(S) Vh = A, full and reduced", "[linalg][svd]",
                   float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (const Dims d : {Dims{1, 1}, Dims{6, 4}, Dims{4, 6}, Dims{30, 30}, Dims{80, 20}, Dims{20, 80}}) {
    for (const bool full : {true, false}) {
      const std::int64_t m = d.m, n = d.n, p = std::min(m, n);
      INFO(m << " x " << n << (full ? ", full" : ", reduced"));
      const std::vector<T> a = random_values<T>(rng, m * n);
      const pl::SVD<T> f = pl::svd(upload(a, Shape{m, n}, dev), full);
      const std::int64_t uc = full ? m : p, vr = full ? n : p;
      REQUIRE(f.U.shape() == Shape{m, uc});
      REQUIRE(f.S.shape() == Shape{p});
      REQUIRE(f.Vh.shape() == Shape{vr, n});
      const Mat u = fetch(f.U), s = fetch(f.S), vh = fetch(f.Vh);
      const Mat ref = ref_singular_values(widen(a.data(), m * n), m, n);
      const long double tol = 16 * std::max(m, n) * eps<T>() * std::max<long double>(1, ref[0]);
      require_close(s, ref, tol, "S");
      for (std::int64_t i = 1; i < p; ++i) REQUIRE(s[i - 1] >= s[i]);
      // U[:, :p] diag(S) Vh[:p, :] = A.
      Mat us(static_cast<std::size_t>(m * p)), vp(static_cast<std::size_t>(p * n));
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < p; ++j) us[i * p + j] = u[i * uc + j] * s[j];
      for (std::int64_t i = 0; i < p * n; ++i) vp[i] = vh[i];
      require_close(mul(us, vp, m, p, n), widen(a.data(), m * n), tol, "U diag(S) Vh");
      require_orthonormal_columns(u, m, uc, 16 * m * eps<T>(), "U^T U");
      require_orthonormal_columns(transposed(vh, vr, n), n, vr, 16 * n * eps<T>(), "Vh Vh^T");
    }
  }
  // A stack of three wide matrices, reduced.
  const std::vector<T> a = random_values<T>(rng, 3 * 3 * 5);
  const pl::SVD<T> f = pl::svd(upload(a, Shape{3, 3, 5}, dev), false);
  REQUIRE(f.S.shape() == Shape{3, 3});
  const Mat s = fetch(f.S);
  for (std::int64_t i = 0; i < 3; ++i)
    require_close(part(s, i, 3), ref_singular_values(part(widen(a.data(), 45), i, 15), 3, 5), 100 * eps<T>(),
                  "stacked S");
}

TEMPLATE_TEST_CASE("linalg on empty matrices and stacks follows NumPy", "[linalg][empty]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  REQUIRE(pl::solve(Array<T>(Shape{0, 0}, dev), Array<T>(Shape{0}, dev)).shape() == Shape{0});
  REQUIRE(pl::solve(Array<T>(Shape{0, 3, 3}, dev), Array<T>(Shape{0, 3, 2}, dev)).shape() == Shape{0, 3, 2});
  REQUIRE(pl::cholesky(Array<T>(Shape{0, 0}, dev)).shape() == Shape{0, 0});
  const pl::QR<T> q = pl::qr(Array<T>(Shape{0, 4}, dev));
  REQUIRE(q.Q.shape() == Shape{0, 0});
  REQUIRE(q.R.shape() == Shape{0, 4});
  const pl::Eigh<T> e = pl::eigh(Array<T>(Shape{2, 0, 0}, dev));
  REQUIRE(e.eigenvalues.shape() == Shape{2, 0});
  // NumPy: svd of a 0 x 3 matrix has no singular values and Vh = I (3 x 3).
  const pl::SVD<T> f = pl::svd(Array<T>(Shape{0, 3}, dev));
  REQUIRE(f.U.shape() == Shape{0, 0});
  REQUIRE(f.S.shape() == Shape{0});
  REQUIRE(f.Vh.shape() == Shape{3, 3});
  REQUIRE(f.Vh.to_vector() == std::vector<T>{1, 0, 0, 0, 1, 0, 0, 0, 1});
}

TEMPLATE_TEST_CASE("linalg errors: singular and indefinite matrices name the matrix; shapes and devices",
                   "[linalg][errors]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t n = 5;
  // Matrix 1 of 3 has a zero row and column 2: the LU of it (or of its transpose) has U[2, 2] exactly zero.
  std::vector<T> a;
  for (int i = 0; i < 3; ++i) {
    std::vector<T> ai = dominant<T>(rng, n);
    if (i == 1)
      for (std::int64_t r = 0; r < n; ++r) ai[r * n + 2] = ai[2 * n + r] = 0;
    a.insert(a.end(), ai.begin(), ai.end());
  }
  const Array<T> da = upload(a, Shape{3, n, n}, dev);
  const Array<T> db = upload(random_values<T>(rng, 3 * n), Shape{3, n, 1}, dev);
  try {
    (void)pl::solve(da, db);
    FAIL("solve of a singular matrix did not throw");
  } catch (const porta::LinAlgError& e) {
    CHECK(e.index() == 1);
    CHECK(e.info() == 3);
    CHECK_THAT(e.what(), porta_test::Contains("porta::linalg::solve: matrix 1 of the batch is singular"));
  }
  CHECK_THROWS_AS(pl::inv(da), porta::LinAlgError);
  // Not positive definite: the third leading minor of diag(1, 2, -1, 4).
  std::vector<T> d(16, T(0));
  d[0] = 1, d[5] = 2, d[10] = -1, d[15] = 4;
  try {
    (void)pl::cholesky(upload(d, Shape{4, 4}, dev));
    FAIL("cholesky of an indefinite matrix did not throw");
  } catch (const porta::LinAlgError& e) {
    CHECK(e.index() == 0);
    CHECK(e.info() == 3);
    CHECK_THAT(e.what(), porta_test::Contains("the matrix is not positive definite"));
  }
  // Shapes.
  const Array<T> rect(Shape{3, 4}, dev), sq(Shape{4, 4}, dev);
  CHECK_THROWS_AS(pl::solve(rect, Array<T>(Shape{3}, dev)), porta::InvalidArgument);
  CHECK_THROWS_WITH(pl::cholesky(rect), porta_test::Contains("must be square"));
  CHECK_THROWS_AS(pl::eigh(rect), porta::InvalidArgument);
  CHECK_THROWS_AS(pl::inv(Array<T>(Shape{4}, dev)), porta::InvalidArgument);
  CHECK_THROWS_WITH(pl::solve(sq, Array<T>(Shape{3}, dev)), porta_test::Contains("does not match"));
  CHECK_THROWS_WITH(pl::solve(Array<T>(Shape{2, 4, 4}, dev), Array<T>(Shape{3, 4, 1}, dev)),
                    porta_test::Contains("does not match"));
  CHECK_THROWS_AS(pl::svd(Array<T>()), porta::InvalidArgument);
  if (const auto other = porta_test::other_device(dev))
    CHECK_THROWS_AS(pl::solve(sq, Array<T>(Shape{4}, *other)), porta::DeviceMismatch);
}
