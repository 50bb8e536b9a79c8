// SPDX-License-Identifier: Apache-2.0
// The tools interface (porta/detail/tools.hpp): what launches, allocations, copies, fences and
// regions report, and to whom. Three kinds of listener, any together:
//   - Kokkos Tools libraries named in KOKKOS_TOOLS_LIBS and PORTA_TOOLS_LIBS (';' or ':' between
//     paths), loaded once and called through the published kokkosp_* callbacks (runtime/kokkosp.hpp);
//   - PORTA_PROFILE=summary: porta's own table of kernel times, printed on stderr at exit;
//   - ranges in the vendor profiler (NVTX, roctx) while one is attached, through the GPU plugin's
//     range_push/range_pop entries (the plugin holds the vendor headers; libporta has none).
// Everything is settled once, at the registry's first use. With no listener g_active stays false
// and the callers never come here.
#include "porta/detail/tools.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "porta/detail/config.hpp"
#include "runtime/kokkosp.hpp"
#include "runtime/registry.hpp"

#define PORTA_TOOLS_STRING_(x) #x
#define PORTA_TOOLS_STRING(x) PORTA_TOOLS_STRING_(x)

namespace porta::detail::tools {

std::atomic<bool> g_active{false};

namespace {

using Clock = std::chrono::steady_clock;

// "0.1.0", declared to the tools as Kokkos declares its own version.
constexpr const char* kVersion = PORTA_TOOLS_STRING(PORTA_VERSION_MAJOR) "." PORTA_TOOLS_STRING(
    PORTA_VERSION_MINOR) "." PORTA_TOOLS_STRING(PORTA_VERSION_PATCH);

// ---- the loaded Kokkos Tools libraries -----------------------------------------------------------
struct Library {
  std::string path;
  kokkosp_init_library_fn init_library = nullptr;
  kokkosp_finalize_library_fn finalize_library = nullptr;
  kokkosp_request_tool_settings_fn request_tool_settings = nullptr;
  kokkosp_provide_tool_programming_interface_fn provide_tool_programming_interface = nullptr;
  kokkosp_declare_metadata_fn declare_metadata = nullptr;
  kokkosp_begin_kernel_fn begin_parallel_for = nullptr;
  kokkosp_end_kernel_fn end_parallel_for = nullptr;
  kokkosp_begin_kernel_fn begin_parallel_reduce = nullptr;
  kokkosp_end_kernel_fn end_parallel_reduce = nullptr;
  kokkosp_begin_kernel_fn begin_parallel_scan = nullptr;
  kokkosp_end_kernel_fn end_parallel_scan = nullptr;
  kokkosp_begin_fence_fn begin_fence = nullptr;
  kokkosp_end_fence_fn end_fence = nullptr;
  kokkosp_push_region_fn push_region = nullptr;
  kokkosp_pop_region_fn pop_region = nullptr;
  kokkosp_allocate_data_fn allocate_data = nullptr;
  kokkosp_deallocate_data_fn deallocate_data = nullptr;
  kokkosp_begin_deep_copy_fn begin_deep_copy = nullptr;
  kokkosp_end_deep_copy_fn end_deep_copy = nullptr;
};

// One kernel or fence between its begin and its end: the id each library gave it, and what the
// summary needs.
struct Open {
  std::vector<std::uint64_t> ids;  // one per library, in load order
  std::string name;
  Kind kind = Kind::parallel_for;
  Clock::time_point start;
};

// A line of PORTA_PROFILE=summary.
struct Stat {
  std::uint64_t calls = 0;
  double total = 0.0;
  double min = 0.0;
  double max = 0.0;
  std::uint64_t bytes = 0;  // deep copies
  void add(double seconds) {
    min = calls == 0 ? seconds : std::min(min, seconds);
    max = calls == 0 ? seconds : std::max(max, seconds);
    total += seconds;
    ++calls;
  }
};

struct State {
  std::vector<Library> libraries;
  bool summary = false;
  // Which vendor's ranges to open (NVTX through the CUDA plugin, roctx through the HIP plugin).
  bool cuda_ranges = false;
  bool hip_ranges = false;
  std::atomic<bool> finalized{false};

