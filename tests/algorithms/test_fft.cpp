// SPDX-License-Identifier: Apache-2.0
// porta::fft on every device against the definition: each transform is recomputed on the host as
// the textbook DFT sum in long double (one axis at a time), for lengths that take every path of the
// engines (powers of two, radices 3, 5, 7 and other primes below 64, primes past it through
// Bluestein, lengths long enough for the CPU's six-step split), batches, 2-D and 3-D transforms over
// any axes, the three normalisations, strided inputs, NumPy's cropping and padding of irfft's input,
// and the errors. Fresh random inputs each run; the inputs are checked unchanged afterwards.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::Shape;
namespace pf = porta::fft;

namespace {

using C = std::complex<long double>;
constexpr long double kPi = 3.141592653589793238462643383279502884L;

template <class T>
long double eps() {
  return static_cast<long double>(std::numeric_limits<T>::epsilon());
}

// A host array of complex values with its shape (row-major, without the pair axis).
struct Field {
  std::vector<std::int64_t> dims;
  std::vector<C> v;
  std::int64_t size() const { return static_cast<std::int64_t>(v.size()); }
};

// exp(sign 2 pi i k / n) with k reduced exactly first.
C unit_root(std::int64_t k, std::int64_t n, int sign) {
  const long double a = sign * 2 * kPi * static_cast<long double>(k % n) / static_cast<long double>(n);
  return C(std::cos(a), std::sin(a));
}

// The DFT along `axis` (sign -1: forward, +1: inverse, unscaled). When `only` is set, just those
// output indices along the axis are computed (the others are NaN): the long lengths.
Field dft_axis(const Field& x, int axis, int sign, const std::vector<std::int64_t>* only = nullptr) {
  const std::int64_t n = x.dims[axis];
  std::int64_t outer = 1, inner = 1;
  for (int a = 0; a < axis; ++a) outer *= x.dims[a];
  for (std::size_t a = axis + 1; a < x.dims.size(); ++a) inner *= x.dims[a];
  Field y{x.dims, std::vector<C>(x.v.size(), C(NAN, NAN))};
  std::vector<std::int64_t> ks;
  if (only != nullptr)
    ks = *only;
  else
    for (std::int64_t k = 0; k < n; ++k) ks.push_back(k);
  std::vector<C> roots(static_cast<std::size_t>(n));
  for (std::int64_t t = 0; t < n; ++t) roots[t] = unit_root(t, n, sign);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i)
      for (const std::int64_t k : ks) {
        // Spelt out: std::complex's operator* checks for NaN and infinity on every product.
        long double re = 0, im = 0;
        for (std::int64_t j = 0, t = 0; j < n; ++j, t = t + k >= n ? t + k - n : t + k) {
          const C a = x.v[(o * n + j) * inner + i], w = roots[t];
          re += a.real() * w.real() - a.imag() * w.imag();
          im += a.real() * w.imag() + a.imag() * w.real();
        }
        y.v[(o * n + k) * inner + i] = C(re, im);
      }
  return y;
}

Field dft(Field x, const std::vector<int>& axes, int sign) {
  for (const int a : axes) x = dft_axis(x, a, sign);
  return x;
}

// numpy.fft.irfft along the last axis: the input cropped or zero-padded to n / 2 + 1 values, the
// imaginary parts of bin 0 and (even n) n / 2 ignored, unscaled.
Field c2r_last(const Field& x, std::int64_t n) {
  const std::int64_t m = x.dims.back(), lines = x.size() / m, keep = n / 2 + 1;
  Field y{x.dims, {}};
  y.dims.back() = n;
  y.v.assign(static_cast<std::size_t>(lines * n), C(0));
  for (std::int64_t l = 0; l < lines; ++l)
    for (std::int64_t j = 0; j < n; ++j) {
      long double acc = 0;
      for (std::int64_t k = 0; k < std::min(keep, m); ++k) {
        const C X = x.v[l * m + k];
        const bool self_conjugate = k == 0 || 2 * k == n;
        acc += self_conjugate ? X.real() * unit_root(j * k, n, 1).real() : 2 * (X * unit_root(j * k, n, 1)).real();
      }
      y.v[l * n + j] = acc;
    }
  return y;
}

