// SPDX-License-Identifier: Apache-2.0
// "Is my GPU being used, and if not, why?" — what porta found on this machine, which device a
// program gets, and what happens when the device you ask for is not there.
//
//   ./devices                     # the default device: cuda:0, else hip:0, else cpu
//   PORTA_DEVICE=cpu ./devices    # the override every porta program honours
//   PORTA_DEVICE=cuda:63 ./devices  # an error that says why, never a silent fallback to the CPU
//
// The vendors' own variables (CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES) keep working underneath.
#include <porta/porta.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/check.hpp"

using example::expect;

namespace {

double gib(std::uint64_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0);
}

}  // namespace

int main() try {
  std::printf("%s\n\n", porta::build_info().c_str());

  // ---- backends: built into this binary? loaded? how many devices? else why not? -----------------
  std::printf("backends:\n");
  for (const porta::BackendStatus& b : porta::backend_status()) {
    std::printf("  %-5s built=%-3s loaded=%-3s devices=%d", porta::to_string(b.type), b.built ? "yes" : "no",
                b.loaded ? "yes" : "no", b.device_count);
    if (!b.library.empty()) std::printf("  (%s)", b.library.c_str());
    std::printf("\n");
    if (!b.reason.empty()) std::printf("        unavailable: %s\n", b.reason.c_str());
  }
  expect(porta::is_available(porta::DeviceType::cpu), "the CPU backend is always available");

  // ---- devices and their properties (torch.cuda.device_count(), get_device_properties) ------------
  std::printf("\ndevices:\n");
  const auto all = porta::devices();
  for (const porta::Device& d : all) {
    const porta::DeviceInfo info = porta::device_info(d);
    std::printf("  %s\n", porta::describe(d).c_str());
    std::printf("      name=%s vendor=%s arch=%s\n", info.name.c_str(), info.vendor.c_str(), info.arch.c_str());
    std::printf("      memory %.1f GiB total, %.1f GiB free; %d compute units; warp %d; %d threads/block\n",
                gib(info.total_memory), gib(info.free_memory), info.compute_units, info.warp_size,
                info.max_threads_per_block);
    if (d.is_gpu())
      std::printf("      driver %d, runtime %d, PCI bus %d\n", info.driver_version, info.runtime_version,
                  info.pci_bus_id);
    expect(info.device == d, "device_info(d).device == d");
    expect(porta::is_available(d), "every listed device is available");
  }
  expect(!all.empty() && all.back() == porta::Device(porta::DeviceType::cpu), "the CPU is listed last");

  // ---- the default device, and the PORTA_DEVICE override -------------------------------------------
  const char* env = std::getenv("PORTA_DEVICE");
  std::printf("\nPORTA_DEVICE=%s\n", env ? env : "(unset)");
  porta::Device dev;
  try {
    dev = porta::default_device();
  } catch (const porta::Error& e) {
    // Asking for a device that is not there stops the program with the reason: running a GPU job
    // on the CPU by accident is worse than not running it.
    std::printf("cannot use the requested device: %s\n", e.what());
    return 3;
  }
  std::printf("default device: %s\n", porta::describe(dev).c_str());
  if (env) expect(dev == porta::select_device(env), "PORTA_DEVICE picks the default device");

  // Strings a user may pass on a command line: "cpu", "cuda:1", "hip:0", "gpu" (first GPU), "auto".
  std::printf("select_device(\"auto\") = %s\n", porta::select_device("auto").to_string().c_str());

  // ---- a device that is not there: Unavailable, with the reason ------------------------------------
  for (const char* name : {"cuda:7", "hip:0", "gpu"}) {
    try {
      const porta::Device d = porta::select_device(name);
      std::printf("select_device(\"%s\") = %s (present on this machine)\n", name, d.to_string().c_str());
      expect(porta::is_available(d), "a selected device is available");
    } catch (const porta::Unavailable& e) {
      std::printf("select_device(\"%s\") throws porta::Unavailable:\n    %s\n", name, e.what());
    }
  }
  // A string that names no device at all is an InvalidArgument.
  try {
    porta::Device::parse("tpu:0");
    expect(false, "Device::parse(\"tpu:0\") throws");
  } catch (const porta::InvalidArgument& e) {
    std::printf("Device::parse(\"tpu:0\") throws porta::InvalidArgument:\n    %s\n", e.what());
  }

  // ---- memory of the default device: porta's pool ------------------------------------------------------
  {
    auto a = porta::zeros<float>({1 << 20}, dev);  // 4 MiB from the pool
    const porta::MemoryStats st = porta::memory_stats(dev);
    std::printf("\nmemory on %s with a 4 MiB array alive: %.1f MiB in use, %.1f MiB reserved, %llu allocations\n",
                dev.to_string().c_str(), static_cast<double>(st.bytes_in_use) / (1 << 20),
                static_cast<double>(st.bytes_reserved) / (1 << 20), static_cast<unsigned long long>(st.alloc_count));
    expect(st.bytes_in_use >= a.nbytes(), "memory_stats counts a live array");
  }

  return example::summary();
} catch (const porta::Error& e) {
  std::fprintf(stderr, "porta error: %s\n", e.what());
  return 2;
}
