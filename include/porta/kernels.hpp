// SPDX-License-Identifier: Apache-2.0
// User kernels: your own element-wise code and reductions, written once as lambdas.
//
//   #include <porta/kernels.hpp>
//   auto xv = x.view();  auto yv = y.view();              // trivially copyable windows
//   porta::parallel_for(dev, n, PORTA_LAMBDA(std::int64_t i) { yv[i] = 2 * xv[i] + yv[i]; });
//   porta::map(out, PORTA_LAMBDA(float a, float b) { return a * b; }, x, y);
//   double ss = porta::transform_reduce(dev, n, 0.0, porta::plus{},
//                                       PORTA_LAMBDA(std::int64_t i) { return double(xv[i]) * xv[i]; });
//
// Every translation unit runs them on the CPU (OpenMP when the build has it). A translation unit
// compiled as CUDA (nvcc; CMake: porta_add_kernels()) also runs them on CUDA devices, one compiled
// as HIP on HIP devices. Asking a plain C++ translation unit to launch on a GPU is an Unavailable
// error that names the fix.
//
// transform_reduce follows the canonical order of the built-in reductions (docs/determinism.md):
// run to run deterministic on each backend, and bit-identical across backends when f itself is
// (vendor math libraries differ in the last bits of sin, exp, ...).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "porta/array.hpp"
#include "porta/detail/config.hpp"
#include "porta/detail/ops.hpp"
#include "porta/detail/reduce_order.hpp"
#include "porta/error.hpp"
#include "porta/stream.hpp"

#if PORTA_GPU_COMPILER
#include "porta/detail/gpu/user_kernels.cuh"
#endif

// A lambda that captures by value and runs on the host and the device. Capture Views (x.view()),
// never Arrays.
#if PORTA_GPU_COMPILER
#define PORTA_LAMBDA [=] __host__ __device__
#else
#define PORTA_LAMBDA [=]
#endif

namespace porta {

// Reduction operators for transform_reduce, with the identities that the canonical order pads with.
using plus = detail::SumOp;
using multiplies = detail::ProdOp;
using maximum_op = detail::MaxOp;
using minimum_op = detail::MinOp;

namespace detail {

[[noreturn]] inline void throw_not_gpu_tu(const char* fn, Device device) {
  throw Unavailable(std::string(fn) + ": cannot launch a user kernel on " + device.to_string() +
                    " from a translation unit compiled as plain C++; compile it as " +
                    (device.type == DeviceType::hip ? "HIP" : "CUDA") +
                    " (CMake: porta_add_kernels(<target> SOURCES <file>), or set_source_files_properties(<file> "
                    "PROPERTIES LANGUAGE " +
                    (device.type == DeviceType::hip ? "HIP" : "CUDA") + "))");
}

inline void check_stream_device(const Stream& stream, Device device, const char* fn) {
  if (stream.has_device() && stream.device() != device)
    throw DeviceMismatch(std::string(fn) + ": stream is on " + stream.device().to_string() + ", the work on " +
                         device.to_string());
}

template <class T, class F, class... In>
void map_pointers(const Stream& stream, Device dev, std::int64_t n, T* o, F f, const In*... p);

}  // namespace detail

// f(i) for i in [0, n), in parallel, on `device`.
template <class F>
void parallel_for(Device device, std::int64_t n, F f, const Stream& stream = Stream()) {
  constexpr const char* fn = "porta::parallel_for";
  detail::check_stream_device(stream, device, fn);
  if (n < 0) detail::throw_invalid(fn, ("n is negative (" + std::to_string(n) + ")").c_str());
  if (device.type == DeviceType::cpu) {
    // Below a few thousand elements, waking the OpenMP team costs more than the loop.
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) if (n >= 4096)
#endif
    for (std::int64_t i = 0; i < n; ++i) f(i);
    return;
  }
#if PORTA_GPU_COMPILER
  detail::gpu_user::parallel_for(device, n, f, stream.native_handle(), fn);
#else
  detail::throw_not_gpu_tu(fn, device);
#endif
}

