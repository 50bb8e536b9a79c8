// SPDX-License-Identifier: Apache-2.0
// porta::fft: numpy.fft's axes, shapes and normalisations over the backends' fft entry, which
// transforms the last 1 to 3 axes of a contiguous batch. Other axes (or a strided view) go through
// one permuted copy that puts the transformed axes last, in the order given, and one back: the
// price of an arbitrary `axes`, as a strided transform costs cuFFT and PocketFFT too.
//
// A backend without an FFT library answers PORTA_ERR_UNSUPPORTED: the call then runs on the CPU and
// its result is copied back, so every device has every transform.
#include "porta/fft.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/common.hpp"
#include "algorithms/strided.hpp"
#include "porta/algorithms.hpp"

namespace porta::detail {
namespace {

std::string num(std::int64_t v) {
  return std::to_string(v);
}

// The entry over a contiguous x; y is the result, made here. On a device without an FFT the call
// runs on the CPU.
template <class T>
void run_fft(const char* fn, Device dev, const Stream& stream, porta_fft_kind kind, int rank, const std::int64_t* n,
             std::int64_t batch, const Array<T>& x, Array<T>& y, double scale) {
  const BackendCall call = make_call(fn, dev, stream);
  const porta_status st = call.status_of(call.table->fft, kind, dtype_of<T>(), rank, n[0], rank > 1 ? n[1] : 1,
                                         rank > 2 ? n[2] : 1, batch, x.data(), y.data(), scale, call.stream);
  if (st == PORTA_ERR_UNSUPPORTED && dev.type != DeviceType::cpu) {
    (void)take_missing_entry();
    const Device host(DeviceType::cpu);
    const Array<T> hx = x.to(host, stream);
    Array<T> hy = new_output<T>(fn, y.shape(), host, Stream());
    run_fft(fn, host, Stream(), kind, rank, n, batch, hx, hy, scale);
    y = hy.to(dev, stream);
    return;
  }
  call.check(st);
}

}  // namespace

template <class T>
Array<T> fft_transform(const char* fn, FftKind kind, bool inverse, const Array<T>& x, std::vector<int> axes,
                       std::int64_t n_last, fft::Norm norm, const Stream& stream) {
  const Device dev = check_args(fn, {arg_strided("x", x)});
  const bool complex_in = kind != FftKind::r2c, complex_out = kind != FftKind::c2r;
  if (complex_in && (x.rank() < 2 || x.dim(x.rank() - 1) != 2))
    throw_invalid(
        fn, ("x must be complex: a last axis of 2 (real, imaginary) (x is " + x.shape().to_string() + ")").c_str());
  const int logical = x.rank() - (complex_in ? 1 : 0);
  if (logical < 1) throw_invalid(fn, "x must have at least one axis to transform");
  if (!complex_in && logical > Shape::kMaxRank - 1)
    throw_invalid(fn, ("the result would need " + num(logical + 1) + " axes (x is " + x.shape().to_string() +
                       "; porta arrays have at most " + num(Shape::kMaxRank) + ")")
                          .c_str());
  if (axes.empty())
    for (int a = 0; a < logical; ++a) axes.push_back(a);
  for (int& a : axes) {
    if (a < -logical || a >= logical)
      throw_invalid(
          fn, ("axis " + num(a) + " is out of range for " + num(logical) + " axes (x is " + x.shape().to_string() + ")")
                  .c_str());
    if (a < 0) a += logical;
  }
  for (std::size_t i = 0; i < axes.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (axes[i] == axes[j]) throw_invalid(fn, ("axis " + num(axes[i]) + " is repeated").c_str());
  const int rank = static_cast<int>(axes.size());
  if (kind == FftKind::c2r && n_last == 1) {
    // A real axis of one point keeps the real part of its zero frequency: what is left is the
    // inverse over the other axes. Done here, since cuFFT's C2R of one point disagrees with NumPy
    // when that part is not real.
    std::vector<int> lead(axes.begin(), axes.end() - 1);
    Array<T> inverse_lead;
    if (!lead.empty()) inverse_lead = fft_transform(fn, FftKind::c2c, true, x, lead, 0, norm, stream);
    const Array<T>& t = lead.empty() ? x : inverse_lead;
    const Array<T> zero_frequency = t.slice(axes.back(), 0, 1).slice(logical, 0, 1);
    Array<T> y = zero_frequency.contiguous(stream);
    std::int64_t dims[Shape::kMaxRank] = {};
    for (int i = 0; i < logical; ++i) dims[i] = y.dim(i);
    return std::move(y).reshaped(make_shape(dims, logical));
  }

  // The axes not transformed first (the batch), then `axes` in order, then the complex pair.
  int perm[Shape::kMaxRank] = {};
  int r = 0;
  for (int a = 0; a < logical; ++a)
    if (std::find(axes.begin(), axes.end(), a) == axes.end()) perm[r++] = a;
  const int batch_axes = r;
  for (const int a : axes) perm[r++] = a;
  if (complex_in) perm[r++] = logical;
  bool identity = true;
  for (int i = 0; i < r; ++i) identity = identity && perm[i] == i;
  Array<T> moved;
  if (!identity) moved = permuted_copy(fn, x, perm, stream);
  const Array<T>& src0 = identity ? contiguous_input(x, moved, stream) : moved;

  std::int64_t n[3] = {1, 1, 1}, batch = 1;
  for (int i = 0; i < batch_axes; ++i) batch *= src0.dim(i);
  for (int i = 0; i < rank; ++i) n[i] = src0.dim(batch_axes + i);
  // c2r: the real length of the last axis, and its input cropped or zero-padded to n / 2 + 1.
  Array<T> resized;
  const Array<T>* src = &src0;
  if (kind == FftKind::c2r) {
    const std::int64_t m = n[rank - 1];
    const std::int64_t out = n_last > 0 ? n_last : 2 * (m - 1);
    if (n_last < 0) throw_invalid(fn, ("the output length " + num(n_last) + " is not positive").c_str());
    if (out < 1)
      throw_invalid(fn, ("the output length is not positive: by default it is 2 (m - 1) for m = " + num(m) +
                         " values along the last axis (pass n)")
                            .c_str());
    const std::int64_t keep = out / 2 + 1;
    if (keep != m) {
      const int axis = batch_axes + rank - 1;
      std::int64_t dims[Shape::kMaxRank] = {};
      for (int i = 0; i < src0.rank(); ++i) dims[i] = src0.dim(i);
      dims[axis] = keep;
      resized = zeros<T>(make_shape(dims, src0.rank()), dev);
      const std::int64_t common = std::min(keep, m);
      if (resized.size() > 0) resized.slice(axis, 0, common).assign(src0.slice(axis, 0, common), stream);
      src = &resized;
    }
    n[rank - 1] = out;
  }
  for (int i = 0; i < rank; ++i)
    if (n[i] < 1)
      throw_invalid(fn, ("axis " + num(axes[static_cast<std::size_t>(i)]) + " has no points to transform (x is " +
                         x.shape().to_string() + ")")
                            .c_str());

  // The result in the permuted order: the batch axes, the transformed ones, the pair.
  std::int64_t dims[Shape::kMaxRank] = {};
  int out_rank = 0;
  for (int i = 0; i < batch_axes; ++i) dims[out_rank++] = src0.dim(i);
  for (int i = 0; i < rank; ++i) dims[out_rank++] = n[i];
  if (kind == FftKind::r2c) dims[out_rank - 1] = n[rank - 1] / 2 + 1;
  if (complex_out) dims[out_rank++] = 2;
  Array<T> y = new_output<T>(fn, make_shape(dims, out_rank), dev, stream);

  double total = 1;
  for (int i = 0; i < rank; ++i) total *= static_cast<double>(n[i]);
  const double scale = norm == fft::Norm::ortho                  ? 1.0 / std::sqrt(total)
                       : (norm == fft::Norm::forward) != inverse ? 1.0 / total
                                                                 : 1.0;
  const porta_fft_kind k = kind == FftKind::r2c   ? PORTA_FFT_R2C
                           : kind == FftKind::c2r ? PORTA_FFT_C2R
                           : inverse              ? PORTA_FFT_INVERSE
                                                  : PORTA_FFT_FORWARD;
  if (y.size() > 0) run_fft(fn, dev, stream, k, rank, n, batch, *src, y, scale);
  if (identity) return y;
  // Back to x's axis order: axis perm[i] of the result is axis i of y.
  int back[Shape::kMaxRank] = {};
  for (int i = 0; i < std::min(r, out_rank); ++i) back[perm[i]] = i;
  if (!complex_in) back[out_rank - 1] = out_rank - 1;  // r2c's new pair axis
  return permuted_copy(fn, y, back, stream);
}

namespace {

// A complex array as the one entry sees complex values: its pairs as a last axis of 2 (a view; a
// compact copy first when x is strided, kept alive by `hold`).
template <class T>
Array<T> pairs_of(const char* fn, const Array<complex<T>>& x, Array<complex<T>>& hold, const Stream& stream) {
  check_args(fn, {arg_strided("x", x)});
  const Array<complex<T>>& xc = contiguous_input(x, hold, stream);
  if (xc.rank() >= Shape::kMaxRank)
    throw_invalid(fn, ("x has " + num(xc.rank()) + " axes: a complex array has at most " + num(Shape::kMaxRank - 1) +
                       " here, the transform works on its pairs as one more axis")
                          .c_str());
  return view_as_real(xc);
}

}  // namespace

template <class T>
Array<complex<T>> fft_complex(const char* fn, bool inverse, const Array<complex<T>>& x, std::vector<int> axes,
                              fft::Norm norm, const Stream& stream) {
  Array<complex<T>> hold;
  const Array<T> pairs = pairs_of(fn, x, hold, stream);
  return view_as_complex(fft_transform(fn, FftKind::c2c, inverse, pairs, std::move(axes), 0, norm, stream));
}

template <class T>
Array<T> fft_complex_to_real(const char* fn, const Array<complex<T>>& x, std::vector<int> axes, std::int64_t n_last,
                             fft::Norm norm, const Stream& stream) {
  Array<complex<T>> hold;
  const Array<T> pairs = pairs_of(fn, x, hold, stream);
  return fft_transform(fn, FftKind::c2r, true, pairs, std::move(axes), n_last, norm, stream);
}

#define PORTA_INSTANTIATE_FFT(T)                                                                                      \
  template Array<T> fft_transform<T>(const char*, FftKind, bool, const Array<T>&, std::vector<int>, std::int64_t,     \
                                     fft::Norm, const Stream&);                                                       \
  template Array<complex<T>> fft_complex<T>(const char*, bool, const Array<complex<T>>&, std::vector<int>, fft::Norm, \
                                            const Stream&);                                                           \
  template Array<T> fft_complex_to_real<T>(const char*, const Array<complex<T>>&, std::vector<int>, std::int64_t,     \
                                           fft::Norm, const Stream&);
PORTA_INSTANTIATE_FFT(float)
PORTA_INSTANTIATE_FFT(double)

}  // namespace porta::detail
