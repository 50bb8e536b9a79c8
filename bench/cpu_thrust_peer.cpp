// SPDX-License-Identifier: Apache-2.0
// Peer "thrust-omp": Thrust compiled by the plain C++ compiler with THRUST_DEVICE_SYSTEM_OMP (set on
// this file by bench/CMakeLists.txt), so every algorithm is an OpenMP loop. This is what a Thrust
// user gets on a CPU-only build. The algorithms run with thrust::omp::par on the same kind of
// buffers as every other CPU implementation (host_buffer.hpp) rather than on a device_vector, whose
// allocator would hand out 4 KiB pages and turn the comparison into one of page sizes.
#include <thrust/copy.h>
#include <thrust/fill.h>
#include <thrust/functional.h>
#include <thrust/inner_product.h>
#include <thrust/reduce.h>
#include <thrust/system/omp/execution_policy.h>
#include <thrust/transform.h>
#include <thrust/version.h>

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "common.hpp"
#include "cpu_peers.hpp"
#include "host_buffer.hpp"

#if THRUST_DEVICE_SYSTEM != THRUST_DEVICE_SYSTEM_OMP
#error "cpu_thrust_peer.cpp must be compiled with -DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_OMP"
#endif

namespace porta_bench {
namespace {

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
  auto& v = tenant<HostVectors<T>>(id, [&] { return make_host_vectors<T>(op, n); });
  const auto par = thrust::omp::par;
  T* x = v.x.get();
  T* y = v.y.get();
  T* out = v.out.get();
  T alpha = kAlpha<T>;
  switch (op) {
    case Op::copy:
      for (auto _ : st) thrust::copy(par, x, x + n, out);
      break;
    case Op::scale:
      for (auto _ : st) thrust::transform(par, x, x + n, out, Scale<T>{alpha});
      break;
    case Op::axpy:
      for (auto _ : st) {
        thrust::transform(par, x, x + n, y, y, Axpy<T>{alpha});
        alpha = -alpha;
      }
      break;
    case Op::fourop:
      for (auto _ : st) thrust::transform(par, x, x + n, y, out, FourOp<T>{});
      break;
    case Op::add:
      for (auto _ : st) thrust::transform(par, x, x + n, y, out, thrust::plus<T>());
      break;
    case Op::fill:
      for (auto _ : st) thrust::fill(par, out, out + n, alpha);
      break;
    case Op::sum:
      for (auto _ : st) {
        T r = thrust::reduce(par, x, x + n, T(0));
        benchmark::DoNotOptimize(r);
      }
      break;
    case Op::dot:
      for (auto _ : st) {
        T r = thrust::inner_product(par, x, x + n, y, T(0));
        benchmark::DoNotOptimize(r);
      }
      break;
    case Op::max:
      for (auto _ : st) {
        T r = thrust::reduce(par, x, x + n, std::numeric_limits<T>::lowest(), thrust::maximum<T>());
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
