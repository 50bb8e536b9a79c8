// SPDX-License-Identifier: Apache-2.0
// The argument checks of every algorithm entry of the backend table, shared by the CPU backend
// (backends/cpu/) and the GPU plugins (backends/gpu/plugin.hpp), so that every backend rejects the
// same calls with the same message: one message per mistake, spelt once, here. (map_program's check
// lives with the program format it checks, backends/common/program.hpp.)
//
// Each check returns PORTA_OK or an error status with the message set (backend_error.hpp), and
// looks at nothing but its arguments: a backend calls it before it touches a device. Where a
// check computes an element count, it hands it back through an out-parameter. Every enum argument
// is read through its bytes before it is trusted (raw_enum.hpp says why). Plain C++.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/common/backend_error.hpp"
#include "backends/common/dtype.hpp"
#include "backends/common/elementwise_ops.hpp"
#include "porta/abi/backend_v1.h"

namespace porta::detail::backend::check {

// ---- the pieces every entry checks --------------------------------------------------------------

inline porta_status dtype(const porta_dtype& dt, const char* fn) noexcept {
  if (!valid_dtype(dt)) return unknown_dtype(fn, dt);
  return PORTA_OK;
}

inline porta_status count(std::int64_t n, const char* fn) noexcept {
  if (n < 0) return set_error(PORTA_ERR_INVALID, "%s: negative element count %lld", fn, static_cast<long long>(n));
  return PORTA_OK;
}

inline porta_status null_array(const char* fn) noexcept {
  return set_error(PORTA_ERR_INVALID, "%s: NULL array", fn);
}

inline porta_status pointers(std::int64_t n, const void* x, const void* y, const char* fn) noexcept {
  if (n > 0 && (x == nullptr || y == nullptr)) return null_array(fn);
  return PORTA_OK;
}

// rows x cols into *n when both are >= 0 and the product fits in an int64.
inline porta_status shape(std::int64_t rows, std::int64_t cols, std::int64_t* n, const char* fn) noexcept {
  if (rows < 0 || cols < 0 || __builtin_mul_overflow(rows, cols, n))
    return set_error(PORTA_ERR_INVALID, "%s: bad shape %lld x %lld", fn, static_cast<long long>(rows),
                     static_cast<long long>(cols));
  return PORTA_OK;
}

// [outer, n, inner], an array reduced or scanned along its middle axis: *lines = outer * inner
// (the outputs of a reduction), *total = lines * n (the elements).
inline porta_status shape(std::int64_t outer, std::int64_t n, std::int64_t inner, std::int64_t* lines,
                          std::int64_t* total, const char* fn) noexcept {
  if (outer < 0 || n < 0 || inner < 0 || __builtin_mul_overflow(outer, inner, lines) ||
      __builtin_mul_overflow(*lines, n, total))
    return set_error(PORTA_ERR_INVALID, "%s: bad shape [%lld, %lld, %lld]", fn, static_cast<long long>(outer),
                     static_cast<long long>(n), static_cast<long long>(inner));
  return PORTA_OK;
}

inline bool overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) noexcept {
  const auto* pa = static_cast<const unsigned char*>(a);
  const auto* pb = static_cast<const unsigned char*>(b);
  return pa < pb + b_bytes && pb < pa + a_bytes;
}

// ---- maps ---------------------------------------------------------------------------------------

// dtype, count and pointers: what every elementwise entry (fill, iota, axpy, ...) checks.
inline porta_status elementwise(const porta_dtype& dt, std::int64_t n, const void* x, const void* y,
                                const char* fn) noexcept {
  if (const porta_status st = dtype(dt, fn); st != PORTA_OK) return st;
  if (const porta_status st = count(n, fn); st != PORTA_OK) return st;
  return pointers(n, x, y, fn);
}

// Both dtypes, the count and the pointers. A backend that converts in one pass over the elements
// (the GPU plugins) also calls cast_in_one_pass; the CPU backend stages an overlapping cast.
inline porta_status cast(const porta_dtype& from, const porta_dtype& to, std::int64_t n, const void* x,
                         const void* y) noexcept {
  if (const porta_status st = dtype(from, "cast"); st != PORTA_OK) return st;
  return elementwise(to, n, x, y, "cast");
}

