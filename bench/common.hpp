// SPDX-License-Identifier: Apache-2.0
// Shared pieces of porta's benchmarks: the sizes (from the environment, so that CI can run tiny
// ones), random inputs, the naming scheme that bench/report.py parses, and a one-slot cache
// that keeps the inputs of the benchmark being run alive across Google Benchmark's repeated calls.
//
// Every benchmark is named  <op>/<dtype>/<impl>/<size>  (Google Benchmark may append /real_time or
// /manual_time). <impl> is "porta" or a porta variant ("porta_own"), or the peer's name. All the
// implementations of one (op, dtype, size) are registered one after the other, so they run back to
// back on the same inputs and under the same conditions.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "porta/complex.hpp"
#include "porta/half.hpp"

// Host and device qualifiers for functors shared with the CUDA binary.
#if defined(__CUDACC__)
#define PB_HOST_DEVICE __host__ __device__
#else
#define PB_HOST_DEVICE
#endif

namespace porta_bench {

// ---- sizes -------------------------------------------------------------------------------------
struct Limits {
  int min_log2 = 10;  // maps and reductions: 2^min_log2 .. 2^max_log2 elements, step x4
  int max_log2 = 28;
  int matmul_min = 256;  // square matmul: matmul_min .. matmul_max, step x2
  int matmul_max = 4096;
  std::int64_t ts_rows = 65536;  // tall-skinny matmul: (ts_rows x ts_cols) * (ts_cols x ts_cols)
  std::int64_t ts_cols = 64;
  std::string only;  // comma-separated ops to register (empty: all); cheaper than a filter regex
  // > 0: every case runs exactly this many iterations instead of Google Benchmark's time-based count.
  // CI's smoke run uses it: on a loaded machine an OpenMP barrier sometimes waits a scheduler tick,
  // the estimate from a fast first iteration then asks for thousands of slow ones, and a run meant to
  // take seconds took minutes.
  std::int64_t iterations = 0;
};

inline Limits& limits() {
  static Limits l;
  return l;
}

inline bool parse_int(const char* text, long long* out) {
  if (!text || !*text) return false;
  char* end = nullptr;
  long long v = std::strtoll(text, &end, 10);
  if (*end != '\0') return false;
  *out = v;
  return true;
}

// Reads PORTA_BENCH_{MIN,MAX}_LOG2, PORTA_BENCH_MATMUL_{MIN,MAX}, PORTA_BENCH_TS_ROWS,
// PORTA_BENCH_ITERATIONS and PORTA_BENCH_OPS, then the flags --porta_min_log2=N, --porta_max_log2=N,
// --porta_matmul_min=N, --porta_matmul_max=N, --porta_ts_rows=N, --porta_iterations=N,
// --porta_ops=a,b (flags win), and removes those flags from argv before Google Benchmark sees them
// (it rejects flags it does not know).
inline void parse_limits(int* argc, char** argv, int default_matmul_max) {
  Limits& l = limits();
  l.matmul_max = default_matmul_max;
  struct Knob {
    const char* env;
    const char* flag;
    long long* value;
  };
  long long min_log2 = l.min_log2, max_log2 = l.max_log2, mm_min = l.matmul_min, mm_max = l.matmul_max,
            ts_rows = l.ts_rows, iterations = l.iterations;
  const Knob knobs[] = {{"PORTA_BENCH_MIN_LOG2", "--porta_min_log2=", &min_log2},
                        {"PORTA_BENCH_MAX_LOG2", "--porta_max_log2=", &max_log2},
                        {"PORTA_BENCH_MATMUL_MIN", "--porta_matmul_min=", &mm_min},
                        {"PORTA_BENCH_MATMUL_MAX", "--porta_matmul_max=", &mm_max},
                        {"PORTA_BENCH_TS_ROWS", "--porta_ts_rows=", &ts_rows},
                        {"PORTA_BENCH_ITERATIONS", "--porta_iterations=", &iterations}};
  for (const Knob& k : knobs) {
    const char* e = std::getenv(k.env);
    if (e && *e && !parse_int(e, k.value)) {
      std::fprintf(stderr, "porta bench: ignoring %s=%s (not an integer)\n", k.env, e);
    }
  }
  if (const char* e = std::getenv("PORTA_BENCH_OPS")) l.only = e;
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    bool consumed = false;
    for (const Knob& k : knobs) {
      const std::size_t len = std::strlen(k.flag);
      if (std::strncmp(argv[i], k.flag, len) == 0) {
        if (!parse_int(argv[i] + len, k.value)) {
          std::fprintf(stderr, "porta bench: %s needs an integer\n", k.flag);
          std::exit(2);
        }
        consumed = true;
      }
    }
    if (std::strncmp(argv[i], "--porta_ops=", 12) == 0) {
      l.only = argv[i] + 12;
      consumed = true;
    }
    if (!consumed) argv[kept++] = argv[i];
  }
  *argc = kept;
  argv[kept] = nullptr;
  l.min_log2 = static_cast<int>(std::clamp<long long>(min_log2, 0, 40));
  l.max_log2 = static_cast<int>(std::clamp<long long>(max_log2, l.min_log2, 40));
  l.matmul_min = static_cast<int>(std::clamp<long long>(mm_min, 1, 1 << 16));
  l.matmul_max = static_cast<int>(std::clamp<long long>(mm_max, l.matmul_min, 1 << 16));
  // The tall-skinny case shrinks with the vector sizes so that a tiny CI run stays tiny.
  ts_rows = std::min<long long>(ts_rows, 1LL << l.max_log2);
  l.ts_rows = std::max<long long>(ts_rows, l.ts_cols);
  l.iterations = std::max<long long>(iterations, 0);
}

