// SPDX-License-Identifier: Apache-2.0
// The devices a kernel test's translation unit can launch on: the CPU always, CUDA devices when
// the file is compiled as CUDA, HIP devices when compiled as HIP (porta_add_kernels in
// tests/kernels/CMakeLists.txt decides). Shared by the user-kernel test files.
#pragma once

#include <vector>

#include "support/support.hpp"

namespace {

std::vector<porta::Device> kernel_devices() {
  std::vector<porta::Device> out;
  for (const porta::Device& d : porta_test::test_devices()) {
#if defined(__CUDACC__)
    if (d.type == porta::DeviceType::cuda || d.type == porta::DeviceType::cpu) out.push_back(d);
#elif defined(__HIPCC__)
    if (d.type == porta::DeviceType::hip || d.type == porta::DeviceType::cpu) out.push_back(d);
#else
    if (d.type == porta::DeviceType::cpu) out.push_back(d);
#endif
  }
  return out;
}

}  // namespace

// One run of the enclosing test case per device this translation unit can launch on.
#define PORTA_KERNEL_DEVICE() GENERATE(from_range(kernel_devices()))
