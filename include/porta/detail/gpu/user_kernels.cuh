// SPDX-License-Identifier: Apache-2.0
// The GPU side of porta/kernels.hpp: parallel_for, map and transform_reduce of a translation unit
// compiled as CUDA (nvcc) or HIP (hipcc). They launch on the vendor of the compiler at hand; a
// device of the other vendor is an Unavailable error that names the fix. They use the vendor
// runtime directly (the stream handle of a porta::Stream is the native stream), so user kernels
// and porta's built-in algorithms share streams, memory pool and ordering.
//
// Every launch first calls prepare_faults (detail/gpu/faults.cuh) with the kernel's name (nullptr
// for an unnamed launch): failures its kernel reports (porta/debug.hpp) then reach the next wait.
#pragma once

#include <cstdint>
#include <string>

#include "porta/debug.hpp"
#include "porta/detail/gpu/api.cuh"
#include "porta/detail/gpu/map.cuh"
#include "porta/detail/gpu/reduce.cuh"
#include "porta/device.hpp"
#include "porta/error.hpp"
#include "porta/range.hpp"

namespace porta::detail::gpu_user {

using Api = gpu::NativeApi;

inline std::string device_string(Device d) {
  const char* type = d.type == DeviceType::cuda ? "cuda" : d.type == DeviceType::hip ? "hip" : "cpu";
  return std::string(type) + ":" + std::to_string(d.index);
}

[[noreturn]] inline void throw_api_error(const char* fn, Device d, const char* what, Api::Error e,
                                         std::uint64_t bytes = 0) {
  (void)Api::get_last_error();  // clear a non-sticky error so that it does not reach the next call
  std::string msg = std::string(fn) + ": " + device_string(d) + ": " + what + ": " + Api::error_string(e) + " (" +
                    Api::error_name(e) + ")";
  // A bad access of a kernel surfaces at a later call: say which kernel ran last.
  if (d.type != DeviceType::cpu) {
    const std::string name = Api::error_name(e);
    if (name.find("IllegalAddress") != std::string::npos || name.find("LaunchFailure") != std::string::npos)
      msg += last_launch_note(d);
  }
  if (Api::is_unavailable(e)) throw Unavailable(msg);
  if (bytes != 0 && Api::is_out_of_memory(e)) throw OutOfMemory(msg, d, bytes, 0);
  throw BackendError(msg);
}

// Makes `device` current until `guard` goes out of scope (the caller's current device is restored,
// as porta's plugins do); it must be of this translation unit's vendor.
inline void enter(gpu::DeviceGuard<Api>& guard, Device device, const char* fn) {
  if (static_cast<int>(device.type) != Api::kDeviceType) {
    const bool want_hip = device.type == DeviceType::hip;
    throw Unavailable(std::string(fn) + ": this translation unit was compiled as " + Api::kName + " (" +
                      Api::kCompiler + ") and cannot launch a user kernel on " + device_string(device) +
                      "; compile it as " + (want_hip ? "HIP" : "CUDA") +
                      " (CMake: porta_add_kernels(<target> SOURCES <file>) in a porta build with " +
                      (want_hip ? "HIP" : "CUDA") + ", or set_source_files_properties(<file> PROPERTIES LANGUAGE " +
                      (want_hip ? "HIP" : "CUDA") + "))");
  }
  const Api::Error e = guard.enter(device.index);
  if (e != Api::kSuccess) throw_api_error(fn, device, "selecting the device", e);
}

template <class F>
__global__ void parallel_for_kernel(std::int64_t lo, std::int64_t hi, F f) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = lo + static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < hi; i += stride)
    f(i);
}

