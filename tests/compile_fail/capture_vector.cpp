// SPDX-License-Identifier: Apache-2.0
// Must not compile: a kernel that captures a std::vector (tests/compile_fail/CMakeLists.txt
// checks that the compiler's message names the fix).
#include <porta/kernels.hpp>

#include <vector>

double bad(porta::Device dev, const std::vector<double>& host) {
  const std::vector<double> w = host;
  return porta::transform_reduce(
      dev, static_cast<std::int64_t>(w.size()), 0.0, porta::plus{},
      PORTA_LAMBDA(std::int64_t i) { return w[static_cast<std::size_t>(i)]; });
}
