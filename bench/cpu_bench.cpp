// SPDX-License-Identifier: Apache-2.0
// porta on the CPU beside what a CPU user would otherwise write or link, in one run:
//
//   openmp      a plain STREAM-style loop (`#pragma omp parallel for simd`, `reduction(+:s)`): the
//               ceiling of every map and reduction
//   add3        (fourop only) the same loop for out = x + y: the three-word copy that the one-pass
//               four-operation kernel is held against
//   thrust-omp  Thrust with its OpenMP backend (cpu_thrust_peer.cpp), when CCCL's headers are there
//   kokkos      Kokkos on its default execution space (cpu_kokkos_peer.cpp), when Kokkos is found;
//               kokkos-serial when that Kokkos has only the Serial backend (one core)
//   openblas    sgemm_/dgemm_/cgemm_/zgemm_ of the BLAS that CMake found ("blas" when it is not OpenBLAS)
//   lapack      (linalg) LAPACK's getrf/getrs, potrf, syevd, gesdd called directly (linalg_cpu.cpp)
//   fftw        (fft) FFTW 3 called directly (fft_cpu.cpp), when built with PORTA_BENCH_FFTW=ON
//
// The user-kernel cases (heat, nbody, nbody_energy, reduce_expr, cg; the group "kernels") live in
// kernels_cpu.hpp, BabelStream's kernels (group "babelstream") in babelstream_cpu.cpp, sparse
// products beside a CSR loop (group "sparse") in sparse_cpu.cpp, dense solvers beside LAPACK (group
// "linalg") in linalg_cpu.cpp, Fourier transforms beside FFTW (group "fft") in fft_cpu.cpp, all
// registered from here.
//
// Sizes: PORTA_BENCH_MIN_LOG2..PORTA_BENCH_MAX_LOG2 (default 10..28, step x4), square matmul
// PORTA_BENCH_MATMUL_MIN..PORTA_BENCH_MATMUL_MAX (256..4096), tall-skinny PORTA_BENCH_TS_ROWS x 64
// (or the --porta_* flags; see common.hpp). Times are wall-clock (UseRealTime): the work is spread
// over threads, so the main thread's CPU time would say nothing.
#include <porta/kernels.hpp>
#include <porta/porta.hpp>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "babelstream.hpp"
#include "common.hpp"
#include "cpu_peers.hpp"
#include "fft_common.hpp"
#include "fused_bench.hpp"
#include "host_buffer.hpp"
#include "kernels_common.hpp"
#include "linalg_common.hpp"
#include "scan_random_bench.hpp"
#include "sort_bench.hpp"
#include "sparse_common.hpp"
#include "teams_common.hpp"

#if defined(_OPENMP)
#include <omp.h>
#define PB_OMP(directive) _Pragma(directive)
#else
#define PB_OMP(directive)
#endif

#if defined(PORTA_BENCH_HAVE_BLAS)
// The Fortran interface: every BLAS has it, and it needs no cblas.h (whose location differs between
// OpenBLAS packages).
extern "C" {
void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c,
            const int* ldc);
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc);
// COMPLEX / COMPLEX*16: interleaved pairs, the layout of porta::complex.
void cgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const porta::complex<float>* alpha, const porta::complex<float>* a, const int* lda,
            const porta::complex<float>* b, const int* ldb, const porta::complex<float>* beta, porta::complex<float>* c,
            const int* ldc);
void zgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const porta::complex<double>* alpha, const porta::complex<double>* a, const int* lda,
            const porta::complex<double>* b, const int* ldb, const porta::complex<double>* beta,
            porta::complex<double>* c, const int* ldc);
}
#endif

namespace pb = porta_bench;
using pb::Op;

