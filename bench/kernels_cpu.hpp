// SPDX-License-Identifier: Apache-2.0
// The CPU cases of the user-kernel benchmarks (kernels_common.hpp), compiled once by each
// translation unit that includes this file: kernels_cpu.cpp (plain C++) and kernels_cpu_nvcc.cu
// (nvcc, where PORTA_LAMBDA is an extended __host__ __device__ lambda). Each case runs porta's
// kernel on device cpu written as a PORTA_LAMBDA ("porta") and as a functor ("porta_functor"),
// beside the OpenMP loop a user would write ("openmp"), all three compiled in that one unit.
//
// The includer defines PB_KERNELS_NS, a namespace of its own (the two compilations of every
// function here must not merge at link time: they are the thing being compared), and
// PB_KERNELS_SUFFIX, appended to the op names ("" and "_nvcc").
#pragma once

#include <porta/kernels.hpp>
#include <porta/porta.hpp>

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "host_buffer.hpp"
#include "kernels_common.hpp"

#if !defined(PB_KERNELS_NS) || !defined(PB_KERNELS_SUFFIX)
#error "define PB_KERNELS_NS and PB_KERNELS_SUFFIX before including kernels_cpu.hpp"
#endif

#if defined(_OPENMP)
#define PBK_OMP(directive) _Pragma(directive)
#else
#define PBK_OMP(directive)
#endif

