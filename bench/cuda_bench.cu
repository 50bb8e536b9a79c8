// SPDX-License-Identifier: Apache-2.0
// porta on cuda:0 beside what a CUDA user would otherwise call, in one run:
//
//   cudamemcpy   (copy only) cudaMemcpyAsync device to device: the ceiling of every map
//   add3         (fourop only) Thrust's transform of out = x + y: the three-word copy that the one-pass
//                four-operation kernel is held against
//   thrust       thrust::transform / reduce / inner_product with thrust::cuda::par(_nosync).on(stream)
//   cub          cub::DeviceReduce::Sum / Max, and Sum over a transform iterator for dot, with the
//                temporary storage allocated once and the result copied back to pinned host memory
//   cublas       cublasSgemm / cublasDgemm / cublasCgemm / cublasZgemm; cublas-tf32: cublasGemmEx with
//   CUBLAS_COMPUTE_32F_FAST_TF32 kernel       (latency only) a minimal hand-written kernel launch memset (latency_fill
//   only) cudaMemsetAsync cuda         (user kernels: heat, nbody) a hand-written CUDA kernel of the same computation;
//                cuda_tiled: nbody's shared-memory kernel (kernels_cuda.cuh)
//   cusparse     (sparse) cusparseSpMV / cusparseSpMM called directly, descriptors and workspace
//                made once (cuda_sparse.cuh)
//   cusolver     (linalg) cusolverDn<t>getrf/getrs, potrf, syevd, gesvd called directly, handle and
//                workspace made once; cublas_batched: cublas<t>getrfBatched/getrsBatched for the
//                stack of small systems (cuda_linalg.cuh)
//   cufft        (fft) cufftPlanMany made once, then cufftExec* on the same stream (cuda_fft.cuh);
//                cufft_unscaled: the inverse without the division by n
//
// Everything runs on one stream (porta's, created once). Throughput cases are timed with cudaEvents
// around a batch of calls (manual time), after a warm-up call; a reduction's time includes copying
// its value back to the host, for porta and the peers alike, because that is when a caller has it.
// Latency cases are host wall-clock time per call. Inputs are random (never zeros).
//
// With no CUDA device (or no driver) the binary registers one case that says why and exits 0, so a
// CUDA build runs on the CPU-only CI machine too.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <porta/kernels.hpp>
#include <porta/porta.hpp>

#include <thrust/copy.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/functional.h>
#include <thrust/inner_product.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/reduce.h>
#include <thrust/transform.h>
#include <thrust/version.h>
#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "common.hpp"

namespace pb = porta_bench;
using pb::Op;

// Named namespace, not an anonymous one: nvcc's extended lambdas (PORTA_LAMBDA) need an enclosing
// function with external linkage.
namespace porta_bench_cuda {

const porta::Device kGpu{porta::DeviceType::cuda, 0};

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(s));
}
#define PB_CUDA(call) check_cuda((call), #call)
#define PB_CUBLAS(call) check_cublas((call), #call)

// ---- process-wide GPU state ---------------------------------------------------------------------
struct Gpu {
  std::unique_ptr<porta::Stream> porta_stream;  // porta's stream; the peers run on it too
  cudaStream_t stream = nullptr;
  bool own_stream = false;  // created here because porta's CUDA backend is unavailable
  cudaEvent_t start = nullptr, stop = nullptr;
  cublasHandle_t blas = nullptr;
  std::string porta_unavailable;  // why porta cannot run on cuda:0; empty when it can
  void* pinned = nullptr;         // the reductions' host result, for the CUB peer
};

Gpu& gpu() {
  static Gpu g;
  return g;
}

