// SPDX-License-Identifier: Apache-2.0
// porta's C++ errors as Python exceptions: porta.Error and its subclasses, one per porta::Error
// class, with porta's messages. Arguments that the bindings check themselves raise
// porta.InvalidArgument with the Python-level function name ("porta.full: ...").
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace porta::python {

// Creates porta.Error, porta.InvalidArgument, ... in `m` and translates porta's C++ exceptions to them.
void register_errors(pybind11::module_& m);

// porta.LinAlgError, made on first use: it derives from numpy.linalg.LinAlgError when NumPy is
// installed, and importing NumPy for it would make `import porta` several times slower.
pybind11::object linalg_error_type();

// Throws porta::InvalidArgument "fn: msg" (porta.InvalidArgument in Python).
[[noreturn]] void invalid(const std::string& fn, const std::string& msg);

// Raises Python's BufferError, the exception that the buffer protocol and DLPack specify.
[[noreturn]] void buffer_error(const std::string& msg);

}  // namespace porta::python
