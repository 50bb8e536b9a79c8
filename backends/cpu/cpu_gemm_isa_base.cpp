// SPDX-License-Identifier: Apache-2.0
// porta's own gemm and gemv kernels built for one instruction set; cpu_gemm.cpp picks the build at run
// time.
#define PORTA_GEMM_ISA base
#define PORTA_GEMM_VECTOR_BYTES 16
#define PORTA_GEMM_FMA 0
#include "cpu_gemm_kernel.inc"
#include "cpu_gemv_kernel.inc"