void gpu_init() {
  Gpu& g = gpu();
  PB_CUDA(cudaSetDevice(0));
  try {
    if (!porta::is_available(kGpu)) g.porta_unavailable = porta::unavailable_reason(porta::DeviceType::cuda);
  } catch (const std::exception& e) {
    g.porta_unavailable = e.what();
  }
  if (g.porta_unavailable.empty()) {
    g.porta_stream = std::make_unique<porta::Stream>(kGpu);
    g.stream = static_cast<cudaStream_t>(g.porta_stream->native_handle());
  }
  if (!g.stream) {
    PB_CUDA(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
    g.own_stream = true;
  }
  PB_CUDA(cudaEventCreate(&g.start));
  PB_CUDA(cudaEventCreate(&g.stop));
  PB_CUBLAS(cublasCreate(&g.blas));
  PB_CUBLAS(cublasSetStream(g.blas, g.stream));
  PB_CUDA(cudaMallocHost(&g.pinned, 64));
}

void gpu_finalize() {
  Gpu& g = gpu();
  pb::evict_tenant();
  if (g.blas) cublasDestroy(g.blas);
  if (g.start) cudaEventDestroy(g.start);
  if (g.stop) cudaEventDestroy(g.stop);
  if (g.pinned) cudaFreeHost(g.pinned);
  if (g.own_stream) cudaStreamDestroy(g.stream);
  g.porta_stream.reset();
}

void require_porta(benchmark::State& st) {
  (void)st;
  if (!gpu().porta_unavailable.empty()) throw std::runtime_error("porta on cuda:0: " + gpu().porta_unavailable);
}

// ---- timing ------------------------------------------------------------------------------------
// Enough calls per timed batch that launch gaps and event resolution (~0.5 us) do not count:
// about 0.2 GB moved or 1e10 flops per batch, at most 256 calls.
int reps_for_bytes(double bytes) {
  return static_cast<int>(std::clamp(2e8 / std::max(bytes, 1.0), 1.0, 256.0));
}
int reps_for_flops(double flops) {
  return static_cast<int>(std::clamp(1e10 / std::max(flops, 1.0), 1.0, 256.0));
}

// One warm-up call (module loading, pool growth, cuBLAS heuristics stay out of the timing), then
// every iteration is one batch of `reps` calls timed by two events on the stream. The batch is the
// iteration (not the mean call), so Google Benchmark's iteration count, which it chooses from the
// reported time, does not multiply the wall time by `reps`. Returns reps, the calls per iteration:
// bytes and flops are charged per iteration accordingly, and the counter per_call gives the mean
// time of one call.
template <class F>
int event_loop(benchmark::State& st, int reps, F&& f) {
  Gpu& g = gpu();
  f();
  PB_CUDA(cudaStreamSynchronize(g.stream));
  for (auto _ : st) {
    PB_CUDA(cudaEventRecord(g.start, g.stream));
    for (int r = 0; r < reps; ++r) f();
    PB_CUDA(cudaEventRecord(g.stop, g.stream));
    PB_CUDA(cudaEventSynchronize(g.stop));
    float ms = 0;
    PB_CUDA(cudaEventElapsedTime(&ms, g.start, g.stop));
    st.SetIterationTime(static_cast<double>(ms) * 1e-3);
  }
  st.counters["calls"] = reps;
  st.counters["per_call"] =
      benchmark::Counter(reps, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  return reps;
}

// Latency: host wall-clock time per call (Google Benchmark's real time); the stream is drained
// before the first and after the last call, outside the timed loop.
template <class F>
void host_loop(benchmark::State& st, F&& f) {
  Gpu& g = gpu();
  f();
  PB_CUDA(cudaStreamSynchronize(g.stream));
  for (auto _ : st) f();
  PB_CUDA(cudaStreamSynchronize(g.stream));
}

// ---- device memory -----------------------------------------------------------------------------
template <class T>
struct DeviceBuffer {
  T* p = nullptr;
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::int64_t n, const T* host = nullptr) {
    const std::size_t bytes = static_cast<std::size_t>(std::max<std::int64_t>(n, 1)) * sizeof(T);
    PB_CUDA(cudaMalloc(&p, bytes));
    if (host) {
      PB_CUDA(cudaMemcpy(p, host, static_cast<std::size_t>(n) * sizeof(T), cudaMemcpyHostToDevice));
    } else {
      PB_CUDA(cudaMemset(p, 0, bytes));
    }
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : p(std::exchange(o.p, nullptr)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(p, o.p);
    return *this;
  }
  ~DeviceBuffer() {
    if (p) cudaFree(p);
  }
};

// ---- porta ----------------------------------------------------------------------------------------
template <class T>
struct PortaVectors {
  porta::Array<T> x, y, out;
};

template <class T>
PortaVectors<T> make_porta_vectors(Op op, std::int64_t n) {
  PortaVectors<T> v;
  const porta::Shape shape{n};
  const porta::Stream& s = *gpu().porta_stream;
  if (pb::inputs_of(op) >= 1) v.x = porta::Array<T>::from(pb::host_random<T>(n, 0), shape, kGpu, s);
  if (pb::inputs_of(op) >= 2) v.y = porta::Array<T>::from(pb::host_random<T>(n, 1), shape, kGpu, s);
  if (pb::has_output(op)) v.out = porta::full<T>(shape, T(0), kGpu, s);
  s.synchronize();
  return v;
}

// One porta call of `op` on the benchmark stream. Reductions return their value to the host.
template <class T>
void porta_call(Op op, PortaVectors<T>& v, T& alpha) {
  const porta::Stream& s = *gpu().porta_stream;
  switch (op) {
    case Op::copy:
      porta::copy(v.x, v.out, s);
      break;
    case Op::scale:
      porta::mul(v.x, alpha, v.out, s);
      break;
    case Op::axpy:
      porta::axpy(alpha, v.x, v.y, s);
      alpha = -alpha;
      break;
    case Op::fourop:
      porta::map(
          s, v.out, PORTA_LAMBDA(T a, T b) { return pb::FourOp<T>{}(a, b); }, v.x, v.y);
      break;
    case Op::add:
      porta::add(v.x, v.y, v.out, s);
      break;
    case Op::fill:
      porta::fill(v.out, alpha, s);
      break;
    case Op::sum: {
      T r = porta::sum(v.x, s);
      benchmark::DoNotOptimize(r);
      break;
    }
    case Op::dot: {
      T r = porta::dot(v.x, v.y, s);
      benchmark::DoNotOptimize(r);
      break;
    }
    case Op::max: {
      T r = porta::max(v.x, s);
      benchmark::DoNotOptimize(r);
      break;
    }
  }
}

template <class T>
void porta_vector(benchmark::State& st, const std::string& id, Op op, std::int64_t n, bool latency) {
  require_porta(st);
  auto& v = pb::tenant<PortaVectors<T>>(id, [&] { return make_porta_vectors<T>(op, n); });
  T alpha = pb::kAlpha<T>;
  const double bytes = static_cast<double>(pb::words_moved(op)) * static_cast<double>(n) * sizeof(T);
  if (latency) {
    // The small calls of a time-stepping loop: maps are waited for (the host observes the result),
    // except fill/add on one element, which measure what a launch costs the host.
    const bool wait = op == Op::axpy;
    host_loop(st, [&] {
      porta_call(op, v, alpha);
      if (wait) gpu().porta_stream->synchronize();
    });
    pb::set_bytes(st, bytes);
  } else {
    const int calls = event_loop(st, reps_for_bytes(bytes), [&] { porta_call(op, v, alpha); });
    pb::set_bytes(st, bytes * calls);
  }
}

// ---- peers: cudaMemcpy, Thrust, CUB, hand kernels ---------------------------------------------
template <class T>
struct RawVectors {
  DeviceBuffer<T> x, y, out;
  DeviceBuffer<porta::detail::accumulate_t<T>> result;
  DeviceBuffer<unsigned char> temp;  // CUB's temporary storage, sized once
  std::size_t temp_bytes = 0;
};

template <class T>
struct Scale {
  T a;
  PB_HOST_DEVICE T operator()(T x) const { return a * x; }
};
template <class T>
struct Axpy {
  T a;
  PB_HOST_DEVICE T operator()(T x, T y) const { return a * x + y; }
};
template <class T>
struct DotAt {
  const T* x;
  const T* y;
  PB_HOST_DEVICE T operator()(std::int64_t i) const { return x[i] * y[i]; }
};
template <class T>
struct MaxOf {
  PB_HOST_DEVICE T operator()(T a, T b) const { return a > b ? a : b; }
};

template <class T>
__global__ void fill_kernel(T* y, T v, std::int64_t n) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = v;
}
template <class T>
__global__ void add_kernel(const T* x, const T* y, T* o, std::int64_t n) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) o[i] = x[i] + y[i];
}
template <class T>
__global__ void axpy_kernel(T a, const T* x, T* y, std::int64_t n) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// 16-bit peers accumulate in float, as porta and PyTorch do (CUB would sum in the 16-bit type).
struct Widen {
  template <class H>
  PB_HOST_DEVICE float operator()(H h) const {
    return static_cast<float>(h);
  }
};
template <class H>
struct WideDotAt {
  const H* x;
  const H* y;
  PB_HOST_DEVICE float operator()(std::int64_t i) const { return static_cast<float>(x[i]) * static_cast<float>(y[i]); }
};
template <class H, std::enable_if_t<porta::is_half_v<H>, int> = 0>
auto dot_iterator_of(const H* x, const H* y) {
  return thrust::make_transform_iterator(thrust::make_counting_iterator<std::int64_t>(0), WideDotAt<H>{x, y});
}
template <class H, std::enable_if_t<porta::is_half_v<H>, int> = 0>
auto reduce_input_of(const H* x) {
  return thrust::make_transform_iterator(x, Widen{});
}
template <class T, std::enable_if_t<!porta::is_half_v<T>, int> = 0>
const T* reduce_input_of(const T* x) {
  return x;
}

