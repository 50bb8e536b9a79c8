// SPDX-License-Identifier: Apache-2.0
// porta::distributed: one program on many devices and many machines, over the engines the field
// already runs on: MPI between processes (Open MPI, MPICH), NCCL (CUDA) and RCCL (HIP) between
// GPUs, or the threads of one process. Nothing here needs MPI or NCCL at build time of the user's
// code, and a porta built with them still starts where they are absent: MPI comes from the plugin
// libporta_mpi.so, NCCL/RCCL are loaded by the GPU plugins, and `porta-info` says what was found.
//
//   // mpirun -np 4 ./app                       (or one process, one thread per GPU: local())
//   auto comm = porta::distributed::Communicator::world();
//   porta::Device dev = comm.local_device();     // node-local rank -> cuda:0, cuda:1, ... or cpu
//   auto x = porta::random::uniform<float>({n_local}, comm.rank(), dev);
//   comm.allreduce(x);                           // in place, sum over ranks, on dev's stream
//   float s = comm.sum(x);                       // == porta::sum of all ranks' x concatenated,
//                                                //    bit for bit, for any number of ranks
//
// Every collective is called by every rank of the communicator, in the same order, with arrays of
// the same dtype and (where the call says so) size, on devices of one type. porta checks it before
// any data moves: ranks whose calls differ all throw InvalidArgument naming two ranks' calls
// ("rank 0 called allreduce(float32, 1024, sum), rank 1 called allreduce(float64, 1024, sum)"); a
// thread rank whose last handle is destroyed makes the ranks waiting for it throw Unavailable.
// PORTA_DIST_CHECK=0 turns the comparison off (docs/distributed.md). Arrays must be
// contiguous. Calls are ordered with porta's streams: they start after the work queued on `stream`
// (default: the array's device's default stream) and work queued there afterwards sees the result;
// no synchronize is needed before or after. What moves the data (transport()):
//   - "nccl" / "rccl": GPU arrays, when every rank's GPU is distinct and the library loaded;
//     asynchronous on the stream, as NCCL itself.
//   - "mpi (device memory)": GPU arrays handed to a GPU-aware MPI after the stream is synchronized.
//   - "mpi (staged)", "threads (staged)": GPU (and cpu:strict) arrays copied through host memory.
//   - "mpi", "threads": CPU arrays, in place.
// Reductions (sum, prod, min, max) use porta's op semantics on every transport but NCCL/RCCL, whose
// floating-point min and max do not promise NaN propagation. Their order across ranks is the
// transport's: bit-identical results for any rank count come from sum(), dot() and norm2() below.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "porta/array.hpp"
#include "porta/complex.hpp"
#include "porta/stream.hpp"

namespace porta {
namespace detail::dist {
struct CommState;
struct RequestState;
}  // namespace detail::dist

namespace distributed {

enum class Op { sum, prod, min, max };

// A point-to-point transfer in flight (isend, irecv). wait() completes it: after wait() an irecv's
// array holds the message for work queued afterwards on the stream the irecv was given, and an
// isend's array may be rewritten. Destroying a Request that was not waited for waits.
class Request {
 public:
  Request() noexcept = default;
  Request(Request&&) noexcept = default;
  Request& operator=(Request&& o) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request();

  void wait();
  bool test();  // true once complete; never blocks
  bool valid() const noexcept { return state_ != nullptr; }

 private:
  friend class Communicator;
  explicit Request(std::shared_ptr<detail::dist::RequestState> s) noexcept : state_(std::move(s)) {}
  std::shared_ptr<detail::dist::RequestState> state_;
};

// Waits for every request of rs (in order).
void wait_all(std::vector<Request>& rs);

// A group of ranks. Copies share one group (as MPI handles do); it is released with the last copy.
// One thread uses a rank at a time.
class Communicator {
 public:
  // Every process started by mpirun/srun, through MPI_COMM_WORLD. Initialises MPI (thread level
  // multiple) unless the application did; then porta finalises it at exit. Unavailable, saying
  // why, when porta was built without MPI or the MPI library cannot be loaded.
  static Communicator world();
  // From an MPI communicator of the application, by its Fortran handle (MPI_Comm_c2f). From C++,
  // include porta/distributed_mpi.hpp and call porta::distributed::from_mpi(comm).
  static Communicator from_fortran_handle(std::int64_t handle);
  // n ranks within this process, element r being rank r: give each to its own thread (for one
  // process driving several GPUs, and for tests). No MPI involved. A rank whose last handle (its
  // Communicator copies and Requests) is destroyed has left: the others then throw instead of
  // waiting for it, so move each rank's handle into its thread.
  //   auto comms = porta::distributed::Communicator::local(2);
  //   std::thread t([&] { run(comms[1]); });  run(comms[0]);  t.join();
  static std::vector<Communicator> local(int n);
  // A group of one: every collective is a copy. What a program falls back to without MPI.
  static Communicator self() { return std::move(local(1)[0]); }

