// SPDX-License-Identifier: Apache-2.0
// The entries of the HIP plugin's porta_backend_v1 table, defined across backends/hip/*.hip and
// gathered into the table by hip_backend.hip.
#pragma once

#include "porta/abi/backend_v1.h"

namespace porta::detail::hip {

int device_count(const char** reason);
porta_status device_info(int dev, porta_device_info_v1* out);
porta_status synchronize(int dev);

}  // namespace porta::detail::hip