// Elements of different sizes in overlapping memory would overwrite inputs not yet read.
inline porta_status cast_in_one_pass(const porta_dtype& from, const porta_dtype& to, std::int64_t n, const void* x,
                                     const void* y) noexcept {
  if (n > 0 && x != y) {
    if (overlap(x, static_cast<std::size_t>(n) * dtype_size(from), y, static_cast<std::size_t>(n) * dtype_size(to)))
      return set_error(PORTA_ERR_INVALID, "cast: input and output overlap without being the same array");
  } else if (n > 0 && dtype_size(from) != dtype_size(to)) {
    return set_error(PORTA_ERR_INVALID, "cast: in place between %s and %s (different element sizes)", dtype_name(from),
                     dtype_name(to));
  }
  return PORTA_OK;
}

// What a complex dtype lacks (ops.hpp's op_defined_v, at run time): PORTA_ERR_UNSUPPORTED naming
// the dtype, before any backend dispatches, so that no backend instantiates the op for it.
inline porta_status defined_for(bool defined_for_complex, const porta_dtype& dt, const char* fn) noexcept {
  return defined_for_complex || !dtype_is_complex(dt) ? PORTA_OK : unsupported_dtype(fn, dt);
}
// The same for a kernel family of ops.hpp (SortFamily, ScanFamily, ...), from op_defined_v itself.
template <class Family>
porta_status defined_for(const porta_dtype& dt, const char* fn) noexcept {
  bool defined = true;
  with_dtype(dt, [&](auto t) { defined = op_defined_v<Family, decltype(t)>; });
  return defined ? PORTA_OK : unsupported_dtype(fn, dt);
}
struct IsComplexOp {
  template <class Op>
  bool operator()(Op) const {
    return defined_for_complex<Op>::value;
  }
};

inline porta_status unary(const porta_unary_op& op, const porta_dtype& dt, std::int64_t n, const void* x,
                          const void* y) noexcept {
  if (const porta_status st = dtype(dt, "unary"); st != PORTA_OK) return st;
  if (!in_range(raw_enum(op), 0, PORTA_UNARY_COUNT))
    return set_error(PORTA_ERR_INVALID, "unary: unknown unary op %d", raw_enum(op));
  if (const porta_status st = defined_for(with_unary_op(op, false, IsComplexOp{}), dt, "unary"); st != PORTA_OK)
    return st;
  return elementwise(dt, n, x, y, "unary");
}

inline porta_status binary_op(const porta_binary_op& op, const porta_dtype& dt, const char* fn) noexcept {
  if (!in_range(raw_enum(op), 0, PORTA_BINARY_COUNT))
    return set_error(PORTA_ERR_INVALID, "%s: unknown binary op %d", fn, raw_enum(op));
  return defined_for(with_binary_op(op, false, IsComplexOp{}), dt, fn);
}

// *n: rows * cols, the elements of y.
inline porta_status binary(const porta_binary_op& op, const porta_dtype& dt, std::int64_t rows, std::int64_t cols,
                           const void* a, const void* b, const void* y, std::int64_t* n) noexcept {
  constexpr const char* fn = "binary";
  if (const porta_status st = dtype(dt, fn); st != PORTA_OK) return st;
  if (const porta_status st = binary_op(op, dt, fn); st != PORTA_OK) return st;
  if (const porta_status st = shape(rows, cols, n, fn); st != PORTA_OK) return st;
  if (*n > 0 && (a == nullptr || b == nullptr || y == nullptr)) return null_array(fn);
  return PORTA_OK;
}

inline porta_status binary_scalar(const porta_binary_op& op, const porta_dtype& dt, std::int64_t n, const void* x,
                                  const void* y) noexcept {
  constexpr const char* fn = "binary_scalar";
  if (const porta_status st = dtype(dt, fn); st != PORTA_OK) return st;
  if (const porta_status st = binary_op(op, dt, fn); st != PORTA_OK) return st;
  return elementwise(dt, n, x, y, fn);
}

// ---- reductions ---------------------------------------------------------------------------------

