// SPDX-License-Identifier: Apache-2.0
// Discrete Fourier transforms of float and double arrays on any device, with numpy.fft's names,
// axes, normalisations and output shapes: 1-, 2- and 3-D, complex-to-complex and real-to-complex,
// a batch of transforms in one call. cuFFT does the work on CUDA devices and porta's own FFT on the
// CPU (any length: mixed radix, Bluestein for large prime factors); a device whose backend has no
// FFT (HIP without hipFFT) runs the call on the CPU and copies the result back (docs/fft.md).
//
// Complex input and output come in two forms. The transforms take and give float and double
// arrays whose last axis holds the (real, imaginary) pair, as numpy's
// x.view(np.float64).reshape(*x.shape, 2) and PyTorch's torch.view_as_real lay it out (axes are
// counted without that pair axis); and fft, ifft, fft2, ifft2, fftn, ifftn and the inverse real
// transforms also take complex64 / complex128 arrays (porta/complex.hpp) directly, returning complex
// arrays (irfft*: real ones). porta::view_as_complex turns rfft's result into a complex array
// without a copy.
//
//   auto Zc = porta::fft::fft(zc);          // zc: Array<porta::complex<double>>, any rank up to 3
//   auto X = porta::fft::rfft(x);            // x (..., n) real -> X (..., n/2 + 1, 2)
//   auto y = porta::fft::irfft(X, n);        // back to (..., n); y == x to rounding
//   auto Z = porta::fft::fft2(z);            // z (..., rows, cols, 2): over the last two axes
//   auto W = porta::fft::fftn(z, {0, 2});    // over axes 0 and 2 of a (a, b, c, 2) array
//
// Plans (cuFFT's, porta's twiddle tables) are made on first use of a shape and cached. Results
// agree with numpy.fft to rounding; they are not bit for bit the same across devices
// (docs/determinism.md).
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "porta/array.hpp"
#include "porta/complex.hpp"
#include "porta/stream.hpp"

namespace porta::fft {

// numpy.fft's `norm`: which direction is divided by n (backward, the default: the inverse), or both
// by sqrt(n) (ortho), where n is the product of the transformed lengths.
enum class Norm { backward, ortho, forward };

}  // namespace porta::fft

namespace porta::detail {
enum class FftKind { c2c, r2c, c2r };
template <class T>
constexpr void check_fft_type() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "porta::fft takes float or double arrays");
}
// The one front-end routine: `axes` of x's logical axes (all of them when empty), the last one the
// real axis of r2c and c2r; n_last the real length of c2r's last axis (0: 2 (m - 1)).
template <class T>
Array<T> fft_transform(const char* fn, FftKind kind, bool inverse, const Array<T>& x, std::vector<int> axes,
                       std::int64_t n_last, fft::Norm norm, const Stream& stream);
// The same for a complex array: its pairs viewed as a last axis of 2 (a contiguous copy first when
// x is a strided view), the complex result viewed back (c2c) or the real result as it is (c2r).
template <class T>
Array<complex<T>> fft_complex(const char* fn, bool inverse, const Array<complex<T>>& x, std::vector<int> axes,
                              fft::Norm norm, const Stream& stream);
template <class T>
Array<T> fft_complex_to_real(const char* fn, const Array<complex<T>>& x, std::vector<int> axes, std::int64_t n_last,
                             fft::Norm norm, const Stream& stream);
}  // namespace porta::detail

