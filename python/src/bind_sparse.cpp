// SPDX-License-Identifier: Apache-2.0
// porta.sparse (bindings.hpp): porta/sparse.hpp in Python, under the names of scipy.sparse and
// cupyx.scipy.sparse. One Python type, csr_matrix, holds any of Csr<float|double, int32|int64>, as
// porta.Array holds any Array<T>.
//
// Where the data comes from decides what is copied:
//   - porta.Arrays (data, indices, indptr) are shared, not copied (Csr::from_arrays), so their dtypes
//     are the matrix's and must agree: porta does not promote, and a mismatch is a TypeError;
//   - anything else (NumPy arrays, lists, scipy.sparse matrices, coordinates, dense matrices) is read
//     on the host and copied to the device once, so dtype= and index_dtype= may convert it there.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
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
#include "porta/sparse.hpp"

namespace porta::python {
namespace {

using std::int32_t;
using std::int64_t;

template <class T, class I>
using Csr = porta::sparse::Csr<T, I>;

using AnyCsr = std::variant<Csr<float, int32_t>, Csr<float, int64_t>, Csr<double, int32_t>, Csr<double, int64_t>>;

// A struct rather than the variant itself, as ArrayBox, so that pybind11/stl.h's variant caster never
// applies to it.
struct CsrBox {
  AnyCsr v;
};
using CsrPtr = std::shared_ptr<CsrBox>;

template <class C>
using csr_value = typename std::decay_t<C>::value_type;
template <class C>
using csr_index = typename std::decay_t<C>::index_type;

template <class T, class I>
CsrPtr box(Csr<T, I>&& c) {
  return std::make_shared<CsrBox>(CsrBox{AnyCsr(std::move(c))});
}

// f(T{}, I{}) for a value dtype (float32, float64) and an index dtype (int32, int64) checked before.
template <class F>
CsrPtr with_csr_types(porta_dtype value, porta_dtype index, F&& f) {
  const auto by_index = [&](auto t) { return index == PORTA_I32 ? f(t, int32_t{}) : f(t, int64_t{}); };
  return value == PORTA_F32 ? by_index(float{}) : by_index(double{});
}

// A porta.Array sharing the matrix's memory (porta-allocated arrays are contiguous: no copy).
template <class T>
py::object share(const Array<T>& a) {
  return wrap(a.contiguous());
}

// ---- dtype arguments --------------------------------------------------------------------------------

bool is_float(porta_dtype d) {
  return d == PORTA_F32 || d == PORTA_F64;
}

// int32 or int64: "not a float" would let the complex dtypes through.
bool is_index(porta_dtype d) {
  return d == PORTA_I32 || d == PORTA_I64;
}

std::string dname(porta_dtype d) {
  return detail::dtype_name(d);
}

// ---- host sequences ---------------------------------------------------------------------------------

enum class Kind { floating, signed_int, unsigned_int, boolean };

// A 1-D or 2-D host array read in place: a buffer (NumPy, array.array, memoryview) with its byte
// strides, or the host copy of a porta.Array. `keep` owns what `base` points into.
struct HostSeq {
  const char* base = nullptr;
  int ndim = 1;
  int64_t n[2] = {0, 1};
  int64_t stride[2] = {0, 0};  // in bytes
  Kind kind = Kind::floating;
  int itemsize = 8;
  std::string dtype;    // NumPy's name, for messages
  bool device = false;  // from a porta.Array: its dtype is kept as it is
  Device dev;
  std::shared_ptr<void> keep;