// A named namespace: nvcc's extended lambdas need enclosing functions with external linkage.
namespace PB_KERNELS_NS {

namespace pb = porta_bench;

const porta::Device kCpu{porta::DeviceType::cpu, 0};

enum class Style { lambda, functor };

// ---- heat ------------------------------------------------------------------------------------------
template <class T>
void porta_heat(porta::Array<T>& u, porta::Array<T>& v, std::int64_t n, bool two_d, Style style) {
  const auto a = std::as_const(u).view();
  const auto b = v.view();
  const T c = pb::kHeatC<T>;
  const auto interior = porta::Range<2>({1, 1}, {n - 1, n - 1});
  if (style == Style::functor) {
    if (two_d) {
      porta::parallel_for(kCpu, interior, pb::Heat2D<T>{a.data, b.data, n, c});
    } else {
      porta::parallel_for(kCpu, n * n, pb::Heat1D<T>{a.data, b.data, n, c});
    }
  } else if (two_d) {
    porta::parallel_for(
        kCpu, interior, PORTA_LAMBDA(std::int64_t i, std::int64_t j) { pb::heat_point(a.data, b.data, n, i, j, c); });
  } else {
    porta::parallel_for(
        kCpu, n * n, PORTA_LAMBDA(std::int64_t k) { pb::heat_cell(a.data, b.data, n, k, c); });
  }
}

// The OpenMP loops are out of line, so that the compiler cannot fold one timed call into the next.
template <class T>
[[gnu::noinline]] void omp_heat(const T* __restrict u, T* __restrict v, std::int64_t n, bool two_d) {
  const T c = pb::kHeatC<T>;
  if (two_d) {
    PBK_OMP("omp parallel for schedule(static)")
    for (std::int64_t i = 1; i < n - 1; ++i)
      for (std::int64_t j = 1; j < n - 1; ++j) pb::heat_point(u, v, n, i, j, c);
  } else {
    PBK_OMP("omp parallel for schedule(static)")
    for (std::int64_t k = 0; k < n * n; ++k) pb::heat_cell(u, v, n, k, c);
  }
}

// A kernel's input u and output v: porta's and the peer's.
template <class T>
struct InOut {
  porta::Array<T> u, v;
};
template <class T>
struct InOutPeer {
  pb::HostBuffer<T> u, v;
};

// Both grids start equal, so the fixed boundary is already in the output.
template <class T>
InOutPeer<T> make_heat_peer(std::int64_t n) {
  return InOutPeer<T>{pb::HostBuffer<T>(n * n, pb::host_random<T>(n * n, 0)),
                      pb::HostBuffer<T>(n * n, pb::host_random<T>(n * n, 0))};
}
template <class T>
InOut<T> make_heat_porta(const std::string& id, std::int64_t n, bool two_d, Style style) {
  InOut<T> d;
  d.u = porta::Array<T>::from(pb::host_random<T>(n * n, 0), porta::Shape{n, n}, kCpu);
  d.v = d.u.clone();
  porta_heat(d.u, d.v, n, two_d, style);
  InOutPeer<T> p = make_heat_peer<T>(n);
  omp_heat(p.u.get(), p.v.get(), n, two_d);
  // The same body on the same data: equal but for the host compiler's choices in two loops (e.g.
  // contraction), a few roundings of values up to 4 max|u|.
  pb::expect_close(id, d.v.to_vector().data(), p.v.get(), n * n, 1e-5);
  return d;
}

// ---- n-body ------------------------------------------------------------------------------------------
struct NBodyPorta {
  porta::Array<float> pos, ax, ay, az;  // pos: x, y, z, m one after the other
  pb::Bodies bodies() const {
    const float* p = pos.view().data;
    const std::int64_t n = ax.size();
    return pb::Bodies{p, p + n, p + 2 * n, p + 3 * n, n, pb::kEps2};
  }
};
struct NBodyPeer {
  pb::HostBuffer<float> pos, ax, ay, az;
  pb::Bodies bodies() const {
    const float* p = pos.get();
    const std::int64_t n = ax.size();
    return pb::Bodies{p, p + n, p + 2 * n, p + 3 * n, n, pb::kEps2};
  }
};
NBodyPorta make_nbody_porta(std::int64_t n) {
  const std::vector<float> h = pb::body_data(n);
  NBodyPorta d;
  d.pos = porta::Array<float>::from(h, kCpu);
  d.ax = porta::full<float>({n}, 0.0f, kCpu);
  d.ay = porta::full<float>({n}, 0.0f, kCpu);
  d.az = porta::full<float>({n}, 0.0f, kCpu);
  return d;
}
NBodyPeer make_nbody_peer(std::int64_t n) {
  const std::vector<float> h = pb::body_data(n);
  return NBodyPeer{pb::HostBuffer<float>(4 * n, h.data()), pb::HostBuffer<float>(n), pb::HostBuffer<float>(n),
                   pb::HostBuffer<float>(n)};
}

void porta_nbody(NBodyPorta& d, Style style) {
  const pb::Bodies b = d.bodies();
  const std::int64_t n = b.n;
  float* ax = d.ax.view().data;
  float* ay = d.ay.view().data;
  float* az = d.az.view().data;
  if (style == Style::functor) {
    porta::parallel_for(kCpu, n, pb::NBodyForce{b, ax, ay, az});
  } else {
    porta::parallel_for(
        kCpu, n, PORTA_LAMBDA(std::int64_t i) { pb::nbody_accel(b, i, ax, ay, az); });
  }
}
[[gnu::noinline]] void omp_nbody(NBodyPeer& d) {
  const pb::Bodies b = d.bodies();
  float *ax = d.ax.get(), *ay = d.ay.get(), *az = d.az.get();
  PBK_OMP("omp parallel for schedule(static)")
  for (std::int64_t i = 0; i < b.n; ++i) pb::nbody_accel(b, i, ax, ay, az);
}

double porta_energy(const NBodyPorta& d, Style style) {
  const pb::Bodies b = d.bodies();
  if (style == Style::functor) return porta::transform_reduce(kCpu, b.n, 0.0, porta::plus{}, pb::NBodyPotential{b});
  return porta::transform_reduce(
      kCpu, b.n, 0.0, porta::plus{}, PORTA_LAMBDA(std::int64_t i) { return pb::nbody_potential(b, i); });
}
[[gnu::noinline]] double omp_energy(const NBodyPeer& d) {
  const pb::Bodies b = d.bodies();
  double e = 0;
  PBK_OMP("omp parallel for schedule(static) reduction(+ : e)")
  for (std::int64_t i = 0; i < b.n; ++i) e += pb::nbody_potential(b, i);
  return e;
}

// The per-body float sums are the same body in both loops; only the host compiler's vectorisation
// of each may round them differently, by about sqrt(n) * 2^-24 (1e-5 at 16384 bodies) of their size.
constexpr double kNbodyTol = 1e-4;

NBodyPorta make_nbody_checked(const std::string& id, std::int64_t n, bool energy, Style style) {
  NBodyPorta d = make_nbody_porta(n);
  NBodyPeer p = make_nbody_peer(n);
  if (energy) {
    pb::expect_close(id, porta_energy(d, style), omp_energy(p), kNbodyTol);
  } else {
    porta_nbody(d, style);
    omp_nbody(p);
    pb::expect_close(id + " (ax)", d.ax.to_vector().data(), p.ax.get(), n, kNbodyTol);
    pb::expect_close(id + " (ay)", d.ay.to_vector().data(), p.ay.get(), n, kNbodyTol);
    pb::expect_close(id + " (az)", d.az.to_vector().data(), p.az.get(), n, kNbodyTol);
  }
  return d;
}

// ---- reduction of an expression ------------------------------------------------------------------------
template <class T>
struct ExprPorta {
  porta::Array<T> x, y;
};
template <class T>
T porta_expr(const ExprPorta<T>& d, Style style) {
  const pb::ExprAt<T> f{d.x.view().data, d.y.view().data};
  if (style == Style::functor) return porta::transform_reduce(kCpu, d.x.size(), T(0), porta::plus{}, f);
  return porta::transform_reduce(
      kCpu, d.x.size(), T(0), porta::plus{}, PORTA_LAMBDA(std::int64_t i) { return f(i); });
}
template <class T>
[[gnu::noinline]] T omp_expr(const T* __restrict x, const T* __restrict y, std::int64_t n) {
  const pb::ExprAt<T> f{x, y};
  T s = 0;
  PBK_OMP("omp parallel for simd schedule(static) reduction(+ : s)")
  for (std::int64_t i = 0; i < n; ++i) s += f(i);
  return s;
}
template <class T>
ExprPorta<T> make_expr_porta(const std::string& id, std::int64_t n, Style style) {
  ExprPorta<T> d{porta::Array<T>::from(pb::host_random<T>(n, 0), porta::Shape{n}, kCpu),
                 porta::Array<T>::from(pb::host_random<T>(n, 1), porta::Shape{n}, kCpu)};
  const pb::HostVectors<T> h = pb::make_host_vectors<T>(pb::Op::dot, n);
  // Two sums of n positive terms in different orders: each within n * 2^-53 of the exact sum (f64).
  pb::expect_close(id, static_cast<double>(porta_expr(d, style)),
                   static_cast<double>(omp_expr(h.x.get(), h.y.get(), n)), static_cast<double>(n) * 1.2e-16 * 2);
  return d;
}

// ---- one CG iteration --------------------------------------------------------------------------------
// A real CG iteration on a fixed SPD system, restarted from x = 0 every kCgRestart iterations (three
// vector copies, for porta and the peer alike), so that a benchmark of any length stays on numbers of
// ordinary size.
template <class T>
struct CgPorta {
  porta::Array<T> a, b, x, r, p, ap;  // vectors are n x 1 columns, as matmul wants them
  T rr = 0;
  int k = 0;
};
template <class T>
void porta_cg_restart(CgPorta<T>& s) {
  porta::fill(s.x, T(0));
  porta::copy(s.b, s.r);
  porta::copy(s.b, s.p);
  s.rr = porta::dot(s.r, s.r);
  s.k = 0;
}
template <class T>
void porta_cg_step(CgPorta<T>& s, Style style) {
  if (s.k == pb::kCgRestart) porta_cg_restart(s);
  porta::gemm(T(1), s.a, false, s.p, false, T(0), s.ap);  // matmul into a kept buffer
  const T alpha = s.rr / porta::dot(s.p, s.ap);
  porta::axpy(alpha, s.p, s.x);
  porta::axpy(-alpha, s.ap, s.r);
  const T rr = porta::dot(s.r, s.r);
  const T beta = rr / s.rr;
  // p = r + beta p: no built-in does it, so a user kernel.
  const pb::Xpby<T> xpby{s.r.view().data, s.p.view().data, beta};
  if (style == Style::functor) {
    porta::parallel_for(kCpu, s.p.size(), xpby);
  } else {
    porta::parallel_for(
        kCpu, s.p.size(), PORTA_LAMBDA(std::int64_t i) { xpby(i); });
  }
  s.rr = rr;
  ++s.k;
}

// The peer's CG loops. cpu_bench.cpp has dot and axpy loops of its own, but these must be compiled
// in each translation unit that includes this file: the _nvcc cases time nvcc's host code.
template <class T>
struct CgPeer {
  pb::HostBuffer<T> a, b, x, r, p, ap;
  T rr = 0;
  int k = 0;
};
template <class T>
[[gnu::noinline]] void omp_matvec(const T* __restrict a, const T* __restrict p, T* __restrict y, std::int64_t n) {
  PBK_OMP("omp parallel for schedule(static)")
  for (std::int64_t i = 0; i < n; ++i) {
    T s = 0;
    PBK_OMP("omp simd reduction(+ : s)")
    for (std::int64_t j = 0; j < n; ++j) s += a[i * n + j] * p[j];
    y[i] = s;
  }
}
template <class T>
[[gnu::noinline]] T omp_dot(const T* __restrict x, const T* __restrict y, std::int64_t n) {
  T s = 0;
  PBK_OMP("omp parallel for simd schedule(static) reduction(+ : s)")
  for (std::int64_t i = 0; i < n; ++i) s += x[i] * y[i];
  return s;
}
template <class T>
[[gnu::noinline]] void omp_axpy(T alpha, const T* __restrict x, T* __restrict y, std::int64_t n) {
  PBK_OMP("omp parallel for simd schedule(static)")
  for (std::int64_t i = 0; i < n; ++i) y[i] = alpha * x[i] + y[i];
}
template <class T>
[[gnu::noinline]] void omp_copy(const T* __restrict x, T* __restrict y, std::int64_t n) {
  PBK_OMP("omp parallel for simd schedule(static)")
  for (std::int64_t i = 0; i < n; ++i) y[i] = x[i];
}
template <class T>
void omp_cg_restart(CgPeer<T>& s, std::int64_t n) {
  T* x = s.x.get();
  PBK_OMP("omp parallel for simd schedule(static)")
  for (std::int64_t i = 0; i < n; ++i) x[i] = T(0);
  omp_copy(s.b.get(), s.r.get(), n);
  omp_copy(s.b.get(), s.p.get(), n);
  s.rr = omp_dot(s.r.get(), s.r.get(), n);
  s.k = 0;
}
template <class T>
void omp_cg_step(CgPeer<T>& s, std::int64_t n) {
  if (s.k == pb::kCgRestart) omp_cg_restart(s, n);
  omp_matvec(s.a.get(), s.p.get(), s.ap.get(), n);
  const T alpha = s.rr / omp_dot(s.p.get(), s.ap.get(), n);
  omp_axpy(alpha, s.p.get(), s.x.get(), n);
  omp_axpy(-alpha, s.ap.get(), s.r.get(), n);
  const T rr = omp_dot(s.r.get(), s.r.get(), n);
  const pb::Xpby<T> xpby{s.r.get(), s.p.get(), rr / s.rr};
  PBK_OMP("omp parallel for simd schedule(static)")
  for (std::int64_t i = 0; i < n; ++i) xpby(i);
  s.rr = rr;
  ++s.k;
}

template <class T>
CgPeer<T> make_cg_peer(const std::vector<T>& a, std::int64_t n) {
  CgPeer<T> s{pb::HostBuffer<T>(n * n, a.data()),
              pb::HostBuffer<T>(n, pb::host_random<T>(n, 0)),
              pb::HostBuffer<T>(n),
              pb::HostBuffer<T>(n),
              pb::HostBuffer<T>(n),
              pb::HostBuffer<T>(n)};
  omp_cg_restart(s, n);
  return s;
}
template <class T>
CgPorta<T> make_cg_porta(const std::string& id, std::int64_t n, Style style, bool check) {
  const std::vector<T> a = pb::spd_matrix<T>(n);
  CgPorta<T> s;
  s.a = porta::Array<T>::from(a.data(), porta::Shape{n, n}, kCpu);
  s.b = porta::Array<T>::from(pb::host_random<T>(n, 0), porta::Shape{n, 1}, kCpu);
  s.x = porta::full<T>({n, 1}, T(0), kCpu);
  s.r = porta::full<T>({n, 1}, T(0), kCpu);
  s.p = porta::full<T>({n, 1}, T(0), kCpu);
  s.ap = porta::full<T>({n, 1}, T(0), kCpu);
  porta_cg_restart(s);
  if (check) {
    CgPeer<T> p = make_cg_peer(a, n);
    for (int k = 0; k < pb::kCgRestart; ++k) {
      porta_cg_step(s, style);
      omp_cg_step(p, n);
    }
    // The matrix's eigenvalues are within 2 / sqrt(3n) of 1, so after kCgRestart iterations both
    // have converged to A^-1 b up to a few roundings; the summation orders (BLAS against the loop)
    // only change those roundings.
    pb::expect_close(id, s.x.to_vector().data(), p.x.get(), n, sizeof(T) == 4 ? 1e-4 : 1e-10);
    porta_cg_restart(s);
  }
  return s;
}

// ---- the guide's form: kernels that index Views (kernels_common.hpp, guide_*) ----------------------------
// Each as a PORTA_LAMBDA, a functor and a PORTA_KERNEL, beside the OpenMP loop over raw pointers.
enum class Form { lambda, functor, kernel_macro };
const char* impl_of(Form f) {
  return f == Form::lambda ? "porta" : f == Form::functor ? "porta_functor" : "porta_kernel_macro";
}

enum class Guide { axpy, jacobi, stencil3d };

// in -> out (axpy: y += a x, in place in out).
template <class T>
void porta_guide(Guide g, const porta::Array<T>& in, porta::Array<T>& out, std::int64_t n, Form form) {
  const auto u = in.view();
  const auto v = out.view();
  if (g == Guide::axpy) {
    const T a = pb::kGuideA<T>;
    if (form == Form::functor) {
      porta::parallel_for(kCpu, n, pb::GuideAxpy<T>{u, v, a});
    } else if (form == Form::lambda) {
      porta::parallel_for(
          kCpu, n, PORTA_LAMBDA(std::int64_t i) { v[i] = a * u[i] + v[i]; });
    } else {
      porta::parallel_for(kCpu, n, PORTA_KERNEL((std::int64_t i) { v[i] = a * u[i] + v[i]; }));
    }
  } else if (g == Guide::jacobi) {
    const T k = pb::kGuideK<T>;
    const auto interior = porta::Range<2>({1, 1}, {n - 1, n - 1});
    const auto next = v;
    if (form == Form::functor) {
      porta::parallel_for(kCpu, interior, pb::GuideJacobi<T>{u, next, k});
    } else if (form == Form::lambda) {
      porta::parallel_for(
          kCpu, interior, PORTA_LAMBDA(std::int64_t i, std::int64_t j) {
            next(i, j) = u(i, j) + k * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1) - T(4) * u(i, j));
          });
    } else {
      porta::parallel_for(kCpu, interior, PORTA_KERNEL((std::int64_t i, std::int64_t j) {
                            next(i, j) =
                                u(i, j) + k * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1) - T(4) * u(i, j));
                          }));
    }
  } else {
    const T c = pb::kGuideC<T>;
    const auto interior = porta::Range<3>({1, 1, 1}, {n - 1, n - 1, n - 1});
    if (form == Form::functor) {
      porta::parallel_for(kCpu, interior, pb::GuideStencil3D<T>{u, v, n, n, c});
    } else if (form == Form::lambda) {
      porta::parallel_for(
          kCpu, interior, PORTA_LAMBDA(std::int64_t i, std::int64_t j, std::int64_t k) {
            const std::int64_t p = (i * n + j) * n + k;
            v[p] = u[p] + c * (u[p - n * n] + u[p + n * n] + u[p - n] + u[p + n] + u[p - 1] + u[p + 1] - T(6) * u[p]);
          });
    } else {
      porta::parallel_for(
          kCpu, interior, PORTA_KERNEL((std::int64_t i, std::int64_t j, std::int64_t k) {
            const std::int64_t p = (i * n + j) * n + k;
            v[p] = u[p] + c * (u[p - n * n] + u[p + n * n] + u[p - n] + u[p + n] + u[p - 1] + u[p + 1] - T(6) * u[p]);
          }));
    }
  }
}

