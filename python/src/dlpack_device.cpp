// SPDX-License-Identifier: Apache-2.0
// porta's devices and DLPack's, both ways (interop.hpp).
#include <cstdint>

#include "dlpack.hpp"
#include "errors.hpp"
#include "interop.hpp"

namespace porta::python {
namespace {

// DLPack's device types start at 1, so neither value below is one of them.
constexpr std::int32_t kNoDlpackDevice = 0;  // a porta device type that DLPack has no kind for
constexpr std::int32_t kNotListed = -1;      // a device type missing from the switch below

// DLPack's device type of each porta device type. The switch has a case for every type and no
// default, so a line added to device_types.inc stops the build here (-Werror=switch, and the
// static_asserts below whatever the warnings) until it is given its DLPack type, or
// kNoDlpackDevice, which makes export a clear error rather than CPU memory.
constexpr std::int32_t dlpack_type_of(DeviceType type) {
  switch (type) {
    case DeviceType::cpu:
      return dlpack::kDLCPU;
    case DeviceType::cuda:
      return dlpack::kDLCUDA;
    case DeviceType::hip:
      return dlpack::kDLROCM;
  }
  return kNotListed;
}

#define PORTA_DEVICE_TYPE(name, ...)                                    \
  static_assert(dlpack_type_of(DeviceType::name) != kNotListed,         \
                "python/src/dlpack_device.cpp: the device type '" #name \
                "' of device_types.inc needs a case in dlpack_type_of");
#include "porta/abi/device_types.inc"
#undef PORTA_DEVICE_TYPE

}  // namespace

std::pair<int, int> dlpack_device(Device dev, const std::string& fn) {
  const std::int32_t type = dlpack_type_of(dev.type);
  if (type == kNoDlpackDevice || type == kNotListed) {
    const detail::DeviceTypeFacts* f = detail::facts(dev.type);
    buffer_error(fn + ": porta.Array on " + dev.to_string() + ": DLPack has no device type for " +
                 (f != nullptr ? f->display_name : "this device's") + " memory; use numpy(), or .to('cpu') first");
  }
  // Host memory is one DLPack device, whichever porta CPU device holds it.
  return {type, type == dlpack::kDLCPU ? 0 : dev.index};
}

std::optional<Device> porta_device_of(int dl_type, int dl_id) {
  switch (dl_type) {
    case dlpack::kDLCPU:
    case dlpack::kDLCUDAHost:
    case dlpack::kDLROCMHost:
      return Device(DeviceType::cpu);
    case dlpack::kDLCUDA:
    case dlpack::kDLCUDAManaged:
      return Device(DeviceType::cuda, dl_id);
    case dlpack::kDLROCM:
      return Device(DeviceType::hip, dl_id);
    default:  // an int from another library: any DLPack device type porta does not run on
      return std::nullopt;
  }
}

}  // namespace porta::python
