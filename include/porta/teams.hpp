// SPDX-License-Identifier: Apache-2.0
// Teams: user kernels whose threads cooperate through scratch memory and barriers (Kokkos's
// TeamPolicy, a CUDA or HIP thread block with __shared__ memory, a SYCL work-group with local memory).
//
//   #include <porta/teams.hpp>
//   // a team per block of 256 rows; each stages a 256-element slice of x in scratch
//   porta::parallel_for("blocked", dev, porta::teams(rows / 256, 128).scratch(256 * sizeof(float)),
//     PORTA_KERNEL((const porta::Team& t) {
//       auto xs = t.scratch<float>(256);                           // this team's, fast memory
//       porta::team_for(t, 256, [&](std::int64_t k) { xs[k] = x[t.league() * 256 + k]; });
//       t.barrier();                                               // every member's stores are seen
//       porta::thread_for(t, 256, [&](std::int64_t r) {            // rows of this team, over its threads
//         y[t.league() * 256 + r] = porta::vector_reduce(t, 256, porta::plus{},
//                                                        [&](std::int64_t k) { return a(r, k) * xs[k]; });
//       });
//     }));
//
// A launch runs league() teams. A team has size() threads, each of vector_length() lanes, and
// every member (a thread's lane) calls the kernel once with its own Team. Where it runs:
//   CUDA, HIP  a team is a thread block of team_size x vector_length threads (a thread's lanes are
//              neighbouring threads of one warp), scratch is the block's shared memory (beyond
//              48 KiB where the device allows), barrier() is __syncthreads().
//   CPU        a team is one OpenMP thread: size() and vector_length() are 1 whatever the launch
//              asked, the nested ranges below are plain loops (the innermost vectorises), scratch is
//              a buffer of that thread which stays in its cache, and barrier() costs nothing. Teams
//              are spread over the threads as parallel_for's indices are. cpu:strict fills scratch
//              with 0xff bytes (NaN, -1) before every team, as GPU shared memory starts with garbage.
// So a kernel reads the team's shape from the Team, never from the launch: it hands out work with
// the nested ranges, which are correct for any size:
//   thread_for(t, n, f)  f(i), i in [0, n), spread over the team's threads (a thread's lanes all
//                        run its f(i): use vector_for inside)
//   vector_for(t, n, f)  f(i) spread over the calling thread's vector lanes
//   team_for(t, n, f)    f(i) spread over every member (threads x lanes)
//   thread_vector_for(t, rows, cols, f)
//                        f(r, c) for a rows x cols tile: rows over the threads, columns over each
//                        thread's lanes (thread_for around vector_for, in one call)
// The 1-D ranges also take [begin, end). Iterations of one range may run at the same time: they
// must not depend on each other (on the CPU, vector_for, team_for and thread_vector_for's columns
// tell the compiler so).
//
// t.barrier(): every member of the team reaches it, or none (never inside a nested range or a
// branch some members skip). Scratch stores before it are seen by every member after it. In a
// translation unit with PORTA_BOUNDS_CHECK, a barrier that CUDA sees some threads of a warp skip
// fails the kernel (porta/debug.hpp) instead of hanging.
//
// Collective results, the same bits on every device, team size and vector length: every member of
// the team (for vector_reduce: every lane of the calling thread) calls them with the same n, and
// each gets the result. Their order depends on n alone:
//   team_reduce(t, n, op, f)    the built-in reductions' chunk (porta/detail/reduce_order.hpp) with
//                               256 lanes: acc[l] = op(acc[l], f(k * 256 + l)) for k = 0, 1, ...
//                               from the identity, then the tree acc[l] = op(acc[l], acc[l + s]),
//                               s = 128, 64, ..., 1. The result's NaN is the canonical one.
//   vector_reduce(t, n, op, f)  the same with 32 lanes.
//   team_exclusive_scan / team_inclusive_scan(t, n, [op,] value, store) -> total
//                               [0, n) is cut into nb <= 256 blocks of b = ceil(n / 256)
//                               consecutive indices; each block's total is folded in order from
//                               the identity; the block totals are scanned by the Kogge-Stone steps
//                               d = 1, 2, ..., 128 (w[k] = op(w[k - d], w[k]) for k >= d), block k
//                               starts from w[k - 1] (the identity for k = 0) and adds its values
//                               one at a time. store(i, p) gets the running value before (exclusive)
//                               or after (inclusive) value(i); the exclusive sum of index 0 is +0.0,
//                               as cumsum's. value(i) is called twice per index.
// Over no values (n = 0) a sum is +0.0, a max the identity (-inf, or the type's lowest).
// op is porta::plus, multiplies, maximum_op or minimum_op (scans: plus or maximum_op); the result
// type is f's (value's), or R in team_reduce<R>(...).
//
// team_atomic_add(t, p, v): *p += v for memory of this team's scratch, atomic among its members
// (a shared-memory atomic on GPUs, a plain add on the CPU, where a team is one thread).
//
// Limits, checked at launch on every device so that a CPU run catches them: vector_length a power
// of two up to 32, team_size x vector_length at most 1024. On GPUs also the kernel's own limit of
// threads per block (registers) and the device's shared memory per block; each is an
// InvalidArgument that names the limit. teams(league) lets porta pick the team size (a GPU block of
// up to 256 threads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <type_traits>

