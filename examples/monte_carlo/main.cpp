// SPDX-License-Identifier: Apache-2.0
// Monte Carlo price of a European call option under Black-Scholes, in double precision, with a
// histogram of the normal draws; both compared on the host with their exact values.
//
// Draw d of the program is the d-th normal of ONE Philox stream (seed 7, stream 0): index k of a
// user kernel draws normals k B .. k B + B - 1 from block offset k B / 2 (a block of four words
// gives two normals), prices each path with porta::math::exp, and sums its B payoffs in order
// (porta::math::add and fma). The ranks split the indices (uneven splits too); the communicator's
// sum of the per-index partials has exactly the bits of porta::sum over all of them on one
// device, whatever the split, and the histogram is integer counts (atomic_add, then an integer
// allreduce): exact in any order. So the estimate and the histogram have the same bits on every
// device, at any thread count and for any number of ranks, and the program prints `sha256 <hex>` of
// them (examples/digests.cmake, docs/determinism.md "Whole programs").
//
//   monte_carlo [--draws D]                    one rank (MPI if launched); D a multiple of 64, 2^24
//   monte_carlo --threads K [--draws D]        K ranks as threads of one process
//   mpirun -np K monte_carlo [--draws D]       one rank per process
#include <porta/atomic.hpp>
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
#include "common/sha256.hpp"

namespace dist = porta::distributed;
namespace pm = porta::math;

constexpr std::uint64_t kSeed = 7;
constexpr std::int64_t kBatch = 64;  // normals per kernel index: B
constexpr std::int64_t kBins = 64;   // histogram of the normals over [-4, 4), 8 bins per unit

// The option: spot, strike, rate, volatility, years.
constexpr double kS0 = 100.0, kStrike = 110.0, kRate = 0.05, kSigma = 0.2, kYears = 1.0;

struct Sums {
  double payoff = 0, payoff_sq = 0;
  std::vector<std::int64_t> hist;
};

// Indices [k0, k1) of the stream's batches: their payoff sums summed over all ranks, and the
// histogram of every rank's draws.
Sums simulate(const dist::Communicator& comm, porta::Device dev, std::int64_t k0, std::int64_t k1) {
  const std::int64_t m = k1 - k0;
  // ln S_T = ln S0 + mu + sig z: the drift and the volatility of the log over the whole term,
  // computed once on the host with porta::math (the same bits as in any kernel).
  const double mu = pm::mul(pm::sub(kRate, pm::mul(0.5, pm::mul(kSigma, kSigma))), kYears);
  const double sig = pm::mul(kSigma, pm::sqrt(kYears));
  // Copies of the constants: a kernel takes values, not namespace-scope variables (device code
  // cannot read those).
  const double s0 = kS0, strike = kStrike;
  const std::uint64_t seed = kSeed;
  const std::int64_t batch = kBatch, bins = kBins;
  auto psum = porta::zeros<double>({m}, dev);
  auto psq = porta::zeros<double>({m}, dev);
  auto hist = porta::zeros<std::int64_t>({kBins}, dev);
  const auto sv = psum.view();
  const auto qv = psq.view();
  const auto hv = hist.view();
  if (m > 0)
    porta::parallel_for(dev, m, PORTA_KERNEL((std::int64_t i) {
                          const std::int64_t k = k0 + i;
                          porta::random::Philox rng(seed, 0, static_cast<std::uint64_t>(k * (batch / 2)));
                          double sum = 0.0, sq = 0.0;
                          for (std::int64_t d = 0; d < batch; ++d) {
                            const double z = rng.normal<double>();
                            const double s_t = pm::mul(s0, pm::exp(pm::fma(sig, z, mu)));
                            const double payoff = s_t > strike ? pm::sub(s_t, strike) : 0.0;
                            sum = pm::add(sum, payoff);
                            sq = pm::fma(payoff, payoff, sq);
                            // (z + 4) * 8, both roundings fixed; outside [-4, 4) is not counted.
                            const double t = pm::mul(pm::add(z, 4.0), 8.0);
                            if (t >= 0.0 && t < static_cast<double>(bins))
                              porta::atomic_add(&hv[static_cast<std::int64_t>(t)], 1);
                          }
                          sv[i] = sum;
                          qv[i] = sq;
                        }));
  comm.allreduce(hist);  // integer counts: exact whatever the order of the ranks
  Sums s;
  s.payoff = comm.sum(psum);
  s.payoff_sq = comm.sum(psq);
  s.hist = hist.to_vector();
  return s;
}

