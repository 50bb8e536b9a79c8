// SPDX-License-Identifier: Apache-2.0
// Team launches (porta/teams.hpp): four kernels whose threads cooperate through scratch memory and
// barriers, each checked against a host reference (docs/teams.md quotes them):
//   n-body      all-pairs gravity, a team per block of bodies, tiles of positions staged in scratch
//   transpose   a matrix transposed through a padded 32 x 33 scratch tile
//   histogram   per-team bins in scratch (team_atomic_add), the teams' rows merged by an axis sum
//   stencil     a 5-point Jacobi sweep, a team per tile, the tile and its halo loaded into scratch
//
//   ./teams                      # cuda:0, else hip:0, else cpu
//   PORTA_DEVICE=cpu:strict ./teams
//
// Every kernel hands out work with the nested ranges and reads the team's shape from the Team, so
// it is correct for any team size: on a GPU a team is a thread block, on the CPU one thread.
// Compiled through porta_add_kernels(), so in a CUDA or HIP build the kernels run on the GPU too.
#include <porta/math.hpp>
#include <porta/porta.hpp>
#include <porta/teams.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "common/check.hpp"

namespace {

// Floats in [0, 1) from a fixed seed, the same on every machine (24 random bits, exact in float).
std::vector<float> uniform(std::int64_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = static_cast<float>(gen() >> 8) * 0x1p-24f;
  return v;
}

constexpr double kEps = 0x1p-24;  // float's unit roundoff

// The larger error; a NaN stays, so that it fails the check (std::max would drop it).
double worse(double worst, double e) {
  return std::isnan(worst) || e <= worst ? worst : e;
}

// ---- n-body: a team per block of bodies, tiles of positions in scratch -------------------------

constexpr std::int64_t kBodies = 128;  // bodies per team, and per tile
constexpr float kSoft2 = 0.01f;        // softening: a body's pull on itself is 0, not 0/0

// acc(i, :) = sum over j of m_j (r_j - r_i) / (|r_j - r_i|^2 + soft^2)^(3/2), with bodies(j, :) =
// x, y, z, m. Each team owns kBodies bodies; every member loads a share of each tile, then sums the
// tile's pulls on the bodies its thread owns. The sums live in scratch between tiles, since a thread
// may own several bodies (on the CPU, one thread owns all of them).
void accelerations(porta::Device dev, const porta::Array<float>& bodies, porta::Array<float>& acc, int team_size) {
  const std::int64_t n = bodies.shape()[0];
  const std::int64_t league = (n + kBodies - 1) / kBodies;
  const auto body = bodies.view();
  const auto out = acc.view();
  const float soft2 = kSoft2;
  const std::size_t bytes = kBodies * 4 * sizeof(float) + kBodies * 3 * sizeof(float);  // a tile, the sums
  porta::parallel_for(
      "nbody tiles", dev, porta::teams(league, team_size).scratch(bytes), PORTA_KERNEL((const porta::Team& t) {
        auto tile = t.scratch<float>(kBodies, 4);  // x, y, z, m of one tile of bodies
        auto sum = t.scratch<float>(kBodies, 3);   // the accelerations of this team's bodies so far
        const std::int64_t first = t.league() * kBodies;
        const std::int64_t mine = n - first < kBodies ? n - first : kBodies;
        porta::thread_for(t, mine, [&](std::int64_t i) {
          sum(i, 0) = 0.0f;
          sum(i, 1) = 0.0f;
          sum(i, 2) = 0.0f;
        });
        for (std::int64_t j0 = 0; j0 < n; j0 += kBodies) {
          const std::int64_t len = n - j0 < kBodies ? n - j0 : kBodies;
          t.barrier();  // every member is done with the previous tile
          porta::team_for(t, len * 4, [&](std::int64_t k) { tile(k / 4, k % 4) = body(j0 + k / 4, k % 4); });
          t.barrier();  // the whole tile is in scratch
          porta::thread_for(t, mine, [&](std::int64_t i) {
            const float xi = body(first + i, 0), yi = body(first + i, 1), zi = body(first + i, 2);
            float ax = sum(i, 0), ay = sum(i, 1), az = sum(i, 2);
            for (std::int64_t j = 0; j < len; ++j) {
              const float dx = tile(j, 0) - xi, dy = tile(j, 1) - yi, dz = tile(j, 2) - zi;
              const float inv = 1.0f / porta::math::sqrt(dx * dx + dy * dy + dz * dz + soft2);
              const float s = tile(j, 3) * inv * inv * inv;
              ax += s * dx;
              ay += s * dy;
              az += s * dz;
            }
            sum(i, 0) = ax;
            sum(i, 1) = ay;
            sum(i, 2) = az;
          });
        }
        porta::thread_for(t, mine, [&](std::int64_t i) {
          out(first + i, 0) = sum(i, 0);
          out(first + i, 1) = sum(i, 1);
          out(first + i, 2) = sum(i, 2);
        });
      }));
}

void nbody_demo(porta::Device dev) {
  constexpr std::int64_t n = 1000;  // not a multiple of kBodies: the last tile and team are short
  std::vector<float> h = uniform(n * 4, 1);
  for (std::int64_t i = 0; i < n; ++i) h[i * 4 + 3] = 0.5f + h[i * 4 + 3];  // masses in [0.5, 1.5)
  const auto bodies = porta::Array<float>::from(h, {n, 4}, dev);
  porta::Array<float> a128({n, 3}, dev, "accelerations");
  porta::Array<float> a32({n, 3}, dev, "accelerations, teams of 32");
  accelerations(dev, bodies, a128, 128);
  accelerations(dev, bodies, a32, 32);
  const std::vector<float> got = a128.to_vector(), got32 = a32.to_vector();
  // Each body's sum runs over j in order on one thread whatever the team size: the same bits.
  const bool same = std::memcmp(got.data(), got32.data(), got.size() * sizeof(float)) == 0;
  // Against double: a term's float error is under 20 roundings of it, and a sequential sum of n
  // terms adds at most n - 1 roundings of the sum of their magnitudes.
  double worst = 0;
  for (std::int64_t i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c) {
      double want = 0, mag = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        const double dx = double(h[j * 4]) - h[i * 4], dy = double(h[j * 4 + 1]) - h[i * 4 + 1];
        const double dz = double(h[j * 4 + 2]) - h[i * 4 + 2];
        const double d[3] = {dx, dy, dz};
        const double r2 = dx * dx + dy * dy + dz * dz + double(kSoft2);
        const double term = h[j * 4 + 3] * d[c] / (r2 * std::sqrt(r2));
        want += term;
        mag += std::fabs(term);
      }
      worst = worse(worst, std::fabs(got[i * 3 + c] - want) / mag);
    }
  const double bound = (n + 20) * kEps;
  const bool ok = worst <= bound && same;
  std::printf(
      "n-body     %lld bodies, %lld teams: error %.1e of the terms' magnitude (bound %.1e), teams of 128 "
      "and 32 %s  %s\n",
      static_cast<long long>(n), static_cast<long long>((n + kBodies - 1) / kBodies), worst, bound,
      same ? "bit-identical" : "DIFFER", ok ? "OK" : "WRONG");
  example::expect(ok, "n-body accelerations");
}

