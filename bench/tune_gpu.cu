// SPDX-License-Identifier: Apache-2.0
// Launch-configuration tuning of porta's GPU maps and reductions against Thrust and CUB, in one
// short run: the knobs that Google Benchmark's porta_cuda_bench cannot reach (they are compile-time
// constants of the plugin) are template arguments here, so every variant runs from one binary on the
// same inputs. It calls porta's kernels directly (porta/detail/gpu/map.cuh, reduce.cuh), not through
// libporta, so it builds with nvcc alone:
//
//   nvcc -O3 -std=c++17 -arch=sm_90 --extended-lambda --expt-relaxed-constexpr -I include -I . \
//        bench/tune_gpu.cu -o tune && ./tune [--log2=28] [--reps=9] [--calls=10] [--only=scale,sum,...]
//
// (or the CMake target porta_tune_gpu of a PORTA_BUILD_BENCH build with the CUDA backend).
//
// Variants:
//   maps (scale = x * a, axpy = a * x + y in place, copy): map_kernel with Unroll 1, 2, 4 (u1..u4)
//     and grids of 1, 2, 4 x the resident blocks (r1, r2, r4; the kernel strides over the rest) or
//     one block per 256 x Unroll vectors (all: no stride loop). Peer: thrust::transform.
//   fourop (sin(a) * cos(b) + a * b): porta::map's former path (parallel_for: one element per
//     thread) and the vector map kernel; peers thrust::transform and add3 (thrust out = x + y, the
//     same three words of traffic with no arithmetic): t/add3 is the time ratio.
//   reductions (sum f32/f64, dot f32, max f32): the first pass reduce_rows_kernel with Batch 4, 8,
//     16 (B4..B16) and one block per 32768-element chunk (chunk) or 1, 2, 4 x the resident blocks
//     (r1..r4), then the usual remaining passes; the result is copied to pinned host memory and the
//     stream synchronised inside the timing, as for the peer, cub::DeviceReduce (temporary storage
//     allocated once). Every variant's result must have the bits of porta's production reduction.
// "(prod)" marks the configuration porta ships. Timing: one warm-up call per variant, then `reps`
// rounds in which every variant (rotating the order) times a batch of `calls` calls with cudaEvents;
// the median batch gives the time per call. GB/s counts reads and writes as STREAM does. "vs peer"
// is the peer's time over the variant's (> 1: faster than the peer).
#include <cuda_runtime.h>
#include <thrust/copy.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/transform.h>

#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/gpu/map_kernels.cuh"
#include "porta/detail/gpu/map.cuh"
#include "porta/detail/gpu/reduce.cuh"

namespace porta_tune {

namespace g = porta::detail::gpu;
using Api = g::ApiCuda;

void check(cudaError_t e, const char* what, int line) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "porta_tune_gpu: line %d: %s: %s\n", line, what, cudaGetErrorString(e));
    std::exit(1);
  }
}
#define TUNE_CK(...) ::porta_tune::check((__VA_ARGS__), #__VA_ARGS__, __LINE__)

// ---- options, device state ----------------------------------------------------------------------
struct Options {
  int log2 = 28;
  int reps = 9;
  int calls = 10;
  std::string only;  // comma-separated ops; empty: all
};
Options opts;
cudaStream_t stream = nullptr;
cudaEvent_t ev_start = nullptr, ev_stop = nullptr;
void* pinned = nullptr;  // reductions' host results, one 8-byte slot per variant
constexpr int kPinnedSlots = 64;

bool wanted(const char* op) {
  if (opts.only.empty()) return true;
  const std::string list = "," + opts.only + ",";
  return list.find("," + std::string(op) + ",") != std::string::npos;
}

