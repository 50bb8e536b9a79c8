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
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "backends/builtin.hpp"
#include "backends/common/abi_entries.hpp"
#include "porta/detail/runtime.hpp"
#include "porta/detail/tools.hpp"
#include "porta/error.hpp"
#include "runtime/plugin_checks.hpp"

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
#define PORTA_ABI_ENTRY(name, params, args) PORTA_STUB_IF_NULL(t, name);
#include "porta/abi/backend_v1_entries.inc"
#undef PORTA_ABI_ENTRY
}
#undef PORTA_STUB_IF_NULL

// The smallest table the loader can use: the header fields, last_error and device_count. Later
// entries that an older (shorter) v1 plugin lacks become stubs.
constexpr std::size_t kMinTableSize = offsetof(porta_backend_v1, device_count) + sizeof(void*);

// ---- guards on what a backend writes for the runtime -----------------------------------------
// Each slot's entries as adopted, which its guards call through.
std::array<porta_backend_v1, kDeviceTypeCount> g_adopted{};

// The entries that hand the runtime a string: a message that is never NULL and is read only as far
// as kMaxPluginText, and buffers that end with a NUL inside them whatever the backend wrote, so
// that no caller (porta-info, the run-time compiler's cache key and log) reads past one.
template <std::size_t Slot>
struct Guards {
  static const porta_backend_v1& adopted() { return g_adopted[Slot]; }
  static const char* last_error() {
    thread_local std::string message;
    message = plugin_text(adopted().last_error());
    return message.c_str();
  }
  static porta_status device_info(int dev, porta_device_info_v1* out) {
    const porta_status st = adopted().device_info(dev, out);
    if (out != nullptr) {
      terminate_text(out->name, sizeof out->name);
      terminate_text(out->vendor, sizeof out->vendor);
      terminate_text(out->arch, sizeof out->arch);
    }
    return st;
  }
  static porta_status coll_available(char* info, size_t len) {
    const porta_status st = adopted().coll_available(info, len);
    terminate_text(info, len);
    return st;
  }
  static porta_status rtc_info(int dev, char* key, size_t len) {
    const porta_status st = adopted().rtc_info(dev, key, len);
    terminate_text(key, len);
    return st;
  }
  static porta_status rtc_compile(int dev, const char* source, const char* options, void** binary, size_t* bytes,
                                  char* log, size_t log_len) {
    const porta_status st = adopted().rtc_compile(dev, source, options, binary, bytes, log, log_len);
    terminate_text(log, log_len);
    return st;
  }
  static void install(porta_backend_v1& t) {
    g_adopted[Slot] = t;
    t.last_error = &last_error;
    t.device_info = &device_info;
    t.coll_available = &coll_available;
    t.rtc_info = &rtc_info;
    t.rtc_compile = &rtc_compile;
  }
};

template <std::size_t... Slot>
void install_guards(porta_backend_v1& t, std::size_t slot, std::index_sequence<Slot...>) {
  ((slot == Slot ? Guards<Slot>::install(t) : void()), ...);
}

// Why the loader takes nothing from this table of struct_size bytes (empty when it takes it): what
// every backend table passes before any of its entries is called.
std::string table_problem(const porta_backend_v1& t, std::uint32_t struct_size, DeviceType type) {
  if (t.abi_version != PORTA_ABI_VERSION)
    return "ABI version " + std::to_string(t.abi_version) + ", expected " + std::to_string(PORTA_ABI_VERSION);
  const std::string size = table_size_problem(struct_size, kMinTableSize);
  if (!size.empty()) return "backend table: " + size;
  if (t.device_type != static_cast<int32_t>(type)) {
    const int32_t d = t.device_type;
    const char* got = (d >= 0 && d < kDeviceTypeCount) ? to_string(static_cast<DeviceType>(d)) : "unknown";
    return std::string("is a ") + got + " backend (device_type " + std::to_string(d) + "), expected " + to_string(type);
  }
  if (t.device_count == nullptr) return "the backend table has no device_count";
  return {};
}

