// SPDX-License-Identifier: Apache-2.0
// cpu:strict's backend table (docs/strict.md): the CPU backend's table with every entry wrapped.
//
// The wrapper is generated from the ABI entry list (porta/abi/backend_v1_entries.inc), so an entry
// added to the list is covered without a line here: an entry whose last parameter is a stream is
// work, queued with a copy of its arguments and run at a synchronize that covers it; any other
// entry runs at once, after everything queued, with the device's memory opened. The entries that
// manage memory, streams and events are written out below and replace the generated ones.
//
// One queue per process, in the order work was issued, whatever its stream: a legal schedule of
// what a GPU may do, and deterministic. Synchronizing a stream (or an event) runs the queue up to
// that stream's last item (the event's record); the default stream and the device run all of it.
// Work runs on the thread that synchronizes, one drain at a time, with every live block of
// cpu:strict opened for its duration (strict_memory.cpp). A failing queued entry, or a
// user kernel that throws, is reported by the next synchronize, as a GPU reports a kernel's error.
#include "backends/strict/strict_memory.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "backends/builtin.hpp"
#include "backends/common/abi_entries.hpp"
#include "backends/common/backend_error.hpp"
#include "porta/detail/runtime.hpp"
#include "porta/detail/strict.hpp"
#include "porta/device.hpp"

namespace porta::detail {
namespace strict {
namespace {

using backend::raw_enum;
using backend::set_error;

constexpr int kDev = Device::kCpuStrictIndex;

const porta_backend_v1& cpu() {
  return *cpu_backend();
}

porta_status bad_device(const char* fn, int dev) {
  return set_error(PORTA_ERR_INVALID, "%s: cpu:strict is device index %d of the cpu backend, not %d", fn, kDev, dev);
}

struct StrictStream {
  std::uint64_t last = 0;  // sequence number of its last queued item
};
struct StrictEvent {
  std::uint64_t seq = 0;  // the record's item; 0: never recorded
  bool done = false;
  std::chrono::steady_clock::time_point time;
};

struct Item {
  std::uint64_t seq = 0;
  const char* name = "";
  std::function<porta_status()> work;
};

class Engine {
 public:
  // ---- handles (under queue_) ----
  bool live_stream(porta_stream s) {
    if (s == nullptr) return true;
    std::lock_guard<std::mutex> lock(queue_);
    return streams_.count(s) != 0;
  }
  porta_stream new_stream() {
    auto p = std::make_unique<StrictStream>();
    std::lock_guard<std::mutex> lock(queue_);
    porta_stream h = reinterpret_cast<porta_stream>(p.get());
    streams_.emplace(h, std::move(p));
    return h;
  }
  bool drop_stream(porta_stream s) {
    std::lock_guard<std::mutex> lock(queue_);
    return streams_.erase(s) != 0;
  }
  porta_event new_event() {
    auto p = std::make_shared<StrictEvent>();
    std::lock_guard<std::mutex> lock(queue_);
    porta_event h = reinterpret_cast<porta_event>(p.get());
    events_.emplace(h, std::move(p));
    return h;
  }
  bool drop_event(porta_event e) {
    std::lock_guard<std::mutex> lock(queue_);
    return events_.erase(e) != 0;
  }
  std::shared_ptr<StrictEvent> event(porta_event e) {
    std::lock_guard<std::mutex> lock(queue_);
    auto it = events_.find(e);
    return it == events_.end() ? nullptr : it->second;
  }
  // A copy of the event's state, read under the queue lock.
  StrictEvent snapshot(const StrictEvent& ev) {
    std::lock_guard<std::mutex> lock(queue_);
    return ev;
  }

