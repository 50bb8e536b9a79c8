// SPDX-License-Identifier: Apache-2.0
// A user's program against an installed porta: a small sum on the default device.
#include <porta/porta.hpp>

#include <cstdio>
#include <vector>

double consumer_kernel_sum(porta::Device dev);  // kernels.cpp

int main() {
  const porta::Device dev = porta::default_device();
  std::printf("%s\n", porta::describe(dev).c_str());
  std::vector<float> h(1000);
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>(i + 1);
  const auto x = porta::Array<float>::from(h, dev);
  const float s = porta::sum(x);  // 1 + 2 + ... + 1000, exact in float
  std::printf("sum = %.1f (expected 500500)\n", static_cast<double>(s));
  // user kernels from a porta_add_kernels() source, on the CPU
  const double k = consumer_kernel_sum(porta::Device(porta::DeviceType::cpu));
  std::printf("kernel sum = %.1f (expected 500500)\n", k);
  return s == 500500.0f && k == 500500.0 ? 0 : 1;
}
