// SPDX-License-Identifier: Apache-2.0
// User kernels: your own loops and reductions, written once, run on every device.
//
//   #include <porta/kernels.hpp>
//   auto xv = x.view();  auto yv = y.view();              // trivially copyable windows
//   porta::parallel_for(dev, n, PORTA_KERNEL((std::int64_t i) { yv[i] = 2 * xv[i] + yv[i]; }));
//   porta::parallel_for(dev, porta::Range<2>({1, 1}, {ny - 1, nx - 1}),   // a stencil's interior
//                       PORTA_KERNEL((std::int64_t i, std::int64_t j) {
//                         un(i, j) = 0.25f * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1));
//                       }));
//   porta::map(out, PORTA_KERNEL((float a, float b) { return a * b; }), x, y);
//   double ss = porta::transform_reduce(dev, n, 0.0, porta::plus{},
//                                       PORTA_KERNEL((std::int64_t i) { return double(xv[i]) * xv[i]; }));
//
// Every translation unit runs them on the CPU (OpenMP when the build has it). A translation unit
// compiled as CUDA (nvcc; CMake: porta_add_kernels()) also runs them on CUDA devices, one compiled
// as HIP on HIP devices. Asking a plain C++ translation unit to launch on a GPU is an Unavailable
// error that names the fix.
//
// A kernel is a lambda (PORTA_KERNEL, or the prefix form PORTA_LAMBDA) or a functor (a struct with a
// const PORTA_HOST_DEVICE operator()); either must be trivially copyable: capture Views, pointers and
// numbers by value, never an Array or a std::vector (a compile-time error says so). PORTA_KERNEL and
// functors run at a plain loop's speed on the CPU from every compiler; in a file that nvcc compiles,
// nvcc calls the host side of a PORTA_LAMBDA through a function pointer per index, which stops
// inlining and vectorisation, and warns there. See docs/guide.md, "User kernels".
//
// On the CPU, parallel_for splits the range over the OpenMP team when the work is worth it,
// measured, not counted (porta/detail/cpu_parallel.hpp; Range::grain overrides). A kernel that
// throws on the CPU: the exception reaches the caller of parallel_for / transform_reduce / map (the
// first one, if several threads throw); indices not yet run by the throwing thread stay unrun.
// GPU kernels cannot throw.
//
// transform_reduce follows the canonical order of the built-in reductions (docs/determinism.md):
// run to run deterministic on each backend and any thread count, and bit-identical across backends
// when f itself is (vendor math libraries differ in the last bits of sin, exp, ...).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "porta/array.hpp"
#include "porta/atomic.hpp"
#include "porta/debug.hpp"
#include "porta/detail/config.hpp"
#include "porta/detail/cpu_parallel.hpp"
#include "porta/detail/layout.hpp"
#include "porta/detail/ops.hpp"
#include "porta/detail/reduce_order.hpp"
#include "porta/detail/strict.hpp"
#include "porta/detail/tools.hpp"
#include "porta/error.hpp"
#include "porta/range.hpp"
#include "porta/stream.hpp"

#if PORTA_GPU_COMPILER
#include "porta/detail/gpu/user_kernels.cuh"
#endif

// A lambda that captures by value and runs on the host and the device. Capture Views (x.view()),
// never Arrays.
//
// In a file nvcc compiles, its CPU side is nvcc's wrapper, called through a function pointer per
// index (2-6x slower than the loop; docs/guide.md, "User kernels"), and every kernel may run on the
// CPU when no GPU is there. So nvcc's host pass warns at each use, at the user's line (a pragma in
// the expansion, which also reaches files included as system headers, where a deprecation warning
// inside porta's templates would be silenced), naming the form that is fast there. A file that
// means its PORTA_LAMBDAs for GPUs only defines PORTA_NO_LAMBDA_WARNING before including porta.
#if PORTA_GPU_COMPILER
#if defined(__NVCC__) && !defined(__CUDA_ARCH__) && defined(__GNUC__) && !defined(PORTA_NO_LAMBDA_WARNING)
// (_Pragma takes one string literal: the message cannot be split over lines.)
// clang-format off
#define PORTA_LAMBDA _Pragma("GCC warning \"porta: PORTA_LAMBDA runs 2-6x slower on the CPU in a file nvcc compiles: write PORTA_KERNEL((params) { body }) or a functor (docs/guide.md, User kernels), or define PORTA_NO_LAMBDA_WARNING if this kernel never runs on the CPU\"") [=] __host__ __device__
// clang-format on
#else
#define PORTA_LAMBDA [=] __host__ __device__
#endif
#else
#define PORTA_LAMBDA [=]
#endif