#include "porta/debug.hpp"
#include "porta/detail/config.hpp"
#include "porta/detail/ops.hpp"
#include "porta/detail/rounding.hpp"
#include "porta/kernels.hpp"

// clang reports a loop that vectorize(assume_safety) / omp simd could not vectorise (a kernel's
// body decides that, and a scalar loop is still right) as a warning at the launch inside this
// header; a user's -Werror must not turn that into an error.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wpass-failed"
#endif

namespace porta {

// teams(league, team_auto): porta picks the team size.
inline constexpr int team_auto = 0;

// The shape of a team launch: league teams of team_size threads x vector_length lanes, each with
// scratch_bytes of scratch. Cheap to copy.
class Teams {
 public:
  Teams(std::int64_t league, int team_size = team_auto, int vector_length = 1)
      : league_(league), team_size_(team_size), vector_length_(vector_length) {
    constexpr const char* fn = "porta::teams";
    if (league < 0) detail::throw_invalid(fn, ("the league is negative (" + std::to_string(league) + ")").c_str());
    if (team_size < 0)
      detail::throw_invalid(fn, ("the team size is negative (" + std::to_string(team_size) + ")").c_str());
    if (vector_length < 1 || vector_length > 32 || (vector_length & (vector_length - 1)) != 0)
      detail::throw_invalid(fn, ("the vector length must be a power of two from 1 to 32 (a thread's lanes share a "
                                 "GPU warp), not " +
                                 std::to_string(vector_length))
                                    .c_str());
    if (static_cast<std::int64_t>(team_size) * vector_length > 1024)
      detail::throw_invalid(fn,
                            ("a team of " + std::to_string(team_size) + " threads x " + std::to_string(vector_length) +
                             " lanes is more than the 1024 threads a GPU thread block holds")
                                .c_str());
  }
  // Bytes of scratch memory per team (GPUs: shared memory; beyond 48 KiB only where the device
  // allows it, up to 227 KiB on an H100 or H200, 64 KiB on AMD GPUs).
  Teams scratch(std::size_t bytes) const {
    Teams t = *this;
    t.scratch_ = bytes;
    return t;
  }
  std::int64_t league() const { return league_; }
  int team_size() const { return team_size_; }  // team_auto: porta's choice
  int vector_length() const { return vector_length_; }
  std::size_t scratch_bytes() const { return scratch_; }

 private:
  std::int64_t league_;
  int team_size_;
  int vector_length_;
  std::size_t scratch_ = 0;
};

inline Teams teams(std::int64_t league, int team_size = team_auto, int vector_length = 1) {
  return Teams(league, team_size, vector_length);
}

namespace detail {
// What a Team is made of; filled by the launch.
struct TeamState {
  std::int64_t league, league_size;
  int rank, size, lane, vector_length;
  unsigned char* scratch;
  std::size_t scratch_bytes;
};
}  // namespace detail

// One member's view of its team, passed to the kernel as const porta::Team&.
class Team {
 public:
  PORTA_HOST_DEVICE explicit Team(const detail::TeamState& s) : s_(s) {}

  PORTA_HOST_DEVICE std::int64_t league() const { return s_.league; }  // this team, in [0, league_size())
  PORTA_HOST_DEVICE std::int64_t league_size() const { return s_.league_size; }
  PORTA_HOST_DEVICE int rank() const { return s_.rank; }  // this thread, in [0, size())
  PORTA_HOST_DEVICE int size() const { return s_.size; }  // threads in the team (1 on the CPU)
  PORTA_HOST_DEVICE int lane() const { return s_.lane; }  // this lane, in [0, vector_length())
  PORTA_HOST_DEVICE int vector_length() const { return s_.vector_length; }
  PORTA_HOST_DEVICE std::size_t scratch_size() const { return s_.scratch_bytes; }  // bytes the launch gave