  std::mutex mutex;  // everything below
  std::uint64_t next_id = 1;
  std::unordered_map<std::uint64_t, Open> open;
  std::map<std::pair<std::string, int>, Stat> kernels;  // (name, kind)
  Stat copies, fences;
};

// Never destroyed: arrays freed by static destructors after the tools were finalized still call
// deallocate (which then finds g_active false), and must find the state there.
State& state() {
  static State* s = new State;
  return *s;
}

thread_local int t_region_depth = 0;
// True on the thread that runs init_once, while it does.
thread_local bool t_starting = false;
// The deep copy that begin_deep_copy opened on this thread (copies do not nest).
thread_local Clock::time_point t_copy_start;
thread_local std::uint64_t t_copy_bytes = 0;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// ---- what the tools are told about devices -------------------------------------------------------
Kokkos_Profiling_SpaceHandle space_of(Device d) noexcept {
  Kokkos_Profiling_SpaceHandle h{};
  const char* name = d.type == DeviceType::cuda ? "Cuda" : d.type == DeviceType::hip ? "HIP" : "Host";
  std::strncpy(h.name, name, sizeof h.name - 1);
  return h;
}

kokkosp::SpaceType space_type_of(Device d) noexcept {
  if (d.type == DeviceType::cuda) return kokkosp::SpaceType::cuda;
  if (d.type == DeviceType::hip) return kokkosp::SpaceType::hip;
#ifdef _OPENMP
  return kokkosp::SpaceType::openmp;
#else
  return kokkosp::SpaceType::serial;
#endif
}

// The instance bits name the stream: 0 for the device's default one, else a number derived from
// the handle (tools only compare them).
std::uint32_t device_id(Device d, porta_stream s) noexcept {
  std::uint32_t instance = 0;
  if (s != nullptr) {
    const auto bits = reinterpret_cast<std::uintptr_t>(s);
    instance = 1u + static_cast<std::uint32_t>((bits >> 4) % ((1u << kokkosp::kInstanceBits) - 1u));
  }
  const std::uint32_t index = d.is_strict() ? 0u : static_cast<std::uint32_t>(d.index);
  return kokkosp::device_id(space_type_of(d), index, instance);
}

// A wait that the tools are not told of: a kernel's own fence (stream `s`, nullptr the default
// one) and a tool's request (the whole device). Never on cpu:strict: a failure of its queued work
// is handed to the first wait that asks and then cleared, so a wait here would take the error
// that the program's next synchronize must raise. Times there are those of the queueing.
void wait_quietly(Device d, porta_stream s, bool whole_device) noexcept {
  if (d.is_strict()) return;
  try {
    const porta_backend_v1& t = backend_for(d, nullptr);
    (void)(whole_device ? t.synchronize(d.index) : t.stream_synchronize(d.index, s));
    (void)take_missing_entry();
  } catch (...) {
  }
}

// The fence a tool may ask for (the tool programming interface): the device its id names.
void tool_invoked_fence(const std::uint32_t id) {
  // A tool that fences from its init callback runs inside the registry's first load, which a fence
  // would enter again: nothing has run then, so there is nothing to wait for.
  if (t_starting) return;
  const std::uint32_t type = kokkosp::space_type_of(id);
  const int index = static_cast<int>(kokkosp::device_of(id));
  const DeviceType dt = type == static_cast<std::uint32_t>(kokkosp::SpaceType::cuda)  ? DeviceType::cuda
                        : type == static_cast<std::uint32_t>(kokkosp::SpaceType::hip) ? DeviceType::hip
                                                                                      : DeviceType::cpu;
  wait_quietly(Device(dt, dt == DeviceType::cpu ? 0 : index), nullptr, true);
}

// ---- vendor profiler ranges -----------------------------------------------------------------------
// The GPU plugins whose range entries are used, found at the first range (not in init(): init runs
// inside the registry's first load, which must not load another backend). An entry that is the
// loader's placeholder (a plugin older than the entries) answers UNSUPPORTED once and is dropped.
struct Ranges {
  const porta_backend_v1* tables[2] = {nullptr, nullptr};
  int count = 0;
};
const Ranges& ranges() {
  static const Ranges r = [] {
    Ranges out;
    const State& st = state();
    const std::pair<bool, DeviceType> wanted[2] = {{st.cuda_ranges, DeviceType::cuda},
                                                   {st.hip_ranges, DeviceType::hip}};
    for (const auto& [want, type] : wanted) {
      if (!want) continue;
      try {
        const BackendSlot& slot = backend_slot(type);
        if (!slot.loaded) continue;
        // The plugin's table must reach both entries. A probing call would show in the profile (a
        // pop of an empty stack is one more range end than ranges begun).
        if (slot.table.struct_size < offsetof(porta_backend_v1, range_pop) + sizeof(slot.table.range_pop)) continue;
        out.tables[out.count++] = &slot.table;
      } catch (...) {
      }
    }
    return out;
  }();
  return r;
}

void range_push(const char* name) noexcept {
  const State& st = state();
  if (!st.cuda_ranges && !st.hip_ranges) return;
  const Ranges& r = ranges();
  for (int i = 0; i < r.count; ++i)
    if (r.tables[i]->range_push(0, name) != PORTA_OK) (void)take_missing_entry();  // a plugin that left it NULL
}

void range_pop() noexcept {
  const State& st = state();
  if (!st.cuda_ranges && !st.hip_ranges) return;
  const Ranges& r = ranges();
  for (int i = 0; i < r.count; ++i)
    if (r.tables[i]->range_pop(0) != PORTA_OK) (void)take_missing_entry();
}

// ---- loading --------------------------------------------------------------------------------------
template <class Fn>
void find(void* handle, const char* symbol, Fn& out) {
  void* p = dlsym(handle, symbol);
  static_assert(sizeof(out) == sizeof(p), "function and object pointers differ in size");
  if (p != nullptr) std::memcpy(&out, &p, sizeof out);
}

std::vector<std::string> split_paths(const char* value) {
  std::vector<std::string> out;
  if (value == nullptr) return out;
  const std::string text = value;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find_first_of(";:", pos);
    if (end == std::string::npos) end = text.size();
    std::string path = text.substr(pos, end - pos);
    if (!path.empty() && std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
    pos = end + 1;
  }
  return out;
}

void load_library(const std::string& path, State& st) {
  dlerror();
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = dlerror();
    std::fprintf(stderr, "porta: warning: cannot load the profiling tool %s (%s); running without it\n", path.c_str(),
                 e != nullptr ? e : "unknown dynamic loader error");
    return;
  }
  // Never dlclose'd: the tool's finalize runs at exit, and its report may live in its statics.
  Library lib;
  lib.path = path;
  find(h, "kokkosp_init_library", lib.init_library);
  find(h, "kokkosp_finalize_library", lib.finalize_library);
  find(h, "kokkosp_request_tool_settings", lib.request_tool_settings);
  find(h, "kokkosp_provide_tool_programming_interface", lib.provide_tool_programming_interface);
  find(h, "kokkosp_declare_metadata", lib.declare_metadata);
  find(h, "kokkosp_begin_parallel_for", lib.begin_parallel_for);
  find(h, "kokkosp_end_parallel_for", lib.end_parallel_for);
  find(h, "kokkosp_begin_parallel_reduce", lib.begin_parallel_reduce);
  find(h, "kokkosp_end_parallel_reduce", lib.end_parallel_reduce);
  find(h, "kokkosp_begin_parallel_scan", lib.begin_parallel_scan);
  find(h, "kokkosp_end_parallel_scan", lib.end_parallel_scan);
  find(h, "kokkosp_begin_fence", lib.begin_fence);
  find(h, "kokkosp_end_fence", lib.end_fence);
  find(h, "kokkosp_push_profile_region", lib.push_region);
  find(h, "kokkosp_pop_profile_region", lib.pop_region);
  find(h, "kokkosp_allocate_data", lib.allocate_data);
  find(h, "kokkosp_deallocate_data", lib.deallocate_data);
  find(h, "kokkosp_begin_deep_copy", lib.begin_deep_copy);
  find(h, "kokkosp_end_deep_copy", lib.end_deep_copy);
  st.libraries.push_back(lib);
}

// The order Kokkos follows at initialisation: the tool's settings, the interface it may call
// back, init, then the metadata.
void start_library(Library& lib, int sequence) {
  if (lib.request_tool_settings != nullptr) {
    Kokkos_Tools_ToolSettings settings{};
    lib.request_tool_settings(1, &settings);  // porta fences around every kernel anyway
  }
  if (lib.provide_tool_programming_interface != nullptr) {
    Kokkos_Tools_ToolProgrammingInterface tpi{};
    tpi.fence = &tool_invoked_fence;
    lib.provide_tool_programming_interface(1, &tpi);
  }
  if (lib.init_library != nullptr) lib.init_library(sequence, PORTA_KOKKOSP_INTERFACE_VERSION, 0, nullptr);
  // As Kokkos declares "Kokkos Version": tools that write reports put it in their header.
  if (lib.declare_metadata != nullptr) lib.declare_metadata("porta version", kVersion);
}

// ---- PORTA_PROFILE ---------------------------------------------------------------------------------
void parse_profile(const char* value, State& st) {
  if (value == nullptr) return;
  const std::string text = value;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(pos, end - pos);
    if (word == "summary") {
      st.summary = true;
    } else if (word == "ranges") {
      st.cuda_ranges = st.hip_ranges = true;
    } else if (!word.empty() && word != "off" && word != "0") {
      std::fprintf(stderr,
                   "porta: warning: PORTA_PROFILE=%s: unknown value \"%s\" (accepted: summary, ranges, off; "
                   "several separated by ',')\n",
                   value, word.c_str());
    }
    pos = end + 1;
  }
}

