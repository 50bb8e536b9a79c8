// SPDX-License-Identifier: Apache-2.0
// Peer "kokkos": what a Kokkos user writes for the same maps and reductions, on Kokkos' default
// execution space. A Kokkos built for the Serial backend alone (Debian's) runs on one core and is
// named "kokkos-serial" (bench/CMakeLists.txt), so that no table mistakes it for the parallel one.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

#include "common.hpp"
#include "cpu_peers.hpp"
#include "host_buffer.hpp"

#if !defined(PORTA_BENCH_KOKKOS_NAME)
#define PORTA_BENCH_KOKKOS_NAME "kokkos"
#endif

namespace porta_bench {
namespace {

// Unmanaged views over the same kind of buffers as every other CPU implementation (host_buffer.hpp),
// so that page size and first touch do not differ between them.
template <class T>
using HostView = Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

template <class T>
void kokkos_vector(benchmark::State& st, const std::string& id, Op op, std::int64_t n) {
  auto& v = tenant<HostVectors<T>>(id, [&] { return make_host_vectors<T>(op, n); });
  // Views are captured by value, as in any Kokkos code.
  const auto count = static_cast<std::size_t>(n);
  const HostView<T> x(v.x.get(), v.x.get() ? count : 0), y(v.y.get(), v.y.get() ? count : 0),
      out(v.out.get(), v.out.get() ? count : 0);
  const auto range = Kokkos::RangePolicy<Kokkos::IndexType<std::int64_t>>(0, n);
  T alpha = kAlpha<T>;
  switch (op) {
    case Op::copy:
      for (auto _ : st) {
        Kokkos::parallel_for(
            "copy", range, KOKKOS_LAMBDA(std::int64_t i) { out(i) = x(i); });
        Kokkos::fence();
      }
      break;
    case Op::scale:
      for (auto _ : st) {
        Kokkos::parallel_for(
            "scale", range, KOKKOS_LAMBDA(std::int64_t i) { out(i) = alpha * x(i); });
        Kokkos::fence();
      }
      break;
    case Op::axpy:
      for (auto _ : st) {
        Kokkos::parallel_for(
            "axpy", range, KOKKOS_LAMBDA(std::int64_t i) { y(i) = alpha * x(i) + y(i); });
        Kokkos::fence();
        alpha = -alpha;
      }
      break;
    case Op::fourop:
      for (auto _ : st) {
        Kokkos::parallel_for(
            "fourop", range, KOKKOS_LAMBDA(std::int64_t i) { out(i) = FourOp<T>{}(x(i), y(i)); });
        Kokkos::fence();
      }
      break;
    case Op::add:
      for (auto _ : st) {
        Kokkos::parallel_for(
            "add", range, KOKKOS_LAMBDA(std::int64_t i) { out(i) = x(i) + y(i); });
        Kokkos::fence();
      }
      break;
    case Op::fill:
      for (auto _ : st) {
        Kokkos::parallel_for(
            "fill", range, KOKKOS_LAMBDA(std::int64_t i) { out(i) = alpha; });
        Kokkos::fence();
      }
      break;
    case Op::sum:
      for (auto _ : st) {
        T r = 0;
        Kokkos::parallel_reduce(
            "sum", range, KOKKOS_LAMBDA(std::int64_t i, T & s) { s += x(i); }, r);
        benchmark::DoNotOptimize(r);
      }
      break;
    case Op::dot:
      for (auto _ : st) {
        T r = 0;
        Kokkos::parallel_reduce(
            "dot", range, KOKKOS_LAMBDA(std::int64_t i, T & s) { s += x(i) * y(i); }, r);
        benchmark::DoNotOptimize(r);
      }
      break;
    case Op::max:
      for (auto _ : st) {
        T r = 0;
        Kokkos::parallel_reduce(
            "max", range, KOKKOS_LAMBDA(std::int64_t i, T & m) { m = x(i) > m ? x(i) : m; }, Kokkos::Max<T>(r));
        benchmark::DoNotOptimize(r);
      }
      break;
  }
  benchmark::ClobberMemory();
  set_bytes(st, static_cast<double>(words_moved(op)) * static_cast<double>(n) * sizeof(T));
}

}  // namespace

void kokkos_initialize(int* argc, char** argv) {
  Kokkos::initialize(*argc, argv);
}
void kokkos_finalize() {
  Kokkos::finalize();
}

benchmark::internal::Benchmark* kokkos_register(Op op, bool f64, std::int64_t n, const std::string& label) {
  if (f64) {
    return add(label, dtype_name<double>(), PORTA_BENCH_KOKKOS_NAME, n,
               [op, n](benchmark::State& st, const std::string& id) { kokkos_vector<double>(st, id, op, n); });
  }
  return add(label, dtype_name<float>(), PORTA_BENCH_KOKKOS_NAME, n,
             [op, n](benchmark::State& st, const std::string& id) { kokkos_vector<float>(st, id, op, n); });
}

std::string kokkos_description() {
  return std::to_string(KOKKOS_VERSION) + " on " + Kokkos::DefaultExecutionSpace::name() + " (" +
         std::to_string(Kokkos::DefaultExecutionSpace().concurrency()) + " threads)";
}

}  // namespace porta_bench
