// SPDX-License-Identifier: Apache-2.0
// porta::distributed's front end: one Communicator over a host engine (MPI or threads), plus, per
// GPU, the backend's device collectives (NCCL/RCCL) when every rank can use them. Each call picks
// a route for the arrays' device:
//   device     the backend's collective entry on the stream (asynchronous, as NCCL is);
//   direct     the host engine on the array's memory (CPU arrays; GPU arrays for GPU-aware MPI,
//              after the stream is synchronized);
//   staged     copies through pinned host memory around the host engine (GPU arrays otherwise,
//              and cpu:strict, whose memory the host may not touch).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "algorithms/common.hpp"
#include "distributed/engine.hpp"
#include "porta/algorithms.hpp"
#include "porta/detail/reduce_order.hpp"
#include "porta/distributed.hpp"

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

namespace {

const char* kind_fn(porta_coll_kind k) {
  switch (k) {
    case PORTA_COLL_ALLREDUCE:
      return "porta::distributed::allreduce";
    case PORTA_COLL_REDUCE:
      return "porta::distributed::reduce";
    case PORTA_COLL_BROADCAST:
      return "porta::distributed::broadcast";
    case PORTA_COLL_ALLGATHER:
      return "porta::distributed::allgather";
    case PORTA_COLL_REDUCE_SCATTER:
      return "porta::distributed::reduce_scatter";
    case PORTA_COLL_SEND:
      return "porta::distributed::isend";
    case PORTA_COLL_RECV:
      return "porta::distributed::irecv";
    case PORTA_COLL_COUNT:
      break;
  }
  return "porta::distributed";
}

porta_reduce_op to_abi(distributed::Op op) {
  switch (op) {
    case distributed::Op::sum:
      return PORTA_REDUCE_SUM;
    case distributed::Op::prod:
      return PORTA_REDUCE_PROD;
    case distributed::Op::min:
      return PORTA_REDUCE_MIN;
    case distributed::Op::max:
      return PORTA_REDUCE_MAX;
  }
  throw_invalid("porta::distributed", "unknown Op");
}

bool env_off(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && (std::strcmp(v, "0") == 0 || std::strcmp(v, "off") == 0 || std::strcmp(v, "OFF") == 0);
}

std::uint32_t host_hash() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  std::uint32_t h = 2166136261u;  // FNV-1a
  for (const char* p = name; *p != '\0'; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 16777619u;
  return h;
}

// The next collective call of this rank, numbered before its arguments are checked: a call that
// fails on one rank alone puts that rank a call ahead, so that its next call meets the others'
// pending one as a mismatch instead of pairing with it.
Call start(const CommState& st, CallKind kind, const char* fn) {
  Call c;
  c.fn = fn;
  c.checked = calls_checked();
  c.seq = ++st.calls;
  c.kind = kind;
  return c;
}

// Decides, with every rank, whether `dev` uses the backend's device collectives; fills c.
void decide_into(const CommState& st, Device dev, DeviceColl& c, const char* fn) {
  const porta_backend_v1& t = backend_for(dev, fn);
  // This rank's view: [usable, type, index, host]
  std::int64_t mine[4] = {0, static_cast<std::int64_t>(dev.type), dev.index, static_cast<std::int64_t>(host_hash())};
  std::string local_why;
  if (env_off("PORTA_DISTRIBUTED_NCCL")) {
    local_why = "PORTA_DISTRIBUTED_NCCL=0";
  } else {
    char info[256] = {};
    if (t.coll_available(info, sizeof(info)) == PORTA_OK) {
      mine[0] = 1;
      c.library = info;
    } else {
      local_why = t.last_error();
    }
  }
  const int size = st.host->size();
  std::vector<std::int64_t> all(static_cast<std::size_t>(4 * size));
  st.host->allgather(mine, 4, all.data(), PORTA_I64);
  for (int r = 0; r < size && c.why_not.empty(); ++r) {
    const std::int64_t* a = &all[static_cast<std::size_t>(4 * r)];
    if (a[0] == 0) {
      c.why_not = r == st.host->rank() ? local_why : "not available on rank " + std::to_string(r);
    } else if (a[1] != mine[1]) {
      c.why_not = "the ranks' arrays are on devices of different types";
    }
    for (int q = 0; q < r && c.why_not.empty(); ++q) {
      const std::int64_t* b = &all[static_cast<std::size_t>(4 * q)];
      if (a[2] == b[2] && a[3] == b[3])
        c.why_not = "ranks " + std::to_string(q) + " and " + std::to_string(r) + " share " +
                    Device{static_cast<DeviceType>(a[1]), static_cast<int>(a[2])}.to_string() +
                    " (device collectives need one GPU per rank)";
    }
  }
  if (!c.why_not.empty()) return;
  std::int64_t id[PORTA_COLL_ID_BYTES / 8] = {};
  std::int64_t ok = 1;
  if (st.host->rank() == 0) ok = t.coll_unique_id(id) == PORTA_OK ? 1 : 0;
  std::string id_error = ok ? "" : t.last_error();
  st.host->broadcast(&ok, 1, PORTA_I64, 0);
  if (!ok) {
    c.why_not = st.host->rank() == 0 ? id_error : "rank 0 could not start the group";
    return;
  }
  st.host->broadcast(id, PORTA_COLL_ID_BYTES / 8, PORTA_I64, 0);
  porta_coll comm = nullptr;
  const porta_status s = t.coll_init(dev.index, size, st.host->rank(), id, &comm);
  const std::string init_error = s == PORTA_OK ? "" : t.last_error();
  std::int64_t good = s == PORTA_OK ? 1 : 0;
  try {
    st.host->allreduce(&good, &good, 1, PORTA_I64, PORTA_REDUCE_MIN);
  } catch (...) {
    if (comm != nullptr) t.coll_destroy(comm);
    throw;
  }
  if (!good) {
    if (comm != nullptr) t.coll_destroy(comm);
    c.why_not = init_error.empty() ? "another rank could not join the group" : init_error;
    return;
  }
  c.comm = comm;
  c.table = &t;
}

// Decided only when every rank got through: after a throw (a rank left, the ranks' calls differ)
// the next call decides again, with every rank.
void decide_device_coll(const CommState& st, Device dev, DeviceColl& c, const char* fn) {
  DeviceColl d;
  decide_into(st, dev, d, fn);
  d.decided = true;
  c = d;
}

bool undecided_gpu(const CommState& st, Device dev) {
  if (dev.type == DeviceType::cpu) return false;
  std::lock_guard<std::mutex> lock(st.m);
  auto it = st.colls.find({static_cast<int>(dev.type), dev.index});
  return it == st.colls.end() || !it->second.decided;
}

// Issues the queued sends and receives as one group.
void flush_queued(const CommState& st) {
  std::vector<QueuedP2P> q;
  {
    std::lock_guard<std::mutex> lock(st.m);
    q.swap(st.queued);
  }
  if (q.empty()) return;
  // NCCL pairs a peer's sends and receives by their order alone. Both sides issue them sorted by
  // tag (stably), so the k-th message of a tag meets the k-th receive of that tag: MPI's matching,
  // for the transfers of one group.
  std::stable_sort(q.begin(), q.end(), [](const QueuedP2P& a, const QueuedP2P& b) { return a.tag < b.tag; });
  const porta_backend_v1& t = *q.front().table;
  check(t.coll_group(1), "porta::distributed::Request::wait", q.front().device);
  porta_status first_error = PORTA_OK;
  Device where = q.front().device;
  std::string message;
  for (const QueuedP2P& p : q) {
    const porta_status s = t.collective(p.comm, p.kind, p.dt, PORTA_REDUCE_SUM, p.send, p.recv, p.n, p.peer, p.stream);
    if (s != PORTA_OK && first_error == PORTA_OK) {
      first_error = s;
      where = p.device;
      message = t.last_error();
    }
  }
  const porta_status end = t.coll_group(0);
  if (first_error != PORTA_OK)
    throw BackendError(std::string("porta::distributed::Request::wait: ") + message + " (" + where.to_string() + ")");
  check(end, "porta::distributed::Request::wait", where);
}

enum class Route { device, direct, staged };

struct Plan {
  Route route = Route::staged;
  porta_coll comm = nullptr;
  const porta_backend_v1* table = nullptr;
};

Plan plan_for(const CommState& st, Device dev, const char* fn) {
  backend_for(dev, fn);  // the device exists (cpu:1, cuda:7 are Unavailable, as everywhere in porta)
  Plan p;
  if (dev.type == DeviceType::cpu) {
    p.route = dev.is_strict() ? Route::staged : Route::direct;
    return p;
  }
  DeviceColl* c = nullptr;
  {
    std::lock_guard<std::mutex> lock(st.m);
    c = &st.colls[{static_cast<int>(dev.type), dev.index}];
  }
  if (!c->decided) decide_device_coll(st, dev, *c, fn);
  if (c->comm != nullptr) {
    p.route = Route::device;
    p.comm = c->comm;
    p.table = c->table;
  } else {
    p.route = st.host->device_aware(dev.type) ? Route::direct : Route::staged;
  }
  return p;
}

// Pinned host memory for staging, freed on scope exit.
struct Staging {
  Device dev;
  void* p = nullptr;
  Staging(Device d, std::size_t bytes, const char* fn) : dev(d) {
    if (bytes > 0) p = host_alloc(d, bytes, fn);
  }
  ~Staging() {
    if (p != nullptr) host_free(dev, p);
  }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
};

void sync_stream(Device dev, porta_stream s, const char* fn) {
  check(backend_for(dev, fn).stream_synchronize(dev.index, s), fn, dev);
}

// One collective of kind k. send: n_send elements, recv: n_recv (either may be null where the
// kind does not use it on this rank).
// call: what this rank's call is, for the check that every rank makes the same one (before any
// collective set-up or data moves, so that ranks on devices of different types fail alike too).
void collective(const CommState& st, Call call, porta_coll_kind k, Device dev, porta_dtype dt, porta_reduce_op op,
                const void* send, std::int64_t n_send, void* recv, std::int64_t n_recv, int root,
                const Stream& stream) {
  const char* fn = kind_fn(k);
  const porta_stream s = stream_for(stream, dev, fn);
  HostEngine& h = *st.host;
  const std::int64_t n = k == PORTA_COLL_ALLGATHER ? n_send : n_recv;  // elements per rank
  call.dtype = dt;
  call.device = static_cast<std::int32_t>(dev.type);
  call.count = k == PORTA_COLL_REDUCE ? n_send : n;
  if (k == PORTA_COLL_ALLREDUCE || k == PORTA_COLL_REDUCE || k == PORTA_COLL_REDUCE_SCATTER) call.op = op;
  if (k == PORTA_COLL_REDUCE || k == PORTA_COLL_BROADCAST) call.root = root;
  h.begin_call(call);
  const Plan plan = plan_for(st, dev, fn);
  if (plan.route == Route::device) {
    h.check_call();
    flush_queued(st);
    const std::int64_t count = k == PORTA_COLL_BROADCAST ? n_recv : (k == PORTA_COLL_REDUCE ? n_send : n);
    check(plan.table->collective(plan.comm, k, dt, op, send, recv, count, root, s), fn, dev);
    return;
  }
  auto run_host = [&](const void* hs, void* hr) {
    switch (k) {
      case PORTA_COLL_ALLREDUCE:
        h.allreduce(hs, hr, n, dt, op);
        break;
      case PORTA_COLL_REDUCE:
        h.reduce(hs, hr, n_send, dt, op, root);
        break;
      case PORTA_COLL_BROADCAST:
        h.broadcast(hr, n_recv, dt, root);
        break;
      case PORTA_COLL_ALLGATHER:
        h.allgather(hs, n_send, hr, dt);
        break;
      case PORTA_COLL_REDUCE_SCATTER:
        h.reduce_scatter(hs, hr, n_recv, dt, op);
        break;
      case PORTA_COLL_SEND:
      case PORTA_COLL_RECV:
      case PORTA_COLL_COUNT:
        throw_invalid(fn, "not a collective");
    }
  };
  if (plan.route == Route::direct) {
    if (dev.type != DeviceType::cpu) sync_stream(dev, s, fn);
    run_host(send, recv);
    return;
  }
  // Staged. Broadcast has one buffer (recv); the others read send and write recv.
  const std::size_t es = dtype_size(dt);
  const bool has_send = send != nullptr && k != PORTA_COLL_BROADCAST;
  const bool has_recv = recv != nullptr;
  Staging hs(dev, has_send ? static_cast<std::size_t>(n_send) * es : 0, fn);
  Staging hr(dev, has_recv ? static_cast<std::size_t>(n_recv) * es : 0, fn);
  if (has_send && n_send > 0) copy_to_host(dev, send, hs.p, static_cast<std::size_t>(n_send) * es, s, true);
  if (k == PORTA_COLL_BROADCAST && has_recv && n_recv > 0)
    copy_to_host(dev, recv, hr.p, static_cast<std::size_t>(n_recv) * es, s, true);
  run_host(hs.p, hr.p);
  const bool writes = has_recv && n_recv > 0 && (k != PORTA_COLL_REDUCE || h.rank() == root);
  if (writes) copy_from_host(dev, recv, hr.p, static_cast<std::size_t>(n_recv) * es, s, true);
}

std::shared_ptr<RequestState> point_to_point(const std::shared_ptr<CommState>& shared, porta_coll_kind k, Device dev,
                                             porta_dtype dt, void* buf, std::int64_t n, int peer, int tag,
                                             const Stream& stream, std::shared_ptr<void> keep) {
  const char* fn = kind_fn(k);
  const CommState& st = *shared;
  const porta_stream s = stream_for(stream, dev, fn);
  const bool is_send = k == PORTA_COLL_SEND;
  auto r = std::make_shared<RequestState>();
  r->keep = std::move(keep);
  r->comm = shared;  // a request outlives neither its communicator nor its engine
  HostEngine& h = *st.host;
  if (undecided_gpu(st, dev)) {  // the set-up is collective, and checked as a call of its own
    backend_for(dev, fn);
    Call c = start(st, CallKind::setup, fn);
    c.device = static_cast<std::int32_t>(dev.type);
    h.begin_call(c);
  }
  const Plan plan = plan_for(st, dev, fn);
  if (plan.route == Route::device) {
    {
      std::lock_guard<std::mutex> lock(st.m);
      st.queued.push_back(QueuedP2P{plan.comm, plan.table, k, dt, is_send ? buf : nullptr, is_send ? nullptr : buf, n,
                                    peer, tag, s, dev});
    }
    const CommState* sp = &st;  // kept alive by r->comm
    r->finish = [sp] { flush_queued(*sp); };
    r->poll = [sp] {
      flush_queued(*sp);
      return true;
    };
    return r;
  }
  if (plan.route == Route::direct) {
    if (dev.type != DeviceType::cpu) sync_stream(dev, s, fn);
    std::shared_ptr<Pending> p = is_send ? h.isend(buf, n, dt, peer, tag) : h.irecv(buf, n, dt, peer, tag);
    r->finish = [p] { p->wait(); };
    r->poll = [p] { return p->test(); };
    return r;
  }
  const std::size_t bytes = static_cast<std::size_t>(n) * dtype_size(dt);
  auto staging = std::make_shared<Staging>(dev, bytes, fn);
  if (is_send) {
    if (bytes > 0) copy_to_host(dev, buf, staging->p, bytes, s, true);
    std::shared_ptr<Pending> p = h.isend(staging->p, n, dt, peer, tag);
    r->finish = [p, staging] { p->wait(); };
    r->poll = [p] { return p->test(); };
  } else {
    std::shared_ptr<Pending> p = h.irecv(staging->p, n, dt, peer, tag);
    r->finish = [p, staging, dev, buf, bytes, s, fn] {
      p->wait();
      if (bytes > 0) copy_from_host(dev, buf, staging->p, bytes, s, true);
    };
    r->poll = [p] { return p->test(); };
  }
  return r;
}

// ---- the distributed sum -------------------------------------------------------------------

// porta::sum of the concatenation of every rank's x (flattened): the canonical order of
// reduce_order.hpp depends only on the global length N, so rank r, holding elements [g0, g1),
// owns the chunks that start in its range, reduces those it holds whole where its data lives
// (porta::sum along the rows of a (rows, kReduceChunk) view: one canonical chunk per row), receives
// the pieces of the one chunk that runs past its end from the ranks that hold them, and the ranks
// then share one partial per chunk; the partials are reduced in the canonical order on the host.
template <class T>
T sum_concatenated(const CommState& st, Call call, const Array<T>& x_in, const Stream& stream) {
  const char* fn = call.fn;
  x_in.check_valid(fn);
  HostEngine& h = *st.host;
  const Array<T> xc = x_in.is_contiguous() ? Array<T>() : x_in.contiguous(stream);
  const Array<T> x = (x_in.is_contiguous() ? x_in : xc).reshaped(Shape{x_in.size()});
  const int size = h.size(), rank = h.rank();
  const std::int64_t n = x.size();
  call.dtype = dtype_of<T>();  // the count is each rank's own
  call.device = static_cast<std::int32_t>(x.device().type);
  h.begin_call(call);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(size)), start(static_cast<std::size_t>(size) + 1, 0);
  h.allgather(&n, 1, counts.data(), PORTA_I64);
  for (int r = 0; r < size; ++r) start[r + 1] = start[r] + counts[r];
  const std::int64_t total = start[size];
  if (total == 0) return T(0);
  constexpr std::int64_t K = kReduceChunk;
  const porta_dtype dt = dtype_of<T>();
  const std::int64_t g0 = start[rank], g1 = start[rank + 1];
  auto owner = [&](std::int64_t c) {  // the rank holding element c * K
    const std::int64_t at = c * K;
    int r = 0;
    while (!(start[r] <= at && at < start[r + 1])) ++r;
    return r;
  };

