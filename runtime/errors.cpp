// SPDX-License-Identifier: Apache-2.0
// Backend status codes to porta::Error subclasses. Backends cannot throw across the C ABI, so
// they return a porta_status and keep a thread-local message; this is the one place that turns
// the pair into an exception whose text starts with the porta function the user called.
#include <cinttypes>
#include <cstdio>
#include <string>

#include "backends/common/backend_error.hpp"
#include "porta/debug.hpp"
#include "porta/detail/runtime.hpp"
#include "porta/error.hpp"
#include "runtime/registry.hpp"

namespace porta::detail {

const char* dtype_name(porta_dtype dt) noexcept {
  return backend::dtype_name(dt);
}

std::size_t dtype_size(porta_dtype dt) noexcept {
  return backend::dtype_size(dt);
}

std::string format_bytes(std::uint64_t bytes) {
  static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  double v = static_cast<double>(bytes) / 1024.0;
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

std::uint64_t free_memory_of(Device device) noexcept {
  try {
    const porta_backend_v1& t = backend_for(device, nullptr);
    porta_device_info_v1 info{};
    if (t.device_info(device.index, &info) == PORTA_OK) return info.free_memory;
    (void)take_missing_entry();
  } catch (...) {
  }
  return 0;
}

void throw_oom(const char* fn, Device device, std::uint64_t requested, const char* backend_message) {
  const std::uint64_t free_bytes = free_memory_of(device);
  std::string msg = std::string(fn) + ": out of memory on " + device.to_string();
  if (requested > 0) msg += " allocating " + format_bytes(requested) + " (" + std::to_string(requested) + " bytes)";
  msg += "; " + format_bytes(free_bytes) + " free";
  if (backend_message != nullptr && *backend_message != '\0') msg += " (" + std::string(backend_message) + ")";
  throw OutOfMemory(msg, device, requested, free_bytes);
}

// A backend error that a user kernel's bad access leaves behind (the vendor's name is in the
// message): the error then names the last user kernel launched on the device.
static bool kernel_may_have_failed(const std::string& message) {
  static const char* const names[] = {"IllegalAddress",    "LaunchFailure",      "IllegalInstruction",
                                      "MisalignedAddress", "HardwareStackError", "InvalidPc"};
  for (const char* n : names)
    if (message.find(n) != std::string::npos) return true;
  return false;
}

void throw_status(porta_status status, const char* fn, Device device) {
  const std::string prefix = std::string(fn ? fn : "porta") + ": ";
  // A stub's record wins: the backend's own last_error would be stale in that case.
  const char* missing = take_missing_entry();
  if (status == PORTA_ERR_UNSUPPORTED && missing != nullptr) {
    throw Unavailable(prefix + "the " + to_string(device.type) + " backend does not provide '" + missing + "' (" +
                      device.to_string() + ")");
  }
  std::string message;
  try {
    const BackendSlot& slot = backend_slot(device.type);
    if (slot.loaded) {
      const char* m = slot.table.last_error();
      if (m != nullptr) message = m;
    }
  } catch (...) {
  }
  switch (status) {
    case PORTA_OK:
      throw Error(prefix + "internal error: throw_status called with PORTA_OK");
    case PORTA_ERR_INVALID:
      throw InvalidArgument(prefix + (message.empty() ? "invalid argument on " + device.to_string() : message));
    case PORTA_ERR_OOM:
      throw_oom(fn ? fn : "porta", device, 0, message.c_str());
    case PORTA_ERR_BACKEND:
      if (kernel_may_have_failed(message)) message += last_launch_note(device);
      throw BackendError(prefix + (message.empty() ? "backend call failed on " + device.to_string() : message));
    case PORTA_ERR_UNAVAILABLE:
      throw Unavailable(prefix + (message.empty() ? device.to_string() + " is not usable" : message));
    case PORTA_ERR_UNSUPPORTED:
      // An op x dtype pair that this backend does not implement: nothing the caller passed is
      // wrong, the feature is missing on this device.
      throw Unavailable(prefix + (message.empty() ? "not supported on " + device.to_string() : message));
  }
  throw BackendError(prefix + "unknown status " + std::to_string(static_cast<int>(status)) +
                     (message.empty() ? std::string() : ": " + message));
}

void throw_invalid(const char* fn, const char* message) {
  throw InvalidArgument(std::string(fn ? fn : "porta") + ": " + (message ? message : "invalid argument"));
}

void throw_moved_from(const char* fn) {
  throw InvalidArgument(std::string(fn ? fn : "porta") + ": the array was moved from (or default-constructed)");
}

}  // namespace porta::detail
