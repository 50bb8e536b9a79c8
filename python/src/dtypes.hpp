// SPDX-License-Identifier: Apache-2.0
// Dtypes from Python: names to porta_dtype, and porta_dtype to a C++ type.
#pragma once

#include <string>

#include "array_box.hpp"
#include "backends/common/dtype.hpp"
#include "porta/porta.hpp"

namespace porta::python {

// What porta has, for the messages that refuse a dtype.
inline constexpr const char* kDtypeList =
    "porta has float32, float64, int32, int64, complex64, complex128, float16 and bfloat16";

// "float32", "float64", "int32", "int64", "complex64", "complex128", "float16", "bfloat16" and
// their NumPy aliases; dtype objects of NumPy, PyTorch, CuPy and ml_dtypes arrive here as their
// names (porta/__init__.py normalises them). Anything else is porta.InvalidArgument naming `fn`.
porta_dtype parse_dtype(const std::string& fn, const std::string& name);

// Calls f with a value of the dtype's C++ type (the value itself is unused: it carries the type)
// and returns f's Python object. The dispatch is backends/common/dtype.hpp's, which returns false
// for a value outside porta's list of dtypes instead of calling f: here that is a Python error.
// Every dtype of the list must have its Array<T> in AnyArray (array_box.hpp), or the wrap() in f
// does not compile.
template <class F>
py::object with_dtype(porta_dtype dt, F&& f) {
  py::object result;
  if (!detail::backend::with_dtype(dt, [&](auto tag) { result = f(tag); }))
    throw InvalidArgument("porta: dtype value " + std::to_string(static_cast<int>(dt)) + " is not one porta has");
  return result;
}

}  // namespace porta::python