  // The first elements, when they continue a chunk that starts on an earlier rank.
  std::vector<T> head;
  std::unique_ptr<Pending> head_sent;
  if (n > 0 && g0 % K != 0) {
    const std::int64_t c = g0 / K;
    const std::int64_t len = std::min(g1, (c + 1) * K) - g0;
    head = x.slice(0, 0, len).to_vector(stream);
    head_sent = h.isend(head.data(), len, dt, owner(c), kOwnTag);
  }

  // Chunks owned: [c_first, c_end).
  const std::int64_t c_first = (g0 + K - 1) / K;
  const std::int64_t c_end = n > 0 ? (g1 + K - 1) / K : c_first;
  std::vector<T> mine;
  mine.reserve(static_cast<std::size_t>(std::max<std::int64_t>(0, c_end - c_first)));
  const std::int64_t rows = std::max<std::int64_t>(0, g1 / K - c_first);  // held whole, K elements each
  if (rows > 0) {
    const std::int64_t a = c_first * K - g0;
    const Array<T> whole = x.slice(0, a, a + rows * K).reshaped(Shape{rows, K});
    const std::vector<T> p = porta::sum(whole, 1, stream).to_vector(stream);
    mine.insert(mine.end(), p.begin(), p.end());
  }
  if (c_end > c_first + rows) {  // the last owned chunk is shorter than K or runs past g1
    const std::int64_t c = c_end - 1;
    const std::int64_t b = c * K, e = std::min(total, b + K);
    std::vector<T> chunk = x.slice(0, b - g0, std::min(e, g1) - g0).to_vector(stream);
    if (e > g1) {  // the rest comes from the ranks after this one
      chunk.resize(static_cast<std::size_t>(e - b));
      std::vector<std::unique_ptr<Pending>> pieces;
      for (int q = rank + 1; q < size && start[q] < e; ++q) {
        if (counts[q] == 0) continue;
        const std::int64_t len = std::min(start[q + 1], e) - start[q];
        pieces.push_back(h.irecv(chunk.data() + (start[q] - b), len, dt, q, kOwnTag));
      }
      for (auto& p : pieces) p->wait();
    }
    mine.push_back(reduce_chunk_contiguous(chunk.data(), e - b, SumOp{}));
  }
  if (head_sent) head_sent->wait();

