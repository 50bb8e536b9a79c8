// SPDX-License-Identifier: Apache-2.0
// What porta knows about itself and the machine (bindings.hpp): porta.info() is what
// porta-info --json prints, as a dict.
#include <cstdlib>
#include <exception>
#include <string>

#include "arguments.hpp"
#include "backends/cpu/cpu_blas.hpp"
#include "backends/cpu/cpu_isa.hpp"
#include "backends/cpu/cpu_kernels.hpp"
#include "bindings.hpp"
#include "distributed/engine.hpp"
#include "porta/detail/config.hpp"

namespace porta::python {
namespace {

py::dict device_info_dict(const DeviceInfo& i) {
  py::dict d;
  d["device"] = i.device.to_string();
  d["name"] = i.name;
  d["vendor"] = i.vendor;
  d["arch"] = i.arch;
  d["total_memory"] = i.total_memory;
  d["free_memory"] = i.free_memory;
  d["compute_units"] = i.compute_units;
  d["warp_size"] = i.warp_size;
  d["max_threads_per_block"] = i.max_threads_per_block;
  d["driver_version"] = i.driver_version;
  d["runtime_version"] = i.runtime_version;
  d["pci_bus_id"] = i.pci_bus_id;
  return d;
}

std::string version() {
  return std::to_string(PORTA_VERSION_MAJOR) + "." + std::to_string(PORTA_VERSION_MINOR) + "." +
         std::to_string(PORTA_VERSION_PATCH);
}

py::dict info() {
  py::dict r;
  r["version"] = version();
  r["build_info"] = build_info();
  py::list backends;
  for (const BackendStatus& b : backend_status()) {
    py::dict d;
    d["name"] = to_string(b.type);
    d["built"] = b.built;
    d["loaded"] = b.loaded;
    d["available"] = b.loaded && b.device_count > 0;
    d["device_count"] = b.device_count;
    d["library"] = b.library;
    d["build_info"] = b.build_info;
    d["reason"] = b.reason;
    d["collectives"] = b.collectives;  // NCCL / RCCL loaded by the GPU plugin, as porta-info --json
    d["collectives_info"] = b.collectives_info;
    backends.append(d);
  }
  r["backends"] = backends;
  py::list devs;
  for (const Device& dev : devices()) {
    try {
      py::dict d = device_info_dict(device_info(dev));
      d["describe"] = describe(dev);
      devs.append(d);
    } catch (const std::exception& e) {
      py::dict d;
      d["device"] = dev.to_string();
      d["error"] = e.what();
      devs.append(d);
    }
  }
  r["devices"] = devs;
  // The strict CPU device is never one of devices(); it is listed on its own, as porta-info does.
  const Device strict = Device::cpu_strict();
  r["strict_device"] = is_available(strict) ? py::object(py::str(strict.to_string())) : py::object(py::none());
  // MPI as porta-info --json shows it: loaded (not initialised) on this call.
  const detail::dist::MpiStatus m = detail::dist::mpi_status(false);
  py::dict mpi;
  mpi["built"] = m.built;
  mpi["available"] = m.available;
  mpi["library"] = m.library;
  mpi["version"] = m.version;
  mpi["build_info"] = m.build_info;
  mpi["cuda_aware"] = m.cuda_aware;
  mpi["hip_aware"] = m.hip_aware;
  mpi["reason"] = m.reason;
  r["mpi"] = mpi;
  // The CPU's matmul path, as porta-info --json shows it (backends/cpu/cpu_blas.hpp).
  const detail::cpu::CpuIsa& isa = detail::cpu::cpu_isa();
  const detail::cpu::GemmChoice& g = detail::cpu::gemm_choice();
  py::dict gemm;
  gemm["cpu"] = isa.brand;
  gemm["cpu_isa"] = detail::cpu::isa_level_name(isa.level);
  gemm["cpu_features"] = isa.features;
  gemm["blas"] = detail::cpu::blas_description();
  gemm["openblas"] = g.openblas;
  gemm["openblas_core"] = g.core;
  gemm["openblas_core_at_load"] = g.core_at_load;
  gemm["core_reselected"] = g.core_reselected;
  gemm["openblas_coretype_env"] = g.coretype_env ? py::object(py::str(g.coretype)) : py::object(py::none());
  gemm["own_kernel_isa"] = detail::cpu::isa_level_name(g.own_level);
  gemm["f32"] = g.f32;
  gemm["f64"] = g.f64;
  gemm["reason"] = g.reason;
  r["cpu_gemm"] = gemm;
  const char* env = std::getenv("PORTA_DEVICE");
  r["porta_device"] = env != nullptr && *env != '\0' ? py::object(py::str(env)) : py::object(py::none());
  try {
    r["default_device"] = default_device().to_string();
    r["default_device_error"] = py::none();
  } catch (const std::exception& e) {
    r["default_device"] = py::none();
    r["default_device_error"] = e.what();
  }
  return r;
}

}  // namespace

void bind_info(py::module_& m) {
  m.attr("__version__") = version();
  m.def(
      "device_info", [](py::handle d) { return device_info_dict(porta::device_info(device_arg(d))); },
      py::arg("device") = py::none());
  m.def(
      "describe", [](py::handle d) { return porta::describe(device_arg(d)); }, py::arg("device") = py::none());
  m.def("build_info", &porta::build_info);
  m.def("info", &info, "What porta-info --json prints, as a dict.");
}

}  // namespace porta::python
