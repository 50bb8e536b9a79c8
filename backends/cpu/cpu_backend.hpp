// SPDX-License-Identifier: Apache-2.0
// The CPU backend is built into libporta (it is always present); the runtime takes its table
// through this function rather than through dlopen.
#pragma once

#include "porta/abi/backend_v1.h"

namespace porta::detail {
const porta_backend_v1* cpu_backend() noexcept;
}
