// SPDX-License-Identifier: Apache-2.0
// matmul, gemm and transpose of the front end (row-major; the backends call cuBLAS, rocBLAS, a
// CPU BLAS or porta's own tiled kernel).
#include <algorithm>
#include <cstdint>
#include <string>

#include "algorithms/common.hpp"
#include "algorithms/strided.hpp"
#include "porta/algorithms.hpp"

namespace porta {
namespace detail {
namespace {

std::uint32_t gemm_flags(const MatmulOptions& o) {
  std::uint32_t f = 0;
  if (o.precision == Precision::tf32) f |= PORTA_GEMM_ALLOW_TF32;
  if (o.algorithm == GemmAlgorithm::own) f |= PORTA_GEMM_OWN_KERNEL;
  return f;
}

void require_2d(const char* fn, const ArgRef& a) {
  if (a.shape->rank() == 2) return;
  throw_invalid(fn, (std::string(a.name) + " must be 2-D (" + a.name + " is " + a.shape->to_string() + ")").c_str());
}

// "A is 3x4" or, transposed, "A^T is 4x3".
std::string op_text(const char* name, bool trans, std::int64_t rows, std::int64_t cols) {
  return std::string(name) + (trans ? "^T" : "") + " is " + std::to_string(rows) + "x" + std::to_string(cols);
}

}  // namespace
}  // namespace detail

namespace detail {
namespace {

// A 2-D operand as BLAS takes it: row-major rows x cols with leading dimension ld, or (trans) the
// transpose of a row-major cols x rows with leading dimension ld. Views whose rows or columns are
// contiguous (row blocks, column blocks, transposed views) pass without a copy; any other view is
// copied to contiguous memory first (`copy` keeps it alive).
template <class T>
struct MatOperand {
  const T* p = nullptr;
  bool trans = false;
  std::int64_t ld = 0;
  Array<T> copy;
};

template <class T>
MatOperand<T> mat_operand(const Array<T>& a, const Stream& stream) {
  const std::int64_t rows = a.dim(0), cols = a.dim(1), s0 = a.stride(0), s1 = a.stride(1);
  MatOperand<T> o;
  o.p = a.data();
  if ((cols <= 1 || s1 == 1) && (rows <= 1 || s0 >= cols)) {
    o.ld = rows <= 1 ? std::max<std::int64_t>(cols, 1) : std::max<std::int64_t>(s0, 1);
    return o;
  }
  if ((rows <= 1 || s0 == 1) && (cols <= 1 || s1 >= rows)) {
    o.trans = true;
    o.ld = cols <= 1 ? std::max<std::int64_t>(rows, 1) : std::max<std::int64_t>(s1, 1);
    return o;
  }
  o.copy = a.contiguous(stream);
  o.p = o.copy.data();
  o.ld = std::max<std::int64_t>(cols, 1);
  return o;
}

// A 1-D operand as a BLAS vector: a pointer and a positive increment (a copy otherwise).
template <class T>
struct VecOperand {
  const T* p = nullptr;
  std::int64_t inc = 1;
  Array<T> copy;
};

template <class T>
VecOperand<T> vec_operand(const Array<T>& x, const Stream& stream) {
  VecOperand<T> v;
  v.p = x.data();
  if (x.dim(0) <= 1 || x.stride(0) >= 1) {
    v.inc = x.dim(0) <= 1 ? 1 : x.stride(0);
    return v;
  }
  v.copy = x.contiguous(stream);  // a broadcast (stride 0) or reversed (negative stride) view
  v.p = v.copy.data();
  return v;
}

}  // namespace
}  // namespace detail

template <class T>
Array<T> matmul(const Array<T>& a, const Array<T>& b, const MatmulOptions& options, const Stream& stream) {
  constexpr const char* fn = "porta::matmul";
  // Views are handled below (mat_operand, vec_operand): strided operands are accepted.
  const detail::ArgRef ra = detail::arg_strided("A", a), rb = detail::arg_strided("B", b);
  const Device dev = detail::check_args(fn, {ra, rb});
  const int rank_a = a.rank(), rank_b = b.rank();
  if (rank_a < 1 || rank_a > 2 || rank_b < 1 || rank_b > 2 || (rank_a == 1 && rank_b == 1))
    detail::throw_invalid(fn, ("takes a matrix and a matrix, a matrix and a vector, or a vector and a matrix (A is " +
                               a.shape().to_string() + ", B is " + b.shape().to_string() + ")" +
                               (rank_a == 1 && rank_b == 1 ? "; for two vectors use porta::dot" : ""))
                                  .c_str());
  // Matrix x vector (gemv): A is m x k, B is k. Vector x matrix: A is k, B is k x n.
  const std::int64_t m = rank_a == 2 ? a.dim(0) : 1, k = rank_a == 2 ? a.dim(1) : a.dim(0);
  const std::int64_t kb = b.dim(0), n = rank_b == 2 ? b.dim(1) : 1;
  if (kb != k)
    detail::throw_invalid(
        fn,
        ("inner dimensions differ (A is " + a.shape().to_string() + ", B is " + b.shape().to_string() + ")").c_str());
  const detail::BackendCall c = detail::make_call(fn, dev, stream);
  if (n > 0 && m > INT64_MAX / n)
    detail::throw_invalid(
        fn,
        ("the result, " + std::to_string(m) + "x" + std::to_string(n) + ", has more than 2^63 - 1 elements").c_str());
  const Shape out_shape = rank_a == 1 ? Shape{n} : (rank_b == 1 ? Shape{m} : Shape{m, n});
  Array<T> out = detail::new_output<T>(fn, out_shape, dev, stream);
  if (m == 0 || n == 0) return out;
  const porta_dtype dt = detail::dtype_of<T>();
  if (k == 0) {  // an empty sum: zeros, without asking BLAS about k == 0
    c.run(c.table->fill, dt, m * n, detail::to_scalar(T(0)), out.data(), c.stream);
    return out;
  }
  const porta_scalar one = detail::to_scalar(T(1)), zero = detail::to_scalar(T(0));
  const std::uint32_t flags = detail::gemm_flags(options);
  if (rank_a == 2 && rank_b == 2) {
    const detail::MatOperand<T> oa = detail::mat_operand(a, stream), ob = detail::mat_operand(b, stream);
    c.run(c.table->gemm, dt, oa.trans, ob.trans, m, n, k, one, oa.p, oa.ld, ob.p, ob.ld, zero, out.data(), n, flags,
          c.stream);
  } else if (rank_b == 1) {  // y = A x: gemm with n == 1, which every backend runs as a gemv
    const detail::MatOperand<T> oa = detail::mat_operand(a, stream);
    const detail::VecOperand<T> x = detail::vec_operand(b, stream);
    c.run(c.table->gemm, dt, oa.trans, 0, m, 1, k, one, oa.p, oa.ld, x.p, x.inc, zero, out.data(), 1, flags, c.stream);
  } else {  // y = x B = B^T x: the same gemv shape with B transposed
    const detail::MatOperand<T> ob = detail::mat_operand(b, stream);
    const detail::VecOperand<T> x = detail::vec_operand(a, stream);
    c.run(c.table->gemm, dt, ob.trans ? 0 : 1, 0, n, 1, k, one, ob.p, ob.ld, x.p, x.inc, zero, out.data(), 1, flags,
          c.stream);
  }
  return out;
}

template <class T>
void gemm(T alpha, const Array<T>& a, bool trans_a, const Array<T>& b, bool trans_b, T beta, Array<T>& cm,
          const MatmulOptions& options, const Stream& stream) {
  constexpr const char* fn = "porta::gemm";
  const detail::ArgRef ra = detail::arg("A", a), rb = detail::arg("B", b), rc = detail::arg("C", cm);
  const Device dev = detail::check_args(fn, {ra, rb, rc});
  detail::require_2d(fn, ra);
  detail::require_2d(fn, rb);
  detail::require_2d(fn, rc);
  const std::int64_t m = trans_a ? a.dim(1) : a.dim(0), k = trans_a ? a.dim(0) : a.dim(1);
  const std::int64_t kb = trans_b ? b.dim(1) : b.dim(0), n = trans_b ? b.dim(0) : b.dim(1);
  if (kb != k)
    detail::throw_invalid(fn, ("inner dimensions differ (" + detail::op_text("A", trans_a, m, k) + ", " +
                               detail::op_text("B", trans_b, kb, n) + ")")
                                  .c_str());
  if (cm.dim(0) != m || cm.dim(1) != n)
    detail::throw_invalid(
        fn, ("C is " + cm.shape().to_string() + ", expected " + std::to_string(m) + "x" + std::to_string(n) + " (" +
             detail::op_text("A", trans_a, m, k) + ", " + detail::op_text("B", trans_b, kb, n) + ")")
                .c_str());
  const detail::BackendCall c = detail::make_call(fn, dev, stream);
  if (m == 0 || n == 0) return;
  const porta_dtype dt = detail::dtype_of<T>();
  // C = beta * C when there is nothing to add: k == 0 (an empty sum), or alpha == 0, where BLAS's
  // rule is that A and B are not read (a NaN in them does not reach C) -- done here, once, so that
  // every backend and every BLAS follows it. beta == 0 overwrites C (a NaN in C does not propagate).
  if (k == 0 || alpha == T(0)) {
    if (beta == T(0)) {
      c.run(c.table->fill, dt, m * n, detail::to_scalar(T(0)), cm.data(), c.stream);
    } else {
      c.run(c.table->binary_scalar, PORTA_BINARY_MUL, dt, m * n, cm.data(), detail::to_scalar(beta), 0, cm.data(),
            c.stream);
    }
    return;
  }
  const std::int64_t lda = a.dim(1), ldb = b.dim(1), ldc = n;
  const std::uint32_t flags = detail::gemm_flags(options);
  // BLAS leaves an output that overlaps an input undefined: compute into a temporary then.
  if (cm.data() == a.data() || cm.data() == b.data()) {
    Array<T> tmp = detail::new_output<T>(fn, cm.shape(), dev, stream);
    if (beta != T(0)) detail::copy_between(dev, tmp.data(), dev, cm.data(), cm.nbytes(), c.stream);
    c.run(c.table->gemm, dt, trans_a ? 1 : 0, trans_b ? 1 : 0, m, n, k, detail::to_scalar(alpha), a.data(), lda,
          b.data(), ldb, detail::to_scalar(beta), tmp.data(), ldc, flags, c.stream);
    detail::copy_between(dev, cm.data(), dev, tmp.data(), cm.nbytes(), c.stream);
    return;
  }
  c.run(c.table->gemm, dt, trans_a ? 1 : 0, trans_b ? 1 : 0, m, n, k, detail::to_scalar(alpha), a.data(), lda, b.data(),
        ldb, detail::to_scalar(beta), cm.data(), ldc, flags, c.stream);
}

template <class T>
Array<T> transpose(const Array<T>& x, const Stream& stream) {
  constexpr const char* fn = "porta::transpose";
  const detail::ArgRef rx = detail::arg("x", x);
  const Device dev = detail::check_args(fn, {rx});
  detail::require_2d(fn, rx);
  (void)detail::make_call(fn, dev, stream);  // the stream's checks, also for an empty x
  return detail::swap_last_axes(fn, x, stream);
}

#define PORTA_INSTANTIATE_MATMUL(T)                                                                          \
  template Array<T> matmul<T>(const Array<T>&, const Array<T>&, const MatmulOptions&, const Stream&);        \
  template void gemm<T>(T, const Array<T>&, bool, const Array<T>&, bool, T, Array<T>&, const MatmulOptions&, \
                        const Stream&);                                                                      \
  template Array<T> transpose<T>(const Array<T>&, const Stream&);
PORTA_FOR_EACH_DTYPE(PORTA_INSTANTIATE_MATMUL)

}  // namespace porta
