// SPDX-License-Identifier: Apache-2.0
// N bodies under softened gravity, integrated by leapfrog (kick, drift, kick), in double precision.
// The force on body i is summed over j = 0..N-1 in that order inside a user kernel, and every
// floating-point operation of the kernels is a porta::math call (a correctly rounded add, sub, mul,
// div, sqrt, or an fma rounded once): no compiler may contract or reorder them, so each step is
// the same sequence of roundings on every device.
//
// The bodies are split over ranks (uneven splits too); each rank kicks and drifts its own bodies,
// and every step gathers the positions whole on every rank for the forces. The program prints
// `sha256 <hex>` of the final positions and velocities, the same on every device and for any
// number of ranks (examples/digests.cmake, docs/determinism.md "Whole programs"), and checks that
// the total energy and momentum are conserved as leapfrog conserves them.
//
//   nbody [--n N] [--steps S]                    one rank (MPI if launched); defaults 1024, 100
//   nbody --threads K [--n N] [--steps S]        K ranks as threads of one process
//   mpirun -np K nbody [--n N] [--steps S]       one rank per process
#include <porta/distributed.hpp>
#include <porta/kernels.hpp>
#include <porta/math.hpp>
#include <porta/porta.hpp>
#include <porta/random.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/ranks.hpp"
#include "common/rows.hpp"
#include "common/sha256.hpp"

namespace dist = porta::distributed;
namespace pm = porta::math;

constexpr double kSoft2 = 0.01;  // softening length squared: the force of a close pair stays bounded
constexpr double kDt = 0.005;    // time step; the crossing time of the cube is about 1

// The initial state of every body, from one Philox stream on the host: positions uniform in the
// cube [-1, 1)^3, velocities in [-1/4, 1/4)^3 (scalings by powers of two: exact).
void initial_state(std::int64_t n, std::vector<double>* pos, std::vector<double>* vel) {
  porta::random::Philox rng(2026);
  pos->resize(static_cast<std::size_t>(3 * n));
  vel->resize(static_cast<std::size_t>(3 * n));
  for (double& p : *pos) p = 2.0 * rng.uniform<double>() - 1.0;
  for (double& v : *vel) v = 0.5 * rng.uniform<double>() - 0.25;
}

// acc (rows x 3) = the acceleration of this rank's bodies first.. from all n bodies of pos (n x 3).
void accelerations(porta::Device dev, const porta::Array<double>& pos, porta::Array<double>& acc, std::int64_t first,
                   std::int64_t rows, std::int64_t n, double mass) {
  const auto p = pos.view();
  const auto a = acc.view();
  const double soft2 = kSoft2;
  porta::parallel_for(dev, rows, PORTA_KERNEL((std::int64_t i) {
                        const std::int64_t g = first + i;
                        const double xi = p[3 * g], yi = p[3 * g + 1], zi = p[3 * g + 2];
                        double ax = 0.0, ay = 0.0, az = 0.0;
                        // j == g adds nothing (dx = dy = dz = 0), so no branch.
                        for (std::int64_t j = 0; j < n; ++j) {
                          const double dx = pm::sub(p[3 * j], xi);
                          const double dy = pm::sub(p[3 * j + 1], yi);
                          const double dz = pm::sub(p[3 * j + 2], zi);
                          const double r2 = pm::fma(dz, dz, pm::fma(dy, dy, pm::fma(dx, dx, soft2)));
                          const double inv_r = pm::div(1.0, pm::sqrt(r2));
                          const double s = pm::mul(mass, pm::mul(inv_r, pm::mul(inv_r, inv_r)));  // m / r^3
                          ax = pm::fma(s, dx, ax);
                          ay = pm::fma(s, dy, ay);
                          az = pm::fma(s, dz, az);
                        }
                        a[3 * i] = ax;
                        a[3 * i + 1] = ay;
                        a[3 * i + 2] = az;
                      }));
}

// v += h a over this rank's bodies, and x += dt v when `drift`.
void kick(porta::Device dev, porta::Array<double>& vel, const porta::Array<double>& acc, porta::Array<double>& pos,
          double h, bool drift) {
  const auto v = vel.view();
  const auto a = acc.view();
  const auto x = pos.view();
  const double dt = kDt;
  porta::parallel_for(dev, vel.size(), PORTA_KERNEL((std::int64_t e) {
                        const double ve = pm::fma(h, a[e], v[e]);
                        v[e] = ve;
                        if (drift) x[e] = pm::fma(dt, ve, x[e]);
                      }));
}

struct Invariants {
  double energy = 0, px = 0, py = 0, pz = 0;
};

// Total energy and momentum on the host, in plain double: a sanity figure, not part of the digest.
Invariants invariants(const std::vector<double>& pos, const std::vector<double>& vel, std::int64_t n, double mass) {
  Invariants inv;
  for (std::int64_t i = 0; i < n; ++i) {
    const double* v = &vel[static_cast<std::size_t>(3 * i)];
    inv.energy += 0.5 * mass * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    inv.px += mass * v[0];
    inv.py += mass * v[1];
    inv.pz += mass * v[2];
    for (std::int64_t j = i + 1; j < n; ++j) {
      double r2 = kSoft2;
      for (int c = 0; c < 3; ++c) {
        const double d = pos[static_cast<std::size_t>(3 * j + c)] - pos[static_cast<std::size_t>(3 * i + c)];
        r2 += d * d;
      }
      inv.energy -= mass * mass / std::sqrt(r2);
    }
  }
  return inv;
}