  // ---- the queue ----
  // Appends work for stream s (nullptr: the default stream); returns its sequence number.
  std::uint64_t push(porta_stream s, const char* name, std::function<porta_status()> work) {
    std::lock_guard<std::mutex> lock(queue_);
    const std::uint64_t seq = next_++;
    items_.push_back(Item{seq, name, std::move(work)});
    if (s != nullptr) {
      auto it = streams_.find(s);
      if (it != streams_.end()) it->second->last = seq;
    }
    return seq;
  }
  // Records `ev` on `s`: an item that completes it when the queue reaches it.
  void record(porta_stream s, const std::shared_ptr<StrictEvent>& ev) {
    std::weak_ptr<StrictEvent> weak = ev;
    auto work = [this, weak] {
      if (auto e = weak.lock()) {
        std::lock_guard<std::mutex> lock(queue_);
        e->done = true;
        e->time = std::chrono::steady_clock::now();
      }
      return PORTA_OK;
    };
    std::lock_guard<std::mutex> lock(queue_);
    const std::uint64_t seq = next_++;
    items_.push_back(Item{seq, "event_record", work});
    if (s != nullptr) {
      auto it = streams_.find(s);
      if (it != streams_.end()) it->second->last = seq;
    }
    ev->seq = seq;
    ev->done = false;
  }
  // The sequence number a synchronize of `s` must reach: its last item; everything for the
  // default stream (which waits for porta's blocking streams, as CUDA's legacy stream does).
  std::uint64_t last_of(porta_stream s) {
    std::lock_guard<std::mutex> lock(queue_);
    if (s == nullptr) return next_ - 1;
    auto it = streams_.find(s);
    return it == streams_.end() ? 0 : it->second->last;
  }
  std::uint64_t everything() {
    std::lock_guard<std::mutex> lock(queue_);
    return next_ - 1;
  }
  bool pending_through(std::uint64_t target) {
    std::lock_guard<std::mutex> lock(queue_);
    return !items_.empty() && items_.front().seq <= target;
  }

  // Runs every queued item up to `target`, in order, with the memory open; returns the first
  // error of the queued work not reported yet.
  porta_status drain_through(std::uint64_t target) noexcept {
    std::lock_guard<std::mutex> exec(exec_);
    const Draining mark;
    bool opened = false;
    for (;;) {
      Item item;
      {
        std::lock_guard<std::mutex> lock(queue_);
        if (items_.empty() || items_.front().seq > target) break;
        item = std::move(items_.front());
        items_.pop_front();
      }
      if (!opened) {
        open_all();
        opened = true;
      }
      set_running(item.name);
      porta_status st = PORTA_OK;
      try {
        st = item.work();
      } catch (const std::exception& e) {
        st = set_error(PORTA_ERR_BACKEND, "%s threw %s", item.name, e.what());
      } catch (...) {
        st = set_error(PORTA_ERR_BACKEND, "%s threw an exception", item.name);
      }
      if (st != PORTA_OK && sticky_ == PORTA_OK) {
        sticky_ = st;
        std::snprintf(sticky_message_, sizeof sticky_message_,
                      "%s (queued on cpu:strict, failed when a synchronize ran it): %s", item.name,
                      backend::last_error());
      }
    }
    if (opened) close_all();
    if (sticky_ == PORTA_OK) return PORTA_OK;
    const porta_status st = sticky_;
    sticky_ = PORTA_OK;
    return set_error(st, "%s", sticky_message_);
  }

  // Runs `fn` at once with the memory open (and nothing else running); exceptions pass through.
  template <class Fn>
  void run_open(const char* name, Fn&& fn) {
    std::lock_guard<std::mutex> exec(exec_);
    const Draining mark;
    open_all();
    set_running(name);
    struct Close {
      ~Close() { close_all(); }
    } close;
    fn();
  }
  // An entry that is not work: everything queued first, then the entry, with the memory open.
  template <class Fn>
  porta_status run_now(const char* name, Fn&& fn) {
    if (porta_status st = drain_through(everything()); st != PORTA_OK) return st;
    porta_status st = PORTA_OK;
    run_open(name, [&] { st = fn(); });
    return st;
  }

  // Whether this thread is running queued work (or an entry run at once) now.
  static bool draining() noexcept { return t_draining; }

