// SPDX-License-Identifier: Apache-2.0
// Masks and indexing of the front end (include/porta/indexing.hpp): comparisons into int32 masks,
// where, count_nonzero, take and scatter. Validate, allocate, dispatch, as algorithms/map.cpp.
#include <cstdint>
#include <string>

#include "algorithms/common.hpp"
#include "algorithms/strided.hpp"
#include "porta/indexing.hpp"

namespace porta {
namespace detail {
namespace {

using Mask = Array<std::int32_t>;

// mask = a op b, a and b possibly strided views (folded as the binary maps fold them).
template <class T>
void compare_run(const BackendCall& c, porta_compare_op op, const Array<T>& a, const Array<T>& b, Mask& out,
                 const Stream& stream) {
  BinaryPlan p{};
  bool shapes_ok = false;
  if (!plan_binary(layout_of(a), layout_of(b), p, &shapes_ok)) {
    if (!shapes_ok) throw_shapes_differ(c.fn, arg("a", a), arg("b", b));
    Array<T> ha, hb;
    return compare_run(c, op, contiguous_input(a, ha, stream), contiguous_input(b, hb, stream), out, stream);
  }
  if (p.rows == 0 || p.cols == 0) return;
  c.run(c.table->compare, op, dtype_of<T>(), p.rows, p.cols, a.data(), p.a_rs, p.a_cs, b.data(), p.b_rs, p.b_cs,
        out.data(), c.stream);
}

template <class T>
Mask compare_new(porta_compare_op op, const char* fn, const Array<T>& a, const Array<T>& b, const Stream& stream) {
  const Device dev = check_args(fn, {arg_strided("a", a), arg_strided("b", b)});
  check_binary_shapes(fn, a, "a", b, "b");
  const BackendCall c = make_call(fn, dev, stream);
  Mask out = new_output<std::int32_t>(fn, a.shape(), dev, stream);
  compare_run(c, op, a, b, out, stream);
  return out;
}

// a op value: the value as a one-element device array, broadcast (strides 0) by the same entry.
template <class T>
Mask compare_scalar(porta_compare_op op, const char* fn, const Array<T>& a, T value, const Stream& stream) {
  const Device dev = check_args(fn, {arg_strided("a", a)});
  const BackendCall c = make_call(fn, dev, stream);
  Mask out = new_output<std::int32_t>(fn, a.shape(), dev, stream);
  if (a.size() == 0) return out;
  const Array<T> v = full<T>(Shape{1}, value, dev, stream);
  Array<T> hold;
  const Array<T>& ca = contiguous_input(a, hold, stream);
  c.run(c.table->compare, op, dtype_of<T>(), 1, ca.size(), ca.data(), 0, 1, v.data(), 0, 0, out.data(), c.stream);
  return out;
}

// The indices' range [lo, hi], read back to the host together (synchronises the stream).
void index_range(const BackendCall& c, const Array<std::int64_t>& idx, std::int64_t* lo, std::int64_t* hi) {
  struct Range {
    std::int64_t v[2];
  };
  const Range r = read_device_scalar<Range>(c, [&](Range* y) {
    c.run(c.table->reduce, PORTA_REDUCE_MIN, PORTA_I64, 1, idx.size(), 1, idx.data(), y->v, c.stream);
    c.run(c.table->reduce, PORTA_REDUCE_MAX, PORTA_I64, 1, idx.size(), 1, idx.data(), y->v + 1, c.stream);
  });
  *lo = r.v[0];
  *hi = r.v[1];
}

// x's shape with `axis` replaced by the indices' shape, and x seen as [outer, n, inner].
struct GatherShape {
  std::int64_t outer = 1, n = 0, inner = 1, m = 0;
  Shape result;
};

template <class T>
GatherShape gather_shape(const char* fn, const Array<T>& x, const Array<std::int64_t>& idx, int axis) {
  const int rank = x.rank();
  if (rank == 0) throw_invalid(fn, "x is a scalar (rank 0): it has no axis to index");
  const int ax = normalize_axis(fn, axis, rank);
  const int out_rank = rank - 1 + idx.rank();
  if (out_rank > Shape::kMaxRank)
    throw_invalid(fn, ("the result would have rank " + std::to_string(out_rank) + " (x is " + x.shape().to_string() +
                       ", indices are " + idx.shape().to_string() + "); porta arrays have at most 4 axes")
                          .c_str());
  GatherShape g;
  std::int64_t dims[Shape::kMaxRank] = {};
  int r = 0;
  for (int i = 0; i < ax; ++i) {
    g.outer *= x.dim(i);
    dims[r++] = x.dim(i);
  }
  for (int i = 0; i < idx.rank(); ++i) dims[r++] = idx.dim(i);
  for (int i = ax + 1; i < rank; ++i) {
    g.inner *= x.dim(i);
    dims[r++] = x.dim(i);
  }
  g.n = x.dim(ax);
  g.m = idx.size();
  g.result = make_shape(dims, out_rank);
  return g;
}

// Every index in [0, n), else an InvalidArgument naming the first bad extreme.
void check_indices(const BackendCall& c, const Array<std::int64_t>& idx, int axis, std::int64_t n) {
  if (idx.size() == 0) return;
  std::int64_t lo = 0, hi = 0;
  index_range(c, idx, &lo, &hi);
  if (lo >= 0 && hi < n) return;
  const std::int64_t bad = lo < 0 ? lo : hi;
  throw_invalid(c.fn, ("index " + std::to_string(bad) + " is out of range for axis " + std::to_string(axis) +
                       " of size " + std::to_string(n) + " (indices must be in [0, " + std::to_string(n) +
                       "); this call's indices span [" + std::to_string(lo) + ", " + std::to_string(hi) + "])")
                          .c_str());
}

}  // namespace
}  // namespace detail

#define PORTA_DEFINE_COMPARE(name, OP)                                                   \
  template <class T>                                                                     \
  Array<std::int32_t> name(const Array<T>& a, const Array<T>& b, const Stream& stream) { \
    return detail::compare_new<T>(OP, "porta::" #name, a, b, stream);                    \
  }                                                                                      \
  template <class T>                                                                     \
  Array<std::int32_t> name##_scalar(const Array<T>& a, T b, const Stream& stream) {      \
    return detail::compare_scalar<T>(OP, "porta::" #name, a, b, stream);                 \
  }
PORTA_DEFINE_COMPARE(equal, PORTA_COMPARE_EQ)
PORTA_DEFINE_COMPARE(not_equal, PORTA_COMPARE_NE)
PORTA_DEFINE_COMPARE(less, PORTA_COMPARE_LT)
PORTA_DEFINE_COMPARE(less_equal, PORTA_COMPARE_LE)
PORTA_DEFINE_COMPARE(greater, PORTA_COMPARE_GT)
PORTA_DEFINE_COMPARE(greater_equal, PORTA_COMPARE_GE)
#undef PORTA_DEFINE_COMPARE

template <class T>
Array<T> where_scalar(const Array<std::int32_t>& mask, const Array<T>* a, T a_value, const Array<T>* b, T b_value,
                      const Stream& stream) {
  constexpr const char* fn = "porta::where";
  const detail::ArgRef rm = detail::arg_strided("mask", mask);
  const detail::ArgRef ra = a ? detail::arg_strided("a", *a) : rm, rb = b ? detail::arg_strided("b", *b) : rm;
  const Device dev = detail::check_args(fn, {rm, ra, rb});
  if (a && a->shape() != mask.shape()) detail::throw_shapes_differ(fn, rm, ra);
  if (b && b->shape() != mask.shape()) detail::throw_shapes_differ(fn, rm, rb);
  const detail::BackendCall c = detail::make_call(fn, dev, stream);
  Array<T> out = detail::new_output<T>(fn, mask.shape(), dev, stream);
  if (mask.size() == 0) return out;
  Array<std::int32_t> hm;
  Array<T> ha, hb;
  const Array<std::int32_t>& cm = detail::contiguous_input(mask, hm, stream);
  // A scalar side is one device element read with step 0.
  const Array<T>& ca = a ? detail::contiguous_input(*a, ha, stream) : (ha = full<T>(Shape{1}, a_value, dev, stream));
  const Array<T>& cb = b ? detail::contiguous_input(*b, hb, stream) : (hb = full<T>(Shape{1}, b_value, dev, stream));
  c.run(c.table->where, detail::dtype_of<T>(), mask.size(), cm.data(), ca.data(), a ? 1 : 0, cb.data(), b ? 1 : 0,
        out.data(), c.stream);
  return out;
}

template <class T>
Array<T> where(const Array<std::int32_t>& mask, const Array<T>& a, const Array<T>& b, const Stream& stream) {
  return where_scalar<T>(mask, &a, T(0), &b, T(0), stream);
}

template <class T>
std::int64_t count_nonzero(const Array<T>& x, const Stream& stream) {
  constexpr const char* fn = "porta::count_nonzero";
  const Device dev = detail::check_args(fn, {detail::arg_strided("x", x)});
  const detail::BackendCall c = detail::make_call(fn, dev, stream);
  if (x.size() == 0) return 0;
  // x != 0 as a 0/1 mask, widened to int64 (no wrap past 2^31 elements), summed exactly.
  const Array<std::int32_t> nz = detail::compare_scalar<T>(PORTA_COMPARE_NE, fn, x, T(0), stream);
  Array<std::int64_t> wide = detail::new_output<std::int64_t>(fn, nz.shape(), dev, stream);
  c.run(c.table->cast, PORTA_I32, PORTA_I64, nz.size(), nz.data(), wide.data(), c.stream);
  return detail::read_device_scalar<std::int64_t>(c, [&](std::int64_t* y) {
    c.run(c.table->reduce, PORTA_REDUCE_SUM, PORTA_I64, 1, wide.size(), 1, wide.data(), y, c.stream);
  });
}

template <class T>
Array<T> take(const Array<T>& x, const Array<std::int64_t>& indices, int axis, const Stream& stream) {
  constexpr const char* fn = "porta::take";
  const detail::ArgRef rx = detail::arg_strided("x", x), ri = detail::arg_strided("indices", indices);
  const Device dev = detail::check_args(fn, {rx, ri});
  const detail::GatherShape g = detail::gather_shape(fn, x, indices, axis);
  const detail::BackendCall c = detail::make_call(fn, dev, stream);
  Array<std::int64_t> hi;
  const Array<std::int64_t>& ci = detail::contiguous_input(indices, hi, stream);
  detail::check_indices(c, ci, detail::normalize_axis(fn, axis, x.rank()), g.n);
  Array<T> out = detail::new_output<T>(fn, g.result, dev, stream);
  if (out.size() == 0) return out;
  Array<T> hx;
  const Array<T>& cx = detail::contiguous_input(x, hx, stream);
  c.run(c.table->take, detail::dtype_of<T>(), g.outer, g.n, g.inner, cx.data(), g.m, ci.data(), out.data(), c.stream);
  return out;
}

template <class T>
void scatter(Array<T>& x, const Array<std::int64_t>& indices, const Array<T>& values, int axis, const Stream& stream) {
  constexpr const char* fn = "porta::scatter";
  const detail::ArgRef rx = detail::arg_strided("x", x), ri = detail::arg_strided("indices", indices),
                       rv = detail::arg_strided("values", values);
  const Device dev = detail::check_args(fn, {rx, ri, rv});
  const detail::GatherShape g = detail::gather_shape(fn, x, indices, axis);
  if (values.shape() != g.result)
    detail::throw_invalid(fn, ("values is " + values.shape().to_string() + ", expected " + g.result.to_string() +
                               " (x is " + x.shape().to_string() + ", indices are " + indices.shape().to_string() +
                               ", axis " + std::to_string(axis) + ")")
                                  .c_str());
  const detail::BackendCall c = detail::make_call(fn, dev, stream);
  // indices and values are read whole before x is written: a copy when they share x's memory (an
  // int64 x scattered by a view of itself) or are views.
  Array<std::int64_t> hi;
  const Array<std::int64_t>& ci = detail::may_overlap(detail::layout_of(indices), detail::layout_of(x))
                                      ? (hi = indices.clone(stream))
                                      : detail::contiguous_input(indices, hi, stream);
  detail::check_indices(c, ci, detail::normalize_axis(fn, axis, x.rank()), g.n);
  if (values.size() == 0) return;
  Array<T> hv;
  const Array<T>& cv = detail::may_overlap(detail::layout_of(values), detail::layout_of(x))
                           ? (hv = values.clone(stream))
                           : detail::contiguous_input(values, hv, stream);
  if (x.is_contiguous()) {
    c.run(c.table->scatter, detail::dtype_of<T>(), g.outer, g.n, g.inner, x.data(), g.m, ci.data(), cv.data(),
          c.stream);
    return;
  }
  Array<T> tmp = x.contiguous(stream);  // a view: scatter into a compact copy, then write it back
  c.run(c.table->scatter, detail::dtype_of<T>(), g.outer, g.n, g.inner, tmp.data(), g.m, ci.data(), cv.data(),
        c.stream);
  x.assign(tmp, stream);
}

#define PORTA_INSTANTIATE_INDEXING(T)                                                                      \
  template Array<std::int32_t> equal<T>(const Array<T>&, const Array<T>&, const Stream&);                  \
  template Array<std::int32_t> not_equal<T>(const Array<T>&, const Array<T>&, const Stream&);              \
  template Array<std::int32_t> less<T>(const Array<T>&, const Array<T>&, const Stream&);                   \
  template Array<std::int32_t> less_equal<T>(const Array<T>&, const Array<T>&, const Stream&);             \
  template Array<std::int32_t> greater<T>(const Array<T>&, const Array<T>&, const Stream&);                \
  template Array<std::int32_t> greater_equal<T>(const Array<T>&, const Array<T>&, const Stream&);          \
  template Array<std::int32_t> equal_scalar<T>(const Array<T>&, T, const Stream&);                         \
  template Array<std::int32_t> not_equal_scalar<T>(const Array<T>&, T, const Stream&);                     \
  template Array<std::int32_t> less_scalar<T>(const Array<T>&, T, const Stream&);                          \
  template Array<std::int32_t> less_equal_scalar<T>(const Array<T>&, T, const Stream&);                    \
  template Array<std::int32_t> greater_scalar<T>(const Array<T>&, T, const Stream&);                       \
  template Array<std::int32_t> greater_equal_scalar<T>(const Array<T>&, T, const Stream&);                 \
  template Array<T> where<T>(const Array<std::int32_t>&, const Array<T>&, const Array<T>&, const Stream&); \
  template Array<T> where_scalar<T>(const Array<std::int32_t>&, const Array<T>*, T, const Array<T>*, T,    \
                                    const Stream&);                                                        \
  template std::int64_t count_nonzero<T>(const Array<T>&, const Stream&);                                  \
  template Array<T> take<T>(const Array<T>&, const Array<std::int64_t>&, int, const Stream&);              \
  template void scatter<T>(Array<T>&, const Array<std::int64_t>&, const Array<T>&, int, const Stream&);
PORTA_FOR_EACH_DTYPE(PORTA_INSTANTIATE_INDEXING)

}  // namespace porta
