// SPDX-License-Identifier: Apache-2.0
// porta::sparse: the CSR matrix's factories and conversions (on the host: they run once per
// matrix) and its products (the backends' spmm entry).
#include "porta/sparse.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "algorithms/common.hpp"
#include "porta/detail/rounding.hpp"

namespace porta::sparse {
namespace detail {
namespace {

using porta::detail::throw_invalid;

std::string num(std::int64_t v) {
  return std::to_string(v);
}

void check_dims(const char* fn, std::int64_t rows, std::int64_t cols) {
  if (rows < 0 || cols < 0) throw_invalid(fn, ("negative shape " + num(rows) + "x" + num(cols)).c_str());
}

// The structure scipy.sparse accepts, with the first offending position named.
template <class I>
void validate(const char* fn, std::int64_t rows, std::int64_t cols, const I* indptr, std::size_t indptr_size,
              const I* indices, std::size_t nnz, std::size_t values_size) {
  check_dims(fn, rows, cols);
  if (indptr_size != static_cast<std::size_t>(rows) + 1)
    throw_invalid(fn, ("indptr has " + num(static_cast<std::int64_t>(indptr_size)) +
                       " offsets, expected rows + 1 = " + num(rows + 1))
                          .c_str());
  if (nnz != values_size)
    throw_invalid(fn, ("indices has " + num(static_cast<std::int64_t>(nnz)) + " entries and values " +
                       num(static_cast<std::int64_t>(values_size)) + "; they must match")
                          .c_str());
  if (indptr[0] != 0) throw_invalid(fn, ("indptr[0] is " + num(indptr[0]) + ", expected 0").c_str());
  for (std::int64_t r = 0; r < rows; ++r)
    if (indptr[r + 1] < indptr[r])
      throw_invalid(fn, ("indptr decreases at row " + num(r) + " (indptr[" + num(r) + "] = " + num(indptr[r]) +
                         ", indptr[" + num(r + 1) + "] = " + num(indptr[r + 1]) + ")")
                            .c_str());
  if (static_cast<std::uint64_t>(indptr[rows]) != nnz)
    throw_invalid(fn, ("indptr ends at " + num(indptr[rows]) + ", but there are " +
                       num(static_cast<std::int64_t>(nnz)) + " stored entries")
                          .c_str());
  for (std::size_t j = 0; j < nnz; ++j)
    if (indices[j] < 0 || indices[j] >= cols)
      throw_invalid(fn, ("indices[" + num(static_cast<std::int64_t>(j)) + "] = " + num(indices[j]) +
                         " is outside the " + num(cols) + " columns")
                            .c_str());
}

template <class I>
void check_index_range(const char* fn, std::int64_t rows, std::int64_t cols, std::size_t nnz) {
  const auto most = static_cast<std::uint64_t>(std::numeric_limits<I>::max());
  if (static_cast<std::uint64_t>(rows) > most || static_cast<std::uint64_t>(cols) > most ||
      static_cast<std::uint64_t>(nnz) > most)
    throw_invalid(fn, ("a " + num(rows) + "x" + num(cols) + " matrix with " + num(static_cast<std::int64_t>(nnz)) +
                       " entries does not fit 32-bit indices: use porta::sparse::Csr<T, std::int64_t>")
                          .c_str());
}

template <class T>
Array<T> upload(const std::vector<T>& v, Device dev) {
  Array<T> a(Shape{static_cast<std::int64_t>(v.size())}, dev);
  if (!v.empty()) a.copy_from_host(v.data());
  return a;
}

}  // namespace
}  // namespace detail

template <class T, class I>
Csr<T, I> Csr<T, I>::from_host(std::int64_t rows, std::int64_t cols, const std::vector<I>& indptr,
                               const std::vector<I>& indices, const std::vector<T>& values, Device device) {
  constexpr const char* fn = "porta::sparse::Csr::from_host";
  detail::check_dims(fn, rows, cols);
  detail::check_index_range<I>(fn, rows, cols, values.size());
  detail::validate(fn, rows, cols, indptr.data(), indptr.size(), indices.data(), indices.size(), values.size());
  return Csr(rows, cols, detail::upload(indptr, device), detail::upload(indices, device),
             detail::upload(values, device));
}

template <class T, class I>
Csr<T, I> Csr<T, I>::from_coo(std::int64_t rows, std::int64_t cols, const std::vector<I>& row,
                              const std::vector<I>& col, const std::vector<T>& values, Device device) {
  constexpr const char* fn = "porta::sparse::Csr::from_coo";
  detail::check_dims(fn, rows, cols);
  if (row.size() != values.size() || col.size() != values.size())
    porta::detail::throw_invalid(
        fn, ("row, col and values have " + detail::num(static_cast<std::int64_t>(row.size())) + ", " +
             detail::num(static_cast<std::int64_t>(col.size())) + " and " +
             detail::num(static_cast<std::int64_t>(values.size())) + " entries; they must match")
                .c_str());
  detail::check_index_range<I>(fn, rows, cols, values.size());
  const std::size_t n = values.size();
  for (std::size_t e = 0; e < n; ++e)
    if (row[e] < 0 || row[e] >= rows || col[e] < 0 || col[e] >= cols)
      porta::detail::throw_invalid(
          fn, ("entry " + detail::num(static_cast<std::int64_t>(e)) + " at (" + detail::num(row[e]) + ", " +
               detail::num(col[e]) + ") is outside the " + detail::num(rows) + "x" + detail::num(cols) + " matrix")
                  .c_str());
  // A stable sort by (row, col) keeps duplicates in input order, so their sum has one order.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return row[a] != row[b] ? row[a] < row[b] : col[a] < col[b]; });
  std::vector<I> indptr(static_cast<std::size_t>(rows) + 1, I(0)), indices;
  std::vector<T> vals;
  indices.reserve(n);
  vals.reserve(n);
  for (std::size_t p = 0; p < n; ++p) {
    const std::size_t e = order[p];
    if (p > 0 && row[e] == row[order[p - 1]] && col[e] == col[order[p - 1]]) {
      vals.back() = porta::detail::canonical_nan(porta::detail::add_rn(vals.back(), values[e]));
      continue;
    }
    indices.push_back(col[e]);
    vals.push_back(values[e]);
    ++indptr[static_cast<std::size_t>(row[e]) + 1];
  }
  for (std::int64_t r = 0; r < rows; ++r) indptr[r + 1] += indptr[r];
  return Csr(rows, cols, detail::upload(indptr, device), detail::upload(indices, device), detail::upload(vals, device));
}

template <class T, class I>
Csr<T, I> Csr<T, I>::from_arrays(std::int64_t rows, std::int64_t cols, Array<I> indptr, Array<I> indices,
                                 Array<T> values) {
  constexpr const char* fn = "porta::sparse::Csr::from_arrays";
  const porta::detail::ArgRef rp = porta::detail::arg("indptr", indptr), ri = porta::detail::arg("indices", indices),
                              rv = porta::detail::arg("values", values);
  (void)porta::detail::check_args(fn, {rp, ri, rv});
  if (indptr.rank() != 1 || indices.rank() != 1 || values.rank() != 1)
    porta::detail::throw_invalid(fn, ("indptr, indices and values must be 1-D (they are " + indptr.shape().to_string() +
                                      ", " + indices.shape().to_string() + ", " + values.shape().to_string() + ")")
                                         .c_str());
  detail::check_dims(fn, rows, cols);
  detail::check_index_range<I>(fn, rows, cols, static_cast<std::size_t>(values.size()));
  const std::vector<I> p = indptr.to_vector(), ix = indices.to_vector();
  detail::validate(fn, rows, cols, p.data(), p.size(), ix.data(), ix.size(), static_cast<std::size_t>(values.size()));
  return Csr(rows, cols, std::move(indptr), std::move(indices), std::move(values));
}

template <class T, class I>
Array<T> Csr<T, I>::to_dense(const Stream& stream) const {
  constexpr const char* fn = "porta::sparse::Csr::to_dense";
  if (!valid()) porta::detail::throw_moved_from(fn);
  Array<T> out = porta::detail::new_output<T>(fn, Shape{rows_, cols_}, device(), stream);
  const std::vector<I> p = indptr_.to_vector(stream), ix = indices_.to_vector(stream);
  const std::vector<T> v = values_.to_vector(stream);
  std::vector<T> dense(static_cast<std::size_t>(rows_ * cols_), T(0));
  std::vector<char> seen(dense.size(), 0);
  for (std::int64_t r = 0; r < rows_; ++r)
    for (std::int64_t j = p[r]; j < static_cast<std::int64_t>(p[r + 1]); ++j) {
      const std::size_t at = static_cast<std::size_t>(r * cols_ + ix[j]);
      dense[at] = seen[at] ? porta::detail::canonical_nan(porta::detail::add_rn(dense[at], v[j])) : v[j];
      seen[at] = 1;
    }
  if (!dense.empty()) out.copy_from_host(dense.data(), stream);
  return out;
}

template <class T, class I>
Csr<T, I> Csr<T, I>::transpose(const Stream& stream) const {
  constexpr const char* fn = "porta::sparse::Csr::transpose";
  if (!valid()) porta::detail::throw_moved_from(fn);
  const std::vector<I> p = indptr_.to_vector(stream), ix = indices_.to_vector(stream);
  const std::vector<T> v = values_.to_vector(stream);
  // A counting sort by column: walking A's rows in order puts each column's entries in row order.
  std::vector<I> tp(static_cast<std::size_t>(cols_) + 1, I(0));
  for (const I c : ix) ++tp[static_cast<std::size_t>(c) + 1];
  for (std::int64_t c = 0; c < cols_; ++c) tp[c + 1] += tp[c];
  std::vector<I> next(tp.begin(), tp.end() - 1), ti(ix.size());
  std::vector<T> tv(v.size());
  for (std::int64_t r = 0; r < rows_; ++r)
    for (std::int64_t j = p[r]; j < static_cast<std::int64_t>(p[r + 1]); ++j) {
      const auto at = static_cast<std::size_t>(next[static_cast<std::size_t>(ix[j])]++);
      ti[at] = static_cast<I>(r);
      tv[at] = v[j];
    }
  return Csr(cols_, rows_, detail::upload(tp, device()), detail::upload(ti, device()), detail::upload(tv, device()));
}

namespace detail {
namespace {

// X or Y as the spmm entry takes it: a pointer, k columns and a row stride. A 1-D array is one
// column with its own stride (positive); a 2-D one needs unit column stride. `copy` holds a
// contiguous copy of any other view.
template <class T>
struct DenseOperand {
  const T* p = nullptr;
  std::int64_t k = 1, ld = 1;
  Array<T> copy;
};

template <class T>
DenseOperand<T> dense_operand(const Array<T>& x, const Stream& stream) {
  DenseOperand<T> o;
  o.p = x.data();
  if (x.rank() == 1) {
    if (x.dim(0) <= 1 || x.stride(0) >= 1) {
      o.ld = x.dim(0) <= 1 ? 1 : x.stride(0);
      return o;
    }
  } else {
    o.k = x.dim(1);
    if ((o.k <= 1 || x.stride(1) == 1) && (x.dim(0) <= 1 || x.stride(0) >= o.k)) {
      o.ld = x.dim(0) <= 1 ? std::max<std::int64_t>(o.k, 1) : x.stride(0);
      return o;
    }
  }
  o.copy = x.contiguous(stream);
  o.p = o.copy.data();
  o.ld = x.rank() == 1 ? 1 : std::max<std::int64_t>(o.k, 1);
  return o;
}

template <class T, class I>
Device check_product(const char* fn, const Csr<T, I>& a, const Array<T>& x, const char* x_name) {
  if (!a.valid()) porta::detail::throw_invalid(fn, "the sparse matrix A was moved from (or default-constructed)");
  const porta::detail::ArgRef rx = porta::detail::arg_strided(x_name, x);
  const porta::detail::ArgRef ra = porta::detail::arg_strided("A", a.values());
  const Device dev = porta::detail::check_args(fn, {ra, rx});
  if (x.rank() < 1 || x.rank() > 2 || x.dim(0) != a.cols())
    porta::detail::throw_invalid(fn, (std::string("A is ") + num(a.rows()) + "x" + num(a.cols()) + ", so " + x_name +
                                      " must be a vector of " + num(a.cols()) + " or a matrix of " + num(a.cols()) +
                                      " rows (" + x_name + " is " + x.shape().to_string() + ")")
                                         .c_str());
  return dev;
}

template <class T, class I>
void run_spmm(const porta::detail::BackendCall& c, const Csr<T, I>& a, T alpha, const DenseOperand<T>& x, T beta, T* y,
              std::int64_t ldy, const Options& options) {
  const std::uint32_t flags = options.algorithm == Algorithm::own ? PORTA_SPARSE_OWN_KERNEL : 0u;
  c.run(c.table->spmm, porta::detail::dtype_of<T>(), porta::detail::dtype_of<I>(), a.rows(), a.cols(), a.nnz(),
        a.indptr().data(), a.indices().data(), a.values().data(), x.k, porta::detail::to_scalar(alpha), x.p, x.ld,
        porta::detail::to_scalar(beta), y, ldy, flags, c.stream);
}

}  // namespace
}  // namespace detail

template <class T, class I>
Array<T> matmul(const Csr<T, I>& a, const Array<T>& x, const Options& options, const Stream& stream) {
  constexpr const char* fn = "porta::sparse::matmul";
  const Device dev = detail::check_product(fn, a, x, "x");
  const porta::detail::BackendCall c = porta::detail::make_call(fn, dev, stream);
  const Shape out_shape = x.rank() == 1 ? Shape{a.rows()} : Shape{a.rows(), x.dim(1)};
  Array<T> out = porta::detail::new_output<T>(fn, out_shape, dev, stream);
  if (out.size() == 0) return out;
  const detail::DenseOperand<T> xo = detail::dense_operand(x, stream);
  detail::run_spmm(c, a, T(1), xo, T(0), out.data(), x.rank() == 1 ? 1 : xo.k, options);
  return out;
}

template <class T, class I>
void spmm(T alpha, const Csr<T, I>& a, const Array<T>& x, T beta, Array<T>& y, const Options& options,
          const Stream& stream) {
  constexpr const char* fn = "porta::sparse::spmm";
  const Device dev = detail::check_product(fn, a, x, "X");
  const porta::detail::ArgRef ry = porta::detail::arg("Y", y);
  (void)porta::detail::check_args(fn, {porta::detail::arg_strided("X", x), ry});
  if (y.data() == x.data() && y.size() > 0) porta::detail::throw_invalid(fn, "Y must not be X");
  const bool matrix = x.rank() == 2;
  if (y.rank() != x.rank() || y.dim(0) != a.rows() || (matrix && y.dim(1) != x.dim(1)))
    porta::detail::throw_invalid(
        fn, ("Y is " + y.shape().to_string() + ", expected " +
             (matrix ? detail::num(a.rows()) + "x" + detail::num(x.dim(1)) : detail::num(a.rows())) + " (A is " +
             detail::num(a.rows()) + "x" + detail::num(a.cols()) + ", X is " + x.shape().to_string() + ")")
                .c_str());
  const porta::detail::BackendCall c = porta::detail::make_call(fn, dev, stream);
  if (y.size() == 0) return;
  // alpha == 0 is Y = beta * Y without reading A or X (BLAS's rule, as porta::gemm), on every
  // backend; beta == 0 then writes zeros.
  if (alpha == T(0)) {
    const porta_dtype dt = porta::detail::dtype_of<T>();
    if (beta == T(0))
      c.run(c.table->fill, dt, y.size(), porta::detail::to_scalar(T(0)), y.data(), c.stream);
    else
      c.run(c.table->binary_scalar, PORTA_BINARY_MUL, dt, y.size(), y.data(), porta::detail::to_scalar(beta), 0,
            y.data(), c.stream);
    return;
  }
  const detail::DenseOperand<T> xo = detail::dense_operand(x, stream);
  detail::run_spmm(c, a, alpha, xo, beta, y.data(), matrix ? xo.k : 1, options);
}

#define PORTA_INSTANTIATE_SPARSE(T, I)                                                              \
  template class Csr<T, I>;                                                                         \
  template Array<T> matmul<T, I>(const Csr<T, I>&, const Array<T>&, const Options&, const Stream&); \
  template void spmm<T, I>(T, const Csr<T, I>&, const Array<T>&, T, Array<T>&, const Options&, const Stream&);
PORTA_INSTANTIATE_SPARSE(float, std::int32_t)
PORTA_INSTANTIATE_SPARSE(float, std::int64_t)
PORTA_INSTANTIATE_SPARSE(double, std::int32_t)
PORTA_INSTANTIATE_SPARSE(double, std::int64_t)
#undef PORTA_INSTANTIATE_SPARSE

}  // namespace porta::sparse
