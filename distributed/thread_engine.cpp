// SPDX-License-Identifier: Apache-2.0
// The thread engine: ranks that are threads of one process (Communicator::local). A collective is
// a rendezvous: every rank posts its buffers, waits for the others, computes its own result from
// everyone's inputs (in rank order, so that all ranks get the same bits), and waits again before
// anyone may touch its buffers. Messages are copied into a mailbox at isend, so a send completes at
// once and a receive waits for its message.
//
// Each rank also posts what it is doing (its Call and how many rendezvous of that call it has
// passed); the last rank to arrive compares them under the lock it holds anyway, so ranks whose
// calls differ all throw before any data moves, at no extra wait. A rank whose engine is destroyed
// (its last Communicator handle gone) is marked as gone: whoever waits for it, or starts waiting,
// throws instead of waiting for ever.
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "backends/common/host_combine.hpp"
#include "distributed/engine.hpp"
#include "porta/detail/runtime.hpp"
#include "porta/error.hpp"

namespace porta::detail::dist {
namespace {

struct Slot {
  const void* send = nullptr;
  void* recv = nullptr;
};

// What a rank is doing at a rendezvous: its call, and how many rendezvous of that call came before.
struct Tag {
  Call call;
  int step = 0;
};

std::string left_message(const char* fn, int gone, int waiter, const Call& call) {
  return std::string(fn) + ": rank " + std::to_string(gone) +
         " left the communicator (its last Communicator handle was destroyed) while rank " + std::to_string(waiter) +
         " waited for it in " + (call.seq != 0 ? describe(call) : std::string("a collective"));
}

struct Group {
  explicit Group(int n)
      : size(n),
        slots(static_cast<std::size_t>(n)),
        tags(static_cast<std::size_t>(n)),
        gone(static_cast<std::size_t>(n), 0) {}
  const int size;
  std::mutex m;
  std::condition_variable cv;
  int arrived = 0;
  std::uint64_t generation = 0;
  std::vector<Slot> slots;
  std::vector<Tag> tags;
  std::vector<char> gone;  // the rank's engine was destroyed
  std::string verdict;     // of the last rendezvous: why the ranks' calls differ, or empty
  // (source, dest, tag) -> messages in the order sent
  std::map<std::tuple<int, int, int>, std::deque<std::vector<unsigned char>>> mail;

  int first_gone_locked() const {
    for (int r = 0; r < size; ++r)
      if (gone[static_cast<std::size_t>(r)]) return r;
    return -1;
  }

  // Empty when every rank is in the same call at the same step. Rank 0 against the first rank that
  // differs from it, so that every rank throws the same message.
  std::string compare_locked() const {
    const Tag& a = tags[0];
    for (int r = 1; r < size; ++r) {
      const Tag& b = tags[static_cast<std::size_t>(r)];
      if (!a.call.checked || !b.call.checked) continue;
      if (!a.call.same(b.call)) return mismatch(0, a.call, r, b.call);
      if (a.step != b.step)
        return "ranks 0 and " + std::to_string(r) + " are at different steps of " + describe(a.call) +
               " (a rank left the call part-way)";
    }
    return {};
  }

  // Every rank's rendezvous: publishes this rank's buffers (when slot is given) and what it is doing,
  // and returns once every rank has arrived. Throws, on every rank alike, when the ranks' calls
  // differ; throws when a rank is gone, since the rendezvous can then never complete.
  void meet(int rank, const Slot* slot, const Tag& tag) {
    std::unique_lock<std::mutex> lock(m);
    int left = first_gone_locked();
    if (left >= 0) throw Unavailable(left_message(tag.call.fn, left, rank, tag.call));
    if (slot != nullptr) slots[static_cast<std::size_t>(rank)] = *slot;
    tags[static_cast<std::size_t>(rank)] = tag;
    const std::uint64_t gen = generation;
    if (++arrived == size) {
      arrived = 0;
      verdict = compare_locked();
      ++generation;
      cv.notify_all();
    } else {
      cv.wait(lock, [&] { return generation != gen || first_gone_locked() >= 0; });
      if (generation == gen) {
        --arrived;
        left = first_gone_locked();
        throw Unavailable(left_message(tag.call.fn, left, rank, tag.call));
      }
    }
    // Stable until the next rendezvous completes, which needs this rank.
    if (!verdict.empty()) throw InvalidArgument(std::string(tag.call.fn) + ": " + verdict);
  }
};

class ThreadPending final : public Pending {
 public:
  ThreadPending(std::shared_ptr<Group> g, void* buf, std::size_t bytes, std::tuple<int, int, int> key)
      : g_(std::move(g)), buf_(buf), bytes_(bytes), key_(key) {}
  void wait() override {
    if (done_) return;
    std::unique_lock<std::mutex> lock(g_->m);
    g_->cv.wait(lock, [&] { return ready_locked() || source_gone_locked(); });
    if (!ready_locked()) throw_source_gone();
    take_locked();
  }
  bool test() override {
    if (done_) return true;
    std::lock_guard<std::mutex> lock(g_->m);
    if (!ready_locked()) {
      if (source_gone_locked()) throw_source_gone();
      return false;
    }
    take_locked();
    return true;
  }

