// SPDX-License-Identifier: Apache-2.0
// Fused expressions from plain C++ (porta/fuse.hpp, docs/fused.md): the four-op chain sin(x)*cos(y)+x*y and a
// Black-Scholes pricer, each written with porta's eager operators and as a fused expression, checked
// against each other bit for bit and against a double-precision host reference, and timed on the
// host. A plain C++ file: no GPU compiler, yet one pass over memory on every device.
//
//   fused [--n N] [--reps R]
#include <porta/fuse.hpp>
#include <porta/porta.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Host milliseconds of f() (after one warm-up call), the best of `reps`, the device drained each time.
template <class F>
double best_ms(porta::Device dev, int reps, F&& f) {
  f();
  porta::synchronize(dev);
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    porta::synchronize(dev);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    best = ms < best ? ms : best;
  }
  return best;
}

// The normal CDF as a tanh approximation, written once for eager arrays and for expressions.
template <class X>
auto cdf(const X& d) {
  return 0.5 * (1.0 + porta::tanh(0.7978845608 * (d + 0.044715 * d * d * d)));
}
double cdf_host(double d) {
  return 0.5 * (1.0 + std::tanh(0.7978845608 * (d + 0.044715 * d * d * d)));
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t n = std::int64_t(1) << 20;
  int reps = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--n") == 0) n = std::atoll(argv[i + 1]);
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::atoi(argv[i + 1]);
  }
  const porta::Device dev = porta::default_device();
  std::printf("fused expressions on %s, n = %lld\n", dev.to_string().c_str(), static_cast<long long>(n));
  bool ok = true;

  // ---- the chain: sin(x) * cos(y) + x * y ---------------------------------------------------------
  {
    // x, y in [-4, 4)
    const porta::Array<float> xa = porta::random::uniform<float>(porta::Shape{n}, 1, dev) * 8 - 4;
    const porta::Array<float> ya = porta::random::uniform<float>(porta::Shape{n}, 2, dev) * 8 - 4;
    // eager: four maps, three temporaries
    porta::Array<float> eager = porta::sin(xa) * porta::cos(ya) + xa * ya;
    // fused: one pass
    auto x = porta::lazy(xa), y = porta::lazy(ya);
    porta::Array<float> fused = porta::sin(x) * porta::cos(y) + x * y;
    // reduced: one pass into a temporary, then porta::sum: the bits of porta::sum(eager)
    const float total = porta::sum(porta::sin(x) * porta::cos(y) + x * y);
    const float total_eager = porta::sum(eager);
    ok = ok && std::memcmp(&total, &total_eager, sizeof total) == 0;
    const auto he = eager.to_vector(), hf = fused.to_vector(), hx = xa.to_vector(), hy = ya.to_vector();
    double worst = 0;
    for (std::size_t i = 0; i < hf.size(); ++i) {
      const double r = std::sin(double(hx[i])) * std::cos(double(hy[i])) + double(hx[i]) * double(hy[i]);
      worst = std::fmax(worst, std::fabs(double(hf[i]) - r));
    }
    const bool bits = same_bits(he, hf);
    ok = ok && bits && worst < 1e-5;
    const double te = best_ms(dev, reps, [&] { eager = porta::sin(xa) * porta::cos(ya) + xa * ya; });
    const double tf = best_ms(dev, reps, [&] { fused.assign(porta::sin(x) * porta::cos(y) + x * y); });
    std::printf("chain         eager %8.3f ms  fused %8.3f ms  (%.2fx)  same bits: %s  max |error| vs double %.2e\n",
                te, tf, te / tf, bits ? "yes" : "NO", worst);
  }

  // ---- Black-Scholes call prices ------------------------------------------------------------------
  {
    const porta::Array<double> sa = porta::random::uniform<double>(porta::Shape{n}, 3, dev) * 90 + 10;      // spot
    const porta::Array<double> ka = porta::random::uniform<double>(porta::Shape{n}, 4, dev) * 90 + 10;      // strike
    const porta::Array<double> ta = porta::random::uniform<double>(porta::Shape{n}, 5, dev) * 1.75 + 0.25;  // years
    const double r = 0.02, v = 0.3;
    // eager: every op a pass over memory
    auto price_eager = [&] {
      const auto d1 = (porta::log(sa / ka) + (r + 0.5 * v * v) * ta) / (v * porta::sqrt(ta));
      const auto d2 = d1 - v * porta::sqrt(ta);
      return sa * cdf(d1) - ka * porta::exp(-r * ta) * cdf(d2);
    };
    // fused: d1 is read by both CDFs, so it is evaluated once into an array; the price is one pass
    auto S = porta::lazy(sa), K = porta::lazy(ka), T = porta::lazy(ta);
    porta::Array<double> d1a = (porta::log(S / K) + (r + 0.5 * v * v) * T) / (v * porta::sqrt(T));
    auto price_fused = [&] {
      d1a.assign((porta::log(S / K) + (r + 0.5 * v * v) * T) / (v * porta::sqrt(T)));
      auto d1 = porta::lazy(d1a);
      auto d2 = d1 - v * porta::sqrt(T);
      porta::Array<double> price = S * cdf(d1) - K * porta::exp(-r * T) * cdf(d2);
      return price;
    };
    porta::Array<double> eager = price_eager(), fused = price_fused();
    const auto he = eager.to_vector(), hf = fused.to_vector();
    const auto hs = sa.to_vector(), hk = ka.to_vector(), ht = ta.to_vector();
    double worst = 0;
    for (std::size_t i = 0; i < hf.size(); ++i) {
      const double d1 = (std::log(hs[i] / hk[i]) + (r + 0.5 * v * v) * ht[i]) / (v * std::sqrt(ht[i]));
      const double d2 = d1 - v * std::sqrt(ht[i]);
      const double p = hs[i] * cdf_host(d1) - hk[i] * std::exp(-r * ht[i]) * cdf_host(d2);
      worst = std::fmax(worst, std::fabs(hf[i] - p));
    }
    const bool bits = same_bits(he, hf);
    ok = ok && bits && worst < 1e-9;
    const double te = best_ms(dev, reps, [&] { eager = price_eager(); });
    const double tf = best_ms(dev, reps, [&] { fused = price_fused(); });
    std::printf("black-scholes eager %8.3f ms  fused %8.3f ms  (%.2fx)  same bits: %s  max |error| vs double %.2e\n",
                te, tf, te / tf, bits ? "yes" : "NO", worst);
  }

  std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