namespace {

const porta::Device kCpu{porta::DeviceType::cpu, 0};

// ---- porta ----------------------------------------------------------------------------------------
template <class T>
struct PortaVectors {
  porta::Array<T> x, y, out;
};

template <class T>
PortaVectors<T> make_porta_vectors(Op op, std::int64_t n) {
  PortaVectors<T> v;
  const porta::Shape shape{n};
  if (pb::inputs_of(op) >= 1) v.x = porta::Array<T>::from(pb::host_random<T>(n, 0), shape, kCpu);
  if (pb::inputs_of(op) >= 2) v.y = porta::Array<T>::from(pb::host_random<T>(n, 1), shape, kCpu);
  if (pb::has_output(op)) v.out = porta::full<T>(shape, T(0), kCpu);  // touched before timing
  return v;
}

template <class T>
void porta_vector(benchmark::State& st, const std::string& id, Op op, std::int64_t n) {
  auto& v = pb::tenant<PortaVectors<T>>(id, [&] { return make_porta_vectors<T>(op, n); });
  T alpha = pb::kAlpha<T>;
  switch (op) {
    case Op::copy:
      for (auto _ : st) porta::copy(v.x, v.out);
      break;
    case Op::scale:
      for (auto _ : st) porta::mul(v.x, alpha, v.out);
      break;
    case Op::axpy:
      for (auto _ : st) {
        porta::axpy(alpha, v.x, v.y);
        alpha = -alpha;
      }
      break;
    case Op::fourop:
      for (auto _ : st)
        porta::map(
            v.out, PORTA_LAMBDA(T a, T b) { return pb::FourOp<T>{}(a, b); }, v.x, v.y);
      break;
    case Op::add:
      for (auto _ : st) porta::add(v.x, v.y, v.out);
      break;
    case Op::fill:
      for (auto _ : st) porta::fill(v.out, alpha);
      break;
    case Op::sum:
      for (auto _ : st) {
        T r = porta::sum(v.x);
        benchmark::DoNotOptimize(r);
      }
      break;
    case Op::dot:
      for (auto _ : st) {
        T r = porta::dot(v.x, v.y);
        benchmark::DoNotOptimize(r);
      }
      break;
    case Op::max:
      for (auto _ : st) {
        T r = porta::max(v.x);
        benchmark::DoNotOptimize(r);
      }
      break;
  }
  benchmark::ClobberMemory();
  pb::set_bytes(st, static_cast<double>(pb::words_moved(op)) * static_cast<double>(n) * sizeof(T));
}

// ---- OpenMP loops (the ceiling) ---------------------------------------------------------------
// Their buffers (host_buffer.hpp) get the same kind of memory as porta's pool and are first touched
// by the threads that later stream them.
// Out of line, so that the compiler cannot fold one iteration's work into the next.
template <class T>
[[gnu::noinline]] void omp_copy(const T* __restrict x, T* __restrict o, std::int64_t n) {
  PB_OMP("omp parallel for simd schedule(static)")
  for (std::int64_t i = 0; i < n; ++i) o[i] = x[i];
}
template <class T>
[[gnu::noinline]] void omp_scale(T a, const T* __restrict x, T* __restrict o, std::int64_t n) {
  PB_OMP("omp parallel for simd schedule(static)")
  for (std::int64_t i = 0; i < n; ++i) o[i] = a * x[i];
}
template <class T>
[[gnu::noinline]] void omp_axpy(T a, const T* __restrict x, T* __restrict y, std::int64_t n) {
  PB_OMP("omp parallel for simd schedule(static)")
  for (std::int64_t i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}
template <class T>
[[gnu::noinline]] void omp_fourop(const T* __restrict x, const T* __restrict y, T* __restrict o, std::int64_t n) {
  const pb::FourOp<T> f;
  PB_OMP("omp parallel for simd schedule(static)")
  for (std::int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
}
template <class T>
[[gnu::noinline]] void omp_add(const T* __restrict x, const T* __restrict y, T* __restrict o, std::int64_t n) {
  PB_OMP("omp parallel for simd schedule(static)")
  for (std::int64_t i = 0; i < n; ++i) o[i] = x[i] + y[i];
}
template <class T>
[[gnu::noinline]] void omp_fill(T a, T* __restrict o, std::int64_t n) {
  PB_OMP("omp parallel for simd schedule(static)")
  for (std::int64_t i = 0; i < n; ++i) o[i] = a;
}
// The reductions accumulate in accumulate_t<T>: float for 16-bit T, as porta and PyTorch do.
template <class T>
[[gnu::noinline]] T omp_sum(const T* __restrict x, std::int64_t n) {
  using A = porta::detail::accumulate_t<T>;
  A s = 0;
  PB_OMP("omp parallel for simd schedule(static) reduction(+ : s)")
  for (std::int64_t i = 0; i < n; ++i) s += A(x[i]);
  return T(s);
}
template <class T>
[[gnu::noinline]] T omp_dot(const T* __restrict x, const T* __restrict y, std::int64_t n) {
  using A = porta::detail::accumulate_t<T>;
  A s = 0;
  PB_OMP("omp parallel for simd schedule(static) reduction(+ : s)")
  for (std::int64_t i = 0; i < n; ++i) s += A(x[i]) * A(y[i]);
  return T(s);
}
template <class T>
[[gnu::noinline]] T omp_max(const T* __restrict x, std::int64_t n) {
  using A = porta::detail::accumulate_t<T>;
  A m = A(x[0]);
  PB_OMP("omp parallel for simd schedule(static) reduction(max : m)")
  for (std::int64_t i = 0; i < n; ++i) m = A(x[i]) > m ? A(x[i]) : m;
  return T(m);
}

template <class T>
void openmp_vector(benchmark::State& st, const std::string& id, Op op, std::int64_t n, bool add3) {
  const Op data_op = add3 ? Op::add : op;
  auto& v = pb::tenant<pb::HostVectors<T>>(id, [&] { return pb::make_host_vectors<T>(data_op, n); });
  T alpha = pb::kAlpha<T>;
  switch (data_op) {
    case Op::copy:
      for (auto _ : st) omp_copy(v.x.get(), v.out.get(), n);
      break;
    case Op::scale:
      for (auto _ : st) omp_scale(alpha, v.x.get(), v.out.get(), n);
      break;
    case Op::axpy:
      for (auto _ : st) {
        omp_axpy(alpha, v.x.get(), v.y.get(), n);
        alpha = -alpha;
      }
      break;
    case Op::fourop:
      for (auto _ : st) omp_fourop(v.x.get(), v.y.get(), v.out.get(), n);
      break;
    case Op::add:
      for (auto _ : st) omp_add(v.x.get(), v.y.get(), v.out.get(), n);
      break;
    case Op::fill:
      for (auto _ : st) omp_fill(alpha, v.out.get(), n);
      break;
    case Op::sum:
      for (auto _ : st) {
        T r = omp_sum(v.x.get(), n);
        benchmark::DoNotOptimize(r);
      }
      break;
    case Op::dot:
      for (auto _ : st) {
        T r = omp_dot(v.x.get(), v.y.get(), n);
        benchmark::DoNotOptimize(r);
      }
      break;
    case Op::max:
      for (auto _ : st) {
        T r = omp_max(v.x.get(), n);
        benchmark::DoNotOptimize(r);
      }
      break;
  }
  benchmark::ClobberMemory();
  // add3 is charged for the fourop's three words: the same count, so the ratio is one of time.
  pb::set_bytes(st, static_cast<double>(pb::words_moved(op)) * static_cast<double>(n) * sizeof(T));
}

// ---- matmul ------------------------------------------------------------------------------------
struct MatmulShape {
  std::int64_t m, k, n;
};

template <class T>
struct PortaMatrices {
  porta::Array<T> a, b, c;
};

template <class T>
void porta_matmul(benchmark::State& st, const std::string& id, MatmulShape s, porta::GemmAlgorithm algorithm) {
  auto& p = pb::tenant<PortaMatrices<T>>(id, [&] {
    PortaMatrices<T> r;
    r.a = porta::Array<T>::from(pb::host_random<T>(s.m * s.k, 0), porta::Shape{s.m, s.k}, kCpu);
    r.b = porta::Array<T>::from(pb::host_random<T>(s.k * s.n, 1), porta::Shape{s.k, s.n}, kCpu);
    r.c = porta::full<T>(porta::Shape{s.m, s.n}, T(0), kCpu);
    return r;
  });
  porta::MatmulOptions options;
  options.algorithm = algorithm;
  for (auto _ : st) porta::gemm(T(1), p.a, false, p.b, false, T(0), p.c, options);
  benchmark::ClobberMemory();
  pb::set_flops(st, pb::gemm_flops<T>(s.m, s.n, s.k));
}

#if defined(PORTA_BENCH_HAVE_BLAS)
template <class T>
void blas_gemm(int m, int n, int k, const T* a, const T* b, T* c) {
  // Row-major C = A B is column-major C^T = B^T A^T: the same call with the operands swapped.
  const char no = 'N';
  const T one = 1, zero = 0;
  if constexpr (std::is_same_v<T, float>) {
    sgemm_(&no, &no, &n, &m, &k, &one, b, &n, a, &k, &zero, c, &n);
  } else if constexpr (std::is_same_v<T, double>) {
    dgemm_(&no, &no, &n, &m, &k, &one, b, &n, a, &k, &zero, c, &n);
  } else if constexpr (std::is_same_v<T, porta::complex<float>>) {
    cgemm_(&no, &no, &n, &m, &k, &one, b, &n, a, &k, &zero, c, &n);
  } else {
    zgemm_(&no, &no, &n, &m, &k, &one, b, &n, a, &k, &zero, c, &n);
  }
}

template <class T>
void blas_matmul(benchmark::State& st, const std::string& id, MatmulShape s) {
  auto& v = pb::tenant<pb::HostVectors<T>>(id, [&] {
    pb::HostVectors<T> r;
    r.x = pb::HostBuffer<T>(s.m * s.k, pb::host_random<T>(s.m * s.k, 0));
    r.y = pb::HostBuffer<T>(s.k * s.n, pb::host_random<T>(s.k * s.n, 1));
    r.out = pb::HostBuffer<T>(s.m * s.n);
    return r;
  });
  for (auto _ : st)
    blas_gemm<T>(static_cast<int>(s.m), static_cast<int>(s.n), static_cast<int>(s.k), v.x.get(), v.y.get(),
                 v.out.get());
  benchmark::ClobberMemory();
  pb::set_flops(st, pb::gemm_flops<T>(s.m, s.n, s.k));
}
#endif

// ---- registration ------------------------------------------------------------------------------
// One case = (label, dtype, n): porta first, then each peer, back to back.
template <class T>
void register_vector_case(const std::string& label, Op op, std::int64_t n, bool latency) {
  constexpr bool f64 = std::is_same_v<T, double>;
  const char* dt = pb::dtype_name<T>();
  std::vector<benchmark::internal::Benchmark*> added;
  added.push_back(pb::add(label, dt, "porta", n,
                          [op, n](benchmark::State& st, const std::string& id) { porta_vector<T>(st, id, op, n); }));
  added.push_back(pb::add(label, dt, "openmp", n, [op, n](benchmark::State& st, const std::string& id) {
    openmp_vector<T>(st, id, op, n, false);
  }));
  if (op == Op::fourop) {
    added.push_back(pb::add(label, dt, "add3", n, [op, n](benchmark::State& st, const std::string& id) {
      openmp_vector<T>(st, id, op, n, true);
    }));
  }
  if constexpr (!porta::is_half_v<T>) {  // their cases are float and double
#if defined(PORTA_BENCH_HAVE_THRUST)
    added.push_back(pb::thrust_omp_register(op, f64, n, label));
#endif
#if defined(PORTA_BENCH_HAVE_KOKKOS)
    added.push_back(pb::kokkos_register(op, f64, n, label));
#endif
  }
  (void)f64;
  for (auto* b : added) {
    if (!b) continue;
    b->UseRealTime();
    if (latency) b->Unit(benchmark::kMicrosecond);
  }
}

template <class T>
void register_matmul_case(const std::string& label, MatmulShape s, std::int64_t size) {
  const char* dt = pb::dtype_name<T>();
  std::vector<benchmark::internal::Benchmark*> added;
  added.push_back(pb::add(label, dt, "porta", size, [s](benchmark::State& st, const std::string& id) {
    porta_matmul<T>(st, id, s, porta::GemmAlgorithm::vendor);
  }));
  added.push_back(pb::add(label, dt, "porta_own", size, [s](benchmark::State& st, const std::string& id) {
    porta_matmul<T>(st, id, s, porta::GemmAlgorithm::own);
  }));
#if defined(PORTA_BENCH_HAVE_BLAS)
  // BLAS has no 16-bit gemm (OpenBLAS's sbgemm is optional): the peer is sgemm of float copies.
  using B = porta::detail::accumulate_t<T>;
  added.push_back(pb::add(label, dt, porta::is_half_v<T> ? PORTA_BENCH_BLAS_NAME "-f32" : PORTA_BENCH_BLAS_NAME, size,
                          [s](benchmark::State& st, const std::string& id) { blas_matmul<B>(st, id, s); }));
#endif
  for (auto* b : added) b->UseRealTime()->Unit(benchmark::kMillisecond);
}

void register_all() {
  const auto sizes = pb::vector_sizes();
  for (Op op : pb::kMapOps) {
    if (!pb::wanted(pb::op_name(op), "map")) continue;
    for (std::int64_t n : sizes) {
      register_vector_case<float>(pb::op_name(op), op, n, false);
      register_vector_case<double>(pb::op_name(op), op, n, false);
    }
  }
  for (Op op : pb::kReduceOps) {
    if (!pb::wanted(pb::op_name(op), "reduce")) continue;
    for (std::int64_t n : sizes) {
      register_vector_case<float>(pb::op_name(op), op, n, false);
      register_vector_case<double>(pb::op_name(op), op, n, false);
    }
  }
  // 16-bit arrays beside the OpenMP loop over porta::float16 / bfloat16 elements (float accumulators).
  for (Op op : {Op::copy, Op::scale, Op::axpy, Op::add, Op::sum, Op::dot, Op::max}) {
    if (!pb::wanted(pb::op_name(op), "half")) continue;
    for (std::int64_t n : sizes) {
      register_vector_case<porta::float16>(std::string("half_") + pb::op_name(op), op, n, false);
      register_vector_case<porta::bfloat16>(std::string("half_") + pb::op_name(op), op, n, false);
    }
  }
  if (pb::wanted("matmul_half", "matmul")) {
    for (std::int64_t n : pb::matmul_sizes()) {
      register_matmul_case<porta::float16>("matmul", MatmulShape{n, n, n}, n);
      register_matmul_case<porta::bfloat16>("matmul", MatmulShape{n, n, n}, n);
    }
  }
  if (pb::wanted("matmul", "matmul")) {
    for (std::int64_t n : pb::matmul_sizes()) {
      register_matmul_case<float>("matmul", MatmulShape{n, n, n}, n);
      register_matmul_case<double>("matmul", MatmulShape{n, n, n}, n);
    }
  }
  if (pb::wanted("matmul_complex", "matmul")) {
    for (std::int64_t n : pb::matmul_sizes()) {
      register_matmul_case<porta::complex<float>>("matmul", MatmulShape{n, n, n}, n);
      register_matmul_case<porta::complex<double>>("matmul", MatmulShape{n, n, n}, n);
    }
  }
  if (pb::wanted("matmul_ts", "matmul")) {
    const MatmulShape ts{pb::limits().ts_rows, pb::limits().ts_cols, pb::limits().ts_cols};
    register_matmul_case<float>("matmul_ts", ts, ts.m);
    register_matmul_case<double>("matmul_ts", ts, ts.m);
  }
  // Latency: what one call costs the host. One element measures the call itself (argument checks,
  // dispatch through the backend table); 2^10 and 2^16 are the small calls of a time-stepping loop.
  if (pb::wanted("latency_fill", "latency")) register_vector_case<float>("latency_fill", Op::fill, 1, true);
  if (pb::wanted("latency_add", "latency")) register_vector_case<float>("latency_add", Op::add, 1, true);
  for (std::int64_t n : {std::int64_t{1} << 10, std::int64_t{1} << 16}) {
    if (pb::wanted("latency_sum", "latency")) register_vector_case<float>("latency_sum", Op::sum, n, true);
    if (pb::wanted("latency_axpy", "latency")) register_vector_case<float>("latency_axpy", Op::axpy, n, true);
  }
  // User kernels (kernels_cpu.hpp): heat, nbody, nbody_energy, reduce_expr, cg; group "kernels".
  pb::register_cpu_kernels_cxx();
  // Sorting (sort_bench.hpp): group "sort".
  pb::register_cpu_sort();
  // Scans and random numbers (scan_random_bench.hpp): groups "scan", "random".
  pb::register_cpu_scan_random();
  // Fused expressions (fused_bench.hpp): group "fused".
  pb::register_cpu_fused();
  // BabelStream's kernels: built-ins, user kernels, BabelStream's OpenMP loops (babelstream.hpp).
  pb::register_cpu_babelstream();
  // Team launches (teams_common.hpp): group "teams".
  pb::register_cpu_teams();
  // Sparse products of the 2-D Poisson matrix beside an OpenMP CSR loop (sparse_common.hpp): group "sparse".
  pb::register_cpu_sparse();
  // Dense solvers beside LAPACK called directly (linalg_common.hpp): group "linalg".
  pb::register_cpu_linalg();
  // Fourier transforms beside FFTW called directly, when it is built in (fft_common.hpp): group "fft".
  pb::register_cpu_fft();
#if defined(PORTA_BENCH_HAVE_NVCC_KERNELS)
  pb::register_cpu_kernels_nvcc();
#endif
}

void add_context() {
  auto safe = [](auto f) -> std::string {
    try {
      return f();
    } catch (const std::exception& e) {
      return std::string("unknown (") + e.what() + ")";
    }
  };
  benchmark::AddCustomContext("porta_bench", "cpu");
  benchmark::AddCustomContext("porta_device", safe([] { return porta::describe(kCpu); }));
  benchmark::AddCustomContext("porta_build", safe([] { return porta::build_info(); }));
  // The BLAS, the core OpenBLAS runs, and whether porta's float/double gemm uses it or its own kernel
  // (the `porta` matmul cases): run once plainly and once with OPENBLAS_CORETYPE=Prescott, the
  // generic core OpenBLAS falls back to on CPU models it does not know, which porta leaves alone.
  benchmark::AddCustomContext("cpu_blas", safe([] {
                                for (const porta::BackendStatus& b : porta::backend_status())
                                  if (b.type == porta::DeviceType::cpu) return b.build_info;
                                return std::string();
                              }));
#if defined(_OPENMP)
  benchmark::AddCustomContext("openmp_threads", std::to_string(omp_get_max_threads()));
#else
  benchmark::AddCustomContext("openmp_threads", "none (built without OpenMP)");
#endif
  std::string peers = "openmp, add3";
#if defined(PORTA_BENCH_HAVE_BLAS)
  peers += std::string(", ") + PORTA_BENCH_BLAS_NAME;
#endif
#if defined(PORTA_BENCH_HAVE_LAPACK)
  peers += ", lapack";
#endif
#if defined(PORTA_BENCH_HAVE_FFTW)
  peers += ", fftw";
#endif
#if defined(PORTA_BENCH_HAVE_THRUST)
  peers += ", thrust-omp";
  benchmark::AddCustomContext("thrust_version", pb::thrust_omp_version());
#endif
#if defined(PORTA_BENCH_HAVE_KOKKOS)
  peers += ", " PORTA_BENCH_KOKKOS_NAME;
  benchmark::AddCustomContext(PORTA_BENCH_KOKKOS_NAME, pb::kokkos_description());
#endif
  benchmark::AddCustomContext("porta_peers", peers);
  pb::add_sizes_context();
  pb::add_kernel_sizes_context();
}

}  // namespace

int main(int argc, char** argv) {
  pb::parse_limits(&argc, argv, /*default_matmul_max=*/4096);
  // Pools keep freed blocks; hand them back between cases so that one large case at a time fits.
  pb::tenant_slot().on_evict.push_back([] {
    try {
      porta::empty_cache(kCpu);
    } catch (...) {
    }
  });
#if defined(PORTA_BENCH_HAVE_KOKKOS)
  pb::kokkos_initialize(&argc, argv);
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  add_context();
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  pb::evict_tenant();  // before Kokkos goes, its Views must
  benchmark::Shutdown();
#if defined(PORTA_BENCH_HAVE_KOKKOS)
  pb::kokkos_finalize();
#endif
  return 0;
}