 private:
  static inline thread_local bool t_draining = false;
  struct Draining {
    bool was = t_draining;
    Draining() noexcept { t_draining = true; }
    ~Draining() { t_draining = was; }
  };
  std::mutex queue_;  // items_, next_, handles, event state
  std::mutex exec_;   // one drain at a time
  std::deque<Item> items_;
  std::uint64_t next_ = 1;
  std::unordered_map<porta_stream, std::unique_ptr<StrictStream>> streams_;
  std::unordered_map<porta_event, std::shared_ptr<StrictEvent>> events_;
  porta_status sticky_ = PORTA_OK;  // under exec_
  char sticky_message_[1024] = "";
};

Engine& engine() {
  static Engine* e = new Engine;  // never destroyed: arrays and streams may outlive static destructors
  return *e;
}

porta_status bad_stream(const char* fn, porta_stream s) {
  return set_error(PORTA_ERR_INVALID, "%s: %p is not a live cpu:strict stream", fn, static_cast<void*>(s));
}
porta_status bad_event(const char* fn, porta_event e) {
  return set_error(PORTA_ERR_INVALID, "%s: %p is not a live cpu:strict event", fn, static_cast<void*>(e));
}
porta_status oom_queue(const char* fn) {
  return set_error(PORTA_ERR_OOM, "%s: out of host memory for cpu:strict's queue", fn);
}

#define PORTA_STRICT_DEV(fn) \
  if (dev != kDev) return bad_device(fn, dev)
#define PORTA_STRICT_STREAM(fn, s) \
  if (!engine().live_stream(s)) return bad_stream(fn, s)

// True for an argument that is not a data pointer, or points into device memory of cpu:strict.
template <class T>
bool on_device_or_null(const T& v) {
  if constexpr (std::is_pointer_v<T> && !std::is_same_v<T, porta_stream> && !std::is_same_v<T, porta_event>) {
    return v == nullptr || space_of(v, 0) == Space::device;
  } else {
    return true;
  }
}

// ---- every entry, generated from the list ------------------------------------------------------
// Entry<Tag, Sig>::call has the entry's exact signature. The device index of cpu:strict becomes the
// CPU's 0 and the stream becomes the CPU's (ignored) default stream for the inner call.
template <class Tag, class Sig>
struct Entry;
template <class Tag, class... P>
struct Entry<Tag, porta_status (*)(P...)> {
  static constexpr std::size_t N = sizeof...(P);
  using First = std::tuple_element_t<0, std::tuple<P...>>;
  using Last = std::tuple_element_t<N - 1, std::tuple<P...>>;

