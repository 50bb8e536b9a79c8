// SPDX-License-Identifier: Apache-2.0
// porta.from_dlpack: porta arrays on the memory of another library's DLPack tensor (interop.hpp).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "arguments.hpp"
#include "dlpack.hpp"
#include "dtypes.hpp"
#include "errors.hpp"
#include "interop.hpp"

namespace porta::python {
namespace {

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
  if (d.code == dlpack::kDLFloat && d.bits == 16) return PORTA_F16;
  if (d.code == dlpack::kDLBfloat && d.bits == 16) return PORTA_BF16;
  if (d.code == dlpack::kDLInt && d.bits == 32) return PORTA_I32;
  if (d.code == dlpack::kDLInt && d.bits == 64) return PORTA_I64;
  if (d.code == dlpack::kDLComplex && d.bits == 64) return PORTA_C64;
  if (d.code == dlpack::kDLComplex && d.bits == 128) return PORTA_C128;
  return std::nullopt;
}

// The porta device of a tensor's DLPack device, which must be one that porta runs on and sees.
Device usable_device(int dl_type, int dl_id, const char* fn) {
  const auto dev = porta_device_of(dl_type, dl_id);
  if (!dev)
    buffer_error(std::string(fn) + ": DLPack device type " + std::to_string(dl_type) +
                 " is not one porta runs on (CPU, CUDA, ROCm)");
  if (!is_available(dev->type))
    throw Unavailable(std::string(fn) + ": the tensor is on " + dev->to_string() + ", and " +
                      detail::facts(dev->type)->display_name + " is not available: " + unavailable_reason(dev->type));
  if (!is_available(*dev))
    throw Unavailable(std::string(fn) + ": the tensor is on " + dev->to_string() + ", which porta does not see");
  return *dev;
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
  const Device dev = usable_device(t->device.device_type, t->device.device_id, fn);
  const auto dt = porta_dtype_of(t->dtype);
  if (!dt) invalid(fn, "dtype " + dl_dtype_name(t->dtype) + " is not supported (" + kDtypeList + ")");
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
  auto owner = std::make_shared<ImportOwner>(managed, versioned, dev);
  return with_dtype(*dt, [&](auto tag) -> py::object {
    using T = decltype(tag);
    Array<T> view = Array<T>::borrow(reinterpret_cast<T*>(data), shape, dev, owner);
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
py::object consumer_stream(Device dev, const Stream* stream, const char* fn) {
  if (!dev.is_gpu()) return py::none();
  void* h = stream != nullptr ? stream->native_handle() : nullptr;
  if (h != nullptr) return py::int_(reinterpret_cast<std::intptr_t>(h));
  // porta's default stream is the legacy default stream: 1 for CUDA, None (legacy) for ROCm.
  return dlpack_device(dev, fn).first == dlpack::kDLCUDA ? py::object(py::int_(1)) : py::object(py::none());
}

}  // namespace

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
    const Device dev = usable_device(d[0].cast<int>(), d[1].cast<int>(), fn);
    if (stream != nullptr && stream->has_device() && stream->device() != dev)
      throw DeviceMismatch(std::string(fn) + ": the tensor is on " + dev.to_string() + ", the stream on " +
                           stream->device().to_string());
    const py::object s = consumer_stream(dev, stream, fn);
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

}  // namespace porta::python
