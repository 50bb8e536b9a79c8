// SPDX-License-Identifier: Apache-2.0
// A user kernel source, marked with porta_add_kernels() by the consumer's CMakeLists.txt.
#include <porta/kernels.hpp>

double consumer_kernel_sum(porta::Device dev) {
  return porta::transform_reduce(dev, 1000, 0.0, porta::plus{},
                                 PORTA_KERNEL((std::int64_t i) { return static_cast<double>(i + 1); }));
}
