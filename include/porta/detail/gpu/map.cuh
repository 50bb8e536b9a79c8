// SPDX-License-Identifier: Apache-2.0
// The one elementwise map kernel of porta's GPU code: y[i] = f(in0[i], in1[i], ...) for any number
// of inputs of any element types. The built-in maps of the CUDA and HIP plugins
// (backends/gpu/map_kernels.cuh) and user porta::map (porta/kernels.hpp) both launch it, so a user's
// lambda gets the same memory path as porta's own add or axpy.
//
// Contiguous maps are memory-bound, so the kernel is built for bandwidth: each thread issues
// Unroll independent 16-byte loads per operand before it computes and stores anything, so that
// enough bytes are in flight to cover memory latency (Little's law: about 32 KiB per SM on an
// H200), and the grid covers the whole array (no striding), so blocks retire and new ones start
// while the memory system stays busy; all indices are 64-bit. Measured on an H200 at 2^28
// elements (bench/tune_gpu.cu, 2026-11-30): that grid with Unroll 2 reaches 0.996-1.05x Thrust's
// transform for scale, axpy and copy, where a grid of resident blocks striding over the data
// reached 0.92-0.99x. A user map of 8-byte elements does better on the resident grid with one
// vector per step (its sin/cos in double precision make it issue-bound: 1.08x Thrust against
// 0.97x), so user maps pick by element size (map_policy). Arrays whose addresses are not 16-byte aligned alike (views)
// take a scalar head until they are, and every map ends with a scalar tail; arrays that never align alike go element by
// element. Nothing here assumes a warp or wavefront size.
#pragma once

#include <cstddef>
#include <cstdint>

#include "porta/detail/gpu/api.cuh"

namespace porta::detail::gpu {

inline constexpr int kMapUnroll = 2;  // 16-byte vectors per operand per thread and iteration

// The input pointers of a map as a recursive tuple: a kernel needs them as one trivially copyable
// argument, and the per-input registers below need the same recursion (C++17 has no pack of
// variables). porta/kernels.hpp keeps its own PointerPack because its CPU path must compile as
// plain C++, which this header does not.
template <class... Ts>
struct MapInputs {};
template <class T, class... Ts>
struct MapInputs<T, Ts...> {
  const T* head;
  MapInputs<Ts...> tail;
};

inline MapInputs<> map_inputs() {
  return {};
}
template <class T, class... Ts>
MapInputs<T, Ts...> map_inputs(const T* head, const Ts*... tail) {
  return MapInputs<T, Ts...>{head, map_inputs(tail...)};
}

// One V-wide vector of every input, in registers.
template <int V, class... Ts>
struct MapPacks {};
template <int V, class T, class... Ts>
struct MapPacks<V, T, Ts...> {
  Pack<T, V> head;
  MapPacks<V, Ts...> tail;
};

template <int V>
__device__ __forceinline__ void load_packs(MapPacks<V>&, const MapInputs<>&, std::int64_t) {}
template <int V, class T, class... Ts>
__device__ __forceinline__ void load_packs(MapPacks<V, T, Ts...>& r, const MapInputs<T, Ts...>& in, std::int64_t i) {
  r.head = *reinterpret_cast<const Pack<T, V>*>(in.head + i);
  load_packs(r.tail, in.tail, i);
}

// f(element e of every pack).
template <class F, int V, class... Vals>
__device__ __forceinline__ auto apply_lane(const F& f, const MapPacks<V>&, int, Vals... x) {
  return f(x...);
}
template <class F, int V, class T, class... Ts, class... Vals>
__device__ __forceinline__ auto apply_lane(const F& f, const MapPacks<V, T, Ts...>& r, int e, Vals... x) {
  return apply_lane(f, r.tail, e, x..., r.head.v[e]);
}

// f(element i of every input).
template <class F, class... Vals>
__device__ __forceinline__ auto apply_at(const F& f, const MapInputs<>&, std::int64_t, Vals... x) {
  return f(x...);
}
template <class F, class T, class... Ts, class... Vals>
__device__ __forceinline__ auto apply_at(const F& f, const MapInputs<T, Ts...>& in, std::int64_t i, Vals... x) {
  return apply_at(f, in.tail, i, x..., in.head[i]);
}

// y[i] = f(in...[i]) for i in [0, n). Elements [head, head + nvec * V) go as V-wide vectors, the
// rest one by one. y may be one of the inputs (in place): every element is read and written by the
// same thread.
template <int V, int Unroll = kMapUnroll, class F, class TO, class... TI>
__global__ void __launch_bounds__(kBlockThreads)
    map_kernel(std::int64_t n, std::int64_t head, std::int64_t nvec, F f, TO* y, MapInputs<TI...> in) {
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t nthreads = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t base = tid; base < nvec; base += nthreads * Unroll) {
    MapPacks<V, TI...> r[Unroll];
    // All loads first: they are independent, so they are all in flight at once.
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const std::int64_t v = base + u * nthreads;
      if (v < nvec) load_packs(r[u], in, head + v * V);
    }
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const std::int64_t v = base + u * nthreads;
      if (v < nvec) {
        Pack<TO, V> o;
#pragma unroll
        for (int e = 0; e < V; ++e) o.v[e] = static_cast<TO>(apply_lane(f, r[u], e));
        *reinterpret_cast<Pack<TO, V>*>(y + head + v * V) = o;
      }
    }
  }
  for (std::int64_t i = tid; i < head; i += nthreads) y[i] = static_cast<TO>(apply_at(f, in, i));
  for (std::int64_t i = head + nvec * V + tid; i < n; i += nthreads) y[i] = static_cast<TO>(apply_at(f, in, i));
}