const char* kind_name(int kind) {
  switch (static_cast<Kind>(kind)) {
    case Kind::parallel_for:
      return "parallel_for";
    case Kind::parallel_reduce:
      return "parallel_reduce";
    case Kind::parallel_scan:
      return "parallel_scan";
  }
  return "?";
}

void print_summary(State& st) {
  std::fflush(stdout);  // after the program's own output, not inside it
  std::lock_guard<std::mutex> lock(st.mutex);
  std::vector<std::pair<const std::pair<std::string, int>*, const Stat*>> rows;
  double all = 0.0;
  std::uint64_t launches = 0;
  for (const auto& [key, stat] : st.kernels) {
    rows.emplace_back(&key, &stat);
    all += stat.total;
    launches += stat.calls;
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second->total > b.second->total; });
  std::fprintf(stderr, "porta profile (PORTA_PROFILE=summary): %llu kernel launches, %.6f s in kernels\n",
               static_cast<unsigned long long>(launches), all);
  std::fprintf(stderr, "%-16s %9s %12s %10s %10s %10s %7s  %s\n", "kind", "calls", "total s", "mean s", "min s",
               "max s", "share", "name");
  for (const auto& [key, stat] : rows) {
    const double share = all > 0.0 ? 100.0 * stat->total / all : 0.0;
    std::fprintf(stderr, "%-16s %9llu %12.6f %10.3e %10.3e %10.3e %6.1f%%  %s\n", kind_name(key->second),
                 static_cast<unsigned long long>(stat->calls), stat->total, stat->total / double(stat->calls),
                 stat->min, stat->max, share, key->first.empty() ? "(unnamed)" : key->first.c_str());
  }
  const Stat& c = st.copies;
  std::fprintf(stderr, "%-16s %9llu %12.6f %10.3e %10.3e %10.3e %7s  %llu bytes\n", "deep copies",
               static_cast<unsigned long long>(c.calls), c.total, c.calls ? c.total / double(c.calls) : 0.0, c.min,
               c.max, "", static_cast<unsigned long long>(c.bytes));
  const Stat& f = st.fences;
  std::fprintf(stderr, "%-16s %9llu %12.6f %10.3e %10.3e %10.3e %7s  Stream, Event and device synchronize\n", "fences",
               static_cast<unsigned long long>(f.calls), f.total, f.calls ? f.total / double(f.calls) : 0.0, f.min,
               f.max, "");
}

