// SPDX-License-Identifier: Apache-2.0
// Python arguments to porta's C++ types (arguments.hpp).
#include "arguments.hpp"

#include <cstddef>

#include "dtypes.hpp"

namespace porta::python {

Device device_arg(py::handle h) {
  if (h.is_none()) return default_device();
  if (py::isinstance<Device>(h)) return h.cast<Device>();
  if (py::isinstance<py::str>(h)) return select_device(h.cast<std::string>());
  throw py::type_error("porta: a device is a porta.Device, a string such as 'cuda:0', or None");
}

DeviceType device_type_arg(const std::string& fn, const std::string& name) {
  for (const detail::DeviceTypeFacts& f : detail::kDeviceTypes)
    if (name == f.name) return f.type;
  invalid(fn, "unknown device type '" + name + "'");
}

const Stream& stream_arg(const Stream* s) {
  static const Stream placeholder;  // "the arrays' device's default stream"
  return s != nullptr ? *s : placeholder;
}

std::optional<porta_dtype> dtype_arg(py::handle h, const char* fn) {
  if (h.is_none()) return std::nullopt;
  if (py::isinstance<py::str>(h)) return parse_dtype(fn, h.cast<std::string>());
  const py::object name = py::module_::import("porta").attr("_dtype_name")(h);
  return parse_dtype(fn, py::str(name).cast<std::string>());
}

Shape make_shape(const std::vector<std::int64_t>& d, const std::string& fn) {
  if (d.size() > static_cast<std::size_t>(Shape::kMaxRank))
    invalid(fn, "rank " + std::to_string(d.size()) + " is above porta's 4");
  return porta::detail::make_shape(d.data(), static_cast<int>(d.size()));
}

Shape shape_arg(py::handle h, const std::string& fn) {
  if (py::isinstance<py::int_>(h)) return make_shape({h.cast<std::int64_t>()}, fn);
  return make_shape(h.cast<std::vector<std::int64_t>>(), fn);
}

py::tuple shape_tuple(const Shape& s) {
  py::tuple t(static_cast<std::size_t>(s.rank()));
  for (int i = 0; i < s.rank(); ++i) t[static_cast<std::size_t>(i)] = s[i];
  return t;
}

}  // namespace porta::python