// x viewed as [outer, n, inner] reduced over n into y[outer * inner]; n may be 0 (identities).
inline porta_status reduce(const porta_reduce_op& op, const porta_dtype& dt, std::int64_t outer, std::int64_t n,
                           std::int64_t inner, const void* x, const void* y) noexcept {
  constexpr const char* fn = "reduce";
  if (const porta_status st = dtype(dt, fn); st != PORTA_OK) return st;
  if (!in_range(raw_enum(op), 0, PORTA_REDUCE_COUNT))
    return set_error(PORTA_ERR_INVALID, "%s: unknown reduce op %d", fn, raw_enum(op));
  // Sums and products of complex numbers; no order, and SUMSQ's x * x is not |x|^2.
  if (const porta_status st = defined_for(op == PORTA_REDUCE_SUM || op == PORTA_REDUCE_PROD, dt, fn); st != PORTA_OK)
    return st;
  std::int64_t outputs = 0, total = 0;
  if (const porta_status st = shape(outer, n, inner, &outputs, &total, fn); st != PORTA_OK) return st;
  if (outputs > 0 && (y == nullptr || (total > 0 && x == nullptr))) return null_array(fn);
  return PORTA_OK;
}

inline porta_status dot(const porta_dtype& dt, std::int64_t n, const void* x, const void* w, const void* y) noexcept {
  constexpr const char* fn = "dot";
  if (const porta_status st = dtype(dt, fn); st != PORTA_OK) return st;
  if (const porta_status st = count(n, fn); st != PORTA_OK) return st;
  if (y == nullptr || (n > 0 && (x == nullptr || w == nullptr))) return null_array(fn);
  return PORTA_OK;
}

inline porta_status argreduce(const porta_arg_op& op, const porta_dtype& dt, std::int64_t outer, std::int64_t n,
                              std::int64_t inner, const void* x, const void* y) noexcept {
  constexpr const char* fn = "argreduce";
  if (const porta_status st = dtype(dt, fn); st != PORTA_OK) return st;
  if (!in_range(raw_enum(op), 0, PORTA_ARG_COUNT))
    return set_error(PORTA_ERR_INVALID, "%s: unknown arg op %d", fn, raw_enum(op));
  if (const porta_status st = defined_for<SortFamily>(dt, fn); st != PORTA_OK) return st;
  std::int64_t outputs = 0, total = 0;
  if (const porta_status st = shape(outer, n, inner, &outputs, &total, fn); st != PORTA_OK) return st;
  if (outputs > 0 && n == 0)
    return set_error(PORTA_ERR_INVALID, "%s: an empty axis has no arg%s", fn, op == PORTA_ARG_MAX ? "max" : "min");
  if (outputs > 0 && (x == nullptr || y == nullptr)) return null_array(fn);
  return PORTA_OK;
}

// ---- gemm ---------------------------------------------------------------------------------------

// A rows x cols matrix with row stride ld: its last element must be addressable in 64 bits.
inline bool matrix_extent_fits(std::int64_t rows, std::int64_t cols, std::int64_t ld) noexcept {
  if (rows == 0 || cols == 0) return true;
  std::int64_t last = 0;
  return !__builtin_mul_overflow(rows - 1, ld, &last) && !__builtin_add_overflow(last, cols, &last);
}

