// SPDX-License-Identifier: Apache-2.0
// The host engines of porta::distributed: what one rank of a group can do with host memory (and
// with device memory, where device_aware() says the engine reads it). Two implementations:
// MpiEngine (distributed/mpi_engine.cpp, over libporta_mpi.so) for processes, ThreadEngine
// (distributed/thread_engine.cpp) for ranks that are threads of one process. Device collectives
// (NCCL, RCCL) are not engines: they are entries of the GPU backends' table, set up through a host
// engine (distributed/communicator.cpp). Internal to libporta.
//
// Every call is blocking unless it returns a Pending; failures throw porta::Error subclasses whose
// message starts with fn. op is PORTA_REDUCE_SUM, PROD, MIN or MAX with ops.hpp's semantics.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "porta/abi/backend_v1.h"
#include "porta/device.hpp"
#include "porta/distributed.hpp"

namespace porta::detail::dist {

// A point-to-point transfer in flight.
class Pending {
 public:
  virtual ~Pending() = default;
  virtual void wait() = 0;  // returns when the buffer may be reused (send) or holds the data (recv)
  virtual bool test() = 0;  // true once complete (then wait() returns at once)
};

class HostEngine {
 public:
  virtual ~HostEngine() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual int local_rank() const = 0;  // among the ranks of this node
  virtual int local_size() const = 0;
  // "MPI (Open MPI v4.1.4, thread level multiple)", "threads (one process, 4 ranks)"
  virtual std::string describe() const = 0;
  // The engine can be handed device memory of this type directly (GPU-aware MPI).
  virtual bool device_aware(DeviceType type) const = 0;

  virtual void allreduce(const void* send, void* recv, std::int64_t n, porta_dtype dt, porta_reduce_op op) = 0;
  virtual void reduce(const void* send, void* recv, std::int64_t n, porta_dtype dt, porta_reduce_op op, int root) = 0;
  virtual void broadcast(void* buf, std::int64_t n, porta_dtype dt, int root) = 0;
  virtual void allgather(const void* send, std::int64_t n, void* recv, porta_dtype dt) = 0;
  // counts[r] elements from each rank r, the same counts on every rank, received in rank order.
  virtual void allgatherv(const void* send, std::int64_t n, void* recv, const std::int64_t* counts, porta_dtype dt) = 0;
  virtual void reduce_scatter(const void* send, void* recv, std::int64_t n, porta_dtype dt, porta_reduce_op op) = 0;
  virtual void barrier() = 0;
  virtual std::unique_ptr<Pending> isend(const void* buf, std::int64_t n, porta_dtype dt, int dest, int tag) = 0;
  virtual std::unique_ptr<Pending> irecv(void* buf, std::int64_t n, porta_dtype dt, int source, int tag) = 0;
};

// MPI (distributed/mpi_engine.cpp). Both throw Unavailable, naming fn and saying why (the plugin
// was not built, libmpi could not be loaded, ...), when MPI cannot be used.
std::shared_ptr<HostEngine> mpi_world(const char* fn);
std::shared_ptr<HostEngine> mpi_from_fortran(std::int64_t handle, const char* fn);

// For porta-info and porta::distributed::mpi_info(): whether MPI loaded, and what it is or why not.
// The public MpiInfo and what only porta-info shows.
struct MpiStatus : porta::distributed::MpiInfo {
  std::string library;     // path of libporta_mpi.so
  std::string build_info;  // the headers it was built with
};
// Loads (and, unless initialise is false, initialises) the plugin once. Never throws.
MpiStatus mpi_status(bool initialise);

// n ranks of one process (distributed/thread_engine.cpp); element r is rank r's engine.
std::vector<std::shared_ptr<HostEngine>> thread_group(int n);

}  // namespace porta::detail::dist
