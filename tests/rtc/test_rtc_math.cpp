// SPDX-License-Identifier: Apache-2.0
// porta's math in run-time kernels: porta::rtc::exp, sin, pow, ... give porta::math's bits, bit for
// bit and with the canonical NaN, on every device (the prelude compiles the same headers on NVRTC,
// hiprtc and the host compiler), over edge arguments (+-0, +-inf, NaNs of every kind, subnormals,
// the boundaries of each function's ranges, large arguments of sin and cos) and random bits; the
// vendor's functions under porta::rtc::fast compile and are close.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "porta/rtc.hpp"
#include "rtc/math_cases.hpp"
#include "support/support.hpp"

using porta::Array;
using porta::Device;

namespace {

template <class T>
std::vector<T> edges() {
  using L = std::numeric_limits<T>;
  const bool f = sizeof(T) == 4;
  // clang-format off
  std::vector<T> v{T(0), T(1), T(0.5), T(2), T(3), T(0.75), T(1e-8), T(0.1), T(10), T(20), T(30),
                   T(89), T(104), T(700), T(710), T(746),                  // exp's and tanh's ranges
                   T(1.5707963267948966), T(3.141592653589793), T(4.71238898038469), T(355),  // near k pi/2
                   T(399.99), T(400), T(401), T(1.5e6), T(1.5e6) * (T(1) + L::epsilon()),  // sin's ranges
                   T(1e10), T(1e22), T(f ? 3e38 : 1e300),                    // Payne-Hanek
                   L::max(), L::min(), L::min() / T(2), L::denorm_min(),  // subnormals
                   L::infinity()};
  // clang-format on
  const std::size_t positive = v.size();
  for (std::size_t i = 0; i < positive; ++i) v.push_back(-v[i]);
  for (T nan : porta_test::nan_patterns<T>()) v.push_back(nan);
  return v;
}

template <class T>
T from_random_bits(std::uint64_t r) {
  T x;
  if constexpr (sizeof(T) == 4) {
    const std::uint32_t b = static_cast<std::uint32_t>(r >> 32);
    std::memcpy(&x, &b, sizeof x);
  } else {
    std::memcpy(&x, &r, sizeof x);
  }
  return x;
}

template <class T>
void check_all_math(Device dev) {
  PORTA_RNG(rng);
  // Every edge against a few partners (pow's and atan2's special pairs), then random bit patterns
  // (every exponent, subnormals, NaN payloads) and ordinary arguments.
  std::vector<T> hx, hy;
  const std::vector<T> e = edges<T>();
  // clang-format off
  const std::vector<T> partners{T(0), -T(0), T(1), -T(1), T(0.5), T(2), T(3), -T(3), T(-2.5),
                                std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
                                std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::denorm_min(),
                                std::numeric_limits<T>::max()};
  // clang-format on
  for (T a : e) {
    for (T b : partners) {
      hx.push_back(a);
      hy.push_back(b);
    }
  }
  for (int i = 0; i < 4096; ++i) {
    hx.push_back(from_random_bits<T>(rng.engine()()));
    hy.push_back(from_random_bits<T>(rng.engine()()));
  }
  const std::vector<T> ux = porta_test::uniform<T>(rng, 4096, T(-10), T(10));
  const std::vector<T> uy = porta_test::uniform<T>(rng, 4096, T(-10), T(10));
  hx.insert(hx.end(), ux.begin(), ux.end());
  hy.insert(hy.end(), uy.begin(), uy.end());

  const std::vector<porta_test::rtc_math::Function<T>> fns = porta_test::rtc_math::functions<T>();
  const std::int64_t n = static_cast<std::int64_t>(hx.size());
  const Array<T> x = Array<T>::from(hx, dev), y = Array<T>::from(hy, dev);
  Array<T> out = porta_test::poisoned<T>(porta::Shape{static_cast<std::int64_t>(fns.size()) * n}, dev);
  porta::rtc::Module m(porta_test::rtc_math::kernel_source());
  m.kernel(sizeof(T) == 4 ? "all_math<float>" : "all_math<double>").launch(dev, n, x, y, out);
  const std::vector<T> got = out.to_vector();

  for (std::size_t k = 0; k < fns.size(); ++k) {
    int mismatches = 0;
    std::ostringstream first;
    for (std::size_t i = 0; i < hx.size(); ++i) {
      const T ref = fns[k].host(hx[i], hy[i]);
      const T g = got[k * hx.size() + i];
      if (porta_test::same_bits(g, ref)) continue;
      if (mismatches++ < 4) {
        first << "\n  (" << porta_test::show(hx[i]) << ", " << porta_test::show(hy[i]) << "): got "
              << porta_test::show(g) << ", porta::math gives " << porta_test::show(ref);
      }
    }
    INFO(fns[k].name << " on " << dev.to_string() << ": " << mismatches << " of " << hx.size() << " differ"
                     << first.str());
    CHECK(mismatches == 0);
  }
}

template <class T>
void check_fast_math(Device dev) {
  PORTA_RNG(rng);
  const std::vector<T> hx = porta_test::uniform<T>(rng, 257, T(0.1), T(0.9));
  const auto refs = porta_test::rtc_math::fast_references<T>();
  const std::int64_t n = static_cast<std::int64_t>(hx.size());
  const Array<T> x = Array<T>::from(hx, dev);
  Array<T> out = porta_test::poisoned<T>(porta::Shape{static_cast<std::int64_t>(refs.size()) * n}, dev);
  porta::rtc::Module m(porta_test::rtc_math::fast_kernel_source());
  m.kernel(sizeof(T) == 4 ? "fast_math<float>" : "fast_math<double>").launch(dev, n, x, out);
  const std::vector<T> got = out.to_vector();
  // The vendors promise a few ulps (CUDA: at most 4 for these); porta's are within 1.
  const T tol = T(16) * std::numeric_limits<T>::epsilon();
  for (std::size_t k = 0; k < refs.size(); ++k) {
    for (std::size_t i = 0; i < hx.size(); ++i) {
      const T ref = refs[k](hx[i]);
      const T g = got[k * hx.size() + i];
      INFO("function " << k << " of fast_math at x = " << porta_test::show(hx[i]) << ": got " << porta_test::show(g)
                       << ", porta::math gives " << porta_test::show(ref));
      REQUIRE(std::fabs(g - ref) <= tol * std::fabs(ref));
    }
  }
}

}  // namespace

