// SPDX-License-Identifier: Apache-2.0
// Elementwise maps of the CPU backend: fill, iota, cast, unary, binary (strided, broadcasting),
// binary_scalar and axpy. The arithmetic is always a functor of porta/detail/ops.hpp, the one
// definition every backend shares; this file only decides how the loops run: split across an
// OpenMP team when the array is large enough, each piece a plain loop the compiler vectorises.
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "backends/common/elementwise_ops.hpp"
#include "cpu_common.hpp"
#include "cpu_kernels.hpp"
#include "cpu_math.hpp"
#include "porta/detail/ops.hpp"

namespace porta::detail::cpu {
namespace {

porta_status check_map(int dev, const porta_dtype& dt, std::int64_t n, const void* x, const void* y, const char* fn) {
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  if (!valid_dtype(dt)) return set_error(PORTA_ERR_INVALID, "%s: unknown dtype %d", fn, raw_enum(dt));
  if (porta_status st = check_count(n, fn); st != PORTA_OK) return st;
  if (n > 0 && (x == nullptr || y == nullptr)) return set_error(PORTA_ERR_INVALID, "%s: NULL array", fn);
  return PORTA_OK;
}

// ---- cast ---------------------------------------------------------------------------------------
// Semantics (NaN -> 0, saturation, wrapping) are ops.hpp's ConvertOp, shared with the GPU kernels.
template <class To, class From>
inline To convert(From v) {
  return ConvertOp<To>{}(v);
}

template <class To, class From>
void cast_range(const From* x, To* y, std::int64_t b, std::int64_t e) {
  PORTA_SIMD
  for (std::int64_t i = b; i < e; ++i) y[i] = convert<To>(x[i]);
}

// ---- unary --------------------------------------------------------------------------------------
template <class T, class Op>
void unary_typed(std::int64_t n, const T* x, T* y, std::int64_t grain) {
  parallel_ranges(n, grain, [=](std::int64_t b, std::int64_t e) {
    const Op op{};
    PORTA_SIMD
    for (std::int64_t i = b; i < e; ++i) y[i] = op(x[i]);
  });
}

template <class Op>
porta_status unary_op(porta_dtype dt, std::int64_t n, const void* x, void* y, bool transcendental) {
  with_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    // Integer math ops go through double and a libm call per element.
    const bool slow =
        transcendental || (std::is_integral_v<T> && !std::is_same_v<Op, NegOp> && !std::is_same_v<Op, AbsOp> &&
                           !std::is_same_v<Op, ReluOp> && !std::is_same_v<Op, SquareOp>);
    unary_typed<T, Op>(n, static_cast<const T*>(x), static_cast<T*>(y), slow ? kGrainTranscendental : kGrainCheap);
  });
  return PORTA_OK;
}

// ---- binary -------------------------------------------------------------------------------------
template <class T, class Op>
void binary_flat(std::int64_t n, const T* a, const T* b, T* y, std::int64_t grain) {
  parallel_ranges(n, grain, [=](std::int64_t lo, std::int64_t hi) {
    const Op op{};
    PORTA_SIMD
    for (std::int64_t i = lo; i < hi; ++i) y[i] = op(a[i], b[i]);
  });
}

// y[i] = op(x[i], v) or op(v, x[i]): the operand of stride 0 kept in a register.
template <class T, class Op, bool ScalarFirst>
void binary_with_scalar(std::int64_t n, const T* x, T v, T* y, std::int64_t grain) {
  parallel_ranges(n, grain, [=](std::int64_t lo, std::int64_t hi) {
    const Op op{};
    if constexpr (ScalarFirst) {
      PORTA_SIMD
      for (std::int64_t i = lo; i < hi; ++i) y[i] = op(v, x[i]);
    } else {
      PORTA_SIMD
      for (std::int64_t i = lo; i < hi; ++i) y[i] = op(x[i], v);
    }
  });
}