  // Waits for every member of the team; their scratch stores are seen after it.
  template <bool Check = PORTA_DETAIL_BOUNDS>
  PORTA_HOST_DEVICE void barrier() const {
#if PORTA_DEVICE_PASS
#if defined(__CUDA_ARCH__)
    if constexpr (Check) {
      // A warp whose threads are not all here is in a branch that some members skip; __syncthreads
      // there is undefined (it may hang). Report it and leave the barrier out instead.
      const unsigned me = threadIdx.x + threadIdx.y * blockDim.x;
      const unsigned first = me & ~31u, members = blockDim.x * blockDim.y;
      const unsigned here = members - first < 32 ? members - first : 32;
      const unsigned expect = here == 32 ? 0xffffffffu : (1u << here) - 1;
      const unsigned active = __activemask();
      if (active != expect) {
        fail(
            "porta::Team::barrier: reached by only some threads of a warp (inside a branch or a nested range that "
            "not every member of the team takes): threads here, threads in the warp",
            __popc(active), here);
        return;
      }
    }
#endif
    __syncthreads();
#endif
  }

  // The next n (or rows x cols) elements of the team's scratch, as a View; every member carves the
  // same pieces in the same order, so they see the same memory. Each piece starts 16-byte aligned.
  // Asking for more than the launch's scratch returns an empty View, and fails the kernel
  // (porta/debug.hpp) on the CPU and, where views are checked (PORTA_BOUNDS_CHECK), on GPUs too.
  template <class T, bool Check = PORTA_DETAIL_BOUNDS>
  PORTA_HOST_DEVICE View<T> scratch(std::int64_t n) const {
    View<T> v = scratch<T, Check>(1, n);
    return v;
  }
  template <class T, bool Check = PORTA_DETAIL_BOUNDS>
  PORTA_HOST_DEVICE View<T> scratch(std::int64_t rows, std::int64_t cols) const {
    static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= 16,
                  "porta::Team::scratch: a trivially copyable type aligned to at most 16 bytes");
#if PORTA_DEVICE_PASS
    // The block's shared memory by its own name rather than the pointer the launch stored: the
    // compiler then knows a View of scratch points to shared memory and loads it as such, as it
    // does a hand-written kernel's __shared__ array, rather than through a generic address.
    extern __shared__ __align__(16) unsigned char porta_team_scratch[];
    unsigned char* const base = porta_team_scratch;
#else
    unsigned char* const base = s_.scratch;
#endif
    const std::size_t at = (used_ + 15) & ~std::size_t(15);
    const std::size_t left = at < s_.scratch_bytes ? s_.scratch_bytes - at : 0;
    const bool fits =
        rows >= 0 && cols >= 0 && (cols == 0 || static_cast<std::size_t>(rows) <= left / sizeof(T) / cols);
    // On a GPU only where views are checked (PORTA_BOUNDS_CHECK): fail() is a function call, and a
    // call anywhere in a kernel makes the compiler keep the kernel's other values in fewer
    // registers; the H200's tiled n-body ran at 0.62x of the hand-written kernel with it, 0.96x
    // without. The CPU always checks.
#if PORTA_DEVICE_PASS
    constexpr bool report = Check;
#else
    constexpr bool report = true;
#endif
    if constexpr (report) {
      if (!fits)
        fail(
            "porta::Team::scratch: the request does not fit the launch's scratch (teams(...).scratch(bytes)): "
            "rows, columns, bytes per element, bytes left",
            rows, cols, static_cast<std::int64_t>(sizeof(T)), static_cast<std::int64_t>(left));
    }
    // One return, the pointer computed the same way on both paths (an empty View at the base when
    // the request does not fit): a branch that returned another pointer hid from the compiler that
    // every View of scratch is in shared memory.
    const std::int64_t r = fits ? rows : 0, c = fits ? cols : 0;
    if (fits) used_ = at + static_cast<std::size_t>(r * c) * sizeof(T);
    return View<T>{reinterpret_cast<T*>(base + (fits ? at : 0)), r * c, r, c, "team scratch"};
  }

 private:
  detail::TeamState s_;
  mutable std::size_t used_ = 0;
};

// ---- nested ranges ----------------------------------------------------------------------------

// Iterations are independent (they run at once on a GPU): the compiler may vectorise them.
#if defined(_OPENMP)
#define PORTA_DETAIL_INDEPENDENT _Pragma("omp simd")
#elif defined(__clang__)
#define PORTA_DETAIL_INDEPENDENT _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define PORTA_DETAIL_INDEPENDENT _Pragma("GCC ivdep")
#else
#define PORTA_DETAIL_INDEPENDENT
#endif

// A host-device template that calls the kernel's own callables: under nvcc, the host copy of a
// PORTA_KERNEL (a plain host lambda) reaches these templates too, and nvcc would warn at every
// call of its nested lambdas from the template's device side, which that copy never runs.
#if defined(__NVCC__)
#define PORTA_DETAIL_CALLS_KERNEL _Pragma("nv_exec_check_disable")
#else
#define PORTA_DETAIL_CALLS_KERNEL
#endif

