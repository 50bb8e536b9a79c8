// SPDX-License-Identifier: Apache-2.0
// An application that uses MPI itself, beside porta (tests/distributed/mpi_tests.cmake runs it under
// mpirun). Exit status 0 when porta behaved:
//
//   app-init      the application initialises MPI (MPI_THREAD_FUNNELED) and finalises it; porta
//                 uses that MPI, reports the application's thread level, and neither initialises
//                 nor finalises it again.
//   app-finalize  porta initialises MPI; the application finalises it while porta's communicator
//                 is alive; freeing that communicator afterwards is a no-op and porta's own
//                 finalisation at exit is skipped.
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "distributed/engine.hpp"

namespace dist = porta::detail::dist;

namespace {

int fail(const char* what) {
  std::fprintf(stderr, "mpi_app_init: %s\n", what);
  return 1;
}

// A sum over the ranks through porta's engine, checked against MPI's own size.
bool sums(dist::HostEngine& e) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::int64_t one = 1, total = 0;
  e.allreduce(&one, &total, 1, PORTA_I64, PORTA_REDUCE_SUM);
  return total == size && e.size() == size;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "app-init") {
    int provided = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    {
      const std::shared_ptr<dist::HostEngine> e = dist::mpi_world("mpi_app_init");
      if (!sums(*e)) return fail("allreduce over the application's MPI");
      const std::string want = provided == MPI_THREAD_FUNNELED ? "thread level funneled" : "thread level";
      if (e->describe().find(want) == std::string::npos) return fail(("describe(): " + e->describe()).c_str());
    }
    MPI_Finalize();  // the application's to do; porta must not finalise again at exit
    return 0;
  }
  if (mode == "app-finalize") {
    const std::shared_ptr<dist::HostEngine> e = dist::mpi_world("mpi_app_init");
    int init = 0;
    MPI_Initialized(&init);
    if (!init) return fail("mpi_world did not initialise MPI");
    if (e->describe().find("thread level multiple") == std::string::npos)
      return fail(("describe(): " + e->describe()).c_str());
    if (!sums(*e)) return fail("allreduce over porta's MPI");
    MPI_Finalize();
    return 0;  // e is destroyed after MPI_Finalize: comm_free must be a no-op
  }
  return fail("usage: mpi_app_init app-init|app-finalize");
}
