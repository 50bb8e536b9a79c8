// SPDX-License-Identifier: Apache-2.0
// The entries of the HIP plugin's porta_backend_v1 table, defined across backends/hip/*.hip and
// gathered into the table by hip_backend.hip.
#pragma once

#include <cstddef>
#include <cstdint>

#include "porta/abi/backend_v1.h"

namespace porta::detail::hip {

// hip_device.hip
int device_count(const char** reason) noexcept;
porta_status device_info(int dev, porta_device_info_v1* out) noexcept;
porta_status synchronize(int dev) noexcept;

// hip_memory.hip
porta_status alloc(int dev, size_t bytes, porta_stream s, void** out) noexcept;
porta_status free(int dev, void* ptr, porta_stream s) noexcept;
porta_status copy(int dev, void* dst, const void* src, size_t bytes, porta_copy_kind kind, porta_stream s) noexcept;
porta_status host_alloc(size_t bytes, void** out) noexcept;
porta_status host_free(void* ptr) noexcept;
porta_status memory_stats(int dev, porta_memory_stats_v1* out) noexcept;
porta_status empty_cache(int dev) noexcept;

// hip_stream.hip
porta_status stream_create(int dev, porta_stream* out) noexcept;
porta_status stream_destroy(int dev, porta_stream s) noexcept;
porta_status stream_synchronize(int dev, porta_stream s) noexcept;
porta_status stream_query(int dev, porta_stream s, int* done) noexcept;
porta_status stream_wait_event(int dev, porta_stream s, porta_event e) noexcept;
porta_status event_create(int dev, porta_event* out) noexcept;
porta_status event_destroy(int dev, porta_event e) noexcept;
porta_status event_record(int dev, porta_event e, porta_stream s) noexcept;
porta_status event_synchronize(int dev, porta_event e) noexcept;
porta_status event_query(int dev, porta_event e, int* done) noexcept;
porta_status event_elapsed_ms(int dev, porta_event start, porta_event end, float* ms) noexcept;

// hip_algorithms.hip
porta_status fill(int dev, porta_dtype dt, int64_t n, porta_scalar value, void* y, porta_stream s) noexcept;
porta_status iota(int dev, porta_dtype dt, int64_t n, porta_scalar start, porta_scalar step, void* y,
                  porta_stream s) noexcept;
porta_status cast(int dev, porta_dtype from, porta_dtype to, int64_t n, const void* x, void* y,
                  porta_stream s) noexcept;
porta_status unary(int dev, porta_unary_op op, porta_dtype dt, int64_t n, const void* x, void* y,
                   porta_stream s) noexcept;
porta_status binary(int dev, porta_binary_op op, porta_dtype dt, int64_t rows, int64_t cols, const void* a,
                    int64_t a_rs, int64_t a_cs, const void* b, int64_t b_rs, int64_t b_cs, void* y,
                    porta_stream s) noexcept;
porta_status binary_scalar(int dev, porta_binary_op op, porta_dtype dt, int64_t n, const void* x, porta_scalar value,
                           int scalar_first, void* y, porta_stream s) noexcept;
porta_status axpy(int dev, porta_dtype dt, int64_t n, porta_scalar alpha, const void* x, void* y,
                  porta_stream s) noexcept;
porta_status reduce(int dev, porta_reduce_op op, porta_dtype dt, int64_t outer, int64_t n, int64_t inner, const void* x,
                    void* y, porta_stream s) noexcept;
porta_status dot(int dev, porta_dtype dt, int64_t n, const void* x, const void* w, void* y, porta_stream s) noexcept;
porta_status gemm(int dev, porta_dtype dt, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                  porta_scalar alpha, const void* a, int64_t lda, const void* b, int64_t ldb, porta_scalar beta,
                  void* c, int64_t ldc, uint32_t flags, porta_stream s) noexcept;

}  // namespace porta::detail::hip
