/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The porta backend ABI, version 1: the only thing that crosses a plugin boundary.
 *
 * A backend plugin (libporta_cuda.so, libporta_hip.so) exports one C function,
 * porta_backend_entry_v1(), returning a pointer to a static porta_backend_v1 table. The built-in
 * CPU backend fills the same table. No C++ types and no exceptions cross this boundary: every call
 * returns a porta_status, and on failure the backend keeps a thread-local message that
 * last_error() returns until the next failing call on that thread.
 *
 * Conventions
 * - `dev` is the device index inside the backend (cuda:1 -> dev 1).
 * - Sizes and strides are in elements unless the name says bytes; all are 64-bit.
 * - porta_stream is an opaque handle. NULL is the device's default stream. For the CUDA and HIP
 *   backends a porta_stream *is* the native cudaStream_t / hipStream_t, so user kernels can launch
 *   on it directly.
 * - Every algorithm entry is asynchronous with respect to the host on GPU streams and ordered on
 *   its stream. Pointers are device pointers of `dev` unless the name says host.
 * - Arrays are row-major and contiguous unless strides are given.
 * - The table may grow at its end; struct_size tells how much of it a plugin filled. A new
 *   incompatible layout gets a new entry point name (porta_backend_entry_v2).
 * - The entries after device_count are also listed, in order, in backend_v1_entries.inc, from
 *   which porta's own tables and the loader are generated; a compile-time check keeps the two equal.
 */
#ifndef PORTA_ABI_BACKEND_V1_H
#define PORTA_ABI_BACKEND_V1_H

#include <stddef.h>
#include <stdint.h>

/* The complex element types (complex64, complex128 of dtypes.inc): the real part, then the
 * imaginary part, aligned to the pair's size, as C99's float _Complex, std::complex, cuComplex and
 * NumPy store them. In C++ they are porta::complex<float> and porta::complex<double>, the same
 * bytes with the arithmetic every backend shares. */
#ifdef __cplusplus
#include "porta/complex.hpp"
typedef porta::complex<float> porta_complex64;
typedef porta::complex<double> porta_complex128;
#else
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define PORTA_ABI_ALIGNED(n) _Alignas(n)
#else
#define PORTA_ABI_ALIGNED(n) __attribute__((aligned(n)))
#endif
typedef struct porta_complex64 {
  PORTA_ABI_ALIGNED(8) float re;
  float im;
} porta_complex64;
typedef struct porta_complex128 {
  PORTA_ABI_ALIGNED(16) double re;
  double im;
} porta_complex128;
#undef PORTA_ABI_ALIGNED
#endif

/* The 16-bit floats (float16, bfloat16 of dtypes.inc): their bits, as __half, __nv_bfloat16, NumPy's
 * float16 and torch.bfloat16 store them. In C++ they are porta::float16 and porta::bfloat16. */
#ifdef __cplusplus
#include "porta/half.hpp"
typedef porta::float16 porta_float16;
typedef porta::bfloat16 porta_bfloat16;
#else
typedef struct porta_float16 {
  uint16_t bits;
} porta_float16;
typedef struct porta_bfloat16 {
  uint16_t bits;
} porta_bfloat16;
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* 2: porta_scalar grew to 16 bytes with the complex dtypes. */
#define PORTA_ABI_VERSION 2u
#define PORTA_BACKEND_ENTRY_SYMBOL "porta_backend_entry_v1"

typedef enum porta_status {
  PORTA_OK = 0,
  PORTA_ERR_INVALID = 1,     /* bad argument that the front end did not catch */
  PORTA_ERR_OOM = 2,         /* allocation failed; message names bytes asked and free */
  PORTA_ERR_BACKEND = 3,     /* a vendor call failed; message names the call and its code */
  PORTA_ERR_UNAVAILABLE = 4, /* device missing or not usable */
  PORTA_ERR_UNSUPPORTED = 5  /* op x dtype combination not provided by this backend */
} porta_status;

/* PORTA_DEVICE_CPU = 0, PORTA_DEVICE_CUDA = 1, PORTA_DEVICE_HIP = 2, ...: one per line of
 * device_types.inc, the list that porta::DeviceType is generated from too. */
typedef enum porta_device_type {
#define PORTA_DEVICE_TYPE(name, NAME, value, ...) PORTA_DEVICE_##NAME = value,
#include "device_types.inc"
#undef PORTA_DEVICE_TYPE
} porta_device_type;

/* PORTA_F32 = 0, PORTA_F64 = 1, PORTA_I32 = 2, PORTA_I64 = 3, ...: one per line of dtypes.inc, the
 * list that every other fact about a dtype is derived from too. */
