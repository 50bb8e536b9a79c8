// SPDX-License-Identifier: Apache-2.0
// Plumbing of the HIP plugin: the thread-local error message behind last_error(), HIP status
// checks that name the call, and a guard that restores the caller's current device (porta's
// caller may use HIP itself, and the ABI takes the device as an argument, not as state).
#pragma once

#include <hip/hip_runtime.h>

#include <cstdint>

#include "backends/common/backend_error.hpp"
#include "porta/abi/backend_v1.h"

namespace porta::detail::hip {

// The thread-local message behind last_error(): backends/common/backend_error.hpp.
using backend::dtype_name;
using backend::last_error;
using backend::set_error;

// "hipErrorOutOfMemory (out of memory)": ROCm 5.2's hipGetErrorString often repeats the name.
const char* describe(hipError_t e) noexcept;

// hipErrorNoDevice and friends become PORTA_ERR_UNAVAILABLE, out-of-memory PORTA_ERR_OOM, the rest
// PORTA_ERR_BACKEND; the message names the porta entry and the HIP call.
porta_status fail(hipError_t e, const char* fn, const char* call) noexcept;

#define PORTA_HIP_CHECK(fn, call)                                                               \
  do {                                                                                          \
    const hipError_t porta_hip_e_ = (call);                                                     \
    if (porta_hip_e_ != hipSuccess) return ::porta::detail::hip::fail(porta_hip_e_, fn, #call); \
  } while (0)

// Number of usable devices (cached: HIP enumerates once per process) and why it is zero.
int device_count_cached(const char** reason) noexcept;
porta_status check_device(int dev, const char* fn) noexcept;

// Makes `dev` current for the guard's lifetime. ok() is false (and the error set) when it fails.
class DeviceGuard {
 public:
  DeviceGuard(int dev, const char* fn) noexcept;
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  porta_status status() const noexcept { return status_; }

 private:
  int previous_ = -1;
  porta_status status_ = PORTA_OK;
};

}  // namespace porta::detail::hip
