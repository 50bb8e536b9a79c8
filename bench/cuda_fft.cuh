// SPDX-License-Identifier: Apache-2.0
// The fft cases on cuda:0 (fft_common.hpp says what runs): porta::fft as a user writes it ("porta",
// cuFFT behind porta's call), beside cuFFT called directly ("cufft") as a user holding the same
// interleaved arrays in cudaMalloc'ed memory would call it: one cufftPlanMany over the same
// row-major lengths and batch (the basic layout, out of place), made once outside the timing and
// set to the benchmark stream, then cufftExecC2C / Z2Z / R2C / D2Z per call. ifft_c2c runs the
// peer twice: "cufft" follows the inverse execute with a grid-stride kernel that multiplies by 1/n
// (numpy's norm "backward", what porta returns; porta's plugin does the same in a second pass),
// "cufft_unscaled" stops at cuFFT's unnormalised inverse.
//
// porta's time includes what its call does beyond the execute: the plan lookup in its cache, the
// workspace taken from the stream-ordered pool (cuFFT's own plan holds one for the peer) and the
// result allocated on every call.
//
// Every result is checked on the host against the DFT sums (fft_common.hpp) and porta's whole
// result is compared with cuFFT's before timing; timed by events around a batch (event_loop).
// Included by cuda_bench.cu at namespace scope after kernels_cuda.cuh, whose helpers (timed_gpu,
// to_host) it uses.
#pragma once

#include <cufft.h>
#include <porta/fft.hpp>
#include <porta/porta.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "fft_common.hpp"

namespace porta_bench_cuda {

namespace pf = porta_bench_fft;

void check_cufft(cufftResult r, const char* what) {
  if (r != CUFFT_SUCCESS) throw std::runtime_error(std::string(what) + ": cuFFT status " + std::to_string(r));
}
#define PB_CUFFT(call) check_cufft((call), #call)

template <class T>
__global__ void fft_scale_kernel(T* y, T s, std::int64_t n) {
  const std::int64_t step = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n; i += step) y[i] *= s;
}

// ---- cuFFT ------------------------------------------------------------------------------------------
// Held by pointer in the tenant: the plan is destroyed once.
template <class T>
struct GpuFftCufft {
  pf::FftCase c;
  DeviceBuffer<T> x, y;
  cufftHandle plan = 0;
  bool planned = false;
  bool scaled = false;  // ifft: y *= 1 / n after the execute

  GpuFftCufft() = default;
  GpuFftCufft(const GpuFftCufft&) = delete;
  GpuFftCufft& operator=(const GpuFftCufft&) = delete;
  ~GpuFftCufft() {
    if (planned) cufftDestroy(plan);
  }
};

template <class T>
void cufft_call(GpuFftCufft<T>& d) {
  constexpr bool f32 = std::is_same_v<T, float>;
  if (d.c.real()) {
    if constexpr (f32) {
      PB_CUFFT(cufftExecR2C(d.plan, d.x.p, reinterpret_cast<cufftComplex*>(d.y.p)));
    } else {
      PB_CUFFT(cufftExecD2Z(d.plan, d.x.p, reinterpret_cast<cufftDoubleComplex*>(d.y.p)));
    }
  } else {
    const int direction = d.c.inverse() ? CUFFT_INVERSE : CUFFT_FORWARD;
    if constexpr (f32) {
      PB_CUFFT(cufftExecC2C(d.plan, reinterpret_cast<cufftComplex*>(d.x.p), reinterpret_cast<cufftComplex*>(d.y.p),
                            direction));
    } else {
      PB_CUFFT(cufftExecZ2Z(d.plan, reinterpret_cast<cufftDoubleComplex*>(d.x.p),
                            reinterpret_cast<cufftDoubleComplex*>(d.y.p), direction));
    }
  }
  if (d.scaled) {
    const std::int64_t n = d.c.out_elems();
    const unsigned blocks = static_cast<unsigned>(std::min<std::int64_t>((n + 255) / 256, 65536));
    fft_scale_kernel<<<blocks, 256, 0, gpu().stream>>>(d.y.p, static_cast<T>(1.0 / static_cast<double>(d.c.points())),
                                                       n);
    PB_CUDA(cudaGetLastError());
  }
}

