// SPDX-License-Identifier: Apache-2.0
// The dense linear algebra benchmarks (group "linalg"): porta::linalg calls as a user writes them,
// shared by the CPU binary (linalg_cpu.cpp) and the CUDA one (cuda_linalg.cuh), beside the vendor's
// solver library called directly on the same row-major data.
//
//   op             what                                            size in the name   counted as
//   solve          solve(A, b), A n x n, b a vector of n           n                  2/3 n^3 + 2 n^2 flops
//   solve_batched  solve(A, b) of a stack: A (count, 32, 32),      count              count x (2/3 n^3 + 2 n^2)
//                  b (count, 32, 1)
//   cholesky       cholesky(S)                                     n                  1/3 n^3 flops
//   eigh           eigh(S), eigenvalues and eigenvectors           n                  time only
//   svd            svd(A, false)                                   n                  time only
//
// The matrices: A = R + n I for solve, R uniform in [-1, 1): strictly diagonally dominant, so
// nonsingular and well conditioned (cond(A) near 1), no pivoting surprises; S = (R + R^T) / 2 + n I
// for cholesky (symmetric and diagonally dominant with a positive diagonal: positive definite);
// S = (R + R^T) / 2 for eigh and plain R for svd, whose conditioning does not matter.
//
// Sizes: solve n = 1024 and 4096, cholesky 4096, eigh and svd 1024, solve_batched 4096 matrices.
// Every n is capped at PORTA_BENCH_LINALG_N (default min(4096, the run's largest matmul), so the
// smoke run's 256 keeps them small) and the count at PORTA_BENCH_LINALG_BATCH (default
// 2^(max_log2 - 10) within 4..4096: 4096 at full size, 4 in the smoke run).
//
// Every result, porta's and the peers', is checked on the host before it is timed: x against a
// reference computed here in double (Jacobi's iteration, which converges fast on these matrices);
// L, the eigenpairs and the SVD through products with a random vector (L L^T v = S v, A V v =
// V (w * v), A v = U (s * Vh v), with norms that V, U and Vh preserve), which cost O(n^2) and
// catch a transposed or misplaced factor.
#pragma once

#include <porta/linalg.hpp>
#include <porta/porta.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "kernels_common.hpp"

namespace porta_bench_linalg {

namespace pb = porta_bench;

enum class Kind { solve, cholesky, eigh, svd };

inline constexpr std::int64_t kSmallN =
    32;  // the stack's side: porta's CUDA backend takes cuBLAS's batched LU up to 32

// One case: `count` == 0 is one 2-D matrix; otherwise a stack of `count` matrices of n x n.
struct LinalgCase {
  Kind kind = Kind::solve;
  std::string op;
  std::int64_t n = 0;
  std::int64_t count = 0;

