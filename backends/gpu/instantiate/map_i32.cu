// SPDX-License-Identifier: Apache-2.0
// MapKernels<NativeApi, std::int32_t>: one dtype per file, for the vendor of the compiler that builds it (nvcc for
// libporta_cuda.so; the HIP plugin compiles the same file with LANGUAGE HIP).
#include "backends/gpu/map_kernels.cuh"

template struct porta::detail::gpu::MapKernels<porta::detail::gpu::NativeApi, std::int32_t>;