// f(i) for i in [begin, end), spread over the team's threads.
PORTA_DETAIL_CALLS_KERNEL
template <class F>
PORTA_HOST_DEVICE void thread_for(const Team& t, std::int64_t begin, std::int64_t end, const F& f) {
#if PORTA_DEVICE_PASS
  for (std::int64_t i = begin + t.rank(); i < end; i += t.size()) f(i);
#else
  (void)t;
  for (std::int64_t i = begin; i < end; ++i) f(i);
#endif
}
PORTA_DETAIL_CALLS_KERNEL
template <class F>
PORTA_HOST_DEVICE void thread_for(const Team& t, std::int64_t n, const F& f) {
  thread_for(t, std::int64_t(0), n, f);
}

// f(i) for i in [begin, end), spread over the calling thread's vector lanes.
PORTA_DETAIL_CALLS_KERNEL
template <class F>
PORTA_HOST_DEVICE void vector_for(const Team& t, std::int64_t begin, std::int64_t end, const F& f) {
#if PORTA_DEVICE_PASS
  for (std::int64_t i = begin + t.lane(); i < end; i += t.vector_length()) f(i);
#else
  (void)t;
  PORTA_DETAIL_INDEPENDENT
  for (std::int64_t i = begin; i < end; ++i) f(i);
#endif
}
PORTA_DETAIL_CALLS_KERNEL
template <class F>
PORTA_HOST_DEVICE void vector_for(const Team& t, std::int64_t n, const F& f) {
  vector_for(t, std::int64_t(0), n, f);
}

// f(r, c) for r in [0, rows) over the team's threads and c in [0, cols) over each thread's lanes.
// The same iterations as thread_for around vector_for, but on a GPU a tile no wider than the lanes
// runs as straight-line code: the trip count comes first and the rows are unrolled, so a thread's
// loads of several rows are in flight at once, as in a hand-written kernel whose loop bounds are
// constants. (Through the two nested loops, whose bounds and steps the compiler cannot know, each
// load waited for the one before: the H200's 8192^2 transpose, teams of 4 x 32, took 242 us that
// way, 156 us this way, and a hand-written kernel of the same shape 148 us.)
PORTA_DETAIL_CALLS_KERNEL
template <class F>
PORTA_HOST_DEVICE void thread_vector_for(const Team& t, std::int64_t rows, std::int64_t cols, const F& f) {
#if PORTA_DEVICE_PASS
  // (The form matters: a test of cols <= 0 here, or the trip count computed from rows - 1 - first,
  // made ptxas schedule the transpose's unrolled rows worse, 187 us against 156 us on the H200.)
  const std::int64_t first = t.rank();
  if (first >= rows) return;
  const std::int64_t left = rows - first;
  const int size = t.size();
  const std::int64_t trips =
      left <= 0x7fffffff ? static_cast<std::int64_t>(static_cast<unsigned>(left - 1) / static_cast<unsigned>(size)) + 1
                         : (left - 1) / size + 1;
  if (cols <= t.vector_length()) {
    const std::int64_t c = t.lane();
    const bool mine = c < cols;  // none where cols <= 0
#pragma unroll 4
    for (std::int64_t k = 0; k < trips; ++k)
      if (mine) f(first + k * size, c);
  } else {
    for (std::int64_t k = 0; k < trips; ++k)
      for (std::int64_t c = t.lane(); c < cols; c += t.vector_length()) f(first + k * size, c);
  }
#else
  (void)t;
  for (std::int64_t r = 0; r < rows; ++r) {
    PORTA_DETAIL_INDEPENDENT
    for (std::int64_t c = 0; c < cols; ++c) f(r, c);
  }
#endif
}

// f(i) for i in [begin, end), spread over every member of the team.
PORTA_DETAIL_CALLS_KERNEL
template <class F>
PORTA_HOST_DEVICE void team_for(const Team& t, std::int64_t begin, std::int64_t end, const F& f) {
#if PORTA_DEVICE_PASS
  const std::int64_t stride = static_cast<std::int64_t>(t.size()) * t.vector_length();
  for (std::int64_t i = begin + static_cast<std::int64_t>(t.rank()) * t.vector_length() + t.lane(); i < end;
       i += stride)
    f(i);
#else
  (void)t;
  PORTA_DETAIL_INDEPENDENT
  for (std::int64_t i = begin; i < end; ++i) f(i);
#endif
}
PORTA_DETAIL_CALLS_KERNEL
template <class F>
PORTA_HOST_DEVICE void team_for(const Team& t, std::int64_t n, const F& f) {
  team_for(t, std::int64_t(0), n, f);
}

// ---- collective reductions and scans (the orders are at the top of this file) ------------------

