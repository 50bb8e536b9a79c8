// SPDX-License-Identifier: Apache-2.0
// The entries of the HIP plugin's porta_backend_v1 table, defined across backends/hip/*.hip and
// gathered into the table by hip_backend.hip.
#pragma once

#include <cstddef>
#include <cstdint>

#include "porta/abi/backend_v1.h"

namespace porta::detail::hip {

// hip_device.hip
int device_count(const char** reason) noexcept;

#include "backends/gpu/plugin_entries.inc"

}  // namespace porta::detail::hip