// 2^min_log2, 2^(min_log2+2), ... <= 2^max_log2
// The "porta_sizes" line of the report's machine section: what this run covered.
inline void add_sizes_context() {
  const Limits& l = limits();
  benchmark::AddCustomContext(
      "porta_sizes",
      "2^" + std::to_string(l.min_log2) + "..2^" + std::to_string(l.max_log2) + ", matmul " +
          std::to_string(l.matmul_min) + ".." + std::to_string(l.matmul_max) + ", tall-skinny " +
          std::to_string(l.ts_rows) + "x" + std::to_string(l.ts_cols) +
          (l.iterations > 0 ? ", " + std::to_string(l.iterations) + " iterations per case" : std::string()));
}

inline std::vector<std::int64_t> vector_sizes() {
  std::vector<std::int64_t> s;
  for (int e = limits().min_log2; e <= limits().max_log2; e += 2) s.push_back(std::int64_t{1} << e);
  return s;
}

// matmul_min, 2*matmul_min, ... <= matmul_max
inline std::vector<std::int64_t> matmul_sizes() {
  std::vector<std::int64_t> s;
  for (std::int64_t n = limits().matmul_min; n <= limits().matmul_max; n *= 2) s.push_back(n);
  return s;
}

// Whether `op` was asked for through PORTA_BENCH_OPS / --porta_ops: each comma-separated item
// names an op ("axpy", "matmul_ts", "latency_sum") or a group ("map", "reduce", "matmul",
// "latency"), so a quick look at one kind of operation does not pay for registering all of them.
inline bool wanted(const std::string& op, const std::string& group) {
  const std::string& only = limits().only;
  if (only.empty()) return true;
  std::size_t start = 0;
  while (start <= only.size()) {
    std::size_t end = only.find(',', start);
    if (end == std::string::npos) end = only.size();
    const std::string item = only.substr(start, end - start);
    if (item == op || item == group) return true;
    start = end + 1;
  }
  return false;
}

// ---- operations --------------------------------------------------------------------------------
// The bytes each operation moves per element, counting reads and writes as STREAM does: the
// throughput of every implementation is computed from the same count, so the ratios are ratios of
// time.
// fill and add are timed only as latency cases (one element: the cost of a call itself).
enum class Op { copy, scale, axpy, fourop, sum, dot, max, fill, add };

inline const char* op_name(Op op) {
  switch (op) {
    case Op::copy:
      return "copy";
    case Op::scale:
      return "scale";
    case Op::axpy:
      return "axpy";
    case Op::fourop:
      return "fourop";
    case Op::sum:
      return "sum";
    case Op::dot:
      return "dot";
    case Op::max:
      return "max";
    case Op::fill:
      return "fill";
    case Op::add:
      return "add";
  }
  return "?";
}