// Fresh values in [-1, 1].
template <class T>
std::vector<T> random_values(porta_test::Rng& rng, std::int64_t n) {
  return porta_test::uniform<T>(rng, n, T(-1), T(1));
}

// Interleaved pairs <-> complex values.
template <class T>
Field complex_field(const std::vector<T>& pairs, std::vector<std::int64_t> dims) {
  Field f{std::move(dims), {}};
  for (std::size_t i = 0; i + 1 < pairs.size(); i += 2) f.v.emplace_back(pairs[i], pairs[i + 1]);
  return f;
}
template <class T>
Field real_field(const std::vector<T>& values, std::vector<std::int64_t> dims) {
  Field f{std::move(dims), {}};
  for (const T v : values) f.v.emplace_back(v, 0);
  return f;
}

Shape shape_of(const std::vector<std::int64_t>& dims, bool pair) {
  std::vector<std::int64_t> d = dims;
  if (pair) d.push_back(2);
  return porta::detail::make_shape(d.data(), static_cast<int>(d.size()));
}

// Every element of `got` (complex pairs, or reals) within tol of the reference; NaN references are
// the bins not computed.
template <class T>
void require_close(const Array<T>& got_array, const Field& want, bool pair, long double tol, const std::string& what) {
  const std::vector<T> got = got_array.to_vector();
  REQUIRE(static_cast<std::int64_t>(got.size()) == want.size() * (pair ? 2 : 1));
  long double worst = 0;
  std::int64_t at = -1;
  for (std::int64_t i = 0; i < want.size(); ++i) {
    if (std::isnan(static_cast<double>(want.v[i].real()))) continue;
    const C g = pair ? C(got[2 * i], got[2 * i + 1]) : C(got[i], 0);
    const long double e = std::abs(g - (pair ? want.v[i] : C(want.v[i].real(), 0)));
    if (!(e <= worst)) worst = e, at = i;  // NaN output counts as the worst
  }
  INFO(what << ": worst error " << static_cast<double>(worst) << " at element " << at << ", tolerance "
            << static_cast<double>(tol));
  CHECK(worst <= tol);
}

// Rounding of an FFT grows like log2(n); values are sums of n terms of size <= 1 (sqrt(n) in rms).
template <class T>
long double tolerance(std::int64_t n) {
  return 8 * eps<T>() * (std::log2(static_cast<long double>(n)) + 2) * std::sqrt(static_cast<long double>(n));
}

Field scaled(Field f, long double s) {
  for (C& c : f.v) c *= s;
  return f;
}

}  // namespace

