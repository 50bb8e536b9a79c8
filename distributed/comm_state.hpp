// SPDX-License-Identifier: Apache-2.0
// What a Communicator holds (CommState, RequestState) and the functions its calls go through,
// shared by the three files of porta::distributed's front end. Internal to libporta.
//   communicator.cpp     the public Communicator and Request: argument checks, then one call here;
//   transfers.cpp        how a call's data moves: the route for the arrays' device, and the
//                        collective and point-to-point transfers along it;
//   distributed_sum.cpp  the bit-identical sum over every rank's array (sum, dot, norm2).
// The host engines below them are distributed/engine.hpp's.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "distributed/engine.hpp"
#include "porta/abi/backend_v1.h"
#include "porta/array.hpp"
#include "porta/device.hpp"
#include "porta/distributed.hpp"
#include "porta/stream.hpp"

namespace porta::detail::dist {

// Tag of porta's own messages (the distributed sum's pieces); users have 0..32766, within the 32767
// that MPI guarantees.
constexpr int kOwnTag = 32767;

// A GPU's device collectives for this communicator, decided once per device (collectively).
struct DeviceColl {
  bool decided = false;
  porta_coll comm = nullptr;
  const porta_backend_v1* table = nullptr;
  std::string library;  // "NCCL 2.27.3 (libnccl.so.2)"
  std::string why_not;  // when comm is null
};

// A send or receive queued for the next group of device collectives.
struct QueuedP2P {
  porta_coll comm;
  const porta_backend_v1* table;
  porta_coll_kind kind;
  porta_dtype dt;
  const void* send;
  void* recv;
  std::int64_t n;
  int peer;
  int tag;
  porta_stream stream;
  Device device;
};

struct CommState {
  std::shared_ptr<HostEngine> host;
  bool threads = false;
  mutable std::uint64_t calls = 0;  // collective calls made on this rank (one thread at a time)
  mutable std::mutex m;
  mutable std::map<std::pair<int, int>, DeviceColl> colls;  // (device type, index)
  mutable std::vector<QueuedP2P> queued;

  ~CommState() {
    for (auto& kv : colls)
      if (kv.second.comm != nullptr) kv.second.table->coll_destroy(kv.second.comm);
  }
};

struct RequestState {
  std::function<void()> finish;  // completes the transfer; called once
  std::function<bool()> poll;    // true when finish() would not block
  std::shared_ptr<void> keep;    // the array (a view of it) and staging memory, until done
  std::shared_ptr<const CommState> comm;
  bool done = false;

  void wait() {
    if (done) return;
    done = true;  // also when finish throws: a failed transfer is not retried
    finish();
    keep.reset();
  }
};

// ---- calls and routes (transfers.cpp) ------------------------------------------------------------

// The next collective call of this rank, numbered before its arguments are checked: a call that
// fails on one rank alone puts that rank a call ahead, so that its next call meets the others'
// pending one as a mismatch instead of pairing with it.
Call start(const CommState& st, CallKind kind, const char* fn);

// distributed::Op as the ABI's reduction op.
porta_reduce_op to_abi(distributed::Op op);

// Each call picks a route for the arrays' device:
//   device     the backend's collective entry on the stream (asynchronous, as NCCL is);
//   direct     the host engine on the array's memory (host-accessible arrays: the CPU's; GPU arrays
//              for GPU-aware MPI, after the stream is synchronized);
//   staged     copies through pinned host memory around the host engine (GPU arrays otherwise,
//              and cpu:strict, whose memory the host may not touch).
enum class Route { device, direct, staged };

struct Plan {
  Route route = Route::staged;
  porta_coll comm = nullptr;
  const porta_backend_v1* table = nullptr;
};

// The route for `dev`. The first one asked for a GPU decides, with every rank, whether the GPU
// has device collectives: a collective step of its own (undecided_gpu).
Plan plan_for(const CommState& st, Device dev, const char* fn);

// Whether `dev` is a GPU whose device collectives are not decided yet: the next call that needs
// them decides them with every rank, and is checked as a call of its own (CallKind::setup).
bool undecided_gpu(const CommState& st, Device dev);

// One collective of kind k. send: n_send elements, recv: n_recv (either may be null where the
// kind does not use it on this rank).
// call: what this rank's call is, for the check that every rank makes the same one (before any
// collective set-up or data moves, so that ranks on devices of different types fail alike too).
void collective(const CommState& st, Call call, porta_coll_kind k, Device dev, porta_dtype dt, porta_reduce_op op,
                const void* send, std::int64_t n_send, void* recv, std::int64_t n_recv, int root, const Stream& stream);

// An isend (k == PORTA_COLL_SEND) or irecv of n elements at buf with `peer`; `keep` holds the
// array until the transfer is done.
std::shared_ptr<RequestState> point_to_point(const std::shared_ptr<CommState>& shared, porta_coll_kind k, Device dev,
                                             porta_dtype dt, void* buf, std::int64_t n, int peer, int tag,
                                             const Stream& stream, std::shared_ptr<void> keep);

// ---- the distributed sum (distributed_sum.cpp) -------------------------------------------------

// porta::sum of the concatenation of every rank's x (flattened), with the bits porta::sum gives
// on one device. For float, double, std::int32_t and std::int64_t.
template <class T>
T sum_concatenated(const CommState& st, Call call, const Array<T>& x_in, const Stream& stream);

}  // namespace porta::detail::dist
