// SPDX-License-Identifier: Apache-2.0
// porta's scans and random numbers on the CPU beside what a C++ user would otherwise write:
//
//   std-serial   std::inclusive_scan (one thread: the standard library's plain loop)
//   openmp       a two-pass OpenMP scan: per-thread sums, their prefix, then each thread rescans its
//                part (the usual hand-written parallel prefix sum; its float bits depend on the
//                thread count, porta's do not)
//   openmp-mt    random: each OpenMP thread its own std::mt19937_64 (seeded by thread number) and
//                std::uniform_real_distribution / std::normal_distribution (bits depend on the
//                thread count and the standard library)
//   copy         porta::copy of n elements, counted as one read and one write per element: the
//                bandwidth the machine streams, which porta/copy turns into the fraction of it a
//                scan (read + write) or a random fill (write only) reaches
//
// porta allocates each result (from its pool), as its API does; the peers write into a buffer made
// once. Every case makes one untimed call before its timed loop: with a short minimum time a large
// case times only an iteration or two, and the first would otherwise include faulting in a fresh
// pool block (2 GiB at 2^28 doubles) or the peer's first touch of its buffer, not the steady state
// a user's repeated calls see. Names, bytes and groups: scan_random_bench.hpp.
#include <benchmark/benchmark.h>
#include <porta/porta.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "common.hpp"
#include "host_buffer.hpp"
#include "scan_random_bench.hpp"

#if defined(_OPENMP)
#include <omp.h>
#define PB_SR_OMP(directive) _Pragma(directive)
#else
#define PB_SR_OMP(directive)
#endif

