// SPDX-License-Identifier: Apache-2.0
// Plugin loader scenarios, one process each (the registry loads once per process). ctest runs
// `porta_loader_test <scenario>` with PORTA_BACKEND_PATH pointing at one fake libporta_hip.so.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "porta/porta.hpp"

namespace {

int g_failures = 0;

#define EXPECT(cond)                                                                \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      ++g_failures;                                                                 \
      std::cerr << __FILE__ << ":" << __LINE__ << ": expected " #cond << std::endl; \
    }                                                                               \
  } while (0)

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

#define EXPECT_CONTAINS(str, part)                                                                           \
  do {                                                                                                       \
    const std::string s_ = (str);                                                                            \
    if (!contains(s_, part)) {                                                                               \
      ++g_failures;                                                                                          \
      std::cerr << __FILE__ << ":" << __LINE__ << ": \"" << s_ << "\" does not contain \"" << (part) << "\"" \
                << std::endl;                                                                                \
    }                                                                                                        \
  } while (0)

// Runs f, expecting exception E whose message contains `part`.
template <class E, class F>
void expect_throw(const char* what, F f, const std::string& part) {
  try {
    f();
    ++g_failures;
    std::cerr << what << ": no exception" << std::endl;
  } catch (const E& e) {
    if (!contains(e.what(), part)) {
      ++g_failures;
      std::cerr << what << ": \"" << e.what() << "\" does not contain \"" << part << "\"" << std::endl;
    }
  } catch (const std::exception& e) {
    ++g_failures;
    std::cerr << what << ": wrong exception type: " << e.what() << std::endl;
  }
}

const porta::Device kHip(porta::DeviceType::hip, 0);

porta::BackendStatus hip_status() {
  for (const auto& s : porta::backend_status())
    if (s.type == porta::DeviceType::hip) return s;
  return {};
}

void unavailable_common(const std::string& part) {
  EXPECT(!porta::is_available(porta::DeviceType::hip));
  EXPECT(!porta::is_available(kHip));
  EXPECT_CONTAINS(porta::unavailable_reason(porta::DeviceType::hip), part);
  EXPECT(hip_status().reason == porta::unavailable_reason(porta::DeviceType::hip));
  for (const porta::Device& d : porta::devices()) EXPECT(d.type != porta::DeviceType::hip);
  expect_throw<porta::Unavailable>(
      "select_device(hip)", [] { porta::select_device("hip"); }, part);
  expect_throw<porta::Unavailable>(
      "Array on hip:0", [] { porta::Array<float>(porta::Shape{4}, kHip); }, part);
  // The rest of porta keeps working.
  auto x = porta::Array<float>::from(std::vector<float>{1, 2, 3}, porta::Device(porta::DeviceType::cpu));
  EXPECT(porta::sum(x) == 6.0f);
}

void scenario_zero() {
  unavailable_common("fake: no devices");
  const porta::BackendStatus s = hip_status();
  EXPECT(s.loaded);
  EXPECT(s.device_count == 0);
  EXPECT_CONTAINS(s.library, "zero/libporta_hip.so");
  EXPECT_CONTAINS(s.build_info, "fake hip plugin");
}

void scenario_baddep() {
  unavailable_common("libporta_fake_dep.so: cannot open shared object file");
  EXPECT_CONTAINS(porta::unavailable_reason(porta::DeviceType::hip), "baddep/libporta_hip.so: ");
  // A HIP-enabled build goes on to its real plugin (no device here); the failure stays in the reason.
  if (!hip_status().built) EXPECT(!hip_status().loaded);
}

void scenario_abi99() {
  unavailable_common("libporta_hip.so: ABI version 99, expected 1");
  if (!hip_status().built) EXPECT(!hip_status().loaded);
}

void scenario_notfound() {
  EXPECT(!porta::is_available(porta::DeviceType::hip));
  const porta::BackendStatus s = hip_status();
  if (!s.built) {
    EXPECT(!s.loaded);
    EXPECT(s.reason == "porta was built without HIP support (configure with -DPORTA_ENABLE_HIP=ON)");
  }
}

