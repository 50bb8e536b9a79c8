// SPDX-License-Identifier: Apache-2.0
// A plain C++ translation unit (never marked with porta_add_kernels): user kernels run on the CPU,
// and asking for a GPU is an Unavailable error that names the fix.
#include "porta/kernels.hpp"

#include <cstdint>
#include <vector>

#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta_test::Contains;

#if PORTA_GPU_COMPILER
#error "test_kernels_plain.cpp must be compiled as plain C++"
#endif

TEST_CASE("plain C++: user kernels run on the CPU", "[kernels][plain]") {
  const Device cpu(porta::DeviceType::cpu);
  auto y = porta_test::poisoned<std::int64_t>(porta::Shape{1000}, cpu);
  auto yv = y.view();
  porta::parallel_for(
      cpu, 1000, PORTA_LAMBDA(std::int64_t i) { yv[i] = i * i; });
  std::vector<std::int64_t> r(1000);
  for (std::int64_t i = 0; i < 1000; ++i) r[i] = i * i;
  PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), r));
  const auto x = Array<double>::from(std::vector<double>{1, 2, 3}, cpu);
  const auto xv = x.view();
  CHECK(porta::transform_reduce(
            cpu, 3, 0.0, porta::plus{}, PORTA_LAMBDA(std::int64_t i) { return xv[i]; }) == 6.0);
}

TEST_CASE("plain C++: launching on a GPU is Unavailable and names porta_add_kernels", "[kernels][plain][errors]") {
  const auto gpu = porta_test::first_gpu();
  if (!gpu) PORTA_SKIP("no GPU device: nothing to launch on");
  INFO(gpu->to_string());
  auto y = porta::zeros<float>({16}, *gpu);
  auto yv = y.view();
  CHECK_THROWS_AS(porta::parallel_for(
                      *gpu, 16, PORTA_LAMBDA(std::int64_t i) { yv[i] = 1.0f; }),
                  porta::Unavailable);
  CHECK_THROWS_WITH(porta::parallel_for(
                        *gpu, 16, PORTA_LAMBDA(std::int64_t i) { yv[i] = 1.0f; }),
                    Contains("porta_add_kernels") && Contains("porta::parallel_for"));
  CHECK_THROWS_WITH(porta::map(
                        y, PORTA_LAMBDA(float v) { return v + 1.0f; }, y),
                    Contains("porta_add_kernels"));
  CHECK_THROWS_WITH(porta::transform_reduce(
                        *gpu, 16, 0.0f, porta::plus{}, PORTA_LAMBDA(std::int64_t) { return 1.0f; }),
                    Contains("porta_add_kernels") && Contains("porta::transform_reduce"));
  // nothing was written
  PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), std::vector<float>(16, 0.0f)));
}
