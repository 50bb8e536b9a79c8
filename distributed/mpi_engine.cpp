// SPDX-License-Identifier: Apache-2.0
// MpiEngine: dist::HostEngine over libporta_mpi.so (include/porta/abi/mpi_v1.h). libporta never
// links MPI: the plugin is found by the GPU plugins' search (runtime/registry.hpp, find_plugin),
// loaded once, and MPI initialised once on first use, so a build with MPI still starts where
// libmpi is missing and mpi_status() says why.
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "distributed/engine.hpp"
#include "porta/abi/mpi_v1.h"
#include "porta/error.hpp"
#include "runtime/plugin_checks.hpp"
#include "runtime/registry.hpp"

#ifndef PORTA_MPI_BUILT
#define PORTA_MPI_BUILT 0
#endif

namespace porta::detail::dist {
namespace {

constexpr const char* kPluginFile = "libporta_mpi.so";

struct Plugin {
  bool loaded = false;
  std::string library;
  std::string reason;
  const porta_mpi_v1* table = nullptr;
};

// The table must have every v1 entry: MPI's plugin ships with libporta, there is no older one
// (runtime/plugin_checks.hpp, mpi_table_problem).
bool accept_mpi(void* sym, const std::string& path, Plugin& p, std::string& why) {
  porta_mpi_entry_v1_fn entry = nullptr;
  static_assert(sizeof(entry) == sizeof(sym), "function and object pointers differ in size");
  std::memcpy(&entry, &sym, sizeof(entry));
  const porta_mpi_v1* t = entry();
  if (t == nullptr) {
    why = path + ": " PORTA_MPI_ENTRY_SYMBOL "() returned NULL";
    return false;
  }
  const std::string problem = mpi_table_problem(*t);
  if (!problem.empty()) {
    why = path + ": MPI plugin " + problem;
    return false;
  }
  p.table = t;
  p.library = path;
  p.loaded = true;
  return true;
}

const Plugin& plugin() {
  static Plugin p;
  static std::once_flag once;
  std::call_once(once, [] {
    const PluginSearch found =
        find_plugin(kPluginFile, PORTA_MPI_ENTRY_SYMBOL,
                    [](void* sym, const std::string& path, std::string& why) { return accept_mpi(sym, path, p, why); });
    if (p.loaded) return;
    p.library = found.failed;
    if (!found.failed.empty()) {
      p.reason = found.failure;  // "…/libporta_mpi.so: libmpi.so.40: cannot open shared object file…"
    } else if (!PORTA_MPI_BUILT) {
      p.reason = "porta was built without MPI (PORTA_ENABLE_MPI=OFF or MPI not found at configure time)";
    } else {
      p.reason = found.not_found;
    }
  });
  return p;
}

// MPI as initialised by porta (or found initialised by the application): done once per process.
struct Init {
  bool ok = false;
  std::string version;  // first line of MPI_Get_library_version
  int thread_level = -1;
  bool answered = false;  // init returned PORTA_OK (initialised or not)
  std::string reason;
};

Init query(const porta_mpi_v1& t, bool initialise) {
  Init r;
  char version[512] = "";
  const porta_status st = t.init(initialise ? 1 : 0, version, sizeof version, &r.thread_level);
  terminate_text(version, sizeof version);
  r.version = version;
  r.answered = st == PORTA_OK;
  r.ok = r.answered && r.thread_level >= 0;
  if (st != PORTA_OK) {
    r.reason = plugin_text(t.last_error());
  } else if (!r.ok) {
    r.reason = "MPI is not initialised";
  }
  return r;
}

const Init& initialised(const porta_mpi_v1& t) {
  static Init r;
  static std::once_flag once;
  std::call_once(once, [&t] { r = query(t, true); });
  return r;
}

// The usable table, MPI initialised; Unavailable naming fn otherwise.
const porta_mpi_v1& usable(const char* fn) {
  const Plugin& p = plugin();
  if (!p.loaded) throw Unavailable(std::string(fn) + ": MPI is not available: " + p.reason);
  const Init& i = initialised(*p.table);
  if (!i.ok) throw Unavailable(std::string(fn) + ": MPI could not be initialised: " + i.reason);
  return *p.table;
}

// The plugin's message starts with its entry's name ("allreduce: MPI_Allreduce: ..."), so
// "porta::distributed::" before it names the function.
[[noreturn]] void throw_mpi(porta_status st, const porta_mpi_v1& t, const std::string& prefix) {
  const std::string what = prefix + plugin_text(t.last_error());
  switch (st) {
    case PORTA_ERR_INVALID:
      throw InvalidArgument(what);
    case PORTA_ERR_UNAVAILABLE:
    case PORTA_ERR_UNSUPPORTED:
      throw Unavailable(what);
    case PORTA_OK:
    case PORTA_ERR_OOM:
    case PORTA_ERR_BACKEND:
      break;
  }
  throw BackendError(what);
}

const char* thread_level_name(int level) {
  switch (level) {
    case 0:
      return "single";
    case 1:
      return "funneled";
    case 2:
      return "serialized";
    case 3:
      return "multiple";
    default:
      return "unknown";
  }
}

class MpiPending final : public Pending {
 public:
  MpiPending(const porta_mpi_v1& t, porta_mpi_request r) : t_(t), r_(r) {}
  // A request dropped unfinished is waited for: MPI may still write the buffer.
  ~MpiPending() override {
    if (r_ != nullptr) t_.wait(r_);
  }
  void wait() override {
    if (r_ == nullptr) return;
    const porta_status st = t_.wait(std::exchange(r_, nullptr));
    if (st != PORTA_OK) throw_mpi(st, t_, "porta::distributed::");
  }
  bool test() override {
    if (r_ == nullptr) return true;
    int done = 0;
    const porta_status st = t_.test(r_, &done);
    if (st != PORTA_OK) throw_mpi(st, t_, "porta::distributed::");
    if (done) r_ = nullptr;  // test freed it
    return done != 0;
  }

