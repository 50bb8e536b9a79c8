// SPDX-License-Identifier: Apache-2.0
// The hooks by which header templates (Array<T>, user kernels) reach cpu:strict (docs/strict.md).
// Not part of the public API.
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

namespace porta::detail {

// Records what an allocation of cpu:strict holds (an Array's element type and shape), for the
// report of a fault on it. dims has `rank` entries. Never throws.
void strict_describe(const void* ptr, porta_dtype dt, const std::int64_t* dims, int rank) noexcept;

// Array::borrow on cpu:strict: InvalidArgument naming `fn` unless [ptr, ptr + bytes) is device
// memory of cpu:strict (a view of another strict Array); other memory is host memory.
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
