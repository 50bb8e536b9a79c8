// SPDX-License-Identifier: Apache-2.0
// Devices: parsing, selection, PORTA_DEVICE, device_info, describe, backend status.
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "support/support.hpp"

using porta::Device;
using porta::DeviceType;
using porta_test::Contains;

namespace {

bool built(DeviceType t) {
  for (const porta::BackendStatus& s : porta::backend_status())
    if (s.type == t) return s.built;
  return false;
}

const char* type_name_upper(DeviceType t) {
  return porta::detail::facts(t)->display_name;
}

}  // namespace

TEST_CASE("DeviceType names", "[device]") {
  CHECK(std::string(porta::to_string(DeviceType::cpu)) == "cpu");
  CHECK(std::string(porta::to_string(DeviceType::cuda)) == "cuda");
  CHECK(std::string(porta::to_string(DeviceType::hip)) == "hip");
}

TEST_CASE("Device::parse accepts the documented forms", "[device]") {
  struct Case {
    const char* text;
    Device expect;
  };
  // example-begin device-parse
  const Case cases[] = {
      {"cpu", Device(DeviceType::cpu, 0)},     {"cpu:0", Device(DeviceType::cpu, 0)},
      {"cuda", Device(DeviceType::cuda, 0)},   {"cuda:0", Device(DeviceType::cuda, 0)},
      {"cuda:1", Device(DeviceType::cuda, 1)}, {"cuda:15", Device(DeviceType::cuda, 15)},
      {"hip", Device(DeviceType::hip, 0)},     {"hip:0", Device(DeviceType::hip, 0)},
      {"hip:3", Device(DeviceType::hip, 3)},   {"cuda:123", Device(DeviceType::cuda, 123)},
  };
  // example-end device-parse
  for (const Case& c : cases) {
    INFO("parse(\"" << c.text << "\")");
    Device d;
    REQUIRE_NOTHROW(d = Device::parse(c.text));
    CHECK(d == c.expect);
    CHECK(d.type == c.expect.type);
    CHECK(d.index == c.expect.index);
  }
}

TEST_CASE("Device::parse rejects everything else with InvalidArgument", "[device]") {
  const char* bad[] = {"",         "CPU",
                       "Cuda",     "CUDA:0",
                       " cpu",     "cpu ",
                       "cuda :1",  "cuda: 1",
                       "cuda:",    "cuda:-1",
                       "cuda:x",   "cuda:1x",
                       "cuda:1:2", "cuda::1",
                       "gpu",      "gpu:0",
                       "auto",     "tpu",
                       "opencl:0", "cuda1",
                       ":0",       "hip:1.5",
                       "cuda:0x1", "cuda:-0x",
                       "cpu,cuda", "cuda:99999999999999999999"};
  for (const char* text : bad) {
    INFO("parse(\"" << text << "\")");
    CHECK_THROWS_AS(Device::parse(text), porta::InvalidArgument);
  }
  // The message quotes what was given.
  CHECK_THROWS_WITH(Device::parse("tpu:3"), Contains("tpu:3"));
  // A string_view that is not null-terminated is read only within its length.
  const char buf[] = "cuda:12";
  CHECK(Device::parse(std::string_view(buf, 6)) == Device(DeviceType::cuda, 1));
  CHECK(Device::parse(std::string_view(buf, 4)) == Device(DeviceType::cuda, 0));
}

TEST_CASE("Device::to_string and parse round-trip", "[device]") {
  CHECK(Device(DeviceType::cpu, 0).to_string() == "cpu");
  CHECK(Device().to_string() == "cpu");
  CHECK(Device(DeviceType::cuda, 1).to_string() == "cuda:1");
  CHECK(Device(DeviceType::cuda, 0).to_string() == "cuda:0");
  CHECK(Device(DeviceType::hip, 0).to_string() == "hip:0");
  for (DeviceType t : {DeviceType::cuda, DeviceType::hip})
    for (int i : {0, 1, 2, 7, 31}) {
      const Device d(t, i);
      INFO(d.to_string());
      CHECK(Device::parse(d.to_string()) == d);
    }
  CHECK(Device::parse(Device().to_string()) == Device());
  for (const Device& d : porta::devices()) CHECK(Device::parse(d.to_string()) == d);
}

TEST_CASE("Device value semantics", "[device]") {
  constexpr Device a(DeviceType::cuda, 2);
  static_assert(a.is_gpu());
  static_assert(!Device().is_gpu());
  static_assert(Device(DeviceType::hip, 0).is_gpu());
  static_assert(a == Device(DeviceType::cuda, 2));
  static_assert(a != Device(DeviceType::cuda, 1));
  static_assert(a != Device(DeviceType::hip, 2));
  CHECK(Device().type == DeviceType::cpu);
  CHECK(Device().index == 0);
}

