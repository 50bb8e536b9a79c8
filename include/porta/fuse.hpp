// SPDX-License-Identifier: Apache-2.0
// Fused expressions: elementwise chains written with the usual operators and functions
// in plain C++ (no GPU compiler), evaluated in ONE pass over memory on every device, with exactly
// the bits of the eager chain (every op rounded to the dtype, nothing contracted into an FMA).
//
//   #include <porta/fuse.hpp>
//   auto x = porta::lazy(xa), y = porta::lazy(ya);         // expression leaves, nothing computed
//   porta::Array<float> r = porta::sin(x) * porta::cos(y) + x * y;   // one pass, one launch
//   float s = porta::sum(x * y + 1);                       // one pass into a temporary, then sum
//   r.assign(x * 2.0f - y);                                // into an existing array
//   auto e = (x + y).eval();                               // forced
//
// The eager operators are unchanged: porta::sin(xa) * ya is an Array at once. An expression
// refers to the arrays it was built from (keep them alive until it is evaluated; a temporary array
// given to it is owned by it) and reads them when it is evaluated. docs/fused.md has the limits:
// one dtype, equal shapes (no broadcasting), at most PORTA_PROGRAM_MAX_OPS ops reading at most
// PORTA_PROGRAM_MAX_INPUTS arrays.
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "porta/abi/backend_v1.h"
#include "porta/algorithms.hpp"
#include "porta/array.hpp"
#include "porta/stream.hpp"

namespace porta {

template <class T>
class Expr;

namespace detail {

// The compiled part (algorithms/fuse.cpp): checks the leaves (valid, one device, one shape) and
// the program's size, then runs the backend's map_program entry.
template <class T>
Array<T> fused_new(const char* fn, const porta_program_op* ops, std::int32_t nops, const Array<T>* const* leaves,
                   std::int32_t nleaves, const Stream& stream);
template <class T>
void fused_into(const char* fn, const porta_program_op* ops, std::int32_t nops, const Array<T>* const* leaves,
                std::int32_t nleaves, Array<T>& out, const Stream& stream);

template <class X>
struct fused_dtype {};  // no `type`: not an operand of an expression
template <class T>
struct fused_dtype<Expr<T>> {
  using type = T;
};
template <class T>
struct fused_dtype<Array<T>> {
  using type = T;
};
template <class X>
struct is_expr : std::false_type {};
template <class T>
struct is_expr<Expr<T>> : std::true_type {};

// A scalar operand: any arithmetic type, a 16-bit float or a complex number.
template <class X>
inline constexpr bool is_fused_scalar_v = std::is_arithmetic_v<X> || is_half_v<X> || is_complex_v<X>;
template <class X, class = void>
struct is_fused_operand : std::bool_constant<is_fused_scalar_v<X>> {};
template <class X>
struct is_fused_operand<X, std::void_t<typename fused_dtype<X>::type>> : std::true_type {};

// The dtype of `a op b` where at least one is an expression and the other an expression, an Array
// or a scalar: the first expression's.
template <class A, class B, class DA = std::decay_t<A>, class DB = std::decay_t<B>>
using fused_result_t = std::enable_if_t<(is_expr<DA>::value || is_expr<DB>::value) && is_fused_operand<DA>::value &&
                                            is_fused_operand<DB>::value,
                                        typename fused_dtype<std::conditional_t<is_expr<DA>::value, DA, DB>>::type>;

}  // namespace detail

// A lazy elementwise expression of dtype T: a postfix program over arrays (its leaves) and scalars.
// Built by porta::lazy(x) and the operators and functions below; evaluated in one pass when
// converted to an Array, assigned (porta::evaluate, Array::assign), reduced (porta::sum) or
// forced (eval()).
template <class T>
class Expr {
 public:
  using value_type = T;

  // A leaf that refers to `a` (read when the expression is evaluated).
  explicit Expr(const Array<T>& a) : ops_{input_op(0)}, leaves_{Leaf{&a, nullptr}} {}
  // A leaf that owns a temporary array: porta::lazy(porta::exp(x)).
  explicit Expr(Array<T>&& a) : ops_{input_op(0)} {
    auto owned = std::make_shared<const Array<T>>(std::move(a));
    leaves_.push_back(Leaf{owned.get(), owned});
  }

  // Evaluated into a new contiguous array of the leaves' shape on their device:
  //   porta::Array<float> r = (x * 2 + y).eval();
  Array<T> eval(const Stream& stream = Stream()) const {
    const std::vector<const Array<T>*> l = leaf_pointers();
    return detail::fused_new<T>("porta::Expr::eval", ops_.data(), static_cast<std::int32_t>(ops_.size()), l.data(),
                                static_cast<std::int32_t>(l.size()), stream);
  }
  // porta::Array<float> r = expr;
  operator Array<T>() const { return eval(); }  // NOLINT(google-explicit-constructor): the point of it

