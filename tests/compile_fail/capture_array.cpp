// SPDX-License-Identifier: Apache-2.0
// Must not compile: a kernel that captures an Array (tests/compile_fail/CMakeLists.txt
// checks that the compiler's message names the fix).
#include <porta/kernels.hpp>

void bad(porta::Device dev, porta::Array<float>& x) {
  porta::parallel_for(
      dev, x.size(), PORTA_LAMBDA(std::int64_t i) { (void)x.data()[i]; });
}