typedef enum porta_dtype {
#define PORTA_DTYPE(NAME, name, ctype, value, ...) PORTA_##NAME = value,
#include "dtypes.inc"
#undef PORTA_DTYPE
} porta_dtype;

/* How many dtypes dtypes.inc lists. The code that keeps a list of the C++ types by hand (the front
 * end's instantiations, the NCCL and MPI type maps, run-time kernels' type names) asserts it, so a
 * new line in dtypes.inc stops the build there instead of leaving the new type out in silence. */
enum {
  PORTA_DTYPE_COUNT = 0
#define PORTA_DTYPE(...) +1
#include "dtypes.inc"
#undef PORTA_DTYPE
};

/* A scalar passed by value from the host; the member used is the one of the call's dtype:
 * float f32, double f64, int32_t i32, int64_t i64, porta_complex64 c64, ... (dtypes.inc). */
typedef union porta_scalar {
#define PORTA_DTYPE(NAME, name, ctype, ...) ctype name;
#include "dtypes.inc"
#undef PORTA_DTYPE
} porta_scalar;

/* Elementwise unary ops: y[i] = op(x[i]). Semantics: include/porta/detail/ops.hpp. y has x's dtype,
 * except ABS of a complex dtype, which writes the real dtype of its precision (|z|, as NumPy). */
typedef enum porta_unary_op {
  PORTA_UNARY_NEG = 0,
  PORTA_UNARY_ABS,
  PORTA_UNARY_SQRT,
  PORTA_UNARY_EXP,
  PORTA_UNARY_LOG,
  PORTA_UNARY_SIN,
  PORTA_UNARY_COS,
  PORTA_UNARY_TANH,
  PORTA_UNARY_RELU,
  PORTA_UNARY_SIGMOID,
  PORTA_UNARY_SQUARE,
  PORTA_UNARY_CONJ, /* complex conjugate; a real or integer x unchanged */
  PORTA_UNARY_COUNT
} porta_unary_op;

/* Elementwise binary ops: y = op(a, b). */
typedef enum porta_binary_op {
  PORTA_BINARY_ADD = 0,
  PORTA_BINARY_SUB,
  PORTA_BINARY_MUL,
  PORTA_BINARY_DIV,
  PORTA_BINARY_MIN,
  PORTA_BINARY_MAX,
  PORTA_BINARY_POW,
  PORTA_BINARY_RELU_GRAD, /* a * (b > 0): the backward pass of relu, a = upstream gradient */
  PORTA_BINARY_COUNT
} porta_binary_op;

/* Reductions. Floating-point results follow the canonical order of include/porta/detail/reduce_order.hpp
 * on every backend, so they are bit-identical across backends and runs. */
typedef enum porta_reduce_op {
  PORTA_REDUCE_SUM = 0,
  PORTA_REDUCE_PROD,
  PORTA_REDUCE_MIN,
  PORTA_REDUCE_MAX,
  PORTA_REDUCE_SUMSQ, /* sum of x*x, products rounded before the add (no contraction) */
  PORTA_REDUCE_COUNT
} porta_reduce_op;

/* Comparisons: y = (a op b) ? 1 : 0 as int32 (porta's mask type). IEEE
 * semantics: NaN compares unequal to everything (NE is true), -0.0 == 0.0. */
typedef enum porta_compare_op {
  PORTA_COMPARE_EQ = 0,
  PORTA_COMPARE_NE,
  PORTA_COMPARE_LT,
  PORTA_COMPARE_LE,
  PORTA_COMPARE_GT,
  PORTA_COMPARE_GE,
  PORTA_COMPARE_COUNT
} porta_compare_op;

typedef enum porta_copy_kind {
  PORTA_COPY_HOST_TO_DEVICE = 0,
  PORTA_COPY_DEVICE_TO_HOST = 1,
  PORTA_COPY_DEVICE_TO_DEVICE = 2,
  PORTA_COPY_HOST_TO_HOST = 3
} porta_copy_kind;

/* gemm flags */
#define PORTA_GEMM_ALLOW_TF32 0x1u /* fp32 inputs may use TF32 tensor cores (about 1e-3 relative error) */
#define PORTA_GEMM_OWN_KERNEL 0x2u /* use porta's own tiled kernel instead of the vendor BLAS */

/* spmm flags */
#define PORTA_SPARSE_OWN_KERNEL 0x1u /* porta's row-ordered kernel (same bits everywhere), not the vendor's */