TEST_CASE("devices() lists GPUs first and always the CPU", "[device]") {
  const std::vector<Device> devs = porta::devices();
  REQUIRE(!devs.empty());
  CHECK(devs.back() == Device(DeviceType::cpu));
  CHECK(std::count(devs.begin(), devs.end(), Device(DeviceType::cpu)) == 1);
  // CUDA devices, then HIP devices, then the CPU; indices 0, 1, ... within a type.
  auto rank = [](DeviceType t) { return t == DeviceType::cuda ? 0 : t == DeviceType::hip ? 1 : 2; };
  for (std::size_t i = 1; i < devs.size(); ++i) {
    INFO(devs[i - 1].to_string() << " before " << devs[i].to_string());
    CHECK(rank(devs[i - 1].type) <= rank(devs[i].type));
    if (devs[i - 1].type == devs[i].type) CHECK(devs[i - 1].index + 1 == devs[i].index);
  }
  for (std::size_t i = 0; i < devs.size(); ++i)
    if (i == 0 || devs[i - 1].type != devs[i].type) CHECK(devs[i].index == 0);
  for (const Device& d : devs) {
    INFO(d.to_string());
    CHECK(porta::is_available(d));
    CHECK(porta::is_available(d.type));
    CHECK(porta::unavailable_reason(d.type).empty());
  }
  CHECK(porta::is_available(DeviceType::cpu));
  CHECK(porta::is_available(Device(DeviceType::cpu)));
  CHECK_FALSE(porta::is_available(Device(DeviceType::cuda, 1000)));
  CHECK_FALSE(porta::is_available(Device(DeviceType::hip, 1000)));
}

TEST_CASE("unavailable backends say why", "[device]") {
  for (DeviceType t : {DeviceType::cuda, DeviceType::hip}) {
    INFO(porta::to_string(t));
    if (porta::is_available(t)) {
      CHECK(porta::unavailable_reason(t).empty());
      continue;
    }
    const std::string reason = porta::unavailable_reason(t);
    CHECK_FALSE(reason.empty());
    if (!built(t)) {
      CHECK_THAT(reason, Contains("built without"));
      CHECK_THAT(reason, Contains(type_name_upper(t)));
      CHECK_THAT(reason, Contains(std::string("PORTA_ENABLE_") + porta::detail::facts(t)->option));
    }
  }
}

TEST_CASE("backend_status() describes every backend", "[device]") {
  const std::vector<porta::BackendStatus> st = porta::backend_status();
  REQUIRE(st.size() >= 1);
  bool seen[porta::kDeviceTypeCount] = {};
  for (const porta::BackendStatus& s : st) {
    INFO(porta::to_string(s.type) << " built=" << s.built << " loaded=" << s.loaded << " count=" << s.device_count
                                  << " library=" << s.library << " reason=" << s.reason);
    const int ti = static_cast<int>(s.type);
    REQUIRE(ti >= 0);
    REQUIRE(ti < porta::kDeviceTypeCount);
    CHECK_FALSE(seen[ti]);
    seen[ti] = true;
    CHECK(s.device_count >= 0);
    if (s.type == DeviceType::cpu) {
      CHECK(s.built);
      CHECK(s.loaded);
      CHECK(s.device_count == 1);
      CHECK(s.reason.empty());
    }
    const bool available = s.device_count > 0 && s.loaded;
    CHECK(available == porta::is_available(s.type));
    if (!s.built) CHECK_FALSE(s.loaded);
    if (!available) CHECK_FALSE(s.reason.empty());
    if (available) CHECK(s.reason.empty());
    CHECK(s.reason == porta::unavailable_reason(s.type));
    if (s.loaded) CHECK_FALSE(s.build_info.empty());
    // devices() agrees with the count.
    const auto devs = porta::devices();
    CHECK(std::count_if(devs.begin(), devs.end(), [&](Device d) { return d.type == s.type; }) ==
          (available ? s.device_count : 0));
  }
  CHECK(seen[static_cast<int>(DeviceType::cpu)]);
  CHECK_FALSE(porta::build_info().empty());
}

TEST_CASE("device_info and describe of the CPU", "[device]") {
  const Device cpu(DeviceType::cpu);
  const porta::DeviceInfo info = porta::device_info(cpu);
  CHECK(info.device == cpu);
  CHECK_FALSE(info.name.empty());
  CHECK(info.total_memory > 0);
  CHECK(info.free_memory <= info.total_memory);
  CHECK(info.compute_units >= 1);
  CHECK(info.warp_size == 1);
  CHECK(info.max_threads_per_block >= 1);
  const std::string d = porta::describe(cpu);
  INFO(d);
  CHECK(d.rfind("cpu", 0) == 0);
  CHECK(d.size() > 3);
}