  static porta_status call(P... p) noexcept {
    std::tuple<P...> args(p...);
    if constexpr (std::is_same_v<First, int>) {
      if (std::get<0>(args) != kDev) return bad_device(Tag::label, std::get<0>(args));
      std::get<0>(args) = 0;
    }
    try {
      if constexpr (std::is_same_v<Last, porta_stream>) {
        // A pointer to host memory (a shape, strides) may be gone by the time the queue runs:
        // such an entry runs now, like one without a stream.
        const porta_stream s = std::get<N - 1>(args);
        PORTA_STRICT_STREAM(Tag::label, s);
        std::get<N - 1>(args) = nullptr;
        const bool deferrable = std::apply([](const auto&... a) { return (on_device_or_null(a) && ...); }, args);
        if (!deferrable) return engine().run_now(Tag::label, [&args] { return std::apply(cpu().*Tag::member, args); });
        engine().push(s, Tag::label, [args] { return std::apply(cpu().*Tag::member, args); });
        return PORTA_OK;
      } else {
        return engine().run_now(Tag::label, [&args] { return std::apply(cpu().*Tag::member, args); });
      }
    } catch (...) {
      return oom_queue(Tag::label);
    }
  }
};

#define PORTA_ABI_ENTRY(name, params, args)                 \
  struct Tag_##name {                                       \
    static constexpr const char* label = #name;             \
    static constexpr auto member = &porta_backend_v1::name; \
  };
#include "porta/abi/backend_v1_entries.inc"
#undef PORTA_ABI_ENTRY

// ---- device, memory -----------------------------------------------------------------------------
int device_count(const char** reason) noexcept {
  return cpu().device_count(reason);
}

porta_status device_info(int dev, porta_device_info_v1* out) noexcept {
  PORTA_STRICT_DEV("device_info");
  return cpu().device_info(0, out);
}

porta_status synchronize(int dev) noexcept {
  PORTA_STRICT_DEV("synchronize");
  return engine().drain_through(engine().everything());
}

porta_status alloc(int dev, size_t bytes, porta_stream s, void** out) noexcept {
  PORTA_STRICT_DEV("alloc");
  PORTA_STRICT_STREAM("alloc", s);
  porta_status st = device_alloc(bytes, out);
  // Short of blocks or bytes while frees wait in the queue: run the queue, as a GPU's stream-ordered
  // pool reclaims the blocks of completed frees when it runs short, then ask again. Never from
  // inside queued work, which the queue is running already.
  if (st == PORTA_ERR_OOM && device_frees_pending() && !Engine::draining()) {
    if (porta_status d = engine().drain_through(engine().everything()); d != PORTA_OK) return d;
    st = device_alloc(bytes, out);
  }
  return st;
}

// Stream-ordered: the block is released when the queue reaches the free, after the work queued
// before it; it stops counting in memory_stats at once, as on a GPU.
porta_status free(int dev, void* ptr, porta_stream s) noexcept {
  PORTA_STRICT_DEV("free");
  PORTA_STRICT_STREAM("free", s);
  if (ptr == nullptr) return PORTA_OK;
  if (porta_status st = device_free_begin(ptr); st != PORTA_OK) return st;
  try {
    engine().push(s, "free", [ptr] {
      device_free_end(ptr);
      return PORTA_OK;
    });
  } catch (...) {
    device_free_end(ptr);
  }
  return PORTA_OK;
}

const char* space_name(Space sp) {
  return sp == Space::device ? "device memory of cpu:strict" : "host memory";
}

// A copy whose pointers are not where its kind says is an error at once (cudaMemcpy's
// cudaErrorInvalidValue), not a silent memcpy: it is the mistake of code that treats cpu:strict
// memory as host memory.
porta_status copy(int dev, void* dst, const void* src, size_t bytes, porta_copy_kind kind, porta_stream s) noexcept {
  PORTA_STRICT_DEV("copy");
  PORTA_STRICT_STREAM("copy", s);
  const int k = raw_enum(kind);
  if (k < 0 || k > 3) return set_error(PORTA_ERR_INVALID, "copy: unknown copy kind %d", k);
  if (bytes == 0) return PORTA_OK;
  if (dst == nullptr || src == nullptr) return set_error(PORTA_ERR_INVALID, "copy: NULL pointer with %zu bytes", bytes);
  const bool src_dev = k == PORTA_COPY_DEVICE_TO_HOST || k == PORTA_COPY_DEVICE_TO_DEVICE;
  const bool dst_dev = k == PORTA_COPY_HOST_TO_DEVICE || k == PORTA_COPY_DEVICE_TO_DEVICE;
  static const char* const kinds[] = {"host-to-device", "device-to-host", "device-to-device", "host-to-host"};
  const Space sd = space_of(dst, bytes), ss = space_of(src, bytes);
  if ((sd == Space::device) != dst_dev)
    return set_error(PORTA_ERR_INVALID, "copy: a %s copy of %zu bytes into %p, which is %s", kinds[k], bytes, dst,
                     sd == Space::device ? space_name(sd) : "not (all) device memory of cpu:strict");
  if ((ss == Space::device) != src_dev)
    return set_error(PORTA_ERR_INVALID, "copy: a %s copy of %zu bytes from %p, which is %s", kinds[k], bytes, src,
                     ss == Space::device ? space_name(ss) : "not (all) device memory of cpu:strict");
  if (!dst_dev) pend_host(dst, true, 1);
  if (!src_dev) pend_host(src, false, 1);
  try {
    engine().push(s, "copy", [=] {
      const porta_status st = cpu().copy(0, dst, src, bytes, kind, nullptr);
      if (!dst_dev) pend_host(dst, true, -1);
      if (!src_dev) pend_host(src, false, -1);
      return st;
    });
  } catch (...) {
    if (!dst_dev) pend_host(dst, true, -1);
    if (!src_dev) pend_host(src, false, -1);
    return oom_queue("copy");
  }
  return PORTA_OK;
}

porta_status memory_stats(int dev, porta_memory_stats_v1* out) noexcept {
  PORTA_STRICT_DEV("memory_stats");
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "memory_stats: out is NULL");
  stats(out);
  return PORTA_OK;
}

// Nothing is cached: every block is its own mapping. The quarantine stays (it is the check).
porta_status empty_cache(int dev) noexcept {
  PORTA_STRICT_DEV("empty_cache");
  return PORTA_OK;
}

// ---- streams and events -------------------------------------------------------------------------
// stream_create and event_create: a new handle from `make`.
template <class Handle, class Make>
porta_status create_handle(int dev, const char* fn, Handle* out, Make make) noexcept {
  PORTA_STRICT_DEV(fn);
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "%s: out is NULL", fn);
  try {
    *out = make();
    return PORTA_OK;
  } catch (...) {
    return oom_queue(fn);
  }
}

