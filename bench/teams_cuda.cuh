// SPDX-License-Identifier: Apache-2.0
// The team-launch cases on cuda:0 (teams_common.hpp says what runs): porta's team kernels
// ("porta"; stencil_blocked also "porta_range", the plain Range<2> sweep) beside what a CUDA user
// writes by hand, on the same stream, timed as every case of porta_cuda_bench (event_loop).
//
//   nbody_tiled      cuda_tiled: kernels_cuda.cuh's shared-memory kernel (tiles of 256 float4)
//   transpose        cuda: the classic 32 x 33 shared-memory tile, 32 x 4 threads, loops unrolled;
//                    cudamemcpy: cudaMemcpyAsync of the same bytes, device to device (the ceiling)
//   histogram        cuda: shared-memory bins per block, added to the result with global atomics;
//                    cub: cub::DeviceHistogram::HistogramEven, temporary storage allocated once
//   stencil_blocked  cuda: a 32 x 32 block and its halo in shared memory, 32 x 8 threads
//
// Included by cuda_bench.cu at namespace scope after kernels_cuda.cuh, whose helpers (timed_gpu,
// to_host, blocks_for, GpuBodies, cuda_nbody) it uses.
#pragma once

#include <cub/device/device_histogram.cuh>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "teams_common.hpp"

namespace porta_bench_cuda {

namespace pt = porta_bench_teams;

// GPU tuning: a thread per body, blocks of 256 (as cuda_tiled); 1024 histogram teams of 256
// threads (chunks of 2^16 keys at 2^26); stencil blocks of 32 x 32 over 8 threads of 32 lanes.
constexpr int kTeamsNbodyTile = 256;
constexpr std::int64_t kHistTeams = 1024;
constexpr int kStencilTile = 32, kStencilRows = 8;
// Transpose teams and blocks of 4 threads x 32 lanes, 8 rows of the tile each: on the H200 the
// hand-written kernel took 148 us at 8192^2 this way and 170 us with NVIDIA's 8 x 32 (cudaMemcpy of
// the same bytes: 131 us).
constexpr int kTransposeRows = 4;

// ---- hand-written kernels -----------------------------------------------------------------------------
__global__ void transpose_kernel(const float* __restrict__ in, float* __restrict__ out, std::int64_t n) {
  __shared__ float tile[32][33];
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.x) * 32, r0 = static_cast<std::int64_t>(blockIdx.y) * 32;
#pragma unroll
  for (int r = threadIdx.y; r < 32; r += kTransposeRows)
    if (r0 + r < n && c0 + threadIdx.x < n) tile[r][threadIdx.x] = in[(r0 + r) * n + c0 + threadIdx.x];
  __syncthreads();
#pragma unroll
  for (int r = threadIdx.y; r < 32; r += kTransposeRows)
    if (c0 + r < n && r0 + threadIdx.x < n) out[(c0 + r) * n + r0 + threadIdx.x] = tile[threadIdx.x][r];
}

