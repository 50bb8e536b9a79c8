// SPDX-License-Identifier: Apache-2.0
// The user-kernel benchmarks on the CPU, compiled by nvcc (built when the CUDA backend is): the same
// cases as kernels_cpu.cpp, under op names ending in _nvcc. Here PORTA_LAMBDA is an extended
// __host__ __device__ lambda, which nvcc's host code calls through a function pointer; the
// functor variant of each case shows what that costs.
#define PB_KERNELS_NS porta_bench_kernels_nvcc
#define PB_KERNELS_SUFFIX "_nvcc"
#include "kernels_cpu.hpp"

void porta_bench::register_cpu_kernels_nvcc() {
  porta_bench_kernels_nvcc::register_all();
}
