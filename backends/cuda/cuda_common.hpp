// SPDX-License-Identifier: Apache-2.0
// Plumbing shared by the CUDA plugin's entries: the thread-local error message behind
// last_error(), argument checks, the per-device state (stream-ordered pool, cuBLAS handle, counters)
// and the entry guard that validates the device and makes it current.
//
// Nothing here throws across the C table: every entry is wrapped in PORTA_CUDA_TRY/CATCH.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "backends/common/backend_error.hpp"
#include "porta/abi/backend_v1.h"

typedef struct cublasContext* cublasHandle_t;

namespace porta::detail::cuda {

// ---- errors -------------------------------------------------------------------------------------
// The thread-local message behind last_error(): backends/common/backend_error.hpp.
using backend::dtype_name;
using backend::last_error;
using backend::set_error;

// "<call>: <description> (<cudaErrorName>)"; PORTA_ERR_BACKEND, or PORTA_ERR_UNAVAILABLE for a
// missing driver or device. Clears the runtime's non-sticky last error, so that it does not
// surface again in an unrelated later call.
porta_status cuda_error(const char* call, cudaError_t e) noexcept;
// The same for a vendor error code returned as int by backends/gpu's launchers; `what` names the
// kernel ("fill (float32)"). The pool's out-of-memory code becomes PORTA_ERR_OOM.
porta_status launch_error(const char* what, int e, int dev) noexcept;

#define PORTA_CUDA_TRY try {
#define PORTA_CUDA_CATCH(fn)                                                                        \
  }                                                                                                 \
  catch (const std::bad_alloc&) {                                                                   \
    return ::porta::detail::cuda::set_error(PORTA_ERR_OOM, "%s: out of host memory", fn);           \
  }                                                                                                 \
  catch (...) {                                                                                     \
    return ::porta::detail::cuda::set_error(PORTA_ERR_BACKEND, "%s: unexpected C++ exception", fn); \
  }

// ---- devices ------------------------------------------------------------------------------------
// cudaGetDeviceCount, asked once; 0 with *reason set when there is no usable device.
int device_count(const char** reason) noexcept;

struct DeviceState {
  std::once_flag pool_once;
  cudaError_t pool_error = cudaSuccess;
  bool pools_supported = false;
  cudaMemPool_t pool = nullptr;
  std::atomic<std::uint64_t> alloc_count{0};
  std::mutex blas_mutex;  // guards the handle's creation and its set-stream + gemm pairs
  cublasHandle_t blas = nullptr;
};

// The state of device `dev` (0 <= dev < device_count()).
DeviceState& device_state(int dev) noexcept;

// Validates `dev` and makes it current on this thread. Every entry that takes a device calls it.
porta_status enter(int dev, const char* fn) noexcept;

// The device's default memory pool, configured once to keep freed memory (release threshold at
// its maximum) so that a loop of temporaries never returns memory to the driver.
porta_status pool_of(int dev, cudaMemPool_t* pool, bool* supported) noexcept;

inline cudaStream_t native(porta_stream s) noexcept {
  return reinterpret_cast<cudaStream_t>(s);
}
inline cudaEvent_t native(porta_event e) noexcept {
  return reinterpret_cast<cudaEvent_t>(e);
}

}  // namespace porta::detail::cuda