 private:
  const porta_mpi_v1& t_;
  porta_mpi_request r_;
};

class MpiEngine final : public HostEngine {
 public:
  MpiEngine(const porta_mpi_v1& t, porta_mpi_comm c) : t_(t), c_(c) {
    const porta_status st = t_.comm_ranks(c_, &rank_, &size_, &local_rank_, &local_size_);
    if (st != PORTA_OK) {
      t_.comm_free(c_);
      throw_mpi(st, t_, "porta::distributed::");
    }
    // Sizes that porta's per-rank tables are allocated by: the plugin's values are checked first.
    const std::string problem = mpi_ranks_problem(rank_, size_, local_rank_, local_size_);
    if (!problem.empty()) {
      t_.comm_free(c_);
      throw Unavailable("porta::distributed: MPI is not usable: " + plugin().library + ": " + problem);
    }
    std::string version = initialised(t_).version;
    const std::size_t comma = version.find(',');  // "Open MPI v4.1.4, package: ..., ident: ..."
    if (comma != std::string::npos) version.resize(comma);
    describe_ = "MPI (" + version + ", thread level " + thread_level_name(initialised(t_).thread_level) + ")";
  }
  ~MpiEngine() override { t_.comm_free(c_); }  // a no-op once MPI is finalised
  MpiEngine(const MpiEngine&) = delete;
  MpiEngine& operator=(const MpiEngine&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  std::string describe() const override { return describe_; }
  bool device_aware(DeviceType type) const override { return t_.device_aware(static_cast<int>(type)) != 0; }

  void allreduce(const void* send, void* recv, std::int64_t n, porta_dtype dt, porta_reduce_op op) override {
    check(t_.allreduce(c_, send, recv, n, dt, op));
  }
  void reduce(const void* send, void* recv, std::int64_t n, porta_dtype dt, porta_reduce_op op, int root) override {
    check(t_.reduce(c_, send, recv, n, dt, op, root));
  }
  void broadcast(void* buf, std::int64_t n, porta_dtype dt, int root) override {
    check(t_.broadcast(c_, buf, n, dt, root));
  }
  void allgather(const void* send, std::int64_t n, void* recv, porta_dtype dt) override {
    check(t_.allgather(c_, send, n, recv, dt));
  }
  void allgatherv(const void* send, std::int64_t n, void* recv, const std::int64_t* counts, porta_dtype dt) override {
    check(t_.allgatherv(c_, send, n, recv, counts, dt));
  }
  void reduce_scatter(const void* send, void* recv, std::int64_t n, porta_dtype dt, porta_reduce_op op) override {
    check(t_.reduce_scatter(c_, send, recv, n, dt, op));
  }
  void barrier() override { check(t_.barrier(c_)); }

  // One MPI_Allreduce (min) of the packed call and its complement, which gives every rank the
  // minimum and the maximum of each word: all equal, or every rank learns that they are not. Its
  // size is fixed, so ranks that disagree on a count still meet in it; only then does a second
  // exchange (an allgather of the words) find which ranks differ, for the message.
  void begin_call(const Call& c) override {
    if (!c.checked || size_ == 1) return;
    std::int64_t w[2 * kCallWords];
    pack(c, w);
    for (int i = 0; i < kCallWords; ++i) w[kCallWords + i] = ~w[i];
    check(t_.allreduce(c_, w, w, 2 * kCallWords, PORTA_I64, PORTA_REDUCE_MIN));
    bool same = true;
    for (int i = 0; i < kCallWords; ++i) same = same && w[i] == ~w[kCallWords + i];
    if (same) return;
    std::int64_t mine[kCallWords];
    pack(c, mine);
    std::vector<std::int64_t> all(static_cast<std::size_t>(kCallWords) * static_cast<std::size_t>(size_));
    check(t_.allgather(c_, mine, kCallWords, all.data(), PORTA_I64));
    const Call first = unpack(all.data());
    for (int r = 1; r < size_; ++r) {
      const Call other = unpack(&all[static_cast<std::size_t>(kCallWords) * static_cast<std::size_t>(r)]);
      if (!first.same(other)) throw InvalidArgument(std::string(c.fn) + ": " + mismatch(0, first, r, other));
    }
  }
  void check_call() override {}  // begin_call compared already
  std::unique_ptr<Pending> isend(const void* buf, std::int64_t n, porta_dtype dt, int dest, int tag) override {
    porta_mpi_request r = nullptr;
    check(t_.isend(c_, buf, n, dt, dest, tag, &r));
    return std::make_unique<MpiPending>(t_, r);
  }
  std::unique_ptr<Pending> irecv(void* buf, std::int64_t n, porta_dtype dt, int source, int tag) override {
    porta_mpi_request r = nullptr;
    check(t_.irecv(c_, buf, n, dt, source, tag, &r));
    return std::make_unique<MpiPending>(t_, r);
  }

 private:
  void check(porta_status st) const {
    if (st != PORTA_OK) throw_mpi(st, t_, "porta::distributed::");
  }

  const porta_mpi_v1& t_;
  porta_mpi_comm c_;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::string describe_;
};

std::shared_ptr<HostEngine> make_engine(const porta_mpi_v1& t, porta_status st, porta_mpi_comm c, const char* fn) {
  if (st != PORTA_OK) throw_mpi(st, t, std::string(fn) + ": ");
  return std::make_shared<MpiEngine>(t, c);
}

}  // namespace

std::shared_ptr<HostEngine> mpi_world(const char* fn) {
  const porta_mpi_v1& t = usable(fn);
  porta_mpi_comm c = nullptr;
  const porta_status st = t.comm_world(&c);
  return make_engine(t, st, c, fn);
}

std::shared_ptr<HostEngine> mpi_from_fortran(std::int64_t handle, const char* fn) {
  const porta_mpi_v1& t = usable(fn);
  porta_mpi_comm c = nullptr;
  const porta_status st = t.comm_from_fortran(handle, &c);
  return make_engine(t, st, c, fn);
}

MpiStatus mpi_status(bool initialise) {
  MpiStatus s;
  s.built = PORTA_MPI_BUILT != 0;
  try {
    const Plugin& p = plugin();
    s.library = p.library;
    if (!p.loaded) {
      s.reason = p.reason;
      return s;
    }
    const porta_mpi_v1& t = *p.table;
    s.build_info = plugin_text(t.build_info);
    s.cuda_aware = t.device_aware(static_cast<int>(DeviceType::cuda)) != 0;
    s.hip_aware = t.device_aware(static_cast<int>(DeviceType::hip)) != 0;
    // porta-info only asks: available then means loaded and answering (MPI is initialised on
    // first use, once, and that outcome is remembered).
    const Init i = initialise ? initialised(t) : query(t, false);
    s.version = i.version;
    s.available = initialise ? i.ok : i.answered;
    if (!s.available) s.reason = i.reason;
  } catch (const std::exception& e) {
    s.reason = e.what();
  }
  return s;
}

}  // namespace porta::detail::dist