TEMPLATE_TEST_CASE("fft and ifft along the last axis against the DFT sum, every kind of length", "[fft][c2c]", float,
                   double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (const std::int64_t n :
       {1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 30, 49, 61, 64, 67, 97, 100, 128, 243, 256, 210, 1000, 1024, 2310, 4099}) {
    for (const std::int64_t batch : {1, 3}) {
      INFO("n = " << n << ", batch " << batch);
      const std::vector<T> h = random_values<T>(rng, 2 * batch * n);
      const Array<T> x = Array<T>::from(h, Shape{batch, n, 2}, dev);
      const Field fx = complex_field(h, {batch, n});
      const Array<T> y = pf::fft(x);
      REQUIRE(y.shape() == Shape{batch, n, 2});
      require_close(y, dft_axis(fx, 1, -1), true, tolerance<T>(n), "fft");
      const Array<T> z = pf::ifft(x);
      require_close(z, scaled(dft_axis(fx, 1, +1), 1.0L / n), true, tolerance<T>(n) / n, "ifft");
      require_close(pf::ifft(y), fx, true, 2 * tolerance<T>(n) / std::sqrt(static_cast<long double>(n)),
                    "ifft(fft(x))");
      CHECK(x.to_vector() == h);
    }
  }
  // A batch of long lines (the CPU splits them by six steps, a chunk of lines at a time), complex
  // and real (whose half-length complex lines are written h + 1 apart): sampled bins.
  {
    const std::int64_t batch = 20, n = 4096;
    const std::vector<T> h = random_values<T>(rng, 2 * batch * n);
    const Field fx = complex_field(h, {batch, n});
    std::vector<std::int64_t> bins = {0, 1, n / 2, n - 1};
    for (int i = 0; i < 12; ++i) bins.push_back(rng.index(n));
    const Array<T> y = pf::fft(Array<T>::from(h, Shape{batch, n, 2}, dev));
    require_close(y, dft_axis(fx, 1, -1, &bins), true, tolerance<T>(n), "fft of a batch of long lines");
    require_close(pf::ifft(y), fx, true, 2 * tolerance<T>(n) / std::sqrt(static_cast<long double>(n)), "ifft(fft(x))");
    const std::int64_t rows = 17, nr = 2 * n;
    std::vector<T> re(static_cast<std::size_t>(rows * nr));
    for (std::size_t i = 0; i < re.size(); ++i) re[i] = h[i % h.size()];
    const Array<T> X = pf::rfft(Array<T>::from(re, Shape{rows, nr}, dev));
    std::vector<std::int64_t> half_bins = {0, 1, n - 1, n};
    Field full = dft_axis(real_field(re, {rows, nr}), 1, -1, &half_bins);
    Field half{{rows, n + 1}, {}};
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t k = 0; k <= n; ++k) half.v.push_back(full.v[r * nr + k]);
    require_close(X, half, true, tolerance<T>(nr), "rfft of a batch of long lines");
    require_close(pf::irfft(X, nr), real_field(re, {rows, nr}), false,
                  2 * tolerance<T>(nr) / std::sqrt(static_cast<long double>(nr)), "irfft(rfft(x))");
  }
  // Enough lines of a prime length to fill the CPU's lanes with Bluestein transforms side by side.
  for (const std::int64_t n : {131, 1031}) {
    const std::int64_t batch = 20;
    INFO("n = " << n << ", batch " << batch);
    const std::vector<T> h = random_values<T>(rng, 2 * batch * n);
    const Field fx = complex_field(h, {batch, n});
    const Array<T> y = pf::fft(Array<T>::from(h, Shape{batch, n, 2}, dev));
    require_close(y, dft_axis(fx, 1, -1), true, tolerance<T>(n), "fft");
    require_close(pf::ifft(y), fx, true, 2 * tolerance<T>(n) / std::sqrt(static_cast<long double>(n)), "ifft(fft(x))");
  }
}

TEMPLATE_TEST_CASE("fft of long single lines (the CPU's six-step split and Bluestein) on sampled bins",
                   "[fft][c2c][long]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (const std::int64_t n : {16384, 20000, 65536, 65537, 2 * 3 * 5 * 7 * 11 * 13 * 2}) {
    INFO("n = " << n);
    const std::vector<T> h = random_values<T>(rng, 2 * n);
    const Array<T> x = Array<T>::from(h, Shape{n, 2}, dev);
    const Field fx = complex_field(h, {n});
    std::vector<std::int64_t> bins = {0, 1, 2, n / 2, n - 1};
    for (int i = 0; i < 24; ++i) bins.push_back(rng.index(n));
    const Array<T> y = pf::fft(x);
    require_close(y, dft_axis(fx, 0, -1, &bins), true, tolerance<T>(n), "fft");
    require_close(pf::ifft(y), fx, true, 2 * tolerance<T>(n) / std::sqrt(static_cast<long double>(n)), "ifft(fft(x))");
    // rfft of the real parts: the same bins of the half spectrum.
    std::vector<T> re(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) re[i] = h[2 * i];
    const Array<T> r = pf::rfft(Array<T>::from(re, Shape{n}, dev));
    std::vector<std::int64_t> half_bins;
    for (const std::int64_t b : bins) half_bins.push_back(b % (n / 2 + 1));
    Field want = dft_axis(real_field(re, {n}), 0, -1, &half_bins);
    want.v.resize(static_cast<std::size_t>(n / 2 + 1));
    want.dims = {n / 2 + 1};
    require_close(r, want, true, tolerance<T>(n), "rfft");
    require_close(pf::irfft(r, n), real_field(re, {n}), false,
                  2 * tolerance<T>(n) / std::sqrt(static_cast<long double>(n)), "irfft(rfft(x))");
  }
}

