// SPDX-License-Identifier: Apache-2.0
// The state of one porta.Array, shared by every file of the module.
//
// One Python type, porta.Array, holds any of porta::Array<float|double|int32|int64>,
// porta::Array<porta::complex<float|double>> (complex64, complex128) and
// porta::Array<porta::float16|bfloat16> behind a shared_ptr, so that the Python object, its DLPack
// capsules and the arrays that view it (reshape) share one owner.
// Arrays that come from another library (porta.from_dlpack) are porta::Array::borrow() views that
// hold the producer's DLPack capsule until the last of them dies.
#pragma once

// pybind11/stl.h here, so that every file that converts a std::vector, std::pair or std::optional
// sees the same casters (one without it would compile a different caster for the same type).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <variant>

#include "porta/porta.hpp"

namespace porta::python {

namespace py = pybind11;

using AnyArray = std::variant<Array<float>, Array<double>, Array<std::int32_t>, Array<std::int64_t>,
                              Array<complex<float>>, Array<complex<double>>, Array<float16>, Array<bfloat16>>;

// A struct rather than the variant itself so that pybind11/stl.h's variant caster never applies to it.
struct ArrayBox {
  AnyArray v;
};
using BoxPtr = std::shared_ptr<ArrayBox>;

// The element type of an Array<T> that std::visit hands over (as `auto&`).
template <class A>
using value_of = typename std::decay_t<A>::value_type;

// A new porta.Array that owns `a`.
template <class T>
py::object wrap(Array<T>&& a) {
  return py::cast(std::make_shared<ArrayBox>(ArrayBox{AnyArray(std::move(a))}));
}

// The ArrayBox of a porta.Array, or nullptr for anything else (a number, another library's array).
inline ArrayBox* box_of(py::handle h) {
  if (!py::isinstance<ArrayBox>(h)) return nullptr;
  return &h.cast<ArrayBox&>();
}

inline porta_dtype dtype_of(const ArrayBox& b) {
  return std::visit([](const auto& a) { return detail::dtype_of<value_of<decltype(a)>>(); }, b.v);
}

inline const char* dtype_name(const ArrayBox& b) {
  return detail::dtype_name(dtype_of(b));
}

}  // namespace porta::python
