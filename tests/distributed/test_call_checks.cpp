// SPDX-License-Identifier: Apache-2.0
// Collectives that the ranks call differently: each rank must get a porta::Error naming both ranks'
// calls, and none may wait for ever or return a wrong result. Also a thread rank that leaves (its
// last Communicator handle destroyed) while others wait for it, and queries on devices that do not
// exist.
//
// Two ways to run, as test_distributed.cpp: thread groups of 2 and 3 ranks, and under mpirun with
// PORTA_TEST_MPI=1 (tests/distributed/mpi_tests.cmake registers 2 and 3 ranks), where each case
// runs once over a fresh duplicate of MPI_COMM_WORLD. Both have a short ctest TIMEOUT: a check that
// fails to fire shows up as a hang, and the time limit turns it into a failure.
//
// Catch2's assertions are not thread-safe: ranks collect failures in a Report; the thread that runs
// the test case reports them.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "porta/distributed.hpp"
#include "support/support.hpp"

namespace dist = porta::distributed;
using porta::Array;
using porta::Device;
using porta::DeviceType;
using porta::Shape;

namespace {

const Device kCpu{DeviceType::cpu, 0};

struct Report {
  int rank = 0;
  std::vector<std::string> failures;
  void fail(const std::string& what) { failures.push_back("rank " + std::to_string(rank) + ": " + what); }
};

bool mpi_mode() {
  const char* v = std::getenv("PORTA_TEST_MPI");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

using Body = std::function<void(const dist::Communicator&, Report&)>;

void run_one(const dist::Communicator& c, const Body& body, Report& rep) {
  rep.rank = c.rank();
  try {
    body(c, rep);
  } catch (const std::exception& e) {
    rep.fail(std::string("threw ") + e.what());
  }
}

void report(const std::vector<Report>& reps, const std::string& where) {
  for (const Report& rep : reps) {
    for (const std::string& f : rep.failures) FAIL_CHECK(where << ", " << f);
    CHECK(rep.failures.empty());
  }
}

// body on every rank of a fresh communicator: thread groups of 2 and 3 ranks, or the MPI world
// (two ranks at least).
void run_ranks(const Body& body) {
  if (mpi_mode()) {
    const dist::Communicator w = dist::Communicator::world();  // a new duplicate: its own call count
    if (w.size() < 2) {
      PORTA_SKIP("needs two ranks or more");
    }
    std::vector<Report> reps(1);
    run_one(w, body, reps[0]);
    report(reps, std::to_string(w.size()) + " MPI ranks");
    return;
  }
  for (int k = 2; k <= 3; ++k) {
    std::vector<dist::Communicator> comms = dist::Communicator::local(k);
    std::vector<Report> reps(static_cast<std::size_t>(k));
    std::vector<std::thread> threads;
    for (int r = 0; r < k; ++r) threads.emplace_back([&, r] { run_one(comms[r], body, reps[r]); });
    for (std::thread& t : threads) t.join();
    report(reps, std::to_string(k) + " thread ranks");
  }
}

// f() must throw E whose message holds every one of parts.
template <class E, class F>
void expect_throw(Report& rep, const std::string& what, F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    rep.fail(what + ": did not throw");
  } catch (const E& e) {
    const std::string m = e.what();
    for (const std::string& p : parts)
      if (m.find(p) == std::string::npos) rep.fail(what + ": the message lacks \"" + p + "\": " + m);
  } catch (const std::exception& e) {
    rep.fail(what + ": threw another type: " + e.what());
  }
}

// After a mismatch every rank is at the same call again: a matched allreduce gives the right sum.
void still_works(const dist::Communicator& c, Report& rep) {
  auto x = porta::full<std::int64_t>(Shape{5}, c.rank() + 1, kCpu);
  c.allreduce(x);
  const std::int64_t want = static_cast<std::int64_t>(c.size()) * (c.size() + 1) / 2;
  for (std::int64_t v : x.to_vector())
    if (v != want) {
      rep.fail("the allreduce after the mismatch gave " + std::to_string(v) + ", expected " + std::to_string(want));
      break;
    }
}

std::string ranks_pair(int a, const std::string& ca, int b, const std::string& cb) {
  return "rank " + std::to_string(a) + " called " + ca + ", rank " + std::to_string(b) + " called " + cb;
}

}  // namespace

