// SPDX-License-Identifier: Apache-2.0
// Device names, selection and properties (include/porta/device.hpp).
#include <atomic>
#include <cctype>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "porta/debug.hpp"
#include "porta/detail/config.hpp"
#include "porta/detail/runtime.hpp"
#include "porta/detail/tools.hpp"
#include "porta/device.hpp"
#include "porta/error.hpp"
#include "runtime/registry.hpp"

#ifndef PORTA_BACKENDS_BUILT
#define PORTA_BACKENDS_BUILT "cpu"
#endif
#ifndef PORTA_BUILD_COMPILER
#define PORTA_BUILD_COMPILER "unknown compiler"
#endif
#ifndef PORTA_BUILD_TYPE
#define PORTA_BUILD_TYPE "unknown"
#endif

namespace porta {
namespace {

// "cpu, cpu:0, cuda, cuda:N, hip or hip:N (...)", from the device-type table; `select` adds the
// forms only select_device knows.
std::string device_forms(bool select) {
  std::vector<std::string> forms;
  if (select) forms.emplace_back("auto");
  for (const detail::DeviceTypeFacts& f : detail::kDeviceTypes) {
    forms.emplace_back(f.name);
    forms.push_back(f.type == DeviceType::cpu ? std::string("cpu:0") : std::string(f.name) + ":N");
    if (f.type == DeviceType::cpu) forms.emplace_back("cpu:strict");
  }
  if (select) forms.insert(forms.end(), {"gpu", "gpu:N"});
  std::string s;
  for (std::size_t i = 0; i < forms.size(); ++i) s += (i == 0 ? "" : i + 1 == forms.size() ? " or " : ", ") + forms[i];
  return s + " (N = 0, 1, ...; lower case, no spaces)";
}

// What follows a device name: nothing (index 0) or ":N". Returns an empty string on success,
// otherwise the parenthesised detail for the error message.
std::string parse_index(std::string_view rest, int& index) {
  index = 0;
  if (rest.empty()) return {};
  if (rest[0] != ':') return " (unknown device name)";
  const std::string_view digits = rest.substr(1);
  if (digits.empty()) return " (no index after ':')";
  for (char c : digits)
    if (c < '0' || c > '9') return " (the index must be a decimal number 0, 1, ...)";
  if (digits.size() > 1 && digits[0] == '0') return " (the index has a leading zero)";
  long long v = 0;
  for (char c : digits) {
    v = v * 10 + (c - '0');
    if (v > INT_MAX) return " (the index is too large)";
  }
  index = static_cast<int>(v);
  return {};
}

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

// Parses "name" or "name:N" for every name of the device-type table; on failure returns the detail.
std::string parse_device(std::string_view text, Device& out) {
  if (text.empty()) return " (empty string)";
  for (char c : text)
    if (std::isspace(static_cast<unsigned char>(c))) return " (no spaces allowed)";
  if (text == "cpu:strict") {
    out = Device::cpu_strict();
    return {};
  }
  for (const detail::DeviceTypeFacts& n : detail::kDeviceTypes) {
    const std::string_view name = n.name;
    if (!starts_with(text, name)) continue;
    const std::string_view rest = text.substr(name.size());
    if (!rest.empty() && rest[0] != ':') continue;  // "cudax" is not "cuda"
    int index = 0;
    std::string err = parse_index(rest, index);
    if (!err.empty()) return err;
    if (n.type == DeviceType::cpu && index != 0) return " (there is one CPU device: cpu or cpu:0)";
    out = Device(n.type, index);
    return {};
  }
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower != text) {
    Device ignored;
    if (parse_device(lower, ignored).empty() || lower == "gpu" || starts_with(lower, "gpu:") || lower == "auto")
      return " (device names are lower case)";
  }
  return " (unknown device name)";
}

Device best_device() {
  for (DeviceType t : detail::types_by_priority())
    if (t != DeviceType::cpu && detail::backend_slot(t).device_count > 0) return Device(t, 0);
  return Device(DeviceType::cpu, 0);
}

// select_device's work. `invalid_prefix` starts an InvalidArgument message, `unavailable_prefix`
// an Unavailable one (followed by the text the user wrote).
Device select_impl(std::string_view text, const std::string& invalid_prefix, const std::string& unavailable_prefix) {
  if (text == "auto") return best_device();
  if (text == "gpu" || starts_with(text, "gpu:")) {
    int index = 0;
    std::string err = parse_index(text.substr(3), index);
    if (!err.empty())
      throw InvalidArgument(invalid_prefix + "\"" + std::string(text) + "\" is not a device" + err + "; expected " +
                            device_forms(true));
    std::string reasons;
    for (DeviceType t : detail::types_by_priority()) {
      if (t == DeviceType::cpu) continue;
      const detail::BackendSlot& slot = detail::backend_slot(t);
      reasons += std::string(reasons.empty() ? "" : "; ") + detail::display_name(t) + ": " + slot.reason;
      if (slot.device_count == 0) continue;
      if (index >= slot.device_count)
        throw Unavailable(unavailable_prefix + std::string(text) + ": only " + std::to_string(slot.device_count) + " " +
                          detail::display_name(t) + " device(s) present");
      return Device(t, index);
    }
    throw Unavailable(unavailable_prefix + std::string(text) + ": no GPU is available (" + reasons + ")");
  }
  Device d;
  std::string err = parse_device(text, d);
  if (!err.empty())
    throw InvalidArgument(invalid_prefix + "\"" + std::string(text) + "\" is not a device" + err + "; expected " +
                          device_forms(true));
  std::string problem = detail::device_problem(d);
  if (!problem.empty()) throw Unavailable(unavailable_prefix + std::string(text) + ": " + problem);
  return d;
}

// set_default_device's choice, packed as type << 32 | index so that one atomic holds it; -1 when
// none was set.
std::atomic<std::int64_t> g_default{-1};

DeviceInfo convert(Device device, const porta_device_info_v1& in) {
  auto str = [](const char* s, std::size_t cap) { return std::string(s, strnlen(s, cap)); };
  DeviceInfo out;
  out.device = device;
  out.name = str(in.name, sizeof in.name);
  out.vendor = str(in.vendor, sizeof in.vendor);
  out.arch = str(in.arch, sizeof in.arch);
  out.total_memory = in.total_memory;
  out.free_memory = in.free_memory;
  out.compute_units = in.compute_units;
  out.warp_size = in.warp_size;
  out.max_threads_per_block = in.max_threads_per_block;
  out.driver_version = in.driver_version;
  out.runtime_version = in.runtime_version;
  out.pci_bus_id = in.pci_bus_id;
  return out;
}

}  // namespace