// Elements per vector: one 16-byte access of the widest operand.
template <class TO, class... TI>
constexpr int map_width() {
  std::size_t w = sizeof(TO);
  ((w = sizeof(TI) > w ? sizeof(TI) : w), ...);
  return static_cast<int>(16 / w);
}

// Elements before p reaches `bytes` alignment, or -1 when it never does (p not element-aligned).
template <class T>
std::int64_t elements_to_align(const T* p, std::size_t bytes) {
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t gap = (bytes - (a & (bytes - 1))) & (bytes - 1);
  return gap % sizeof(T) == 0 ? static_cast<std::int64_t>(gap / sizeof(T)) : -1;
}

// Where the vector part of a map of n elements starts and how many V-wide vectors it has.
struct MapSplit {
  std::int64_t head;
  std::int64_t nvec;
};

template <int V, class TO, class... TI>
MapSplit map_split(std::int64_t n, const TO* y, const TI*... in) {
  // The vector part starts where y is aligned to a whole vector; the inputs must be aligned there too.
  std::int64_t head = elements_to_align(y, sizeof(TO) * V);
  const bool vec = head >= 0 && head <= n && (is_aligned(in + head, sizeof(TI) * V) && ...);
  if (!vec) head = n;
  return MapSplit{head, (n - head) / V};
}

// Blocks of kBlockThreads that a map of this split asks for before any cap: one per kBlockThreads
// x Unroll vectors (one per kBlockThreads elements when nothing is vectorised).
template <int Unroll>
std::int64_t map_blocks_wanted(std::int64_t n, const MapSplit& s) {
  const std::int64_t work = s.nvec > 0 ? (s.nvec + Unroll - 1) / Unroll : n;
  return (work + kBlockThreads - 1) / kBlockThreads;
}