// At exit: nothing is reported after this point (arrays freed by later static destructors find
// g_active false), then the summary, then each tool's finalize, where the tools print their reports.
void finalize() {
  State& st = state();
  if (st.finalized.exchange(true)) return;
  g_active.store(false, std::memory_order_relaxed);
  if (st.summary) print_summary(st);
  for (auto it = st.libraries.rbegin(); it != st.libraries.rend(); ++it)
    if (it->finalize_library != nullptr) it->finalize_library();
}

bool init_once() {
  State& st = state();
  std::vector<std::string> paths = split_paths(std::getenv("KOKKOS_TOOLS_LIBS"));
  for (const std::string& p : split_paths(std::getenv("PORTA_TOOLS_LIBS")))
    if (std::find(paths.begin(), paths.end(), p) == paths.end()) paths.push_back(p);
  for (const std::string& p : paths) load_library(p, st);
  parse_profile(std::getenv("PORTA_PROFILE"), st);
  // Nsight Systems and Nsight Compute name their injection library here; rocprof (v1, v2) and
  // rocprofv3 theirs in the HSA or rocprofiler variables.
  // Nsight Compute sets no NVTX variable (its injection reaches NVTX through the CUDA driver), only
  // its own transport's (seen with ncu 2025.3).
  if (std::getenv("NVTX_INJECTION64_PATH") != nullptr || std::getenv("NV_NSIGHT_INJECTION_TRANSPORT_TYPE") != nullptr)
    st.cuda_ranges = true;
  for (const char* var : {"HSA_TOOLS_LIB", "ROCP_TOOL_LIB", "ROCP_TOOL_LIBRARIES"})
    if (std::getenv(var) != nullptr) st.hip_ranges = true;
  t_starting = true;
  for (std::size_t i = 0; i < st.libraries.size(); ++i) start_library(st.libraries[i], static_cast<int>(i));
  t_starting = false;
  const bool any = !st.libraries.empty() || st.summary || st.cuda_ranges || st.hip_ranges;
  if (any) {
    std::atexit(&finalize);
    g_active.store(true, std::memory_order_release);
  }
  return any;
}

