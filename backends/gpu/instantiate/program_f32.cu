// SPDX-License-Identifier: Apache-2.0
// ProgramKernels<NativeApi, float> (fused expressions, issue 16): one dtype per file, for the vendor of the
// compiler that builds it, with -fmad=false (the bits of the eager ops).
#include "backends/gpu/program_kernels.cuh"

template struct porta::detail::gpu::ProgramKernels<porta::detail::gpu::NativeApi, float>;