template <class T>
struct Buffer {
  T* p = nullptr;
  explicit Buffer(std::int64_t n) {
    TUNE_CK(cudaMalloc(&p, static_cast<std::size_t>(std::max<std::int64_t>(n, 1)) * sizeof(T)));
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { cudaFree(p); }
};

// Uniform in [-1, 1) from a counter-based generator: fresh, never zeros, no host round trip.
__host__ __device__ inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
template <class T>
__global__ void random_kernel(T* p, std::int64_t n, std::uint64_t seed) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::uint64_t r = splitmix64(seed + static_cast<std::uint64_t>(i));
    p[i] = static_cast<T>(static_cast<double>(r >> 11) * (2.0 / 9007199254740992.0) - 1.0);
  }
}
template <class T>
void fill_random(T* p, std::int64_t n, std::uint64_t seed) {
  random_kernel<<<4096, 256, 0, stream>>>(p, n, splitmix64(seed * 0x632BE59BD9B4E019ull + 1));
  TUNE_CK(cudaGetLastError());
}

// Elements whose bits differ (maps' variants against the production configuration).
template <class T>
__global__ void count_diff_kernel(const T* a, const T* b, std::int64_t n, unsigned long long* bad) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  using Bits = std::conditional_t<sizeof(T) == 8, unsigned long long, unsigned>;
  static_assert(sizeof(Bits) == sizeof(T), "f32 and f64 only");
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    Bits u, v;
    memcpy(&u, &a[i], sizeof(T));
    memcpy(&v, &b[i], sizeof(T));
    local += u != v;
  }
  if (local) atomicAdd(bad, local);
}
template <class T>
unsigned long long count_diff(const T* a, const T* b, std::int64_t n) {
  Buffer<unsigned long long> bad(1);
  TUNE_CK(cudaMemsetAsync(bad.p, 0, sizeof(unsigned long long), stream));
  count_diff_kernel<<<4096, 256, 0, stream>>>(a, b, n, bad.p);
  TUNE_CK(cudaGetLastError());
  unsigned long long h = 0;
  TUNE_CK(cudaMemcpyAsync(&h, bad.p, sizeof(h), cudaMemcpyDeviceToHost, stream));
  TUNE_CK(cudaStreamSynchronize(stream));
  return h;
}

// ---- timing and report --------------------------------------------------------------------------
struct Variant {
  std::string name;
  std::function<void()> call;
  bool peer = false;
  std::string note;  // MISMATCH, t/add3, ...
  std::vector<double> ms;
  double median = 0;
};

double time_batch(const std::function<void()>& f) {
  TUNE_CK(cudaEventRecord(ev_start, stream));
  for (int c = 0; c < opts.calls; ++c) f();
  TUNE_CK(cudaEventRecord(ev_stop, stream));
  TUNE_CK(cudaEventSynchronize(ev_stop));
  float ms = 0;
  TUNE_CK(cudaEventElapsedTime(&ms, ev_start, ev_stop));
  return static_cast<double>(ms) / opts.calls;
}

void measure(std::vector<Variant>& vs) {
  for (Variant& v : vs) v.call();
  TUNE_CK(cudaStreamSynchronize(stream));
  const std::size_t k = vs.size();
  for (int r = 0; r < opts.reps; ++r)
    for (std::size_t j = 0; j < k; ++j) {
      Variant& v = vs[(j + static_cast<std::size_t>(r)) % k];  // rotate: no variant always runs first
      v.ms.push_back(time_batch(v.call));
    }
  for (Variant& v : vs) {
    std::vector<double> s = v.ms;
    std::sort(s.begin(), s.end());
    v.median = s[s.size() / 2];
  }
}

// One line per variant: the peer is the last variant whose `peer` flag is set and whose name is
// `peer_name`.
void report(const char* op, const char* dtype, double bytes, std::vector<Variant>& vs, const std::string& peer_name) {
  double peer_ms = 0;
  for (const Variant& v : vs)
    if (v.peer && v.name == peer_name) peer_ms = v.median;
  for (const Variant& v : vs) {
    const double gbs = bytes / (v.median * 1e-3) * 1e-9;
    std::printf("%-7s %-4s %-22s %9.4f %8.1f %7.3f  %s\n", op, dtype, v.name.c_str(), v.median, gbs,
                peer_ms > 0 ? peer_ms / v.median : 0.0, v.note.c_str());
  }
  std::fflush(stdout);
}

