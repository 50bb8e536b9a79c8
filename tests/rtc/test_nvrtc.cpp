// SPDX-License-Identifier: Apache-2.0
// NVRTC without a GPU: the programs porta generates for run-time kernels compile with the
// NVRTC that the CUDA plugin would dlopen, through the plugin's own loader and compile call
// (backends/gpu/rtc_compiler.hpp, plain C++), for the H200's sm_90 with the plugin's options. Where
// NVRTC is not installed the test says so and passes; loading and launching need a GPU
// (porta_rtc_tests on cuda:0).
#include <string>
#include <vector>

#include "algorithms/fuse_jit.hpp"
#include "backends/gpu/rtc_compiler.hpp"
#include "porta/fuse.hpp"
#include "porta/rtc.hpp"
#include "rtc/math_cases.hpp"
#include "support/catch.hpp"

namespace {

using porta::rtc::detail::Arg;
using porta::rtc::detail::ViewBits;

const porta::detail::gpu::RtcLibrary& nvrtc() {
  static const porta::detail::gpu::RtcLibrary lib = porta::detail::gpu::load_rtc_library(
      {"NVRTC", {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}, "nvrtc", "nvrtcGetCUBINSize", "nvrtcGetCUBIN"});
  return lib;
}

// The options of backends/cuda/cuda_plugin.cpp (rtc_options) for an H200.
const std::vector<std::string> kOptions{"--gpu-architecture=sm_90", "--std=c++17", "--fmad=false"};

float g_scalar = 2.0f;
double g_dscalar = 2.0;
ViewBits g_view{nullptr, 0};

Arg scalar_f32() {
  return Arg{"float", sizeof(float), &g_scalar, porta::Device(), false, "scalar", true};
}
Arg scalar_f64() {
  return Arg{"double", sizeof(double), &g_dscalar, porta::Device(), false, "scalar", true};
}
Arg view(const char* type) {
  return Arg{type, sizeof(ViewBits), &g_view, porta::Device(), true, "Array&", true};
}

porta::detail::gpu::RtcResult compile(const std::string& source, const std::string& kernel,
                                      const std::vector<Arg>& args, std::string* code, std::string* log) {
  const std::string text = porta::rtc::detail::program_text(source, kernel, args);
  return porta::detail::gpu::rtc_compile_program(nvrtc(), text.c_str(), kOptions, code, log);
}

const char* kSaxpy = R"(
PORTA_RTC_KERNEL void saxpy(porta_index i, float a, porta::rtc::View<const float> x, porta::rtc::View<float> y) {
  y[i] = a * x[i] + y[i];
})";

}  // namespace

TEST_CASE("nvrtc: porta's programs compile to sm_90 cubins without a GPU", "[rtc][nvrtc]") {
  if (!nvrtc().ok) {
    WARN("NVRTC is not installed here: " << nvrtc().why);
    return;
  }
  INFO(nvrtc().info);
  std::string code, log;
  REQUIRE(compile(kSaxpy, "saxpy",
                  {scalar_f32(), view("porta::rtc::View<const float>"), view("porta::rtc::View<float>")}, &code,
                  &log) == porta::detail::gpu::RtcResult::ok);
  INFO(log);
  REQUIRE(code.size() > 4);
  CHECK(code.compare(0, 4,
                     "\x7f"
                     "ELF") == 0);  // a cubin is an ELF file

  // The fused-expression benchmark's chain (plus a max), as a template over the dtype, with the
  // prelude's math.
  const char* chain = R"(
template <class T>
PORTA_RTC_KERNEL void chain(porta_index i, porta::rtc::View<const T> x, porta::rtc::View<const T> y,
                            porta::rtc::View<T> out) {
  out[i] = porta::rtc::sin(x[i]) * porta::rtc::cos(y[i]) + x[i] * y[i] + porta::rtc::max(x[i], y[i]);
})";
  for (const char* t : {"float", "double"}) {
    const std::string c = std::string("porta::rtc::View<const ") + t + ">";
    const std::string m = std::string("porta::rtc::View<") + t + ">";
    code.clear();
    log.clear();
    CHECK(compile(chain, std::string("chain<") + t + ">", {view(c.c_str()), view(c.c_str()), view(m.c_str())}, &code,
                  &log) == porta::detail::gpu::RtcResult::ok);
    INFO(log);
    CHECK(!code.empty());
  }
}

