// SPDX-License-Identifier: Apache-2.0
// Copies between two devices are asynchronous where both are GPUs of one backend (copy_peer): the
// copy waits for work already queued on either side and work queued afterwards waits for it. Runs
// on every pair of the machine's devices (on a one-GPU or CPU-only machine, pairs with the CPU).
#include <cstdint>
#include <vector>

#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::Shape;

TEMPLATE_TEST_CASE("copies between devices are ordered with the work on both sides", "[array][peer]", float,
                   std::int64_t) {
  using T = TestType;
  PORTA_RNG(rng);
  const auto& all = porta_test::test_devices();
  if (all.size() < 2) WARN("one device under test: no pair to copy between");
  const std::int64_t n = (std::int64_t{1} << 23) + 3;  // 32-64 MiB: long enough to race if unordered
  for (const Device& from : all)
    for (const Device& to : all) {
      if (from == to) continue;
      INFO(from.to_string() << " -> " << to.to_string());
      const auto h = porta_test::nonzero<T>(rng, n);
      std::vector<T> twice(h.size()), thrice(h.size());
      for (std::size_t i = 0; i < h.size(); ++i) {
        twice[i] = static_cast<T>(h[i] * T(2));
        thrice[i] = static_cast<T>(twice[i] + h[i]);
      }
      auto a = Array<T>::from(h, Shape{n}, from);
      // queued on the source just before the copy: the copy must see its result
      auto a2 = a * T(2);
      // the destination is busy with its own work on the array the copy overwrites
      auto dst = porta::full<T>(Shape{n}, T(7), to);
      porta::fill(dst, T(5));
      porta::copy(a2, dst);
      // queued on the destination right after: must see the copy's data
      auto b = a.to(to);
      auto sum = dst + b;
      PORTA_CHECK_RESULT(porta_test::compare_exact(sum.to_vector(), thrice));
      PORTA_CHECK_RESULT(porta_test::compare_exact(dst.to_vector(), twice));
      // the source may be freed while the copy is still in flight
      Array<T> back;
      {
        auto tmp = Array<T>::from(h, Shape{n}, to);
        back = tmp.to(from);
      }
      PORTA_CHECK_RESULT(porta_test::compare_exact(back.to_vector(), h));
    }
}
