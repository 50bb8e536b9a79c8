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

// What one rank's collective call is, for the check that every rank makes the same call: a few
// integers, compared across ranks before the call moves data (distributed/calls.cpp).
enum class CallKind : std::int32_t {
  allreduce,
  reduce,
  broadcast,
  allgather,
  reduce_scatter,
  barrier,
  sum,
  dot,
  norm2,
  setup  // the collective set-up of a GPU's device collectives (transport(), a first isend/irecv)
};

struct Call {
  const char* fn = "porta::distributed";  // the public function, for messages; not compared
  bool checked = false;                   // compared across ranks (PORTA_DIST_CHECK is not 0)
  std::uint64_t seq = 0;                  // this rank's count of collective calls on the communicator
  CallKind kind = CallKind::barrier;
  std::int32_t dtype = -1;   // porta_dtype; -1: none
  std::int32_t op = -1;      // porta_reduce_op; -1: none
  std::int32_t root = -1;    // -1: none
  std::int32_t device = -1;  // DeviceType (not the index: ranks use different GPUs); -1: none
  std::int64_t count = -1;   // elements per rank; -1 where ranks may pass different counts (sum)

  bool same(const Call& o) const {
    return seq == o.seq && kind == o.kind && dtype == o.dtype && op == o.op && root == o.root && device == o.device &&
           count == o.count;
  }
};

// Whether calls are compared: PORTA_DIST_CHECK=0 turns the check off (read once per process).
bool calls_checked();
// "allreduce(float32, 1024, sum)"; with `other`, also what tells the two apart when the short forms
// are equal (the device type, the call's number).
std::string describe(const Call& c, const Call* other = nullptr);
// "rank 0 called allreduce(float32, 1024, sum), rank 1 called allreduce(float64, 1024, sum) (...)"
std::string mismatch(int rank_a, const Call& a, int rank_b, const Call& b);
// A Call as three integers and back, for engines that compare calls by exchanging them.
constexpr int kCallWords = 3;
void pack(const Call& c, std::int64_t* words);
Call unpack(const std::int64_t* words);

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
  // The collectives that follow, up to the next begin_call(), serve c. When c.checked, c is compared
  // with every rank's call before any data moves, and every rank throws InvalidArgument naming two
  // ranks' calls when they differ: the MPI engine exchanges it here, the thread engine compares it
  // in the first rendezvous that follows (no extra wait).
  virtual void begin_call(const Call& c) = 0;
  // Compares the current call now unless a collective has already: before a device collective
  // (NCCL), which moves the data without this engine.
  virtual void check_call() = 0;
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
