// SPDX-License-Identifier: Apache-2.0
// The user-kernel benchmarks: one definition of each computation, shared by porta's
// kernels (as a functor or called from a PORTA_LAMBDA) and by the peer that a user would otherwise
// write (an OpenMP loop on the CPU, a hand-written CUDA kernel on the GPU), so that a ratio measures
// how the work is run, never two slightly different bodies. Also: the sizes of these cases and the
// check that every porta case computes what its peer computes.
//
//   op             what                                                   counted as
//   heat_1d        one Jacobi sweep of the 5-point heat stencil, n x n,   2 words per cell
//                  one index over all cells (i / n, i % n), boundary
//                  cells skipped
//   heat_2d        the same sweep over the 2-D interior range             2 words per cell
//   nbody          all-pairs gravitational accelerations, softened,       20 FLOP per pair
//                  float, structure of arrays
//   nbody_energy   the potential energy of the same bodies: a reduction   12 FLOP per pair
//                  (double) of a per-body float sum over all bodies
//   reduce_expr    sum of sqrt(x[i]^2 + y[i]^2), double                   2 words per element
//   cg             one conjugate-gradient iteration, dense n x n SPD      n^2 + 10n words
//                  matrix: matvec, 2 dots, 2 axpys and p = r + beta p
//   guide_axpy     y = a x + y over porta::range(n), float and double     3 words per element
//   guide_jacobi   the guide's Jacobi sweep over Range<2>'s interior,      2 words per cell
//                  n x n, float and double
//   guide_stencil3d  a 7-point sweep over Range<3>'s interior, n^3,        2 words per cell
//                  float and double
//
// The guide_ cases are the kernels as docs/guide.md writes them: the body indexes porta::Views
// (v[i], v(i, j)) captured by a PORTA_LAMBDA ("porta"), a functor holding Views ("porta_functor")
// or a PORTA_KERNEL ("porta_kernel_macro"), beside the OpenMP loop nest over raw pointers that a
// user would write instead ("openmp"). heat_1d and heat_2d are the same stencil with a body that
// takes raw pointers (heat_point): kept as an extra, not the documented form.
//
// The CPU cases are registered twice: from a plain C++ translation unit (kernels_cpu.cpp) and,
// when CUDA is built, from one compiled by nvcc (kernels_cpu_nvcc.cu; ops get the suffix _nvcc),
// where PORTA_LAMBDA is an extended __host__ __device__ lambda.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "common.hpp"
#include "porta/array.hpp"

// An `omp simd` reduction inside a body shared with device code: the host compiler sees it, the
// device pass does not.
#if defined(_OPENMP) && !defined(__CUDA_ARCH__)
#define PB_SIMD_REDUCTION(...) _Pragma(PB_STRINGIFY(omp simd reduction(+ : __VA_ARGS__)))
#else
#define PB_SIMD_REDUCTION(...)
#endif
#define PB_STRINGIFY(...) #__VA_ARGS__

