// SPDX-License-Identifier: Apache-2.0
// Untyped memory entry points used by the header templates (Array<T>, factories).
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "porta/debug.hpp"
#include "porta/detail/runtime.hpp"
#include "porta/detail/strict.hpp"
#include "porta/detail/tools.hpp"
#include "porta/error.hpp"
#include "porta/stream.hpp"
#include "runtime/registry.hpp"

namespace porta::detail {

porta_stream stream_for(const Stream& stream, Device device, const char* fn) {
  if (!stream.has_device()) return nullptr;
  if (stream.device() != device)
    throw DeviceMismatch(std::string(fn ? fn : "porta") + ": stream is on " + stream.device().to_string() +
                         ", the arrays on " + device.to_string());
  return static_cast<porta_stream>(stream.native_handle());
}

void* device_alloc(Device device, std::size_t bytes, porta_stream s, const char* fn) {
  // The device is checked even for zero bytes, so an empty array on a device that is not there
  // fails where it is made rather than later.
  const porta_backend_v1& t = backend_for(device, fn);
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  const porta_status st = t.alloc(device.index, bytes, s, &p);
  if (st == PORTA_ERR_OOM) {
    std::string msg = t.last_error();
    throw_oom(fn, device, bytes, msg.c_str());
  }
  check(st, fn, device);
  if (p == nullptr)
    throw BackendError(std::string(fn) + ": the " + to_string(device.type) + " backend returned no memory for " +
                       std::to_string(bytes) + " bytes");
  return p;
}

void device_free(Device device, void* ptr, porta_stream s) noexcept {
  if (ptr == nullptr) return;
  try {
    const porta_backend_v1& t = backend_for(device, nullptr);
    // A failing free cannot be reported from a destructor; the backend keeps its message.
    (void)t.free(device.index, ptr, s);
    (void)take_missing_entry();
  } catch (...) {
  }
}

void describe_allocation(Device device, const void* ptr, porta_dtype dt, const std::int64_t* dims, int rank) noexcept {
  if (device.is_strict()) strict_describe(ptr, dt, dims, rank);
}

void check_borrow(Device device, const void* ptr, std::size_t bytes, const char* fn) {
  if (device.is_strict()) {
    strict_check_borrow(ptr, bytes, fn);
    return;
  }
  const porta_backend_v1& t = backend_for(device, fn);
  const porta_status st = t.check_pointer(device.index, ptr, bytes);
  // A plugin built before the check existed cannot say; the borrow goes ahead as it did then.
  if (st == PORTA_ERR_UNSUPPORTED && take_missing_entry() != nullptr) return;
  if (st == PORTA_ERR_INVALID) throw_invalid(fn, t.last_error());
  check(st, fn, device);
}

void* host_alloc(Device device, std::size_t bytes, const char* fn) {
  const porta_backend_v1& t = backend_for(device, fn);
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  const porta_status st = t.host_alloc(bytes, &p);
  if (st == PORTA_ERR_OOM) {
    std::string msg = t.last_error();
    throw_oom(fn, Device(DeviceType::cpu, 0), bytes, msg.c_str());
  }
  check(st, fn, device);
  if (p == nullptr)
    throw BackendError(std::string(fn) + ": the " + to_string(device.type) + " backend returned no host memory for " +
                       std::to_string(bytes) + " bytes");
  return p;
}

void host_free(Device device, void* ptr) noexcept {
  if (ptr == nullptr) return;
  try {
    (void)backend_for(device, nullptr).host_free(ptr);
    (void)take_missing_entry();
  } catch (...) {
  }
}

namespace {
// Ends the deep copy the tools were told of, also when the copy throws.
struct CopyReport {
  bool on;
  explicit CopyReport(bool report) noexcept : on(report) {}
  CopyReport(const CopyReport&) = delete;
  CopyReport& operator=(const CopyReport&) = delete;
  ~CopyReport() {
    if (on) tools::end_deep_copy();
  }
};
}  // namespace

void copy_to_host(Device src_device, const void* src, void* dst, std::size_t bytes, porta_stream s, bool sync) {
  constexpr const char* fn = "porta::copy_to_host";
  const porta_backend_v1& t = backend_for(src_device, fn);
  const bool report = tools::active() && bytes > 0;
  if (report) tools::begin_deep_copy(Device(DeviceType::cpu, 0), nullptr, dst, src_device, nullptr, src, bytes);
  const CopyReport done(report);
  if (bytes > 0) check(t.copy(src_device.index, dst, src, bytes, PORTA_COPY_DEVICE_TO_HOST, s), fn, src_device);
  // Synchronise even for zero bytes: the caller also waits for the stream's earlier work.
  if (sync) {
    check(t.stream_synchronize(src_device.index, s), fn, src_device);
    raise_kernel_faults(src_device, fn);
  }
}

void copy_from_host(Device dst_device, void* dst, const void* src, std::size_t bytes, porta_stream s, bool sync) {
  constexpr const char* fn = "porta::copy_from_host";
  const porta_backend_v1& t = backend_for(dst_device, fn);
  const bool report = tools::active() && bytes > 0;
  if (report) tools::begin_deep_copy(dst_device, nullptr, dst, Device(DeviceType::cpu, 0), nullptr, src, bytes);
  const CopyReport done(report);
  if (bytes > 0) check(t.copy(dst_device.index, dst, src, bytes, PORTA_COPY_HOST_TO_DEVICE, s), fn, dst_device);
  if (sync) check(t.stream_synchronize(dst_device.index, s), fn, dst_device);
}

namespace {
// One small pinned block per thread and GPU backend, made on first use and freed when the thread
// ends. nullptr when the backend cannot pin (the caller then copies to pageable memory).
class PinnedBounce {
 public:
  static constexpr std::size_t kBytes = kPinnedScratchBytes;
  // A reduction called later in this thread's teardown (a static destructor on the main thread
  // runs after thread_local ones) finds no buffer and copies to pageable memory instead.
  ~PinnedBounce() {
    for (int t = 0; t < kTypes; ++t) {
      if (p_[t] != nullptr) host_free(Device(static_cast<DeviceType>(t), 0), p_[t]);
      p_[t] = nullptr;
      failed_[t] = true;
    }
  }
  void* get(Device d) {
    const int t = static_cast<int>(d.type);
    if (t < 0 || t >= kTypes || failed_[t]) return nullptr;
    if (p_[t] == nullptr) {
      try {
        p_[t] = host_alloc(d, kBytes, "porta::copy_small_to_host");
      } catch (...) {
        failed_[t] = true;
      }
    }
    return p_[t];
  }