  std::int64_t matrices() const { return count > 0 ? count : 1; }
  // The size in the benchmark's name.
  std::int64_t size() const { return count > 0 ? count : n; }
};

inline std::int64_t linalg_max_n() {
  return pb::env_size("PORTA_BENCH_LINALG_N", std::min<std::int64_t>(4096, pb::limits().matmul_max));
}
inline std::int64_t linalg_batch() {
  const int e = std::clamp(pb::limits().max_log2 - 10, 2, 12);
  return pb::env_size("PORTA_BENCH_LINALG_BATCH", std::int64_t{1} << e);
}

// The cases this run registers: the list above, sizes capped, duplicates a cap makes dropped, ops
// not asked for (PORTA_BENCH_OPS) left out.
inline std::vector<LinalgCase> linalg_cases() {
  const std::int64_t cap = linalg_max_n();
  std::vector<LinalgCase> out;
  const auto add = [&](Kind kind, const char* op, std::int64_t n, std::int64_t count) {
    if (!pb::wanted(op, "linalg")) return;
    if (count == 0) n = std::min(n, cap);
    for (const LinalgCase& c : out)
      if (c.op == op && c.n == n && c.count == count) return;
    out.push_back(LinalgCase{kind, op, n, count});
  };
  add(Kind::solve, "solve", 1024, 0);
  add(Kind::solve, "solve", 4096, 0);
  add(Kind::solve, "solve_batched", kSmallN, linalg_batch());
  add(Kind::cholesky, "cholesky", 4096, 0);
  add(Kind::eigh, "eigh", 1024, 0);
  add(Kind::svd, "svd", 1024, 0);
  return out;
}

// The "porta_linalg_sizes" line of the run's context.
inline void add_linalg_context(const std::vector<LinalgCase>& cases) {
  std::string s;
  for (const LinalgCase& c : cases) {
    s += (s.empty() ? "" : ", ") + c.op + " ";
    s += c.count > 0 ? std::to_string(c.count) + " x " : "";
    s += std::to_string(c.n) + "x" + std::to_string(c.n);
  }
  benchmark::AddCustomContext("porta_linalg_sizes", s);
}

// The flops the counter reports per call (LAPACK's operation counts, leading terms); 0 for eigh
// and svd, whose counts depend on how fast their iterations converge: they report time only.
inline double linalg_flops(const LinalgCase& c) {
  const double n = static_cast<double>(c.n), m = static_cast<double>(c.matrices());
  switch (c.kind) {
    case Kind::solve:
      return m * (2.0 / 3.0 * n * n * n + 2.0 * n * n);
    case Kind::cholesky:
      return m * (n * n * n / 3.0);
    default:
      return 0;
  }
}

// Slack for the checks, relative to the result's scale: a wrong factor or a transposed operand is
// off by O(1) (or by about 1/sqrt(n) for an x that ignores the off-diagonal part), while rounding,
// with these matrices, stays orders of magnitude below.
template <class T>
double linalg_tolerance() {
  return sizeof(T) == 8 ? 1e-9 : 1e-3;
}

// ---- the inputs -----------------------------------------------------------------------------------
template <class T>
struct HostLinalg {
  LinalgCase c;
  std::vector<T> a;       // matrices() row-major n x n matrices, one after another
  std::vector<T> b;       // solve: matrices() right-hand sides of n
  std::vector<double> v;  // the checks' random vector, n
  std::vector<double> x;  // solve: the reference solution, filled on first use
};

template <class T>
void make_host_linalg(HostLinalg<T>& h) {
  const LinalgCase& c = h.c;
  const std::int64_t n = c.n, nn = n * n, count = c.matrices();
  h.a.resize(static_cast<std::size_t>(count * nn));
  pb::fill_random(h.a.data(), count * nn, 11);
  T* a = h.a.data();
  if (c.kind == Kind::cholesky || c.kind == Kind::eigh) {
#if defined(_OPENMP)
#pragma omp parallel for schedule(static)
#endif
    for (std::int64_t e = 0; e < count * nn; ++e) {
      const std::int64_t m = e / nn, i = (e % nn) / n, j = e % n;
      if (i < j) {
        T* base = a + m * nn;
        const T s = (base[i * n + j] + base[j * n + i]) / T(2);
        base[i * n + j] = s;
        base[j * n + i] = s;
      }
    }
  }
  if (c.kind == Kind::solve || c.kind == Kind::cholesky)
    for (std::int64_t m = 0; m < count; ++m)
      for (std::int64_t i = 0; i < n; ++i) a[m * nn + i * n + i] += static_cast<T>(n);
  if (c.kind == Kind::solve) {
    h.b.resize(static_cast<std::size_t>(count * n));
    pb::fill_random(h.b.data(), count * n, 12);
  }
  h.v.resize(static_cast<std::size_t>(n));
  pb::fill_random(h.v.data(), n, 13);
}

// The inputs of the latest case of each value type: porta and every peer of a case start from the
// same matrices.
template <class T>
HostLinalg<T>& host_linalg(const LinalgCase& c) {
  static HostLinalg<T> held;
  if (held.c.op != c.op || held.c.n != c.n || held.c.count != c.count) {
    held = HostLinalg<T>{};
    held.c = c;
    make_host_linalg(held);
  }
  return held;
}

// ---- the checks -----------------------------------------------------------------------------------
inline void expect_within(const std::string& what, const char* check, double err, double tol) {
  if (!(err <= tol)) {  // NaN fails
    char text[96];
    std::snprintf(text, sizeof text, " is off by %.3g (relative; tolerance %.3g)", err, tol);
    throw std::runtime_error(what + ": " + check + text);
  }
}

inline double norm2(const std::vector<double>& y) {
  double s = 0;
  for (double e : y) s += e * e;
  return std::sqrt(s);
}

// x of A x = b for every matrix, in double: Jacobi's iteration, which converges because A is
// strictly diagonally dominant, and fast (by about 1/sqrt(n) a step) because its diagonal is n.
template <class T>
const std::vector<double>& solve_reference(HostLinalg<T>& h) {
  if (!h.x.empty()) return h.x;
  const std::int64_t n = h.c.n, count = h.c.matrices();
  std::vector<double> x(static_cast<std::size_t>(count * n), 0.0);
  bool converged = true;
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic, 1) reduction(&& : converged)
#endif
  for (std::int64_t m = 0; m < count; ++m) {
    const T* a = h.a.data() + m * n * n;
    const T* b = h.b.data() + m * n;
    double* xm = x.data() + m * n;
    std::vector<double> next(static_cast<std::size_t>(n));
    bool done = false;
    for (int it = 0; it < 200 && !done; ++it) {
      double change = 0, scale = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        double s = static_cast<double>(b[i]);
        for (std::int64_t j = 0; j < n; ++j)
          if (j != i) s -= static_cast<double>(a[i * n + j]) * xm[j];
        next[static_cast<std::size_t>(i)] = s / static_cast<double>(a[i * n + i]);
        change = std::max(change, std::fabs(next[static_cast<std::size_t>(i)] - xm[i]));
        scale = std::max(scale, std::fabs(next[static_cast<std::size_t>(i)]));
      }
      std::copy(next.begin(), next.end(), xm);
      done = change <= 1e-14 * scale;
    }
    converged = converged && done;
  }
  if (!converged) throw std::runtime_error(h.c.op + ": the host reference solution did not converge");
  h.x = std::move(x);
  return h.x;
}

