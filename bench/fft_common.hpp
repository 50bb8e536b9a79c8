// SPDX-License-Identifier: Apache-2.0
// The Fourier transform benchmarks (group "fft"): porta::fft calls as a user writes them, shared by
// the CPU binary (fft_cpu.cpp) and the CUDA one (cuda_fft.cuh), beside the FFT library a user of
// that device would otherwise call (FFTW on the CPU, cuFFT on CUDA), on the same interleaved
// (real, imaginary) data. Every transform is out of place, norm "backward".
//
//   op               porta call                  input                      size in the name
//   fft_c2c          fft::fft(z)                 (n, 2), one line           n (2^20; 10^6; 1000003)
//   fft_c2c_batch    fft::fft(z)                 (256, n, 2): many lines    n (4096)
//   fft_r2c          fft::rfft(x)                (n) real                   n (2^22)
//   fft_c2c_2d       fft::fft2(z)                (n, n, 2)                  n (2048)
//   fft_r2c_3d       fft::rfftn(x)               (n, n, n) real             n (256)
//   ifft_c2c         fft::ifft(z)                (n, 2), one line           n (2^20)
//
// fft_c2c runs a power of two, 10^6 = 2^6 5^6 (mixed radix) and the prime 1000003 (Bluestein's
// algorithm in porta and cuFFT; FFTW's planner picks Rader's or Bluestein's). ifft_c2c divides by
// n, as numpy.fft.ifft does: that costs a pass over the result wherever the library cannot fold it
// into its last pass, and the peers are run both ways (scaled: what matches porta's result;
// unscaled: the library's own convention).
//
// Bytes counted per call: the input read once and the output written once (the least an
// out-of-place transform moves), for porta and the peers alike, so the GB/s are an effective
// bandwidth and their ratio the inverse ratio of times.
//
// Sizes shrink with the run's largest vector (2^max_log2 points per case at most), so the smoke
// run's 2^12 keeps them tiny: the lengths are capped, the batch shrinks, 10^6 becomes the largest
// power of ten that fits and 1000003 the largest prime.
//
// Every result, porta's and the peers', is checked on the host before it is timed: a few output
// bins (the zero frequency, the last, and random ones, in random lines of a batch) against the DFT
// sum computed in double, relative to the spectrum's root mean square; the CPU binary then
// compares porta's whole result with FFTW's, the CUDA one with cuFFT's.
#pragma once

#include <porta/fft.hpp>
#include <porta/porta.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "kernels_common.hpp"

namespace porta_bench_fft {

namespace pb = porta_bench;

// The porta call of a case.
enum class Call { fft, ifft, rfft, fft2, rfftn };

struct FftCase {
  std::string op;
  Call call = Call::fft;
  int rank = 1;                   // transformed axes
  std::int64_t n[3] = {1, 1, 1};  // their lengths (the real length for the last axis of r2c)
  std::int64_t batch = 1;         // lines (transforms) in one call
  std::int64_t size = 0;          // in the benchmark's name

  bool real() const { return call == Call::rfft || call == Call::rfftn; }
  bool inverse() const { return call == Call::ifft; }
  std::int64_t points() const { return n[0] * n[1] * n[2]; }
  // The output's length along the last transformed axis (complex values).
  std::int64_t out_last() const { return real() ? n[rank - 1] / 2 + 1 : n[rank - 1]; }
  std::int64_t out_points() const { return points() / n[rank - 1] * out_last(); }
  // Scalars of x and of the result.
  std::int64_t in_elems() const { return batch * points() * (real() ? 1 : 2); }
  std::int64_t out_elems() const { return batch * out_points() * 2; }
  double bytes(std::size_t word) const {
    return static_cast<double>(in_elems() + out_elems()) * static_cast<double>(word);
  }
  // numpy.fft's shapes: the batch axis only when there is more than one line.
  porta::Shape in_shape() const { return shape_of(false); }
  porta::Shape out_shape() const { return shape_of(true); }

