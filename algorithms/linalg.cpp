// SPDX-License-Identifier: Apache-2.0
// porta::linalg: numpy.linalg's shapes and conventions over the backends' linalg entry, which
// factors column-major matrices as LAPACK and cuSOLVER do. porta's arrays are row-major, and a
// row-major matrix read column-major is its transpose: solve, cholesky and eigh take the row-major
// copy as it lies (the entry's TRANSPOSE and UPPER flags undo the transpose), the others a
// transposed copy, and results come back transposed where they must. The copies (needed anyway:
// the factorisations work in place) cost O(n^2) per matrix beside the factorisation's O(n^3).
//
// A backend without a solver library answers PORTA_ERR_UNSUPPORTED: the call then runs on the CPU
// and its results are copied back, so every device has every function.
#include "porta/linalg.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/common.hpp"
#include "algorithms/strided.hpp"

namespace porta::detail {
namespace {

std::string num(std::int64_t v) {
  return std::to_string(v);
}

// The batch axes of a stack of matrices (numpy.linalg's "...").
struct Stack {
  std::int64_t lead[Shape::kMaxRank] = {};
  int lead_rank = 0;
  std::int64_t count = 1;  // matrices in the stack
  std::int64_t rows = 0, cols = 0;
};

template <class T>
Stack stack_of(const char* fn, const char* name, const Array<T>& x) {
  if (x.rank() < 2)
    throw_invalid(fn, (std::string(name) + " must have at least 2 dimensions (it is " + x.shape().to_string() +
                       "): the matrices are its last two axes")
                          .c_str());
  Stack s;
  s.lead_rank = x.rank() - 2;
  for (int i = 0; i < s.lead_rank; ++i) {
    s.lead[i] = x.dim(i);
    s.count *= x.dim(i);
  }
  s.rows = x.dim(x.rank() - 2);
  s.cols = x.dim(x.rank() - 1);
  return s;
}

// The stack's batch axes followed by `tail` (one or two dimensions).
Shape shape_of(const Stack& s, std::initializer_list<std::int64_t> tail) {
  std::int64_t d[Shape::kMaxRank] = {};
  int r = 0;
  for (int i = 0; i < s.lead_rank; ++i) d[r++] = s.lead[i];
  for (const std::int64_t t : tail) d[r++] = t;
  return make_shape(d, r);
}

void require_square(const char* fn, const Stack& s, const Shape& shape) {
  if (s.rows != s.cols) throw_invalid(fn, ("the matrices must be square (a is " + shape.to_string() + ")").c_str());
}

// A contiguous copy of x in new memory (the entry overwrites it).
template <class T>
Array<T> fresh_copy(const char* fn, const Array<T>& x, const Stream& stream) {
  Array<T> y = new_output<T>(fn, x.shape(), x.device(), stream);
  if (y.size() > 0) y.assign(x, stream);
  return y;
}

// `count` n x n identity matrices, one after another.
template <class T>
Array<T> identities(const char* fn, const Shape& shape, std::int64_t count, std::int64_t n, Device dev,
                    const Stream& stream) {
  Array<T> y = new_output<T>(fn, shape, dev, stream);
  if (y.size() == 0) return y;
  std::vector<T> h(static_cast<std::size_t>(y.size()), T(0));
  for (std::int64_t b = 0; b < count; ++b)
    for (std::int64_t i = 0; i < n; ++i) h[static_cast<std::size_t>(b * n * n + i * n + i)] = T(1);
  y.copy_from_host(h.data(), stream);
  return y;
}

const char* what_failed(porta_linalg_op op) {
  switch (op) {
    case PORTA_LINALG_SOLVE:
      return "is singular";
    case PORTA_LINALG_CHOLESKY:
      return "is not positive definite";
    default:
      return "did not converge";
  }
}

std::string failure_detail(porta_linalg_op op, std::int32_t info) {
  switch (op) {
    case PORTA_LINALG_SOLVE:
      return "U[" + num(info - 1) + ", " + num(info - 1) + "] of its LU factors is exactly zero";
    case PORTA_LINALG_CHOLESKY:
      return "its leading minor of order " + num(info) + " is not";
    default:
      return "LAPACK info " + num(info);
  }
}

// The linalg entry over operands already in its column-major form, then the check of every
// matrix's info. a..d are replaced by the results (new arrays when the call ran on the CPU).
template <class T>
void factor(const char* fn, Device dev, const Stream& stream, porta_linalg_op op, std::int64_t count, std::int64_t m,
            std::int64_t n, std::int64_t k, Array<T>& a, Array<T>* b, Array<T>* c, Array<T>* d, std::uint32_t flags) {
  if (count == 0 || m == 0 || n == 0) return;
  const BackendCall call = make_call(fn, dev, stream);
  Array<std::int32_t> info = new_output<std::int32_t>(fn, Shape{count}, dev, stream);
  const auto ptr = [](Array<T>* x) { return x != nullptr ? static_cast<void*>(x->data()) : nullptr; };
  const porta_status st = call.status_of(call.table->linalg, op, dtype_of<T>(), count, m, n, k, a.data(), ptr(b),
                                         ptr(c), ptr(d), info.data(), flags, call.stream);
  if (st == PORTA_ERR_UNSUPPORTED && dev.type != DeviceType::cpu) {
    // No solver library on this device (or a plugin older than the entry): the CPU's LAPACK.
    (void)take_missing_entry();
    const Device host(DeviceType::cpu);
    const auto stage = [&](Array<T>* x) { return x != nullptr ? x->to(host, stream) : Array<T>(); };
    Array<T> ha = a.to(host, stream), hb = stage(b), hc = stage(c), hd = stage(d);
    factor<T>(fn, host, Stream(), op, count, m, n, k, ha, b != nullptr ? &hb : nullptr, c != nullptr ? &hc : nullptr,
              d != nullptr ? &hd : nullptr, flags);
    a = ha.to(dev, stream);
    if (b != nullptr) *b = hb.to(dev, stream);
    if (c != nullptr) *c = hc.to(dev, stream);
    if (d != nullptr) *d = hd.to(dev, stream);
    return;
  }
  call.check(st);
  const std::vector<std::int32_t> codes = info.to_vector(stream);
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int32_t code = codes[static_cast<std::size_t>(i)];
    if (code == 0) continue;
    if (code < 0)
      throw BackendError(std::string(fn) + ": the solver rejected argument " + num(-code) + " on " + dev.to_string());
    const std::string which = count == 1 ? "the matrix " : "matrix " + num(i) + " of the batch ";
    throw LinAlgError(std::string(fn) + ": " + which + what_failed(op) + " (" + failure_detail(op, code) + ")", i,
                      code);
  }
}

template <class T>
Array<T> solve_with(const char* fn, const Array<T>& a, const Array<T>* b, const Stream& stream) {
  const Device dev = b != nullptr ? check_args(fn, {arg_strided("a", a), arg_strided("b", *b)})
                                  : check_args(fn, {arg_strided("a", a)});
  const Stack s = stack_of(fn, "a", a);
  require_square(fn, s, a.shape());
  const std::int64_t n = s.rows;
  const bool vector = b != nullptr && b->rank() == 1;
  std::int64_t k = n;
  if (vector) {
    if (a.rank() != 2 || b->dim(0) != n)
      throw_invalid(fn, ("b of shape " + b->shape().to_string() + " does not match a of shape " +
                         a.shape().to_string() + " (a vector b needs a 2-D a with as many rows as b has elements)")
                            .c_str());
    k = 1;
  } else if (b != nullptr) {
    bool fits = b->rank() == a.rank() && b->dim(b->rank() - 2) == n;
    for (int i = 0; fits && i < s.lead_rank; ++i) fits = b->dim(i) == s.lead[i];
    if (!fits)
      throw_invalid(fn, ("b of shape " + b->shape().to_string() + " does not match a of shape " +
                         a.shape().to_string() + " (b must be (..., n, k) with a's batch axes, or a vector of n)")
                            .c_str());
    k = b->dim(b->rank() - 1);
  }
  // The row-major A is the column-major A^T: factored as it lies, it solves A X = B as A^T's transpose.
  Array<T> lu = fresh_copy(fn, a, stream);
  Array<T> x = b == nullptr ? identities<T>(fn, a.shape(), s.count, n, dev, stream)
               : vector     ? fresh_copy(fn, *b, stream)
                            : swap_last_axes(fn, *b, stream);
  factor<T>(fn, dev, stream, PORTA_LINALG_SOLVE, s.count, n, n, k, lu, &x, nullptr, nullptr, PORTA_LINALG_TRANSPOSE);
  // X is column-major (inv's right-hand side, the identity, is its own transpose).
  if (vector) return x;
  return swap_last_axes(fn, x, stream);
}

}  // namespace

