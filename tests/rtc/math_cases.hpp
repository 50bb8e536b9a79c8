// SPDX-License-Identifier: Apache-2.0
// The run-time kernel that calls every math function of the prelude (porta::rtc::exp, ...), and the
// host functions it must match bit for bit (porta::math). One list, so that the kernel, the host
// reference and the NVRTC compile check (test_nvrtc.cpp) cannot drift apart.
#pragma once

#include <string>
#include <vector>

#include "porta/math.hpp"

namespace porta_test::rtc_math {

// Functions of one argument; of two (x, y); sincos writes two outputs after them.
// clang-format off
#define PORTA_TEST_RTC_UNARY(X)                                                                           \
  X(exp) X(exp2) X(exp10) X(expm1) X(log) X(log2) X(log10) X(log1p) X(sin) X(cos) X(tan) X(asin) X(acos) \
      X(atan) X(sinh) X(cosh) X(tanh) X(sigmoid) X(erf) X(erfc) X(cbrt) X(sqrt)
#define PORTA_TEST_RTC_BINARY(X) X(pow) X(atan2) X(hypot)
// clang-format on

template <class T>
struct Function {
  const char* name;
  T (*host)(T, T);
};

// In the kernel's output order: out[k * n + i] is function k of (x[i], y[i]).
template <class T>
std::vector<Function<T>> functions() {
  std::vector<Function<T>> f;
#define PORTA_TEST_U(name) f.push_back({#name, [](T x, T) { return porta::math::name(x); }});
#define PORTA_TEST_B(name) f.push_back({#name, [](T x, T y) { return porta::math::name(x, y); }});
  PORTA_TEST_RTC_UNARY(PORTA_TEST_U)
  PORTA_TEST_RTC_BINARY(PORTA_TEST_B)
#undef PORTA_TEST_U
#undef PORTA_TEST_B
  f.push_back({"sincos (sine)", [](T x, T) {
                 T s, c;
                 porta::math::sincos(x, &s, &c);
                 return s;
               }});
  f.push_back({"sincos (cosine)", [](T x, T) {
                 T s, c;
                 porta::math::sincos(x, &s, &c);
                 return c;
               }});
  return f;
}

// all_math<T>(i, x, y, out): every function above of (x[i], y[i]), out holding functions().size()
// rows of x.size().
inline std::string kernel_source() {
  std::string s =
      "template <class T>\n"
      "PORTA_RTC_KERNEL void all_math(porta_index i, porta::rtc::View<const T> x, porta::rtc::View<const T> y,\n"
      "                               porta::rtc::View<T> out) {\n"
      "  const long long n = x.size();\n"
      "  const T a = x[i], b = y[i];\n"
      "  T* o = out.data() + i;\n"
      "  int k = 0;\n";
#define PORTA_TEST_U(name) s += "  o[n * k++] = porta::rtc::" #name "(a);\n";
#define PORTA_TEST_B(name) s += "  o[n * k++] = porta::rtc::" #name "(a, b);\n";
  PORTA_TEST_RTC_UNARY(PORTA_TEST_U)
  PORTA_TEST_RTC_BINARY(PORTA_TEST_B)
#undef PORTA_TEST_U
#undef PORTA_TEST_B
  s += "  T s, c;\n  porta::rtc::sincos(a, &s, &c);\n  o[n * k++] = s;\n  o[n * k++] = c;\n}\n";
  return s;
}

// The vendor's functions under porta::rtc::fast: they compile everywhere and are close to porta's.
inline const char* fast_kernel_source() {
  return R"(
template <class T>
PORTA_RTC_KERNEL void fast_math(porta_index i, porta::rtc::View<const T> x, porta::rtc::View<T> out) {
  namespace f = porta::rtc::fast;
  const long long n = x.size();
  const T a = x[i];  // in (0.1, 0.9): every function is defined and well-conditioned there
  T* o = out.data() + i;
  o[0 * n] = f::exp(a);   o[1 * n] = f::exp2(a);  o[2 * n] = f::expm1(a);  o[3 * n] = f::log(a);
  o[4 * n] = f::log2(a);  o[5 * n] = f::log10(a); o[6 * n] = f::log1p(a);  o[7 * n] = f::sin(a);
  o[8 * n] = f::cos(a);   o[9 * n] = f::tan(a);   o[10 * n] = f::asin(a);  o[11 * n] = f::acos(a);
  o[12 * n] = f::atan(a); o[13 * n] = f::sinh(a); o[14 * n] = f::cosh(a);  o[15 * n] = f::tanh(a);
  o[16 * n] = f::erf(a);  o[17 * n] = f::erfc(a); o[18 * n] = f::cbrt(a);  o[19 * n] = f::sqrt(a);
  o[20 * n] = f::pow(a, a); o[21 * n] = f::atan2(a, T(1) - a); o[22 * n] = f::hypot(a, T(1) - a);
  o[23 * n] = f::sigmoid(a);
}
)";
}

template <class T>
std::vector<T (*)(T)> fast_references() {
  namespace m = porta::math;
  // clang-format off
  return {[](T a) { return m::exp(a); },   [](T a) { return m::exp2(a); },  [](T a) { return m::expm1(a); },
          [](T a) { return m::log(a); },   [](T a) { return m::log2(a); },  [](T a) { return m::log10(a); },
          [](T a) { return m::log1p(a); }, [](T a) { return m::sin(a); },   [](T a) { return m::cos(a); },
          [](T a) { return m::tan(a); },   [](T a) { return m::asin(a); },  [](T a) { return m::acos(a); },
          [](T a) { return m::atan(a); },  [](T a) { return m::sinh(a); },  [](T a) { return m::cosh(a); },
          [](T a) { return m::tanh(a); },  [](T a) { return m::erf(a); },   [](T a) { return m::erfc(a); },
          [](T a) { return m::cbrt(a); },  [](T a) { return m::sqrt(a); },  [](T a) { return m::pow(a, a); },
          [](T a) { return m::atan2(a, T(1) - a); }, [](T a) { return m::hypot(a, T(1) - a); },
          [](T a) { return m::sigmoid(a); }};
  // clang-format on
}

}  // namespace porta_test::rtc_math