// Row-major shapes: A is m x k (k x m when transposed), B is k x n (n x k), C is m x n. An empty
// matrix's leading dimension is not looked at, nor are the pointers when C is empty: the entry
// has nothing to do.
inline porta_status gemm(const porta_dtype& dt, int trans_a, int trans_b, std::int64_t m, std::int64_t n,
                         std::int64_t k, const void* a, std::int64_t lda, const void* b, std::int64_t ldb,
                         const void* c, std::int64_t ldc) noexcept {
  constexpr const char* fn = "gemm";
  if (const porta_status st = dtype(dt, fn); st != PORTA_OK) return st;
  if (const porta_status st = defined_for<GemmFamily>(dt, fn); st != PORTA_OK) return st;
  if (m < 0 || n < 0 || k < 0)
    return set_error(PORTA_ERR_INVALID, "%s: negative dimension (m %lld, n %lld, k %lld)", fn,
                     static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k));
  const std::int64_t a_rows = trans_a ? k : m, a_cols = trans_a ? m : k;
  const std::int64_t b_rows = trans_b ? n : k, b_cols = trans_b ? k : n;
  if ((a_rows > 0 && lda < a_cols) || (b_rows > 0 && ldb < b_cols) || (m > 0 && ldc < n))
    return set_error(PORTA_ERR_INVALID,
                     "%s: leading dimension too small (lda %lld for %lld columns, ldb %lld for %lld, ldc %lld for "
                     "%lld)",
                     fn, static_cast<long long>(lda), static_cast<long long>(a_cols), static_cast<long long>(ldb),
                     static_cast<long long>(b_cols), static_cast<long long>(ldc), static_cast<long long>(n));
  if (!matrix_extent_fits(a_rows, a_cols, lda) || !matrix_extent_fits(b_rows, b_cols, ldb) ||
      !matrix_extent_fits(m, n, ldc))
    return set_error(PORTA_ERR_INVALID, "%s: matrix extent overflows 64-bit indexing", fn);
  if (m == 0 || n == 0) return PORTA_OK;
  if (c == nullptr || (k > 0 && (a == nullptr || b == nullptr))) return null_array(fn);
  return PORTA_OK;
}

// ---- sparse matrices ----------------------------------------------------------------------------

// The CSR structure itself is not read here (it lives in device memory): the front end validated it.
inline porta_status spmm(const porta_dtype& dt, const porta_dtype& index_dt, std::int64_t rows, std::int64_t cols,
                         std::int64_t nnz, const void* row_ptr, const void* col_idx, const void* values, std::int64_t k,
                         const void* x, std::int64_t ldx, const void* y, std::int64_t ldy) noexcept {
  constexpr const char* fn = "spmm";
  if (const porta_status st = dtype(dt, fn); st != PORTA_OK) return st;
  if (dt != PORTA_F32 && dt != PORTA_F64)
    return set_error(PORTA_ERR_INVALID, "%s: values must be float32 or float64 (got %s)", fn, dtype_name(dt));
  if (index_dt != PORTA_I32 && index_dt != PORTA_I64)
    return set_error(PORTA_ERR_INVALID, "%s: indices must be int32 or int64", fn);
  if (rows < 0 || cols < 0 || nnz < 0 || k < 0)
    return set_error(PORTA_ERR_INVALID, "%s: negative size (rows %lld, cols %lld, nnz %lld, k %lld)", fn,
                     static_cast<long long>(rows), static_cast<long long>(cols), static_cast<long long>(nnz),
                     static_cast<long long>(k));
  if ((cols > 0 && ldx < k) || (rows > 0 && ldy < k))
    return set_error(PORTA_ERR_INVALID, "%s: row stride too small (ldx %lld, ldy %lld for %lld columns)", fn,
                     static_cast<long long>(ldx), static_cast<long long>(ldy), static_cast<long long>(k));
  if (!matrix_extent_fits(cols, k, ldx) || !matrix_extent_fits(rows, k, ldy))
    return set_error(PORTA_ERR_INVALID, "%s: matrix extent overflows 64-bit indexing", fn);
  if (rows == 0 || k == 0) return PORTA_OK;
  if (row_ptr == nullptr || y == nullptr || (nnz > 0 && (col_idx == nullptr || values == nullptr || x == nullptr)))
    return null_array(fn);
  return PORTA_OK;
}

// ---- dense linear algebra ----------------------------------------------------------------------

// The element counts of one matrix's operands of a linalg call (backend_v1.h says what each holds),
// filled in by check::linalg: a backend steps through the batch with them.
struct LinalgSizes {
  std::int64_t a = 0, b = 0, c = 0, d = 0;
};

