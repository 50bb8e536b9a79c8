// SPDX-License-Identifier: Apache-2.0
// porta::math (porta/math.hpp) in user kernels: on every device each function gives exactly the
// host's bits, over random arguments in every range of the functions' reductions, the special values
// and subnormals. This is what makes a kernel that uses them give the same bits on a GPU and a CPU.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernel_devices.hpp"
#include "porta/kernels.hpp"
#include "porta/math.hpp"

using porta::Array;
using porta::Device;
using porta::Shape;

namespace {

// The functions under test, by number: one kernel evaluates whichever `fn` says, on the device and
// on the host. Unary functions read x; binary ones read x and y.
#define PORTA_TEST_MATH_FUNCTIONS(X) \
  X(exp, 1)                          \
  X(exp2, 1)                         \
  X(exp10, 1)                        \
  X(expm1, 1)                        \
  X(log, 1)                          \
  X(log2, 1)                         \
  X(log10, 1)                        \
  X(log1p, 1)                        \
  X(cbrt, 1)                         \
  X(sin, 1)                          \
  X(cos, 1)                          \
  X(tan, 1)                          \
  X(asin, 1)                         \
  X(acos, 1)                         \
  X(atan, 1)                         \
  X(sinh, 1)                         \
  X(cosh, 1)                         \
  X(tanh, 1)                         \
  X(sigmoid, 1)                      \
  X(erf, 1)                          \
  X(erfc, 1)                         \
  X(sqrt, 1)                         \
  X(pow, 2)                          \
  X(atan2, 2)                        \
  X(hypot, 2)                        \
  X(add, 2)                          \
  X(sub, 2)                          \
  X(mul, 2)                          \
  X(div, 2)

enum Fn {
#define PORTA_TEST_ENUM(name, arity) fn_##name,
  PORTA_TEST_MATH_FUNCTIONS(PORTA_TEST_ENUM)
#undef PORTA_TEST_ENUM
      fn_count
};
const char* const kNames[] = {
#define PORTA_TEST_NAME(name, arity) #name,
    PORTA_TEST_MATH_FUNCTIONS(PORTA_TEST_NAME)
#undef PORTA_TEST_NAME
};

template <class T>
PORTA_HOST_DEVICE T call(int fn, T x, T y) {
  namespace pm = porta::math;
  switch (fn) {
#define PORTA_TEST_CALL_1(name) \
  case fn_##name:               \
    return pm::name(x);
#define PORTA_TEST_CALL_2(name) \
  case fn_##name:               \
    return pm::name(x, y);
#define PORTA_TEST_CALL(name, arity) PORTA_TEST_CALL_##arity(name)
    PORTA_TEST_MATH_FUNCTIONS(PORTA_TEST_CALL)
#undef PORTA_TEST_CALL
#undef PORTA_TEST_CALL_1
#undef PORTA_TEST_CALL_2
    case fn_count: {  // sincos: sin's and cos's bits from one reduction (the sum keeps both)
      T sn, cs;
      pm::sincos(x, &sn, &cs);
      return pm::add(sn, pm::mul(cs, T(0.5)));
    }
    default:
      return pm::fma(x, y, x);  // fma: one rounding
  }
}

template <class T>
struct Evaluate {
  porta::View<const T> x, y;
  porta::View<T> out;
  int fn;
  PORTA_HOST_DEVICE void operator()(std::int64_t i) const { out[i] = call(fn, x[i], y[i]); }
};

template <class T>
std::vector<T> arguments(porta_test::Rng& rng, std::int64_t n) {
  const T inf = std::numeric_limits<T>::infinity();
  std::vector<T> v = {T(0),
                      -T(0),
                      inf,
                      -inf,
                      std::numeric_limits<T>::quiet_NaN(),
                      std::numeric_limits<T>::denorm_min(),
                      -std::numeric_limits<T>::min(),
                      std::numeric_limits<T>::max(),
                      T(1),
                      T(-1),
                      T(0.5),
                      T(400),
                      T(-1e6),
                      T(3e7),
                      T(88.7),
                      T(-745)};
  // Magnitudes from 2^-30 to 2^30 and both signs: every range of every reduction.
  while (static_cast<std::int64_t>(v.size()) < n) {
    const T m = std::ldexp(rng.uniform<T>(T(1), T(2)), static_cast<int>(rng.uniform<int>(-30, 30)));
    v.push_back(rng.coin() ? m : -m);
  }
  return v;
}

template <class T>
std::uint64_t bits(T x) {
  if constexpr (sizeof(T) == 4) {
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    return u;
  } else {
    std::uint64_t u;
    std::memcpy(&u, &x, 8);
    return u;
  }
}

}  // namespace

TEMPLATE_TEST_CASE("porta::math in a user kernel gives the host's bits on every device", "[kernels][math][determinism]",
                   float, double) {
  using T = TestType;
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t n = 20000;
  const auto hx = arguments<T>(rng, n), hy = arguments<T>(rng, n);
  const auto x = Array<T>::from(hx, dev), y = Array<T>::from(hy, dev);
  for (int fn = 0; fn <= fn_count + 1; ++fn) {
    const char* name = fn < fn_count ? kNames[fn] : fn == fn_count ? "sincos" : "fma";
    INFO(name << " on " << dev.to_string());
    Array<T> out = porta_test::poisoned<T>(Shape{n}, dev);
    porta::parallel_for(dev, n, Evaluate<T>{x.view(), y.view(), out.view(), fn});
    const auto got = out.to_vector();
    for (std::int64_t i = 0; i < n; ++i) {
      const T want = call(fn, hx[static_cast<std::size_t>(i)], hy[static_cast<std::size_t>(i)]);
      const T g = got[static_cast<std::size_t>(i)];
      if (bits(g) != bits(want))
        FAIL(name << "(" << porta_test::show(hx[static_cast<std::size_t>(i)]) << ", "
                  << porta_test::show(hy[static_cast<std::size_t>(i)]) << "): got " << porta_test::show(g)
                  << ", the host gives " << porta_test::show(want));
    }
  }
}
