// SPDX-License-Identifier: Apache-2.0
// The prelude of porta's run-time kernels (porta/rtc.hpp), as strings: the text that comes before
// the user's source in every program handed to NVRTC, hiprtc or the host C++ compiler. It is the
// whole dialect: porta_index, porta::rtc::View<T>, the math of detail/ops.hpp with the same
// semantics (NaN-propagating min/max with -0.0 below +0.0, integer division by zero gives 0,
// canonical_nan for porta's NaN policy), porta's own math functions (porta::math's), the vendor's
// under porta::rtc::fast, PORTA_RTC_KERNEL and the entry macro that the generated wrapper uses.
//
// A program is kRtcPrelude, then kRtcMathText, then kRtcPreludeRest (runtime/rtc.cpp puts them
// together). kRtcMathText is generated at build time from porta's math headers
// (detail/config.hpp, rounding.hpp, math.hpp, math_exp_log.hpp, math_trig.hpp, math_erf.hpp; see
// runtime/rtc_math_text.cmake): the same source as porta::math and the built-in operators, so a
// run-time kernel's exp, sin, pow, ... give the same bits on every device, GPU or CPU, as the
// eager operators do. There is one copy of the functions, in those headers.
//
// Self-contained on purpose: NVRTC and hiprtc have no C++ standard library headers, so nothing here
// includes one on the device (the vendors' math functions, sinf/sin/..., are built in); what the
// math headers take from std (fixed-width integers, three type traits) the prelude provides in
// porta_rtc_std, which the generated text names in place of std. The host compiler gets <cmath> and
// the real std. The whole text is part of the disk cache's key, so editing the prelude or a math
// header recompiles every kernel.
#pragma once

namespace porta::detail {

inline constexpr const char* kRtcPrelude = R"PORTA_RTC(// porta run-time kernel prelude
#if defined(__CUDACC_RTC__) || defined(__HIPCC_RTC__) || defined(__CUDACC__) || defined(__HIPCC__)
#define PORTA_RTC_ON_DEVICE 1
#define PORTA_RTC_FUNCTION __device__ inline
// What porta's math headers use from the standard library, for compilers that have none. The
// integer types are glibc's (LP64: 64-bit long), so that overloads on them resolve as on the host.
namespace porta_rtc_std {
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
static_assert(sizeof(long) == 8 && sizeof(int) == 4, "porta::rtc: an LP64 target is expected");
template <class A, class B> struct is_same { static constexpr bool value = false; };
template <class A> struct is_same<A, A> { static constexpr bool value = true; };
template <class A, class B> inline constexpr bool is_same_v = is_same<A, B>::value;
template <class T> struct remove_cv { typedef T type; };
template <class T> struct remove_cv<const T> { typedef T type; };
template <class T> struct remove_cv<volatile T> { typedef T type; };
template <class T> struct remove_cv<const volatile T> { typedef T type; };
template <class T> inline constexpr bool is_floating_point_v =
    is_same_v<typename remove_cv<T>::type, float> || is_same_v<typename remove_cv<T>::type, double> ||
    is_same_v<typename remove_cv<T>::type, long double>;
template <class T> struct make_unsigned { typedef T type; };
template <> struct make_unsigned<char> { typedef unsigned char type; };
template <> struct make_unsigned<signed char> { typedef unsigned char type; };
template <> struct make_unsigned<short> { typedef unsigned short type; };
template <> struct make_unsigned<int> { typedef unsigned int type; };
template <> struct make_unsigned<long> { typedef unsigned long type; };
template <> struct make_unsigned<long long> { typedef unsigned long long type; };
template <class T> using make_unsigned_t = typename make_unsigned<T>::type;
}  // namespace porta_rtc_std
#else
#define PORTA_RTC_ON_DEVICE 0
#define PORTA_RTC_FUNCTION inline
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
namespace porta_rtc_std {
using namespace std;
}
#endif
)PORTA_RTC";

// After porta's math headers (kRtcMathText).
inline constexpr const char* kRtcPreludeRest = R"PORTA_RTC(
// A kernel body: a function of the index and of the launch's arguments, called once per index.
#define PORTA_RTC_KERNEL PORTA_RTC_FUNCTION

typedef long long porta_index;

