// SPDX-License-Identifier: Apache-2.0
// Sharing memory with other libraries without a copy: DLPack both ways (porta.Array.__dlpack__ and
// __dlpack_device__, porta.from_dlpack) and CUDA's __cuda_array_interface__. The DLPack structs
// themselves are in dlpack.hpp.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "array_box.hpp"

namespace porta::python {

// ---- devices (dlpack_device.cpp) ------------------------------------------------------------------
// DLPack's (device_type, device_id) for memory on `dev`. A device type that DLPack has no kind for
// raises BufferError naming `fn`: exporting it as CPU memory would hand a consumer a pointer it
// cannot read.
std::pair<int, int> dlpack_device(Device dev, const std::string& fn);

// The porta device of a DLPack device, or nullopt for one porta does not run on.
std::optional<Device> porta_device_of(int dl_type, int dl_id);

// ---- export (dlpack_export.cpp) -------------------------------------------------------------------
// porta.Array.__dlpack__ as the Python array API specifies it (stream, max_version, dl_device, copy).
py::object dlpack_export(py::object self, py::object stream, py::object max_version, py::object dl_device,
                         py::object copy);

// ---- import (dlpack_import.cpp) -------------------------------------------------------------------
// porta.from_dlpack: a porta.Array on the memory of an object with __dlpack__, or of a bare capsule.
py::object from_dlpack(py::object x, py::object device, py::object copy, const Stream* stream);

// ---- __cuda_array_interface__ (cuda_array_interface.cpp) ------------------------------------------
// Version 3 of the interface for a CUDA array; AttributeError for any other, so hasattr() is False.
py::dict cuda_array_interface(ArrayBox& b);

}  // namespace porta::python
