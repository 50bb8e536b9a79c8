// SPDX-License-Identifier: Apache-2.0
// Run-time compiled kernels (porta/rtc.hpp): CuPy's RawKernel and PyCUDA's SourceModule from plain
// C++. No nvcc in this build: the kernels below are compiled when they first run on a device (NVRTC
// on CUDA, hiprtc on HIP, the host compiler on the CPU), then come from the disk cache.
//
//   ./rtc [--n 1048576]          # on porta::default_device(); PORTA_DEVICE=cuda:0 to choose
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "porta/porta.hpp"
#include "porta/rtc.hpp"

namespace {

// Milliseconds of f(), after waiting for the device.
template <class F>
double time_ms(porta::Device dev, F&& f) {
  porta::synchronize(dev);
  const auto t0 = std::chrono::steady_clock::now();
  f();
  porta::synchronize(dev);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The issue's four-op chain, out = sin(x) * cos(y) + x * y, and SAXPY, in porta's dialect.
const char* kSource = R"(
PORTA_RTC_KERNEL void saxpy(porta_index i, float a, porta::rtc::View<const float> x, porta::rtc::View<float> y) {
  y[i] = a * x[i] + y[i];
}

PORTA_RTC_KERNEL void chain(porta_index i, porta::rtc::View<const float> x, porta::rtc::View<const float> y,
                            porta::rtc::View<float> out) {
  out[i] = porta::rtc::sin(x[i]) * porta::rtc::cos(y[i]) + x[i] * y[i];
}
)";

}  // namespace

int main(int argc, char** argv) {
  std::int64_t n = 1 << 20;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--n") == 0) n = std::atoll(argv[i + 1]);
  const porta::Device dev = porta::default_device();
  std::printf("run-time kernels on %s (%s), n = %lld\n", dev.to_string().c_str(),
              porta::rtc::compiler_info(dev).c_str(), static_cast<long long>(n));

  std::vector<float> hx(static_cast<std::size_t>(n)), hy(hx.size());
  for (std::size_t i = 0; i < hx.size(); ++i) {
    hx[i] = static_cast<float>(std::sin(0.001 * static_cast<double>(i)));
    hy[i] = static_cast<float>(std::cos(0.002 * static_cast<double>(i)));
  }
  const porta::Array<float> x = porta::Array<float>::from(hx, dev);
  const porta::Array<float> y = porta::Array<float>::from(hy, dev);

  porta::rtc::Module module(kSource);
  porta::rtc::Kernel chain = module.kernel("chain");
  porta::Array<float> out(porta::Shape{n}, dev);
  // The first call compiles for this device (or loads the disk cache's binary); later calls launch.
  const double first = time_ms(dev, [&] { chain.launch(dev, n, x, y, out); });
  const double cached = time_ms(dev, [&] { chain.launch(dev, n, x, y, out); });
  const porta::rtc::Stats st = porta::rtc::stats();
  std::printf("chain: first call %.2f ms (%s), next call %.3f ms\n", first,
              st.compiles > 0 ? "compiled" : "from the disk cache", cached);

  // The same chain through the eager operators (four passes over memory) and on the host.
  const porta::Array<float> eager = porta::add(porta::mul(porta::sin(x), porta::cos(y)), porta::mul(x, y));
  const std::vector<float> got = out.to_vector(), want = eager.to_vector();
  double worst_eager = 0, worst_host = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double ref = std::sin(static_cast<double>(hx[i])) * std::cos(static_cast<double>(hy[i])) +
                       static_cast<double>(hx[i]) * static_cast<double>(hy[i]);
    worst_eager = std::fmax(worst_eager, std::fabs(static_cast<double>(got[i]) - want[i]));
    worst_host = std::fmax(worst_host, std::fabs(static_cast<double>(got[i]) - ref));
  }
  std::printf("chain: largest difference %.3g from the eager operators, %.3g from the host in double\n", worst_eager,
              worst_host);

  // SAXPY on a stream of the device, the scalar passed by value.
  porta::Array<float> z = y.clone();
  porta::Stream stream(dev);
  module.kernel("saxpy").launch(stream, n, 2.0f, x, z);
  const std::vector<float> hz = z.to_vector(stream);
  double worst_saxpy = 0;
  for (std::size_t i = 0; i < hz.size(); ++i) {
    const float ax = 2.0f * hx[i];
    worst_saxpy = std::fmax(worst_saxpy, std::fabs(static_cast<double>(hz[i]) - (ax + hy[i])));
  }
  std::printf("saxpy: largest difference %.3g from the host\n", worst_saxpy);

  const bool ok = worst_eager < 1e-5 && worst_host < 1e-5 && worst_saxpy == 0;
  std::printf("%s\n", ok ? "ok" : "WRONG RESULT");
  return ok ? 0 : 1;
}
