// SPDX-License-Identifier: Apache-2.0
// porta's transcendental functions (porta/detail/math.hpp) over arrays on the CPU. Each function is
// branch-free plain arithmetic, so its loop vectorises like an add; the loops are built for AVX-512,
// AVX2 and the baseline and picked at load time. AVX-512 is worth its own build here (unlike the
// memory-bound maps of cpu_map_common.hpp): these loops are compute-bound on one core, and get 16
// float or 8 double lanes only from AVX-512.
//
// sin and cos: math.hpp's fast path holds for |x| < kTrigFastLimit (double) or kTrigFastLimitF
// (float, evaluated in float). Each block of kMathBlock elements is checked first (a vectorised scan
// of data about to be read anyway). A float block beyond its fast path but within kTrigFastLimit
// runs the wide (double) path, and both paths with a select per element if some elements are in the
// fast range (that mixed block costs about 1.5 times the wide path alone); a block with a larger
// argument, an inf or a NaN is computed element by element by the full function, Payne-Hanek
// included. Every loop writes each y[i] only from x[i], so y may be x.
#include "cpu_math.hpp"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "cpu_common.hpp"
#include "porta/detail/math.hpp"
#include "porta/detail/math_exp_log.hpp"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(PORTA_NO_TARGET_CLONES) && !defined(__SANITIZE_THREAD__)
#define PORTA_MATH_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define PORTA_MATH_CLONES
#endif

namespace porta::detail::cpu {
namespace {

namespace pm = porta::detail::math;

constexpr std::int64_t kMathBlock = 256;

#define PORTA_MATH_FN(Name, fn)      \
  struct Name {                      \
    template <class T>               \
    inline T operator()(T x) const { \
      return pm::fn(x);              \
    }                                \
  };
PORTA_MATH_FN(ExpFn, exp)
PORTA_MATH_FN(LogFn, log)
PORTA_MATH_FN(TanhFn, tanh)
PORTA_MATH_FN(SigmoidFn, sigmoid)
#undef PORTA_MATH_FN

template <class T, class F>
PORTA_MATH_CLONES void map_loop(F f, const T* x, T* y, std::int64_t n) {
  PORTA_SIMD
  for (std::int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

template <class T, bool Cos>
PORTA_MATH_CLONES void trig_loop(const T* x, T* y, std::int64_t n) {
  for (std::int64_t b = 0; b < n; b += kMathBlock) {
    const std::int64_t len = std::min(kMathBlock, n - b);
    const T* xs = x + b;
    T* ys = y + b;
    int slow = 0;
    PORTA_SIMD
    for (std::int64_t i = 0; i < len; ++i) slow |= pm::trig_is_fast(xs[i]) ? 0 : 1;
    if (slow == 0) {
      PORTA_SIMD
      for (std::int64_t i = 0; i < len; ++i) ys[i] = Cos ? pm::cos_fast(xs[i]) : pm::sin_fast(xs[i]);
      continue;
    }
    if constexpr (std::is_same_v<T, float>) {
      int large = 0, fast = 0;
      PORTA_SIMD
      for (std::int64_t i = 0; i < len; ++i) {
        large |= pm::trig_is_wide(xs[i]) ? 0 : 1;
        fast |= pm::trig_is_fast(xs[i]) ? 1 : 0;
      }
      if (large == 0 && fast == 0) {
        PORTA_SIMD
        for (std::int64_t i = 0; i < len; ++i) ys[i] = Cos ? pm::cos_wide(xs[i]) : pm::sin_wide(xs[i]);
        continue;
      }
      if (large == 0) {
        // Both paths for every element, selected (y may be x, so no second pass may read x).
        PORTA_SIMD
        for (std::int64_t i = 0; i < len; ++i) {
          const T f = Cos ? pm::cos_fast(xs[i]) : pm::sin_fast(xs[i]);
          const T w = Cos ? pm::cos_wide(xs[i]) : pm::sin_wide(xs[i]);
          ys[i] = pm::trig_is_fast(xs[i]) ? f : w;
        }
        continue;
      }
    }
    for (std::int64_t i = 0; i < len; ++i) ys[i] = Cos ? pm::cos(xs[i]) : pm::sin(xs[i]);
  }
}

template <class T>
void block_typed(porta_unary_op op, const T* x, T* y, std::int64_t n) {
  switch (op) {
    case PORTA_UNARY_EXP:
      return map_loop<T>(ExpFn{}, x, y, n);
    case PORTA_UNARY_LOG:
      return map_loop<T>(LogFn{}, x, y, n);
    case PORTA_UNARY_SIN:
      return trig_loop<T, false>(x, y, n);
    case PORTA_UNARY_COS:
      return trig_loop<T, true>(x, y, n);
    case PORTA_UNARY_TANH:
      return map_loop<T>(TanhFn{}, x, y, n);
    case PORTA_UNARY_SIGMOID:
      return map_loop<T>(SigmoidFn{}, x, y, n);
    default:
      return;  // not handled here (math_handles)
  }
}

template <class T>
T scalar_typed(porta_unary_op op, T x) {
  switch (op) {
    case PORTA_UNARY_EXP:
      return pm::exp(x);
    case PORTA_UNARY_LOG:
      return pm::log(x);
    case PORTA_UNARY_SIN:
      return pm::sin(x);
    case PORTA_UNARY_COS:
      return pm::cos(x);
    case PORTA_UNARY_TANH:
      return pm::tanh(x);
    case PORTA_UNARY_SIGMOID:
      return pm::sigmoid(x);
    default:
      return x;  // not handled here (math_handles)
  }
}

}  // namespace

bool math_handles(porta_unary_op op, porta_dtype dt) noexcept {
  if (dt != PORTA_F32 && dt != PORTA_F64) return false;
  return op == PORTA_UNARY_EXP || op == PORTA_UNARY_LOG || op == PORTA_UNARY_SIN || op == PORTA_UNARY_COS ||
         op == PORTA_UNARY_TANH || op == PORTA_UNARY_SIGMOID;
}

void math_block(porta_unary_op op, const float* x, float* y, std::int64_t n) noexcept {
  block_typed(op, x, y, n);
}
void math_block(porta_unary_op op, const double* x, double* y, std::int64_t n) noexcept {
  block_typed(op, x, y, n);
}
float math_scalar(porta_unary_op op, float x) noexcept {
  return scalar_typed(op, x);
}
double math_scalar(porta_unary_op op, double x) noexcept {
  return scalar_typed(op, x);
}

porta_status math_unary(porta_unary_op op, porta_dtype dt, std::int64_t n, const void* x, void* y) noexcept {
  const auto run = [&](auto* out) {
    using T = std::remove_pointer_t<decltype(out)>;
    const T* in = static_cast<const T*>(x);
    parallel_ranges(n, kGrainTranscendental,
                    [=](std::int64_t b, std::int64_t e) { block_typed(op, in + b, out + b, e - b); });
  };
  if (dt == PORTA_F32) {
    run(static_cast<float*>(y));
  } else {
    run(static_cast<double*>(y));
  }
  return PORTA_OK;
}

}  // namespace porta::detail::cpu