  int64_t size() const { return n[0] * n[1]; }
  std::optional<porta_dtype> porta_type() const {
    if (kind == Kind::floating) return itemsize == 4 ? PORTA_F32 : PORTA_F64;
    if (kind == Kind::signed_int && itemsize == 4) return PORTA_I32;
    if (kind == Kind::signed_int && itemsize == 8) return PORTA_I64;
    return std::nullopt;
  }
};

// The kind and NumPy name of a buffer-protocol format ("f", "<d", "l", "?", ...).
bool parse_format(std::string f, py::ssize_t itemsize, HostSeq& s) {
  if (!f.empty() && (f[0] == '@' || f[0] == '=' || f[0] == '<')) f.erase(0, 1);
  if (f.size() != 1) return false;
  const char c = f[0];
  const std::string bits = std::to_string(itemsize * 8);
  if ((c == 'f' && itemsize == 4) || (c == 'd' && itemsize == 8)) {
    s.kind = Kind::floating;
    s.dtype = "float" + bits;
  } else if (std::string("bhilqn").find(c) != std::string::npos) {
    s.kind = Kind::signed_int;
    s.dtype = "int" + bits;
  } else if (std::string("BHILQN").find(c) != std::string::npos) {
    s.kind = Kind::unsigned_int;
    s.dtype = "uint" + bits;
  } else if (c == '?' && itemsize == 1) {
    s.kind = Kind::boolean;
    s.dtype = "bool";
  } else {
    return false;
  }
  if (s.kind != Kind::floating && s.kind != Kind::boolean && itemsize != 1 && itemsize != 2 && itemsize != 4 &&
      itemsize != 8)
    return false;
  s.itemsize = static_cast<int>(itemsize);
  return true;
}

// A host array of rank `ndim` from anything NumPy can read; a porta.Array is copied to the host.
HostSeq host_seq(py::handle h, const char* fn, const char* name, int ndim) {
  HostSeq s;
  s.ndim = ndim;
  if (ArrayBox* b = box_of(h)) {
    std::visit(
        [&](auto& a) {
          using S = value_of<decltype(a)>;
          if constexpr (is_complex_v<S>)
            throw py::type_error(std::string(fn) + ": " + name + " is " + dtype_name(*b) +
                                 "; porta.sparse reads real numbers (float32, float64) and integers");
          // Read below as integers of their size otherwise: refused, as porta's sparse matrices refuse them.
          if constexpr (is_half_v<S>)
            throw Unavailable(std::string(fn) + ": not defined for " + dtype_name(*b) +
                              " (porta.sparse reads float32, float64 and integers: " + name +
                              ".astype('float32') converts)");
          if (a.rank() != ndim)
            invalid(fn, std::string(name) + " must be " + std::to_string(ndim) + "-D (it is " + a.shape().to_string() +
                            ")");
          auto v = std::make_shared<std::vector<S>>();
          {
            py::gil_scoped_release nogil;
            *v = a.to_vector();
          }
          s.base = reinterpret_cast<const char*>(v->data());
          for (int i = 0; i < ndim; ++i) s.n[i] = a.dim(i);
          s.stride[ndim - 1] = sizeof(S);
          if (ndim == 2) s.stride[0] = static_cast<int64_t>(sizeof(S)) * a.dim(1);
          s.kind = std::is_floating_point_v<S> ? Kind::floating : Kind::signed_int;
          s.itemsize = sizeof(S);
          s.dtype = dtype_name(*b);
          s.device = true;
          s.dev = a.device();
          s.keep = std::move(v);
        },
        b->v);
    return s;
  }
  py::object obj = py::reinterpret_borrow<py::object>(h);
  if (!PyObject_CheckBuffer(obj.ptr())) {
    // Lists, tuples and objects with __array__ (a PyTorch CPU tensor): NumPy reads them.
    py::object np;
    try {
      np = py::module_::import("numpy");
    } catch (py::error_already_set&) {
      throw py::type_error(std::string(fn) + ": " + name +
                           " must be a porta.Array or a buffer (NumPy array, array.array); other sequences need NumPy");
    }
    obj = np.attr("asarray")(obj);
  }
  auto info = std::make_shared<py::buffer_info>(py::reinterpret_borrow<py::buffer>(obj).request());
  if (!parse_format(info->format, info->itemsize, s))
    throw py::type_error(std::string(fn) + ": " + name + " has the buffer format '" + info->format +
                         "', which is not a number porta reads (float32, float64, integers, bool)");
  if (info->ndim != ndim)
    invalid(fn, std::string(name) + " must be " + std::to_string(ndim) + "-D (it has " + std::to_string(info->ndim) +
                    " dimensions)");
  s.base = static_cast<const char*>(info->ptr);
  for (int i = 0; i < ndim; ++i) {
    s.n[i] = info->shape[static_cast<std::size_t>(i)];
    s.stride[i] = info->strides[static_cast<std::size_t>(i)];
  }
  s.keep = std::move(info);
  return s;
}

// f(S{}) with the element type of `s`.
template <class F>
void with_source_type(const HostSeq& s, F&& f) {
  switch (s.kind) {
    case Kind::floating:
      return s.itemsize == 4 ? f(float{}) : f(double{});
    case Kind::boolean:
      return f(bool{});
    case Kind::signed_int:
      switch (s.itemsize) {
        case 1:
          return f(std::int8_t{});
        case 2:
          return f(std::int16_t{});
        case 4:
          return f(int32_t{});
        default:
          return f(int64_t{});
      }
    case Kind::unsigned_int:
      switch (s.itemsize) {
        case 1:
          return f(std::uint8_t{});
        case 2:
          return f(std::uint16_t{});
        case 4:
          return f(std::uint32_t{});
        default:
          return f(std::uint64_t{});
      }
  }
}

template <class S>
S load(const char* p) {
  S v;
  std::memcpy(&v, p, sizeof(S));  // a strided buffer need not be aligned
  return v;
}

// The elements in row-major order, converted to T.
template <class T>
std::vector<T> read_values(const HostSeq& s) {
  std::vector<T> out(static_cast<std::size_t>(s.size()));
  with_source_type(s, [&](auto tag) {
    using S = decltype(tag);
    std::size_t k = 0;
    for (int64_t i = 0; i < s.n[0]; ++i)
      for (int64_t j = 0; j < s.n[1]; ++j)
        out[k++] = static_cast<T>(load<S>(s.base + i * s.stride[0] + j * s.stride[1]));
  });
  return out;
}

// Integer entries as int64; floats and bools are refused (scipy.sparse refuses float indices too).
std::vector<int64_t> read_indices(const HostSeq& s, const char* fn, const char* name) {
  if (s.kind == Kind::floating || s.kind == Kind::boolean)
    throw py::type_error(std::string(fn) + ": " + name + " is " + s.dtype + "; indices must be integers");
  std::vector<int64_t> out(static_cast<std::size_t>(s.n[0]));
  with_source_type(s, [&](auto tag) {
    using S = decltype(tag);
    if constexpr (std::is_integral_v<S> && !std::is_same_v<S, bool>) {
      for (int64_t i = 0; i < s.n[0]; ++i) {
        const S v = load<S>(s.base + i * s.stride[0]);
        if constexpr (std::is_unsigned_v<S> && sizeof(S) == 8) {
          if (v > static_cast<std::uint64_t>(std::numeric_limits<int64_t>::max()))
            invalid(fn,
                    std::string(name) + "[" + std::to_string(i) + "] = " + std::to_string(v) + " does not fit int64");
        }
        out[static_cast<std::size_t>(i)] = static_cast<int64_t>(v);
      }
    }
  });
  return out;
}

template <class I>
std::vector<I> narrow(const std::vector<int64_t>& v, const char* fn, const char* name) {
  if constexpr (std::is_same_v<I, int64_t>) {
    return v;
  } else {
    std::vector<I> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i] < std::numeric_limits<I>::min() || v[i] > std::numeric_limits<I>::max())
        invalid(fn, std::string(name) + "[" + std::to_string(i) + "] = " + std::to_string(v[i]) +
                        " does not fit int32 indices (index_dtype='int64' holds it)");
      out[i] = static_cast<I>(v[i]);
    }
    return out;
  }
}

