// SPDX-License-Identifier: Apache-2.0
// Elementwise maps: definitions of MapKernels<Api, T> (kernels.hpp). Every op is a functor of
// porta/detail/ops.hpp, the definition the CPU backend uses too.
//
// The contiguous maps are memory-bound, so the kernel is built for bandwidth: a grid of exactly the
// blocks the device keeps resident (occupancy x multiprocessors) strides over the data; each thread
// issues kUnroll independent 16-byte loads per operand before it computes and stores anything, so
// that enough bytes are in flight to cover memory latency (Little's law: about 32 KiB per SM on an
// H200), and all indices are 64-bit. Arrays whose addresses are not 16-byte aligned alike (views)
// take a scalar head until they are, and every map ends with a scalar tail.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "backends/gpu/kernels.hpp"
#include "porta/detail/gpu/api.cuh"
#include "porta/detail/ops.hpp"

namespace porta::detail::gpu {

inline constexpr int kMapUnroll = 2;  // 16-byte vectors per operand per thread and iteration

// Casts follow ops.hpp's ConvertOp: NaN -> 0, out of range saturates, integer narrowing wraps.
template <class To>
using ConvertTo = ConvertOp<To>;  // one definition: ops.hpp

template <class T>
struct ConstantOf {
  T v;
  PORTA_HOST_DEVICE T operator()() const { return v; }
};

template <class Op, class T>
struct WithSecond {  // op(x, v)
  T v;
  PORTA_HOST_DEVICE T operator()(T x) const { return Op{}(x, v); }
};

template <class Op, class T>
struct WithFirst {  // op(v, x)
  T v;
  PORTA_HOST_DEVICE T operator()(T x) const { return Op{}(v, x); }
};

// A broadcast scalar that lives in device memory (binary with both strides 0).
template <class Op, class T, bool First>
struct WithDeviceScalar {
  const T* p;
  __device__ T operator()(T x) const { return First ? Op{}(*p, x) : Op{}(x, *p); }
};

template <class T>
struct AxpyOf {  // alpha * x rounded, then + y: the CPU backend's bits, never an FMA
  T alpha;
  PORTA_HOST_DEVICE T operator()(T x, T y) const { return add_rn(mul_rn(alpha, x), y); }
};

// f applied to element i of the first Arity operands (the others may be NULL).
template <int Arity, class F, class TA, class TB>
__device__ __forceinline__ auto apply_at(const F& f, const TA* a, const TB* b, std::int64_t i) {
  if constexpr (Arity == 0) {
    return f();
  } else if constexpr (Arity == 1) {
    return f(a[i]);
  } else {
    return f(a[i], b[i]);
  }
}

// y[i] = f(), f(a[i]) or f(a[i], b[i]) for i in [0, n). Elements [head, head + nvec * V) go as
// V-wide vectors, the rest one by one.
template <int Arity, int V, class F, class TO, class TA, class TB>
__global__ void __launch_bounds__(kBlockThreads)
    map_kernel(std::int64_t n, std::int64_t head, std::int64_t nvec, F f, TO* y, const TA* a, const TB* b) {
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t nthreads = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  using PO = Pack<TO, V>;
  using PA = Pack<TA, V>;
  using PB = Pack<TB, V>;
  PO* yv = reinterpret_cast<PO*>(y + head);
  const PA* av = reinterpret_cast<const PA*>(a + head);
  const PB* bv = reinterpret_cast<const PB*>(b + head);
  for (std::int64_t base = tid; base < nvec; base += nthreads * kMapUnroll) {
    PA ra[kMapUnroll];
    PB rb[kMapUnroll];
    // All loads first: they are independent, so they are all in flight at once.
#pragma unroll
    for (int u = 0; u < kMapUnroll; ++u) {
      const std::int64_t v = base + u * nthreads;
      if (v < nvec) {
        if constexpr (Arity >= 1) ra[u] = av[v];
        if constexpr (Arity >= 2) rb[u] = bv[v];
      }
    }
#pragma unroll
    for (int u = 0; u < kMapUnroll; ++u) {
      const std::int64_t v = base + u * nthreads;
      if (v < nvec) {
        PO r;
#pragma unroll
        for (int e = 0; e < V; ++e) r.v[e] = static_cast<TO>(apply_at<Arity>(f, ra[u].v, rb[u].v, e));
        yv[v] = r;
      }
    }
  }
  for (std::int64_t i = tid; i < head; i += nthreads) y[i] = static_cast<TO>(apply_at<Arity>(f, a, b, i));
  for (std::int64_t i = head + nvec * V + tid; i < n; i += nthreads)
    y[i] = static_cast<TO>(apply_at<Arity>(f, a, b, i));
}

template <int Arity, class TO, class TA, class TB>
constexpr int map_width() {
  std::size_t w = sizeof(TO);
  if (Arity >= 1 && sizeof(TA) > w) w = sizeof(TA);
  if (Arity >= 2 && sizeof(TB) > w) w = sizeof(TB);
  return static_cast<int>(16 / w);
}

// Elements before p reaches `bytes` alignment, or -1 when it never does (p not element-aligned).
template <class T>
std::int64_t elements_to_align(const T* p, std::size_t bytes) {
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t gap = (bytes - (a & (bytes - 1))) & (bytes - 1);
  return gap % sizeof(T) == 0 ? static_cast<std::int64_t>(gap / sizeof(T)) : -1;
}

template <class Api, int Arity, class F, class TO, class TA = TO, class TB = TO>
int launch_map(std::int64_t n, F f, TO* y, const TA* a, const TB* b, void* stream) {
  if (n <= 0) return 0;
  constexpr int V = map_width<Arity, TO, TA, TB>();
  // The vector part starts where y is aligned to a whole vector; the inputs must be aligned there too.
  std::int64_t head = elements_to_align(y, sizeof(TO) * V);
  bool vec = head >= 0;
  if (vec && Arity >= 1) vec = is_aligned(a + head, sizeof(TA) * V);
  if (vec && Arity >= 2) vec = is_aligned(b + head, sizeof(TB) * V);
  if (!vec || head > n) head = n;
  const std::int64_t nvec = (n - head) / V;
  auto kernel = map_kernel<Arity, V, F, TO, TA, TB>;
  std::int64_t resident = 0;
  typename Api::Error e = resident_grid<Api>(kernel, kBlockThreads, 0, &resident);
  if (e != Api::kSuccess) return static_cast<int>(e);
  const std::int64_t work = nvec > 0 ? (nvec + kMapUnroll - 1) / kMapUnroll : n;
  const std::int64_t grid = clamp_grid((work + kBlockThreads - 1) / kBlockThreads, resident);
  kernel<<<static_cast<unsigned>(grid), kBlockThreads, 0, static_cast<typename Api::Stream>(stream)>>>(n, head, nvec, f,
                                                                                                       y, a, b);
  return static_cast<int>(Api::get_last_error());
}

template <class T>
__global__ void __launch_bounds__(kBlockThreads) iota_kernel(std::int64_t n, T start, T step, T* y) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    // start + T(i) * step, each element rounded once (never a running sum), as on the CPU.
    T ti;
    if constexpr (std::is_integral_v<T>) {
      ti = static_cast<T>(static_cast<std::make_unsigned_t<T>>(i));
    } else {
      ti = static_cast<T>(i);
    }
    y[i] = AddOp{}(start, MulOp{}(ti, step));
  }
}

