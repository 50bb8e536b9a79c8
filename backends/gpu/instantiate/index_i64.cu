// SPDX-License-Identifier: Apache-2.0
// IndexKernels<NativeApi, std::int64_t>: strided copies, comparisons, where, take and scatter for one dtype.
#include "backends/gpu/index_kernels.cuh"

template struct porta::detail::gpu::IndexKernels<porta::detail::gpu::NativeApi, std::int64_t>;