// ---- the dtypes of a new matrix ---------------------------------------------------------------------

// The values' dtype: a porta.Array's own (float32 or float64, and dtype= must agree); a host
// array's, or dtype= converting it.
porta_dtype value_dtype(const char* fn, const HostSeq& data, py::handle dtype) {
  const std::optional<porta_dtype> want = dtype_arg(dtype, fn);
  if (data.device) {
    const porta_dtype have = *data.porta_type();
    if (!is_float(have))
      throw py::type_error(std::string(fn) + ": data is " + data.dtype +
                           "; a csr_matrix holds float32 or float64 values (data.astype('float64') converts)");
    if (want && *want != have)
      throw py::type_error(std::string(fn) + ": data is " + data.dtype + " and dtype is " + dname(*want) +
                           " (porta does not promote dtypes: data.astype('" + dname(*want) + "') converts)");
    return have;
  }
  if (want) {
    if (!is_float(*want)) invalid(fn, "dtype " + dname(*want) + ": a csr_matrix holds float32 or float64 values");
    return *want;
  }
  if (data.kind == Kind::floating) return data.itemsize == 4 ? PORTA_F32 : PORTA_F64;
  invalid(fn, "data is " + data.dtype + "; a csr_matrix holds float32 or float64 values (dtype='float64' converts)");
}

// The index dtype: that of porta.Arrays (both alike, and index_dtype= must agree); for host arrays
// index_dtype=, else scipy.sparse's rule: int32 while the shape and the entry count fit it.
porta_dtype index_dtype(const char* fn, const HostSeq& a, const char* a_name, const HostSeq& b, const char* b_name,
                        py::handle index_dtype_arg, int64_t rows, int64_t cols, int64_t nnz) {
  const std::optional<porta_dtype> want = dtype_arg(index_dtype_arg, fn);
  if (a.device) {
    const std::optional<porta_dtype> ta = a.porta_type(), tb = b.porta_type();
    if (!ta || !tb || !is_index(*ta) || !is_index(*tb) || *ta != *tb)
      throw py::type_error(std::string(fn) + ": " + a_name + " is " + a.dtype + " and " + b_name + " is " + b.dtype +
                           "; they must both be int32 or both int64");
    if (want && *want != *ta)
      throw py::type_error(std::string(fn) + ": the indices are " + a.dtype + " and index_dtype is " + dname(*want) +
                           " (porta does not promote dtypes: astype converts)");
    return *ta;
  }
  if (want) {
    if (!is_index(*want)) invalid(fn, "index_dtype " + dname(*want) + " is not int32 or int64");
    return *want;
  }
  const int64_t most = std::numeric_limits<int32_t>::max();
  return rows <= most && cols <= most && nnz <= most ? PORTA_I32 : PORTA_I64;
}

std::optional<std::pair<int64_t, int64_t>> shape_opt(py::handle shape, const char* fn) {
  if (shape.is_none()) return std::nullopt;
  std::vector<int64_t> d;
  try {
    d = shape.cast<std::vector<int64_t>>();
  } catch (py::cast_error&) {
    throw py::type_error(std::string(fn) + ": shape must be a pair of ints (rows, cols)");
  }
  if (d.size() != 2) invalid(fn, "shape must be (rows, cols), not " + std::to_string(d.size()) + " numbers");
  return std::make_pair(d[0], d[1]);
}