// The general strided/broadcast binary map: y[r * cols + c] = op(a[r * a_rs + c * a_cs], b[...]).
// Blocks walk rows (grid y) and column tiles (grid x), so a row is read and written coalesced.
template <class Op, class T>
__global__ void __launch_bounds__(kBlockThreads)
    binary_rows_kernel(std::int64_t rows, std::int64_t cols, const T* a, std::int64_t a_rs, std::int64_t a_cs,
                       const T* b, std::int64_t b_rs, std::int64_t b_cs, T* y) {
  const std::int64_t cstride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const T* ar = a + r * a_rs;
    const T* br = b + r * b_rs;
    T* yr = y + r * cols;
    for (std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < cols; c += cstride)
      yr[c] = Op{}(ar[c * a_cs], br[c * b_cs]);
  }
}

// The same for short rows (few columns), flattened so that no thread idles.
template <class Op, class T>
__global__ void __launch_bounds__(kBlockThreads)
    binary_flat_kernel(std::int64_t rows, std::int64_t cols, const T* a, std::int64_t a_rs, std::int64_t a_cs,
                       const T* b, std::int64_t b_rs, std::int64_t b_cs, T* y) {
  const std::int64_t n = rows * cols;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::int64_t r = i / cols, c = i - r * cols;
    y[i] = Op{}(a[r * a_rs + c * a_cs], b[r * b_rs + c * b_cs]);
  }
}

