// SPDX-License-Identifier: Apache-2.0
// Comparisons of device results with host references, and tolerances derived from n and the dtype.
//
//   PORTA_CHECK_RESULT(porta_test::compare_exact(got, ref));              // bits (any NaN matches NaN)
//   PORTA_CHECK_RESULT(porta_test::compare_ulps(got, ref, ulps));         // |got - ref| <= ulps * eps * |ref|
//   CHECK(std::fabs(s - ref) <= porta_test::sum_tolerance<float>(n, sum_abs));
//
// A comparison reports the first mismatching index with both values and their bits, the number of
// mismatches, and whether the mismatch is an unwritten (poison) element.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "porta/porta.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

namespace porta_test {

template <class T>
using bits_t =
    std::conditional_t<sizeof(T) == 2, std::uint16_t, std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>;

template <class T>
bits_t<T> bits(T v) {
  bits_t<T> b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}
template <class T>
bool same_bits(T a, T b) {
  return bits(a) == bits(b);
}

// NaNs of the kinds a user passes or a device makes: the canonical quiet NaN and its negative,
// payloads of both signs, signalling patterns of both signs, and NVIDIA's 0x7fffffff. porta's NaN
// policy (docs/determinism.md, "NaN results") turns every one into the canonical quiet NaN.
template <class T>
std::vector<T> nan_patterns() {
  using B = bits_t<T>;
  const std::vector<B> nan_bits =
      sizeof(T) == 4 ? std::vector<B>{B(0x7fc00000u), B(0xffc00000u), B(0x7fc00123u), B(0xffc00456u),
                                      B(0x7f800001u), B(0xff812345u), B(0x7fffffffu)}
                     : std::vector<B>{B(0x7ff8000000000000ull), B(0xfff8000000000000ull), B(0x7ff8000000000123ull),
                                      B(0xfff8000000000456ull), B(0x7ff0000000000001ull), B(0xfff0000000012345ull),
                                      B(0x7fffffffffffffffull)};
  std::vector<T> out;
  for (const B b : nan_bits) {
    T v;
    std::memcpy(&v, &b, sizeof v);
    out.push_back(v);
  }
  return out;
}

// "1.5 (0x3fc00000)" for floating point, the number for integers, "(re, im)" of those for complex.
template <class T>
std::string show(T v) {
  std::ostringstream os;
  if constexpr (porta::is_complex_v<T>) {
    os << "(" << show(v.re) << ", " << show(v.im) << ")";
  } else if constexpr (std::is_floating_point_v<T>) {
    os << std::setprecision(std::numeric_limits<T>::max_digits10) << v << " (0x" << std::hex << bits(v) << ")";
  } else {
    os << static_cast<long long>(v);
  }
  return os.str();
}
inline std::string show_ld(long double v) {
  std::ostringstream os;
  os << std::setprecision(21) << v;
  return os.str();
}

template <class T>
constexpr long double eps() {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<long double>(std::numeric_limits<T>::epsilon());
  } else {
    return 0.0L;
  }
}

struct Result {
  bool ok = true;
  std::string message;
};

#define PORTA_CHECK_RESULT(...)              \
  do {                                       \
    ::porta_test::Result r_ = (__VA_ARGS__); \
    INFO(r_.message);                        \
    CHECK(r_.ok);                            \
  } while (0)
#define PORTA_REQUIRE_RESULT(...)            \
  do {                                       \
    ::porta_test::Result r_ = (__VA_ARGS__); \
    INFO(r_.message);                        \
    REQUIRE(r_.ok);                          \
  } while (0)

// Elementwise comparison with a predicate ok(i) and a description of element i.
template <class Ok, class Describe>
Result compare_with(std::size_t n_got, std::size_t n_ref, Ok ok, Describe describe) {
  Result r;
  if (n_got != n_ref) {
    r.ok = false;
    r.message = "size " + std::to_string(n_got) + ", expected " + std::to_string(n_ref);
    return r;
  }
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < n_got; ++i) {
    if (!ok(i)) {
      if (bad++ == 0) first = i;
    }
  }
  if (bad) {
    r.ok = false;
    r.message = std::to_string(bad) + " of " + std::to_string(n_got) + " elements differ; first at [" +
                std::to_string(first) + "]: " + describe(first);
  } else {
    r.message = std::to_string(n_got) + " elements match";
  }
  return r;
}

