// SPDX-License-Identifier: Apache-2.0
// The "libmvec" peer of the CPU math group (cpu_fused.cpp): glibc's vector math functions, which GCC
// calls for a simd loop of std::exp, std::sin, ... only under -ffast-math (math.h declares the simd
// variants then). This file alone is compiled that way (bench/CMakeLists.txt), and each loop is
// built for AVX-512, AVX2 and the baseline and picked at run time, as porta's own loops are, so both
// sides run the widest vectors the CPU has.
#include "cpu_libmvec.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace porta_bench {
namespace {

#define PB_LIBMVEC_LOOP(suffix, attr, name, T)                                                                     \
  attr void loop_##name##_##suffix(const T* x, T* y, std::int64_t n) {                                             \
    _Pragma("omp parallel for simd schedule(static)") for (std::int64_t i = 0; i < n; ++i) y[i] = std::name(x[i]); \
  }
#define PB_LIBMVEC_ISAS(name, T, tag)                                                 \
  PB_LIBMVEC_LOOP(tag##_avx512, __attribute__((target("avx512f,avx512dq"))), name, T) \
  PB_LIBMVEC_LOOP(tag##_avx2, __attribute__((target("avx2,fma"))), name, T)           \
  PB_LIBMVEC_LOOP(tag##_base, , name, T)                                              \
  void run_##name##_##tag(const T* x, T* y, std::int64_t n) {                         \
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) {    \
      loop_##name##_##tag##_avx512(x, y, n);                                          \
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {     \
      loop_##name##_##tag##_avx2(x, y, n);                                            \
    } else {                                                                          \
      loop_##name##_##tag##_base(x, y, n);                                            \
    }                                                                                 \
  }
#define PB_LIBMVEC_FN(name)         \
  PB_LIBMVEC_ISAS(name, float, f32) \
  PB_LIBMVEC_ISAS(name, double, f64)
PB_LIBMVEC_FN(exp)
PB_LIBMVEC_FN(log)
PB_LIBMVEC_FN(sin)
PB_LIBMVEC_FN(cos)
PB_LIBMVEC_FN(tanh)

}  // namespace

#define PB_LIBMVEC_PICK(name)                 \
  if (std::strcmp(fn, #name) == 0) {          \
    if constexpr (sizeof(T) == 4)             \
      return run_##name##_f32(x, y, n), true; \
    else                                      \
      return run_##name##_f64(x, y, n), true; \
  }

template <class T>
bool libmvec_map(const char* fn, const T* x, T* y, std::int64_t n) {
  PB_LIBMVEC_PICK(exp)
  PB_LIBMVEC_PICK(log)
  PB_LIBMVEC_PICK(sin)
  PB_LIBMVEC_PICK(cos)
  PB_LIBMVEC_PICK(tanh)
  return false;
}
template bool libmvec_map<float>(const char*, const float*, float*, std::int64_t);
template bool libmvec_map<double>(const char*, const double*, double*, std::int64_t);

}  // namespace porta_bench