// ---- maps ---------------------------------------------------------------------------------------
template <class T>
struct Scale {  // the peer's functor (bench/cuda_bench.cu)
  T a;
  __host__ __device__ T operator()(T x) const { return a * x; }
};
template <class T>
struct Axpy {
  T a;
  __host__ __device__ T operator()(T x, T y) const { return a * x + y; }
};
template <class T>
struct Identity {
  __host__ __device__ T operator()(T x) const { return x; }
};
// The user kernel of porta_cuda_bench's fourop (bench/common.hpp's FourOp).
template <class T>
struct FourOp {
  __host__ __device__ T operator()(T a, T b) const {
    using std::cos;
    using std::sin;
    return sin(a) * cos(b) + a * b;
  }
};

const char* grid_name(int waves) {
  switch (waves) {
    case 0:
      return "all";
    case 1:
      return "r1";
    case 2:
      return "r2";
    default:
      return "r4";
  }
}

template <int Unroll, class F, class TO, class... TI>
void porta_map(int waves, std::int64_t n, F f, TO* y, const TI*... in) {
  TUNE_CK(g::launch_map_waves<Api, Unroll>(waves, stream, n, f, y, in...));
}

// porta::map before it shared the vector kernel: parallel_for's f(i), one element per thread, a
// resident grid (porta/detail/gpu/user_kernels.cuh).
template <class F, class TO, class... TI>
struct ElementMap {
  F f;
  TO* y;
  g::MapInputs<TI...> in;
  __device__ void operator()(std::int64_t i) const { y[i] = static_cast<TO>(g::apply_at(f, in, i)); }
};
template <class F>
__global__ void __launch_bounds__(g::kBlockThreads) element_kernel(std::int64_t n, F f) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) f(i);
}
template <class F, class TO, class... TI>
void element_map(std::int64_t n, F f, TO* y, const TI*... in) {
  using E = ElementMap<F, TO, TI...>;
  auto kernel = element_kernel<E>;
  std::int64_t resident = 0;
  TUNE_CK(g::resident_grid<Api>(kernel, g::kBlockThreads, 0, &resident));
  const std::int64_t grid = g::clamp_grid((n + g::kBlockThreads - 1) / g::kBlockThreads, resident);
  kernel<<<static_cast<unsigned>(grid), g::kBlockThreads, 0, stream>>>(n, E{f, y, g::map_inputs(in...)});
  TUNE_CK(cudaGetLastError());
}

// Adds the 3 x 4 map variants of `launch(unroll-tag, waves, out)`, writing to `y` when timed, and
// checks each against the production configuration's output (u2 r1) written to `ref`.
template <class Launch, class T>
void add_map_variants(std::vector<Variant>& vs, Launch launch, T* y, T* out, T* ref, std::int64_t n) {
  launch(std::integral_constant<int, g::kMapUnroll>{}, 1, ref);
  const auto add = [&](auto u) {
    constexpr int U = decltype(u)::value;
    for (int waves : {1, 2, 4, 0}) {
      Variant v;
      v.name = "u" + std::to_string(U) + " " + grid_name(waves) + (U == g::kMapUnroll && waves == 0 ? " (prod)" : "");
      v.call = [launch, waves, y] { launch(std::integral_constant<int, U>{}, waves, y); };
      launch(u, waves, out);
      const unsigned long long bad = count_diff(out, ref, n);
      if (bad) v.note = "MISMATCH " + std::to_string(bad) + " elements";
      vs.push_back(std::move(v));
    }
  };
  add(std::integral_constant<int, 1>{});
  add(std::integral_constant<int, 2>{});
  add(std::integral_constant<int, 4>{});
}

