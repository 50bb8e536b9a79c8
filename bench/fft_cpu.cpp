// SPDX-License-Identifier: Apache-2.0
// The fft cases on the CPU (fft_common.hpp says what runs): porta::fft as a user writes it
// ("porta"), beside FFTW 3 called directly ("fftw") when the benchmark is built with
// PORTA_BENCH_FFTW=ON and finds it. FFTW is GPL: it is a peer of this executable only, which is
// never installed, and never linked into libporta. Without it the group runs porta alone.
//
// The FFTW peer is what a user holding the same interleaved arrays writes: fftw(f)_plan_many_dft /
// _dft_r2c over the same row-major lengths and batch, out of place, in memory of porta's kind
// (host_buffer.hpp), planned once outside the timing with FFTW_MEASURE (PORTA_BENCH_FFTW_PLANNER=
// estimate or patient picks another planner; the plan is made before the input is written, since
// measuring overwrites the arrays) and with fftw_plan_with_nthreads(omp_get_max_threads()) when
// FFTW's OpenMP (or pthreads) library is there; then fftw_execute. ifft_c2c is run twice: "fftw"
// multiplies the result by 1/n in an OpenMP loop after the execute (numpy's norm "backward", what
// porta returns), "fftw_unscaled" stops at FFTW's own unnormalised inverse.
//
// Before timing, FFTW's result is checked against the DFT sums (fft_common.hpp) and porta's whole
// result is compared with FFTW's.
#include <porta/fft.hpp>
#include <porta/porta.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "fft_common.hpp"
#include "host_buffer.hpp"
#include "kernels_common.hpp"

#if defined(_OPENMP)
#include <omp.h>
#define PBF_OMP(directive) _Pragma(directive)
#else
#define PBF_OMP(directive)
#endif

#if defined(PORTA_BENCH_HAVE_FFTW)
#include <fftw3.h>
#endif

namespace porta_bench_fft_cpu {

namespace pb = porta_bench;
namespace pf = porta_bench_fft;

const porta::Device kCpu{porta::DeviceType::cpu, 0};

#if defined(PORTA_BENCH_HAVE_FFTW)
// The double and float libraries under one name each.
template <class T>
struct Fftw;
template <>
struct Fftw<double> {
  using Plan = fftw_plan;
  static Plan dft(int rank, const int* n, int howmany, double* in, int idist, double* out, int odist, int sign,
                  unsigned flags) {
    return fftw_plan_many_dft(rank, n, howmany, reinterpret_cast<fftw_complex*>(in), nullptr, 1, idist,
                              reinterpret_cast<fftw_complex*>(out), nullptr, 1, odist, sign, flags);
  }
  static Plan r2c(int rank, const int* n, int howmany, double* in, int idist, double* out, int odist, unsigned flags) {
    return fftw_plan_many_dft_r2c(rank, n, howmany, in, nullptr, 1, idist, reinterpret_cast<fftw_complex*>(out),
                                  nullptr, 1, odist, flags);
  }
  static void execute(Plan p) { fftw_execute(p); }
  static void destroy(Plan p) { fftw_destroy_plan(p); }
};
template <>
struct Fftw<float> {
  using Plan = fftwf_plan;
  static Plan dft(int rank, const int* n, int howmany, float* in, int idist, float* out, int odist, int sign,
                  unsigned flags) {
    return fftwf_plan_many_dft(rank, n, howmany, reinterpret_cast<fftwf_complex*>(in), nullptr, 1, idist,
                               reinterpret_cast<fftwf_complex*>(out), nullptr, 1, odist, sign, flags);
  }
  static Plan r2c(int rank, const int* n, int howmany, float* in, int idist, float* out, int odist, unsigned flags) {
    return fftwf_plan_many_dft_r2c(rank, n, howmany, in, nullptr, 1, idist, reinterpret_cast<fftwf_complex*>(out),
                                   nullptr, 1, odist, flags);
  }
  static void execute(Plan p) { fftwf_execute(p); }
  static void destroy(Plan p) { fftwf_destroy_plan(p); }
};

struct Planner {
  unsigned flags = FFTW_MEASURE;
  std::string name = "measure";
};

inline const Planner& planner() {
  static const Planner p = [] {
    Planner r;
    const char* e = std::getenv("PORTA_BENCH_FFTW_PLANNER");
    const std::string v = e ? e : "";
    if (v == "estimate") {
      r.flags = FFTW_ESTIMATE;
      r.name = v;
    } else if (v == "patient") {
      r.flags = FFTW_PATIENT;
      r.name = v;
    } else if (!v.empty() && v != "measure") {
      std::fprintf(stderr, "porta bench: ignoring PORTA_BENCH_FFTW_PLANNER=%s (estimate, measure or patient)\n", e);
    }
    return r;
  }();
  return p;
}

// FFTW's threads: as many as porta's CPU backend and the OpenMP peers use.
inline int fftw_threads() {
#if defined(PORTA_BENCH_FFTW_THREADS) && defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void fftw_setup() {
#if defined(PORTA_BENCH_FFTW_THREADS) && defined(_OPENMP)
  if (fftw_init_threads() == 0 || fftwf_init_threads() == 0) throw std::runtime_error("fftw_init_threads failed");
  fftw_plan_with_nthreads(fftw_threads());
  fftwf_plan_with_nthreads(fftw_threads());
#endif
}

// Held by pointer in the tenant: the plan is destroyed once, before the arrays it was made for.
template <class T>
struct FftwRun {
  pf::FftCase c;
  pb::HostBuffer<T> x, y;
  typename Fftw<T>::Plan plan = nullptr;
  bool scaled = false;  // ifft: y *= 1 / n after the execute

