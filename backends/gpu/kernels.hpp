// SPDX-License-Identifier: Apache-2.0
// The built-in GPU algorithms shared by the CUDA and HIP plugins: declarations. Plain C++ (no
// vendor header), so a plugin's table code can call them from any translation unit.
//
// Layout (ArrayFire's split): this file declares, per dtype, the typed launchers
// (MapKernels<Api, T>, ReduceKernels<Api, T>, ...) and defines KernelDispatch<Api>, which turns the ABI's
// runtime dtype into T. <family>_kernels.cuh hold the definitions. The build instantiates them
// for the NativeApi of the compiler that builds them (nvcc: ApiCuda; LANGUAGE HIP: ApiHip), one
// translation unit per family and dtype so that a build spreads over cores, generated from the
// dtype list (instantiate/kernels.cmake). A plugin's table code sees only these declarations, so
// it instantiates nothing itself and needs no `extern template`: its calls link to those
// translation units, and the plugins' --no-undefined link reports a missing one at build time.
//
// Contract of every launcher: the caller has made the device current and validated the
// arguments (dtypes and ops in range, n >= 0, pointers non-NULL where n > 0). The work is
// enqueued on `stream` (the native stream; NULL is the legacy default stream). The return value
// is the vendor's error code as an int (0 = success): a launch error, or the vendor's
// out-of-memory code when temporary memory could not be had.
#pragma once

#include <cstdint>
#include <type_traits>

#include "backends/common/dtype.hpp"
#include "porta/abi/backend_v1.h"
#include "porta/detail/ops.hpp"

namespace porta::detail::gpu {

struct ApiCuda;
struct ApiHip;

template <class Api, class T>
struct MapKernels {
  static int fill(std::int64_t n, T value, T* y, void* stream);
  static int iota(std::int64_t n, T start, T step, T* y, void* stream);
  // y = convert<T>(x), x of dtype `from` (NaN -> 0 and saturation for float -> integer).
  static int cast_from(porta_dtype from, std::int64_t n, const void* x, T* y, void* stream);
  // y holds the op's result type: T, or the real type for the abs of a complex T.
  static int unary(porta_unary_op op, std::int64_t n, const T* x, void* y, void* stream);
  static int binary(porta_binary_op op, std::int64_t rows, std::int64_t cols, const T* a, std::int64_t a_rs,
                    std::int64_t a_cs, const T* b, std::int64_t b_rs, std::int64_t b_cs, T* y, void* stream);
  static int binary_scalar(porta_binary_op op, std::int64_t n, const T* x, T value, bool scalar_first, T* y,
                           void* stream);
  static int axpy(std::int64_t n, T alpha, const T* x, T* y, void* stream);
};

template <class Api, class T>
struct ReduceKernels {
  // Allocates its partials from the stream-ordered pool of the current device.
  static int reduce(porta_reduce_op op, std::int64_t outer, std::int64_t n, std::int64_t inner, const T* x, T* y,
                    void* stream);
  static int dot(std::int64_t n, const T* x, const T* w, T* y, void* stream);
};

template <class Api, class T>
struct GemmKernels {
  // porta's own tiled GEMM (row-major, transposes, alpha, beta; beta == 0 ignores C).
  static int gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
                  std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc, void* stream);
};

// Sorting and arg-reductions (sort_kernels.cuh): a stable radix sort in porta's key order (keys and, when
// value_bytes is 4 or 8, values of that size carried along), and argmax / argmin of x viewed as
// [outer, n, inner]. Temporaries come from the stream-ordered pool of the current device.
template <class Api, class T>
struct SortKernels {
  static int sort(std::int64_t n, const T* keys_in, T* keys_out, int value_bytes, const void* values_in,
                  void* values_out, bool descending, void* stream);
  static int argreduce(porta_arg_op op, std::int64_t outer, std::int64_t n, std::int64_t inner, const T* x,
                       std::int64_t* y, void* stream);
};

// Scans and random numbers (scan_kernels.cuh, random_kernels.cuh): scans of x viewed as [outer, n, inner]
// along n in the canonical order of porta/detail/scan_order.hpp (op SUM or MAX), and Philox
// random numbers (float and double only). Temporaries come from the stream-ordered pool.
template <class Api, class T>
struct ScanKernels {
  static int scan(porta_reduce_op op, bool exclusive, std::int64_t outer, std::int64_t n, std::int64_t inner,
                  const T* x, T* y, void* stream);
};
template <class Api, class T>
struct RandomKernels {
  static int random(porta_random_dist dist, std::int64_t n, std::uint64_t seed, std::uint64_t stream_id,
                    std::uint64_t offset, T* y, void* stream);
};

