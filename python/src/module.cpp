// SPDX-License-Identifier: Apache-2.0
// porta._porta: the Python module over porta's public C++ API (porta/porta.hpp).
//
// One Python type, porta.Array, holds any of porta::Array<float|double|int32|int64> behind a
// shared_ptr, so that the Python object, its DLPack capsules and the arrays that view it
// (reshape) share one owner. Arrays that come from another library (porta.from_dlpack) are
// porta::Array::borrow() views that hold the producer's DLPack capsule until the last of them
// dies. Errors are porta's own classes and messages; arguments the bindings check themselves
// raise porta.InvalidArgument with the Python-level function name.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "backends/cpu/cpu_blas.hpp"
#include "backends/cpu/cpu_isa.hpp"
#include "backends/cpu/cpu_kernels.hpp"
#include "distributed/engine.hpp"
#include "dlpack.hpp"
#include "porta/detail/config.hpp"
#include "porta/detail/runtime.hpp"
#include "porta/porta.hpp"

namespace py = pybind11;

namespace porta::python {
namespace {

using AnyArray = std::variant<Array<float>, Array<double>, Array<std::int32_t>, Array<std::int64_t>>;

// The state of one porta.Array. A struct rather than the variant itself so that pybind11/stl.h's
// variant caster never applies to it.
struct ArrayBox {
  AnyArray v;
};
using BoxPtr = std::shared_ptr<ArrayBox>;

template <class A>
using value_of = typename std::decay_t<A>::value_type;

template <class T>
py::object wrap(Array<T>&& a) {
  return py::cast(std::make_shared<ArrayBox>(ArrayBox{AnyArray(std::move(a))}));
}

[[noreturn]] void invalid(const std::string& fn, const std::string& msg) {
  throw InvalidArgument(fn + ": " + msg);
}

[[noreturn]] void buffer_error(const std::string& msg) {
  PyErr_SetString(PyExc_BufferError, msg.c_str());
  throw py::error_already_set();
}

porta_dtype dtype_of(const ArrayBox& b) {
  return std::visit([](const auto& a) { return detail::dtype_of<value_of<decltype(a)>>(); }, b.v);
}
const char* dtype_name(const ArrayBox& b) {
  return detail::dtype_name(dtype_of(b));
}

// "float32", "float64", "int32", "int64" and their NumPy aliases; dtype objects of NumPy, PyTorch
// and CuPy arrive here as their names (porta/__init__.py normalises them).
porta_dtype parse_dtype(const std::string& fn, const std::string& name) {
  if (name == "float32" || name == "f4" || name == "single") return PORTA_F32;
  if (name == "float64" || name == "f8" || name == "double" || name == "float") return PORTA_F64;
  if (name == "int32" || name == "i4") return PORTA_I32;
  if (name == "int64" || name == "i8" || name == "int") return PORTA_I64;
  invalid(fn, "dtype '" + name + "' is not supported (porta has float32, float64, int32 and int64)");
}

// Calls f with a value of the dtype's C++ type (the value itself is unused: it carries the type).
template <class F>
decltype(auto) with_dtype(porta_dtype dt, F&& f) {
  switch (dt) {
    case PORTA_F32:
      return f(float{});
    case PORTA_F64:
      return f(double{});
    case PORTA_I32:
      return f(std::int32_t{});
    case PORTA_I64:
      return f(std::int64_t{});
  }
  throw InvalidArgument("porta: unknown dtype");
}

// ---- errors ------------------------------------------------------------------------------------
PyObject* g_error = nullptr;
PyObject* g_invalid = nullptr;
PyObject* g_mismatch = nullptr;
PyObject* g_oom = nullptr;
PyObject* g_unavailable = nullptr;
PyObject* g_backend = nullptr;

PyObject* new_exception(py::module_& m, const char* name, std::initializer_list<PyObject*> bases, const char* doc) {
  py::tuple b(bases.size());
  std::size_t i = 0;
  for (PyObject* p : bases) b[i++] = py::reinterpret_borrow<py::object>(p);
  const std::string qual = std::string("porta.") + name;
  PyObject* e = PyErr_NewExceptionWithDoc(qual.c_str(), doc, b.ptr(), nullptr);
  if (e == nullptr) throw py::error_already_set();
  m.attr(name) = py::reinterpret_borrow<py::object>(e);
  return e;
}

void register_errors(py::module_& m) {
  g_error = new_exception(m, "Error", {PyExc_RuntimeError}, "Every porta error (porta::Error).");
  g_invalid = new_exception(m, "InvalidArgument", {g_error, PyExc_ValueError},
                            "Shapes, axes, dtypes or values that the function does not accept.");
  g_mismatch = new_exception(m, "DeviceMismatch", {g_error, PyExc_ValueError},
                             "Arrays (or an array and a stream) on different devices in one call.");
  g_oom = new_exception(m, "OutOfMemory", {g_error, PyExc_MemoryError},
                        "An allocation failed; requested_bytes, free_bytes and device say how.");
  g_unavailable = new_exception(m, "Unavailable", {g_error},
                                "A backend or device that was not built, did not load or has no devices.");
  g_backend = new_exception(m, "BackendError", {g_error}, "A vendor call failed (CUDA, HIP, BLAS).");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const OutOfMemory& e) {
      py::object exc = py::reinterpret_borrow<py::object>(g_oom)(e.what());
      exc.attr("requested_bytes") = e.requested_bytes();
      exc.attr("free_bytes") = e.free_bytes();
      exc.attr("device") = e.device();
      PyErr_SetObject(g_oom, exc.ptr());
    } catch (const InvalidArgument& e) {
      PyErr_SetString(g_invalid, e.what());
    } catch (const DeviceMismatch& e) {
      PyErr_SetString(g_mismatch, e.what());
    } catch (const Unavailable& e) {
      PyErr_SetString(g_unavailable, e.what());
    } catch (const BackendError& e) {
      PyErr_SetString(g_backend, e.what());
    } catch (const Error& e) {
      PyErr_SetString(g_error, e.what());
    }
  });
}

// ---- devices, streams ----------------------------------------------------------------------------
// None -> the default device; a porta.Device; or a string as porta::select_device takes it ("cpu",
// "cuda:1", "gpu"), which checks availability and says why a device is not there.
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

// ---- shapes and host buffers ---------------------------------------------------------------------
Shape make_shape(const std::vector<std::int64_t>& d, const std::string& fn) {
  if (d.size() > static_cast<std::size_t>(Shape::kMaxRank))
    invalid(fn, "rank " + std::to_string(d.size()) + " is above porta's 4");
  return porta::detail::make_shape(d.data(), static_cast<int>(d.size()));
}

// An int or a sequence of ints.
Shape shape_arg(py::handle h, const std::string& fn) {
  if (py::isinstance<py::int_>(h)) return make_shape({h.cast<std::int64_t>()}, fn);
  return make_shape(h.cast<std::vector<std::int64_t>>(), fn);
}

py::tuple shape_tuple(const Shape& s) {
  py::tuple t(static_cast<std::size_t>(s.rank()));
  for (int i = 0; i < s.rank(); ++i) t[static_cast<std::size_t>(i)] = s[i];
  return t;
}