namespace detail {

inline constexpr int kTeamLanes = 256;   // team_reduce's lanes; team scans' most blocks
inline constexpr int kVectorLanes = 32;  // vector_reduce's lanes

template <class R, class F>
using team_value_t =
    std::conditional_t<std::is_same_v<R, Deduce>,
                       decltype(reduce_type_of<std::decay_t<std::invoke_result_t<const F&, std::int64_t>>>()), R>;

// The result over no values (and an exclusive scan's at index 0): +0.0 for a sum (as sum and cumsum
// give), the identity otherwise.
PORTA_DETAIL_CALLS_KERNEL
template <class T, class Op>
PORTA_HOST_DEVICE T empty_value() {
  if constexpr (std::is_same_v<Op, SumOp>) {
    return T(0);
  } else {
    return Op::template identity<T>();
  }
}

// The canonical chunk of `Lanes` lanes, on one thread: lanes past n hold the identity, and op(x,
// identity) == x bit for bit, so they and the tree steps that would only meet them are skipped.
PORTA_DETAIL_CALLS_KERNEL
template <int Lanes, class T, class Op, class F>
PORTA_HOST_DEVICE T lanes_reduce_serial(std::int64_t n, Op op, const F& f) {
  T acc[Lanes];
  const int used = n < Lanes ? static_cast<int>(n) : Lanes;
  for (int l = 0; l < used; ++l) acc[l] = Op::template identity<T>();
  std::int64_t base = 0;
  for (; base + Lanes <= n; base += Lanes) {
    PORTA_DETAIL_INDEPENDENT
    for (int l = 0; l < Lanes; ++l) acc[l] = op(acc[l], static_cast<T>(f(base + l)));
  }
  for (int l = 0; base + l < n; ++l) acc[l] = op(acc[l], static_cast<T>(f(base + l)));
  for (int s = Lanes / 2; s >= 1; s /= 2)
    for (int l = 0; l < s && l + s < used; ++l) acc[l] = op(acc[l], acc[l + s]);
  return used > 0 ? acc[0] : empty_value<T, Op>();
}

// The scan's blocks: b consecutive indices each, nb of them.
struct ScanBlocks {
  std::int64_t b = 0, nb = 0;
  PORTA_HOST_DEVICE explicit ScanBlocks(std::int64_t n) {
    if (n > 0) {
      b = (n + kTeamLanes - 1) / kTeamLanes;
      nb = (n + b - 1) / b;
    }
  }
};

// Block k of a scan from its carry: store(i, running value before or after value(i)).
PORTA_DETAIL_CALLS_KERNEL
template <bool Inclusive, class T, class Op, class V, class S>
PORTA_HOST_DEVICE void scan_block(const ScanBlocks& g, std::int64_t n, std::int64_t k, T carry, Op op, const V& value,
                                  const S& store) {
  const std::int64_t i1 = (k + 1) * g.b < n ? (k + 1) * g.b : n;
  T run = carry;
  for (std::int64_t i = k * g.b; i < i1; ++i) {
    const T x = static_cast<T>(value(i));
    if constexpr (Inclusive) {
      run = op(run, x);
      store(i, run);
    } else {
      store(i, i == 0 ? empty_value<T, Op>() : run);
      run = op(run, x);
    }
  }
}

PORTA_DETAIL_CALLS_KERNEL
template <class T, class Op, class V>
PORTA_HOST_DEVICE T scan_block_total(const ScanBlocks& g, std::int64_t n, std::int64_t k, Op op, const V& value) {
  const std::int64_t i1 = (k + 1) * g.b < n ? (k + 1) * g.b : n;
  T run = Op::template identity<T>();
  for (std::int64_t i = k * g.b; i < i1; ++i) run = op(run, static_cast<T>(value(i)));
  return run;
}

PORTA_DETAIL_CALLS_KERNEL
template <bool Inclusive, class T, class Op, class V, class S>
PORTA_HOST_DEVICE T team_scan_serial(std::int64_t n, Op op, const V& value, const S& store) {
  const ScanBlocks g(n);
  if (g.nb == 0) return empty_value<T, Op>();
  T w[kTeamLanes], v[kTeamLanes];
  for (std::int64_t k = 0; k < g.nb; ++k) w[k] = scan_block_total<T>(g, n, k, op, value);
  for (std::int64_t d = 1; d < g.nb; d *= 2) {
    for (std::int64_t k = 0; k < g.nb; ++k) v[k] = k >= d ? op(w[k - d], w[k]) : w[k];
    for (std::int64_t k = 0; k < g.nb; ++k) w[k] = v[k];
  }
  for (std::int64_t k = 0; k < g.nb; ++k)
    scan_block<Inclusive>(g, n, k, k == 0 ? Op::template identity<T>() : w[k - 1], op, value, store);
  return w[g.nb - 1];
}

#if PORTA_DEVICE_PASS
// The team's words for its reductions and scans: one static shared array for every type and call
// (static shared memory counts against the block's limit; the launch checks it with the scratch).
__device__ inline void* team_words() {
  __shared__ unsigned long long words[2 * kTeamLanes];
  return words;
}

PORTA_DETAIL_CALLS_KERNEL
template <class T, class Op, class F>
PORTA_HOST_DEVICE T team_reduce_device(const Team& t, std::int64_t n, Op op, const F& f) {
  T* acc = static_cast<T*>(team_words());
  const int members = t.size() * t.vector_length();
  const int me = t.rank() * t.vector_length() + t.lane();
  const int used = n < kTeamLanes ? static_cast<int>(n) : kTeamLanes;
  for (int l = me; l < used; l += members) {
    T a = Op::template identity<T>();
    for (std::int64_t i = l; i < n; i += kTeamLanes) a = op(a, static_cast<T>(f(i)));
    acc[l] = a;
  }
  __syncthreads();
  for (int s = kTeamLanes / 2; s >= 1; s /= 2) {
    if (s >= used) continue;  // n is the same in every member: all skip alike
    for (int l = me; l < s && l + s < used; l += members) acc[l] = op(acc[l], acc[l + s]);
    __syncthreads();
  }
  const T r = used > 0 ? acc[0] : empty_value<T, Op>();
  __syncthreads();  // before a later call writes acc again
  return r;
}

// A shuffle within the calling thread's group of `width` lanes, which may be part of a warp whose
// other threads went elsewhere.
template <class T>
__device__ T vector_shfl_down(T v, unsigned offset, int width) {
#if defined(__CUDA_ARCH__)
  const unsigned me = threadIdx.x + threadIdx.y * blockDim.x;
  const unsigned mask = width == 32 ? 0xffffffffu : ((1u << width) - 1) << (me & 31u & ~unsigned(width - 1));
  return __shfl_down_sync(mask, v, offset, width);
#else
  return __shfl_down(v, offset, width);
#endif
}
template <class T>
__device__ T vector_shfl_first(T v, int width) {
#if defined(__CUDA_ARCH__)
  const unsigned me = threadIdx.x + threadIdx.y * blockDim.x;
  const unsigned mask = width == 32 ? 0xffffffffu : ((1u << width) - 1) << (me & 31u & ~unsigned(width - 1));
  return __shfl_sync(mask, v, 0, width);
#else
  return __shfl(v, 0, width);
#endif
}

// Lane l of the 32 is vector lane l % VL's (l / VL)-th accumulator: the tree's steps s >= VL stay in
// one thread's registers, the steps s < VL are shuffles.
PORTA_DETAIL_CALLS_KERNEL
template <int VL, class T, class Op, class F>
PORTA_HOST_DEVICE T vector_reduce_device(int lane, std::int64_t n, Op op, const F& f) {
  constexpr int M = kVectorLanes / VL;
  T a[M];
#pragma unroll
  for (int j = 0; j < M; ++j) a[j] = Op::template identity<T>();
  for (std::int64_t base = 0; base < n; base += kVectorLanes) {
#pragma unroll
    for (int j = 0; j < M; ++j) {
      const std::int64_t i = base + lane + j * VL;
      if (i < n) a[j] = op(a[j], static_cast<T>(f(i)));
    }
  }
#pragma unroll
  for (int m = M / 2; m >= 1; m /= 2)
#pragma unroll
    for (int j = 0; j < m; ++j) a[j] = op(a[j], a[j + m]);
  T r = a[0];
#pragma unroll
  for (int s = VL / 2; s >= 1; s /= 2) {
    const T o = vector_shfl_down(r, static_cast<unsigned>(s), VL);
    if (lane < s) r = op(r, o);
  }
  return vector_shfl_first(r, VL);
}

PORTA_DETAIL_CALLS_KERNEL
template <bool Inclusive, class T, class Op, class V, class S>
PORTA_HOST_DEVICE T team_scan_device(const Team& t, std::int64_t n, Op op, const V& value, const S& store) {
  const ScanBlocks g(n);
  if (g.nb == 0) return empty_value<T, Op>();
  T* w = static_cast<T*>(team_words());
  T* v = w + kTeamLanes;
  const int members = t.size() * t.vector_length();
  const int me = t.rank() * t.vector_length() + t.lane();
  for (std::int64_t k = me; k < g.nb; k += members) w[k] = scan_block_total<T>(g, n, k, op, value);
  __syncthreads();
  for (std::int64_t d = 1; d < g.nb; d *= 2) {
    for (std::int64_t k = me; k < g.nb; k += members) v[k] = k >= d ? op(w[k - d], w[k]) : w[k];
    __syncthreads();
    T* x = w;
    w = v;
    v = x;
  }
  for (std::int64_t k = me; k < g.nb; k += members)
    scan_block<Inclusive>(g, n, k, k == 0 ? Op::template identity<T>() : w[k - 1], op, value, store);
  const T total = w[g.nb - 1];
  __syncthreads();
  return total;
}
#endif

template <class Op>
inline constexpr bool team_op_v =
    std::is_same_v<Op, SumOp> || std::is_same_v<Op, ProdOp> || std::is_same_v<Op, MaxOp> || std::is_same_v<Op, MinOp>;
template <class Op>
inline constexpr bool scan_op_v = std::is_same_v<Op, SumOp> || std::is_same_v<Op, MaxOp>;

PORTA_DETAIL_CALLS_KERNEL
template <bool Inclusive, class R, class Op, class V, class S>
PORTA_HOST_DEVICE auto team_scan(const Team& t, std::int64_t n, Op op, const V& value, const S& store) {
  static_assert(scan_op_v<Op>, "porta::team_*_scan: op is porta::plus or porta::maximum_op");
  using T = team_value_t<R, V>;
#if PORTA_DEVICE_PASS
  return canonical_nan(team_scan_device<Inclusive, T>(t, n, op, value, store));
#else
  (void)t;
  return canonical_nan(team_scan_serial<Inclusive, T>(n, op, value, store));
#endif
}

}  // namespace detail