// The loops a user writes without porta: `omp parallel for` over the outermost index, raw pointers.
template <class T>
[[gnu::noinline]] void omp_guide(Guide g, const T* __restrict u, T* __restrict v, std::int64_t n) {
  if (g == Guide::axpy) {
    const T a = pb::kGuideA<T>;
    PBK_OMP("omp parallel for schedule(static)")
    for (std::int64_t i = 0; i < n; ++i) v[i] = a * u[i] + v[i];
  } else if (g == Guide::jacobi) {
    const T k = pb::kGuideK<T>;
    PBK_OMP("omp parallel for schedule(static)")
    for (std::int64_t i = 1; i < n - 1; ++i)
      for (std::int64_t j = 1; j < n - 1; ++j) {
        const std::int64_t c = i * n + j;
        v[c] = u[c] + k * (u[c - n] + u[c + n] + u[c - 1] + u[c + 1] - T(4) * u[c]);
      }
  } else {
    const T c = pb::kGuideC<T>;
    PBK_OMP("omp parallel for schedule(static)")
    for (std::int64_t i = 1; i < n - 1; ++i)
      for (std::int64_t j = 1; j < n - 1; ++j)
        for (std::int64_t k = 1; k < n - 1; ++k) {
          const std::int64_t p = (i * n + j) * n + k;
          v[p] = u[p] + c * (u[p - n * n] + u[p + n * n] + u[p - n] + u[p + n] + u[p - 1] + u[p + 1] - T(6) * u[p]);
        }
  }
}