auto dot_iterator_of(const float* x, const float* y) {
  return thrust::make_transform_iterator(thrust::make_counting_iterator<std::int64_t>(0), DotAt<float>{x, y});
}
auto dot_iterator_of(const double* x, const double* y) {
  return thrust::make_transform_iterator(thrust::make_counting_iterator<std::int64_t>(0), DotAt<double>{x, y});
}

template <class T>
RawVectors<T> make_raw_vectors(Op op, std::int64_t n, const std::string& impl) {
  RawVectors<T> v;
  if (pb::inputs_of(op) >= 1) v.x = DeviceBuffer<T>(n, pb::host_random<T>(n, 0));
  if (pb::inputs_of(op) >= 2) v.y = DeviceBuffer<T>(n, pb::host_random<T>(n, 1));
  if (pb::has_output(op)) v.out = DeviceBuffer<T>(n);
  if (impl == "cub") {
    v.result = DeviceBuffer<porta::detail::accumulate_t<T>>(1);
    cudaStream_t s = gpu().stream;
    if (op == Op::sum) {
      PB_CUDA(cub::DeviceReduce::Sum(nullptr, v.temp_bytes, reduce_input_of(v.x.p), v.result.p, n, s));
    } else if (op == Op::max) {
      PB_CUDA(cub::DeviceReduce::Max(nullptr, v.temp_bytes, reduce_input_of(v.x.p), v.result.p, n, s));
    } else if (op == Op::dot) {
      PB_CUDA(cub::DeviceReduce::Sum(nullptr, v.temp_bytes, dot_iterator_of(v.x.p, v.y.p), v.result.p, n, s));
    }
    v.temp = DeviceBuffer<unsigned char>(static_cast<std::int64_t>(v.temp_bytes));
  }
  return v;
}

