// SPDX-License-Identifier: Apache-2.0
// Sparse matrices: porta::sparse::Csr, a compressed-sparse-row matrix on any device, and its
// products with dense vectors and matrices. cuSPARSE on CUDA devices; porta's own row-ordered
// kernel on the CPU, on HIP and wherever Algorithm::own is asked for, which gives the same bits on
// every device and thread count (docs/sparse.md).
//
//   // the 1-D Laplacian tridiag(-1, 2, -1), as scipy.sparse.csr_matrix((data, indices, indptr))
//   auto A = porta::sparse::Csr<double>::from_host(3, 3, {0, 2, 5, 7}, {0, 1, 0, 1, 2, 1, 2},
//                                                  {2, -1, -1, 2, -1, -1, 2}, dev);
//   porta::Array<double> y = porta::sparse::matmul(A, x);    // y = A x
//   porta::sparse::spmm(0.5, A, x, 1.0, y);                  // y = 0.5 A x + y
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "porta/array.hpp"
#include "porta/device.hpp"
#include "porta/stream.hpp"

namespace porta::sparse {

enum class Algorithm {
  vendor,  // cuSPARSE on CUDA devices (its own summation order); porta's kernel elsewhere
  own      // porta's kernel everywhere: each row's products summed in storage order, no FMA, so the
           // same bits on every device, thread count and run (docs/determinism.md)
};
struct Options {
  Algorithm algorithm = Algorithm::vendor;
};

// A rows x cols matrix in zero-based CSR form: indptr (rows + 1 offsets), indices (the column of
// each stored entry) and values, as scipy.sparse.csr_matrix and cupyx.scipy.sparse.csr_matrix keep
// them. I is the index type (std::int32_t, as SciPy and cuSPARSE use by default, or std::int64_t
// for more than 2^31 - 1 entries). Duplicate entries are allowed and add up, as in SciPy; the
// entries of a row need not be sorted, but products sum them in storage order.
//
// A Csr owns its three arrays and moves, as Array does; the factories validate the structure once,
// so the products trust it.
template <class T, class I = std::int32_t>
class Csr {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "porta::sparse::Csr holds float or double");
  static_assert(std::is_same_v<I, std::int32_t> || std::is_same_v<I, std::int64_t>,
                "porta::sparse::Csr indices are std::int32_t or std::int64_t");

 public:
  using value_type = T;
  using index_type = I;

  Csr() = default;

  // From CSR arrays on the host, copied to `device`. InvalidArgument, naming the first offending
  // position, unless indptr has rows + 1 non-decreasing offsets from 0 to values.size(), indices
  // has as many entries as values and each is in [0, cols).
  static Csr from_host(std::int64_t rows, std::int64_t cols, const std::vector<I>& indptr,
                       const std::vector<I>& indices, const std::vector<T>& values, Device device = default_device());

  // From coordinates (scipy.sparse.coo_matrix((values, (row, col))).tocsr()): entries ordered by
  // row, then column; duplicates of one (row, col) are summed, in their input order, into one entry.
  static Csr from_coo(std::int64_t rows, std::int64_t cols, const std::vector<I>& row, const std::vector<I>& col,
                      const std::vector<T>& values, Device device = default_device());

  // From CSR arrays already on one device (DLPack, another library's matrix): the structure is
  // copied to the host once and validated as from_host does; the arrays are taken, not copied
  // (pass x.contiguous() to keep x and share its memory).
  static Csr from_arrays(std::int64_t rows, std::int64_t cols, Array<I> indptr, Array<I> indices, Array<T> values);

  std::int64_t rows() const noexcept { return rows_; }
  std::int64_t cols() const noexcept { return cols_; }
  std::int64_t nnz() const noexcept { return values_.valid() ? values_.size() : 0; }
  bool valid() const noexcept { return indptr_.valid(); }
  Device device() const { return indptr_.device(); }
  const Array<I>& indptr() const noexcept { return indptr_; }
  const Array<I>& indices() const noexcept { return indices_; }
  const Array<T>& values() const noexcept { return values_; }

  // The dense rows x cols matrix, duplicates summed in storage order (built on the host).
  Array<T> to_dense(const Stream& stream = Stream()) const;
  // A^T as a new CSR matrix (A's CSC form): the entries of each of its rows in A's row order, so
  // products with it sum in a documented order too. Built on the host in O(rows + cols + nnz); keep
  // it when it is applied more than once.
  Csr transpose(const Stream& stream = Stream()) const;

 private:
  Csr(std::int64_t rows, std::int64_t cols, Array<I> indptr, Array<I> indices, Array<T> values)
      : rows_(rows),
        cols_(cols),
        indptr_(std::move(indptr)),
        indices_(std::move(indices)),
        values_(std::move(values)) {}

  std::int64_t rows_ = 0, cols_ = 0;
  Array<I> indptr_;
  Array<I> indices_;
  Array<T> values_;
};

// A x for a vector x of A.cols() elements (a vector of A.rows()), or A X for a matrix X of
// A.cols() x k rows (A.rows() x k): scipy's A @ x. x may be a view with unit stride along its last
// axis; any other view is copied first.
template <class T, class I>
Array<T> matmul(const Csr<T, I>& a, const Array<T>& x, const Options& options = {}, const Stream& stream = Stream());

// Y = alpha * A * X + beta * Y in place, X and Y vectors (or matrices with k columns) as matmul takes
// them. beta == 0 overwrites Y (a NaN in Y does not propagate); alpha == 0 reads neither A nor X
// (Y = beta * Y, BLAS's rule). Y must be contiguous and must not be X.
template <class T, class I>
void spmm(T alpha, const Csr<T, I>& a, const Array<T>& x, T beta, Array<T>& y, const Options& options = {},
          const Stream& stream = Stream());

}  // namespace porta::sparse
