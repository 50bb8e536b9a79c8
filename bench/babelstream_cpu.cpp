// SPDX-License-Identifier: Apache-2.0
// BabelStream's kernels on the CPU: porta's built-ins, porta's user kernels and BabelStream's own
// OpenMP loops, in one binary (names, bytes and impls: babelstream.hpp).
#include "babelstream.hpp"

#include <benchmark/benchmark.h>
#include <porta/fuse.hpp>
#include <porta/kernels.hpp>
#include <porta/porta.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "host_buffer.hpp"

namespace porta_bench {
namespace {

const porta::Device kCpuDev{porta::DeviceType::cpu, 0};

enum class Kernel { copy, mul, add, triad, dot, nstream };
constexpr Kernel kKernels[] = {Kernel::copy, Kernel::mul, Kernel::add, Kernel::triad, Kernel::dot, Kernel::nstream};

const char* kernel_name(Kernel k) {
  switch (k) {
    case Kernel::copy:
      return "copy";
    case Kernel::mul:
      return "mul";
    case Kernel::add:
      return "add";
    case Kernel::triad:
      return "triad";
    case Kernel::dot:
      return "dot";
    case Kernel::nstream:
      return "nstream";
  }
  return "?";
}

// The arrays each kernel moves, as BabelStream counts them.
int arrays_moved(Kernel k) {
  switch (k) {
    case Kernel::copy:
    case Kernel::mul:
    case Kernel::dot:
      return 2;
    case Kernel::add:
    case Kernel::triad:
      return 3;
    case Kernel::nstream:
      return 4;
  }
  return 0;
}

// The porta call of the built-in case, as its impl name says it.
const char* builtin_impl(Kernel k) {
  switch (k) {
    case Kernel::copy:
      return "porta_copy";
    case Kernel::mul:
      return "porta_mul";
    case Kernel::add:
      return "porta_add";
    case Kernel::dot:
      return "porta_dot";
    case Kernel::triad:
    case Kernel::nstream:
      return "porta_lazy";
  }
  return "?";
}

template <class T>
constexpr T kStartA = T(0.1);
template <class T>
constexpr T kStartB = T(0.2);
template <class T>
constexpr T kStartC = T(0.0);
template <class T>
constexpr T kScalar = T(0.4);

// ---- porta --------------------------------------------------------------------------------------
template <class T>
struct PortaArrays {
  porta::Array<T> a, b, c;
};

template <class T>
PortaArrays<T> make_porta_arrays(std::int64_t n) {
  const porta::Shape shape{n};
  return PortaArrays<T>{porta::full<T>(shape, kStartA<T>, kCpuDev), porta::full<T>(shape, kStartB<T>, kCpuDev),
                        porta::full<T>(shape, kStartC<T>, kCpuDev)};
}

template <class T>
void run_builtin(Kernel k, PortaArrays<T>& d, benchmark::State& st) {
  const T s = kScalar<T>;
  switch (k) {
    case Kernel::copy:
      for (auto _ : st) porta::copy(d.a, d.c);
      break;
    case Kernel::mul:
      for (auto _ : st) porta::mul(s, d.c, d.b);
      break;
    case Kernel::add:
      for (auto _ : st) porta::add(d.a, d.b, d.c);
      break;
    case Kernel::triad: {
      const auto b = porta::lazy(d.b), c = porta::lazy(d.c);
      for (auto _ : st) d.a.assign(b + s * c);
      break;
    }
    case Kernel::dot:
      for (auto _ : st) {
        T r = porta::dot(d.a, d.b);
        benchmark::DoNotOptimize(r);
      }
      break;
    case Kernel::nstream: {
      const auto a = porta::lazy(d.a), b = porta::lazy(d.b), c = porta::lazy(d.c);
      for (auto _ : st) d.a.assign(a + (b + s * c));
      break;
    }
  }
}

template <class T>
void run_kernel(Kernel k, PortaArrays<T>& d, std::int64_t n, benchmark::State& st) {
  const T s = kScalar<T>;
  const auto& cd = d;
  const auto ca = cd.a.view(), cb = cd.b.view(), cc = cd.c.view();
  auto a = d.a.view(), b = d.b.view(), c = d.c.view();
  switch (k) {
    case Kernel::copy:
      for (auto _ : st)
        porta::parallel_for(
            kCpuDev, n, PORTA_LAMBDA(std::int64_t i) { c[i] = ca[i]; });
      break;
    case Kernel::mul:
      for (auto _ : st)
        porta::parallel_for(
            kCpuDev, n, PORTA_LAMBDA(std::int64_t i) { b[i] = s * cc[i]; });
      break;
    case Kernel::add:
      for (auto _ : st)
        porta::parallel_for(
            kCpuDev, n, PORTA_LAMBDA(std::int64_t i) { c[i] = ca[i] + cb[i]; });
      break;
    case Kernel::triad:
      for (auto _ : st)
        porta::parallel_for(
            kCpuDev, n, PORTA_LAMBDA(std::int64_t i) { a[i] = cb[i] + s * cc[i]; });
      break;
    case Kernel::dot:
      for (auto _ : st) {
        T r = porta::transform_reduce(
            kCpuDev, n, T(0), porta::plus{}, PORTA_LAMBDA(std::int64_t i) { return ca[i] * cb[i]; });
        benchmark::DoNotOptimize(r);
      }
      break;
    case Kernel::nstream:
      for (auto _ : st)
        porta::parallel_for(
            kCpuDev, n, PORTA_LAMBDA(std::int64_t i) { a[i] += cb[i] + s * cc[i]; });
      break;
  }
}

// ---- BabelStream's OpenMP version ----------------------------------------------------------------
// As OMPStream.cpp writes them: plain `omp parallel for` loops (no simd clause, no restrict), out of
// line so that one call's work cannot be folded into the next.
template <class T>
[[gnu::noinline]] void omp_init(T* a, T* b, T* c, std::int64_t n) {
#pragma omp parallel for
  for (std::int64_t i = 0; i < n; i++) {
    a[i] = kStartA<T>;
    b[i] = kStartB<T>;
    c[i] = kStartC<T>;
  }
}
template <class T>
[[gnu::noinline]] void omp_copy(const T* a, T* c, std::int64_t n) {
#pragma omp parallel for
  for (std::int64_t i = 0; i < n; i++) c[i] = a[i];
}
template <class T>
[[gnu::noinline]] void omp_mul(T* b, const T* c, T s, std::int64_t n) {
#pragma omp parallel for
  for (std::int64_t i = 0; i < n; i++) b[i] = s * c[i];
}
template <class T>
[[gnu::noinline]] void omp_add(const T* a, const T* b, T* c, std::int64_t n) {
#pragma omp parallel for
  for (std::int64_t i = 0; i < n; i++) c[i] = a[i] + b[i];
}
template <class T>
[[gnu::noinline]] void omp_triad(T* a, const T* b, const T* c, T s, std::int64_t n) {
#pragma omp parallel for
  for (std::int64_t i = 0; i < n; i++) a[i] = b[i] + s * c[i];
}
template <class T>
[[gnu::noinline]] T omp_dot(const T* a, const T* b, std::int64_t n) {
  T sum = 0;
#pragma omp parallel for reduction(+ : sum)
  for (std::int64_t i = 0; i < n; i++) sum += a[i] * b[i];
  return sum;
}
template <class T>
[[gnu::noinline]] void omp_nstream(T* a, const T* b, const T* c, T s, std::int64_t n) {
#pragma omp parallel for
  for (std::int64_t i = 0; i < n; i++) a[i] += b[i] + s * c[i];
}

template <class T>
struct OmpArrays {
  HostBuffer<T> a, b, c;
};

template <class T>
OmpArrays<T> make_omp_arrays(std::int64_t n) {
  // HostBuffer gives porta's kind of memory (2 MiB pages where the kernel allows them); BabelStream's
  // own initialisation then touches it in its static split.
  OmpArrays<T> d{HostBuffer<T>(n), HostBuffer<T>(n), HostBuffer<T>(n)};
  omp_init(d.a.get(), d.b.get(), d.c.get(), n);
  return d;
}

template <class T>
void run_openmp(Kernel k, OmpArrays<T>& d, std::int64_t n, benchmark::State& st) {
  const T s = kScalar<T>;
  T *a = d.a.get(), *b = d.b.get(), *c = d.c.get();
  switch (k) {
    case Kernel::copy:
      for (auto _ : st) omp_copy(a, c, n);
      break;
    case Kernel::mul:
      for (auto _ : st) omp_mul(b, c, s, n);
      break;
    case Kernel::add:
      for (auto _ : st) omp_add(a, b, c, n);
      break;
    case Kernel::triad:
      for (auto _ : st) omp_triad(a, b, c, s, n);
      break;
    case Kernel::dot:
      for (auto _ : st) {
        T r = omp_dot(a, b, n);
        benchmark::DoNotOptimize(r);
      }
      break;
    case Kernel::nstream:
      for (auto _ : st) omp_nstream(a, b, c, s, n);
      break;
  }
}

// ---- checks --------------------------------------------------------------------------------------
// The written array at a few indices against the kernel's formula on the inputs (which these
// kernels do not write), so that a case that silently computed nothing cannot report a bandwidth.
// Nstream accumulates over an iteration count the benchmark chooses, and dot is a value: both left
// to the tests.
// at(x, i): element i of array x (0: a, 1: b, 2: c).
template <class T, class At>
bool written_as_expected(Kernel k, At at, std::int64_t n) {
  const T s = kScalar<T>;
  for (std::int64_t i : {std::int64_t{0}, n / 2, n - 1}) {
    T got = 0, want = 0;
    switch (k) {
      case Kernel::copy:
        got = at(2, i), want = at(0, i);
        break;
      case Kernel::mul:
        got = at(1, i), want = s * at(2, i);
        break;
      case Kernel::add:
        got = at(2, i), want = at(0, i) + at(1, i);
        break;
      case Kernel::triad:
        got = at(0, i), want = at(1, i) + s * at(2, i);
        break;
      case Kernel::dot:
      case Kernel::nstream:
        return true;
    }
    if (!(got == want)) return false;
  }
  return true;
}

template <class T>
void babelstream_case(benchmark::State& st, Kernel k, const std::string& impl, std::int64_t n) {
  const std::string data_id = std::string("babelstream/") + dtype_name<T>() + "/" + std::to_string(n) +
                              (impl == "openmp" ? "/openmp" : "/porta");
  bool ok = true;
  if (impl == "openmp") {
    auto& d = tenant<OmpArrays<T>>(data_id, [&] { return make_omp_arrays<T>(n); });
    run_openmp<T>(k, d, n, st);
    benchmark::ClobberMemory();
    const T* arrays[] = {d.a.get(), d.b.get(), d.c.get()};
    ok = written_as_expected<T>(
        k, [&](int x, std::int64_t i) { return arrays[x][i]; }, n);
  } else {
    auto& d = tenant<PortaArrays<T>>(data_id, [&] { return make_porta_arrays<T>(n); });
    if (impl == "porta_kernel") {
      run_kernel<T>(k, d, n, st);
    } else {
      run_builtin<T>(k, d, st);
    }
    benchmark::ClobberMemory();
    const porta::Array<T>* arrays[] = {&d.a, &d.b, &d.c};
    ok = written_as_expected<T>(
        k, [&](int x, std::int64_t i) { return arrays[x]->item(i); }, n);
  }
  if (!ok) st.SkipWithError(("babelstream_" + std::string(kernel_name(k)) + ": wrong result from " + impl).c_str());
  set_bytes(st, static_cast<double>(arrays_moved(k)) * static_cast<double>(n) * sizeof(T));
}

std::vector<std::int64_t> babelstream_sizes() {
  std::vector<std::int64_t> s = vector_sizes();
  const std::int64_t babel_default = std::int64_t{1} << 25;
  if (!s.empty() && s.front() < babel_default && babel_default < s.back()) {
    std::size_t at = 0;
    while (s[at] < babel_default) ++at;
    s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), babel_default);
  }
  return s;
}

template <class T>
void register_case(Kernel k, std::int64_t n) {
  const std::string op = std::string("babelstream_") + kernel_name(k);
  for (const std::string impl : {std::string(builtin_impl(k)), std::string("porta_kernel"), std::string("openmp")}) {
    add(op, dtype_name<T>(), impl, n, [k, impl, n](benchmark::State& st, const std::string&) {
      babelstream_case<T>(st, k, impl, n);
    })->UseRealTime();
  }
}

}  // namespace

void register_cpu_babelstream() {
  for (Kernel k : kKernels) {
    if (!wanted(std::string("babelstream_") + kernel_name(k), "babelstream")) continue;
    for (std::int64_t n : babelstream_sizes()) {
      register_case<float>(k, n);
      register_case<double>(k, n);
    }
  }
}

}  // namespace porta_bench
