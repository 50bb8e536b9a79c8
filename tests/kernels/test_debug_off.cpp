// SPDX-License-Identifier: Apache-2.0
// A translation unit without PORTA_BOUNDS_CHECK, linked with test_debug.cpp (which checks): its
// accessors are the plain loads, so an index past a view's extent that stays inside the
// allocation is silently allowed here, as it always was, while the checked file in the same
// program still reports its own. (A build configured with -DPORTA_BOUNDS_CHECK=ON checks every
// file: then there is nothing unchecked to test.)
#include "porta/kernels.hpp"

#include <cstdint>
#include <vector>

#include "kernel_devices.hpp"
#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::Shape;

#if !PORTA_DETAIL_BOUNDS
TEST_CASE("an unchecked translation unit does not check its views", "[kernels][debug]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  INFO("on " << dev.to_string());
  auto big = porta::zeros<float>(Shape{16}, dev);
  Array<float> prefix = big.slice(0, 0, 8);
  auto pv = prefix.view();
  // Index 8 is past the view but inside big's memory: no check, the store lands in big.
  porta::parallel_for(dev, 1, PORTA_KERNEL((std::int64_t i) { pv[i + 8] = 5.0f; }));
  porta::synchronize(dev);
  CHECK(big.to_vector()[8] == 5.0f);
  // A kernel here may still ask for the check explicitly: it is the other symbol.
  auto ok = porta::zeros<std::int32_t>(Shape{1}, dev);
  auto okv = ok.view();
  CHECK_THROWS_AS(
      [&] {
        porta::parallel_for(dev, 1, PORTA_KERNEL((std::int64_t i) { okv[0] = pv.operator[]<true>(i + 8) > 0.0f; }));
        porta::synchronize(dev);
      }(),
      porta::Error);
}
#endif