namespace porta {
namespace rtc {

// An Array's memory on the device: a const Array<T>& arrives as View<const T>, an Array<T>& as View<T>.
template <class T>
struct View {
  T* ptr;
  long long count;
  PORTA_RTC_FUNCTION T& operator[](long long i) const { return ptr[i]; }
  PORTA_RTC_FUNCTION long long size() const { return count; }
  PORTA_RTC_FUNCTION T* data() const { return ptr; }
  // A writable view is also readable.
  template <class U>
  PORTA_RTC_FUNCTION operator View<const U>() const { return View<const U>{ptr, count}; }
};

namespace detail {
template <class A, class B> struct same { static const bool value = false; };
template <class A> struct same<A, A> { static const bool value = true; };
template <class T> struct is_float { static const bool value = false; };
template <> struct is_float<float> { static const bool value = true; };
template <> struct is_float<double> { static const bool value = true; };
// A scalar argument converts only to its own type, so that a float passed to an int parameter is a
// compile error instead of a silent conversion.
template <class T>
struct Exact {
  T v;
  template <class U>
  PORTA_RTC_FUNCTION operator U() const {
    static_assert(same<U, T>::value || same<U, const T>::value,
                  "porta::rtc: a scalar argument's C++ type differs from the kernel parameter's type");
    return v;
  }
};
}  // namespace detail

// porta's NaN, ops.hpp's canonical_nan: the quiet NaN with no payload and no sign, whatever NaN
// the hardware made (NVIDIA's is 0x7fffffff, x86 keeps an operand's).
PORTA_RTC_FUNCTION float canonical_nan(float x) { return porta::detail::canonical_nan(x); }
PORTA_RTC_FUNCTION double canonical_nan(double x) { return porta::detail::canonical_nan(x); }
template <class T>
PORTA_RTC_FUNCTION T canonical_nan(T x) { return x; }

// porta's own functions (porta::math; the headers above), float and double: the same bits on every
// device, a NaN result the canonical NaN.
PORTA_DETAIL_MATH_FUNCTIONS(PORTA_DETAIL_USING_MATH)

// The correctly rounded square root, as the eager operator's (ops.hpp's SqrtOp), its NaN the
// canonical one. sqrtf, not __fsqrt_rn: HIP's __fsqrt_rn is the approximate native square root, and
// both run-time compilers round sqrtf correctly unless told otherwise (-prec-sqrt=false, fast math).
#if PORTA_RTC_ON_DEVICE
PORTA_RTC_FUNCTION float sqrt(float x) { return canonical_nan(::sqrtf(x)); }
PORTA_RTC_FUNCTION double sqrt(double x) { return canonical_nan(::sqrt(x)); }
#else
PORTA_RTC_FUNCTION float sqrt(float x) { return canonical_nan(std::sqrt(x)); }
PORTA_RTC_FUNCTION double sqrt(double x) { return canonical_nan(std::sqrt(x)); }
#endif
PORTA_RTC_FUNCTION float fabs(float x) { return porta::detail::math::impl::from_bits(porta::detail::math::impl::bits(x) & 0x7fffffffu); }
PORTA_RTC_FUNCTION double fabs(double x) {
  return porta::detail::math::impl::from_bits(porta::detail::math::impl::bits(x) & 0x7fffffffffffffffu);
}

// The vendor's functions (libdevice, ocml; the host's libm on the CPU) under the same names: often
// faster on a GPU, and different in the last bits from device to device (docs/determinism.md).
namespace fast {
#if PORTA_RTC_ON_DEVICE
#define PORTA_RTC_FAST(name)                                              \
  PORTA_RTC_FUNCTION float name(float x) { return ::name##f(x); }         \
  PORTA_RTC_FUNCTION double name(double x) { return ::name(x); }
#define PORTA_RTC_FAST2(name)                                                         \
  PORTA_RTC_FUNCTION float name(float x, float y) { return ::name##f(x, y); }         \
  PORTA_RTC_FUNCTION double name(double x, double y) { return ::name(x, y); }
#else
#define PORTA_RTC_FAST(name)                                              \
  PORTA_RTC_FUNCTION float name(float x) { return std::name(x); }         \
  PORTA_RTC_FUNCTION double name(double x) { return std::name(x); }
#define PORTA_RTC_FAST2(name)                                                         \
  PORTA_RTC_FUNCTION float name(float x, float y) { return std::name(x, y); }         \
  PORTA_RTC_FUNCTION double name(double x, double y) { return std::name(x, y); }
#endif
PORTA_RTC_FAST(exp)
PORTA_RTC_FAST(exp2)
PORTA_RTC_FAST(expm1)
PORTA_RTC_FAST(log)
PORTA_RTC_FAST(log2)
PORTA_RTC_FAST(log10)
PORTA_RTC_FAST(log1p)
PORTA_RTC_FAST(sin)
PORTA_RTC_FAST(cos)
PORTA_RTC_FAST(tan)
PORTA_RTC_FAST(asin)
PORTA_RTC_FAST(acos)
PORTA_RTC_FAST(atan)
PORTA_RTC_FAST(sinh)
PORTA_RTC_FAST(cosh)
PORTA_RTC_FAST(tanh)
PORTA_RTC_FAST(erf)
PORTA_RTC_FAST(erfc)
PORTA_RTC_FAST(cbrt)
PORTA_RTC_FAST(sqrt)
PORTA_RTC_FAST2(pow)
PORTA_RTC_FAST2(atan2)
PORTA_RTC_FAST2(hypot)
#undef PORTA_RTC_FAST
#undef PORTA_RTC_FAST2
template <class T>
PORTA_RTC_FUNCTION T sigmoid(T x) { return T(1) / (T(1) + exp(-x)); }
}  // namespace fast

// As ops.hpp's max_op/min_op: NaN propagates as the canonical NaN, -0.0 orders below +0.0.
template <class T>
PORTA_RTC_FUNCTION T max(T a, T b) {
  if (a > b) return a;
  if (b > a) return b;
  if (detail::is_float<T>::value) {
    if (a == b) return (a == T(0) && T(1) / a < T(0)) ? b : a;
    return canonical_nan(a + b);
  }
  return a;
}
template <class T>
PORTA_RTC_FUNCTION T min(T a, T b) {
  if (a < b) return a;
  if (b < a) return b;
  if (detail::is_float<T>::value) {
    if (a == b) return (a == T(0) && T(1) / a < T(0)) ? a : b;
    return canonical_nan(a + b);
  }
  return a;
}
template <class T>
PORTA_RTC_FUNCTION T abs(T x) { return x < T(0) ? T(0) - x : x; }
PORTA_RTC_FUNCTION float abs(float x) { return fabs(x); }
PORTA_RTC_FUNCTION double abs(double x) { return fabs(x); }
template <class T>
PORTA_RTC_FUNCTION T relu(T x) { return x > T(0) ? x : (x != x ? canonical_nan(x) : T(0)); }
template <class T>
PORTA_RTC_FUNCTION T square(T x) { return x * x; }
// Integer division as porta's: by zero gives 0, lowest / -1 wraps.
template <class T>
PORTA_RTC_FUNCTION T div(T a, T b) {
  if (detail::is_float<T>::value) return a / b;
  if (b == T(0)) return T(0);
  if (b == T(-1)) return T(0) - a;
  return a / b;
}

}  // namespace rtc
}  // namespace porta

// The entry of one kernel, generated by porta from the launch's argument types: a grid-stride loop on
// GPUs, an OpenMP loop on the CPU; `call` is the user's function applied to i and the arguments `a`.
#if PORTA_RTC_ON_DEVICE
#define PORTA_RTC_ENTRY(entry, Args, call)                                                     \
  extern "C" __global__ void entry(long long n, Args a) {                                      \
    const long long stride = (long long)blockDim.x * gridDim.x;                                \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) { \
      call;                                                                                    \
    }                                                                                          \
  }
#else
#define PORTA_RTC_ENTRY(entry, Args, call)                                                        \
  extern "C" __attribute__((visibility("default"))) void entry(long long n, const void* bytes) { \
    Args a;                                                                                       \
    __builtin_memcpy(&a, bytes, sizeof a);                                                        \
    _Pragma("omp parallel for schedule(static)") for (long long i = 0; i < n; ++i) { call; }     \
  }
#endif
)PORTA_RTC";

}  // namespace porta::detail
