// SPDX-License-Identifier: Apache-2.0
// The user-kernel benchmarks on the CPU, compiled as plain C++ (kernels_cpu.hpp says what runs).
#define PB_KERNELS_NS porta_bench_kernels_cxx
#define PB_KERNELS_SUFFIX ""
#include "kernels_cpu.hpp"

void porta_bench::register_cpu_kernels_cxx() {
  porta_bench_kernels_cxx::register_all();
}
