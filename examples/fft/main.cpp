// SPDX-License-Identifier: Apache-2.0
// Fourier transforms on the default device (porta/fft.hpp), checked against answers known in
// closed form:
//   1. the spectrum of a sum of cosines is a few spikes of known height (rfft of n points);
//   2. a spectral Poisson solve: -laplace(u) = f on the periodic square [0, 2 pi)^2 with
//      u = sin(3x) cos(2y) + cos(5x + y) / 2, so f = 13 sin(3x) cos(2y) + 13 cos(5x + y); in
//      Fourier space u_k = f_k / |k|^2 (rfft2, one multiply, irfft2);
//   3. a circular convolution by the convolution theorem, against the direct sum.
//
//   fft [--n N]     points per axis (default 256; even)
#include <porta/porta.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/check.hpp"

namespace fft = porta::fft;

namespace {

constexpr double kPi = 3.14159265358979323846;

void report(const char* what, double err, double tol) {
  std::printf("  %-40s max error %.2e (tolerance %.0e)\n", what, err, tol);
  example::expect(err <= tol, what);
}

}  // namespace

int main(int argc, char** argv) try {
  std::int64_t n = 256;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--n") == 0) n = std::atoll(argv[i + 1]);
  if (n < 16 || n % 2 != 0) {
    std::fprintf(stderr, "fft: --n must be even and at least 16\n");
    return 2;
  }
  const porta::Device dev = porta::default_device();
  std::printf("Fourier transforms on %s, %lld points per axis\n", dev.to_string().c_str(), static_cast<long long>(n));
  const double h = 2 * kPi / static_cast<double>(n);

  // 1. 3 cos(5 t) + cos(12 t) - 2: spikes of 3n/2 at k = 5, n/2 at 12, -2n at 0, nothing elsewhere.
  {
    std::vector<double> s(static_cast<std::size_t>(n));
    for (std::int64_t j = 0; j < n; ++j) s[j] = 3 * std::cos(5 * j * h) + std::cos(12 * j * h) - 2;
    const porta::Array<double> spectrum = fft::rfft(porta::Array<double>::from(s, dev));
    const std::vector<double> got = spectrum.to_vector();  // (n/2 + 1, 2): real, imaginary
    double err = 0;
    for (std::int64_t k = 0; k <= n / 2; ++k) {
      const double want = k == 0 ? -2.0 * n : k == 5 ? 1.5 * n : k == 12 ? 0.5 * n : 0.0;
      err = std::max({err, std::fabs(got[2 * k] - want), std::fabs(got[2 * k + 1])});
    }
    report("rfft of three cosines", err / n, 1e-12);
  }

  // 2. The Poisson solve.
  {
    std::vector<double> f(static_cast<std::size_t>(n * n)), u(f.size());
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const double x = i * h, y = j * h;
        u[i * n + j] = std::sin(3 * x) * std::cos(2 * y) + 0.5 * std::cos(5 * x + y);
        f[i * n + j] = 13 * std::sin(3 * x) * std::cos(2 * y) + 13 * std::cos(5 * x + y);
      }
    // 1 / |k|^2 for each of rfft2's n x (n/2 + 1) frequencies, 0 for k = 0 (u has mean zero).
    const std::int64_t m = n / 2 + 1;
    std::vector<double> inverse_k2(static_cast<std::size_t>(n * m));
    for (std::int64_t a = 0; a < n; ++a)
      for (std::int64_t b = 0; b < m; ++b) {
        const double kx = static_cast<double>(a <= n / 2 ? a : a - n), ky = static_cast<double>(b);
        inverse_k2[a * m + b] = a == 0 && b == 0 ? 0.0 : 1.0 / (kx * kx + ky * ky);
      }
    const auto F = porta::Array<double>::from(f, porta::Shape{n, n}, dev);
    const auto w = porta::Array<double>::from(inverse_k2, porta::Shape{n * m, 1}, dev);
    // u_k = f_k / |k|^2: the (n, m, 2) spectrum as n*m rows of (real, imaginary), each times its w.
    const porta::Array<double> f_hat = fft::rfft2(F);
    const porta::Array<double> u_hat = f_hat.reshaped({n * m, 2}) * w;
    const porta::Array<double> solution = fft::irfft2(u_hat.reshaped({n, m, 2}), n);
    const std::vector<double> got = solution.to_vector();
    double err = 0;
    for (std::size_t i = 0; i < got.size(); ++i) err = std::max(err, std::fabs(got[i] - u[i]));
    report("spectral Poisson solve", err, 1e-12);
  }

  // 3. (a (*) b)[j] = sum_i a[i] b[(j - i) mod n] = ifft(fft(a) fft(b)), in float, eight signals
  // at once (a batch of rows).
  {
    const std::int64_t rows = 8;
    std::vector<float> a(static_cast<std::size_t>(rows * n)), b(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)));
      b[i] = static_cast<float>(std::cos(0.11 * static_cast<double>(i * i % 97)));
    }
    const auto da = porta::Array<float>::from(a, porta::Shape{rows, n}, dev);
    const auto db = porta::Array<float>::from(b, porta::Shape{rows, n}, dev);
    // The spectra's product, on the device: the real and imaginary parts are views (the last axis).
    const porta::Array<float> A = fft::rfft(da), B = fft::rfft(db);
    const auto re = [](const porta::Array<float>& z) { return z.slice(2, 0, 1); };
    const auto im = [](const porta::Array<float>& z) { return z.slice(2, 1, 2); };
    porta::Array<float> product(A.shape(), dev);
    product.slice(2, 0, 1).assign(re(A) * re(B) - im(A) * im(B));
    product.slice(2, 1, 2).assign(re(A) * im(B) + im(A) * re(B));
    const porta::Array<float> conv = fft::irfft(product, n);
    const std::vector<float> got = conv.to_vector();
    double err = 0;
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (std::int64_t i = 0; i < n; ++i) want += static_cast<double>(a[r * n + i]) * b[r * n + (j - i + n) % n];
        err = std::max(err, std::fabs(got[r * n + j] - want));
      }
    report("circular convolution (float)", err,
           1e-6 * std::sqrt(static_cast<double>(n)) * std::log2(static_cast<double>(n)));
  }
  return example::summary();
} catch (const porta::Error& e) {
  std::fprintf(stderr, "fft: %s\n", e.what());
  return 1;
}