std::int64_t guide_elements(Guide g, std::int64_t n) {
  return g == Guide::axpy ? n : g == Guide::jacobi ? n * n : n * n * n;
}
// Words moved per call: axpy reads x and y and writes y; the stencils read u and write v once per
// cell (neighbours come from cache).
double guide_bytes(Guide g, std::int64_t n, std::size_t word) {
  return (g == Guide::axpy ? 3.0 : 2.0) * static_cast<double>(guide_elements(g, n)) * static_cast<double>(word);
}

// Input and output start as two random arrays, the same for porta and the peer (a stencil never
// writes the output's boundary).
template <class T>
InOutPeer<T> make_guide_peer(Guide g, std::int64_t n) {
  const std::int64_t m = guide_elements(g, n);
  return InOutPeer<T>{pb::HostBuffer<T>(m, pb::host_random<T>(m, 0)), pb::HostBuffer<T>(m, pb::host_random<T>(m, 1))};
}
template <class T>
InOut<T> make_guide_porta(const std::string& id, Guide g, std::int64_t n, Form form) {
  const std::int64_t m = guide_elements(g, n);
  // The 2-D accessor needs the grid's shape; the others index flat memory.
  const porta::Shape shape = g == Guide::jacobi ? porta::Shape{n, n} : porta::Shape{m};
  InOut<T> d{porta::Array<T>::from(pb::host_random<T>(m, 0), shape, kCpu),
             porta::Array<T>::from(pb::host_random<T>(m, 1), shape, kCpu)};
  porta_guide(g, d.u, d.v, n, form);
  InOutPeer<T> p = make_guide_peer<T>(g, n);
  omp_guide(g, p.u.get(), p.v.get(), n);
  // One call of the same expression on the same data: equal but for contraction (a few roundings of
  // values up to 3 max|u|).
  pb::expect_close(id, d.v.to_vector().data(), p.v.get(), m, sizeof(T) == 4 ? 1e-5 : 1e-13);
  return d;
}

