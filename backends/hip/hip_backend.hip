// SPDX-License-Identifier: Apache-2.0
// The HIP plugin's only export: porta_backend_entry_v1(), returning the table of this backend.
#include <hip/hip_version.h>

#include "backends/hip/hip_backend.hpp"
#include "backends/hip/hip_common.hpp"
#include "backends/common/abi_entries.hpp"
#include "porta/abi/backend_v1.h"

#ifndef PORTA_HIP_TARGETS
#define PORTA_HIP_TARGETS "?"
#endif
#ifndef PORTA_HIP_BLAS_INFO
#define PORTA_HIP_BLAS_INFO "rocBLAS: not found (porta GEMM kernel)"
#endif

#define PORTA_HIP_STR2(x) #x
#define PORTA_HIP_STR(x) PORTA_HIP_STR2(x)

namespace porta::detail::hip {
namespace {

// The versions are those of the headers the plugin was compiled against; device_info reports the
// runtime and driver actually loaded.
#define PORTA_HIP_VERSION_STR PORTA_HIP_STR(HIP_VERSION_MAJOR) "." PORTA_HIP_STR(HIP_VERSION_MINOR)
#define PORTA_HIP_CLANG_STR \
  PORTA_HIP_STR(__clang_major__) "." PORTA_HIP_STR(__clang_minor__) "." PORTA_HIP_STR(__clang_patchlevel__)
constexpr const char* kBuildInfo = "HIP " PORTA_HIP_VERSION_STR " (ROCm), clang " PORTA_HIP_CLANG_STR
                                   ", " PORTA_HIP_BLAS_INFO ", targets: " PORTA_HIP_TARGETS;

porta_backend_v1 make_table() {
  porta_backend_v1 t{};
  t.abi_version = PORTA_ABI_VERSION;
  t.struct_size = sizeof(porta_backend_v1);
  t.name = "hip";
  t.device_type = PORTA_DEVICE_HIP;
  t.build_info = kBuildInfo;
  t.last_error = &last_error;
  t.device_count = &device_count;
#define PORTA_ABI_ENTRY(name, params, args) t.name = &name;
#include "porta/abi/backend_v1_entries.inc"
#undef PORTA_ABI_ENTRY
  return t;
}

}  // namespace
}  // namespace porta::detail::hip

extern "C" __attribute__((visibility("default"))) const porta_backend_v1* porta_backend_entry_v1(void) {
  static const porta_backend_v1 table = porta::detail::hip::make_table();
  return &table;
}