template <class T>
void tune_scale(std::int64_t n, const char* dt) {
  Buffer<T> x(n), out(n), ref(n), tmp(n);
  fill_random(x.p, n, 1);
  const T a = T(0.5);
  const T* xp = x.p;
  T* op = out.p;
  std::vector<Variant> vs;
  add_map_variants(
      vs,
      [=](auto u, int waves, T* y) {
        porta_map<decltype(u)::value>(waves, n, g::WithSecond<porta::detail::MulOp, T>{a}, y, xp);
      },
      op, tmp.p, ref.p, n);
  Variant peer;
  peer.name = "thrust";
  peer.peer = true;
  peer.call = [=] { thrust::transform(thrust::cuda::par_nosync.on(stream), xp, xp + n, op, Scale<T>{a}); };
  vs.push_back(std::move(peer));
  measure(vs);
  report("scale", dt, 2.0 * n * sizeof(T), vs, "thrust");
}

template <class T>
void tune_axpy(std::int64_t n, const char* dt) {
  Buffer<T> x(n), y(n), out(n), ref(n);
  fill_random(x.p, n, 1);
  fill_random(y.p, n, 2);
  // Every timed call is in place (y = a x + y) with a's sign flipping, so y stays bounded; the
  // check writes elsewhere so that every variant sees the same y.
  static T alpha = T(0.5);
  const T* xp = x.p;
  T* yp = y.p;
  std::vector<Variant> vs;
  add_map_variants(
      vs,
      [=](auto u, int waves, T* dst) {
        const T a = dst == yp ? (alpha = -alpha) : T(0.5);
        porta_map<decltype(u)::value>(waves, n, porta::detail::AxpyOp<T>{a}, dst, xp, static_cast<const T*>(yp));
      },
      yp, out.p, ref.p, n);
  Variant peer;
  peer.name = "thrust";
  peer.peer = true;
  peer.call = [=] {
    alpha = -alpha;
    thrust::transform(thrust::cuda::par_nosync.on(stream), xp, xp + n, yp, yp, Axpy<T>{alpha});
  };
  vs.push_back(std::move(peer));
  measure(vs);
  report("axpy", dt, 3.0 * n * sizeof(T), vs, "thrust");
}

template <class T>
void tune_copy(std::int64_t n, const char* dt) {
  Buffer<T> x(n), out(n), ref(n), tmp(n);
  fill_random(x.p, n, 1);
  const T* xp = x.p;
  std::vector<Variant> vs;
  add_map_variants(
      vs, [=](auto u, int waves, T* y) { porta_map<decltype(u)::value>(waves, n, Identity<T>{}, y, xp); }, out.p, tmp.p,
      ref.p, n);
  T* op = out.p;
  Variant peer;
  peer.name = "thrust";
  peer.peer = true;
  peer.call = [=] { thrust::copy(thrust::cuda::par_nosync.on(stream), xp, xp + n, op); };
  vs.push_back(std::move(peer));
  Variant memcpy_peer;
  memcpy_peer.name = "cudaMemcpy";
  memcpy_peer.peer = true;
  memcpy_peer.call = [=] {
    TUNE_CK(cudaMemcpyAsync(op, xp, static_cast<std::size_t>(n) * sizeof(T), cudaMemcpyDeviceToDevice, stream));
  };
  vs.push_back(std::move(memcpy_peer));
  measure(vs);
  report("copy", dt, 2.0 * n * sizeof(T), vs, "thrust");
}

