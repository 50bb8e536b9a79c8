// SPDX-License-Identifier: Apache-2.0
// porta::distributed::from_mpi on a communicator of the application's own: the world
// split into even and odd ranks. porta's Communicator must see the same ranks as MPI does, work
// on its own duplicate (the application's messages on the split communicator do not mix with
// porta's), and its collectives and distributed sum must run over that group only.
#include <mpi.h>

#include <porta/distributed_mpi.hpp>
#include <porta/porta.hpp>

#include <cstdio>
#include <cstring>
#include <vector>

namespace {
int failures = 0;
void expect(bool ok, const char* what, int rank) {
  if (!ok) {
    std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what);
    ++failures;
  }
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);  // the application initialises MPI; porta must then leave it to finalise
  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &half);
  int rank = 0, size = 1;
  MPI_Comm_rank(half, &rank);
  MPI_Comm_size(half, &size);
  try {
    auto comm = porta::distributed::from_mpi(half);
    expect(comm.rank() == rank && comm.size() == size, "rank and size are MPI's", world_rank);
    // An application message on `half` posted around porta's collective is not taken by porta.
    int token = 1000 + rank, got = -1;
    MPI_Request rq[2];
    MPI_Irecv(&got, 1, MPI_INT, (rank + size - 1) % size, 0, half, &rq[0]);
    MPI_Isend(&token, 1, MPI_INT, (rank + 1) % size, 0, half, &rq[1]);
    const porta::Device cpu{porta::DeviceType::cpu, 0};
    auto x = porta::full<double>(porta::Shape{5}, double(world_rank), cpu);
    comm.allreduce(x);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    expect(got == 1000 + (rank + size - 1) % size, "the application's message arrives intact", world_rank);
    double want = 0;  // the world ranks of this half
    for (int r = world_rank % 2; r < world_size; r += 2) want += r;
    const std::vector<double> v = x.to_vector();
    bool ok = true;
    for (double e : v) ok &= e == want;
    expect(ok, "allreduce over the half only", world_rank);
    // The distributed sum over the half: every rank holds 1000 + world_rank elements of 0.5.
    auto part = porta::full<float>(porta::Shape{1000 + world_rank}, 0.5f, cpu);
    std::int64_t total = 0;
    for (int r = world_rank % 2; r < world_size; r += 2) total += 1000 + r;
    const float s = comm.sum(part);
    const float ref = porta::sum(porta::full<float>(porta::Shape{total}, 0.5f, cpu));
    expect(std::memcmp(&s, &ref, sizeof s) == 0, "distributed sum has porta::sum's bits", world_rank);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: threw %s\n", world_rank, e.what());
    ++failures;
  }
  MPI_Comm_free(&half);
  MPI_Finalize();
  if (world_rank == 0 && failures == 0) std::printf("from_mpi: %d ranks, all checks passed\n", world_size);
  return failures == 0 ? 0 : 1;
}