porta_status stream_create(int dev, porta_stream* out) noexcept {
  return create_handle(dev, "stream_create", out, [] { return engine().new_stream(); });
}

porta_status stream_destroy(int dev, porta_stream s) noexcept {
  PORTA_STRICT_DEV("stream_destroy");
  if (s == nullptr) return PORTA_OK;
  PORTA_STRICT_STREAM("stream_destroy", s);
  const porta_status st = engine().drain_through(engine().last_of(s));
  engine().drop_stream(s);
  return st;
}

porta_status stream_synchronize(int dev, porta_stream s) noexcept {
  PORTA_STRICT_DEV("stream_synchronize");
  PORTA_STRICT_STREAM("stream_synchronize", s);
  return engine().drain_through(engine().last_of(s));
}

// Pending work is not done: the first query says so and runs it, so that a loop polling query()
// ends, and code that reads after one query without waiting still sees unfinished work.
porta_status stream_query(int dev, porta_stream s, int* done) noexcept {
  PORTA_STRICT_DEV("stream_query");
  if (done == nullptr) return set_error(PORTA_ERR_INVALID, "stream_query: done is NULL");
  PORTA_STRICT_STREAM("stream_query", s);
  const std::uint64_t last = engine().last_of(s);
  *done = engine().pending_through(last) ? 0 : 1;
  return engine().drain_through(last);
}

// One queue in issue order: the event's record is already ahead of everything queued after this.
porta_status stream_wait_event(int dev, porta_stream s, porta_event e) noexcept {
  PORTA_STRICT_DEV("stream_wait_event");
  PORTA_STRICT_STREAM("stream_wait_event", s);
  if (!engine().event(e)) return bad_event("stream_wait_event", e);
  return PORTA_OK;
}

porta_status event_create(int dev, porta_event* out) noexcept {
  return create_handle(dev, "event_create", out, [] { return engine().new_event(); });
}

porta_status event_destroy(int dev, porta_event e) noexcept {
  PORTA_STRICT_DEV("event_destroy");
  if (e == nullptr) return PORTA_OK;
  return engine().drop_event(e) ? PORTA_OK : bad_event("event_destroy", e);
}

porta_status event_record(int dev, porta_event e, porta_stream s) noexcept {
  PORTA_STRICT_DEV("event_record");
  PORTA_STRICT_STREAM("event_record", s);
  const std::shared_ptr<StrictEvent> ev = engine().event(e);
  if (!ev) return bad_event("event_record", e);
  try {
    engine().record(s, ev);
    return PORTA_OK;
  } catch (...) {
    return oom_queue("event_record");
  }
}

