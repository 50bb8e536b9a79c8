// SPDX-License-Identifier: Apache-2.0
// SortKernels<NativeApi, float>: sort (CUB / rocPRIM) and argmax / argmin, one dtype per file (the vendor's
// radix sort is the slowest template in the plugin to compile).
#include "backends/gpu/sort_kernels.cuh"

template struct porta::detail::gpu::SortKernels<porta::detail::gpu::NativeApi, float>;