template <class T>
std::unique_ptr<GpuFftCufft<T>> make_gpu_fft_cufft(const std::string& id, const pf::FftCase& c, bool scaled) {
  pf::HostFft<T>& h = pf::host_fft<T>(c);
  auto d = std::make_unique<GpuFftCufft<T>>();
  d->c = c;
  d->scaled = scaled && c.inverse();
  d->x = DeviceBuffer<T>(c.in_elems(), h.x.data());
  d->y = DeviceBuffer<T>(c.out_elems());
  int n[3] = {};
  for (int a = 0; a < c.rank; ++a) n[a] = static_cast<int>(c.n[a]);
  constexpr bool f32 = std::is_same_v<T, float>;
  const cufftType type = c.real() ? (f32 ? CUFFT_R2C : CUFFT_D2Z) : (f32 ? CUFFT_C2C : CUFFT_Z2Z);
  PB_CUFFT(cufftPlanMany(&d->plan, c.rank, n, nullptr, 1, static_cast<int>(c.points()), nullptr, 1,
                         static_cast<int>(c.out_points()), type, static_cast<int>(c.batch)));
  d->planned = true;
  PB_CUFFT(cufftSetStream(d->plan, gpu().stream));
  cufft_call(*d);
  PB_CUDA(cudaStreamSynchronize(gpu().stream));
  std::vector<T> y = to_host(d->y.p, c.out_elems());
  if (c.inverse() && !d->scaled) {
    // The unnormalised inverse is n times numpy's.
    const T s = static_cast<T>(1.0 / static_cast<double>(c.points()));
    for (T& e : y) e *= s;
  }
  pf::expect_fft(id, h, y.data());
  return d;
}

// ---- porta ------------------------------------------------------------------------------------------
template <class T>
pf::PortaFft<T> make_gpu_fft_porta(const std::string& id, const pf::FftCase& c) {
  const porta::Stream& s = *gpu().porta_stream;
  pf::PortaFft<T> d = pf::make_porta_fft<T>(id, c, kGpu, s);
  const std::unique_ptr<GpuFftCufft<T>> p = make_gpu_fft_cufft<T>(id + " (cufft)", c, true);
  pb::expect_close(id, d.y.to_vector(s).data(), to_host(p->y.p, c.out_elems()).data(), c.out_elems(),
                   pf::fft_tolerance<T>());
  s.synchronize();
  return d;
}

// ---- registration ---------------------------------------------------------------------------------------
template <class T>
void register_fft_case(const pf::FftCase& c) {
  const char* dt = pb::dtype_name<T>();
  const double bytes = c.bytes(sizeof(T));
  const int reps = reps_for_bytes(bytes);
  std::vector<benchmark::internal::Benchmark*> added;
  added.push_back(pb::add(c.op, dt, "porta", c.size, [=](benchmark::State& st, const std::string& id) {
    require_porta(st);
    const int calls = timed_gpu<pf::PortaFft<T>>(
        st, id, reps, [&] { return make_gpu_fft_porta<T>(id, c); },
        [](pf::PortaFft<T>& d) { pf::porta_fft(d, *gpu().porta_stream); });
    pb::set_bytes(st, bytes * calls);
  }));
  for (const bool scaled : {true, false}) {
    if (!scaled && !c.inverse()) continue;
    const std::string impl = scaled ? "cufft" : "cufft_unscaled";
    added.push_back(pb::add(c.op, dt, impl, c.size, [=](benchmark::State& st, const std::string& id) {
      const int calls = timed_gpu<std::unique_ptr<GpuFftCufft<T>>>(
          st, id, reps, [&] { return make_gpu_fft_cufft<T>(id, c, scaled); },
          [](std::unique_ptr<GpuFftCufft<T>>& d) { cufft_call(*d); });
      pb::set_bytes(st, bytes * calls);
    }));
  }
  for (auto* b : added) b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

void register_fft() {
  const std::vector<pf::FftCase> cases = pf::fft_cases();
  if (cases.empty()) return;
  pf::add_fft_context(cases);
  int version = 0;
  if (cufftGetVersion(&version) == CUFFT_SUCCESS) benchmark::AddCustomContext("cufft_version", std::to_string(version));
  for (const pf::FftCase& c : cases) {
    register_fft_case<float>(c);
    register_fft_case<double>(c);
  }
}

}  // namespace porta_bench_cuda
