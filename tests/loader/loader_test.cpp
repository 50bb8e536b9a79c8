// SPDX-License-Identifier: Apache-2.0
// Plugin loader scenarios, one process each (the registry loads once per process). ctest runs
// `porta_loader_test <scenario>` with PORTA_BACKEND_PATH pointing at one fake libporta_hip.so.
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "distributed/engine.hpp"
#include "porta/abi/mpi_v1.h"
#include "porta/distributed.hpp"
#include "porta/porta.hpp"
#include "porta/rtc.hpp"

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
  // The first copy found is the plugin: a HIP-enabled build does not go on to its own plugin
  // beside libporta (or an installed one), it names them as not tried.
  EXPECT(!hip_status().loaded);
  EXPECT_CONTAINS(hip_status().library, "baddep/libporta_hip.so");
}

void scenario_abi99() {
  unavailable_common("libporta_hip.so: ABI version 99, expected " + std::to_string(PORTA_ABI_VERSION));
  EXPECT(!hip_status().loaded);
}

// A broken plugin first on the path and a good one after it (as a local build's plugin and an
// installed one): the search stops at the broken one and names the good one as not tried.
void scenario_broken_first() {
  unavailable_common("baddep/libporta_hip.so: ");
  unavailable_common("libporta_fake_dep.so: cannot open shared object file");
  const std::string reason = porta::unavailable_reason(porta::DeviceType::hip);
  EXPECT_CONTAINS(reason, "; not tried: ");
  EXPECT_CONTAINS(reason, "working/libporta_hip.so");
  EXPECT(reason.find("working/libporta_hip.so") > reason.find("not tried"));
  EXPECT_CONTAINS(reason, "does not fall back");
  EXPECT(!hip_status().loaded);
  EXPECT_CONTAINS(hip_status().library, "baddep/libporta_hip.so");
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

  // porta::linalg on a backend without the entry runs on the CPU and copies the results back:
  // [[2, 1], [1, 3]] x = [3, 5] gives x = [0.8, 1.4].
  {
    const auto a = porta::Array<float>::from(std::vector<float>{2.0f, 1.0f, 1.0f, 3.0f}, porta::Shape{2, 2}, kHip);
    const auto b = porta::Array<float>::from(std::vector<float>{3.0f, 5.0f}, kHip);
    const porta::Array<float> xs = porta::linalg::solve(a, b);
    EXPECT(xs.device() == kHip);
    const std::vector<float> got = xs.to_vector();
    EXPECT(got.size() == 2 && std::fabs(got[0] - 0.8f) < 1e-6f && std::fabs(got[1] - 1.4f) < 1e-6f);
    const std::vector<float> singular{1.0f, 2.0f, 2.0f, 4.0f};
    expect_throw<porta::LinAlgError>(
        "solve of a singular matrix on the fake",
        [&] {
          porta::linalg::solve(porta::Array<float>::from(singular, porta::Shape{2, 2}, kHip), b);
        },
        "the matrix is singular");
  }

  // porta::fft likewise: rfft of [1, 2, 3, 4] is [10, -2 + 2i, -2].
  {
    const auto sig = porta::Array<float>::from(std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f}, kHip);
    const porta::Array<float> spec = porta::fft::rfft(sig);
    EXPECT(spec.device() == kHip && spec.shape() == porta::Shape({3, 2}));
    const std::vector<float> got = spec.to_vector(), want{10.0f, 0.0f, -2.0f, 2.0f, -2.0f, 0.0f};
    bool close = got.size() == want.size();
    for (std::size_t i = 0; close && i < want.size(); ++i) close = std::fabs(got[i] - want[i]) < 1e-5f;
    EXPECT(close);
  }

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

// ---- malformed plugins (runtime/plugin_checks.hpp): refused with the reason, or tamed ----------

