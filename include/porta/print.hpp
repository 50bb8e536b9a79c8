// SPDX-License-Identifier: Apache-2.0
// Printing an array as NumPy does: nested brackets, columns aligned, and above 1000 elements only
// the first and last 3 items of each long axis with "..." between (NumPy's threshold and
// edgeitems), then the shape, dtype and device.
//
//   std::cout << porta::arange<float>(6, dev).reshaped({2, 3}) << "\n";
//   // array([[0, 1, 2],
//   //        [3, 4, 5]], shape=2x3, dtype=float32, device=cpu)
//
// Printing copies to the host and waits for the array's default stream: for debugging, not for
// loops. Only the printed elements are copied (at most 6 per axis of a large array). Floating-point
// values use the stream's precision (std::setprecision; 6 significant digits by default).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "porta/array.hpp"

namespace porta {
namespace detail {

struct PrintAxis {
  std::int64_t kept = 0;  // elements shown
  std::int64_t head = 0;  // shown from the start; the rest (kept - head) from the end
  bool ellipsis = false;  // "..." after the head
};

inline constexpr std::int64_t kPrintThreshold = 1000;  // NumPy's threshold
inline constexpr std::int64_t kPrintEdge = 3;          // NumPy's edgeitems

template <class T>
std::string format_element(T v, const std::ostream& like) {
  std::ostringstream os;
  os.precision(like.precision());
  if constexpr (is_complex_v<T>) {  // NumPy's form: 3+4j, -1.5-0j
    const auto im = format_element(v.im, like);
    return format_element(v.re, like) + (im[0] == '-' ? "" : "+") + im + "j";
  } else if constexpr (is_half_v<T>) {
    return format_element(static_cast<float>(v), like);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    os << v;
  } else {
    os << static_cast<long long>(v);
  }
  return os.str();
}

// Writes the kept block (row-major over the kept indices) of `a` into `out`, one contiguous view
// per combination of head and tail segments: at most 2^rank small copies.
template <class T>
void gather_printed(const Array<T>& a, const PrintAxis* axes, std::vector<T>& out) {
  const int rank = a.rank();
  std::int64_t kept_total = 1;
  for (int i = 0; i < rank; ++i) kept_total *= axes[i].kept;
  out.assign(static_cast<std::size_t>(kept_total), T(0));
  if (kept_total == 0) return;
  for (int combo = 0; combo < (1 << rank); ++combo) {
    Slice s[Shape::kMaxRank];
    std::int64_t first[Shape::kMaxRank] = {}, len[Shape::kMaxRank] = {};
    bool empty = false;
    for (int i = 0; i < rank; ++i) {
      const bool tail = (combo >> i) & 1;
      const std::int64_t head = axes[i].head, rest = axes[i].kept - head;
      if ((tail && rest == 0) || (!tail && head == 0)) empty = true;
      first[i] = tail ? head : 0;
      len[i] = tail ? rest : head;
      s[i] = tail ? Slice{a.dim(i) - rest, none, 1} : Slice{0, head, 1};
    }
    if (empty) continue;
    Array<T> block;
    switch (rank) {
      case 1:
        block = a.slice({s[0]});
        break;
      case 2:
        block = a.slice({s[0], s[1]});
        break;
      case 3:
        block = a.slice({s[0], s[1], s[2]});
        break;
      default:
        block = a.slice({s[0], s[1], s[2], s[3]});
        break;
    }
    const std::vector<T> v = block.to_vector();
    // Place the block at its offset in the kept array.
    std::int64_t idx[Shape::kMaxRank] = {};
    for (std::size_t e = 0; e < v.size(); ++e) {
      std::int64_t at = 0;
      for (int i = 0; i < rank; ++i) at = at * axes[i].kept + first[i] + idx[i];
      out[static_cast<std::size_t>(at)] = v[e];
      for (int i = rank - 1; i >= 0; --i) {
        if (++idx[i] < len[i]) break;
        idx[i] = 0;
      }
    }
  }
}

inline void print_block(std::ostream& os, const std::vector<std::string>& cells, std::size_t width,
                        const PrintAxis* axes, int rank, int axis, std::size_t& next, int indent) {
  os << '[';
  const std::int64_t kept = axes[axis].kept;
  for (std::int64_t i = 0; i < kept; ++i) {
    if (i > 0) {
      if (axis == rank - 1) {
        os << ", ";
      } else {
        os << ',' << std::string(static_cast<std::size_t>(rank - 1 - axis), '\n')
           << std::string(static_cast<std::size_t>(indent + axis + 1), ' ');
      }
    }
    if (axes[axis].ellipsis && i == axes[axis].head) {
      os << "...";
      if (axis == rank - 1) {
        os << ", ";
      } else {
        os << ',' << std::string(static_cast<std::size_t>(rank - 1 - axis), '\n')
           << std::string(static_cast<std::size_t>(indent + axis + 1), ' ');
      }
    }
    if (axis == rank - 1) {
      const std::string& c = cells[next++];
      os << std::string(width - c.size(), ' ') << c;
    } else {
      print_block(os, cells, width, axes, rank, axis + 1, next, indent);
    }
  }
  os << ']';
}

}  // namespace detail

template <class T>
std::ostream& operator<<(std::ostream& os, const Array<T>& a) {
  if (!a.valid()) return os << "array(<moved-from>)";
  const int rank = a.rank();
  const bool truncate = a.size() > detail::kPrintThreshold;
  detail::PrintAxis axes[Shape::kMaxRank];
  for (int i = 0; i < rank; ++i) {
    const std::int64_t n = a.dim(i);
    if (truncate && n > 2 * detail::kPrintEdge) {
      axes[i] = {2 * detail::kPrintEdge, detail::kPrintEdge, true};
    } else {
      axes[i] = {n, n, false};
    }
  }
  std::vector<T> values;
  if (rank == 0) {
    values = a.to_vector();
  } else {
    detail::gather_printed(a, axes, values);
  }
  std::vector<std::string> cells;
  std::size_t width = 0;
  for (T v : values) {
    cells.push_back(detail::format_element(v, os));
    if (cells.back().size() > width) width = cells.back().size();
  }
  os << "array(";
  if (rank == 0) {
    os << cells[0];
  } else {
    std::size_t next = 0;
    detail::print_block(os, cells, width, axes, rank, 0, next, 6);
  }
  return os << ", shape=" << a.shape().to_string() << ", dtype=" << detail::dtype_name(detail::dtype_of<T>())
            << ", device=" << a.device().to_string() << ")";
}

}  // namespace porta
