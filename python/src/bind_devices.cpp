// SPDX-License-Identifier: Apache-2.0
// Devices, streams and events (bindings.hpp): porta/device.hpp and porta/stream.hpp in Python.
#include <cstdint>
#include <memory>
#include <string>

#include "arguments.hpp"
#include "bindings.hpp"

namespace porta::python {

void bind_devices(py::module_& m) {
  // ---- devices ----
  py::class_<Device>(m, "Device", "A device: 'cpu', 'cuda:N' or 'hip:N'.")
      .def(py::init([](const std::string& s) { return Device::parse(s); }), py::arg("name"))
      .def(py::init(
               [](const std::string& type, int index) { return Device(device_type_arg("porta.Device", type), index); }),
           py::arg("type"), py::arg("index"))
      .def_property_readonly("type", [](const Device& d) { return std::string(porta::to_string(d.type)); })
      .def_readonly("index", &Device::index)
      .def_property_readonly("is_gpu", &Device::is_gpu)
      .def("__str__", &Device::to_string)
      .def("__repr__", [](const Device& d) { return "porta.Device('" + d.to_string() + "')"; })
      .def("__eq__",
           [](const Device& a, py::handle b) {
             if (py::isinstance<Device>(b)) return a == b.cast<Device>();
             if (py::isinstance<py::str>(b)) return a.to_string() == b.cast<std::string>();
             return false;
           })
      .def("__hash__", [](const Device& d) { return py::hash(py::str(d.to_string())); });

  m.def("devices", &porta::devices, "Every usable device: CUDA, then HIP, then the CPU.");
  m.def("default_device", &porta::default_device,
        "set_default_device()'s, else PORTA_DEVICE's, else cuda:0, else hip:0, else cpu.");
  m.def(
      "set_default_device", [](py::handle d) { porta::set_default_device(device_arg(d)); }, py::arg("device"));
  m.def(
      "select_device", [](const std::string& s) { return porta::select_device(s); }, py::arg("name"),
      "Like Device(name), also 'gpu' and 'auto'; an unavailable device is porta.Unavailable saying why.");
  m.def(
      "is_available",
      [](py::handle d) {
        if (py::isinstance<py::str>(d)) {
          const std::string s = d.cast<std::string>();
          if (s.find(':') == std::string::npos) return porta::is_available(device_type_arg("porta.is_available", s));
          return porta::is_available(Device::parse(s));
        }
        return porta::is_available(d.cast<Device>());
      },
      py::arg("device"));
  m.def(
      "unavailable_reason",
      [](const std::string& type) {
        return porta::unavailable_reason(device_type_arg("porta.unavailable_reason", type));
      },
      py::arg("type"));
  m.def(
      "memory_stats",
      [](py::handle d) {
        const MemoryStats s = porta::memory_stats(device_arg(d));
        py::dict r;
        r["bytes_in_use"] = s.bytes_in_use;
        r["bytes_reserved"] = s.bytes_reserved;
        r["peak_bytes_in_use"] = s.peak_bytes_in_use;
        r["alloc_count"] = s.alloc_count;
        return r;
      },
      py::arg("device") = py::none());
  m.def(
      "empty_cache", [](py::handle d) { porta::empty_cache(device_arg(d)); }, py::arg("device") = py::none());
  m.def(
      "synchronize",
      [](py::handle d) {
        const Device dev = device_arg(d);
        py::gil_scoped_release nogil;
        porta::synchronize(dev);
      },
      py::arg("device") = py::none(), "Waits for all work on the device.");

  // ---- streams and events ----
  py::class_<Stream>(m, "Stream", "A stream of a device: work on one stream runs in order.")
      .def(py::init([](py::handle d) { return std::make_unique<Stream>(device_arg(d)); }),
           py::arg("device") = py::none())
      .def_static(
          "default", [](py::handle d) { return Stream::default_stream(device_arg(d)); }, py::arg("device") = py::none(),
          "The default stream of a device (not owned).")
      .def_property_readonly("device", &Stream::device)
      .def_property_readonly(
          "handle", [](const Stream& s) { return reinterpret_cast<std::uintptr_t>(s.native_handle()); },
          "cudaStream_t / hipStream_t as an int (0: the default stream)")
      .def("synchronize",
           [](const Stream& s) {
             py::gil_scoped_release nogil;
             s.synchronize();
           })
      .def("query", &Stream::query)
      .def("wait", &Stream::wait, py::arg("event"));
  py::class_<Event>(m, "Event")
      .def(py::init([](py::handle d) { return std::make_unique<Event>(device_arg(d)); }),
           py::arg("device") = py::none())
      .def_property_readonly("device", &Event::device)
      .def(
          "record", [](Event& e, const Stream* s) { e.record(stream_arg(s)); }, py::arg("stream") = py::none())
      .def("synchronize",
           [](const Event& e) {
             py::gil_scoped_release nogil;
             e.synchronize();
           })
      .def("query", &Event::query)
      .def_static("elapsed_ms", &Event::elapsed_ms, py::arg("start"), py::arg("end"));
}

}  // namespace porta::python