// Columns [c0, c1) of one row of the strided form; the common stride pairs get their own loops so
// that a row broadcast (stride 0) or a plain row (stride 1) vectorises.
template <class T, class Op>
inline void binary_row(const T* a, std::int64_t a_cs, const T* b, std::int64_t b_cs, T* y, std::int64_t c0,
                       std::int64_t c1) {
  const Op op{};
  if (a_cs == 1 && b_cs == 1) {
    PORTA_SIMD
    for (std::int64_t c = c0; c < c1; ++c) y[c] = op(a[c], b[c]);
  } else if (a_cs == 1 && b_cs == 0) {
    const T bv = b[0];
    PORTA_SIMD
    for (std::int64_t c = c0; c < c1; ++c) y[c] = op(a[c], bv);
  } else if (a_cs == 0 && b_cs == 1) {
    const T av = a[0];
    PORTA_SIMD
    for (std::int64_t c = c0; c < c1; ++c) y[c] = op(av, b[c]);
  } else {
    for (std::int64_t c = c0; c < c1; ++c) y[c] = op(a[c * a_cs], b[c * b_cs]);
  }
}

template <class T, class Op>
void binary_typed(std::int64_t rows, std::int64_t cols, const T* a, std::int64_t a_rs, std::int64_t a_cs, const T* b,
                  std::int64_t b_rs, std::int64_t b_cs, T* y, std::int64_t grain) {
  const std::int64_t n = rows * cols;
  // A row stride only matters with more than one row.
  const bool a_flat = a_cs == 1 && (a_rs == cols || rows == 1);
  const bool b_flat = b_cs == 1 && (b_rs == cols || rows == 1);
  const bool a_scalar = a_cs == 0 && (a_rs == 0 || rows == 1);
  const bool b_scalar = b_cs == 0 && (b_rs == 0 || rows == 1);
  if (a_flat && b_flat) return binary_flat<T, Op>(n, a, b, y, grain);
  if (a_flat && b_scalar) return binary_with_scalar<T, Op, false>(n, a, b[0], y, grain);
  if (a_scalar && b_flat) return binary_with_scalar<T, Op, true>(n, b, a[0], y, grain);
  // General case: split the flat output range, then walk the rows each piece covers.
  parallel_ranges(n, grain, [=](std::int64_t lo, std::int64_t hi) {
    std::int64_t r = lo / cols, c = lo % cols;
    for (std::int64_t i = lo; i < hi; ++r, c = 0) {
      const std::int64_t c1 = std::min(cols, c + (hi - i));
      binary_row<T, Op>(a + r * a_rs, a_cs, b + r * b_rs, b_cs, y + r * cols, c, c1);
      i += c1 - c;
    }
  });
}

// f(functor, slow) for a valid op (the switch every backend shares: elementwise_ops.hpp); slow:
// pow, which goes through libm per element.
template <class F>
porta_status with_binary_op(const porta_binary_op& op, const char* fn, F&& f) {
  if (!in_range(raw_enum(op), 0, PORTA_BINARY_COUNT))
    return set_error(PORTA_ERR_INVALID, "%s: unknown binary op %d", fn, raw_enum(op));
  return backend::with_binary_op(op, PORTA_ERR_INVALID,
                                 [&](auto o) { return f(o, std::is_same_v<decltype(o), PowOp>); });
}

bool mul_overflows(std::int64_t a, std::int64_t b, std::int64_t* out) {
  return __builtin_mul_overflow(a, b, out);
}

}  // namespace

porta_status fill(int dev, porta_dtype dt, std::int64_t n, porta_scalar value, void* y, porta_stream) noexcept {
  if (porta_status st = check_map(dev, dt, n, y, y, "fill"); st != PORTA_OK) return st;
  with_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    const T v = scalar_value<T>(value);
    T* out = static_cast<T*>(y);
    parallel_ranges(n, kGrainCheap, [=](std::int64_t b, std::int64_t e) {
      PORTA_SIMD
      for (std::int64_t i = b; i < e; ++i) out[i] = v;
    });
  });
  return PORTA_OK;
}

