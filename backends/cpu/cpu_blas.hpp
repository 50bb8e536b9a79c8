// SPDX-License-Identifier: Apache-2.0
// The BLAS that libporta was linked with, as found at run time: its threading (which decides how
// cpu_gemm.cpp calls it), the core OpenBLAS runs, and whether float and double gemm go to it or to
// porta's own kernel, with the reason (porta-info prints it).
#pragma once

#include <cstddef>
#include <string>

#include "cpu_isa.hpp"

#if defined(PORTA_HAVE_BLAS)
extern "C" {
// Fortran BLAS with 32-bit integers (LP64), the ABI of Debian's libblas3/libopenblas0. The two
// trailing arguments are the hidden lengths of the character arguments.
void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c, const int* ldc,
            std::size_t transa_len, std::size_t transb_len);
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc, std::size_t transa_len, std::size_t transb_len);
// Complex gemm: the Fortran COMPLEX / COMPLEX*16 arrays are interleaved (re, im) pairs, the layout
// of porta::complex<float> / <double>; declared on the part type, the element is two of them.
void cgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c, const int* ldc,
            std::size_t transa_len, std::size_t transb_len);
void zgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc, std::size_t transa_len, std::size_t transb_len);
}
#endif

namespace porta::detail::cpu {

// How the BLAS threads, and so how cpu_gemm.cpp calls it.
enum class BlasThreads { unknown, sequential, pthreads, openmp };

struct BlasRuntime {
  BlasThreads kind = BlasThreads::unknown;
  void (*set)(int) = nullptr;  // openblas_set_num_threads
  int (*get)() = nullptr;      // openblas_get_num_threads
};

const BlasRuntime& blas_runtime() noexcept;

// The path of the float and double gemm shapes that are not matrix-vector (those always take
// porta's gemv kernel), before the per-call rules of cpu_gemm.cpp (sizes past 32 bits, a caller's
// parallel region, a sequential BLAS on a large call).
enum class GemmPath { blas, own };

struct GemmChoice {
  GemmPath path = GemmPath::own;
  IsaLevel own_level = IsaLevel::baseline;  // porta's kernel build
  bool openblas = false;                    // the BLAS exports openblas_get_corename
  std::string core;                         // OpenBLAS's core now ("SkylakeX"); empty if not OpenBLAS
  std::string core_at_load;                 // the core it chose when it was loaded
  bool core_reselected = false;             // porta switched OpenBLAS to `core` (see cpu_blas.cpp)
  bool coretype_env = false;                // OPENBLAS_CORETYPE is set in the environment
  std::string coretype;                     // its value
  std::string f32, f64;                     // "OpenBLAS (SkylakeX)", "porta kernel (avx512)", ...
  std::string reason;                       // why, in one sentence
};

const GemmChoice& gemm_choice() noexcept;

// The instruction-set level of an OpenBLAS x86-64 core, by the name openblas_get_corename()
// returns ("Prescott": baseline, "SkylakeX": avx512); false for a name it does not list (another
// architecture, a core newer than its table), which porta takes to match the CPU.
bool openblas_core_level(const std::string& core, IsaLevel& level) noexcept;

}  // namespace porta::detail::cpu
