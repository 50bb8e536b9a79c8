// SPDX-License-Identifier: Apache-2.0
// The user-kernel cases on cuda:0 (kernels_common.hpp): porta's parallel_for and transform_reduce
// beside what a CUDA user would write by hand, on the same stream, timed like every other case of
// porta_cuda_bench (event_loop: a warm-up call, then batches between two events).
//
//   heat_1d, heat_2d  porta: the 1-D index over all cells / the 2-D interior range (default tile)
//                     cuda: the same as a user would write it by hand: for heat_1d one thread
//                     per cell of a 1-D grid (i / n, i % n), for heat_2d a 2-D grid of 32 x 8
//                     threads over the interior, one point each
//   nbody             cuda: one thread per body over all bodies, the same body as porta's;
//                     cuda_tiled: the classic shared-memory kernel (tiles of 256 bodies as float4)
//   reduce_expr       cub: cub::DeviceReduce::Sum over a transform iterator, temporary storage
//                     allocated once, the value copied to pinned host memory inside the timing
//
// Included by cuda_bench.cu at namespace scope, after its timing helpers (gpu(), event_loop,
// DeviceBuffer, require_porta), which it uses.
#pragma once

#include <porta/kernels.hpp>
#include <porta/porta.hpp>

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_reduce.cuh>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels_common.hpp"

namespace porta_bench_cuda {

// ---- hand-written kernels -----------------------------------------------------------------------------
constexpr int kHeatBlockX = 32, kHeatBlockY = 8;
constexpr int kNbodyBlock = 256;

template <class T>
__global__ void heat_kernel(const T* __restrict__ u, T* __restrict__ v, std::int64_t n, T c) {
  const std::int64_t j = 1 + blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t i = 1 + blockIdx.y * static_cast<std::int64_t>(blockDim.y) + threadIdx.y;
  if (i < n - 1 && j < n - 1) pb::heat_point(u, v, n, i, j, c);
}

template <class T>
__global__ void heat_1d_kernel(const T* __restrict__ u, T* __restrict__ v, std::int64_t n, T c) {
  const std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (k < n * n) pb::heat_cell(u, v, n, k, c);
}

__global__ void nbody_kernel(pb::Bodies b, float* ax, float* ay, float* az) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < b.n) pb::nbody_accel(b, i, ax, ay, az);
}

// Each block stages kNbodyBlock bodies at a time in shared memory and every thread runs over them.
// Bodies past the end are padded with mass 0 (softening keeps their term finite).
__global__ void __launch_bounds__(kNbodyBlock) nbody_tiled_kernel(pb::Bodies b, float* ax, float* ay, float* az) {
  __shared__ float4 tile[kNbodyBlock];
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(kNbodyBlock) + threadIdx.x;
  const float xi = i < b.n ? b.x[i] : 0.0f, yi = i < b.n ? b.y[i] : 0.0f, zi = i < b.n ? b.z[i] : 0.0f;
  float sx = 0, sy = 0, sz = 0;
  for (std::int64_t base = 0; base < b.n; base += kNbodyBlock) {
    const std::int64_t j = base + threadIdx.x;
    tile[threadIdx.x] = j < b.n ? make_float4(b.x[j], b.y[j], b.z[j], b.m[j]) : make_float4(0, 0, 0, 0);
    __syncthreads();
#pragma unroll 8
    for (int t = 0; t < kNbodyBlock; ++t) {
      const float4 q = tile[t];
      pb::add_pull(q.x - xi, q.y - yi, q.z - zi, q.w, b.eps2, sx, sy, sz);
    }
    __syncthreads();
  }
  if (i < b.n) {
    ax[i] = sx;
    ay[i] = sy;
    az[i] = sz;
  }
}

unsigned blocks_for(std::int64_t n, int per_block) {
  return static_cast<unsigned>((n + per_block - 1) / per_block);
}