TEMPLATE_TEST_CASE("rfft and irfft: half spectra, odd and even lengths, cropping and padding", "[fft][real]", float,
                   double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (const std::int64_t n : {1, 2, 3, 4, 5, 6, 9, 16, 31, 64, 90, 127, 128, 1000, 4099}) {
    for (const std::int64_t batch : {1, 5}) {
      INFO("n = " << n << ", batch " << batch);
      const std::vector<T> h = random_values<T>(rng, batch * n);
      const Array<T> x = Array<T>::from(h, Shape{batch, n}, dev);
      const Array<T> X = pf::rfft(x);
      const std::int64_t m = n / 2 + 1;
      REQUIRE(X.shape() == Shape{batch, m, 2});
      Field full = dft_axis(real_field(h, {batch, n}), 1, -1);
      Field half{{batch, m}, {}};
      for (std::int64_t b = 0; b < batch; ++b)
        for (std::int64_t k = 0; k < m; ++k) half.v.push_back(full.v[b * n + k]);
      require_close(X, half, true, tolerance<T>(n), "rfft");
      require_close(pf::irfft(X, n), real_field(h, {batch, n}), false,
                    2 * tolerance<T>(n) / std::sqrt(static_cast<long double>(n)), "irfft(rfft(x), n)");
      CHECK(x.to_vector() == h);
    }
  }
  // irfft of arbitrary half spectra: bins 0 and n / 2 have imaginary parts (ignored), the input is
  // cropped (n / 2 + 1 < m) or zero-padded (n / 2 + 1 > m) as NumPy does, and n defaults to 2 (m - 1).
  for (const std::int64_t m : {2, 5, 8, 33}) {
    const std::int64_t batch = 3;
    const std::vector<T> h = random_values<T>(rng, 2 * batch * m);
    const Array<T> X = Array<T>::from(h, Shape{batch, m, 2}, dev);
    const Field fx = complex_field(h, {batch, m});
    for (const std::int64_t n : {std::int64_t(0), 2 * m - 1, 2 * m - 2, m, 3 * m + 1, 4 * m}) {
      const std::int64_t out = n == 0 ? 2 * (m - 1) : n;
      INFO("m = " << m << ", n = " << n);
      const Array<T> y = pf::irfft(X, n);
      REQUIRE(y.shape() == Shape{batch, out});
      require_close(y, scaled(c2r_last(fx, out), 1.0L / out), false, 4 * tolerance<T>(out), "irfft");
    }
    CHECK(X.to_vector() == h);
  }
  // A real axis of one point over a spectrum that is not Hermitian: NumPy's answer is the inverse
  // over the other axes, then the real part of the zero frequency.
  {
    const std::vector<T> h = random_values<T>(rng, 2 * 3 * 4 * 6);
    const Field fx = complex_field(h, {3, 4, 6});
    const Array<T> X = Array<T>::from(h, Shape{3, 4, 6, 2}, dev);
    const Array<T> y = pf::irfftn(X, {0, 2}, 1);
    REQUIRE(y.shape() == Shape{3, 4, 1});
    require_close(y, scaled(c2r_last(dft_axis(fx, 0, +1), 1), 1.0L / 3), false, 4 * tolerance<T>(3), "irfftn to 1");
    REQUIRE(pf::irfft(X, 1).shape() == Shape{3, 4, 1});
    require_close(pf::irfft(X, 1), c2r_last(fx, 1), false, 4 * tolerance<T>(1), "irfft to 1");
  }
}