int64_t max_plus_one(const std::vector<int64_t>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end()) + 1;
}

// The device of a host copy: that of its porta.Arrays, else device= (the default device when None).
Device target_device(const char* fn, std::initializer_list<const HostSeq*> parts, py::handle device) {
  const HostSeq& first = **parts.begin();
  if (!first.device) {
    for (const HostSeq* p : parts)
      if (p->device) throw py::type_error(std::string(fn) + ": mix of porta.Arrays and host arrays; pass one kind");
    return device_arg(device);
  }
  for (const HostSeq* p : parts) {
    if (!p->device) throw py::type_error(std::string(fn) + ": mix of porta.Arrays and host arrays; pass one kind");
    if (p->dev != first.dev)
      throw DeviceMismatch(std::string(fn) + ": the arrays are on different devices (" + first.dev.to_string() +
                           " and " + p->dev.to_string() + ")");
  }
  if (!device.is_none() && device_arg(device) != first.dev)
    throw DeviceMismatch(std::string(fn) + ": the arrays are on " + first.dev.to_string() + ", device is " +
                         device_arg(device).to_string() + " (x.to(device) moves them)");
  return first.dev;
}

// ---- the factories ----------------------------------------------------------------------------------

// (data, indices, indptr) as porta.Arrays on one device: shared (cloned with copy=True).
CsrPtr from_device_arrays(const char* fn, ArrayBox& data, ArrayBox& indices, ArrayBox& indptr,
                          std::optional<std::pair<int64_t, int64_t>> shape, py::handle dtype, py::handle index_dt,
                          py::handle device, bool copy) {
  const porta_dtype vt = dtype_of(data), it = dtype_of(indices), pt = dtype_of(indptr);
  if (detail::backend::dtype_is_half(vt))
    throw Unavailable(std::string(fn) + ": not defined for " + dname(vt) +
                      " (a csr_matrix holds float32 or float64 values: data.astype('float32') converts)");
  if (!is_float(vt))
    throw py::type_error(std::string(fn) + ": data is " + dname(vt) +
                         "; a csr_matrix holds float32 or float64 values (data.astype('float64') converts)");
  if (!is_index(it) || it != pt)
    throw py::type_error(std::string(fn) + ": indices is " + dname(it) + " and indptr is " + dname(pt) +
                         "; they must both be int32 or both int64 (astype converts)");
  if (const auto want = dtype_arg(dtype, fn); want && *want != vt)
    throw py::type_error(std::string(fn) + ": data is " + dname(vt) + " and dtype is " + dname(*want) +
                         " (porta does not promote dtypes: data.astype('" + dname(*want) + "') converts)");
  if (const auto want = dtype_arg(index_dt, fn); want && *want != it)
    throw py::type_error(std::string(fn) + ": the indices are " + dname(it) + " and index_dtype is " + dname(*want) +
                         " (porta does not promote dtypes: astype converts)");
  const Device dev = std::visit([](auto& a) { return a.device(); }, data.v);
  if (!device.is_none() && device_arg(device) != dev)
    throw DeviceMismatch(std::string(fn) + ": data is on " + dev.to_string() + ", device is " +
                         device_arg(device).to_string() + " (x.to(device) moves the arrays)");
  return with_csr_types(vt, it, [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    const Array<T>& v = std::get<Array<T>>(data.v);
    const Array<I>& ix = std::get<Array<I>>(indices.v);
    const Array<I>& ip = std::get<Array<I>>(indptr.v);
    int64_t rows = 0, cols = 0;
    if (shape) {
      std::tie(rows, cols) = *shape;
    } else {
      // scipy.sparse's inference: one row per offset after the first, columns up to the largest index.
      if (ip.size() == 0) invalid(fn, "indptr is empty: it holds rows + 1 offsets");
      rows = ip.size() - 1;
      if (ix.size() > 0) {
        py::gil_scoped_release nogil;
        cols = static_cast<int64_t>(porta::max(ix)) + 1;
      }
    }
    Csr<T, I> c;
    {
      py::gil_scoped_release nogil;
      c = copy ? Csr<T, I>::from_arrays(rows, cols, ip.clone(), ix.clone(), v.clone())
               : Csr<T, I>::from_arrays(rows, cols, ip.contiguous(), ix.contiguous(), v.contiguous());
    }
    return box(std::move(c));
  });
}

