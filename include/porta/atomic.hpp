// SPDX-License-Identifier: Apache-2.0
// Atomic read-modify-write inside user kernels, on every backend: atomic_add, atomic_min and
// atomic_max for float, double, std::int32_t and std::int64_t. Each returns the value the element
// held before, as CUDA's atomicAdd does.
//
//   auto hv = hist.view();                      // Array<std::int32_t> of `bins` zeros
//   porta::parallel_for(dev, n, PORTA_LAMBDA(std::int64_t i) {
//     porta::atomic_add(&hv[bin_of(xv[i])], 1); // a histogram: exact counts on every device
//   });
//
// - The arithmetic is porta's own (porta/detail/ops.hpp): integers wrap, min and max propagate
//   NaN and order -0.0 below +0.0, like porta::min and porta::max. The result of integer adds and
//   of every min and max does not depend on the order the threads arrive in: a NaN is stored as
//   the canonical quiet NaN, which max_op/min_op return for any NaN operand, so once there it
//   stays and its bits are the same whichever NaN came first. Floating-point adds do depend on the
//   order (a sum of atomics is not deterministic: use porta::transform_reduce for reproducible
//   sums), and on GPUs their NaN is the vendor atomicAdd's.
// - Relaxed ordering, as the vendors' atomics: an atomic orders nothing else; the end of the
//   parallel_for is the barrier after which every update is visible.
// - On GPUs: the vendor's atomicAdd (float, double, int32, and int64 as its unsigned 64-bit
//   twin), atomicMin / atomicMax for int32, and a compare-and-swap loop for the rest (HIP has no
//   signed 64-bit min/max, and the vendors' float min/max do not follow porta's NaN rule). On the
//   CPU: GCC/Clang __atomic builtins (a fetch-add for integers, a compare-and-swap loop otherwise).
// - The address must be device memory of the device the kernel runs on (a View's element), and
//   naturally aligned.
#pragma once

#include <cstdint>
#include <type_traits>

#include "porta/detail/config.hpp"
#include "porta/detail/ops.hpp"

#if defined(__HIP__)
#include <hip/hip_runtime.h>  // atomicAdd, atomicCAS, ... (nvcc declares CUDA's by itself)
#endif

namespace porta {
namespace detail {

template <class T>
inline constexpr bool atomic_type_v = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                      std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>;

// The value argument does not take part in deduction: atomic_add(&v[i], 1) adds an int64 1 to an
// int64 element.
template <class T>
struct atomic_value {
  using type = T;
};
template <class T>
using atomic_value_t = typename atomic_value<T>::type;

template <class To, class From>
PORTA_HOST_DEVICE inline To bits_as(From v) {
  static_assert(sizeof(To) == sizeof(From), "same size");
  To r;
  __builtin_memcpy(&r, &v, sizeof r);  // std::memcpy is host-only in HIP device code when <cstring> comes first
  return r;
}

#if PORTA_DEVICE_PASS
// Compare-and-swap until op(old, v) is stored, or is old itself (then nothing is written).
template <class T, class Op>
__device__ inline T atomic_cas_loop(T* address, T v, Op op) {
  using U = std::conditional_t<sizeof(T) == 4, unsigned int, unsigned long long>;
  U* word = reinterpret_cast<U*>(address);
  U old = *reinterpret_cast<volatile U*>(word);
  for (;;) {
    const T before = bits_as<T>(old);
    const U next = bits_as<U>(op(before, v));
    if (next == old) return before;
    const U seen = atomicCAS(word, old, next);
    if (seen == old) return before;
    old = seen;
  }
}
#else
template <class T, class Op>
inline T atomic_cas_loop(T* address, T v, Op op) {
  T old;
  __atomic_load(address, &old, __ATOMIC_RELAXED);
  for (;;) {
    using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    T next = op(old, v);
    if (bits_as<U>(next) == bits_as<U>(old)) return old;
    // On failure `old` is reloaded with the value seen.
    if (__atomic_compare_exchange(address, &old, &next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return old;
  }
}
#endif

}  // namespace detail

// *address = *address + value, atomically; returns the old value. Integers wrap.
//   porta::atomic_add(&counts[k], 1);
template <class T>
PORTA_HOST_DEVICE inline T atomic_add(T* address, detail::atomic_value_t<T> value) {
  static_assert(detail::atomic_type_v<T>, "porta::atomic_add: float, double, std::int32_t or std::int64_t");
#if PORTA_DEVICE_PASS
  if constexpr (std::is_same_v<T, std::int64_t>) {
    return static_cast<T>(
        atomicAdd(reinterpret_cast<unsigned long long*>(address), static_cast<unsigned long long>(value)));
  } else {
    return atomicAdd(address, value);
  }
#else
  if constexpr (std::is_integral_v<T>) {
    // Two's complement wrap, without the signed overflow of a plain +.
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(__atomic_fetch_add(reinterpret_cast<U*>(address), static_cast<U>(value), __ATOMIC_RELAXED));
  } else {
    return detail::atomic_cas_loop(address, value, detail::AddOp{});
  }
#endif
}

// *address = porta's min(*address, value), atomically; returns the old value.
//   porta::atomic_min(&lowest[k], x);
template <class T>
PORTA_HOST_DEVICE inline T atomic_min(T* address, detail::atomic_value_t<T> value) {
  static_assert(detail::atomic_type_v<T>, "porta::atomic_min: float, double, std::int32_t or std::int64_t");
#if PORTA_DEVICE_PASS
  if constexpr (std::is_same_v<T, std::int32_t>) return atomicMin(address, value);
#endif
  return detail::atomic_cas_loop(address, value, detail::MinOp{});
}

// *address = porta's max(*address, value), atomically; returns the old value.
//   porta::atomic_max(&highest[k], x);
template <class T>
PORTA_HOST_DEVICE inline T atomic_max(T* address, detail::atomic_value_t<T> value) {
  static_assert(detail::atomic_type_v<T>, "porta::atomic_max: float, double, std::int32_t or std::int64_t");
#if PORTA_DEVICE_PASS
  if constexpr (std::is_same_v<T, std::int32_t>) return atomicMax(address, value);
#endif
  return detail::atomic_cas_loop(address, value, detail::MaxOp{});
}

}  // namespace porta
