// SPDX-License-Identifier: Apache-2.0
// The Catch2 runner of porta's tests: prints the random seed and the devices under test first, so a
// failing run can be replayed (PORTA_TEST_SEED=<seed>) on the same devices (PORTA_TEST_DEVICES).
#if defined(PORTA_CATCH2_V3)
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif

#include <cstdio>
#include <cstring>
#include <exception>

#include "support/support.hpp"

int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--list", 6) == 0 || std::strcmp(argv[i], "-l") == 0 || std::strcmp(argv[i], "-h") == 0 ||
        std::strcmp(argv[i], "--help") == 0)
      listing = true;
  if (!listing) {
    std::string devs;
    try {
      for (const porta::Device& d : porta_test::test_devices()) devs += (devs.empty() ? "" : ",") + d.to_string();
    } catch (const std::exception& e) {
      devs = std::string("<error: ") + e.what() + ">";
    }
    std::fprintf(stderr, "porta tests: PORTA_TEST_SEED=%llu PORTA_TEST_DEVICES=%s\n",
                 static_cast<unsigned long long>(porta_test::base_seed()), devs.c_str());
  }
  return Catch::Session().run(argc, argv);
}