template <class T>
void tune_fourop(std::int64_t n, const char* dt) {
  Buffer<T> x(n), y(n), out(n), ref(n), tmp(n);
  fill_random(x.p, n, 1);
  fill_random(y.p, n, 2);
  const T* xp = x.p;
  const T* yp = y.p;
  T* op = out.p;
  const FourOp<T> f;
  std::vector<Variant> vs;
  porta_map<g::kMapUnroll>(1, n, f, ref.p, xp, yp);
  const auto checked = [&](Variant v, auto launch) {
    launch(tmp.p);
    const unsigned long long bad = count_diff(tmp.p, ref.p, n);
    if (bad) v.note = "MISMATCH " + std::to_string(bad) + " elements";
    v.call = [launch, op] { launch(op); };
    vs.push_back(std::move(v));
  };
  checked(Variant{"element (old map)"}, [=](T* dst) { element_map(n, f, dst, xp, yp); });
  const auto vec = [&](auto u, int waves) {
    constexpr int U = decltype(u)::value;
    Variant v;
    // launch_user_map's choice: the built-in maps' for elements up to 4 bytes, u1 r1 for 8 bytes.
    const bool prod = sizeof(T) <= 4 ? (U == g::kMapUnroll && waves == 0) : (U == 1 && waves == 1);
    v.name = "u" + std::to_string(U) + " " + grid_name(waves) + (prod ? " (prod)" : "");
    checked(v, [=](T* dst) { porta_map<U>(waves, n, f, dst, xp, yp); });
  };
  for (int waves : {1, 0}) {
    vec(std::integral_constant<int, 1>{}, waves);
    vec(std::integral_constant<int, 2>{}, waves);
    vec(std::integral_constant<int, 4>{}, waves);
  }
  Variant peer;
  peer.name = "thrust";
  peer.peer = true;
  peer.call = [=] { thrust::transform(thrust::cuda::par_nosync.on(stream), xp, xp + n, yp, op, f); };
  vs.push_back(std::move(peer));
  Variant add3;
  add3.name = "add3";
  add3.peer = true;
  add3.call = [=] { thrust::transform(thrust::cuda::par_nosync.on(stream), xp, xp + n, yp, op, thrust::plus<T>()); };
  vs.push_back(std::move(add3));
  measure(vs);
  const double add3_ms = vs.back().median;
  for (Variant& v : vs)
    if (&v != &vs.back()) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "t/add3 %.3f", v.median / add3_ms);
      v.note = buf + (v.note.empty() ? "" : "  " + v.note);
    }
  report("fourop", dt, 3.0 * n * sizeof(T), vs, "thrust");
}

// ---- reductions ---------------------------------------------------------------------------------
template <class T>
struct DotAt {
  const T* x;
  const T* y;
  __host__ __device__ T operator()(std::int64_t i) const { return x[i] * y[i]; }
};

template <class T>
T pinned_slot(int slot) {
  T v;
  std::memcpy(&v, static_cast<char*>(pinned) + 8 * slot, sizeof(T));
  return v;
}

// The reduction of `ld` with the first pass's Batch and grid chosen here (waves 0: one block per
// chunk), the later passes as porta runs them; the value lands in pinned slot `slot`.
template <int Batch, class T, class Op, class L>
void porta_reduce(const L& ld, Op op, std::int64_t n, int waves, T* y, T* scratch, int slot) {
  if (n <= porta::detail::kReduceChunk) {
    TUNE_CK(g::reduce_run<Api, T>(ld, op, 1, n, 1, y, scratch, stream));
  } else {
    const std::int64_t chunks = g::reduce_chunks(n);
    auto kernel = g::reduce_rows_kernel<Api, Batch, T, Op, L>;
    std::int64_t grid = chunks;
    if (waves > 0) {
      std::int64_t resident = 0;
      TUNE_CK(g::resident_grid<Api>(kernel, g::kReduceThreads, 0, &resident));
      grid = g::clamp_grid(chunks, resident * waves);
    }
    kernel<<<static_cast<unsigned>(grid), g::kReduceThreads, 0, stream>>>(ld, op, 1, n, chunks, scratch);
    TUNE_CK(cudaGetLastError());
    TUNE_CK(g::reduce_run<Api, T>(g::ContigLoad<T>{scratch}, op, 1, chunks, 1, y, scratch + chunks, stream));
  }
  TUNE_CK(cudaMemcpyAsync(static_cast<char*>(pinned) + 8 * slot, y, sizeof(T), cudaMemcpyDeviceToHost, stream));
  TUNE_CK(cudaStreamSynchronize(stream));
}

