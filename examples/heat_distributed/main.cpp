// SPDX-License-Identifier: Apache-2.0
// The heat example (examples/heat) split by rows over ranks: each rank holds a band of rows plus
// one halo row above and below, sweeps its band with the same 5-point kernel, and swaps its edge
// rows with its neighbours (isend/irecv) after every sweep. The residual (the 2-norm of the last
// sweep's change) and the heat (the sum of the plate) are distributed reductions: porta's
// canonical order makes them, and the field, bit-identical to one rank's for any number of ranks.
// The program checks exactly that: it first solves the whole plate on one rank, then split.
//
//   mpirun -np 4 heat_distributed [--n N] [--steps S]    one rank per process (MPI)
//   heat_distributed --threads 4 [--n N] [--steps S]      four ranks as threads of one process
//   heat_distributed                                      one rank (MPI if present, else alone)
#include <porta/distributed.hpp>
#include <porta/kernels.hpp>
#include <porta/porta.hpp>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace dist = porta::distributed;

constexpr float kR = 0.2f;  // alpha dt / h^2, stable for r <= 1/4

// Sweeps rows 1..rows of a band of rows + 2 rows (the halos are rows 0 and rows + 1).
void sweep(porta::Device dev, const porta::Array<float>& cur, porta::Array<float>& next, std::int64_t rows,
           std::int64_t n) {
  const auto u = cur.view();
  const auto un = next.view();
  const float r = kR;
  porta::parallel_for(dev, porta::Range<2>({1, 1}, {rows + 1, n - 1}), PORTA_KERNEL((std::int64_t i, std::int64_t j) {
                        un(i, j) =
                            u(i, j) + r * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1) - 4.0f * u(i, j));
                      }));
}

struct Result {
  float residual = 0, heat = 0;
  std::uint64_t field_hash = 0;  // of the whole plate, on rank 0
  std::vector<float> field;      // the whole plate, on rank 0
};

std::uint64_t fnv1a(const std::vector<float>& v) {
  std::uint64_t h = 1469598103934665603ull;
  for (float x : v) {
    std::uint32_t b;
    std::memcpy(&b, &x, sizeof(b));
    for (int k = 0; k < 4; ++k) h = (h ^ ((b >> (8 * k)) & 0xffu)) * 1099511628211ull;
  }
  return h;
}

// The plate's n - 2 interior rows split as evenly as possible; rank r owns global rows [first, last).
void band(std::int64_t n, int rank, int size, std::int64_t* first, std::int64_t* last) {
  const std::int64_t inner = n - 2;
  *first = 1 + inner * rank / size;
  *last = 1 + inner * (rank + 1) / size;
}

Result solve(const dist::Communicator& comm, porta::Device dev, std::int64_t n, int steps) {
  const int rank = comm.rank(), size = comm.size();
  std::int64_t first = 0, last = 0;
  band(n, rank, size, &first, &last);
  const std::int64_t rows = last - first;
  // Global rows first - 1 .. last: the band and its halos. Row 0 of the plate is hot.
  std::vector<float> h0(static_cast<std::size_t>((rows + 2) * n), 0.0f);
  if (first == 1)
    for (std::int64_t j = 0; j < n; ++j) h0[static_cast<std::size_t>(j)] = 1.0f;
  auto cur = porta::Array<float>::from(h0.data(), porta::Shape{rows + 2, n}, dev);
  auto next = cur.clone();
  const int up = rank - 1, down = rank + 1;  // neighbours; the plate's edges are fixed
  Result res;
  for (int s = 1; s <= steps; ++s) {
    sweep(dev, cur, next, rows, n);
    std::vector<dist::Request> reqs;
    auto top_halo = next.row(0);
    auto bottom_halo = next.row(rows + 1);
    if (up >= 0 && rows > 0) {
      reqs.push_back(comm.isend(next.row(1), up, 0));
      reqs.push_back(comm.irecv(top_halo, up, 1));
    }
    if (down < size && rows > 0) {
      reqs.push_back(comm.isend(next.row(rows), down, 1));
      reqs.push_back(comm.irecv(bottom_halo, down, 0));
    }
    dist::wait_all(reqs);
    if (s == steps) {
      // The owned interior, concatenated over ranks in order, is the plate's interior row by row.
      auto a = next.slice({{1, rows + 1}, {1, n - 1}}).contiguous();
      auto b = cur.slice({{1, rows + 1}, {1, n - 1}}).contiguous();
      res.residual = comm.norm2(a - b);
      res.heat = comm.sum(a);
    }
    std::swap(cur, next);
  }
  // The whole plate on rank 0, for the hash and the reference check.
  auto owned = cur.slice({{1, rows + 1}}).contiguous();
  if (rank == 0) {
    res.field.assign(static_cast<std::size_t>(n * n), 0.0f);
    for (std::int64_t j = 0; j < n; ++j) res.field[static_cast<std::size_t>(j)] = 1.0f;
    std::vector<float> mine = owned.to_vector();
    std::copy(mine.begin(), mine.end(), res.field.begin() + first * n);
    for (int q = 1; q < size; ++q) {
      std::int64_t f = 0, l = 0;
      band(n, q, size, &f, &l);
      if (l == f) continue;
      auto part = porta::Array<float>(porta::Shape{(l - f) * n}, dev);
      comm.irecv(part, q, 2).wait();
      const std::vector<float> p = part.to_vector();
      std::copy(p.begin(), p.end(), res.field.begin() + f * n);
    }
    res.field_hash = fnv1a(res.field);
  } else if (rows > 0) {
    comm.isend(owned.reshaped(porta::Shape{rows * n}), 0, 2).wait();
  }
  return res;
}

