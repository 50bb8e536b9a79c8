// SPDX-License-Identifier: Apache-2.0
// A small application for the tools' ctest entries (tests/tools/CMakeLists.txt): a few kernels,
// a built-in, a copy and a fence, with whatever tools the environment names. It checks its own
// result and prints "summary demo: ok", so that a tool that fails to load is seen not to stop it.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "porta/kernels.hpp"
#include "porta/porta.hpp"

int main() {
  const porta::Device dev(porta::DeviceType::cpu);
  const std::int64_t n = 1 << 16;
  porta::Array<float> x(porta::Shape{n}, dev);
  auto xv = x.view();
  double s = 0.0;
  for (int step = 0; step < 3; ++step) {
    porta::profile_region region("step");
    porta::parallel_for(dev, n, PORTA_KERNEL((std::int64_t i) { xv[i] = static_cast<float>(i % 5); }));
    s = porta::transform_reduce(dev, n, 0.0, porta::plus{},
                                PORTA_KERNEL((std::int64_t i) { return static_cast<double>(xv[i]); }));
  }
  const float total = porta::sum(x);
  const std::vector<float> host = x.to_vector();
  porta::synchronize(dev);
  const bool ok = s == static_cast<double>(total) && host[6] == 1.0f;
  std::printf("summary demo: %s\n", ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