namespace porta_bench {
namespace {

const porta::Device kCpuDevice{porta::DeviceType::cpu, 0};

int threads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

template <class T>
struct ScanData {
  porta::Array<T> x;
  HostBuffer<T> hx, hy;
};

// The copy peer: n elements read and n written, whatever the op counts as its bytes.
template <class T>
struct CopyData {
  porta::Array<T> x, out;
};

template <class T>
void copy_case(benchmark::State& st, const std::string& id, std::int64_t n) {
  auto& d = tenant<CopyData<T>>(id, [&] {
    return CopyData<T>{porta::full<T>(porta::Shape{n}, T(1), kCpuDevice),
                       porta::full<T>(porta::Shape{n}, T(0), kCpuDevice)};
  });
  porta::copy(d.x, d.out);
  for (auto _ : st) {
    porta::copy(d.x, d.out);
    benchmark::ClobberMemory();
  }
  set_bytes(st, 2.0 * static_cast<double>(n) * sizeof(T));
}

template <class T>
ScanData<T> make_scan_data(std::int64_t n) {
  ScanData<T> d;
  d.x = porta::Array<T>::from(host_random<T>(n, 0), porta::Shape{n}, kCpuDevice);
  d.hx = HostBuffer<T>(n, host_random<T>(n, 0));
  d.hy = HostBuffer<T>(n);
  return d;
}

template <class T>
[[gnu::noinline]] void omp_scan(const T* x, T* y, std::int64_t n) {
  const int nt = threads();
  std::vector<T> part(static_cast<std::size_t>(nt) + 1, T(0));
  PB_SR_OMP("omp parallel num_threads(nt)") {
#if defined(_OPENMP)
    const int t = omp_get_thread_num(), T_ = omp_get_num_threads();
#else
    const int t = 0, T_ = 1;
#endif
    const std::int64_t b = n * t / T_, e = n * (t + 1) / T_;
    T s = T(0);
    for (std::int64_t i = b; i < e; ++i) s += x[i];
    part[static_cast<std::size_t>(t) + 1] = s;
    PB_SR_OMP("omp barrier")
    PB_SR_OMP("omp single")
    for (int k = 1; k <= T_; ++k) part[static_cast<std::size_t>(k)] += part[static_cast<std::size_t>(k) - 1];
    T acc = part[static_cast<std::size_t>(t)];
    for (std::int64_t i = b; i < e; ++i) {
      acc += x[i];
      y[i] = acc;
    }
  }
}

template <class T>
void scan_case(benchmark::State& st, const std::string& id, const std::string& impl, std::int64_t n) {
  if (impl == "copy") {
    copy_case<T>(st, id, n);
    return;
  }
  auto& d = tenant<ScanData<T>>(id, [&] { return make_scan_data<T>(n); });
  if (impl == "porta") {
    benchmark::DoNotOptimize(porta::cumsum(d.x).data());
    for (auto _ : st) {
      porta::Array<T> y = porta::cumsum(d.x);
      benchmark::DoNotOptimize(y.data());
    }
  } else if (impl == "std-serial") {
    std::inclusive_scan(d.hx.get(), d.hx.get() + n, d.hy.get());
    for (auto _ : st) {
      std::inclusive_scan(d.hx.get(), d.hx.get() + n, d.hy.get());
      benchmark::ClobberMemory();
    }
  } else {
    omp_scan(d.hx.get(), d.hy.get(), n);
    for (auto _ : st) {
      omp_scan(d.hx.get(), d.hy.get(), n);
      benchmark::ClobberMemory();
    }
  }
  set_bytes(st, 2.0 * static_cast<double>(n) * sizeof(T));
}

template <class T, bool Normal>
[[gnu::noinline]] void omp_random(T* y, std::int64_t n, std::uint64_t seed) {
  PB_SR_OMP("omp parallel") {
#if defined(_OPENMP)
    const int t = omp_get_thread_num(), T_ = omp_get_num_threads();
#else
    const int t = 0, T_ = 1;
#endif
    std::mt19937_64 eng(seed + static_cast<std::uint64_t>(t));
    const std::int64_t b = n * t / T_, e = n * (t + 1) / T_;
    if constexpr (Normal) {
      std::normal_distribution<T> dist;
      for (std::int64_t i = b; i < e; ++i) y[i] = dist(eng);
    } else {
      std::uniform_real_distribution<T> dist;
      for (std::int64_t i = b; i < e; ++i) y[i] = dist(eng);
    }
  }
}

template <class T, bool Normal>
void random_case(benchmark::State& st, const std::string& id, const std::string& impl, std::int64_t n) {
  std::uint64_t seed = 1;
  if (impl == "copy") {
    copy_case<T>(st, id, n);
    return;
  }
  if (impl == "porta") {
    auto& out = tenant<porta::Array<T>>(id, [&] { return porta::full<T>(porta::Shape{n}, T(0), kCpuDevice); });
    if constexpr (Normal) {
      porta::random::normal(out, seed++);
    } else {
      porta::random::uniform(out, seed++);
    }
    for (auto _ : st) {
      if constexpr (Normal) {
        porta::random::normal(out, seed++);
      } else {
        porta::random::uniform(out, seed++);
      }
      benchmark::ClobberMemory();
    }
  } else {
    auto& y = tenant<HostBuffer<T>>(id, [&] { return HostBuffer<T>(n); });
    omp_random<T, Normal>(y.get(), n, seed++);
    for (auto _ : st) {
      omp_random<T, Normal>(y.get(), n, seed++);
      benchmark::ClobberMemory();
    }
  }
  set_bytes(st, static_cast<double>(n) * sizeof(T));
}

template <class T>
void register_dtype(std::int64_t n) {
  const char* dt = dtype_name<T>();
  std::vector<benchmark::internal::Benchmark*> added;
  if (wanted("cumsum", "scan")) {
    for (const char* impl : {"porta", "openmp", "std-serial", "copy"}) {
      const std::string im = impl;
      added.push_back(add("cumsum", dt, im, n,
                          [im, n](benchmark::State& st, const std::string& id) { scan_case<T>(st, id, im, n); }));
    }
  }
  for (const bool normal : {false, true}) {
    const std::string op = normal ? "random_normal" : "random_uniform";
    if (!wanted(op, "random")) continue;
    for (const char* impl : {"porta", "openmp-mt", "copy"}) {
      const std::string im = impl;
      added.push_back(add(op, dt, im, n, [im, n, normal](benchmark::State& st, const std::string& id) {
        if (normal) {
          random_case<T, true>(st, id, im, n);
        } else {
          random_case<T, false>(st, id, im, n);
        }
      }));
    }
  }
  for (auto* b : added) b->UseRealTime();
}

}  // namespace

void register_cpu_scan_random() {
  for (std::int64_t n : vector_sizes()) {
    register_dtype<float>(n);
    register_dtype<double>(n);
  }
}

}  // namespace porta_bench
