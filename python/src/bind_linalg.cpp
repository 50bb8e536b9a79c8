// SPDX-License-Identifier: Apache-2.0
// porta.linalg (bindings.hpp): porta/linalg.hpp in Python, under numpy.linalg's names, arguments and
// results (the named tuples QRResult, EighResult and SVDResult of NumPy 2). The matrices are
// float32 or float64 porta.Arrays whose last two axes are the matrices and whose leading axes, if
// any, a stack; other dtypes are porta.InvalidArgument, since porta does not promote. A matrix the
// factorisation cannot take is porta.LinAlgError (errors.hpp), also a numpy.linalg.LinAlgError.
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "arguments.hpp"
#include "bindings.hpp"
#include "errors.hpp"
#include "porta/linalg.hpp"

namespace porta::python {
namespace {

// f(Array<T>&) for the float32 or float64 array `a`.
template <class F>
py::object with_matrix(const char* fn, py::handle a, F&& f) {
  ArrayBox* box = box_of(a);
  if (box == nullptr) throw py::type_error(std::string(fn) + ": a must be a porta.Array");
  return std::visit(
      [&](auto& x) -> py::object {
        using T = value_of<decltype(x)>;
        if constexpr (std::is_floating_point_v<T>) {
          return f(x);
        } else if constexpr (is_half_v<T>) {
          // Unavailable, as porta's own refusals of the 16-bit floats: a form not there yet.
          throw Unavailable(std::string(fn) + ": not defined for " + dtype_name(*box) +
                            " (porta.linalg takes float32 or float64 matrices: a.astype('float32') converts)");
        } else if constexpr (is_complex_v<T>) {
          // astype('float64') would drop the imaginary parts: no hint to convert.
          invalid(fn, std::string("a is ") + dtype_name(*box) +
                          "; porta.linalg takes float32 or float64 matrices (it has no complex form)");
        } else {
          invalid(fn, std::string("a is ") + dtype_name(*box) +
                          "; porta.linalg takes float32 or float64 matrices (porta does not promote dtypes: "
                          "a.astype('float64') converts)");
        }
      },
      box->v);
}

// One of numpy.linalg's named tuples, with porta.linalg as its home (pickle and repr name it).
py::object result_type(const char* name, std::initializer_list<const char*> fields) {
  py::list names;
  for (const char* f : fields) names.append(f);
  return py::module_::import("collections").attr("namedtuple")(name, names, py::arg("module") = "porta.linalg");
}

}  // namespace

void bind_linalg(py::module_& m) {
  py::module_ la = m.def_submodule(
      "linalg",
      "porta.linalg: dense linear algebra of float32 and float64 matrices and stacks of them on any device, named "
      "as numpy.linalg, cupy.linalg and torch.linalg (docs/python.md, docs/linalg.md).");
  // The types are made once here; each function keeps its own reference to the one it returns.
  const py::object qr_result = result_type("QRResult", {"Q", "R"});
  const py::object eigh_result = result_type("EighResult", {"eigenvalues", "eigenvectors"});
  const py::object svd_result = result_type("SVDResult", {"U", "S", "Vh"});
  la.attr("QRResult") = qr_result;
  la.attr("EighResult") = eigh_result;
  la.attr("SVDResult") = svd_result;
  // porta.linalg.LinAlgError as numpy.linalg.LinAlgError; made on first use (errors.hpp).
  la.def("__getattr__", [](const std::string& name) -> py::object {
    if (name == "LinAlgError") return linalg_error_type();
    throw py::attribute_error("module 'porta.linalg' has no attribute '" + name + "'");
  });

  la.def(
      "solve",
      [](py::handle a, py::handle b, const Stream* s) {
        constexpr const char* fn = "porta.linalg.solve";
        return with_matrix(fn, a, [&](auto& av) {
          using T = value_of<decltype(av)>;
          Array<T>& bv = as<T>(b, fn, "b");
          Array<T> x;
          {
            py::gil_scoped_release nogil;
            x = porta::linalg::solve(av, bv, stream_arg(s));
          }
          return wrap(std::move(x));
        });
      },
      py::arg("a"), py::arg("b"), py::kw_only(), py::arg("stream") = py::none(),
      "x with a @ x == b (numpy.linalg.solve), by LU with partial pivoting. a is (..., n, n); b is a vector of n\n"
      "(for a 2-D a) or (..., n, k) with a's leading axes, which are not broadcast. An exactly singular matrix is\n"
      "porta.LinAlgError.");
  la.def(
      "inv",
      [](py::handle a, const Stream* s) {
        return with_matrix("porta.linalg.inv", a, [&](auto& av) {
          using T = value_of<decltype(av)>;
          Array<T> r;
          {
            py::gil_scoped_release nogil;
            r = porta::linalg::inv(av, stream_arg(s));
          }
          return wrap(std::move(r));
        });
      },
      py::arg("a"), py::kw_only(), py::arg("stream") = py::none(),
      "The inverse of each (..., n, n) matrix (numpy.linalg.inv). An exactly singular matrix is porta.LinAlgError.");
  la.def(
      "cholesky",
      [](py::handle a, const Stream* s) {
        return with_matrix("porta.linalg.cholesky", a, [&](auto& av) {
          using T = value_of<decltype(av)>;
          Array<T> r;
          {
            py::gil_scoped_release nogil;
            r = porta::linalg::cholesky(av, stream_arg(s));
          }
          return wrap(std::move(r));
        });
      },
      py::arg("a"), py::kw_only(), py::arg("stream") = py::none(),
      "The lower-triangular L with a == L @ L.T (numpy.linalg.cholesky), from a's lower triangle alone. A matrix\n"
      "that is not positive definite is porta.LinAlgError.");
  la.def(
      "qr",
      [qr_result](py::handle a, const std::string& mode, const Stream* s) {
        constexpr const char* fn = "porta.linalg.qr";
        if (mode != "reduced")
          invalid(fn, "mode '" + mode + "' is not supported (porta has mode='reduced', the default)");
        return with_matrix(fn, a, [&](auto& av) {
          using T = value_of<decltype(av)>;
          porta::linalg::QR<T> r;
          {
            py::gil_scoped_release nogil;
            r = porta::linalg::qr(av, stream_arg(s));
          }
          return qr_result(wrap(std::move(r.Q)), wrap(std::move(r.R)));
        });
      },
      py::arg("a"), py::arg("mode") = "reduced", py::kw_only(), py::arg("stream") = py::none(),
      "QRResult(Q, R) with a == Q @ R (numpy.linalg.qr, mode='reduced'): for (..., m, n) a and p = min(m, n), Q is\n"
      "(..., m, p) with orthonormal columns and R (..., p, n) upper triangular. The signs are LAPACK's (a row of\n"
      "R and the column of Q may be negated against another library's).");
  la.def(
      "eigh",
      [eigh_result](py::handle a, const std::string& uplo, const Stream* s) {
        constexpr const char* fn = "porta.linalg.eigh";
        if (uplo == "U")
          invalid(fn,
                  "UPLO='U' is not supported: porta reads the lower triangle (UPLO='L', the default); for a 2-D a, "
                  "eigh(a.T) reads a's upper triangle");
        if (uplo != "L") invalid(fn, "UPLO must be 'L' or 'U', not '" + uplo + "'");
        return with_matrix(fn, a, [&](auto& av) {
          using T = value_of<decltype(av)>;
          porta::linalg::Eigh<T> r;
          {
            py::gil_scoped_release nogil;
            r = porta::linalg::eigh(av, stream_arg(s));
          }
          return eigh_result(wrap(std::move(r.eigenvalues)), wrap(std::move(r.eigenvectors)));
        });
      },
      py::arg("a"), py::arg("UPLO") = "L", py::kw_only(), py::arg("stream") = py::none(),
      "EighResult(eigenvalues, eigenvectors) of each symmetric (..., n, n) matrix, read from its lower triangle\n"
      "(numpy.linalg.eigh): eigenvalues (..., n) ascending, eigenvectors (..., n, n) as columns, a @ v == v * w.\n"
      "No convergence is porta.LinAlgError.");
  la.def(
      "svd",
      [svd_result](py::handle a, bool full_matrices, bool compute_uv, const Stream* s) {
        return with_matrix("porta.linalg.svd", a, [&](auto& av) -> py::object {
          using T = value_of<decltype(av)>;
          porta::linalg::SVD<T> r;
          {
            py::gil_scoped_release nogil;
            // Without U and Vh their shape does not matter: the reduced ones cost less.
            r = porta::linalg::svd(av, full_matrices && compute_uv, stream_arg(s));
          }
          if (!compute_uv) return wrap(std::move(r.S));
          return svd_result(wrap(std::move(r.U)), wrap(std::move(r.S)), wrap(std::move(r.Vh)));
        });
      },
      py::arg("a"), py::arg("full_matrices") = true, py::arg("compute_uv") = true, py::kw_only(),
      py::arg("stream") = py::none(),
      "SVDResult(U, S, Vh) with a == U * S @ Vh (numpy.linalg.svd): for (..., m, n) a and p = min(m, n), S is\n"
      "(..., p) descending; full_matrices=True (the default) gives U (..., m, m) and Vh (..., n, n), False\n"
      "U (..., m, p) and Vh (..., p, n). compute_uv=False returns S alone. No convergence is porta.LinAlgError.");
}

}  // namespace porta::python