// Bitwise equality; for floating point any NaN matches any NaN.
template <class T>
Result compare_exact(const std::vector<T>& got, const std::vector<T>& ref) {
  return compare_with(
      got.size(), ref.size(),
      [&](std::size_t i) {
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(got[i]) && std::isnan(ref[i])) return true;
        }
        return same_bits(got[i], ref[i]);
      },
      [&](std::size_t i) {
        return "got " + show(got[i]) + (is_poison(got[i]) ? " [poison: never written]" : "") + ", expected " +
               show(ref[i]);
      });
}

// |got - ref| <= ulps * eps(T) * |ref| + abs_tol, ref in long double (NaN matches NaN, inf matches
// the same inf). Integers: |got - ref| <= abs_tol.
template <class T>
Result compare_ulps(const std::vector<T>& got, const std::vector<long double>& ref, double ulps,
                    long double abs_tol = 0.0L) {
  return compare_with(
      got.size(), ref.size(),
      [&](std::size_t i) {
        const long double g = static_cast<long double>(got[i]);
        const long double e = ref[i];
        if (std::isnan(e) || std::isnan(g)) return std::isnan(e) && std::isnan(g);
        if (std::isinf(e) || std::isinf(g)) return g == e;
        return std::fabs(g - e) <= static_cast<long double>(ulps) * eps<T>() * std::fabs(e) + abs_tol;
      },
      [&](std::size_t i) {
        const long double e = ref[i];
        std::string s =
            "got " + show(got[i]) + (is_poison(got[i]) ? " [poison: never written]" : "") + ", expected " + show_ld(e);
        if constexpr (std::is_floating_point_v<T>) {
          if (e != 0 && std::isfinite(e))
            s += " (error " + show_ld(std::fabs(static_cast<long double>(got[i]) - e) / (eps<T>() * std::fabs(e))) +
                 " ulps, allowed " + std::to_string(ulps) + ")";
        }
        return s;
      });
}

// |got - ref| <= bound[i] (absolute bounds computed by the caller); NaN matches NaN.
template <class T>
Result compare_bound(const std::vector<T>& got, const std::vector<long double>& ref,
                     const std::vector<long double>& bound) {
  return compare_with(
      got.size(), ref.size(),
      [&](std::size_t i) {
        const long double g = static_cast<long double>(got[i]);
        if (std::isnan(ref[i]) || std::isnan(g)) return std::isnan(ref[i]) && std::isnan(g);
        if (std::isinf(ref[i]) || std::isinf(g)) return g == ref[i];
        return std::fabs(g - ref[i]) <= bound[i];
      },
      [&](std::size_t i) {
        return "got " + show(got[i]) + (is_poison(got[i]) ? " [poison: never written]" : "") + ", expected " +
               show_ld(ref[i]) + " +- " + show_ld(bound[i]);
      });
}

// The most roundings on any path from an input to the result of the canonical reduction of n
// terms (tests/support/reference.hpp): a sequential run of ceil(len / 1024) adds in each lane, then
// 10 tree levels, per chunk level. The classic bound is |error| <= depth * u * sum|x_i| with
// u = eps/2; the tolerances below use eps, a factor 2 of margin.
inline int reduce_depth(std::int64_t n) {
  constexpr std::int64_t lanes = 1024, chunk = 32768;
  if (n <= 1) return 1;
  int depth = 0;
  while (true) {
    const std::int64_t len = n < chunk ? n : chunk;
    depth += static_cast<int>((len + lanes - 1) / lanes) + 10;
    if (n <= chunk) return depth;
    n = (n + chunk - 1) / chunk;
  }
}

// Tolerance of a sum of n terms whose magnitudes add up to sum_abs.
template <class T>
long double sum_tolerance(std::int64_t n, long double sum_abs) {
  return static_cast<long double>(reduce_depth(n)) * eps<T>() * sum_abs;
}

// Ulps allowed for elementwise transcendental functions (sqrt is exact everywhere): glibc's float
// and double functions are within a few ulps; CUDA's and HIP's device math libraries document up
// to 2-4 ulps for most functions (pow: 8 for float), so GPUs get a wider margin.
inline double transcendental_ulps(porta::Device dev) {
  return dev.is_gpu() ? 16.0 : 4.0;
}

}  // namespace porta_test