// One peer call of `op`; returns false when `impl` has no such case.
template <class T>
bool peer_call(const std::string& impl, Op op, RawVectors<T>& v, std::int64_t n, T& alpha) {
  cudaStream_t s = gpu().stream;
  const auto nosync = thrust::cuda::par_nosync.on(s);
  const auto sync = thrust::cuda::par.on(s);
  const auto flip = [&] { alpha = -alpha; };
  if (impl == "cudamemcpy" && op == Op::copy) {
    PB_CUDA(cudaMemcpyAsync(v.out.p, v.x.p, static_cast<std::size_t>(n) * sizeof(T), cudaMemcpyDeviceToDevice, s));
    return true;
  }
  if (impl == "memset" && op == Op::fill) {
    PB_CUDA(cudaMemsetAsync(v.out.p, 0, static_cast<std::size_t>(n) * sizeof(T), s));
    return true;
  }
  if (impl == "kernel") {
    const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
    if (op == Op::fill) {
      fill_kernel<<<blocks, 256, 0, s>>>(v.out.p, alpha, n);
    } else if (op == Op::add) {
      add_kernel<<<blocks, 256, 0, s>>>(v.x.p, v.y.p, v.out.p, n);
    } else if (op == Op::axpy) {
      axpy_kernel<<<blocks, 256, 0, s>>>(alpha, v.x.p, v.y.p, n);
      flip();
    } else {
      return false;
    }
    PB_CUDA(cudaGetLastError());
    return true;
  }
  if (impl == "add3" && op == Op::fourop) {
    thrust::transform(nosync, v.x.p, v.x.p + n, v.y.p, v.out.p, thrust::plus<T>());
    return true;
  }
  if (impl == "thrust") {
    switch (op) {
      case Op::copy:
        thrust::copy(nosync, v.x.p, v.x.p + n, v.out.p);
        return true;
      case Op::scale:
        thrust::transform(nosync, v.x.p, v.x.p + n, v.out.p, Scale<T>{alpha});
        return true;
      case Op::axpy:
        thrust::transform(nosync, v.x.p, v.x.p + n, v.y.p, v.y.p, Axpy<T>{alpha});
        flip();
        return true;
      case Op::fourop:
        thrust::transform(nosync, v.x.p, v.x.p + n, v.y.p, v.out.p, pb::FourOp<T>{});
        return true;
      case Op::add:
        thrust::transform(nosync, v.x.p, v.x.p + n, v.y.p, v.out.p, thrust::plus<T>());
        return true;
      case Op::fill:
        thrust::fill(nosync, v.out.p, v.out.p + n, alpha);
        return true;
      case Op::sum: {
        T r = thrust::reduce(sync, v.x.p, v.x.p + n, T(0));
        benchmark::DoNotOptimize(r);
        return true;
      }
      case Op::dot: {
        T r = thrust::inner_product(sync, v.x.p, v.x.p + n, v.y.p, T(0));
        benchmark::DoNotOptimize(r);
        return true;
      }
      case Op::max: {
        T r = thrust::reduce(sync, v.x.p, v.x.p + n, std::numeric_limits<T>::lowest(), MaxOf<T>());
        benchmark::DoNotOptimize(r);
        return true;
      }
    }
  }
  if (impl == "cub" && pb::is_reduction(op)) {
    if (op == Op::sum) {
      PB_CUDA(cub::DeviceReduce::Sum(v.temp.p, v.temp_bytes, reduce_input_of(v.x.p), v.result.p, n, s));
    } else if (op == Op::max) {
      PB_CUDA(cub::DeviceReduce::Max(v.temp.p, v.temp_bytes, reduce_input_of(v.x.p), v.result.p, n, s));
    } else {
      PB_CUDA(cub::DeviceReduce::Sum(v.temp.p, v.temp_bytes, dot_iterator_of(v.x.p, v.y.p), v.result.p, n, s));
    }
    // The value is not the caller's until it is on the host.
    using A = porta::detail::accumulate_t<T>;
    PB_CUDA(cudaMemcpyAsync(gpu().pinned, v.result.p, sizeof(A), cudaMemcpyDeviceToHost, s));
    PB_CUDA(cudaStreamSynchronize(s));
    const T r = T(*static_cast<A*>(gpu().pinned));
    benchmark::DoNotOptimize(r);
    return true;
  }
  return false;
}