inline int words_moved(Op op) {
  switch (op) {
    case Op::copy:
      return 2;  // read x, write out
    case Op::scale:
      return 2;  // read x, write out
    case Op::axpy:
      return 3;  // read x, read y, write y
    case Op::fourop:
      return 3;  // read x, read y, write out
    case Op::sum:
      return 1;
    case Op::dot:
      return 2;
    case Op::max:
      return 1;
    case Op::fill:
      return 1;  // write out
    case Op::add:
      return 3;  // read x, read y, write out
  }
  return 0;
}

inline bool is_reduction(Op op) {
  return op == Op::sum || op == Op::dot || op == Op::max;
}
// How many input vectors (x, y) an op reads, and whether it writes a separate output.
inline int inputs_of(Op op) {
  return (op == Op::axpy || op == Op::fourop || op == Op::dot || op == Op::add) ? 2 : (op == Op::fill ? 0 : 1);
}
inline bool has_output(Op op) {
  return op == Op::copy || op == Op::scale || op == Op::fourop || op == Op::add || op == Op::fill;
}

// The user kernel of the four-operation map: one pass, two loads, one store, sin and cos between.
template <class T>
struct FourOp {
  PB_HOST_DEVICE T operator()(T a, T b) const {
    using std::cos;
    using std::sin;
    return static_cast<T>(sin(a) * cos(b) + a * b);
  }
};

inline constexpr Op kMapOps[] = {Op::copy, Op::scale, Op::axpy, Op::fourop};
inline constexpr Op kReduceOps[] = {Op::sum, Op::dot, Op::max};

template <class T>
const char* dtype_name();
template <>
inline const char* dtype_name<float>() {
  return "f32";
}
template <>
inline const char* dtype_name<double>() {
  return "f64";
}
template <>
inline const char* dtype_name<porta::complex<float>>() {
  return "c64";
}
template <>
inline const char* dtype_name<porta::complex<double>>() {
  return "c128";
}
template <>
inline const char* dtype_name<porta::float16>() {
  return "f16";
}
template <>
inline const char* dtype_name<porta::bfloat16>() {
  return "bf16";
}

// Floating-point operations of an m x k by k x n product: a complex multiply-add is 8 of them.
template <class T>
double gemm_flops(std::int64_t m, std::int64_t n, std::int64_t k) {
  return (porta::is_complex_v<T> ? 8.0 : 2.0) * static_cast<double>(m) * static_cast<double>(n) *
         static_cast<double>(k);
}

// The scalar of scale and axpy. axpy flips its sign every call (every implementation alike) so that
// y stays bounded however many iterations Google Benchmark runs.
template <class T>
inline const T kAlpha = T(0.5);

inline std::string bench_name(const std::string& op, const char* dtype, const std::string& impl, std::int64_t size) {
  return op + "/" + dtype + "/" + impl + "/" + std::to_string(size);
}

// ---- random inputs -----------------------------------------------------------------------------
// Never time on zeros (hardware and libraries have fast paths for them). A counter-based generator
// (splitmix64) fills in parallel and gives the same data for every implementation and thread count.
inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [-1, 1).
template <class T>
void fill_random(T* p, std::int64_t n, std::uint64_t seed) {
  const std::uint64_t base = splitmix64(seed * 0x632BE59BD9B4E019ull + 1);
#if defined(_OPENMP)
#pragma omp parallel for schedule(static)
#endif
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint64_t r = splitmix64(base + static_cast<std::uint64_t>(i));
    const double u = static_cast<double>(r >> 11) * (2.0 / 9007199254740992.0) - 1.0;
    if constexpr (porta::is_complex_v<T>) {  // both parts from the one draw's two halves
      using R = porta::detail::real_type_t<T>;
      const double v = static_cast<double>(splitmix64(r) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
      p[i] = T(static_cast<R>(u), static_cast<R>(v));
    } else {
      p[i] = static_cast<T>(u);
    }
  }
}