// ---- transpose through a scratch tile ----------------------------------------------------------

// at = a's transpose, a team per 32 x 32 tile. A team of 4 threads x 32 lanes: rows over threads,
// columns over lanes, so a GPU warp reads one row of a and writes one row of at, both contiguous.
// The tile's 33rd column is padding: a warp reads a column of the tile, 33 floats apart, so its
// 32 reads fall in 32 different banks of shared memory instead of one.
void transpose(porta::Device dev, const porta::Array<float>& a, porta::Array<float>& at) {
  const std::int64_t rows = a.shape()[0], cols = a.shape()[1];
  const std::int64_t tiles_c = (cols + 31) / 32, league = (rows + 31) / 32 * tiles_c;
  const auto in = a.view();
  const auto out = at.view();
  const std::size_t bytes = 32 * 33 * sizeof(float);
  porta::parallel_for(
      "transpose", dev, porta::teams(league, 4, 32).scratch(bytes), PORTA_KERNEL((const porta::Team& t) {
        auto tile = t.scratch<float>(32, 33);
        const std::int64_t r0 = t.league() / tiles_c * 32, c0 = t.league() % tiles_c * 32;
        const std::int64_t nr = rows - r0 < 32 ? rows - r0 : 32, nc = cols - c0 < 32 ? cols - c0 : 32;
        // the tile's rows over the threads, its columns over a thread's lanes
        porta::thread_vector_for(t, nr, nc, [&](std::int64_t i, std::int64_t j) { tile(i, j) = in(r0 + i, c0 + j); });
        t.barrier();
        // a row of at is a column of the tile
        porta::thread_vector_for(t, nc, nr, [&](std::int64_t j, std::int64_t i) { out(c0 + j, r0 + i) = tile(i, j); });
      }));
}

