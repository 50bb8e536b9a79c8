// SPDX-License-Identifier: Apache-2.0
// Views in the front end (layouts and overlaps: porta/detail/layout.hpp): compact copies of inputs, and
// folding a layout into the rows x cols form of the backends' strided entries (binary, compare).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "algorithms/common.hpp"
#include "porta/array.hpp"
#include "porta/detail/layout.hpp"

namespace porta::detail {

// x itself when it is contiguous, else a compact copy kept in `hold`: how a built-in whose backend
// entry reads contiguous memory accepts a view.
template <class T>
const Array<T>& contiguous_input(const Array<T>& x, Array<T>& hold, const Stream& stream) {
  if (x.is_contiguous()) return x;
  hold = x.contiguous(stream);
  return hold;
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

// y with y.dim(i) == x.dim(perm[i]) and y[i0, i1, ...] = x at those indices taken back through perm,
// as a new contiguous array (NumPy's x.transpose(perm).copy()): one strided copy. x may be any view.
template <class T>
Array<T> permuted_copy(const char* fn, const Array<T>& x, const int* perm, const Stream& stream) {
  const int r = x.rank();
  std::int64_t dims[Shape::kMaxRank] = {}, src[Shape::kMaxRank] = {}, dst[Shape::kMaxRank] = {};
  for (int i = 0; i < r; ++i) {
    dims[i] = x.dim(perm[i]);
    src[i] = x.stride(perm[i]);
  }
  Array<T> y = new_output<T>(fn, make_shape(dims, r), x.device(), stream);
  if (y.size() == 0) return y;
  std::int64_t step = 1;
  for (int i = r - 1; i >= 0; --i) {
    dst[i] = step;
    step *= dims[i];
  }
  copy_strided(x.device(), dtype_of<T>(), r, dims, x.data(), src, y.data(), dst, stream_for(stream, x.device(), fn),
               fn);
  return y;
}

// y[..., j, i] = x[..., i, j] as a new contiguous array (porta::transpose, and a row-major stack's
// column-major copy for porta::linalg). x may be any view of rank 2 or more.
template <class T>
Array<T> swap_last_axes(const char* fn, const Array<T>& x, const Stream& stream) {
  int perm[Shape::kMaxRank] = {};
  const int r = x.rank();
  for (int i = 0; i < r; ++i) perm[i] = i;
  std::swap(perm[r - 1], perm[r - 2]);
  return permuted_copy(fn, x, perm, stream);
}

}  // namespace porta::detail