template <class T>
void peer_vector(benchmark::State& st, const std::string& id, const std::string& impl, Op op, std::int64_t n,
                 bool latency) {
  auto& v = pb::tenant<RawVectors<T>>(id, [&] { return make_raw_vectors<T>(op, n, impl); });
  T alpha = pb::kAlpha<T>;
  const double bytes = static_cast<double>(pb::words_moved(op)) * static_cast<double>(n) * sizeof(T);
  auto call = [&] {
    if (!peer_call(impl, op, v, n, alpha)) throw std::logic_error(impl + " has no " + pb::op_name(op));
  };
  if (latency) {
    const bool wait = op == Op::axpy;
    host_loop(st, [&] {
      call();
      if (wait) PB_CUDA(cudaStreamSynchronize(gpu().stream));
    });
    pb::set_bytes(st, bytes);
  } else {
    const int calls = event_loop(st, reps_for_bytes(bytes), call);
    pb::set_bytes(st, bytes * calls);
  }
}

// ---- matmul ------------------------------------------------------------------------------------
struct MatmulShape {
  std::int64_t m, k, n;
};

template <class T>
struct PortaMatrices {
  porta::Array<T> a, b, c;
};

template <class T>
void porta_matmul(benchmark::State& st, const std::string& id, MatmulShape s, porta::MatmulOptions options) {
  require_porta(st);
  const porta::Stream& ps = *gpu().porta_stream;
  auto& p = pb::tenant<PortaMatrices<T>>(id, [&] {
    PortaMatrices<T> r;
    r.a = porta::Array<T>::from(pb::host_random<T>(s.m * s.k, 0), porta::Shape{s.m, s.k}, kGpu, ps);
    r.b = porta::Array<T>::from(pb::host_random<T>(s.k * s.n, 1), porta::Shape{s.k, s.n}, kGpu, ps);
    r.c = porta::full<T>(porta::Shape{s.m, s.n}, T(0), kGpu, ps);
    ps.synchronize();
    return r;
  });
  const double flops = pb::gemm_flops<T>(s.m, s.n, s.k);
  const int calls =
      event_loop(st, reps_for_flops(flops), [&] { porta::gemm(T(1), p.a, false, p.b, false, T(0), p.c, options, ps); });
  pb::set_flops(st, flops * calls);
}

template <class T>
struct RawMatrices {
  DeviceBuffer<T> a, b, c;
};