// Host random data for `which` (0, 1, 2: distinct inputs), cached for the latest (dtype, n): all the
// implementations of one case use it, and generating 2^28 values each time would dominate the run.
template <class T>
const T* host_random(std::int64_t n, int which) {
  struct Slot {
    const void* type = nullptr;  // float16 and bfloat16 have one size and other values
    std::int64_t n = -1;
    std::vector<std::vector<unsigned char>> bufs;
  };
  static Slot slot;
  static const char tag = 0;  // one per T
  if (slot.type != &tag || slot.n != n) {
    slot.bufs.clear();
    slot.bufs.shrink_to_fit();
    slot.type = &tag;
    slot.n = n;
  }
  if (slot.bufs.size() <= static_cast<std::size_t>(which)) slot.bufs.resize(static_cast<std::size_t>(which) + 1);
  std::vector<unsigned char>& b = slot.bufs[static_cast<std::size_t>(which)];
  if (b.empty() && n > 0) {
    b.resize(static_cast<std::size_t>(n) * sizeof(T));
    fill_random(reinterpret_cast<T*>(b.data()), n, static_cast<std::uint64_t>(which) + 1);
  }
  return reinterpret_cast<const T*>(b.data());
}

// ---- one-slot cache of a benchmark's state ------------------------------------------------------
// Google Benchmark calls a benchmark function several times (to pick the iteration count, then for
// the measurement). The arrays of the benchmark being run stay alive across those calls and are freed
// as soon as another benchmark starts, so memory holds one case at a time (2^28 doubles x 3 = 6 GiB).
struct TenantBase {
  virtual ~TenantBase() = default;
};
template <class S>
struct Tenant : TenantBase {
  explicit Tenant(S&& s) : value(std::move(s)) {}
  S value;
};
struct TenantSlot {
  std::string id;
  std::unique_ptr<TenantBase> held;
  std::vector<std::function<void()>> on_evict;  // e.g. porta::empty_cache, so pools shrink too
};
inline TenantSlot& tenant_slot() {
  static TenantSlot s;
  return s;
}
inline void evict_tenant() {
  TenantSlot& s = tenant_slot();
  s.held.reset();
  s.id.clear();
  for (auto& f : s.on_evict) f();
}
template <class S, class Make>
S& tenant(const std::string& id, Make make) {
  TenantSlot& s = tenant_slot();
  if (s.id != id || !s.held) {
    evict_tenant();
    s.held = std::make_unique<Tenant<S>>(make());
    s.id = id;
  }
  return static_cast<Tenant<S>*>(s.held.get())->value;
}

// A CPU case's timing loop: `run` on the tenant that `make` builds (once per id), wall-clock time.
template <class S, class Make, class Run>
void timed(benchmark::State& st, const std::string& id, Make make, Run run) {
  S& s = tenant<S>(id, make);
  for (auto _ : st) run(s);
  benchmark::ClobberMemory();
}
// A CPU case's settings: real time (the OpenMP team's, not the calling thread's CPU time), in ms.
inline void configure_cpu(benchmark::internal::Benchmark* b) {
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

// ---- running -----------------------------------------------------------------------------------
// An exception (a porta::Error, a failed vendor call) marks the benchmark as skipped with its message
// instead of ending the run: one broken case must not hide the others.
template <class F>
void guarded(benchmark::State& st, F&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    evict_tenant();
    st.SkipWithError(e.what());
  }
}

// Registers `fn` as <op>/<dtype>/<impl>/<size>; the benchmark's state is keyed by that name.
inline benchmark::internal::Benchmark* add(const std::string& op, const char* dtype, const std::string& impl,
                                           std::int64_t size,
                                           std::function<void(benchmark::State&, const std::string& id)> fn) {
  const std::string name = bench_name(op, dtype, impl, size);
  auto* b = benchmark::RegisterBenchmark(name.c_str(),
                                         [name, fn](benchmark::State& st) { guarded(st, [&] { fn(st, name); }); });
  if (limits().iterations > 0) b->Iterations(limits().iterations);
  return b;
}

inline void set_bytes(benchmark::State& st, double bytes_per_iteration) {
  st.SetBytesProcessed(static_cast<std::int64_t>(static_cast<double>(st.iterations()) * bytes_per_iteration));
}
inline void set_flops(benchmark::State& st, double flops_per_iteration) {
  st.counters["flops"] = benchmark::Counter(flops_per_iteration, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace porta_bench
