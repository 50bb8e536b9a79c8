// SPDX-License-Identifier: Apache-2.0
// Peers of the CPU benchmark that live in their own translation units, because their headers are a
// whole-TU switch (Thrust's THRUST_DEVICE_SYSTEM) or need their own flags (Kokkos). cpu_bench.cpp
// calls them case by case so that every implementation of one case runs next to the others. Each
// returns the registered benchmark (nullptr for an op it does not cover) for the caller to configure;
// `label` is the op name to register under ("sum", or "latency_sum" for the small-call timings).
#pragma once

#include <cstdint>
#include <string>

#include "common.hpp"

namespace porta_bench {

#if defined(PORTA_BENCH_HAVE_THRUST)
// "thrust-omp": Thrust with THRUST_DEVICE_SYSTEM_OMP (device_vector in host memory, OpenMP loops).
benchmark::internal::Benchmark* thrust_omp_register(Op op, bool f64, std::int64_t n, const std::string& label);
std::string thrust_omp_version();
#endif

#if defined(PORTA_BENCH_HAVE_KOKKOS)
// "kokkos": Kokkos::View and parallel_for / parallel_reduce on the default execution space.
void kokkos_initialize(int* argc, char** argv);
void kokkos_finalize();
benchmark::internal::Benchmark* kokkos_register(Op op, bool f64, std::int64_t n, const std::string& label);
std::string kokkos_description();
#endif

}  // namespace porta_bench