// (data, indices, indptr) from the host (or copied through it), onto one device.
CsrPtr from_host_triplet(const char* fn, const HostSeq& data, const HostSeq& indices, const HostSeq& indptr,
                         std::optional<std::pair<int64_t, int64_t>> shape, py::handle dtype, py::handle index_dt,
                         py::handle device) {
  const Device dev = target_device(fn, {&data, &indices, &indptr}, device);
  const std::vector<int64_t> ix = read_indices(indices, fn, "indices"), ip = read_indices(indptr, fn, "indptr");
  int64_t rows = 0, cols = 0;
  if (shape) {
    std::tie(rows, cols) = *shape;
  } else {
    if (ip.empty()) invalid(fn, "indptr is empty: it holds rows + 1 offsets");
    rows = static_cast<int64_t>(ip.size()) - 1;
    cols = max_plus_one(ix);
  }
  const porta_dtype vt = value_dtype(fn, data, dtype);
  const porta_dtype it = index_dtype(fn, indices, "indices", indptr, "indptr", index_dt, rows, cols, data.size());
  return with_csr_types(vt, it, [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    const std::vector<T> v = read_values<T>(data);
    const std::vector<I> ixn = narrow<I>(ix, fn, "indices"), ipn = narrow<I>(ip, fn, "indptr");
    Csr<T, I> c;
    {
      py::gil_scoped_release nogil;
      c = Csr<T, I>::from_host(rows, cols, ipn, ixn, v, dev);
    }
    return box(std::move(c));
  });
}

// (data, (row, col)): coordinates, sorted and with duplicates summed by Csr::from_coo.
CsrPtr from_coordinates(const char* fn, const HostSeq& data, const HostSeq& row, const HostSeq& col,
                        std::optional<std::pair<int64_t, int64_t>> shape, py::handle dtype, py::handle index_dt,
                        py::handle device) {
  const Device dev = target_device(fn, {&data, &row, &col}, device);
  const std::vector<int64_t> r = read_indices(row, fn, "row"), c = read_indices(col, fn, "col");
  int64_t rows = 0, cols = 0;
  if (shape)
    std::tie(rows, cols) = *shape;
  else
    rows = max_plus_one(r), cols = max_plus_one(c);
  const porta_dtype vt = value_dtype(fn, data, dtype);
  const porta_dtype it = index_dtype(fn, row, "row", col, "col", index_dt, rows, cols, data.size());
  return with_csr_types(vt, it, [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    const std::vector<T> v = read_values<T>(data);
    const std::vector<I> rn = narrow<I>(r, fn, "row"), cn = narrow<I>(c, fn, "col");
    Csr<T, I> m;
    {
      py::gil_scoped_release nogil;
      m = Csr<T, I>::from_coo(rows, cols, rn, cn, v, dev);
    }
    return box(std::move(m));
  });
}

// A dense 2-D matrix: its nonzero entries (NaN included, as scipy.sparse keeps them), row by row.
CsrPtr from_dense(const char* fn, const HostSeq& dense, std::optional<std::pair<int64_t, int64_t>> shape,
                  py::handle dtype, py::handle index_dt, py::handle device) {
  const Device dev = target_device(fn, {&dense}, device);
  const int64_t rows = dense.n[0], cols = dense.n[1];
  if (shape && (shape->first != rows || shape->second != cols))
    invalid(fn, "shape (" + std::to_string(shape->first) + ", " + std::to_string(shape->second) +
                    ") differs from the dense matrix's (" + std::to_string(rows) + ", " + std::to_string(cols) + ")");
  const porta_dtype vt = value_dtype(fn, dense, dtype);
  const std::optional<porta_dtype> want_index = dtype_arg(index_dt, fn);
  if (want_index && !is_index(*want_index)) invalid(fn, "index_dtype " + dname(*want_index) + " is not int32 or int64");
  // rows * cols bounds the entry count, which int32 must hold too.
  const int64_t most = std::numeric_limits<int32_t>::max();
  const porta_dtype it = want_index ? *want_index : (rows * cols <= most ? PORTA_I32 : PORTA_I64);
  return with_csr_types(vt, it, [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    const std::vector<T> v = read_values<T>(dense);  // in T, so that a float32 matrix keeps its own values
    std::vector<I> indptr(static_cast<std::size_t>(rows) + 1, I(0)), indices;
    std::vector<T> values;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const T x = v[static_cast<std::size_t>(r * cols + c)];
        if (x == T(0)) continue;
        indices.push_back(static_cast<I>(c));
        values.push_back(x);
      }
      indptr[static_cast<std::size_t>(r) + 1] = static_cast<I>(indices.size());
    }
    Csr<T, I> m;
    {
      py::gil_scoped_release nogil;
      m = Csr<T, I>::from_host(rows, cols, indptr, indices, values, dev);
    }
    return box(std::move(m));
  });
}

// A scipy.sparse matrix or array of any format (through its tocsr()), read on the host.
CsrPtr from_scipy(py::handle m, py::handle device, py::handle dtype, py::handle index_dt) {
  const char* fn = "porta.sparse.csr_matrix.from_scipy";
  if (!py::hasattr(m, "tocsr"))
    throw py::type_error(std::string(fn) + ": expected a scipy.sparse matrix (an object with tocsr())");
  py::object csr = m.attr("tocsr")();
  const auto shape = shape_opt(py::object(csr.attr("shape")), fn);
  const HostSeq data = host_seq(py::object(csr.attr("data")), fn, "data", 1);
  const HostSeq indices = host_seq(py::object(csr.attr("indices")), fn, "indices", 1);
  const HostSeq indptr = host_seq(py::object(csr.attr("indptr")), fn, "indptr", 1);
  return from_host_triplet(fn, data, indices, indptr, shape, dtype, index_dt, device);
}

