// SPDX-License-Identifier: Apache-2.0
// Failures reported from inside kernels (porta/debug.hpp): one fault record per GPU device, which
// that device's kernels write (detail/gpu/faults.cuh), the name of the kernel last launched on each
// device, CPU faults of queued (cpu:strict) kernels, and the raise after every wait of libporta.
//
// The record lives in pinned host memory, mapped into every device (unified addressing), so that
// looking at it after a wait is a plain load, no vendor call; its claim word, which only devices
// touch, is in device memory. Records, claims and names live as long as the process: a kernel may
// still write a record while static destructors run, and freeing pinned memory then would race the
// driver's own teardown.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <string>

#include "porta/debug.hpp"
#include "porta/detail/runtime.hpp"
#include "porta/error.hpp"

namespace porta::detail {
namespace {

constexpr int kMaxIndex = 64;  // devices per type with a record (as detail/gpu/faults.cuh)

struct DeviceFaults {
  std::mutex lock;                            // name, pending and making the record
  std::atomic<FaultRecord*> record{nullptr};  // set once, read by waits without the lock
  unsigned* claim = nullptr;
  bool record_failed = false;  // pinning failed once: do not retry every launch
  // The last launched kernel's name: a pointer that stays valid for the process's life (a default
  // name's static or an interned one: stable_name), stored without a lock, because every launch
  // stores it and a launch is held to a fraction of a microsecond. nullptr: none launched yet.
  std::atomic<const char*> name{nullptr};
  // User kernel launches since the last check. Counted with a load and a store, not an atomic add:
  // launches from several threads at once may count one too few, which only changes the wording of
  // an error ("one of N kernels"), never which error.
  std::atomic<std::uint64_t> launches{0};
  std::atomic<bool> has_pending{false};  // a queued CPU kernel's fault waits in `pending`
  std::string pending;
};

std::atomic<DeviceFaults*> g_devices[kDeviceTypeCount][kMaxIndex];
std::atomic<DeviceFaults*> g_strict;  // cpu:strict, whose index is a tag, not a count
std::mutex g_make;

// The state of `device`, made on first use when `make`; nullptr for an index past kMaxIndex.
DeviceFaults* state_of(Device device, bool make) {
  const int t = static_cast<int>(device.type), i = device.index;
  std::atomic<DeviceFaults*>* slot = nullptr;
  if (device.is_strict()) {
    slot = &g_strict;
  } else {
    if (t < 0 || t >= kDeviceTypeCount || i < 0 || i >= kMaxIndex) return nullptr;
    slot = &g_devices[t][i];
  }
  DeviceFaults* d = slot->load(std::memory_order_acquire);
  if (d != nullptr || !make) return d;
  std::lock_guard<std::mutex> guard(g_make);
  d = slot->load(std::memory_order_relaxed);
  if (d == nullptr) {
    d = new (std::nothrow) DeviceFaults();  // kept for the process's life (see the top)
    slot->store(d, std::memory_order_release);
  }
  return d;
}

std::string copy_name(const DeviceFaults& d) {
  const char* n = d.name.load(std::memory_order_acquire);
  return n != nullptr ? std::string(n) : std::string();
}

}  // namespace

FaultSlot gpu_fault_slot(Device device) noexcept {
  DeviceFaults* d = state_of(device, true);
  if (d == nullptr || device.type == DeviceType::cpu) return {nullptr, nullptr};
  std::lock_guard<std::mutex> guard(d->lock);
  if (FaultRecord* r = d->record.load(std::memory_order_relaxed); r != nullptr) return {d->claim, r};
  if (d->record_failed) return {nullptr, nullptr};
  void* host = nullptr;
  void* claim = nullptr;
  try {
    host = host_alloc(device, sizeof(FaultRecord), "porta: the kernel fault record");
    claim = device_alloc(device, 256, nullptr, "porta: the kernel fault record");
    const unsigned zero = 0;
    copy_from_host(device, claim, &zero, sizeof zero, nullptr, true);
  } catch (...) {
    if (host != nullptr) host_free(device, host);
    if (claim != nullptr) device_free(device, claim, nullptr);
    d->record_failed = true;
    return {nullptr, nullptr};
  }
  auto* r = new (host) FaultRecord{};
  r->state = 0;
  d->claim = static_cast<unsigned*>(claim);
  d->record.store(r, std::memory_order_release);  // after the claim: a wait that sees it sees both
  return {d->claim, r};
}

void note_launch(Device device, const char* name) noexcept {
  DeviceFaults* d = state_of(device, true);
  if (d == nullptr) return;
  d->launches.store(d->launches.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  d->name.store(name != nullptr ? name : "", std::memory_order_release);
}

void defer_fault(Device device, const KernelFault& fault, const char* name) {
  DeviceFaults* d = state_of(device, true);
  if (d == nullptr) throw KernelError(kernel_error_message(nullptr, name, device, describe_fault(fault.info())));
  std::lock_guard<std::mutex> guard(d->lock);
  if (d->has_pending.load(std::memory_order_relaxed)) return;  // the first failure is the one reported
  d->pending = (name != nullptr && *name != '\0' ? "kernel '" + std::string(name) + "' " : std::string("kernel ")) +
               "on " + device.to_string() + ": " + describe_fault(fault.info());
  d->has_pending.store(true, std::memory_order_release);
}

void raise_kernel_faults(Device device, const char* fn) {
  DeviceFaults* d = state_of(device, false);
  if (d == nullptr) return;
  // Nothing is built before a failure is found: this runs after every wait.
  const auto prefix = [fn] { return std::string(fn != nullptr ? fn : "porta") + ": "; };
  if (d->has_pending.load(std::memory_order_acquire)) {
    std::string what;
    {
      std::lock_guard<std::mutex> guard(d->lock);
      what = std::move(d->pending);
      d->pending.clear();
      d->has_pending.store(false, std::memory_order_relaxed);
    }
    if (!what.empty()) throw KernelError(prefix() + what);
  }
  FaultRecord* r = d->record.load(std::memory_order_acquire);
  // A load and a store, not an exchange (a locked instruction on every wait): see `launches`.
  const std::uint64_t launches = d->launches.load(std::memory_order_relaxed);
  if (launches != 0) d->launches.store(0, std::memory_order_relaxed);
  if (r == nullptr || r->state == 0) return;
  std::atomic_thread_fence(std::memory_order_acquire);
  const FaultInfo info = r->info;
  const std::string name = copy_name(*d);
  // Free the record for the next failure before raising this one: the state first, then the
  // claim (the devices' side), so that no kernel writes a record the host is about to clear.
  r->state = 0;
  const unsigned zero = 0;
  try {
    copy_from_host(device, d->claim, &zero, sizeof zero, nullptr, true);
  } catch (...) {  // a device that is gone: the error below matters more
  }
  // Which kernel failed is known for certain only when one was launched since the last check.
  std::string who;
  if (launches <= 1) {
    who = name.empty() ? "kernel on " + device.to_string() : "kernel '" + name + "' on " + device.to_string();
  } else {
    who = "a kernel on " + device.to_string() + " (one of " + std::to_string(launches) +
          " launched since the last wait; the last was " + (name.empty() ? "unnamed" : "'" + name + "'") + ")";
  }
  throw KernelError(prefix() + who + ": " + describe_fault(info));
}

std::string last_launch_note(Device device) {
  DeviceFaults* d = state_of(device, false);
  if (d == nullptr) return {};
  if (d->name.load(std::memory_order_acquire) == nullptr) return {};
  const std::string name = copy_name(*d);
  return " (the last user kernel launched on " + device.to_string() + " was " +
         (name.empty() ? std::string("unnamed") : "'" + name + "'") + ")";
}

}  // namespace porta::detail
