// SPDX-License-Identifier: Apache-2.0
// Maps, reductions and matmul/gemm (bindings.hpp): porta/algorithms.hpp in Python. Every function
// takes porta.Arrays of one dtype (porta does not promote), numbers where C++ has scalar forms,
// out= where C++ writes into an output, and stream=. Complex arrays take what porta defines for them
// (algorithms.hpp); the rest is a TypeError raised here, before porta is called.
#include <string>
#include <utility>

#include "arguments.hpp"
#include "bindings.hpp"

namespace porta::python {
namespace {

// How an op takes complex arrays: as real ones (ComplexOk), or not at all, with the reason that the
// TypeError gives. The refusal is decided at compile time, so that the op is never instantiated for a
// complex type it does not have.
struct ComplexOk {
  static constexpr const char* refused = nullptr;
};
struct NoOrder {
  static constexpr const char* refused = "complex numbers have no order";
};
struct NoComplexForm {
  static constexpr const char* refused = "porta has no complex form of it";
};
template <class Complex, class T>
inline constexpr bool refused_v = (is_complex_v<T> && Complex::refused != nullptr);

// a op b where either side may be a number; `out` (an Array or None) receives the result.
template <class Complex, class F>
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
        if constexpr (refused_v<Complex, T>) {
          no_complex_form(fn, dt, Complex::refused);
        } else {
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
        }
      },
      lead->v);
}

// Each built-in map as a generic lambda over porta's overloads.
#define PORTA_PY_FORWARD(name) [](auto&&... args) -> decltype(auto) { return porta::name(args...); }

