// SPDX-License-Identifier: Apache-2.0
// How a GPU kernel reports a failure (a bounds-checked View's bad index, porta::fail): it writes
// its device's fault record (porta/debug.hpp's FaultRecord, in pinned host memory that libporta
// makes, runtime/faults.cpp) and libporta raises it at the next wait. Included through
// porta/debug.hpp by translation units compiled as CUDA or HIP.
//
// A kernel finds the record through a pointer of its own translation unit (each TU compiled as
// CUDA or HIP is a module of its own, with its own copy of a __device__ variable), which every
// launch of that TU sets once per device through prepare_faults before its first kernel runs. Only
// the first failure is written: a kernel claims the record with an atomic in device memory (atomics
// on host memory over PCIe are not promised on every system) and publishes it with a system-wide
// fence, so that the host reads a whole record. No trap: a trapped CUDA context is dead for the
// whole process, and the point is that the device stays usable after the error is raised.
//
// With relocatable device code (-rdc) one TU's checked accessor may serve another's kernels after
// the device link, and then records into that TU's pointer, which is null until that TU launches:
// the failure is then not recorded (the access still lands on the dummy element).
#pragma once

#include <atomic>
#include <cstdint>

#include "porta/detail/gpu/api.cuh"

namespace porta::detail::gpu_faults {

inline constexpr int kSinkBytes = 64;
inline constexpr int kMaxDevices = 64;

// Internal linkage: one copy per translation unit, host and device side alike.
namespace {

__device__ FaultSlot slot;
// Where a violating access lands instead: written by every failing thread at once, never read for
// anything that matters.
__device__ std::uint64_t sink_words[kSinkBytes / 8];
// The devices whose `slot` this TU has set.
std::atomic<bool> prepared[kMaxDevices];

__device__ inline void* sink() {
  return sink_words;
}

// The record's info when this thread is the first to fail since the last raise; else nullptr.
__device__ inline FaultInfo* claim() {
  const FaultSlot s = slot;
  if (s.record == nullptr || s.claim == nullptr) return nullptr;
  if (atomicCAS(s.claim, 0u, 1u) != 0u) return nullptr;
  return &s.record->info;
}

__device__ inline void publish() {
  __threadfence_system();  // every field of info reaches host memory before state does
  slot.record->state = 1;
}

__device__ inline void record_bounds(const char* label, std::int64_t size, std::int64_t rows, std::int64_t cols,
                                     int rank, std::int64_t i, std::int64_t j) {
  FaultInfo* f = claim();
  if (f == nullptr) return;
  f->kind = kFaultBounds;
  f->rank = rank;
  f->label = label;  // a host pointer: only the host reads the characters
  f->index[0] = i;
  f->index[1] = j;
  f->size = size;
  f->rows = rows;
  f->cols = cols;
  f->nvalues = 0;
  f->message[0] = '\0';
  publish();
}

__device__ inline void record_fail(const char* message, const FaultValue* values, int n) {
  FaultInfo* f = claim();
  if (f == nullptr) return;
  f->kind = kFaultFail;
  f->rank = 0;
  f->label = nullptr;
  int k = 0;
  if (message != nullptr)
    for (; k < kFaultMessageBytes - 1 && message[k] != '\0'; ++k) f->message[k] = message[k];
  f->message[k] = '\0';
  f->nvalues = n;
  for (int v = 0; v < n && v < kFaultMaxValues; ++v) f->values[v] = values[v];
  publish();
}

// Called by every launch of user kernels (detail/gpu/user_kernels.cuh) with `device` current:
// remembers the kernel's name for the error, and on this TU's first launch on the device points
// its kernels at the device's record. A record that cannot be made leaves failures unrecorded;
// the launch goes ahead.
inline void prepare_faults(Device device, const char* kernel_name) {
  note_launch(device, kernel_name);
  const int i = device.index;
  if (i < 0 || i >= kMaxDevices || prepared[i].load(std::memory_order_acquire)) return;
  const FaultSlot s = gpu_fault_slot(device);
  if (s.record == nullptr) return;
  using Api = gpu::NativeApi;
  if (Api::memcpy_to_symbol(slot, &s, sizeof s) == Api::kSuccess) {
    prepared[i].store(true, std::memory_order_release);
  } else {
    (void)Api::get_last_error();  // the launch that follows must not see this error
  }
}

}  // namespace
}  // namespace porta::detail::gpu_faults
