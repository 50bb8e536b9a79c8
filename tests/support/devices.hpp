// SPDX-License-Identifier: Apache-2.0
// Every algorithm test runs on every available device:
//
//   TEST_CASE("sum", "[reduce]") {
//     const porta::Device dev = PORTA_TEST_DEVICE();   // one run of the test case per device
//     ...
//   }
//
// PORTA_TEST_DEVICES restricts the devices: a comma-separated list of "cpu", "cpu:strict" (never
// part of "all": docs/strict.md), "cuda:0", "hip:1", or
// a bare type ("cuda": every CUDA device); unset, empty or "all" means every device. Naming a
// device that is not available is an error, so that a misspelled restriction cannot make a run
// that tests nothing.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "porta/porta.hpp"
#include "support/catch.hpp"

namespace porta_test {

// porta::devices(), filtered by PORTA_TEST_DEVICES (computed once per process).
const std::vector<porta::Device>& test_devices();

// Two different devices of this machine, a device of another type first (for DeviceMismatch
// tests); nullopt on a machine with one device.
std::optional<std::pair<porta::Device, porta::Device>> two_devices();

// A device of this machine other than `dev` (another type preferred); nullopt if none.
std::optional<porta::Device> other_device(porta::Device dev);

// The first GPU device of this machine, if any.
std::optional<porta::Device> first_gpu();

// Calls body(threads) with OpenMP's thread count set to each of `counts` in turn, for the
// [determinism] tests: the CPU backend must give the same bits under any count. Without OpenMP
// only body(1) runs. The count found on entry is restored, also when body throws (a REQUIRE).
void for_each_thread_count(std::initializer_list<int> counts, const std::function<void(int)>& body);

}  // namespace porta_test

namespace Catch {
template <>
struct StringMaker<porta::Device> {
  static std::string convert(porta::Device d) { return d.to_string(); }
};
template <>
struct StringMaker<porta::Shape> {
  static std::string convert(const porta::Shape& s) { return s.to_string(); }
};
}  // namespace Catch

// One run of the enclosing test case per device under test. Put it first in the test case.
#define PORTA_TEST_DEVICE() GENERATE(from_range(::porta_test::test_devices()))