namespace porta_bench {

// ---- sizes ---------------------------------------------------------------------------------------
// The full sizes (heat 2048 x 2048, 16384 bodies, CG at n = 4096, reductions of 2^20..2^24),
// shrunk with the run's largest vector and matrix sizes so that the smoke run (2^12, matmul 256)
// stays tiny. PORTA_BENCH_HEAT_N, PORTA_BENCH_NBODY_N and PORTA_BENCH_CG_N set them outright.
struct KernelSizes {
  std::int64_t heat = 2048;                   // grid side (heat_1d, heat_2d, guide_jacobi)
  std::int64_t nbody = 16384;                 // bodies
  std::int64_t cg = 4096;                     // matrix side
  std::int64_t axpy = std::int64_t{1} << 24;  // guide_axpy elements
  std::int64_t stencil3d = 256;               // guide_stencil3d cube side
  std::vector<std::int64_t> reduce;
};

inline std::int64_t env_size(const char* name, std::int64_t fallback) {
  long long v = 0;
  const char* e = std::getenv(name);
  if (e && *e) {
    if (parse_int(e, &v) && v >= 3) return v;
    std::fprintf(stderr, "porta bench: ignoring %s=%s (not an integer >= 3)\n", name, e);
  }
  return fallback;
}

inline KernelSizes kernel_sizes() {
  const Limits& l = limits();
  KernelSizes k;
  k.heat = env_size("PORTA_BENCH_HEAT_N", std::min<std::int64_t>(2048, std::int64_t{1} << (l.max_log2 / 2)));
  k.nbody =
      env_size("PORTA_BENCH_NBODY_N", std::min<std::int64_t>(16384, std::int64_t{1} << std::max(l.max_log2 - 3, 2)));
  k.cg = env_size("PORTA_BENCH_CG_N", std::min<std::int64_t>(4096, l.matmul_max));
  k.axpy = env_size("PORTA_BENCH_AXPY_N", std::int64_t{1} << std::min(24, l.max_log2));
  k.stencil3d = env_size("PORTA_BENCH_STENCIL3D_N", std::min<std::int64_t>(256, std::int64_t{1} << (l.max_log2 / 3)));
  for (int e = std::max(20, l.min_log2); e <= std::min(24, l.max_log2); e += 2)
    k.reduce.push_back(std::int64_t{1} << e);
  if (k.reduce.empty()) k.reduce.push_back(std::int64_t{1} << l.max_log2);
  return k;
}

// The "porta_kernel_sizes" line of the report's machine section.
inline void add_kernel_sizes_context() {
  const KernelSizes k = kernel_sizes();
  std::string r;
  for (std::int64_t n : k.reduce) r += (r.empty() ? "" : ",") + std::to_string(n);
  benchmark::AddCustomContext("porta_kernel_sizes", "heat " + std::to_string(k.heat) + "x" + std::to_string(k.heat) +
                                                        ", nbody " + std::to_string(k.nbody) + ", cg " +
                                                        std::to_string(k.cg) + ", guide_axpy " +
                                                        std::to_string(k.axpy) + ", guide_stencil3d " +
                                                        std::to_string(k.stencil3d) + "^3, reduce_expr " + r);
}

// `--ops kernels` runs every case here; `--ops heat` (nbody, reduce_expr, cg, guide) one family, and
// an op's own name (heat_2d_nvcc) one op.
inline bool wanted_kernel(const std::string& op, const std::string& family) {
  return wanted(op, "kernels") || wanted(family, "kernels");
}

inline constexpr double kNbodyFlopsPerPair = 20;  // the usual count (GPU Gems 3, ch. 31)
inline constexpr double kEnergyFlopsPerPair = 12;
inline constexpr int kCgRestart = 8;  // CG restarts from x = 0 every this many iterations

inline double heat_bytes(std::int64_t n, std::size_t word) {
  return 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(word);
}
inline double cg_bytes(std::int64_t n, std::size_t word) {
  return (static_cast<double>(n) * static_cast<double>(n) + 10.0 * static_cast<double>(n)) * static_cast<double>(word);
}

// ---- checks --------------------------------------------------------------------------------------
// Throws (so the case is reported as failed, and the smoke run fails) when a porta result differs
// from its peer's by more than `tol` times the largest magnitude of the peer's result.
template <class T>
void expect_close(const std::string& what, const T* porta, const T* peer, std::int64_t n, double tol) {
  double scale = 0, worst = 0;
  std::int64_t where = 0;
  for (std::int64_t i = 0; i < n; ++i) scale = std::max(scale, std::fabs(static_cast<double>(peer[i])));
  for (std::int64_t i = 0; i < n; ++i) {
    const double d = std::fabs(static_cast<double>(porta[i]) - static_cast<double>(peer[i]));
    if (!(d <= worst)) {  // NaN counts as the worst
      worst = d;
      where = i;
    }
  }
  if (!(worst <= tol * std::max(scale, 1e-30)))
    throw std::runtime_error(what + ": porta differs from the peer at element " + std::to_string(where) + " by " +
                             std::to_string(worst) + " (tolerance " + std::to_string(tol * scale) + ")");
}
inline void expect_close(const std::string& what, double porta, double peer, double tol) {
  expect_close(what, &porta, &peer, 1, tol);
}

// ---- the computations ------------------------------------------------------------------------------
// 1/sqrt(x): the device's rsqrt where there is one (what a CUDA user writes), else a division.
PB_HOST_DEVICE inline float rsqrt_of(float x) {
#if defined(__CUDA_ARCH__)
  return rsqrtf(x);
#else
  return 1.0f / std::sqrt(x);
#endif
}

// Heat: v = u + c * (laplacian of u) at interior point (i, j) of an n x n row-major grid. c <= 1/4
// keeps the explicit scheme stable.
template <class T>
PB_HOST_DEVICE inline void heat_point(const T* u, T* v, std::int64_t n, std::int64_t i, std::int64_t j, T c) {
  const std::int64_t k = i * n + j;
  v[k] = u[k] + c * (u[k - n] + u[k + n] + u[k - 1] + u[k + 1] - T(4) * u[k]);
}
// The same, for cell k of all n * n cells: the boundary is fixed, so its cells are skipped.
template <class T>
PB_HOST_DEVICE inline void heat_cell(const T* u, T* v, std::int64_t n, std::int64_t k, T c) {
  const std::int64_t i = k / n, j = k % n;
  if (i > 0 && i < n - 1 && j > 0 && j < n - 1) heat_point(u, v, n, i, j, c);
}
template <class T>
constexpr T kHeatC = T(0.2);

template <class T>
struct Heat1D {
  const T* u;
  T* v;
  std::int64_t n;
  T c;
  PB_HOST_DEVICE void operator()(std::int64_t k) const { heat_cell(u, v, n, k, c); }
};
template <class T>
struct Heat2D {
  const T* u;
  T* v;
  std::int64_t n;
  T c;
  PB_HOST_DEVICE void operator()(std::int64_t i, std::int64_t j) const { heat_point(u, v, n, i, j, c); }
};

// N-body (float, structure of arrays): the acceleration of body i from all bodies, softened by eps2
// (which also makes the self term zero).
struct Bodies {
  const float *x, *y, *z, *m;
  std::int64_t n;
  float eps2;
};
inline constexpr float kEps2 = 1e-2f;

// The pull of a body of mass mj at offset (dx, dy, dz), added to (sx, sy, sz).
PB_HOST_DEVICE inline void add_pull(float dx, float dy, float dz, float mj, float eps2, float& sx, float& sy,
                                    float& sz) {
  const float inv = rsqrt_of(dx * dx + dy * dy + dz * dz + eps2);
  const float s = mj * inv * inv * inv;
  sx += s * dx;
  sy += s * dy;
  sz += s * dz;
}

PB_HOST_DEVICE inline void nbody_accel(const Bodies& b, std::int64_t i, float* ax, float* ay, float* az) {
  const float xi = b.x[i], yi = b.y[i], zi = b.z[i];
  float sx = 0, sy = 0, sz = 0;
  PB_SIMD_REDUCTION(sx, sy, sz)
  for (std::int64_t j = 0; j < b.n; ++j) add_pull(b.x[j] - xi, b.y[j] - yi, b.z[j] - zi, b.m[j], b.eps2, sx, sy, sz);
  ax[i] = sx;
  ay[i] = sy;
  az[i] = sz;
}

// Body i's share of the potential energy, -m_i/2 * sum over j != i of m_j / r_ij (softened): a
// float sum over all bodies less the self term, returned as double for the reduction over i.
PB_HOST_DEVICE inline double nbody_potential(const Bodies& b, std::int64_t i) {
  const float xi = b.x[i], yi = b.y[i], zi = b.z[i];
  float s = 0;
  PB_SIMD_REDUCTION(s)
  for (std::int64_t j = 0; j < b.n; ++j) {
    const float dx = b.x[j] - xi, dy = b.y[j] - yi, dz = b.z[j] - zi;
    s += b.m[j] * rsqrt_of(dx * dx + dy * dy + dz * dz + b.eps2);
  }
  const double mi = b.m[i];
  return -0.5 * mi * (static_cast<double>(s) - mi * rsqrt_of(b.eps2));
}

struct NBodyForce {
  Bodies b;
  float *ax, *ay, *az;
  PB_HOST_DEVICE void operator()(std::int64_t i) const { nbody_accel(b, i, ax, ay, az); }
};
struct NBodyPotential {
  Bodies b;
  PB_HOST_DEVICE double operator()(std::int64_t i) const { return nbody_potential(b, i); }
};

// The reduced expression: the length of (x[i], y[i]).
template <class T>
struct ExprAt {
  const T* x;
  const T* y;
  PB_HOST_DEVICE T operator()(std::int64_t i) const {
    using std::sqrt;
    return sqrt(x[i] * x[i] + y[i] * y[i]);
  }
};

// CG's direction update p = r + beta * p, which porta has no built-in for.
template <class T>
struct Xpby {
  const T* r;
  T* p;
  T beta;
  PB_HOST_DEVICE void operator()(std::int64_t i) const { p[i] = r[i] + beta * p[i]; }
};

// ---- the guide's form: kernels that index porta::Views ----------------------------------------------
// The functors of the guide_ cases; the PORTA_LAMBDA and PORTA_KERNEL forms (kernels_cpu.hpp) and the
// OpenMP loops write the same expressions, operation for operation.
template <class T>
constexpr T kGuideA = T(0.5);  // guide_axpy's a
template <class T>
constexpr T kGuideK = T(0.2);  // guide_jacobi's k (at most 1/4: stable)
template <class T>
constexpr T kGuideC = T(0.125);  // guide_stencil3d's c (at most 1/6: stable)

template <class T>
struct GuideAxpy {
  porta::View<const T> x;
  porta::View<T> y;
  T a;
  PB_HOST_DEVICE void operator()(std::int64_t i) const { y[i] = a * x[i] + y[i]; }
};
// The functor of docs/guide.md, section 4, in float and double.
template <class T>
struct GuideJacobi {
  porta::View<const T> u;
  porta::View<T> next;
  T k;
  PB_HOST_DEVICE void operator()(std::int64_t i, std::int64_t j) const {
    next(i, j) = u(i, j) + k * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1) - T(4) * u(i, j));
  }
};
// A 3-D grid of n0 x n1 x n2 in a flat View (Views index rows and columns; a third dimension is
// the user's arithmetic).
template <class T>
struct GuideStencil3D {
  porta::View<const T> u;
  porta::View<T> v;
  std::int64_t n1, n2;
  T c;
  PB_HOST_DEVICE void operator()(std::int64_t i, std::int64_t j, std::int64_t k) const {
    const std::int64_t p = (i * n1 + j) * n2 + k;
    v[p] = u[p] + c * (u[p - n1 * n2] + u[p + n1 * n2] + u[p - n2] + u[p + n2] + u[p - 1] + u[p + 1] - T(6) * u[p]);
  }
};