// The porta dtype of a buffer-protocol format ("f", "<d", "l", "q", ...), or nullopt.
std::optional<porta_dtype> dtype_of_format(std::string f, py::ssize_t itemsize) {
  if (!f.empty() && (f[0] == '@' || f[0] == '=' || f[0] == '<')) f.erase(0, 1);
  if (f.size() != 1) return std::nullopt;
  switch (f[0]) {
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

// A copy of a C-contiguous host buffer (a NumPy array, array.array, memoryview) on `device`.
py::object from_buffer(py::buffer buf, py::handle device, const Stream* stream) {
  const char* fn = "porta.array";
  py::buffer_info info = buf.request();
  const auto dt = dtype_of_format(info.format, info.itemsize);
  if (!dt) invalid(fn, "buffer format '" + info.format + "' is not float32, float64, int32 or int64");
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

// Device -> host into a writable C-contiguous buffer of the same size in bytes.
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

// ---- the buffer protocol (CPU arrays) --------------------------------------------------------------
struct BufferShape {
  Py_ssize_t shape[Shape::kMaxRank];
  Py_ssize_t strides[Shape::kMaxRank];
};

const char* buffer_format(porta_dtype dt) {
  switch (dt) {
    case PORTA_F32:
      return "f";
    case PORTA_F64:
      return "d";
    case PORTA_I32:
      return "i";
    case PORTA_I64:
      return "q";
  }
  return "B";
}

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
          if (a.device().is_gpu() || a.device().is_strict()) {
            const std::string msg = "porta.Array on " + a.device().to_string() +
                                    ": the buffer protocol exposes host memory only; use numpy(), "
                                    "__dlpack__ or __cuda_array_interface__";
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
          view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>(buffer_format(detail::dtype_of<T>())) : nullptr;
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

// ---- DLPack: export --------------------------------------------------------------------------------
dlpack::DataType dl_dtype(porta_dtype dt) {
  switch (dt) {
    case PORTA_F32:
      return {dlpack::kDLFloat, 32, 1};
    case PORTA_F64:
      return {dlpack::kDLFloat, 64, 1};
    case PORTA_I32:
      return {dlpack::kDLInt, 32, 1};
    case PORTA_I64:
      return {dlpack::kDLInt, 64, 1};
  }
  return {dlpack::kDLUInt, 8, 1};
}

std::pair<int, int> dl_device_of(Device d) {
  switch (d.type) {
    case DeviceType::cuda:
      return {dlpack::kDLCUDA, d.index};
    case DeviceType::hip:
      return {dlpack::kDLROCM, d.index};
    default:
      return {dlpack::kDLCPU, 0};
  }
}

// What a capsule owns: the array (shared with the Python object) and the shape it points into.
struct ExportCtx {
  BoxPtr keep;
  std::int64_t shape[Shape::kMaxRank] = {};
  std::int64_t strides[Shape::kMaxRank] = {};
  dlpack::ManagedTensor legacy{};
  dlpack::ManagedTensorVersioned versioned{};
};

// The deleters run wherever the consumer drops the tensor, with or without the GIL: dropping the
// array frees porta memory (no Python involved), or for a borrowed array releases the producer's
// capsule, which takes the GIL itself (ImportOwner).
void export_deleter(dlpack::ManagedTensor* self) {
  delete static_cast<ExportCtx*>(self->manager_ctx);
}
void export_deleter_versioned(dlpack::ManagedTensorVersioned* self) {
  delete static_cast<ExportCtx*>(self->manager_ctx);
}

// A capsule that no consumer renamed still owns its tensor.
extern "C" void capsule_destructor(PyObject* cap) {
  if (PyCapsule_IsValid(cap, dlpack::kCapsuleUsed) || PyCapsule_IsValid(cap, dlpack::kCapsuleVersionedUsed)) return;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  if (PyCapsule_IsValid(cap, dlpack::kCapsuleVersioned)) {
    auto* m = static_cast<dlpack::ManagedTensorVersioned*>(PyCapsule_GetPointer(cap, dlpack::kCapsuleVersioned));
    if (m->deleter) m->deleter(m);
  } else if (PyCapsule_IsValid(cap, dlpack::kCapsule)) {
    auto* m = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(cap, dlpack::kCapsule));
    if (m->deleter) m->deleter(m);
  } else {
    PyErr_WriteUnraisable(cap);
  }
  PyErr_Restore(type, value, tb);
}

py::object make_capsule(BoxPtr box, bool versioned, bool copied) {
  auto ctx = std::make_unique<ExportCtx>();
  dlpack::Tensor t{};
  std::visit(
      [&](auto& a) {
        using T = value_of<decltype(a)>;
        std::int64_t stride = 1;
        for (int i = a.rank() - 1; i >= 0; --i) {
          ctx->shape[i] = a.dim(i);
          ctx->strides[i] = stride;
          stride *= a.dim(i);
        }
        // cpu:strict's memory is not host memory (docs/strict.md), and DLPack has no device for it.
        if (a.device().is_strict())
          buffer_error(
              "porta.Array on cpu:strict: its memory cannot be shared through DLPack (no consumer may "
              "read it); use numpy(), or .to('cpu') first");
        t.data = const_cast<T*>(a.data());
        const auto dev = dl_device_of(a.device());
        t.device = {dev.first, dev.second};
        t.ndim = a.rank();
        t.dtype = dl_dtype(detail::dtype_of<T>());
      },
      box->v);
  // Strides always given: DLPack 1.x deprecates NULL strides for compact tensors.
  t.shape = ctx->shape;
  t.strides = ctx->strides;
  t.byte_offset = 0;
  ctx->keep = std::move(box);
  ExportCtx* raw = ctx.get();
  PyObject* cap;
  if (versioned) {
    raw->versioned.version = {dlpack::kMajorVersion, dlpack::kMinorVersion};
    raw->versioned.manager_ctx = raw;
    raw->versioned.deleter = export_deleter_versioned;
    raw->versioned.flags = copied ? dlpack::kFlagIsCopied : 0;
    raw->versioned.dl_tensor = t;
    cap = PyCapsule_New(&raw->versioned, dlpack::kCapsuleVersioned, capsule_destructor);
  } else {
    raw->legacy.dl_tensor = t;
    raw->legacy.manager_ctx = raw;
    raw->legacy.deleter = export_deleter;
    cap = PyCapsule_New(&raw->legacy, dlpack::kCapsule, capsule_destructor);
  }
  if (cap == nullptr) throw py::error_already_set();
  ctx.release();  // the capsule owns it now
  return py::reinterpret_steal<py::object>(cap);
}

// The producer's half of the stream handshake: the consumer's stream must not start on the
// array before porta's work on it is done. porta's default stream is the legacy default stream
// and its own streams are blocking streams, so an event recorded on the default stream completes
// after all porta work issued so far on the device; the consumer's stream waits for it.
void wait_on_consumer_stream(Device dev, py::handle stream, const char* fn) {
  if (stream.is_none()) return;  // "assume the legacy default stream": ordered already
  if (!py::isinstance<py::int_>(stream)) throw py::type_error(std::string(fn) + ": stream must be an int or None");
  const std::int64_t s = stream.cast<std::int64_t>();
  if (s == -1) return;  // the consumer asked for no synchronisation
  if (dev.type == DeviceType::cuda) {
    if (s == 0) buffer_error(std::string(fn) + ": stream 0 is ambiguous for CUDA (1: legacy default, 2: per-thread)");
    if (s == 1) return;
  } else if (s == 0) {
    return;  // ROCm's default stream
  } else if (s == 1 || s == 2) {
    buffer_error(std::string(fn) + ": streams 1 and 2 are not defined for ROCm");
  }
  Event ev(dev);
  ev.record(Stream::default_stream(dev));
  const porta_backend_v1& t = detail::backend_for(dev);
  detail::check(t.stream_wait_event(dev.index, reinterpret_cast<porta_stream>(static_cast<std::intptr_t>(s)),
                                    static_cast<porta_event>(ev.native_handle())),
                fn, dev);
}

py::object dlpack_export(py::object self, py::object stream, py::object max_version, py::object dl_device,
                         py::object copy) {
  const char* fn = "porta.Array.__dlpack__";
  BoxPtr box = self.cast<BoxPtr>();
  const Device dev = std::visit(
      [&](auto& a) {
        a.check_valid(fn);
        return a.device();
      },
      box->v);
  const bool versioned = !max_version.is_none() && max_version.cast<py::tuple>()[0].cast<int>() >= 1;
  const bool copy_true = !copy.is_none() && copy.cast<bool>();
  const bool copy_false = !copy.is_none() && !copy.cast<bool>();
  Device target = dev;
  if (!dl_device.is_none()) {
    const auto want = dl_device.cast<std::pair<int, int>>();
    if (want != dl_device_of(dev)) {
      if (want.first != dlpack::kDLCPU)
        buffer_error(std::string(fn) + ": cannot export an array on " + dev.to_string() + " to DLPack device (" +
                     std::to_string(want.first) + ", " + std::to_string(want.second) + ")");
      if (copy_false)
        buffer_error(std::string(fn) + ": the array is on " + dev.to_string() + "; the CPU needs a copy (copy=False)");
      target = Device(DeviceType::cpu);
    }
  }
  if (target != dev) {
    // dl_device=CPU with a GPU array: a host copy, after porta's work (to() synchronises).
    BoxPtr host = std::visit(
        [&](auto& a) {
          py::gil_scoped_release nogil;
          return std::make_shared<ArrayBox>(ArrayBox{AnyArray(a.to(target))});
        },
        box->v);
    return make_capsule(std::move(host), versioned, true);
  }
  if (dev.is_gpu()) {
    wait_on_consumer_stream(dev, stream, fn);
  } else if (!stream.is_none() && !(py::isinstance<py::int_>(stream) && stream.cast<std::int64_t>() == -1)) {
    buffer_error(std::string(fn) + ": a CPU array takes stream=None (the CPU backend is synchronous)");
  }
  if (copy_true) {
    BoxPtr c = std::visit(
        [&](auto& a) {
          py::gil_scoped_release nogil;
          return std::make_shared<ArrayBox>(ArrayBox{AnyArray(a.clone())});
        },
        box->v);
    if (dev.is_gpu()) wait_on_consumer_stream(dev, stream, fn);
    return make_capsule(std::move(c), versioned, true);
  }
  return make_capsule(std::move(box), versioned, false);
}

// ---- DLPack: import --------------------------------------------------------------------------------
// Owns a consumed DLPack tensor. Deleted when the last porta array viewing it dies, possibly on a
// thread without the GIL: the producer's deleter (NumPy's, for one) touches Python objects.
struct ImportOwner {
  void* managed = nullptr;
  bool versioned = false;
  Device device{};
  ImportOwner(void* m, bool v, Device d) : managed(m), versioned(v), device(d) {}
  ImportOwner(const ImportOwner&) = delete;
  ImportOwner& operator=(const ImportOwner&) = delete;
  ~ImportOwner() {
    if (!Py_IsInitialized()) return;  // at interpreter teardown a leak beats a crash
    // porta's queued work on the memory must finish before the producer may reuse it.
    if (device.is_gpu()) {
      try {
        synchronize(device);
      } catch (...) {
      }
    }
    PyGILState_STATE st = PyGILState_Ensure();
    if (versioned) {
      auto* m = static_cast<dlpack::ManagedTensorVersioned*>(managed);
      if (m->deleter) m->deleter(m);
    } else {
      auto* m = static_cast<dlpack::ManagedTensor*>(managed);
      if (m->deleter) m->deleter(m);
    }
    PyGILState_Release(st);
  }
};

std::optional<Device> porta_device_of(int type, int id) {
  switch (type) {
    case dlpack::kDLCPU:
    case dlpack::kDLCUDAHost:
    case dlpack::kDLROCMHost:
      return Device(DeviceType::cpu);
    case dlpack::kDLCUDA:
    case dlpack::kDLCUDAManaged:
      return Device(DeviceType::cuda, id);
    case dlpack::kDLROCM:
      return Device(DeviceType::hip, id);
    default:
      return std::nullopt;
  }
}

std::string dl_dtype_name(dlpack::DataType d) {
  const char* kind = d.code == dlpack::kDLInt       ? "int"
                     : d.code == dlpack::kDLUInt    ? "uint"
                     : d.code == dlpack::kDLFloat   ? "float"
                     : d.code == dlpack::kDLBfloat  ? "bfloat"
                     : d.code == dlpack::kDLBool    ? "bool"
                     : d.code == dlpack::kDLComplex ? "complex"
                                                    : "code";
  std::string s = kind + std::to_string(d.bits);
  if (d.lanes != 1) s += "x" + std::to_string(d.lanes);
  return s;
}

std::optional<porta_dtype> porta_dtype_of(dlpack::DataType d) {
  if (d.lanes != 1) return std::nullopt;
  if (d.code == dlpack::kDLFloat && d.bits == 32) return PORTA_F32;
  if (d.code == dlpack::kDLFloat && d.bits == 64) return PORTA_F64;
  if (d.code == dlpack::kDLInt && d.bits == 32) return PORTA_I32;
  if (d.code == dlpack::kDLInt && d.bits == 64) return PORTA_I64;
  return std::nullopt;
}

void check_device_usable(Device dev, const char* fn) {
  if (!is_available(dev.type))
    throw Unavailable(std::string(fn) + ": the tensor is on " + dev.to_string() + ", and " +
                      detail::facts(dev.type)->display_name + " is not available: " + unavailable_reason(dev.type));
  if (!is_available(dev))
    throw Unavailable(std::string(fn) + ": the tensor is on " + dev.to_string() + ", which porta does not see");
}

// Takes ownership of the tensor in `cap` (renaming it "used_...") and returns a porta.Array that
// views it; copies where the tensor is read-only or copy=True.
py::object consume_capsule(py::handle cap, py::handle copy) {
  const char* fn = "porta.from_dlpack";
  const bool copy_true = !copy.is_none() && copy.cast<bool>();
  const bool copy_false = !copy.is_none() && !copy.cast<bool>();
  dlpack::Tensor* t = nullptr;
  void* managed = nullptr;
  bool versioned = false;
  bool read_only = false;
  if (PyCapsule_IsValid(cap.ptr(), dlpack::kCapsuleVersioned)) {
    auto* m = static_cast<dlpack::ManagedTensorVersioned*>(PyCapsule_GetPointer(cap.ptr(), dlpack::kCapsuleVersioned));
    if (m->version.major > dlpack::kMajorVersion)
      buffer_error(std::string(fn) + ": DLPack " + std::to_string(m->version.major) + "." +
                   std::to_string(m->version.minor) + " tensors are newer than porta reads (1.x)");
    t = &m->dl_tensor;
    managed = m;
    versioned = true;
    read_only = (m->flags & dlpack::kFlagReadOnly) != 0;
  } else if (PyCapsule_IsValid(cap.ptr(), dlpack::kCapsule)) {
    auto* m = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), dlpack::kCapsule));
    t = &m->dl_tensor;
    managed = m;
  } else {
    buffer_error(std::string(fn) + ": not an unused DLPack capsule (each capsule can be consumed once)");
  }
  // Everything is checked before the capsule is renamed, so that a refusal leaves it with the
  // producer, whose capsule destructor frees the tensor.
  const auto dev = porta_device_of(t->device.device_type, t->device.device_id);
  if (!dev)
    buffer_error(std::string(fn) + ": DLPack device type " + std::to_string(t->device.device_type) +
                 " is not one porta runs on (CPU, CUDA, ROCm)");
  check_device_usable(*dev, fn);
  const auto dt = porta_dtype_of(t->dtype);
  if (!dt)
    invalid(fn, "dtype " + dl_dtype_name(t->dtype) + " is not supported (porta has float32, float64, int32 and int64)");
  if (t->ndim < 0 || t->ndim > Shape::kMaxRank) invalid(fn, "rank " + std::to_string(t->ndim) + " is above porta's 4");
  std::vector<std::int64_t> dims(t->shape, t->shape + t->ndim);
  std::int64_t n = 1;
  for (std::int64_t d : dims) n *= d;
  if (t->strides != nullptr && n > 0) {
    std::int64_t expect = 1;
    for (int i = t->ndim - 1; i >= 0; --i) {
      if (dims[static_cast<std::size_t>(i)] != 1 && t->strides[i] != expect)
        invalid(fn,
                "the tensor is not C-contiguous (strides differ from row-major); porta arrays are contiguous: "
                "call .contiguous() (PyTorch) or ascontiguousarray (NumPy, CuPy) first");
      expect *= dims[static_cast<std::size_t>(i)];
    }
  }
  const std::size_t itemsize = detail::dtype_size(*dt);
  char* data = static_cast<char*>(t->data) + t->byte_offset;
  if (reinterpret_cast<std::uintptr_t>(data) % itemsize != 0)
    invalid(fn, "the tensor's data is not aligned to its element size");
  if (read_only && copy_false)
    buffer_error(std::string(fn) +
                 ": the tensor is read-only and porta arrays are writable: a copy is needed (copy=False)");
  const Shape shape = make_shape(dims, fn);

  if (PyCapsule_SetName(cap.ptr(), versioned ? dlpack::kCapsuleVersionedUsed : dlpack::kCapsuleUsed) != 0)
    throw py::error_already_set();
  auto owner = std::make_shared<ImportOwner>(managed, versioned, *dev);
  return with_dtype(*dt, [&](auto tag) -> py::object {
    using T = decltype(tag);
    Array<T> view = Array<T>::borrow(reinterpret_cast<T*>(data), shape, *dev, owner);
    if (read_only || copy_true) {
      Array<T> c;
      {
        py::gil_scoped_release nogil;
        c = view.clone();
      }
      return wrap(std::move(c));
    }
    return wrap(std::move(view));
  });
}

