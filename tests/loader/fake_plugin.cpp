// SPDX-License-Identifier: Apache-2.0
// Fake libporta_hip.so plugins for the loader tests, one per FAKE_MODE:
//   FAKE_ZERO     loads, reports zero devices with the reason "fake: no devices"
//   FAKE_BADDEP   needs libporta_fake_dep.so, which is not on its search path: dlopen fails
//   FAKE_ABI99    abi_version 99
//   FAKE_WORKING  one device backed by host memory, with just enough of the table for
//                 Array<float>, sum() and strided copies; every other entry is left NULL (the
//                 runtime stubs it)
// and malformed ones, which the loader must refuse or tame, never crash on:
//   FAKE_MID_POINTER  the working table, but struct_size ends four bytes into alloc (a copy of
//                     struct_size bytes would call half a pointer at the first allocation)
//   FAKE_UNALIGNED    the working table, struct_size four bytes past its end
//   FAKE_HUGE         the working table, struct_size 0xfffffff8
//   FAKE_MANY         the working table, device_count() 2^31 - 1
//   FAKE_NEGATIVE     the working table, device_count() -1 and no reason
//   FAKE_UNTERMINATED the working table, and strings without their NUL: device_info fills name,
//                     vendor and arch to the last byte, coll_available and rtc_info the whole
//                     buffer, and build_info is longer than the loader reads
//   FAKE_NULL_ERROR   the working table, but last_error() returns NULL and alloc always fails
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "porta/abi/backend_v1.h"

#define FAKE_ZERO 0
#define FAKE_BADDEP 1
#define FAKE_ABI99 2
#define FAKE_WORKING 3
#define FAKE_MID_POINTER 4
#define FAKE_UNALIGNED 5
#define FAKE_HUGE 6
#define FAKE_MANY 7
#define FAKE_NEGATIVE 8
#define FAKE_UNTERMINATED 9
#define FAKE_NULL_ERROR 10

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
#if FAKE_MODE == FAKE_NULL_ERROR
  return nullptr;
#else
  return g_error;
#endif
}

int device_count(const char** reason) {
#if FAKE_MODE == FAKE_ZERO
  if (reason) *reason = "fake: no devices";
  return 0;
#elif FAKE_MODE == FAKE_BADDEP
  (void)reason;
  return porta_fake_dep_value() > 0 ? 1 : 0;
#elif FAKE_MODE == FAKE_MANY
  (void)reason;
  return INT_MAX;
#elif FAKE_MODE == FAKE_NEGATIVE
  (void)reason;
  return -1;
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
#if FAKE_MODE == FAKE_UNTERMINATED
  std::memset(out->name, 'N', sizeof out->name);
  std::memset(out->vendor, 'V', sizeof out->vendor);
  std::memset(out->arch, 'A', sizeof out->arch);
#endif
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
#if FAKE_MODE == FAKE_NULL_ERROR
  (void)bytes;
  *out = nullptr;
  return fail(PORTA_ERR_OOM, "unused: last_error() returns NULL");
#endif
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

// Enough for porta::linalg's transposes: its front end runs the factorisation itself on the CPU,
// since this plugin has no linalg entry.
porta_status copy_strided(int, porta_dtype dt, int32_t rank, const int64_t* shape, const void* src,
                          const int64_t* src_strides, void* dst, const int64_t* dst_strides, porta_stream) {
  if (rank < 1 || rank > 4) return fail(PORTA_ERR_INVALID, "fake: copy_strided of rank 1..4 only");
  const size_t size = (dt == PORTA_F32 || dt == PORTA_I32) ? 4 : 8;
  int64_t d[4] = {1, 1, 1, 1}, ss[4] = {0, 0, 0, 0}, ds[4] = {0, 0, 0, 0};
  for (int i = 0; i < rank; ++i) {
    d[4 - rank + i] = shape[i];
    ss[4 - rank + i] = src_strides[i];
    ds[4 - rank + i] = dst_strides[i];
  }
  for (int64_t a = 0; a < d[0]; ++a)
    for (int64_t b = 0; b < d[1]; ++b)
      for (int64_t c = 0; c < d[2]; ++c)
        for (int64_t e = 0; e < d[3]; ++e)
          std::memcpy(static_cast<char*>(dst) + (a * ds[0] + b * ds[1] + c * ds[2] + e * ds[3]) * size,
                      static_cast<const char*>(src) + (a * ss[0] + b * ss[1] + c * ss[2] + e * ss[3]) * size, size);
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

porta_status coll_available(char* info, size_t len) {
  if (info != nullptr) std::memset(info, 'C', len);
  return PORTA_OK;
}

porta_status rtc_info(int, char* key, size_t len) {
  if (key != nullptr) std::memset(key, 'K', len);
  return PORTA_OK;
}

// Longer than the loader reads of a plugin's string (runtime/plugin_checks.hpp, kMaxPluginText).
char g_long_build_info[8192];

const char* build_info() {
#if FAKE_MODE == FAKE_UNTERMINATED
  std::memset(g_long_build_info, 'B', sizeof g_long_build_info - 1);
  return g_long_build_info;
#else
  (void)g_long_build_info;
  return "fake hip plugin for porta's loader tests";
#endif
}

porta_backend_v1 make_table() {
  porta_backend_v1 t;
  std::memset(&t, 0, sizeof t);
  t.abi_version = FAKE_MODE == FAKE_ABI99 ? 99u : PORTA_ABI_VERSION;
#if FAKE_MODE == FAKE_MID_POINTER
  t.struct_size = offsetof(porta_backend_v1, alloc) + 4;
#elif FAKE_MODE == FAKE_UNALIGNED
  t.struct_size = sizeof(porta_backend_v1) + 4;
#elif FAKE_MODE == FAKE_HUGE
  t.struct_size = 0xfffffff8u;
#else
  t.struct_size = sizeof(porta_backend_v1);
#endif
  t.name = "hip";
  t.device_type = PORTA_DEVICE_HIP;
  t.build_info = build_info();
  t.last_error = &last_error;
  t.device_count = &device_count;
#if FAKE_MODE == FAKE_UNTERMINATED
  t.coll_available = &coll_available;
  t.rtc_info = &rtc_info;
#else
  (void)&coll_available;
  (void)&rtc_info;
#endif
#if FAKE_MODE >= FAKE_WORKING
  t.device_info = &device_info;
  t.synchronize = &ok_dev;
  t.alloc = &alloc;
  t.free = &free_;
  t.copy = &copy;
  t.stream_synchronize = &stream_synchronize;
  t.fill = &fill;
  t.reduce = &reduce;
  t.copy_strided = &copy_strided;
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
