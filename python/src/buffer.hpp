// SPDX-License-Identifier: Apache-2.0
// Host memory through Python's buffer protocol: copies from and to NumPy arrays, array.array and
// memoryview, and porta.Array's own buffer for CPU arrays (numpy.asarray(x) without a copy).
#pragma once

#include "array_box.hpp"

namespace porta::python {

// A copy of a C-contiguous host buffer on `device` (porta._from_buffer, behind porta.array). The
// dtype is the buffer format's, or with `bits_of` (a dtype name) that dtype, whose element size the
// items must have: the bits of a format PEP 3118 lacks (ml_dtypes' bfloat16 seen as uint16).
py::object from_buffer(py::buffer buf, py::handle device, const Stream* stream, py::handle bits_of);

// Device -> host into a writable C-contiguous buffer of the same size in bytes (Array._copy_to_host,
// behind numpy()).
void copy_to_buffer(ArrayBox& b, py::buffer out, const Stream* stream);

// Replaces the buffer slots that pybind11 gave the porta.Array type with porta's, which refuse a GPU
// array with a reason.
void install_buffer_protocol(py::handle array_type);

}  // namespace porta::python
