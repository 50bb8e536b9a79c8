// SPDX-License-Identifier: Apache-2.0
// An array's elements as a shape and strides, the bytes they span, and the two overlap questions
// every call that writes one array while reading others must ask: may they share bytes, and are
// they the very same elements in the same order (an exact alias, safe for elementwise work).
// Used by the built-ins' front end and by the header-only user maps alike.
#pragma once

#include <cstddef>
#include <cstdint>

#include "porta/array.hpp"

namespace porta::detail {

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

// [lo, hi): the bytes an array's elements span (empty for an array without elements).
inline void byte_range(const Layout& l, std::uintptr_t* lo, std::uintptr_t* hi) noexcept {
  std::int64_t min_off = 0, max_off = 0;
  for (int i = 0; i < l.rank; ++i) {
    if (l.dims[i] == 0) {
      *lo = *hi = 0;
      return;
    }
    const std::int64_t span = (l.dims[i] - 1) * l.strides[i];
    (span < 0 ? min_off : max_off) += span;
  }
  const auto base = reinterpret_cast<std::uintptr_t>(l.data);
  *lo = base + static_cast<std::uintptr_t>(min_off * static_cast<std::int64_t>(l.elem));
  *hi = base + static_cast<std::uintptr_t>((max_off + 1) * static_cast<std::int64_t>(l.elem));
}

inline bool may_overlap(const Layout& a, const Layout& b) noexcept {
  std::uintptr_t alo = 0, ahi = 0, blo = 0, bhi = 0;
  byte_range(a, &alo, &ahi);
  byte_range(b, &blo, &bhi);
  return alo < ahi && blo < bhi && alo < bhi && blo < ahi;
}

inline bool same_elements(const Layout& a, const Layout& b) noexcept {
  if (a.data != b.data || a.rank != b.rank || a.elem != b.elem) return false;
  for (int i = 0; i < a.rank; ++i)
    if (a.dims[i] != b.dims[i] || (a.dims[i] > 1 && a.strides[i] != b.strides[i])) return false;
  return true;
}

template <class T, class U>
bool overlaps_not_identical(const Array<T>& a, const Array<U>& b) {
  const Layout la = layout_of(a), lb = layout_of(b);
  return may_overlap(la, lb) && !same_elements(la, lb);
}

}  // namespace porta::detail