// Fused expressions (program_kernels.cuh): map_program, a postfix op list interpreted per element (the
// entry checked the program: kinds, ops, input indices and stack depth).
template <class Api, class T>
struct ProgramKernels {
  static int map_program(std::int64_t n, const porta_program_op* ops, std::int32_t nops, const T* const* inputs,
                         std::int32_t ninputs, T* y, void* stream);
};

// Sparse products (sparse_kernels.cuh): porta's own CSR kernel in the order of
// porta/detail/sparse_order.hpp (float and double; 32- or 64-bit indices), Y = alpha A X + beta Y
// with X cols x k (row stride ldx) and Y rows x k (row stride ldy).
template <class Api, class T>
struct SparseKernels {
  static int spmm(std::int64_t rows, const std::int32_t* row_ptr, const std::int32_t* col, const T* values,
                  std::int64_t k, T alpha, const T* x, std::int64_t ldx, T beta, T* y, std::int64_t ldy, void* stream);
  static int spmm(std::int64_t rows, const std::int64_t* row_ptr, const std::int64_t* col, const T* values,
                  std::int64_t k, T alpha, const T* x, std::int64_t ldx, T beta, T* y, std::int64_t ldy, void* stream);
};

// The ABI's runtime dtype and scalars: backends/common/dtype.hpp.
using backend::scalar_value;
using backend::with_dtype;

// f(T{}) for T the C++ type of dt: the launcher's code. A dtype outside the list (the entries'
// checks keep those out) launches nothing and gives the vendor's invalid-value code.
template <class Api, class F>
int launch_typed(porta_dtype dt, F&& f) {
  int code = static_cast<int>(Api::kInvalidValue);
  with_dtype(dt, [&](auto t) { code = f(t); });
  return code;
}

template <class Api, class T>
struct IndexKernels;  // index_kernels.hpp

// 16-bit GEMM where the vendor's BLAS does not take it (porta's kernel was asked for, or a BLAS
// without a 16-bit gemm): the operands widened to float, porta's float kernel, C rounded once. The
// CPU backend computes the same steps, so porta's kernel gives the same bits on every device.
// Temporaries from the stream-ordered pool: A's and B's stored spans, and C's m x n block twice.
template <class Api, class H>
int gemm_widened(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const H* a,
                 std::int64_t lda, const H* b, std::int64_t ldb, float beta, H* c, std::int64_t ldc, void* stream) {
  constexpr porta_dtype dt = std::is_same_v<H, float16> ? PORTA_F16 : PORTA_BF16;
  const auto s = static_cast<typename Api::Stream>(stream);
  const auto span = [](std::int64_t rows, std::int64_t cols, std::int64_t ld) {
    return rows == 0 || cols == 0 ? std::int64_t(0) : (rows - 1) * ld + cols;
  };
  const std::int64_t na = span(trans_a ? k : m, trans_a ? m : k, lda), nb = span(trans_b ? n : k, trans_b ? k : n, ldb);
  const std::int64_t nc = m * n;
  void* mem[4] = {};
  const std::size_t bytes[4] = {sizeof(float) * static_cast<std::size_t>(na),
                                sizeof(float) * static_cast<std::size_t>(nb),
                                sizeof(float) * static_cast<std::size_t>(nc), sizeof(H) * static_cast<std::size_t>(nc)};
  int code = 0;
  for (int i = 0; i < 4 && code == 0; ++i)
    if (bytes[i] > 0) code = static_cast<int>(Api::malloc_async(&mem[i], bytes[i], s));
  float* fa = static_cast<float*>(mem[0]);
  float* fb = static_cast<float*>(mem[1]);
  float* fc = static_cast<float*>(mem[2]);
  H* hc = static_cast<H*>(mem[3]);
  const std::int64_t shape[2] = {m, n}, c_strides[2] = {ldc, 1}, packed[2] = {n, 1};
  if (code == 0 && na > 0) code = MapKernels<Api, float>::cast_from(dt, na, a, fa, stream);
  if (code == 0 && nb > 0) code = MapKernels<Api, float>::cast_from(dt, nb, b, fb, stream);
  if (code == 0) code = IndexKernels<Api, H>::copy_strided(2, shape, c, c_strides, hc, packed, stream);
  if (code == 0) code = MapKernels<Api, float>::cast_from(dt, nc, hc, fc, stream);
  if (code == 0)
    code = GemmKernels<Api, float>::gemm(trans_a, trans_b, m, n, k, alpha, fa, lda, fb, ldb, beta, fc, n, stream);
  if (code == 0) code = MapKernels<Api, H>::cast_from(PORTA_F32, nc, fc, hc, stream);
  if (code == 0) code = IndexKernels<Api, H>::copy_strided(2, shape, hc, packed, c, c_strides, stream);
  for (void* p : mem)
    if (p != nullptr) {
      const int f = static_cast<int>(Api::free_async(p, s));
      if (code == 0) code = f;
    }
  return code;
}