// The consumer's half of the handshake: the stream porta will use, as __dlpack__ takes it.
py::object consumer_stream(Device dev, const Stream* stream) {
  if (!dev.is_gpu()) return py::none();
  void* h = stream != nullptr ? stream->native_handle() : nullptr;
  if (h != nullptr) return py::int_(reinterpret_cast<std::intptr_t>(h));
  // porta's default stream is the legacy default stream: 1 for CUDA, None (legacy) for ROCm.
  return dev.type == DeviceType::cuda ? py::object(py::int_(1)) : py::object(py::none());
}

py::object from_dlpack(py::object x, py::object device, py::object copy, const Stream* stream) {
  const char* fn = "porta.from_dlpack";
  py::object out;
  if (PyCapsule_CheckExact(x.ptr())) {
    out = consume_capsule(x, copy);  // a bare capsule (torch.utils.dlpack.to_dlpack): no handshake
  } else if (py::isinstance<ArrayBox>(x)) {
    out = (!copy.is_none() && copy.cast<bool>()) ? x.attr("clone")() : x;
  } else {
    if (!py::hasattr(x, "__dlpack__") || !py::hasattr(x, "__dlpack_device__"))
      throw py::type_error(std::string(fn) + ": the object has no __dlpack__ / __dlpack_device__ (" +
                           py::str(py::type::of(x)).cast<std::string>() + ")");
    const auto d = x.attr("__dlpack_device__")().cast<py::tuple>();
    const auto dev = porta_device_of(d[0].cast<int>(), d[1].cast<int>());
    if (!dev)
      buffer_error(std::string(fn) + ": DLPack device type " + std::to_string(d[0].cast<int>()) +
                   " is not one porta runs on (CPU, CUDA, ROCm)");
    check_device_usable(*dev, fn);
    if (stream != nullptr && stream->has_device() && stream->device() != *dev)
      throw DeviceMismatch(std::string(fn) + ": the tensor is on " + dev->to_string() + ", the stream on " +
                           stream->device().to_string());
    const py::object s = consumer_stream(*dev, stream);
    py::object cap;
    try {
      cap = x.attr("__dlpack__")(py::arg("stream") = s, py::arg("max_version") = py::make_tuple(1, 0));
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_TypeError)) throw;
      cap = x.attr("__dlpack__")(py::arg("stream") = s);  // a producer from before DLPack 1.0
    }
    out = consume_capsule(cap, copy);
  }
  if (!device.is_none()) {
    const Device want = device_arg(device);
    const Device have = out.attr("device").cast<Device>();
    if (want != have) {
      if (!copy.is_none() && !copy.cast<bool>())
        buffer_error(std::string(fn) + ": the tensor is on " + have.to_string() + ", device=" + want.to_string() +
                     " needs a copy (copy=False)");
      out = out.attr("to")(want);
    }
  }
  return out;
}