/* Dense linear algebra: the factorisations of the linalg entry. Column-major matrices, as LAPACK,
 * cuSOLVER and rocSOLVER keep them (the front end transposes porta's row-major arrays). */
typedef enum porta_linalg_op {
  PORTA_LINALG_SOLVE = 0,    /* LU with partial pivoting (getrf/getrs): A X = B */
  PORTA_LINALG_CHOLESKY = 1, /* A = L L^T (potrf) */
  PORTA_LINALG_QR = 2,       /* A = Q R, reduced (geqrf, orgqr) */
  PORTA_LINALG_EIGH = 3,     /* symmetric A = V diag(w) V^T (syevd) */
  PORTA_LINALG_SVD = 4,      /* A = U diag(s) Vt (gesdd, gesvd) */
  PORTA_LINALG_COUNT
} porta_linalg_op;
#define PORTA_LINALG_SVD_FULL 0x1u  /* svd: U is m x m, not m x n */
#define PORTA_LINALG_UPPER 0x2u     /* cholesky, eigh: the upper triangle instead of the lower */
#define PORTA_LINALG_TRANSPOSE 0x4u /* solve: A^T X = B with a holding A */

/* Fourier transforms: the kinds of the fft entry. Complex values are interleaved (real, imaginary)
 * pairs of the entry's real dtype, as C99's complex, std::complex, cufftComplex and NumPy store them. */
typedef enum porta_fft_kind {
  PORTA_FFT_FORWARD = 0, /* complex -> complex, exponent sign -1 */
  PORTA_FFT_INVERSE = 1, /* complex -> complex, exponent sign +1, unnormalised */
  PORTA_FFT_R2C = 2,     /* real -> the non-redundant half of its forward transform */
  PORTA_FFT_C2R = 3,     /* that half -> real, exponent sign +1, unnormalised */
  PORTA_FFT_COUNT
} porta_fft_kind;

/* Sort flags and arg-reductions. The order is porta/detail/sort_key.hpp's:
 * -inf < ... < -0.0 < +0.0 < ... < +inf < NaN, every NaN equal. */
#define PORTA_SORT_DESCENDING 0x1u /* stable descending (equal keys keep input order; NaN still last) */
typedef enum porta_arg_op {
  PORTA_ARG_MAX = 0, /* first index of the largest element; NaN counts as the largest */
  PORTA_ARG_MIN,     /* first index of the smallest element; NaN counts as the smallest */
  PORTA_ARG_COUNT
} porta_arg_op;

typedef struct porta_device_info_v1 {
  char name[256];        /* "NVIDIA H200", "AMD Instinct MI250X", CPU model name */
  char vendor[64];       /* "NVIDIA", "AMD", "GenuineIntel" */
  char arch[64];         /* "sm_90", "gfx90a", "x86_64" */
  uint64_t total_memory; /* bytes */
  uint64_t free_memory;  /* bytes */
  int32_t compute_units; /* SMs, CUs, or hardware threads on the CPU */
  int32_t warp_size;     /* 32 or 64; 1 on the CPU */
  int32_t max_threads_per_block;
  int32_t driver_version;  /* vendor encoding (CUDA: 1000*major + 10*minor); 0 when none */
  int32_t runtime_version; /* vendor encoding; OpenMP: _OPENMP date; 0 when none */
  int32_t pci_bus_id;      /* -1 when none */
} porta_device_info_v1;

typedef struct porta_memory_stats_v1 {
  uint64_t bytes_in_use;   /* allocated by porta and not yet freed */
  uint64_t bytes_reserved; /* held by the pool, including cached free blocks */
  uint64_t peak_bytes_in_use;
  uint64_t alloc_count; /* allocations served since start */
} porta_memory_stats_v1;

typedef struct porta_stream_s* porta_stream;
typedef struct porta_event_s* porta_event;

/* Distributions of the random entry (Philox4x32-10, include/porta/detail/philox.hpp). */
typedef enum porta_random_dist {
  PORTA_RANDOM_UNIFORM = 0, /* [0, 1) */
  PORTA_RANDOM_NORMAL,      /* mean 0, standard deviation 1 (Box-Muller with porta's own log, sin, cos) */
  PORTA_RANDOM_COUNT
} porta_random_dist;

/* scan flags */
#define PORTA_SCAN_EXCLUSIVE 0x1u /* y[0] = 0 (sum) or the identity (max), y[i] = the inclusive y[i-1] */

/* ---- collectives between devices of one backend (NCCL on CUDA, RCCL on HIP,
 * loaded at run time by the plugin) ---- */