void transpose_demo(porta::Device dev) {
  constexpr std::int64_t rows = 300, cols = 200;  // not multiples of 32: edge tiles are partial
  const std::vector<float> h = uniform(rows * cols, 2);
  const auto a = porta::Array<float>::from(h, {rows, cols}, dev);
  porta::Array<float> at({cols, rows}, dev, "transpose");
  transpose(dev, a, at);
  const std::vector<float> got = at.to_vector();
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) wrong += got[j * rows + i] != h[i * cols + j];
  std::printf("transpose  %lld x %lld through 32 x 33 tiles of 4 threads x 32 lanes: %lld wrong  %s\n",
              static_cast<long long>(rows), static_cast<long long>(cols), static_cast<long long>(wrong),
              wrong == 0 ? "OK" : "WRONG");
  example::expect(wrong == 0, "transpose");
}

// ---- histogram: per-team bins in scratch -------------------------------------------------------

constexpr std::int64_t kBins = 64;

// Counts of x (values in [0, 1)) in kBins equal bins. Each team counts its share of x in bins of
// its own scratch (atomics among its members only, in fast memory), writes them as its row of
// `counts`, and an axis sum merges the rows: integer adds, the same counts on every device.
porta::Array<std::int32_t> histogram(porta::Device dev, const porta::Array<float>& x, std::int64_t league) {
  const std::int64_t n = x.size();
  const std::int64_t share = (n + league - 1) / league;
  porta::Array<std::int32_t> counts({league, kBins}, dev, "per-team counts");
  const auto xv = x.view();
  const auto cv = counts.view();
  porta::parallel_for("histogram", dev, porta::teams(league, 256).scratch(kBins * sizeof(std::int32_t)),
                      PORTA_KERNEL((const porta::Team& t) {
                        auto bins = t.scratch<std::int32_t>(kBins);
                        porta::team_for(t, kBins, [&](std::int64_t b) { bins[b] = 0; });  // scratch starts as garbage
                        t.barrier();
                        const std::int64_t lo = t.league() * share, hi = lo + share < n ? lo + share : n;
                        porta::team_for(t, lo, hi, [&](std::int64_t i) {
                          porta::team_atomic_add(t, &bins[static_cast<std::int64_t>(xv[i] * float(kBins))], 1);
                        });
                        t.barrier();
                        porta::team_for(t, kBins, [&](std::int64_t b) { cv(t.league(), b) = bins[b]; });
                      }));
  return porta::sum(counts, 0);
}

void histogram_demo(porta::Device dev) {
  constexpr std::int64_t n = 100000, league = 48;
  std::vector<float> h = uniform(n, 3);
  for (float& v : h) v *= v;  // skewed towards 0: the bins differ
  const auto x = porta::Array<float>::from(h, dev);
  const std::vector<std::int32_t> got = histogram(dev, x, league).to_vector();
  std::vector<std::int32_t> want(kBins, 0);
  for (const float v : h) ++want[static_cast<std::size_t>(v * float(kBins))];
  const bool ok = got == want;
  std::printf("histogram  %lld values in %lld bins by %lld teams: first bin %d, last %d  %s\n",
              static_cast<long long>(n), static_cast<long long>(kBins), static_cast<long long>(league),
              got.empty() ? -1 : got.front(), got.empty() ? -1 : got.back(), ok ? "OK" : "WRONG");
  example::expect(ok, "histogram");
}

// ---- stencil: a team per tile, the halo in scratch ----------------------------------------------

constexpr std::int64_t kTile = 32;  // interior points per tile edge
constexpr float kR = 0.2f;          // r = alpha dt / h^2; stable for r <= 1/4