__global__ void histogram_kernel(const std::int32_t* __restrict__ keys, std::int64_t n, unsigned* __restrict__ bins) {
  __shared__ unsigned h[pt::kBins];
  for (int b = threadIdx.x; b < pt::kBins; b += blockDim.x) h[b] = 0;
  __syncthreads();
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    atomicAdd(&h[keys[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < pt::kBins; b += blockDim.x) atomicAdd(&bins[b], h[b]);
}

// guide_jacobi's expression, operation for operation.
__global__ void stencil_kernel(const double* __restrict__ u, double* __restrict__ v, std::int64_t n, double k) {
  constexpr int T = kStencilTile;
  __shared__ double h[T + 2][T + 2];
  const std::int64_t i0 = 1 + static_cast<std::int64_t>(blockIdx.y) * T,
                     j0 = 1 + static_cast<std::int64_t>(blockIdx.x) * T;
  for (int r = threadIdx.y; r < T + 2; r += kStencilRows)
    for (int c = threadIdx.x; c < T + 2; c += T)
      if (i0 - 1 + r < n && j0 - 1 + c < n) h[r][c] = u[(i0 - 1 + r) * n + j0 - 1 + c];
  __syncthreads();
  const int c = threadIdx.x;
  for (int r = threadIdx.y; r < T; r += kStencilRows)
    if (i0 + r < n - 1 && j0 + c < n - 1)
      v[(i0 + r) * n + j0 + c] =
          h[r + 1][c + 1] + k * (h[r][c + 1] + h[r + 2][c + 1] + h[r + 1][c] + h[r + 1][c + 2] - 4.0 * h[r + 1][c + 1]);
}

// ---- n-body ------------------------------------------------------------------------------------------
void porta_nbody_tiled_gpu(GpuBodiesPorta& d) {
  const std::int64_t n = d.ax.size();
  pt::nbody_tiled<1, kTeamsNbodyTile>(kGpu, *gpu().porta_stream, std::as_const(d.pos).view(), d.ax.view(), d.ay.view(),
                                      d.az.view(), n, kTeamsNbodyTile, kTeamsNbodyTile);
}
GpuBodiesPorta make_gpu_nbody_tiled_porta(const std::string& id, std::int64_t n) {
  const porta::Stream& s = *gpu().porta_stream;
  const std::vector<float> h = pb::body_data(n);
  GpuBodiesPorta d{porta::Array<float>::from(h.data(), porta::Shape{4 * n}, kGpu, s),
                   porta::full<float>({n}, 0.0f, kGpu, s), porta::full<float>({n}, 0.0f, kGpu, s),
                   porta::full<float>({n}, 0.0f, kGpu, s)};
  porta_nbody_tiled_gpu(d);
  s.synchronize();
  GpuBodies p = make_gpu_bodies(n);
  cuda_nbody(p, true);
  PB_CUDA(cudaStreamSynchronize(gpu().stream));
  // The same sums in the same order; contraction may round differently (kernels_cuda.cuh).
  pb::expect_close(id + " (ax)", d.ax.to_vector().data(), to_host(p.ax.p, n).data(), n, 1e-4);
  pb::expect_close(id + " (ay)", d.ay.to_vector().data(), to_host(p.ay.p, n).data(), n, 1e-4);
  pb::expect_close(id + " (az)", d.az.to_vector().data(), to_host(p.az.p, n).data(), n, 1e-4);
  return d;
}

// ---- transpose -----------------------------------------------------------------------------------------
struct GpuTransposePorta {
  porta::Array<float> in, out;
};
struct GpuTranspose {
  DeviceBuffer<float> in, out;
};
void porta_transpose_gpu(GpuTransposePorta& d, std::int64_t n) {
  pt::transpose<float>(kGpu, *gpu().porta_stream, std::as_const(d.in).view(), d.out.view(), n, kTransposeRows);
}
void cuda_transpose(GpuTranspose& d, std::int64_t n, bool memcpy) {
  if (memcpy) {
    PB_CUDA(cudaMemcpyAsync(d.out.p, d.in.p, static_cast<std::size_t>(n * n) * sizeof(float), cudaMemcpyDeviceToDevice,
                            gpu().stream));
  } else {
    const unsigned nb = blocks_for(n, 32);
    transpose_kernel<<<dim3(nb, nb), dim3(32, kTransposeRows), 0, gpu().stream>>>(d.in.p, d.out.p, n);
    PB_CUDA(cudaGetLastError());
  }
}
GpuTranspose make_gpu_transpose(std::int64_t n) {
  return GpuTranspose{DeviceBuffer<float>(n * n, pb::host_random<float>(n * n, 0)), DeviceBuffer<float>(n * n)};
}
GpuTransposePorta make_gpu_transpose_porta(const std::string& id, std::int64_t n) {
  const porta::Stream& s = *gpu().porta_stream;
  GpuTransposePorta d{porta::Array<float>::from(pb::host_random<float>(n * n, 0), porta::Shape{n, n}, kGpu, s),
                      porta::full<float>({n, n}, 0.0f, kGpu, s)};
  porta_transpose_gpu(d, n);
  s.synchronize();
  GpuTranspose p = make_gpu_transpose(n);
  cuda_transpose(p, n, false);
  PB_CUDA(cudaStreamSynchronize(gpu().stream));
  pt::expect_equal(id, d.out.to_vector().data(), to_host(p.out.p, n * n).data(), n * n);
  return d;
}

// ---- histogram ------------------------------------------------------------------------------------------
struct GpuHistogramPorta {
  porta::Array<std::int32_t> keys, partial, bins;
  std::int64_t league = 0;
};
struct GpuHistogram {
  DeviceBuffer<std::int32_t> keys;
  DeviceBuffer<unsigned> bins;
  DeviceBuffer<unsigned char> temp;  // CUB's
  std::size_t temp_bytes = 0;
  std::int64_t n = 0;
};
void porta_histogram_gpu(GpuHistogramPorta& d) {
  pt::histogram(kGpu, *gpu().porta_stream, std::as_const(d.keys).view(), d.partial.view(), d.bins.view(), d.keys.size(),
                d.league, 256);
}
void cuda_histogram(GpuHistogram& d, bool cub) {
  cudaStream_t s = gpu().stream;
  if (cub) {
    PB_CUDA(cub::DeviceHistogram::HistogramEven(d.temp.p, d.temp_bytes, d.keys.p, d.bins.p, pt::kBins + 1, 0, pt::kBins,
                                                d.n, s));
  } else {
    PB_CUDA(cudaMemsetAsync(d.bins.p, 0, pt::kBins * sizeof(unsigned), s));
    histogram_kernel<<<static_cast<unsigned>(kHistTeams), 256, 0, s>>>(d.keys.p, d.n, d.bins.p);
    PB_CUDA(cudaGetLastError());
  }
}
GpuHistogram make_gpu_histogram(std::int64_t n, bool cub) {
  GpuHistogram d;
  const std::vector<std::int32_t> k = pt::histogram_keys(n);
  d.keys = DeviceBuffer<std::int32_t>(n, k.data());
  d.bins = DeviceBuffer<unsigned>(pt::kBins);
  d.n = n;
  if (cub) {
    PB_CUDA(cub::DeviceHistogram::HistogramEven(nullptr, d.temp_bytes, d.keys.p, d.bins.p, pt::kBins + 1, 0, pt::kBins,
                                                n, gpu().stream));
    d.temp = DeviceBuffer<unsigned char>(static_cast<std::int64_t>(d.temp_bytes));
  }
  return d;
}
GpuHistogramPorta make_gpu_histogram_porta(const std::string& id, std::int64_t n) {
  const porta::Stream& s = *gpu().porta_stream;
  const std::int64_t league = std::max<std::int64_t>(1, std::min<std::int64_t>(kHistTeams, n / 4096));
  const std::vector<std::int32_t> keys = pt::histogram_keys(n);
  GpuHistogramPorta d{porta::Array<std::int32_t>::from(keys.data(), porta::Shape{n}, kGpu, s),
                      porta::full<std::int32_t>({pt::kBins, league}, 0, kGpu, s),
                      porta::full<std::int32_t>({pt::kBins}, 0, kGpu, s), league};
  porta_histogram_gpu(d);
  s.synchronize();
  for (bool cub : {false, true}) {
    GpuHistogram p = make_gpu_histogram(n, cub);
    cuda_histogram(p, cub);
    PB_CUDA(cudaStreamSynchronize(gpu().stream));
    const std::vector<unsigned> u = to_host(p.bins.p, pt::kBins);
    const std::vector<std::int32_t> peer(u.begin(), u.end());
    pt::expect_equal(id + (cub ? " vs cub" : " vs cuda"), d.bins.to_vector().data(), peer.data(), pt::kBins);
  }
  return d;
}

// ---- blocked stencil ------------------------------------------------------------------------------------
struct GpuStencilPorta {
  porta::Array<double> u, v;
};
struct GpuStencil {
  DeviceBuffer<double> u, v;
};
void porta_stencil_gpu(GpuStencilPorta& d, std::int64_t n, bool blocked) {
  const porta::Stream& s = *gpu().porta_stream;
  if (blocked) {
    pt::stencil_blocked<double>(kGpu, s, std::as_const(d.u).view(), d.v.view(), n, kStencilTile, kStencilTile,
                                kStencilRows, kStencilTile);
  } else {
    pt::stencil_range<double>(kGpu, s, std::as_const(d.u).view(), d.v.view(), n);
  }
}
void cuda_stencil(GpuStencil& d, std::int64_t n) {
  const unsigned nb = blocks_for(n - 2, kStencilTile);
  stencil_kernel<<<dim3(nb, nb), dim3(kStencilTile, kStencilRows), 0, gpu().stream>>>(d.u.p, d.v.p, n,
                                                                                      pb::kGuideK<double>);
  PB_CUDA(cudaGetLastError());
}
GpuStencil make_gpu_stencil(std::int64_t n) {
  return GpuStencil{DeviceBuffer<double>(n * n, pb::host_random<double>(n * n, 0)),
                    DeviceBuffer<double>(n * n, pb::host_random<double>(n * n, 1))};
}
GpuStencilPorta make_gpu_stencil_porta(const std::string& id, std::int64_t n, bool blocked) {
  const porta::Stream& s = *gpu().porta_stream;
  GpuStencilPorta d{porta::Array<double>::from(pb::host_random<double>(n * n, 0), porta::Shape{n, n}, kGpu, s),
                    porta::Array<double>::from(pb::host_random<double>(n * n, 1), porta::Shape{n, n}, kGpu, s)};
  porta_stencil_gpu(d, n, blocked);
  s.synchronize();
  GpuStencil p = make_gpu_stencil(n);
  cuda_stencil(p, n);
  PB_CUDA(cudaStreamSynchronize(gpu().stream));
  // The same expression on the same data: equal but for contraction.
  pb::expect_close(id, d.v.to_vector().data(), to_host(p.v.p, n * n).data(), n * n, 1e-13);
  return d;
}

// ---- registration -----------------------------------------------------------------------------------------
void register_teams() {
  const pt::TeamsSizes z = pt::teams_sizes(true);
  if (pt::wanted_teams("nbody_tiled")) {
    const std::int64_t n = z.nbody;
    const double flops = static_cast<double>(n) * static_cast<double>(n) * pb::kNbodyFlopsPerPair;
    pb::add("nbody_tiled", "f32", "porta", n,
            [=](benchmark::State& st, const std::string& id) {
              require_porta(st);
              const int calls = timed_gpu<GpuBodiesPorta>(
                  st, id, reps_for_flops(flops), [&] { return make_gpu_nbody_tiled_porta(id, n); },
                  [](GpuBodiesPorta& d) { porta_nbody_tiled_gpu(d); });
              pb::set_flops(st, flops * calls);
            })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    pb::add("nbody_tiled", "f32", "cuda_tiled", n,
            [=](benchmark::State& st, const std::string& id) {
              const int calls = timed_gpu<GpuBodies>(
                  st, id, reps_for_flops(flops), [&] { return make_gpu_bodies(n); },
                  [](GpuBodies& d) { cuda_nbody(d, true); });
              pb::set_flops(st, flops * calls);
            })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  if (pt::wanted_teams("transpose")) {
    const std::int64_t n = z.transpose;
    const double bytes = pt::transpose_bytes(n);
    pb::add("transpose", "f32", "porta", n, [=](benchmark::State& st, const std::string& id) {
      require_porta(st);
      const int calls = timed_gpu<GpuTransposePorta>(
          st, id, reps_for_bytes(bytes), [&] { return make_gpu_transpose_porta(id, n); },
          [n](GpuTransposePorta& d) { porta_transpose_gpu(d, n); });
      pb::set_bytes(st, bytes * calls);
    })->UseManualTime();
    for (bool memcpy : {false, true}) {
      pb::add("transpose", "f32", memcpy ? "cudamemcpy" : "cuda", n, [=](benchmark::State& st, const std::string& id) {
        const int calls = timed_gpu<GpuTranspose>(
            st, id, reps_for_bytes(bytes), [&] { return make_gpu_transpose(n); },
            [n, memcpy](GpuTranspose& d) { cuda_transpose(d, n, memcpy); });
        pb::set_bytes(st, bytes * calls);
      })->UseManualTime();
    }
  }
  if (pt::wanted_teams("histogram")) {
    const std::int64_t n = z.histogram;
    const double bytes = pt::histogram_bytes(n);
    pb::add("histogram", "i32", "porta", n, [=](benchmark::State& st, const std::string& id) {
      require_porta(st);
      const int calls = timed_gpu<GpuHistogramPorta>(
          st, id, reps_for_bytes(bytes), [&] { return make_gpu_histogram_porta(id, n); },
          [](GpuHistogramPorta& d) { porta_histogram_gpu(d); });
      pb::set_bytes(st, bytes * calls);
    })->UseManualTime();
    for (bool cub : {false, true}) {
      pb::add("histogram", "i32", cub ? "cub" : "cuda", n, [=](benchmark::State& st, const std::string& id) {
        const int calls = timed_gpu<GpuHistogram>(
            st, id, reps_for_bytes(bytes), [&] { return make_gpu_histogram(n, cub); },
            [cub](GpuHistogram& d) { cuda_histogram(d, cub); });
        pb::set_bytes(st, bytes * calls);
      })->UseManualTime();
    }
  }
  if (pt::wanted_teams("stencil_blocked")) {
    const std::int64_t n = z.stencil;
    const double bytes = pt::stencil_bytes(n);
    for (bool blocked : {true, false}) {
      pb::add("stencil_blocked", "f64", blocked ? "porta" : "porta_range", n,
              [=](benchmark::State& st, const std::string& id) {
                require_porta(st);
                const int calls = timed_gpu<GpuStencilPorta>(
                    st, id, reps_for_bytes(bytes), [&] { return make_gpu_stencil_porta(id, n, blocked); },
                    [n, blocked](GpuStencilPorta& d) { porta_stencil_gpu(d, n, blocked); });
                pb::set_bytes(st, bytes * calls);
              })
          ->UseManualTime();
    }
    pb::add("stencil_blocked", "f64", "cuda", n, [=](benchmark::State& st, const std::string& id) {
      const int calls = timed_gpu<GpuStencil>(
          st, id, reps_for_bytes(bytes), [&] { return make_gpu_stencil(n); },
          [n](GpuStencil& d) { cuda_stencil(d, n); });
      pb::set_bytes(st, bytes * calls);
    })->UseManualTime();
  }
}

}  // namespace porta_bench_cuda
