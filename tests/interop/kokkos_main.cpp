// SPDX-License-Identifier: Apache-2.0
// The runner of porta_interop_tests: tests/support/main.cpp's, with Kokkos initialised once around
// the whole run (Kokkos allows one initialize and one finalize per process, and every View must be
// gone before finalize). It replaces support/main.cpp: an executable that defines main does not
// take the support library's.
#if defined(PORTA_CATCH2_V3)
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <exception>
#include <string>

#include "support/support.hpp"

int main(int argc, char** argv) {
  // Takes Kokkos' own --kokkos-* arguments out of argv before Catch reads it.
  Kokkos::initialize(argc, argv);
  std::string devs;
  try {
    for (const porta::Device& d : porta_test::test_devices()) devs += (devs.empty() ? "" : ",") + d.to_string();
  } catch (const std::exception& e) {
    devs = std::string("<error: ") + e.what() + ">";
  }
  std::fprintf(stderr, "porta tests: PORTA_TEST_SEED=%llu PORTA_TEST_DEVICES=%s (Kokkos %d, %s)\n",
               static_cast<unsigned long long>(porta_test::base_seed()), devs.c_str(), KOKKOS_VERSION,
               Kokkos::DefaultExecutionSpace::name());
  const int rc = Catch::Session().run(argc, argv);
  Kokkos::finalize();
  return rc;
}