// Host inputs of the cases, from common.hpp's counter-based generator (the same for every
// implementation). Bodies: positions in [-1, 1)^3, masses in [0.5, 1.5) / n.
inline std::vector<float> body_data(std::int64_t n) {
  std::vector<float> h(static_cast<std::size_t>(4 * n));
  fill_random(h.data(), 4 * n, 101);
  for (std::int64_t i = 0; i < n; ++i)
    h[static_cast<std::size_t>(3 * n + i)] =
        (1.0f + 0.5f * h[static_cast<std::size_t>(3 * n + i)]) / static_cast<float>(n);
  return h;
}

// A symmetric, strictly diagonally dominant (so SPD) n x n matrix: off-diagonal entries uniform in
// [-1, 1) / n, diagonal 1. Its eigenvalues lie in [0, 2], away from 0, so CG converges quickly.
template <class T>
std::vector<T> spd_matrix(std::int64_t n) {
  std::vector<T> a(static_cast<std::size_t>(n * n));
  const double scale = 1.0 / static_cast<double>(n);
#if defined(_OPENMP)
#pragma omp parallel for schedule(static)
#endif
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const std::uint64_t lo = static_cast<std::uint64_t>(std::min(i, j)),
                          hi = static_cast<std::uint64_t>(std::max(i, j));
      const std::uint64_t r = splitmix64(lo * 0x9E3779B97F4A7C15ull ^ (hi + 0x5851F42D4C957F2Dull));
      const double v = static_cast<double>(r >> 11) * (2.0 / 9007199254740992.0) - 1.0;
      a[static_cast<std::size_t>(i * n + j)] = static_cast<T>(i == j ? 1.0 : v * scale);
    }
  }
  return a;
}

// Registration of the CPU cases: kernels_cpu.cpp (plain C++) and kernels_cpu_nvcc.cu (nvcc).
void register_cpu_kernels_cxx();
#if defined(PORTA_BENCH_HAVE_NVCC_KERNELS)
void register_cpu_kernels_nvcc();
#endif

}  // namespace porta_bench