TEMPLATE_TEST_CASE("fft2, fftn over chosen axes, rfftn and irfftn against the separable DFT", "[fft][nd]", float,
                   double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  // 2-D over the last two axes of a batch, and 3-D, complex; long axes (288, 256, 600) before short
  // last ones, whose columns fill part of a group of lanes.
  for (const std::vector<std::int64_t>& dims : std::vector<std::vector<std::int64_t>>{
           {3, 12, 10}, {8, 6, 5}, {2, 64, 33}, {2, 288, 17}, {256, 3, 2}, {2, 600, 3}}) {
    std::int64_t total = 1;
    for (const std::int64_t d : dims) total *= d;
    INFO("shape " << dims[0] << " x " << dims[1] << " x " << dims[2]);
    const std::vector<T> h = random_values<T>(rng, 2 * total);
    const Array<T> x = Array<T>::from(h, shape_of(dims, true), dev);
    const Field fx = complex_field(h, dims);
    const long double tol = tolerance<T>(total);
    require_close(pf::fft2(x), dft(fx, {1, 2}, -1), true, tol, "fft2");
    require_close(pf::fftn(x), dft(fx, {0, 1, 2}, -1), true, tol, "fftn");
    require_close(pf::ifftn(x), scaled(dft(fx, {0, 1, 2}, +1), 1.0L / total), true, tol / total, "ifftn");
    require_close(pf::fftn(x, {0, 2}), dft(fx, {0, 2}, -1), true, tol, "fftn axes 0, 2");
    require_close(pf::fftn(x, {-3}), dft(fx, {0}, -1), true, tol, "fftn axis -3");
    require_close(pf::fft(x, 1), dft(fx, {1}, -1), true, tol, "fft axis 1");
    // Real input: rfftn's last axis is the real one.
    const std::vector<T> r = random_values<T>(rng, total);
    const Array<T> xr = Array<T>::from(r, shape_of(dims, false), dev);
    const Field fr = real_field(r, dims);
    for (const std::vector<int>& axes : std::vector<std::vector<int>>{{1, 2}, {0, 1, 2}, {2, 0}, {0}}) {
      INFO("axes " << axes.size() << " ending in " << axes.back());
      const Array<T> X = pf::rfftn(xr, axes);
      const int last = axes.back();
      std::vector<std::int64_t> hd = dims;
      hd[last] = dims[last] / 2 + 1;
      REQUIRE(X.shape() == shape_of(hd, true));
      // The reference: the full transform, cropped along the real axis.
      std::vector<int> order(axes.begin(), axes.end());
      const Field full = dft(fr, order, -1);
      Field half{hd, {}};
      std::int64_t outer = 1, inner = 1;
      for (int a = 0; a < last; ++a) outer *= dims[a];
      for (int a = last + 1; a < 3; ++a) inner *= dims[a];
      for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t k = 0; k < hd[last]; ++k)
          for (std::int64_t i = 0; i < inner; ++i) half.v.push_back(full.v[(o * dims[last] + k) * inner + i]);
      require_close(X, half, true, tol, "rfftn");
      require_close(pf::irfftn(X, axes, dims[last]), fr, false, 2 * tol / std::sqrt(static_cast<long double>(total)),
                    "irfftn(rfftn(x))");
    }
    require_close(pf::irfft2(pf::rfft2(xr), dims[2]), fr, false, 2 * tol / std::sqrt(static_cast<long double>(total)),
                  "irfft2(rfft2(x))");
    CHECK(x.to_vector() == h);
    CHECK(xr.to_vector() == r);
  }
}

TEMPLATE_TEST_CASE("fft normalisations, strided views and empty batches", "[fft][norm][views]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t rows = 6, n = 20;
  const std::vector<T> h = random_values<T>(rng, 2 * rows * n);
  const Array<T> x = Array<T>::from(h, Shape{rows, n, 2}, dev);
  const Field fx = complex_field(h, {rows, n});
  const long double tol = tolerance<T>(n);
  const Field fwd = dft_axis(fx, 1, -1), inv = dft_axis(fx, 1, +1);
  const long double root_n = std::sqrt(static_cast<long double>(n));
  require_close(pf::fft(x, -1, pf::Norm::ortho), scaled(fwd, 1 / root_n), true, tol, "fft ortho");
  require_close(pf::fft(x, -1, pf::Norm::forward), scaled(fwd, 1.0L / n), true, tol, "fft forward");
  require_close(pf::ifft(x, -1, pf::Norm::ortho), scaled(inv, 1 / root_n), true, tol, "ifft ortho");
  require_close(pf::ifft(x, -1, pf::Norm::forward), inv, true, tol, "ifft forward");
  // Every other row of x: a strided view.
  const Array<T> every_other = x.slice(0, 0, rows, 2);
  REQUIRE_FALSE(every_other.is_contiguous());
  Field picked{{rows / 2, n}, {}};
  for (std::int64_t r = 0; r < rows; r += 2)
    for (std::int64_t j = 0; j < n; ++j) picked.v.push_back(fx.v[r * n + j]);
  require_close(pf::fft(every_other), dft_axis(picked, 1, -1), true, tol, "fft of a strided view");
  // Empty batches give empty results of the right shape.
  const Array<T> empty(Shape{0, n, 2}, dev);
  CHECK(pf::fft(empty).shape() == Shape{0, n, 2});
  CHECK(pf::rfft(Array<T>(Shape{0, n}, dev)).shape() == Shape{0, n / 2 + 1, 2});
}