TEST_CASE("device_info of every device", "[device]") {
  const Device dev = PORTA_TEST_DEVICE();
  const porta::DeviceInfo info = porta::device_info(dev);
  INFO(porta::describe(dev));
  CHECK(info.device == dev);
  CHECK_FALSE(info.name.empty());
  CHECK(info.total_memory > 0);
  CHECK(info.free_memory <= info.total_memory);
  CHECK(info.compute_units >= 1);
  if (dev.is_gpu()) {
    CHECK((info.warp_size == 32 || info.warp_size == 64));
    CHECK(info.max_threads_per_block >= 256);
    CHECK_FALSE(info.vendor.empty());
    CHECK_FALSE(info.arch.empty());
    CHECK(info.runtime_version > 0);
  }
  CHECK(porta::describe(dev).rfind(dev.to_string(), 0) == 0);
}

TEST_CASE("device_info of a device that is not there", "[device][errors]") {
  CHECK_THROWS_AS(porta::device_info(Device(DeviceType::cuda, 1000)), porta::Unavailable);
  CHECK_THROWS_AS(porta::device_info(Device(DeviceType::hip, 1000)), porta::Unavailable);
  CHECK_THROWS_AS(porta::memory_stats(Device(DeviceType::cuda, 1000)), porta::Unavailable);
  CHECK_THROWS_AS(porta::Array<float>(porta::Shape{4}, Device(DeviceType::cuda, 1000)), porta::Unavailable);
}

TEST_CASE("select_device", "[device]") {
  CHECK(porta::select_device("cpu") == Device(DeviceType::cpu));
  CHECK(porta::select_device("cpu:0") == Device(DeviceType::cpu));
  CHECK(porta::select_device("auto") == porta::devices().front());
  CHECK_THROWS_AS(porta::select_device("garbage"), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::select_device(""), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::select_device("gpu:x"), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::select_device("GPU"), porta::InvalidArgument);

  const auto gpu = porta_test::first_gpu();
  if (gpu) {
    CHECK(porta::select_device("gpu") == *gpu);
    CHECK(porta::select_device("gpu:0") == *gpu);
  } else {
    CHECK_THROWS_AS(porta::select_device("gpu"), porta::Unavailable);
    CHECK_THROWS_AS(porta::select_device("gpu:0"), porta::Unavailable);
  }
  for (DeviceType t : {DeviceType::cuda, DeviceType::hip}) {
    const std::string name = porta::to_string(t);
    INFO(name);
    if (porta::is_available(t)) {
      CHECK(porta::select_device(name) == Device(t, 0));
      CHECK(porta::select_device(name + ":0") == Device(t, 0));
    } else {
      CHECK_THROWS_AS(porta::select_device(name), porta::Unavailable);
      CHECK_THROWS_WITH(porta::select_device(name + ":0"), Contains(porta::unavailable_reason(t)));
      if (!built(t)) CHECK_THROWS_WITH(porta::select_device(name), Contains("built without"));
    }
    // An index past the last device: Unavailable, with a message that names the device.
    CHECK_THROWS_AS(porta::select_device(name + ":99"), porta::Unavailable);
    CHECK_THROWS_WITH(porta::select_device(name + ":99"), Contains(name + ":99"));
  }
}

TEST_CASE("set_default_device", "[.set-default][set-default][device]") {
  // Hidden, run in its own process by ctest: once set, the default stays pinned for the process.
  const Device before = porta::default_device();
  porta::set_default_device(Device(DeviceType::cpu));
  CHECK(porta::default_device() == Device(DeviceType::cpu));
  auto a = porta::zeros<float>({3});
  CHECK(a.device() == Device(DeviceType::cpu));
  porta::set_default_device(before);
  CHECK(porta::default_device() == before);
}

TEST_CASE("default_device without PORTA_DEVICE", "[device]") {
  const char* env = std::getenv("PORTA_DEVICE");
  if (env && *env) PORTA_SKIP("PORTA_DEVICE is set; the [env] tests cover it");
  CHECK(porta::default_device() == porta::devices().front());
}