CsrPtr construct(py::handle arg1, py::handle shape_h, py::handle dtype, bool copy, py::handle device,
                 py::handle index_dt) {
  const char* fn = "porta.sparse.csr_matrix";
  const auto shape = shape_opt(shape_h, fn);
  if (py::isinstance<CsrBox>(arg1)) {
    // Another csr_matrix: its arrays, shared or cloned, as scipy's csr_matrix(A, copy=...).
    CsrBox& other = arg1.cast<CsrBox&>();
    return std::visit(
        [&](auto& a) {
          py::object d = share(a.values()), ix = share(a.indices()), ip = share(a.indptr());
          return from_device_arrays(fn, *box_of(d), *box_of(ix), *box_of(ip), std::make_pair(a.rows(), a.cols()), dtype,
                                    index_dt, device, copy);
        },
        other.v);
  }
  if (py::isinstance<py::tuple>(arg1)) {
    const py::tuple t = py::reinterpret_borrow<py::tuple>(arg1);
    if (t.size() == 2 && PyIndex_Check(py::object(t[0]).ptr()) && PyIndex_Check(py::object(t[1]).ptr())) {
      // (rows, cols): an empty matrix, float64 unless dtype says (as scipy.sparse).
      const int64_t rows = t[0].cast<int64_t>(), cols = t[1].cast<int64_t>();
      if (shape && (shape->first != rows || shape->second != cols)) invalid(fn, "arg1 (rows, cols) and shape differ");
      const std::optional<porta_dtype> want = dtype_arg(dtype, fn);
      const porta_dtype vt = want ? *want : PORTA_F64;
      if (!is_float(vt)) invalid(fn, "dtype " + dname(vt) + ": a csr_matrix holds float32 or float64 values");
      const std::optional<porta_dtype> wi = dtype_arg(index_dt, fn);
      const int64_t most = std::numeric_limits<int32_t>::max();
      const porta_dtype it = wi ? *wi : (rows <= most && cols <= most ? PORTA_I32 : PORTA_I64);
      if (!is_index(it)) invalid(fn, "index_dtype " + dname(it) + " is not int32 or int64");
      const Device dev = device_arg(device);
      return with_csr_types(vt, it, [&](auto tv, auto ti) {
        using T = decltype(tv);
        using I = decltype(ti);
        if (rows < 0 || cols < 0) invalid(fn, "negative shape " + std::to_string(rows) + "x" + std::to_string(cols));
        Csr<T, I> c;
        {
          py::gil_scoped_release nogil;
          c = Csr<T, I>::from_host(rows, cols, std::vector<I>(static_cast<std::size_t>(rows) + 1, I(0)), {}, {}, dev);
        }
        return box(std::move(c));
      });
    }
    if (t.size() == 2) {
      py::object ij = t[1];
      if (!py::isinstance<py::tuple>(ij) && !py::isinstance<py::list>(ij))
        throw py::type_error(std::string(fn) + ": expected (data, (row, col)) for coordinates");
      const py::sequence rc = py::reinterpret_borrow<py::sequence>(ij);
      if (rc.size() != 2) throw py::type_error(std::string(fn) + ": expected (data, (row, col)) for coordinates");
      const HostSeq data = host_seq(py::object(t[0]), fn, "data", 1);
      const HostSeq row = host_seq(py::object(rc[0]), fn, "row", 1);
      const HostSeq col = host_seq(py::object(rc[1]), fn, "col", 1);
      return from_coordinates(fn, data, row, col, shape, dtype, index_dt, device);
    }
    if (t.size() == 3) {
      const py::object t0 = t[0], t1 = t[1], t2 = t[2];
      ArrayBox *d = box_of(t0), *ix = box_of(t1), *ip = box_of(t2);
      if (d != nullptr && ix != nullptr && ip != nullptr)
        return from_device_arrays(fn, *d, *ix, *ip, shape, dtype, index_dt, device, copy);
      if (d != nullptr || ix != nullptr || ip != nullptr)
        throw py::type_error(
            std::string(fn) +
            ": data, indices and indptr must all be porta.Arrays (shared) or all host arrays (copied)");
      const HostSeq data = host_seq(t0, fn, "data", 1);
      const HostSeq indices = host_seq(t1, fn, "indices", 1);
      const HostSeq indptr = host_seq(t2, fn, "indptr", 1);
      return from_host_triplet(fn, data, indices, indptr, shape, dtype, index_dt, device);
    }
    throw py::type_error(std::string(fn) + ": a tuple arg1 is (data, indices, indptr), (data, (row, col)) or " +
                         "(rows, cols), not " + std::to_string(t.size()) + " items");
  }
  if (py::hasattr(arg1, "tocsr") && box_of(arg1) == nullptr) {
    if (shape) {
      const auto other = shape_opt(py::object(arg1.attr("shape")), fn);
      if (other != shape) invalid(fn, "shape differs from the sparse matrix's");
    }
    return from_scipy(arg1, device, dtype, index_dt);
  }
  const HostSeq dense = host_seq(arg1, fn, "the dense matrix", 2);
  return from_dense(fn, dense, shape, dtype, index_dt, device);
}