// ---- registration ---------------------------------------------------------------------------------------
using pb::timed;

template <class T>
void register_heat(const std::string& op, std::int64_t n, bool two_d) {
  const char* dt = pb::dtype_name<T>();
  const double bytes = pb::heat_bytes(n, sizeof(T));
  for (Style style : {Style::lambda, Style::functor}) {
    pb::configure_cpu(pb::add(op, dt, style == Style::lambda ? "porta" : "porta_functor", n,
                              [=](benchmark::State& st, const std::string& id) {
                                timed<InOut<T>>(
                                    st, id, [&] { return make_heat_porta<T>(id, n, two_d, style); },
                                    [&](InOut<T>& d) { porta_heat(d.u, d.v, n, two_d, style); });
                                pb::set_bytes(st, bytes);
                              }));
  }
  pb::configure_cpu(pb::add(op, dt, "openmp", n, [=](benchmark::State& st, const std::string& id) {
    timed<InOutPeer<T>>(
        st, id, [&] { return make_heat_peer<T>(n); },
        [&](InOutPeer<T>& d) { omp_heat(d.u.get(), d.v.get(), n, two_d); });
    pb::set_bytes(st, bytes);
  }));
}

void register_nbody(const std::string& op, std::int64_t n, bool energy) {
  const double pairs = static_cast<double>(n) * static_cast<double>(n);
  const double flops = pairs * (energy ? pb::kEnergyFlopsPerPair : pb::kNbodyFlopsPerPair);
  for (Style style : {Style::lambda, Style::functor}) {
    pb::configure_cpu(pb::add(op, "f32", style == Style::lambda ? "porta" : "porta_functor", n,
                              [=](benchmark::State& st, const std::string& id) {
                                timed<NBodyPorta>(
                                    st, id, [&] { return make_nbody_checked(id, n, energy, style); },
                                    [&](NBodyPorta& d) {
                                      if (energy) {
                                        double e = porta_energy(d, style);
                                        benchmark::DoNotOptimize(e);
                                      } else {
                                        porta_nbody(d, style);
                                      }
                                    });
                                pb::set_flops(st, flops);
                              }));
  }
  pb::configure_cpu(pb::add(op, "f32", "openmp", n, [=](benchmark::State& st, const std::string& id) {
    timed<NBodyPeer>(
        st, id, [&] { return make_nbody_peer(n); },
        [&](NBodyPeer& d) {
          if (energy) {
            double e = omp_energy(d);
            benchmark::DoNotOptimize(e);
          } else {
            omp_nbody(d);
          }
        });
    pb::set_flops(st, flops);
  }));
}