// x (matrices() vectors of n, one after another) against the reference, relative to its largest
// element.
template <class T>
void expect_solve(const std::string& what, HostLinalg<T>& h, const T* x) {
  const std::vector<double>& ref = solve_reference(h);
  double scale = 0, worst = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    scale = std::max(scale, std::fabs(ref[i]));
    const double d = std::fabs(static_cast<double>(x[i]) - ref[i]);
    if (!(d <= worst)) worst = d;
  }
  expect_within(what, "x", worst / scale, linalg_tolerance<T>());
}

// L (row-major n x n, its lower triangle read; with `zero_upper`, the strictly upper triangle must
// hold zeros, as numpy.linalg.cholesky's does): L (L^T v) against S v, relative to max|S| |v|.
template <class T>
void expect_cholesky(const std::string& what, const HostLinalg<T>& h, const T* l, bool zero_upper) {
  const std::int64_t n = h.c.n;
  const T* s = h.a.data();
  const std::vector<double>& v = h.v;
  for (std::int64_t i = 0; zero_upper && i < n; ++i)
    for (std::int64_t j = i + 1; j < n; ++j)
      if (l[i * n + j] != T(0))
        throw std::runtime_error(what + ": L[" + std::to_string(i) + ", " + std::to_string(j) +
                                 "] is above the diagonal and not zero");
  std::vector<double> y(static_cast<std::size_t>(n), 0.0);  // L^T v
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j <= i; ++j) y[static_cast<std::size_t>(j)] += static_cast<double>(l[i * n + j]) * v[i];
  double worst = 0, anorm = 0, vmax = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    double lhs = 0, rhs = 0, row = 0;
    for (std::int64_t j = 0; j <= i; ++j) lhs += static_cast<double>(l[i * n + j]) * y[static_cast<std::size_t>(j)];
    for (std::int64_t j = 0; j < n; ++j) {
      rhs += static_cast<double>(s[i * n + j]) * v[j];
      row += std::fabs(static_cast<double>(s[i * n + j]));
    }
    anorm = std::max(anorm, row);
    vmax = std::max(vmax, std::fabs(v[i]));
    const double d = std::fabs(lhs - rhs);
    if (!(d <= worst)) worst = d;
  }
  expect_within(what, "L L^T - S", worst / (anorm * vmax), linalg_tolerance<T>());
}

// y = M v for row-major n x n M, or M^T v with `transposed`.
template <class T>
std::vector<double> mat_vec(const T* m, std::int64_t n, const std::vector<double>& v, bool transposed) {
  std::vector<double> y(static_cast<std::size_t>(n), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const double e = static_cast<double>(transposed ? m[j * n + i] : m[i * n + j]);
      y[static_cast<std::size_t>(i)] += e * v[j];
    }
  return y;
}

// w ascending and V's columns its eigenvectors (with `vectors_as_rows`, V's rows: the column-major
// V that LAPACK and cuSOLVER leave in a row-major buffer): S (V v) against V (w * v), relative to
// max|w| |v|, and |V v| against |v|.
template <class T>
void expect_eigh(const std::string& what, const HostLinalg<T>& h, const T* w, const T* vecs, bool vectors_as_rows) {
  const std::int64_t n = h.c.n;
  for (std::int64_t i = 0; i + 1 < n; ++i)
    if (!(w[i] <= w[i + 1]))
      throw std::runtime_error(what + ": eigenvalue " + std::to_string(i) + " is above the next (not ascending)");
  const std::vector<double>& v = h.v;
  const std::vector<double> y = mat_vec(vecs, n, v, vectors_as_rows);
  const std::vector<double> lhs = mat_vec(h.a.data(), n, y, false);
  std::vector<double> wv(static_cast<std::size_t>(n));
  double wmax = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    wv[static_cast<std::size_t>(i)] = static_cast<double>(w[i]) * v[i];
    wmax = std::max(wmax, std::fabs(static_cast<double>(w[i])));
  }
  const std::vector<double> rhs = mat_vec(vecs, n, wv, vectors_as_rows);
  double worst = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double d = std::fabs(lhs[static_cast<std::size_t>(i)] - rhs[static_cast<std::size_t>(i)]);
    if (!(d <= worst)) worst = d;
  }
  const double vn = norm2(v);
  expect_within(what, "S V - V diag(w)", worst / (wmax * vn), linalg_tolerance<T>());
  expect_within(what, "the norm of V v", std::fabs(norm2(y) - vn) / vn, linalg_tolerance<T>());
}

