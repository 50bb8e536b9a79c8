// SPDX-License-Identifier: Apache-2.0
// Compiled by nvcc: each PORTA_LAMBDA must warn at this file's line that it is slow on the CPU and
// name PORTA_KERNEL; with PORTA_NO_LAMBDA_WARNING defined it must not.
#include <porta/kernels.hpp>

void slow_on_the_cpu(porta::Device dev, porta::Array<float>& x) {
  auto xv = x.view();
  porta::parallel_for(
      dev, x.size(), PORTA_LAMBDA(std::int64_t i) { xv[i] = 1.0f; });
}