// The standard normal distribution function, on the host (a check only).
double normal_cdf(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

int run(const dist::Communicator& comm, std::int64_t draws) {
  const porta::Device dev = comm.local_device();
  const std::int64_t batches = draws / kBatch;
  std::int64_t k0 = 0, k1 = 0;
  example::split(batches, comm.rank(), comm.size(), &k0, &k1);
  if (comm.rank() == 0)
    std::printf("monte_carlo on %s: European call, %lld draws of one Philox stream, %d rank(s) (%s)\n",
                porta::describe(dev).c_str(), static_cast<long long>(draws), comm.size(), comm.describe().c_str());
  const Sums s = simulate(comm, dev, k0, k1);
  if (comm.rank() != 0) return 0;

  // The estimate and its standard error, with porta::math: they are part of the digest.
  const double n = static_cast<double>(draws);
  const double disc = pm::exp(pm::mul(-kRate, kYears));
  const double mean = pm::div(s.payoff, n);
  const double var = pm::div(pm::sub(pm::div(s.payoff_sq, n), pm::mul(mean, mean)), n - 1.0);
  const double price = pm::mul(disc, mean);
  const double stderr_price = pm::mul(disc, pm::sqrt(var));

  // Black-Scholes' closed form.
  const double d1 = (std::log(kS0 / kStrike) + (kRate + 0.5 * kSigma * kSigma) * kYears) / (kSigma * std::sqrt(kYears));
  const double d2 = d1 - kSigma * std::sqrt(kYears);
  const double exact = kS0 * normal_cdf(d1) - kStrike * std::exp(-kRate * kYears) * normal_cdf(d2);
  const bool ok_price = std::fabs(price - exact) <= 5.0 * stderr_price;
  std::printf("  price %.6f +- %.6f, Black-Scholes %.6f  %s\n", price, stderr_price, exact, ok_price ? "OK" : "WRONG");

  // Each bin against its expected count n p: within 6 binomial standard deviations (+ 1).
  double worst = 0;
  std::int64_t counted = 0;
  for (std::int64_t b = 0; b < kBins; ++b) {
    const double p = normal_cdf(-4.0 + (b + 1) / 8.0) - normal_cdf(-4.0 + b / 8.0);
    const double dev_sd = std::fabs(static_cast<double>(s.hist[b]) - n * p) / (std::sqrt(n * p * (1 - p)) + 1.0);
    worst = dev_sd > worst ? dev_sd : worst;
    counted += s.hist[b];
  }
  const double inside = normal_cdf(4.0) - normal_cdf(-4.0);
  const bool ok_hist = worst <= 6.0 && std::fabs(static_cast<double>(counted) - n * inside) <= 6.0 * std::sqrt(n) + 1;
  std::printf("  histogram: %lld of %lld draws in [-4, 4), worst bin %.2f standard deviations off (bound 6)  %s\n",
              static_cast<long long>(counted), static_cast<long long>(draws), worst, ok_hist ? "OK" : "WRONG");

  // The digest: the two sums, the price and its error (doubles), then the 64 counts (int64).
  const double figures[4] = {s.payoff, s.payoff_sq, price, stderr_price};
  example::Sha256 h;
  h.update(figures, sizeof(figures));
  h.update(s.hist);
  std::printf("sha256 %s\n", h.hex().c_str());
  return ok_price && ok_hist ? 0 : 1;
}

int main(int argc, char** argv) try {
  std::int64_t draws = std::int64_t(1) << 24;
  int threads = 0;
  for (int a = 1; a < argc; ++a) {
    const bool has = a + 1 < argc;
    if (std::strcmp(argv[a], "--draws") == 0 && has) {
      draws = std::atoll(argv[++a]);
    } else if (std::strcmp(argv[a], "--threads") == 0 && has) {
      threads = std::atoi(argv[++a]);
    } else {
      std::fprintf(stderr, "usage: %s [--draws D (a multiple of %lld)] [--threads K (ranks as threads)]\n", argv[0],
                   static_cast<long long>(kBatch));
      return 2;
    }
  }
  if (draws < kBatch || draws % kBatch != 0 || threads < 0) {
    std::fprintf(stderr, "monte_carlo: --draws must be a positive multiple of %lld, --threads >= 0\n",
                 static_cast<long long>(kBatch));
    return 2;
  }
  if (!example::sha256_self_check()) {
    std::fprintf(stderr, "monte_carlo: the SHA-256 known answers do not match\n");
    return 1;
  }
  return example::run_on_ranks(threads, "monte_carlo",
                               [&](const dist::Communicator& comm) { return run(comm, draws); });
} catch (const std::exception& e) {
  std::fprintf(stderr, "monte_carlo: %s\n", e.what());
  return 2;
}