TEMPLATE_TEST_CASE("rtc: porta::rtc's math functions give porta::math's bits on every device", "[rtc][math]", float,
                   double) {
  check_all_math<TestType>(PORTA_TEST_DEVICE());
}

TEMPLATE_TEST_CASE("rtc: porta::rtc::fast, the vendor's functions, compile and are close", "[rtc][math]", float,
                   double) {
  check_fast_math<TestType>(PORTA_TEST_DEVICE());
}

TEST_CASE("rtc: the program text carries porta's math headers, so the disk cache's key changes with them",
          "[rtc][math]") {
  const std::string text = porta::rtc::detail::program_text("PORTA_RTC_KERNEL void k(porta_index) {}", "k", {});
  for (const char* header :
       {"config.hpp", "rounding.hpp", "math.hpp", "math_exp_log.hpp", "math_trig.hpp", "math_erf.hpp"}) {
    INFO(header);
    CHECK(text.find(std::string("#line 1 \"porta/detail/") + header + "\"") != std::string::npos);
  }
  // Passed on as written: no include is left for NVRTC to fail on, and std:: is the prelude's.
  CHECK(text.find("PORTA_HOST_DEVICE inline double exp(double x)") != std::string::npos);
  CHECK(text.find("#include \"porta/") == std::string::npos);
  CHECK(text.find(" std::uint64_t") == std::string::npos);
}