  FftwRun() = default;
  FftwRun(const FftwRun&) = delete;
  FftwRun& operator=(const FftwRun&) = delete;
  ~FftwRun() {
    if (plan) Fftw<T>::destroy(plan);
  }
};

template <class T>
[[gnu::noinline]] void scale_by(T* __restrict y, T s, std::int64_t n) {
  PBF_OMP("omp parallel for simd schedule(static)")
  for (std::int64_t i = 0; i < n; ++i) y[i] *= s;
}

template <class T>
void fftw_call(FftwRun<T>& d) {
  Fftw<T>::execute(d.plan);
  if (d.scaled) scale_by(d.y.get(), static_cast<T>(1.0 / static_cast<double>(d.c.points())), d.c.out_elems());
}

template <class T>
std::unique_ptr<FftwRun<T>> make_fftw(const std::string& id, const pf::FftCase& c, bool scaled) {
  pf::HostFft<T>& h = pf::host_fft<T>(c);
  auto d = std::make_unique<FftwRun<T>>();
  d->c = c;
  d->scaled = scaled && c.inverse();
  d->x = pb::HostBuffer<T>(c.in_elems());
  d->y = pb::HostBuffer<T>(c.out_elems());
  int n[3] = {};
  for (int a = 0; a < c.rank; ++a) n[a] = static_cast<int>(c.n[a]);
  const int howmany = static_cast<int>(c.batch), idist = static_cast<int>(c.points()),
            odist = static_cast<int>(c.out_points());
  const unsigned flags = planner().flags;
  d->plan = c.real() ? Fftw<T>::r2c(c.rank, n, howmany, d->x.get(), idist, d->y.get(), odist, flags)
                     : Fftw<T>::dft(c.rank, n, howmany, d->x.get(), idist, d->y.get(), odist,
                                    c.inverse() ? FFTW_BACKWARD : FFTW_FORWARD, flags);
  if (!d->plan) throw std::runtime_error(id + ": FFTW made no plan");
  T* x = d->x.get();
  const T* src = h.x.data();
  PBF_OMP("omp parallel for schedule(static)")
  for (std::int64_t i = 0; i < c.in_elems(); ++i) x[i] = src[i];
  fftw_call(*d);
  if (d->scaled || !c.inverse()) {
    pf::expect_fft(id, h, d->y.get());
  } else {
    // The unnormalised inverse is n times numpy's.
    std::vector<T> y(d->y.get(), d->y.get() + c.out_elems());
    scale_by(y.data(), static_cast<T>(1.0 / static_cast<double>(c.points())), c.out_elems());
    pf::expect_fft(id, h, y.data());
  }
  return d;
}
#endif

template <class T>
pf::PortaFft<T> make_porta(const std::string& id, const pf::FftCase& c) {
  pf::PortaFft<T> d = pf::make_porta_fft<T>(id, c, kCpu, porta::Stream());
#if defined(PORTA_BENCH_HAVE_FFTW)
  const std::unique_ptr<FftwRun<T>> p = make_fftw<T>(id + " (fftw)", c, true);
  pb::expect_close(id, d.y.to_vector().data(), p->y.get(), c.out_elems(), pf::fft_tolerance<T>());
#endif
  return d;
}

template <class T>
void register_case(const pf::FftCase& c) {
  const char* dt = pb::dtype_name<T>();
  const double bytes = c.bytes(sizeof(T));
  pb::configure_cpu(pb::add(c.op, dt, "porta", c.size, [=](benchmark::State& st, const std::string& id) {
    pb::timed<pf::PortaFft<T>>(
        st, id, [&] { return make_porta<T>(id, c); }, [](pf::PortaFft<T>& d) { pf::porta_fft(d, porta::Stream()); });
    pb::set_bytes(st, bytes);
  }));
#if defined(PORTA_BENCH_HAVE_FFTW)
  for (const bool scaled : {true, false}) {
    if (!scaled && !c.inverse()) continue;
    const std::string impl = scaled ? "fftw" : "fftw_unscaled";
    pb::configure_cpu(pb::add(c.op, dt, impl, c.size, [=](benchmark::State& st, const std::string& id) {
      pb::timed<std::unique_ptr<FftwRun<T>>>(
          st, id, [&] { return make_fftw<T>(id, c, scaled); }, [](std::unique_ptr<FftwRun<T>>& d) { fftw_call(*d); });
      pb::set_bytes(st, bytes);
    }));
  }
#endif
}

void register_all() {
  const std::vector<pf::FftCase> cases = pf::fft_cases();
  if (cases.empty()) return;
  pf::add_fft_context(cases);
#if defined(PORTA_BENCH_HAVE_FFTW)
  fftw_setup();
  benchmark::AddCustomContext("fftw", std::string(fftw_version) + ", planner " + planner().name + ", " +
                                          std::to_string(fftw_threads()) + " threads");
#endif
  for (const pf::FftCase& c : cases) {
    register_case<float>(c);
    register_case<double>(c);
  }
}

}  // namespace porta_bench_fft_cpu

void porta_bench::register_cpu_fft() {
  porta_bench_fft_cpu::register_all();
}
