// SPDX-License-Identifier: Apache-2.0
// The entries of the HIP plugin's porta_backend_v1 table, defined across backends/hip/*.hip and
// gathered into the table by hip_backend.hip.
#pragma once

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

}  // namespace porta::detail::hip