  int rank() const;
  int size() const;
  int local_rank() const;  // rank among the ranks on this node
  int local_size() const;
  // The device this rank should use: the node-local rank spread over the GPUs of the preferred
  // type (default_device()'s type; cpu when there is no GPU), local_rank() % their count.
  Device local_device() const;
  // "MPI (Open MPI v4.1.4), rank 1 of 4", "threads, rank 0 of 2".
  std::string describe() const;
  // What moves arrays of `device` (see above). For a GPU, the first call (or the first
  // collective on that device) sets up NCCL/RCCL and is itself collective. A device that does not
  // exist (cpu:1, cuda:7 on a one-GPU machine) is Unavailable, as in every porta call.
  std::string transport(Device device) const;
  void barrier() const;

  // x = op over ranks of x, on every rank.
  template <class T>
  void allreduce(Array<T>& x, Op op = Op::sum, const Stream& stream = Stream()) const;
  // recv = op over ranks of send (same size; recv may be send).
  template <class T>
  void allreduce(const Array<T>& send, Array<T>& recv, Op op = Op::sum, const Stream& stream = Stream()) const;
  // recv on root = op over ranks of send; recv is not used on the other ranks (may be a null Array).
  template <class T>
  void reduce(const Array<T>& send, Array<T>& recv, int root, Op op = Op::sum, const Stream& stream = Stream()) const;
  // x on every rank = x of root.
  template <class T>
  void broadcast(Array<T>& x, int root, const Stream& stream = Stream()) const;
  // recv (size() * send.size() elements) = every rank's send, in rank order.
  template <class T>
  void allgather(const Array<T>& send, Array<T>& recv, const Stream& stream = Stream()) const;
  // recv (n elements) = op over ranks of elements [rank() * n, (rank() + 1) * n) of send (size() * n).
  template <class T>
  void reduce_scatter(const Array<T>& send, Array<T>& recv, Op op = Op::sum, const Stream& stream = Stream()) const;

  // Non-blocking point to point. Tags 0..32766 (32767 is porta's own); messages between two ranks
  // with one tag arrive in the order sent. Over NCCL/RCCL the transfers start at the first wait()
  // of any request of this communicator, all in one group (so that pairs of sends and receives
  // cannot deadlock), issued in tag order on both sides: tags match as in MPI for the transfers of
  // one group; a receive must be posted before the wait() that starts its message's group ends.
  // The array must stay alive until wait().
  //   auto rs = std::vector<porta::distributed::Request>{};
  //   rs.push_back(comm.isend(top_row, up));  rs.push_back(comm.irecv(halo_row, up));
  //   porta::distributed::wait_all(rs);
  template <class T>
  Request isend(const Array<T>& x, int dest, int tag = 0, const Stream& stream = Stream()) const;
  template <class T>
  Request irecv(Array<T>& x, int source, int tag = 0, const Stream& stream = Stream()) const;

  // porta::sum, dot and norm2 of the concatenation of every rank's array (flattened, in rank
  // order), with exactly the bits porta::sum, dot and norm2 give for that whole array on one
  // device, for any number of ranks and any split, uneven and empty parts included. Each rank
  // reduces its own whole chunks of the canonical order (docs/determinism.md) where its data lives;
  // the ranks exchange only the pieces of chunks that straddle a boundary (under 32768 elements per
  // boundary) and one partial per chunk (docs/distributed.md has the cost). Returned on every rank.
  template <class T>
  T sum(const Array<T>& x, const Stream& stream = Stream()) const;
  template <class T>
  T dot(const Array<T>& x, const Array<T>& y, const Stream& stream = Stream()) const;
  template <class T>
  T norm2(const Array<T>& x, const Stream& stream = Stream()) const;
  // Of a complex array: a real number, sqrt(vdot(x, x)), as porta::norm2.
  template <class T>
  T norm2(const Array<complex<T>>& x, const Stream& stream = Stream()) const;

  Communicator() = default;  // a null communicator: every use is an InvalidArgument
  explicit Communicator(std::shared_ptr<detail::dist::CommState> s) noexcept : state_(std::move(s)) {}

 private:
  const detail::dist::CommState& state(const char* fn) const;
  std::shared_ptr<detail::dist::CommState> state_;
};

// Whether MPI can be used and what it is (porta-info shows the same).
struct MpiInfo {
  bool built = false;      // porta was built with its MPI plugin
  bool available = false;  // the plugin and the MPI library loaded
  std::string version;     // "Open MPI v4.1.4, ..." (MPI_Get_library_version)
  std::string reason;      // why not, when not available
  bool cuda_aware = false, hip_aware = false;
};
MpiInfo mpi_info();

}  // namespace distributed
}  // namespace porta
