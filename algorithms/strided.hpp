// SPDX-License-Identifier: Apache-2.0
// Views in the front end: the layout of an array (shape and strides), the memory it spans, and
// folding a layout into the rows x cols form of the backends' strided entries (binary, compare).
#pragma once

#include <cstdint>
#include <string>

#include "porta/array.hpp"

namespace porta::detail {

// An array's elements as a shape and strides (in elements), plus its first element.
struct Layout {
  int rank = 0;
  std::int64_t dims[Shape::kMaxRank] = {};
  std::int64_t strides[Shape::kMaxRank] = {};
  const void* data = nullptr;
  std::size_t elem = 0;
};

template <class T>
Layout layout_of(const Array<T>& a) {
  Layout l;
  l.rank = a.rank();
  for (int i = 0; i < l.rank; ++i) {
    l.dims[i] = a.dim(i);
    l.strides[i] = a.stride(i);
  }
  l.data = a.data();
  l.elem = sizeof(T);
  return l;
}

// x itself when it is contiguous, else a compact copy kept in `hold`: how a built-in whose backend
// entry reads contiguous memory accepts a view.
template <class T>
const Array<T>& contiguous_input(const Array<T>& x, Array<T>& hold, const Stream& stream) {
  if (x.is_contiguous()) return x;
  hold = x.contiguous(stream);
  return hold;
}

// Whether two arrays' element sets may share bytes (their address ranges intersect), and whether
// they are the very same elements in the same order (an exact alias, safe for elementwise maps).
bool may_overlap(const Layout& a, const Layout& b) noexcept;
bool same_elements(const Layout& a, const Layout& b) noexcept;

template <class T, class U>
bool overlaps_not_identical(const Array<T>& a, const Array<U>& b) {
  const Layout la = layout_of(a), lb = layout_of(b);
  return may_overlap(la, lb) && !same_elements(la, lb);
}

// y[r * cols + c] = f(a[r * a_rs + c * a_cs], b[r * b_rs + c * b_cs]) over a contiguous y of a's shape.
struct BinaryPlan {
  std::int64_t rows, cols, a_rs, a_cs, b_rs, b_cs;
};

// Plans a and b (b equal in shape to a, or broadcast as porta's binary maps allow: over a 2-D a,
// b of shape {cols} or {1, cols} to every row, {rows, 1} to every column) as rows x cols with one
// row and one column stride each. false with *shapes_ok when the shapes fit but the strides cannot
// be folded into two (a 3-D or 4-D strided view): the caller makes that operand contiguous.
bool plan_binary(const Layout& a, const Layout& b, BinaryPlan& p, bool* shapes_ok);

// InvalidArgument naming fn unless a and b have shapes a binary map accepts (equal, or b broadcast).
template <class T>
void check_binary_shapes(const char* fn, const Array<T>& a, const char* a_name, const Array<T>& b, const char* b_name) {
  BinaryPlan p{};
  bool shapes_ok = false;
  (void)plan_binary(layout_of(a), layout_of(b), p, &shapes_ok);
  if (!shapes_ok)
    throw_invalid(fn, (std::string("shapes differ (") + a_name + " is " + a.shape().to_string() + ", " + b_name +
                       " is " + b.shape().to_string() + ")")
                          .c_str());
}

}  // namespace porta::detail