// f(a) or f(a, out) for one array, `out` a porta.Array of a's dtype or None.
template <class T, class F>
py::object unary_run(const char* fn, Array<T>& a, py::handle out, const Stream& st, F&& f) {
  if (!out.is_none()) {
    Array<T>& o = as<T>(out, fn, "out");
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
}

template <class Complex, class F>
py::object unary(const char* fn, py::handle x, py::handle out, const Stream* s, F&& f) {
  ArrayBox* X = box_of(x);
  if (X == nullptr) throw py::type_error(std::string(fn) + ": x must be a porta.Array");
  if (!out.is_none() && box_of(out) == nullptr)
    throw py::type_error(std::string(fn) + ": out must be a porta.Array or None");
  return std::visit(
      [&](auto& a) -> py::object {
        using T = value_of<decltype(a)>;
        if constexpr (refused_v<Complex, T>) {
          no_complex_form(fn, detail::dtype_of<T>(), Complex::refused);
        } else {
          return unary_run(fn, a, out, stream_arg(s), f);
        }
      },
      X->v);
}

// |x|: of a complex array a real array of its precision (numpy.abs), which out= must then be.
py::object abs_map(py::handle x, py::handle out, const Stream* s) {
  const char* fn = "porta.abs";
  ArrayBox* X = box_of(x);
  if (X == nullptr) throw py::type_error(std::string(fn) + ": x must be a porta.Array");
  if (!out.is_none() && box_of(out) == nullptr)
    throw py::type_error(std::string(fn) + ": out must be a porta.Array or None");
  const Stream& st = stream_arg(s);
  return std::visit(
      [&](auto& z) -> py::object {
        using T = value_of<decltype(z)>;
        if constexpr (is_complex_v<T>) {
          using R = typename T::value_type;
          Array<R>* o = nullptr;
          if (!out.is_none()) {
            o = &as<R>(out, fn, "out");
            if (o->shape() != z.shape())
              invalid(fn, "out has shape " + o->shape().to_string() + ", x " + z.shape().to_string());
          }
          Array<R> r;
          {
            py::gil_scoped_release nogil;
            r = porta::abs(z, st);
            // C++ has no abs(z, out) for complex z: the result is copied into out.
            if (o != nullptr) porta::copy(r, *o, st);
          }
          return o != nullptr ? py::reinterpret_borrow<py::object>(out) : wrap(std::move(r));
        } else {
          return unary_run(fn, z, out, st, PORTA_PY_FORWARD(abs));
        }
      },
      X->v);
}

// numpy.real and numpy.imag: new arrays of the real dtype of x's precision. A real or integer x is its
// own real part (copied, as C++'s real copies) and has zeros for imaginary part.
template <bool Imag>
py::object part(ArrayBox& x, const Stream* s) {
  const Stream& st = stream_arg(s);
  return std::visit(
      [&](auto& a) -> py::object {
        using T = value_of<decltype(a)>;
        using R = detail::real_type_t<T>;
        a.check_valid(Imag ? "porta.imag" : "porta.real");
        Array<R> r;
        {
          py::gil_scoped_release nogil;
          if constexpr (is_complex_v<T>) {
            r = Imag ? porta::imag(a, st) : porta::real(a, st);
          } else if constexpr (Imag) {
            r = porta::full<T>(a.shape(), T(0), a.device(), st);
          } else {
            r = a.clone(st);
          }
        }
        return wrap(std::move(r));
      },
      x.v);
}

// torch.view_as_real / torch.view_as_complex: the same memory as the other form, no copy.
py::object view_as_real_of(ArrayBox& x) {
  return std::visit(
      [&](auto& a) -> py::object {
        using T = value_of<decltype(a)>;
        if constexpr (is_complex_v<T>) {
          return wrap(porta::view_as_real(a));
        } else {
          invalid("porta.view_as_real", std::string("x is ") + dtype_name(x) + "; it takes complex64 or complex128");
        }
      },
      x.v);
}
py::object view_as_complex_of(ArrayBox& x) {
  return std::visit(
      [&](auto& a) -> py::object {
        using T = value_of<decltype(a)>;
        if constexpr (std::is_floating_point_v<T>) {
          return wrap(porta::view_as_complex(a));
        } else {
          invalid("porta.view_as_complex",
                  std::string("x is ") + dtype_name(x) + "; it takes float32 or float64 with a last axis of 2");
        }
      },
      x.v);
}
py::object make_complex_of(ArrayBox& re, ArrayBox& im, const Stream* s) {
  return std::visit(
      [&](auto& a) -> py::object {
        using T = value_of<decltype(a)>;
        if constexpr (std::is_floating_point_v<T>) {
          auto& b = as<T>(im, "porta.make_complex", "imag", detail::dtype_of<T>());
          Array<complex<T>> r;
          {
            py::gil_scoped_release nogil;
            r = porta::make_complex(a, b, stream_arg(s));
          }
          return wrap(std::move(r));
        } else {
          invalid("porta.make_complex", std::string("real is ") + dtype_name(re) + "; it takes float32 or float64");
        }
      },
      re.v);
}

// Full reduction (axis None) to a Python number, or along an axis to a porta.Array.
template <class Complex, class Full, class Axis>
py::object reduction(const char* fn, ArrayBox& x, py::handle axis, const Stream* s, Full&& full, Axis&& along) {
  const Stream& st = stream_arg(s);
  return std::visit(
      [&](auto& a) -> py::object {
        using T = value_of<decltype(a)>;
        if constexpr (refused_v<Complex, T>) {
          no_complex_form(fn, detail::dtype_of<T>(), Complex::refused);
        } else {
          if (axis.is_none()) {
            decltype(full(a, st)) v;
            {
              py::gil_scoped_release nogil;
              v = full(a, st);
            }
            return number(v);
          }
          if (!PyIndex_Check(axis.ptr())) throw py::type_error(std::string(fn) + ": axis must be an int or None");
          const int ax = axis.cast<int>();
          Array<T> r;
          {
            py::gil_scoped_release nogil;
            r = along(a, ax, st);
          }
          return wrap(std::move(r));
        }
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

void bind_maps(py::module_& m) {
#define PORTA_PY_BINARY(name, complex_form)                                                \
  m.def(                                                                                   \
      #name,                                                                               \
      [](py::handle a, py::handle b, py::handle out, const Stream* s) {                    \
        return binary<complex_form>("porta." #name, a, b, out, s, PORTA_PY_FORWARD(name)); \
      },                                                                                   \
      py::arg("a"), py::arg("b"), py::kw_only(), py::arg("out") = py::none(), py::arg("stream") = py::none());
  PORTA_PY_BINARY(add, ComplexOk)
  PORTA_PY_BINARY(sub, ComplexOk)
  PORTA_PY_BINARY(mul, ComplexOk)
  PORTA_PY_BINARY(div, ComplexOk)
  PORTA_PY_BINARY(minimum, NoOrder)
  PORTA_PY_BINARY(maximum, NoOrder)
  PORTA_PY_BINARY(pow, NoComplexForm)
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
              if constexpr (refused_v<NoOrder, T>) {
                no_complex_form("porta.relu_grad", detail::dtype_of<T>(), NoOrder::refused);
              } else {
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
              }
            },
            g->v);
      },
      py::arg("grad"), py::arg("x"), py::kw_only(), py::arg("out") = py::none(), py::arg("stream") = py::none());
#define PORTA_PY_UNARY(name, complex_form)                                             \
  m.def(                                                                               \
      #name,                                                                           \
      [](py::handle x, py::handle out, const Stream* s) {                              \
        return unary<complex_form>("porta." #name, x, out, s, PORTA_PY_FORWARD(name)); \
      },                                                                               \
      py::arg("x"), py::kw_only(), py::arg("out") = py::none(), py::arg("stream") = py::none());
  PORTA_PY_UNARY(neg, ComplexOk)
  PORTA_PY_UNARY(sqrt, ComplexOk)
  PORTA_PY_UNARY(exp, ComplexOk)
  PORTA_PY_UNARY(log, ComplexOk)
  PORTA_PY_UNARY(sin, NoComplexForm)
  PORTA_PY_UNARY(cos, NoComplexForm)
  PORTA_PY_UNARY(tanh, NoComplexForm)
  PORTA_PY_UNARY(relu, NoOrder)
  PORTA_PY_UNARY(sigmoid, NoComplexForm)
  PORTA_PY_UNARY(square, ComplexOk)
  PORTA_PY_UNARY(conj, ComplexOk)
#undef PORTA_PY_UNARY
  m.def("abs", &abs_map, py::arg("x"), py::kw_only(), py::arg("out") = py::none(), py::arg("stream") = py::none(),
        "|x|; of a complex array its modulus, a float32 or float64 array (numpy.abs).");
  m.def(
      "real", [](ArrayBox& x, const Stream* s) { return part<false>(x, s); }, py::arg("x"), py::kw_only(),
      py::arg("stream") = py::none(),
      "The real part as a new array: float32 or float64 for a complex array, a copy of any other (numpy.real).");
  m.def(
      "imag", [](ArrayBox& x, const Stream* s) { return part<true>(x, s); }, py::arg("x"), py::kw_only(),
      py::arg("stream") = py::none(),
      "The imaginary part as a new array: float32 or float64 for a complex array, zeros for any other (numpy.imag).");
  m.def("view_as_real", &view_as_real_of, py::arg("x"),
        "A complex64/complex128 array's memory as float32/float64 with a last axis of 2 (torch.view_as_real): a view, "
        "no copy; x must be contiguous.");
  m.def("view_as_complex", &view_as_complex_of, py::arg("x"),
        "A float32/float64 array with a last axis of 2 as complex64/complex128 (torch.view_as_complex): a view, no "
        "copy.");
  m.def("make_complex", &make_complex_of, py::arg("real"), py::arg("imag"), py::kw_only(),
        py::arg("stream") = py::none(), "real + 1j * imag from two float32 or float64 arrays (torch.complex).");
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
              if constexpr (refused_v<NoComplexForm, T>) {
                no_complex_form("porta.iota", detail::dtype_of<T>(), NoComplexForm::refused);
              } else {
                const T a = scalar<T>(start, "porta.iota", "start");
                const T d = scalar<T>(step, "porta.iota", "step");
                py::gil_scoped_release nogil;
                porta::iota(yv, a, d, stream_arg(s));
              }
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
#define PORTA_PY_REDUCE(name, complex_form, doc)                                                                    \
  m.def(                                                                                                            \
      #name,                                                                                                        \
      [](ArrayBox& x, py::handle axis, const Stream* s) {                                                           \
        return reduction<complex_form>("porta." #name, x, axis, s, PORTA_PY_FORWARD(name), PORTA_PY_FORWARD(name)); \
      },                                                                                                            \
      py::arg("x"), py::arg("axis") = py::none(), py::kw_only(), py::arg("stream") = py::none(), doc);
  PORTA_PY_REDUCE(sum, ComplexOk,
                  "Sum: a number (axis None; complex for a complex array) or an array without that axis; the same "
                  "bits on every device.")
  PORTA_PY_REDUCE(prod, ComplexOk, "Product, full or along an axis.")
  PORTA_PY_REDUCE(min, NoOrder, "Minimum, full or along an axis (not of complex arrays: they have no order).")
  PORTA_PY_REDUCE(max, NoOrder, "Maximum, full or along an axis (not of complex arrays: they have no order).")
  PORTA_PY_REDUCE(mean, ComplexOk,
                  "Mean, full (a float; a complex for a complex array) or along an axis (floating point and "
                  "complex arrays).")
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
              return number(r);
            },
            x.v);
      },
      py::arg("x"), py::arg("y"), py::kw_only(), py::arg("stream") = py::none(),
      "The sum of x[i] * y[i], without conjugation (numpy.dot of vectors; porta.vdot conjugates x).");
  m.def(
      "vdot",
      [](ArrayBox& x, ArrayBox& y, const Stream* s) {
        return std::visit(
            [&](auto& xv) -> py::object {
              using T = value_of<decltype(xv)>;
              auto& yv = as<T>(y, "porta.vdot", "y", detail::dtype_of<T>());
              T r;
              {
                py::gil_scoped_release nogil;
                // A real x is its own conjugate: vdot is dot (as in NumPy).
                if constexpr (is_complex_v<T>)
                  r = porta::vdot(xv, yv, stream_arg(s));
                else
                  r = porta::dot(xv, yv, stream_arg(s));
              }
              return number(r);
            },
            x.v);
      },
      py::arg("x"), py::arg("y"), py::kw_only(), py::arg("stream") = py::none(),
      "The sum of conj(x[i]) * y[i] (numpy.vdot of vectors): |x|^2 for vdot(x, x).");
  m.def(
      "norm2",
      [](ArrayBox& x, const Stream* s) {
        return std::visit(
            [&](auto& xv) -> py::object {
              using T = value_of<decltype(xv)>;
              detail::real_type_t<T> r;
              {
                py::gil_scoped_release nogil;
                r = porta::norm2(xv, stream_arg(s));  // of a complex x a real number
              }
              return number(r);
            },
            x.v);
      },
      py::arg("x"), py::kw_only(), py::arg("stream") = py::none(),
      "sqrt(sum of |x[i]|^2), a float also for a complex x (floating point and complex arrays).");
}

void bind_matmul(py::module_& m) {
  m.def(
      "matmul",
      [](ArrayBox& a, ArrayBox& b, const std::string& precision, const std::string& algorithm, const Stream* s) {
        const MatmulOptions o = matmul_options("porta.matmul", precision, algorithm);
        return std::visit(
            [&](auto& av) -> py::object {
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
      "C = A B for 2-D arrays (also complex). precision='tf32' lets fp32 use TF32 tensor cores; algorithm='own' is "
      "porta's kernel.");
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