// Square A = U diag(s) Vh, s descending: A v against U (s * (Vh v)), relative to max(s) |v|, and the
// norms that the orthogonal U and Vh keep.
template <class T>
void expect_svd(const std::string& what, const HostLinalg<T>& h, const T* u, const T* s, const T* vh) {
  const std::int64_t n = h.c.n;
  for (std::int64_t i = 0; i + 1 < n; ++i)
    if (!(s[i] >= s[i + 1]) || !(s[i + 1] >= T(0)))
      throw std::runtime_error(what + ": singular value " + std::to_string(i + 1) + " is negative or out of order");
  const std::vector<double>& v = h.v;
  std::vector<double> y = mat_vec(vh, n, v, false);
  const double yn = norm2(y);
  for (std::int64_t i = 0; i < n; ++i) y[static_cast<std::size_t>(i)] *= static_cast<double>(s[i]);
  const std::vector<double> lhs = mat_vec(u, n, y, false);
  const std::vector<double> rhs = mat_vec(h.a.data(), n, v, false);
  double worst = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double d = std::fabs(lhs[static_cast<std::size_t>(i)] - rhs[static_cast<std::size_t>(i)]);
    if (!(d <= worst)) worst = d;
  }
  const double vn = norm2(v), smax = std::max(static_cast<double>(s[0]), 1e-300);
  expect_within(what, "A - U diag(s) Vh", worst / (smax * vn), linalg_tolerance<T>());
  expect_within(what, "the norm of Vh v", std::fabs(yn - vn) / vn, linalg_tolerance<T>());
  expect_within(what, "the norm of U (s * Vh v)", std::fabs(norm2(lhs) - norm2(y)) / norm2(y), linalg_tolerance<T>());
}

// ---- porta, as a user calls it -----------------------------------------------------------------------
// Every call writes new arrays (porta::linalg returns its results), which replace the previous call's.
template <class T>
struct PortaLinalg {
  LinalgCase c;
  porta::Array<T> a, b;
  porta::Array<T> out[3];  // solve: x; cholesky: L; eigh: w, V; svd: U, s, Vh
};

template <class T>
void porta_linalg(PortaLinalg<T>& d, const porta::Stream& s) {
  switch (d.c.kind) {
    case Kind::solve:
      d.out[0] = porta::linalg::solve(d.a, d.b, s);
      break;
    case Kind::cholesky:
      d.out[0] = porta::linalg::cholesky(d.a, s);
      break;
    case Kind::eigh: {
      porta::linalg::Eigh<T> r = porta::linalg::eigh(d.a, s);
      d.out[0] = std::move(r.eigenvalues);
      d.out[1] = std::move(r.eigenvectors);
      break;
    }
    case Kind::svd: {
      porta::linalg::SVD<T> r = porta::linalg::svd(d.a, /*full_matrices=*/false, s);
      d.out[0] = std::move(r.U);
      d.out[1] = std::move(r.S);
      d.out[2] = std::move(r.Vh);
      break;
    }
  }
}

// The case's arrays on `device`, one call, and the check of its results.
template <class T>
PortaLinalg<T> make_porta_linalg(const std::string& id, const LinalgCase& c, porta::Device device,
                                 const porta::Stream& s) {
  HostLinalg<T>& h = host_linalg<T>(c);
  const std::int64_t n = c.n;
  PortaLinalg<T> d;
  d.c = c;
  d.a = porta::Array<T>::from(h.a.data(), c.count > 0 ? porta::Shape{c.count, n, n} : porta::Shape{n, n}, device, s);
  if (c.kind == Kind::solve)
    d.b = porta::Array<T>::from(h.b.data(), c.count > 0 ? porta::Shape{c.count, n, 1} : porta::Shape{n}, device, s);
  porta_linalg(d, s);
  switch (c.kind) {
    case Kind::solve:
      expect_solve(id, h, d.out[0].to_vector(s).data());
      break;
    case Kind::cholesky:
      expect_cholesky(id, h, d.out[0].to_vector(s).data(), true);
      break;
    case Kind::eigh:
      expect_eigh(id, h, d.out[0].to_vector(s).data(), d.out[1].to_vector(s).data(), false);
      break;
    case Kind::svd:
      expect_svd(id, h, d.out[0].to_vector(s).data(), d.out[1].to_vector(s).data(), d.out[2].to_vector(s).data());
      break;
  }
  return d;
}

}  // namespace porta_bench_linalg

namespace porta_bench {
// Registration of the CPU cases (linalg_cpu.cpp).
void register_cpu_linalg();
}  // namespace porta_bench
