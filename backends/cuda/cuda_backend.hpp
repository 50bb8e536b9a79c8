// SPDX-License-Identifier: Apache-2.0
// The entries of the CUDA plugin's porta_backend_v1 table, defined in cuda_memory.cpp and
// cuda_algorithms.cpp and gathered into the table by cuda_backend.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "porta/abi/backend_v1.h"

namespace porta::detail::cuda {

#include "backends/gpu/plugin_entries.inc"

// cuda_algorithms.cpp: "cuBLAS 13.0.2" (the version the plugin runs with; static storage)
const char* cublas_version() noexcept;

}  // namespace porta::detail::cuda
