// SPDX-License-Identifier: Apache-2.0
// porta in one page: a map, a reduction and a matmul on the best device the machine has, each
// checked against a double-precision reference computed on the host.
//
//   ./quickstart                     # cuda:0, else hip:0, else cpu
//   PORTA_DEVICE=cpu ./quickstart    # force a device (an unavailable one is an error, not a fallback)
//   ./quickstart 4000000 512         # vector length, matrix size
//
// This file is plain C++: it uses only built-in algorithms, so g++ or clang++ compile it, and the
// same binary runs on a GPU when one is there.
#include <porta/porta.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <vector>

namespace {

// Unit roundoff of float: every correctly rounded float operation is off by at most u * |result|.
constexpr double u = std::numeric_limits<float>::epsilon() / 2;

// A worst-case bound for a sum of k float terms in any order (Higham's gamma_k): the tolerances
// below are guarantees, not guesses, so a failure means a real bug.
double gamma_k(double k) {
  return k * u / (1 - k * u);
}

// Compares each element against its own bound, and keeps the largest error for the report.
struct Check {
  double max_err = 0, max_bound = 0;
  long wrong = 0;
  void add(double err, double bound) {
    max_err = std::max(max_err, err);
    max_bound = std::max(max_bound, bound);
    if (!(err <= bound)) ++wrong;  // a NaN is wrong too
  }
};

int failures = 0;

void report(const char* what, const Check& c) {
  if (c.wrong) ++failures;
  std::printf("  %-28s max error %.3g (bound %.3g)  %s\n", what, c.max_err, c.max_bound, c.wrong ? "WRONG" : "OK");
}

std::vector<float> random_vector(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

}  // namespace

int main(int argc, char** argv) try {
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 1000000;
  const std::int64_t m = argc > 2 ? std::atoll(argv[2]) : 256;  // matmul: (m x m) * (m x m)

  // PyTorch's `device = "cuda" if torch.cuda.is_available() else "cpu"`, with PORTA_DEVICE to override.
  const porta::Device dev = porta::default_device();
  std::printf("porta quickstart on %s\n", porta::describe(dev).c_str());

  std::mt19937 rng(42);
  const std::vector<float> hx = random_vector(static_cast<std::size_t>(n), rng);
  const std::vector<float> hy = random_vector(static_cast<std::size_t>(n), rng);
  const auto x = porta::Array<float>::from(hx, dev);  // host -> device
  auto y = porta::Array<float>::from(hy, dev);

  // ---- maps: one thread per element on a GPU, OpenMP threads on the CPU ------------------------
  std::printf("maps, n = %lld\n", static_cast<long long>(n));
  porta::axpy(2.0f, x, y);                          // y = 2x + y, in place
  auto z = porta::exp(x) * 3.0f + y;                // each operator is one map that allocates its result
  const std::vector<float> y_back = y.to_vector();  // device -> host (waits for the work above)
  const std::vector<float> z_back = z.to_vector();
  Check cy, cz;
  for (std::size_t i = 0; i < hx.size(); ++i) {
    const double yr = 2.0 * hx[i] + hy[i];
    cy.add(std::abs(y_back[i] - yr), 2 * u * (2 * std::abs(hx[i]) + std::abs(hy[i])));
    // exp may be off by a few ulps (vendor math libraries differ); then one product and one sum.
    const double e = std::exp(static_cast<double>(hx[i]));
    const double zr = e * 3.0 + static_cast<double>(y_back[i]);
    cz.add(std::abs(z_back[i] - zr), 8 * u * (3 * e + std::abs(y_back[i])));
  }
  report("axpy    y = 2x + y", cy);
  report("map     z = 3 exp(x) + y", cz);

  // ---- reductions: the result comes back to the host, with the same bits on every backend ------
  std::printf("reductions, n = %lld\n", static_cast<long long>(n));
  const float s = porta::sum(y);
  const float d = porta::dot(x, y);
  double s_ref = 0, s_abs = 0, d_ref = 0, d_abs = 0;
  for (std::size_t i = 0; i < hx.size(); ++i) {
    s_ref += y_back[i];
    s_abs += std::abs(y_back[i]);
    d_ref += static_cast<double>(hx[i]) * y_back[i];
    d_abs += std::abs(static_cast<double>(hx[i]) * y_back[i]);
  }
  Check cs, cd;
  cs.add(std::abs(s - s_ref), gamma_k(static_cast<double>(n)) * s_abs);
  cd.add(std::abs(d - d_ref), gamma_k(static_cast<double>(n) + 1) * d_abs);
  report("sum     sum(y)", cs);
  report("dot     dot(x, y)", cd);
  // Those bounds hold for any summation order, so they are loose. Values in {-1, 0, 1} make every
  // partial sum an integer below 2^24, exact in float in any order: then the results must equal
  // the host's exactly, and a lost or repeated element cannot hide in the rounding error.
  if (n <= (1 << 24)) {
    std::uniform_int_distribution<int> trit(-1, 1);
    std::vector<float> hu(hx.size()), hv(hx.size());
    double su = 0, duv = 0;
    for (std::size_t i = 0; i < hu.size(); ++i) {
      hu[i] = float(trit(rng));
      hv[i] = float(trit(rng));
      su += hu[i];
      duv += hu[i] * hv[i];
    }
    const auto xu = porta::Array<float>::from(hu, dev), xv = porta::Array<float>::from(hv, dev);
    Check cse, cde;
    cse.add(std::abs(porta::sum(xu) - su), 0);
    cde.add(std::abs(porta::dot(xu, xv) - duv), 0);
    report("sum     values in {-1,0,1}", cse);
    report("dot     values in {-1,0,1}", cde);
  }

  // ---- matmul: cuBLAS / rocBLAS / a CPU BLAS underneath ----------------------------------------
  std::printf("matmul, (%lld x %lld) * (%lld x %lld)\n", static_cast<long long>(m), static_cast<long long>(m),
              static_cast<long long>(m), static_cast<long long>(m));
  const std::vector<float> ha = random_vector(static_cast<std::size_t>(m * m), rng);
  const std::vector<float> hb = random_vector(static_cast<std::size_t>(m * m), rng);
  const auto a = porta::Array<float>::from(ha, {m, m}, dev);  // row-major m x m
  const auto b = porta::Array<float>::from(hb, {m, m}, dev);
  const auto c = porta::matmul(a, b);  // full fp32 arithmetic (no TF32) unless asked for
  const std::vector<float> hc = c.to_vector();
  Check cc;
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < m; ++j) {
      double ref = 0, abs_sum = 0;
      for (std::int64_t k = 0; k < m; ++k) {
        const double p = static_cast<double>(ha[i * m + k]) * hb[k * m + j];
        ref += p;
        abs_sum += std::abs(p);
      }
      cc.add(std::abs(hc[i * m + j] - ref), gamma_k(static_cast<double>(m)) * abs_sum);
    }
  }
  report("matmul  C = A B", cc);

  if (failures) {
    std::printf("%d check(s) WRONG on %s\n", failures, dev.to_string().c_str());
    return 1;
  }
  std::printf("all checks OK on %s\n", dev.to_string().c_str());
  return 0;
} catch (const porta::Error& e) {
  // Every porta failure is a porta::Error whose message names the function and the values involved.
  std::fprintf(stderr, "porta error: %s\n", e.what());
  return 2;
}