TEST_CASE("call checks: allreduce with different dtypes, counts or ops throws on every rank", "[distributed]") {
  run_ranks([](const dist::Communicator& c, Report& rep) {
    const int r = c.rank(), last = c.size() - 1;
    // dtype: float32 on rank 0, float64 elsewhere
    expect_throw<porta::InvalidArgument>(
        rep, "allreduce of float32 and float64",
        [&] {
          if (r == 0) {
            auto x = porta::ones<float>(Shape{1024}, kCpu);
            c.allreduce(x);
          } else {
            auto x = porta::ones<double>(Shape{1024}, kCpu);
            c.allreduce(x);
          }
        },
        {"porta::distributed::allreduce: " +
         ranks_pair(0, "allreduce(float32, 1024, sum)", 1, "allreduce(float64, 1024, sum)")});
    still_works(c, rep);
    // count: one more element on the last rank
    expect_throw<porta::InvalidArgument>(
        rep, "allreduce of 1000 and 1001 elements",
        [&] {
          auto x = porta::ones<float>(Shape{r == last ? 1001 : 1000}, kCpu);
          c.allreduce(x);
        },
        {"porta::distributed::allreduce: " +
         ranks_pair(0, "allreduce(float32, 1000, sum)", last, "allreduce(float32, 1001, sum)")});
    still_works(c, rep);
    // op: sum on rank 0, max elsewhere; out of place
    expect_throw<porta::InvalidArgument>(rep, "allreduce with sum and max",
                                         [&] {
                                           auto x = porta::ones<std::int32_t>(Shape{7}, kCpu);
                                           auto y = porta::zeros<std::int32_t>(Shape{7}, kCpu);
                                           c.allreduce(x, y, r == 0 ? dist::Op::sum : dist::Op::max);
                                         },
                                         {ranks_pair(0, "allreduce(int32, 7, sum)", 1, "allreduce(int32, 7, max)")});
    still_works(c, rep);
  });
}

TEST_CASE("call checks: collectives called in different orders do not pair up", "[distributed]") {
  run_ranks([](const dist::Communicator& c, Report& rep) {
    const int r = c.rank();
    auto a = porta::ones<float>(Shape{64}, kCpu);
    auto b = porta::ones<float>(Shape{64}, kCpu);
    auto do_allreduce = [&] { c.allreduce(a); };
    auto do_broadcast = [&] { c.broadcast(b, 0); };
    const std::string pair = ranks_pair(0, "allreduce(float32, 64, sum)", 1, "broadcast(float32, 64, root 0)");
    const std::string swapped = ranks_pair(0, "broadcast(float32, 64, root 0)", 1, "allreduce(float32, 64, sum)");
    // rank 0: allreduce, broadcast; the others: broadcast, allreduce
    if (r == 0) {
      expect_throw<porta::InvalidArgument>(rep, "first call", do_allreduce, {"porta::distributed::allreduce: " + pair});
      expect_throw<porta::InvalidArgument>(rep, "second call", do_broadcast,
                                           {"porta::distributed::broadcast: " + swapped});
    } else {
      expect_throw<porta::InvalidArgument>(rep, "first call", do_broadcast, {"porta::distributed::broadcast: " + pair});
      expect_throw<porta::InvalidArgument>(rep, "second call", do_allreduce,
                                           {"porta::distributed::allreduce: " + swapped});
    }
    // a barrier against an allgather
    auto g = porta::zeros<float>(Shape{64 * c.size()}, kCpu);
    expect_throw<porta::InvalidArgument>(rep, "barrier against allgather",
                                         [&] {
                                           if (r == 0) {
                                             c.barrier();
                                           } else {
                                             c.allgather(a, g);
                                           }
                                         },
                                         {ranks_pair(0, "barrier()", 1, "allgather(float32, 64)")});
    still_works(c, rep);
  });
}

