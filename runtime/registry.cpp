// SPDX-License-Identifier: Apache-2.0
// Backend registry and plugin loader (the model is ArrayFire's unified backend,
// src/api/unified/symbol_manager.cpp): the CPU table is linked in, the GPU tables come from
// libporta_cuda.so / libporta_hip.so found at run time, so a GPU build still starts where the GPU,
// its driver or its libraries are missing, and says why.
#include "runtime/registry.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "backends/common/abi_entries.hpp"
#include "backends/openmp/openmp_backend.hpp"
#include "porta/detail/runtime.hpp"
#include "porta/error.hpp"
#include "runtime/strict.hpp"

#ifndef PORTA_BACKENDS_BUILT
#define PORTA_BACKENDS_BUILT "cpu"
#endif
#ifndef PORTA_INSTALL_LIBDIR
#define PORTA_INSTALL_LIBDIR ""
#endif

namespace porta::detail {
namespace {

// ---- stubs for entries a backend does not provide -------------------------------------------
thread_local const char* t_missing_entry = nullptr;

const char* empty_last_error() {
  return "";
}

// A generic captureless lambda converts to a function pointer of any signature, so one macro
// covers every entry; the entry's name goes into a thread-local that throw_status reads.
#define PORTA_STUB_IF_NULL(table, entry)            \
  do {                                              \
    if ((table).entry == nullptr) {                 \
      (table).entry = [](auto...) -> porta_status { \
        t_missing_entry = #entry;                   \
        return PORTA_ERR_UNSUPPORTED;               \
      };                                            \
    }                                               \
  } while (0)

void fill_stubs(porta_backend_v1& t) {
  if (t.last_error == nullptr) t.last_error = &empty_last_error;
  if (t.name == nullptr) t.name = "";
  if (t.build_info == nullptr) t.build_info = "";
#define PORTA_ABI_ENTRY(name, params, args) PORTA_STUB_IF_NULL(t, name);
#include "porta/abi/backend_v1_entries.inc"
#undef PORTA_ABI_ENTRY
}
#undef PORTA_STUB_IF_NULL

// The smallest table the loader can use: the header fields, last_error and device_count. Later
// entries that an older (shorter) v1 plugin lacks become stubs.
constexpr std::size_t kMinTableSize = offsetof(porta_backend_v1, device_count) + sizeof(void*);

// Copies what the backend filled (struct_size bytes, at most what this libporta knows) and stubs
// the rest.
void adopt_table(BackendSlot& slot, const porta_backend_v1* src) {
  porta_backend_v1 t{};
  const std::size_t n = src->struct_size < sizeof(t) ? src->struct_size : sizeof(t);
  std::memcpy(static_cast<void*>(&t), src, n);
  fill_stubs(t);
  slot.table = t;
  slot.build_info = t.build_info;
}

bool is_built(DeviceType type) {
  const std::string built = PORTA_BACKENDS_BUILT;
  const std::string name = to_string(type);
  std::size_t pos = 0;
  while (pos <= built.size()) {
    std::size_t end = built.find(',', pos);
    if (end == std::string::npos) end = built.size();
    if (built.compare(pos, end - pos, name) == 0 && end - pos == name.size()) return true;
    pos = end + 1;
  }
  return false;
}

// The file libporta was loaded from, through the address of one of its own functions.
std::string libporta_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&libporta_path), &info) != 0 && info.dli_fname != nullptr)
    return info.dli_fname;
  return {};
}

std::string dirname_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Canonical form for de-duplicating search directories (falls back to the text as given).
std::string canonical_dir(const std::string& dir) {
  char buf[PATH_MAX];
  if (realpath(dir.c_str(), buf) != nullptr) return buf;
  return dir;
}

// Search order: PORTA_BACKEND_PATH (colon-separated), libporta's directory, the install libdir.
std::vector<std::string> plugin_dirs() {
  std::vector<std::string> dirs;
  std::vector<std::string> seen;
  auto add = [&](const std::string& d) {
    if (d.empty()) return;
    const std::string c = canonical_dir(d);
    for (const auto& s : seen)
      if (s == c) return;
    seen.push_back(c);
    dirs.push_back(d);
  };
  if (const char* env = std::getenv("PORTA_BACKEND_PATH")) {
    const std::string path = env;
    std::size_t pos = 0;
    while (pos <= path.size()) {
      std::size_t end = path.find(':', pos);
      if (end == std::string::npos) end = path.size();
      add(path.substr(pos, end - pos));
      pos = end + 1;
    }
  }
  const std::string self = libporta_path();
  if (!self.empty()) add(dirname_of(self));
  add(PORTA_INSTALL_LIBDIR);
  return dirs;
}

