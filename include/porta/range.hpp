// SPDX-License-Identifier: Apache-2.0
// Iteration spaces of user kernels: 1-, 2- and 3-D index ranges (Kokkos' RangePolicy and
// MDRangePolicy, SYCL's range/nd_range), with an optional tile shape and a work hint.
//
//   porta::parallel_for(dev, porta::range(ny, nx), PORTA_KERNEL((std::int64_t i, std::int64_t j) {
//     out(i, j) = in(i, j) * 2;                                 // j is the fast, contiguous index
//   }));
//   // the interior of a grid, tiles of 4 x 256 points:
//   auto interior = porta::Range<2>({1, 1}, {ny - 1, nx - 1}).tile({4, 256});
//   // each index is heavy (an n-body row): let every point be its own CPU task if need be
//   porta::parallel_for(dev, porta::range(n).grain(1), force);
//
// The last index varies fastest, as in C arrays and porta's row-major Arrays. On the CPU the
// fastest dimension is the inner loop of each task (so it vectorises) and tasks are whole rows or
// tiles; on GPUs it is threadIdx.x, so neighbouring threads touch neighbouring addresses.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>

#include "porta/detail/config.hpp"
#include "porta/detail/runtime.hpp"

namespace porta {

// [begin, end) in each of Rank dimensions (Rank 1, 2 or 3). Trivially copyable; cheap to pass.
template <int Rank>
class Range {
  static_assert(Rank >= 1 && Rank <= 3, "porta::Range: rank 1, 2 or 3");

 public:
  using Index = std::array<std::int64_t, Rank>;
  static constexpr int rank = Rank;

  // [0, n) for a 1-D range.
  template <int R = Rank, class = std::enable_if_t<R == 1>>
  Range(std::int64_t n) : Range(Index{0}, Index{n}) {}  // NOLINT: implicit, so that n converts
  // [begin[d], end[d]) in every dimension d; end[d] < begin[d] is an InvalidArgument.
  Range(const Index& begin, const Index& end) {
    std::int64_t total = 1;
    bool empty = false;
    for (int d = 0; d < Rank; ++d) {
      if (end[d] < begin[d])
        detail::throw_invalid("porta::Range", ("dimension " + std::to_string(d) + " ends at " + std::to_string(end[d]) +
                                               ", before it begins (" + std::to_string(begin[d]) + ")")
                                                  .c_str());
      // end - begin itself can overflow (begin < 0 < end): check before subtracting.
      if (begin[d] < 0 && end[d] > std::numeric_limits<std::int64_t>::max() + begin[d])
        detail::throw_invalid("porta::Range",
                              ("dimension " + std::to_string(d) + " spans more than 2^63 - 1 indices").c_str());
      lo_[d] = begin[d];
      hi_[d] = end[d];
      const std::int64_t e = end[d] - begin[d];
      if (e == 0) empty = true;
      if (!empty && total > std::numeric_limits<std::int64_t>::max() / (e == 0 ? 1 : e))
        detail::throw_invalid("porta::Range", "the number of index points overflows a 64-bit integer");
      total *= e;
      tile_[d] = 0;
    }
    size_ = empty ? 0 : total;
  }

  // Tile (block) shape, each entry >= 1: on the CPU a task iterates whole tiles, on GPUs a thread
  // block has this shape (its product at most 1024). Default: rows on the CPU, 32 x 8 (2-D) or
  // 32 x 4 x 2 (3-D) threads on GPUs.
  Range tile(const Index& t) const {
    Range r = *this;
    for (int d = 0; d < Rank; ++d) {
      if (t[d] < 1) detail::throw_invalid("porta::Range::tile", "every tile extent must be at least 1");
      r.tile_[d] = t[d];
    }
    return r;
  }
  // At least g index points per CPU task: how much work one point is. 0 (the default) lets porta
  // measure it (it times the first points and goes parallel when the rest is worth a thread team);
  // 1 says every point is heavy (an n-body row), 4096 that points are a few instructions each.
  // GPUs: parallel_for ignores it; transform_reduce with a grain of at most 32 evaluates every term
  // in its own thread before reducing (worth it for expensive terms, a loss for cheap ones).
  Range grain(std::int64_t g) const {
    if (g < 0) detail::throw_invalid("porta::Range::grain", "the grain must be >= 0");
    Range r = *this;
    r.grain_ = g;
    return r;
  }

  PORTA_HOST_DEVICE std::int64_t begin(int d) const { return lo_[d]; }
  PORTA_HOST_DEVICE std::int64_t end(int d) const { return hi_[d]; }
  PORTA_HOST_DEVICE std::int64_t extent(int d) const { return hi_[d] - lo_[d]; }
  PORTA_HOST_DEVICE std::int64_t tile_extent(int d) const { return tile_[d]; }  // 0: not set
  std::int64_t grain() const { return grain_; }
  // Number of index points (0 when any dimension is empty).
  std::int64_t size() const { return size_; }

 private:
  std::int64_t lo_[Rank];
  std::int64_t hi_[Rank];
  std::int64_t tile_[Rank];
  std::int64_t grain_ = 0;
  std::int64_t size_ = 0;
};

// [0, n)
inline Range<1> range(std::int64_t n) {
  if (n < 0) detail::throw_invalid("porta::range", ("n is negative (" + std::to_string(n) + ")").c_str());
  return Range<1>(n);
}
// [0, n0) x [0, n1): f(i, j), j fastest
inline Range<2> range(std::int64_t n0, std::int64_t n1) {
  if (n0 < 0 || n1 < 0)
    detail::throw_invalid("porta::range",
                          ("negative extent (" + std::to_string(n0) + " x " + std::to_string(n1) + ")").c_str());
  return Range<2>({0, 0}, {n0, n1});
}
// [0, n0) x [0, n1) x [0, n2): f(i, j, k), k fastest
inline Range<3> range(std::int64_t n0, std::int64_t n1, std::int64_t n2) {
  if (n0 < 0 || n1 < 0 || n2 < 0)
    detail::throw_invalid("porta::range", ("negative extent (" + std::to_string(n0) + " x " + std::to_string(n1) +
                                           " x " + std::to_string(n2) + ")")
                                              .c_str());
  return Range<3>({0, 0, 0}, {n0, n1, n2});
}

}  // namespace porta