const char* to_string(DeviceType type) noexcept {
  const detail::DeviceTypeFacts* f = detail::facts(type);
  return f != nullptr ? f->name : "unknown";
}

Device Device::parse(std::string_view text) {
  Device d;
  std::string err = parse_device(text, d);
  if (!err.empty())
    throw InvalidArgument("porta::Device::parse: \"" + std::string(text) + "\" is not a device" + err + "; expected " +
                          device_forms(false));
  return d;
}

std::string Device::to_string() const {
  // The CPU is one device; an index on it would only appear on a hand-made Device, and then the
  // text shows it rather than hiding a bad value.
  if (type == DeviceType::cpu && index == 0) return "cpu";
  if (is_strict()) return "cpu:strict";
  return std::string(porta::to_string(type)) + ":" + std::to_string(index);
}

std::vector<Device> devices() {
  std::vector<Device> out;
  for (DeviceType t : detail::types_by_priority()) {
    const int n = detail::backend_slot(t).device_count;
    for (int i = 0; i < n; ++i) out.emplace_back(t, i);
  }
  return out;
}

bool is_available(DeviceType type) {
  const int i = static_cast<int>(type);
  if (i < 0 || i >= kDeviceTypeCount) return false;
  return detail::backend_slot(type).device_count > 0;
}

bool is_available(Device device) {
  if (!is_available(device.type)) return false;
  if (device.is_strict()) return true;
  return device.index >= 0 && device.index < detail::backend_slot(device.type).device_count;
}

std::string unavailable_reason(DeviceType type) {
  const int i = static_cast<int>(type);
  if (i < 0 || i >= kDeviceTypeCount) return detail::unknown_type_message(i);
  return detail::backend_slot(type).reason;
}

Device select_device(std::string_view text) {
  return select_impl(text, "porta::select_device: ", "porta::select_device: ");
}

// PORTA_DEVICE is read on every call that has no set_default_device() choice to return, so a
// program (or a test) may setenv it at any time before asking; parsing it costs well under a
// microsecond next to an allocation. An empty PORTA_DEVICE counts as unset.
Device default_device() {
  const std::int64_t packed = g_default.load(std::memory_order_acquire);
  if (packed >= 0) return Device(static_cast<DeviceType>(packed >> 32), static_cast<int>(packed & 0xffffffff));
  const char* env = std::getenv("PORTA_DEVICE");
  if (env != nullptr && *env != '\0') return select_impl(env, "PORTA_DEVICE: ", "PORTA_DEVICE=");
  return best_device();
}

