// SPDX-License-Identifier: Apache-2.0
// Devices: what the machine has, and which one porta uses.
//
//   porta::Device dev = porta::default_device();  // PORTA_DEVICE, else cuda:0, else hip:0, else cpu
//   std::cout << porta::describe(dev) << "\n";    // "cuda:0 NVIDIA H200 (132 SMs, 139.8 GiB)"
//   if (!porta::is_available(porta::DeviceType::hip))
//     std::cout << porta::unavailable_reason(porta::DeviceType::hip) << "\n";
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace porta {

// cpu = 0, cuda = 1, hip = 2: one per line of porta/abi/device_types.inc.
enum class DeviceType : int {
#define PORTA_DEVICE_TYPE(name, NAME, value, ...) name = value,
#include "porta/abi/device_types.inc"
#undef PORTA_DEVICE_TYPE
};

inline constexpr int kDeviceTypeCount = 0
#define PORTA_DEVICE_TYPE(...) +1
#include "porta/abi/device_types.inc"
#undef PORTA_DEVICE_TYPE
    ;

namespace detail {

// What porta knows about a device type, from porta/abi/device_types.inc (its columns are
// documented there). Device names, selection order, messages and porta-info read this table, so
// that a new type is one line there plus its backend folder.
struct DeviceTypeFacts {
  DeviceType type;
  const char* name;          // "cuda"
  const char* display_name;  // "CUDA"
  const char* units;         // "SMs"
  int priority;              // default_device() order, lower first
  const char* option;        // CMake: PORTA_ENABLE_<option>
  const char* visible_env;   // "CUDA_VISIBLE_DEVICES", or ""
};

inline constexpr DeviceTypeFacts kDeviceTypes[] = {
#define PORTA_DEVICE_TYPE(name, NAME, value, display, units, priority, option, visible) \
  {DeviceType::name, #name, display, units, priority, option, visible},
#include "porta/abi/device_types.inc"
#undef PORTA_DEVICE_TYPE
};
static_assert(sizeof(kDeviceTypes) / sizeof(kDeviceTypes[0]) == static_cast<std::size_t>(kDeviceTypeCount));

constexpr bool device_types_dense() {
  for (int i = 0; i < kDeviceTypeCount; ++i)
    if (static_cast<int>(kDeviceTypes[i].type) != i) return false;
  return true;
}
static_assert(device_types_dense(), "device_types.inc: values must be 0, 1, 2, ... in list order");

// The facts of `type`; nullptr for a value outside the enum.
constexpr const DeviceTypeFacts* facts(DeviceType type) noexcept {
  const int i = static_cast<int>(type);
  return i >= 0 && i < kDeviceTypeCount ? &kDeviceTypes[i] : nullptr;
}

}  // namespace detail

// "cpu", "cuda", "hip"
const char* to_string(DeviceType type) noexcept;

struct Device {
  DeviceType type = DeviceType::cpu;
  int index = 0;

  constexpr Device() = default;
  constexpr Device(DeviceType t, int i = 0) : type(t), index(i) {}

  // "cpu", "cpu:0", "cpu:strict", "cuda", "cuda:1", "hip:0" (case-sensitive, no spaces). Throws
  // InvalidArgument for anything else. Availability is not checked: see select_device().
  static Device parse(std::string_view text);
  std::string to_string() const;  // "cuda:1"; the CPU is "cpu", the strict CPU "cpu:strict"

  // cpu:strict: the CPU as a separate address space, for CI (docs/strict.md). Its arrays cannot
  // be read or written by host code outside porta's calls and kernels, and its streams complete
  // only at synchronize, so code that would break on a GPU breaks here too:
  //   auto x = porta::zeros<float>({n}, porta::Device::cpu_strict());
  //   float v = x.data()[0];          // faults, with a report naming x and what to do
  static constexpr Device cpu_strict() noexcept { return Device(DeviceType::cpu, kCpuStrictIndex); }
  constexpr bool is_strict() const noexcept { return type == DeviceType::cpu && index == kCpuStrictIndex; }
  // The index that marks cpu:strict: a backend of its own (backends/strict) that shares the CPU's
  // device type, so it is never one of devices() and never a "cpu:N" a user can type.
  static constexpr int kCpuStrictIndex = 0x7374;  // "st"

  constexpr bool is_gpu() const noexcept { return type != DeviceType::cpu; }
  // Whether this device's memory is host memory that host code may read and write between porta's
  // calls, with the device's work done when a call returns: the CPU's is. A GPU's is not, nor is
  // cpu:strict's, which stands for a GPU's: host code reaches it only through copies, and work on
  // it waits on its stream. The CPU work of porta's templates (user kernels on cpu:strict) is then
  // queued on the device's stream. An inline test, free on every call.
  constexpr bool host_accessible() const noexcept { return type == DeviceType::cpu && !is_strict(); }
  friend constexpr bool operator==(Device a, Device b) noexcept { return a.type == b.type && a.index == b.index; }
  friend constexpr bool operator!=(Device a, Device b) noexcept { return !(a == b); }
};

// Every usable device: CUDA devices, then HIP devices, then the CPU (always present).
std::vector<Device> devices();

bool is_available(DeviceType type);
bool is_available(Device device);

// Why a backend has no usable device ("porta was built without HIP support (configure with
// -DPORTA_ENABLE_HIP=ON)", "CUDA driver is not installed (cudaErrorInsufficientDriver)", ...);
// empty when it is available.
std::string unavailable_reason(DeviceType type);

// Like parse, but also accepts "gpu" / "gpu:N" (first CUDA, else HIP) and "auto" (best device),
// and checks availability: a device that is not there is an Unavailable error that says why,
// never a silent fallback.
Device select_device(std::string_view text);

// The device used when none is named: set_default_device()'s, else PORTA_DEVICE's (through
// select_device), else cuda:0, else hip:0, else cpu. PORTA_DEVICE is read on every call (an empty
// value counts as unset), so a program may set it any time before it asks.
Device default_device();
void set_default_device(Device device);

struct DeviceInfo {
  Device device;
  std::string name;
  std::string vendor;
  std::string arch;
  std::uint64_t total_memory = 0;
  std::uint64_t free_memory = 0;
  int compute_units = 0;
  int warp_size = 0;
  int max_threads_per_block = 0;
  int driver_version = 0;
  int runtime_version = 0;
  int pci_bus_id = -1;
};

DeviceInfo device_info(Device device);

// One line: "cuda:0 NVIDIA H200 (132 SMs, 139.8 GiB)".
std::string describe(Device device);

// What porta-info reports for each backend.
struct BackendStatus {
  DeviceType type = DeviceType::cpu;
  bool built = false;   // configured into this build
  bool loaded = false;  // plugin loaded and ABI accepted
  int device_count = 0;
  std::string library;     // path of the plugin that loaded, or was tried
  std::string build_info;  // the backend's own one-line build description
  std::string reason;      // why it is unavailable; empty when available
  // A GPU backend's library of collectives between its devices (NCCL, RCCL), loaded by
  // the plugin: collectives_info is "NCCL 2.28.9 (/usr/lib/libnccl.so.2)" when it loaded, else why
  // not; both empty for the CPU and for a backend that did not load.
  bool collectives = false;
  std::string collectives_info;
};
std::vector<BackendStatus> backend_status();

// The build: version, compiler, options, backends configured.
std::string build_info();

struct MemoryStats {
  std::uint64_t bytes_in_use = 0;
  std::uint64_t bytes_reserved = 0;
  std::uint64_t peak_bytes_in_use = 0;
  std::uint64_t alloc_count = 0;
};
MemoryStats memory_stats(Device device);
// memory_stats as text, with the live memory of labelled arrays by label (Array's label), largest
// first, and the rest as "(unlabelled)":
//   std::cerr << porta::memory_report(dev);
std::string memory_report(Device device);
// Returns cached pool memory to the driver / system.
void empty_cache(Device device);

// Waits for all work on the device.
void synchronize(Device device);

}  // namespace porta
