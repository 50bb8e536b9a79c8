// SPDX-License-Identifier: Apache-2.0
// The team-launch cases on the CPU (teams_common.hpp says what runs): porta's team kernels
// ("porta"; stencil_blocked also "porta_range", the plain Range<2> sweep) beside the OpenMP loops a
// user would write ("openmp"). On the CPU a team is one OpenMP thread, so these measure what the
// GPU-shaped form costs where it has no threads to share scratch with.
#include <porta/kernels.hpp>
#include <porta/porta.hpp>
#include <porta/teams.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "host_buffer.hpp"
#include "kernels_common.hpp"
#include "teams_common.hpp"

#if defined(_OPENMP)
#include <omp.h>
#define PBT_OMP(directive) _Pragma(directive)
#else
#define PBT_OMP(directive)
#endif

// A named namespace: the kernels' lambdas want enclosing functions with external linkage.
namespace porta_bench_teams_cpu {

namespace pb = porta_bench;
namespace pt = porta_bench_teams;

const porta::Device kCpu{porta::DeviceType::cpu, 0};

// CPU tuning: 32 bodies per thread-range index, independent sums that hide the latency of the
// square root and the division (16 measured 0.9x the OpenMP loop, 4 half of it), and
// stencil blocks of 16 whole rows of the interior: short row pieces (blocks of 256 x 8 measured
// 0.55x the loop nest on one thread) cut the hardware prefetchers' streams.
constexpr int kNbodyW = 32, kNbodyTile = 256, kNbodyPerTeam = 256;
constexpr int kStencilTy = 16;
// Teams of the histogram: chunks of at least 2^16 keys.
std::int64_t histogram_league(std::int64_t n) {
  return std::max<std::int64_t>(1, std::min<std::int64_t>(1024, n >> 16));
}

using pb::timed;

// ---- n-body ------------------------------------------------------------------------------------------
struct NBodyPorta {
  porta::Array<float> pos, ax, ay, az;
};
struct NBodyPeer {
  pb::HostBuffer<float> pos, ax, ay, az;
  pb::Bodies bodies() const {
    const float* p = pos.get();
    const std::int64_t n = ax.size();
    return pb::Bodies{p, p + n, p + 2 * n, p + 3 * n, n, pb::kEps2};
  }
};

void porta_nbody(NBodyPorta& d) {
  pt::nbody_tiled<kNbodyW, kNbodyTile>(kCpu, porta::Stream(), std::as_const(d.pos).view(), d.ax.view(), d.ay.view(),
                                       d.az.view(), d.ax.size(), porta::team_auto, kNbodyPerTeam);
}
// The loop of the nbody case's peer (kernels_cpu.hpp): body i over all j, `omp simd` over j.
[[gnu::noinline]] void omp_nbody(NBodyPeer& d) {
  const pb::Bodies b = d.bodies();
  float *ax = d.ax.get(), *ay = d.ay.get(), *az = d.az.get();
  PBT_OMP("omp parallel for schedule(static)")
  for (std::int64_t i = 0; i < b.n; ++i) pb::nbody_accel(b, i, ax, ay, az);
}
NBodyPeer make_nbody_peer(std::int64_t n) {
  const std::vector<float> h = pb::body_data(n);
  return NBodyPeer{pb::HostBuffer<float>(4 * n, h.data()), pb::HostBuffer<float>(n), pb::HostBuffer<float>(n),
                   pb::HostBuffer<float>(n)};
}
NBodyPorta make_nbody_porta(const std::string& id, std::int64_t n) {
  NBodyPorta d{porta::Array<float>::from(pb::body_data(n), kCpu), porta::full<float>({n}, 0.0f, kCpu),
               porta::full<float>({n}, 0.0f, kCpu), porta::full<float>({n}, 0.0f, kCpu)};
  porta_nbody(d);
  NBodyPeer p = make_nbody_peer(n);
  omp_nbody(p);
  // The peer sums over j in vector lanes, porta in order: roundings apart (kernels_cpu.hpp's kNbodyTol).
  pb::expect_close(id + " (ax)", d.ax.to_vector().data(), p.ax.get(), n, 1e-4);
  pb::expect_close(id + " (ay)", d.ay.to_vector().data(), p.ay.get(), n, 1e-4);
  pb::expect_close(id + " (az)", d.az.to_vector().data(), p.az.get(), n, 1e-4);
  return d;
}

// ---- transpose ---------------------------------------------------------------------------------------
struct TransposePorta {
  porta::Array<float> in, out;
};
struct TransposePeer {
  pb::HostBuffer<float> in, out;
};
// Blocks of 32 x 32, as porta's teams; a thread per block row.
[[gnu::noinline]] void omp_transpose(const float* __restrict in, float* __restrict out, std::int64_t n) {
  constexpr std::int64_t B = 32;
  const std::int64_t nb = (n + B - 1) / B;
  PBT_OMP("omp parallel for schedule(static)")
  for (std::int64_t t = 0; t < nb * nb; ++t) {
    const std::int64_t r0 = t / nb * B, c0 = t % nb * B;
    const std::int64_t r1 = std::min(r0 + B, n), c1 = std::min(c0 + B, n);
    for (std::int64_t c = c0; c < c1; ++c)
      for (std::int64_t r = r0; r < r1; ++r) out[c * n + r] = in[r * n + c];
  }
}
TransposePeer make_transpose_peer(std::int64_t n) {
  return TransposePeer{pb::HostBuffer<float>(n * n, pb::host_random<float>(n * n, 0)), pb::HostBuffer<float>(n * n)};
}
TransposePorta make_transpose_porta(const std::string& id, std::int64_t n) {
  TransposePorta d{porta::Array<float>::from(pb::host_random<float>(n * n, 0), porta::Shape{n, n}, kCpu),
                   porta::full<float>({n, n}, 0.0f, kCpu)};
  pt::transpose<float>(kCpu, porta::Stream(), std::as_const(d.in).view(), d.out.view(), n, porta::team_auto);
  TransposePeer p = make_transpose_peer(n);
  omp_transpose(p.in.get(), p.out.get(), n);
  pt::expect_equal(id, d.out.to_vector().data(), p.out.get(), n * n);
  return d;
}

// ---- histogram ---------------------------------------------------------------------------------------
struct HistogramPorta {
  porta::Array<std::int32_t> keys, partial, bins;
  std::int64_t league;
};
struct HistogramPeer {
  pb::HostBuffer<std::int32_t> keys, bins;
  std::vector<std::int32_t> partial;  // threads x 256
};
void porta_histogram(HistogramPorta& d) {
  pt::histogram(kCpu, porta::Stream(), std::as_const(d.keys).view(), d.partial.view(), d.bins.view(), d.keys.size(),
                d.league, porta::team_auto);
}
// Per-thread bins, merged in thread order.
[[gnu::noinline]] void omp_histogram(HistogramPeer& d) {
  const std::int32_t* keys = d.keys.get();
  const std::int64_t n = d.keys.size();
  std::int32_t* partial = d.partial.data();
  int threads = 1;
  PBT_OMP("omp parallel") {
    int me = 0;
#if defined(_OPENMP)
    me = omp_get_thread_num();
#pragma omp single
    threads = omp_get_num_threads();
#endif
    std::int32_t h[pt::kBins] = {};
    PBT_OMP("omp for schedule(static)")
    for (std::int64_t i = 0; i < n; ++i) ++h[keys[i]];
    for (int b = 0; b < pt::kBins; ++b) partial[me * pt::kBins + b] = h[b];
  }
  std::int32_t* bins = d.bins.get();
  for (int b = 0; b < pt::kBins; ++b) {
    std::int32_t s = 0;
    for (int k = 0; k < threads; ++k) s += partial[k * pt::kBins + b];
    bins[b] = s;
  }
}
HistogramPeer make_histogram_peer(std::int64_t n) {
  const std::vector<std::int32_t> k = pt::histogram_keys(n);
  int threads = 1;
#if defined(_OPENMP)
  threads = omp_get_max_threads();
#endif
  return HistogramPeer{pb::HostBuffer<std::int32_t>(n, k.data()), pb::HostBuffer<std::int32_t>(pt::kBins),
                       std::vector<std::int32_t>(static_cast<std::size_t>(threads) * pt::kBins)};
}
HistogramPorta make_histogram_porta(const std::string& id, std::int64_t n) {
  const std::int64_t league = histogram_league(n);
  HistogramPorta d{porta::Array<std::int32_t>::from(pt::histogram_keys(n), kCpu),
                   porta::full<std::int32_t>({pt::kBins, league}, 0, kCpu),
                   porta::full<std::int32_t>({pt::kBins}, 0, kCpu), league};
  porta_histogram(d);
  HistogramPeer p = make_histogram_peer(n);
  omp_histogram(p);
  pt::expect_equal(id, d.bins.to_vector().data(), p.bins.get(), pt::kBins);
  return d;
}

// ---- blocked stencil ---------------------------------------------------------------------------------
struct StencilPorta {
  porta::Array<double> u, v;
};
struct StencilPeer {
  pb::HostBuffer<double> u, v;
};
void porta_stencil(StencilPorta& d, bool blocked) {
  const std::int64_t n = d.u.shape()[0];
  if (blocked) {
    pt::stencil_blocked<double>(kCpu, porta::Stream(), std::as_const(d.u).view(), d.v.view(), n,
                                static_cast<int>(n - 2), kStencilTy, porta::team_auto, 1);
  } else {
    pt::stencil_range<double>(kCpu, porta::Stream(), std::as_const(d.u).view(), d.v.view(), n);
  }
}
// The guide_jacobi case's loop nest.
[[gnu::noinline]] void omp_stencil(const double* __restrict u, double* __restrict v, std::int64_t n) {
  const double k = pb::kGuideK<double>;
  PBT_OMP("omp parallel for schedule(static)")
  for (std::int64_t i = 1; i < n - 1; ++i)
    for (std::int64_t j = 1; j < n - 1; ++j) {
      const std::int64_t c = i * n + j;
      v[c] = u[c] + k * (u[c - n] + u[c + n] + u[c - 1] + u[c + 1] - 4.0 * u[c]);
    }
}
StencilPeer make_stencil_peer(std::int64_t n) {
  return StencilPeer{pb::HostBuffer<double>(n * n, pb::host_random<double>(n * n, 0)),
                     pb::HostBuffer<double>(n * n, pb::host_random<double>(n * n, 1))};
}
StencilPorta make_stencil_porta(const std::string& id, std::int64_t n, bool blocked) {
  StencilPorta d{porta::Array<double>::from(pb::host_random<double>(n * n, 0), porta::Shape{n, n}, kCpu),
                 porta::Array<double>::from(pb::host_random<double>(n * n, 1), porta::Shape{n, n}, kCpu)};
  porta_stencil(d, blocked);
  StencilPeer p = make_stencil_peer(n);
  omp_stencil(p.u.get(), p.v.get(), n);
  // The same expression on the same data: equal but for contraction.
  pb::expect_close(id, d.v.to_vector().data(), p.v.get(), n * n, 1e-13);
  return d;
}

// ---- registration ------------------------------------------------------------------------------------
void register_all() {
  const pt::TeamsSizes z = pt::teams_sizes(false);
  if (pt::wanted_teams("nbody_tiled")) {
    const std::int64_t n = z.nbody;
    const double flops = static_cast<double>(n) * static_cast<double>(n) * pb::kNbodyFlopsPerPair;
    pb::configure_cpu(pb::add("nbody_tiled", "f32", "porta", n, [=](benchmark::State& st, const std::string& id) {
      timed<NBodyPorta>(
          st, id, [&] { return make_nbody_porta(id, n); }, [](NBodyPorta& d) { porta_nbody(d); });
      pb::set_flops(st, flops);
    }));
    pb::configure_cpu(pb::add("nbody_tiled", "f32", "openmp", n, [=](benchmark::State& st, const std::string& id) {
      timed<NBodyPeer>(
          st, id, [&] { return make_nbody_peer(n); }, [](NBodyPeer& d) { omp_nbody(d); });
      pb::set_flops(st, flops);
    }));
  }
  if (pt::wanted_teams("transpose")) {
    const std::int64_t n = z.transpose;
    const double bytes = pt::transpose_bytes(n);
    pb::configure_cpu(pb::add("transpose", "f32", "porta", n, [=](benchmark::State& st, const std::string& id) {
      timed<TransposePorta>(
          st, id, [&] { return make_transpose_porta(id, n); },
          [n](TransposePorta& d) {
            pt::transpose<float>(kCpu, porta::Stream(), std::as_const(d.in).view(), d.out.view(), n, porta::team_auto);
          });
      pb::set_bytes(st, bytes);
    }));
    pb::configure_cpu(pb::add("transpose", "f32", "openmp", n, [=](benchmark::State& st, const std::string& id) {
      timed<TransposePeer>(
          st, id, [&] { return make_transpose_peer(n); },
          [n](TransposePeer& d) { omp_transpose(d.in.get(), d.out.get(), n); });
      pb::set_bytes(st, bytes);
    }));
  }
  if (pt::wanted_teams("histogram")) {
    const std::int64_t n = z.histogram;
    const double bytes = pt::histogram_bytes(n);
    pb::configure_cpu(pb::add("histogram", "i32", "porta", n, [=](benchmark::State& st, const std::string& id) {
      timed<HistogramPorta>(
          st, id, [&] { return make_histogram_porta(id, n); }, [](HistogramPorta& d) { porta_histogram(d); });
      pb::set_bytes(st, bytes);
    }));
    pb::configure_cpu(pb::add("histogram", "i32", "openmp", n, [=](benchmark::State& st, const std::string& id) {
      timed<HistogramPeer>(
          st, id, [&] { return make_histogram_peer(n); }, [](HistogramPeer& d) { omp_histogram(d); });
      pb::set_bytes(st, bytes);
    }));
  }
  if (pt::wanted_teams("stencil_blocked")) {
    const std::int64_t n = z.stencil;
    const double bytes = pt::stencil_bytes(n);
    for (bool blocked : {true, false}) {
      pb::configure_cpu(pb::add("stencil_blocked", "f64", blocked ? "porta" : "porta_range", n,
                                [=](benchmark::State& st, const std::string& id) {
                                  timed<StencilPorta>(
                                      st, id, [&] { return make_stencil_porta(id, n, blocked); },
                                      [blocked](StencilPorta& d) { porta_stencil(d, blocked); });
                                  pb::set_bytes(st, bytes);
                                }));
    }
    pb::configure_cpu(pb::add("stencil_blocked", "f64", "openmp", n, [=](benchmark::State& st, const std::string& id) {
      timed<StencilPeer>(
          st, id, [&] { return make_stencil_peer(n); }, [n](StencilPeer& d) { omp_stencil(d.u.get(), d.v.get(), n); });
      pb::set_bytes(st, bytes);
    }));
  }
}

}  // namespace porta_bench_teams_cpu

void porta_bench::register_cpu_teams() {
  porta_bench_teams_cpu::register_all();
}
