// SPDX-License-Identifier: Apache-2.0
// The CPU backend's algorithm entries, with the signatures of their porta_backend_v1 slots.
// Every call runs to completion on the calling thread (and its OpenMP team) before it returns, so
// the stream arguments are accepted and ignored.
#pragma once

#include <cstdint>

#include "porta/abi/backend_v1.h"

namespace porta::detail::cpu {

// cpu_maps.cpp
porta_status fill(int dev, porta_dtype dt, std::int64_t n, porta_scalar value, void* y, porta_stream s) noexcept;
porta_status iota(int dev, porta_dtype dt, std::int64_t n, porta_scalar start, porta_scalar step, void* y,
                  porta_stream s) noexcept;
porta_status cast(int dev, porta_dtype from, porta_dtype to, std::int64_t n, const void* x, void* y,
                  porta_stream s) noexcept;
porta_status unary(int dev, porta_unary_op op, porta_dtype dt, std::int64_t n, const void* x, void* y,
                   porta_stream s) noexcept;
porta_status binary(int dev, porta_binary_op op, porta_dtype dt, std::int64_t rows, std::int64_t cols, const void* a,
                    std::int64_t a_rs, std::int64_t a_cs, const void* b, std::int64_t b_rs, std::int64_t b_cs, void* y,
                    porta_stream s) noexcept;
porta_status binary_scalar(int dev, porta_binary_op op, porta_dtype dt, std::int64_t n, const void* x,
                           porta_scalar value, int scalar_first, void* y, porta_stream s) noexcept;
porta_status axpy(int dev, porta_dtype dt, std::int64_t n, porta_scalar alpha, const void* x, void* y,
                  porta_stream s) noexcept;

// cpu_reduce.cpp
porta_status reduce(int dev, porta_reduce_op op, porta_dtype dt, std::int64_t outer, std::int64_t n, std::int64_t inner,
                    const void* x, void* y, porta_stream s) noexcept;
porta_status dot(int dev, porta_dtype dt, std::int64_t n, const void* x, const void* w, void* y,
                 porta_stream s) noexcept;

// cpu_gemm.cpp
porta_status gemm(int dev, porta_dtype dt, int trans_a, int trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                  porta_scalar alpha, const void* a, std::int64_t lda, const void* b, std::int64_t ldb,
                  porta_scalar beta, void* c, std::int64_t ldc, std::uint32_t flags, porta_stream s) noexcept;
// "OpenBLAS 0.3.21 ... (pthread threads) in /usr/lib/.../libopenblas.so.0", or why there is none.
const char* blas_description() noexcept;
// The instruction set porta's own gemm kernel runs with on this CPU: "avx512", "avx2", "baseline".
const char* gemm_kernel_isa() noexcept;

}  // namespace porta::detail::cpu
