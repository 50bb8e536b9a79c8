// SPDX-License-Identifier: Apache-2.0
// Dense linear algebra: solve, inv, cholesky, qr, eigh and svd of float and double matrices on any
// device, with numpy.linalg's names, shapes and conventions (a stack of matrices is one call). The
// vendor's solver library does the work: LAPACK on the CPU (the one OpenBLAS carries), cuSOLVER on
// CUDA devices; a device whose backend has none (HIP without rocSOLVER) runs the call on the CPU and
// copies the results back (docs/linalg.md).
//
//   auto x = porta::linalg::solve(A, b);            // A x = b, A n x n, b of n (or n x k)
//   auto L = porta::linalg::cholesky(S);            // S = L L^T, L lower triangular
//   auto [w, V] = porta::linalg::eigh(S);           // S V = V diag(w), w ascending
//   auto [U, s, Vh] = porta::linalg::svd(M, false); // M = U diag(s) Vh, s descending
//
// A matrix the factorisation cannot take (singular, not positive definite, no convergence) is a
// porta::LinAlgError naming the matrix. Results come from the vendor's routines, in their order:
// they agree with NumPy to rounding, not bit for bit across devices (docs/determinism.md).
#pragma once

#include <type_traits>

#include "porta/array.hpp"
#include "porta/error.hpp"
#include "porta/stream.hpp"

namespace porta::linalg {

// A = Q R in numpy.linalg.qr's "reduced" mode: for (..., m, n) A and p = min(m, n), Q is (..., m, p)
// with orthonormal columns and R (..., p, n) upper triangular (Householder, LAPACK's signs).
template <class T>
struct QR {
  Array<T> Q, R;
};
// Eigenvalues ascending and the eigenvectors as the columns of a matrix, as numpy.linalg.eigh.
template <class T>
struct Eigh {
  Array<T> eigenvalues, eigenvectors;
};
// A = U diag(S) Vh with S descending, as numpy.linalg.svd.
template <class T>
struct SVD {
  Array<T> U, S, Vh;
};

}  // namespace porta::linalg

namespace porta::detail {
template <class T>
constexpr void check_linalg_type() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "porta::linalg takes float or double matrices");
}
template <class T>
Array<T> linalg_solve(const Array<T>& a, const Array<T>& b, const Stream& stream);
template <class T>
Array<T> linalg_inv(const Array<T>& a, const Stream& stream);
template <class T>
Array<T> linalg_cholesky(const Array<T>& a, const Stream& stream);
template <class T>
linalg::QR<T> linalg_qr(const Array<T>& a, const Stream& stream);
template <class T>
linalg::Eigh<T> linalg_eigh(const Array<T>& a, const Stream& stream);
template <class T>
linalg::SVD<T> linalg_svd(const Array<T>& a, bool full_matrices, const Stream& stream);
}  // namespace porta::detail

namespace porta::linalg {

// Matrices are the last two axes of an array of rank 2 to 4; the axes before them make a batch
// (numpy.linalg's "stacks"), solved in one call. Arrays may be strided views.

// X with A X = B, by LU with partial pivoting (LAPACK's gesv). A is (..., n, n); B is a vector of
// n (A 2-D) or (..., n, k) with A's batch axes. A singular matrix (an exactly zero pivot) is a
// LinAlgError; a nearly singular one is solved, as NumPy does.
template <class T>
Array<T> solve(const Array<T>& a, const Array<T>& b, const Stream& stream = Stream()) {
  porta::detail::check_linalg_type<T>();
  return porta::detail::linalg_solve(a, b, stream);
}

// A^-1 for (..., n, n) A (solve with the identity).
template <class T>
Array<T> inv(const Array<T>& a, const Stream& stream = Stream()) {
  porta::detail::check_linalg_type<T>();
  return porta::detail::linalg_inv(a, stream);
}

// The lower-triangular L with A = L L^T for a symmetric positive definite (..., n, n) A, whose
// lower triangle alone is read (numpy.linalg.cholesky). Not positive definite: a LinAlgError.
template <class T>
Array<T> cholesky(const Array<T>& a, const Stream& stream = Stream()) {
  porta::detail::check_linalg_type<T>();
  return porta::detail::linalg_cholesky(a, stream);
}

// Q and R of (..., m, n) A (the QR struct above).
template <class T>
QR<T> qr(const Array<T>& a, const Stream& stream = Stream()) {
  porta::detail::check_linalg_type<T>();
  return porta::detail::linalg_qr(a, stream);
}

// For a symmetric (..., n, n) A whose lower triangle alone is read: eigenvalues (..., n) and
// eigenvectors (..., n, n). No convergence: a LinAlgError.
template <class T>
Eigh<T> eigh(const Array<T>& a, const Stream& stream = Stream()) {
  porta::detail::check_linalg_type<T>();
  return porta::detail::linalg_eigh(a, stream);
}

// For (..., m, n) A and p = min(m, n): S (..., p); with full_matrices (NumPy's default) U is
// (..., m, m) and Vh (..., n, n), else U (..., m, p) and Vh (..., p, n). No convergence: a
// LinAlgError.
template <class T>
SVD<T> svd(const Array<T>& a, bool full_matrices = true, const Stream& stream = Stream()) {
  porta::detail::check_linalg_type<T>();
  return porta::detail::linalg_svd(a, full_matrices, stream);
}

}  // namespace porta::linalg