TEST_CASE("call checks: broadcast from different roots, reduce and reduce_scatter", "[distributed]") {
  run_ranks([](const dist::Communicator& c, Report& rep) {
    const int r = c.rank(), k = c.size();
    auto x = porta::full<double>(Shape{333}, r, kCpu);
    expect_throw<porta::InvalidArgument>(
        rep, "broadcast from roots 0 and 1", [&] { c.broadcast(x, r == 0 ? 0 : 1); },
        {"porta::distributed::broadcast: " +
         ranks_pair(0, "broadcast(float64, 333, root 0)", 1, "broadcast(float64, 333, root 1)")});
    // the data was not touched
    for (double v : x.to_vector())
      if (v != r) {
        rep.fail("the refused broadcast changed x");
        break;
      }
    auto y = porta::zeros<double>(Shape{333}, kCpu);
    expect_throw<porta::InvalidArgument>(
        rep, "reduce to roots 0 and 1", [&] { c.reduce(x, y, r == 0 ? 0 : 1, dist::Op::min); },
        {ranks_pair(0, "reduce(float64, 333, min, root 0)", 1, "reduce(float64, 333, min, root 1)")});
    auto s = porta::zeros<double>(Shape{3 * k}, kCpu);
    auto z = porta::zeros<double>(Shape{3}, kCpu);
    expect_throw<porta::InvalidArgument>(
        rep, "reduce_scatter with prod and sum",
        [&] { c.reduce_scatter(s, z, r == 0 ? dist::Op::prod : dist::Op::sum); },
        {ranks_pair(0, "reduce_scatter(float64, 3, prod)", 1, "reduce_scatter(float64, 3, sum)")});
    still_works(c, rep);
  });
}

TEST_CASE("call checks: the distributed sum of float32 on one rank and float64 on another", "[distributed]") {
  run_ranks([](const dist::Communicator& c, Report& rep) {
    const int r = c.rank();
    expect_throw<porta::InvalidArgument>(
        rep, "sum of float32 and float64",
        [&] {
          if (r == 0) {
            (void)c.sum(porta::ones<float>(Shape{100000}, kCpu));
          } else {
            (void)c.sum(porta::ones<double>(Shape{50000 + r}, kCpu));
          }
        },
        {"porta::distributed::Communicator::sum: " + ranks_pair(0, "sum(float32)", 1, "sum(float64)")});
    // each rank's own length is its own: a sum of matched dtypes and uneven parts still works
    const double got = c.sum(porta::ones<double>(Shape{1000 * (r + 1)}, kCpu));
    const double want = 1000.0 * c.size() * (c.size() + 1) / 2;
    if (got != want) rep.fail("the sum after the mismatch is " + std::to_string(got));
    expect_throw<porta::InvalidArgument>(rep, "dot against norm2",
                                         [&] {
                                           auto v = porta::ones<float>(Shape{10}, kCpu);
                                           if (r == 0) {
                                             (void)c.dot(v, v);
                                           } else {
                                             (void)c.norm2(v);
                                           }
                                         },
                                         {ranks_pair(0, "dot(float32)", 1, "norm2(float32)")});
    still_works(c, rep);
  });
}