template <class T>
std::vector<T> to_host(const T* device, std::int64_t n) {
  std::vector<T> h(static_cast<std::size_t>(n));
  PB_CUDA(cudaMemcpy(h.data(), device, h.size() * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

// ---- heat ------------------------------------------------------------------------------------------------
template <class T>
struct GpuHeatPorta {
  porta::Array<T> u, v;
};
template <class T>
struct GpuHeat {
  DeviceBuffer<T> u, v;
};

template <class T>
void porta_heat_gpu(GpuHeatPorta<T>& d, std::int64_t n, bool two_d) {
  const auto a = std::as_const(d.u).view();
  const auto b = d.v.view();
  const T c = pb::kHeatC<T>;
  const porta::Stream& s = *gpu().porta_stream;
  if (two_d) {
    porta::parallel_for(
        kGpu, porta::Range<2>({1, 1}, {n - 1, n - 1}),
        PORTA_LAMBDA(std::int64_t i, std::int64_t j) { pb::heat_point(a.data, b.data, n, i, j, c); }, s);
  } else {
    porta::parallel_for(
        kGpu, n * n, PORTA_LAMBDA(std::int64_t k) { pb::heat_cell(a.data, b.data, n, k, c); }, s);
  }
}
template <class T>
void cuda_heat(GpuHeat<T>& d, std::int64_t n, bool two_d) {
  if (two_d) {
    const dim3 block(kHeatBlockX, kHeatBlockY);
    const dim3 grid(blocks_for(n - 2, kHeatBlockX), blocks_for(n - 2, kHeatBlockY));
    heat_kernel<<<grid, block, 0, gpu().stream>>>(d.u.p, d.v.p, n, pb::kHeatC<T>);
  } else {
    const int block = kHeatBlockX * kHeatBlockY;
    heat_1d_kernel<<<blocks_for(n * n, block), block, 0, gpu().stream>>>(d.u.p, d.v.p, n, pb::kHeatC<T>);
  }
  PB_CUDA(cudaGetLastError());
}
template <class T>
GpuHeat<T> make_gpu_heat(std::int64_t n) {
  return GpuHeat<T>{DeviceBuffer<T>(n * n, pb::host_random<T>(n * n, 0)),
                    DeviceBuffer<T>(n * n, pb::host_random<T>(n * n, 0))};
}
template <class T>
GpuHeatPorta<T> make_gpu_heat_porta(const std::string& id, std::int64_t n, bool two_d) {
  const porta::Stream& s = *gpu().porta_stream;
  GpuHeatPorta<T> d{porta::Array<T>::from(pb::host_random<T>(n * n, 0), porta::Shape{n, n}, kGpu, s),
                    porta::Array<T>::from(pb::host_random<T>(n * n, 0), porta::Shape{n, n}, kGpu, s)};
  porta_heat_gpu(d, n, two_d);
  GpuHeat<T> p = make_gpu_heat<T>(n);
  cuda_heat(p, n, two_d);
  PB_CUDA(cudaStreamSynchronize(gpu().stream));
  s.synchronize();
  // The same body compiled by the same nvcc; only contraction choices may differ (kernels_cpu.hpp).
  pb::expect_close(id, d.v.to_vector().data(), to_host(p.v.p, n * n).data(), n * n, 1e-5);
  return d;
}

// ---- n-body ----------------------------------------------------------------------------------------------
struct GpuBodies {
  DeviceBuffer<float> pos, ax, ay, az;
  std::int64_t n = 0;
  pb::Bodies bodies() const { return pb::Bodies{pos.p, pos.p + n, pos.p + 2 * n, pos.p + 3 * n, n, pb::kEps2}; }
};
struct GpuBodiesPorta {
  porta::Array<float> pos, ax, ay, az;
  pb::Bodies bodies() const {
    const float* p = pos.view().data;
    const std::int64_t n = ax.size();
    return pb::Bodies{p, p + n, p + 2 * n, p + 3 * n, n, pb::kEps2};
  }
};

GpuBodies make_gpu_bodies(std::int64_t n) {
  const std::vector<float> h = pb::body_data(n);
  return GpuBodies{DeviceBuffer<float>(4 * n, h.data()), DeviceBuffer<float>(n), DeviceBuffer<float>(n),
                   DeviceBuffer<float>(n), n};
}
void porta_nbody_gpu(GpuBodiesPorta& d) {
  const pb::Bodies b = d.bodies();
  float* ax = d.ax.view().data;
  float* ay = d.ay.view().data;
  float* az = d.az.view().data;
  porta::parallel_for(
      kGpu, b.n, PORTA_LAMBDA(std::int64_t i) { pb::nbody_accel(b, i, ax, ay, az); }, *gpu().porta_stream);
}
void cuda_nbody(GpuBodies& d, bool tiled) {
  const pb::Bodies b = d.bodies();
  const unsigned grid = blocks_for(b.n, kNbodyBlock);
  if (tiled) {
    nbody_tiled_kernel<<<grid, kNbodyBlock, 0, gpu().stream>>>(b, d.ax.p, d.ay.p, d.az.p);
  } else {
    nbody_kernel<<<grid, kNbodyBlock, 0, gpu().stream>>>(b, d.ax.p, d.ay.p, d.az.p);
  }
  PB_CUDA(cudaGetLastError());
}
GpuBodiesPorta make_gpu_bodies_porta(const std::string& id, std::int64_t n) {
  const porta::Stream& s = *gpu().porta_stream;
  const std::vector<float> h = pb::body_data(n);
  GpuBodiesPorta d{porta::Array<float>::from(h.data(), porta::Shape{4 * n}, kGpu, s),
                   porta::full<float>({n}, 0.0f, kGpu, s), porta::full<float>({n}, 0.0f, kGpu, s),
                   porta::full<float>({n}, 0.0f, kGpu, s)};
  porta_nbody_gpu(d);
  s.synchronize();
  // Against both hand-written kernels: the same sums in the same order, but rsqrtf and contraction
  // may round differently (kernels_cpu.hpp's tolerance).
  for (bool tiled : {false, true}) {
    GpuBodies p = make_gpu_bodies(n);
    cuda_nbody(p, tiled);
    PB_CUDA(cudaStreamSynchronize(gpu().stream));
    const std::string what = id + (tiled ? " vs cuda_tiled" : " vs cuda");
    pb::expect_close(what + " (ax)", d.ax.to_vector().data(), to_host(p.ax.p, n).data(), n, 1e-4);
    pb::expect_close(what + " (ay)", d.ay.to_vector().data(), to_host(p.ay.p, n).data(), n, 1e-4);
    pb::expect_close(what + " (az)", d.az.to_vector().data(), to_host(p.az.p, n).data(), n, 1e-4);
  }
  return d;
}

// ---- reduction of an expression -------------------------------------------------------------------------
template <class T>
struct GpuExprPorta {
  porta::Array<T> x, y;
};
template <class T>
struct GpuExprCub {
  DeviceBuffer<T> x, y, result;
  DeviceBuffer<unsigned char> temp;
  std::size_t temp_bytes = 0;
  std::int64_t n = 0;
  auto input() const {
    return thrust::make_transform_iterator(thrust::make_counting_iterator<std::int64_t>(0), pb::ExprAt<T>{x.p, y.p});
  }
};

template <class T>
T porta_expr_gpu(const GpuExprPorta<T>& d) {
  const pb::ExprAt<T> f{d.x.view().data, d.y.view().data};
  return porta::transform_reduce(
      kGpu, d.x.size(), T(0), porta::plus{}, PORTA_LAMBDA(std::int64_t i) { return f(i); }, *gpu().porta_stream);
}
template <class T>
T cub_expr(GpuExprCub<T>& d) {
  cudaStream_t s = gpu().stream;
  PB_CUDA(cub::DeviceReduce::Sum(d.temp.p, d.temp_bytes, d.input(), d.result.p, d.n, s));
  PB_CUDA(cudaMemcpyAsync(gpu().pinned, d.result.p, sizeof(T), cudaMemcpyDeviceToHost, s));
  PB_CUDA(cudaStreamSynchronize(s));
  return *static_cast<T*>(gpu().pinned);
}
template <class T>
GpuExprCub<T> make_cub_expr(std::int64_t n) {
  GpuExprCub<T> d;
  d.x = DeviceBuffer<T>(n, pb::host_random<T>(n, 0));
  d.y = DeviceBuffer<T>(n, pb::host_random<T>(n, 1));
  d.result = DeviceBuffer<T>(1);
  d.n = n;
  PB_CUDA(cub::DeviceReduce::Sum(nullptr, d.temp_bytes, d.input(), d.result.p, n, gpu().stream));
  d.temp = DeviceBuffer<unsigned char>(static_cast<std::int64_t>(d.temp_bytes));
  return d;
}
template <class T>
GpuExprPorta<T> make_gpu_expr_porta(const std::string& id, std::int64_t n) {
  const porta::Stream& s = *gpu().porta_stream;
  GpuExprPorta<T> d{porta::Array<T>::from(pb::host_random<T>(n, 0), porta::Shape{n}, kGpu, s),
                    porta::Array<T>::from(pb::host_random<T>(n, 1), porta::Shape{n}, kGpu, s)};
  GpuExprCub<T> c = make_cub_expr<T>(n);
  // Two sums of n positive terms in different orders (kernels_cpu.hpp).
  pb::expect_close(id, static_cast<double>(porta_expr_gpu(d)), static_cast<double>(cub_expr(c)),
                   static_cast<double>(n) * 1.2e-16 * 2);
  return d;
}

// ---- registration -------------------------------------------------------------------------------------------
template <class S, class Make, class Call>
int timed_gpu(benchmark::State& st, const std::string& id, int reps, Make make, Call call) {
  S& s = pb::tenant<S>(id, make);
  return event_loop(st, reps, [&] { call(s); });
}

template <class T>
void register_heat_gpu(const std::string& op, std::int64_t n, bool two_d) {
  const double bytes = pb::heat_bytes(n, sizeof(T));
  const char* dt = pb::dtype_name<T>();
  pb::add(op, dt, "porta", n, [=](benchmark::State& st, const std::string& id) {
    require_porta(st);
    const int calls = timed_gpu<GpuHeatPorta<T>>(
        st, id, reps_for_bytes(bytes), [&] { return make_gpu_heat_porta<T>(id, n, two_d); },
        [&](GpuHeatPorta<T>& d) { porta_heat_gpu(d, n, two_d); });
    pb::set_bytes(st, bytes * calls);
  })->UseManualTime();
  pb::add(op, dt, "cuda", n, [=](benchmark::State& st, const std::string& id) {
    const int calls = timed_gpu<GpuHeat<T>>(
        st, id, reps_for_bytes(bytes), [&] { return make_gpu_heat<T>(n); },
        [&](GpuHeat<T>& d) { cuda_heat(d, n, two_d); });
    pb::set_bytes(st, bytes * calls);
  })->UseManualTime();
}

void register_nbody_gpu(std::int64_t n) {
  const double flops = static_cast<double>(n) * static_cast<double>(n) * pb::kNbodyFlopsPerPair;
  pb::add("nbody", "f32", "porta", n,
          [=](benchmark::State& st, const std::string& id) {
            require_porta(st);
            const int calls = timed_gpu<GpuBodiesPorta>(
                st, id, reps_for_flops(flops), [&] { return make_gpu_bodies_porta(id, n); },
                [](GpuBodiesPorta& d) { porta_nbody_gpu(d); });
            pb::set_flops(st, flops * calls);
          })
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  for (bool tiled : {false, true}) {
    pb::add("nbody", "f32", tiled ? "cuda_tiled" : "cuda", n,
            [=](benchmark::State& st, const std::string& id) {
              const int calls = timed_gpu<GpuBodies>(
                  st, id, reps_for_flops(flops), [&] { return make_gpu_bodies(n); },
                  [&](GpuBodies& d) { cuda_nbody(d, tiled); });
              pb::set_flops(st, flops * calls);
            })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

template <class T>
void register_expr_gpu(std::int64_t n) {
  const double bytes = 2.0 * static_cast<double>(n) * sizeof(T);
  const char* dt = pb::dtype_name<T>();
  pb::add("reduce_expr", dt, "porta", n, [=](benchmark::State& st, const std::string& id) {
    require_porta(st);
    const int calls = timed_gpu<GpuExprPorta<T>>(
        st, id, reps_for_bytes(bytes), [&] { return make_gpu_expr_porta<T>(id, n); },
        [](GpuExprPorta<T>& d) {
          T r = porta_expr_gpu(d);
          benchmark::DoNotOptimize(r);
        });
    pb::set_bytes(st, bytes * calls);
  })->UseManualTime();
  pb::add("reduce_expr", dt, "cub", n, [=](benchmark::State& st, const std::string& id) {
    const int calls = timed_gpu<GpuExprCub<T>>(
        st, id, reps_for_bytes(bytes), [&] { return make_cub_expr<T>(n); },
        [](GpuExprCub<T>& d) {
          T r = cub_expr(d);
          benchmark::DoNotOptimize(r);
        });
    pb::set_bytes(st, bytes * calls);
  })->UseManualTime();
}

// nbody_energy and cg are CPU cases only: the energy's 16384 heavy items are one chunk of the
// canonical reduction order, so one GPU block, and a CG iteration is built-ins the other cases time.
void register_kernels() {
  const pb::KernelSizes k = pb::kernel_sizes();
  if (pb::wanted_kernel("heat_1d", "heat")) register_heat_gpu<float>("heat_1d", k.heat, false);
  if (pb::wanted_kernel("heat_2d", "heat")) register_heat_gpu<float>("heat_2d", k.heat, true);
  if (pb::wanted_kernel("nbody", "nbody")) register_nbody_gpu(k.nbody);
  if (pb::wanted_kernel("reduce_expr", "reduce_expr")) {
    for (std::int64_t n : k.reduce) register_expr_gpu<double>(n);
  }
}

}  // namespace porta_bench_cuda