// The same lambda with the whole of it as the argument, parameters and body:
//   PORTA_KERNEL((std::int64_t i) { yv[i] = 2 * xv[i] + yv[i]; })
// As fast on the CPU from a file that nvcc compiles as from plain C++. nvcc turns the host side of
// an extended __host__ __device__ lambda into a wrapper that calls the body through a function
// pointer per index (no compiler can inline or vectorise that); having the text of the body, this
// macro makes two lambdas of it there: the extended one, which GPU launches take, and a plain host
// lambda, which the CPU loops call and inline. Elsewhere it is PORTA_LAMBDA's single lambda. The
// body is a macro argument, so it cannot hold preprocessor directives.
#if defined(__NVCC__)
#define PORTA_KERNEL(...) ::porta::detail::dual_kernel([=] __VA_ARGS__, [=] __host__ __device__ __VA_ARGS__)
#elif PORTA_GPU_COMPILER
#define PORTA_KERNEL(...) [=] __host__ __device__ __VA_ARGS__
#else
#define PORTA_KERNEL(...) [=] __VA_ARGS__
#endif

namespace porta {

// Reduction operators for transform_reduce, with the identities that the canonical order pads with.
using plus = detail::SumOp;
using multiplies = detail::ProdOp;
using maximum_op = detail::MaxOp;
using minimum_op = detail::MinOp;

namespace detail {

// PORTA_KERNEL under nvcc: `host`, a plain lambda, for every CPU path; `device`, the extended
// __host__ __device__ lambda of the same text, for GPU launches (a __global__ template may not be
// instantiated with a host lambda's type, so the pair itself never reaches one).
template <class H, class D>
struct DualKernel {
  H host;
  D device;
  template <class... A>
  PORTA_HOST_DEVICE auto operator()(A&&... a) const -> decltype(host(std::forward<A>(a)...)) {
#if PORTA_DEVICE_PASS
    return device(std::forward<A>(a)...);
#else
    return host(std::forward<A>(a)...);
#endif
  }
};
template <class H, class D>
DualKernel<H, D> dual_kernel(H h, D d) {
  return {h, d};
}
template <class F>
const F& host_part(const F& f) {
  return f;
}
template <class H, class D>
const H& host_part(const DualKernel<H, D>& f) {
  return f.host;
}
template <class F>
const F& device_part(const F& f) {
  return f;
}
template <class H, class D>
const D& device_part(const DualKernel<H, D>& f) {
  return f.device;
}
[[noreturn]] inline void throw_not_gpu_tu(const char* fn, Device device) {
  throw Unavailable(std::string(fn) + ": cannot launch a user kernel on " + device.to_string() +
                    " from a translation unit compiled as plain C++; compile it as " +
                    (device.type == DeviceType::hip ? "HIP" : "CUDA") +
                    " (CMake: porta_add_kernels(<target> SOURCES <file>), or set_source_files_properties(<file> "
                    "PROPERTIES LANGUAGE " +
                    (device.type == DeviceType::hip ? "HIP" : "CUDA") + "))");
}

// What a launch without a name is reported as: the kernel's type as the compiler spells it
// (Kokkos reports typeid's name), from __PRETTY_FUNCTION__, whose text GCC, clang and nvcc agree on
// up to the brackets: "... [with F = T; ...]" or "... [F = T]".
template <class F>
std::string kernel_type_name() {
#if defined(__GNUC__) || defined(__clang__)
  const std::string_view p = __PRETTY_FUNCTION__;
  const std::size_t at = p.find("F = ");
  if (at != std::string_view::npos) {
    const std::size_t from = at + 4;
    std::size_t to = p.find("; ", from);
    if (to == std::string_view::npos) to = p.rfind(']');
    if (to != std::string_view::npos && to > from) return std::string(p.substr(from, to - from));
  }
#endif
  return "porta kernel";
}
template <class F>
struct KernelTypeName {
  static std::string get() { return kernel_type_name<F>(); }
};
template <class H, class D>
struct KernelTypeName<DualKernel<H, D>> {
  static std::string get() { return kernel_type_name<H>(); }
};
// Built once per kernel type: afterwards a launch pays a static's guard check for its default name.
template <class F>
const char* default_kernel_name() {
  static const std::string name = KernelTypeName<F>::get();
  return name.c_str();
}

// A launch's name as a C string that stays valid for the process's life (a GPU launch leaves it
// with the device for a later error): the given one, interned, or the kernel type's.
class LaunchName {
 public:
  template <class F>
  LaunchName(std::string_view name, const F&) noexcept
      : p_(name.empty() ? default_kernel_name<F>() : stable_name(name)) {}
  LaunchName(const LaunchName&) = delete;
  LaunchName& operator=(const LaunchName&) = delete;
  const char* c_str() const noexcept { return p_; }

 private:
  const char* p_;
};

// A launch as a profiling tool sees it: begin when made, end (after the stream's work is done)
// when it goes, also when the launch throws. With no tool loaded it is one flag load.
class LaunchTrace {
 public:
  LaunchTrace(tools::Kind kind, const LaunchName& name, Device device, const Stream& stream) noexcept {
    if (tools::active()) begin(kind, name.c_str(), device, stream);
  }
  LaunchTrace(const LaunchTrace&) = delete;
  LaunchTrace& operator=(const LaunchTrace&) = delete;
  ~LaunchTrace() {
    if (on_) tools::end_kernel(kind_, id_, device_, stream_);
  }

