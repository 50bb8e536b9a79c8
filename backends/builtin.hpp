// SPDX-License-Identifier: Apache-2.0
// The backends built into libporta. The runtime's registry takes their tables through these
// functions, as it takes a plugin's through its porta_backend_entry_v1(): it includes this header
// and no backend's own. Each backend defines its function in its folder.
#pragma once

#include "porta/abi/backend_v1.h"

namespace porta::detail {

// Device `cpu`: the host's cores (backends/cpu). Always present.
const porta_backend_v1* cpu_backend() noexcept;

// Device `cpu:strict`: the CPU as a separate address space with deferred streams, for CI
// (backends/strict, docs/strict.md). The CPU backend's table with every entry wrapped; it shares
// the CPU's device type and is usable whenever the CPU is.
const porta_backend_v1* strict_backend() noexcept;

}  // namespace porta::detail
