// SPDX-License-Identifier: Apache-2.0
// The module's contents, one function per area of porta's public headers; module.cpp calls them in
// this order (a type is registered before the functions that take or return it are called).
#pragma once

#include <pybind11/pybind11.h>

namespace porta::python {

// porta.Device, devices(), default_device(), memory and synchronisation; porta.Stream, porta.Event
// (porta/device.hpp, porta/stream.hpp). bind_devices.cpp.
void bind_devices(pybind11::module_& m);

// __version__, build_info(), describe(), device_info() and info(), what porta-info prints.
// bind_info.cpp.
void bind_info(pybind11::module_& m);

// porta.Array, its conversions and copies, and the functions that create arrays (porta/array.hpp).
// bind_arrays.cpp.
void bind_arrays(pybind11::module_& m);

// Maps, reductions and matmul/gemm (porta/algorithms.hpp). bind_algorithms.cpp.
void bind_algorithms(pybind11::module_& m);

// The submodule sparse: csr_matrix and its products (porta/sparse.hpp). bind_sparse.cpp.
void bind_sparse(pybind11::module_& m);

// The submodule linalg: solve, inv, cholesky, qr, eigh and svd (porta/linalg.hpp). bind_linalg.cpp.
void bind_linalg(pybind11::module_& m);

// The submodule fft: numpy.fft's transforms, fftfreq and rfftfreq (porta/fft.hpp). bind_fft.cpp.
void bind_fft(pybind11::module_& m);

}  // namespace porta::python