 private:
  porta::Shape shape_of(bool out) const {
    std::vector<std::int64_t> d;
    if (batch > 1) d.push_back(batch);
    for (int a = 0; a < rank; ++a) d.push_back(out && a == rank - 1 ? out_last() : n[a]);
    if (out || !real()) d.push_back(2);
    switch (d.size()) {
      case 1:
        return porta::Shape{d[0]};
      case 2:
        return porta::Shape{d[0], d[1]};
      case 3:
        return porta::Shape{d[0], d[1], d[2]};
      default:
        return porta::Shape{d[0], d[1], d[2], d[3]};
    }
  }
};

inline bool is_prime(std::int64_t v) {
  if (v < 2) return false;
  for (std::int64_t f = 2; f * f <= v; ++f)
    if (v % f == 0) return false;
  return true;
}

// The cases this run registers: the list above, capped at 2^max_log2 points each, duplicates a cap
// makes dropped, ops not asked for (PORTA_BENCH_OPS) left out.
inline std::vector<FftCase> fft_cases() {
  const int e = pb::limits().max_log2;
  const std::int64_t cap = std::int64_t{1} << std::min(e, 40);
  const auto pow2 = [](int k) { return std::int64_t{1} << std::max(k, 1); };
  std::vector<FftCase> out;
  const auto add = [&](const char* op, Call call, int rank, std::int64_t n, std::int64_t batch) {
    if (!pb::wanted(op, "fft")) return;
    FftCase c;
    c.op = op;
    c.call = call;
    c.rank = rank;
    for (int a = 0; a < rank; ++a) c.n[a] = n;
    c.batch = batch;
    c.size = n;
    for (const FftCase& o : out)
      if (o.op == c.op && o.size == c.size) return;
    out.push_back(c);
  };
  const std::int64_t line = std::min<std::int64_t>(std::int64_t{1} << 20, cap);
  add("fft_c2c", Call::fft, 1, line, 1);
  std::int64_t ten = 1000000;
  while (ten > cap && ten > 10) ten /= 10;
  add("fft_c2c", Call::fft, 1, ten, 1);
  std::int64_t prime = std::min<std::int64_t>(1000003, cap);
  while (!is_prime(prime)) --prime;
  add("fft_c2c", Call::fft, 1, prime, 1);
  const std::int64_t short_line = std::min<std::int64_t>(4096, pow2((e + 1) / 2));
  add("fft_c2c_batch", Call::fft, 1, short_line, std::clamp<std::int64_t>(cap / short_line, 1, 256));
  add("fft_r2c", Call::rfft, 1, std::min<std::int64_t>(std::int64_t{1} << 22, cap), 1);
  add("fft_c2c_2d", Call::fft2, 2, std::min<std::int64_t>(2048, pow2(e / 2)), 1);
  add("fft_r2c_3d", Call::rfftn, 3, std::min<std::int64_t>(256, pow2(e / 3)), 1);
  add("ifft_c2c", Call::ifft, 1, line, 1);
  return out;
}

inline std::string describe(const FftCase& c) {
  std::string s = c.op + " ";
  if (c.batch > 1) s += std::to_string(c.batch) + " x ";
  for (int a = 0; a < c.rank; ++a) s += (a ? "x" : "") + std::to_string(c.n[a]);
  return s;
}

// The "porta_fft_sizes" line of the run's context.
inline void add_fft_context(const std::vector<FftCase>& cases) {
  std::string s;
  for (const FftCase& c : cases) s += (s.empty() ? "" : ", ") + describe(c);
  benchmark::AddCustomContext("porta_fft_sizes", s);
}

// Slack for the checks, relative to the spectrum's root mean square: a wrong sign, scale, axis order
// or line is off by O(1), while rounding stays orders of magnitude below (float: about 1e-7 times a
// slowly growing function of n, Bluestein's included).
template <class T>
double fft_tolerance() {
  return sizeof(T) == 8 ? 1e-9 : 1e-4;
}

// ---- the inputs and the reference bins -----------------------------------------------------------
struct Bin {
  std::int64_t line = 0;          // which transform of the batch
  std::int64_t k[3] = {0, 0, 0};  // the output index along each transformed axis
  double re = 0, im = 0;          // the DFT sum, scaled as the call scales
  double rms = 0;                 // the root mean square of that line's spectrum
};

template <class T>
struct HostFft {
  FftCase c;
  std::vector<T> x;       // in_elems() values, uniform in [-1, 1)
  std::vector<Bin> bins;  // filled on first use
};

template <class T>
HostFft<T>& host_fft(const FftCase& c) {
  static HostFft<T> held;
  if (held.c.op != c.op || held.c.size != c.size || held.c.batch != c.batch || held.x.empty()) {
    held = HostFft<T>{};
    held.c = c;
    held.x.resize(static_cast<std::size_t>(c.in_elems()));
    pb::fill_random(held.x.data(), c.in_elems(), 21);
  }
  return held;
}

// The bins checked: the zero frequency, the last one along every axis (n / 2, the real Nyquist, for
// the last axis of r2c), the first, and random ones, in the first, the last and random lines.
inline std::vector<Bin> pick_bins(const FftCase& c) {
  std::vector<Bin> bins;
  const auto last = [&](int a) { return a == c.rank - 1 ? c.out_last() - 1 : c.n[a] - 1; };
  Bin b;
  bins.push_back(b);  // line 0, zero frequency
  b.line = c.batch - 1;
  for (int a = 0; a < c.rank; ++a) b.k[a] = last(a);
  bins.push_back(b);
  b.line = 0;
  for (int a = 0; a < c.rank; ++a) b.k[a] = std::min<std::int64_t>(1, last(a));
  bins.push_back(b);
  for (std::uint64_t i = 0; i < 9; ++i) {
    Bin r;
    r.line = static_cast<std::int64_t>(pb::splitmix64(1000 + i) % static_cast<std::uint64_t>(c.batch));
    for (int a = 0; a < c.rank; ++a)
      r.k[a] = static_cast<std::int64_t>(pb::splitmix64(2000 + 3 * i + static_cast<std::uint64_t>(a)) %
                                         static_cast<std::uint64_t>(last(a) + 1));
    bins.push_back(r);
  }
  return bins;
}

// One bin's DFT sum over its line, in double: X_k = s sum_j x_j exp(-+2 pi i sum_a j_a k_a / n_a),
// with each axis' factors tabulated from exact integer residues (j_a k_a mod n_a).
template <class T>
void reference_bin(const FftCase& c, const T* x, Bin& bin) {
  const double sign = c.inverse() ? 1.0 : -1.0;
  const double scale = c.inverse() ? 1.0 / static_cast<double>(c.points()) : 1.0;
  std::vector<double> wr[3], wi[3];
  for (int a = 0; a < 3; ++a) {
    const std::int64_t n = a < c.rank ? c.n[a] : 1;
    const std::int64_t k = a < c.rank ? bin.k[a] : 0;
    wr[a].resize(static_cast<std::size_t>(n));
    wi[a].resize(static_cast<std::size_t>(n));
    double* re = wr[a].data();
    double* im = wi[a].data();
#if defined(_OPENMP)
#pragma omp parallel for schedule(static)
#endif
    for (std::int64_t j = 0; j < n; ++j) {
      // j k < 2^62 for every length here: exact.
      const double angle = 6.283185307179586476925286766559 * static_cast<double>((j * k) % n) / static_cast<double>(n);
      re[j] = std::cos(angle);
      im[j] = sign * std::sin(angle);
    }
  }
  const std::int64_t n0 = c.n[0], n1 = c.n[1], n2 = c.n[2];
  const bool real = c.real();
  const T* base = x + bin.line * c.points() * (real ? 1 : 2);
  double sr = 0, si = 0, sq = 0;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) reduction(+ : sr, si, sq)
#endif
  for (std::int64_t j0 = 0; j0 < n0; ++j0) {
    double ar = 0, ai = 0;
    for (std::int64_t j1 = 0; j1 < n1; ++j1) {
      double br = 0, bi = 0;
      const std::int64_t row = (j0 * n1 + j1) * n2;
      for (std::int64_t j2 = 0; j2 < n2; ++j2) {
        const double xr = static_cast<double>(real ? base[row + j2] : base[2 * (row + j2)]);
        const double xi = real ? 0.0 : static_cast<double>(base[2 * (row + j2) + 1]);
        const double vr = wr[2][static_cast<std::size_t>(j2)], vi = wi[2][static_cast<std::size_t>(j2)];
        br += xr * vr - xi * vi;
        bi += xr * vi + xi * vr;
        sq += xr * xr + xi * xi;
      }
      const double vr = wr[1][static_cast<std::size_t>(j1)], vi = wi[1][static_cast<std::size_t>(j1)];
      ar += br * vr - bi * vi;
      ai += br * vi + bi * vr;
    }
    const double vr = wr[0][static_cast<std::size_t>(j0)], vi = wi[0][static_cast<std::size_t>(j0)];
    sr += ar * vr - ai * vi;
    si += ar * vi + ai * vr;
  }
  bin.re = scale * sr;
  bin.im = scale * si;
  // Parseval: the spectrum's mean |X_k|^2 is sum |x_j|^2 (times the scale squared).
  bin.rms = scale * std::sqrt(sq);
}

