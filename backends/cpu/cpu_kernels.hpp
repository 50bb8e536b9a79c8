// SPDX-License-Identifier: Apache-2.0
// The CPU backend's table entries, with the signatures of their porta_backend_v1 slots.
// Every call runs to completion on the calling thread (and its OpenMP team) before it returns, so
// the stream arguments are accepted and ignored.
#pragma once

#include <cstddef>
#include <cstdint>

#include "porta/abi/backend_v1.h"

namespace porta::detail::cpu {

// Every entry after device_count, declared from the one list: the memory, stream and event
// entries are defined in cpu_backend.cpp (host_alloc and host_free in cpu_memory.cpp), the maps
// in cpu_maps.cpp, reductions in cpu_reduce.cpp, gemm in cpu_gemm.cpp.
#define PORTA_ABI_ENTRY(name, params, args) porta_status name params noexcept;
#include "porta/abi/backend_v1_entries.inc"
#undef PORTA_ABI_ENTRY

// "OpenBLAS 0.3.21 ... (pthread threads) in /usr/lib/.../libopenblas.so.0", or why there is none.
const char* blas_description() noexcept;
// The instruction set porta's own gemm kernel runs with on this CPU: "avx512", "avx2", "baseline".
const char* gemm_kernel_isa() noexcept;
// The instruction set of the FFT engine build this CPU runs (cpu_fft.cpp).
const char* fft_engine_isa() noexcept;

}  // namespace porta::detail::cpu