TEST_CASE("call checks: a collective that failed on one rank alone puts it a call ahead", "[distributed]") {
  run_ranks([](const dist::Communicator& c, Report& rep) {
    const int r = c.rank();
    // The root's recv has the wrong size: only the root knows, and it throws before the others
    // hear of the call. Its next call (a barrier) then meets the others' reduce, and every rank
    // is told, instead of the barrier pairing with the reduce.
    auto x = porta::ones<float>(Shape{16}, kCpu);
    auto bad = porta::zeros<float>(Shape{15}, kCpu);
    if (r == 1) {
      expect_throw<porta::InvalidArgument>(rep, "reduce into a short recv", [&] { c.reduce(x, bad, 1); },
                                           {"porta::distributed::reduce: ", "recv on the root 15"});
      expect_throw<porta::InvalidArgument>(rep, "the root's next call", [&] { c.barrier(); },
                                           {"porta::distributed::Communicator::barrier: ", "a call ahead"});
    } else {
      expect_throw<porta::InvalidArgument>(
          rep, "reduce while the root failed", [&] { c.reduce(x, bad, 1); },
          {"porta::distributed::reduce: rank 0 called reduce(float32, 16, sum, root 1) as its call ",
           "rank 1 called barrier() as its call ", "a call ahead"});
    }
  });
}

TEST_CASE("call checks: ranks on devices of different types, and over device collectives", "[distributed]") {
  const Device gpu = porta::default_device();
  if (gpu.type == DeviceType::cpu) {
    PORTA_SKIP("needs a GPU: arrays on the CPU on one rank, on a GPU on the others");
  }
  int gpus = 0;
  for (const Device& d : porta::devices())
    if (d.type == gpu.type) ++gpus;
  run_ranks([gpu, gpus](const dist::Communicator& c, Report& rep) {
    const int r = c.rank();
    // one GPU per rank where there are enough (NCCL/RCCL then moves the data), else shared (staged)
    const Device own{gpu.type, (gpu.index + c.local_rank()) % gpus};
    const std::string type = porta::to_string(gpu.type);
    for (int round = 0; round < 2; ++round) {
      auto x = porta::ones<float>(Shape{256}, r == 0 ? kCpu : own);
      expect_throw<porta::InvalidArgument>(
          rep, "allreduce on cpu and " + type, [&] { c.allreduce(x); },
          {ranks_pair(0, "allreduce(float32, 256, sum) on cpu", 1, "allreduce(float32, 256, sum) on " + type)});
      // every rank on the GPU type: the device collectives are set up (in the first round)
      auto y = porta::ones<float>(Shape{256}, own);
      c.allreduce(y);
      if (y.to_vector()[0] != static_cast<float>(c.size())) rep.fail("the matched allreduce on " + type);
    }
    // counts that differ never reach the device collective, which would wait on the GPU for ever
    auto z = porta::ones<float>(Shape{r == 0 ? 300 : 301}, own);
    expect_throw<porta::InvalidArgument>(
        rep, "allreduce of 300 and 301 elements on " + type + " via " + c.transport(own), [&] { c.allreduce(z); },
        {ranks_pair(0, "allreduce(float32, 300, sum)", 1, "allreduce(float32, 301, sum)")});
    auto b = porta::ones<double>(Shape{64}, own);
    expect_throw<porta::InvalidArgument>(
        rep, "broadcast from two roots on " + type, [&] { c.broadcast(b, r == 0 ? 0 : 1); },
        {ranks_pair(0, "broadcast(float64, 64, root 0)", 1, "broadcast(float64, 64, root 1)")});
    auto y = porta::ones<float>(Shape{256}, own);
    c.allreduce(y);
    if (y.to_vector()[0] != static_cast<float>(c.size()))
      rep.fail("the allreduce on " + type + " after the mismatches");
  });
}