// ---- products ---------------------------------------------------------------------------------------

porta::sparse::Options sparse_options(const char* fn, const std::string& algorithm) {
  porta::sparse::Options o;
  if (algorithm == "vendor")
    o.algorithm = porta::sparse::Algorithm::vendor;
  else if (algorithm == "own")
    o.algorithm = porta::sparse::Algorithm::own;
  else
    invalid(fn, "algorithm '" + algorithm + "' is not 'vendor' or 'own'");
  return o;
}

// The Array<T> of a dense operand of a T matrix; anything else is a TypeError (porta does not promote).
template <class T>
Array<T>& dense_operand(py::handle h, const char* fn, const char* name) {
  ArrayBox* b = box_of(h);
  if (b == nullptr) {
    if (py::isinstance<CsrBox>(h))
      throw py::type_error(std::string(fn) + ": " + name +
                           " is a sparse matrix; porta.sparse multiplies by dense "
                           "porta.Arrays only (toarray() makes one)");
    throw py::type_error(std::string(fn) + ": " + name + " must be a porta.Array (porta.array(" + name +
                         ", device=A.device) copies a NumPy array there)");
  }
  if (auto* p = std::get_if<Array<T>>(&b->v)) return *p;
  const std::string want = dname(detail::dtype_of<T>());
  throw py::type_error(std::string(fn) + ": the matrix is " + want + " and " + name + " is " + dtype_name(*b) +
                       " (porta does not promote dtypes: " + name + ".astype('" + want + "') converts)");
}

py::object csr_dot(CsrBox& a, py::handle x, const std::string& algorithm, const Stream* s) {
  const char* fn = "porta.sparse.csr_matrix.dot";
  const porta::sparse::Options o = sparse_options(fn, algorithm);
  return std::visit(
      [&](auto& m) {
        using T = csr_value<decltype(m)>;
        Array<T>& xv = dense_operand<T>(x, fn, "x");
        Array<T> r;
        {
          py::gil_scoped_release nogil;
          r = porta::sparse::matmul(m, xv, o, stream_arg(s));
        }
        return wrap(std::move(r));
      },
      a.v);
}

std::string repr(CsrBox& b) {
  return std::visit(
      [](auto& m) {
        using T = csr_value<decltype(m)>;
        using I = csr_index<decltype(m)>;
        return "porta.sparse.csr_matrix(shape=(" + std::to_string(m.rows()) + ", " + std::to_string(m.cols()) +
               "), nnz=" + std::to_string(m.nnz()) + ", dtype=" + dname(detail::dtype_of<T>()) +
               ", index_dtype=" + dname(detail::dtype_of<I>()) + ", device='" + m.device().to_string() + "')";
      },
      b.v);
}

template <class F>
py::object transform(CsrBox& b, F&& f) {
  return std::visit(
      [&](auto& m) {
        using C = std::decay_t<decltype(m)>;
        C r;
        {
          py::gil_scoped_release nogil;
          r = f(m);
        }
        return py::cast(box(std::move(r)));
      },
      b.v);
}

}  // namespace

