// SPDX-License-Identifier: Apache-2.0
// Fused expressions on the CPU (issue 16) beside the eager operators and an OpenMP loop of the same
// formula. Names, bytes, impls and the group: fused_bench.hpp.
#include <benchmark/benchmark.h>
#include <porta/fuse.hpp>
#include <porta/porta.hpp>
#include <porta/rtc.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common.hpp"
#include "fused_bench.hpp"
#include "host_buffer.hpp"

namespace porta_bench {
namespace {

const porta::Device kCpuDevice{porta::DeviceType::cpu, 0};

// Inputs (x, y for the chain; spot, strike, years for Black-Scholes) and the output, as porta
// arrays and as host buffers for the loop.
template <class T>
struct FusedData {
  porta::Array<T> a, b, c, out, d1;
  HostBuffer<T> ha, hb, hc, hout;
};

template <class T>
FusedData<T> make_fused_data(std::int64_t n, bool bs) {
  FusedData<T> d;
  std::vector<T> a(host_random<T>(n, 0), host_random<T>(n, 0) + n), b(host_random<T>(n, 1), host_random<T>(n, 1) + n);
  std::vector<T> c(host_random<T>(n, 2), host_random<T>(n, 2) + n);
  if (bs) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = bs_spot(a[i]);
      b[i] = bs_spot(b[i]);
      c[i] = bs_years(c[i]);
    }
    d.c = porta::Array<T>::from(c, kCpuDevice);
    d.hc = HostBuffer<T>(n, c.data());
    d.d1 = porta::full<T>(porta::Shape{n}, T(0), kCpuDevice);
  }
  d.a = porta::Array<T>::from(a, kCpuDevice);
  d.b = porta::Array<T>::from(b, kCpuDevice);
  d.out = porta::full<T>(porta::Shape{n}, T(0), kCpuDevice);
  d.ha = HostBuffer<T>(n, a.data());
  d.hb = HostBuffer<T>(n, b.data());
  d.hout = HostBuffer<T>(n);
  return d;
}

template <class T>
[[gnu::noinline]] void omp_chain(const T* x, const T* y, T* o, std::int64_t n) {
  const FourOp<T> f;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
}

template <class T>
[[gnu::noinline]] void omp_bs(const T* s, const T* k, const T* t, T* o, std::int64_t n) {
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) o[i] = bs_call(s[i], k[i], t[i]);
}

template <class T>
void fused_case(benchmark::State& st, const std::string& id, const std::string& impl, bool bs, std::int64_t n) {
  auto& d = tenant<FusedData<T>>(id, [&] { return make_fused_data<T>(n, bs); });
  if (impl == "openmp") {
    for (auto _ : st) {
      if (bs) {
        omp_bs(d.ha.get(), d.hb.get(), d.hc.get(), d.hout.get(), n);
      } else {
        omp_chain(d.ha.get(), d.hb.get(), d.hout.get(), n);
      }
      benchmark::ClobberMemory();
    }
  } else if (impl == "porta_eager") {
    for (auto _ : st) {
      if (bs) {
        d.out = bs_price<T>(d.a, d.b, d.c, bs_d1<T>(d.a, d.b, d.c));
      } else {
        d.out = porta::sin(d.a) * porta::cos(d.b) + d.a * d.b;
      }
      benchmark::DoNotOptimize(d.out.data());
    }
  } else {
    if (impl == "porta_jit" && !porta::rtc::unavailable_reason(d.a.device()).empty()) {
      st.SkipWithError(porta::rtc::unavailable_reason(d.a.device()).c_str());
      return;
    }
    const FuseModeScope mode(impl == "porta_jit" ? "jit" : nullptr);
    const auto x = porta::lazy(d.a), y = porta::lazy(d.b);
    const auto run = [&] {
      if (bs) {
        const auto t = porta::lazy(d.c);
        d.d1.assign(bs_d1<T>(x, y, t));
        d.out.assign(bs_price<T>(x, y, t, porta::lazy(d.d1)));
      } else {
        d.out.assign(porta::sin(x) * porta::cos(y) + x * y);
      }
    };
    run();  // a generated kernel compiles here, not in the timing
    for (auto _ : st) {
      run();
      benchmark::DoNotOptimize(d.out.data());
    }
  }
  set_bytes(st, (bs ? 4.0 : 3.0) * static_cast<double>(n) * sizeof(T));
}

template <class T>
void register_dtype(std::int64_t n) {
  const char* dt = dtype_name<T>();
  for (const bool bs : {false, true}) {
    const std::string op = bs ? "fused_bs" : "fused_chain";
    if (!wanted(op, "fused")) continue;
    for (const char* impl : {"porta", "porta_jit", "porta_eager", "openmp"}) {
      const std::string im = impl;
      add(op, dt, im, n, [im, bs, n](benchmark::State& st, const std::string& id) {
        fused_case<T>(st, id, im, bs, n);
      })->UseRealTime();
    }
  }
}

}  // namespace

void register_cpu_fused() {
  for (std::int64_t n : fused_sizes()) {
    register_dtype<float>(n);
    register_dtype<double>(n);
  }
}

}  // namespace porta_bench
