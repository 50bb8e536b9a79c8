// SPDX-License-Identifier: Apache-2.0
// porta._porta: the Python module over porta's public C++ API (porta/porta.hpp), wrapped by the
// package porta (python/porta/__init__.py).
//
// The files of python/src, by concern:
//   array_box.hpp            porta.Array's state (any Array<T> behind a shared_ptr)
//   errors.*                 porta's C++ exceptions as Python exceptions
//   arguments.*, dtypes.*    Python arguments to devices, streams, shapes, dtypes and numbers
//   buffer.*                 host memory through the buffer protocol (NumPy, array.array)
//   dlpack.hpp, interop.hpp, dlpack_*.cpp, cuda_array_interface.cpp
//                            sharing memory with other libraries (DLPack both ways, CUDA's interface)
//   bindings.hpp, bind_*.cpp what Python sees, one file per area of include/porta/*.hpp
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "errors.hpp"

PYBIND11_MODULE(_porta, m) {
  namespace pp = porta::python;
  m.doc() = "porta: one scientific code on NVIDIA GPUs, AMD GPUs and CPUs (the C++ library's Python module)";
  pp::register_errors(m);
  pp::bind_devices(m);
  pp::bind_info(m);
  pp::bind_arrays(m);
  pp::bind_algorithms(m);
  pp::bind_sparse(m);
  pp::bind_linalg(m);
  pp::bind_fft(m);
}