porta_status event_synchronize(int dev, porta_event e) noexcept {
  PORTA_STRICT_DEV("event_synchronize");
  const std::shared_ptr<StrictEvent> ev = engine().event(e);
  if (!ev) return bad_event("event_synchronize", e);
  return engine().drain_through(engine().snapshot(*ev).seq);
}

porta_status event_query(int dev, porta_event e, int* done) noexcept {
  PORTA_STRICT_DEV("event_query");
  if (done == nullptr) return set_error(PORTA_ERR_INVALID, "event_query: done is NULL");
  const std::shared_ptr<StrictEvent> ev = engine().event(e);
  if (!ev) return bad_event("event_query", e);
  const StrictEvent now = engine().snapshot(*ev);
  *done = now.seq == 0 || now.done ? 1 : 0;
  return engine().drain_through(now.seq);
}

// As cudaEventElapsedTime: both events must have completed.
porta_status event_elapsed_ms(int dev, porta_event start, porta_event end, float* ms) noexcept {
  PORTA_STRICT_DEV("event_elapsed_ms");
  if (ms == nullptr) return set_error(PORTA_ERR_INVALID, "event_elapsed_ms: ms is NULL");
  const std::shared_ptr<StrictEvent> a = engine().event(start), b = engine().event(end);
  if (!a) return bad_event("event_elapsed_ms", start);
  if (!b) return bad_event("event_elapsed_ms", end);
  const StrictEvent sa = engine().snapshot(*a), sb = engine().snapshot(*b);
  if (sa.seq == 0 || sb.seq == 0)
    return set_error(PORTA_ERR_INVALID, "event_elapsed_ms: the %s event was never recorded",
                     sa.seq == 0 ? "start" : "end");
  if (!sa.done || !sb.done)
    return set_error(PORTA_ERR_INVALID,
                     "event_elapsed_ms: the %s event has not completed (cpu:strict runs queued work at synchronize: "
                     "synchronize the end event first)",
                     sa.done ? "end" : "start");
  *ms = std::chrono::duration<float, std::milli>(sb.time - sa.time).count();
  return PORTA_OK;
}

// A run-time kernel's launch is work like any other, but its arguments are a host struct: the
// generated wrapper would run it at once (a host pointer), so it is queued here with a copy.
porta_status rtc_launch(int dev, porta_rtc_kernel k, int64_t n, const void* args, size_t args_bytes,
                        porta_stream s) noexcept {
  PORTA_STRICT_DEV("rtc_launch");
  PORTA_STRICT_STREAM("rtc_launch", s);
  if (k == nullptr || n < 0 || (args == nullptr && args_bytes > 0))
    return cpu().rtc_launch(0, k, n, args, args_bytes, nullptr);  // its message, at once
  try {
    const unsigned char* p = static_cast<const unsigned char*>(args);
    std::shared_ptr<unsigned char[]> copy(new unsigned char[args_bytes > 0 ? args_bytes : 1]);
    if (args_bytes > 0) std::memcpy(copy.get(), p, args_bytes);
    engine().push(s, "rtc_launch",
                  [k, n, copy, args_bytes] { return cpu().rtc_launch(0, k, n, copy.get(), args_bytes, nullptr); });
    return PORTA_OK;
  } catch (...) {
    return oom_queue("rtc_launch");
  }
}

porta_status strict_host_alloc(size_t bytes, void** out) noexcept {
  return host_alloc(bytes, out);
}
porta_status strict_host_free(void* ptr) noexcept {
  return host_free(ptr);
}

}  // namespace
}  // namespace strict

