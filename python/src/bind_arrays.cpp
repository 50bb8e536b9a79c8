// SPDX-License-Identifier: Apache-2.0
// porta.Array and the functions that make arrays (bindings.hpp): porta/array.hpp in Python.
#include <cstdint>
#include <string>
#include <vector>

#include "arguments.hpp"
#include "bindings.hpp"
#include "buffer.hpp"
#include "dtypes.hpp"
#include "interop.hpp"

namespace porta::python {
namespace {

// A reshape that shares memory: a borrowed Array whose keep-alive is the original's box.
py::object reshape(BoxPtr box, py::args args) {
  const char* fn = "porta.Array.reshape";
  py::object spec = args.size() == 1 ? py::object(args[0]) : py::object(args);
  std::vector<std::int64_t> dims = py::isinstance<py::int_>(spec) ? std::vector<std::int64_t>{spec.cast<std::int64_t>()}
                                                                  : spec.cast<std::vector<std::int64_t>>();
  return std::visit(
      [&](auto& a) -> py::object {
        using T = value_of<decltype(a)>;
        a.check_valid(fn);
        // One -1 takes what the others leave, as in NumPy.
        int infer = -1;
        std::int64_t known = 1;
        for (std::size_t i = 0; i < dims.size(); ++i) {
          if (dims[i] == -1) {
            if (infer >= 0) invalid(fn, "only one dimension can be -1");
            infer = static_cast<int>(i);
          } else {
            known *= dims[i];
          }
        }
        if (infer >= 0) {
          if (known == 0 || a.size() % known != 0)
            invalid(fn, "cannot reshape " + a.shape().to_string() + " (" + std::to_string(a.size()) +
                            " elements) with a -1 dimension");
          dims[static_cast<std::size_t>(infer)] = a.size() / known;
        }
        const Shape shape = make_shape(dims, fn);
        if (shape.size() != a.size())
          invalid(fn, "cannot reshape " + a.shape().to_string() + " (" + std::to_string(a.size()) + " elements) to " +
                          shape.to_string());
        return wrap(Array<T>::borrow(a.data(), shape, a.device(), box));
      },
      box->v);
}

std::string repr(ArrayBox& b) {
  return std::visit(
      [&](auto& a) {
        if (!a.valid()) return std::string("porta.Array(moved from)");
        return "porta.Array(shape=" + py::str(shape_tuple(a.shape())).cast<std::string>() + ", dtype=" + dtype_name(b) +
               ", device='" + a.device().to_string() + "')";
      },
      b.v);
}

void bind_array_type(py::module_& m) {
  py::class_<ArrayBox, BoxPtr> array(m, "Array", py::buffer_protocol(),
                                     "A contiguous row-major array on a device, up to 4-D: float32, float64, "
                                     "int32, int64, complex64, complex128, float16 or bfloat16.");
  // pybind11 installed its own buffer slot; porta's refuses GPU arrays with a reason instead.
  install_buffer_protocol(array);
  array
      .def_property_readonly(
          "shape", [](ArrayBox& b) { return std::visit([](auto& a) { return shape_tuple(a.shape()); }, b.v); })
      .def_property_readonly("dtype", [](ArrayBox& b) { return std::string(dtype_name(b)); })
      .def_property_readonly("device", [](ArrayBox& b) { return std::visit([](auto& a) { return a.device(); }, b.v); })
      .def_property_readonly("ndim", [](ArrayBox& b) { return std::visit([](auto& a) { return a.rank(); }, b.v); })
      .def_property_readonly("size", [](ArrayBox& b) { return std::visit([](auto& a) { return a.size(); }, b.v); })
      .def_property_readonly("nbytes", [](ArrayBox& b) { return std::visit([](auto& a) { return a.nbytes(); }, b.v); })
      .def_property_readonly("itemsize", [](ArrayBox& b) { return detail::dtype_size(dtype_of(b)); })
      .def_property_readonly(
          "data_ptr",
          [](ArrayBox& b) {
            return std::visit([](auto& a) { return reinterpret_cast<std::uintptr_t>(a.data()); }, b.v);
          },
          "The address of the first element (device memory for a GPU array).")
      .def_property_readonly(
          "borrowed", [](ArrayBox& b) { return std::visit([](auto& a) { return a.borrowed(); }, b.v); },
          "True for a view of memory porta did not allocate (from_dlpack) or of another array (reshape).")
      .def("__len__",
           [](ArrayBox& b) {
             return std::visit(
                 [](auto& a) -> std::int64_t {
                   if (a.rank() == 0) throw py::type_error("len() of a 0-d porta.Array");
                   return a.dim(0);
                 },
                 b.v);
           })
      .def("__repr__", &repr)
      .def(
          "to",
          [](ArrayBox& b, py::handle device, const Stream* s) {
            const Device dev = device_arg(device);
            return std::visit(
                [&](auto& a) {
                  using T = value_of<decltype(a)>;
                  Array<T> r;
                  {
                    py::gil_scoped_release nogil;
                    r = a.to(dev, stream_arg(s));
                  }
                  return wrap(std::move(r));
                },
                b.v);
          },
          py::arg("device"), py::arg("stream") = py::none(), "A copy on `device` (the same device gives a clone).")
      .def(
          "clone",
          [](ArrayBox& b, const Stream* s) {
            return std::visit(
                [&](auto& a) {
                  using T = value_of<decltype(a)>;
                  Array<T> r;
                  {
                    py::gil_scoped_release nogil;
                    r = a.clone(stream_arg(s));
                  }
                  return wrap(std::move(r));
                },
                b.v);
          },
          py::arg("stream") = py::none())
      .def("reshape", &reshape, "Same memory, new shape of the same size (one dimension may be -1).")
      .def(
          "astype",
          [](ArrayBox& b, const std::string& dtype, const Stream* s) {
            const porta_dtype to = parse_dtype("porta.Array.astype", dtype);
            return std::visit(
                [&](auto& a) {
                  return with_dtype(to, [&](auto tag) {
                    using To = decltype(tag);
                    Array<To> r;
                    {
                      py::gil_scoped_release nogil;
                      r = porta::cast<To>(a, stream_arg(s));
                    }
                    return wrap(std::move(r));
                  });
                },
                b.v);
          },
          py::arg("dtype"), py::arg("stream") = py::none(),
          "A converted copy, porta's one conversion on every device (porta.cast).")
      .def("_copy_to_host", &copy_to_buffer, py::arg("out"), py::arg("stream") = py::none())
      .def("__dlpack__", &dlpack_export, py::kw_only(), py::arg("stream") = py::none(),
           py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(), py::arg("copy") = py::none())
      .def("__dlpack_device__",
           [](ArrayBox& b) {
             const Device dev = std::visit([](auto& a) { return a.device(); }, b.v);
             const auto d = dlpack_device(dev, "porta.Array.__dlpack_device__");
             return py::make_tuple(d.first, d.second);
           })
      .def_property_readonly("__cuda_array_interface__", &cuda_array_interface);
}

void bind_creation(py::module_& m) {
  m.def("_from_buffer", &from_buffer, py::arg("buffer"), py::arg("device") = py::none(), py::arg("stream") = py::none(),
        py::arg("bits_of") = py::none());
  m.def(
      "empty",
      [](py::handle shape, const std::string& dtype, py::handle device) {
        const Shape s = shape_arg(shape, "porta.empty");
        const Device dev = device_arg(device);
        return with_dtype(parse_dtype("porta.empty", dtype), [&](auto tag) {
          using T = decltype(tag);
          return wrap(porta::empty<T>(s, dev));
        });
      },
      py::arg("shape"), py::arg("dtype") = "float32", py::arg("device") = py::none());
  m.def(
      "full",
      [](py::handle shape, py::handle value, const std::string& dtype, py::handle device, const Stream* st) {
        const Shape s = shape_arg(shape, "porta.full");
        const Device dev = device_arg(device);
        return with_dtype(parse_dtype("porta.full", dtype), [&](auto tag) {
          using T = decltype(tag);
          const T v = scalar<T>(value, "porta.full", "value");
          Array<T> r;
          {
            py::gil_scoped_release nogil;
            r = porta::full<T>(s, v, dev, stream_arg(st));
          }
          return wrap(std::move(r));
        });
      },
      py::arg("shape"), py::arg("value"), py::arg("dtype") = "float32", py::arg("device") = py::none(),
      py::arg("stream") = py::none());
  m.def(
      "_arange",
      [](py::handle start, py::handle stop, py::handle step, const std::string& dtype, py::handle device) {
        const Device dev = device_arg(device);
        return with_dtype(parse_dtype("porta.arange", dtype), [&](auto tag) -> py::object {
          using T = decltype(tag);
          // A range needs an order, which complex numbers do not have.
          if constexpr (is_complex_v<T>) {
            const std::string name = detail::dtype_name(detail::dtype_of<T>());
            invalid("porta.arange", "dtype " + name +
                                        " is not supported (arange makes real and integer arrays: "
                                        "porta.arange(...).astype('" +
                                        name + "') converts)");
          } else if constexpr (is_half_v<T>) {
            // porta::arange counts the length in T's own arithmetic, which the 16-bit floats lack:
            // the same length as float32's (from the rounded arguments, in double) and the same
            // iota, start + i * step.
            const T a = scalar<T>(start, "porta.arange", "start");
            const T z = scalar<T>(stop, "porta.arange", "stop");
            const T d = scalar<T>(step, "porta.arange", "step");
            const std::int64_t n =
                detail::arange_length<double>(static_cast<float>(a), static_cast<float>(z), static_cast<float>(d));
            Array<T> r(Shape{n}, dev);
            porta::iota(r, a, d);
            return wrap(std::move(r));
          } else {
            return wrap(porta::arange<T>(scalar<T>(start, "porta.arange", "start"),
                                         scalar<T>(stop, "porta.arange", "stop"),
                                         scalar<T>(step, "porta.arange", "step"), dev));
          }
        });
      },
      py::arg("start"), py::arg("stop"), py::arg("step"), py::arg("dtype"), py::arg("device") = py::none());
  m.def("from_dlpack", &from_dlpack, py::arg("x"), py::kw_only(), py::arg("device") = py::none(),
        py::arg("copy") = py::none(), py::arg("stream") = py::none(),
        "A porta.Array on the memory of a DLPack tensor (NumPy, PyTorch, CuPy, ...): no copy.");
}

}  // namespace

void bind_arrays(py::module_& m) {
  bind_array_type(m);
  bind_creation(m);
}

}  // namespace porta::python
