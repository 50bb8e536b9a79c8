// SPDX-License-Identifier: Apache-2.0
// Scans (prefix sums and running maxima): the same bits on every backend, thread count and run,
// as porta's reductions (docs/determinism.md, "Scans"; the order: porta/detail/scan_order.hpp).
//
//   auto c = porta::cumsum(x);                          // NumPy's np.cumsum(x): 1-D, row-major order
//   auto rows = porta::cumsum(A, 1);                    // along axis 1 of a 2-D array, A's shape
//   auto offs = porta::exclusive_scan(counts);          // {0, c0, c0 + c1, ...}
//   auto peak = porta::inclusive_scan(x, porta::ScanOp::max);   // running maximum
//
// Integers wrap (as the reductions). NaN propagates and is returned as the canonical quiet NaN.
// exclusive_scan(x)[0] is 0 for sum and the lowest value (-inf for floating point) for max; element
// i > 0 is inclusive_scan(x)[i - 1], bit for bit.
#pragma once

#include "porta/array.hpp"
#include "porta/stream.hpp"

namespace porta {

enum class ScanOp { sum, max };

// Over the whole array in row-major order: a 1-D result of x.size() elements (NumPy without axis).
template <class T>
Array<T> inclusive_scan(const Array<T>& x, ScanOp op = ScanOp::sum, const Stream& stream = Stream());
template <class T>
Array<T> exclusive_scan(const Array<T>& x, ScanOp op = ScanOp::sum, const Stream& stream = Stream());
// Along `axis` (negative counts from the end): a result of x's shape.
template <class T>
Array<T> inclusive_scan(const Array<T>& x, int axis, ScanOp op = ScanOp::sum, const Stream& stream = Stream());
template <class T>
Array<T> exclusive_scan(const Array<T>& x, int axis, ScanOp op = ScanOp::sum, const Stream& stream = Stream());

// NumPy's names: cumsum(x) = inclusive_scan(x), cummax(x) = inclusive_scan(x, ScanOp::max) (NumPy:
// np.maximum.accumulate).
template <class T>
Array<T> cumsum(const Array<T>& x, const Stream& stream = Stream()) {
  return inclusive_scan(x, ScanOp::sum, stream);
}
template <class T>
Array<T> cumsum(const Array<T>& x, int axis, const Stream& stream = Stream()) {
  return inclusive_scan(x, axis, ScanOp::sum, stream);
}
template <class T>
Array<T> cummax(const Array<T>& x, const Stream& stream = Stream()) {
  return inclusive_scan(x, ScanOp::max, stream);
}
template <class T>
Array<T> cummax(const Array<T>& x, int axis, const Stream& stream = Stream()) {
  return inclusive_scan(x, axis, ScanOp::max, stream);
}

}  // namespace porta
