// SPDX-License-Identifier: Apache-2.0
// The instruction sets this CPU can run, read once from CPUID, with XGETBV for whether the OS saves
// the AVX and AVX-512 registers (a CPU that has AVX-512 under an OS or hypervisor that does not
// save zmm state cannot use it). The gemm path (cpu_blas.cpp) compares this with the core OpenBLAS
// chose; porta's own gemm kernel picks its build from it.
#pragma once

#include <string>

namespace porta::detail::cpu {

// The x86-64 levels that decide a gemm kernel's speed, weakest first: baseline is SSE2/SSE3 (4
// floats a vector), avx 8 floats without FMA, avx2 8 floats with FMA, avx512 16 floats with FMA.
enum class IsaLevel { baseline, avx, avx2, avx512 };

const char* isa_level_name(IsaLevel level) noexcept;  // "baseline", "avx", "avx2+fma", "avx512"

struct CpuIsa {
  bool x86 = false;    // false elsewhere: level stays baseline and nothing below is read
  std::string vendor;  // "GenuineIntel", "AuthenticAMD", ...
  std::string brand;   // "Intel(R) Xeon(R) Processor"
  int family = 0, model = 0;
  bool os_ymm = false;  // XGETBV: the OS saves the AVX state
  bool os_zmm = false;  // ... and the AVX-512 state
  // Usable: the CPU reports the feature and the OS saves its registers. avx512 is the Skylake-SP
  // set (F, CD, BW, DQ, VL) that OpenBLAS's SkylakeX kernels and porta's AVX-512 build assume.
  bool avx = false, fma = false, avx2 = false, avx512 = false;
  IsaLevel level = IsaLevel::baseline;
  std::string features;  // "sse3 ssse3 sse4.1 sse4.2 avx fma avx2 avx512f ...; OS saves ymm zmm"
};

const CpuIsa& cpu_isa() noexcept;

// The level porta's own gemm and gemv kernels run at: the CPU's, capped by PORTA_CPU_GEMM_ISA
// (base|avx2) for tests and comparisons; there is no build for plain AVX, which runs baseline.
IsaLevel own_kernel_level() noexcept;

}  // namespace porta::detail::cpu
