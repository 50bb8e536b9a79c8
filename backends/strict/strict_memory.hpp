// SPDX-License-Identifier: Apache-2.0
// cpu:strict's memory, shared by the two parts of the backend (docs/strict.md):
//   strict_memory.cpp   memory that host code cannot touch: page-granular mappings with guard
//                       pages, PROT_NONE except while strict work runs, a quarantine for freed
//                       blocks, and the fault handler that names the Array;
//   strict_backend.cpp  the backend table (strict_backend(), backends/builtin.hpp): the CPU
//                       backend's entries wrapped, generated from the ABI entry list, with their
//                       work deferred to a queue that runs at synchronize.
#pragma once

#include <cstddef>
#include <cstdint>

#include "porta/abi/backend_v1.h"

namespace porta::detail::strict {

// ---- memory (strict_memory.cpp); every function takes the memory lock itself -----------------

// Device memory: inaccessible to the host from the start. OOM when the system lacks the bytes or
// the registry is full.
porta_status device_alloc(std::size_t bytes, void** out) noexcept;
// Marks a live device block as being freed (bytes leave bytes_in_use now; the block itself is
// released when the queued free runs). INVALID for an unknown or already freed pointer.
porta_status device_free_begin(void* ptr) noexcept;
// The queued free: the block becomes inaccessible for good and joins the quarantine.
void device_free_end(void* ptr) noexcept;
// Whether some device free is queued and has not run (its block still counts as live).
bool device_frees_pending() noexcept;

// Host buffers (HostArray of cpu:strict): readable and writable, except while a copy from or into
// them is queued (porta's check on the missing synchronize).
porta_status host_alloc(std::size_t bytes, void** out) noexcept;
porta_status host_free(void* ptr) noexcept;

enum class Space { device, host_buffer, other };
// Where [p, p + bytes) lies: wholly inside one live device block, one live host buffer, or
// neither.
Space space_of(const void* p, std::size_t bytes) noexcept;
// A queued copy reads (write == false) or writes (write == true) host buffer memory at p:
// +1 when it is queued, -1 when it has run. Does nothing for memory that is not a host buffer.
void pend_host(const void* p, bool write, int delta) noexcept;

// Opens every live block for reading and writing / closes it again. Called by the queue around
// the work it runs, under its execution lock; `what` names the work for a fault report.
void open_all() noexcept;
void close_all() noexcept;
void set_running(const char* what) noexcept;

void describe(const void* ptr, const char* text) noexcept;
void stats(porta_memory_stats_v1* out) noexcept;

}  // namespace porta::detail::strict
