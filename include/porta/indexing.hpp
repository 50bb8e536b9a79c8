// SPDX-License-Identifier: Apache-2.0
// Masks and indexing: comparisons, where, count_nonzero, take (gather) and scatter.
//
//   auto pos  = porta::greater(x, 0.0f);             // mask: Array<std::int32_t> of 0 and 1
//   auto relu = porta::where(pos, x, 0.0f);          // x where x > 0, else 0
//   std::int64_t n = porta::count_nonzero(pos);      // how many
//   auto rows = porta::take(table, idx);             // table[idx]: rows of a 2-D array
//   porta::scatter(table, idx, rows);                // table[idx] = rows (the last duplicate wins)
//
// Masks are Array<std::int32_t> holding 0 and 1: porta's dtypes are float, double, int32 and
// int64, and a bool dtype would touch every backend. where() and count_nonzero() read any non-zero
// element as true. Comparisons are functions, not operators: Array's explicit operator bool
// (valid()) would make `if (a == b)` compile and test the wrong thing.
//
// Indices are Array<std::int64_t> (as PyTorch's), each in [0, n) for an axis of n (negative
// indices are out of range, unlike NumPy's take). take and scatter check them before they run (a
// min and max reduction read back to the host), so a bad index is an InvalidArgument naming it and
// never a read or write out of bounds; the cost is one wait for the stream, on GPUs too.
#pragma once

#include <cstdint>
#include <type_traits>

#include "porta/algorithms.hpp"
#include "porta/array.hpp"
#include "porta/stream.hpp"

namespace porta {

// ---- comparisons: mask[i] = a[i] op b[i] ? 1 : 0 ---------------------------------------------------
// Shapes as for binary maps (equal, or b broadcast over the rows or columns of a 2-D a); views are
// accepted. IEEE semantics on every backend: NaN is unequal to everything (not_equal is 1), and
// -0.0 equals 0.0. The scalar forms take any arithmetic type, converted to T as for operators
// (a floating-point scalar with an integer array does not compile: cast one of them).
#define PORTA_DECLARE_COMPARE(name)                                                                \
  template <class T>                                                                               \
  Array<std::int32_t> name(const Array<T>& a, const Array<T>& b, const Stream& stream = Stream()); \
  template <class T>                                                                               \
  Array<std::int32_t> name##_scalar(const Array<T>& a, T b, const Stream& stream);                 \
  template <class T, class S, class = std::enable_if_t<std::is_arithmetic_v<S>>>                   \
  Array<std::int32_t> name(const Array<T>& a, S b, const Stream& stream = Stream()) {              \
    return name##_scalar<T>(a, detail::scalar_as<T>(b, "porta::" #name), stream);                  \
  }
PORTA_DECLARE_COMPARE(equal)
PORTA_DECLARE_COMPARE(not_equal)
PORTA_DECLARE_COMPARE(less)
PORTA_DECLARE_COMPARE(less_equal)
PORTA_DECLARE_COMPARE(greater)
PORTA_DECLARE_COMPARE(greater_equal)
#undef PORTA_DECLARE_COMPARE

// ---- where: out[i] = mask[i] != 0 ? a[i] : b[i] ------------------------------------------------------
// mask, a and b of one shape (a or b may be a scalar, converted to T). The result is contiguous.
template <class T>
Array<T> where(const Array<std::int32_t>& mask, const Array<T>& a, const Array<T>& b, const Stream& stream = Stream());
template <class T>
Array<T> where_scalar(const Array<std::int32_t>& mask, const Array<T>* a, T a_value, const Array<T>* b, T b_value,
                      const Stream& stream);
template <class T, class S, class = std::enable_if_t<std::is_arithmetic_v<S>>>
Array<T> where(const Array<std::int32_t>& mask, const Array<T>& a, S b, const Stream& stream = Stream()) {
  return where_scalar<T>(mask, &a, T(0), nullptr, detail::scalar_as<T>(b, "porta::where"), stream);
}
template <class T, class S, class = std::enable_if_t<std::is_arithmetic_v<S>>>
Array<T> where(const Array<std::int32_t>& mask, S a, const Array<T>& b, const Stream& stream = Stream()) {
  return where_scalar<T>(mask, nullptr, detail::scalar_as<T>(a, "porta::where"), &b, T(0), stream);
}

// The number of non-zero elements (NaN counts, -0.0 does not, as in NumPy); waits for the result.
template <class T>
std::int64_t count_nonzero(const Array<T>& x, const Stream& stream = Stream());

// ---- take and scatter along an axis ------------------------------------------------------------------
// take: x's elements at `indices` along `axis` (NumPy's take(x, indices, axis), PyTorch's
// index_select); the result's shape is x's with that axis replaced by the indices' shape (its
// rank must stay <= 4).
//   auto picked = porta::take(v, idx);          // v[idx] of a 1-D v
//   auto rows   = porta::take(m, idx, 0);       // rows of m
//   auto cols   = porta::take(m, idx, 1);       // columns of m
template <class T>
Array<T> take(const Array<T>& x, const Array<std::int64_t>& indices, int axis = 0, const Stream& stream = Stream());

// scatter: x[..., indices[j], ...] = values[..., j, ...] along `axis`, in place (NumPy's
// x[idx] = values, PyTorch's index_copy_). values has take(x, indices, axis)'s shape. Where an
// index repeats, the LAST occurrence in index order wins, on every backend and run (on GPUs an
// atomicMax of the position picks the winner, then a second pass writes it).
template <class T>
void scatter(Array<T>& x, const Array<std::int64_t>& indices, const Array<T>& values, int axis = 0,
             const Stream& stream = Stream());

}  // namespace porta