  // out = this expression, elementwise (out has the leaves' shape; may be one of the leaves, or a
  // strided view: porta::evaluate(e, m.row(2))).
  void evaluate_into(Array<T>& out, const Stream& stream = Stream()) const {
    const std::vector<const Array<T>*> l = leaf_pointers();
    detail::fused_into<T>("porta::evaluate", ops_.data(), static_cast<std::int32_t>(ops_.size()), l.data(),
                          static_cast<std::int32_t>(l.size()), out, stream);
  }

  // The program: ops in postfix order (porta_program_op) and the arrays INPUT k reads.
  const std::vector<porta_program_op>& ops() const noexcept { return ops_; }
  std::vector<const Array<T>*> leaf_pointers() const {
    std::vector<const Array<T>*> l;
    for (const Leaf& leaf : leaves_) l.push_back(leaf.array);
    return l;
  }

  // Building blocks of the operators below.
  static Expr constant(T v) {
    Expr e;
    porta_program_op op{};
    op.kind = PORTA_PROGRAM_SCALAR;
    op.value = detail::to_scalar(v);
    e.ops_.push_back(op);
    return e;
  }
  static Expr unary(porta_unary_op u, Expr e) {
    porta_program_op op{};
    op.kind = PORTA_PROGRAM_UNARY;
    op.arg = static_cast<std::int32_t>(u);
    e.ops_.push_back(op);
    return e;
  }
  // op(a, b): the program of the operand that needs the deeper stack first (Sethi-Ullman order, so
  // that no expression of PORTA_PROGRAM_MAX_OPS ops nests deeper than PORTA_PROGRAM_MAX_STACK), then
  // the other's, then the op (BINARY_REV when b came first). b's inputs are renumbered; an array
  // that both read is one input.
  // Each vector grows once: expressions are often built in the loop that evaluates them, where a
  // dozen small allocations cost as much as the evaluation of 2^12 elements.
  static Expr binary(porta_binary_op b_op, Expr a, const Expr& b) {
    const bool b_first = depth(b.ops_) > depth(a.ops_);
    std::vector<std::int32_t> map(b.leaves_.size());
    a.leaves_.reserve(a.leaves_.size() + b.leaves_.size());
    for (std::size_t j = 0; j < b.leaves_.size(); ++j) {
      std::size_t k = 0;
      while (k < a.leaves_.size() && a.leaves_[k].array != b.leaves_[j].array) ++k;
      if (k == a.leaves_.size()) a.leaves_.push_back(b.leaves_[j]);
      map[j] = static_cast<std::int32_t>(k);
    }
    std::vector<porta_program_op> ops;
    ops.reserve(a.ops_.size() + b.ops_.size() + 1);
    if (!b_first) ops.insert(ops.end(), a.ops_.begin(), a.ops_.end());
    for (porta_program_op op : b.ops_) {
      if (op.kind == PORTA_PROGRAM_INPUT) op.arg = map[static_cast<std::size_t>(op.arg)];
      ops.push_back(op);
    }
    if (b_first) ops.insert(ops.end(), a.ops_.begin(), a.ops_.end());
    porta_program_op op{};
    op.kind = b_first ? PORTA_PROGRAM_BINARY_REV : PORTA_PROGRAM_BINARY;
    op.arg = static_cast<std::int32_t>(b_op);
    ops.push_back(op);
    a.ops_.swap(ops);
    return a;
  }

  // The most values a program keeps on its stack at once.
  static int depth(const std::vector<porta_program_op>& ops) noexcept {
    int d = 0, most = 0;
    for (const porta_program_op& op : ops) {
      if (op.kind == PORTA_PROGRAM_INPUT || op.kind == PORTA_PROGRAM_SCALAR) ++d;
      if (op.kind == PORTA_PROGRAM_BINARY || op.kind == PORTA_PROGRAM_BINARY_REV) --d;
      most = d > most ? d : most;
    }
    return most;
  }

 private:
  struct Leaf {
    const Array<T>* array;
    std::shared_ptr<const Array<T>> owned;  // set for a temporary the expression keeps alive
  };
  Expr() = default;
  static porta_program_op input_op(std::int32_t k) {
    porta_program_op op{};
    op.kind = PORTA_PROGRAM_INPUT;
    op.arg = k;
    return op;
  }