porta_status iota(int dev, porta_dtype dt, std::int64_t n, porta_scalar start, porta_scalar step, void* y,
                  porta_stream) noexcept {
  if (porta_status st = check_map(dev, dt, n, y, y, "iota"); st != PORTA_OK) return st;
  with_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    const T s0 = scalar_value<T>(start), ds = scalar_value<T>(step);
    T* out = static_cast<T*>(y);
    parallel_ranges(n, kGrainCheap, [=](std::int64_t b, std::int64_t e) {
      PORTA_SIMD
      for (std::int64_t i = b; i < e; ++i) {
        // start + T(i) * step, never a running sum: each element is rounded once on every backend.
        // Integer indices past the type's range wrap, like the arithmetic.
        T ti;
        if constexpr (std::is_integral_v<T>) {
          ti = static_cast<T>(static_cast<std::make_unsigned_t<T>>(i));
        } else {
          ti = static_cast<T>(i);
        }
        out[i] = AddOp{}(s0, MulOp{}(ti, ds));
      }
    });
  });
  return PORTA_OK;
}

porta_status cast(int dev, porta_dtype from, porta_dtype to, std::int64_t n, const void* x, void* y,
                  porta_stream) noexcept {
  if (porta_status st = check_map(dev, from, n, x, y, "cast"); st != PORTA_OK) return st;
  if (!valid_dtype(to)) return set_error(PORTA_ERR_INVALID, "cast: unknown dtype %d", raw_enum(to));
  if (n == 0) return PORTA_OK;
  const std::size_t sf = dtype_bytes(from), st = dtype_bytes(to);
  if (from == to) {
    if (x != y) std::memmove(y, x, static_cast<std::size_t>(n) * sf);
    return PORTA_OK;
  }
  PORTA_CPU_TRY
  // Elements of different sizes in overlapping memory (in place float -> double) would overwrite
  // inputs not yet read: convert through a temporary.
  const auto* xb = static_cast<const unsigned char*>(x);
  auto* yb = static_cast<unsigned char*>(y);
  const bool overlap = xb < yb + static_cast<std::size_t>(n) * st && yb < xb + static_cast<std::size_t>(n) * sf;
  const bool need_tmp = overlap && !(sf == st && x == y);
  std::unique_ptr<unsigned char[]> tmp;
  unsigned char* dst = yb;
  if (need_tmp) {
    tmp.reset(new unsigned char[static_cast<std::size_t>(n) * st]);
    dst = tmp.get();
  }
  with_dtype(from, [&](auto ftag) {
    using From = decltype(ftag);
    with_dtype(to, [&](auto ttag) {
      using To = decltype(ttag);
      const From* xs = static_cast<const From*>(x);
      To* ys = reinterpret_cast<To*>(dst);
      parallel_ranges(n, kGrainCheap, [=](std::int64_t b, std::int64_t e) { cast_range<To, From>(xs, ys, b, e); });
    });
  });
  if (need_tmp) std::memcpy(y, dst, static_cast<std::size_t>(n) * st);
  return PORTA_OK;
  PORTA_CPU_CATCH("cast")
}

porta_status unary(int dev, porta_unary_op op, porta_dtype dt, std::int64_t n, const void* x, void* y,
                   porta_stream) noexcept {
  if (porta_status st = check_map(dev, dt, n, x, y, "unary"); st != PORTA_OK) return st;
  if (!in_range(raw_enum(op), 0, PORTA_UNARY_COUNT))
    return set_error(PORTA_ERR_INVALID, "unary: unknown unary op %d", raw_enum(op));
  // Float and double transcendentals are porta's own functions, vectorised (cpu_math.cpp).
  if (math_handles(op, dt)) return math_unary(op, dt, n, x, y);
  return backend::with_unary_op(op, PORTA_ERR_INVALID, [&](auto o) {
    using Op = decltype(o);
    constexpr bool transcendental = std::is_same_v<Op, ExpOp> || std::is_same_v<Op, LogOp> ||
                                    std::is_same_v<Op, SinOp> || std::is_same_v<Op, CosOp> ||
                                    std::is_same_v<Op, TanhOp> || std::is_same_v<Op, SigmoidOp>;
    return unary_op<Op>(dt, n, x, y, transcendental);
  });
}