// The ABI's untyped view of the launchers above. (*): fused programs, sorting and scans are
// compiled for the real and integer types only, GEMM for those and complex (the 16-bit types
// widen to float: gemm_widened) (kernels.cmake); the
// entries' checks refuse the other types (ops.hpp's op_defined_v) before anything is launched.
template <class Api>
struct KernelDispatch {
  static int fill(porta_dtype dt, std::int64_t n, porta_scalar value, void* y, void* s) {
    return launch_typed<Api>(dt, [&](auto t) {
      using T = decltype(t);
      return MapKernels<Api, T>::fill(n, scalar_value<T>(value), static_cast<T*>(y), s);
    });
  }
  static int iota(porta_dtype dt, std::int64_t n, porta_scalar start, porta_scalar step, void* y, void* s) {
    return launch_typed<Api>(dt, [&](auto t) {
      using T = decltype(t);
      return MapKernels<Api, T>::iota(n, scalar_value<T>(start), scalar_value<T>(step), static_cast<T*>(y), s);
    });
  }
  static int cast(porta_dtype from, porta_dtype to, std::int64_t n, const void* x, void* y, void* s) {
    return launch_typed<Api>(to, [&](auto t) {
      using T = decltype(t);
      return MapKernels<Api, T>::cast_from(from, n, x, static_cast<T*>(y), s);
    });
  }
  static int unary(porta_unary_op op, porta_dtype dt, std::int64_t n, const void* x, void* y, void* s) {
    return launch_typed<Api>(dt, [&](auto t) {
      using T = decltype(t);
      return MapKernels<Api, T>::unary(op, n, static_cast<const T*>(x), y, s);
    });
  }
  static int binary(porta_binary_op op, porta_dtype dt, std::int64_t rows, std::int64_t cols, const void* a,
                    std::int64_t a_rs, std::int64_t a_cs, const void* b, std::int64_t b_rs, std::int64_t b_cs, void* y,
                    void* s) {
    return launch_typed<Api>(dt, [&](auto t) {
      using T = decltype(t);
      return MapKernels<Api, T>::binary(op, rows, cols, static_cast<const T*>(a), a_rs, a_cs, static_cast<const T*>(b),
                                        b_rs, b_cs, static_cast<T*>(y), s);
    });
  }
  static int binary_scalar(porta_binary_op op, porta_dtype dt, std::int64_t n, const void* x, porta_scalar value,
                           int scalar_first, void* y, void* s) {
    return launch_typed<Api>(dt, [&](auto t) {
      using T = decltype(t);
      return MapKernels<Api, T>::binary_scalar(op, n, static_cast<const T*>(x), scalar_value<T>(value),
                                               scalar_first != 0, static_cast<T*>(y), s);
    });
  }
  static int map_program(porta_dtype dt, std::int64_t n, const porta_program_op* ops, std::int32_t nops,
                         const void* const* inputs, std::int32_t ninputs, void* y, void* s) {
    return launch_typed<Api>(dt, [&](auto t) {
      using T = decltype(t);
      if constexpr (!op_defined_v<ProgramFamily, T>) {  // (*) below
        return static_cast<int>(Api::kInvalidValue);
      } else {
        const T* in[PORTA_PROGRAM_MAX_INPUTS] = {};
        for (std::int32_t k = 0; k < ninputs; ++k) in[k] = static_cast<const T*>(inputs[k]);
        return ProgramKernels<Api, T>::map_program(n, ops, nops, in, ninputs, static_cast<T*>(y), s);
      }
    });
  }
  static int axpy(porta_dtype dt, std::int64_t n, porta_scalar alpha, const void* x, void* y, void* s) {
    return launch_typed<Api>(dt, [&](auto t) {
      using T = decltype(t);
      return MapKernels<Api, T>::axpy(n, scalar_value<T>(alpha), static_cast<const T*>(x), static_cast<T*>(y), s);
    });
  }
  static int reduce(porta_reduce_op op, porta_dtype dt, std::int64_t outer, std::int64_t n, std::int64_t inner,
                    const void* x, void* y, void* s) {
    return launch_typed<Api>(dt, [&](auto t) {
      using T = decltype(t);
      return ReduceKernels<Api, T>::reduce(op, outer, n, inner, static_cast<const T*>(x), static_cast<T*>(y), s);
    });
  }
  static int dot(porta_dtype dt, std::int64_t n, const void* x, const void* w, void* y, void* s) {
    return launch_typed<Api>(dt, [&](auto t) {
      using T = decltype(t);
      return ReduceKernels<Api, T>::dot(n, static_cast<const T*>(x), static_cast<const T*>(w), static_cast<T*>(y), s);
    });
  }
  static int gemm(porta_dtype dt, bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                  porta_scalar alpha, const void* a, std::int64_t lda, const void* b, std::int64_t ldb,
                  porta_scalar beta, void* c, std::int64_t ldc, void* s) {
    return launch_typed<Api>(dt, [&](auto t) {
      using T = decltype(t);
      if constexpr (is_half_v<T>) {  // the float kernel on widened operands
        return gemm_widened<Api, T>(trans_a, trans_b, m, n, k, float(scalar_value<T>(alpha)), static_cast<const T*>(a),
                                    lda, static_cast<const T*>(b), ldb, float(scalar_value<T>(beta)),
                                    static_cast<T*>(c), ldc, s);
      } else if constexpr (!op_defined_v<GemmFamily, T>) {  // (*)
        return static_cast<int>(Api::kInvalidValue);
      } else {
        return GemmKernels<Api, T>::gemm(trans_a, trans_b, m, n, k, scalar_value<T>(alpha), static_cast<const T*>(a),
                                         lda, static_cast<const T*>(b), ldb, scalar_value<T>(beta), static_cast<T*>(c),
                                         ldc, s);
      }
    });
  }
  static int sort(porta_dtype key_dt, std::int64_t n, const void* keys_in, void* keys_out, int value_bytes,
                  const void* values_in, void* values_out, bool descending, void* s) {
    return launch_typed<Api>(key_dt, [&](auto t) {
      using T = decltype(t);
      if constexpr (!op_defined_v<SortFamily, T>) {  // (*)
        return static_cast<int>(Api::kInvalidValue);
      } else {
        return SortKernels<Api, T>::sort(n, static_cast<const T*>(keys_in), static_cast<T*>(keys_out), value_bytes,
                                         values_in, values_out, descending, s);
      }
    });
  }
  static int argreduce(porta_arg_op op, porta_dtype dt, std::int64_t outer, std::int64_t n, std::int64_t inner,
                       const void* x, std::int64_t* y, void* s) {
    return launch_typed<Api>(dt, [&](auto t) {
      using T = decltype(t);
      if constexpr (!op_defined_v<SortFamily, T>) {  // (*)
        return static_cast<int>(Api::kInvalidValue);
      } else {
        return SortKernels<Api, T>::argreduce(op, outer, n, inner, static_cast<const T*>(x), y, s);
      }
    });
  }
  static int scan(porta_reduce_op op, porta_dtype dt, bool exclusive, std::int64_t outer, std::int64_t n,
                  std::int64_t inner, const void* x, void* y, void* s) {
    return launch_typed<Api>(dt, [&](auto t) {
      using T = decltype(t);
      if constexpr (!op_defined_v<ScanFamily, T>) {  // (*)
        return static_cast<int>(Api::kInvalidValue);
      } else {
        return ScanKernels<Api, T>::scan(op, exclusive, outer, n, inner, static_cast<const T*>(x), static_cast<T*>(y),
                                         s);
      }
    });
  }
  // Sparse products exist for the real types of the list (the entry checked dt and index_dt).
  static int spmm(porta_dtype dt, porta_dtype index_dt, std::int64_t rows, const void* row_ptr, const void* col,
                  const void* values, std::int64_t k, porta_scalar alpha, const void* x, std::int64_t ldx,
                  porta_scalar beta, void* y, std::int64_t ldy, void* s) {
    return launch_typed<Api>(dt, [&](auto t) {
      using T = decltype(t);
      if constexpr (std::is_floating_point_v<T>) {
        const auto run = [&](auto i) {
          using I = decltype(i);
          return SparseKernels<Api, T>::spmm(
              rows, static_cast<const I*>(row_ptr), static_cast<const I*>(col), static_cast<const T*>(values), k,
              scalar_value<T>(alpha), static_cast<const T*>(x), ldx, scalar_value<T>(beta), static_cast<T*>(y), ldy, s);
        };
        return index_dt == PORTA_I32 ? run(std::int32_t{}) : run(std::int64_t{});
      } else {
        return static_cast<int>(Api::kInvalidValue);
      }
    });
  }
  // Random numbers exist for the real types of the list (the entry checked dt).
  static int random(porta_random_dist dist, porta_dtype dt, std::int64_t n, std::uint64_t seed, std::uint64_t stream_id,
                    std::uint64_t offset, void* y, void* s) {
    return launch_typed<Api>(dt, [&](auto t) {
      using T = decltype(t);
      if constexpr (std::is_floating_point_v<T>) {
        return RandomKernels<Api, T>::random(dist, n, seed, stream_id, offset, static_cast<T*>(y), s);
      } else {
        return static_cast<int>(Api::kInvalidValue);
      }
    });
  }
};

}  // namespace porta::detail::gpu