template <class T>
const std::vector<Bin>& reference_bins(HostFft<T>& h) {
  if (h.bins.empty()) {
    std::vector<Bin> bins = pick_bins(h.c);
    for (Bin& b : bins) reference_bin(h.c, h.x.data(), b);
    h.bins = std::move(bins);
  }
  return h.bins;
}

// y: a result in numpy.fft's layout (out_shape(), interleaved), checked at the reference bins.
template <class T>
void expect_fft(const std::string& what, HostFft<T>& h, const T* y) {
  const FftCase& c = h.c;
  const std::int64_t d1 = c.rank > 1 ? (c.rank == 2 ? c.out_last() : c.n[1]) : 1;
  const std::int64_t d2 = c.rank > 2 ? c.out_last() : 1;
  for (const Bin& b : reference_bins(h)) {
    const std::int64_t k0 = b.k[0], k1 = c.rank > 1 ? b.k[1] : 0, k2 = c.rank > 2 ? b.k[2] : 0;
    const std::int64_t at = b.line * c.out_points() + (k0 * d1 + k1) * d2 + k2;
    const double dr = static_cast<double>(y[2 * at]) - b.re, di = static_cast<double>(y[2 * at + 1]) - b.im;
    const double err = std::sqrt(dr * dr + di * di) / std::max(b.rms, 1e-300);
    if (!(err <= fft_tolerance<T>())) {  // NaN fails
      char text[200];
      std::snprintf(text, sizeof text,
                    ": bin (%lld, %lld, %lld) of line %lld is (%.9g, %.9g), the DFT sum (%.9g, %.9g): off by %.3g "
                    "of the spectrum's rms (tolerance %.3g)",
                    static_cast<long long>(k0), static_cast<long long>(k1), static_cast<long long>(k2),
                    static_cast<long long>(b.line), static_cast<double>(y[2 * at]), static_cast<double>(y[2 * at + 1]),
                    b.re, b.im, err, fft_tolerance<T>());
      throw std::runtime_error(what + text);
    }
  }
}