TEST_CASE("default_device re-reads PORTA_DEVICE on every call", "[device][env-inprocess]") {
  const char* saved_c = std::getenv("PORTA_DEVICE");
  const std::string saved = saved_c ? saved_c : "";
  const bool had = saved_c != nullptr;
  setenv("PORTA_DEVICE", "cpu", 1);
  CHECK(porta::default_device() == Device(DeviceType::cpu));
  setenv("PORTA_DEVICE", "no-such-device", 1);
  CHECK_THROWS_AS(porta::default_device(), porta::InvalidArgument);
  setenv("PORTA_DEVICE", "cuda:4096", 1);
  CHECK_THROWS_AS(porta::default_device(), porta::Unavailable);
  setenv("PORTA_DEVICE", "", 1);  // empty counts as unset
  CHECK(porta::default_device() == porta::devices().front());
  unsetenv("PORTA_DEVICE");
  CHECK(porta::default_device() == porta::devices().front());
  if (had) setenv("PORTA_DEVICE", saved.c_str(), 1);
}

// Run in a fresh process per value by ctest (tests/unit/CMakeLists.txt): PORTA_DEVICE=<value>, and
// PORTA_TEST_EXPECT says whether the value is malformed (InvalidArgument) or a request ("select")
// whose outcome this test works out from what the machine has.
TEST_CASE("PORTA_DEVICE chooses the default device", "[.env][env]") {
  const char* env = std::getenv("PORTA_DEVICE");
  const char* expect_env = std::getenv("PORTA_TEST_EXPECT");
  REQUIRE(env);
  REQUIRE(expect_env);
  const std::string value = env, expect = expect_env;
  INFO("PORTA_DEVICE=" << value << " PORTA_TEST_EXPECT=" << expect);
  if (expect == "InvalidArgument") {
    CHECK_THROWS_AS(porta::default_device(), porta::InvalidArgument);
    CHECK_THROWS_WITH(porta::default_device(), Contains(value));
    CHECK_THROWS_WITH(porta::default_device(), Contains("PORTA_DEVICE"));
    // set_default_device() takes precedence over the environment.
    porta::set_default_device(Device(DeviceType::cpu));
    CHECK(porta::default_device() == Device(DeviceType::cpu));
    return;
  }
  REQUIRE(expect == "select");
  // Work out what the request must give.
  std::optional<Device> want;
  std::string must_mention;
  if (value == "auto") {
    want = porta::devices().front();
  } else if (value.rfind("gpu", 0) == 0) {
    want = porta_test::first_gpu();
    must_mention = "gpu";
  } else {
    const Device d = Device::parse(value);
    if (porta::is_available(d)) want = d;
    must_mention = d.type == DeviceType::cpu ? "cpu" : value;
    if (!porta::is_available(d.type) && !built(d.type)) must_mention = "built without";
  }
  if (want) {
    CHECK(porta::default_device() == *want);
    auto a = porta::ones<double>({5});
    CHECK(a.device() == *want);
    CHECK(porta::sum(a) == 5.0);
  } else {
    CHECK_THROWS_AS(porta::default_device(), porta::Unavailable);
    CHECK_THROWS_WITH(porta::default_device(), Contains(must_mention));
    // A failed request is never a silent fallback, and it keeps failing.
    CHECK_THROWS_AS(porta::default_device(), porta::Unavailable);
    CHECK_THROWS_AS(porta::zeros<float>({2}), porta::Unavailable);
  }
}

TEST_CASE("the device-type table drives names, order and messages", "[device]") {
  using porta::detail::kDeviceTypes;
  REQUIRE(porta::kDeviceTypeCount == static_cast<int>(sizeof(kDeviceTypes) / sizeof(kDeviceTypes[0])));
  for (const porta::detail::DeviceTypeFacts& f : kDeviceTypes) {
    INFO(f.name);
    CHECK(porta::detail::facts(f.type) == &f);
    CHECK(std::string(porta::to_string(f.type)) == f.name);
    CHECK(Device::parse(f.name) == Device(f.type, 0));
    if (f.type != DeviceType::cpu) {
      CHECK(f.priority < porta::detail::facts(DeviceType::cpu)->priority);  // the CPU is the fallback
      CHECK(Device::parse(std::string(f.name) + ":2") == Device(f.type, 2));
      // "built without" names the type's own CMake switch
      if (!built(f.type))
        CHECK_THAT(porta::unavailable_reason(f.type), Contains(std::string("PORTA_ENABLE_") + f.option));
    }
  }
  CHECK(porta::detail::facts(static_cast<DeviceType>(porta::kDeviceTypeCount)) == nullptr);
  // devices() lists types in priority order, the CPU last.
  const std::vector<Device> all = porta::devices();
  REQUIRE(!all.empty());
  CHECK(all.back() == Device(DeviceType::cpu));
  for (std::size_t i = 1; i < all.size(); ++i)
    CHECK(porta::detail::facts(all[i - 1].type)->priority <= porta::detail::facts(all[i].type)->priority);
}
