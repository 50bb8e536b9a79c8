// SPDX-License-Identifier: Apache-2.0
// The checks of runtime/plugin_checks.hpp.
#include "runtime/plugin_checks.hpp"

#include <cstddef>
#include <cstring>
#include <string>

namespace porta::detail {
namespace {

// Every entry of porta_mpi_v1, in member order. The check below stops the build when the struct
// gains a member this list lacks, so that an entry left NULL is always caught.
#define PORTA_MPI_ENTRIES(X) \
  X(last_error)              \
  X(init)                    \
  X(device_aware)            \
  X(comm_world)              \
  X(comm_from_fortran)       \
  X(comm_free)               \
  X(comm_ranks)              \
  X(allreduce)               \
  X(reduce)                  \
  X(broadcast)               \
  X(allgather)               \
  X(allgatherv)              \
  X(reduce_scatter)          \
  X(barrier)                 \
  X(isend)                   \
  X(irecv)                   \
  X(wait)                    \
  X(test)

constexpr std::size_t kMpiEntryOffsets[] = {
#define PORTA_MPI_OFFSET(name) offsetof(porta_mpi_v1, name),
    PORTA_MPI_ENTRIES(PORTA_MPI_OFFSET)
#undef PORTA_MPI_OFFSET
};

constexpr bool mpi_entries_cover_the_struct() {
  std::size_t expect = offsetof(porta_mpi_v1, last_error);
  for (std::size_t off : kMpiEntryOffsets) {
    if (off != expect) return false;
    expect += sizeof(void*);
  }
  return expect == sizeof(porta_mpi_v1);
}
static_assert(mpi_entries_cover_the_struct(),
              "PORTA_MPI_ENTRIES must list every porta_mpi_v1 entry after build_info, in member order");

}  // namespace

std::string table_size_problem(std::uint64_t struct_size, std::size_t mandatory) {
  const std::string size = "struct_size " + std::to_string(struct_size);
  if (struct_size > kMaxPluginTableBytes)
    return size + " is more than the " + std::to_string(kMaxPluginTableBytes) +
           " bytes a table may have (not a porta table?)";
  if (struct_size % sizeof(void*) != 0)
    return size + " is not a whole number of " + std::to_string(sizeof(void*)) +
           "-byte entries (the table would end inside an entry)";
  if (struct_size < mandatory)
    return size + " is less than the " + std::to_string(mandatory) + " bytes every version 1 table has";
  return {};
}

std::string device_count_problem(int count) {
  if (count < 0) return "device_count() returned " + std::to_string(count) + " (a count cannot be negative)";
  if (count > kMaxPluginDevices)
    return "device_count() returned " + std::to_string(count) + ", more than the " + std::to_string(kMaxPluginDevices) +
           " devices porta takes from one plugin";
  return {};
}

std::string plugin_text(const char* s) {
  return s != nullptr ? std::string(s, strnlen(s, kMaxPluginText)) : std::string();
}

std::string mpi_table_problem(const porta_mpi_v1& t) {
  if (t.abi_version != PORTA_MPI_ABI_VERSION)
    return "ABI version " + std::to_string(t.abi_version) + ", expected " + std::to_string(PORTA_MPI_ABI_VERSION);
  const std::uint32_t struct_size = t.struct_size;
  std::string why = table_size_problem(struct_size, sizeof(porta_mpi_v1));
  if (!why.empty()) return why;
#define PORTA_MPI_NULL_CHECK(name) \
  if (t.name == nullptr) return "the table has no " #name;
  PORTA_MPI_ENTRIES(PORTA_MPI_NULL_CHECK)
#undef PORTA_MPI_NULL_CHECK
  return {};
}

std::string mpi_ranks_problem(int rank, int size, int local_rank, int local_size) {
  const std::string values = "rank " + std::to_string(rank) + " of " + std::to_string(size) + ", local rank " +
                             std::to_string(local_rank) + " of " + std::to_string(local_size);
  if (size < 1 || size > kMaxMpiRanks)
    return "comm_ranks returned " + values + ": a size must be 1 to " + std::to_string(kMaxMpiRanks);
  if (local_size < 1 || local_size > size || rank < 0 || rank >= size || local_rank < 0 || local_rank >= local_size)
    return "comm_ranks returned " + values + ": a rank must be below its size, a local size at most the size";
  return {};
}

#undef PORTA_MPI_ENTRIES

}  // namespace porta::detail
