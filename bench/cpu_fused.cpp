// SPDX-License-Identifier: Apache-2.0
// Fused expressions on the CPU beside the eager operators and an OpenMP loop of the same
// formula, and porta's math functions (exp, log, sin, cos, tanh: group "math") beside the libm loop
// ("openmp": scalar glibc through a pointer) and glibc's vector functions ("libmvec", cpu_libmvec.cpp).
// Names, bytes, impls and the group: fused_bench.hpp.
#include <benchmark/benchmark.h>
#include <porta/fuse.hpp>
#include <porta/porta.hpp>
#include <porta/rtc.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "cpu_libmvec.hpp"
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

// ---- porta's math functions against the libm loop ------------------------------------------------
// math_<fn>/<dtype>/porta: the eager map (porta/detail/math.hpp, vectorised); .../openmp: an OpenMP
// loop calling the C library's function per element, what the CPU backend ran before. Inputs are in
// [-4, 4) ([0, 2) + 2^-10 for log): the fast paths, where applications spend their time.
template <class T>
struct MathFn {
  const char* name;
  void (*porta)(const porta::Array<T>&, porta::Array<T>&, const porta::Stream&);
  T (*libm)(T);
  bool positive;
};

template <class T>
std::vector<MathFn<T>> math_fns() {
  return {{"exp", &porta::exp<T>, [](T v) { return std::exp(v); }, false},
          {"log", &porta::log<T>, [](T v) { return std::log(v); }, true},
          {"sin", &porta::sin<T>, [](T v) { return std::sin(v); }, false},
          {"cos", &porta::cos<T>, [](T v) { return std::cos(v); }, false},
          {"tanh", &porta::tanh<T>, [](T v) { return std::tanh(v); }, false}};
}

template <class T>
struct MathData {
  porta::Array<T> x, out;
  HostBuffer<T> hx, hout;
};

template <class T>
[[gnu::noinline]] void omp_libm(T (*f)(T), const T* x, T* o, std::int64_t n) {
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) o[i] = f(x[i]);
}

enum class MathImpl { porta, openmp, libmvec };

template <class T>
void math_case(benchmark::State& st, const std::string& id, const MathFn<T>& fn, MathImpl impl, std::int64_t n) {
  auto& d = tenant<MathData<T>>(id, [&] {
    MathData<T> m;
    std::vector<T> x(host_random<T>(n, 0), host_random<T>(n, 0) + n);
    for (T& v : x) v = fn.positive ? v + T(1) + T(1.0 / 1024) : v * T(4);
    m.x = porta::Array<T>::from(x, kCpuDevice);
    m.out = porta::full<T>(porta::Shape{n}, T(0), kCpuDevice);
    m.hx = HostBuffer<T>(n, x.data());
    m.hout = HostBuffer<T>(n);
    return m;
  });
  for (auto _ : st) {
    if (impl == MathImpl::porta) {
      fn.porta(d.x, d.out, porta::Stream());
      benchmark::DoNotOptimize(d.out.data());
    } else if (impl == MathImpl::openmp) {
      omp_libm(fn.libm, d.hx.get(), d.hout.get(), n);
      benchmark::ClobberMemory();
    } else {
#if defined(PORTA_BENCH_HAVE_LIBMVEC)
      libmvec_map<T>(fn.name, d.hx.get(), d.hout.get(), n);
#endif
      benchmark::ClobberMemory();
    }
  }
  set_bytes(st, 2.0 * static_cast<double>(n) * sizeof(T));
}

template <class T>
void register_math(std::int64_t n) {
  for (const MathFn<T>& fn : math_fns<T>()) {
    const std::string op = std::string("math_") + fn.name;
    if (!wanted(op, "math")) continue;
    std::vector<std::pair<const char*, MathImpl>> impls = {{"porta", MathImpl::porta}, {"openmp", MathImpl::openmp}};
#if defined(PORTA_BENCH_HAVE_LIBMVEC)
    impls.push_back({"libmvec", MathImpl::libmvec});
#endif
    for (const auto& [name, impl] : impls) {
      add(op, dtype_name<T>(), name, n, [fn, impl = impl, n](benchmark::State& st, const std::string& id) {
        math_case<T>(st, id, fn, impl, n);
      })->UseRealTime();
    }
  }
}

}  // namespace

void register_cpu_fused() {
  for (std::int64_t n : fused_sizes()) {
    register_dtype<float>(n);
    register_dtype<double>(n);
    register_math<float>(n);
    register_math<double>(n);
  }
}

}  // namespace porta_bench
