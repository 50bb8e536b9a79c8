// SPDX-License-Identifier: Apache-2.0
// Fused expressions (porta/fuse.hpp) beside the eager operators and a hand-written pass:
// the computations both binaries share, and the CPU registration hook (cpu_fused.cpp; the CUDA
// binary's cases are in cuda_fused.cuh).
//
//   fused_chain/<dtype>/<impl>/<n>   sin(x) * cos(y) + x * y (the chain; bytes: 3 words)
//   fused_bs/<dtype>/<impl>/<n>      Black-Scholes call prices from spot, strike, years (bytes: 4 words)
//
//   porta        the fused expression, written in a plain C++ way (the expression is built on the
//                host; no GPU compiler builds the calling file): on the GPU a kernel generated for
//                it at run time (algorithms/fuse_jit.cpp; compiled once, in the warm-up), on the CPU
//                the backend's interpreter (map_program). fused_bs evaluates d1 into an array
//                first (both CDFs read it), then the price: two passes
//   porta_interp (CUDA) the same with PORTA_FUSE=interpret: the plugin's precompiled interpreter
//   porta_jit    (CPU) the same with PORTA_FUSE=jit: a kernel generated for it and compiled by the
//                host compiler (once, before the timing; skipped where no compiler runs)
//   porta_eager  the same formula with porta's eager operators (a pass and a temporary per op)
//   porta_map    (CUDA) porta::map of the formula as a lambda in this nvcc-compiled file: the
//                one-pass kernel the fused expression is held against (the target: within 1.15x on
//                the chain at 2^28)
//   porta_map_exact  (CUDA) the same porta::map built with -fmad=false (cuda_fused_exact.cu): the
//                one-pass kernel with the eager bits, which the fused expression also gives; checked
//                bit for bit against the eager chain before it is timed
//   openmp       (CPU) the formula in an OpenMP loop
//
// Group for PORTA_BENCH_OPS: "fused".
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "common.hpp"

// The formula templates below serve porta arrays and expressions (host only) and plain scalars
// (host and device, inside porta::map): nvcc's check of host calls from __host__ __device__ code is
// off for them, as for CCCL's templates of the same kind.
#if defined(__CUDACC__)
#define PB_NO_HD_CHECK _Pragma("nv_exec_check_disable")
#else
#define PB_NO_HD_CHECK
#endif

namespace porta_bench {

// The Black-Scholes inputs' ranges, from host_random's [-1, 1): spot and strike in [10, 100), years
// in [0.25, 2); rate and volatility fixed.
template <class T>
PB_HOST_DEVICE T bs_spot(T u) {
  return T(55) + T(45) * u;
}
template <class T>
PB_HOST_DEVICE T bs_years(T u) {
  return T(1.125) + T(0.875) * u;
}
inline constexpr double kBsRate = 0.02, kBsVol = 0.3;

// The normal CDF (tanh approximation) and the call price, for scalars, arrays and expressions alike.
PB_NO_HD_CHECK
template <class S, class X>
PB_HOST_DEVICE auto bs_cdf(const X& d) {
  using std::tanh;
  return S(0.5) * (S(1) + tanh(S(0.7978845608) * (d + S(0.044715) * d * d * d)));
}
PB_NO_HD_CHECK
template <class S, class X>
PB_HOST_DEVICE auto bs_d1(const X& s, const X& k, const X& t) {
  using std::log;
  using std::sqrt;
  const S r = S(kBsRate), v = S(kBsVol);
  return (log(s / k) + (r + S(0.5) * v * v) * t) / (v * sqrt(t));
}
PB_NO_HD_CHECK
template <class S, class X, class D>
PB_HOST_DEVICE auto bs_price(const X& s, const X& k, const X& t, const D& d1) {
  using std::exp;
  using std::sqrt;
  const S r = S(kBsRate), v = S(kBsVol);
  return s * bs_cdf<S>(d1) - k * exp(-r * t) * bs_cdf<S>(d1 - v * sqrt(t));
}
template <class T>
PB_HOST_DEVICE T bs_call(T s, T k, T t) {
  return bs_price<T>(s, k, t, bs_d1<T>(s, k, t));
}

// PORTA_FUSE for one case (algorithms/fuse_jit.cpp reads it at every evaluation); nullptr: unchanged.
struct FuseModeScope {
  bool on;
  explicit FuseModeScope(const char* mode) : on(mode != nullptr) {
    if (on) setenv("PORTA_FUSE", mode, 1);
  }
  ~FuseModeScope() {
    if (on) unsetenv("PORTA_FUSE");
  }
  FuseModeScope(const FuseModeScope&) = delete;
  FuseModeScope& operator=(const FuseModeScope&) = delete;
};

// The sizes of the fused cases: the vector sizes from 2^20 (the target range is 2^20 .. 2^28), or the
// largest one when a run stops below that (the smoke run).
inline std::vector<std::int64_t> fused_sizes() {
  std::vector<std::int64_t> all = vector_sizes(), s;
  for (std::int64_t n : all)
    if (n >= (std::int64_t{1} << 20) || n == all.back()) s.push_back(n);
  return s;
}

void register_cpu_fused();

}  // namespace porta_bench