// ---- __cuda_array_interface__ (version 3) -----------------------------------------------------------
py::dict cuda_array_interface(ArrayBox& b) {
  return std::visit(
      [&](auto& a) {
        using T = value_of<decltype(a)>;
        if (!a.valid() || a.device().type != DeviceType::cuda)
          throw py::attribute_error("__cuda_array_interface__: only CUDA arrays have one (this one is on " +
                                    a.device().to_string() + ")");
        static const char* typestr[] = {"<f4", "<f8", "<i4", "<i8"};
        py::dict d;
        d["shape"] = shape_tuple(a.shape());
        d["typestr"] = typestr[detail::dtype_of<T>()];
        d["data"] = py::make_tuple(reinterpret_cast<std::uintptr_t>(a.data()), false);
        d["strides"] = py::none();
        d["version"] = 3;
        // porta's work is ordered on the legacy default stream (its own streams are blocking).
        d["stream"] = 1;
        return d;
      },
      b.v);
}

// ---- algorithms ------------------------------------------------------------------------------------
ArrayBox* box_of(py::handle h) {
  if (!py::isinstance<ArrayBox>(h)) return nullptr;
  return &h.cast<ArrayBox&>();
}

template <class T>
Array<T>& as(ArrayBox& b, const char* fn, const char* name, porta_dtype want) {
  if (auto* p = std::get_if<Array<T>>(&b.v)) return *p;
  invalid(fn, std::string(name) + " is " + dtype_name(b) + ", expected " + detail::dtype_name(want) +
                  " (porta does not promote dtypes: astype converts)");
}

template <class T>
Array<T>& as(py::handle h, const char* fn, const char* name) {
  ArrayBox* b = box_of(h);
  if (b == nullptr) throw py::type_error(std::string(fn) + ": " + name + " must be a porta.Array");
  return as<T>(*b, fn, name, detail::dtype_of<T>());
}

// A Python number as T: a float for an integer array is refused rather than truncated.
template <class T>
T scalar(py::handle h, const char* fn, const char* name) {
  if constexpr (std::is_floating_point_v<T>) {
    if (PyFloat_Check(h.ptr()) || PyLong_Check(h.ptr()) || PyNumber_Check(h.ptr()))
      return static_cast<T>(h.cast<double>());
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
  }
  throw py::type_error(std::string(fn) + ": " + name + " must be a porta.Array or a number");
}

