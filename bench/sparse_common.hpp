// SPDX-License-Identifier: Apache-2.0
// The sparse benchmarks (group "sparse"): porta::sparse products of the 2-D Poisson matrix, shared
// by the CPU binary (sparse_cpu.cpp) and the CUDA one (cuda_sparse.cuh), beside what a user would
// otherwise write or call on the same matrix.
//
//   op     what                                                counted as
//   spmv   y = A x (porta::sparse::spmm(1, A, x, 0, y))        values + indices + indptr + x + y
//   spmm   Y = A X, X and Y row-major with kSpmmK columns      values + indices + indptr + X + Y
//          (GPU only)
//
// A is the 5-point Laplacian of an n x n grid: n^2 rows, 5n^2 - 4n entries (4 on the diagonal, -1
// for each neighbour inside the grid), int32 indices, each row's entries in column order, as
// SciPy's kron(I, T) + kron(T, I) gives it. Names carry n (`spmv/f64/porta/4096`); the target is
// n = 4096 (16.7M rows, 84M entries), run beside n = 1024.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "common.hpp"
#include "kernels_common.hpp"

namespace porta_bench_sparse {

namespace pb = porta_bench;

inline constexpr std::int64_t kSpmmK = 8;  // right-hand sides of the spmm case

inline bool wanted_sparse(const std::string& op) {
  return pb::wanted(op, "sparse");
}

// Grid sides: 1024 and the target 4096, the target shrunk with the run's largest vector (n^2 rows
// <= 2^max_log2, so the smoke run's 2^12 gives 64 x 64) or set outright by PORTA_BENCH_SPARSE_N;
// 1024 only when it is below the target.
inline std::vector<std::int64_t> sparse_sides() {
  const std::int64_t side = pb::env_size("PORTA_BENCH_SPARSE_N",
                                         std::min<std::int64_t>(4096, std::int64_t{1} << (pb::limits().max_log2 / 2)));
  std::vector<std::int64_t> s;
  if (side > 1024) s.push_back(1024);
  s.push_back(side);
  return s;
}

// The "porta_sparse_sizes" line of the run's context.
inline void add_sparse_context(bool spmm) {
  std::string s;
  for (std::int64_t n : sparse_sides()) s += (s.empty() ? "" : ", ") + std::to_string(n) + "x" + std::to_string(n);
  benchmark::AddCustomContext("porta_sparse_sizes", "2-D Poisson " + s + " (int32 indices)" +
                                                        (spmm ? ", spmm k = " + std::to_string(kSpmmK) : ""));
}

inline std::int64_t poisson_rows(std::int64_t n) {
  return n * n;
}
inline std::int64_t poisson_nnz(std::int64_t n) {
  return 5 * n * n - 4 * n;
}

// Bytes of one product, each array once (as STREAM counts): the matrix's three arrays, X read and Y
// written (beta = 0 does not read Y).
template <class T>
double sparse_bytes(std::int64_t n, std::int64_t k) {
  const double rows = static_cast<double>(poisson_rows(n)), nnz = static_cast<double>(poisson_nnz(n));
  return nnz * static_cast<double>(sizeof(T) + sizeof(std::int32_t)) + (rows + 1) * sizeof(std::int32_t) +
         2.0 * static_cast<double>(k) * rows * sizeof(T);
}

// The matrix in CSR form on the host, as a user hands it to porta::sparse::Csr::from_host or
// copies it to cuSPARSE's arrays.
template <class T>
struct HostCsr {
  std::int64_t n = 0, rows = 0, nnz = 0;
  std::vector<std::int32_t> indptr, indices;
  std::vector<T> values;
};

template <class T>
HostCsr<T> poisson_2d(std::int64_t n) {
  if (poisson_nnz(n) > std::numeric_limits<std::int32_t>::max())
    throw std::runtime_error("sparse: a " + std::to_string(n) + "x" + std::to_string(n) +
                             " grid has too many entries for int32 indices (set a smaller PORTA_BENCH_SPARSE_N)");
  HostCsr<T> a;
  a.n = n;
  a.rows = poisson_rows(n);
  a.nnz = poisson_nnz(n);
  a.indptr.resize(static_cast<std::size_t>(a.rows) + 1);
  a.indices.resize(static_cast<std::size_t>(a.nnz));
  a.values.resize(static_cast<std::size_t>(a.nnz));
  std::int32_t* p = a.indptr.data();
  p[0] = 0;
  for (std::int64_t i = 0; i < a.rows; ++i) {
    const std::int64_t r = i / n, c = i % n;
    p[i + 1] = p[i] + static_cast<std::int32_t>(1 + (r > 0) + (r < n - 1) + (c > 0) + (c < n - 1));
  }
  std::int32_t* idx = a.indices.data();
  T* val = a.values.data();
  // Rows in parallel: 84M entries one at a time would make every case's set-up take seconds.
#if defined(_OPENMP)
#pragma omp parallel for schedule(static)
#endif
  for (std::int64_t i = 0; i < a.rows; ++i) {
    const std::int64_t r = i / n, c = i % n;
    std::int64_t e = p[i];
    const auto put = [&](std::int64_t col, T v) {
      idx[e] = static_cast<std::int32_t>(col);
      val[e] = v;
      ++e;
    };
    if (r > 0) put(i - n, T(-1));
    if (c > 0) put(i - 1, T(-1));
    put(i, T(4));
    if (c < n - 1) put(i + 1, T(-1));
    if (r < n - 1) put(i + n, T(-1));
  }
  return a;
}

// The matrix of side n, kept for the latest n of each value type: porta and every peer of a case
// start from it, and with random interleaving the cases of both dtypes alternate.
template <class T>
const HostCsr<T>& host_poisson(std::int64_t n) {
  static HostCsr<T> held;
  if (held.n != n) {
    held = HostCsr<T>{};
    held = poisson_2d<T>(n);
  }
  return held;
}

// The comparison before timing. Every output is at most 5 products of |a| <= 4 and |x| < 1, so any
// summation order, with or without FMA, lands within a few units in the last place of the largest
// output (about 8): 1e-12 (double) and 1e-5 (float) relative to it leave wide room and still catch
// a wrong row, column or stride.
template <class T>
double sparse_tolerance() {
  return sizeof(T) == 8 ? 1e-12 : 1e-5;
}

// Throws (the case fails, and the smoke run with it) unless `got` is Y = A X, computed here in
// double from the host matrix (X row-major, k columns), within sparse_tolerance of the largest
// output: the check of the cases that have no peer computed beside them (the GPU's).
template <class T>
void expect_product(const std::string& what, const T* got, const HostCsr<T>& a, const T* x, std::int64_t k) {
  const std::int64_t n = a.rows * k;
  std::vector<double> want(static_cast<std::size_t>(n));
  const std::int32_t* p = a.indptr.data();
  const std::int32_t* col = a.indices.data();
  const T* val = a.values.data();
  double* w = want.data();
#if defined(_OPENMP)
#pragma omp parallel for schedule(static)
#endif
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t c = 0; c < k; ++c) {
      double s = 0;
      for (std::int64_t j = p[i]; j < p[i + 1]; ++j)
        s += static_cast<double>(val[j]) * static_cast<double>(x[static_cast<std::int64_t>(col[j]) * k + c]);
      w[i * k + c] = s;
    }
  double scale = 0, worst = 0;
  std::int64_t where = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    scale = std::max(scale, std::fabs(w[i]));
    const double d = std::fabs(static_cast<double>(got[i]) - w[i]);
    if (!(d <= worst)) {  // NaN counts as the worst
      worst = d;
      where = i;
    }
  }
  if (!(worst <= sparse_tolerance<T>() * scale))
    throw std::runtime_error(what + ": output " + std::to_string(where) + " differs from A x by " +
                             std::to_string(worst) + " (tolerance " + std::to_string(sparse_tolerance<T>() * scale) +
                             ")");
}

}  // namespace porta_bench_sparse

namespace porta_bench {
// Registration of the CPU cases (sparse_cpu.cpp).
void register_cpu_sparse();
}  // namespace porta_bench
