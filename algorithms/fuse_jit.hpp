// SPDX-License-Identifier: Apache-2.0
// Fused expressions as generated run-time kernels (algorithms/fuse_jit.cpp): the step that
// algorithms/fuse.cpp tries before the backend's interpreter (map_program).
#pragma once

#include <cstdint>
#include <string>

#include "algorithms/common.hpp"
#include "porta/abi/backend_v1.h"

namespace porta::detail {

// y[0, n) = the program over inputs, as a generated kernel on c's device and `stream`, when PORTA_FUSE
// and the device allow it (fuse_jit.cpp has the policy). false: nothing was launched, interpret it.
// The program was checked (check::map_program's rules); y and inputs are contiguous.
template <class T>
bool fused_jit(const BackendCall& c, const Stream& stream, const porta_program_op* ops, std::int32_t nops,
               const void* const* inputs, std::int32_t ninputs, T* y, std::int64_t n);

// The whole program (rtc prelude, generated source, entry) a float (or double) program compiles to:
// for tests that compile it with NVRTC where no GPU runs it.
std::string fused_program_text(const porta_program_op* ops, std::int32_t nops, std::int32_t ninputs, bool f64);

}  // namespace porta::detail