template <class T>
Array<T> linalg_solve(const Array<T>& a, const Array<T>& b, const Stream& stream) {
  return solve_with("porta::linalg::solve", a, &b, stream);
}

template <class T>
Array<T> linalg_inv(const Array<T>& a, const Stream& stream) {
  return solve_with("porta::linalg::inv", a, static_cast<const Array<T>*>(nullptr), stream);
}

template <class T>
Array<T> linalg_cholesky(const Array<T>& a, const Stream& stream) {
  constexpr const char* fn = "porta::linalg::cholesky";
  const Device dev = check_args(fn, {arg_strided("a", a)});
  const Stack s = stack_of(fn, "a", a);
  require_square(fn, s, a.shape());
  // The row-major A read column-major is A^T: its upper triangle is A's lower one, and the U it
  // becomes (A^T = U^T U) is L^T, which read row-major is L, with zeros above the diagonal.
  Array<T> l = fresh_copy(fn, a, stream);
  factor<T>(fn, dev, stream, PORTA_LINALG_CHOLESKY, s.count, s.rows, s.rows, 0, l, nullptr, nullptr, nullptr,
            PORTA_LINALG_UPPER);
  return l;
}

template <class T>
linalg::QR<T> linalg_qr(const Array<T>& a, const Stream& stream) {
  constexpr const char* fn = "porta::linalg::qr";
  const Device dev = check_args(fn, {arg_strided("a", a)});
  const Stack s = stack_of(fn, "a", a);
  const std::int64_t m = s.rows, n = s.cols, p = std::min(m, n);
  if (p == 0)
    return linalg::QR<T>{new_output<T>(fn, shape_of(s, {m, p}), dev, stream),
                         new_output<T>(fn, shape_of(s, {p, n}), dev, stream)};
  Array<T> q = swap_last_axes(fn, a, stream);  // column-major m x n: row-major (..., n, m)
  Array<T> r = new_output<T>(fn, shape_of(s, {n, p}), dev, stream);
  factor<T>(fn, dev, stream, PORTA_LINALG_QR, s.count, m, n, 0, q, &r, nullptr, nullptr, 0u);
  // Q is the first p columns of the column-major result: its first p rows as a row-major stack.
  const Array<T> qp = q.slice(q.rank() - 2, 0, p);
  return linalg::QR<T>{swap_last_axes(fn, qp, stream), swap_last_axes(fn, r, stream)};
}