// op-reduction of f(i), i in [0, n), over the whole team; every member calls it and gets the result.
PORTA_DETAIL_CALLS_KERNEL
template <class R = detail::Deduce, class Op, class F>
PORTA_HOST_DEVICE auto team_reduce(const Team& t, std::int64_t n, Op op, const F& f) {
  static_assert(detail::team_op_v<Op>, "porta::team_reduce: op is porta::plus, multiplies, maximum_op or minimum_op");
  using T = detail::team_value_t<R, F>;
#if PORTA_DEVICE_PASS
  return detail::canonical_nan(detail::team_reduce_device<T>(t, n, op, f));
#else
  (void)t;
  return detail::canonical_nan(detail::lanes_reduce_serial<detail::kTeamLanes, T>(n, op, f));
#endif
}

// op-reduction of f(i), i in [0, n), over the calling thread's vector lanes; each lane gets it.
PORTA_DETAIL_CALLS_KERNEL
template <class R = detail::Deduce, class Op, class F>
PORTA_HOST_DEVICE auto vector_reduce(const Team& t, std::int64_t n, Op op, const F& f) {
  static_assert(detail::team_op_v<Op>, "porta::vector_reduce: op is porta::plus, multiplies, maximum_op or minimum_op");
  using T = detail::team_value_t<R, F>;
#if PORTA_DEVICE_PASS
  T r;
  switch (t.vector_length()) {
    case 1:
      r = detail::vector_reduce_device<1, T>(t.lane(), n, op, f);
      break;
    case 2:
      r = detail::vector_reduce_device<2, T>(t.lane(), n, op, f);
      break;
    case 4:
      r = detail::vector_reduce_device<4, T>(t.lane(), n, op, f);
      break;
    case 8:
      r = detail::vector_reduce_device<8, T>(t.lane(), n, op, f);
      break;
    case 16:
      r = detail::vector_reduce_device<16, T>(t.lane(), n, op, f);
      break;
    default:
      r = detail::vector_reduce_device<32, T>(t.lane(), n, op, f);
      break;
  }
  return detail::canonical_nan(r);
#else
  (void)t;
  return detail::canonical_nan(detail::lanes_reduce_serial<detail::kVectorLanes, T>(n, op, f));
#endif
}