template <class F>
decltype(auto) with_unary_op(porta_unary_op op, F&& f) {
  switch (op) {
    case PORTA_UNARY_NEG:
      return f(NegOp{});
    case PORTA_UNARY_ABS:
      return f(AbsOp{});
    case PORTA_UNARY_SQRT:
      return f(SqrtOp{});
    case PORTA_UNARY_EXP:
      return f(ExpOp{});
    case PORTA_UNARY_LOG:
      return f(LogOp{});
    case PORTA_UNARY_SIN:
      return f(SinOp{});
    case PORTA_UNARY_COS:
      return f(CosOp{});
    case PORTA_UNARY_TANH:
      return f(TanhOp{});
    case PORTA_UNARY_RELU:
      return f(ReluOp{});
    case PORTA_UNARY_SIGMOID:
      return f(SigmoidOp{});
    default:
      return f(SquareOp{});
  }
}

template <class F>
decltype(auto) with_binary_op(porta_binary_op op, F&& f) {
  switch (op) {
    case PORTA_BINARY_ADD:
      return f(AddOp{});
    case PORTA_BINARY_SUB:
      return f(SubOp{});
    case PORTA_BINARY_MUL:
      return f(MulOp{});
    case PORTA_BINARY_DIV:
      return f(DivOp{});
    case PORTA_BINARY_MIN:
      return f(MinimumOp{});
    case PORTA_BINARY_MAX:
      return f(MaximumOp{});
    case PORTA_BINARY_POW:
      return f(PowOp{});
    default:
      return f(ReluGradOp{});
  }
}

template <class Api, class T>
int MapKernels<Api, T>::fill(std::int64_t n, T value, T* y, void* stream) {
  return launch_map<Api, 0>(n, ConstantOf<T>{value}, y, static_cast<const T*>(nullptr), static_cast<const T*>(nullptr),
                            stream);
}

template <class Api, class T>
int MapKernels<Api, T>::iota(std::int64_t n, T start, T step, T* y, void* stream) {
  if (n <= 0) return 0;
  auto kernel = iota_kernel<T>;
  std::int64_t resident = 0;
  typename Api::Error e = resident_grid<Api>(kernel, kBlockThreads, 0, &resident);
  if (e != Api::kSuccess) return static_cast<int>(e);
  const std::int64_t grid = clamp_grid((n + kBlockThreads - 1) / kBlockThreads, resident);
  kernel<<<static_cast<unsigned>(grid), kBlockThreads, 0, static_cast<typename Api::Stream>(stream)>>>(n, start, step,
                                                                                                       y);
  return static_cast<int>(Api::get_last_error());
}

template <class Api, class T>
int MapKernels<Api, T>::cast_from(porta_dtype from, std::int64_t n, const void* x, T* y, void* stream) {
  // A cast between element sizes in overlapping memory would overwrite inputs not yet read; the
  // front end gives cast a fresh output, and equal types in place are a no-op.
  return with_dtype(from, [&](auto f) {
    using From = decltype(f);
    const From* xs = static_cast<const From*>(x);
    if constexpr (std::is_same_v<From, T>) {
      if (static_cast<const void*>(xs) == static_cast<const void*>(y)) return 0;
    }
    return launch_map<Api, 1>(n, ConvertTo<T>{}, y, xs, xs, stream);
  });
}

