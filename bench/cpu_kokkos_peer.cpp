// SPDX-License-Identifier: Apache-2.0
// Peer "kokkos": what a Kokkos user writes for the same maps and reductions, on Kokkos' default
// execution space (OpenMP or Threads: bench/CMakeLists.txt leaves a serial-only Kokkos out, since it
// would compare porta's threads with one core).
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

#include "common.hpp"
#include "cpu_peers.hpp"

namespace porta_bench {
namespace {

template <class T>
struct KokkosVectors {
  Kokkos::View<T*> x, y, out;
};

template <class T>
Kokkos::View<T*> kokkos_view_of(const char* label, const T* host, std::int64_t n) {
  Kokkos::View<T*> v(std::string(label), static_cast<std::size_t>(n));  // zero-filled in parallel: first touch
  if (host) {
    Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(host,
                                                                                         static_cast<std::size_t>(n));
    Kokkos::deep_copy(v, h);
  }
  return v;
}

template <class T>
KokkosVectors<T> make_kokkos_vectors(Op op, std::int64_t n) {
  KokkosVectors<T> v;
  if (inputs_of(op) >= 1) v.x = kokkos_view_of("x", host_random<T>(n, 0), n);
  if (inputs_of(op) >= 2) v.y = kokkos_view_of("y", host_random<T>(n, 1), n);
  if (has_output(op)) v.out = kokkos_view_of<T>("out", nullptr, n);
  return v;
}

template <class T>
void kokkos_vector(benchmark::State& st, const std::string& id, Op op, std::int64_t n) {
  auto& v = tenant<KokkosVectors<T>>(id, [&] { return make_kokkos_vectors<T>(op, n); });
  // Views are captured by value (reference-counted handles), as in any Kokkos code.
  const Kokkos::View<T*> x = v.x, y = v.y, out = v.out;
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
    return add(label, dtype_name<double>(), "kokkos", n,
               [op, n](benchmark::State& st, const std::string& id) { kokkos_vector<double>(st, id, op, n); });
  }
  return add(label, dtype_name<float>(), "kokkos", n,
             [op, n](benchmark::State& st, const std::string& id) { kokkos_vector<float>(st, id, op, n); });
}

std::string kokkos_description() {
  return std::to_string(KOKKOS_VERSION) + " on " + Kokkos::DefaultExecutionSpace::name() + " (" +
         std::to_string(Kokkos::DefaultExecutionSpace().concurrency()) + " threads)";
}

}  // namespace porta_bench