std::string last_dlerror() {
  const char* e = dlerror();
  return e ? e : "unknown dynamic loader error";
}

// Checks the table behind one plugin's entry symbol. On success fills the slot and returns true;
// otherwise `why` says what went wrong.
bool accept_backend(void* sym, const std::string& path, BackendSlot& slot, std::string& why) {
  porta_backend_entry_v1_fn entry = nullptr;
  static_assert(sizeof(entry) == sizeof(sym), "function and object pointers differ in size");
  std::memcpy(&entry, &sym, sizeof(entry));
  const porta_backend_v1* table = entry();
  if (table == nullptr) {
    why = path + ": " PORTA_BACKEND_ENTRY_SYMBOL "() returned NULL";
    return false;
  }
  if (table->abi_version != PORTA_ABI_VERSION) {
    why = path + ": ABI version " + std::to_string(table->abi_version) + ", expected " +
          std::to_string(PORTA_ABI_VERSION);
    return false;
  }
  if (table->struct_size < kMinTableSize) {
    why = path + ": backend table of " + std::to_string(table->struct_size) + " bytes, at least " +
          std::to_string(kMinTableSize) + " expected";
    return false;
  }
  if (table->device_type != static_cast<int32_t>(slot.type)) {
    const int32_t t = table->device_type;
    const char* got = (t >= 0 && t < kDeviceTypeCount) ? to_string(static_cast<DeviceType>(t)) : "unknown";
    why = path + ": is a " + got + " backend (device_type " + std::to_string(t) + "), expected " + to_string(slot.type);
    return false;
  }
  if (table->device_count == nullptr) {
    why = path + ": the backend table has no device_count";
    return false;
  }
  slot.loaded = true;
  slot.library = path;
  adopt_table(slot, table);
  return true;
}

void count_devices(BackendSlot& slot) {
  const char* reason = nullptr;
  const int n = slot.table.device_count(&reason);
  slot.device_count = n > 0 ? n : 0;
  if (slot.device_count == 0) {
    slot.reason = (reason != nullptr && *reason != '\0')
                      ? std::string(reason)
                      : std::string("no ") + display_name(slot.type) + " devices found";
  }
}

void load_gpu(BackendSlot& slot) {
  const std::string file = std::string("libporta_") + to_string(slot.type) + ".so";
  const PluginSearch found = find_plugin(
      file, PORTA_BACKEND_ENTRY_SYMBOL,
      [&slot](void* sym, const std::string& path, std::string& why) { return accept_backend(sym, path, slot, why); });
  if (!found.path.empty()) {
    count_devices(slot);
    // A plugin earlier on the path that failed is often the one the user meant to load.
    if (slot.device_count == 0 && !found.failures.empty()) slot.reason += " (also tried: " + found.failures + ")";
    return;
  }
  slot.library = found.first_failed;
  if (!found.failures.empty()) {
    slot.reason = found.failures;
  } else if (!slot.built) {
    slot.reason = std::string("porta was built without ") + display_name(slot.type) +
                  " support (configure with -DPORTA_ENABLE_" + facts(slot.type)->option + "=ON)";
  } else {
    slot.reason = found.not_found;
  }
}

void load_cpu(BackendSlot& slot) {
  slot.library = libporta_path();
  const porta_backend_v1* table = openmp_backend();
  if (table == nullptr || table->abi_version != PORTA_ABI_VERSION || table->struct_size < kMinTableSize ||
      table->device_count == nullptr) {
    slot.reason = "the built-in CPU backend table is missing or malformed";
    return;
  }
  slot.loaded = true;
  adopt_table(slot, table);
  count_devices(slot);
}

struct Registry {
  std::array<BackendSlot, kDeviceTypeCount> slots;
  std::array<std::once_flag, kDeviceTypeCount> once;
};

Registry& registry() {
  static Registry r;  // constructed thread-safely on first use
  return r;
}

}  // namespace

