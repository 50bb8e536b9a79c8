// SPDX-License-Identifier: Apache-2.0
// The tools interface's entry points inside libporta: what every launch, allocation, copy and
// fence reports to a loaded profiling tool (Kokkos Tools libraries named in KOKKOS_TOOLS_LIBS or
// PORTA_TOOLS_LIBS, PORTA_PROFILE=summary, NVTX/roctx ranges while a vendor profiler is attached).
// Not part of the public API (that is porta/profile.hpp).
//
// Every caller asks active() first: one relaxed load of a flag that libporta sets once, at its
// first use, from the environment. With no tool that is the whole cost of a launch's hooks, and no
// name is built.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "porta/abi/backend_v1.h"
#include "porta/device.hpp"

namespace porta::detail::tools {

// Set by libporta on its first use (tools_init below), never cleared before exit.
extern std::atomic<bool> g_active;
// Reads the environment and loads the tools once; returns whether any is active. Called by the
// runtime when it starts (device selection), so that active() below is already settled when the
// first launch asks it.
bool init() noexcept;

inline bool active() noexcept {
  return g_active.load(std::memory_order_relaxed);
}

enum class Kind { parallel_for, parallel_reduce, parallel_scan };

// A launch of a user kernel or a built-in on `device`, on stream `s` (nullptr: the device's default
// stream). begin returns the id that end takes. end waits for `s` first (a tool times the kernel
// itself, not its launch: Kokkos Tools' default, global fencing) and then tells the tools; begin
// waits for `s` too when a tool or the summary times kernels, so that earlier queued work is not
// counted as this kernel's (ranges alone do not wait; on cpu:strict neither waits, since a wait
// there would take the error of queued work that the program's next synchronize must raise).
std::uint64_t begin_kernel(Kind kind, const char* name, Device device, porta_stream s) noexcept;
void end_kernel(Kind kind, std::uint64_t id, Device device, porta_stream s) noexcept;

// An Array's memory, with its label (never null: "" when it has none).
void allocate(Device device, const char* label, const void* ptr, std::size_t bytes) noexcept;
void deallocate(Device device, const char* label, const void* ptr, std::size_t bytes) noexcept;

// A copy of `bytes` from src to dst (labels may be null).
void begin_deep_copy(Device dst_device, const char* dst_label, const void* dst, Device src_device,
                     const char* src_label, const void* src, std::size_t bytes) noexcept;
void end_deep_copy() noexcept;

// A wait for a stream or a device (Stream::synchronize, Event::synchronize, device synchronize).
std::uint64_t begin_fence(const char* name, Device device) noexcept;
void end_fence(std::uint64_t id) noexcept;

// porta::launch_name: this thread's name for built-in launches (nullptr: none; each built-in then
// goes by its function's name). set returns the previous one, for the scope's end to restore; the
// characters are kept by libporta until the name is replaced.
const char* builtin_name() noexcept;
const char* set_builtin_name(const char* name) noexcept;

// porta::profile_region's two halves (a per-thread stack, as Kokkos's).
void push_region(const char* name) noexcept;
void pop_region() noexcept;

}  // namespace porta::detail::tools
