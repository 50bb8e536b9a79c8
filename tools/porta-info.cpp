// SPDX-License-Identifier: Apache-2.0
// porta-info: answers "is my GPU being used, and if not, why?".
//
//   porta-info            human-readable report
//   porta-info --json     the same as one JSON object, for scripts
//
// Exit status: 0 when the report was printed (GPUs being unavailable is a finding, not an error);
// 1 when PORTA_DEVICE is set to something invalid or unavailable, since every porta program run
// in this environment would fail the same way; 2 for a bad command line.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cpu/cpu_blas.hpp"
#include "backends/cpu/cpu_kernels.hpp"
#include "distributed/engine.hpp"
#include "porta/detail/config.hpp"
#include "porta/porta.hpp"
#include "porta/rtc.hpp"

namespace {

// The environment paragraph names every device type, plugin and visibility variable of the
// device-type table (porta/abi/device_types.inc).
std::string usage() {
  std::string forms, plugins, visible;
  for (const porta::detail::DeviceTypeFacts& f : porta::detail::kDeviceTypes) {
    forms += std::string(f.name) + ", " + (f.type == porta::DeviceType::cpu ? "" : std::string(f.name) + ":N, ");
    if (f.type == porta::DeviceType::cpu) continue;
    plugins += std::string(plugins.empty() ? "" : " and ") + "libporta_" + f.name + ".so";
    if (*f.visible_env != '\0') visible += std::string(visible.empty() ? "" : " / ") + f.visible_env;
  }
  return "usage: porta-info [--json] [--help]\n"
         "\n"
         "Prints porta's version and build, each backend (built? loaded? plugin path, device count, why\n"
         "unavailable), CPU matmul (the CPU's instruction sets from CPUID, the BLAS and the core\n"
         "OpenBLAS runs, whether float and double gemm use it or porta's own kernel, and why), every\n"
         "device with its properties, the default device, and the engines of porta::distributed\n"
         "(MPI: built? loaded? version, GPU-aware?; MPI is not initialised).\n"
         "\n"
         "  --json   print the report as one JSON object\n"
         "  --help   print this text\n"
         "\n"
         "Environment: PORTA_DEVICE (default device: " +
         forms + "gpu, gpu:N, auto),\nPORTA_BACKEND_PATH (colon-separated directories searched first for " + plugins +
         "),\n" + visible +
         " (honoured by the vendor runtimes),\nOPENBLAS_CORETYPE (OpenBLAS's core; porta never overrides it).\n"
         "Exit status: 0, or 1 when PORTA_DEVICE is invalid or names an unavailable device.\n";
}

std::string version() {
  return std::to_string(PORTA_VERSION_MAJOR) + "." + std::to_string(PORTA_VERSION_MINOR) + "." +
         std::to_string(PORTA_VERSION_PATCH);
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);  // UTF-8 passes through unchanged
        }
    }
  }
  return out + "\"";
}

