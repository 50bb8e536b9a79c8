// SPDX-License-Identifier: Apache-2.0
// porta's sort and argsort on the CPU beside what a C++ user would otherwise call:
//
//   std-sort      std::sort (one thread; not stable), after copying the keys into the buffer it
//                 sorts in place (porta writes a new array: the copy is the peers' share of that)
//   gnu-parallel  __gnu_parallel::sort, libstdc++'s OpenMP multiway mergesort (parallel mode), the
//                 parallel std::sort a GCC user has without TBB; the same copy first
//   argsort: the same peers sorting an index array with a comparator on the keys
//
// Sizes stop at 2^26: std::sort of 2^28 keys alone takes tens of seconds per call. Names and
// bytes: sort_bench.hpp.
#include <benchmark/benchmark.h>
#include <porta/porta.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "common.hpp"
#include "host_buffer.hpp"
#include "sort_bench.hpp"

#if defined(_OPENMP) && defined(__GLIBCXX__)
#include <parallel/algorithm>
#define PB_HAVE_GNU_PARALLEL 1
#endif

namespace porta_bench {
namespace {

const porta::Device kCpuDevice{porta::DeviceType::cpu, 0};
constexpr std::int64_t kMaxSortSize = std::int64_t(1) << 26;

template <class T>
struct SortData {
  porta::Array<T> x;
  HostBuffer<T> hx, hy;
  HostBuffer<std::int64_t> idx;
};

template <class T>
SortData<T> make_sort_data(std::int64_t n, bool porta_side, bool argsort) {
  SortData<T> d;
  const T* h = host_random<T>(n, 0);
  if (porta_side) {
    d.x = porta::Array<T>::from(h, porta::Shape{n}, kCpuDevice);
  } else {
    d.hx = HostBuffer<T>(n, h);
    d.hy = HostBuffer<T>(n);
    if (argsort) d.idx = HostBuffer<std::int64_t>(n);
  }
  return d;
}

template <class It, class Less>
void peer_sort(const std::string& impl, It first, It last, Less less) {
#if defined(PB_HAVE_GNU_PARALLEL)
  if (impl == "gnu-parallel") {
    __gnu_parallel::sort(first, last, less);
    return;
  }
#endif
  (void)impl;
  std::sort(first, last, less);
}

template <class T>
void sort_case(benchmark::State& st, const std::string& id, const std::string& impl, std::int64_t n, bool argsort) {
  auto& d = tenant<SortData<T>>(id, [&] { return make_sort_data<T>(n, impl == "porta", argsort); });
  // One untimed call first, as in cpu_scan_random.cpp: a large case is timed for an iteration or
  // two, and the first would include faulting in the pool's fresh output and temporaries (or the
  // peer's first touch of its buffer), not the steady state of a user's repeated sorts.
  if (impl == "porta") {
    const auto call = [&] {
      if (argsort) {
        porta::Array<std::int64_t> i = porta::argsort(d.x);
        benchmark::DoNotOptimize(i.data());
      } else {
        porta::Array<T> y = porta::sort(d.x);
        benchmark::DoNotOptimize(y.data());
      }
    };
    call();
    for (auto _ : st) call();
  } else {
    T* keys = d.hy.get();
    const T* src = d.hx.get();
    const auto call = [&] {
      if (argsort) {
        std::int64_t* idx = d.idx.get();
        std::iota(idx, idx + n, std::int64_t(0));
        peer_sort(impl, idx, idx + n, [src](std::int64_t a, std::int64_t b) { return src[a] < src[b]; });
      } else {
        std::memcpy(keys, src, static_cast<std::size_t>(n) * sizeof(T));
        peer_sort(impl, keys, keys + n, [](T a, T b) { return a < b; });
      }
      benchmark::ClobberMemory();
    };
    call();
    for (auto _ : st) call();
  }
  set_bytes(st, sort_bytes<T>(n, argsort));
}

template <class T>
void register_dtype(std::int64_t n) {
  const char* dt = dtype_name<T>();
  std::vector<benchmark::internal::Benchmark*> added;
  for (const bool argsort : {false, true}) {
    const std::string op = argsort ? "argsort" : "sort";
    if (!wanted(op, "sort")) continue;
    std::vector<std::string> impls = {"porta", "std-sort"};
#if defined(PB_HAVE_GNU_PARALLEL)
    impls.insert(impls.begin() + 1, "gnu-parallel");
#endif
    for (const std::string& im : impls) {
      added.push_back(add(op, dt, im, n, [im, n, argsort](benchmark::State& st, const std::string& id) {
        sort_case<T>(st, id, im, n, argsort);
      }));
    }
  }
  for (auto* b : added) b->UseRealTime();
}

}  // namespace

void register_cpu_sort() {
  for (std::int64_t n : vector_sizes()) {
    if (n > kMaxSortSize) continue;
    register_dtype<float>(n);
    register_dtype<double>(n);
  }
}

}  // namespace porta_bench