template <class T>
void cublas_matmul(benchmark::State& st, const std::string& id, MatmulShape s, bool tf32) {
  auto& p = pb::tenant<RawMatrices<T>>(id, [&] {
    RawMatrices<T> r;
    r.a = DeviceBuffer<T>(s.m * s.k, pb::host_random<T>(s.m * s.k, 0));
    r.b = DeviceBuffer<T>(s.k * s.n, pb::host_random<T>(s.k * s.n, 1));
    r.c = DeviceBuffer<T>(s.m * s.n);
    return r;
  });
  const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
  const T one = T(1), zero = T(0);
  cublasHandle_t h = gpu().blas;
  // Row-major C = A B is column-major C^T = B^T A^T: the same call with the operands swapped.
  auto call = [&] {
    if constexpr (std::is_same_v<T, float>) {
      if (tf32) {
        PB_CUBLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, p.b.p, CUDA_R_32F, n, p.a.p, CUDA_R_32F, k,
                               &zero, p.c.p, CUDA_R_32F, n, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
      } else {
        PB_CUBLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, p.b.p, n, p.a.p, k, &zero, p.c.p, n));
      }
    } else if constexpr (std::is_same_v<T, double>) {
      PB_CUBLAS(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, p.b.p, n, p.a.p, k, &zero, p.c.p, n));
    } else if constexpr (porta::is_half_v<T>) {  // float accumulation and scalars, as porta asks
      const float one_f = 1.0f, zero_f = 0.0f;
      const cudaDataType_t type = std::is_same_v<T, porta::float16> ? CUDA_R_16F : CUDA_R_16BF;
      PB_CUBLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one_f, p.b.p, type, n, p.a.p, type, k, &zero_f,
                             p.c.p, type, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    } else if constexpr (std::is_same_v<T, porta::complex<float>>) {
      const auto* one_c = reinterpret_cast<const cuComplex*>(&one);
      const auto* zero_c = reinterpret_cast<const cuComplex*>(&zero);
      PB_CUBLAS(cublasCgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, one_c, reinterpret_cast<const cuComplex*>(p.b.p), n,
                            reinterpret_cast<const cuComplex*>(p.a.p), k, zero_c, reinterpret_cast<cuComplex*>(p.c.p),
                            n));
    } else {
      const auto* one_z = reinterpret_cast<const cuDoubleComplex*>(&one);
      const auto* zero_z = reinterpret_cast<const cuDoubleComplex*>(&zero);
      PB_CUBLAS(cublasZgemm(
          h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, one_z, reinterpret_cast<const cuDoubleComplex*>(p.b.p), n,
          reinterpret_cast<const cuDoubleComplex*>(p.a.p), k, zero_z, reinterpret_cast<cuDoubleComplex*>(p.c.p), n));
    }
  };
  const double flops = pb::gemm_flops<T>(s.m, s.n, s.k);
  const int calls = event_loop(st, reps_for_flops(flops), call);
  pb::set_flops(st, flops * calls);
}

}  // namespace porta_bench_cuda

// The user-kernel cases (heat, nbody, reduce_expr; group "kernels"), which use the helpers above.
#include "kernels_cuda.cuh"
// Sorting beside CUB (group "sort").
#include "cuda_sort.cuh"
// Scans and random numbers beside CUB, Thrust and cuRAND (groups "scan", "random").
#include "cuda_scan_random.cuh"
// Fused expressions beside the eager operators and porta::map (group "fused").
#include "cuda_fused.cuh"
// A map of one element and an empty launch, host-timed (group "small").
#include "cuda_small_calls.cuh"
// porta's own math functions beside libdevice (group "math").
#include "cuda_math.cuh"
// Team launches beside hand-written shared-memory kernels, cudaMemcpy and CUB (group "teams").
#include "teams_cuda.cuh"
// Sparse products of the 2-D Poisson matrix beside cuSPARSE called directly (group "sparse").
#include "cuda_sparse.cuh"
// Dense solvers beside cuSOLVER and cuBLAS's batched LU called directly (group "linalg").
#include "cuda_linalg.cuh"
// Fourier transforms beside cuFFT called directly (group "fft").
#include "cuda_fft.cuh"