// Starts the clock of a kernel's or fence's span and files it under a new id for its end.
std::uint64_t open_span(State& st, Open&& o) {
  o.start = Clock::now();
  std::lock_guard<std::mutex> lock(st.mutex);
  const std::uint64_t id = st.next_id++;
  st.open.emplace(id, std::move(o));
  return id;
}

}  // namespace

bool init() noexcept {
  try {
    static const bool any = init_once();
    return any;
  } catch (...) {
    return false;
  }
}

// ---- kernels ----------------------------------------------------------------------------------------
std::uint64_t begin_kernel(Kind kind, const char* name, Device device, porta_stream s) noexcept {
  if (!active()) return 0;
  try {
    State& st = state();
    const char* label = name != nullptr ? name : "";
    // The stream's earlier work is not this kernel's: wait for it before the clock starts (Kokkos'
    // global fencing does the same).
    if (st.summary || !st.libraries.empty()) wait_quietly(device, s, false);
    Open o;
    o.kind = kind;
    o.name = label;
    const std::uint32_t dev = device_id(device, s);
    for (const Library& lib : st.libraries) {
      std::uint64_t id = 0;
      const kokkosp_begin_kernel_fn f = kind == Kind::parallel_for      ? lib.begin_parallel_for
                                        : kind == Kind::parallel_reduce ? lib.begin_parallel_reduce
                                                                        : lib.begin_parallel_scan;
      if (f != nullptr) f(label, dev, &id);
      o.ids.push_back(id);
    }
    range_push(label);
    return open_span(st, std::move(o));
  } catch (...) {
    return 0;
  }
}

void end_kernel(Kind kind, std::uint64_t id, Device device, porta_stream s) noexcept {
  if (!active() || id == 0) return;
  try {
    State& st = state();
    wait_quietly(device, s, false);
    const Clock::time_point stop = Clock::now();
    Open o;
    {
      std::lock_guard<std::mutex> lock(st.mutex);
      auto it = st.open.find(id);
      if (it == st.open.end()) return;
      o = std::move(it->second);
      st.open.erase(it);
      if (st.summary)
        st.kernels[{o.name, static_cast<int>(o.kind)}].add(std::chrono::duration<double>(stop - o.start).count());
    }
    range_pop();
    for (std::size_t i = st.libraries.size(); i-- > 0;) {
      const Library& lib = st.libraries[i];
      const kokkosp_end_kernel_fn f = kind == Kind::parallel_for      ? lib.end_parallel_for
                                      : kind == Kind::parallel_reduce ? lib.end_parallel_reduce
                                                                      : lib.end_parallel_scan;
      if (f != nullptr && i < o.ids.size()) f(o.ids[i]);
    }
  } catch (...) {
  }
}

// ---- memory -----------------------------------------------------------------------------------------
void allocate(Device device, const char* label, const void* ptr, std::size_t bytes) noexcept {
  if (!active()) return;
  const Kokkos_Profiling_SpaceHandle space = space_of(device);
  for (const Library& lib : state().libraries)
    if (lib.allocate_data != nullptr) lib.allocate_data(space, label != nullptr ? label : "", ptr, bytes);
}

