// SPDX-License-Identifier: Apache-2.0
// porta::distributed's public calls: Communicator and Request. Each call checks its arguments and
// goes through distributed/comm_state.hpp: one Communicator over a host engine (MPI or threads),
// plus, per GPU, the backend's device collectives (NCCL/RCCL) when every rank can use them.
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "algorithms/common.hpp"
#include "distributed/comm_state.hpp"
#include "porta/algorithms.hpp"
#include "porta/detail/ops.hpp"
#include "porta/detail/runtime.hpp"
#include "porta/distributed.hpp"
#include "porta/error.hpp"
#include "runtime/registry.hpp"

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

namespace {
// Communicator::sum, dot and norm2 give porta's bits for the whole concatenation; for 16-bit arrays
// that needs a float accumulation across ranks, which is not there yet.
template <class T>
void refuse_half(const char* fn) {
  if constexpr (is_half_v<T>)
    throw Unavailable(std::string(fn) + ": not defined for " + detail::dtype_name(detail::dtype_of<T>()) +
                      " (reductions of 16-bit arrays across ranks are not there yet)");
}
}  // namespace

template <class T>
T Communicator::sum(const Array<T>& x, const Stream& stream) const {
  constexpr const char* fn = "porta::distributed::Communicator::sum";
  const CommState& s = state(fn);
  refuse_half<T>(fn);
  if constexpr (is_half_v<T>)
    return T();
  else
    return detail::dist::sum_concatenated(s, detail::dist::start(s, detail::dist::CallKind::sum, fn), x, stream);
}

template <class T>
T Communicator::dot(const Array<T>& x, const Array<T>& y, const Stream& stream) const {
  constexpr const char* fn = "porta::distributed::Communicator::dot";
  const CommState& s = state(fn);
  const detail::dist::Call call = detail::dist::start(s, detail::dist::CallKind::dot, fn);
  refuse_half<T>(fn);
  x.check_valid(fn);
  y.check_valid(fn);
  if (x.shape() != y.shape())
    detail::throw_invalid(
        fn, ("shapes differ (x is " + x.shape().to_string() + ", y is " + y.shape().to_string() + ")").c_str());
  // porta::dot's canonical order over the rounded products x[i] * y[i] is that of a sum of them.
  if constexpr (is_half_v<T>)
    return T();
  else
    return detail::dist::sum_concatenated(s, call, Array<T>(porta::mul(x, y, stream)), stream);
}

template <class T>
T Communicator::norm2(const Array<T>& x, const Stream& stream) const {
  constexpr const char* fn = "porta::distributed::Communicator::norm2";
  const CommState& s = state(fn);
  [[maybe_unused]] const detail::dist::Call call = detail::dist::start(s, detail::dist::CallKind::norm2, fn);
  refuse_half<T>(fn);
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

// norm2 of a complex array is its own overload: sqrt(vdot(x, x)), a real number, as porta::norm2.
template <class T>
T Communicator::norm2(const Array<complex<T>>& x, const Stream& stream) const {
  constexpr const char* fn = "porta::distributed::Communicator::norm2";
  const CommState& s = state(fn);
  const detail::dist::Call call = detail::dist::start(s, detail::dist::CallKind::norm2, fn);
  x.check_valid(fn);
  // porta::vdot's canonical order over the rounded products conj(x[i]) * x[i] is that of their sum.
  const complex<T> ss =
      detail::dist::sum_concatenated(s, call, Array<complex<T>>(porta::mul(porta::conj(x, stream), x, stream)), stream);
  return detail::canonical_nan(static_cast<T>(std::sqrt(ss.re)));
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
  template T Communicator::dot<T>(const Array<T>&, const Array<T>&, const Stream&) const;
#define PORTA_DIST_INSTANTIATE_NORM2(T) template T Communicator::norm2<T>(const Array<T>&, const Stream&) const;
PORTA_FOR_EACH_DTYPE(PORTA_DIST_INSTANTIATE)
PORTA_FOR_EACH_ORDERED_DTYPE(PORTA_DIST_INSTANTIATE_NORM2)
template float Communicator::norm2<float>(const Array<complex<float>>&, const Stream&) const;
template double Communicator::norm2<double>(const Array<complex<double>>&, const Stream&) const;
#undef PORTA_DIST_INSTANTIATE_NORM2
#undef PORTA_DIST_INSTANTIATE

}  // namespace porta::distributed
