// SPDX-License-Identifier: Apache-2.0
// Must compile: the same kernels as capture_array.cpp and capture_vector.cpp written the right way,
// so that the must-fail tests fail for the reason they name and not for a broken include path.
#include <porta/kernels.hpp>

#include <vector>

double good(porta::Device dev, porta::Array<float>& x) {
  auto xv = x.view();
  porta::parallel_for(
      dev, x.size(), PORTA_LAMBDA(std::int64_t i) { xv[i] = 1.0f; });
  return porta::transform_reduce(
      dev, x.size(), 0.0, porta::plus{}, PORTA_LAMBDA(std::int64_t i) { return double(xv[i]); });
}