// Scans of value(i), i in [0, n), over the whole team: store(i, prefix) for every i (on some
// member), the total returned to every member. plus unless an op is given.
PORTA_DETAIL_CALLS_KERNEL
template <class R = detail::Deduce, class Op, class V, class S>
PORTA_HOST_DEVICE auto team_exclusive_scan(const Team& t, std::int64_t n, Op op, const V& value, const S& store) {
  return detail::team_scan<false, R>(t, n, op, value, store);
}
PORTA_DETAIL_CALLS_KERNEL
template <class R = detail::Deduce, class V, class S>
PORTA_HOST_DEVICE auto team_exclusive_scan(const Team& t, std::int64_t n, const V& value, const S& store) {
  return detail::team_scan<false, R>(t, n, plus{}, value, store);
}
PORTA_DETAIL_CALLS_KERNEL
template <class R = detail::Deduce, class Op, class V, class S>
PORTA_HOST_DEVICE auto team_inclusive_scan(const Team& t, std::int64_t n, Op op, const V& value, const S& store) {
  return detail::team_scan<true, R>(t, n, op, value, store);
}
PORTA_DETAIL_CALLS_KERNEL
template <class R = detail::Deduce, class V, class S>
PORTA_HOST_DEVICE auto team_inclusive_scan(const Team& t, std::int64_t n, const V& value, const S& store) {
  return detail::team_scan<true, R>(t, n, plus{}, value, store);
}

