// SPDX-License-Identifier: Apache-2.0
// Scans of the front end: validate, allocate, dispatch to the backends' scan entry, which follows
// the canonical order of include/porta/detail/scan_order.hpp on every backend.
#include <cstdint>
#include <string>

#include "algorithms/common.hpp"
#include "algorithms/strided.hpp"
#include "porta/algorithms.hpp"
#include "porta/scan.hpp"

namespace porta {
namespace detail {
namespace {

porta_reduce_op scan_op(ScanOp op) {
  return op == ScanOp::max ? PORTA_REDUCE_MAX : PORTA_REDUCE_SUM;
}

// whole: scan all of x in row-major order into a 1-D result; else along `axis`, x's shape.
template <class T>
Array<T> scan(const char* fn, const Array<T>& x_in, bool whole, int axis, ScanOp op, bool exclusive,
              const Stream& stream) {
  const Device dev = check_args(fn, {arg_strided("x", x_in)});
  if constexpr (is_half_v<T>) {
    // 16-bit values accumulate in float, every output rounded once (as PyTorch's cumsum): the float
    // scan of the widened values, narrowed. The running maximum is exact either way.
    return cast<T>(scan<float>(fn, cast<float>(x_in, stream), whole, axis, op, exclusive, stream), stream);
  }
  Array<T> hold;  // a view is scanned from a compact copy (same elements, same order: same bits)
  const Array<T>& x = contiguous_input(x_in, hold, stream);
  if (op != ScanOp::sum && op != ScanOp::max)
    throw_invalid(fn, ("unknown ScanOp " + std::to_string(static_cast<int>(op))).c_str());
  std::int64_t outer = 1, n = x.size(), inner = 1;
  Shape shape{n};
  if (!whole) {
    const int rank = x.rank();
    if (rank == 0) throw_invalid(fn, "a scan along an axis needs an array of rank 1 or more (x is a scalar)");
    if (axis < -rank || axis >= rank)
      throw_invalid(fn, ("axis " + std::to_string(axis) + " is out of range for a " + std::to_string(rank) +
                         "-D array (" + x.shape().to_string() + ")")
                            .c_str());
    const int ax = axis < 0 ? axis + rank : axis;
    outer = 1;
    inner = 1;
    for (int i = 0; i < ax; ++i) outer *= x.dim(i);
    for (int i = ax + 1; i < rank; ++i) inner *= x.dim(i);
    n = x.dim(ax);
    shape = x.shape();
  }
  const BackendCall c = make_call(fn, dev, stream);
  Array<T> out = new_output<T>(fn, shape, dev, stream);
  if (out.size() == 0) return out;
  const std::uint32_t flags = exclusive ? PORTA_SCAN_EXCLUSIVE : 0u;
  if constexpr (is_complex_v<T>) {
    // A complex sum is the sum of the real parts and the sum of the imaginary parts: the scan of the
    // parts, viewed as a real array with one more axis of 2 inside, in the canonical order of each
    // line (the same bits as two scans). A running maximum has no complex form: the backend's
    // check refuses it by the complex dtype's name.
    if (op == ScanOp::sum) {
      c.run(c.table->scan, PORTA_REDUCE_SUM, dtype_of<real_type_t<T>>(), flags, outer, n, 2 * inner, x.data(),
            out.data(), c.stream);
      return out;
    }
  }
  c.run(c.table->scan, scan_op(op), dtype_of<T>(), flags, outer, n, inner, x.data(), out.data(), c.stream);
  return out;
}

}  // namespace
}  // namespace detail

template <class T>
Array<T> inclusive_scan(const Array<T>& x, ScanOp op, const Stream& stream) {
  return detail::scan("porta::inclusive_scan", x, true, 0, op, false, stream);
}
template <class T>
Array<T> exclusive_scan(const Array<T>& x, ScanOp op, const Stream& stream) {
  return detail::scan("porta::exclusive_scan", x, true, 0, op, true, stream);
}
template <class T>
Array<T> inclusive_scan(const Array<T>& x, int axis, ScanOp op, const Stream& stream) {
  return detail::scan("porta::inclusive_scan", x, false, axis, op, false, stream);
}
template <class T>
Array<T> exclusive_scan(const Array<T>& x, int axis, ScanOp op, const Stream& stream) {
  return detail::scan("porta::exclusive_scan", x, false, axis, op, true, stream);
}

#define PORTA_INSTANTIATE_SCAN(T)                                                   \
  template Array<T> inclusive_scan<T>(const Array<T>&, ScanOp, const Stream&);      \
  template Array<T> exclusive_scan<T>(const Array<T>&, ScanOp, const Stream&);      \
  template Array<T> inclusive_scan<T>(const Array<T>&, int, ScanOp, const Stream&); \
  template Array<T> exclusive_scan<T>(const Array<T>&, int, ScanOp, const Stream&);
PORTA_FOR_EACH_DTYPE(PORTA_INSTANTIATE_SCAN)
#undef PORTA_INSTANTIATE_SCAN

}  // namespace porta
