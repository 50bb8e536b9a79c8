// SPDX-License-Identifier: Apache-2.0
// porta.Array.__dlpack__: a DLPack capsule that shares the array's memory with the consumer
// (interop.hpp).
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "dlpack.hpp"
#include "errors.hpp"
#include "interop.hpp"
#include "porta/detail/runtime.hpp"

namespace porta::python {
namespace {

dlpack::DataType dl_dtype(porta_dtype dt) {
  switch (dt) {
    case PORTA_F16:
      return {dlpack::kDLFloat, 16, 1};
    case PORTA_BF16:
      return {dlpack::kDLBfloat, 16, 1};
    case PORTA_F32:
      return {dlpack::kDLFloat, 32, 1};
    case PORTA_F64:
      return {dlpack::kDLFloat, 64, 1};
    case PORTA_I32:
      return {dlpack::kDLInt, 32, 1};
    case PORTA_I64:
      return {dlpack::kDLInt, 64, 1};
    // DLPack counts a complex type's bits over both parts.
    case PORTA_C64:
      return {dlpack::kDLComplex, 64, 1};
    case PORTA_C128:
      return {dlpack::kDLComplex, 128, 1};
  }
  return {dlpack::kDLUInt, 8, 1};
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
// capsule, which takes the GIL itself (ImportOwner in dlpack_import.cpp).
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

py::object make_capsule(BoxPtr box, bool versioned, bool copied, const char* fn) {
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
        const auto dev = dlpack_device(a.device(), fn);
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
// after all porta work issued so far on the device; the consumer's stream waits for it. What the
// small stream numbers mean is DLPack's, per device type.
void wait_on_consumer_stream(Device dev, py::handle stream, const char* fn) {
  if (stream.is_none()) return;  // "assume the legacy default stream": ordered already
  if (!py::isinstance<py::int_>(stream)) throw py::type_error(std::string(fn) + ": stream must be an int or None");
  const std::int64_t s = stream.cast<std::int64_t>();
  if (s == -1) return;  // the consumer asked for no synchronisation
  const int dl_type = dlpack_device(dev, fn).first;
  if (dl_type == dlpack::kDLCUDA) {
    if (s == 0) buffer_error(std::string(fn) + ": stream 0 is ambiguous for CUDA (1: legacy default, 2: per-thread)");
    if (s == 1) return;
  } else if (dl_type == dlpack::kDLROCM) {
    if (s == 0) return;  // ROCm's default stream
    if (s == 1 || s == 2) buffer_error(std::string(fn) + ": streams 1 and 2 are not defined for ROCm");
  } else {
    buffer_error(std::string(fn) + ": DLPack defines no stream numbers for " + dev.to_string());
  }
  Event ev(dev);
  ev.record(Stream::default_stream(dev));
  const porta_backend_v1& t = detail::backend_for(dev);
  detail::check(t.stream_wait_event(dev.index, reinterpret_cast<porta_stream>(static_cast<std::intptr_t>(s)),
                                    static_cast<porta_event>(ev.native_handle())),
                fn, dev);
}

}  // namespace

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
    if (want != dlpack_device(dev, fn)) {
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
    return make_capsule(std::move(host), versioned, true, fn);
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
    return make_capsule(std::move(c), versioned, true, fn);
  }
  return make_capsule(std::move(box), versioned, false, fn);
}

}  // namespace porta::python
