// SPDX-License-Identifier: Apache-2.0
// Sorting and arg-reductions: sort, argsort, sort_by_key, argmax, argmin (docs/sorting.md).
//
//   auto x = porta::Array<float>::from({3.f, NAN, -1.f, 3.f}, dev);
//   auto s = porta::sort(x);                            // {-1, 3, 3, NaN}
//   auto i = porta::argsort(x);                         // {2, 0, 3, 1}: stable, int64
//   auto [k, v] = porta::sort_by_key(keys, values);     // values follow their keys
//   std::int64_t m = porta::argmax(x);                  // 1: the first NaN wins, as in NumPy
//   auto per_row = porta::argmax(scores, 1);            // along an axis: Array<std::int64_t>
//
// One order on every backend (porta/detail/sort_key.hpp): -inf < ... < -0.0 < +0.0 < ... < +inf
// < NaN. Every NaN, whatever its sign bit or payload, is greater than +inf and equal to every
// other NaN. -0.0 is below +0.0, as porta::min and porta::max order them, so sort(x)'s first
// element is min(x) bit for bit and x[argmax(x)] is max(x). (NumPy keeps -0.0 and +0.0 in input
// order; porta is the same up to the sign of zeros.) Sorts are stable: equal keys keep their input
// order, also when descending, where NaNs still come last. sort writes every NaN as the canonical
// quiet NaN. Integers sort as integers. CUB's radix sort on CUDA devices, rocPRIM's on HIP, a
// parallel radix sort on the CPU: the same result, element for element, on every backend.
#pragma once

#include <cstdint>
#include <utility>

#include "porta/array.hpp"
#include "porta/stream.hpp"

namespace porta {

enum class SortOrder { ascending, descending };

// The elements of the 1-D array x in order (a new array).
//   auto s = porta::sort(x, porta::SortOrder::descending);
template <class T>
Array<T> sort(const Array<T>& x, SortOrder order = SortOrder::ascending, const Stream& stream = Stream());

// The indices (int64) that sort the 1-D array x, stably: x[argsort(x)[0]], x[argsort(x)[1]], ...
// is sort(x).
//   auto order = porta::argsort(x);
template <class T>
Array<std::int64_t> argsort(const Array<T>& x, SortOrder order = SortOrder::ascending, const Stream& stream = Stream());

// Sorts 1-D keys and carries the equally long 1-D values along: {sorted keys, values in that
// order}, both new arrays (Thrust's sort_by_key, without writing in place).
//   auto [k, v] = porta::sort_by_key(keys, values);
template <class K, class V>
std::pair<Array<K>, Array<V>> sort_by_key(const Array<K>& keys, const Array<V>& values,
                                          SortOrder order = SortOrder::ascending, const Stream& stream = Stream());

// The flat (row-major) index of the first largest / smallest element; NaN counts as the largest
// for argmax and as the smallest for argmin, so the first NaN wins both (NumPy's rule). The empty
// array throws InvalidArgument. Synchronises, like every function that returns a host value.
//   std::int64_t best = porta::argmax(scores);
template <class T>
std::int64_t argmax(const Array<T>& x, const Stream& stream = Stream());
template <class T>
std::int64_t argmin(const Array<T>& x, const Stream& stream = Stream());

// Along `axis` (negative counts from the end): the result drops that axis, as porta::max(x, axis)
// does, and holds indices along it.
//   auto predicted = porta::argmax(logits, 1);   // {batch} of class indices
template <class T>
Array<std::int64_t> argmax(const Array<T>& x, int axis, const Stream& stream = Stream());
template <class T>
Array<std::int64_t> argmin(const Array<T>& x, int axis, const Stream& stream = Stream());

}  // namespace porta
