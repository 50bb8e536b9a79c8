// SPDX-License-Identifier: Apache-2.0
// Host references written independently of porta's implementation.
//
// canonical_reduce is a literal, single-threaded transcription of the canonical order documented
// in include/porta/detail/reduce_order.hpp (it deliberately does not call detail::reduce_canonical):
//
//   reduce(n) = chunk(x[0..n))                                         if n <= 32768
//             = reduce(p[0..m)), m = ceil(n / 32768), p[c] = chunk(c-th block of 32768)   otherwise
//   chunk(y[0..len)): acc[l] = identity (l < 1024); for k = 0, 1, ...: acc[l] = op(acc[l], y[k*1024 + l])
//                     where that index is < len; then for s = 512, 256, ..., 1: acc[l] = op(acc[l], acc[l+s]), l < s.
//
// Its results are compared bit for bit with every device's, which is the cross-backend test of
// the determinism promise.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace porta_test::ref {

inline constexpr std::int64_t kLanes = 1024;
inline constexpr std::int64_t kChunk = 32768;

// Two's complement wrap for integers, IEEE round-to-nearest for floating point (the test code is
// compiled with -ffp-contract=off).
template <class T>
T add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <class T>
T sub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}
template <class T>
T mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}
// NaN-propagating max/min that order -0.0 below +0.0 (NumPy's maximum/minimum plus signed zero).
template <class T>
T max(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    if (a == b) return std::signbit(a) ? b : a;
  }
  return a < b ? b : a;
}
template <class T>
T min(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    if (a == b) return std::signbit(a) ? a : b;
  }
  return b < a ? b : a;
}
template <class T>
T canonical_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x)) return std::numeric_limits<T>::quiet_NaN();
  }
  return x;
}

enum class Op { sum, prod, min, max };

template <class T>
T identity(Op op) {
  switch (op) {
    case Op::sum:
      if constexpr (std::is_floating_point_v<T>) {
        return T(-0.0);
      } else {
        return T(0);
      }
    case Op::prod:
      return T(1);
    case Op::max:
      if constexpr (std::is_floating_point_v<T>) {
        return -std::numeric_limits<T>::infinity();
      } else {
        return std::numeric_limits<T>::lowest();
      }
    case Op::min:
      if constexpr (std::is_floating_point_v<T>) {
        return std::numeric_limits<T>::infinity();
      } else {
        return std::numeric_limits<T>::max();
      }
  }
  return T(0);
}

template <class T>
T apply(Op op, T a, T b) {
  switch (op) {
    case Op::sum:
      return add(a, b);
    case Op::prod:
      return mul(a, b);
    case Op::max:
      return max(a, b);
    case Op::min:
      return min(a, b);
  }
  return a;
}

template <class T>
struct VectorLoad {
  const std::vector<T>* v;
  T operator()(std::int64_t i) const { return (*v)[static_cast<std::size_t>(i)]; }
};

// The canonical reduction of n terms load(0), ..., load(n-1); NaN results are canonicalised.
template <class T, class Load>
T canonical_reduce(std::int64_t n, Op op, Load load) {
  auto chunk = [op](std::int64_t len, auto&& at) {
    std::vector<T> acc(static_cast<std::size_t>(kLanes), identity<T>(op));
    for (std::int64_t k = 0; k * kLanes < len; ++k)
      for (std::int64_t l = 0; l < kLanes; ++l)
        if (k * kLanes + l < len) acc[l] = apply(op, acc[l], at(k * kLanes + l));
    for (std::int64_t s = kLanes / 2; s >= 1; s /= 2)
      for (std::int64_t l = 0; l < s; ++l) acc[l] = apply(op, acc[l], acc[l + s]);
    return acc[0];
  };
  if (n <= kChunk) return canonical_nan(chunk(n, load));
  const std::int64_t m = (n + kChunk - 1) / kChunk;
  std::vector<T> partial(static_cast<std::size_t>(m));
  for (std::int64_t c = 0; c < m; ++c) {
    const std::int64_t begin = c * kChunk;
    const std::int64_t len = n - begin < kChunk ? n - begin : kChunk;
    partial[c] = chunk(len, [&](std::int64_t i) { return load(begin + i); });
  }
  // the partials are reduced by the same rule (one Load type, so the recursion instantiates once)
  return canonical_reduce<T>(m, op, VectorLoad<T>{&partial});
}

template <class T>
T reduce(const std::vector<T>& x, Op op) {
  return canonical_reduce<T>(static_cast<std::int64_t>(x.size()), op, VectorLoad<T>{&x});
}
// sum of x[i] * y[i], each product rounded to T first.
template <class T>
T dot(const std::vector<T>& x, const std::vector<T>& y) {
  return canonical_reduce<T>(static_cast<std::int64_t>(x.size()), Op::sum,
                             [&](std::int64_t i) { return mul(x[i], y[i]); });
}
template <class T>
T norm2(const std::vector<T>& x) {
  const T ss = canonical_reduce<T>(static_cast<std::int64_t>(x.size()), Op::sum,
                                   [&](std::int64_t i) { return mul(x[i], x[i]); });
  return canonical_nan(static_cast<T>(std::sqrt(ss)));
}

// porta::mean's contract (algorithms.hpp): sum / size divided on the host, floating point in T
// (then widened to double), integers in double.
template <class T>
double mean_from_sum(T sum, std::int64_t n) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<double>(canonical_nan(static_cast<T>(sum / static_cast<T>(n))));
  } else {
    return static_cast<double>(sum) / static_cast<double>(n);
  }
}

// Reduction of x viewed as [outer, n, inner] over the middle axis: result [outer * inner].
template <class T>
std::vector<T> reduce_axis(const std::vector<T>& x, std::int64_t outer, std::int64_t n, std::int64_t inner, Op op) {
  std::vector<T> out(static_cast<std::size_t>(outer * inner));
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i)
      out[static_cast<std::size_t>(o * inner + i)] = canonical_reduce<T>(
          n, op, [&](std::int64_t j) { return x[static_cast<std::size_t>((o * n + j) * inner + i)]; });
  return out;
}

// Neumaier-compensated sum in long double: an accurate reference for the accuracy tests.
template <class T>
long double accurate_sum(const std::vector<T>& x) {
  long double s = 0, c = 0;
  for (T v : x) {
    const long double xv = static_cast<long double>(v);
    const long double t = s + xv;
    if (std::fabs(s) >= std::fabs(xv))
      c += (s - t) + xv;
    else
      c += (xv - t) + s;
    s = t;
  }
  return s + c;
}

}  // namespace porta_test::ref
