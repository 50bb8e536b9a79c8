// SPDX-License-Identifier: Apache-2.0
// The vendor BLAS behind the HIP plugin's gemm (rocBLAS, else hipBLAS), when the build has one.
#pragma once

#include <cstdint>

#include "porta/abi/backend_v1.h"

namespace porta::detail::hip {

// Whether vendor_gemm handles this call: a vendor BLAS was built in, the dtype is float or double,
// the caller did not ask for porta's kernel, and every size fits the library's 32-bit integers.
// Otherwise the plugin runs porta's own GEMM kernel.
bool vendor_gemm_takes(porta_dtype dt, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda,
                       std::int64_t ldb, std::int64_t ldc, std::uint32_t flags) noexcept;

// Row-major gemm with the ABI's conventions (porta_backend_v1::gemm), on stream s of device dev,
// which the plugin has validated and made current.
porta_status vendor_gemm(int dev, porta_dtype dt, int trans_a, int trans_b, std::int64_t m, std::int64_t n,
                         std::int64_t k, porta_scalar alpha, const void* a, std::int64_t lda, const void* b,
                         std::int64_t ldb, porta_scalar beta, void* c, std::int64_t ldc, porta_stream s) noexcept;

}  // namespace porta::detail::hip