// Every backend's solver library takes 32-bit sizes for at least some of these calls (LAPACK with
// LP64 integers, cuSOLVER's legacy API): a dimension past 2^31 - 1 is refused here, by name.
inline porta_status linalg(const porta_linalg_op& op, const porta_dtype& dt, std::int64_t batch, std::int64_t m,
                           std::int64_t n, std::int64_t k, const void* a, const void* b, const void* c, const void* d,
                           const std::int32_t* info, std::uint32_t flags, LinalgSizes* sizes) noexcept {
  constexpr const char* fn = "linalg";
  const int o = raw_enum(op);
  if (!in_range(o, 0, PORTA_LINALG_COUNT)) return set_error(PORTA_ERR_INVALID, "%s: unknown op %d", fn, o);
  if (const porta_status st = dtype(dt, fn); st != PORTA_OK) return st;
  if (dt != PORTA_F32 && dt != PORTA_F64)
    return set_error(PORTA_ERR_INVALID, "%s: matrices must be float32 or float64 (got %s)", fn, dtype_name(dt));
  constexpr std::int64_t kMaxDim = 2147483647;
  if (batch < 0 || m < 0 || n < 0 || k < 0 || m > kMaxDim || n > kMaxDim || k > kMaxDim)
    return set_error(PORTA_ERR_INVALID, "%s: bad size (batch %lld, m %lld, n %lld, k %lld)", fn,
                     static_cast<long long>(batch), static_cast<long long>(m), static_cast<long long>(n),
                     static_cast<long long>(k));
  if ((o == PORTA_LINALG_SOLVE || o == PORTA_LINALG_CHOLESKY || o == PORTA_LINALG_EIGH) && m != n)
    return set_error(PORTA_ERR_INVALID, "%s: the matrix must be square (got %lld x %lld)", fn,
                     static_cast<long long>(m), static_cast<long long>(n));
  if (o == PORTA_LINALG_SVD && m < n)
    return set_error(PORTA_ERR_INVALID, "%s: svd needs m >= n (got %lld x %lld)", fn, static_cast<long long>(m),
                     static_cast<long long>(n));
  // The flags each op knows: a row-major caller's ways to skip a transpose.
  const std::uint32_t known = o == PORTA_LINALG_SVD                                  ? PORTA_LINALG_SVD_FULL
                              : o == PORTA_LINALG_CHOLESKY || o == PORTA_LINALG_EIGH ? PORTA_LINALG_UPPER
                              : o == PORTA_LINALG_SOLVE                              ? PORTA_LINALG_TRANSPOSE
                                                                                     : 0u;
  if ((flags & ~known) != 0u)
    return set_error(PORTA_ERR_INVALID, "%s: flags 0x%x not known for op %d", fn, static_cast<unsigned>(flags), o);
  LinalgSizes z;
  const std::int64_t p = m < n ? m : n;
  bool overflow = __builtin_mul_overflow(m, n, &z.a);
  switch (o) {
    case PORTA_LINALG_SOLVE:
      overflow = overflow || __builtin_mul_overflow(n, k, &z.b);
      break;
    case PORTA_LINALG_QR:
      overflow = overflow || __builtin_mul_overflow(p, n, &z.b);
      break;
    case PORTA_LINALG_EIGH:
      z.b = n;
      break;
    case PORTA_LINALG_SVD:
      z.b = n;
      overflow = overflow || __builtin_mul_overflow(m, (flags & PORTA_LINALG_SVD_FULL) != 0u ? m : n, &z.c) ||
                 __builtin_mul_overflow(n, n, &z.d);
      break;
    default:
      break;
  }
  std::int64_t total = 0;
  for (const std::int64_t e : {z.a, z.b, z.c, z.d}) overflow = overflow || __builtin_mul_overflow(e, batch, &total);
  if (overflow) return set_error(PORTA_ERR_INVALID, "%s: matrix extent overflows 64-bit indexing", fn);
  if (sizes != nullptr) *sizes = z;
  if (batch == 0 || n == 0 || m == 0) return PORTA_OK;
  if (a == nullptr || info == nullptr || (z.b > 0 && b == nullptr) || (z.c > 0 && c == nullptr) ||
      (z.d > 0 && d == nullptr))
    return null_array(fn);
  return PORTA_OK;
}

// ---- Fourier transforms ------------------------------------------------------------------------

// What one fft call transforms, filled in by check::fft: the sizes of the transformed axes (1 past
// the rank) and the real elements of one array of the batch in x and in y.
struct FftSizes {
  std::int64_t n[3] = {1, 1, 1};
  std::int64_t x = 0, y = 0;
};

