// SPDX-License-Identifier: Apache-2.0
// Fake libporta_hip.so plugins for the loader tests, one per FAKE_MODE:
//   FAKE_ZERO     loads, reports zero devices with the reason "fake: no devices"
//   FAKE_BADDEP   needs libporta_fake_dep.so, which is not on its search path: dlopen fails
//   FAKE_ABI99    abi_version 99
//   FAKE_WORKING  one device backed by host memory, with just enough of the table for
//                 Array<float> and sum(); every other entry is left NULL (the runtime stubs it)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "porta/abi/backend_v1.h"

#define FAKE_ZERO 0
#define FAKE_BADDEP 1
#define FAKE_ABI99 2
#define FAKE_WORKING 3

#ifndef FAKE_MODE
#error "define FAKE_MODE"
#endif

#if FAKE_MODE == FAKE_BADDEP
extern "C" int porta_fake_dep_value(void);
#endif

namespace {

thread_local char g_error[256] = "";

porta_status fail(porta_status st, const char* msg) {
  std::snprintf(g_error, sizeof g_error, "%s", msg);
  return st;
}

const char* last_error() {
  return g_error;
}

int device_count(const char** reason) {
#if FAKE_MODE == FAKE_ZERO
  if (reason) *reason = "fake: no devices";
  return 0;
#elif FAKE_MODE == FAKE_BADDEP
  (void)reason;
  return porta_fake_dep_value() > 0 ? 1 : 0;
#else
  (void)reason;
  return 1;
#endif
}

porta_status device_info(int dev, porta_device_info_v1* out) {
  if (dev != 0) return fail(PORTA_ERR_INVALID, "fake: no such device");
  std::memset(out, 0, sizeof *out);
  std::snprintf(out->name, sizeof out->name, "Fake HIP device");
  std::snprintf(out->vendor, sizeof out->vendor, "porta tests");
  std::snprintf(out->arch, sizeof out->arch, "fake");
  out->total_memory = 1ull << 30;
  out->free_memory = 1ull << 30;
  out->compute_units = 1;
  out->warp_size = 64;
  out->max_threads_per_block = 256;
  out->runtime_version = 1;
  out->pci_bus_id = -1;
  return PORTA_OK;
}

porta_status ok_dev(int) {
  return PORTA_OK;
}

porta_status alloc(int, size_t bytes, porta_stream, void** out) {
  *out = std::malloc(bytes);
  return *out ? PORTA_OK : fail(PORTA_ERR_OOM, "fake: malloc failed");
}

porta_status free_(int, void* p, porta_stream) {
  std::free(p);
  return PORTA_OK;
}

porta_status copy(int, void* dst, const void* src, size_t bytes, porta_copy_kind, porta_stream) {
  std::memmove(dst, src, bytes);
  return PORTA_OK;
}

porta_status stream_synchronize(int, porta_stream) {
  return PORTA_OK;
}

porta_status fill(int, porta_dtype dt, int64_t n, porta_scalar v, void* y, porta_stream) {
  const size_t size = (dt == PORTA_F32 || dt == PORTA_I32) ? 4 : 8;
  for (int64_t i = 0; i < n; ++i) std::memcpy(static_cast<char*>(y) + i * size, &v, size);
  return PORTA_OK;
}

porta_status reduce(int, porta_reduce_op op, porta_dtype dt, int64_t outer, int64_t n, int64_t inner, const void* x,
                    void* y, porta_stream) {
  if (op != PORTA_REDUCE_SUM || dt != PORTA_F32 || outer != 1 || inner != 1)
    return fail(PORTA_ERR_UNSUPPORTED, "fake: only a full float32 sum is implemented");
  float s = -0.0f;
  for (int64_t i = 0; i < n; ++i) s += static_cast<const float*>(x)[i];
  *static_cast<float*>(y) = s;
  return PORTA_OK;
}

porta_backend_v1 make_table() {
  porta_backend_v1 t;
  std::memset(&t, 0, sizeof t);
  t.abi_version = FAKE_MODE == FAKE_ABI99 ? 99u : PORTA_ABI_VERSION;
  t.struct_size = sizeof(porta_backend_v1);
  t.name = "hip";
  t.device_type = PORTA_DEVICE_HIP;
  t.build_info = "fake hip plugin for porta's loader tests";
  t.last_error = &last_error;
  t.device_count = &device_count;
#if FAKE_MODE == FAKE_WORKING
  t.device_info = &device_info;
  t.synchronize = &ok_dev;
  t.alloc = &alloc;
  t.free = &free_;
  t.copy = &copy;
  t.stream_synchronize = &stream_synchronize;
  t.fill = &fill;
  t.reduce = &reduce;
#else
  (void)&device_info;
  (void)&ok_dev;
  (void)&alloc;
  (void)&free_;
  (void)&copy;
  (void)&stream_synchronize;
  (void)&fill;
  (void)&reduce;
#endif
  return t;
}

const porta_backend_v1 g_table = make_table();

}  // namespace

extern "C" __attribute__((visibility("default"))) const porta_backend_v1* porta_backend_entry_v1(void) {
  return &g_table;
}
