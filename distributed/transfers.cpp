// SPDX-License-Identifier: Apache-2.0
// How a porta::distributed call's data moves (distributed/comm_state.hpp): the route for the
// arrays' device, decided once per GPU with every rank, and the collective and point-to-point
// transfers along it.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "backends/common/dtype.hpp"
#include "distributed/comm_state.hpp"
#include "porta/detail/runtime.hpp"
#include "porta/error.hpp"
#include "runtime/registry.hpp"

namespace porta::detail::dist {
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

}  // namespace

Call start(const CommState& st, CallKind kind, const char* fn) {
  Call c;
  c.fn = fn;
  c.checked = calls_checked();
  c.seq = ++st.calls;
  c.kind = kind;
  return c;
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

bool undecided_gpu(const CommState& st, Device dev) {
  if (dev.type == DeviceType::cpu) return false;
  std::lock_guard<std::mutex> lock(st.m);
  auto it = st.colls.find({static_cast<int>(dev.type), dev.index});
  return it == st.colls.end() || !it->second.decided;
}

Plan plan_for(const CommState& st, Device dev, const char* fn) {
  backend_for(dev, fn);  // the device exists (cpu:1, cuda:7 are Unavailable, as everywhere in porta)
  Plan p;
  if (dev.type == DeviceType::cpu) {
    p.route = dev.host_accessible() ? Route::direct : Route::staged;
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

void collective(const CommState& st, Call call, porta_coll_kind k, Device dev, porta_dtype dt, porta_reduce_op op,
                const void* send, std::int64_t n_send, void* recv, std::int64_t n_recv, int root,
                const Stream& stream) {
  const char* fn = kind_fn(k);
  // Complex numbers have sums and products, not an order: refused on every rank before any transport
  // is involved, in the words the backends use for what a complex type lacks.
  const bool reducing = k == PORTA_COLL_ALLREDUCE || k == PORTA_COLL_REDUCE || k == PORTA_COLL_REDUCE_SCATTER;
  if (reducing && (dt == PORTA_C64 || dt == PORTA_C128) && (op == PORTA_REDUCE_MIN || op == PORTA_REDUCE_MAX))
    throw Unavailable(std::string(fn) + ": " + (op == PORTA_REDUCE_MIN ? "min" : "max") + " is not defined for " +
                      dtype_name(dt) + " (complex numbers have no order)");
  // 16-bit floats move (broadcast, allgather, send, receive); their sums would have to accumulate
  // in float on every transport, which none does yet.
  if (reducing && backend::dtype_is_half(dt))
    throw Unavailable(std::string(fn) + ": not defined for " + dtype_name(dt) +
                      " (reductions of 16-bit arrays across ranks are not there yet)");
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

}  // namespace porta::detail::dist
