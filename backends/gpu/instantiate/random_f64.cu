// SPDX-License-Identifier: Apache-2.0
// RandomKernels<NativeApi, double>: one dtype per file, for the vendor of the compiler that builds it (nvcc for
// libporta_cuda.so; the HIP plugin compiles the same file with LANGUAGE HIP).
#include "backends/gpu/random_kernels.cuh"

template struct porta::detail::gpu::RandomKernels<porta::detail::gpu::NativeApi, double>;
