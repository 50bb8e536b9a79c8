// SPDX-License-Identifier: Apache-2.0
// The HIP plugin's only export: porta_backend_entry_v1(), returning the table of this backend.
#include <hip/hip_version.h>

#include "backends/hip/hip_backend.hpp"
#include "backends/hip/hip_common.hpp"
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
  t.device_info = &device_info;
  t.synchronize = &synchronize;
  t.alloc = &alloc;
  t.free = &free;
  t.copy = &copy;
  t.host_alloc = &host_alloc;
  t.host_free = &host_free;
  t.memory_stats = &memory_stats;
  t.empty_cache = &empty_cache;
  t.stream_create = &stream_create;
  t.stream_destroy = &stream_destroy;
  t.stream_synchronize = &stream_synchronize;
  t.stream_query = &stream_query;
  t.stream_wait_event = &stream_wait_event;
  t.event_create = &event_create;
  t.event_destroy = &event_destroy;
  t.event_record = &event_record;
  t.event_synchronize = &event_synchronize;
  t.event_query = &event_query;
  t.event_elapsed_ms = &event_elapsed_ms;
  t.fill = &fill;
  t.iota = &iota;
  t.cast = &cast;
  t.unary = &unary;
  t.binary = &binary;
  t.binary_scalar = &binary_scalar;
  t.axpy = &axpy;
  t.reduce = &reduce;
  t.dot = &dot;
  t.gemm = &gemm;
  return t;
}

}  // namespace
}  // namespace porta::detail::hip

extern "C" __attribute__((visibility("default"))) const porta_backend_v1* porta_backend_entry_v1(void) {
  static const porta_backend_v1 table = porta::detail::hip::make_table();
  return &table;
}
