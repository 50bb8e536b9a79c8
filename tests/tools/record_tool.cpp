// SPDX-License-Identifier: Apache-2.0
// A Kokkos Tools library of porta's own tests: exports the kokkosp_* callbacks with the published
// signatures (runtime/kokkosp.hpp) and appends one line per event to the file named by
// PORTA_TOOLS_RECORD, flushed at once, so that a test can read what porta reported while it runs
// and a script can read the rest (finalize) after the process ends. Loaded by porta through
// KOKKOS_TOOLS_LIBS or PORTA_TOOLS_LIBS, as any third-party tool would be.
//
// Lines (the name or label last, since it may hold spaces):
//   init <load sequence> <interface version> <device info count>
//   settings | interface <has fence> | metadata <key>=<value>
//   begin_for|begin_reduce|begin_scan <id> <device id> <name>
//   end_for|end_reduce|end_scan <id>
//   begin_fence <id> <device id> <name>  /  end_fence <id>
//   push <name>  /  pop
//   alloc|free <space> <pointer> <bytes> <label>
//   begin_copy <dst space> <dst pointer> <src space> <src pointer> <bytes>  /  end_copy
//   finalize
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "runtime/kokkosp.hpp"

namespace {

std::mutex g_mutex;
std::FILE* g_file = nullptr;
std::uint64_t g_next_id = 100;  // not porta's ids: the test checks that porta hands back these

std::FILE* out() {
  if (g_file == nullptr) {
    const char* path = std::getenv("PORTA_TOOLS_RECORD");
    g_file = std::fopen(path != nullptr ? path : "porta_tools_record.txt", "a");
  }
  return g_file;
}

template <class... A>
void line(const char* format, A... args) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (std::FILE* f = out()) {
    std::fprintf(f, format, args...);
    std::fputc('\n', f);
    std::fflush(f);
  }
}

std::uint64_t begin(const char* what, const char* name, uint32_t device_id) {
  std::uint64_t id;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    id = g_next_id++;
  }
  line("%s %" PRIu64 " %" PRIu32 " %s", what, id, device_id, name != nullptr ? name : "(null)");
  return id;
}

}  // namespace

extern "C" {

void kokkosp_request_tool_settings(const uint32_t, Kokkos_Tools_ToolSettings* settings) {
  settings->requires_global_fencing = true;
  line("settings");
}

void kokkosp_provide_tool_programming_interface(const uint32_t, Kokkos_Tools_ToolProgrammingInterface* tpi) {
  line("interface %d", tpi != nullptr && tpi->fence != nullptr ? 1 : 0);
  // The fence a sampling tool would call: it must be callable at once.
  if (tpi != nullptr && tpi->fence != nullptr) tpi->fence(0);
}

void kokkosp_init_library(const int sequence, const uint64_t version, const uint32_t count,
                          Kokkos_Profiling_KokkosPDeviceInfo*) {
  line("init %d %" PRIu64 " %" PRIu32, sequence, version, count);
}

void kokkosp_finalize_library() {
  line("finalize");
}

void kokkosp_declare_metadata(const char* key, const char* value) {
  line("metadata %s=%s", key, value);
}

void kokkosp_begin_parallel_for(const char* name, const uint32_t device_id, uint64_t* id) {
  *id = begin("begin_for", name, device_id);
}
void kokkosp_end_parallel_for(const uint64_t id) {
  line("end_for %" PRIu64, id);
}
void kokkosp_begin_parallel_reduce(const char* name, const uint32_t device_id, uint64_t* id) {
  *id = begin("begin_reduce", name, device_id);
}
void kokkosp_end_parallel_reduce(const uint64_t id) {
  line("end_reduce %" PRIu64, id);
}
void kokkosp_begin_parallel_scan(const char* name, const uint32_t device_id, uint64_t* id) {
  *id = begin("begin_scan", name, device_id);
}
void kokkosp_end_parallel_scan(const uint64_t id) {
  line("end_scan %" PRIu64, id);
}
void kokkosp_begin_fence(const char* name, const uint32_t device_id, uint64_t* id) {
  *id = begin("begin_fence", name, device_id);
}
void kokkosp_end_fence(const uint64_t id) {
  line("end_fence %" PRIu64, id);
}

void kokkosp_push_profile_region(const char* name) {
  line("push %s", name);
}
void kokkosp_pop_profile_region() {
  line("pop");
}

void kokkosp_allocate_data(const Kokkos_Profiling_SpaceHandle space, const char* label, const void* ptr,
                           const uint64_t bytes) {
  line("alloc %s %p %" PRIu64 " %s", space.name, ptr, bytes, label);
}
void kokkosp_deallocate_data(const Kokkos_Profiling_SpaceHandle space, const char* label, const void* ptr,
                             const uint64_t bytes) {
  line("free %s %p %" PRIu64 " %s", space.name, ptr, bytes, label);
}

void kokkosp_begin_deep_copy(Kokkos_Profiling_SpaceHandle dst_space, const char*, const void* dst,
                             Kokkos_Profiling_SpaceHandle src_space, const char*, const void* src, uint64_t bytes) {
  line("begin_copy %s %p %s %p %" PRIu64, dst_space.name, dst, src_space.name, src, bytes);
}
void kokkosp_end_deep_copy() {
  line("end_copy");
}

}  // extern "C"
