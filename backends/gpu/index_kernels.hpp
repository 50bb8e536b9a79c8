// SPDX-License-Identifier: Apache-2.0
// The GPU launchers of views and indexing (strided copies, comparisons, where, take, scatter):
// declarations, plain C++, in the calling convention of kernels.hpp (the caller made the device
// current and validated the arguments; the return value is the vendor's error code as an int).
// Definitions: index_kernels.cuh; instantiations: one file per dtype (instantiate/kernels.cmake).
#pragma once

#include <cstdint>

#include "backends/gpu/kernels.hpp"
#include "porta/abi/backend_v1.h"

namespace porta::detail::gpu {

template <class Api, class T>
struct IndexKernels {
  // rank 1..4; the shape and strides are host arrays, passed to the kernel by value.
  static int copy_strided(int rank, const std::int64_t* shape, const T* src, const std::int64_t* src_strides, T* dst,
                          const std::int64_t* dst_strides, void* stream);
  static int compare(porta_compare_op op, std::int64_t rows, std::int64_t cols, const T* a, std::int64_t a_rs,
                     std::int64_t a_cs, const T* b, std::int64_t b_rs, std::int64_t b_cs, std::int32_t* y,
                     void* stream);
  static int where(std::int64_t n, const std::int32_t* mask, const T* a, std::int64_t a_step, const T* b,
                   std::int64_t b_step, T* y, void* stream);
  static int take(std::int64_t outer, std::int64_t n, std::int64_t inner, const T* x, std::int64_t m,
                  const std::int64_t* idx, T* y, void* stream);
  // Allocates n winner slots from the stream-ordered pool of the current device.
  static int scatter(std::int64_t outer, std::int64_t n, std::int64_t inner, T* y, std::int64_t m,
                     const std::int64_t* idx, const T* v, void* stream);
};

// The ABI's untyped view of IndexKernels.
template <class Api>
struct IndexDispatch {
  template <class F>
  static int typed(porta_dtype dt, F&& f) {
    return launch_typed<Api>(dt, f);
  }
  static int copy_strided(porta_dtype dt, int rank, const std::int64_t* shape, const void* src, const std::int64_t* ss,
                          void* dst, const std::int64_t* ds, void* s) {
    return typed(dt, [&](auto t) {
      using T = decltype(t);
      return IndexKernels<Api, T>::copy_strided(rank, shape, static_cast<const T*>(src), ss, static_cast<T*>(dst), ds,
                                                s);
    });
  }
  static int compare(porta_compare_op op, porta_dtype dt, std::int64_t rows, std::int64_t cols, const void* a,
                     std::int64_t a_rs, std::int64_t a_cs, const void* b, std::int64_t b_rs, std::int64_t b_cs,
                     std::int32_t* y, void* s) {
    return typed(dt, [&](auto t) {
      using T = decltype(t);
      return IndexKernels<Api, T>::compare(op, rows, cols, static_cast<const T*>(a), a_rs, a_cs,
                                           static_cast<const T*>(b), b_rs, b_cs, y, s);
    });
  }
  static int where(porta_dtype dt, std::int64_t n, const std::int32_t* mask, const void* a, std::int64_t a_step,
                   const void* b, std::int64_t b_step, void* y, void* s) {
    return typed(dt, [&](auto t) {
      using T = decltype(t);
      return IndexKernels<Api, T>::where(n, mask, static_cast<const T*>(a), a_step, static_cast<const T*>(b), b_step,
                                         static_cast<T*>(y), s);
    });
  }
  static int take(porta_dtype dt, std::int64_t outer, std::int64_t n, std::int64_t inner, const void* x, std::int64_t m,
                  const std::int64_t* idx, void* y, void* s) {
    return typed(dt, [&](auto t) {
      using T = decltype(t);
      return IndexKernels<Api, T>::take(outer, n, inner, static_cast<const T*>(x), m, idx, static_cast<T*>(y), s);
    });
  }
  static int scatter(porta_dtype dt, std::int64_t outer, std::int64_t n, std::int64_t inner, void* y, std::int64_t m,
                     const std::int64_t* idx, const void* v, void* s) {
    return typed(dt, [&](auto t) {
      using T = decltype(t);
      return IndexKernels<Api, T>::scatter(outer, n, inner, static_cast<T*>(y), m, idx, static_cast<const T*>(v), s);
    });
  }
};

}  // namespace porta::detail::gpu