 private:
  PORTA_DETAIL_NOINLINE void begin(tools::Kind kind, const char* name, Device device, const Stream& stream) noexcept {
    kind_ = kind;
    device_ = device;
    stream_ = static_cast<porta_stream>(stream.native_handle());
    id_ = tools::begin_kernel(kind, name, device, stream_);
    on_ = true;
  }
  bool on_ = false;
  tools::Kind kind_ = tools::Kind::parallel_for;
  std::uint64_t id_ = 0;
  Device device_{};
  porta_stream stream_ = nullptr;
};

// body() on the host, a kernel's fault (porta/debug.hpp) coming out with the launch's name.
template <class Body>
void run_named(const char* fn, const LaunchName& name, Device device, const Body& body) {
  try {
    body();
  } catch (const KernelFault& e) {
    name_fault(e, fn, name.c_str(), device);
  }
}
// The same as a task of cpu:strict's queue, which runs at a later wait: that wait raises the fault.
template <class Body>
StrictTask strict_named_task(Device device, const LaunchName& name, Body body) {
  return strict_task([device, n = std::string(name.c_str()), body] {
    try {
      body();
    } catch (const KernelFault& e) {
      defer_fault(device, e, n.c_str());
    }
  });
}

inline void check_stream_device(const Stream& stream, Device device, const char* fn) {
  if (stream.has_device() && stream.device() != device)
    throw DeviceMismatch(std::string(fn) + ": stream is on " + stream.device().to_string() + ", the work on " +
                         device.to_string());
}

// The device must exist (cpu:1 does not): the same Unavailable every other call gives, and a
// device type porta does not know (a cast integer) is an InvalidArgument; both name the call.
inline void check_device(Device device, const char* fn) {
  const auto named = [fn](const char* what) {
    const std::string w(what);
    return std::string(fn) + ": " + (w.rfind("porta: ", 0) == 0 ? w.substr(7) : w);
  };
  try {
    (void)backend_for(device);
  } catch (const Unavailable& e) {
    throw Unavailable(named(e.what()));
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(named(e.what()));
  }
}

// A kernel travels to the GPU by value, byte for byte, so it must be trivially copyable; an owning
// capture (Array, HostArray, std::vector, std::string) is the usual mistake and would copy host
// memory, or fail, on a GPU. nvcc's host pass sees its own wrapper for __host__ __device__ lambdas,
// which is never trivially copyable: the device pass checks the real closure there.
template <class F>
inline constexpr bool kernel_copyable_v =
#if defined(__NVCC__) && defined(__CUDACC_EXTENDED_LAMBDA__) && !defined(__CUDA_ARCH__)
    __nv_is_extended_host_device_lambda_closure_type(F) || std::is_trivially_copyable_v<F>;
#else
    std::is_trivially_copyable_v<F>;
#endif

// The pair of PORTA_KERNEL: its host lambda has the captures of both, as the compiler sees them.
template <class H, class D>
inline constexpr bool kernel_copyable_v<DualKernel<H, D>> = std::is_trivially_copyable_v<H>;

#define PORTA_DETAIL_CHECK_KERNEL(F)                                                                             \
  static_assert(::porta::detail::kernel_copyable_v<F>,                                                           \
                "porta: a kernel must be trivially copyable: capture porta::View (x.view()), pointers and "      \
                "numbers by value (PORTA_LAMBDA or [=]), never a porta::Array, HostArray, std::vector or other " \
                "owning object; a functor's members likewise")

// f's result for the indices of a Range<Rank>: f(i), f(i, j) or f(i, j, k).
template <class F, int Rank>
struct kernel_result;
template <class F>
struct kernel_result<F, 1> {
  using type = std::decay_t<std::invoke_result_t<const F&, std::int64_t>>;
};
template <class F>
struct kernel_result<F, 2> {
  using type = std::decay_t<std::invoke_result_t<const F&, std::int64_t, std::int64_t>>;
};
template <class F>
struct kernel_result<F, 3> {
  using type = std::decay_t<std::invoke_result_t<const F&, std::int64_t, std::int64_t, std::int64_t>>;
};

template <class F, int Rank>
inline constexpr bool kernel_invocable_v = (Rank == 1 && std::is_invocable_v<const F&, std::int64_t>) ||
                                           (Rank == 2 && std::is_invocable_v<const F&, std::int64_t, std::int64_t>) ||
                                           (Rank == 3 &&
                                            std::is_invocable_v<const F&, std::int64_t, std::int64_t, std::int64_t>);

// The element type a reduction of values of type U accumulates in: U itself for porta's four
// types, the signed type of the same size for other integers (bool and short count in int32).
template <class U>
constexpr auto reduce_type_of() {
  if constexpr (std::is_same_v<U, float> || std::is_same_v<U, double>) {
    return U{};
  } else if constexpr (std::is_integral_v<U> && sizeof(U) <= 4 && (std::is_signed_v<U> || sizeof(U) < 4)) {
    return std::int32_t{};
  } else if constexpr (std::is_integral_v<U> && (std::is_signed_v<U> ? sizeof(U) == 8 : sizeof(U) == 4)) {
    return std::int64_t{};
  } else {
    static_assert(sizeof(U) == 0,
                  "porta::transform_reduce: f must return float, double or a signed integer (or name the result "
                  "type: porta::transform_reduce<double>(...))");
    return 0;
  }
}

struct Deduce {};  // transform_reduce<R>'s default: R from f's return type

template <class R, class F, int Rank>
using reduce_result_t =
    std::conditional_t<std::is_same_v<R, Deduce>, decltype(reduce_type_of<typename kernel_result<F, Rank>::type>()), R>;

// The CPU loops of a Range. Each task runs a copy of the kernel (as Kokkos copies functors per
// thread): its captured Views and numbers are then the task's own locals, which the compiler keeps
// in registers, instead of memory behind a reference that every store through a View of the same
// type might change (a float store can alias a captured float, and any store anything under
// -fno-strict-aliasing); then the innermost loop vectorises as a hand-written loop nest does,
// without a run-time overlap check against the kernel object. nvcc's host wrappers of
// __host__ __device__ lambdas are not trivially copyable (a copy allocates), and a kernel larger
// than a GPU launch's 4 KiB of parameters is a CPU-only table better left where it is (each task's
// copy would be on its thread's stack): those are used in place.
template <class F>
using TaskKernel = std::conditional_t<std::is_trivially_copyable_v<F> && sizeof(F) <= 4096, const F, const F&>;

// A task's loops are functions of their own, not inlined into cpu_for_blocks (which calls a task
// from three places: probe, serial and parallel): one copy of the kernel's loop per path, and the
// register allocator sees only that loop nest (beside the general tile walk, the line loops of a
// 2-D stencil spilled two pointers inside the vector loop with AVX2).
template <class F>
PORTA_DETAIL_NOINLINE void cpu_task(const F& f, std::int64_t i0, std::int64_t i1) {
  TaskKernel<F> k = f;
  for (std::int64_t i = i0; i < i1; ++i) k(i);
}

template <class F>
void cpu_parallel_for(const Range<1>& r, const F& f) {
  const std::int64_t lo = r.begin(0);
  cpu_for_blocks(r.extent(0), r.grain(), [&f, lo](std::int64_t b, std::int64_t e) { cpu_task(f, lo + b, lo + e); });
}

// Ranks 2 and 3 are split into tiles: whole lines along the last dimension (rows of a 2-D range)
// unless Range::tile says otherwise. A task takes consecutive tiles in row-major order and runs
// the last dimension as its innermost loop. Lines, the default, have a loop nest of their own, the
// shape of a hand-written one: the general tile walk keeps more values live across the innermost
// loop, which spilled registers and doubled the setup of each line of a 3-D stencil.
template <int Rank>
struct CpuTiles {
  std::int64_t lo[Rank], hi[Rank], t[Rank], count[Rank];
  std::int64_t tiles = 1, points = 1;  // tiles in the range; index points per tile
  bool lines = true;                   // every tile is one whole line along the last dimension