inline porta_status fft(const porta_fft_kind& kind, const porta_dtype& dt, std::int32_t rank, std::int64_t n0,
                        std::int64_t n1, std::int64_t n2, std::int64_t batch, const void* x, const void* y,
                        double scale, FftSizes* sizes) noexcept {
  constexpr const char* fn = "fft";
  const int k = raw_enum(kind);
  if (!in_range(k, 0, PORTA_FFT_COUNT)) return set_error(PORTA_ERR_INVALID, "%s: unknown kind %d", fn, k);
  if (const porta_status st = dtype(dt, fn); st != PORTA_OK) return st;
  if (dt != PORTA_F32 && dt != PORTA_F64)
    return set_error(PORTA_ERR_INVALID, "%s: the real type must be float32 or float64 (got %s)", fn, dtype_name(dt));
  if (rank < 1 || rank > 3) return set_error(PORTA_ERR_INVALID, "%s: rank must be 1, 2 or 3 (got %d)", fn, rank);
  const std::int64_t given[3] = {n0, n1, n2};
  FftSizes z;
  for (int i = 0; i < 3; ++i) {
    if (i < rank && given[i] < 1)
      return set_error(PORTA_ERR_INVALID, "%s: axis %d has %lld points (at least 1 is needed)", fn, i,
                       static_cast<long long>(given[i]));
    if (i >= rank && given[i] != 1)
      return set_error(PORTA_ERR_INVALID, "%s: n%d must be 1 past rank %d (got %lld)", fn, i, rank,
                       static_cast<long long>(given[i]));
    z.n[i] = given[i];
  }
  if (batch < 0) return set_error(PORTA_ERR_INVALID, "%s: negative batch %lld", fn, static_cast<long long>(batch));
  if (!(scale == scale) || scale - scale != 0.0)
    return set_error(PORTA_ERR_INVALID, "%s: the scale must be finite", fn);
  // Real elements of one array: the lead axes, then the last axis whole or halved, complex or real.
  const std::int64_t last = z.n[rank - 1];
  std::int64_t lead = 1, real = 0, half = 0, complex_full = 0, complex_half = 0, total = 0;
  bool overflow = false;
  for (int i = 0; i < rank - 1; ++i) overflow = overflow || __builtin_mul_overflow(lead, z.n[i], &lead);
  overflow = overflow || __builtin_mul_overflow(lead, last, &real) ||
             __builtin_mul_overflow(lead, last / 2 + 1, &half) || __builtin_mul_overflow(real, 2, &complex_full) ||
             __builtin_mul_overflow(half, 2, &complex_half);
  switch (k) {
    case PORTA_FFT_R2C:
      z.x = real;
      z.y = complex_half;
      break;
    case PORTA_FFT_C2R:
      z.x = complex_half;
      z.y = real;
      break;
    default:
      z.x = z.y = complex_full;
  }
  const std::int64_t bytes = static_cast<std::int64_t>(dtype_size(dt));
  overflow =
      overflow || __builtin_mul_overflow(complex_full, batch, &total) || __builtin_mul_overflow(total, bytes, &total);
  if (overflow) return set_error(PORTA_ERR_INVALID, "%s: the arrays' extent overflows 64-bit indexing", fn);
  if (sizes != nullptr) *sizes = z;
  if (batch == 0) return PORTA_OK;
  if (x == nullptr || y == nullptr) return null_array(fn);
  if (overlap(x, static_cast<std::size_t>(z.x * batch * bytes), y, static_cast<std::size_t>(z.y * batch * bytes)))
    return set_error(PORTA_ERR_INVALID, "%s: x and y overlap", fn);
  return PORTA_OK;
}

// ---- views and indexing -------------------------------------------------------------------------

// *n: the number of elements copied.
inline porta_status copy_strided(const porta_dtype& dt, std::int32_t rank, const std::int64_t* dims, const void* src,
                                 const std::int64_t* src_strides, const void* dst, const std::int64_t* dst_strides,
                                 std::int64_t* n) noexcept {
  constexpr const char* fn = "copy_strided";
  if (const porta_status st = dtype(dt, fn); st != PORTA_OK) return st;
  if (rank < 1 || rank > 4 || dims == nullptr || src_strides == nullptr || dst_strides == nullptr)
    return set_error(PORTA_ERR_INVALID, "%s: rank %d (1 to 4) or NULL shape or strides", fn, static_cast<int>(rank));
  *n = 1;
  for (int i = 0; i < rank; ++i)
    if (const porta_status st = shape(*n, dims[i], n, fn); st != PORTA_OK) return st;
  if (*n > 0 && (src == nullptr || dst == nullptr)) return null_array(fn);
  return PORTA_OK;
}