  // One partial per chunk, on every rank, in chunk order.
  std::vector<std::int64_t> owned(static_cast<std::size_t>(size));
  for (int q = 0; q < size; ++q) owned[q] = counts[q] == 0 ? 0 : (start[q + 1] + K - 1) / K - (start[q] + K - 1) / K;
  const std::int64_t m = reduce_chunk_count(total);
  std::vector<T> partial(static_cast<std::size_t>(m));
  h.allgatherv(mine.data(), static_cast<std::int64_t>(mine.size()), partial.data(), owned.data(), dt);
  const T r = m == 1 ? partial[0] : reduce_canonical<T>(m, SumOp{}, ReducePartials<T>{partial.data()});
  return canonical_nan(r);
}

}  // namespace
}  // namespace porta::detail::dist

namespace porta::distributed {

using detail::dist::CommState;
using detail::dist::RequestState;

Request& Request::operator=(Request&& o) noexcept {
  if (this != &o) {
    if (state_) {
      try {
        state_->wait();
      } catch (...) {
      }
    }
    state_ = std::move(o.state_);
  }
  return *this;
}

Request::~Request() {
  if (!state_) return;
  try {
    state_->wait();
  } catch (...) {  // a destructor cannot report; wait() does
  }
}

void Request::wait() {
  if (!state_) detail::throw_invalid("porta::distributed::Request::wait", "the request is empty");
  state_->wait();
}

bool Request::test() {
  if (!state_) detail::throw_invalid("porta::distributed::Request::test", "the request is empty");
  if (state_->done) return true;
  if (!state_->poll()) return false;
  state_->wait();
  return true;
}

void wait_all(std::vector<Request>& rs) {
  for (Request& r : rs)
    if (r.valid()) r.wait();
}

namespace {
Communicator make(std::shared_ptr<detail::dist::HostEngine> engine, bool threads) {
  auto s = std::make_shared<CommState>();
  s->host = std::move(engine);
  s->threads = threads;
  return Communicator(std::move(s));
}

void check_contiguous(const char* fn, const char* name, bool valid, bool contiguous) {
  if (!valid)
    detail::throw_invalid(fn, (std::string("the array ") + name + " was moved from (or default-constructed)").c_str());
  if (!contiguous)
    detail::throw_invalid(fn, (std::string("the array ") + name +
                               " is a strided view; collectives need contiguous "
                               "arrays (pass x.contiguous())")
                                  .c_str());
}

void check_root(const char* fn, int root, int size, const char* what = "root") {
  if (root < 0 || root >= size)
    detail::throw_invalid(fn, (std::string(what) + " " + std::to_string(root) +
                               " is not a rank of this communicator "
                               "(size " +
                               std::to_string(size) + ")")
                                  .c_str());
}

template <class T>
void check_same_device(const char* fn, const Array<T>& a, const Array<T>& b) {
  if (a.device() != b.device())
    throw DeviceMismatch(std::string(fn) + ": send is on " + a.device().to_string() + ", recv on " +
                         b.device().to_string());
}

template <class T>
std::shared_ptr<void> keep_alive(const Array<T>& x) {
  return std::make_shared<Array<T>>(x.reshaped(x.shape()));
}
}  // namespace

Communicator Communicator::world() {
  return make(detail::dist::mpi_world("porta::distributed::Communicator::world"), false);
}

Communicator Communicator::from_fortran_handle(std::int64_t handle) {
  return make(detail::dist::mpi_from_fortran(handle, "porta::distributed::Communicator::from_fortran_handle"), false);
}

std::vector<Communicator> Communicator::local(int n) {
  std::vector<Communicator> out;
  for (auto& e : detail::dist::thread_group(n)) out.push_back(make(std::move(e), true));
  return out;
}

const CommState& Communicator::state(const char* fn) const {
  if (!state_) detail::throw_invalid(fn, "the communicator is empty (default-constructed or moved from)");
  return *state_;
}

int Communicator::rank() const {
  return state("porta::distributed::Communicator::rank").host->rank();
}
int Communicator::size() const {
  return state("porta::distributed::Communicator::size").host->size();
}
int Communicator::local_rank() const {
  return state("porta::distributed::Communicator::local_rank").host->local_rank();
}
int Communicator::local_size() const {
  return state("porta::distributed::Communicator::local_size").host->local_size();
}

Device Communicator::local_device() const {
  const CommState& s = state("porta::distributed::Communicator::local_device");
  const Device best = default_device();
  if (best.type == DeviceType::cpu) return best;
  std::vector<Device> same;
  for (const Device& d : devices())
    if (d.type == best.type) same.push_back(d);
  return same[static_cast<std::size_t>(s.host->local_rank()) % same.size()];
}

std::string Communicator::describe() const {
  const CommState& s = state("porta::distributed::Communicator::describe");
  return s.host->describe() + ", rank " + std::to_string(s.host->rank()) + " of " + std::to_string(s.host->size());
}

std::string Communicator::transport(Device device) const {
  constexpr const char* fn = "porta::distributed::Communicator::transport";
  const CommState& s = state(fn);
  detail::backend_for(device, fn);
  if (detail::dist::undecided_gpu(s, device)) {  // collective: the device collectives' set-up
    detail::dist::Call c = detail::dist::start(s, detail::dist::CallKind::setup, fn);
    c.device = static_cast<std::int32_t>(device.type);
    s.host->begin_call(c);
  }
  const detail::dist::Plan p = detail::dist::plan_for(s, device, fn);
  const std::string host = s.threads ? "threads" : "mpi";
  switch (p.route) {
    case detail::dist::Route::device: {
      std::lock_guard<std::mutex> lock(s.m);
      return s.colls[{static_cast<int>(device.type), device.index}].library;
    }
    case detail::dist::Route::direct:
      return device.type == DeviceType::cpu ? host : host + " (device memory)";
    case detail::dist::Route::staged:
      break;
  }
  std::string why;
  if (device.type != DeviceType::cpu) {
    std::lock_guard<std::mutex> lock(s.m);
    why = s.colls[{static_cast<int>(device.type), device.index}].why_not;
  }
  return host + " (staged through host memory" + (why.empty() ? "" : "; no device collectives: " + why) + ")";
}

void Communicator::barrier() const {
  constexpr const char* fn = "porta::distributed::Communicator::barrier";
  const CommState& s = state(fn);
  s.host->begin_call(detail::dist::start(s, detail::dist::CallKind::barrier, fn));
  s.host->barrier();
}

template <class T>
void Communicator::allreduce(Array<T>& x, Op op, const Stream& stream) const {
  allreduce(x, x, op, stream);
}

template <class T>
void Communicator::allreduce(const Array<T>& send, Array<T>& recv, Op op, const Stream& stream) const {
  constexpr const char* fn = "porta::distributed::allreduce";
  const CommState& s = state(fn);
  const detail::dist::Call call = detail::dist::start(s, detail::dist::CallKind::allreduce, fn);
  check_contiguous(fn, "send", send.valid(), send.is_contiguous());
  check_contiguous(fn, "recv", recv.valid(), recv.is_contiguous());
  check_same_device(fn, send, recv);
  if (send.size() != recv.size())
    detail::throw_invalid(fn, ("send has " + std::to_string(send.size()) + " elements, recv " +
                               std::to_string(recv.size()) + " (they must match)")
                                  .c_str());
  detail::dist::collective(s, call, PORTA_COLL_ALLREDUCE, send.device(), detail::dtype_of<T>(),
                           detail::dist::to_abi(op), send.data(), send.size(), recv.data(), recv.size(), 0, stream);
}

template <class T>
void Communicator::reduce(const Array<T>& send, Array<T>& recv, int root, Op op, const Stream& stream) const {
  constexpr const char* fn = "porta::distributed::reduce";
  const CommState& s = state(fn);
  const detail::dist::Call call = detail::dist::start(s, detail::dist::CallKind::reduce, fn);
  check_root(fn, root, s.host->size());
  check_contiguous(fn, "send", send.valid(), send.is_contiguous());
  const bool is_root = s.host->rank() == root;
  if (is_root) {
    check_contiguous(fn, "recv", recv.valid(), recv.is_contiguous());
    check_same_device(fn, send, recv);
    if (send.size() != recv.size())
      detail::throw_invalid(fn, ("send has " + std::to_string(send.size()) + " elements, recv on the root " +
                                 std::to_string(recv.size()) + " (they must match)")
                                    .c_str());
  }
  detail::dist::collective(s, call, PORTA_COLL_REDUCE, send.device(), detail::dtype_of<T>(), detail::dist::to_abi(op),
                           send.data(), send.size(), is_root ? recv.data() : nullptr, is_root ? recv.size() : 0, root,
                           stream);
}

template <class T>
void Communicator::broadcast(Array<T>& x, int root, const Stream& stream) const {
  constexpr const char* fn = "porta::distributed::broadcast";
  const CommState& s = state(fn);
  const detail::dist::Call call = detail::dist::start(s, detail::dist::CallKind::broadcast, fn);
  check_root(fn, root, s.host->size());
  check_contiguous(fn, "x", x.valid(), x.is_contiguous());
  detail::dist::collective(s, call, PORTA_COLL_BROADCAST, x.device(), detail::dtype_of<T>(), PORTA_REDUCE_SUM, x.data(),
                           x.size(), x.data(), x.size(), root, stream);
}

template <class T>
void Communicator::allgather(const Array<T>& send, Array<T>& recv, const Stream& stream) const {
  constexpr const char* fn = "porta::distributed::allgather";
  const CommState& s = state(fn);
  const detail::dist::Call call = detail::dist::start(s, detail::dist::CallKind::allgather, fn);
  check_contiguous(fn, "send", send.valid(), send.is_contiguous());
  check_contiguous(fn, "recv", recv.valid(), recv.is_contiguous());
  check_same_device(fn, send, recv);
  if (recv.size() != send.size() * s.host->size())
    detail::throw_invalid(fn, ("recv has " + std::to_string(recv.size()) + " elements, expected size() x send = " +
                               std::to_string(s.host->size()) + " x " + std::to_string(send.size()))
                                  .c_str());
  detail::dist::collective(s, call, PORTA_COLL_ALLGATHER, send.device(), detail::dtype_of<T>(), PORTA_REDUCE_SUM,
                           send.data(), send.size(), recv.data(), recv.size(), 0, stream);
}

template <class T>
void Communicator::reduce_scatter(const Array<T>& send, Array<T>& recv, Op op, const Stream& stream) const {
  constexpr const char* fn = "porta::distributed::reduce_scatter";
  const CommState& s = state(fn);
  const detail::dist::Call call = detail::dist::start(s, detail::dist::CallKind::reduce_scatter, fn);
  check_contiguous(fn, "send", send.valid(), send.is_contiguous());
  check_contiguous(fn, "recv", recv.valid(), recv.is_contiguous());
  check_same_device(fn, send, recv);
  if (send.size() != recv.size() * s.host->size())
    detail::throw_invalid(fn, ("send has " + std::to_string(send.size()) + " elements, expected size() x recv = " +
                               std::to_string(s.host->size()) + " x " + std::to_string(recv.size()))
                                  .c_str());
  detail::dist::collective(s, call, PORTA_COLL_REDUCE_SCATTER, send.device(), detail::dtype_of<T>(),
                           detail::dist::to_abi(op), send.data(), send.size(), recv.data(), recv.size(), 0, stream);
}

template <class T>
Request Communicator::isend(const Array<T>& x, int dest, int tag, const Stream& stream) const {
  constexpr const char* fn = "porta::distributed::isend";
  const CommState& s = state(fn);
  check_root(fn, dest, s.host->size(), "dest");
  if (tag < 0 || tag >= detail::dist::kOwnTag)
    detail::throw_invalid(fn, ("tag " + std::to_string(tag) + " is outside 0..32766").c_str());
  check_contiguous(fn, "x", x.valid(), x.is_contiguous());
  return Request(detail::dist::point_to_point(state_, PORTA_COLL_SEND, x.device(), detail::dtype_of<T>(),
                                              const_cast<T*>(x.data()), x.size(), dest, tag, stream, keep_alive(x)));
}

template <class T>
Request Communicator::irecv(Array<T>& x, int source, int tag, const Stream& stream) const {
  constexpr const char* fn = "porta::distributed::irecv";
  const CommState& s = state(fn);
  check_root(fn, source, s.host->size(), "source");
  if (tag < 0 || tag >= detail::dist::kOwnTag)
    detail::throw_invalid(fn, ("tag " + std::to_string(tag) + " is outside 0..32766").c_str());
  check_contiguous(fn, "x", x.valid(), x.is_contiguous());
  return Request(detail::dist::point_to_point(state_, PORTA_COLL_RECV, x.device(), detail::dtype_of<T>(), x.data(),
                                              x.size(), source, tag, stream, keep_alive(x)));
}

template <class T>
T Communicator::sum(const Array<T>& x, const Stream& stream) const {
  constexpr const char* fn = "porta::distributed::Communicator::sum";
  const CommState& s = state(fn);
  return detail::dist::sum_concatenated(s, detail::dist::start(s, detail::dist::CallKind::sum, fn), x, stream);
}

template <class T>
T Communicator::dot(const Array<T>& x, const Array<T>& y, const Stream& stream) const {
  constexpr const char* fn = "porta::distributed::Communicator::dot";
  const CommState& s = state(fn);
  const detail::dist::Call call = detail::dist::start(s, detail::dist::CallKind::dot, fn);
  x.check_valid(fn);
  y.check_valid(fn);
  if (x.shape() != y.shape())
    detail::throw_invalid(
        fn, ("shapes differ (x is " + x.shape().to_string() + ", y is " + y.shape().to_string() + ")").c_str());
  // porta::dot's canonical order over the rounded products x[i] * y[i] is that of a sum of them.
  return detail::dist::sum_concatenated(s, call, Array<T>(porta::mul(x, y, stream)), stream);
}

template <class T>
T Communicator::norm2(const Array<T>& x, const Stream& stream) const {
  constexpr const char* fn = "porta::distributed::Communicator::norm2";
  const CommState& s = state(fn);
  [[maybe_unused]] const detail::dist::Call call = detail::dist::start(s, detail::dist::CallKind::norm2, fn);
  if constexpr (std::is_floating_point_v<T>) {
    x.check_valid(fn);
    const T ss = detail::dist::sum_concatenated(s, call, Array<T>(porta::mul(x, x, stream)), stream);
    return detail::canonical_nan(static_cast<T>(std::sqrt(ss)));
  } else {
    x.check_valid(fn);
    detail::throw_invalid(fn, (std::string(detail::dtype_name(detail::dtype_of<T>())) +
                               " arrays are not supported (floating point only; cast first)")
                                  .c_str());
  }
}

MpiInfo mpi_info() {
  return static_cast<MpiInfo>(detail::dist::mpi_status(false));
}

#define PORTA_DIST_INSTANTIATE(T)                                                                     \
  template void Communicator::allreduce<T>(Array<T>&, Op, const Stream&) const;                       \
  template void Communicator::allreduce<T>(const Array<T>&, Array<T>&, Op, const Stream&) const;      \
  template void Communicator::reduce<T>(const Array<T>&, Array<T>&, int, Op, const Stream&) const;    \
  template void Communicator::broadcast<T>(Array<T>&, int, const Stream&) const;                      \
  template void Communicator::allgather<T>(const Array<T>&, Array<T>&, const Stream&) const;          \
  template void Communicator::reduce_scatter<T>(const Array<T>&, Array<T>&, Op, const Stream&) const; \
  template Request Communicator::isend<T>(const Array<T>&, int, int, const Stream&) const;            \
  template Request Communicator::irecv<T>(Array<T>&, int, int, const Stream&) const;                  \
  template T Communicator::sum<T>(const Array<T>&, const Stream&) const;                              \
  template T Communicator::dot<T>(const Array<T>&, const Array<T>&, const Stream&) const;             \
  template T Communicator::norm2<T>(const Array<T>&, const Stream&) const;
PORTA_DIST_INSTANTIATE(float)
PORTA_DIST_INSTANTIATE(double)
PORTA_DIST_INSTANTIATE(std::int32_t)
PORTA_DIST_INSTANTIATE(std::int64_t)
#undef PORTA_DIST_INSTANTIATE

}  // namespace porta::distributed