 private:
  bool ready_locked() {
    auto it = g_->mail.find(key_);
    return it != g_->mail.end() && !it->second.empty();
  }
  // Messages it sent before it left are still delivered.
  bool source_gone_locked() const { return g_->gone[static_cast<std::size_t>(std::get<0>(key_))] != 0; }
  [[noreturn]] void throw_source_gone() {
    done_ = true;
    throw Unavailable("porta::distributed::Request::wait: rank " + std::to_string(std::get<0>(key_)) +
                      " left the communicator (its last Communicator handle was destroyed) before sending the "
                      "message (tag " +
                      std::to_string(std::get<2>(key_)) + ") that rank " + std::to_string(std::get<1>(key_)) +
                      " waits for");
  }
  void take_locked() {
    auto& q = g_->mail[key_];
    const std::vector<unsigned char>& msg = q.front();
    if (msg.size() != bytes_) {
      const std::string what = "porta::distributed::Request::wait: the message from rank " +
                               std::to_string(std::get<0>(key_)) + " (tag " + std::to_string(std::get<2>(key_)) +
                               ") has " + std::to_string(msg.size()) + " bytes, the receive expects " +
                               std::to_string(bytes_);
      q.pop_front();
      done_ = true;
      throw InvalidArgument(what);
    }
    if (bytes_ > 0) std::memcpy(buf_, msg.data(), bytes_);
    q.pop_front();
    done_ = true;
  }
  std::shared_ptr<Group> g_;
  void* buf_;
  std::size_t bytes_;
  std::tuple<int, int, int> key_;
  bool done_ = false;
};

class DonePending final : public Pending {
 public:
  void wait() override {}
  bool test() override { return true; }
};

class ThreadEngine final : public HostEngine {
 public:
  ThreadEngine(std::shared_ptr<Group> g, int rank) : g_(std::move(g)), rank_(rank) {}
  // The last handle of this rank is gone: no rendezvous of the group can complete any more.
  ~ThreadEngine() override {
    {
      std::lock_guard<std::mutex> lock(g_->m);
      g_->gone[static_cast<std::size_t>(rank_)] = 1;
    }
    g_->cv.notify_all();
  }
  ThreadEngine(const ThreadEngine&) = delete;
  ThreadEngine& operator=(const ThreadEngine&) = delete;
  int rank() const override { return rank_; }
  int size() const override { return g_->size; }
  int local_rank() const override { return rank_; }
  int local_size() const override { return g_->size; }
  std::string describe() const override {
    return "threads (one process, " + std::to_string(g_->size) + " rank" + (g_->size == 1 ? "" : "s") + ")";
  }
  bool device_aware(DeviceType) const override { return false; }

