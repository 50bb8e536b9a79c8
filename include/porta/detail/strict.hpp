// SPDX-License-Identifier: Apache-2.0
// The hooks by which header templates (Array<T>, user kernels) reach a device whose memory host
// code cannot touch (Device::host_accessible() is false) beyond the backend table: cpu:strict,
// backends/strict (docs/strict.md). Not part of the public API.
//
// cpu:strict keeps its arrays in memory that host code cannot touch between porta's calls, and
// runs the work of its streams only when something waits for it. User kernels are templates
// compiled into the user's translation unit, so they cannot go through the backend table: they
// hand a copy of their CPU loop to libporta here, which queues it on the stream like any entry and
// runs it, with the device's memory opened, at synchronize.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <type_traits>
#include <utility>

#include "porta/abi/backend_v1.h"
#include "porta/device.hpp"

namespace porta::detail {

// ---- every device (runtime/memory.cpp passes them on to the device's backend) -----------------

// Records what an allocation on `device` holds (an Array's element type and shape) for the
// backend's report of a bad access to it (cpu:strict's fault report); dims has `rank` entries.
// Nothing for a backend that keeps no such record. Never throws.
void describe_allocation(Device device, const void* ptr, porta_dtype dt, const std::int64_t* dims, int rank) noexcept;

// Array::borrow's check of the memory it wraps: InvalidArgument naming `fn` when `device` cannot
// borrow [ptr, ptr + bytes). cpu:strict borrows only its own device memory (a view of another
// strict Array): other memory is host memory. Other devices take what the caller gives.
void check_borrow(Device device, const void* ptr, std::size_t bytes, const char* fn);

// ---- cpu:strict (backends/strict/strict_backend.cpp) ------------------------------------------

// describe_allocation and check_borrow on cpu:strict.
void strict_describe(const void* ptr, porta_dtype dt, const std::int64_t* dims, int rank) noexcept;
void strict_check_borrow(const void* ptr, std::size_t bytes, const char* fn);

// A task for a strict stream: run(state) does the work, destroy(state) releases it.
struct StrictTask {
  void (*run)(void*);
  void (*destroy)(void*);
  void* state;
};

// Queues `task` on strict stream `s` (nullptr: the default stream); it runs at the next
// synchronize that covers it, and an exception it throws is reported there as a BackendError
// naming `fn`. Takes ownership of the task, also when it throws.
void strict_enqueue(porta_stream s, StrictTask task, const char* fn);
// Runs the work queued on `s`, then `task` with the device's memory opened, and returns; an
// exception thrown by the task reaches the caller. For kernels whose result the host needs now
// (transform_reduce).
void strict_run_now(porta_stream s, StrictTask task, const char* fn);

// A StrictTask owning a copy of `fn` (a callable with no arguments).
template <class Fn>
StrictTask strict_task(Fn&& fn) {
  using F = std::decay_t<Fn>;
  StrictTask t;
  t.run = [](void* p) { (*static_cast<F*>(p))(); };
  t.destroy = [](void* p) { delete static_cast<F*>(p); };
  t.state = new F(std::forward<Fn>(fn));
  return t;
}

}  // namespace porta::detail
