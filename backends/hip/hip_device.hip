// SPDX-License-Identifier: Apache-2.0
// Errors, device enumeration and device properties of the HIP plugin.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "backends/hip/hip_backend.hpp"
#include "backends/hip/hip_common.hpp"

namespace porta::detail::hip {

const char* describe(hipError_t e) noexcept {
  thread_local char buf[256];
  const char* name = hipGetErrorName(e);
  const char* text = hipGetErrorString(e);
  if (name == nullptr) name = "hipError?";
  if (text == nullptr || std::strcmp(name, text) == 0) {
    std::snprintf(buf, sizeof buf, "%s (%d)", name, static_cast<int>(e));
  } else {
    std::snprintf(buf, sizeof buf, "%s (%d: %s)", name, static_cast<int>(e), text);
  }
  return buf;
}

porta_status fail(hipError_t e, const char* fn, const char* call) noexcept {
  porta_status status = PORTA_ERR_BACKEND;
  if (e == hipErrorOutOfMemory || e == hipErrorMemoryAllocation) {
    status = PORTA_ERR_OOM;
  } else if (e == hipErrorNoDevice || e == hipErrorInvalidDevice || e == hipErrorInsufficientDriver) {
    status = PORTA_ERR_UNAVAILABLE;
  }
  // The call text is the source expression; its name up to '(' is what a reader looks for.
  const char* paren = std::strchr(call, '(');
  const int len = paren ? static_cast<int>(paren - call) : static_cast<int>(std::strlen(call));
  return set_error(status, "%s: %.*s failed: %s", fn, len, call, describe(e));
}

namespace {

// Why hipGetDeviceCount found nothing, in terms a user can act on. The HIP runtime reports the
// same hipErrorNoDevice whether the kernel driver is missing, the container lacks /dev/kfd, the
// user may not open it, or the visibility variables hide every GPU, so look at those first.
std::string no_device_reason(hipError_t e, int n) {
  std::string why;
  struct stat st {};
  if (stat("/dev/kfd", &st) != 0) {
    why =
        "no ROCm-capable AMD GPU: /dev/kfd does not exist (the amdgpu kernel driver is not loaded, or the "
        "device is not passed into this container)";
  } else if (access("/dev/kfd", R_OK | W_OK) != 0) {
    why =
        "no ROCm-capable AMD GPU usable: /dev/kfd exists but this user may not open it (add the user to "
        "the 'render' and 'video' groups)";
  } else if (e == hipErrorInsufficientDriver) {
    why = "the AMD GPU driver is too old for this HIP runtime";
  } else {
    why = "no ROCm-capable AMD GPU found";
  }
  for (const char* var : {"HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"}) {
    if (const char* v = std::getenv(var)) why += std::string(" (") + var + "=\"" + v + "\")";
  }
  if (e != hipSuccess) {
    why += std::string(" (HIP runtime: hipGetDeviceCount: ") + describe(e) + ")";
  } else if (n == 0) {
    why += " (HIP runtime: hipGetDeviceCount returned 0)";
  }
  return why;
}

}  // namespace

int device_count_cached(const char** reason) noexcept {
  static std::once_flag once;
  static int count = 0;
  static std::string why;
  try {
    std::call_once(once, [] {
      int n = 0;
      const hipError_t e = hipGetDeviceCount(&n);
      if (e != hipSuccess || n <= 0) {
        count = 0;
        why = no_device_reason(e, e == hipSuccess ? n : 0);
        // A failed enumeration leaves a sticky last error in some HIP versions; clear it so that
        // it does not surface in an unrelated later call.
        (void)hipGetLastError();
      } else {
        count = n;
      }
    });
  } catch (...) {
    // call_once throws only std::system_error (threads unavailable) or our lambda's bad_alloc.
    if (reason) *reason = "HIP device enumeration failed inside porta (out of memory?)";
    return 0;
  }
  if (reason) *reason = count == 0 ? why.c_str() : "";
  return count;
}

porta_status check_device(int dev, const char* fn) noexcept {
  const char* why = nullptr;
  const int n = device_count_cached(&why);
  if (n == 0) return set_error(PORTA_ERR_UNAVAILABLE, "%s: hip:%d is not available: %s", fn, dev, why);
  if (dev < 0 || dev >= n)
    return set_error(PORTA_ERR_INVALID, "%s: device index %d out of range (this process sees %d HIP device%s)", fn, dev,
                     n, n == 1 ? "" : "s");
  return PORTA_OK;
}

DeviceGuard::DeviceGuard(int dev, const char* fn) noexcept {
  status_ = check_device(dev, fn);
  if (status_ != PORTA_OK) return;
  int current = -1;
  hipError_t e = hipGetDevice(&current);
  if (e != hipSuccess) {
    status_ = fail(e, fn, "hipGetDevice");
    return;
  }
  if (current == dev) return;
  e = hipSetDevice(dev);
  if (e != hipSuccess) {
    status_ = fail(e, fn, "hipSetDevice");
    return;
  }
  previous_ = current;
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) (void)hipSetDevice(previous_);
}

// ---- ABI entries --------------------------------------------------------------------------------

int device_count(const char** reason) noexcept {
  return device_count_cached(reason);
}

porta_status device_info(int dev, porta_device_info_v1* out) noexcept {
  constexpr const char* fn = "device_info";
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "%s: out is NULL", fn);
  DeviceGuard guard(dev, fn);
  if (guard.status() != PORTA_OK) return guard.status();
  hipDeviceProp_t p{};
  PORTA_HIP_CHECK(fn, hipGetDeviceProperties(&p, dev));
  std::memset(out, 0, sizeof *out);
  std::snprintf(out->name, sizeof out->name, "%s", p.name[0] ? p.name : p.gcnArchName);
  std::snprintf(out->vendor, sizeof out->vendor, "AMD");
  // The full target id ("gfx90a:sramecc+:xnack-"): code objects are built per feature setting.
  std::snprintf(out->arch, sizeof out->arch, "%s", p.gcnArchName);
  std::size_t free_bytes = 0, total_bytes = 0;
  PORTA_HIP_CHECK(fn, hipMemGetInfo(&free_bytes, &total_bytes));
  out->total_memory = total_bytes ? total_bytes : p.totalGlobalMem;
  out->free_memory = free_bytes;
  out->compute_units = p.multiProcessorCount;
  // 64 on CDNA (gfx90a), 32 on RDNA (gfx1030): always the device's own value.
  out->warp_size = p.warpSize;
  out->max_threads_per_block = p.maxThreadsPerBlock;
  int v = 0;
  out->driver_version = hipDriverGetVersion(&v) == hipSuccess ? v : 0;
  v = 0;
  out->runtime_version = hipRuntimeGetVersion(&v) == hipSuccess ? v : 0;
  out->pci_bus_id = p.pciBusID;
  return PORTA_OK;
}

porta_status synchronize(int dev) noexcept {
  constexpr const char* fn = "synchronize";
  DeviceGuard guard(dev, fn);
  if (guard.status() != PORTA_OK) return guard.status();
  PORTA_HIP_CHECK(fn, hipDeviceSynchronize());
  return PORTA_OK;
}

}  // namespace porta::detail::hip