// One Jacobi sweep over the interior of the n x n grid u into un (its boundary is never written, so
// it keeps its fixed values): a team per kTile x kTile tile loads the tile and a one-cell halo into
// scratch, then updates each point from scratch, where each value is read by 5 points. The loops'
// bounds stop at the grid's edge, rather than a test per point, so that the CPU vectorises them.
void stencil_sweep(porta::Device dev, const porta::Array<float>& cur, porta::Array<float>& next) {
  const std::int64_t n = cur.shape()[0];
  const std::int64_t tiles = (n - 2 + kTile - 1) / kTile;  // per edge of the interior
  const auto u = cur.view();
  const auto un = next.view();
  const float r = kR;
  const std::size_t bytes = (kTile + 2) * (kTile + 2) * sizeof(float);  // the tile and its halo
  porta::parallel_for(
      "stencil tiles", dev, porta::teams(tiles * tiles, 8, 32).scratch(bytes), PORTA_KERNEL((const porta::Team& t) {
        auto s = t.scratch<float>(kTile + 2, kTile + 2);  // s(a, b) = u(i0 - 1 + a, j0 - 1 + b)
        const std::int64_t i0 = 1 + t.league() / tiles * kTile, j0 = 1 + t.league() % tiles * kTile;
        const std::int64_t ni = n - 1 - i0 < kTile ? n - 1 - i0 : kTile;  // this tile's points: edge
        const std::int64_t nj = n - 1 - j0 < kTile ? n - 1 - j0 : kTile;  // tiles have fewer
        porta::thread_vector_for(t, ni + 2, nj + 2,
                                 [&](std::int64_t a, std::int64_t b) { s(a, b) = u(i0 - 1 + a, j0 - 1 + b); });
        t.barrier();
        // point (a, b) of the tile is s(a + 1, b + 1)
        porta::thread_vector_for(t, ni, nj, [&](std::int64_t a, std::int64_t b) {
          un(i0 + a, j0 + b) = s(a + 1, b + 1) + r * (s(a, b + 1) + s(a + 2, b + 1) + s(a + 1, b) + s(a + 1, b + 2) -
                                                      4.0f * s(a + 1, b + 1));
        });
      }));
}

void stencil_demo(porta::Device dev) {
  constexpr std::int64_t n = 200;  // 198 interior points per edge: the last tiles are partial
  constexpr int steps = 20;
  const std::vector<float> h0 = uniform(n * n, 4);
  porta::Array<float> cur = porta::Array<float>::from(h0, {n, n}, dev);
  porta::Array<float> next = porta::Array<float>::from(h0, {n, n}, dev);  // the boundary lives in both
  for (int k = 0; k < steps; ++k) {
    stencil_sweep(dev, cur, next);
    std::swap(cur, next);
  }
  const std::vector<float> got = cur.to_vector();
  // The same sweeps in double. With r <= 1/4 a sweep is a convex combination of values in [0, 1]:
  // it never amplifies an error, and adds under 8 float roundings per sweep (examples/heat).
  std::vector<double> u(h0.begin(), h0.end()), v = u;
  for (int k = 0; k < steps; ++k) {
    for (std::int64_t i = 1; i < n - 1; ++i)
      for (std::int64_t j = 1; j < n - 1; ++j) {
        const std::int64_t p = i * n + j;
        v[p] = u[p] + double(kR) * (u[p - n] + u[p + n] + u[p - 1] + u[p + 1] - 4.0 * u[p]);
      }
    std::swap(u, v);
  }
  double worst = 0;
  for (std::size_t p = 0; p < got.size(); ++p) worst = worse(worst, std::fabs(got[p] - u[p]));
  const double bound = 8.0 * steps * kEps;
  const bool ok = worst <= bound;  // a NaN (a halo cell never loaded, on cpu:strict) fails too
  std::printf("stencil    %lld x %lld grid, %d sweeps, %lld tiles of %lld x %lld: max error %.1e (bound %.1e)  %s\n",
              static_cast<long long>(n), static_cast<long long>(n), steps,
              static_cast<long long>(((n - 2 + kTile - 1) / kTile) * ((n - 2 + kTile - 1) / kTile)),
              static_cast<long long>(kTile), static_cast<long long>(kTile), worst, bound, ok ? "OK" : "WRONG");
  example::expect(ok, "stencil");
}

}  // namespace

int main() try {
  const porta::Device dev = porta::default_device();
  std::printf("teams on %s\n", porta::describe(dev).c_str());
  nbody_demo(dev);
  transpose_demo(dev);
  histogram_demo(dev);
  stencil_demo(dev);
  return example::summary();
} catch (const porta::Error& e) {
  std::fprintf(stderr, "teams: porta error: %s\n", e.what());
  return 2;
}