std::string gib(std::uint64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

// CUDA encodes versions as 1000*major + 10*minor; HIP as 10000000*major + 100000*minor + patch;
// OpenMP as its yyyymm date. Shown raw and decoded where the encoding is known.
std::string version_text(porta::DeviceType t, int v, bool driver) {
  if (v <= 0) return "none";
  char buf[64];
  if (t == porta::DeviceType::cuda) {
    std::snprintf(buf, sizeof buf, "%d.%d (%d)", v / 1000, (v % 1000) / 10, v);
  } else if (t == porta::DeviceType::hip) {
    std::snprintf(buf, sizeof buf, "%d.%d.%d (%d)", v / 10000000, (v / 100000) % 100, v % 100000, v);
  } else if (!driver) {
    std::snprintf(buf, sizeof buf, "OpenMP %d", v);
  } else {
    std::snprintf(buf, sizeof buf, "%d", v);
  }
  return buf;
}

struct DeviceReport {
  porta::DeviceInfo info;
  std::string describe;
  std::string error;  // device_info failed
};

// An engine of porta::distributed under its JSON key ("mpi"). MPI's status comes from
// mpi_status(false), which loads libporta_mpi.so without initialising MPI (porta-info is no MPI
// job); another engine fills the same fields.
struct Transport {
  std::string name;
  porta::detail::dist::MpiStatus s;
};

// Run-time compiled kernels (porta/rtc.hpp) of a backend: its compiler and target, or why not.
struct Rtc {
  bool available = false;
  std::string text;
};

Rtc rtc_status(const porta::BackendStatus& b) {
  Rtc r;
  if (!b.loaded || b.device_count == 0) {
    r.text = b.reason.empty() ? std::string("the backend has no device") : b.reason;
    return r;
  }
  try {
    r.text = porta::rtc::compiler_info(porta::Device(b.type, 0));
    r.available = true;
  } catch (const std::exception& e) {
    r.text = e.what();
  }
  return r;
}

struct Report {
  std::string version;
  std::string build;
  std::vector<porta::BackendStatus> backends;
  std::vector<DeviceReport> devices;
  std::optional<std::string> porta_device_env;
  std::optional<porta::Device> default_device;
  std::string default_error;  // why default_device() failed
  std::vector<Transport> transports;
  std::vector<Rtc> rtc;  // one per backend, in backends' order
  // CPU matmul: the CPU's instruction sets, the BLAS and its core, the path float and double take.
  porta::detail::cpu::CpuIsa cpu_isa;
  porta::detail::cpu::GemmChoice gemm;
  std::string blas;
};

Report collect() {
  Report r;
  r.version = version();
  r.build = porta::build_info();
  r.backends = porta::backend_status();
  for (const porta::BackendStatus& b : r.backends) r.rtc.push_back(rtc_status(b));
  for (const porta::Device& d : porta::devices()) {
    DeviceReport dr;
    dr.info.device = d;
    try {
      dr.info = porta::device_info(d);
      dr.describe = porta::describe(d);
    } catch (const std::exception& e) {
      dr.error = e.what();
    }
    r.devices.push_back(std::move(dr));
  }
  if (const char* env = std::getenv("PORTA_DEVICE"); env != nullptr && *env != '\0') r.porta_device_env = env;
  r.transports.push_back({"mpi", porta::detail::dist::mpi_status(false)});
  r.cpu_isa = porta::detail::cpu::cpu_isa();
  r.gemm = porta::detail::cpu::gemm_choice();
  r.blas = porta::detail::cpu::blas_description();
  try {
    r.default_device = porta::default_device();
  } catch (const std::exception& e) {
    r.default_error = e.what();
  }
  return r;
}

void print_text(const Report& r) {
  std::ostringstream o;
  o << "porta " << r.version << "\n";
  o << "build: " << r.build << "\n\n";
  o << "Backends\n";
  for (const porta::BackendStatus& b : r.backends) {
    const bool available = b.loaded && b.device_count > 0;
    o << "  " << porta::to_string(b.type) << ": " << (available ? "available" : "unavailable") << "\n";
    o << "    built:    " << (b.built ? "yes" : "no") << "\n";
    o << "    loaded:   " << (b.loaded ? "yes" : "no") << "\n";
    if (!b.library.empty())
      o << "    library:  " << b.library << (b.type == porta::DeviceType::cpu ? " (built in)" : "") << "\n";
    o << "    devices:  " << b.device_count << "\n";
    if (!b.build_info.empty()) o << "    backend:  " << b.build_info << "\n";
    if (!b.reason.empty()) o << "    reason:   " << b.reason << "\n";
  }
  bool any_gpu = false;
  for (const porta::BackendStatus& b : r.backends) any_gpu = any_gpu || !b.collectives_info.empty();
  if (any_gpu) {
    o << "\nCollectives (between the GPUs of one backend)\n";
    for (const porta::BackendStatus& b : r.backends)
      if (!b.collectives_info.empty())
        o << "  " << porta::to_string(b.type) << ": " << (b.collectives ? "loaded " : "unavailable: ")
          << b.collectives_info << "\n";
  }
  o << "\nRun-time kernels (porta/rtc.hpp)\n";
  for (std::size_t k = 0; k < r.backends.size(); ++k)
    o << "  " << porta::to_string(r.backends[k].type) << ": " << (r.rtc[k].available ? "" : "unavailable: ")
      << r.rtc[k].text << "\n";
  const porta::detail::cpu::GemmChoice& g = r.gemm;
  o << "\nCPU matmul (float and double gemm)\n";
  if (r.cpu_isa.x86)
    o << "  CPU:           " << r.cpu_isa.brand << " (" << r.cpu_isa.vendor << ", family " << r.cpu_isa.family
      << ", model " << r.cpu_isa.model << ")\n";
  o << "  CPU ISA:       " << porta::detail::cpu::isa_level_name(r.cpu_isa.level);
  if (r.cpu_isa.x86) o << " (CPUID: " << r.cpu_isa.features << ")";
  o << "\n  BLAS:          " << r.blas << "\n";
  if (g.openblas) {
    o << "  OpenBLAS core: " << g.core;
    if (g.core_reselected) o << " (re-selected by porta; OpenBLAS chose " << g.core_at_load << ")";
    if (g.coretype_env) o << " (OPENBLAS_CORETYPE=" << g.coretype << " in the environment)";
    o << "\n";
  }
  o << "  f32 gemm:      " << g.f32 << "\n  f64 gemm:      " << g.f64 << "\n  reason:        " << g.reason << "\n";
  o << "\nDevices\n";
  for (const DeviceReport& d : r.devices) {
    const porta::DeviceInfo& i = d.info;
    if (!d.error.empty()) {
      o << "  " << i.device.to_string() << ": " << d.error << "\n";
      continue;
    }
    o << "  " << d.describe << "\n";
    o << "    name:           " << i.name << "\n";
    o << "    vendor:         " << i.vendor << "\n";
    o << "    arch:           " << i.arch << "\n";
    o << "    memory:         " << gib(i.total_memory) << " total, " << gib(i.free_memory) << " free\n";
    o << "    compute units:  " << i.compute_units << "\n";
    o << "    warp size:      " << i.warp_size << "\n";
    o << "    max threads/block: " << i.max_threads_per_block << "\n";
    o << "    driver:         " << version_text(i.device.type, i.driver_version, true) << "\n";
    o << "    runtime:        " << version_text(i.device.type, i.runtime_version, false) << "\n";
    if (i.pci_bus_id >= 0) o << "    PCI bus:        " << i.pci_bus_id << "\n";
  }
  if (porta::is_available(porta::Device::cpu_strict()))
    o << "  cpu:strict: the CPU as a separate address space with deferred streams, for CI; never chosen by itself "
         "(PORTA_DEVICE=cpu:strict; docs/strict.md)\n";
  o << "\nDistributed\n";
  for (const Transport& t : r.transports) {
    const porta::detail::dist::MpiStatus& m = t.s;
    o << "  " << t.name << ": " << (m.available ? "available" : "unavailable") << "\n";
    o << "    built:     " << (m.built ? "yes" : "no") << "\n";
    if (!m.library.empty()) o << "    library:   " << m.library << "\n";
    if (!m.version.empty()) o << "    version:   " << m.version << "\n";
    if (!m.build_info.empty()) o << "    built for: " << m.build_info << "\n";
    if (m.available)
      o << "    GPU-aware: CUDA " << (m.cuda_aware ? "yes" : "no") << ", HIP " << (m.hip_aware ? "yes" : "no") << "\n";
    if (!m.reason.empty()) o << "    reason:    " << m.reason << "\n";
  }
  o << "\nDefault device: ";
  if (r.default_device) {
    o << r.default_device->to_string();
  } else {
    o << "none (" << r.default_error << ")";
  }
  o << "\nPORTA_DEVICE: " << (r.porta_device_env ? *r.porta_device_env : std::string("not set")) << "\n";
  std::cout << o.str();
}

void print_json(const Report& r) {
  std::ostringstream o;
  auto b = [](bool v) { return v ? "true" : "false"; };
  o << "{\n";
  o << "  \"version\": " << json_string(r.version) << ",\n";
  o << "  \"build_info\": " << json_string(r.build) << ",\n";
  o << "  \"backends\": [";
  for (std::size_t k = 0; k < r.backends.size(); ++k) {
    const porta::BackendStatus& s = r.backends[k];
    o << (k ? "," : "") << "\n    {\"name\": " << json_string(porta::to_string(s.type)) << ", \"built\": " << b(s.built)
      << ", \"loaded\": " << b(s.loaded) << ", \"available\": " << b(s.loaded && s.device_count > 0)
      << ", \"device_count\": " << s.device_count << ", \"library\": " << json_string(s.library)
      << ", \"build_info\": " << json_string(s.build_info) << ", \"reason\": " << json_string(s.reason)
      << ", \"collectives\": " << b(s.collectives) << ", \"collectives_info\": " << json_string(s.collectives_info)
      << ", \"rtc\": " << b(r.rtc[k].available) << ", \"rtc_info\": " << json_string(r.rtc[k].text) << "}";
  }
  o << "\n  ],\n  \"devices\": [";
  for (std::size_t k = 0; k < r.devices.size(); ++k) {
    const DeviceReport& d = r.devices[k];
    const porta::DeviceInfo& i = d.info;
    o << (k ? "," : "") << "\n    {\"device\": " << json_string(i.device.to_string());
    if (!d.error.empty()) {
      o << ", \"error\": " << json_string(d.error) << "}";
      continue;
    }
    o << ", \"describe\": " << json_string(d.describe) << ", \"name\": " << json_string(i.name)
      << ", \"vendor\": " << json_string(i.vendor) << ", \"arch\": " << json_string(i.arch)
      << ", \"total_memory\": " << i.total_memory << ", \"free_memory\": " << i.free_memory
      << ", \"compute_units\": " << i.compute_units << ", \"warp_size\": " << i.warp_size
      << ", \"max_threads_per_block\": " << i.max_threads_per_block << ", \"driver_version\": " << i.driver_version
      << ", \"runtime_version\": " << i.runtime_version << ", \"pci_bus_id\": " << i.pci_bus_id << "}";
  }
  o << "\n  ],\n";
  o << "  \"strict_device\": "
    << (porta::is_available(porta::Device::cpu_strict()) ? json_string("cpu:strict") : std::string("null")) << ",\n";
  for (const Transport& t : r.transports)
    o << "  " << json_string(t.name) << ": {\"built\": " << b(t.s.built) << ", \"available\": " << b(t.s.available)
      << ", \"library\": " << json_string(t.s.library) << ", \"version\": " << json_string(t.s.version)
      << ", \"build_info\": " << json_string(t.s.build_info) << ", \"cuda_aware\": " << b(t.s.cuda_aware)
      << ", \"hip_aware\": " << b(t.s.hip_aware) << ", \"reason\": " << json_string(t.s.reason) << "},\n";
  const porta::detail::cpu::GemmChoice& g = r.gemm;
  o << "  \"cpu_gemm\": {\"cpu\": " << json_string(r.cpu_isa.brand)
    << ", \"cpu_isa\": " << json_string(porta::detail::cpu::isa_level_name(r.cpu_isa.level))
    << ", \"cpu_features\": " << json_string(r.cpu_isa.features) << ", \"blas\": " << json_string(r.blas)
    << ", \"openblas\": " << b(g.openblas) << ", \"openblas_core\": " << json_string(g.core)
    << ", \"openblas_core_at_load\": " << json_string(g.core_at_load)
    << ", \"core_reselected\": " << b(g.core_reselected)
    << ", \"openblas_coretype_env\": " << (g.coretype_env ? json_string(g.coretype) : std::string("null"))
    << ", \"own_kernel_isa\": " << json_string(porta::detail::cpu::isa_level_name(g.own_level))
    << ", \"f32\": " << json_string(g.f32) << ", \"f64\": " << json_string(g.f64)
    << ", \"reason\": " << json_string(g.reason) << "},\n";
  o << "  \"porta_device\": " << (r.porta_device_env ? json_string(*r.porta_device_env) : std::string("null")) << ",\n";
  o << "  \"default_device\": " << (r.default_device ? json_string(r.default_device->to_string()) : std::string("null"))
    << ",\n";
  o << "  \"default_device_error\": " << (r.default_device ? std::string("null") : json_string(r.default_error))
    << "\n}\n";
  std::cout << o.str();
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::cout << usage();
      return 0;
    } else {
      std::cerr << "porta-info: unknown argument '" << argv[i] << "'\n" << usage();
      return 2;
    }
  }
  try {
    const Report r = collect();
    if (json) {
      print_json(r);
    } else {
      print_text(r);
    }
    if (!r.default_device) {
      std::cerr << "porta-info: " << r.default_error << "\n";
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "porta-info: " << e.what() << "\n";
    return 1;
  }
}
