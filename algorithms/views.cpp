// SPDX-License-Identifier: Apache-2.0
// Views in the front end: strided copies (contiguous(), assign(), copies into views), the overlap
// rules, and folding strided operands for the binary entry. See include/porta/array.hpp for the
// ownership model (views share the memory's owner) and docs/arrays.md.
#include <algorithm>
#include <cstdint>
#include <string>

#include "algorithms/common.hpp"
#include "algorithms/strided.hpp"

namespace porta::detail {

void throw_not_contiguous(const char* fn, const char* name, const char* shape) {
  throw InvalidArgument(std::string(fn ? fn : "porta") + ": " + name + " is a strided view (" + shape +
                        "); this function needs contiguous memory: pass " + name + ".contiguous() (a compact copy)");
}

namespace {

// Drops axes of one element and merges neighbours that walk memory as one axis in both layouts
// (stride[i] == stride[i+1] * dim[i+1]); the fewest axes a copy loop needs.
int simplify(int rank, std::int64_t* d, std::int64_t* s1, std::int64_t* s2) {
  int r = 0;
  for (int i = 0; i < rank; ++i) {
    if (d[i] == 1) continue;
    if (r > 0 && s1[r - 1] == s1[i] * d[i] && s2[r - 1] == s2[i] * d[i]) {
      d[r - 1] *= d[i];
      s1[r - 1] = s1[i];
      s2[r - 1] = s2[i];
      continue;
    }
    d[r] = d[i];
    s1[r] = s1[i];
    s2[r] = s2[i];
    ++r;
  }
  return r;
}

// Whether axes [b, e) of a layout walk memory as one axis; its stride in *stride (0 when empty).
bool foldable(const std::int64_t* d, const std::int64_t* s, int b, int e, std::int64_t* stride) {
  *stride = e > b ? s[e - 1] : 0;
  for (int i = b; i + 1 < e; ++i)
    if (s[i] != s[i + 1] * d[i + 1]) return false;
  return true;
}

}  // namespace

bool plan_binary(const Layout& a, const Layout& b, BinaryPlan& p, bool* shapes_ok) {
  *shapes_ok = false;
  // b's strides over a's shape (0 along a broadcast axis).
  std::int64_t d[Shape::kMaxRank] = {}, sa[Shape::kMaxRank] = {}, sb[Shape::kMaxRank] = {};
  const int rank = a.rank;
  bool same = a.rank == b.rank;
  for (int i = 0; same && i < rank; ++i) same = a.dims[i] == b.dims[i];
  for (int i = 0; i < rank; ++i) {
    d[i] = a.dims[i];
    sa[i] = a.strides[i];
    sb[i] = same ? b.strides[i] : 0;
  }
  if (!same) {
    if (rank != 2) return false;
    const std::int64_t rows = a.dims[0], cols = a.dims[1];
    if (b.rank == 1 && b.dims[0] == cols) {
      sb[1] = b.strides[0];
    } else if (b.rank == 2 && b.dims[0] == 1 && b.dims[1] == cols) {
      sb[1] = b.strides[1];
    } else if (b.rank == 2 && b.dims[0] == rows && b.dims[1] == 1) {
      sb[0] = b.strides[0];
    } else {
      return false;
    }
  }
  *shapes_ok = true;
  std::int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= d[i];
  if (n == 0) {
    p = {0, 0, 0, 0, 0, 0};
    return true;
  }
  // Axes of one element never move a pointer: drop them, then look for a split into rows | cols
  // that folds in both operands (the output is contiguous, so any split suits it).
  int r = 0;
  for (int i = 0; i < rank; ++i) {
    if (d[i] == 1) continue;
    d[r] = d[i];
    sa[r] = sa[i];
    sb[r] = sb[i];
    ++r;
  }
  for (int split = r; split >= 0; --split) {
    BinaryPlan q{1, 1, 0, 0, 0, 0};
    for (int i = 0; i < split; ++i) q.rows *= d[i];
    for (int i = split; i < r; ++i) q.cols *= d[i];
    if (foldable(d, sa, 0, split, &q.a_rs) && foldable(d, sa, split, r, &q.a_cs) &&
        foldable(d, sb, 0, split, &q.b_rs) && foldable(d, sb, split, r, &q.b_cs)) {
      p = q;
      return true;
    }
  }
  return false;
}

void copy_strided(Device device, porta_dtype dt, int rank, const std::int64_t* dims, const void* src,
                  const std::int64_t* src_strides, void* dst, const std::int64_t* dst_strides, porta_stream s,
                  const char* fn) {
  const porta_backend_v1& t = backend_for(device, fn);
  std::int64_t d[Shape::kMaxRank] = {}, ss[Shape::kMaxRank] = {}, ds[Shape::kMaxRank] = {};
  std::int64_t n = 1;
  for (int i = 0; i < rank; ++i) {
    d[i] = dims[i];
    ss[i] = src_strides[i];
    ds[i] = dst_strides[i];
    n *= d[i];
  }
  if (n == 0) return;
  const std::size_t elem = dtype_size(dt);
  Layout ls, ld;
  ls.rank = ld.rank = rank;
  for (int i = 0; i < rank; ++i) {
    ls.dims[i] = ld.dims[i] = d[i];
    ls.strides[i] = ss[i];
    ld.strides[i] = ds[i];
  }
  ls.data = src;
  ld.data = dst;
  ls.elem = ld.elem = elem;
  if (same_elements(ls, ld)) return;  // x.assign(x)
  if (may_overlap(ls, ld)) {
    // As if src were read whole first (NumPy's rule for overlapping assignment): stage it.
    struct Scratch {
      Device device;
      porta_stream s;
      void* p;
      ~Scratch() { device_free(device, p, s); }
    } tmp{device, s, device_alloc(device, static_cast<std::size_t>(n) * elem, s, fn)};
    std::int64_t packed[Shape::kMaxRank] = {};
    std::int64_t step = 1;
    for (int i = rank - 1; i >= 0; --i) {
      packed[i] = step;
      step *= d[i];
    }
    copy_strided(device, dt, rank, d, src, ss, tmp.p, packed, s, fn);
    copy_strided(device, dt, rank, d, tmp.p, packed, dst, ds, s, fn);
    return;
  }
  int r = simplify(rank, d, ss, ds);
  if (r == 0) {  // one element
    r = 1;
    d[0] = 1;
    ss[0] = ds[0] = 1;
  }
  if (r == 1 && ss[0] == 1 && ds[0] == 1) {
    check(t.copy(device.index, dst, src, static_cast<std::size_t>(n) * elem, PORTA_COPY_DEVICE_TO_DEVICE, s), fn,
          device);
    return;
  }
  check(t.copy_strided(device.index, dt, r, d, src, ss, dst, ds, s), fn, device);
}

}  // namespace porta::detail