// y[i] = f(in...[i]) for i in [0, n), asynchronous on `stream`. The grid is at most `waves` times
// the blocks the device keeps resident (the kernel strides over the rest); waves == 0 launches
// every wanted block instead (no striding), which is what porta's built-in maps do.
template <class Api, int Unroll = kMapUnroll, class F, class TO, class... TI>
typename Api::Error launch_map_waves(int waves, typename Api::Stream stream, std::int64_t n, const F& f, TO* y,
                                     const TI*... in) {
  if (n <= 0) return Api::kSuccess;
  constexpr int V = map_width<TO, TI...>();
  static_assert(V >= 1 && (V & (V - 1)) == 0, "map operands must be 1, 2, 4, 8 or 16 bytes wide");
  const MapSplit split = map_split<V>(n, y, in...);
  auto kernel = map_kernel<V, Unroll, F, TO, TI...>;
  std::int64_t cap = kMaxGrid;
  if (waves > 0) {
    std::int64_t resident = 0;
    const typename Api::Error e = resident_grid<Api>(kernel, kBlockThreads, 0, &resident);
    if (e != Api::kSuccess) return e;
    cap = resident * waves;
  }
  // HIP requires gridDim.x * blockDim.x < 2^32; past that the kernel's stride loop covers the rest.
  constexpr std::int64_t kMaxThreadsGrid = ((std::int64_t(1) << 32) - 1) / kBlockThreads;
  const std::int64_t grid =
      clamp_grid(map_blocks_wanted<Unroll>(n, split), cap < kMaxThreadsGrid ? cap : kMaxThreadsGrid);
  return Api::launch(kernel, static_cast<unsigned>(grid), kBlockThreads, 0, stream, n, split.head, split.nvec, f, y,
                     map_inputs(in...));
}

// The built-in maps: the whole array as one grid.
template <class Api, int Unroll = kMapUnroll, class F, class TO, class... TI>
typename Api::Error launch_map(typename Api::Stream stream, std::int64_t n, const F& f, TO* y, const TI*... in) {
  return launch_map_waves<Api, Unroll>(0, stream, n, f, y, in...);
}

// y[i] = f(in...[i]) for the i < n of one thread each: the map of a few elements, which costs
// its launch and the kernel's run. map_kernel's vector loop and strides take 0.2-0.4 us longer to
// run on an H200 for one element than this (an empty kernel launched and waited for: 9.3 us). Only
// user maps take it: every built-in map is instantiated in the plugins, and a second kernel for
// each would lengthen their build for calls that small.
template <class F, class TO, class... TI>
__global__ void __launch_bounds__(kBlockThreads) map_small_kernel(std::int64_t n, F f, TO* y, MapInputs<TI...> in) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = static_cast<TO>(apply_at(f, in, i));
}

// Maps of up to this many elements take map_small_kernel.
inline constexpr std::int64_t kSmallMap = 16 * kBlockThreads;

// User maps (porta::map): small ones one element per thread; larger ones as the built-ins for
// elements up to 4 bytes, and for 8-byte elements, whose user functions tend to be arithmetic-heavy
// (double-precision transcendentals), a resident grid with one vector per step.
template <class Api, class F, class TO, class... TI>
typename Api::Error launch_user_map(typename Api::Stream stream, std::int64_t n, const F& f, TO* y, const TI*... in) {
  if (n <= 0) return Api::kSuccess;
  if (n <= kSmallMap) {
    // Below one block, only as many threads as elements, rounded up to 32 (an NVIDIA warp; on
    // wave64 AMD GPUs half a wavefront, which is still correct): a map of one element is one warp,
    // as a hand-written <<<1, 1>>> launch is.
    const std::int64_t threads = n < kBlockThreads ? (n + 31) / 32 * 32 : kBlockThreads;
    const auto blocks = static_cast<unsigned>((n + threads - 1) / threads);
    return Api::launch(map_small_kernel<F, TO, TI...>, blocks, static_cast<unsigned>(threads), 0, stream, n, f, y,
                       map_inputs(in...));
  }
  if constexpr (map_width<TO, TI...>() >= 4) {
    return launch_map_waves<Api, kMapUnroll>(0, stream, n, f, y, in...);
  } else {
    return launch_map_waves<Api, 1>(1, stream, n, f, y, in...);
  }
}

}  // namespace porta::detail::gpu