template <class T>
void register_expr(const std::string& op, std::int64_t n) {
  const char* dt = pb::dtype_name<T>();
  const double bytes = 2.0 * static_cast<double>(n) * sizeof(T);
  for (Style style : {Style::lambda, Style::functor}) {
    pb::configure_cpu(pb::add(op, dt, style == Style::lambda ? "porta" : "porta_functor", n,
                              [=](benchmark::State& st, const std::string& id) {
                                timed<ExprPorta<T>>(
                                    st, id, [&] { return make_expr_porta<T>(id, n, style); },
                                    [&](ExprPorta<T>& d) {
                                      T r = porta_expr(d, style);
                                      benchmark::DoNotOptimize(r);
                                    });
                                pb::set_bytes(st, bytes);
                              }));
  }
  pb::configure_cpu(pb::add(op, dt, "openmp", n, [=](benchmark::State& st, const std::string& id) {
    timed<pb::HostVectors<T>>(
        st, id, [&] { return pb::make_host_vectors<T>(pb::Op::dot, n); },
        [&](pb::HostVectors<T>& d) {
          T r = omp_expr(d.x.get(), d.y.get(), n);
          benchmark::DoNotOptimize(r);
        });
    pb::set_bytes(st, bytes);
  }));
}

template <class T>
void register_cg(const std::string& op, std::int64_t n) {
  const char* dt = pb::dtype_name<T>();
  const double bytes = pb::cg_bytes(n, sizeof(T));
  // The kernel in a CG iteration is a one-line update next to a matvec: the functor variant would
  // say nothing the other cases do not, so porta runs with the lambda only.
  pb::configure_cpu(pb::add(op, dt, "porta", n, [=](benchmark::State& st, const std::string& id) {
    timed<CgPorta<T>>(
        st, id, [&] { return make_cg_porta<T>(id, n, Style::lambda, true); },
        [&](CgPorta<T>& s) { porta_cg_step(s, Style::lambda); });
    pb::set_bytes(st, bytes);
  }));
  pb::configure_cpu(pb::add(op, dt, "openmp", n, [=](benchmark::State& st, const std::string& id) {
    timed<CgPeer<T>>(
        st, id, [&] { return make_cg_peer<T>(pb::spd_matrix<T>(n), n); }, [&](CgPeer<T>& s) { omp_cg_step(s, n); });
    pb::set_bytes(st, bytes);
  }));
}