#define PORTA_COLL_ID_BYTES 128          /* the size of the id coll_unique_id makes (ncclUniqueId) */
typedef struct porta_coll_s* porta_coll; /* a communicator: one rank on one device */
typedef enum porta_coll_kind {
  PORTA_COLL_ALLREDUCE = 0,  /* recv[i] = op over ranks of send[i]; n elements; send == recv: in place */
  PORTA_COLL_REDUCE,         /* the same into recv on rank `peer` only */
  PORTA_COLL_BROADCAST,      /* recv = send of rank `peer` (in place when send == recv) */
  PORTA_COLL_ALLGATHER,      /* recv[r * n + i] = send of rank r, element i */
  PORTA_COLL_REDUCE_SCATTER, /* recv[i] = op over ranks of send[rank * n + i] */
  PORTA_COLL_SEND,           /* n elements of send to rank peer */
  PORTA_COLL_RECV,           /* n elements from rank peer into recv */
  PORTA_COLL_COUNT
} porta_coll_kind;

/* ---- fused expressions ---- */
/* A program of map_program: postfix (a stack machine), evaluated per element. Each op pushes (INPUT,
 * SCALAR) or replaces the top one (UNARY) or two (BINARY, BINARY_REV) values; a valid program ends
 * with one. */
#define PORTA_PROGRAM_MAX_OPS 64
#define PORTA_PROGRAM_MAX_INPUTS 8
#define PORTA_PROGRAM_MAX_STACK 8
typedef enum porta_program_kind {
  PORTA_PROGRAM_INPUT = 0,  /* push inputs[arg][i] */
  PORTA_PROGRAM_SCALAR,     /* push value (the member of the call's dtype) */
  PORTA_PROGRAM_UNARY,      /* top = porta_unary_op arg (top) */
  PORTA_PROGRAM_BINARY,     /* pop b, pop a, push porta_binary_op arg (a, b) */
  PORTA_PROGRAM_BINARY_REV, /* pop a, pop b, push porta_binary_op arg (a, b): the right operand was
                             * evaluated first, because it needs the deeper stack */
  PORTA_PROGRAM_KIND_COUNT
} porta_program_kind;
typedef struct porta_program_op {
  int32_t kind;       /* porta_program_kind */
  int32_t arg;        /* INPUT: input index; UNARY: porta_unary_op; BINARY(_REV): porta_binary_op */
  porta_scalar value; /* SCALAR only */
} porta_program_op;

/* ---- run-time compiled kernels ---- */
typedef struct porta_rtc_kernel_s* porta_rtc_kernel; /* a loaded kernel; lives until the process exits */