// 2-D and 3-D: x is the last (contiguous) dimension, so a warp touches consecutive addresses. When
// the grid covers the range (Cover, nearly always: only grid y and z stop at 65535 blocks) a thread
// takes its one point, exactly as a hand-written stencil kernel does; otherwise every dimension
// strides.
template <bool Cover, class F>
__global__ void parallel_for_2d_kernel(std::int64_t lo0, std::int64_t hi0, std::int64_t lo1, std::int64_t hi1, F f) {
  std::int64_t i = lo0 + static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  if constexpr (Cover) {
    const std::int64_t j = lo1 + static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < hi0 && j < hi1) f(i, j);
  } else {
    const std::int64_t s0 = static_cast<std::int64_t>(gridDim.y) * blockDim.y;
    const std::int64_t s1 = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    for (; i < hi0; i += s0)
      for (std::int64_t j = lo1 + static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < hi1; j += s1)
        f(i, j);
  }
}

template <bool Cover, class F>
__global__ void parallel_for_3d_kernel(std::int64_t lo0, std::int64_t hi0, std::int64_t lo1, std::int64_t hi1,
                                       std::int64_t lo2, std::int64_t hi2, F f) {
  std::int64_t i = lo0 + static_cast<std::int64_t>(blockIdx.z) * blockDim.z + threadIdx.z;
  if constexpr (Cover) {
    const std::int64_t j = lo1 + static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
    const std::int64_t k = lo2 + static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < hi0 && j < hi1 && k < hi2) f(i, j, k);
  } else {
    const std::int64_t s0 = static_cast<std::int64_t>(gridDim.z) * blockDim.z;
    const std::int64_t s1 = static_cast<std::int64_t>(gridDim.y) * blockDim.y;
    const std::int64_t s2 = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    for (; i < hi0; i += s0)
      for (std::int64_t j = lo1 + static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; j < hi1; j += s1)
        for (std::int64_t k = lo2 + static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < hi2; k += s2)
          f(i, j, k);
  }
}

// Thread-block shape of a range: its tile when given (x = last dimension), else 32 x 8 (2-D) or
// 32 x 4 x 2 (3-D): a warp along the contiguous dimension, 256 threads like porta's other kernels.
template <int Rank>
dim3 block_shape(const Range<Rank>& r, const char* fn) {
  const bool tiled = r.tile_extent(0) > 0;
  std::int64_t b[3] = {1, 1, 1};  // x, y, z
  for (int d = 0; d < Rank; ++d) {
    const int axis = Rank - 1 - d;
    b[axis] = tiled ? r.tile_extent(d)
                    : (Rank == 1   ? gpu::kBlockThreads
                       : axis == 0 ? 32
                       : Rank == 2 ? 8
                       : axis == 1 ? 4
                                   : 2);
  }
  // Each extent first, so that the product cannot overflow.
  if (b[0] > 1024 || b[1] > 1024 || b[2] > 64 || b[0] * b[1] * b[2] > 1024)
    throw InvalidArgument(std::string(fn) + ": a tile of " + std::to_string(b[2]) + " x " + std::to_string(b[1]) +
                          " x " + std::to_string(b[0]) +
                          " does not fit a GPU thread block (at most 1024 threads, 64 along the first of three "
                          "dimensions)");
  return dim3(static_cast<unsigned>(b[0]), static_cast<unsigned>(b[1]), static_cast<unsigned>(b[2]));
}

inline unsigned grid_extent(std::int64_t points, unsigned block, std::int64_t cap) {
  const std::int64_t g = points / block + (points % block != 0);  // no overflow near 2^63
  return static_cast<unsigned>(g < 1 ? 1 : g > cap ? cap : g);
}