// ---- porta, as a user calls it -----------------------------------------------------------------------
// Every call returns a new array (porta::fft allocates its result), which replaces the previous one.
template <class T>
struct PortaFft {
  FftCase c;
  porta::Array<T> x, y;
};

template <class T>
void porta_fft(PortaFft<T>& d, const porta::Stream& s) {
  namespace pf = porta::fft;
  constexpr pf::Norm norm = pf::Norm::backward;
  switch (d.c.call) {
    case Call::fft:
      d.y = pf::fft(d.x, -1, norm, s);
      break;
    case Call::ifft:
      d.y = pf::ifft(d.x, -1, norm, s);
      break;
    case Call::rfft:
      d.y = pf::rfft(d.x, -1, norm, s);
      break;
    case Call::fft2:
      d.y = pf::fft2(d.x, norm, s);
      break;
    case Call::rfftn:
      d.y = pf::rfftn(d.x, {}, norm, s);
      break;
  }
}

// The case's input on `device`, one call, and the check of its result (shape and bins); the result
// stays in d.y for a comparison with the peer's.
template <class T>
PortaFft<T> make_porta_fft(const std::string& id, const FftCase& c, porta::Device device, const porta::Stream& s) {
  HostFft<T>& h = host_fft<T>(c);
  PortaFft<T> d;
  d.c = c;
  d.x = porta::Array<T>::from(h.x.data(), c.in_shape(), device, s);
  porta_fft(d, s);
  if (d.y.shape() != c.out_shape())
    throw std::runtime_error(id + ": porta's result has shape " + d.y.shape().to_string() + ", numpy.fft's is " +
                             c.out_shape().to_string());
  expect_fft(id, h, d.y.to_vector(s).data());
  return d;
}

}  // namespace porta_bench_fft

namespace porta_bench {
// Registration of the CPU cases (fft_cpu.cpp).
void register_cpu_fft();
}  // namespace porta_bench