// The CPU engine's way through a call (which lines a thread takes, one plane at a time or one axis
// at a time, a long line's halves split over the threads) depends on the thread count; its bits
// must not. Shapes for each of those choices, at counts on either side of them.
TEMPLATE_TEST_CASE("fft gives the same bits at every CPU thread count", "[fft][threads]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  if (dev.type != porta::DeviceType::cpu) return;  // the promise is the CPU's (cuFFT has no threads)
  PORTA_RNG(rng);
  const auto make = [&](std::vector<std::int64_t> dims, bool pair) {
    std::int64_t total = pair ? 2 : 1;
    for (const std::int64_t d : dims) total *= d;
    return Array<T>::from(random_values<T>(rng, total), shape_of(dims, pair), dev);
  };
  const Array<T> lines = make({5, 4096}, true), line = make({1 << 16}, true), real_line = make({1 << 17}, false);
  const Array<T> cube = make({6, 48, 40}, true), real_cube = make({5, 32, 64}, false);
  std::vector<std::vector<T>> first;
  porta_test::for_each_thread_count({1, 2, 3, 7}, [&](int threads) {
    INFO(threads << " threads");
    std::vector<Array<T>> got;
    got.push_back(pf::fft(lines));
    got.push_back(pf::ifft(line));
    got.push_back(pf::rfft(real_line));
    got.push_back(pf::irfft(got.back()));
    got.push_back(pf::fftn(cube));
    got.push_back(pf::fft2(cube));
    got.push_back(pf::rfftn(real_cube));
    got.push_back(pf::irfftn(got.back(), {}, 64));
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO("result " << i);
      const std::vector<T> v = got[i].to_vector();
      if (first.size() <= i)
        first.push_back(v);
      else
        CHECK(std::equal(v.begin(), v.end(), first[i].begin(), first[i].end(),
                         [](T a, T b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }));
    }
  });
}

// One shape on several streams in turn, and on a stream made and destroyed each round (its handle
// may come back for the next one): cuFFT's plans keep a work area for the first stream that runs
// them and take one from the pool on the others; every result must be right whichever it got.
TEMPLATE_TEST_CASE("fft of one shape on several streams in turn", "[fft][streams]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t rows = 64, n = 512;
  const porta::Stream first(dev), second(dev);
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    const porta::Stream fresh(dev), standard = porta::Stream::default_stream(dev);
    const std::vector<const porta::Stream*> streams = {&first, &second, &fresh, &standard};
    std::vector<std::vector<T>> inputs;
    std::vector<Array<T>> arrays, results;  // the inputs live until their streams are done
    for (const porta::Stream* s : streams) {
      inputs.push_back(random_values<T>(rng, 2 * rows * n));
      arrays.push_back(Array<T>::from(inputs.back().data(), Shape{rows, n, 2}, dev, *s));
      results.push_back(pf::fft(arrays.back(), -1, pf::Norm::backward, *s));
    }
    for (std::size_t i = 0; i < streams.size(); ++i) {
      streams[i]->synchronize();
      require_close(results[i], dft_axis(complex_field(inputs[i], {rows, n}), 1, -1), true, tolerance<T>(n),
                    "stream " + std::to_string(i));
    }
  }
}

TEMPLATE_TEST_CASE("fft errors name the problem", "[fft][errors]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  const Array<T> real(Shape{4, 3}, dev), cplx(Shape{4, 8, 2}, dev);
  CHECK_THROWS_AS(pf::fft(real), porta::InvalidArgument);
  CHECK_THROWS_WITH(pf::fft(real), porta_test::Contains("x must be complex"));
  CHECK_THROWS_WITH(pf::fft(cplx, 2), porta_test::Contains("axis 2 is out of range"));
  CHECK_THROWS_WITH(pf::fftn(cplx, {1, -1}), porta_test::Contains("axis 1 is repeated"));
  CHECK_THROWS_WITH(pf::irfft(Array<T>(Shape{4, 1, 2}, dev)), porta_test::Contains("is not positive"));
  CHECK_THROWS_WITH(pf::rfft(Array<T>(Shape{2, 2, 2, 2}, dev)), porta_test::Contains("at most 4"));
  CHECK_THROWS_WITH(pf::fft(Array<T>(Shape{3, 0, 2}, dev)), porta_test::Contains("no points to transform"));
}
