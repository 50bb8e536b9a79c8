// SPDX-License-Identifier: Apache-2.0
// Elementwise maps of the CPU backend: fill, iota, cast, unary, binary (strided, broadcasting),
// binary_scalar and axpy. The arithmetic is always a functor of porta/detail/ops.hpp, the one
// definition every backend shares; this file only decides how the loops run (cpu_map_common.hpp:
// the team, the split, the AVX2 build, streaming stores), each piece a plain loop the compiler
// vectorises.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

#include "backends/common/elementwise_ops.hpp"
#include "cpu_common.hpp"
#include "cpu_kernels.hpp"
#include "cpu_map_common.hpp"
#include "cpu_math.hpp"
#include "porta/detail/ops.hpp"

namespace porta::detail::cpu {
namespace {

porta_status check_map(int dev, const porta_dtype& dt, std::int64_t n, const void* x, const void* y, const char* fn) {
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  return check::elementwise(dt, n, x, y, fn);
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

// ---- unary and binary -----------------------------------------------------------------------------
// Operands of the contiguous maps: an array read element by element, or one value for all.
template <class T>
struct Elems {
  const T* p;
  PORTA_MAP_INLINE T operator[](std::int64_t i) const { return p[i]; }
  const T* array() const { return p; }
};
template <class T>
struct Value {
  T v;
  PORTA_MAP_INLINE T operator[](std::int64_t) const { return v; }
  const T* array() const { return nullptr; }
};

// y[i] = op(x[i]) over [lo, hi); R is the op's result type (a complex abs is real).
template <class T, class Op, class R>
PORTA_MAP_CLONES void unary_range(const T* x, R* y, std::int64_t lo, std::int64_t hi, bool stream) {
  write_range(y, lo, hi, stream, [x](R* dst, std::int64_t i0, std::int64_t len) {
    const Op op{};
    const T* xs = x + i0;
    PORTA_SIMD
    for (std::int64_t j = 0; j < len; ++j) dst[j] = op(xs[j]);
  });
}

// y[i] = op(a[i], b[i]) over [lo, hi), either operand an array or one value.
template <class T, class Op, class A, class B>
PORTA_MAP_CLONES void binary_range(Op op, A a, B b, T* y, std::int64_t lo, std::int64_t hi, bool stream) {
  write_range(y, lo, hi, stream, [op, a, b](T* dst, std::int64_t i0, std::int64_t len) {
    PORTA_SIMD
    for (std::int64_t j = 0; j < len; ++j) dst[j] = op(a[i0 + j], b[i0 + j]);
  });
}

// Whether y shares memory with the array operand x (n elements each): then it is stored normally.
template <class T, class X>
bool aliases(const T* y, X x, std::int64_t n) {
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(T);
  return x.array() != nullptr && bytes_overlap(y, bytes, x.array(), bytes);
}

template <class T, class Op, class R>
void unary_typed(std::int64_t n, const T* x, R* y, bool expensive) {
  const std::size_t in_bytes = static_cast<std::size_t>(n) * sizeof(T), bytes = static_cast<std::size_t>(n) * sizeof(R);
  const bool stream = stream_output(static_cast<double>(in_bytes + bytes), bytes_overlap(y, bytes, x, in_bytes));
  map_split(n, map_threads(n, expensive), y,
            [=](std::int64_t lo, std::int64_t hi) { unary_range<T, Op>(x, y, lo, hi, stream); });
}

template <class Op>
porta_status unary_op(porta_dtype dt, std::int64_t n, const void* x, void* y, bool transcendental) {
  return with_dtype_for<Op>("unary", dt, [&](auto tag) {
    using T = decltype(tag);
    using R = decltype(Op{}(T{}));
    // Integer math ops go through double and a libm call per element; complex ones are several
    // real ones.
    const bool slow = transcendental || is_complex_v<T> ||
                      (std::is_integral_v<T> && !std::is_same_v<Op, NegOp> && !std::is_same_v<Op, AbsOp> &&
                       !std::is_same_v<Op, ReluOp> && !std::is_same_v<Op, SquareOp> && !std::is_same_v<Op, ConjOp>);
    unary_typed<T, Op>(n, static_cast<const T*>(x), static_cast<R*>(y), slow);
  });
}

template <class T, class Op, class A, class B>
void binary_contiguous(std::int64_t n, Op op, A a, B b, T* y, bool expensive) {
  const int arrays = 1 + (a.array() != nullptr) + (b.array() != nullptr);
  const bool stream = stream_output(static_cast<double>(arrays) * static_cast<double>(n) * sizeof(T),
                                    aliases(y, a, n) || aliases(y, b, n));
  map_split(n, map_threads(n, expensive), y,
            [=](std::int64_t lo, std::int64_t hi) { binary_range<T>(op, a, b, y, lo, hi, stream); });
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
                  std::int64_t b_rs, std::int64_t b_cs, T* y, bool expensive) {
  const std::int64_t n = rows * cols;
  // An operand that walks y's own (contiguous, row-major) layout, or one value; a stride only
  // matters along an axis of more than one element. The front end plans a 1-D array as n rows of
  // one column, so `cols == 1` must count as contiguous too (the GPU kernels test the same).
  const auto dense = [&](std::int64_t rs, std::int64_t cs) {
    return (cs == 1 || cols == 1) && (rs == cols || rows == 1);
  };
  const auto scalar = [&](std::int64_t rs, std::int64_t cs) {
    return (rs == 0 || rows == 1) && (cs == 0 || cols == 1);
  };
  if (dense(a_rs, a_cs) && dense(b_rs, b_cs)) return binary_contiguous(n, Op{}, Elems<T>{a}, Elems<T>{b}, y, expensive);
  if (dense(a_rs, a_cs) && scalar(b_rs, b_cs))
    return binary_contiguous(n, Op{}, Elems<T>{a}, Value<T>{b[0]}, y, expensive);
  if (scalar(a_rs, a_cs) && dense(b_rs, b_cs))
    return binary_contiguous(n, Op{}, Value<T>{a[0]}, Elems<T>{b}, y, expensive);
  // General case: split the flat output range, then walk the rows each piece covers.
  map_split(n, map_threads(n, expensive), y, [=](std::int64_t lo, std::int64_t hi) {
    std::int64_t r = lo / cols, c = lo % cols;
    for (std::int64_t i = lo; i < hi; ++r, c = 0) {
      const std::int64_t c1 = std::min(cols, c + (hi - i));
      binary_row<T, Op>(a + r * a_rs, a_cs, b + r * b_rs, b_cs, y + r * cols, c, c1);
      i += c1 - c;
    }
  });
}

template <class T>
PORTA_MAP_CLONES void fill_range(T v, T* y, std::int64_t lo, std::int64_t hi, bool stream) {
  write_range(y, lo, hi, stream, [v](T* dst, std::int64_t, std::int64_t len) {
    PORTA_SIMD
    for (std::int64_t j = 0; j < len; ++j) dst[j] = v;
  });
}

template <class T>
PORTA_MAP_CLONES void iota_range(T start, T step, T* y, std::int64_t lo, std::int64_t hi, bool stream) {
  write_range(y, lo, hi, stream, [start, step](T* dst, std::int64_t i0, std::int64_t len) {
    PORTA_SIMD
    for (std::int64_t j = 0; j < len; ++j) dst[j] = iota_value(start, step, i0 + j);
  });
}

// f(functor, slow) for an op the entry's checks validated (the switch every backend shares:
// elementwise_ops.hpp); slow: pow, which goes through libm per element.
template <class F>
porta_status with_binary_op(const porta_binary_op& op, F&& f) {
  return backend::with_binary_op(op, PORTA_ERR_INVALID,
                                 [&](auto o) { return f(o, std::is_same_v<decltype(o), PowOp>); });
}

}  // namespace

std::int64_t last_level_cache_bytes() noexcept {
  static const std::int64_t bytes = [] {
    try {
      for (const char* index : {"index3", "index2"}) {
        std::ifstream f(std::string("/sys/devices/system/cpu/cpu0/cache/") + index + "/size");
        std::string size;
        if (!(f >> size) || size.empty()) continue;
        const long long k = std::atoll(size.c_str());
        const long long b = size.back() == 'M' ? k << 20 : (size.back() == 'K' ? k << 10 : k);
        if (b > 0) return static_cast<std::int64_t>(b);
      }
    } catch (...) {
    }
    long c = -1;
#if defined(_SC_LEVEL3_CACHE_SIZE)
    c = ::sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    return c > 0 ? static_cast<std::int64_t>(c) : (std::int64_t(32) << 20);
  }();
  return bytes;
}

void copy_bytes(void* dst, const void* src, std::size_t bytes) noexcept {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  const auto n = static_cast<std::int64_t>(bytes);
  const bool stream = stream_output(2.0 * static_cast<double>(bytes), false);
  // Threads as for a map of 4-byte elements.
  map_split(n, map_threads(n / 4, false), d, [=](std::int64_t lo, std::int64_t hi) {
#if defined(__SSE2__)
    if (stream) {
      // Up to d's first 64-byte line, then whole lines with streaming stores, then the rest.
      std::int64_t i =
          std::min(hi, lo + static_cast<std::int64_t>((64 - (reinterpret_cast<std::uintptr_t>(d + lo) & 63)) & 63));
      std::memcpy(d + lo, s + lo, static_cast<std::size_t>(i - lo));
      for (; i + 64 <= hi; i += 64) {
        auto* dv = reinterpret_cast<__m128i*>(d + i);
        const auto* sv = reinterpret_cast<const __m128i*>(s + i);
        for (int k = 0; k < 4; ++k) _mm_stream_si128(dv + k, _mm_loadu_si128(sv + k));
      }
      std::memcpy(d + i, s + i, static_cast<std::size_t>(hi - i));
      _mm_sfence();
      return;
    }
#endif
    std::memcpy(d + lo, s + lo, static_cast<std::size_t>(hi - lo));
  });
}

porta_status fill(int dev, porta_dtype dt, std::int64_t n, porta_scalar value, void* y, porta_stream) noexcept {
  if (porta_status st = check_map(dev, dt, n, y, y, "fill"); st != PORTA_OK) return st;
  const bool known = with_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    const T v = scalar_value<T>(value);
    T* out = static_cast<T*>(y);
    const bool stream = stream_output(static_cast<double>(n) * sizeof(T), false);
    map_split(n, map_threads(n, false), out,
              [=](std::int64_t lo, std::int64_t hi) { fill_range<T>(v, out, lo, hi, stream); });
  });
  return known ? PORTA_OK : unknown_dtype("fill", dt);
}