// `cub_call(temp, temp_bytes, result)` runs the peer.
template <class T, class Op, class L, class Cub>
void tune_reduce(const char* name, const char* dt, std::int64_t n, double bytes, const L& ld, Op op, Cub cub_call) {
  const std::int64_t parts = g::reduce_scratch_elems(1, n, 1);
  Buffer<T> y(1), scratch(parts + 1), result(1);
  std::size_t temp_bytes = 0;
  TUNE_CK(cub_call(nullptr, temp_bytes, result.p));
  Buffer<unsigned char> temp(static_cast<std::int64_t>(temp_bytes));

  // Production: porta's own entry point, as the plugin calls it.
  TUNE_CK(g::reduce_run<Api, T>(ld, op, 1, n, 1, y.p, scratch.p, stream));
  T expect;
  TUNE_CK(cudaMemcpyAsync(&expect, y.p, sizeof(T), cudaMemcpyDeviceToHost, stream));
  TUNE_CK(cudaStreamSynchronize(stream));

  std::vector<Variant> vs;
  std::vector<int> slots;
  T* yp = y.p;
  T* sp = scratch.p;
  const auto add = [&](auto b) {
    constexpr int B = decltype(b)::value;
    for (int waves : {0, 1, 2, 4}) {
      const int slot = static_cast<int>(vs.size());
      Variant v;
      v.name = "B" + std::to_string(B) + " " + (waves == 0 ? "chunk" : grid_name(waves)) +
               (B == g::NativeApi::kReduceBatch && waves == g::NativeApi::kReduceWaves ? " (prod)" : "");
      v.call = [=] { porta_reduce<B>(ld, op, n, waves, yp, sp, slot); };
      vs.push_back(std::move(v));
      slots.push_back(slot);
    }
  };
  add(std::integral_constant<int, 4>{});
  add(std::integral_constant<int, 8>{});
  add(std::integral_constant<int, 16>{});
  Variant peer;
  peer.name = "cub";
  peer.peer = true;
  unsigned char* tp = temp.p;
  T* rp = result.p;
  const int peer_slot = static_cast<int>(vs.size());
  peer.call = [=] {
    std::size_t tb = temp_bytes;
    TUNE_CK(cub_call(tp, tb, rp));
    TUNE_CK(cudaMemcpyAsync(static_cast<char*>(pinned) + 8 * peer_slot, rp, sizeof(T), cudaMemcpyDeviceToHost, stream));
    TUNE_CK(cudaStreamSynchronize(stream));
  };
  vs.push_back(std::move(peer));
  measure(vs);
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const T got = pinned_slot<T>(slots[i]);
    if (std::memcmp(&got, &expect, sizeof(T)) != 0) {
      char buf[96];
      std::snprintf(buf, sizeof(buf), "MISMATCH %.17g != %.17g", static_cast<double>(got), static_cast<double>(expect));
      vs[i].note = buf;
    }
  }
  const T cub_value = pinned_slot<T>(peer_slot);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "value %.9g (porta %.9g)", static_cast<double>(cub_value),
                static_cast<double>(expect));
  vs.back().note = buf;
  report(name, dt, bytes, vs, "cub");
}

template <class T>
void tune_sum(std::int64_t n, const char* dt) {
  Buffer<T> x(n);
  fill_random(x.p, n, 1);
  const T* xp = x.p;
  tune_reduce<T>(
      "sum", dt, n, 1.0 * n * sizeof(T), g::ContigLoad<T>{xp}, porta::detail::SumOp{},
      [=](void* temp, std::size_t& bytes, T* r) { return cub::DeviceReduce::Sum(temp, bytes, xp, r, n, stream); });
}

