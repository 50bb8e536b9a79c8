// SPDX-License-Identifier: Apache-2.0
// Peer "thrust-omp": Thrust compiled by the plain C++ compiler with THRUST_DEVICE_SYSTEM_OMP (set on
// this file by bench/CMakeLists.txt), so thrust::device_vector lives in host memory and every
// algorithm is an OpenMP loop. This is what a Thrust user gets on a CPU-only build.
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/fill.h>
#include <thrust/functional.h>
#include <thrust/inner_product.h>
#include <thrust/reduce.h>
#include <thrust/transform.h>
#include <thrust/version.h>

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "common.hpp"
#include "cpu_peers.hpp"

#if THRUST_DEVICE_SYSTEM != THRUST_DEVICE_SYSTEM_OMP
#error "cpu_thrust_peer.cpp must be compiled with -DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_OMP"
#endif

namespace porta_bench {
namespace {

template <class T>
struct ThrustVectors {
  thrust::device_vector<T> x, y, out;
};

template <class T>
ThrustVectors<T> make_thrust_vectors(Op op, std::int64_t n) {
  ThrustVectors<T> v;
  const auto count = static_cast<std::size_t>(n);
  if (inputs_of(op) >= 1) {
    const T* h = host_random<T>(n, 0);
    v.x.assign(h, h + count);
  }
  if (inputs_of(op) >= 2) {
    const T* h = host_random<T>(n, 1);
    v.y.assign(h, h + count);
  }
  if (has_output(op)) v.out.resize(count, T(0));
  return v;
}

template <class T>
struct Scale {
  T a;
  T operator()(T x) const { return a * x; }
};
template <class T>
struct Axpy {
  T a;
  T operator()(T x, T y) const { return a * x + y; }
};

template <class T>
void thrust_vector(benchmark::State& st, const std::string& id, Op op, std::int64_t n) {
  auto& v = tenant<ThrustVectors<T>>(id, [&] { return make_thrust_vectors<T>(op, n); });
  T alpha = kAlpha<T>;
  switch (op) {
    case Op::copy:
      for (auto _ : st) thrust::copy(v.x.begin(), v.x.end(), v.out.begin());
      break;
    case Op::scale:
      for (auto _ : st) thrust::transform(v.x.begin(), v.x.end(), v.out.begin(), Scale<T>{alpha});
      break;
    case Op::axpy:
      for (auto _ : st) {
        thrust::transform(v.x.begin(), v.x.end(), v.y.begin(), v.y.begin(), Axpy<T>{alpha});
        alpha = -alpha;
      }
      break;
    case Op::fourop:
      for (auto _ : st) thrust::transform(v.x.begin(), v.x.end(), v.y.begin(), v.out.begin(), FourOp<T>{});
      break;
    case Op::add:
      for (auto _ : st) thrust::transform(v.x.begin(), v.x.end(), v.y.begin(), v.out.begin(), thrust::plus<T>());
      break;
    case Op::fill:
      for (auto _ : st) thrust::fill(v.out.begin(), v.out.end(), alpha);
      break;
    case Op::sum:
      for (auto _ : st) {
        T r = thrust::reduce(v.x.begin(), v.x.end(), T(0));
        benchmark::DoNotOptimize(r);
      }
      break;
    case Op::dot:
      for (auto _ : st) {
        T r = thrust::inner_product(v.x.begin(), v.x.end(), v.y.begin(), T(0));
        benchmark::DoNotOptimize(r);
      }
      break;
    case Op::max:
      for (auto _ : st) {
        T r = thrust::reduce(v.x.begin(), v.x.end(), std::numeric_limits<T>::lowest(), thrust::maximum<T>());
        benchmark::DoNotOptimize(r);
      }
      break;
  }
  benchmark::ClobberMemory();
  set_bytes(st, static_cast<double>(words_moved(op)) * static_cast<double>(n) * sizeof(T));
}

}  // namespace

benchmark::internal::Benchmark* thrust_omp_register(Op op, bool f64, std::int64_t n, const std::string& label) {
  if (f64) {
    return add(label, dtype_name<double>(), "thrust-omp", n,
               [op, n](benchmark::State& st, const std::string& id) { thrust_vector<double>(st, id, op, n); });
  }
  return add(label, dtype_name<float>(), "thrust-omp", n,
             [op, n](benchmark::State& st, const std::string& id) { thrust_vector<float>(st, id, op, n); });
}

std::string thrust_omp_version() {
  return std::to_string(THRUST_MAJOR_VERSION) + "." + std::to_string(THRUST_MINOR_VERSION) + "." +
         std::to_string(THRUST_SUBMINOR_VERSION) + " (OpenMP device system)";
}

}  // namespace porta_bench
