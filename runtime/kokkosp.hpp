// SPDX-License-Identifier: Apache-2.0
// The Kokkos Tools C interface as porta calls it: the callbacks a profiling library (kernel-timer,
// memory-usage, space-time-stack, Caliper, TAU, APEX, ...) exports under the names kokkosp_<event>,
// their C types, and the two structures passed by value or by pointer. Written from the published
// interface (Kokkos' Kokkos_Profiling_C_Interface.h, interface version 20211015, which is what
// Kokkos 3.5 and later report); only what porta calls is here. Every function is extern "C" in the
// tool and found with dlsym, so a tool built against any Kokkos of that interface loads.
//
// Also used by tests/tools/record_tool.cpp, a tool of porta's own that records what it is told.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

// The version porta announces to kokkosp_init_library: the interface that has fences
// (begin_fence/end_fence), tool settings and the tool programming interface.
#define PORTA_KOKKOSP_INTERFACE_VERSION 20211015u

// A memory space by name, passed by value: "Host", "Cuda", "HIP" are the names tools know.
struct Kokkos_Profiling_SpaceHandle {
  char name[64];
};

struct Kokkos_Profiling_KokkosPDeviceInfo {
  size_t deviceID;
};

// What a tool asks of the host program (kokkosp_request_tool_settings); 256 bytes in all.
struct Kokkos_Tools_ToolSettings {
  bool requires_global_fencing;
  bool padding[255];
};

// What the host program offers a tool (kokkosp_provide_tool_programming_interface): a fence of the
// device a device id names, then room for more.
typedef void (*Kokkos_Tools_toolInvokedFenceFunction)(const uint32_t);
typedef void (*Kokkos_Tools_functionPointer)();
struct Kokkos_Tools_ToolProgrammingInterface {
  Kokkos_Tools_toolInvokedFenceFunction fence;
  Kokkos_Tools_functionPointer padding[31];
};

typedef void (*kokkosp_init_library_fn)(const int load_sequence, const uint64_t interface_version,
                                        const uint32_t device_info_count,
                                        Kokkos_Profiling_KokkosPDeviceInfo* device_info);
typedef void (*kokkosp_finalize_library_fn)();
typedef void (*kokkosp_request_tool_settings_fn)(const uint32_t count, Kokkos_Tools_ToolSettings* settings);
typedef void (*kokkosp_provide_tool_programming_interface_fn)(const uint32_t count,
                                                              Kokkos_Tools_ToolProgrammingInterface* interface);
typedef void (*kokkosp_declare_metadata_fn)(const char* key, const char* value);
// begin_parallel_for / _reduce / _scan: the tool writes the id that the matching end gets.
typedef void (*kokkosp_begin_kernel_fn)(const char* name, const uint32_t device_id, uint64_t* kernel_id);
typedef void (*kokkosp_end_kernel_fn)(const uint64_t kernel_id);
typedef void (*kokkosp_begin_fence_fn)(const char* name, const uint32_t device_id, uint64_t* fence_id);
typedef void (*kokkosp_end_fence_fn)(const uint64_t fence_id);
typedef void (*kokkosp_push_region_fn)(const char* name);
typedef void (*kokkosp_pop_region_fn)();
typedef void (*kokkosp_allocate_data_fn)(const Kokkos_Profiling_SpaceHandle space, const char* label, const void* ptr,
                                         const uint64_t bytes);
typedef void (*kokkosp_deallocate_data_fn)(const Kokkos_Profiling_SpaceHandle space, const char* label, const void* ptr,
                                           const uint64_t bytes);
typedef void (*kokkosp_begin_deep_copy_fn)(Kokkos_Profiling_SpaceHandle dst_space, const char* dst_label,
                                           const void* dst_ptr, Kokkos_Profiling_SpaceHandle src_space,
                                           const char* src_label, const void* src_ptr, uint64_t bytes);
typedef void (*kokkosp_end_deep_copy_fn)();

}  // extern "C"

namespace porta::detail::kokkosp {

// Kokkos' device ids (the uint32_t of begin_parallel_* and begin_fence): the execution space's type
// in the top 8 bits, the device's index in the next 7, an instance (stream) number in the low 17.
// Tools decode them (space-time-stack, the sampler), so porta encodes its devices the same way.
enum class SpaceType : uint32_t { serial = 0, openmp = 1, cuda = 2, hip = 3 };
inline constexpr uint32_t kTypeBits = 8;
inline constexpr uint32_t kDeviceBits = 7;
inline constexpr uint32_t kInstanceBits = 17;

constexpr uint32_t device_id(SpaceType type, uint32_t device, uint32_t instance) noexcept {
  return (static_cast<uint32_t>(type) << (kDeviceBits + kInstanceBits)) |
         ((device & ((1u << kDeviceBits) - 1u)) << kInstanceBits) | (instance & ((1u << kInstanceBits) - 1u));
}
constexpr uint32_t space_type_of(uint32_t id) noexcept {
  return id >> (kDeviceBits + kInstanceBits);
}
constexpr uint32_t device_of(uint32_t id) noexcept {
  return (id >> kInstanceBits) & ((1u << kDeviceBits) - 1u);
}

}  // namespace porta::detail::kokkosp
