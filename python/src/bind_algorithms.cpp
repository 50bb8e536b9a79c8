// SPDX-License-Identifier: Apache-2.0
// Maps, reductions and matmul/gemm (bindings.hpp): porta/algorithms.hpp in Python. Every function
// takes porta.Arrays of one dtype (porta does not promote), numbers where C++ has scalar forms,
// out= where C++ writes into an output, and stream=.
#include <string>
#include <utility>

#include "arguments.hpp"
#include "bindings.hpp"

namespace porta::python {
namespace {

// a op b where either side may be a number; `out` (an Array or None) receives the result.
template <class F>
py::object binary(const char* fn, py::handle a, py::handle b, py::handle out, const Stream* s, F&& f) {
  const Stream& st = stream_arg(s);
  ArrayBox* A = box_of(a);
  ArrayBox* B = box_of(b);
  ArrayBox* O = out.is_none() ? nullptr : box_of(out);
  if (!out.is_none() && O == nullptr) throw py::type_error(std::string(fn) + ": out must be a porta.Array or None");
  ArrayBox* lead = A != nullptr ? A : B;
  if (lead == nullptr) throw py::type_error(std::string(fn) + ": a or b must be a porta.Array");
  return std::visit(
      [&](auto& first) -> py::object {
        using T = value_of<decltype(first)>;
        constexpr porta_dtype dt = detail::dtype_of<T>();
        auto run = [&](auto&&... args) -> py::object {
          if (O != nullptr) {
            Array<T>& o = as<T>(*O, fn, "out", dt);
            {
              py::gil_scoped_release nogil;
              f(args..., o, st);
            }
            return py::reinterpret_borrow<py::object>(out);
          }
          Array<T> r;
          {
            py::gil_scoped_release nogil;
            r = f(args..., st);
          }
          return wrap(std::move(r));
        };
        if (A != nullptr && B != nullptr) return run(as<T>(*A, fn, "a", dt), as<T>(*B, fn, "b", dt));
        if (A != nullptr) return run(as<T>(*A, fn, "a", dt), scalar<T>(b, fn, "b"));
        return run(scalar<T>(a, fn, "a"), as<T>(*B, fn, "b", dt));
      },
      lead->v);
}

template <class F>
py::object unary(const char* fn, py::handle x, py::handle out, const Stream* s, F&& f) {
  const Stream& st = stream_arg(s);
  ArrayBox* X = box_of(x);
  if (X == nullptr) throw py::type_error(std::string(fn) + ": x must be a porta.Array");
  ArrayBox* O = out.is_none() ? nullptr : box_of(out);
  if (!out.is_none() && O == nullptr) throw py::type_error(std::string(fn) + ": out must be a porta.Array or None");
  return std::visit(
      [&](auto& a) -> py::object {
        using T = value_of<decltype(a)>;
        if (O != nullptr) {
          Array<T>& o = as<T>(*O, fn, "out", detail::dtype_of<T>());
          {
            py::gil_scoped_release nogil;
            f(a, o, st);
          }
          return py::reinterpret_borrow<py::object>(out);
        }
        Array<T> r;
        {
          py::gil_scoped_release nogil;
          r = f(a, st);
        }
        return wrap(std::move(r));
      },
      X->v);
}

// Full reduction (axis None) to a Python number, or along an axis to a porta.Array.
template <class Full, class Axis>
py::object reduction(const char* fn, ArrayBox& x, py::handle axis, const Stream* s, Full&& full, Axis&& along) {
  const Stream& st = stream_arg(s);
  return std::visit(
      [&](auto& a) -> py::object {
        using T = value_of<decltype(a)>;
        if (axis.is_none()) {
          decltype(full(a, st)) v;
          {
            py::gil_scoped_release nogil;
            v = full(a, st);
          }
          return py::cast(v);
        }
        if (!PyIndex_Check(axis.ptr())) throw py::type_error(std::string(fn) + ": axis must be an int or None");
        const int ax = axis.cast<int>();
        Array<T> r;
        {
          py::gil_scoped_release nogil;
          r = along(a, ax, st);
        }
        return wrap(std::move(r));
      },
      x.v);
}

MatmulOptions matmul_options(const std::string& fn, const std::string& precision, const std::string& algorithm) {
  MatmulOptions o;
  if (precision == "highest") {
    o.precision = Precision::highest;
  } else if (precision == "tf32") {
    o.precision = Precision::tf32;
  } else {
    invalid(fn, "precision '" + precision + "' is not 'highest' or 'tf32'");
  }
  if (algorithm == "vendor") {
    o.algorithm = GemmAlgorithm::vendor;
  } else if (algorithm == "own") {
    o.algorithm = GemmAlgorithm::own;
  } else {
    invalid(fn, "algorithm '" + algorithm + "' is not 'vendor' or 'own'");
  }
  return o;
}

// Each built-in map as a generic lambda over porta's overloads.
#define PORTA_PY_FORWARD(name) [](auto&&... args) -> decltype(auto) { return porta::name(args...); }

void bind_maps(py::module_& m) {
#define PORTA_PY_BINARY(name)                                                \
  m.def(                                                                     \
      #name,                                                                 \
      [](py::handle a, py::handle b, py::handle out, const Stream* s) {      \
        return binary("porta." #name, a, b, out, s, PORTA_PY_FORWARD(name)); \
      },                                                                     \
      py::arg("a"), py::arg("b"), py::kw_only(), py::arg("out") = py::none(), py::arg("stream") = py::none());
  PORTA_PY_BINARY(add)
  PORTA_PY_BINARY(sub)
  PORTA_PY_BINARY(mul)
  PORTA_PY_BINARY(div)
  PORTA_PY_BINARY(minimum)
  PORTA_PY_BINARY(maximum)
  PORTA_PY_BINARY(pow)
#undef PORTA_PY_BINARY
  m.def(
      "relu_grad",
      [](py::handle grad, py::handle x, py::handle out, const Stream* s) {
        // Arrays only (no scalar forms in C++): a number on either side is a TypeError.
        ArrayBox* g = box_of(grad);
        if (g == nullptr) throw py::type_error("porta.relu_grad: grad must be a porta.Array");
        return std::visit(
            [&](auto& gv) -> py::object {
              using T = value_of<decltype(gv)>;
              auto& xv = as<T>(x, "porta.relu_grad", "x");
              if (!out.is_none()) {
                auto& ov = as<T>(out, "porta.relu_grad", "out");
                py::gil_scoped_release nogil;
                porta::relu_grad(gv, xv, ov, stream_arg(s));
              } else {
                Array<T> r;
                {
                  py::gil_scoped_release nogil;
                  r = porta::relu_grad(gv, xv, stream_arg(s));
                }
                return wrap(std::move(r));
              }
              return py::reinterpret_borrow<py::object>(out);
            },
            g->v);
      },
      py::arg("grad"), py::arg("x"), py::kw_only(), py::arg("out") = py::none(), py::arg("stream") = py::none());
#define PORTA_PY_UNARY(name)                                             \
  m.def(                                                                 \
      #name,                                                             \
      [](py::handle x, py::handle out, const Stream* s) {                \
        return unary("porta." #name, x, out, s, PORTA_PY_FORWARD(name)); \
      },                                                                 \
      py::arg("x"), py::kw_only(), py::arg("out") = py::none(), py::arg("stream") = py::none());
  PORTA_PY_UNARY(neg)
  PORTA_PY_UNARY(abs)
  PORTA_PY_UNARY(sqrt)
  PORTA_PY_UNARY(exp)
  PORTA_PY_UNARY(log)
  PORTA_PY_UNARY(sin)
  PORTA_PY_UNARY(cos)
  PORTA_PY_UNARY(tanh)
  PORTA_PY_UNARY(relu)
  PORTA_PY_UNARY(sigmoid)
  PORTA_PY_UNARY(square)
#undef PORTA_PY_UNARY
  m.def(
      "transpose",
      [](ArrayBox& x, const Stream* s) {
        return std::visit(
            [&](auto& a) {
              using T = value_of<decltype(a)>;
              Array<T> r;
              {
                py::gil_scoped_release nogil;
                r = porta::transpose(a, stream_arg(s));
              }
              return wrap(std::move(r));
            },
            x.v);
      },
      py::arg("x"), py::kw_only(), py::arg("stream") = py::none(), "The 2-D transpose, into a new array.");
  m.def(
      "axpy",
      [](py::handle alpha, ArrayBox& x, ArrayBox& y, const Stream* s) {
        std::visit(
            [&](auto& yv) {
              using T = value_of<decltype(yv)>;
              const T al = scalar<T>(alpha, "porta.axpy", "alpha");
              auto& xv = as<T>(x, "porta.axpy", "x", detail::dtype_of<T>());
              py::gil_scoped_release nogil;
              porta::axpy(al, xv, yv, stream_arg(s));
            },
            y.v);
      },
      py::arg("alpha"), py::arg("x"), py::arg("y"), py::kw_only(), py::arg("stream") = py::none(),
      "y = alpha * x + y, in place.");
  m.def(
      "fill",
      [](ArrayBox& y, py::handle value, const Stream* s) {
        std::visit(
            [&](auto& yv) {
              using T = value_of<decltype(yv)>;
              const T v = scalar<T>(value, "porta.fill", "value");
              py::gil_scoped_release nogil;
              porta::fill(yv, v, stream_arg(s));
            },
            y.v);
      },
      py::arg("y"), py::arg("value"), py::kw_only(), py::arg("stream") = py::none());
  m.def(
      "iota",
      [](ArrayBox& y, py::handle start, py::handle step, const Stream* s) {
        std::visit(
            [&](auto& yv) {
              using T = value_of<decltype(yv)>;
              const T a = scalar<T>(start, "porta.iota", "start");
              const T d = scalar<T>(step, "porta.iota", "step");
              py::gil_scoped_release nogil;
              porta::iota(yv, a, d, stream_arg(s));
            },
            y.v);
      },
      py::arg("y"), py::arg("start") = 0, py::arg("step") = 1, py::kw_only(), py::arg("stream") = py::none());
  m.def(
      "copy",
      [](ArrayBox& src, ArrayBox& dst, const Stream* s) {
        std::visit(
            [&](auto& d) {
              using T = value_of<decltype(d)>;
              auto& sv = as<T>(src, "porta.copy", "src", detail::dtype_of<T>());
              py::gil_scoped_release nogil;
              porta::copy(sv, d, stream_arg(s));
            },
            dst.v);
      },
      py::arg("src"), py::arg("dst"), py::kw_only(), py::arg("stream") = py::none(),
      "dst = src; across devices this is the explicit move of data.");
}

void bind_reductions(py::module_& m) {
#define PORTA_PY_REDUCE(name, doc)                                                                    \
  m.def(                                                                                              \
      #name,                                                                                          \
      [](ArrayBox& x, py::handle axis, const Stream* s) {                                             \
        return reduction("porta." #name, x, axis, s, PORTA_PY_FORWARD(name), PORTA_PY_FORWARD(name)); \
      },                                                                                              \
      py::arg("x"), py::arg("axis") = py::none(), py::kw_only(), py::arg("stream") = py::none(), doc);
  PORTA_PY_REDUCE(sum, "Sum: a number (axis None) or an array without that axis; the same bits on every device.")
  PORTA_PY_REDUCE(prod, "Product, full or along an axis.")
  PORTA_PY_REDUCE(min, "Minimum, full or along an axis.")
  PORTA_PY_REDUCE(max, "Maximum, full or along an axis.")
  PORTA_PY_REDUCE(mean, "Mean, full (a float) or along an axis (floating point arrays).")
#undef PORTA_PY_REDUCE
  m.def(
      "dot",
      [](ArrayBox& x, ArrayBox& y, const Stream* s) {
        return std::visit(
            [&](auto& xv) -> py::object {
              using T = value_of<decltype(xv)>;
              auto& yv = as<T>(y, "porta.dot", "y", detail::dtype_of<T>());
              T r;
              {
                py::gil_scoped_release nogil;
                r = porta::dot(xv, yv, stream_arg(s));
              }
              return py::cast(r);
            },
            x.v);
      },
      py::arg("x"), py::arg("y"), py::kw_only(), py::arg("stream") = py::none());
  m.def(
      "norm2",
      [](ArrayBox& x, const Stream* s) {
        return std::visit(
            [&](auto& xv) -> py::object {
              using T = value_of<decltype(xv)>;
              T r;
              {
                py::gil_scoped_release nogil;
                r = porta::norm2(xv, stream_arg(s));
              }
              return py::cast(r);
            },
            x.v);
      },
      py::arg("x"), py::kw_only(), py::arg("stream") = py::none());
}

void bind_matmul(py::module_& m) {
  m.def(
      "matmul",
      [](ArrayBox& a, ArrayBox& b, const std::string& precision, const std::string& algorithm, const Stream* s) {
        const MatmulOptions o = matmul_options("porta.matmul", precision, algorithm);
        return std::visit(
            [&](auto& av) {
              using T = value_of<decltype(av)>;
              auto& bv = as<T>(b, "porta.matmul", "b", detail::dtype_of<T>());
              Array<T> r;
              {
                py::gil_scoped_release nogil;
                r = porta::matmul(av, bv, o, stream_arg(s));
              }
              return wrap(std::move(r));
            },
            a.v);
      },
      py::arg("a"), py::arg("b"), py::kw_only(), py::arg("precision") = "highest", py::arg("algorithm") = "vendor",
      py::arg("stream") = py::none(),
      "C = A B for 2-D arrays. precision='tf32' lets fp32 use TF32 tensor cores; algorithm='own' is porta's kernel.");
  m.def(
      "gemm",
      [](py::handle alpha, ArrayBox& a, ArrayBox& b, py::handle beta, ArrayBox& c, bool trans_a, bool trans_b,
         const std::string& precision, const std::string& algorithm, const Stream* s) {
        const MatmulOptions o = matmul_options("porta.gemm", precision, algorithm);
        std::visit(
            [&](auto& cv) {
              using T = value_of<decltype(cv)>;
              constexpr porta_dtype dt = detail::dtype_of<T>();
              auto& av = as<T>(a, "porta.gemm", "a", dt);
              auto& bv = as<T>(b, "porta.gemm", "b", dt);
              const T al = scalar<T>(alpha, "porta.gemm", "alpha");
              const T be = scalar<T>(beta, "porta.gemm", "beta");
              py::gil_scoped_release nogil;
              porta::gemm(al, av, trans_a, bv, trans_b, be, cv, o, stream_arg(s));
            },
            c.v);
      },
      py::arg("alpha"), py::arg("a"), py::arg("b"), py::arg("beta"), py::arg("c"), py::kw_only(),
      py::arg("trans_a") = false, py::arg("trans_b") = false, py::arg("precision") = "highest",
      py::arg("algorithm") = "vendor", py::arg("stream") = py::none(),
      "c = alpha op(a) op(b) + beta c in place, op(x) = x or x.T; beta == 0 overwrites c.");
}

#undef PORTA_PY_FORWARD

}  // namespace

void bind_algorithms(py::module_& m) {
  bind_maps(m);
  bind_reductions(m);
  bind_matmul(m);
}

}  // namespace porta::python