// f(i[, j[, k]]) for every index of `range` on `device`, asynchronous on `native_stream` (nullptr:
// the default stream). `name`: the kernel's, for its errors (nullptr: none).
template <int Rank, class F>
void parallel_for(Device device, const Range<Rank>& range, const F& f, void* native_stream, const char* fn,
                  const char* name = nullptr) {
  gpu::DeviceGuard<Api> guard;
  enter(guard, device, fn);
  if (range.size() <= 0) return;
  gpu_faults::prepare_faults(device, name);
  const auto stream = static_cast<Api::Stream>(native_stream);
  const dim3 block = block_shape(range, fn);
  Api::Error e = Api::kSuccess;
  if constexpr (Rank == 1) {
    // A grid-stride loop over the blocks the device keeps resident (or fewer, for small n).
    auto kernel = parallel_for_kernel<F>;
    std::int64_t resident = 0;
    e = gpu::resident_grid<Api>(kernel, static_cast<int>(block.x), 0, &resident);
    if (e != Api::kSuccess) throw_api_error(fn, device, "sizing the grid", e);
    const std::int64_t grid = gpu::clamp_grid(range.extent(0) / block.x + (range.extent(0) % block.x != 0), resident);
    e = Api::launch(kernel, dim3(static_cast<unsigned>(grid)), block, 0, stream, range.begin(0), range.end(0), f);
  } else if constexpr (Rank == 2) {
    const dim3 grid(grid_extent(range.extent(1), block.x, gpu::kMaxGrid), grid_extent(range.extent(0), block.y, 65535));
    const bool cover = static_cast<std::int64_t>(grid.x) * block.x >= range.extent(1) &&
                       static_cast<std::int64_t>(grid.y) * block.y >= range.extent(0);
    const auto kernel = cover ? parallel_for_2d_kernel<true, F> : parallel_for_2d_kernel<false, F>;
    e = Api::launch(kernel, grid, block, 0, stream, range.begin(0), range.end(0), range.begin(1), range.end(1), f);
  } else {
    const dim3 grid(grid_extent(range.extent(2), block.x, gpu::kMaxGrid), grid_extent(range.extent(1), block.y, 65535),
                    grid_extent(range.extent(0), block.z, 65535));
    const bool cover = static_cast<std::int64_t>(grid.x) * block.x >= range.extent(2) &&
                       static_cast<std::int64_t>(grid.y) * block.y >= range.extent(1) &&
                       static_cast<std::int64_t>(grid.z) * block.z >= range.extent(0);
    const auto kernel = cover ? parallel_for_3d_kernel<true, F> : parallel_for_3d_kernel<false, F>;
    e = Api::launch(kernel, grid, block, 0, stream, range.begin(0), range.end(0), range.begin(1), range.end(1),
                    range.begin(2), range.end(2), f);
  }
  if (e != Api::kSuccess) throw_api_error(fn, device, "kernel launch", e);
}

// The kernel object travels by reference down to the launch, which copies it once into the kernel's
// parameters: nvcc's host side of a PORTA_LAMBDA keeps its closure on the heap, so every copy on the
// way was an allocation and a free per call (small calls).
//
// out[i] = f(in[i]...) for i in [0, n) on `device`, asynchronous on `native_stream`. It runs the
// kernel of porta's built-in maps (16-byte vectors of every operand where they are aligned alike,
// several in flight per thread) rather than parallel_for's one 4- or 8-byte access per operand and
// thread, so that a user's map is held to the bandwidth of a built-in one.
template <class T, class F, class... In>
void map_named(Device device, std::int64_t n, const F& f, T* out, void* native_stream, const char* fn, const char* name,
               const In*... in) {
  gpu::DeviceGuard<Api> guard;
  enter(guard, device, fn);
  gpu_faults::prepare_faults(device, name);
  const Api::Error e = gpu::launch_user_map<Api>(static_cast<Api::Stream>(native_stream), n, f, out, in...);
  if (e != Api::kSuccess) throw_api_error(fn, device, "kernel launch", e);
}
// The same for an unnamed kernel.
template <class T, class F, class... In>
void map(Device device, std::int64_t n, const F& f, T* out, void* native_stream, const char* fn, const In*... in) {
  map_named(device, n, f, out, native_stream, fn, static_cast<const char*>(nullptr), in...);
}

template <class T, class F>
__global__ void materialize_kernel(std::int64_t n, F f, T* out) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = static_cast<T>(f(i));
}

