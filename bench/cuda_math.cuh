// SPDX-License-Identifier: Apache-2.0
// porta's own math functions on cuda:0 beside CUDA's libdevice (included by cuda_bench.cu, after its
// helpers; group "math"):
//
//   math_<fn>       y = fn(x) over 2^26 elements (bandwidth-heavy): "porta" is the built-in
//                   operator as users call it (porta::exp(x, y)); "porta_math" and "libdevice" are
//                   the same hand-written CUDA kernel calling porta::math::fn or CUDA's expf/exp/...
//   math_<fn>_x32   y = sum over j < 32 of fn(|x| + j / 16) (compute-heavy: 32 evaluations per
//                   element read), the same kernel with porta::math::fn or libdevice
//
// Bytes are what the kernel reads and writes; the ratio porta_math / libdevice is the cost of the
// same bits on every device. Inputs in [0, 4) (x32: arguments up to 6), where every function is
// finite and on its common path.
#include <porta/math.hpp>

namespace porta_bench_cuda {

enum class MathFn { exp, log, sin, cos, tanh, sigmoid };
constexpr MathFn kMathFns[] = {MathFn::exp, MathFn::log, MathFn::sin, MathFn::cos, MathFn::tanh, MathFn::sigmoid};

inline const char* math_name(MathFn f) {
  switch (f) {
    case MathFn::exp:
      return "exp";
    case MathFn::log:
      return "log";
    case MathFn::sin:
      return "sin";
    case MathFn::cos:
      return "cos";
    case MathFn::tanh:
      return "tanh";
    default:
      return "sigmoid";
  }
}

template <MathFn F, bool Porta, class T>
__device__ __forceinline__ T math_eval(T x) {
  if constexpr (Porta) {
    namespace pm = porta::math;
    if constexpr (F == MathFn::exp) return pm::exp(x);
    if constexpr (F == MathFn::log) return pm::log(x);
    if constexpr (F == MathFn::sin) return pm::sin(x);
    if constexpr (F == MathFn::cos) return pm::cos(x);
    if constexpr (F == MathFn::tanh) return pm::tanh(x);
    if constexpr (F == MathFn::sigmoid) return pm::sigmoid(x);
  } else {
    // libdevice, as a CUDA kernel calls it (expf for float, exp for double: overloads of ::exp).
    if constexpr (F == MathFn::exp) return ::exp(x);
    if constexpr (F == MathFn::log) return ::log(x);
    if constexpr (F == MathFn::sin) return ::sin(x);
    if constexpr (F == MathFn::cos) return ::cos(x);
    if constexpr (F == MathFn::tanh) return ::tanh(x);
    if constexpr (F == MathFn::sigmoid) return T(1) / (T(1) + ::exp(-x));
  }
}

template <MathFn F, bool Porta, int Chain, class T>
__global__ void math_kernel(const T* __restrict__ x, T* __restrict__ y, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    if constexpr (Chain == 1) {
      y[i] = math_eval<F, Porta>(x[i]);
    } else {
      const T a = x[i] < T(0) ? -x[i] : x[i];
      T acc = T(0);
#pragma unroll 4
      for (int j = 0; j < Chain; ++j) acc += math_eval<F, Porta>(a + T(j) * T(0.0625));
      y[i] = acc;
    }
  }
}

template <class T>
struct MathVectors {
  porta::Array<T> x, y;
};

template <class T>
MathVectors<T> make_math_vectors(std::int64_t n) {
  std::vector<T> h(pb::host_random<T>(n, 0), pb::host_random<T>(n, 0) + n);  // [-1, 1)
  for (T& v : h) v = (v + T(1)) * T(2);                                      // [0, 4)
  MathVectors<T> v;
  v.x = porta::Array<T>::from(h.data(), porta::Shape{n}, kGpu, *gpu().porta_stream);
  v.y = porta::full<T>(porta::Shape{n}, T(0), kGpu, *gpu().porta_stream);
  gpu().porta_stream->synchronize();
  return v;
}

template <MathFn F, class T>
void porta_builtin(const porta::Array<T>& x, porta::Array<T>& y) {
  const porta::Stream& s = *gpu().porta_stream;
  if constexpr (F == MathFn::exp) porta::exp(x, y, s);
  if constexpr (F == MathFn::log) porta::log(x, y, s);
  if constexpr (F == MathFn::sin) porta::sin(x, y, s);
  if constexpr (F == MathFn::cos) porta::cos(x, y, s);
  if constexpr (F == MathFn::tanh) porta::tanh(x, y, s);
  if constexpr (F == MathFn::sigmoid) porta::sigmoid(x, y, s);
}

template <MathFn F, int Chain, class T>
void math_case(benchmark::State& st, const std::string& id, const std::string& impl, std::int64_t n) {
  require_porta(st);  // the data lives in porta arrays on every side
  auto& v = pb::tenant<MathVectors<T>>(id, [&] { return make_math_vectors<T>(n); });
  const double bytes = 2.0 * static_cast<double>(n) * sizeof(T);
  const T* x = v.x.data();
  T* y = v.y.data();
  const unsigned blocks = static_cast<unsigned>(std::min<std::int64_t>((n + 255) / 256, 132 * 64));
  int calls = 0;
  if (impl == "porta") {
    calls = event_loop(st, reps_for_bytes(bytes), [&] { porta_builtin<F>(v.x, v.y); });
  } else if (impl == "porta_math") {
    calls = event_loop(st, reps_for_bytes(bytes),
                       [&] { math_kernel<F, true, Chain><<<blocks, 256, 0, gpu().stream>>>(x, y, n); });
  } else {
    calls = event_loop(st, reps_for_bytes(bytes),
                       [&] { math_kernel<F, false, Chain><<<blocks, 256, 0, gpu().stream>>>(x, y, n); });
  }
  PB_CUDA(cudaGetLastError());
  pb::set_bytes(st, bytes * calls);
}

template <MathFn F, class T>
void register_math_fn(std::int64_t n) {
  const char* dt = pb::dtype_name<T>();
  const std::string label = std::string("math_") + math_name(F);
  std::vector<benchmark::internal::Benchmark*> added;
  for (const char* impl : {"porta", "porta_math", "libdevice"})
    added.push_back(
        pb::add(label, dt, impl, n, [im = std::string(impl), n](benchmark::State& st, const std::string& id) {
          math_case<F, 1, T>(st, id, im, n);
        }));
  for (const char* impl : {"porta_math", "libdevice"})
    added.push_back(
        pb::add(label + "_x32", dt, impl, n, [im = std::string(impl), n](benchmark::State& st, const std::string& id) {
          math_case<F, 32, T>(st, id, im, n);
        }));
  for (auto* b : added) b->UseManualTime();
}

template <MathFn F>
void register_math_one() {
  const std::string label = std::string("math_") + math_name(F);
  if (!pb::wanted(label, "math")) return;
  const std::int64_t n = std::int64_t{1} << std::min(26, pb::limits().max_log2);
  register_math_fn<F, float>(n);
  register_math_fn<F, double>(n);
}

void register_math() {
  register_math_one<MathFn::exp>();
  register_math_one<MathFn::log>();
  register_math_one<MathFn::sin>();
  register_math_one<MathFn::cos>();
  register_math_one<MathFn::tanh>();
  register_math_one<MathFn::sigmoid>();
}

}  // namespace porta_bench_cuda