 private:
  static constexpr int kTypes = kDeviceTypeCount;
  void* p_[kTypes] = {nullptr, nullptr, nullptr};
  bool failed_[kTypes] = {false, false, false};
};
}  // namespace

void* pinned_scratch(Device device) noexcept {
  if (device.type == DeviceType::cpu) return nullptr;
  thread_local PinnedBounce pinned;
  return pinned.get(device);
}

void copy_small_to_host(Device src_device, const void* src, void* dst, std::size_t bytes, porta_stream s) {
  void* bounce = bytes <= PinnedBounce::kBytes ? pinned_scratch(src_device) : nullptr;
  if (bounce == nullptr) {
    copy_to_host(src_device, src, dst, bytes, s, true);
    return;
  }
  copy_to_host(src_device, src, bounce, bytes, s, true);
  std::memcpy(dst, bounce, bytes);
}

// `s` belongs to src_device (it is also dst_device's when they are one device). Between two devices
// of one GPU backend the copy is the backend's copy_peer: over the link where the pair has peer
// access, asynchronous, ordered after dst_device's queued work and before its later work. Between
// backends it goes through host memory and is synchronous (the staging buffer is gone on return).
void copy_between(Device dst_device, void* dst, Device src_device, const void* src, std::size_t bytes, porta_stream s) {
  constexpr const char* fn = "porta::copy";
  if (dst_device == src_device) {
    const porta_backend_v1& t = backend_for(dst_device, fn);
    if (bytes == 0 || dst == src) return;
    const bool report = tools::active();
    if (report) tools::begin_deep_copy(dst_device, nullptr, dst, src_device, nullptr, src, bytes);
    const CopyReport done(report);
    check(t.copy(dst_device.index, dst, src, bytes, PORTA_COPY_DEVICE_TO_DEVICE, s), fn, dst_device);
    return;
  }
  backend_for(dst_device, fn);
  backend_for(src_device, fn);
  // A copy with host memory on one side (the CPU's) needs no staging buffer.
  if (dst_device.host_accessible()) {
    copy_to_host(src_device, src, dst, bytes, s, true);
    return;
  }
  if (src_device.host_accessible()) {
    copy_from_host(dst_device, dst, src, bytes, nullptr, true);
    return;
  }
  if (bytes == 0) return;
  if (dst_device.type == src_device.type) {
    const porta_backend_v1& t = backend_for(src_device, fn);
    const bool report = tools::active();
    if (report) tools::begin_deep_copy(dst_device, nullptr, dst, src_device, nullptr, src, bytes);
    const CopyReport done(report);
    check(t.copy_peer(src_device.index, src, dst_device.index, dst, bytes, s), fn, src_device);
    return;
  }
  std::unique_ptr<unsigned char[]> staging(new (std::nothrow) unsigned char[bytes]);
  if (!staging) throw_oom(fn, Device(DeviceType::cpu, 0), bytes, "staging buffer for a copy between devices");
  copy_to_host(src_device, src, staging.get(), bytes, s, true);
  copy_from_host(dst_device, dst, staging.get(), bytes, nullptr, true);
}

void fill(Device device, porta_dtype dt, std::int64_t n, porta_scalar value, void* y, porta_stream s) {
  constexpr const char* fn = "porta::fill";
  const porta_backend_v1& t = backend_for(device, fn);
  if (n < 0) throw_invalid(fn, ("n is negative (" + std::to_string(n) + ")").c_str());
  if (n == 0) return;
  check(t.fill(device.index, dt, n, value, y, s), fn, device);
}

void iota(Device device, porta_dtype dt, std::int64_t n, porta_scalar start, porta_scalar step, void* y,
          porta_stream s) {
  constexpr const char* fn = "porta::iota";
  const porta_backend_v1& t = backend_for(device, fn);
  if (n < 0) throw_invalid(fn, ("n is negative (" + std::to_string(n) + ")").c_str());
  if (n == 0) return;
  check(t.iota(device.index, dt, n, start, step, y, s), fn, device);
}

}  // namespace porta::detail