  std::vector<porta_program_op> ops_;
  std::vector<Leaf> leaves_;
};

// The entry point: an expression leaf for an array (a view too), or a temporary it keeps alive.
//   auto x = porta::lazy(xa);
template <class T>
Expr<T> lazy(const Array<T>& a) {
  return Expr<T>(a);
}
template <class T>
Expr<T> lazy(Array<T>&& a) {
  return Expr<T>(std::move(a));
}
template <class T>
Expr<T> lazy(Expr<T> e) {
  return e;
}

namespace detail {

// An operand as an expression of dtype T: an expression, an array (referred to, or owned when a
// temporary) or a scalar of any arithmetic type converted as the eager operators convert it.
template <class T, class X>
Expr<T> to_expr(X&& x, const char* fn) {
  using D = std::decay_t<X>;
  if constexpr (is_fused_scalar_v<D>) {
    return Expr<T>::constant(scalar_as<T>(x, fn));
  } else {
    static_assert(std::is_same_v<typename fused_dtype<D>::type, T>,
                  "porta::lazy: every array and expression of one expression must have its dtype: cast first "
                  "(porta::lazy(porta::cast<double>(x)))");
    if constexpr (is_expr<D>::value) {
      return std::forward<X>(x);
    } else if constexpr (std::is_lvalue_reference_v<X>) {
      return Expr<T>(static_cast<const Array<T>&>(x));
    } else {
      return Expr<T>(std::move(x));
    }
  }
}

}  // namespace detail

// a + b, a - b, a * b, a / b, minimum(a, b), maximum(a, b), pow(a, b) where one operand is an
// expression and the other an expression, an Array or a scalar: an expression.
#define PORTA_FUSED_BINARY(sig, OP, name)                                              \
  template <class A, class B, class T = detail::fused_result_t<A, B>>                  \
  Expr<T> sig(A&& a, B&& b) {                                                          \
    return Expr<T>::binary(OP, detail::to_expr<T>(std::forward<A>(a), "porta::" name), \
                           detail::to_expr<T>(std::forward<B>(b), "porta::" name));    \
  }
PORTA_FUSED_BINARY(operator+, PORTA_BINARY_ADD, "operator+")
PORTA_FUSED_BINARY(operator-, PORTA_BINARY_SUB, "operator-")
PORTA_FUSED_BINARY(operator*, PORTA_BINARY_MUL, "operator*")
PORTA_FUSED_BINARY(operator/, PORTA_BINARY_DIV, "operator/")
PORTA_FUSED_BINARY(minimum, PORTA_BINARY_MIN, "minimum")
PORTA_FUSED_BINARY(maximum, PORTA_BINARY_MAX, "maximum")
PORTA_FUSED_BINARY(pow, PORTA_BINARY_POW, "pow")
#undef PORTA_FUSED_BINARY

// -e, abs(e), sqrt(e), ... of an expression: an expression (of an Array they stay eager).
#define PORTA_FUSED_UNARY(name, OP)          \
  template <class T>                         \
  Expr<T> name(Expr<T> e) {                  \
    return Expr<T>::unary(OP, std::move(e)); \
  }
PORTA_FUSED_UNARY(operator-, PORTA_UNARY_NEG)
PORTA_FUSED_UNARY(neg, PORTA_UNARY_NEG)
PORTA_FUSED_UNARY(abs, PORTA_UNARY_ABS)
PORTA_FUSED_UNARY(sqrt, PORTA_UNARY_SQRT)
PORTA_FUSED_UNARY(exp, PORTA_UNARY_EXP)
PORTA_FUSED_UNARY(log, PORTA_UNARY_LOG)
PORTA_FUSED_UNARY(sin, PORTA_UNARY_SIN)
PORTA_FUSED_UNARY(cos, PORTA_UNARY_COS)
PORTA_FUSED_UNARY(tanh, PORTA_UNARY_TANH)
PORTA_FUSED_UNARY(relu, PORTA_UNARY_RELU)
PORTA_FUSED_UNARY(sigmoid, PORTA_UNARY_SIGMOID)
PORTA_FUSED_UNARY(square, PORTA_UNARY_SQUARE)
PORTA_FUSED_UNARY(conj, PORTA_UNARY_CONJ)
#undef PORTA_FUSED_UNARY

// out = e in one pass: porta::evaluate(x * 2 + y, out), also into a view (m.row(0)).
template <class T>
void evaluate(const Expr<T>& e, Array<T>& out, const Stream& stream = Stream()) {
  e.evaluate_into(out, stream);
}
template <class T>
void evaluate(const Expr<T>& e, Array<T>&& out, const Stream& stream = Stream()) {
  e.evaluate_into(out, stream);
}

// The sum of the expression's values: the expression evaluated in one pass into a temporary, then
// porta::sum of it, so the bits are those of porta::sum of the eager chain's array.
//   float s = porta::sum(porta::lazy(x) * porta::lazy(y));
template <class T>
T sum(const Expr<T>& e, const Stream& stream = Stream()) {
  return sum(e.eval(stream), stream);
}

}  // namespace porta