namespace porta_bench_cuda {

// ---- registration ------------------------------------------------------------------------------
template <class T>
void register_vector_case(const std::string& label, Op op, std::int64_t n, bool latency,
                          const std::vector<std::string>& peers) {
  const char* dt = pb::dtype_name<T>();
  std::vector<benchmark::internal::Benchmark*> added;
  added.push_back(pb::add(label, dt, "porta", n, [op, n, latency](benchmark::State& st, const std::string& id) {
    porta_vector<T>(st, id, op, n, latency);
  }));
  for (const std::string& impl : peers) {
    added.push_back(pb::add(label, dt, impl, n, [impl, op, n, latency](benchmark::State& st, const std::string& id) {
      peer_vector<T>(st, id, impl, op, n, latency);
    }));
  }
  for (auto* b : added) {
    if (latency) {
      b->UseRealTime()->Unit(benchmark::kMicrosecond);
    } else {
      b->UseManualTime();
    }
  }
}

std::vector<std::string> peers_of(Op op) {
  switch (op) {
    case Op::copy:
      return {"cudamemcpy", "thrust"};
    case Op::fourop:
      return {"thrust", "add3"};
    case Op::sum:
    case Op::dot:
    case Op::max:
      return {"cub", "thrust"};
    case Op::fill:
      return {"kernel", "memset", "thrust"};
    case Op::add:
      return {"kernel", "thrust"};
    case Op::axpy:
      return {"thrust", "kernel"};
    default:
      return {"thrust"};
  }
}

template <class T>
void register_matmul_case(const std::string& label, MatmulShape s, std::int64_t size, bool tf32) {
  const char* dt = pb::dtype_name<T>();
  std::vector<benchmark::internal::Benchmark*> added;
  porta::MatmulOptions vendor, own;
  own.algorithm = porta::GemmAlgorithm::own;
  if (tf32) vendor.precision = porta::Precision::tf32;
  added.push_back(pb::add(label, dt, "porta", size, [s, vendor](benchmark::State& st, const std::string& id) {
    porta_matmul<T>(st, id, s, vendor);
  }));
  if (!tf32) {
    added.push_back(pb::add(label, dt, "porta_own", size, [s, own](benchmark::State& st, const std::string& id) {
      porta_matmul<T>(st, id, s, own);
    }));
  }
  added.push_back(
      pb::add(label, dt, tf32 ? "cublas-tf32" : "cublas", size,
              [s, tf32](benchmark::State& st, const std::string& id) { cublas_matmul<T>(st, id, s, tf32); }));
  for (auto* b : added) b->UseManualTime()->Unit(benchmark::kMillisecond);
}

void register_all() {
  const auto sizes = pb::vector_sizes();
  for (Op op : pb::kMapOps) {
    if (!pb::wanted(pb::op_name(op), "map")) continue;
    for (std::int64_t n : sizes) {
      register_vector_case<float>(pb::op_name(op), op, n, false, peers_of(op));
      register_vector_case<double>(pb::op_name(op), op, n, false, peers_of(op));
    }
  }
  for (Op op : pb::kReduceOps) {
    if (!pb::wanted(pb::op_name(op), "reduce")) continue;
    for (std::int64_t n : sizes) {
      register_vector_case<float>(pb::op_name(op), op, n, false, peers_of(op));
      register_vector_case<double>(pb::op_name(op), op, n, false, peers_of(op));
    }
  }
  // 16-bit arrays: the maps and reductions beside a hand kernel, Thrust and CUB accumulating in float.
  for (Op op : {Op::copy, Op::scale, Op::axpy, Op::add, Op::sum, Op::dot, Op::max}) {
    if (!pb::wanted(pb::op_name(op), "half")) continue;
    for (std::int64_t n : sizes) {
      const std::string label = std::string("half_") + pb::op_name(op);
      const auto peers = pb::is_reduction(op) ? std::vector<std::string>{"cub"} : peers_of(op);
      register_vector_case<porta::float16>(label, op, n, false, peers);
      register_vector_case<porta::bfloat16>(label, op, n, false, peers);
    }
  }
  if (pb::wanted("matmul_half", "matmul")) {
    for (std::int64_t n : pb::matmul_sizes()) {
      register_matmul_case<porta::float16>("matmul", MatmulShape{n, n, n}, n, false);
      register_matmul_case<porta::bfloat16>("matmul", MatmulShape{n, n, n}, n, false);
    }
  }
  if (pb::wanted("matmul", "matmul")) {
    for (std::int64_t n : pb::matmul_sizes()) {
      register_matmul_case<float>("matmul", MatmulShape{n, n, n}, n, false);
      register_matmul_case<double>("matmul", MatmulShape{n, n, n}, n, false);
    }
  }
  if (pb::wanted("matmul_complex", "matmul")) {
    for (std::int64_t n : pb::matmul_sizes()) {
      register_matmul_case<porta::complex<float>>("matmul", MatmulShape{n, n, n}, n, false);
      register_matmul_case<porta::complex<double>>("matmul", MatmulShape{n, n, n}, n, false);
    }
  }
  if (pb::wanted("matmul_tf32", "matmul")) {
    for (std::int64_t n : pb::matmul_sizes()) register_matmul_case<float>("matmul_tf32", MatmulShape{n, n, n}, n, true);
  }
  if (pb::wanted("matmul_ts", "matmul")) {
    const MatmulShape ts{pb::limits().ts_rows, pb::limits().ts_cols, pb::limits().ts_cols};
    register_matmul_case<float>("matmul_ts", ts, ts.m, false);
    register_matmul_case<double>("matmul_ts", ts, ts.m, false);
  }
  // Latency: host-observed time of small calls. fill and add on one element are the launch cost of
  // one call (host side, not waited for); sum includes returning the value; axpy waits for the stream.
  if (pb::wanted("latency_fill", "latency"))
    register_vector_case<float>("latency_fill", Op::fill, 1, true, peers_of(Op::fill));
  if (pb::wanted("latency_add", "latency"))
    register_vector_case<float>("latency_add", Op::add, 1, true, peers_of(Op::add));
  for (std::int64_t n : {std::int64_t{1} << 10, std::int64_t{1} << 16}) {
    if (pb::wanted("latency_sum", "latency") || (n == 1024 && pb::wanted("latency_sum", "small")))
      register_vector_case<float>("latency_sum", Op::sum, n, true, peers_of(Op::sum));
    if (pb::wanted("latency_axpy", "latency"))
      register_vector_case<float>("latency_axpy", Op::axpy, n, true, peers_of(Op::axpy));
  }
  register_small_calls();
  register_kernels();
  register_sort();
  register_scan_random();
  register_fused();
  register_math();
  register_teams();
  register_sparse();
  register_linalg();
  register_fft();
}

void add_context() {
  benchmark::AddCustomContext("porta_bench", "cuda");
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
    benchmark::AddCustomContext("cuda_device", std::string(prop.name) + " (" +
                                                   std::to_string(prop.multiProcessorCount) + " SMs, sm_" +
                                                   std::to_string(prop.major) + std::to_string(prop.minor) + ")");
  }
  int driver = 0, runtime = 0, cublas = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  cublasGetVersion(gpu().blas, &cublas);
  benchmark::AddCustomContext("cuda_versions", "driver " + std::to_string(driver) + ", runtime " +
                                                   std::to_string(runtime) + ", cuBLAS " + std::to_string(cublas));
  benchmark::AddCustomContext("thrust_version", std::to_string(THRUST_MAJOR_VERSION) + "." +
                                                    std::to_string(THRUST_MINOR_VERSION) + "." +
                                                    std::to_string(THRUST_SUBMINOR_VERSION));
  if (gpu().porta_unavailable.empty()) {
    try {
      benchmark::AddCustomContext("porta_device", porta::describe(kGpu));
      benchmark::AddCustomContext("porta_build", porta::build_info());
    } catch (const std::exception& e) {
      benchmark::AddCustomContext("porta_device", std::string("unknown (") + e.what() + ")");
    }
  } else {
    benchmark::AddCustomContext("porta_device", "unavailable: " + gpu().porta_unavailable);
  }
  benchmark::AddCustomContext(
      "porta_peers",
      "cudamemcpy, thrust, cub, cublas, cublas-tf32, cusparse, cusolver, cublas_batched, cufft, "
      "add3, kernel, memset, "
      "cuda and cuda_tiled (hand-written user-kernel peers)");
  pb::add_sizes_context();
  pb::add_kernel_sizes_context();
}

}  // namespace porta_bench_cuda

