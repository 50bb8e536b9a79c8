// SPDX-License-Identifier: Apache-2.0
// porta.fft (bindings.hpp): porta/fft.hpp in Python, under numpy.fft's names and arguments (also
// those of cupy.fft). Complex values come as complex64 / complex128 arrays (complex results then
// are complex arrays too) or as a float32 or float64 porta.Array whose last axis of 2 holds (real,
// imaginary), as torch.view_as_real lays it out, with axes counted without that pair axis. Other
// dtypes are porta.InvalidArgument, since porta does not promote.
//
// porta transforms whole axes: numpy.fft's `n` and `s`, which crop or zero-pad the input first, are
// taken only where they change nothing or where the C++ API has them (the output length of irfft and
// of the last axis of irfftn); anything else is porta.InvalidArgument saying so, rather than a
// transform of another length.
#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "arguments.hpp"
#include "bindings.hpp"
#include "dtypes.hpp"
#include "errors.hpp"
#include "porta/algorithms.hpp"
#include "porta/fft.hpp"

namespace porta::python {
namespace {

using porta::fft::Norm;

enum class Kind { c2c, r2c, c2r };

std::string num(std::int64_t v) {
  return std::to_string(v);
}

// f(Array<T>&) -> Array<T> for the float32 or float64 array `x`, wrapped. A complex64 or complex128
// x is transformed as its pair form (porta::view_as_real, no copy when x is contiguous), and the
// complex result of a complex-to-complex transform is a complex array again.
template <class F>
py::object with_signal(const char* fn, py::handle x, Kind kind, F&& f) {
  ArrayBox* box = box_of(x);
  if (box == nullptr) throw py::type_error(std::string(fn) + ": x must be a porta.Array");
  return std::visit(
      [&](auto& a) -> py::object {
        using T = value_of<decltype(a)>;
        if constexpr (std::is_floating_point_v<T>) {
          return wrap(f(a));
        } else if constexpr (is_half_v<T>) {
          throw Unavailable(std::string(fn) + ": not defined for " + dtype_name(*box) +
                            " (porta.fft transforms float32 or float64 values: x.astype('float32') converts)");
        } else if constexpr (is_complex_v<T>) {
          // NumPy's rfft would drop the imaginary parts (with a warning); porta says so instead.
          if (kind == Kind::r2c)
            invalid(fn, std::string("x is ") + dtype_name(*box) +
                            "; this transform takes a real array (numpy would drop the imaginary parts): x.real");
          const Array<T> c = a.is_contiguous() ? a.reshaped(a.shape()) : a.contiguous();
          auto pairs = porta::view_as_real(c);
          auto y = f(pairs);
          if (kind == Kind::c2c) return wrap(porta::view_as_complex(y));
          return wrap(std::move(y));
        } else {
          invalid(fn, std::string("x is ") + dtype_name(*box) +
                          "; porta.fft takes float32 or float64 arrays, complex64 or complex128 ones, or complex "
                          "values as a last axis of 2 (porta does not promote dtypes: x.astype('float64') converts)");
        }
      },
      box->v);
}

Norm norm_arg(const char* fn, py::handle h) {
  if (h.is_none()) return Norm::backward;
  if (py::isinstance<py::str>(h)) {
    const std::string s = h.cast<std::string>();
    if (s == "backward") return Norm::backward;
    if (s == "ortho") return Norm::ortho;
    if (s == "forward") return Norm::forward;
  }
  invalid(fn, "norm must be None, 'backward', 'ortho' or 'forward', not " + py::repr(h).cast<std::string>());
}

// s= and axes=: None, or a sequence of ints (a list, a tuple, a NumPy array).
std::optional<std::vector<std::int64_t>> ints_arg(const char* fn, const char* name, py::handle h) {
  if (h.is_none()) return std::nullopt;
  const auto refuse = [&] {
    throw py::type_error(std::string(fn) + ": " + name + " must be None or a sequence of ints, not " +
                         py::repr(h).cast<std::string>());
  };
  if (!py::isinstance<py::sequence>(h) || py::isinstance<py::str>(h)) refuse();
  std::vector<std::int64_t> v;
  for (const py::handle item : h) {
    if (PyFloat_Check(item.ptr()) || !PyIndex_Check(item.ptr())) refuse();
    v.push_back(item.cast<std::int64_t>());
  }
  return v;
}

int axis_int(const char* fn, std::int64_t a) {
  if (a < INT_MIN || a > INT_MAX) invalid(fn, "axis " + num(a) + " is out of range");
  return static_cast<int>(a);
}

// NumPy refuses fewer than one point with a ValueError too.
void check_points(const char* fn, const std::string& name, std::int64_t n) {
  if (n < 1) invalid(fn, name + " = " + num(n) + " is not a valid number of points (at least 1)");
}

// x's length along its logical axis `axis`, or -1 where the C++ front end refuses x or the axis
// anyway: its message then says what is wrong, not a comparison with a length x does not have.
std::int64_t axis_length(const Shape& x, bool complex_in, std::int64_t axis) {
  if (complex_in && (x.rank() < 2 || x[x.rank() - 1] != 2)) return -1;
  const int logical = x.rank() - (complex_in ? 1 : 0);
  if (axis < -logical || axis >= logical) return -1;
  return x[static_cast<int>(axis < 0 ? axis + logical : axis)];
}

// An `n` or `s` entry that is not x's own length would crop or pad x, which porta does not do.
void check_whole_axis(const char* fn, const std::string& name, std::int64_t want, const Shape& x, bool complex_in,
                      std::int64_t axis) {
  const std::int64_t have = axis_length(x, complex_in, axis);
  if (have < 0 || have == want) return;
  invalid(fn, name + " = " + num(want) + " is not supported: x has " + num(have) + " points along axis " + num(axis) +
                  " and porta.fft transforms whole axes (NumPy's cropping or zero-padding to " + name +
                  " is not done here); crop or zero-pad x first");
}

// What fftn and its kin transform: `axes` as C++ takes them (empty: every axis) and irfftn's n_last.
struct NdArgs {
  std::vector<int> axes;
  std::int64_t n_last = 0;
  bool no_axes = false;  // axes=() or s=(): NumPy transforms nothing
};

NdArgs nd_args(const char* fn, const Shape& x, Kind kind, py::handle s_arg, py::handle axes_arg) {
  const std::optional<std::vector<std::int64_t>> s = ints_arg(fn, "s", s_arg);
  std::optional<std::vector<std::int64_t>> axes = ints_arg(fn, "axes", axes_arg);
  // NumPy's rule: s without axes names the last len(s) axes.
  if (s && !axes) {
    axes.emplace();
    for (std::int64_t i = -static_cast<std::int64_t>(s->size()); i < 0; ++i) axes->push_back(i);
  }
  NdArgs r;
  if (axes) {
    for (const std::int64_t a : *axes) r.axes.push_back(axis_int(fn, a));
    r.no_axes = r.axes.empty();
  }
  if (s) {
    if (s->size() != axes->size())
      invalid(fn, "s and axes have different lengths (" + num(static_cast<std::int64_t>(s->size())) + " and " +
                      num(static_cast<std::int64_t>(axes->size())) + ")");
    const bool complex_in = kind != Kind::r2c;
    for (std::size_t i = 0; i < s->size(); ++i) {
      const std::string name = "s[" + num(static_cast<std::int64_t>(i)) + "]";
      check_points(fn, name, (*s)[i]);
      if (kind == Kind::c2r && i + 1 == s->size())
        r.n_last = (*s)[i];
      else
        check_whole_axis(fn, name, (*s)[i], x, complex_in, (*axes)[i]);
    }
  }
  if (r.no_axes && kind != Kind::c2c)
    invalid(fn, "axes is empty: a real transform needs at least one axis (the last of axes is the real one)");
  return r;
}

template <class T>
Array<T> run_1d(Kind kind, bool inverse, const Array<T>& x, std::int64_t n, int axis, Norm norm, const Stream& s) {
  if (kind == Kind::r2c) return porta::fft::rfft(x, axis, norm, s);
  if (kind == Kind::c2r) return porta::fft::irfft(x, n, axis, norm, s);
  return inverse ? porta::fft::ifft(x, axis, norm, s) : porta::fft::fft(x, axis, norm, s);
}

template <class T>
Array<T> run_nd(Kind kind, bool inverse, const Array<T>& x, const NdArgs& a, Norm norm, const Stream& s) {
  if (kind == Kind::r2c) return porta::fft::rfftn(x, a.axes, norm, s);
  if (kind == Kind::c2r) return porta::fft::irfftn(x, a.axes, a.n_last, norm, s);
  return inverse ? porta::fft::ifftn(x, a.axes, norm, s) : porta::fft::fftn(x, a.axes, norm, s);
}

// fft, ifft, rfft, irfft: numpy.fft's (x, n=None, axis=-1, norm=None).
void def_1d(py::module_& m, const char* name, Kind kind, bool inverse, const char* doc) {
  const std::string fn = std::string("porta.fft.") + name;
  m.def(
      name,
      [fn, kind, inverse](py::handle x, std::optional<std::int64_t> n, std::int64_t axis, py::handle norm,
                          const Stream* s) {
        const char* f = fn.c_str();
        const Norm nm = norm_arg(f, norm);
        const int ax = axis_int(f, axis);
        return with_signal(f, x, kind, [&](auto& xv) {
          using T = value_of<decltype(xv)>;
          if (n) {
            check_points(f, "n", *n);
            if (kind != Kind::c2r) check_whole_axis(f, "n", *n, xv.shape(), kind == Kind::c2c, axis);
          }
          Array<T> y;
          {
            py::gil_scoped_release nogil;
            y = run_1d(kind, inverse, xv, kind == Kind::c2r ? n.value_or(0) : 0, ax, nm, stream_arg(s));
          }
          return y;
        });
      },
      py::arg("x"), py::arg("n") = py::none(), py::arg("axis") = -1, py::arg("norm") = py::none(), py::kw_only(),
      py::arg("stream") = py::none(), doc);
}

// fftn and kin: numpy.fft's (x, s=None, axes=None, norm=None); fft2 and kin default axes to (-2, -1).
void def_nd(py::module_& m, const char* name, Kind kind, bool inverse, py::object default_axes, const char* doc) {
  const std::string fn = std::string("porta.fft.") + name;
  m.def(
      name,
      [fn, kind, inverse](py::handle x, py::handle s_arg, py::handle axes_arg, py::handle norm, const Stream* s) {
        const char* f = fn.c_str();
        const Norm nm = norm_arg(f, norm);
        return with_signal(f, x, kind, [&](auto& xv) {
          using T = value_of<decltype(xv)>;
          const NdArgs a = nd_args(f, xv.shape(), kind, s_arg, axes_arg);
          Array<T> y;
          if (a.no_axes) {
            // NumPy returns x as it is; porta returns a copy of it, as every transform does.
            const Shape& sh = xv.shape();
            if (sh.rank() < 2 || sh[sh.rank() - 1] != 2)
              invalid(f, "x must be complex: a last axis of 2 (real, imaginary) (x is " + sh.to_string() + ")");
            py::gil_scoped_release nogil;
            y = xv.clone(stream_arg(s));
          } else {
            py::gil_scoped_release nogil;
            y = run_nd(kind, inverse, xv, a, nm, stream_arg(s));
          }
          return y;
        });
      },
      py::arg("x"), py::arg("s") = py::none(), py::arg("axes") = std::move(default_axes), py::arg("norm") = py::none(),
      py::kw_only(), py::arg("stream") = py::none(), doc);
}

// numpy.fft.fftfreq and rfftfreq: computed on the host in double, as NumPy does, then converted
// and copied to the device (a few values, once).
void def_freq(py::module_& m, const char* name, bool half, const char* doc) {
  const std::string fn = std::string("porta.fft.") + name;
  m.def(
      name,
      [fn, half](std::int64_t n, double d, py::handle dtype, py::handle device) {
        const char* f = fn.c_str();
        check_points(f, "n", n);
        if (d == 0) invalid(f, "d = 0: the sample spacing must not be zero");
        const porta_dtype dt = dtype_arg(dtype, f).value_or(PORTA_F64);
        if (dt != PORTA_F32 && dt != PORTA_F64)
          invalid(f, std::string("dtype ") + detail::dtype_name(dt) + " is not supported (float32 or float64)");
        const Device dev = device_arg(device);
        const double step = 1.0 / (static_cast<double>(n) * d);
        const std::int64_t count = half ? n / 2 + 1 : n;
        const std::int64_t non_negative = half ? count : (n - 1) / 2 + 1;
        return with_dtype(dt, [&](auto tag) -> py::object {
          using T = decltype(tag);
          if constexpr (std::is_floating_point_v<T>) {
            std::vector<T> h(static_cast<std::size_t>(count));
            for (std::int64_t i = 0; i < count; ++i)
              h[static_cast<std::size_t>(i)] = static_cast<T>(static_cast<double>(i < non_negative ? i : i - n) * step);
            return wrap(Array<T>::from(h.data(), Shape{count}, dev));
          } else {
            return py::none();  // refused above
          }
        });
      },
      py::arg("n"), py::arg("d") = 1.0, py::kw_only(), py::arg("dtype") = "float64", py::arg("device") = py::none(),
      doc);
}

}  // namespace

void bind_fft(py::module_& m) {
  py::module_ f = m.def_submodule(
      "fft",
      "porta.fft: discrete Fourier transforms of float32 and float64 arrays on any device, named as numpy.fft and "
      "cupy.fft. A complex array is a float array whose last axis of 2 holds (real, imaginary), as "
      "torch.view_as_real; axes are counted without it (docs/python.md, include/porta/fft.hpp).");

  def_1d(f, "fft", Kind::c2c, false,
         "The 1-D transform of complex x (..., n, 2) along `axis` (numpy.fft.fft). n, when given, must be x's\n"
         "length along the axis: porta does not crop or zero-pad. norm: None or 'backward' (the default),\n"
         "'ortho' or 'forward', as NumPy's.");
  def_1d(f, "ifft", Kind::c2c, true,
         "The inverse of fft (numpy.fft.ifft): divided by n unless norm says otherwise. n, when given, must be\n"
         "x's length along the axis.");
  def_1d(f, "rfft", Kind::r2c, false,
         "The transform of real x along `axis`, its non-negative frequencies only (numpy.fft.rfft): n points give\n"
         "n // 2 + 1 complex values, (..., n // 2 + 1, 2). n, when given, must be x's length along the axis.");
  def_1d(f, "irfft", Kind::c2r, true,
         "The real signal of n points whose rfft is complex x (numpy.fft.irfft); n=None is 2 (m - 1) for m values\n"
         "along `axis`. x is cropped or zero-padded to n // 2 + 1 values first, as NumPy does.");

  const py::object all = py::none(), last_two = py::make_tuple(-2, -1);
  def_nd(f, "fftn", Kind::c2c, false, all,
         "The transform of complex x over `axes` (numpy.fft.fftn): every axis when None (at most 3). s, when\n"
         "given, must be x's lengths along the axes: porta does not crop or zero-pad. Repeated axes are refused.");
  def_nd(f, "ifftn", Kind::c2c, true, all,
         "The inverse of fftn (numpy.fft.ifftn). s, when given, must be x's lengths along the axes.");
  def_nd(f, "rfftn", Kind::r2c, false, all,
         "The transform of real x over `axes` (numpy.fft.rfftn), the last of them the real one, halved to\n"
         "n // 2 + 1 complex values. s, when given, must be x's lengths along the axes.");
  def_nd(f, "irfftn", Kind::c2r, true, all,
         "The real array whose rfftn over `axes` is complex x (numpy.fft.irfftn). s[-1] is the real length of\n"
         "the last axis (None: 2 (m - 1)), to which x is cropped or zero-padded as NumPy does; the other entries\n"
         "of s must be x's lengths along their axes.");
  def_nd(f, "fft2", Kind::c2c, false, last_two,
         "fftn over `axes`, the last two by default (numpy.fft.fft2); s and norm as fftn's.");
  def_nd(f, "ifft2", Kind::c2c, true, last_two,
         "ifftn over `axes`, the last two by default (numpy.fft.ifft2); s and norm as ifftn's.");
  def_nd(f, "rfft2", Kind::r2c, false, last_two,
         "rfftn over `axes`, the last two by default (numpy.fft.rfft2); s and norm as rfftn's.");
  def_nd(f, "irfft2", Kind::c2r, true, last_two,
         "irfftn over `axes`, the last two by default (numpy.fft.irfft2); s and norm as irfftn's: s[-1] is the\n"
         "real length of the last axis.");

  def_freq(f, "fftfreq", false,
           "The sample frequencies of fft's n outputs for spacing d (numpy.fft.fftfreq): [0, 1, ..., -1] / (n d),\n"
           "as a float64 (or dtype) array on `device`.");
  def_freq(f, "rfftfreq", true,
           "The sample frequencies of rfft's n // 2 + 1 outputs for spacing d (numpy.fft.rfftfreq), as a float64\n"
           "(or dtype) array on `device`.");
}

}  // namespace porta::python