// Takes the header and every entry that struct_size covers whole (a struct_size that table_problem
// accepted): an entry the table ends inside of, one it does not reach and one it left NULL all get
// the placeholder. The name is the registry's own and the build line a bounded copy, so nothing
// later reads the backend's strings.
void adopt_table(BackendSlot& slot, const porta_backend_v1* src, std::size_t struct_size) {
  porta_backend_v1 t{};
  std::memcpy(static_cast<void*>(&t), src, kMinTableSize);
#define PORTA_ABI_ENTRY(name, params, args) \
  if (table_covers(struct_size, offsetof(porta_backend_v1, name))) t.name = src->name;
#include "porta/abi/backend_v1_entries.inc"
#undef PORTA_ABI_ENTRY
  fill_stubs(t);
  slot.build_info = plugin_text(t.build_info);
  t.name = to_string(slot.type);
  t.build_info = slot.build_info.c_str();
  install_guards(t, static_cast<std::size_t>(slot.type), std::make_index_sequence<kDeviceTypeCount>{});
  slot.table = t;
}

// Accepts a table whose checks passed and whose device_count is plausible: adopts it and keeps the
// count, or the reason there is no device. Otherwise `why` names the count; nothing is adopted.
bool adopt_counted(BackendSlot& slot, const porta_backend_v1* table, std::uint32_t struct_size, std::string& why) {
  const char* reason = nullptr;
  const int n = table->device_count(&reason);
  why = device_count_problem(n);
  if (!why.empty()) return false;
  slot.loaded = true;
  adopt_table(slot, table, struct_size);
  slot.device_count = n;
  if (n == 0) {
    const std::string text = plugin_text(reason);
    slot.reason = !text.empty() ? text : std::string("no ") + display_name(slot.type) + " devices found";
  }
  return true;
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
  // Read once: every check and the copy go by the same size.
  const std::uint32_t struct_size = table->struct_size;
  why = table_problem(*table, struct_size, slot.type);
  if (why.empty() && adopt_counted(slot, table, struct_size, why)) {
    slot.library = path;
    return true;
  }
  why = path + ": " + why;
  return false;
}

void load_gpu(BackendSlot& slot) {
  const std::string file = std::string("libporta_") + to_string(slot.type) + ".so";
  const PluginSearch found = find_plugin(
      file, PORTA_BACKEND_ENTRY_SYMBOL,
      [&slot](void* sym, const std::string& path, std::string& why) { return accept_backend(sym, path, slot, why); });
  if (!found.path.empty()) return;
  slot.library = found.failed;
  if (!found.failed.empty()) {
    slot.reason = found.failure;
  } else if (!slot.built) {
    slot.reason = std::string("porta was built without ") + display_name(slot.type) +
                  " support (configure with -DPORTA_ENABLE_" + facts(slot.type)->option + "=ON)";
  } else {
    slot.reason = found.not_found;
  }
}

void load_cpu(BackendSlot& slot) {
  slot.library = libporta_path();
  const porta_backend_v1* table = cpu_backend();
  const std::uint32_t struct_size = table != nullptr ? table->struct_size : 0;
  std::string why = table == nullptr ? "no table" : table_problem(*table, struct_size, slot.type);
  if (why.empty() && adopt_counted(slot, table, struct_size, why)) return;
  slot.reason = "the built-in CPU backend table is malformed: " + why;
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
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    const std::string path = dirs[i] + "/" + file;
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
    // The first copy found is the one this libporta was meant to use (the user's path, then its
    // own build): a broken one is reported, not replaced by whatever a later folder holds.
    found.failed = path;
    found.failure = why;
    std::string others;
    for (std::size_t j = i + 1; j < dirs.size(); ++j) {
      const std::string other = dirs[j] + "/" + file;
      if (access(other.c_str(), F_OK) == 0) others += (others.empty() ? "" : ", ") + other;
    }
    if (!others.empty())
      found.failure +=
          "; not tried: " + others + " (porta loads the first " + file +
          " on its search path and does not fall back: fix or remove the one above, or set PORTA_BACKEND_PATH)";
    return found;
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
    // The tools are settled before any backend is used, so that the first allocation and launch
    // already see active(). Once per process; init() never loads a backend itself.
    (void)tools::init();
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
  if (device.is_strict()) return {};  // cpu:strict wraps the CPU backend: there whenever the CPU is
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
  if (slot.device_count > 0 && device.is_strict()) return *strict_backend();
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