void scenario_working() {
  // First use from many threads at once: the registry loads exactly once.
  std::atomic<int> seen{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&seen] {
      if (porta::is_available(porta::DeviceType::hip)) ++seen;
    });
  for (auto& t : threads) t.join();
  EXPECT(seen == 8);

  EXPECT(porta::is_available(porta::DeviceType::hip));
  EXPECT(porta::is_available(kHip));
  EXPECT(!porta::is_available(porta::Device(porta::DeviceType::hip, 1)));
  EXPECT(porta::unavailable_reason(porta::DeviceType::hip).empty());
  const porta::BackendStatus s = hip_status();
  EXPECT(s.loaded);
  EXPECT(s.device_count == 1);
  EXPECT_CONTAINS(s.library, "working/libporta_hip.so");
  const porta::Device want =
      porta::is_available(porta::DeviceType::cuda) ? porta::Device(porta::DeviceType::cuda, 0) : kHip;
  EXPECT(porta::default_device() == want);
  EXPECT(porta::select_device("hip:0") == kHip);
  if (!porta::is_available(porta::DeviceType::cuda)) EXPECT(porta::select_device("gpu") == kHip);
  EXPECT(porta::describe(kHip) == "hip:0 Fake HIP device (1 CUs, 1.0 GiB)");
  EXPECT(porta::device_info(kHip).warp_size == 64);

  // The plugin's memory and kernels really are used.
  auto x = porta::Array<float>::from(std::vector<float>{1.0f, 2.0f, 3.0f, 4.5f}, kHip);
  EXPECT(x.device() == kHip);
  EXPECT(porta::sum(x) == 10.5f);
  EXPECT(porta::sum(porta::full<float>({1000}, 0.5f, kHip)) == 500.0f);
  EXPECT((x.to_vector() == std::vector<float>{1.0f, 2.0f, 3.0f, 4.5f}));
  auto c = x.to(porta::Device(porta::DeviceType::cpu));
  EXPECT(porta::sum(c) == 10.5f);
  auto back = c.to(kHip);
  EXPECT(porta::sum(back) == 10.5f);

  // Entries the plugin left NULL are stubs that fail cleanly, naming the entry.
  expect_throw<porta::Unavailable>(
      "exp on the fake", [&] { porta::exp(x); }, "'unary'");
  expect_throw<porta::Unavailable>(
      "Stream on the fake", [] { porta::Stream st(kHip); }, "stream_create");
  // An op x dtype the plugin reports as unsupported carries the plugin's message.
  expect_throw<porta::Unavailable>(
      "prod on the fake", [&] { porta::prod(x); }, "fake: only a full float32 sum");
  expect_throw<porta::Unavailable>(
      "memory_stats on the fake", [] { porta::memory_stats(kHip); }, "memory_stats");
  // Mixing devices is still refused.
  expect_throw<porta::DeviceMismatch>(
      "add hip + cpu", [&] { porta::add(x, c); }, "a on hip:0, b on cpu");
  expect_throw<porta::DeviceMismatch>(
      "sum with a stream of another device", [&] { porta::sum(c, porta::Stream::default_stream(kHip)); },
      "porta::sum: stream is on hip:0, the arrays on cpu");
  // copy() is the explicit way to move data between devices.
  auto y = porta::zeros<float>({4}, kHip);
  porta::copy(c, y);
  EXPECT(porta::sum(y) == 10.5f);
}

void scenario_path_order() {
  // A missing directory, an empty entry and a plugin with the wrong ABI come first: the loader
  // goes on to the working plugin.
  EXPECT(porta::is_available(kHip));
  EXPECT_CONTAINS(hip_status().library, "working/libporta_hip.so");
}

void scenario_env_unavailable() {
  // PORTA_DEVICE=hip with a plugin that has no devices: an error that says why, never a fallback.
  expect_throw<porta::Unavailable>(
      "default_device", [] { porta::default_device(); }, "fake: no devices");
  expect_throw<porta::Unavailable>(
      "default_device", [] { porta::default_device(); }, "PORTA_DEVICE=hip");
  expect_throw<porta::Unavailable>(
      "zeros", [] { porta::zeros<float>({2}); }, "fake: no devices");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: porta_loader_test zero|baddep|abi99|notfound|working|path_order|env_unavailable\n";
    return 2;
  }
  const std::string scenario = argv[1];
  // These scenarios are about the loader, not about the caller's PORTA_DEVICE.
  if (scenario != "env_unavailable") unsetenv("PORTA_DEVICE");
  try {
    if (scenario == "zero") {
      scenario_zero();
    } else if (scenario == "baddep") {
      scenario_baddep();
    } else if (scenario == "abi99") {
      scenario_abi99();
    } else if (scenario == "notfound") {
      scenario_notfound();
    } else if (scenario == "working") {
      scenario_working();
    } else if (scenario == "path_order") {
      scenario_path_order();
    } else if (scenario == "env_unavailable") {
      scenario_env_unavailable();
    } else {
      std::cerr << "unknown scenario " << scenario << "\n";
      return 2;
    }
  } catch (const std::exception& e) {
    std::cerr << "unexpected exception: " << e.what() << "\n";
    return 1;
  }
  std::cerr << scenario << ": hip reason = \"" << porta::unavailable_reason(porta::DeviceType::hip) << "\"\n";
  if (g_failures) std::cerr << g_failures << " failure(s)\n";
  return g_failures ? 1 : 0;
}