void deallocate(Device device, const char* label, const void* ptr, std::size_t bytes) noexcept {
  if (!active()) return;
  const Kokkos_Profiling_SpaceHandle space = space_of(device);
  for (const Library& lib : state().libraries)
    if (lib.deallocate_data != nullptr) lib.deallocate_data(space, label != nullptr ? label : "", ptr, bytes);
}

void begin_deep_copy(Device dst_device, const char* dst_label, const void* dst, Device src_device,
                     const char* src_label, const void* src, std::size_t bytes) noexcept {
  if (!active()) return;
  const Kokkos_Profiling_SpaceHandle dst_space = space_of(dst_device);
  const Kokkos_Profiling_SpaceHandle src_space = space_of(src_device);
  for (const Library& lib : state().libraries)
    if (lib.begin_deep_copy != nullptr)
      lib.begin_deep_copy(dst_space, dst_label != nullptr ? dst_label : "", dst, src_space,
                          src_label != nullptr ? src_label : "", src, bytes);
  range_push("porta::copy");
  t_copy_bytes = bytes;
  t_copy_start = Clock::now();
}

void end_deep_copy() noexcept {
  if (!active()) return;
  State& st = state();
  if (st.summary) {
    const double t = seconds_since(t_copy_start);
    std::lock_guard<std::mutex> lock(st.mutex);
    st.copies.add(t);
    st.copies.bytes += t_copy_bytes;
  }
  range_pop();
  for (std::size_t i = st.libraries.size(); i-- > 0;)
    if (st.libraries[i].end_deep_copy != nullptr) st.libraries[i].end_deep_copy();
}

// ---- fences -----------------------------------------------------------------------------------------
std::uint64_t begin_fence(const char* name, Device device) noexcept {
  if (!active()) return 0;
  try {
    State& st = state();
    Open o;
    o.name = name != nullptr ? name : "";
    const std::uint32_t dev = device_id(device, nullptr);
    for (const Library& lib : st.libraries) {
      std::uint64_t id = 0;
      if (lib.begin_fence != nullptr) lib.begin_fence(o.name.c_str(), dev, &id);
      o.ids.push_back(id);
    }
    return open_span(st, std::move(o));
  } catch (...) {
    return 0;
  }
}

void end_fence(std::uint64_t id) noexcept {
  if (!active() || id == 0) return;
  try {
    State& st = state();
    Open o;
    {
      std::lock_guard<std::mutex> lock(st.mutex);
      auto it = st.open.find(id);
      if (it == st.open.end()) return;
      o = std::move(it->second);
      st.open.erase(it);
      if (st.summary) st.fences.add(seconds_since(o.start));
    }
    for (std::size_t i = st.libraries.size(); i-- > 0;)
      if (st.libraries[i].end_fence != nullptr && i < o.ids.size()) st.libraries[i].end_fence(o.ids[i]);
  } catch (...) {
  }
}

// ---- regions ----------------------------------------------------------------------------------------
void push_region(const char* name) noexcept {
  if (!active()) return;
  const char* label = name != nullptr ? name : "";
  ++t_region_depth;
  for (const Library& lib : state().libraries)
    if (lib.push_region != nullptr) lib.push_region(label);
  range_push(label);
}

void pop_region() noexcept {
  if (!active()) return;
  // A pop without its push (one more pop_region than push_region) would close a tool's outer
  // region or a range porta did not open.
  if (t_region_depth == 0) return;
  --t_region_depth;
  range_pop();
  const State& st = state();
  for (std::size_t i = st.libraries.size(); i-- > 0;)
    if (st.libraries[i].pop_region != nullptr) st.libraries[i].pop_region();
}

namespace {
// The names of porta::launch_name scopes on this thread, innermost last (a scope restores the one
// before it, whose characters must still be here).
thread_local std::vector<std::string> t_builtin_names;
}  // namespace

const char* builtin_name() noexcept {
  return t_builtin_names.empty() ? nullptr : t_builtin_names.back().c_str();
}

const char* set_builtin_name(const char* name) noexcept {
  const char* previous = builtin_name();
  try {
    if (name != nullptr) {
      t_builtin_names.emplace_back(name);
    } else if (!t_builtin_names.empty()) {
      t_builtin_names.pop_back();
    }
  } catch (...) {  // no memory for the name: built-ins keep their own
  }
  return previous;
}

}  // namespace porta::detail::tools