// The canonical op-reduction of static_cast<T>(f(i)) for i in [0, n) (not yet combined with the
// caller's init, NaN not canonicalised); f(i) is the kernel at linear index i of its range.
// Synchronises `native_stream`, and raises a failure the kernel reported (porta/debug.hpp).
//
// The canonical order gives one block per chunk of 32768 terms, which is plenty for a sum of an
// array but leaves an H200 nearly idle for a few thousand expensive terms (an n-body energy: one
// block). The terms themselves are independent, only their combination is ordered, so when there
// are fewer chunks than multiprocessors every f(i) may first be evaluated by its own thread into
// scratch, and the canonical reduction then reads that scratch: the same values in the same order.
template <class T, class Op, class F>
T transform_reduce(Device device, std::int64_t n, Op op, F f, bool heavy, void* native_stream, const char* fn,
                   const char* name = nullptr) {
  gpu::DeviceGuard<Api> guard;
  enter(guard, device, fn);
  if (n <= 0) return Op::template identity<T>();
  gpu_faults::prepare_faults(device, name);
  const auto s = static_cast<Api::Stream>(native_stream);
  int dev = 0, sms = 0;
  Api::Error e = Api::get_device(&dev);
  if (e == Api::kSuccess) e = Api::multiprocessor_count(dev, &sms);
  if (e != Api::kSuccess) throw_api_error(fn, device, "reading the device's properties", e);
  // Materialising costs a launch and a write and read of the terms, a loss for cheap terms, so it is
  // taken only where the direct kernel would starve the GPU whatever the terms cost (at most 4
  // chunks: 1024 threads), or where the caller said the terms are heavy (heavy: a grain <= 32).
  const std::int64_t chunks = reduce_chunk_count(n);
  const bool materialize = chunks < sms && (chunks <= 4 || heavy);
  // [terms (materialize only)] [partials, 256-byte aligned so that their passes use vector loads] [result]
  const std::int64_t terms = materialize ? (n + 63) / 64 * 64 : 0;
  const std::int64_t parts = gpu::reduce_scratch_elems(1, n, 1);
  const std::uint64_t bytes = static_cast<std::uint64_t>(terms + parts + 1) * sizeof(T);
  void* mem = nullptr;
  e = Api::malloc_async(&mem, bytes, s);
  if (e != Api::kSuccess) throw_api_error(fn, device, "allocating temporary memory", e, bytes);
  T* vals = static_cast<T*>(mem);
  T* scratch = vals + terms;
  T* y = scratch + parts;
  T r = Op::template identity<T>();
  if (materialize) {
    // Small blocks, so that even a few thousand terms reach every multiprocessor.
    std::int64_t threads = n / (2 * static_cast<std::int64_t>(sms > 0 ? sms : 1));
    threads = threads >= gpu::kBlockThreads ? gpu::kBlockThreads : threads >= 128 ? 128 : threads >= 64 ? 64 : 32;
    const std::int64_t grid = gpu::clamp_grid((n + threads - 1) / threads, gpu::kMaxGrid);
    e = Api::launch(materialize_kernel<T, F>, dim3(static_cast<unsigned>(grid)), dim3(static_cast<unsigned>(threads)),
                    0, s, n, f, vals);
    if (e == Api::kSuccess) e = gpu::reduce_run<Api, T>(gpu::ContigLoad<T>{vals}, op, 1, n, 1, y, scratch, s);
  } else {
    e = gpu::reduce_run<Api, T>(gpu::FuncLoad<T, F>{f}, op, 1, n, 1, y, scratch, s);
  }
  const char* what = "kernel launch";
  if (e == Api::kSuccess) {
    e = Api::copy_to_host_async(&r, y, sizeof(T), s);
    what = "copying the result";
  }
  const Api::Error freed = Api::free_async(mem, s);
  if (e == Api::kSuccess) {
    e = Api::stream_synchronize(s);
    what = "synchronizing the stream";
  }
  if (e == Api::kSuccess && freed != Api::kSuccess) {
    e = freed;
    what = "freeing temporary memory";
  }
  if (e != Api::kSuccess) throw_api_error(fn, device, what, e);
  raise_kernel_faults(device, fn);
  return r;
}

}  // namespace porta::detail::gpu_user