// *n: rows * cols, the elements of y.
inline porta_status compare(const porta_compare_op& op, const porta_dtype& dt, std::int64_t rows, std::int64_t cols,
                            const void* a, const void* b, const std::int32_t* y, std::int64_t* n) noexcept {
  constexpr const char* fn = "compare";
  if (const porta_status st = dtype(dt, fn); st != PORTA_OK) return st;
  if (!in_range(raw_enum(op), 0, PORTA_COMPARE_COUNT))
    return set_error(PORTA_ERR_INVALID, "%s: unknown comparison %d", fn, raw_enum(op));
  if (const porta_status st = defined_for(op == PORTA_COMPARE_EQ || op == PORTA_COMPARE_NE, dt, fn); st != PORTA_OK)
    return st;
  if (const porta_status st = shape(rows, cols, n, fn); st != PORTA_OK) return st;
  if (*n > 0 && (a == nullptr || b == nullptr || y == nullptr)) return null_array(fn);
  return PORTA_OK;
}

inline porta_status where(const porta_dtype& dt, std::int64_t n, const std::int32_t* mask, const void* a,
                          std::int64_t a_step, const void* b, std::int64_t b_step, const void* y) noexcept {
  constexpr const char* fn = "where";
  if (const porta_status st = dtype(dt, fn); st != PORTA_OK) return st;
  if (const porta_status st = count(n, fn); st != PORTA_OK) return st;
  if ((a_step != 0 && a_step != 1) || (b_step != 0 && b_step != 1))
    return set_error(PORTA_ERR_INVALID, "%s: steps must be 0 or 1 (a_step %lld, b_step %lld)", fn,
                     static_cast<long long>(a_step), static_cast<long long>(b_step));
  if (n > 0 && (mask == nullptr || a == nullptr || b == nullptr || y == nullptr)) return null_array(fn);
  return PORTA_OK;
}

// take and scatter: x (or y) is [outer, n, inner], the other side [outer, m, inner]. *rows is
// outer * m, *total the elements of the [outer, m, inner] side.
inline porta_status gather_scatter(const char* fn, const porta_dtype& dt, std::int64_t outer, std::int64_t n,
                                   std::int64_t inner, const void* big, std::int64_t m, const std::int64_t* idx,
                                   const void* small, std::int64_t* rows, std::int64_t* total) noexcept {
  std::int64_t big_total = 0;
  if (const porta_status st = dtype(dt, fn); st != PORTA_OK) return st;
  if (const porta_status st = shape(outer, m, rows, fn); st != PORTA_OK) return st;
  if (const porta_status st = shape(*rows, inner, total, fn); st != PORTA_OK) return st;
  if (const porta_status st = shape(outer, n, &big_total, fn); st != PORTA_OK) return st;
  if (const porta_status st = shape(big_total, inner, &big_total, fn); st != PORTA_OK) return st;
  if (*total > 0 && (idx == nullptr || small == nullptr || (big_total > 0 && big == nullptr))) return null_array(fn);
  return PORTA_OK;
}

// ---- sorting ------------------------------------------------------------------------------------