// A refused plugin: HIP unavailable, its path and `part` in the reason, the CPU still working.
void refused(const std::string& dir, const std::string& part) {
  unavailable_common(part);
  EXPECT_CONTAINS(porta::unavailable_reason(porta::DeviceType::hip), dir + "/libporta_hip.so: ");
  if (!hip_status().built) EXPECT(!hip_status().loaded);
}

void scenario_mid_pointer() {
  // Taking struct_size bytes would copy half of alloc's pointer and call it at the first allocation.
  refused("mid_pointer", "is not a whole number of " + std::to_string(sizeof(void*)) + "-byte entries");
}

void scenario_unaligned() {
  refused("unaligned", "struct_size " + std::to_string(sizeof(porta_backend_v1) + 4) + " is not a whole number");
}

void scenario_huge() {
  refused("huge", "struct_size 4294967288 is more than the 65536 bytes a table may have");
}

void scenario_many() {
  refused("many", "device_count() returned 2147483647, more than the 4096 devices");
  // Refused before anything was allocated per device.
  EXPECT(hip_status().device_count == 0);
}

void scenario_negative() {
  refused("negative", "device_count() returned -1 (a count cannot be negative)");
}

bool all_of(const std::string& s, char c, std::size_t n) {
  return s.size() == n && s.find_first_not_of(c) == std::string::npos;
}

void scenario_unterminated() {
  EXPECT(porta::is_available(kHip));
  // Every buffer the plugin fills ends with a NUL inside it, whatever the plugin wrote.
  const porta::DeviceInfo info = porta::device_info(kHip);
  EXPECT(all_of(info.name, 'N', 255));
  EXPECT(all_of(info.vendor, 'V', 63));
  EXPECT(all_of(info.arch, 'A', 63));
  const porta::BackendStatus s = hip_status();
  EXPECT(s.collectives);
  EXPECT(all_of(s.collectives_info, 'C', 511));
  EXPECT(all_of(porta::rtc::compiler_info(kHip), 'K', 1023));
  // A string behind a pointer is read no further than the loader's bound.
  EXPECT(all_of(s.build_info, 'B', 4096));
  auto x = porta::Array<float>::from(std::vector<float>{1.0f, 2.0f}, kHip);
  EXPECT(porta::sum(x) == 3.0f);
}

void scenario_null_error() {
  EXPECT(porta::is_available(kHip));
  // last_error() returning NULL: the failure is still an OutOfMemory, without the plugin's message.
  expect_throw<porta::OutOfMemory>(
      "Array on the fake", [] { porta::Array<float>(porta::Shape{4}, kHip); }, "out of memory on hip:0");
}

// A refused MPI plugin: the loader goes on to the next copy (libporta's own, where one was built)
// and, finding none, keeps the refusal as the reason.
void mpi_refused(const std::string& dir, const std::string& part) {
  const porta::detail::dist::MpiStatus s = porta::detail::dist::mpi_status(false);
  // The first copy found is the plugin, refused: never replaced by the build's own plugin.
  EXPECT_CONTAINS(s.library, dir + "/libporta_mpi.so");
  EXPECT(!s.available);
  EXPECT_CONTAINS(s.reason, dir + "/libporta_mpi.so: MPI plugin " + part);
  auto x = porta::Array<float>::from(std::vector<float>{1, 2, 3}, porta::Device(porta::DeviceType::cpu));
  EXPECT(porta::sum(x) == 6.0f);
}

void scenario_mpi_unaligned() {
  mpi_refused("mpi_unaligned", "struct_size " + std::to_string(sizeof(porta_mpi_v1) + 4) + " is not a whole number");
}

void scenario_mpi_huge() {
  mpi_refused("mpi_huge", "struct_size 4294967288 is more than the 65536 bytes");
}

void scenario_mpi_null_entry() {
  mpi_refused("mpi_null_entry", "the table has no comm_ranks");
}