// *p += v for p in this team's scratch, atomic among the team's members; returns the old value.
PORTA_DETAIL_CALLS_KERNEL
template <class T>
PORTA_HOST_DEVICE T team_atomic_add(const Team& t, T* p, detail::atomic_value_t<T> v) {
  (void)t;
#if PORTA_DEVICE_PASS
  return atomic_add(p, v);
#else
  const T old = *p;
  *p = static_cast<T>(old + v);
  // team_for, vector_for and thread_vector_for tell the compiler their iterations are independent; these are not
  // (two may add to one bin): the empty asm keeps the loop scalar, so each add sees the last.
  __asm__ volatile("" ::: "memory");
  return old;
#endif
}

// ---- the launch -------------------------------------------------------------------------------

namespace detail {

// A CPU thread's scratch: grown to the largest a launch asked for, kept for the next (it stays in
// the thread's cache between teams), 64-byte aligned.
inline unsigned char* cpu_team_scratch(std::size_t bytes) {
  struct Buffer {
    unsigned char* p = nullptr;
    std::size_t size = 0;
    ~Buffer() { std::free(p); }
  };
  thread_local Buffer buf;
  if (bytes > buf.size) {
    std::free(buf.p);
    buf.p = nullptr;
    buf.size = 0;
    void* q = std::aligned_alloc(64, (bytes + 63) & ~std::size_t(63));
    if (q == nullptr) throw std::bad_alloc();
    buf.p = static_cast<unsigned char*>(q);
    buf.size = bytes;
  }
  return buf.p;
}

template <bool Poison, class F>
PORTA_DETAIL_NOINLINE void cpu_team_task(const F& f, std::int64_t b, std::int64_t e, std::int64_t league,
                                         std::size_t bytes) {
  TaskKernel<F> k = f;
  unsigned char* mem = cpu_team_scratch(bytes);
  for (std::int64_t l = b; l < e; ++l) {
    if constexpr (Poison) {
      for (std::size_t i = 0; i < bytes; ++i) mem[i] = 0xff;
    }
    const Team t(TeamState{l, league, 0, 1, 0, 1, mem, bytes});
    k(t);
  }
}

template <bool Poison, class F>
void cpu_teams(const Teams& p, const F& f) {
  const std::int64_t league = p.league();
  const std::size_t bytes = p.scratch_bytes();
  cpu_for_blocks(league, 0, [&f, league, bytes](std::int64_t b, std::int64_t e) {
    cpu_team_task<Poison>(f, b, e, league, bytes);
  });
}

}  // namespace detail
}  // namespace porta

#if PORTA_GPU_COMPILER
#include "porta/detail/gpu/teams.cuh"
#endif

namespace porta {

// f(team) for every member of every team of `p`, on `device`; asynchronous on GPU streams. `name`
// (optional, first) is what profiling tools and kernel errors call the launch.
template <class F>
void parallel_for(std::string_view name, Device device, const Teams& p, F f, const Stream& stream = Stream()) {
  constexpr const char* fn = "porta::parallel_for";
  PORTA_DETAIL_CHECK_KERNEL(F);
  static_assert(std::is_invocable_v<const F&, const Team&>,
                "porta::parallel_for: a team kernel takes the team: PORTA_KERNEL((const porta::Team& t) { ... })");
  detail::check_stream_device(stream, device, fn);
  detail::check_device(device, fn);
  const detail::LaunchName lname(name, f);
  const detail::LaunchTrace trace(detail::tools::Kind::parallel_for, lname, device, stream);
  if (device.type == DeviceType::cpu) {
    if (p.league() == 0) return;
    const auto& h = detail::host_part(f);
    if (device.host_accessible()) {
      detail::run_named(fn, lname, device, [&] { detail::cpu_teams<false>(p, h); });
    } else {  // cpu:strict: queued like a GPU launch, scratch poisoned (docs/strict.md)
      detail::strict_enqueue(static_cast<porta_stream>(stream.native_handle()),
                             detail::strict_named_task(device, lname, [p, h] { detail::cpu_teams<true>(p, h); }), fn);
    }
    return;
  }
#if PORTA_GPU_COMPILER
  detail::gpu_user::teams(device, p, detail::device_part(f), stream.native_handle(), fn, lname.c_str());
#else
  detail::throw_not_gpu_tu(fn, device);
#endif
}
template <class F>
void parallel_for(Device device, const Teams& p, F f, const Stream& stream = Stream()) {
  parallel_for(std::string_view(), device, p, f, stream);
}

}  // namespace porta

#if defined(__clang__)
#pragma clang diagnostic pop
#endif