PluginSearch find_plugin(const std::string& file, const char* symbol,
                         const std::function<bool(void* sym, const std::string& path, std::string& why)>& accept) {
  PluginSearch found;
  const std::vector<std::string> dirs = plugin_dirs();
  for (const auto& dir : dirs) {
    const std::string path = dir + "/" + file;
    if (access(path.c_str(), F_OK) != 0) continue;
    std::string why;
    // Handles are never dlclose'd: vendor runtimes register atexit handlers and TLS destructors
    // that would run after their code was unmapped.
    dlerror();
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    void* sym = nullptr;
    if (handle == nullptr) {
      why = path + ": " + last_dlerror();
    } else {
      dlerror();
      sym = dlsym(handle, symbol);
      if (sym == nullptr) why = path + ": no " + symbol + " symbol (" + last_dlerror() + ")";
    }
    if (sym != nullptr && accept(sym, path, why)) {
      found.path = path;
      return found;
    }
    // Keep looking (a later directory may hold a good copy) but remember every failure: the
    // first one is usually the one the user needs to see.
    if (!found.failures.empty()) found.failures += "; ";
    found.failures += why;
    if (found.first_failed.empty()) found.first_failed = path;
  }
  std::string searched;
  for (const auto& d : dirs) searched += (searched.empty() ? "" : ", ") + d;
  found.not_found = file + " was not found (searched " + (searched.empty() ? std::string("nothing") : searched) +
                    "; set PORTA_BACKEND_PATH to the directory that holds it)";
  return found;
}

const char* display_name(DeviceType type) noexcept {
  const DeviceTypeFacts* f = facts(type);
  return f != nullptr ? f->display_name : "unknown";
}

const std::vector<DeviceType>& types_by_priority() {
  static const std::vector<DeviceType> order = [] {
    std::vector<DeviceType> v;
    for (const DeviceTypeFacts& f : kDeviceTypes) v.push_back(f.type);
    std::stable_sort(v.begin(), v.end(),
                     [](DeviceType a, DeviceType b) { return facts(a)->priority < facts(b)->priority; });
    return v;
  }();
  return order;
}

std::string unknown_type_message(int type) {
  std::string names;
  for (int i = 0; i < kDeviceTypeCount; ++i) {
    if (i > 0) names += i + 1 == kDeviceTypeCount ? " or " : ", ";
    names += kDeviceTypes[i].name;
  }
  return "device type " + std::to_string(type) + " is not " + names;
}

const BackendSlot& backend_slot(DeviceType type) {
  const int i = static_cast<int>(type);
  if (i < 0 || i >= kDeviceTypeCount) throw InvalidArgument("porta: " + unknown_type_message(i));
  Registry& r = registry();
  std::call_once(r.once[static_cast<std::size_t>(i)], [&r, type, i] {
    BackendSlot& slot = r.slots[static_cast<std::size_t>(i)];
    slot = BackendSlot{};
    slot.type = type;
    slot.built = is_built(type);
    if (type == DeviceType::cpu) {
      load_cpu(slot);
    } else {
      load_gpu(slot);
    }
  });
  return r.slots[static_cast<std::size_t>(i)];
}

std::string device_problem(Device device) {
  const BackendSlot& slot = backend_slot(device.type);
  if (slot.device_count == 0) return std::string(display_name(device.type)) + " is not available: " + slot.reason;
  if (device.is_strict()) return {};  // a mode of the CPU, there whenever the CPU is
  if (device.index < 0 || device.index >= slot.device_count) {
    if (device.type == DeviceType::cpu)
      return "the CPU is device cpu (cpu:0); there is no cpu:" + std::to_string(device.index);
    return "only " + std::to_string(slot.device_count) + " " + display_name(device.type) + " device(s) present";
  }
  return {};
}

const porta_backend_v1& backend_for(Device device, const char* fn) {
  const BackendSlot& slot = backend_slot(device.type);
  if (slot.device_count > 0 && device.index >= 0 && device.index < slot.device_count) return slot.table;
  if (slot.device_count > 0 && device.is_strict()) return strict_backend();
  std::string msg = fn ? std::string(fn) + ": " : std::string();
  throw Unavailable(msg + device.to_string() + ": " + device_problem(device));
}

const porta_backend_v1& backend_for(Device device) {
  return backend_for(device, nullptr);
}

const char* take_missing_entry() noexcept {
  return std::exchange(t_missing_entry, nullptr);
}

}  // namespace porta::detail
