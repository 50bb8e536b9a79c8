// SPDX-License-Identifier: Apache-2.0
// The backend registry: one slot per DeviceType (as PyTorch's DeviceGuardImplInterface array),
// filled lazily and once per process. Internal to libporta (runtime and front end).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "porta/abi/backend_v1.h"
#include "porta/device.hpp"

namespace porta::detail {

struct BackendSlot {
  DeviceType type = DeviceType::cpu;
  bool built = false;   // listed in PORTA_BACKENDS_BUILT
  bool loaded = false;  // table accepted (ABI, size, device type, a plausible device count)
  int device_count = 0;
  std::string library;     // plugin path (libporta itself for the CPU)
  std::string build_info;  // the backend's own line
  std::string reason;      // why it has no usable device; empty when it has one
  // A copy of the backend's table in which every entry the backend left NULL (or that its
  // struct_size does not cover whole) is a runtime stub returning PORTA_ERR_UNSUPPORTED, so
  // callers never test for NULL and a partial third-party plugin cannot crash the process. The
  // entries that hand back strings are guarded (runtime/registry.cpp, Guards).
  porta_backend_v1 table{};
};

// The slot of `type`, loading it on first use (std::call_once per backend: asking for the CPU
// does not dlopen the GPU plugins). Throws InvalidArgument for a DeviceType outside the enum.
const BackendSlot& backend_slot(DeviceType type);

// The plugin search shared by the GPU backends and libporta_mpi.so (docs/plugins.md): `file` is
// looked for in each of PORTA_BACKEND_PATH (colon-separated), libporta's folder and the install
// libdir, in that order, and the FIRST copy found is the plugin: it is dlopen'ed and its `symbol`
// handed to `accept`, which checks the table behind it (or says why not) and keeps it. A copy that
// fails ends the search: porta never falls back to another build's plugin further down the path
// (an installed one, say) without a word; the copies it did not try are named in the failure.
struct PluginSearch {
  std::string path;       // the accepted plugin; empty when none was
  std::string failed;     // the copy that was found first and failed; empty when none did
  std::string failure;    // "<failed>: <why>[; not tried: <path>, ... (the search ...)]"
  std::string not_found;  // "<file> was not found (searched ...; set PORTA_BACKEND_PATH ...)"
};
PluginSearch find_plugin(const std::string& file, const char* symbol,
                         const std::function<bool(void* sym, const std::string& path, std::string& why)>& accept);

// The table of a usable device; Unavailable (naming fn when not null) otherwise.
const porta_backend_v1& backend_for(Device device, const char* fn);

// "CPU", "CUDA", "HIP": the name used in sentences (the device-type table's display name).
const char* display_name(DeviceType type) noexcept;

// Every device type, in default_device() order (the table's priorities: GPUs first, the CPU last).
const std::vector<DeviceType>& types_by_priority();

// "device type 7 is not cpu, cuda or hip"
std::string unknown_type_message(int type);

// Why `device` is not usable ("cuda:9: only 1 CUDA device(s) present"); empty when it is.
// Loads the backend.
std::string device_problem(Device device);

// The entry name recorded by the last stub called on this thread, cleared by reading it.
const char* take_missing_entry() noexcept;

// Free memory on `device` as the backend reports it; 0 when it cannot tell. Never throws.
std::uint64_t free_memory_of(Device device) noexcept;

// Throws OutOfMemory for a failed allocation of `requested` bytes.
[[noreturn]] void throw_oom(const char* fn, Device device, std::uint64_t requested, const char* backend_message);

// "1.5 GiB", "512.0 MiB", "12 bytes"
std::string format_bytes(std::uint64_t bytes);

}  // namespace porta::detail