// The same sweeps on the host in double: the field must be within the heat example's bound.
double worst_error(const std::vector<float>& got, std::int64_t n, int steps) {
  std::vector<double> u(static_cast<std::size_t>(n * n), 0.0), v;
  for (std::int64_t j = 0; j < n; ++j) u[static_cast<std::size_t>(j)] = 1.0;
  v = u;
  const double r = kR;
  for (int s = 0; s < steps; ++s) {
    for (std::int64_t i = 1; i < n - 1; ++i)
      for (std::int64_t j = 1; j < n - 1; ++j) {
        const std::size_t k = static_cast<std::size_t>(i * n + j);
        v[k] = u[k] + r * (u[k - n] + u[k + n] + u[k - 1] + u[k + 1] - 4.0 * u[k]);
      }
    std::swap(u, v);
  }
  double worst = 0;
  for (std::size_t k = 0; k < got.size(); ++k) worst = std::max(worst, std::fabs(double(got[k]) - u[k]));
  return worst;
}

std::uint32_t bits(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof(b));
  return b;
}

// Solves alone, then over comm, and compares on rank 0. Returns the exit code of this rank.
int run(const dist::Communicator& comm, std::int64_t n, int steps) {
  const porta::Device dev = comm.local_device();
  const Result one = solve(dist::Communicator::self(), dev, n, steps);
  const Result all = solve(comm, dev, n, steps);
  if (comm.rank() != 0) return 0;
  std::printf("heat_distributed: %lld x %lld plate, %d sweeps, %d rank(s) (%s; arrays on %s moved by %s)\n",
              static_cast<long long>(n), static_cast<long long>(n), steps, comm.size(), comm.describe().c_str(),
              dev.to_string().c_str(), comm.transport(dev).c_str());
  std::printf("  one rank : residual %.9g (0x%08" PRIx32 ")  heat %.9g (0x%08" PRIx32 ")  field %016" PRIx64 "\n",
              double(one.residual), bits(one.residual), double(one.heat), bits(one.heat), one.field_hash);
  std::printf("  %d rank(s): residual %.9g (0x%08" PRIx32 ")  heat %.9g (0x%08" PRIx32 ")  field %016" PRIx64 "\n",
              comm.size(), double(all.residual), bits(all.residual), double(all.heat), bits(all.heat), all.field_hash);
  const bool same =
      bits(one.residual) == bits(all.residual) && bits(one.heat) == bits(all.heat) && one.field_hash == all.field_hash;
  const double eps = 0.5 * 1.1920929e-7, tol = 8.0 * steps * eps, worst = worst_error(all.field, n, steps);
  std::printf("  bit-identical to one rank: %s\n", same ? "yes" : "NO");
  std::printf("  field vs double reference: max error %.3e (bound %.3e)  %s\n", worst, tol,
              worst <= tol ? "OK" : "WRONG");
  return same && worst <= tol ? 0 : 1;
}

int main(int argc, char** argv) try {
  std::int64_t n = 256;
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
      std::fprintf(stderr, "usage: %s [--n N (>= 3)] [--steps S (>= 1)] [--threads K (ranks as threads)]\n", argv[0]);
      return 2;
    }
  }
  if (n < 3 || steps < 1 || threads < 0) {
    std::fprintf(stderr, "heat_distributed: --n must be >= 3, --steps >= 1, --threads >= 0\n");
    return 2;
  }
  if (threads > 0) {
    std::vector<dist::Communicator> comms = dist::Communicator::local(threads);
    std::vector<int> rc(static_cast<std::size_t>(threads), 0);
    std::vector<std::thread> ts;
    for (int r = 0; r < threads; ++r) ts.emplace_back([&, r] { rc[r] = run(comms[r], n, steps); });
    for (std::thread& t : ts) t.join();
    return rc[0];
  }
  // MPI only when a launcher started this process (mpirun, mpiexec, srun): run alone, it would
  // start MPI as a singleton for nothing.
  const bool launched = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
                        std::getenv("PMIX_RANK") != nullptr;
  const dist::MpiInfo mpi = dist::mpi_info();
  if (!launched || !mpi.available) {
    std::printf("heat_distributed: one rank (%s)\n",
                !launched ? "not started by an MPI launcher" : ("no MPI: " + mpi.reason).c_str());
    return run(dist::Communicator::self(), n, steps);
  }
  return run(dist::Communicator::world(), n, steps);
} catch (const std::exception& e) {
  std::fprintf(stderr, "heat_distributed: %s\n", e.what());
  return 1;
}