template <class T>
void register_guide(const std::string& op, Guide g, std::int64_t n) {
  const char* dt = pb::dtype_name<T>();
  const double bytes = guide_bytes(g, n, sizeof(T));
  for (Form form : {Form::lambda, Form::functor, Form::kernel_macro}) {
    pb::configure_cpu(pb::add(op, dt, impl_of(form), n, [=](benchmark::State& st, const std::string& id) {
      timed<InOut<T>>(
          st, id, [&] { return make_guide_porta<T>(id, g, n, form); },
          [&](InOut<T>& d) { porta_guide(g, d.u, d.v, n, form); });
      pb::set_bytes(st, bytes);
    }));
  }
  pb::configure_cpu(pb::add(op, dt, "openmp", n, [=](benchmark::State& st, const std::string& id) {
    timed<InOutPeer<T>>(
        st, id, [&] { return make_guide_peer<T>(g, n); },
        [&](InOutPeer<T>& d) { omp_guide(g, d.u.get(), d.v.get(), n); });
    pb::set_bytes(st, bytes);
  }));
}

void register_all() {
  const std::string sfx = PB_KERNELS_SUFFIX;
  const pb::KernelSizes k = pb::kernel_sizes();
  for (const auto& [name, g, n] : {std::tuple<const char*, Guide, std::int64_t>{"guide_axpy", Guide::axpy, k.axpy},
                                   {"guide_jacobi", Guide::jacobi, k.heat},
                                   {"guide_stencil3d", Guide::stencil3d, k.stencil3d}}) {
    const std::string op = name + sfx;
    if (pb::wanted_kernel(op, "guide")) {
      register_guide<float>(op, g, n);
      register_guide<double>(op, g, n);
    }
  }
  if (pb::wanted_kernel("heat_1d" + sfx, "heat")) register_heat<float>("heat_1d" + sfx, k.heat, false);
  if (pb::wanted_kernel("heat_2d" + sfx, "heat")) register_heat<float>("heat_2d" + sfx, k.heat, true);
  if (pb::wanted_kernel("nbody" + sfx, "nbody")) register_nbody("nbody" + sfx, k.nbody, false);
  if (pb::wanted_kernel("nbody_energy" + sfx, "nbody")) register_nbody("nbody_energy" + sfx, k.nbody, true);
  if (pb::wanted_kernel("reduce_expr" + sfx, "reduce_expr")) {
    for (std::int64_t n : k.reduce) register_expr<double>("reduce_expr" + sfx, n);
  }
  if (pb::wanted_kernel("cg" + sfx, "cg")) {
    register_cg<float>("cg" + sfx, k.cg);
    register_cg<double>("cg" + sfx, k.cg);
  }
}

}  // namespace PB_KERNELS_NS
