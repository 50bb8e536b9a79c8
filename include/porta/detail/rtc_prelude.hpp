// SPDX-License-Identifier: Apache-2.0
// The prelude of porta's run-time kernels (porta/rtc.hpp), as a string: the text that comes before
// the user's source in every program handed to NVRTC, hiprtc or the host C++ compiler. It is the
// whole dialect: porta_index, porta::rtc::View<T>, the math of detail/ops.hpp with the same
// semantics (NaN-propagating min/max with -0.0 below +0.0, integer division by zero gives 0,
// canonical_nan for porta's NaN policy),
// PORTA_RTC_KERNEL and the entry macro that the generated wrapper uses.
//
// Self-contained on purpose: NVRTC and hiprtc have no C++ standard library headers, so nothing here
// includes one on the device (the vendors' math functions, sinf/sin/..., are built in); the host
// compiler gets <cmath>. It is part of the disk cache's key, so editing it recompiles every kernel.
#pragma once

namespace porta::detail {

inline constexpr const char* kRtcPrelude = R"PORTA_RTC(// porta run-time kernel prelude
#if defined(__CUDACC_RTC__) || defined(__HIPCC_RTC__) || defined(__CUDACC__) || defined(__HIPCC__)
#define PORTA_RTC_ON_DEVICE 1
#define PORTA_RTC_FUNCTION __device__ inline
#else
#define PORTA_RTC_ON_DEVICE 0
#define PORTA_RTC_FUNCTION inline
#include <cmath>
// porta's own math functions (porta/detail/math.hpp), as the CPU backend's maps run them; the
// kernel is linked against libporta, which exports them.
#define PORTA_RTC_CPU_MATH(name) \
  extern "C" float porta_cpu_math_##name##_f32(float) noexcept; \
  extern "C" double porta_cpu_math_##name##_f64(double) noexcept;
PORTA_RTC_CPU_MATH(exp)
PORTA_RTC_CPU_MATH(log)
PORTA_RTC_CPU_MATH(sin)
PORTA_RTC_CPU_MATH(cos)
PORTA_RTC_CPU_MATH(tanh)
PORTA_RTC_CPU_MATH(sigmoid)
#undef PORTA_RTC_CPU_MATH
extern "C" float porta_cpu_math_pow_f32(float, float) noexcept;
extern "C" double porta_cpu_math_pow_f64(double, double) noexcept;
#endif
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

#if PORTA_RTC_ON_DEVICE
#define PORTA_RTC_MATH(name, ffn, dfn)                                   \
  PORTA_RTC_FUNCTION float name(float x) { return ::ffn(x); }           \
  PORTA_RTC_FUNCTION double name(double x) { return ::dfn(x); }
#else
#define PORTA_RTC_MATH(name, ffn, dfn)                                   \
  PORTA_RTC_FUNCTION float name(float x) { return std::dfn(x); }        \
  PORTA_RTC_FUNCTION double name(double x) { return std::dfn(x); }
#endif
PORTA_RTC_MATH(sqrt, sqrtf, sqrt)
PORTA_RTC_MATH(fabs, fabsf, fabs)
#if PORTA_RTC_ON_DEVICE
PORTA_RTC_MATH(exp, expf, exp)
PORTA_RTC_MATH(log, logf, log)
PORTA_RTC_MATH(sin, sinf, sin)
PORTA_RTC_MATH(cos, cosf, cos)
PORTA_RTC_MATH(tanh, tanhf, tanh)
#else
#define PORTA_RTC_PORTA_MATH(name)                                                      \
  PORTA_RTC_FUNCTION float name(float x) { return ::porta_cpu_math_##name##_f32(x); } \
  PORTA_RTC_FUNCTION double name(double x) { return ::porta_cpu_math_##name##_f64(x); }
PORTA_RTC_PORTA_MATH(exp)
PORTA_RTC_PORTA_MATH(log)
PORTA_RTC_PORTA_MATH(sin)
PORTA_RTC_PORTA_MATH(cos)
PORTA_RTC_PORTA_MATH(tanh)
PORTA_RTC_PORTA_MATH(sigmoid)
#undef PORTA_RTC_PORTA_MATH
#endif
#undef PORTA_RTC_MATH

#if PORTA_RTC_ON_DEVICE
PORTA_RTC_FUNCTION float pow(float a, float b) { return ::powf(a, b); }
PORTA_RTC_FUNCTION double pow(double a, double b) { return ::pow(a, b); }
#else
PORTA_RTC_FUNCTION float pow(float a, float b) { return ::porta_cpu_math_pow_f32(a, b); }
PORTA_RTC_FUNCTION double pow(double a, double b) { return ::porta_cpu_math_pow_f64(a, b); }
#endif

// porta's NaN, ops.hpp's canonical_nan: the quiet NaN with no payload and no sign, whatever NaN
// the hardware made (NVIDIA's is 0x7fffffff, x86 keeps an operand's). Made from its bits: the
// run-time compilers have no <limits>, and the vendors' nanf("") is 0x7fffffff.
#if PORTA_RTC_ON_DEVICE
PORTA_RTC_FUNCTION float canonical_nan(float x) { return x == x ? x : __int_as_float(0x7fc00000); }
PORTA_RTC_FUNCTION double canonical_nan(double x) {
  return x == x ? x : __longlong_as_double(0x7ff8000000000000LL);
}
#else
PORTA_RTC_FUNCTION float canonical_nan(float x) { return x == x ? x : __builtin_nanf(""); }
PORTA_RTC_FUNCTION double canonical_nan(double x) { return x == x ? x : __builtin_nan(""); }
#endif
template <class T>
PORTA_RTC_FUNCTION T canonical_nan(T x) { return x; }

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
PORTA_RTC_FUNCTION T sigmoid(T x) { return T(1) / (T(1) + exp(-x)); }
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
