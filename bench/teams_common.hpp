// SPDX-License-Identifier: Apache-2.0
// The team-launch benchmarks (group "teams"): porta's kernels written the documented way
// (porta/teams.hpp: PORTA_KERNEL, Views, scratch, barriers, nested ranges), shared by the CPU binary
// (teams_cpu.cpp) and the CUDA one (teams_cuda.cuh), beside the code a user would otherwise write.
//
//   op               what                                                  counted as
//   nbody_tiled      kernels_common.hpp's nbody bodies (float), positions  20 FLOP per pair
//                    staged a tile at a time in scratch, the per-body
//                    accumulators in scratch between tiles
//   transpose        out = in^T, n x n float, through a 32 x 33 scratch    2 words per element
//                    tile (32 lanes x 4 threads on GPUs)
//   histogram        256 bins of 2^26 int32 keys: per-team bins in         1 word per key
//                    scratch (team_atomic_add), merged in team order by a
//                    second launch (team_reduce)
//   stencil_blocked  guide_jacobi's 5-point sweep (double) over n x n,     2 words per cell
//                    each team's tile and its halo staged in scratch
//
// Each kernel takes the device's tuning (bodies per thread-range index, tile sizes, team shape)
// as arguments or template parameters, so one source serves both devices; every shape gives the
// same result, since the nested ranges hand out the work whatever the team's size.
#pragma once

#include <porta/kernels.hpp>
#include <porta/porta.hpp>
#include <porta/teams.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common.hpp"
#include "kernels_common.hpp"