template <class Api, class T>
int MapKernels<Api, T>::unary(porta_unary_op op, std::int64_t n, const T* x, T* y, void* stream) {
  return with_unary_op(op, [&](auto o) { return launch_map<Api, 1>(n, o, y, x, x, stream); });
}

template <class Api, class T>
int MapKernels<Api, T>::binary(porta_binary_op op, std::int64_t rows, std::int64_t cols, const T* a, std::int64_t a_rs,
                               std::int64_t a_cs, const T* b, std::int64_t b_rs, std::int64_t b_cs, T* y,
                               void* stream) {
  const std::int64_t n = rows * cols;
  if (n <= 0) return 0;
  // Operands that walk y's own layout (row-major, contiguous) and operands that are one scalar.
  const auto dense = [&](std::int64_t rs, std::int64_t cs) {
    return (cs == 1 || cols == 1) && (rs == cols || rows == 1);
  };
  const auto scalar = [&](std::int64_t rs, std::int64_t cs) {
    return (rs == 0 || rows == 1) && (cs == 0 || cols == 1);
  };
  return with_binary_op(op, [&](auto o) -> int {
    using Op = decltype(o);
    if (dense(a_rs, a_cs) && dense(b_rs, b_cs)) return launch_map<Api, 2>(n, o, y, a, b, stream);
    if (dense(a_rs, a_cs) && scalar(b_rs, b_cs))
      return launch_map<Api, 1>(n, WithDeviceScalar<Op, T, false>{b}, y, a, a, stream);
    if (scalar(a_rs, a_cs) && dense(b_rs, b_cs))
      return launch_map<Api, 1>(n, WithDeviceScalar<Op, T, true>{a}, y, b, b, stream);
    const auto s = static_cast<typename Api::Stream>(stream);
    if (cols < 64) {
      auto kernel = binary_flat_kernel<Op, T>;
      std::int64_t resident = 0;
      typename Api::Error e = resident_grid<Api>(kernel, kBlockThreads, 0, &resident);
      if (e != Api::kSuccess) return static_cast<int>(e);
      const std::int64_t grid = clamp_grid((n + kBlockThreads - 1) / kBlockThreads, resident);
      kernel<<<static_cast<unsigned>(grid), kBlockThreads, 0, s>>>(rows, cols, a, a_rs, a_cs, b, b_rs, b_cs, y);
    } else {
      auto kernel = binary_rows_kernel<Op, T>;
      std::int64_t resident = 0;
      typename Api::Error e = resident_grid<Api>(kernel, kBlockThreads, 0, &resident);
      if (e != Api::kSuccess) return static_cast<int>(e);
      const std::int64_t gx = clamp_grid((cols + kBlockThreads - 1) / kBlockThreads, resident);
      std::int64_t gy = resident / gx;
      if (gy < 1) gy = 1;
      if (gy > rows) gy = rows;
      if (gy > 65535) gy = 65535;
      kernel<<<dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy)), kBlockThreads, 0, s>>>(
          rows, cols, a, a_rs, a_cs, b, b_rs, b_cs, y);
    }
    return static_cast<int>(Api::get_last_error());
  });
}

template <class Api, class T>
int MapKernels<Api, T>::binary_scalar(porta_binary_op op, std::int64_t n, const T* x, T value, bool scalar_first, T* y,
                                      void* stream) {
  return with_binary_op(op, [&](auto o) {
    using Op = decltype(o);
    return scalar_first ? launch_map<Api, 1>(n, WithFirst<Op, T>{value}, y, x, x, stream)
                        : launch_map<Api, 1>(n, WithSecond<Op, T>{value}, y, x, x, stream);
  });
}

template <class Api, class T>
int MapKernels<Api, T>::axpy(std::int64_t n, T alpha, const T* x, T* y, void* stream) {
  return launch_map<Api, 2>(n, AxpyOf<T>{alpha}, y, x, static_cast<const T*>(y), stream);
}

}  // namespace porta::detail::gpu
