// SPDX-License-Identifier: Apache-2.0
// Run-time compiled kernels (porta/rtc.hpp): CuPy's RawKernel and PyCUDA's SourceModule from plain
// C++. No nvcc in this build: the kernels below are compiled when they first run on a device (NVRTC
// on CUDA, hiprtc on HIP, the host compiler on the CPU), then come from the disk cache. The
// four-op chain sin(x)*cos(y)+x*y and examples/fused's Black-Scholes pricer (same formula, same inputs), each checked
// against the eager operators and a double-precision host reference.
//
//   ./rtc [--n 1048576]          # on porta::default_device(); PORTA_DEVICE=cuda:0 to choose
#include <chrono>
#include <cmath>
#include <cstdint>
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

// The four-op chain, out = sin(x) * cos(y) + x * y, and SAXPY, in porta's dialect.
const char* kSource = R"(
PORTA_RTC_KERNEL void saxpy(porta_index i, float a, porta::rtc::View<const float> x, porta::rtc::View<float> y) {
  y[i] = a * x[i] + y[i];
}

PORTA_RTC_KERNEL void chain(porta_index i, porta::rtc::View<const float> x, porta::rtc::View<const float> y,
                            porta::rtc::View<float> out) {
  const float a = x[i], b = y[i];  // each element read once (docs/rtc.md, "Speed")
  out[i] = porta::rtc::sin(a) * porta::rtc::cos(b) + a * b;
}
)";

// Black-Scholes call prices, examples/fused's formula op for op (the normal CDF as a tanh
// approximation); the rate and the volatility are arguments, so kRate and kVol below are their
// only definition. The CDF's two coefficients are also in black_scholes() below: a run-time
// kernel's source is text, and the eager and host versions are C++.
const char* kBlackScholes = R"(
PORTA_RTC_FUNCTION double cdf(double d) {
  return 0.5 * (1.0 + porta::rtc::tanh(0.7978845608 * (d + 0.044715 * d * d * d)));
}

PORTA_RTC_KERNEL void black_scholes(porta_index i, porta::rtc::View<const double> s, porta::rtc::View<const double> k,
                                    porta::rtc::View<const double> t, double r, double v,
                                    porta::rtc::View<double> price) {
  const double d1 = (porta::rtc::log(s[i] / k[i]) + (r + 0.5 * v * v) * t[i]) / (v * porta::rtc::sqrt(t[i]));
  const double d2 = d1 - v * porta::rtc::sqrt(t[i]);
  price[i] = s[i] * cdf(d1) - k[i] * porta::rtc::exp(-r * t[i]) * cdf(d2);
}
)";
constexpr double kRate = 0.02, kVol = 0.3;

// The same formula in C++, for porta's eager operators (X = Array<double>: every op a pass over
// memory, as examples/fused's eager pricer) and for the host reference in double (X = double).
template <class X>
X black_scholes(const X& s, const X& k, const X& t) {
  using std::exp;
  using std::log;
  using std::sqrt;
  using std::tanh;
  const double r = kRate, v = kVol;
  auto cdf = [](const X& d) { return 0.5 * (1.0 + tanh(0.7978845608 * (d + 0.044715 * d * d * d))); };
  const X d1 = (log(s / k) + (r + 0.5 * v * v) * t) / (v * sqrt(t));
  const X d2 = d1 - v * sqrt(t);
  return s * cdf(d1) - k * exp(-r * t) * cdf(d2);
}

// Elements whose bits differ.
template <class T>
std::size_t bits_differ(const std::vector<T>& a, const std::vector<T>& b) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < a.size(); ++i) count += std::memcmp(&a[i], &b[i], sizeof(T)) != 0;
  return count;
}

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
  const std::size_t chain_bits = bits_differ(got, want);
  std::printf(
      "chain: %zu of %zu results differ in their bits from the eager operators (largest difference %.3g), "
      "largest difference %.3g from the host in double\n",
      chain_bits, got.size(), worst_eager, worst_host);

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

  // Black-Scholes on examples/fused's inputs: spot and strike in [10, 100), years in [0.25, 2).
  const porta::Array<double> s = porta::random::uniform<double>(porta::Shape{n}, 3, dev) * 90 + 10;
  const porta::Array<double> k = porta::random::uniform<double>(porta::Shape{n}, 4, dev) * 90 + 10;
  const porta::Array<double> t = porta::random::uniform<double>(porta::Shape{n}, 5, dev) * 1.75 + 0.25;
  porta::rtc::Module bs_module(kBlackScholes);
  porta::rtc::Kernel bs = bs_module.kernel("black_scholes");
  porta::Array<double> price(porta::Shape{n}, dev);
  const std::uint64_t compiles = porta::rtc::stats().compiles;
  const double bs_first = time_ms(dev, [&] { bs.launch(dev, n, s, k, t, kRate, kVol, price); });
  const bool bs_compiled = porta::rtc::stats().compiles > compiles;
  const double bs_cached = time_ms(dev, [&] { bs.launch(dev, n, s, k, t, kRate, kVol, price); });
  porta::Array<double> bs_eager = black_scholes(s, k, t);
  const double bs_eager_ms = time_ms(dev, [&] { bs_eager = black_scholes(s, k, t); });
  const std::vector<double> hp = price.to_vector(), hpe = bs_eager.to_vector();
  const std::vector<double> hs = s.to_vector(), hk = k.to_vector(), ht = t.to_vector();
  double worst_bs = 0;
  for (std::size_t i = 0; i < hp.size(); ++i)
    worst_bs = std::fmax(worst_bs, std::fabs(hp[i] - black_scholes(hs[i], hk[i], ht[i])));
  const std::size_t bs_bits = bits_differ(hp, hpe);
  std::printf("black-scholes: first call %.2f ms (%s), next call %.3f ms (eager operators %.3f ms)\n", bs_first,
              bs_compiled ? "compiled" : "from the disk cache", bs_cached, bs_eager_ms);
  std::printf(
      "black-scholes: %zu of %zu prices differ in their bits from the eager operators, largest difference "
      "%.3g from the host in double\n",
      bs_bits, hp.size(), worst_bs);

  // Neither the dialect nor porta's operators contract a * b + c into an FMA, so the run-time kernels
  // give the eager operators' bits wherever both call the same math library: always on the CPU (the
  // host compiler's libm on both sides). On a GPU the eager kernels' sin, log, tanh, ... are those of
  // the toolkit porta was built with, the kernel's those of the NVRTC or hiprtc found at run time:
  // the same bits when the versions match, else within the library's few ulps, which the tolerances
  // cover. Chain: x and y in [-1, 1], results below 2, so 1e-5 is some 40 float ulps. Black-Scholes:
  // prices below 100 in double, each op rounded once (about 1e-14), so 1e-9 is as in examples/fused.
  const bool cpu = !dev.is_gpu();
  const bool ok = worst_eager < 1e-5 && worst_host < 1e-5 && worst_saxpy == 0 && worst_bs < 1e-9 &&
                  (!cpu || (chain_bits == 0 && bs_bits == 0));
  std::printf("%s\n", ok ? "ok" : "WRONG RESULT");
  return ok ? 0 : 1;
}