template <class T>
linalg::Eigh<T> linalg_eigh(const Array<T>& a, const Stream& stream) {
  constexpr const char* fn = "porta::linalg::eigh";
  const Device dev = check_args(fn, {arg_strided("a", a)});
  const Stack s = stack_of(fn, "a", a);
  require_square(fn, s, a.shape());
  // A's lower triangle is the upper one of the row-major buffer read column-major.
  Array<T> v = fresh_copy(fn, a, stream);
  Array<T> w = new_output<T>(fn, shape_of(s, {s.rows}), dev, stream);
  factor<T>(fn, dev, stream, PORTA_LINALG_EIGH, s.count, s.rows, s.rows, 0, v, &w, nullptr, nullptr,
            PORTA_LINALG_UPPER);
  return linalg::Eigh<T>{std::move(w), swap_last_axes(fn, v, stream)};
}

template <class T>
linalg::SVD<T> linalg_svd(const Array<T>& a, bool full_matrices, const Stream& stream) {
  constexpr const char* fn = "porta::linalg::svd";
  const Device dev = check_args(fn, {arg_strided("a", a)});
  const Stack s = stack_of(fn, "a", a);
  const std::int64_t m = s.rows, n = s.cols, p = std::min(m, n);
  const std::uint32_t flags = full_matrices ? PORTA_LINALG_SVD_FULL : 0u;
  const std::int64_t ucols = full_matrices ? m : p, vrows = full_matrices ? n : p;
  if (p == 0) {
    // NumPy's answer for an empty matrix: no singular values, and identities where U or Vh is square.
    return linalg::SVD<T>{identities<T>(fn, shape_of(s, {m, ucols}), ucols == m ? s.count : 0, m, dev, stream),
                          new_output<T>(fn, shape_of(s, {0}), dev, stream),
                          identities<T>(fn, shape_of(s, {vrows, n}), vrows == n ? s.count : 0, n, dev, stream)};
  }
  Array<T> sv = new_output<T>(fn, shape_of(s, {p}), dev, stream);
  if (m >= n) {
    // Column-major A (m x n): U comes back column-major m x ucols, Vt n x n.
    Array<T> work = swap_last_axes(fn, a, stream);
    Array<T> u = new_output<T>(fn, shape_of(s, {ucols, m}), dev, stream);
    Array<T> vt = new_output<T>(fn, shape_of(s, {n, n}), dev, stream);
    factor(fn, dev, stream, PORTA_LINALG_SVD, s.count, m, n, 0, work, &sv, &u, &vt, flags);
    return linalg::SVD<T>{swap_last_axes(fn, u, stream), std::move(sv), swap_last_axes(fn, vt, stream)};
  }
  // m < n: the row-major stack is column-major A^T (n x m, taller than wide) as it lies. From
  // A^T = U' S Vt', A = Vt'^T S U'^T: Vt' read row-major is U, and U' read row-major is Vh.
  Array<T> work = fresh_copy(fn, a, stream);
  Array<T> vh = new_output<T>(fn, shape_of(s, {vrows, n}), dev, stream);
  Array<T> u = new_output<T>(fn, shape_of(s, {m, m}), dev, stream);
  factor<T>(fn, dev, stream, PORTA_LINALG_SVD, s.count, n, m, 0, work, &sv, &vh, &u, flags);
  return linalg::SVD<T>{std::move(u), std::move(sv), std::move(vh)};
}

#define PORTA_INSTANTIATE_LINALG(T)                                                   \
  template Array<T> linalg_solve<T>(const Array<T>&, const Array<T>&, const Stream&); \
  template Array<T> linalg_inv<T>(const Array<T>&, const Stream&);                    \
  template Array<T> linalg_cholesky<T>(const Array<T>&, const Stream&);               \
  template linalg::QR<T> linalg_qr<T>(const Array<T>&, const Stream&);                \
  template linalg::Eigh<T> linalg_eigh<T>(const Array<T>&, const Stream&);            \
  template linalg::SVD<T> linalg_svd<T>(const Array<T>&, bool, const Stream&);
PORTA_INSTANTIATE_LINALG(float)
PORTA_INSTANTIATE_LINALG(double)

}  // namespace porta::detail