template <class T>
void tune_max(std::int64_t n, const char* dt) {
  Buffer<T> x(n);
  fill_random(x.p, n, 1);
  const T* xp = x.p;
  tune_reduce<T>(
      "max", dt, n, 1.0 * n * sizeof(T), g::ContigLoad<T>{xp}, porta::detail::MaxOp{},
      [=](void* temp, std::size_t& bytes, T* r) { return cub::DeviceReduce::Max(temp, bytes, xp, r, n, stream); });
}

template <class T>
void tune_dot(std::int64_t n, const char* dt) {
  Buffer<T> x(n), y(n);
  fill_random(x.p, n, 1);
  fill_random(y.p, n, 2);
  const T* xp = x.p;
  const T* yp = y.p;
  tune_reduce<T>(
      "dot", dt, n, 2.0 * n * sizeof(T), g::DotLoad<T>{g::ContigLoad<T>{xp}, g::ContigLoad<T>{yp}},
      porta::detail::SumOp{}, [=](void* temp, std::size_t& bytes, T* r) {
        auto it = thrust::make_transform_iterator(thrust::make_counting_iterator<std::int64_t>(0), DotAt<T>{xp, yp});
        return cub::DeviceReduce::Sum(temp, bytes, it, r, n, stream);
      });
}

int run(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&](const char* flag) -> const char* {
      const std::size_t len = std::strlen(flag);
      return a.compare(0, len, flag) == 0 ? argv[i] + len : nullptr;
    };
    if (const char* v = value("--log2=")) {
      opts.log2 = std::atoi(v);
    } else if (const char* v = value("--reps=")) {
      opts.reps = std::max(1, std::atoi(v));
    } else if (const char* v = value("--calls=")) {
      opts.calls = std::max(1, std::atoi(v));
    } else if (const char* v = value("--only=")) {
      opts.only = v;
    } else {
      std::fprintf(stderr, "usage: %s [--log2=N] [--reps=N] [--calls=N] [--only=scale,axpy,copy,fourop,sum,dot,max]\n",
                   argv[0]);
      return 2;
    }
  }
  if (opts.log2 < 0 || opts.log2 > 33) {
    std::fprintf(stderr, "porta_tune_gpu: --log2 must be in [0, 33]\n");
    return 2;
  }
  const std::int64_t n = std::int64_t{1} << opts.log2;

  TUNE_CK(cudaSetDevice(0));
  cudaDeviceProp prop{};
  TUNE_CK(cudaGetDeviceProperties(&prop, 0));
  TUNE_CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  TUNE_CK(cudaEventCreate(&ev_start));
  TUNE_CK(cudaEventCreate(&ev_stop));
  TUNE_CK(cudaMallocHost(&pinned, 8 * kPinnedSlots));

  std::printf("# porta_tune_gpu: %s (%d SMs), n = 2^%d, median of %d batches of %d calls\n", prop.name,
              prop.multiProcessorCount, opts.log2, opts.reps, opts.calls);
  std::printf("%-7s %-4s %-22s %9s %8s %7s  %s\n", "op", "type", "variant", "ms/call", "GB/s", "vs peer", "note");
  if (wanted("scale")) {
    tune_scale<float>(n, "f32");
    tune_scale<double>(n, "f64");
  }
  if (wanted("axpy")) {
    tune_axpy<float>(n, "f32");
    tune_axpy<double>(n, "f64");
  }
  if (wanted("copy")) tune_copy<float>(n, "f32");
  if (wanted("fourop")) {
    tune_fourop<float>(n, "f32");
    tune_fourop<double>(n, "f64");
  }
  if (wanted("sum")) {
    tune_sum<float>(n, "f32");
    tune_sum<double>(n, "f64");
  }
  if (wanted("dot")) tune_dot<float>(n, "f32");
  if (wanted("max")) tune_max<float>(n, "f32");

  cudaFreeHost(pinned);
  cudaEventDestroy(ev_start);
  cudaEventDestroy(ev_stop);
  cudaStreamDestroy(stream);
  return 0;
}

}  // namespace porta_tune

int main(int argc, char** argv) {
  return porta_tune::run(argc, argv);
}
