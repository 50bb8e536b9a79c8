// SPDX-License-Identifier: Apache-2.0
// porta.Array.__cuda_array_interface__, version 3 (interop.hpp): how Numba and older CuPy read a
// CUDA array without DLPack.
#include <cstdint>
#include <string>

#include "arguments.hpp"
#include "interop.hpp"

namespace porta::python {
namespace {

// NumPy's typestr of a dtype; nullptr for bfloat16, which NumPy has not.
const char* typestr(porta_dtype dt) {
  switch (dt) {
    case PORTA_F16:
      return "<f2";
    case PORTA_BF16:
      return nullptr;
    case PORTA_F32:
      return "<f4";
    case PORTA_F64:
      return "<f8";
    case PORTA_I32:
      return "<i4";
    case PORTA_I64:
      return "<i8";
    case PORTA_C64:
      return "<c8";
    case PORTA_C128:
      return "<c16";
  }
  return "|u1";
}

}  // namespace

py::dict cuda_array_interface(ArrayBox& b) {
  return std::visit(
      [&](auto& a) {
        using T = value_of<decltype(a)>;
        if (!a.valid() || a.device().type != DeviceType::cuda)
          throw py::attribute_error("__cuda_array_interface__: only CUDA arrays have one (this one is on " +
                                    a.device().to_string() + ")");
        const char* ts = typestr(detail::dtype_of<T>());
        // An AttributeError, as for a non-CUDA array: a consumer that tests hasattr() moves on to DLPack.
        if (ts == nullptr)
          throw py::attribute_error(std::string("__cuda_array_interface__: the interface has no typestr for ") +
                                    dtype_name(b) + "; DLPack shares it (torch.from_dlpack)");
        py::dict d;
        d["shape"] = shape_tuple(a.shape());
        d["typestr"] = ts;
        d["data"] = py::make_tuple(reinterpret_cast<std::uintptr_t>(a.data()), false);
        d["strides"] = py::none();
        d["version"] = 3;
        // porta's work is ordered on the legacy default stream (its own streams are blocking).
        d["stream"] = 1;
        return d;
      },
      b.v);
}

}  // namespace porta::python
