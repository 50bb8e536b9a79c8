// SPDX-License-Identifier: Apache-2.0
// Python arguments to porta's C++ types: devices, streams, shapes, arrays of a dtype and numbers.
// Each one names the Python-level function (`fn`) in its error, as porta's own messages do.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "array_box.hpp"
#include "errors.hpp"
#include "porta/porta.hpp"

namespace porta::python {

// None -> the default device; a porta.Device; or a string as porta::select_device takes it ("cpu",
// "cuda:1", "gpu"), which checks availability and says why a device is not there.
Device device_arg(py::handle h);

// "cpu", "cuda", "hip": a name of the device-type table.
DeviceType device_type_arg(const std::string& fn, const std::string& name);

// stream=None is "the arrays' device's default stream".
const Stream& stream_arg(const Stream* s);

// dtype= as porta.array takes it: a name, a NumPy/PyTorch/CuPy dtype object, float or int
// (porta._dtype_name is the one place that knows those spellings); None gives nullopt.
std::optional<porta_dtype> dtype_arg(py::handle h, const char* fn);

// A Shape of up to porta's 4 dimensions.
Shape make_shape(const std::vector<std::int64_t>& d, const std::string& fn);

// An int or a sequence of ints.
Shape shape_arg(py::handle h, const std::string& fn);

py::tuple shape_tuple(const Shape& s);

// The Array<T> in `b`; another dtype is porta.InvalidArgument (porta does not promote).
template <class T>
Array<T>& as(ArrayBox& b, const char* fn, const char* name, porta_dtype want) {
  if (auto* p = std::get_if<Array<T>>(&b.v)) return *p;
  invalid(fn, std::string(name) + " is " + dtype_name(b) + ", expected " + detail::dtype_name(want) +
                  " (porta does not promote dtypes: astype converts)");
}

// The Array<T> of a porta.Array argument; anything else is a TypeError.
template <class T>
Array<T>& as(py::handle h, const char* fn, const char* name) {
  ArrayBox* b = box_of(h);
  if (b == nullptr) throw py::type_error(std::string(fn) + ": " + name + " must be a porta.Array");
  return as<T>(*b, fn, name, detail::dtype_of<T>());
}

// A complex Python number: complex, a NumPy complex scalar, anything with __complex__ but not
// float's own conversion (NumPy's complex64 has __float__ too, which drops the imaginary part).
inline bool is_complex_number(py::handle h) {
  return PyComplex_Check(h.ptr()) ||
         (!PyFloat_Check(h.ptr()) && !PyIndex_Check(h.ptr()) && py::hasattr(h, "__complex__"));
}

[[noreturn]] inline void refuse_complex_scalar(const char* fn, const char* name, porta_dtype array) {
  // complex64 holds the array's precision (the 16-bit floats' too), complex128 any other's.
  const bool single = array == PORTA_F32 || array == PORTA_F16 || array == PORTA_BF16;
  const char* to = single ? "complex64" : "complex128";
  invalid(fn, std::string(name) + " is complex and the array is " + detail::dtype_name(array) +
                  " (porta does not promote dtypes: astype('" + to + "') converts)");
}

// A Python number as T: a float for an integer array is refused rather than truncated, and a
// complex number for a real array rather than cut to its real part.
template <class T>
T scalar(py::handle h, const char* fn, const char* name) {
  if constexpr (is_complex_v<T>) {
    using R = typename T::value_type;
    if (PyComplex_Check(h.ptr()) || PyNumber_Check(h.ptr())) {
      const Py_complex c = PyComplex_AsCComplex(h.ptr());
      if (c.real == -1.0 && PyErr_Occurred()) throw py::error_already_set();
      // scalar_as saturates a double beyond float's range to +-inf, as IEEE rounding does.
      return T(detail::scalar_as<R>(c.real, fn), detail::scalar_as<R>(c.imag, fn));
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    if (is_complex_number(h)) refuse_complex_scalar(fn, name, detail::dtype_of<T>());
    if (PyFloat_Check(h.ptr()) || PyLong_Check(h.ptr()) || PyNumber_Check(h.ptr()))
      return static_cast<T>(h.cast<double>());
  } else if constexpr (is_half_v<T>) {
    if (is_complex_number(h)) refuse_complex_scalar(fn, name, detail::dtype_of<T>());
    // Rounded once from the Python value: an int that int64 holds from that integer (its double
    // would be rounded already), anything else from its double (T's constructor does not round
    // through float on the way).
    if (PyLong_Check(h.ptr())) {
      int overflow = 0;
      const long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
      if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
      if (overflow == 0) return T(v);
    }
    if (PyFloat_Check(h.ptr()) || PyLong_Check(h.ptr()) || PyNumber_Check(h.ptr())) return T(h.cast<double>());
  } else {
    if (!PyFloat_Check(h.ptr()) && PyIndex_Check(h.ptr())) {
      const long long v = h.cast<long long>();
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
        invalid(fn, std::string(name) + " = " + std::to_string(v) + " does not fit in " +
                        detail::dtype_name(detail::dtype_of<T>()));
      return static_cast<T>(v);
    }
    if (PyFloat_Check(h.ptr()))
      invalid(fn, std::string(name) + " is a float and the array is " + detail::dtype_name(detail::dtype_of<T>()) +
                      " (porta does not promote dtypes: astype converts)");
    if (is_complex_number(h)) refuse_complex_scalar(fn, name, detail::dtype_of<T>());
  }
  throw py::type_error(std::string(fn) + ": " + name + " must be a porta.Array or a number");
}

// A value of an array's dtype as a Python number: complex for complex64 and complex128, float for
// the 16-bit floats (exact).
template <class T>
py::object number(T v) {
  if constexpr (is_half_v<T>) {
    return py::float_(static_cast<double>(static_cast<float>(v)));
  } else if constexpr (is_complex_v<T>) {
    PyObject* z = PyComplex_FromDoubles(static_cast<double>(v.re), static_cast<double>(v.im));
    if (z == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(z);
  } else {
    return py::cast(v);
  }
}

// The TypeError of an operation that complex numbers do not have (an order: min, max, minimum; or no
// complex form in porta: sin, pow, ...), raised before porta is called, as Python raises for 1j < 2j.
[[noreturn]] inline void no_complex_form(const char* fn, porta_dtype dt, const char* why) {
  throw py::type_error(std::string(fn) + ": not defined for " + detail::dtype_name(dt) + " (" + why + ")");
}

}  // namespace porta::python