porta_status iota(int dev, porta_dtype dt, std::int64_t n, porta_scalar start, porta_scalar step, void* y,
                  porta_stream) noexcept {
  if (porta_status st = check_map(dev, dt, n, y, y, "iota"); st != PORTA_OK) return st;
  const bool known = with_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    const T s0 = scalar_value<T>(start), ds = scalar_value<T>(step);
    T* out = static_cast<T*>(y);
    const bool stream = stream_output(static_cast<double>(n) * sizeof(T), false);
    map_split(n, map_threads(n, false), out,
              [=](std::int64_t lo, std::int64_t hi) { iota_range<T>(s0, ds, out, lo, hi, stream); });
  });
  return known ? PORTA_OK : unknown_dtype("iota", dt);
}

porta_status cast(int dev, porta_dtype from, porta_dtype to, std::int64_t n, const void* x, void* y,
                  porta_stream) noexcept {
  if (porta_status st = check_device(dev, "cast"); st != PORTA_OK) return st;
  if (porta_status st = check::cast(from, to, n, x, y); st != PORTA_OK) return st;
  if (n == 0) return PORTA_OK;
  const std::size_t sf = dtype_size(from), st = dtype_size(to);
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
  bool known_to = false;
  const bool known_from = with_dtype(from, [&](auto ftag) {
    using From = decltype(ftag);
    known_to = with_dtype(to, [&](auto ttag) {
      using To = decltype(ttag);
      const From* xs = static_cast<const From*>(x);
      To* ys = reinterpret_cast<To*>(dst);
      map_split(n, map_threads(n, false), ys,
                [=](std::int64_t b, std::int64_t e) { cast_range<To, From>(xs, ys, b, e); });
    });
  });
  if (!known_from || !known_to) return unknown_dtype("cast", known_from ? to : from);
  if (need_tmp) std::memcpy(y, dst, static_cast<std::size_t>(n) * st);
  return PORTA_OK;
  PORTA_CPU_CATCH("cast")
}