TEST_CASE("nvrtc: errors name the user's line, and a wrong argument type is a compile error", "[rtc][nvrtc]") {
  if (!nvrtc().ok) {
    WARN("NVRTC is not installed here: " << nvrtc().why);
    return;
  }
  std::string code, log;
  CHECK(compile("// one\nPORTA_RTC_KERNEL void bad(porta_index i, porta::rtc::View<float> y) {\n  y[i] = nope;\n}\n",
                "bad", {view("porta::rtc::View<float>")}, &code, &log) == porta::detail::gpu::RtcResult::compile_error);
  INFO(log);
  CHECK(log.find("porta_rtc_source(3)") != std::string::npos);
  CHECK(log.find("nope") != std::string::npos);

  log.clear();
  CHECK(compile(kSaxpy, "saxpy", {scalar_f64(), view("porta::rtc::View<const float>"), view("porta::rtc::View<float>")},
                &code, &log) == porta::detail::gpu::RtcResult::compile_error);
  INFO(log);
  CHECK(log.find("scalar argument's C++ type differs") != std::string::npos);
}

TEST_CASE("nvrtc: fused expressions' generated kernels compile, every op in float and double", "[rtc][nvrtc][fuse]") {
  if (!nvrtc().ok) {
    WARN("NVRTC is not installed here: " << nvrtc().why);
    return;
  }
  // Expressions are built on CPU arrays: only their programs are compiled here.
  const porta::Device cpu(porta::DeviceType::cpu);
  const auto compile_all = [&](auto zero) {
    using T = decltype(zero);
    const porta::Array<T> a = porta::full<T>(porta::Shape{4}, T(1), cpu),
                          b = porta::full<T>(porta::Shape{4}, T(2), cpu),
                          c = porta::full<T>(porta::Shape{4}, T(3), cpu);
    const auto x = porta::lazy(a), y = porta::lazy(b), z = porta::lazy(c);
    const std::vector<porta::Expr<T>> programs{
        porta::sin(x) * porta::cos(y) + x * y,
        porta::sigmoid(porta::tanh(porta::log(porta::exp(porta::sqrt(porta::abs(-porta::relu(porta::square(x)))))))),
        porta::pow(x, y) - porta::minimum(y, z) / (T(2) + x) + porta::maximum(T(0.5), z),
        porta::Expr<T>::binary(PORTA_BINARY_RELU_GRAD, x, y - T(1))};
    for (const porta::Expr<T>& e : programs) {
      const std::string text =
          porta::detail::fused_program_text(e.ops().data(), static_cast<std::int32_t>(e.ops().size()),
                                            static_cast<std::int32_t>(e.leaf_pointers().size()), sizeof(T) == 8);
      std::string code, log;
      INFO(text);
      CHECK(porta::detail::gpu::rtc_compile_program(nvrtc(), text.c_str(), kOptions, &code, &log) ==
            porta::detail::gpu::RtcResult::ok);
      INFO(log);
      CHECK(!code.empty());
    }
  };
  compile_all(0.0f);
  compile_all(0.0);
}

TEST_CASE("nvrtc: porta's math headers compile in the prelude, every function in float and double",
          "[rtc][nvrtc][math]") {
  if (!nvrtc().ok) {
    WARN("NVRTC is not installed here: " << nvrtc().why);
    return;
  }
  // The kernels porta_rtc_tests runs on cuda:0 against porta::math (test_rtc_math.cpp).
  for (const char* t : {"float", "double"}) {
    const std::string c = std::string("porta::rtc::View<const ") + t + ">";
    const std::string m = std::string("porta::rtc::View<") + t + ">";
    std::string code, log;
    CHECK(compile(porta_test::rtc_math::kernel_source(), std::string("all_math<") + t + ">",
                  {view(c.c_str()), view(c.c_str()), view(m.c_str())}, &code,
                  &log) == porta::detail::gpu::RtcResult::ok);
    INFO(log);
    CHECK(!code.empty());
    code.clear();
    log.clear();
    CHECK(compile(porta_test::rtc_math::fast_kernel_source(), std::string("fast_math<") + t + ">",
                  {view(c.c_str()), view(m.c_str())}, &code, &log) == porta::detail::gpu::RtcResult::ok);
    INFO(log);
    CHECK(!code.empty());
  }
}