// a op b where either side may be a number; `out` (an Array or None) receives the result.
template <class F>
py::object binary(const char* fn, py::handle a, py::handle b, py::handle out, const Stream* s, F&& f) {
  const Stream& st = stream_arg(s);
  ArrayBox* A = box_of(a);
  ArrayBox* B = box_of(b);
  ArrayBox* O = out.is_none() ? nullptr : box_of(out);
  if (!out.is_none() && O == nullptr) throw py::type_error(std::string(fn) + ": out must be a porta.Array or None");
  ArrayBox* lead = A != nullptr ? A : B;
  if (lead == nullptr) throw py::type_error(std::string(fn) + ": a or b must be a porta.Array");
  return std::visit(
      [&](auto& first) -> py::object {
        using T = value_of<decltype(first)>;
        constexpr porta_dtype dt = detail::dtype_of<T>();
        auto run = [&](auto&&... args) -> py::object {
          if (O != nullptr) {
            Array<T>& o = as<T>(*O, fn, "out", dt);
            {
              py::gil_scoped_release nogil;
              f(args..., o, st);
            }
            return py::reinterpret_borrow<py::object>(out);
          }
          Array<T> r;
          {
            py::gil_scoped_release nogil;
            r = f(args..., st);
          }
          return wrap(std::move(r));
        };
        if (A != nullptr && B != nullptr) return run(as<T>(*A, fn, "a", dt), as<T>(*B, fn, "b", dt));
        if (A != nullptr) return run(as<T>(*A, fn, "a", dt), scalar<T>(b, fn, "b"));
        return run(scalar<T>(a, fn, "a"), as<T>(*B, fn, "b", dt));
      },
      lead->v);
}

template <class F>
py::object unary(const char* fn, py::handle x, py::handle out, const Stream* s, F&& f) {
  const Stream& st = stream_arg(s);
  ArrayBox* X = box_of(x);
  if (X == nullptr) throw py::type_error(std::string(fn) + ": x must be a porta.Array");
  ArrayBox* O = out.is_none() ? nullptr : box_of(out);
  if (!out.is_none() && O == nullptr) throw py::type_error(std::string(fn) + ": out must be a porta.Array or None");
  return std::visit(
      [&](auto& a) -> py::object {
        using T = value_of<decltype(a)>;
        if (O != nullptr) {
          Array<T>& o = as<T>(*O, fn, "out", detail::dtype_of<T>());
          {
            py::gil_scoped_release nogil;
            f(a, o, st);
          }
          return py::reinterpret_borrow<py::object>(out);
        }
        Array<T> r;
        {
          py::gil_scoped_release nogil;
          r = f(a, st);
        }
        return wrap(std::move(r));
      },
      X->v);
}

// Full reduction (axis None) to a Python number, or along an axis to a porta.Array.
template <class Full, class Axis>
py::object reduction(const char* fn, ArrayBox& x, py::handle axis, const Stream* s, Full&& full, Axis&& along) {
  const Stream& st = stream_arg(s);
  return std::visit(
      [&](auto& a) -> py::object {
        using T = value_of<decltype(a)>;
        if (axis.is_none()) {
          decltype(full(a, st)) v;
          {
            py::gil_scoped_release nogil;
            v = full(a, st);
          }
          return py::cast(v);
        }
        if (!PyIndex_Check(axis.ptr())) throw py::type_error(std::string(fn) + ": axis must be an int or None");
        const int ax = axis.cast<int>();
        Array<T> r;
        {
          py::gil_scoped_release nogil;
          r = along(a, ax, st);
        }
        return wrap(std::move(r));
      },
      x.v);
}

MatmulOptions matmul_options(const std::string& fn, const std::string& precision, const std::string& algorithm) {
  MatmulOptions o;
  if (precision == "highest") {
    o.precision = Precision::highest;
  } else if (precision == "tf32") {
    o.precision = Precision::tf32;
  } else {
    invalid(fn, "precision '" + precision + "' is not 'highest' or 'tf32'");
  }
  if (algorithm == "vendor") {
    o.algorithm = GemmAlgorithm::vendor;
  } else if (algorithm == "own") {
    o.algorithm = GemmAlgorithm::own;
  } else {
    invalid(fn, "algorithm '" + algorithm + "' is not 'vendor' or 'own'");
  }
  return o;
}

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

// ---- porta.info(): what porta-info --json prints -----------------------------------------------------
py::dict device_info_dict(const DeviceInfo& i) {
  py::dict d;
  d["device"] = i.device.to_string();
  d["name"] = i.name;
  d["vendor"] = i.vendor;
  d["arch"] = i.arch;
  d["total_memory"] = i.total_memory;
  d["free_memory"] = i.free_memory;
  d["compute_units"] = i.compute_units;
  d["warp_size"] = i.warp_size;
  d["max_threads_per_block"] = i.max_threads_per_block;
  d["driver_version"] = i.driver_version;
  d["runtime_version"] = i.runtime_version;
  d["pci_bus_id"] = i.pci_bus_id;
  return d;
}

std::string version() {
  return std::to_string(PORTA_VERSION_MAJOR) + "." + std::to_string(PORTA_VERSION_MINOR) + "." +
         std::to_string(PORTA_VERSION_PATCH);
}

py::dict info() {
  py::dict r;
  r["version"] = version();
  r["build_info"] = build_info();
  py::list backends;
  for (const BackendStatus& b : backend_status()) {
    py::dict d;
    d["name"] = to_string(b.type);
    d["built"] = b.built;
    d["loaded"] = b.loaded;
    d["available"] = b.loaded && b.device_count > 0;
    d["device_count"] = b.device_count;
    d["library"] = b.library;
    d["build_info"] = b.build_info;
    d["reason"] = b.reason;
    d["collectives"] = b.collectives;  // NCCL / RCCL loaded by the GPU plugin, as porta-info --json
    d["collectives_info"] = b.collectives_info;
    backends.append(d);
  }
  r["backends"] = backends;
  py::list devs;
  for (const Device& dev : devices()) {
    try {
      py::dict d = device_info_dict(device_info(dev));
      d["describe"] = describe(dev);
      devs.append(d);
    } catch (const std::exception& e) {
      py::dict d;
      d["device"] = dev.to_string();
      d["error"] = e.what();
      devs.append(d);
    }
  }
  r["devices"] = devs;
  // The strict CPU device is never one of devices(); it is listed on its own, as porta-info does.
  const porta::Device strict = porta::Device::cpu_strict();
  r["strict_device"] = porta::is_available(strict) ? py::object(py::str(strict.to_string())) : py::object(py::none());
  // MPI as porta-info --json shows it: loaded (not initialised) on this call.
  const porta::detail::dist::MpiStatus m = porta::detail::dist::mpi_status(false);
  py::dict mpi;
  mpi["built"] = m.built;
  mpi["available"] = m.available;
  mpi["library"] = m.library;
  mpi["version"] = m.version;
  mpi["build_info"] = m.build_info;
  mpi["cuda_aware"] = m.cuda_aware;
  mpi["hip_aware"] = m.hip_aware;
  mpi["reason"] = m.reason;
  r["mpi"] = mpi;
  // The CPU's matmul path, as porta-info --json shows it (backends/cpu/cpu_blas.hpp).
  const porta::detail::cpu::CpuIsa& isa = porta::detail::cpu::cpu_isa();
  const porta::detail::cpu::GemmChoice& g = porta::detail::cpu::gemm_choice();
  py::dict gemm;
  gemm["cpu"] = isa.brand;
  gemm["cpu_isa"] = porta::detail::cpu::isa_level_name(isa.level);
  gemm["cpu_features"] = isa.features;
  gemm["blas"] = porta::detail::cpu::blas_description();
  gemm["openblas"] = g.openblas;
  gemm["openblas_core"] = g.core;
  gemm["openblas_core_at_load"] = g.core_at_load;
  gemm["core_reselected"] = g.core_reselected;
  gemm["openblas_coretype_env"] = g.coretype_env ? py::object(py::str(g.coretype)) : py::object(py::none());
  gemm["own_kernel_isa"] = porta::detail::cpu::isa_level_name(g.own_level);
  gemm["f32"] = g.f32;
  gemm["f64"] = g.f64;
  gemm["reason"] = g.reason;
  r["cpu_gemm"] = gemm;
  const char* env = std::getenv("PORTA_DEVICE");
  r["porta_device"] = env != nullptr && *env != '\0' ? py::object(py::str(env)) : py::object(py::none());
  try {
    r["default_device"] = default_device().to_string();
    r["default_device_error"] = py::none();
  } catch (const std::exception& e) {
    r["default_device"] = py::none();
    r["default_device_error"] = e.what();
  }
  return r;
}

}  // namespace
}  // namespace porta::python