int run(const dist::Communicator& comm, std::int64_t n, int steps) {
  const porta::Device dev = comm.local_device();
  const double mass = 1.0 / static_cast<double>(n);  // total mass 1
  auto prow = example::make_rows<double>(comm, dev, n, 3);
  auto vrow = example::make_rows<double>(comm, dev, n, 3);
  const std::int64_t first = prow.first, rows = prow.rows();
  std::vector<double> pos0, vel0;
  initial_state(n, &pos0, &vel0);
  auto pos = porta::Array<double>::from(pos0.data(), porta::Shape{3 * n}, dev);
  auto mine = porta::Array<double>::from(pos0.data() + 3 * first, porta::Shape{3 * rows}, dev);
  auto vel = porta::Array<double>::from(vel0.data() + 3 * first, porta::Shape{3 * rows}, dev);
  auto acc = porta::zeros<double>({3 * rows}, dev);
  if (comm.rank() == 0)
    std::printf("nbody on %s: %lld bodies, %d leapfrog steps of %g, %d rank(s) (%s)\n", porta::describe(dev).c_str(),
                static_cast<long long>(n), steps, kDt, comm.size(), comm.describe().c_str());

  const double half = 0.5 * kDt;
  if (rows > 0) accelerations(dev, pos, acc, first, rows, n, mass);
  for (int s = 0; s < steps; ++s) {
    if (rows > 0) kick(dev, vel, acc, mine, half, true);  // v(t + dt/2), x(t + dt)
    example::gather_rows(comm, dev, prow, mine, pos);
    if (rows > 0) {
      accelerations(dev, pos, acc, first, rows, n, mass);
      kick(dev, vel, acc, mine, half, false);  // v(t + dt)
    }
  }
  auto vel_whole = porta::zeros<double>({3 * n}, dev);
  example::gather_rows(comm, dev, vrow, vel, vel_whole);
  if (comm.rank() != 0) return 0;

  const std::vector<double> p = pos.to_vector(), v = vel_whole.to_vector();
  const Invariants start = invariants(pos0, vel0, n, mass), end = invariants(p, v, n, mass);
  // Leapfrog keeps the energy within O(dt^2) of its start (no drift); the forces of a pair are
  // equal and opposite up to rounding, so the momentum moves only by rounding.
  const double de = std::fabs(end.energy - start.energy) / std::fabs(start.energy);
  const double dp = std::fabs(end.px - start.px) + std::fabs(end.py - start.py) + std::fabs(end.pz - start.pz);
  const bool ok_energy = de <= 1e-4, ok_momentum = dp <= 1e-12;
  std::printf("  energy %.12f -> %.12f, relative change %.2e (bound 1e-4)  %s\n", start.energy, end.energy, de,
              ok_energy ? "OK" : "WRONG");
  std::printf("  momentum (%.3e, %.3e, %.3e), change %.2e (bound 1e-12)  %s\n", end.px, end.py, end.pz, dp,
              ok_momentum ? "OK" : "WRONG");
  // The digest: the final positions, then the velocities, 3 n doubles each in body order.
  example::Sha256 h;
  h.update(p);
  h.update(v);
  std::printf("sha256 %s\n", h.hex().c_str());
  return ok_energy && ok_momentum ? 0 : 1;
}

int main(int argc, char** argv) try {
  std::int64_t n = 1024;
  int steps = 100, threads = 0;
  for (int a = 1; a < argc; ++a) {
    const bool has = a + 1 < argc;
    if (std::strcmp(argv[a], "--n") == 0 && has) {
      n = std::atoll(argv[++a]);
    } else if (std::strcmp(argv[a], "--steps") == 0 && has) {
      steps = std::atoi(argv[++a]);
    } else if (std::strcmp(argv[a], "--threads") == 0 && has) {
      threads = std::atoi(argv[++a]);
    } else {
      std::fprintf(stderr, "usage: %s [--n N (>= 2)] [--steps S (>= 0)] [--threads K (ranks as threads)]\n", argv[0]);
      return 2;
    }
  }
  if (n < 2 || steps < 0 || threads < 0) {
    std::fprintf(stderr, "nbody: --n must be >= 2, --steps >= 0, --threads >= 0\n");
    return 2;
  }
  if (!example::sha256_self_check()) {
    std::fprintf(stderr, "nbody: the SHA-256 known answers do not match\n");
    return 1;
  }
  return example::run_on_ranks(threads, "nbody", [&](const dist::Communicator& comm) { return run(comm, n, steps); });
} catch (const std::exception& e) {
  std::fprintf(stderr, "nbody: %s\n", e.what());
  return 2;
}