namespace porta_bench_teams {

namespace pb = porta_bench;

// ---- sizes ----------------------------------------------------------------------------------------
// Full sizes: n-body as the nbody case (so the GFLOP/s compare), transpose 8192^2 on GPUs and
// 4096^2 on the CPU, 2^26 keys, stencil 4096^2 on GPUs and 2048^2 on the CPU; shrunk with the run's
// largest vector size (the smoke run's 2^12) and set outright by PORTA_BENCH_{TRANSPOSE,HIST,STENCIL}_N.
struct TeamsSizes {
  std::int64_t nbody, transpose, histogram, stencil;
};

inline TeamsSizes teams_sizes(bool gpu) {
  const pb::Limits& l = pb::limits();
  const std::int64_t side = std::int64_t{1} << (l.max_log2 / 2);
  TeamsSizes s;
  s.nbody = pb::kernel_sizes().nbody;
  s.transpose = pb::env_size("PORTA_BENCH_TRANSPOSE_N", std::min<std::int64_t>(gpu ? 8192 : 4096, side));
  s.histogram = pb::env_size("PORTA_BENCH_HIST_N", std::int64_t{1} << std::min(26, l.max_log2));
  s.stencil = pb::env_size("PORTA_BENCH_STENCIL_N", std::min<std::int64_t>(gpu ? 4096 : 2048, side));
  return s;
}

inline bool wanted_teams(const std::string& op) {
  return pb::wanted(op, "teams");
}

inline constexpr int kBins = 256;

// Keys in [0, 256), uniform: from common.hpp's counter-based generator, the same for every
// implementation.
inline std::vector<std::int32_t> histogram_keys(std::int64_t n) {
  std::vector<std::int32_t> k(static_cast<std::size_t>(n));
  const std::uint64_t base = pb::splitmix64(7);
#if defined(_OPENMP)
#pragma omp parallel for schedule(static)
#endif
  for (std::int64_t i = 0; i < n; ++i)
    k[static_cast<std::size_t>(i)] =
        static_cast<std::int32_t>(pb::splitmix64(base + static_cast<std::uint64_t>(i)) >> 56);
  return k;
}

// ---- n-body ---------------------------------------------------------------------------------------
// A staged body: one 16-byte load from GPU shared memory, as the hand-written kernel's float4.
struct alignas(16) Body4 {
  float x, y, z, m;
};

// Accelerations of the bodies in pos (x, y, z, m one after the other, n each). A team owns
// `per_team` bodies; thread_for hands out groups of W consecutive bodies, whose W independent sums
// a thread carries in registers through a tile (on the CPU the W lanes vectorise; on a GPU W = 1 is
// the hand-written kernel's thread per body) and keeps in scratch between tiles, so any team size
// gives the same sums. Bodies past n are staged with mass 0 (their pull is +0).
template <int W, int Tile>
void nbody_tiled(porta::Device dev, const porta::Stream& stream, porta::View<const float> pos, porta::View<float> ax,
                 porta::View<float> ay, porta::View<float> az, std::int64_t n, int team_size, int per_team) {
  const std::int64_t league = (n + per_team - 1) / per_team;
  const std::int64_t groups = per_team / W;
  const std::size_t bytes = Tile * sizeof(Body4) + 3 * static_cast<std::size_t>(per_team) * sizeof(float) + 16;
  const float eps2 = pb::kEps2;
  porta::parallel_for(
      "nbody_tiled", dev, porta::teams(league, team_size).scratch(bytes), PORTA_KERNEL((const porta::Team& t) {
        const porta::View<Body4> tile = t.scratch<Body4>(Tile);
        const porta::View<float> acc = t.scratch<float>(3, groups * W);
        const std::int64_t i0 = t.league() * groups * W;
        for (std::int64_t base = 0; base < n; base += Tile) {
          porta::team_for(t, Tile, [&](std::int64_t k) {
            const std::int64_t j = base + k;
            tile[k] = j < n ? Body4{pos[j], pos[n + j], pos[2 * n + j], pos[3 * n + j]} : Body4{0, 0, 0, 0};
          });
          t.barrier();
          porta::thread_for(t, groups, [&](std::int64_t g) {
            float xi[W], yi[W], zi[W], sx[W], sy[W], sz[W];
            for (int w = 0; w < W; ++w) {
              const std::int64_t i = std::min(i0 + g * W + w, n - 1);
              xi[w] = pos[i];
              yi[w] = pos[n + i];
              zi[w] = pos[2 * n + i];
              sx[w] = base == 0 ? 0.0f : acc(0, g * W + w);
              sy[w] = base == 0 ? 0.0f : acc(1, g * W + w);
              sz[w] = base == 0 ? 0.0f : acc(2, g * W + w);
            }
            for (int k = 0; k < Tile; ++k) {
              const Body4 b = tile[k];
              for (int w = 0; w < W; ++w)
                pb::add_pull(b.x - xi[w], b.y - yi[w], b.z - zi[w], b.m, eps2, sx[w], sy[w], sz[w]);
            }
            for (int w = 0; w < W; ++w) {
              acc(0, g * W + w) = sx[w];
              acc(1, g * W + w) = sy[w];
              acc(2, g * W + w) = sz[w];
            }
          });
          t.barrier();  // before the next tile overwrites this one
        }
        // Each group's sums were stored by the thread that reads them here.
        porta::thread_for(t, groups, [&](std::int64_t g) {
          for (int w = 0; w < W; ++w) {
            const std::int64_t i = i0 + g * W + w;
            if (i < n) {
              ax[i] = acc(0, g * W + w);
              ay[i] = acc(1, g * W + w);
              az[i] = acc(2, g * W + w);
            }
          }
        });
      }),
      stream);
}

// ---- transpose ------------------------------------------------------------------------------------
// A team per 32 x 32 tile, `team_size` threads x 32 lanes: rows read along the lanes into the tile,
// columns of the tile written along the lanes; the 33rd column keeps a GPU's column reads off one
// shared-memory bank.
template <class T>
void transpose(porta::Device dev, const porta::Stream& stream, porta::View<const T> in, porta::View<T> out,
               std::int64_t n, int team_size) {
  constexpr int kTile = 32;
  const std::int64_t nb = (n + kTile - 1) / kTile;
  porta::parallel_for("transpose", dev, porta::teams(nb * nb, team_size, 32).scratch(kTile * (kTile + 1) * sizeof(T)),
                      PORTA_KERNEL((const porta::Team& t) {
                        const porta::View<T> tile = t.scratch<T>(kTile, kTile + 1);
                        const std::int64_t r0 = t.league() / nb * kTile, c0 = t.league() % nb * kTile;
                        // The ranges end at the grid's edge: no test per element, which would keep the CPU's loops from
                        // vectorising.
                        const std::int64_t rows = std::min<std::int64_t>(kTile, n - r0),
                                           cols = std::min<std::int64_t>(kTile, n - c0);
                        porta::thread_vector_for(
                            t, rows, cols, [&](std::int64_t r, std::int64_t c) { tile(r, c) = in(r0 + r, c0 + c); });
                        t.barrier();
                        porta::thread_vector_for(
                            t, cols, rows, [&](std::int64_t r, std::int64_t c) { out(c0 + r, r0 + c) = tile(c, r); });
                      }),
                      stream);
}

// ---- histogram ------------------------------------------------------------------------------------
// `league` teams, each counting a contiguous chunk of the keys into its scratch bins and storing
// them as column l of partial (kBins x league); then a team per bin sums its row in team order.
// thread_for, not team_for, around the scratch atomics: on the CPU team_for tells the compiler its
// iterations are independent, and two keys of one bin are not.
inline void histogram(porta::Device dev, const porta::Stream& stream, porta::View<const std::int32_t> keys,
                      porta::View<std::int32_t> partial, porta::View<std::int32_t> bins, std::int64_t n,
                      std::int64_t league, int team_size) {
  const std::int64_t chunk = (n + league - 1) / league;
  porta::parallel_for("histogram", dev, porta::teams(league, team_size).scratch(kBins * sizeof(std::int32_t)),
                      PORTA_KERNEL((const porta::Team& t) {
                        const porta::View<std::int32_t> h = t.scratch<std::int32_t>(kBins);
                        porta::team_for(t, kBins, [&](std::int64_t b) { h[b] = 0; });
                        t.barrier();
                        const std::int64_t begin = t.league() * chunk, end = std::min(begin + chunk, n);
                        porta::thread_for(t, begin, end,
                                          [&](std::int64_t i) { porta::team_atomic_add(t, &h[keys[i]], 1); });
                        t.barrier();
                        porta::team_for(t, kBins, [&](std::int64_t b) { partial(b, t.league()) = h[b]; });
                      }),
                      stream);
  porta::parallel_for("histogram_merge", dev, porta::teams(kBins), PORTA_KERNEL((const porta::Team& t) {
                        const std::int64_t total = porta::team_reduce<std::int64_t>(
                            t, league, porta::plus{},
                            [&](std::int64_t l) { return std::int64_t{partial(t.league(), l)}; });
                        if (t.rank() == 0 && t.lane() == 0) bins[t.league()] = static_cast<std::int32_t>(total);
                      }),
                      stream);
}

// ---- blocked stencil ------------------------------------------------------------------------------
// guide_jacobi's sweep (kernels_common.hpp, GuideJacobi), operation for operation: a team per
// ty x tx block of the interior stages the block and its one-cell halo, then computes from scratch.
template <class T>
void stencil_blocked(porta::Device dev, const porta::Stream& stream, porta::View<const T> u, porta::View<T> next,
                     std::int64_t n, int tx, int ty, int team_size, int vector_length) {
  const std::int64_t m = n - 2, nbx = (m + tx - 1) / tx, nby = (m + ty - 1) / ty;
  const T k = pb::kGuideK<T>;
  const std::size_t bytes = static_cast<std::size_t>(ty + 2) * static_cast<std::size_t>(tx + 2) * sizeof(T);
  porta::parallel_for("stencil_blocked", dev, porta::teams(nbx * nby, team_size, vector_length).scratch(bytes),
                      PORTA_KERNEL((const porta::Team& t) {
                        const porta::View<T> h = t.scratch<T>(ty + 2, tx + 2);
                        const std::int64_t i0 = 1 + t.league() / nbx * ty, j0 = 1 + t.league() % nbx * tx;
                        // This block's rows and columns, cut at the interior's edge (ranges, not a test per element,
                        // so that the CPU's loops vectorise).
                        const std::int64_t rows = std::min<std::int64_t>(ty, n - 1 - i0),
                                           cols = std::min<std::int64_t>(tx, n - 1 - j0);
                        porta::thread_vector_for(t, rows + 2, cols + 2, [&](std::int64_t r, std::int64_t c) {
                          h(r, c) = u(i0 - 1 + r, j0 - 1 + c);
                        });
                        t.barrier();
                        porta::thread_vector_for(t, rows, cols, [&](std::int64_t r, std::int64_t c) {
                          next(i0 + r, j0 + c) = h(r + 1, c + 1) + k * (h(r, c + 1) + h(r + 2, c + 1) + h(r + 1, c) +
                                                                        h(r + 1, c + 2) - T(4) * h(r + 1, c + 1));
                        });
                      }),
                      stream);
}

// The guide's form of the same sweep: porta's plain parallel_for over Range<2>'s interior.
template <class T>
void stencil_range(porta::Device dev, const porta::Stream& stream, porta::View<const T> u, porta::View<T> next,
                   std::int64_t n) {
  const T k = pb::kGuideK<T>;
  porta::parallel_for(
      "stencil_range", dev, porta::Range<2>({1, 1}, {n - 1, n - 1}), PORTA_KERNEL((std::int64_t i, std::int64_t j) {
        next(i, j) = u(i, j) + k * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1) - T(4) * u(i, j));
      }),
      stream);
}

// Words moved per call (reads and writes once each, as the other cases count).
inline double transpose_bytes(std::int64_t n) {
  return 2.0 * static_cast<double>(n) * static_cast<double>(n) * sizeof(float);
}
inline double histogram_bytes(std::int64_t n) {
  return static_cast<double>(n) * sizeof(std::int32_t);
}
inline double stencil_bytes(std::int64_t n) {
  return 2.0 * static_cast<double>(n) * static_cast<double>(n) * sizeof(double);
}

// Exact comparisons (a transpose and integer counts have one right answer).
template <class T>
void expect_equal(const std::string& what, const T* porta, const T* peer, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i)
    if (!(porta[i] == peer[i]))
      throw std::runtime_error(what + ": porta differs from the peer at element " + std::to_string(i));
}

}  // namespace porta_bench_teams

namespace porta_bench {
// Registration of the CPU cases (teams_cpu.cpp).
void register_cpu_teams();
}  // namespace porta_bench
