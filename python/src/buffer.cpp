// SPDX-License-Identifier: Apache-2.0
// Host memory through Python's buffer protocol (buffer.hpp).
#include "buffer.hpp"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "arguments.hpp"
#include "dtypes.hpp"
#include "errors.hpp"

namespace porta::python {
namespace {

// The porta dtype of a buffer-protocol format ("f", "<d", "l", "q", "Zf", ...), or nullopt.
std::optional<porta_dtype> dtype_of_format(std::string f, py::ssize_t itemsize) {
  if (!f.empty() && (f[0] == '@' || f[0] == '=' || f[0] == '<')) f.erase(0, 1);
  // PEP 3118's complex types: Z and the type of each part (NumPy's complex64 is "Zf").
  if (f.size() == 2 && f[0] == 'Z') {
    if (f[1] == 'f' && itemsize == 8) return PORTA_C64;
    if (f[1] == 'd' && itemsize == 16) return PORTA_C128;
    return std::nullopt;
  }
  if (f.size() != 1) return std::nullopt;
  switch (f[0]) {
    case 'e':
      if (itemsize == 2) return PORTA_F16;
      break;
    case 'f':
      if (itemsize == 4) return PORTA_F32;
      break;
    case 'd':
      if (itemsize == 8) return PORTA_F64;
      break;
    case 'i':
    case 'l':
    case 'q':
      if (itemsize == 4) return PORTA_I32;
      if (itemsize == 8) return PORTA_I64;
      break;
    default:
      break;
  }
  return std::nullopt;
}

// The PEP 3118 format of a dtype; nullptr for bfloat16, which has none.
const char* buffer_format(porta_dtype dt) {
  switch (dt) {
    case PORTA_F16:
      return "e";
    case PORTA_BF16:
      return nullptr;
    case PORTA_F32:
      return "f";
    case PORTA_F64:
      return "d";
    case PORTA_I32:
      return "i";
    case PORTA_I64:
      return "q";
    case PORTA_C64:
      return "Zf";
    case PORTA_C128:
      return "Zd";
  }
  return "B";
}

// Py_buffer points at its shape and strides; they live here until the view is released.
struct BufferShape {
  Py_ssize_t shape[Shape::kMaxRank];
  Py_ssize_t strides[Shape::kMaxRank];
};

// pybind11's own getbuffer cannot refuse (a C++ exception there terminates), and a GPU array must be
// refused with a reason, so porta.Array fills the slot itself.
extern "C" int array_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  view->obj = nullptr;
  try {
    ArrayBox& b = py::handle(self).cast<ArrayBox&>();
    return std::visit(
        [&](auto& a) -> int {
          using T = value_of<decltype(a)>;
          if (!a.valid()) {
            PyErr_SetString(PyExc_BufferError, "porta.Array: the array was moved from");
            return -1;
          }
          if (!a.device().host_accessible()) {
            const std::string msg = "porta.Array on " + a.device().to_string() +
                                    ": the buffer protocol exposes host memory only; use numpy(), "
                                    "__dlpack__ or __cuda_array_interface__";
            PyErr_SetString(PyExc_BufferError, msg.c_str());
            return -1;
          }
          const char* format = buffer_format(detail::dtype_of<T>());
          // Raw 16-bit words would be read as integers by every consumer that asks for no format.
          if (format == nullptr) {
            const std::string msg = std::string("porta.Array of ") + dtype_name(b) +
                                    ": the buffer protocol has no format for it (nor has NumPy without "
                                    "ml_dtypes); astype('float32') widens it exactly, DLPack shares it "
                                    "(torch.from_dlpack)";
            PyErr_SetString(PyExc_BufferError, msg.c_str());
            return -1;
          }
          auto* bs = new BufferShape{};
          Py_ssize_t stride = sizeof(T);
          for (int i = a.rank() - 1; i >= 0; --i) {
            bs->shape[i] = static_cast<Py_ssize_t>(a.dim(i));
            bs->strides[i] = stride;
            stride *= bs->shape[i];
          }
          view->buf = a.data();
          view->obj = self;
          Py_INCREF(self);
          view->len = static_cast<Py_ssize_t>(a.nbytes());
          view->readonly = 0;
          view->itemsize = sizeof(T);
          view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>(format) : nullptr;
          const bool nd = (flags & PyBUF_ND) == PyBUF_ND;
          view->ndim = nd ? a.rank() : 1;
          view->shape = nd ? bs->shape : nullptr;
          view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? bs->strides : nullptr;
          view->suboffsets = nullptr;
          view->internal = bs;
          return 0;
        },
        b.v);
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_BufferError, e.what());
    return -1;
  }
}

extern "C" void array_releasebuffer(PyObject*, Py_buffer* view) {
  delete static_cast<BufferShape*>(view->internal);
}

}  // namespace

py::object from_buffer(py::buffer buf, py::handle device, const Stream* stream, py::handle bits_of) {
  const char* fn = "porta.array";
  py::buffer_info info = buf.request();
  std::optional<porta_dtype> dt;
  if (bits_of.is_none()) {
    dt = dtype_of_format(info.format, info.itemsize);
    if (!dt) invalid(fn, "buffer format '" + info.format + "' is not a dtype porta has (" + kDtypeList + ")");
  } else {
    dt = parse_dtype(fn, py::str(bits_of).cast<std::string>());
    if (static_cast<std::size_t>(info.itemsize) != detail::dtype_size(*dt))
      invalid(fn, "the buffer's items have " + std::to_string(info.itemsize) + " bytes, " + detail::dtype_name(*dt) +
                      " elements " + std::to_string(detail::dtype_size(*dt)));
  }
  std::vector<std::int64_t> dims(info.shape.begin(), info.shape.end());
  py::ssize_t expect = info.itemsize;
  for (int i = static_cast<int>(info.ndim) - 1; i >= 0; --i) {
    if (info.shape[static_cast<std::size_t>(i)] > 1 && info.strides[static_cast<std::size_t>(i)] != expect)
      invalid(fn, "the buffer is not C-contiguous (numpy.ascontiguousarray makes it so)");
    expect *= info.shape[static_cast<std::size_t>(i)];
  }
  const Shape shape = make_shape(dims, fn);
  const Device dev = device_arg(device);
  return with_dtype(*dt, [&](auto tag) {
    using T = decltype(tag);
    Array<T> a;
    {
      py::gil_scoped_release nogil;
      a = Array<T>::from(static_cast<const T*>(info.ptr), shape, dev, stream_arg(stream));
    }
    return wrap(std::move(a));
  });
}

void copy_to_buffer(ArrayBox& b, py::buffer out, const Stream* stream) {
  py::buffer_info info = out.request(true);
  std::visit(
      [&](auto& a) {
        if (static_cast<std::size_t>(info.size * info.itemsize) != a.nbytes())
          invalid("porta.Array.numpy", "the destination holds " + std::to_string(info.size * info.itemsize) +
                                           " bytes, the array " + std::to_string(a.nbytes()));
        py::gil_scoped_release nogil;
        a.copy_to_host(static_cast<value_of<decltype(a)>*>(info.ptr), stream_arg(stream));
      },
      b.v);
}

void install_buffer_protocol(py::handle array_type) {
  auto* heap = reinterpret_cast<PyHeapTypeObject*>(array_type.ptr());
  heap->as_buffer.bf_getbuffer = array_getbuffer;
  heap->as_buffer.bf_releasebuffer = array_releasebuffer;
}

}  // namespace porta::python