int main(int argc, char** argv) {
  namespace pc = porta_bench_cuda;
  pb::parse_limits(&argc, argv, /*default_matmul_max=*/8192);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    // No GPU here (the CPU-only CI machine): say why, record it in the output, and succeed.
    const std::string why =
        e != cudaSuccess ? std::string("no usable CUDA device: ") + cudaGetErrorString(e) : "no CUDA device";
    std::fprintf(stderr, "porta_cuda_bench: %s; skipping the GPU benchmarks\n", why.c_str());
    benchmark::AddCustomContext("porta_bench", "cuda");
    benchmark::AddCustomContext("cuda_device", "none: " + why);
    benchmark::RegisterBenchmark("cuda_unavailable", [why](benchmark::State& st) { st.SkipWithError(why.c_str()); });
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  }

  try {
    pc::gpu_init();
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "porta_cuda_bench: %s\n", ex.what());
    return 1;
  }
  pb::tenant_slot().on_evict.push_back([] {
    try {
      if (pc::gpu().porta_unavailable.empty()) porta::empty_cache(pc::kGpu);
    } catch (...) {
    }
  });
  if (!pc::gpu().porta_unavailable.empty())
    std::fprintf(stderr, "porta_cuda_bench: porta cannot use cuda:0 (%s); only the peers run\n",
                 pc::gpu().porta_unavailable.c_str());
  pc::add_context();
  pc::register_all();
  benchmark::RunSpecifiedBenchmarks();
  pc::gpu_finalize();
  benchmark::Shutdown();
  return 0;
}