TEST_CASE("call checks: a thread rank that leaves while others wait for it", "[distributed]") {
  if (mpi_mode()) return;
  for (int k = 2; k <= 3; ++k) {
    INFO(k << " thread ranks");
    const int gone = k - 1;
    const std::string left = "rank " + std::to_string(gone) + " left the communicator";
    // (1) the others wait in a collective when its last handle is destroyed
    {
      std::vector<dist::Communicator> comms = dist::Communicator::local(k);
      std::vector<Report> reps(static_cast<std::size_t>(k));
      std::vector<std::thread> threads;
      for (int r = 0; r < gone; ++r)
        threads.emplace_back([&, r] {
          reps[r].rank = r;
          auto x = porta::ones<float>(Shape{1024}, kCpu);
          expect_throw<porta::Unavailable>(reps[r], "allreduce", [&] { comms[r].allreduce(x); },
                                           {"porta::distributed::allreduce: " + left, "allreduce(float32, 1024, sum)"});
        });
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // usually waiting by now; either way is tested
      comms[gone] = dist::Communicator();
      for (std::thread& t : threads) t.join();
      report(reps, "a handle destroyed");
    }
    // (2) its thread leaves by an exception, with the handle it owns; the others call afterwards
    {
      std::vector<dist::Communicator> comms = dist::Communicator::local(k);
      std::thread quitter([c = std::move(comms[gone])]() mutable {
        try {
          const dist::Communicator mine = std::move(c);  // unwinding destroys the rank's last handle
          throw std::runtime_error("the rank's own failure");
        } catch (const std::runtime_error&) {
        }
      });
      quitter.join();
      std::vector<Report> reps(static_cast<std::size_t>(k));
      std::vector<std::thread> threads;
      for (int r = 0; r < gone; ++r)
        threads.emplace_back([&, r] {
          reps[r].rank = r;
          expect_throw<porta::Unavailable>(reps[r], "barrier", [&] { comms[r].barrier(); },
                                           {"porta::distributed::Communicator::barrier: " + left});
          auto x = porta::ones<double>(Shape{8}, kCpu);
          expect_throw<porta::Unavailable>(reps[r], "sum", [&] { (void)comms[r].sum(x); }, {left});
        });
      for (std::thread& t : threads) t.join();
      report(reps, "a thread left by an exception");
    }
    // (3) a receive from it fails once it is gone, after the messages it did send
    {
      std::vector<dist::Communicator> comms = dist::Communicator::local(k);
      auto sent = Array<float>::from(std::vector<float>{1, 2, 3}, kCpu);
      comms[gone].isend(sent, 0, 5).wait();
      comms[gone] = dist::Communicator();
      auto got = porta::zeros<float>(Shape{3}, kCpu);
      comms[0].irecv(got, gone, 5).wait();
      CHECK(got.to_vector() == std::vector<float>{1, 2, 3});
      dist::Request more = comms[0].irecv(got, gone, 5);
      CHECK_THROWS_AS(more.test(), porta::Unavailable);
      dist::Request again = comms[0].irecv(got, gone, 6);
      CHECK_THROWS_WITH(again.wait(), porta_test::Contains("porta::distributed::Request::wait: " + left));
    }
  }
}

TEST_CASE("call checks: queries on devices that do not exist are Unavailable", "[distributed]") {
  const dist::Communicator self = dist::Communicator::self();
  for (const Device d : {Device{DeviceType::cpu, 1}, Device{DeviceType::cpu, -1}, Device{DeviceType::cuda, 7},
                         Device{DeviceType::hip, 9}}) {
    INFO(d.to_string());
    CHECK_THROWS_AS(self.transport(d), porta::Unavailable);
    CHECK_THROWS_WITH(self.transport(d),
                      porta_test::Contains("porta::distributed::Communicator::transport: " + d.to_string() + ": "));
  }
  CHECK_THROWS_WITH(self.transport(Device{DeviceType::cpu, 1}), porta_test::Contains("there is no cpu:1"));
  CHECK(self.transport(kCpu) == "threads");
  // and in a group of two, on every rank alike, without a collective started
  std::vector<dist::Communicator> comms = dist::Communicator::local(2);
  for (const dist::Communicator& c : comms)
    CHECK_THROWS_AS(c.transport(Device{DeviceType::cpu, 1}), porta::Unavailable);
  std::thread t([&] { comms[1].barrier(); });
  comms[0].barrier();  // the refused queries left the ranks in step
  t.join();
}
