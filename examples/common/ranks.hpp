// SPDX-License-Identifier: Apache-2.0
// How the whole-program examples (cg, nbody, monte_carlo) get their ranks, as heat_distributed
// does: `--threads K` gives K ranks as threads of one process; under an MPI launcher every process
// is a rank of MPI_COMM_WORLD; otherwise the program is one rank alone. The program is the same
// in every case: a function of a Communicator, whose exit codes are combined here.
#pragma once

#include <porta/distributed.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace example {

// Runs body(comm) on each rank; the exit code is the worst of this process's ranks.
template <class Body>
int run_on_ranks(int threads, const char* name, Body&& body) {
  namespace dist = porta::distributed;
  if (threads > 0) {
    std::vector<dist::Communicator> comms = dist::Communicator::local(threads);
    std::vector<int> rc(static_cast<std::size_t>(threads), 0);
    std::vector<std::thread> ts;
    for (int r = 0; r < threads; ++r)
      ts.emplace_back([&, r] {
        try {
          rc[static_cast<std::size_t>(r)] = body(comms[static_cast<std::size_t>(r)]);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "%s: rank %d: %s\n", name, r, e.what());
          rc[static_cast<std::size_t>(r)] = 2;
        }
      });
    for (std::thread& t : ts) t.join();
    int worst = 0;
    for (int c : rc) worst = c > worst ? c : worst;
    return worst;
  }
  // MPI only when a launcher started this process: run alone, it would start MPI as a singleton
  // for nothing.
  const bool launched = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
                        std::getenv("PMIX_RANK") != nullptr;
  if (launched) {
    const dist::MpiInfo mpi = dist::mpi_info();
    if (mpi.available) return body(dist::Communicator::world());
    std::printf("%s: one rank (no MPI: %s)\n", name, mpi.reason.c_str());
  }
  return body(dist::Communicator::self());
}

// Rows [first, last) of `n` that rank `rank` of `size` owns: as even as possible, in rank order.
inline void split(std::int64_t n, int rank, int size, std::int64_t* first, std::int64_t* last) {
  *first = n * rank / size;
  *last = n * (rank + 1) / size;
}

}  // namespace example
