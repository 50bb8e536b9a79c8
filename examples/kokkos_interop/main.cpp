// SPDX-License-Identifier: Apache-2.0
// A Kokkos program that hands its Views to porta and reads porta's results back as Views, without
// copying either way (porta/kokkos.hpp, docs/interop.md): Kokkos fills the data with parallel_for,
// porta reduces, multiplies and sorts it, Kokkos reads the results with parallel_reduce. Each
// result is checked against the host.
//
//   ./kokkos_interop                 # n = 100000 elements, 64 x 64 matrices
//   ./kokkos_interop 1000000 256
//
// With a Serial or OpenMP Kokkos (Debian's libtrilinos-kokkos-dev is Serial) the Views live in
// Kokkos::HostSpace and porta works on its CPU device; with a CUDA or HIP Kokkos, Views of
// CudaSpace or HIPSpace go to cuda:N or hip:N the same way.
#include <Kokkos_Core.hpp>
#include <porta/kokkos.hpp>
#include <porta/porta.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common/check.hpp"

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Space = Exec::memory_space;
using Index = Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>;

void run(std::int64_t n, std::int64_t m) {
  using example::expect;
  // ---- Kokkos writes the inputs -------------------------------------------------------------
  Kokkos::View<double*, Kokkos::LayoutRight, Space> x("x", n);
  Kokkos::parallel_for(
      "fill x", Index(0, n), KOKKOS_LAMBDA(std::int64_t i) { x(i) = 1.0 / static_cast<double>(i + 1); });
  Kokkos::View<double**, Kokkos::LayoutRight, Space> a("a", m, m), b("b", m, m);
  Kokkos::parallel_for(
      "fill a, b", Index(0, m * m), KOKKOS_LAMBDA(std::int64_t k) {
        const std::int64_t i = k / m, j = k % m;
        a(i, j) = 1.0 / static_cast<double>(i + j + 1);  // Hilbert
        b(i, j) = i == j ? 2.0 : 0.0;                    // 2 I
      });
  // Keys from a linear congruential generator, the same on every backend.
  Kokkos::View<float*, Kokkos::LayoutRight, Space> keys("keys", n);
  Kokkos::parallel_for(
      "fill keys", Index(0, n), KOKKOS_LAMBDA(std::int64_t i) {
        const std::uint32_t h = static_cast<std::uint32_t>(i) * 1664525u + 1013904223u;
        keys(i) = static_cast<float>(h >> 8) / 16777216.0f;
      });
  Kokkos::fence();  // Kokkos' writes land before porta reads them

  // ---- porta reads them in place --------------------------------------------------------------
  const porta::Array<double> px = porta::from_kokkos(x);  // no copy; holds x's allocation
  const porta::Device dev = px.device();
  std::printf("Kokkos %s (memory %s), porta on %s\n", Exec::name(), Space::name(), dev.to_string().c_str());
  const double s = porta::sum(px);
  const porta::Array<double> c =
      porta::matmul(porta::from_kokkos(a), porta::from_kokkos(b),
                    porta::MatmulOptions{porta::Precision::highest, porta::GemmAlgorithm::own});  // same bits anywhere
  const porta::Array<float> sorted = porta::sort(porta::from_kokkos(keys));
  porta::synchronize(dev);  // porta's writes land before Kokkos reads them

  // ---- Kokkos reads porta's results as unmanaged Views (c and sorted must outlive them) ------
  const auto kc = porta::to_kokkos<2, Space>(c);
  const auto ks = porta::to_kokkos<1, Space>(sorted);
  double trace = 0;
  Kokkos::parallel_reduce(
      "trace", Index(0, m), KOKKOS_LAMBDA(std::int64_t i, double& t) { t += kc(i, i); }, trace);
  std::int64_t unordered = 0;
  Kokkos::parallel_reduce(
      "order", Index(1, n), KOKKOS_LAMBDA(std::int64_t i, std::int64_t & bad) { bad += ks(i - 1) > ks(i) ? 1 : 0; },
      unordered);
  Kokkos::fence();

  // ---- checks against the host --------------------------------------------------------------
  double harmonic = 0, htrace = 0;
  for (std::int64_t i = n; i >= 1; --i) harmonic += 1.0 / static_cast<double>(i);
  for (std::int64_t i = 0; i < m; ++i) htrace += 2.0 / static_cast<double>(2 * i + 1);
  std::printf("  sum of 1/i, i <= %lld:   %.15f (host %.15f)\n", static_cast<long long>(n), s, harmonic);
  std::printf("  trace(A * 2I), %lld x %lld: %.15f (host %.15f)\n", static_cast<long long>(m),
              static_cast<long long>(m), trace, htrace);
  std::printf("  sorted keys: %lld out of order, first %.6f, last %.6f\n", static_cast<long long>(unordered),
              static_cast<double>(sorted.item(0)), static_cast<double>(sorted.item(n - 1)));
  expect(std::fabs(s - harmonic) <= 1e-12 * harmonic, "porta::sum of a View written by Kokkos");
  // Each element of A * 2I is one exact doubling: the trace is the host's up to its own sum.
  expect(std::fabs(trace - htrace) <= 1e-13 * htrace, "trace of porta::matmul read by Kokkos");
  expect(unordered == 0, "porta::sort's result read by Kokkos is ascending");
  std::vector<float> hk(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint32_t h = static_cast<std::uint32_t>(i) * 1664525u + 1013904223u;
    hk[static_cast<std::size_t>(i)] = static_cast<float>(h >> 8) / 16777216.0f;
  }
  double key_sum = 0, sorted_sum = 0;
  for (float k : hk) key_sum += k;
  for (float k : sorted.to_vector()) sorted_sum += k;
  expect(key_sum == sorted_sum, "porta::sort kept every key");
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);  // every View and every porta Array of one is gone before it ends
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 100000;
  const std::int64_t m = argc > 2 ? std::atoll(argv[2]) : 64;
  if (n < 2 || m < 1) {
    std::fprintf(stderr, "usage: kokkos_interop [n >= 2] [m >= 1]\n");
    return 2;
  }
  run(n, m);
  return example::summary();
}
