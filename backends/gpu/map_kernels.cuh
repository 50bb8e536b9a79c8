// SPDX-License-Identifier: Apache-2.0
// Elementwise maps: definitions of MapKernels<Api, T> (kernels.hpp). Every op is a functor of
// porta/detail/ops.hpp, the definition the CPU backend uses too. The contiguous maps run the one map
// kernel of porta/detail/gpu/map.cuh, which user porta::map shares; the strided and broadcast binary
// maps and iota have their own kernels here.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "backends/common/elementwise_ops.hpp"
#include "backends/gpu/kernels.hpp"
#include "porta/detail/gpu/api.cuh"
#include "porta/detail/gpu/map.cuh"
#include "porta/detail/ops.hpp"

namespace porta::detail::gpu {

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

// The contiguous maps' launcher in the plugins' calling convention (void* stream, int status).
template <class Api, class F, class TO, class... TI>
int run_map(void* stream, std::int64_t n, F f, TO* y, const TI*... in) {
  return static_cast<int>(launch_map<Api>(static_cast<typename Api::Stream>(stream), n, f, y, in...));
}

template <class T>
__global__ void __launch_bounds__(kBlockThreads) iota_kernel(std::int64_t n, T start, T step, T* y) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    y[i] = iota_value(start, step, i);  // ops.hpp: the CPU's bits
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

// (*) An op that T does not have (ops.hpp's op_defined_v: complex numbers have no order): the
// entries' checks refused it, and its kernel is never instantiated.
//
// The op's functor (backends/common/elementwise_ops.hpp, the switch every backend shares); the
// entries validated op, so the invalid arm is unreachable, and it says "invalid value" rather than
// computing some other op.
template <class Api, class F>
int with_unary_op(porta_unary_op op, F&& f) {
  return backend::with_unary_op(op, static_cast<int>(Api::kInvalidValue), std::forward<F>(f));
}

template <class Api, class F>
int with_binary_op(porta_binary_op op, F&& f) {
  return backend::with_binary_op(op, static_cast<int>(Api::kInvalidValue), std::forward<F>(f));
}

template <class Api, class T>
int MapKernels<Api, T>::fill(std::int64_t n, T value, T* y, void* stream) {
  return run_map<Api>(stream, n, ConstantOf<T>{value}, y);
}

template <class Api, class T>
int MapKernels<Api, T>::iota(std::int64_t n, T start, T step, T* y, void* stream) {
  if (n <= 0) return 0;
  auto kernel = iota_kernel<T>;
  std::int64_t resident = 0;
  typename Api::Error e = resident_grid<Api>(kernel, kBlockThreads, 0, &resident);
  if (e != Api::kSuccess) return static_cast<int>(e);
  const std::int64_t grid = clamp_grid((n + kBlockThreads - 1) / kBlockThreads, resident);
  return static_cast<int>(Api::launch(kernel, static_cast<unsigned>(grid), kBlockThreads, 0,
                                      static_cast<typename Api::Stream>(stream), n, start, step, y));
}

template <class Api, class T>
int MapKernels<Api, T>::cast_from(porta_dtype from, std::int64_t n, const void* x, T* y, void* stream) {
  // A cast between element sizes in overlapping memory would overwrite inputs not yet read; the
  // front end gives cast a fresh output, and equal types in place are a no-op.
  return launch_typed<Api>(from, [&](auto f) {
    using From = decltype(f);
    const From* xs = static_cast<const From*>(x);
    if constexpr (std::is_same_v<From, T>) {
      if (static_cast<const void*>(xs) == static_cast<const void*>(y)) return 0;
    }
    return run_map<Api>(stream, n, ConvertTo<T>{}, y, xs);
  });
}

template <class Api, class T>
int MapKernels<Api, T>::unary(porta_unary_op op, std::int64_t n, const T* x, void* y, void* stream) {
  return with_unary_op<Api>(op, [&](auto o) {
    using Op = decltype(o);
    if constexpr (op_defined_v<Op, T>) {
      using R = decltype(Op{}(T{}));
      return run_map<Api>(stream, n, o, static_cast<R*>(y), x);
    } else {  // (*) below
      return static_cast<int>(Api::kInvalidValue);
    }
  });
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
  return with_binary_op<Api>(op, [&](auto o) -> int {
    using Op = decltype(o);
    if constexpr (!op_defined_v<Op, T>) {  // (*)
      return static_cast<int>(Api::kInvalidValue);
    } else {
      if (dense(a_rs, a_cs) && dense(b_rs, b_cs)) return run_map<Api>(stream, n, o, y, a, b);
      if (dense(a_rs, a_cs) && scalar(b_rs, b_cs))
        return run_map<Api>(stream, n, WithDeviceScalar<Op, T, false>{b}, y, a);
      if (scalar(a_rs, a_cs) && dense(b_rs, b_cs))
        return run_map<Api>(stream, n, WithDeviceScalar<Op, T, true>{a}, y, b);
      const auto s = static_cast<typename Api::Stream>(stream);
      if (cols < 64) {
        auto kernel = binary_flat_kernel<Op, T>;
        std::int64_t resident = 0;
        typename Api::Error e = resident_grid<Api>(kernel, kBlockThreads, 0, &resident);
        if (e != Api::kSuccess) return static_cast<int>(e);
        const std::int64_t grid = clamp_grid((n + kBlockThreads - 1) / kBlockThreads, resident);
        return static_cast<int>(Api::launch(kernel, static_cast<unsigned>(grid), kBlockThreads, 0, s, rows, cols, a,
                                            a_rs, a_cs, b, b_rs, b_cs, y));
      }
      {
        auto kernel = binary_rows_kernel<Op, T>;
        std::int64_t resident = 0;
        typename Api::Error e = resident_grid<Api>(kernel, kBlockThreads, 0, &resident);
        if (e != Api::kSuccess) return static_cast<int>(e);
        const std::int64_t gx = clamp_grid((cols + kBlockThreads - 1) / kBlockThreads, resident);
        std::int64_t gy = resident / gx;
        if (gy < 1) gy = 1;
        if (gy > rows) gy = rows;
        if (gy > 65535) gy = 65535;
        return static_cast<int>(Api::launch(kernel, dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy)),
                                            kBlockThreads, 0, s, rows, cols, a, a_rs, a_cs, b, b_rs, b_cs, y));
      }
    }
  });
}

template <class Api, class T>
int MapKernels<Api, T>::binary_scalar(porta_binary_op op, std::int64_t n, const T* x, T value, bool scalar_first, T* y,
                                      void* stream) {
  return with_binary_op<Api>(op, [&](auto o) {
    using Op = decltype(o);
    if constexpr (op_defined_v<Op, T>) {
      return scalar_first ? run_map<Api>(stream, n, WithFirst<Op, T>{value}, y, x)
                          : run_map<Api>(stream, n, WithSecond<Op, T>{value}, y, x);
    } else {  // (*)
      return static_cast<int>(Api::kInvalidValue);
    }
  });
}

template <class Api, class T>
int MapKernels<Api, T>::axpy(std::int64_t n, T alpha, const T* x, T* y, void* stream) {
  return run_map<Api>(stream, n, AxpyOp<T>{alpha}, y, x, static_cast<const T*>(y));
}

}  // namespace porta::detail::gpu
