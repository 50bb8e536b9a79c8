// SPDX-License-Identifier: Apache-2.0
// What the runtime takes from a plugin before it calls anything through it: the size of its
// table, the counts it reports and the strings it hands back. A plugin is code built apart from
// libporta (a third party's, an old one, a broken one); whatever its table says, its backend ends
// up unavailable with a reason, never a crash and never an allocation that a bad count asks for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "porta/abi/mpi_v1.h"

namespace porta::detail {

// The largest struct_size taken from a plugin. Tables grow one pointer per entry: 64 KiB is 8192
// entries, over a hundred times what the backend table holds; a larger value is not a table (a
// stray pointer, or a header of garbage) and nothing behind it is called.
inline constexpr std::size_t kMaxPluginTableBytes = 64 * 1024;

// The most devices porta takes from one backend plugin. The largest single hosts carry 8 to 16
// GPUs, a few dozen with PCIe expansion chassis; 4096 leaves ample room for machines to come,
// while what porta keeps per device (porta::devices(), porta-info's report) stays small. A count
// of 2^31 - 1 asked for 16 GiB there.
inline constexpr int kMaxPluginDevices = 4096;

// The most ranks porta takes from the MPI plugin: 2^24, well above the largest MPI jobs run (a few
// million ranks), and small enough that porta's per-rank tables (four 64-bit values a rank) and
// their int arithmetic stay in range.
inline constexpr int kMaxMpiRanks = 1 << 24;

// The most bytes read through a string pointer a plugin returns (its build line, the reason it has
// no device, last_error's message): the read stops there even when the plugin forgot the NUL.
inline constexpr std::size_t kMaxPluginText = 4096;

// Why a table that says it is `struct_size` bytes long is refused: not a whole number of
// pointer-sized entries (so it ends inside one), smaller than the `mandatory` bytes every table of
// this version has, or larger than kMaxPluginTableBytes. Empty when it is taken.
std::string table_size_problem(std::uint64_t struct_size, std::size_t mandatory);

// Whether the first struct_size bytes of a table hold all of the entry at `offset`: an entry is
// taken only then, so no pointer is ever half copied.
constexpr bool table_covers(std::size_t struct_size, std::size_t offset) noexcept {
  return offset <= struct_size && sizeof(void*) <= struct_size - offset;
}

// Why a device count from a plugin is refused (negative, or above kMaxPluginDevices); empty when
// it is taken.
std::string device_count_problem(int count);

// Up to kMaxPluginText bytes of a plugin's string; "" for NULL.
std::string plugin_text(const char* s);

// Ends a buffer a plugin filled with a NUL inside it, whatever the plugin wrote.
inline void terminate_text(char* buf, std::size_t len) noexcept {
  if (buf != nullptr && len > 0) buf[len - 1] = '\0';
}

// Why libporta_mpi.so's table is refused: a version or a struct_size that does not fit (the table
// must hold every version 1 entry: the plugin ships with libporta), or an entry left NULL. Empty
// when it is taken.
std::string mpi_table_problem(const porta_mpi_v1& t);

// Why the rank and size values of comm_ranks are refused: 0 <= rank < size <= kMaxMpiRanks and
// 0 <= local_rank < local_size <= size must hold. Empty when they do.
std::string mpi_ranks_problem(int rank, int size, int local_rank, int local_size);

}  // namespace porta::detail
