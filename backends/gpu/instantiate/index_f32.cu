// SPDX-License-Identifier: Apache-2.0
// IndexKernels<NativeApi, float>: strided copies, comparisons, where, take and scatter for one dtype.
#include "backends/gpu/index_kernels.cuh"

template struct porta::detail::gpu::IndexKernels<porta::detail::gpu::NativeApi, float>;
