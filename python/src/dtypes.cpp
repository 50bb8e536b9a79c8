// SPDX-License-Identifier: Apache-2.0
// Dtype names from Python (dtypes.hpp).
#include "dtypes.hpp"

#include "errors.hpp"

namespace porta::python {

porta_dtype parse_dtype(const std::string& fn, const std::string& name) {
  if (name == "float32" || name == "f4" || name == "single") return PORTA_F32;
  if (name == "float64" || name == "f8" || name == "double" || name == "float") return PORTA_F64;
  if (name == "int32" || name == "i4") return PORTA_I32;
  if (name == "int64" || name == "i8" || name == "int") return PORTA_I64;
  if (name == "complex64" || name == "c8" || name == "csingle") return PORTA_C64;
  // Python's complex is NumPy's complex128, as float is float64.
  if (name == "complex128" || name == "c16" || name == "cdouble" || name == "complex") return PORTA_C128;
  if (name == "float16" || name == "f2" || name == "half") return PORTA_F16;
  // NumPy has no bfloat16 and so no alias: the name is PyTorch's and ml_dtypes'.
  if (name == "bfloat16") return PORTA_BF16;
  invalid(fn, "dtype '" + name + "' is not supported (" + std::string(kDtypeList) + ")");
}

}  // namespace porta::python
