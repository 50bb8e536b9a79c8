// SPDX-License-Identifier: Apache-2.0
// The C++ -> Python exception mapping (errors.hpp).
#include "errors.hpp"

#include <cstddef>
#include <exception>
#include <initializer_list>
#include <string>

#include "porta/porta.hpp"

namespace py = pybind11;

namespace porta::python {
namespace {

// The exception classes, created once by register_errors and alive as long as the module.
PyObject* g_error = nullptr;
PyObject* g_invalid = nullptr;
PyObject* g_mismatch = nullptr;
PyObject* g_oom = nullptr;
PyObject* g_unavailable = nullptr;
PyObject* g_backend = nullptr;
PyObject* g_linalg = nullptr;  // made by linalg_error_type()

PyObject* new_exception(py::module_& m, const char* name, std::initializer_list<PyObject*> bases, const char* doc) {
  py::tuple b(bases.size());
  std::size_t i = 0;
  for (PyObject* p : bases) b[i++] = py::reinterpret_borrow<py::object>(p);
  const std::string qual = std::string("porta.") + name;
  PyObject* e = PyErr_NewExceptionWithDoc(qual.c_str(), doc, b.ptr(), nullptr);
  if (e == nullptr) throw py::error_already_set();
  m.attr(name) = py::reinterpret_borrow<py::object>(e);
  return e;
}

}  // namespace

py::object linalg_error_type() {
  if (g_linalg == nullptr) {
    py::tuple bases;
    try {
      bases = py::make_tuple(py::handle(g_error), py::module_::import("numpy.linalg").attr("LinAlgError"));
    } catch (py::error_already_set&) {
      bases = py::make_tuple(py::handle(g_error));  // no NumPy: porta.Error alone
    }
    // The import may have let another thread make it meanwhile: the class must be one.
    if (g_linalg == nullptr) {
      g_linalg = PyErr_NewExceptionWithDoc(
          "porta.LinAlgError",
          "A matrix that porta.linalg cannot factor: singular (solve, inv), not positive definite (cholesky), no "
          "convergence (eigh, svd). Also a numpy.linalg.LinAlgError when NumPy is installed. index is the matrix's "
          "place in the stack (0 for one matrix), info LAPACK's code for it.",
          bases.ptr(), nullptr);
      if (g_linalg == nullptr) throw py::error_already_set();
    }
  }
  return py::reinterpret_borrow<py::object>(g_linalg);
}

void register_errors(py::module_& m) {
  g_error = new_exception(m, "Error", {PyExc_RuntimeError}, "Every porta error (porta::Error).");
  g_invalid = new_exception(m, "InvalidArgument", {g_error, PyExc_ValueError},
                            "Shapes, axes, dtypes or values that the function does not accept.");
  g_mismatch = new_exception(m, "DeviceMismatch", {g_error, PyExc_ValueError},
                             "Arrays (or an array and a stream) on different devices in one call.");
  g_oom = new_exception(m, "OutOfMemory", {g_error, PyExc_MemoryError},
                        "An allocation failed; requested_bytes, free_bytes and device say how.");
  g_unavailable = new_exception(m, "Unavailable", {g_error},
                                "A backend or device that was not built, did not load or has no devices.");
  g_backend = new_exception(m, "BackendError", {g_error}, "A vendor call failed (CUDA, HIP, BLAS).");
  // A module __getattr__ (PEP 562): porta.LinAlgError, and the NumPy import it needs, only when asked for.
  m.def("__getattr__", [](const std::string& name) -> py::object {
    if (name == "LinAlgError") return linalg_error_type();
    throw py::attribute_error("module 'porta._porta' has no attribute '" + name + "'");
  });
  // The most derived classes first: porta::Error is the base of all the others.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const OutOfMemory& e) {
      py::object exc = py::reinterpret_borrow<py::object>(g_oom)(e.what());
      exc.attr("requested_bytes") = e.requested_bytes();
      exc.attr("free_bytes") = e.free_bytes();
      exc.attr("device") = e.device();
      PyErr_SetObject(g_oom, exc.ptr());
    } catch (const LinAlgError& e) {
      const py::object type = linalg_error_type();
      py::object exc = type(e.what());
      exc.attr("index") = e.index();
      exc.attr("info") = e.info();
      PyErr_SetObject(type.ptr(), exc.ptr());
    } catch (const InvalidArgument& e) {
      PyErr_SetString(g_invalid, e.what());
    } catch (const DeviceMismatch& e) {
      PyErr_SetString(g_mismatch, e.what());
    } catch (const Unavailable& e) {
      PyErr_SetString(g_unavailable, e.what());
    } catch (const BackendError& e) {
      PyErr_SetString(g_backend, e.what());
    } catch (const Error& e) {
      PyErr_SetString(g_error, e.what());
    }
  });
}

void invalid(const std::string& fn, const std::string& msg) {
  throw InvalidArgument(fn + ": " + msg);
}

void buffer_error(const std::string& msg) {
  PyErr_SetString(PyExc_BufferError, msg.c_str());
  throw py::error_already_set();
}

}  // namespace porta::python