const porta_backend_v1* strict_backend() noexcept {
  static const porta_backend_v1 table = [] {
    namespace s = strict;
    static std::string info;
    info = std::string("cpu:strict (separate address space, deferred streams) over ") +
           (s::cpu().build_info != nullptr ? s::cpu().build_info : "the cpu backend");
    porta_backend_v1 t = s::cpu();
    t.build_info = info.c_str();
    t.device_count = &s::device_count;
#define PORTA_ABI_ENTRY(name, params, args) t.name = &s::Entry<s::Tag_##name, decltype(porta_backend_v1::name)>::call;
#include "porta/abi/backend_v1_entries.inc"
#undef PORTA_ABI_ENTRY
    t.device_info = &s::device_info;
    t.synchronize = &s::synchronize;
    t.alloc = &s::alloc;
    t.free = &s::free;
    t.copy = &s::copy;
    t.host_alloc = &s::strict_host_alloc;
    t.host_free = &s::strict_host_free;
    t.memory_stats = &s::memory_stats;
    t.empty_cache = &s::empty_cache;
    t.stream_create = &s::stream_create;
    t.stream_destroy = &s::stream_destroy;
    t.stream_synchronize = &s::stream_synchronize;
    t.stream_query = &s::stream_query;
    t.stream_wait_event = &s::stream_wait_event;
    t.event_create = &s::event_create;
    t.event_destroy = &s::event_destroy;
    t.event_record = &s::event_record;
    t.event_synchronize = &s::event_synchronize;
    t.event_query = &s::event_query;
    t.event_elapsed_ms = &s::event_elapsed_ms;
    // The collectives are the CPU's own, unwrapped: they touch no memory and only say, at once,
    // that the CPU has none (the generated wrapper would defer `collective` onto the queue, hiding
    // its error until a synchronize, and would take coll_group's `begin` for a device index).
    t.coll_available = s::cpu().coll_available;
    t.coll_unique_id = s::cpu().coll_unique_id;
    t.coll_init = s::cpu().coll_init;
    t.coll_destroy = s::cpu().coll_destroy;
    t.collective = s::cpu().collective;
    t.coll_group = s::cpu().coll_group;
    t.rtc_launch = &s::rtc_launch;
    t.rtc_launch_cover = &s::rtc_launch;  // the CPU has no grid (cpu_rtc.cpp)
    return t;
  }();
  return &table;
}

// ---- hooks of the header templates (porta/detail/strict.hpp) ------------------------------------
void strict_describe(const void* ptr, porta_dtype dt, const std::int64_t* dims, int rank) noexcept {
  if (ptr == nullptr) return;
  char text[160];
  int n = std::snprintf(text, sizeof text, "an Array of %s, shape ", dtype_name(dt));
  for (int i = 0; i < rank && n > 0 && n < static_cast<int>(sizeof text); ++i)
    n += std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n), i ? "x%lld" : "%lld",
                       static_cast<long long>(dims[i]));
  if (rank == 0) std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n), "scalar");
  strict::describe(ptr, text);
}

void strict_check_borrow(const void* ptr, std::size_t bytes, const char* fn) {
  if (bytes == 0 || strict::space_of(ptr, bytes) == strict::Space::device) return;
  throw_invalid(fn,
                "cpu:strict can only borrow its own device memory, and this is not (all) of it: borrow host memory on "
                "cpu, or copy it (Array::from)");
}

namespace {
std::shared_ptr<void> own(StrictTask task) {
  return std::shared_ptr<void>(task.state, task.destroy);
}
}  // namespace

void strict_enqueue(porta_stream s, StrictTask task, const char* fn) {
  std::shared_ptr<void> state = own(task);
  if (!strict::engine().live_stream(s))
    throw_invalid(fn, "the stream is not a live stream of cpu:strict (destroyed, or of another device)");
  const auto run = task.run;
  strict::engine().push(s, fn, [state, run] {
    run(state.get());
    return PORTA_OK;
  });
}

void strict_run_now(porta_stream s, StrictTask task, const char* fn) {
  std::shared_ptr<void> state = own(task);
  if (!strict::engine().live_stream(s))
    throw_invalid(fn, "the stream is not a live stream of cpu:strict (destroyed, or of another device)");
  strict::Engine& e = strict::engine();
  if (porta_status st = e.drain_through(e.last_of(s)); st != PORTA_OK) throw_status(st, fn, Device::cpu_strict());
  e.run_open(fn, [&] { task.run(state.get()); });
}

}  // namespace porta::detail