typedef struct porta_backend_v1 {
  uint32_t abi_version;   /* PORTA_ABI_VERSION */
  uint32_t struct_size;   /* sizeof(porta_backend_v1) as the plugin was built */
  const char* name;       /* "cpu", "cuda", "hip" */
  int32_t device_type;    /* porta_device_type */
  const char* build_info; /* one line: toolkit version, libraries, architectures */

  /* Thread-local message of the last failing call on this thread. Never NULL. */
  const char* (*last_error)(void);

  /* Never fails. On zero devices, *reason (if reason is not NULL) says why, e.g. "CUDA driver is
   * not installed (cudaErrorInsufficientDriver)". The string is static or owned by the backend. */
  int (*device_count)(const char** reason);
  porta_status (*device_info)(int dev, porta_device_info_v1* out);
  porta_status (*synchronize)(int dev); /* the whole device */

  /* Memory: stream-ordered. free may be called with the same stream as alloc or NULL. */
  porta_status (*alloc)(int dev, size_t bytes, porta_stream s, void** out);
  porta_status (*free)(int dev, void* ptr, porta_stream s);
  porta_status (*copy)(int dev, void* dst, const void* src, size_t bytes, porta_copy_kind kind, porta_stream s);
  porta_status (*host_alloc)(size_t bytes, void** out); /* pinned where the backend can */
  porta_status (*host_free)(void* ptr);
  porta_status (*memory_stats)(int dev, porta_memory_stats_v1* out);
  porta_status (*empty_cache)(int dev);

  /* Streams and events. */
  porta_status (*stream_create)(int dev, porta_stream* out);
  porta_status (*stream_destroy)(int dev, porta_stream s); /* waits for pending work first */
  porta_status (*stream_synchronize)(int dev, porta_stream s);
  porta_status (*stream_query)(int dev, porta_stream s, int* done);
  porta_status (*stream_wait_event)(int dev, porta_stream s, porta_event e);
  porta_status (*event_create)(int dev, porta_event* out);
  porta_status (*event_destroy)(int dev, porta_event e);
  porta_status (*event_record)(int dev, porta_event e, porta_stream s);
  porta_status (*event_synchronize)(int dev, porta_event e);
  porta_status (*event_query)(int dev, porta_event e, int* done);
  porta_status (*event_elapsed_ms)(int dev, porta_event start, porta_event end, float* ms);

  /* Built-in maps. In-place use (y == x) is allowed. */
  porta_status (*fill)(int dev, porta_dtype dt, int64_t n, porta_scalar value, void* y, porta_stream s);
  /* y[i] = start + i * step */
  porta_status (*iota)(int dev, porta_dtype dt, int64_t n, porta_scalar start, porta_scalar step, void* y,
                       porta_stream s);
  porta_status (*cast)(int dev, porta_dtype from, porta_dtype to, int64_t n, const void* x, void* y, porta_stream s);
  porta_status (*unary)(int dev, porta_unary_op op, porta_dtype dt, int64_t n, const void* x, void* y, porta_stream s);
  /* y[r*cols + c] = op(a[r*a_rs + c*a_cs], b[r*b_rs + c*b_cs]); a stride of 0 broadcasts. y is
   * contiguous rows x cols. A contiguous operand has rs == cols, cs == 1. */
  porta_status (*binary)(int dev, porta_binary_op op, porta_dtype dt, int64_t rows, int64_t cols, const void* a,
                         int64_t a_rs, int64_t a_cs, const void* b, int64_t b_rs, int64_t b_cs, void* y,
                         porta_stream s);
  /* y[i] = op(x[i], value), or op(value, x[i]) when scalar_first is non-zero. */
  porta_status (*binary_scalar)(int dev, porta_binary_op op, porta_dtype dt, int64_t n, const void* x,
                                porta_scalar value, int scalar_first, void* y, porta_stream s);
  /* y = alpha * x + y */
  porta_status (*axpy)(int dev, porta_dtype dt, int64_t n, porta_scalar alpha, const void* x, void* y, porta_stream s);

  /* Reduction of x viewed as [outer, n, inner] over its middle axis into y[outer * inner]: device
   * memory, or host memory from host_alloc, which a GPU writes directly (pinned memory is mapped
   * into every device; porta's full reductions return their value so). A full reduction
   * is outer = inner = 1. n may be 0 (y gets the op's identity). */
  porta_status (*reduce)(int dev, porta_reduce_op op, porta_dtype dt, int64_t outer, int64_t n, int64_t inner,
                         const void* x, void* y, porta_stream s);
  /* *y = sum over i of x[i] * w[i], in the canonical order; y is device memory (or pinned host
   * memory, as for reduce). */
  porta_status (*dot)(int dev, porta_dtype dt, int64_t n, const void* x, const void* w, void* y, porta_stream s);

  /* Row-major C[m x n] = alpha * op(A) * op(B) + beta * C, op(A) is m x k, op(B) is k x n.
   * A is m x k (lda >= k) or, when trans_a, k x m (lda >= m); likewise B. beta == 0 ignores C's
   * old contents (NaN in C does not propagate). flags: PORTA_GEMM_*. */
  porta_status (*gemm)(int dev, porta_dtype dt, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                       porta_scalar alpha, const void* a, int64_t lda, const void* b, int64_t ldb, porta_scalar beta,
                       void* c, int64_t ldc, uint32_t flags, porta_stream s);

  /* ---- sorting and arg-reductions ---- */
  /* Stable radix sort of n keys of key_dt from keys_in into keys_out; when values_in is not NULL,
   * the n values of value_dt travel with their keys into values_out. Inputs and outputs must not
   * overlap. flags: PORTA_SORT_*. NaN keys are written as the canonical quiet NaN. */
  porta_status (*sort)(int dev, porta_dtype key_dt, int64_t n, const void* keys_in, void* keys_out,
                       porta_dtype value_dt, const void* values_in, void* values_out, uint32_t flags, porta_stream s);
  /* y[o * inner + i] = the index j (0 <= j < n) of the first best x[o, j, i] of x viewed as
   * [outer, n, inner]; n > 0 unless outer * inner == 0. y is device memory (or pinned host memory,
   * as for reduce). */
  porta_status (*argreduce)(int dev, porta_arg_op op, porta_dtype dt, int64_t outer, int64_t n, int64_t inner,
                            const void* x, int64_t* y, porta_stream s);

  /* ---- copies between two devices of one backend ---- */
  /* bytes from src on device dev to dst on device dst_dev (both of this backend), enqueued on s (a
   * stream of dev; NULL: its default stream) after the work already queued on dst_dev's default
   * stream; work queued later on dst_dev's default stream waits for the copy. GPUs enable peer
   * access once per pair of devices that have it (the copy then crosses the link directly) and let
   * the runtime stage it otherwise. Returns without waiting for the copy. */
  porta_status (*copy_peer)(int dev, const void* src, int dst_dev, void* dst, size_t bytes, porta_stream s);

  /* ---- views, masks, gather and scatter ---- */
  /* dst[i . dst_strides] = src[i . src_strides] for every index i of shape[0..rank) (rank 1..4;
   * strides in elements, may be negative; src strides may be 0 to broadcast). src and dst do not
   * overlap (the front end stages overlapping copies). */
  porta_status (*copy_strided)(int dev, porta_dtype dt, int32_t rank, const int64_t* shape, const void* src,
                               const int64_t* src_strides, void* dst, const int64_t* dst_strides, porta_stream s);
  /* y[r*cols + c] = op(a[r*a_rs + c*a_cs], b[r*b_rs + c*b_cs]) ? 1 : 0, the strides as in binary. */
  porta_status (*compare)(int dev, porta_compare_op op, porta_dtype dt, int64_t rows, int64_t cols, const void* a,
                          int64_t a_rs, int64_t a_cs, const void* b, int64_t b_rs, int64_t b_cs, int32_t* y,
                          porta_stream s);
  /* y[i] = mask[i] != 0 ? a[i * a_step] : b[i * b_step]; a_step and b_step are 1, or 0 for one
   * broadcast element. */
  porta_status (*where)(int dev, porta_dtype dt, int64_t n, const int32_t* mask, const void* a, int64_t a_step,
                        const void* b, int64_t b_step, void* y, porta_stream s);
  /* x viewed as [outer, n, inner], y as [outer, m, inner]: y[o, j, i] = x[o, idx[j], i]. The front
   * end checks 0 <= idx[j] < n; an index outside gives 0 (never a read out of bounds). */
  porta_status (*take)(int dev, porta_dtype dt, int64_t outer, int64_t n, int64_t inner, const void* x, int64_t m,
                       const int64_t* idx, void* y, porta_stream s);
  /* y viewed as [outer, n, inner], v as [outer, m, inner]: y[o, idx[j], i] = v[o, j, i]. Where idx
   * repeats a position, the largest j (the last occurrence) wins, on every backend. An index
   * outside [0, n) writes nothing. */
  porta_status (*scatter)(int dev, porta_dtype dt, int64_t outer, int64_t n, int64_t inner, void* y, int64_t m,
                          const int64_t* idx, const void* v, porta_stream s);
  /* ---- random numbers and scans ---- */
  /* y[i] = value i of the Philox4x32-10 stream `stream` under `seed`, starting at block `offset`
   * (4 words a block; docs/random-and-scans.md has the layout). dt is F32 or F64. */
  porta_status (*random)(int dev, porta_random_dist dist, porta_dtype dt, int64_t n, uint64_t seed, uint64_t stream,
                         uint64_t offset, void* y, porta_stream s);
  /* Scan of x viewed as [outer, n, inner] along its middle axis into y (same shape, not aliasing x
   * when exclusive), op PORTA_REDUCE_SUM or PORTA_REDUCE_MAX, in the canonical order of
   * include/porta/detail/scan_order.hpp; flags: PORTA_SCAN_*. */
  porta_status (*scan)(int dev, porta_reduce_op op, porta_dtype dt, uint32_t flags, int64_t outer, int64_t n,
                       int64_t inner, const void* x, void* y, porta_stream s);

  /* ---- collectives between devices of one backend (NCCL on CUDA, RCCL on HIP,
   * loaded at run time by the plugin) ---- */
  /* PORTA_OK and "NCCL 2.27.3 (libnccl.so.2)" in info (len bytes, always terminated) when the
   * backend's collective library loads; else PORTA_ERR_UNAVAILABLE, and last_error says why (the
   * CPU has none). info may be NULL. */
  porta_status (*coll_available)(char* info, size_t len);
  /* Writes PORTA_COLL_ID_BYTES bytes to id: made on one rank, given to all by the caller. */
  porta_status (*coll_unique_id)(void* id);
  /* Collective: every one of the nranks ranks calls it with the same id and its own rank (0..nranks)
   * and device dev; returns when all have joined. One host thread per rank in one process. */
  porta_status (*coll_init)(int dev, int nranks, int rank, const void* id, porta_coll* out);
  porta_status (*coll_destroy)(porta_coll c); /* NULL is OK */
  /* One collective of `kind` over n elements of dt (send and recv: device memory of c's device;
   * the one not used by the kind may be NULL); op for the reducing kinds (SUM, PROD, MIN, MAX);
   * peer: the root of REDUCE/BROADCAST, the other rank of SEND/RECV. Enqueued on s (a stream of
   * c's device; NULL: its default stream), returns without waiting. */
  porta_status (*collective)(porta_coll c, porta_coll_kind kind, porta_dtype dt, porta_reduce_op op, const void* send,
                             void* recv, int64_t n, int peer, porta_stream s);
  /* ncclGroupStart (begin != 0) / ncclGroupEnd: the collectives between them (of one thread, on
   * several communicators, or a SEND with its RECV) are issued together. */
  porta_status (*coll_group)(int begin);

  /* ---- fused expressions ---- */
  /* y[i] = the value the program ops[0..nops) leaves for element i, for i in [0, n): every op is
   * the one of unary / binary (porta/detail/ops.hpp, each result rounded to dt, no contraction), so
   * y has the bits of the same ops run one map at a time. inputs: ninputs contiguous arrays of n
   * elements of dt (device memory); y contiguous, may be one of the inputs but not overlap one
   * otherwise. nops in 1..PORTA_PROGRAM_MAX_OPS, ninputs in 0..PORTA_PROGRAM_MAX_INPUTS, the stack
   * never deeper than PORTA_PROGRAM_MAX_STACK. */
  porta_status (*map_program)(int dev, porta_dtype dt, int64_t n, const porta_program_op* ops, int32_t nops,
                              const void* const* inputs, int32_t ninputs, void* y, porta_stream s);

  /* ---- run-time compiled kernels ---- */
  /* What a compiled kernel depends on, for the front end's cache key (len bytes, always
   * terminated), found without loading or running the compiler: the compiler's library or path,
   * the runtime version, the target ("sm_90", "gfx90a:sramecc+:xnack-") and the options. With key
   * NULL: loads (or runs) the compiler and returns PORTA_ERR_UNAVAILABLE, last_error saying why,
   * when it is missing (NVRTC and hiprtc are dlopen()ed by the plugin, never linked). */
  porta_status (*rtc_info)(int dev, char* key, size_t len);
  /* Compiles a whole program (porta's prelude, the user's source and the generated entries) for
   * dev: *binary (freed by rtc_free_binary) gets a cubin, a code object or the bytes of a shared
   * library, *bytes its size. log (log_len bytes, always terminated; may be NULL) gets the
   * compiler's output. A source that does not compile is PORTA_ERR_INVALID with the log. */
  porta_status (*rtc_compile)(int dev, const char* source, const char* options, void** binary, size_t* bytes, char* log,
                              size_t log_len);
  porta_status (*rtc_free_binary)(void* binary);
  /* Loads a binary of rtc_compile on dev and finds its entry `name` (extern "C"). */
  porta_status (*rtc_load)(int dev, const void* binary, size_t bytes, const char* name, porta_rtc_kernel* out);
  /* Runs entry(n, args) over i in [0, n) on stream s: args is the entry's argument struct,
   * args_bytes long, copied before the call returns (the host memory may be reused at once). */
  porta_status (*rtc_launch)(int dev, porta_rtc_kernel k, int64_t n, const void* args, size_t args_bytes,
                             porta_stream s);
  /* As rtc_launch, for an entry whose index is a vector's work (porta's generated fused kernels): on
   * GPUs one thread per index on a grid that covers [0, n), where rtc_launch strides over the
   * blocks the device keeps resident (the faster shape for one element per index). */
  porta_status (*rtc_launch_cover)(int dev, porta_rtc_kernel k, int64_t n, const void* args, size_t args_bytes,
                                   porta_stream s);
  /* ---- memory porta did not allocate ---- */
  /* PORTA_OK when the kernels of dev can use the bytes [ptr, ptr + bytes) as that device's memory
   * (Array::borrow, DLPack); PORTA_ERR_INVALID, with last_error saying what the memory is instead
   * (ordinary host memory, another device's memory), when they cannot. */
  porta_status (*check_pointer)(int dev, const void* ptr, size_t bytes);
  /* ---- profiler ranges ---- */
  /* Opens a range named `name` (copied before the call returns) on the calling thread's stack of
   * the vendor profiler's ranges (NVTX on CUDA, roctx on HIP), so that Nsight Systems or rocprof
   * shows porta's kernels and regions by name; range_pop closes the innermost one. Ranges belong to
   * the thread, not to dev, which only says whose backend is asked. PORTA_OK and nothing else where
   * no profiler library is present, and on the CPU. */
  porta_status (*range_push)(int dev, const char* name);
  porta_status (*range_pop)(int dev);
  /* ---- sparse matrices ---- */
  /* Row-major Y[rows x k] = alpha * A * X + beta * Y for a zero-based CSR matrix A (rows x cols,
   * nnz stored entries, duplicates allowed): row_ptr (rows + 1) and col_idx (nnz) of index_dt
   * (PORTA_I32 or PORTA_I64), values (nnz) of dt; X is cols x k with row stride ldx. k == 1 is a
   * matrix-vector product. beta == 0 ignores Y's old contents. The structure is trusted: the front
   * end validated it when the matrix was made. PORTA_SPARSE_OWN_KERNEL: y[i][c] is the sum over the
   * row's entries in storage order of values[j] * X[col_idx[j]][c], each product and sum rounded
   * (no FMA), then times alpha, plus beta * Y (the same bits on every backend); otherwise the
   * vendor's library where there is one (cuSPARSE), in its own order. */
  porta_status (*spmm)(int dev, porta_dtype dt, porta_dtype index_dt, int64_t rows, int64_t cols, int64_t nnz,
                       const void* row_ptr, const void* col_idx, const void* values, int64_t k, porta_scalar alpha,
                       const void* x, int64_t ldx, porta_scalar beta, void* y, int64_t ldy, uint32_t flags,
                       porta_stream s);
  /* ---- dense linear algebra ---- */
  /* One factorisation (or solve) of each of `batch` column-major matrices, stored one after
   * another (leading dimension = rows), in dt (PORTA_F32 or PORTA_F64), enqueued on s:
   *  SOLVE     a n x n (m == n), overwritten by its LU factors; b n x k, overwritten by X with
   *            A X = B (A^T X = B with PORTA_LINALG_TRANSPOSE).
   *  CHOLESKY  a n x n (m == n), lower triangle read; on return its lower triangle is L and its
   *            strictly upper triangle is zero. PORTA_LINALG_UPPER: the upper triangle is read and
   *            becomes U with A = U^T U, the strictly lower one zero.
   *  QR        a m x n, p = min(m, n): on return a's first p columns are Q (m x p, orthonormal
   *            columns) and b is R (p x n, zero below the diagonal).
   *  EIGH      a n x n (m == n), lower triangle read (PORTA_LINALG_UPPER: the upper); on return
   *            its columns are the eigenvectors and b the n eigenvalues in ascending order.
   *  SVD       a m x n with m >= n, destroyed; b the n singular values in descending order, c U
   *            (m x m with PORTA_LINALG_SVD_FULL, else m x n), d Vt (n x n).
   * info (device memory, batch int32) gets LAPACK's code of each matrix: 0 for success; j > 0 for
   * a zero pivot U(j, j) (SOLVE), a leading minor of order j that is not positive definite
   * (CHOLESKY), or no convergence (EIGH, SVD). PORTA_ERR_UNSUPPORTED where the backend has no
   * solver library (the front end then runs the call on the CPU). */
  porta_status (*linalg)(int dev, porta_linalg_op op, porta_dtype dt, int64_t batch, int64_t m, int64_t n, int64_t k,
                         void* a, void* b, void* c, void* d, int32_t* info, uint32_t flags, porta_stream s);
  /* ---- Fourier transforms ---- */
  /* The unnormalised discrete Fourier transform over the last `rank` (1 to 3) axes of `batch`
   * row-major arrays of n0 x n1 x n2 (n1, n2 are 1 past the rank), stored one after another,
   * each output times `scale`, enqueued on s. dt (PORTA_F32 or PORTA_F64) is the real type; complex
   * elements are two of it. FORWARD, INVERSE: x and y complex n0 x n1 x n2. R2C: x real
   * n0 x n1 x n2, y complex with the last axis n_last / 2 + 1 long (the rest follows from Hermitian
   * symmetry). C2R: x complex of that shape, read as the half of a Hermitian spectrum, y real
   * n0 x n1 x n2. x is never written; x and y must not overlap. Every n >= 1. */
  porta_status (*fft)(int dev, porta_fft_kind kind, porta_dtype dt, int32_t rank, int64_t n0, int64_t n1, int64_t n2,
                      int64_t batch, const void* x, void* y, double scale, porta_stream s);
} porta_backend_v1;

typedef const porta_backend_v1* (*porta_backend_entry_v1_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* PORTA_ABI_BACKEND_V1_H */