void scenario_mpi_ranks() {
  const porta::detail::dist::MpiStatus s = porta::detail::dist::mpi_status(false);
  EXPECT_CONTAINS(s.library, "mpi_ranks/libporta_mpi.so");
  expect_throw<porta::Unavailable>(
      "Communicator::world", [] { porta::distributed::Communicator::world(); },
      "mpi_ranks/libporta_mpi.so: comm_ranks returned rank 0 of 2147483647");
  auto x = porta::Array<float>::from(std::vector<float>{1, 2, 3}, porta::Device(porta::DeviceType::cpu));
  EXPECT(porta::sum(x) == 6.0f);
}

void scenario_mpi_unterminated() {
  const porta::distributed::MpiInfo info = porta::distributed::mpi_info();
  EXPECT(info.available);
  EXPECT(!info.version.empty() && info.version.find_first_not_of('V') == std::string::npos);
  EXPECT(info.version.size() < 512);  // the buffer the loader hands init()
  const auto comm = porta::distributed::Communicator::world();
  EXPECT(comm.size() == 1);
  EXPECT_CONTAINS(comm.describe(), "MPI (VVV");
}

void scenario_path_order() {
  // A missing directory and an empty entry are passed over; the first copy found is loaded and a
  // later one (with the wrong ABI) is never opened.
  EXPECT(porta::is_available(kHip));
  EXPECT_CONTAINS(hip_status().library, "working/libporta_hip.so");
  EXPECT(hip_status().reason.empty());
}

void scenario_path_stops() {
  // The same folders with the wrong-ABI plugin first: refused, and the working one is not tried.
  unavailable_common("abi99/libporta_hip.so: ABI version 99, expected " + std::to_string(PORTA_ABI_VERSION));
  EXPECT_CONTAINS(porta::unavailable_reason(porta::DeviceType::hip), "not tried: ");
  EXPECT_CONTAINS(porta::unavailable_reason(porta::DeviceType::hip), "working/libporta_hip.so");
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
  struct Scenario {
    const char* name;
    void (*run)();
  };
  static const Scenario scenarios[] = {
      {"zero", scenario_zero},
      {"baddep", scenario_baddep},
      {"abi99", scenario_abi99},
      {"notfound", scenario_notfound},
      {"working", scenario_working},
      {"path_order", scenario_path_order},
      {"path_stops", scenario_path_stops},
      {"broken_first", scenario_broken_first},
      {"env_unavailable", scenario_env_unavailable},
      {"mid_pointer", scenario_mid_pointer},
      {"unaligned", scenario_unaligned},
      {"huge", scenario_huge},
      {"many", scenario_many},
      {"negative", scenario_negative},
      {"unterminated", scenario_unterminated},
      {"null_error", scenario_null_error},
      {"mpi_unaligned", scenario_mpi_unaligned},
      {"mpi_huge", scenario_mpi_huge},
      {"mpi_null_entry", scenario_mpi_null_entry},
      {"mpi_ranks", scenario_mpi_ranks},
      {"mpi_unterminated", scenario_mpi_unterminated},
  };
  const Scenario* chosen = nullptr;
  for (const Scenario& sc : scenarios)
    if (argc == 2 && std::strcmp(argv[1], sc.name) == 0) chosen = &sc;
  if (chosen == nullptr) {
    std::cerr << "usage: porta_loader_test <scenario>; scenarios:";
    for (const Scenario& sc : scenarios) std::cerr << " " << sc.name;
    std::cerr << "\n";
    return 2;
  }
  const std::string scenario = chosen->name;
  // These scenarios are about the loader, not about the caller's PORTA_DEVICE.
  if (scenario != "env_unavailable") unsetenv("PORTA_DEVICE");
  try {
    chosen->run();
  } catch (const std::exception& e) {
    std::cerr << "unexpected exception: " << e.what() << "\n";
    return 1;
  }
  std::cerr << scenario << ": hip reason = \"" << porta::unavailable_reason(porta::DeviceType::hip) << "\"\n";
  if (g_failures) std::cerr << g_failures << " failure(s)\n";
  return g_failures ? 1 : 0;
}