void set_default_device(Device device) {
  std::string problem = detail::device_problem(device);
  if (!problem.empty()) throw Unavailable("porta::set_default_device: " + device.to_string() + ": " + problem);
  g_default.store((static_cast<std::int64_t>(device.type) << 32) | static_cast<std::uint32_t>(device.index),
                  std::memory_order_release);
}

DeviceInfo device_info(Device device) {
  const porta_backend_v1& t = detail::backend_for(device, "porta::device_info");
  porta_device_info_v1 info{};
  detail::check(t.device_info(device.index, &info), "porta::device_info", device);
  // Backends fill fixed arrays; never trust the terminator.
  info.name[sizeof info.name - 1] = '\0';
  info.vendor[sizeof info.vendor - 1] = '\0';
  info.arch[sizeof info.arch - 1] = '\0';
  return convert(device, info);
}

std::string describe(Device device) {
  const DeviceInfo info = device_info(device);
  const detail::DeviceTypeFacts* f = detail::facts(device.type);
  const char* unit = f != nullptr ? f->units : "units";
  std::string s = device.to_string() + " " + (info.name.empty() ? std::string("(unnamed)") : info.name) + " (" +
                  std::to_string(info.compute_units) + " " + unit;
  if (info.total_memory > 0) s += ", " + detail::format_bytes(info.total_memory);
  return s + ")";
}

std::vector<BackendStatus> backend_status() {
  std::vector<BackendStatus> out;
  for (const detail::DeviceTypeFacts& f : detail::kDeviceTypes) {
    const DeviceType t = f.type;
    const detail::BackendSlot& slot = detail::backend_slot(t);
    BackendStatus s;
    s.type = t;
    s.built = slot.built;
    s.loaded = slot.loaded;
    s.device_count = slot.device_count;
    s.library = slot.library;
    s.build_info = slot.build_info;
    s.reason = slot.reason;
    if (t != DeviceType::cpu && slot.loaded) {
      char info[512] = "";
      const porta_status st = slot.table.coll_available(info, sizeof info);
      s.collectives = st == PORTA_OK;
      if (st == PORTA_OK) {
        s.collectives_info = info;
      } else if (st == PORTA_ERR_UNSUPPORTED && detail::take_missing_entry() != nullptr) {
        s.collectives_info = "the plugin predates the collectives entries";
      } else {
        // "coll_available: NCCL is not available: dlopen(libnccl.so.2) failed: ..." -> after the entry name
        const std::string why = slot.table.last_error();
        const std::string prefix = "coll_available: ";
        s.collectives_info = why.rfind(prefix, 0) == 0 ? why.substr(prefix.size()) : why;
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::string build_info() {
  std::string s = "porta " + std::to_string(PORTA_VERSION_MAJOR) + "." + std::to_string(PORTA_VERSION_MINOR) + "." +
                  std::to_string(PORTA_VERSION_PATCH) + "; " + PORTA_BUILD_COMPILER + ", " + PORTA_BUILD_TYPE +
                  "; backends built: " + PORTA_BACKENDS_BUILT + "; OpenMP: ";
#if defined(PORTA_HAVE_OPENMP)
  s += "yes";
#else
  s += "no";
#endif
  return s;
}

MemoryStats memory_stats(Device device) {
  const porta_backend_v1& t = detail::backend_for(device, "porta::memory_stats");
  porta_memory_stats_v1 in{};
  detail::check(t.memory_stats(device.index, &in), "porta::memory_stats", device);
  MemoryStats out;
  out.bytes_in_use = in.bytes_in_use;
  out.bytes_reserved = in.bytes_reserved;
  out.peak_bytes_in_use = in.peak_bytes_in_use;
  out.alloc_count = in.alloc_count;
  return out;
}

void empty_cache(Device device) {
  const porta_backend_v1& t = detail::backend_for(device, "porta::empty_cache");
  detail::check(t.empty_cache(device.index), "porta::empty_cache", device);
}

void synchronize(Device device) {
  const porta_backend_v1& t = detail::backend_for(device, "porta::synchronize");
  const std::uint64_t fence = detail::tools::active() ? detail::tools::begin_fence("porta::synchronize", device) : 0;
  const porta_status st = t.synchronize(device.index);
  if (fence != 0) detail::tools::end_fence(fence);
  detail::check(st, "porta::synchronize", device);
  detail::raise_kernel_faults(device, "porta::synchronize");
}

}  // namespace porta