porta_status unary(int dev, porta_unary_op op, porta_dtype dt, std::int64_t n, const void* x, void* y,
                   porta_stream) noexcept {
  if (porta_status st = check_device(dev, "unary"); st != PORTA_OK) return st;
  if (porta_status st = check::unary(op, dt, n, x, y); st != PORTA_OK) return st;
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
  if (porta_status st = check::binary(op, dt, rows, cols, a, b, y, &n); st != PORTA_OK) return st;
  return with_binary_op(op, [&](auto opv, bool slow) {
    using Op = decltype(opv);
    if (n == 0) return PORTA_OK;
    return with_dtype_for<Op>(fn, dt, [&](auto tag) {
      using T = decltype(tag);
      const bool expensive = slow || (std::is_integral_v<T> && std::is_same_v<Op, DivOp>);
      binary_typed<T, Op>(rows, cols, static_cast<const T*>(a), a_rs, a_cs, static_cast<const T*>(b), b_rs, b_cs,
                          static_cast<T*>(y), expensive);
    });
  });
}

porta_status binary_scalar(int dev, porta_binary_op op, porta_dtype dt, std::int64_t n, const void* x,
                           porta_scalar value, int scalar_first, void* y, porta_stream) noexcept {
  constexpr const char* fn = "binary_scalar";
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  if (porta_status st = check::binary_scalar(op, dt, n, x, y); st != PORTA_OK) return st;
  return with_binary_op(op, [&](auto opv, bool slow) {
    using Op = decltype(opv);
    if (n == 0) return PORTA_OK;
    return with_dtype_for<Op>(fn, dt, [&](auto tag) {
      using T = decltype(tag);
      const T v = scalar_value<T>(value);
      const bool expensive = slow || (std::is_integral_v<T> && std::is_same_v<Op, DivOp>);
      const Elems<T> xs{static_cast<const T*>(x)};
      T* ys = static_cast<T*>(y);
      if (scalar_first != 0) {
        binary_contiguous(n, Op{}, Value<T>{v}, xs, ys, expensive);
      } else {
        binary_contiguous(n, Op{}, xs, Value<T>{v}, ys, expensive);
      }
    });
  });
}

porta_status axpy(int dev, porta_dtype dt, std::int64_t n, porta_scalar alpha, const void* x, void* y,
                  porta_stream) noexcept {
  if (porta_status st = check_map(dev, dt, n, x, y, "axpy"); st != PORTA_OK) return st;
  const bool known = with_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    T* ys = static_cast<T*>(y);
    binary_contiguous(n, AxpyOp<T>{scalar_value<T>(alpha)}, Elems<T>{static_cast<const T*>(x)}, Elems<T>{ys}, ys,
                      false);
  });
  return known ? PORTA_OK : unknown_dtype("axpy", dt);
}

}  // namespace porta::detail::cpu
