// SPDX-License-Identifier: Apache-2.0
// libporta_cuda.so: the CUDA backend plugin. Its one exported symbol, porta_backend_entry_v1,
// returns the table of include/porta/abi/backend_v1.h. Loading the library touches no driver:
// the first call that needs one is device_count, which never fails and says why there is no
// device (no driver, no GPU, CUDA_VISIBLE_DEVICES) so that a CUDA build runs on CPU-only machines.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <mutex>

#include "backends/common/abi_entries.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_common.hpp"
#include "porta/abi/backend_v1.h"

#ifndef PORTA_CUDA_ARCH_TEXT
#define PORTA_CUDA_ARCH_TEXT "unknown"
#endif

namespace porta::detail::cuda {
namespace {

int count_entry(const char** reason) noexcept {
  return device_count(reason);
}

const char* build_info() noexcept {
  static char text[256] = "";
  static std::once_flag once;
  std::call_once(once, []() noexcept {
    // The runtime this plugin was built with (the shared libcudart it loads must match its major).
    std::snprintf(text, sizeof text, "CUDA runtime %d.%d, %s, architectures: %s", CUDART_VERSION / 1000,
                  (CUDART_VERSION % 1000) / 10, cublas_version(), PORTA_CUDA_ARCH_TEXT);
  });
  return text;
}

porta_backend_v1 make_table() noexcept {
  porta_backend_v1 t{};
  t.abi_version = PORTA_ABI_VERSION;
  t.struct_size = sizeof(porta_backend_v1);
  t.name = "cuda";
  t.device_type = PORTA_DEVICE_CUDA;
  t.build_info = build_info();
  t.last_error = &last_error;
  t.device_count = &count_entry;
#define PORTA_ABI_ENTRY(name, params, args) t.name = &name;
#include "porta/abi/backend_v1_entries.inc"
#undef PORTA_ABI_ENTRY
  return t;
}

}  // namespace
}  // namespace porta::detail::cuda

extern "C" __attribute__((visibility("default"))) const porta_backend_v1* porta_backend_entry_v1(void) {
  static const porta_backend_v1 table = porta::detail::cuda::make_table();
  return &table;
}