namespace pp = porta::python;

// Each built-in map as a generic lambda over porta's overloads.
#define PORTA_PY_FORWARD(name) [](auto&&... args) -> decltype(auto) { return porta::name(args...); }

PYBIND11_MODULE(_porta, m) {
  using porta::Device;
  using porta::Stream;
  using pp::ArrayBox;
  using pp::BoxPtr;
  m.doc() = "porta: one scientific code on NVIDIA GPUs, AMD GPUs and CPUs (the C++ library's Python module)";
  m.attr("__version__") = pp::version();
  pp::register_errors(m);

  // ---- devices ----
  py::class_<Device>(m, "Device", "A device: 'cpu', 'cuda:N' or 'hip:N'.")
      .def(py::init([](const std::string& s) { return Device::parse(s); }), py::arg("name"))
      .def(py::init([](const std::string& type, int index) {
             return Device(pp::device_type_arg("porta.Device", type), index);
           }),
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
      "set_default_device", [](py::handle d) { porta::set_default_device(pp::device_arg(d)); }, py::arg("device"));
  m.def(
      "select_device", [](const std::string& s) { return porta::select_device(s); }, py::arg("name"),
      "Like Device(name), also 'gpu' and 'auto'; an unavailable device is porta.Unavailable saying why.");
  m.def(
      "is_available",
      [](py::handle d) {
        if (py::isinstance<py::str>(d)) {
          const std::string s = d.cast<std::string>();
          if (s.find(':') == std::string::npos)
            return porta::is_available(pp::device_type_arg("porta.is_available", s));
          return porta::is_available(Device::parse(s));
        }
        return porta::is_available(d.cast<Device>());
      },
      py::arg("device"));
  m.def(
      "unavailable_reason",
      [](const std::string& type) {
        return porta::unavailable_reason(pp::device_type_arg("porta.unavailable_reason", type));
      },
      py::arg("type"));
  m.def(
      "device_info", [](py::handle d) { return pp::device_info_dict(porta::device_info(pp::device_arg(d))); },
      py::arg("device") = py::none());
  m.def(
      "describe", [](py::handle d) { return porta::describe(pp::device_arg(d)); }, py::arg("device") = py::none());
  m.def("build_info", &porta::build_info);
  m.def("info", &pp::info, "What porta-info --json prints, as a dict.");
  m.def(
      "memory_stats",
      [](py::handle d) {
        const porta::MemoryStats s = porta::memory_stats(pp::device_arg(d));
        py::dict r;
        r["bytes_in_use"] = s.bytes_in_use;
        r["bytes_reserved"] = s.bytes_reserved;
        r["peak_bytes_in_use"] = s.peak_bytes_in_use;
        r["alloc_count"] = s.alloc_count;
        return r;
      },
      py::arg("device") = py::none());
  m.def(
      "empty_cache", [](py::handle d) { porta::empty_cache(pp::device_arg(d)); }, py::arg("device") = py::none());
  m.def(
      "synchronize",
      [](py::handle d) {
        const Device dev = pp::device_arg(d);
        py::gil_scoped_release nogil;
        porta::synchronize(dev);
      },
      py::arg("device") = py::none(), "Waits for all work on the device.");

  // ---- streams and events ----
  py::class_<Stream>(m, "Stream", "A stream of a device: work on one stream runs in order.")
      .def(py::init([](py::handle d) { return std::make_unique<Stream>(pp::device_arg(d)); }),
           py::arg("device") = py::none())
      .def_static(
          "default", [](py::handle d) { return Stream::default_stream(pp::device_arg(d)); },
          py::arg("device") = py::none(), "The default stream of a device (not owned).")
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
  py::class_<porta::Event>(m, "Event")
      .def(py::init([](py::handle d) { return std::make_unique<porta::Event>(pp::device_arg(d)); }),
           py::arg("device") = py::none())
      .def_property_readonly("device", &porta::Event::device)
      .def(
          "record", [](porta::Event& e, const Stream* s) { e.record(pp::stream_arg(s)); },
          py::arg("stream") = py::none())
      .def("synchronize",
           [](const porta::Event& e) {
             py::gil_scoped_release nogil;
             e.synchronize();
           })
      .def("query", &porta::Event::query)
      .def_static("elapsed_ms", &porta::Event::elapsed_ms, py::arg("start"), py::arg("end"));

  // ---- arrays ----
  py::class_<ArrayBox, BoxPtr> array(m, "Array", py::buffer_protocol(),
                                     "A contiguous row-major array on a device, up to 4-D: float32, float64, "
                                     "int32 or int64.");
  // pybind11 installed its own buffer slot; porta's refuses GPU arrays with a reason instead.
  {
    auto* heap = reinterpret_cast<PyHeapTypeObject*>(array.ptr());
    heap->as_buffer.bf_getbuffer = pp::array_getbuffer;
    heap->as_buffer.bf_releasebuffer = pp::array_releasebuffer;
  }
  array
      .def_property_readonly(
          "shape", [](ArrayBox& b) { return std::visit([](auto& a) { return pp::shape_tuple(a.shape()); }, b.v); })
      .def_property_readonly("dtype", [](ArrayBox& b) { return std::string(pp::dtype_name(b)); })
      .def_property_readonly("device", [](ArrayBox& b) { return std::visit([](auto& a) { return a.device(); }, b.v); })
      .def_property_readonly("ndim", [](ArrayBox& b) { return std::visit([](auto& a) { return a.rank(); }, b.v); })
      .def_property_readonly("size", [](ArrayBox& b) { return std::visit([](auto& a) { return a.size(); }, b.v); })
      .def_property_readonly("nbytes", [](ArrayBox& b) { return std::visit([](auto& a) { return a.nbytes(); }, b.v); })
      .def_property_readonly("itemsize", [](ArrayBox& b) { return porta::detail::dtype_size(pp::dtype_of(b)); })
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
      .def("__repr__", &pp::repr)
      .def(
          "to",
          [](ArrayBox& b, py::handle device, const Stream* s) {
            const Device dev = pp::device_arg(device);
            return std::visit(
                [&](auto& a) {
                  using T = pp::value_of<decltype(a)>;
                  porta::Array<T> r;
                  {
                    py::gil_scoped_release nogil;
                    r = a.to(dev, pp::stream_arg(s));
                  }
                  return pp::wrap(std::move(r));
                },
                b.v);
          },
          py::arg("device"), py::arg("stream") = py::none(), "A copy on `device` (the same device gives a clone).")
      .def(
          "clone",
          [](ArrayBox& b, const Stream* s) {
            return std::visit(
                [&](auto& a) {
                  using T = pp::value_of<decltype(a)>;
                  porta::Array<T> r;
                  {
                    py::gil_scoped_release nogil;
                    r = a.clone(pp::stream_arg(s));
                  }
                  return pp::wrap(std::move(r));
                },
                b.v);
          },
          py::arg("stream") = py::none())
      .def("reshape", &pp::reshape, "Same memory, new shape of the same size (one dimension may be -1).")
      .def(
          "astype",
          [](ArrayBox& b, const std::string& dtype, const Stream* s) {
            const porta_dtype to = pp::parse_dtype("porta.Array.astype", dtype);
            return std::visit(
                [&](auto& a) {
                  return pp::with_dtype(to, [&](auto tag) {
                    using To = decltype(tag);
                    porta::Array<To> r;
                    {
                      py::gil_scoped_release nogil;
                      r = porta::cast<To>(a, pp::stream_arg(s));
                    }
                    return pp::wrap(std::move(r));
                  });
                },
                b.v);
          },
          py::arg("dtype"), py::arg("stream") = py::none(),
          "A converted copy, porta's one conversion on every device (porta.cast).")
      .def("_copy_to_host", &pp::copy_to_buffer, py::arg("out"), py::arg("stream") = py::none())
      .def("__dlpack__", &pp::dlpack_export, py::kw_only(), py::arg("stream") = py::none(),
           py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(), py::arg("copy") = py::none())
      .def("__dlpack_device__",
           [](ArrayBox& b) {
             const auto d = pp::dl_device_of(std::visit([](auto& a) { return a.device(); }, b.v));
             return py::make_tuple(d.first, d.second);
           })
      .def_property_readonly("__cuda_array_interface__", &pp::cuda_array_interface);

  // ---- creation ----
  m.def("_from_buffer", &pp::from_buffer, py::arg("buffer"), py::arg("device") = py::none(),
        py::arg("stream") = py::none());
  m.def(
      "empty",
      [](py::handle shape, const std::string& dtype, py::handle device) {
        const porta::Shape s = pp::shape_arg(shape, "porta.empty");
        const Device dev = pp::device_arg(device);
        return pp::with_dtype(pp::parse_dtype("porta.empty", dtype), [&](auto tag) {
          using T = decltype(tag);
          return pp::wrap(porta::empty<T>(s, dev));
        });
      },
      py::arg("shape"), py::arg("dtype") = "float32", py::arg("device") = py::none());
  m.def(
      "full",
      [](py::handle shape, py::handle value, const std::string& dtype, py::handle device, const Stream* st) {
        const porta::Shape s = pp::shape_arg(shape, "porta.full");
        const Device dev = pp::device_arg(device);
        return pp::with_dtype(pp::parse_dtype("porta.full", dtype), [&](auto tag) {
          using T = decltype(tag);
          const T v = pp::scalar<T>(value, "porta.full", "value");
          porta::Array<T> r;
          {
            py::gil_scoped_release nogil;
            r = porta::full<T>(s, v, dev, pp::stream_arg(st));
          }
          return pp::wrap(std::move(r));
        });
      },
      py::arg("shape"), py::arg("value"), py::arg("dtype") = "float32", py::arg("device") = py::none(),
      py::arg("stream") = py::none());
  m.def(
      "_arange",
      [](py::handle start, py::handle stop, py::handle step, const std::string& dtype, py::handle device) {
        const Device dev = pp::device_arg(device);
        return pp::with_dtype(pp::parse_dtype("porta.arange", dtype), [&](auto tag) {
          using T = decltype(tag);
          return pp::wrap(porta::arange<T>(pp::scalar<T>(start, "porta.arange", "start"),
                                           pp::scalar<T>(stop, "porta.arange", "stop"),
                                           pp::scalar<T>(step, "porta.arange", "step"), dev));
        });
      },
      py::arg("start"), py::arg("stop"), py::arg("step"), py::arg("dtype"), py::arg("device") = py::none());
  m.def("from_dlpack", &pp::from_dlpack, py::arg("x"), py::kw_only(), py::arg("device") = py::none(),
        py::arg("copy") = py::none(), py::arg("stream") = py::none(),
        "A porta.Array on the memory of a DLPack tensor (NumPy, PyTorch, CuPy, ...): no copy.");

  // ---- maps ----
#define PORTA_PY_BINARY(name)                                                    \
  m.def(                                                                         \
      #name,                                                                     \
      [](py::handle a, py::handle b, py::handle out, const Stream* s) {          \
        return pp::binary("porta." #name, a, b, out, s, PORTA_PY_FORWARD(name)); \
      },                                                                         \
      py::arg("a"), py::arg("b"), py::kw_only(), py::arg("out") = py::none(), py::arg("stream") = py::none());
  PORTA_PY_BINARY(add)
  PORTA_PY_BINARY(sub)
  PORTA_PY_BINARY(mul)
  PORTA_PY_BINARY(div)
  PORTA_PY_BINARY(minimum)
  PORTA_PY_BINARY(maximum)
  PORTA_PY_BINARY(pow)
#undef PORTA_PY_BINARY
  m.def(
      "relu_grad",
      [](py::handle grad, py::handle x, py::handle out, const Stream* s) {
        // Arrays only (no scalar forms in C++): a number on either side is a TypeError.
        pp::ArrayBox* g = pp::box_of(grad);
        if (g == nullptr) throw py::type_error("porta.relu_grad: grad must be a porta.Array");
        return std::visit(
            [&](auto& gv) -> py::object {
              using T = pp::value_of<decltype(gv)>;
              auto& xv = pp::as<T>(x, "porta.relu_grad", "x");
              if (!out.is_none()) {
                auto& ov = pp::as<T>(out, "porta.relu_grad", "out");
                py::gil_scoped_release nogil;
                porta::relu_grad(gv, xv, ov, pp::stream_arg(s));
              } else {
                porta::Array<T> r;
                {
                  py::gil_scoped_release nogil;
                  r = porta::relu_grad(gv, xv, pp::stream_arg(s));
                }
                return pp::wrap(std::move(r));
              }
              return py::reinterpret_borrow<py::object>(out);
            },
            g->v);
      },
      py::arg("grad"), py::arg("x"), py::kw_only(), py::arg("out") = py::none(), py::arg("stream") = py::none());
#define PORTA_PY_UNARY(name)                                                 \
  m.def(                                                                     \
      #name,                                                                 \
      [](py::handle x, py::handle out, const Stream* s) {                    \
        return pp::unary("porta." #name, x, out, s, PORTA_PY_FORWARD(name)); \
      },                                                                     \
      py::arg("x"), py::kw_only(), py::arg("out") = py::none(), py::arg("stream") = py::none());
  PORTA_PY_UNARY(neg)
  PORTA_PY_UNARY(abs)
  PORTA_PY_UNARY(sqrt)
  PORTA_PY_UNARY(exp)
  PORTA_PY_UNARY(log)
  PORTA_PY_UNARY(sin)
  PORTA_PY_UNARY(cos)
  PORTA_PY_UNARY(tanh)
  PORTA_PY_UNARY(relu)
  PORTA_PY_UNARY(sigmoid)
  PORTA_PY_UNARY(square)
#undef PORTA_PY_UNARY
  m.def(
      "transpose",
      [](ArrayBox& x, const Stream* s) {
        return std::visit(
            [&](auto& a) {
              using T = pp::value_of<decltype(a)>;
              porta::Array<T> r;
              {
                py::gil_scoped_release nogil;
                r = porta::transpose(a, pp::stream_arg(s));
              }
              return pp::wrap(std::move(r));
            },
            x.v);
      },
      py::arg("x"), py::kw_only(), py::arg("stream") = py::none(), "The 2-D transpose, into a new array.");
  m.def(
      "axpy",
      [](py::handle alpha, ArrayBox& x, ArrayBox& y, const Stream* s) {
        std::visit(
            [&](auto& yv) {
              using T = pp::value_of<decltype(yv)>;
              const T al = pp::scalar<T>(alpha, "porta.axpy", "alpha");
              auto& xv = pp::as<T>(x, "porta.axpy", "x", porta::detail::dtype_of<T>());
              py::gil_scoped_release nogil;
              porta::axpy(al, xv, yv, pp::stream_arg(s));
            },
            y.v);
      },
      py::arg("alpha"), py::arg("x"), py::arg("y"), py::kw_only(), py::arg("stream") = py::none(),
      "y = alpha * x + y, in place.");
  m.def(
      "fill",
      [](ArrayBox& y, py::handle value, const Stream* s) {
        std::visit(
            [&](auto& yv) {
              using T = pp::value_of<decltype(yv)>;
              const T v = pp::scalar<T>(value, "porta.fill", "value");
              py::gil_scoped_release nogil;
              porta::fill(yv, v, pp::stream_arg(s));
            },
            y.v);
      },
      py::arg("y"), py::arg("value"), py::kw_only(), py::arg("stream") = py::none());
  m.def(
      "iota",
      [](ArrayBox& y, py::handle start, py::handle step, const Stream* s) {
        std::visit(
            [&](auto& yv) {
              using T = pp::value_of<decltype(yv)>;
              const T a = pp::scalar<T>(start, "porta.iota", "start");
              const T d = pp::scalar<T>(step, "porta.iota", "step");
              py::gil_scoped_release nogil;
              porta::iota(yv, a, d, pp::stream_arg(s));
            },
            y.v);
      },
      py::arg("y"), py::arg("start") = 0, py::arg("step") = 1, py::kw_only(), py::arg("stream") = py::none());
  m.def(
      "copy",
      [](ArrayBox& src, ArrayBox& dst, const Stream* s) {
        std::visit(
            [&](auto& d) {
              using T = pp::value_of<decltype(d)>;
              auto& sv = pp::as<T>(src, "porta.copy", "src", porta::detail::dtype_of<T>());
              py::gil_scoped_release nogil;
              porta::copy(sv, d, pp::stream_arg(s));
            },
            dst.v);
      },
      py::arg("src"), py::arg("dst"), py::kw_only(), py::arg("stream") = py::none(),
      "dst = src; across devices this is the explicit move of data.");

  // ---- reductions ----
#define PORTA_PY_REDUCE(name, doc)                                                                        \
  m.def(                                                                                                  \
      #name,                                                                                              \
      [](ArrayBox& x, py::handle axis, const Stream* s) {                                                 \
        return pp::reduction("porta." #name, x, axis, s, PORTA_PY_FORWARD(name), PORTA_PY_FORWARD(name)); \
      },                                                                                                  \
      py::arg("x"), py::arg("axis") = py::none(), py::kw_only(), py::arg("stream") = py::none(), doc);
  PORTA_PY_REDUCE(sum, "Sum: a number (axis None) or an array without that axis; the same bits on every device.")
  PORTA_PY_REDUCE(prod, "Product, full or along an axis.")
  PORTA_PY_REDUCE(min, "Minimum, full or along an axis.")
  PORTA_PY_REDUCE(max, "Maximum, full or along an axis.")
  PORTA_PY_REDUCE(mean, "Mean, full (a float) or along an axis (floating point arrays).")
#undef PORTA_PY_REDUCE
  m.def(
      "dot",
      [](ArrayBox& x, ArrayBox& y, const Stream* s) {
        return std::visit(
            [&](auto& xv) -> py::object {
              using T = pp::value_of<decltype(xv)>;
              auto& yv = pp::as<T>(y, "porta.dot", "y", porta::detail::dtype_of<T>());
              T r;
              {
                py::gil_scoped_release nogil;
                r = porta::dot(xv, yv, pp::stream_arg(s));
              }
              return py::cast(r);
            },
            x.v);
      },
      py::arg("x"), py::arg("y"), py::kw_only(), py::arg("stream") = py::none());
  m.def(
      "norm2",
      [](ArrayBox& x, const Stream* s) {
        return std::visit(
            [&](auto& xv) -> py::object {
              using T = pp::value_of<decltype(xv)>;
              T r;
              {
                py::gil_scoped_release nogil;
                r = porta::norm2(xv, pp::stream_arg(s));
              }
              return py::cast(r);
            },
            x.v);
      },
      py::arg("x"), py::kw_only(), py::arg("stream") = py::none());

  // ---- matmul ----
  m.def(
      "matmul",
      [](ArrayBox& a, ArrayBox& b, const std::string& precision, const std::string& algorithm, const Stream* s) {
        const porta::MatmulOptions o = pp::matmul_options("porta.matmul", precision, algorithm);
        return std::visit(
            [&](auto& av) {
              using T = pp::value_of<decltype(av)>;
              auto& bv = pp::as<T>(b, "porta.matmul", "b", porta::detail::dtype_of<T>());
              porta::Array<T> r;
              {
                py::gil_scoped_release nogil;
                r = porta::matmul(av, bv, o, pp::stream_arg(s));
              }
              return pp::wrap(std::move(r));
            },
            a.v);
      },
      py::arg("a"), py::arg("b"), py::kw_only(), py::arg("precision") = "highest", py::arg("algorithm") = "vendor",
      py::arg("stream") = py::none(),
      "C = A B for 2-D arrays. precision='tf32' lets fp32 use TF32 tensor cores; algorithm='own' is porta's kernel.");
  m.def(
      "gemm",
      [](py::handle alpha, ArrayBox& a, ArrayBox& b, py::handle beta, ArrayBox& c, bool trans_a, bool trans_b,
         const std::string& precision, const std::string& algorithm, const Stream* s) {
        const porta::MatmulOptions o = pp::matmul_options("porta.gemm", precision, algorithm);
        std::visit(
            [&](auto& cv) {
              using T = pp::value_of<decltype(cv)>;
              constexpr porta_dtype dt = porta::detail::dtype_of<T>();
              auto& av = pp::as<T>(a, "porta.gemm", "a", dt);
              auto& bv = pp::as<T>(b, "porta.gemm", "b", dt);
              const T al = pp::scalar<T>(alpha, "porta.gemm", "alpha");
              const T be = pp::scalar<T>(beta, "porta.gemm", "beta");
              py::gil_scoped_release nogil;
              porta::gemm(al, av, trans_a, bv, trans_b, be, cv, o, pp::stream_arg(s));
            },
            c.v);
      },
      py::arg("alpha"), py::arg("a"), py::arg("b"), py::arg("beta"), py::arg("c"), py::kw_only(),
      py::arg("trans_a") = false, py::arg("trans_b") = false, py::arg("precision") = "highest",
      py::arg("algorithm") = "vendor", py::arg("stream") = py::none(),
      "c = alpha op(a) op(b) + beta c in place, op(x) = x or x.T; beta == 0 overwrites c.");
}