porta_status binary(int dev, porta_binary_op op, porta_dtype dt, std::int64_t rows, std::int64_t cols, const void* a,
                    std::int64_t a_rs, std::int64_t a_cs, const void* b, std::int64_t b_rs, std::int64_t b_cs, void* y,
                    porta_stream) noexcept {
  constexpr const char* fn = "binary";
  std::int64_t n = 0;
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  if (!valid_dtype(dt)) return set_error(PORTA_ERR_INVALID, "%s: unknown dtype %d", fn, raw_enum(dt));
  if (rows < 0 || cols < 0 || mul_overflows(rows, cols, &n))
    return set_error(PORTA_ERR_INVALID, "%s: bad shape %lld x %lld", fn, static_cast<long long>(rows),
                     static_cast<long long>(cols));
  if (n > 0 && (a == nullptr || b == nullptr || y == nullptr))
    return set_error(PORTA_ERR_INVALID, "%s: NULL array", fn);
  return with_binary_op(op, fn, [&](auto opv, bool slow) {
    using Op = decltype(opv);
    if (n == 0) return PORTA_OK;
    with_dtype(dt, [&](auto tag) {
      using T = decltype(tag);
      const bool expensive = slow || (std::is_integral_v<T> && std::is_same_v<Op, DivOp>);
      binary_typed<T, Op>(rows, cols, static_cast<const T*>(a), a_rs, a_cs, static_cast<const T*>(b), b_rs, b_cs,
                          static_cast<T*>(y), expensive ? kGrainTranscendental : kGrainCheap);
    });
    return PORTA_OK;
  });
}

porta_status binary_scalar(int dev, porta_binary_op op, porta_dtype dt, std::int64_t n, const void* x,
                           porta_scalar value, int scalar_first, void* y, porta_stream) noexcept {
  constexpr const char* fn = "binary_scalar";
  if (porta_status st = check_map(dev, dt, n, x, y, fn); st != PORTA_OK) return st;
  return with_binary_op(op, fn, [&](auto opv, bool slow) {
    using Op = decltype(opv);
    if (n == 0) return PORTA_OK;
    with_dtype(dt, [&](auto tag) {
      using T = decltype(tag);
      const T v = scalar_value<T>(value);
      const std::int64_t grain =
          (slow || (std::is_integral_v<T> && std::is_same_v<Op, DivOp>)) ? kGrainTranscendental : kGrainCheap;
      const T* xs = static_cast<const T*>(x);
      T* ys = static_cast<T*>(y);
      if (scalar_first != 0) {
        binary_with_scalar<T, Op, true>(n, xs, v, ys, grain);
      } else {
        binary_with_scalar<T, Op, false>(n, xs, v, ys, grain);
      }
    });
    return PORTA_OK;
  });
}

porta_status axpy(int dev, porta_dtype dt, std::int64_t n, porta_scalar alpha, const void* x, void* y,
                  porta_stream) noexcept {
  if (porta_status st = check_map(dev, dt, n, x, y, "axpy"); st != PORTA_OK) return st;
  with_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    const T al = scalar_value<T>(alpha);
    const T* xs = static_cast<const T*>(x);
    T* ys = static_cast<T*>(y);
    parallel_ranges(n, kGrainCheap, [=](std::int64_t b, std::int64_t e) {
      // alpha * x rounded, then + y: no FMA (-ffp-contract=off), the same bits as the GPU kernels.
      PORTA_SIMD
      for (std::int64_t i = b; i < e; ++i) ys[i] = AddOp{}(MulOp{}(al, xs[i]), ys[i]);
    });
  });
  return PORTA_OK;
}

}  // namespace porta::detail::cpu