// Keys (and values, when values_in is not NULL) go from their input to their output buffer, which
// must not overlap: every radix sort reads its input while it writes.
inline porta_status sort(const porta_dtype& key_dt, std::int64_t n, const void* keys_in, const void* keys_out,
                         const porta_dtype& value_dt, const void* values_in, const void* values_out,
                         std::uint32_t flags) noexcept {
  constexpr const char* fn = "sort";
  if (!valid_dtype(key_dt)) return set_error(PORTA_ERR_INVALID, "%s: unknown key dtype %d", fn, raw_enum(key_dt));
  if (const porta_status st = defined_for<SortFamily>(key_dt, fn); st != PORTA_OK) return st;  // keys need an order
  if (const porta_status st = count(n, fn); st != PORTA_OK) return st;
  if ((flags & ~std::uint32_t(PORTA_SORT_DESCENDING)) != 0)
    return set_error(PORTA_ERR_INVALID, "%s: unknown flags 0x%x", fn, static_cast<unsigned>(flags));
  if ((values_in == nullptr) != (values_out == nullptr))
    return set_error(PORTA_ERR_INVALID, "%s: values_in and values_out must both be NULL or both be arrays", fn);
  if (values_in != nullptr && !valid_dtype(value_dt))
    return set_error(PORTA_ERR_INVALID, "%s: unknown value dtype %d", fn, raw_enum(value_dt));
  if (n == 0) return PORTA_OK;
  if (keys_in == nullptr || keys_out == nullptr) return set_error(PORTA_ERR_INVALID, "%s: NULL key array", fn);
  const std::size_t elems = static_cast<std::size_t>(n);
  const std::size_t key_bytes = elems * dtype_size(key_dt);
  if (overlap(keys_in, key_bytes, keys_out, key_bytes))
    return set_error(PORTA_ERR_INVALID, "%s: keys_in and keys_out overlap", fn);
  const std::size_t value_bytes = values_in == nullptr ? 0 : elems * dtype_size(value_dt);
  if (values_in != nullptr && overlap(values_in, value_bytes, values_out, value_bytes))
    return set_error(PORTA_ERR_INVALID, "%s: values_in and values_out overlap", fn);
  return PORTA_OK;
}

// ---- scans and random numbers -------------------------------------------------------------------

// x viewed as [outer, n, inner] scanned along n into y. An inclusive scan may run in place (y == x);
// an exclusive one writes y[i + 1] from x[i], so y must not overlap x at all.
inline porta_status scan(const porta_reduce_op& op, const porta_dtype& dt, std::uint32_t flags, std::int64_t outer,
                         std::int64_t n, std::int64_t inner, const void* x, const void* y) noexcept {
  constexpr const char* fn = "scan";
  if (const porta_status st = dtype(dt, fn); st != PORTA_OK) return st;
  if (raw_enum(op) != PORTA_REDUCE_SUM && raw_enum(op) != PORTA_REDUCE_MAX)
    return set_error(PORTA_ERR_INVALID, "%s: op %d is not a scan op (sum or max)", fn, raw_enum(op));
  if (const porta_status st = defined_for<ScanFamily>(dt, fn); st != PORTA_OK) return st;
  if ((flags & ~std::uint32_t(PORTA_SCAN_EXCLUSIVE)) != 0)
    return set_error(PORTA_ERR_INVALID, "%s: unknown flags 0x%x", fn, static_cast<unsigned>(flags));
  std::int64_t lines = 0, total = 0;
  if (const porta_status st = shape(outer, n, inner, &lines, &total, fn); st != PORTA_OK) return st;
  if (total == 0) return PORTA_OK;
  if (x == nullptr || y == nullptr) return null_array(fn);
  const std::size_t bytes = static_cast<std::size_t>(total) * dtype_size(dt);
  if (overlap(x, bytes, y, bytes) && ((flags & PORTA_SCAN_EXCLUSIVE) != 0 || x != y))
    return set_error(PORTA_ERR_INVALID, "%s: x and y overlap (only an inclusive scan may run in place, y == x)", fn);
  return PORTA_OK;
}

// Random numbers exist for the floating-point dtypes.
inline porta_status random(const porta_random_dist& dist, const porta_dtype& dt, std::int64_t n,
                           const void* y) noexcept {
  constexpr const char* fn = "random";
  if (!in_range(raw_enum(dist), 0, PORTA_RANDOM_COUNT))
    return set_error(PORTA_ERR_INVALID, "%s: unknown distribution %d", fn, raw_enum(dist));
  if (const porta_status st = dtype(dt, fn); st != PORTA_OK) return st;
  if (!dtype_is_real(dt))
    return set_error(PORTA_ERR_INVALID, "%s: %s is not a floating-point dtype", fn, dtype_name(dt));
  if (const porta_status st = count(n, fn); st != PORTA_OK) return st;
  if (n > 0 && y == nullptr) return null_array(fn);
  return PORTA_OK;
}

}  // namespace porta::detail::backend::check