  void allreduce(const void* send, void* recv, std::int64_t n, porta_dtype dt, porta_reduce_op op) override {
    reduce_to(send, recv, n, dt, op, -1, "porta::distributed::allreduce");
  }
  void reduce(const void* send, void* recv, std::int64_t n, porta_dtype dt, porta_reduce_op op, int root) override {
    reduce_to(send, recv, n, dt, op, root, "porta::distributed::reduce");
  }
  void broadcast(void* buf, std::int64_t n, porta_dtype dt, int root) override {
    const std::size_t bytes = static_cast<std::size_t>(n) * dtype_size(dt);
    post(buf, buf);
    if (rank_ != root && bytes > 0) std::memcpy(buf, g_->slots[static_cast<std::size_t>(root)].send, bytes);
    meet();
  }
  void allgather(const void* send, std::int64_t n, void* recv, porta_dtype dt) override {
    std::vector<std::int64_t> counts(static_cast<std::size_t>(g_->size), n);
    allgatherv(send, n, recv, counts.data(), dt);
  }
  void allgatherv(const void* send, std::int64_t, void* recv, const std::int64_t* counts, porta_dtype dt) override {
    const std::size_t es = dtype_size(dt);
    post(send, recv);
    auto* out = static_cast<unsigned char*>(recv);
    for (int r = 0; r < g_->size; ++r) {
      const std::size_t bytes = static_cast<std::size_t>(counts[r]) * es;
      if (bytes > 0) std::memcpy(out, g_->slots[static_cast<std::size_t>(r)].send, bytes);
      out += bytes;
    }
    meet();
  }
  void reduce_scatter(const void* send, void* recv, std::int64_t n, porta_dtype dt, porta_reduce_op op) override {
    const std::size_t bytes = static_cast<std::size_t>(n) * dtype_size(dt);
    post(send, recv);
    std::vector<unsigned char> acc(bytes);
    const std::size_t at = static_cast<std::size_t>(rank_) * bytes;
    for (int r = 0; r < g_->size; ++r) {
      const auto* in = static_cast<const unsigned char*>(g_->slots[static_cast<std::size_t>(r)].send) + at;
      if (r == 0) {
        if (bytes > 0) std::memcpy(acc.data(), in, bytes);
      } else {
        check_op(backend::combine(dt, op, in, acc.data(), n), "porta::distributed::reduce_scatter");
      }
    }
    meet();  // everyone has read every send buffer: recv may alias one
    if (bytes > 0) std::memcpy(recv, acc.data(), bytes);
  }
  void barrier() override { meet(); }
  void begin_call(const Call& c) override {
    call_ = c;
    step_ = 0;
  }
  void check_call() override {
    if (call_.checked && step_ == 0) meet();
  }

  std::unique_ptr<Pending> isend(const void* buf, std::int64_t n, porta_dtype dt, int dest, int tag) override {
    const std::size_t bytes = static_cast<std::size_t>(n) * dtype_size(dt);
    const auto* p = static_cast<const unsigned char*>(buf);
    {
      std::lock_guard<std::mutex> lock(g_->m);
      g_->mail[std::make_tuple(rank_, dest, tag)].emplace_back(p, p + bytes);
    }
    g_->cv.notify_all();
    return std::make_unique<DonePending>();
  }
  std::unique_ptr<Pending> irecv(void* buf, std::int64_t n, porta_dtype dt, int source, int tag) override {
    const std::size_t bytes = static_cast<std::size_t>(n) * dtype_size(dt);
    return std::make_unique<ThreadPending>(g_, buf, bytes, std::make_tuple(source, rank_, tag));
  }

 private:
  // Publishes this rank's buffers and waits until every rank has.
  void post(const void* send, void* recv) {
    const Slot slot{send, recv};
    g_->meet(rank_, &slot, Tag{call_, step_++});
  }
  void meet() { g_->meet(rank_, nullptr, Tag{call_, step_++}); }
  static void check_op(bool ok, const char* fn) {
    if (!ok) throw InvalidArgument(std::string(fn) + ": unknown reduction op or dtype");
  }
  // root < 0: every rank gets the result.
  void reduce_to(const void* send, void* recv, std::int64_t n, porta_dtype dt, porta_reduce_op op, int root,
                 const char* fn) {
    const std::size_t bytes = static_cast<std::size_t>(n) * dtype_size(dt);
    post(send, recv);
    std::vector<unsigned char> acc;
    const bool mine = root < 0 || root == rank_;
    if (mine) {
      acc.resize(bytes);
      for (int r = 0; r < g_->size; ++r) {
        const void* in = g_->slots[static_cast<std::size_t>(r)].send;
        if (r == 0) {
          if (bytes > 0) std::memcpy(acc.data(), in, bytes);
        } else {
          check_op(backend::combine(dt, op, in, acc.data(), n), fn);
        }
      }
    }
    meet();  // every send buffer has been read: recv may be send (in place)
    if (mine && bytes > 0) std::memcpy(recv, acc.data(), bytes);
  }

  std::shared_ptr<Group> g_;
  int rank_;
  Call call_;     // what the collectives since begin_call() serve
  int step_ = 0;  // rendezvous of call_ passed so far
};

}  // namespace

std::vector<std::shared_ptr<HostEngine>> thread_group(int n) {
  if (n < 1)
    throw InvalidArgument("porta::distributed::Communicator::local: n is " + std::to_string(n) +
                          ", a group needs at least one rank");
  auto g = std::make_shared<Group>(n);
  std::vector<std::shared_ptr<HostEngine>> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) out.push_back(std::make_shared<ThreadEngine>(g, r));
  return out;
}

}  // namespace porta::detail::dist