// out[i] = f(in[i]...) for every element; all arrays of one size and one device.
template <class T, class F, class... In>
void map(Array<T>& out, F f, const Array<In>&... in) {
  map(Stream(), out, f, in...);
}
template <class T, class F, class... In>
void map(const Stream& stream, Array<T>& out, F f, const Array<In>&... in) {
  constexpr const char* fn = "porta::map";
  out.check_valid(fn);
  (in.check_valid(fn), ...);
  const Device dev = out.device();
  const std::int64_t n = out.size();
  (
      [&](const auto& a) {
        if (a.device() != dev)
          throw DeviceMismatch(std::string(fn) + ": an input is on " + a.device().to_string() + ", the output on " +
                               dev.to_string());
        if (a.size() != n)
          detail::throw_invalid(
              fn, ("an input has " + std::to_string(a.size()) + " elements, the output " + std::to_string(n)).c_str());
      }(in),
      ...);
  detail::map_pointers(stream, dev, n, out.data(), f, in.data()...);
}

namespace detail {
// nvcc's extended lambdas cannot capture a parameter pack, so the input pointers of the CPU path
// (parallel_for's lambda, which a CUDA or HIP translation unit compiles for the device too) travel in
// a minimal recursive tuple that is trivially copyable and usable on the device.
template <class... Ts>
struct PointerPack {};
template <class T, class... Ts>
struct PointerPack<T, Ts...> {
  const T* head;
  PointerPack<Ts...> tail;
};

template <class F, class... Vals>
PORTA_HOST_DEVICE auto call_at(const F& f, const PointerPack<>&, std::int64_t, Vals... v) {
  return f(v...);
}
template <class F, class T, class... Ts, class... Vals>
PORTA_HOST_DEVICE auto call_at(const F& f, const PointerPack<T, Ts...>& p, std::int64_t i, Vals... v) {
  return call_at(f, p.tail, i, v..., p.head[i]);
}

inline PointerPack<> pack_pointers() {
  return {};
}
template <class T, class... Ts>
PointerPack<T, Ts...> pack_pointers(const T* head, const Ts*... tail) {
  return PointerPack<T, Ts...>{head, pack_pointers(tail...)};
}

template <class T, class F, class... In>
void map_pointers(const Stream& stream, Device dev, std::int64_t n, T* o, F f, const In*... p) {
#if PORTA_GPU_COMPILER
  // GPUs take the built-in maps' vector kernel; parallel_for's element per thread would cost bandwidth.
  if (dev.type != DeviceType::cpu) {
    check_stream_device(stream, dev, "porta::map");
    gpu_user::map(dev, n, f, o, stream.native_handle(), "porta::map", p...);
    return;
  }
#endif
  const PointerPack<In...> pack = pack_pointers(p...);
  parallel_for(
      dev, n, PORTA_LAMBDA(std::int64_t i) { o[i] = call_at(f, pack, i); }, stream);
}
}  // namespace detail

// op-reduction of f(i) for i in [0, n), combined with init: op(init, reduce(f)). op is one of
// porta::plus, multiplies, maximum_op, minimum_op (they carry the identity the canonical order needs).
template <class T, class Op, class F>
T transform_reduce(Device device, std::int64_t n, T init, Op op, F f, const Stream& stream = Stream()) {
  constexpr const char* fn = "porta::transform_reduce";
  static_assert(detail::is_supported_v<T>, "porta::transform_reduce: T must be float, double, int32_t or int64_t");
  detail::check_stream_device(stream, device, fn);
  if (n < 0) detail::throw_invalid(fn, ("n is negative (" + std::to_string(n) + ")").c_str());
  T r;
  if (device.type == DeviceType::cpu) {
    r = detail::reduce_canonical<T>(n, op, [&f](std::int64_t i) { return static_cast<T>(f(i)); });
  } else {
#if PORTA_GPU_COMPILER
    r = detail::gpu_user::transform_reduce<T>(device, n, op, f, stream.native_handle(), fn);
#else
    detail::throw_not_gpu_tu(fn, device);
#endif
  }
  return detail::canonical_nan(op(init, r));
}

}  // namespace porta
