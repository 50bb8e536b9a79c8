// SPDX-License-Identifier: Apache-2.0
// porta::distributed on the CPU: what one allreduce costs, over thread ranks of one process or over
// MPI processes, so that the collective-call check (docs/distributed.md) can be measured on any
// machine. The check is read once per process: run once as is and once with PORTA_DIST_CHECK=0.
//
//   porta_dist_cpu_bench [--ranks N] [--bytes B] [--calls C] [--rounds R]   # N thread ranks (2)
//   mpirun -np 2 porta_dist_cpu_bench [--bytes B] ...                       # MPI_COMM_WORLD
//
// Each round starts with a barrier, then times C in-place float allreduces (sum) of B bytes one by
// one on rank 0; the line printed holds the median of every call timed, and the quartiles, in
// microseconds. Medians, because a machine shared with other work (2 cores here) adds long outliers.
#include <porta/distributed.hpp>
#include <porta/porta.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace dist = porta::distributed;

struct Options {
  int ranks = 2;
  std::int64_t bytes = std::int64_t{1} << 20;
  int calls = 50;
  int rounds = 40;
};

bool under_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}

// Per-call times of rank 0 in microseconds; empty on the other ranks.
std::vector<double> run(const dist::Communicator& c, const Options& o) {
  const porta::Device cpu{porta::DeviceType::cpu, 0};
  auto x = porta::zeros<float>(porta::Shape{o.bytes / 4}, cpu);
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(o.calls) * static_cast<std::size_t>(o.rounds));
  for (int i = 0; i < 5; ++i) c.allreduce(x);  // warm-up: pages, caches
  for (int round = 0; round < o.rounds; ++round) {
    c.barrier();
    for (int i = 0; i < o.calls; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      c.allreduce(x);
      const auto t1 = std::chrono::steady_clock::now();
      if (c.rank() == 0) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
  }
  return us;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

void print(const std::vector<double>& us, const Options& o, const std::string& where) {
  const char* check = std::getenv("PORTA_DIST_CHECK");
  std::printf("allreduce float32 sum, %lld bytes, %s, check %s: median %.2f us (quartiles %.2f, %.2f) over %zu calls\n",
              static_cast<long long>(o.bytes), where.c_str(),
              check != nullptr && std::strcmp(check, "0") == 0 ? "off" : "on", quantile(us, 0.5), quantile(us, 0.25),
              quantile(us, 0.75), us.size());
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const long long v = std::atoll(argv[i + 1]);
    if (a == "--ranks") {
      o.ranks = static_cast<int>(v);
    } else if (a == "--bytes") {
      o.bytes = v;
    } else if (a == "--calls") {
      o.calls = static_cast<int>(v);
    } else if (a == "--rounds") {
      o.rounds = static_cast<int>(v);
    } else {
      std::fprintf(stderr, "usage: %s [--ranks N] [--bytes B] [--calls C] [--rounds R]\n", argv[0]);
      return 2;
    }
  }
  if (std::getenv("PORTA_BENCH_SMOKE") != nullptr) {
    o.calls = 3;
    o.rounds = 2;
  }
  if (under_mpirun()) {
    const dist::Communicator w = dist::Communicator::world();
    const std::vector<double> us = run(w, o);
    if (w.rank() == 0) print(us, o, std::to_string(w.size()) + " MPI ranks");
    return 0;
  }
  std::vector<dist::Communicator> comms = dist::Communicator::local(o.ranks);
  std::vector<double> us;
  std::vector<std::thread> others;
  for (int r = 1; r < o.ranks; ++r) others.emplace_back([&, r] { run(comms[r], o); });
  us = run(comms[0], o);
  for (std::thread& t : others) t.join();
  print(us, o, std::to_string(o.ranks) + " thread ranks");
  return 0;
}