namespace porta::fft {

// The 1-D transform of complex x (..., n, 2) along `axis` (numpy.fft.fft).
template <class T>
Array<T> fft(const Array<T>& x, int axis = -1, Norm norm = Norm::backward, const Stream& stream = Stream()) {
  porta::detail::check_fft_type<T>();
  return porta::detail::fft_transform("porta::fft::fft", porta::detail::FftKind::c2c, false, x, {axis}, 0, norm,
                                      stream);
}

// The inverse of fft (numpy.fft.ifft): divided by n unless norm says otherwise.
template <class T>
Array<T> ifft(const Array<T>& x, int axis = -1, Norm norm = Norm::backward, const Stream& stream = Stream()) {
  porta::detail::check_fft_type<T>();
  return porta::detail::fft_transform("porta::fft::ifft", porta::detail::FftKind::c2c, true, x, {axis}, 0, norm,
                                      stream);
}

// The transform of real x along `axis`, its non-negative frequencies only: n points give n / 2 + 1
// complex values (numpy.fft.rfft).
template <class T>
Array<T> rfft(const Array<T>& x, int axis = -1, Norm norm = Norm::backward, const Stream& stream = Stream()) {
  porta::detail::check_fft_type<T>();
  return porta::detail::fft_transform("porta::fft::rfft", porta::detail::FftKind::r2c, false, x, {axis}, 0, norm,
                                      stream);
}

// The real signal of n points whose rfft is x (numpy.fft.irfft); n = 0 means 2 (m - 1) for m
// complex values along `axis`. x is cropped or zero-padded to n / 2 + 1 values first, as NumPy does;
// the imaginary parts of the zero frequency (and of n / 2 for even n) are ignored.
template <class T>
Array<T> irfft(const Array<T>& x, std::int64_t n = 0, int axis = -1, Norm norm = Norm::backward,
               const Stream& stream = Stream()) {
  porta::detail::check_fft_type<T>();
  return porta::detail::fft_transform("porta::fft::irfft", porta::detail::FftKind::c2r, true, x, {axis}, n, norm,
                                      stream);
}

// The transforms over several axes (numpy.fft.fftn and friends): every logical axis when `axes` is
// empty (at most 3: porta arrays have 4 axes, one of them the complex pair). For rfftn and irfftn
// the last of `axes` is the real one, and n_last its real length.
template <class T>
Array<T> fftn(const Array<T>& x, std::vector<int> axes = {}, Norm norm = Norm::backward,
              const Stream& stream = Stream()) {
  porta::detail::check_fft_type<T>();
  return porta::detail::fft_transform("porta::fft::fftn", porta::detail::FftKind::c2c, false, x, std::move(axes), 0,
                                      norm, stream);
}
template <class T>
Array<T> ifftn(const Array<T>& x, std::vector<int> axes = {}, Norm norm = Norm::backward,
               const Stream& stream = Stream()) {
  porta::detail::check_fft_type<T>();
  return porta::detail::fft_transform("porta::fft::ifftn", porta::detail::FftKind::c2c, true, x, std::move(axes), 0,
                                      norm, stream);
}
template <class T>
Array<T> rfftn(const Array<T>& x, std::vector<int> axes = {}, Norm norm = Norm::backward,
               const Stream& stream = Stream()) {
  porta::detail::check_fft_type<T>();
  return porta::detail::fft_transform("porta::fft::rfftn", porta::detail::FftKind::r2c, false, x, std::move(axes), 0,
                                      norm, stream);
}
template <class T>
Array<T> irfftn(const Array<T>& x, std::vector<int> axes = {}, std::int64_t n_last = 0, Norm norm = Norm::backward,
                const Stream& stream = Stream()) {
  porta::detail::check_fft_type<T>();
  return porta::detail::fft_transform("porta::fft::irfftn", porta::detail::FftKind::c2r, true, x, std::move(axes),
                                      n_last, norm, stream);
}

// Over the last two axes (numpy.fft.fft2 and friends).
template <class T>
Array<T> fft2(const Array<T>& x, Norm norm = Norm::backward, const Stream& stream = Stream()) {
  porta::detail::check_fft_type<T>();
  return porta::detail::fft_transform("porta::fft::fft2", porta::detail::FftKind::c2c, false, x, {-2, -1}, 0, norm,
                                      stream);
}
template <class T>
Array<T> ifft2(const Array<T>& x, Norm norm = Norm::backward, const Stream& stream = Stream()) {
  porta::detail::check_fft_type<T>();
  return porta::detail::fft_transform("porta::fft::ifft2", porta::detail::FftKind::c2c, true, x, {-2, -1}, 0, norm,
                                      stream);
}
template <class T>
Array<T> rfft2(const Array<T>& x, Norm norm = Norm::backward, const Stream& stream = Stream()) {
  porta::detail::check_fft_type<T>();
  return porta::detail::fft_transform("porta::fft::rfft2", porta::detail::FftKind::r2c, false, x, {-2, -1}, 0, norm,
                                      stream);
}
template <class T>
Array<T> irfft2(const Array<T>& x, std::int64_t n_last = 0, Norm norm = Norm::backward,
                const Stream& stream = Stream()) {
  porta::detail::check_fft_type<T>();
  return porta::detail::fft_transform("porta::fft::irfft2", porta::detail::FftKind::c2r, true, x, {-2, -1}, n_last,
                                      norm, stream);
}

// ---- complex64 / complex128 arrays ----------------------------------------------------------------
// The transforms above for porta::complex arrays: the same axes (no pair axis to count) and norms.
template <class T>
Array<complex<T>> fft(const Array<complex<T>>& x, int axis = -1, Norm norm = Norm::backward,
                      const Stream& stream = Stream()) {
  return porta::detail::fft_complex("porta::fft::fft", false, x, {axis}, norm, stream);
}
template <class T>
Array<complex<T>> ifft(const Array<complex<T>>& x, int axis = -1, Norm norm = Norm::backward,
                       const Stream& stream = Stream()) {
  return porta::detail::fft_complex("porta::fft::ifft", true, x, {axis}, norm, stream);
}
template <class T>
Array<complex<T>> fftn(const Array<complex<T>>& x, std::vector<int> axes = {}, Norm norm = Norm::backward,
                       const Stream& stream = Stream()) {
  return porta::detail::fft_complex("porta::fft::fftn", false, x, std::move(axes), norm, stream);
}
template <class T>
Array<complex<T>> ifftn(const Array<complex<T>>& x, std::vector<int> axes = {}, Norm norm = Norm::backward,
                        const Stream& stream = Stream()) {
  return porta::detail::fft_complex("porta::fft::ifftn", true, x, std::move(axes), norm, stream);
}
template <class T>
Array<complex<T>> fft2(const Array<complex<T>>& x, Norm norm = Norm::backward, const Stream& stream = Stream()) {
  return porta::detail::fft_complex("porta::fft::fft2", false, x, {-2, -1}, norm, stream);
}
template <class T>
Array<complex<T>> ifft2(const Array<complex<T>>& x, Norm norm = Norm::backward, const Stream& stream = Stream()) {
  return porta::detail::fft_complex("porta::fft::ifft2", true, x, {-2, -1}, norm, stream);
}
// The inverse real transforms of a complex half spectrum: real results.
template <class T>
Array<T> irfft(const Array<complex<T>>& x, std::int64_t n = 0, int axis = -1, Norm norm = Norm::backward,
               const Stream& stream = Stream()) {
  return porta::detail::fft_complex_to_real("porta::fft::irfft", x, {axis}, n, norm, stream);
}
template <class T>
Array<T> irfftn(const Array<complex<T>>& x, std::vector<int> axes = {}, std::int64_t n_last = 0,
                Norm norm = Norm::backward, const Stream& stream = Stream()) {
  return porta::detail::fft_complex_to_real("porta::fft::irfftn", x, std::move(axes), n_last, norm, stream);
}
template <class T>
Array<T> irfft2(const Array<complex<T>>& x, std::int64_t n_last = 0, Norm norm = Norm::backward,
                const Stream& stream = Stream()) {
  return porta::detail::fft_complex_to_real("porta::fft::irfft2", x, {-2, -1}, n_last, norm, stream);
}

}  // namespace porta::fft