  explicit CpuTiles(const Range<Rank>& r) {
    for (int d = 0; d < Rank; ++d) {
      lo[d] = r.begin(d);
      hi[d] = r.end(d);
      const std::int64_t e = r.extent(d);
      t[d] = r.tile_extent(d) > 0 ? (r.tile_extent(d) < e ? r.tile_extent(d) : e) : (d == Rank - 1 ? e : 1);
      count[d] = (e + t[d] - 1) / t[d];
      tiles *= count[d];
      points *= t[d];
      if (t[d] != (d == Rank - 1 ? e : 1)) lines = false;
    }
  }
  std::int64_t grain_tiles(std::int64_t grain) const { return grain > 0 ? (grain + points - 1) / points : 0; }
};

// Lines b .. e - 1 of a 2-D range: rows.
template <class F>
PORTA_DETAIL_NOINLINE void cpu_task_lines(const F& f, const CpuTiles<2>& g, std::int64_t b, std::int64_t e) {
  TaskKernel<F> k = f;
  const std::int64_t i1 = g.lo[0] + e, j0 = g.lo[1], j1 = g.hi[1];
  for (std::int64_t i = g.lo[0] + b; i < i1; ++i)
    for (std::int64_t j = j0; j < j1; ++j) k(i, j);
}

// Lines b .. e - 1 of a 3-D range: (i, j) from (ib, jb) up to, not including, (ie, je).
template <class F>
PORTA_DETAIL_NOINLINE void cpu_task_lines(const F& f, const CpuTiles<3>& g, std::int64_t b, std::int64_t e) {
  TaskKernel<F> k = f;
  const std::int64_t n1 = g.count[1], l0 = g.lo[2], l1 = g.hi[2];
  const std::int64_t ib = g.lo[0] + b / n1, jb = g.lo[1] + b % n1;
  const std::int64_t ie = g.lo[0] + e / n1, je = g.lo[1] + e % n1;
  for (std::int64_t i = ib; i <= ie; ++i) {
    const std::int64_t j1 = i == ie ? je : g.hi[1];
    for (std::int64_t j = i == ib ? jb : g.lo[1]; j < j1; ++j)
      for (std::int64_t l = l0; l < l1; ++l) k(i, j, l);
  }
}

// Tiles b .. e - 1 of a 2-D range, from one division for the first.
template <class F>
PORTA_DETAIL_NOINLINE void cpu_task_tiles(const F& f, const CpuTiles<2>& g, std::int64_t b, std::int64_t e) {
  TaskKernel<F> k = f;
  std::int64_t c1 = b % g.count[1];
  std::int64_t i0 = g.lo[0] + (b / g.count[1]) * g.t[0];
  for (std::int64_t u = b; u < e; ++u) {
    const std::int64_t j0 = g.lo[1] + c1 * g.t[1];
    const std::int64_t i1 = i0 + g.t[0] < g.hi[0] ? i0 + g.t[0] : g.hi[0];
    const std::int64_t j1 = j0 + g.t[1] < g.hi[1] ? j0 + g.t[1] : g.hi[1];
    for (std::int64_t i = i0; i < i1; ++i)
      for (std::int64_t j = j0; j < j1; ++j) k(i, j);
    if (++c1 == g.count[1]) {
      c1 = 0;
      i0 += g.t[0];
    }
  }
}

template <class F>
PORTA_DETAIL_NOINLINE void cpu_task_tiles(const F& f, const CpuTiles<3>& g, std::int64_t b, std::int64_t e) {
  TaskKernel<F> k = f;
  std::int64_t c2 = b % g.count[2];
  std::int64_t c1 = b / g.count[2] % g.count[1];
  std::int64_t i0 = g.lo[0] + (b / g.count[2] / g.count[1]) * g.t[0];
  for (std::int64_t u = b; u < e; ++u) {
    const std::int64_t j0 = g.lo[1] + c1 * g.t[1];
    const std::int64_t l0 = g.lo[2] + c2 * g.t[2];
    const std::int64_t i1 = i0 + g.t[0] < g.hi[0] ? i0 + g.t[0] : g.hi[0];
    const std::int64_t j1 = j0 + g.t[1] < g.hi[1] ? j0 + g.t[1] : g.hi[1];
    const std::int64_t l1 = l0 + g.t[2] < g.hi[2] ? l0 + g.t[2] : g.hi[2];
    for (std::int64_t i = i0; i < i1; ++i)
      for (std::int64_t j = j0; j < j1; ++j)
        for (std::int64_t l = l0; l < l1; ++l) k(i, j, l);
    if (++c2 == g.count[2]) {
      c2 = 0;
      if (++c1 == g.count[1]) {
        c1 = 0;
        i0 += g.t[0];
      }
    }
  }
}

template <int Rank, class F>
void cpu_parallel_for(const Range<Rank>& r, const F& f) {
  static_assert(Rank == 2 || Rank == 3, "rank 1 has its own overload");
  const CpuTiles<Rank> g(r);
  cpu_for_blocks(g.tiles, g.grain_tiles(r.grain()), [&f, &g](std::int64_t b, std::int64_t e) {
    if (g.lines) {
      cpu_task_lines(f, g, b, e);
    } else {
      cpu_task_tiles(f, g, b, e);
    }
  });
}

// f at the linear (row-major) index k of a range: the order transform_reduce reduces in.
template <class F, int Rank>
struct LinearIndexLoad;
template <class F>
struct LinearIndexLoad<F, 1> {
  F f;
  std::int64_t lo0;
  PORTA_HOST_DEVICE auto operator()(std::int64_t k) const { return f(lo0 + k); }
};
template <class F>
struct LinearIndexLoad<F, 2> {
  F f;
  std::int64_t lo0, lo1, n1;
  PORTA_HOST_DEVICE auto operator()(std::int64_t k) const { return f(lo0 + k / n1, lo1 + k % n1); }
};
template <class F>
struct LinearIndexLoad<F, 3> {
  F f;
  std::int64_t lo0, lo1, lo2, n1, n2;
  PORTA_HOST_DEVICE auto operator()(std::int64_t k) const {
    return f(lo0 + k / (n1 * n2), lo1 + k / n2 % n1, lo2 + k % n2);
  }
};
template <class F>
LinearIndexLoad<F, 1> linear_load(const Range<1>& r, const F& f) {
  return {f, r.begin(0)};
}
template <class F>
LinearIndexLoad<F, 2> linear_load(const Range<2>& r, const F& f) {
  return {f, r.begin(0), r.begin(1), r.extent(1)};
}
template <class F>
LinearIndexLoad<F, 3> linear_load(const Range<3>& r, const F& f) {
  return {f, r.begin(0), r.begin(1), r.begin(2), r.extent(1), r.extent(2)};
}

// static_cast<T>(load(k)) for the CPU reduction.
template <class T, class Load>
struct CastLoad {
  const Load* load;
  T operator()(std::int64_t k) const { return static_cast<T>((*load)(k)); }
};

class LaunchName;
template <class T, class F, class... In>
void map_pointers(const Stream& stream, Device dev, std::int64_t n, T* o, const F& f, const LaunchName& name,
                  const In*... p);
template <class T, class F, class... In>
void map_views(const Stream& stream, Array<T>& out, bool out_direct, const F& f, const LaunchName& name,
               const Array<In>&... in);

}  // namespace detail

// f(i[, j[, k]]) for every index of `range`, in parallel, on `device`; asynchronous on GPU streams.
// `name` (optional, first, as in Kokkos) is what profiling tools, NVTX ranges and kernel errors call
// the launch; without one they use the kernel's type.
//   porta::parallel_for("jacobi", dev, porta::Range<2>({1, 1}, {ny - 1, nx - 1}), kernel);
template <int Rank, class F>
void parallel_for(std::string_view name, Device device, const Range<Rank>& range, F f,
                  const Stream& stream = Stream()) {
  constexpr const char* fn = "porta::parallel_for";
  PORTA_DETAIL_CHECK_KERNEL(F);
  static_assert(detail::kernel_invocable_v<F, Rank>,
                "porta::parallel_for: the kernel must take one std::int64_t index per dimension of the range: "
                "f(i) for porta::range(n), f(i, j) for range(n0, n1), f(i, j, k) for range(n0, n1, n2)");
  detail::check_stream_device(stream, device, fn);
  detail::check_device(device, fn);
  const detail::LaunchName lname(name, f);
  const detail::LaunchTrace trace(detail::tools::Kind::parallel_for, lname, device, stream);
  if (device.type == DeviceType::cpu) {
    if (range.size() == 0) return;
    const auto& h = detail::host_part(f);
    if (device.host_accessible()) {
      detail::run_named(fn, lname, device, [&] { detail::cpu_parallel_for(range, h); });
    } else {  // cpu:strict: queued like a GPU launch (docs/strict.md)
      detail::strict_enqueue(
          static_cast<porta_stream>(stream.native_handle()),
          detail::strict_named_task(device, lname, [range, h] { detail::cpu_parallel_for(range, h); }), fn);
    }
    return;
  }
#if PORTA_GPU_COMPILER
  detail::gpu_user::parallel_for(device, range, detail::device_part(f), stream.native_handle(), fn, lname.c_str());
#else
  detail::throw_not_gpu_tu(fn, device);
#endif
}

template <int Rank, class F>
void parallel_for(Device device, const Range<Rank>& range, F f, const Stream& stream = Stream()) {
  parallel_for(std::string_view(), device, range, f, stream);
}

// f(i) for i in [0, n), in parallel, on `device`.
template <class F>
void parallel_for(std::string_view name, Device device, std::int64_t n, F f, const Stream& stream = Stream()) {
  if (n < 0) detail::throw_invalid("porta::parallel_for", ("n is negative (" + std::to_string(n) + ")").c_str());
  parallel_for(name, device, Range<1>(n), f, stream);
}
template <class F>
void parallel_for(Device device, std::int64_t n, F f, const Stream& stream = Stream()) {
  parallel_for(std::string_view(), device, n, f, stream);
}

// out[i] = f(in[i]...) for every element, in row-major order; all arrays of one size and one device.
// Any of them may be a view (a slice, a column, a reversed axis): a strided input is read through a
// compact copy, and a strided output, or one that shares memory with an input other than as that
// very input (out = x[1:], in = x[:-1]), is written through a compact result, so that every f(...)
// sees the inputs as they were before the call (NumPy's rule). Elementwise in place (map(x, f, x))
// needs no copy.
// A name first, as parallel_for's, names the launch for profiling tools and errors.
template <class T, class F, class... In>
void map(Array<T>& out, F f, const Array<In>&... in) {
  map(std::string_view(), Stream(), out, f, in...);
}
template <class T, class F, class... In>
void map(const Stream& stream, Array<T>& out, F f, const Array<In>&... in) {
  map(std::string_view(), stream, out, f, in...);
}
template <class T, class F, class... In>
void map(std::string_view name, Array<T>& out, F f, const Array<In>&... in) {
  map(name, Stream(), out, f, in...);
}
template <class T, class F, class... In>
void map(std::string_view name, const Stream& stream, Array<T>& out, F f, const Array<In>&... in) {
  constexpr const char* fn = "porta::map";
  out.check_valid(fn);
  (in.check_valid(fn), ...);
  const Device dev = out.device();
  const std::int64_t n = out.size();
  (
      [&](const auto& a) {
        if (a.device() != dev)
          throw DeviceMismatch(std::string(fn) + ": an input is on " + a.device().to_string() + ", the output on " +
                               dev.to_string());
        if (a.size() != n)
          detail::throw_invalid(
              fn, ("an input has " + std::to_string(a.size()) + " elements, the output " + std::to_string(n)).c_str());
      }(in),
      ...);
  const detail::LaunchName lname(name, f);
  const detail::LaunchTrace trace(detail::tools::Kind::parallel_for, lname, dev, stream);
  const bool out_direct = out.is_contiguous() && !(detail::overlaps_not_identical(out, in) || ...);
  if (out_direct && (in.is_contiguous() && ...)) {
    detail::map_pointers(stream, dev, n, out.data(), f, lname, in.data()...);
    return;
  }
  detail::map_views(stream, out, out_direct, f, lname, in...);
}

namespace detail {
// The input pointers of a map travel in a minimal recursive tuple that is trivially copyable and
// usable on the device (C++17 has no pack of members).
template <class... Ts>
struct PointerPack {};
template <class T, class... Ts>
struct PointerPack<T, Ts...> {
  const T* head;
  PointerPack<Ts...> tail;
};

template <class F, class... Vals>
PORTA_HOST_DEVICE auto call_at(const F& f, const PointerPack<>&, std::int64_t, Vals... v) {
  return f(v...);
}
template <class F, class T, class... Ts, class... Vals>
PORTA_HOST_DEVICE auto call_at(const F& f, const PointerPack<T, Ts...>& p, std::int64_t i, Vals... v) {
  return call_at(f, p.tail, i, v..., p.head[i]);
}

inline PointerPack<> pack_pointers() {
  return {};
}
template <class T, class... Ts>
PointerPack<T, Ts...> pack_pointers(const T* head, const Ts*... tail) {
  return PointerPack<T, Ts...>{head, pack_pointers(tail...)};
}

// A map's task, as cpu_task is a range's: the kernel, the output and the input pointers are locals
// of the task, so that a store through the output cannot change them (TaskKernel says why).
template <class T, class F, class Pack>
PORTA_DETAIL_NOINLINE void cpu_map_task(T* o, const F& f, const Pack& pack, std::int64_t b, std::int64_t e) {
  TaskKernel<F> k = f;
  const Pack in = pack;
  T* const out = o;
  for (std::int64_t i = b; i < e; ++i) out[i] = call_at(k, in, i);
}

template <class T, class F, class... In>
void map_pointers(const Stream& stream, Device dev, std::int64_t n, T* o, const F& f, const LaunchName& name,
                  const In*... p) {
  constexpr const char* fn = "porta::map";
  PORTA_DETAIL_CHECK_KERNEL(F);
  check_stream_device(stream, dev, fn);
  check_device(dev, fn);
  if (dev.type == DeviceType::cpu) {
    // A host-only loop (not a PORTA_LAMBDA): under nvcc a __host__ __device__ lambda here would
    // put a function-pointer call between the loop and f.
    const PointerPack<In...> pack = pack_pointers(p...);
    auto loop = [n, o, f, pack] {
      cpu_for_blocks(n, 0, [&](std::int64_t b, std::int64_t e) { cpu_map_task(o, f, pack, b, e); });
    };
    if (dev.host_accessible()) {
      run_named(fn, name, dev, loop);
    } else if (n > 0) {  // cpu:strict: queued like a GPU launch (docs/strict.md)
      strict_enqueue(static_cast<porta_stream>(stream.native_handle()), strict_named_task(dev, name, loop), fn);
    }
    return;
  }
#if PORTA_GPU_COMPILER
  // GPUs take the built-in maps' vector kernel; parallel_for's element per thread would cost bandwidth.
  gpu_user::map_named(dev, n, device_part(f), o, stream.native_handle(), fn, name.c_str(), p...);
#else
  throw_not_gpu_tu(fn, dev);
#endif
}

// The same under the kernel type's name.
template <class T, class F, class... In>
void map_pointers(const Stream& stream, Device dev, std::int64_t n, T* o, const F& f, const In*... p) {
  map_pointers(stream, dev, n, o, f, LaunchName(std::string_view(), f), p...);
}

// A map over views: strided inputs through compact copies, the output through a compact result
// unless it can be written directly. The copies are queued on `stream` like the map itself.
template <class T, class F, class... In, std::size_t... I>
void map_compact(const Stream& stream, Array<T>& out, bool out_direct, const F& f, const LaunchName& name,
                 const std::tuple<Array<In>...>& compact, std::index_sequence<I...>, const Array<In>&... in) {
  Array<T> result = out_direct ? Array<T>() : Array<T>(out.shape(), out.device(), stream);
  map_pointers(stream, out.device(), out.size(), out_direct ? out.data() : result.data(), f, name,
               (in.is_contiguous() ? in.data() : std::get<I>(compact).data())...);
  if (!out_direct) out.assign(result, stream);
}

template <class T, class F, class... In>
void map_views(const Stream& stream, Array<T>& out, bool out_direct, const F& f, const LaunchName& name,
               const Array<In>&... in) {
  const std::tuple<Array<In>...> compact{(in.is_contiguous() ? Array<In>() : in.contiguous(stream))...};
  map_compact(stream, out, out_direct, f, name, compact, std::index_sequence_for<In...>{}, in...);
}
}  // namespace detail

// op-reduction of f over every index of `range`, combined with init: op(init, reduce(f)), in the
// canonical order over the row-major linear index. op is one of porta::plus, multiplies, maximum_op,
// minimum_op (they carry the identity the canonical order pads with). The result type is f's
// (float, double, int32_t, int64_t; narrower integers count in int32_t), or R when named:
// transform_reduce<double>(...) converts each f(...) to double first. init is converted to it; a
// floating-point init for an integer result is a compile-time error (it would be truncated).
// A name first, as parallel_for's, names the launch for profiling tools and errors.
template <class R = detail::Deduce, int Rank, class Init, class Op, class F>
auto transform_reduce(std::string_view name, Device device, const Range<Rank>& range, Init init, Op op, F f,
                      const Stream& stream = Stream()) {
  using T = detail::reduce_result_t<R, F, Rank>;
  constexpr const char* fn = "porta::transform_reduce";
  PORTA_DETAIL_CHECK_KERNEL(F);
  static_assert(detail::kernel_invocable_v<F, Rank>,
                "porta::transform_reduce: the kernel must take one std::int64_t index per dimension of the range");
  static_assert(detail::is_supported_v<T>,
                "porta::transform_reduce: the result must be float, double, int32_t or int64_t");
  static_assert(std::is_arithmetic_v<Init>, "porta::transform_reduce: init must be a number");
  static_assert(!(std::is_floating_point_v<Init> && std::is_integral_v<T>),
                "porta::transform_reduce: init is floating-point but the result is an integer (f returns one): "
                "return a floating-point value from f, or name the type: transform_reduce<double>(...)");
  detail::check_stream_device(stream, device, fn);
  detail::check_device(device, fn);
  const std::int64_t n = range.size();
  T r;
  {
    const detail::LaunchName lname(name, f);
    const detail::LaunchTrace trace(detail::tools::Kind::parallel_reduce, lname, device, stream);
    if (device.type == DeviceType::cpu) {
      const auto load = detail::linear_load(range, detail::host_part(f));
      const detail::CastLoad<T, decltype(load)> cast{&load};
      // cpu:strict: the host needs the value now: queued work first, then this (docs/strict.md).
      detail::run_named(fn, lname, device, [&] {
        if (device.host_accessible()) {
          r = detail::reduce_canonical_cpu<T>(n, op, cast, range.grain());
        } else {
          detail::strict_run_now(static_cast<porta_stream>(stream.native_handle()),
                                 detail::strict_task([&r, n, op, &cast, &range] {
                                   r = detail::reduce_canonical_cpu<T>(n, op, cast, range.grain());
                                 }),
                                 fn);
        }
      });
    } else {
#if PORTA_GPU_COMPILER
      // A grain of at most 32 index points says each term is heavy: worth its own GPU thread.
      const bool heavy = range.grain() > 0 && range.grain() <= 32;
      r = detail::gpu_user::transform_reduce<T>(device, n, op, detail::linear_load(range, detail::device_part(f)),
                                                heavy, stream.native_handle(), fn, lname.c_str());
#else
      detail::throw_not_gpu_tu(fn, device);
#endif
    }
  }
  return detail::canonical_nan(op(static_cast<T>(init), r));
}
template <class R = detail::Deduce, int Rank, class Init, class Op, class F>
auto transform_reduce(Device device, const Range<Rank>& range, Init init, Op op, F f, const Stream& stream = Stream()) {
  return transform_reduce<R>(std::string_view(), device, range, init, op, f, stream);
}

// The same over i in [0, n).
template <class R = detail::Deduce, class Init, class Op, class F>
auto transform_reduce(std::string_view name, Device device, std::int64_t n, Init init, Op op, F f,
                      const Stream& stream = Stream()) {
  if (n < 0) detail::throw_invalid("porta::transform_reduce", ("n is negative (" + std::to_string(n) + ")").c_str());
  return transform_reduce<R>(name, device, Range<1>(n), init, op, f, stream);
}
template <class R = detail::Deduce, class Init, class Op, class F>
auto transform_reduce(Device device, std::int64_t n, Init init, Op op, F f, const Stream& stream = Stream()) {
  return transform_reduce<R>(std::string_view(), device, n, init, op, f, stream);
}

}  // namespace porta