void bind_sparse(py::module_& m) {
  py::module_ sp = m.def_submodule(
      "sparse",
      "porta.sparse: compressed-sparse-row matrices on any device and their products with dense porta.Arrays, "
      "named as scipy.sparse and cupyx.scipy.sparse (docs/python.md, docs/sparse.md).");
  py::class_<CsrBox, CsrPtr> cls(
      sp, "csr_matrix",
      "A rows x cols matrix in CSR form on one device: float32 or float64 values, int32 or int64 indices.\n\n"
      "csr_matrix((data, indices, indptr), shape=(rows, cols)): porta.Arrays on one device are shared, not\n"
      "copied; NumPy arrays (or lists) are copied to device= (default_device() when None).\n"
      "csr_matrix((data, (row, col)), shape=...): coordinates, duplicates summed.\n"
      "csr_matrix((rows, cols)): an empty matrix. csr_matrix(dense): the nonzero entries of a 2-D array.\n"
      "csr_matrix(scipy_matrix) or csr_matrix.from_scipy(m, device=...): a copy of a scipy.sparse matrix.\n"
      "dtype= and index_dtype= convert host data; porta.Arrays keep their dtypes (porta does not promote).");
  cls.def(py::init(&construct), py::arg("arg1"), py::arg("shape") = py::none(), py::arg("dtype") = py::none(),
          py::arg("copy") = false, py::kw_only(), py::arg("device") = py::none(), py::arg("index_dtype") = py::none())
      .def_static("from_scipy", &from_scipy, py::arg("m"), py::kw_only(), py::arg("device") = py::none(),
                  py::arg("dtype") = py::none(), py::arg("index_dtype") = py::none(),
                  "A copy on `device` of a scipy.sparse matrix or array of any format (through m.tocsr()).")
      .def_property_readonly(
          "shape",
          [](CsrBox& b) { return std::visit([](auto& a) { return py::make_tuple(a.rows(), a.cols()); }, b.v); })
      .def_property_readonly(
          "nnz", [](CsrBox& b) { return std::visit([](auto& a) { return a.nnz(); }, b.v); },
          "Stored entries, duplicates included (as scipy.sparse).")
      .def_property_readonly("ndim", [](CsrBox&) { return 2; })
      .def_property_readonly("format", [](CsrBox&) { return "csr"; })
      .def_property_readonly("dtype",
                             [](CsrBox& b) {
                               return std::visit(
                                   [](auto& a) { return dname(detail::dtype_of<csr_value<decltype(a)>>()); }, b.v);
                             })
      .def_property_readonly("index_dtype",
                             [](CsrBox& b) {
                               return std::visit(
                                   [](auto& a) { return dname(detail::dtype_of<csr_index<decltype(a)>>()); }, b.v);
                             })
      .def_property_readonly("device", [](CsrBox& b) { return std::visit([](auto& a) { return a.device(); }, b.v); })
      .def_property_readonly(
          "data", [](CsrBox& b) { return std::visit([](auto& a) { return share(a.values()); }, b.v); },
          "The stored values: a porta.Array sharing the matrix's memory.")
      .def_property_readonly(
          "indices", [](CsrBox& b) { return std::visit([](auto& a) { return share(a.indices()); }, b.v); },
          "The column of each stored value: a porta.Array sharing the matrix's memory.")
      .def_property_readonly(
          "indptr", [](CsrBox& b) { return std::visit([](auto& a) { return share(a.indptr()); }, b.v); },
          "rows + 1 offsets into data and indices: a porta.Array sharing the matrix's memory.")
      .def(
          "toarray",
          [](CsrBox& b, const Stream* s) {
            return std::visit(
                [&](auto& a) {
                  using T = csr_value<decltype(a)>;
                  Array<T> r;
                  {
                    py::gil_scoped_release nogil;
                    r = a.to_dense(stream_arg(s));
                  }
                  return wrap(std::move(r));
                },
                b.v);
          },
          py::arg("stream") = py::none(), "The dense rows x cols porta.Array, duplicates summed in storage order.")
      .def(
          "transpose",
          [](CsrBox& b, const Stream* s) { return transform(b, [&](auto& a) { return a.transpose(stream_arg(s)); }); },
          py::arg("stream") = py::none(),
          "A^T as a new csr_matrix (built on the host: keep it when it is applied more than once).")
      .def_property_readonly("T", [](CsrBox& b) { return transform(b, [](auto& a) { return a.transpose(); }); })
      .def(
          "copy", [](py::handle self) { return construct(self, py::none(), py::none(), true, py::none(), py::none()); },
          "A copy with its own arrays on the same device.")
      .def("dot", &csr_dot, py::arg("x"), py::kw_only(), py::arg("algorithm") = "vendor",
           py::arg("stream") = py::none(),
           "A @ x for a porta.Array x of A.shape[1] elements or A.shape[1] rows; algorithm='own' is porta's\n"
           "row-ordered kernel, the same bits on every device.")
      .def(
          "__matmul__", [](CsrBox& a, py::handle x) { return csr_dot(a, x, "vendor", nullptr); }, py::arg("x"))
      .def("__repr__", &repr);

  sp.def(
      "spmm",
      [](py::handle alpha, CsrBox& a, py::handle x, py::handle beta, py::handle y, const std::string& algorithm,
         const Stream* s) {
        const char* fn = "porta.sparse.spmm";
        const porta::sparse::Options o = sparse_options(fn, algorithm);
        std::visit(
            [&](auto& m) {
              using T = csr_value<decltype(m)>;
              Array<T>& xv = dense_operand<T>(x, fn, "x");
              Array<T>& yv = dense_operand<T>(y, fn, "y");
              const T al = scalar<T>(alpha, fn, "alpha");
              const T be = scalar<T>(beta, fn, "beta");
              py::gil_scoped_release nogil;
              porta::sparse::spmm(al, m, xv, be, yv, o, stream_arg(s));
            },
            a.v);
      },
      py::arg("alpha"), py::arg("A"), py::arg("x"), py::arg("beta"), py::arg("y"), py::kw_only(),
      py::arg("algorithm") = "vendor", py::arg("stream") = py::none(),
      "y = alpha * (A @ x) + beta * y in place (x, y vectors or matrices of k columns); beta == 0 overwrites y,\n"
      "alpha == 0 reads neither A nor x.");
  sp.def(
      "issparse", [](py::handle x) { return py::isinstance<CsrBox>(x); }, py::arg("x"),
      "True for a porta.sparse matrix (scipy.sparse.issparse).");
  sp.def(
      "isspmatrix_csr", [](py::handle x) { return py::isinstance<CsrBox>(x); }, py::arg("x"),
      "True for a porta.sparse.csr_matrix.");
}

}  // namespace porta::python
