// SPDX-License-Identifier: Apache-2.0
// Collectives across the GPUs of one machine: porta::distributed beside NCCL called directly
//. One host thread per GPU, as a program driving its GPUs from one process would.
//
//   allreduce/nccl/<bytes>        ncclAllReduce (sum, float) on each GPU's stream, then the stream
//                                 synchronized: the ceiling
//   allreduce/porta/<bytes>       comm.allreduce(x) on Communicator::local(2), then the device
//                                 synchronized
//   allreduce/porta_stream/<bytes> the same on a porta::Stream per GPU, then that stream synchronized
//                                 (both labelled with whether the collective-call check is on: run
//                                 once as is and once with PORTA_DIST_CHECK=0 to measure it)
//   dsum/allreduce_local/<elems>  porta::sum of each GPU's half, then an allreduce of the two
//                                 values: the cheapest global sum, with bits that depend on the split
//   dsum/porta/<elems>            comm.sum(x): the bits of porta::sum over the whole array, for any split
//
// Both threads start each iteration together (a barrier) and the iteration ends when both are done;
// host wall-clock time of rank 0 (manual time). The cases of one size run one after the other in
// one process. With fewer than two CUDA devices the binary registers one case that says why.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>
#include <nccl.h>
#include <porta/distributed.hpp>
#include <porta/porta.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace dist = porta::distributed;
constexpr int kRanks = 2;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "dist_bench: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}
void check(ncclResult_t e, const char* what) {
  if (e != ncclSuccess) {
    std::fprintf(stderr, "dist_bench: %s: %s\n", what, ncclGetErrorString(e));
    std::exit(1);
  }
}

class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> lock(m_);
    const std::uint64_t gen = gen_;
    if (++count_ == n_) {
      count_ = 0;
      ++gen_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return gen_ != gen; });
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int n_, count_ = 0;
  std::uint64_t gen_ = 0;
};

// Runs step(rank) on kRanks threads, in lockstep: once to warm up, then once per iteration of state.
void lockstep(benchmark::State& state, std::int64_t bytes, const std::function<void(int)>& setup,
              const std::function<void(int)>& step) {
  Barrier bar(kRanks);
  const std::int64_t iters = static_cast<std::int64_t>(state.max_iterations);
  auto worker = [&](int r) {
    setup(r);
    step(r);  // warm-up: communicator set-up, pools
    for (std::int64_t i = 0; i < iters; ++i) {
      bar.wait();
      step(r);
      bar.wait();
    }
  };
  std::thread other(worker, 1);
  setup(0);
  step(0);
  for (auto _ : state) {
    bar.wait();
    const auto t0 = std::chrono::steady_clock::now();
    step(0);
    bar.wait();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  other.join();
  if (bytes > 0) state.SetBytesProcessed(state.iterations() * bytes);
}

// The collective-call check compares every call's signature across ranks on the host before NCCL
// is called (docs/distributed.md); PORTA_DIST_CHECK=0 turns it off, so running the allreduce cases
// both ways measures it.
std::string check_label() {
  const char* v = std::getenv("PORTA_DIST_CHECK");
  return v != nullptr && std::string(v) == "0" ? ", call check off" : ", call check on";
}

porta::Device gpu(int r) {
  return porta::Device{porta::DeviceType::cuda, r};
}

void nccl_allreduce(benchmark::State& state) {
  const std::int64_t bytes = state.range(0), n = bytes / 4;
  ncclComm_t comms[kRanks];
  int devs[kRanks] = {0, 1};
  check(ncclCommInitAll(comms, kRanks, devs), "ncclCommInitAll");
  float* buf[kRanks] = {};
  cudaStream_t s[kRanks] = {};
  lockstep(
      state, bytes,
      [&](int r) {
        check(cudaSetDevice(r), "cudaSetDevice");
        check(cudaMalloc(&buf[r], bytes), "cudaMalloc");
        check(cudaMemset(buf[r], 0, bytes), "cudaMemset");
        check(cudaStreamCreate(&s[r]), "cudaStreamCreate");
      },
      [&](int r) {
        check(ncclAllReduce(buf[r], buf[r], n, ncclFloat, ncclSum, comms[r], s[r]), "ncclAllReduce");
        check(cudaStreamSynchronize(s[r]), "cudaStreamSynchronize");
      });
  for (int r = 0; r < kRanks; ++r) {
    check(cudaSetDevice(r), "cudaSetDevice");
    check(cudaStreamDestroy(s[r]), "cudaStreamDestroy");
    check(cudaFree(buf[r]), "cudaFree");
    ncclCommDestroy(comms[r]);
  }
}

void porta_allreduce(benchmark::State& state) {
  const std::int64_t bytes = state.range(0), n = bytes / 4;
  std::vector<dist::Communicator> comms = dist::Communicator::local(kRanks);
  std::vector<porta::Array<float>> x(kRanks);
  lockstep(
      state, bytes, [&](int r) { x[r] = porta::zeros<float>(porta::Shape{n}, gpu(r)); },
      [&](int r) {
        comms[r].allreduce(x[r]);
        porta::synchronize(gpu(r));
      });
  state.SetLabel(comms[0].transport(gpu(0)) + check_label());
}

// The same on a porta::Stream of each GPU, waited for alone: what the default stream and the
// device-wide wait of porta_allreduce add.
void porta_allreduce_stream(benchmark::State& state) {
  const std::int64_t bytes = state.range(0), n = bytes / 4;
  std::vector<dist::Communicator> comms = dist::Communicator::local(kRanks);
  std::vector<porta::Array<float>> x(kRanks);
  std::vector<porta::Stream> s(kRanks);
  lockstep(
      state, bytes,
      [&](int r) {
        s[r] = porta::Stream(gpu(r));
        x[r] = porta::zeros<float>(porta::Shape{n}, gpu(r));
        porta::synchronize(gpu(r));
      },
      [&](int r) {
        comms[r].allreduce(x[r], dist::Op::sum, s[r]);
        s[r].synchronize();
      });
  state.SetLabel(comms[0].transport(gpu(0)) + check_label());
}

void dsum_allreduce_local(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  std::vector<dist::Communicator> comms = dist::Communicator::local(kRanks);
  std::vector<porta::Array<float>> x(kRanks);
  const porta::Device host{porta::DeviceType::cpu, 0};
  lockstep(
      state, n * 4, [&](int r) { x[r] = porta::random::uniform<float>(porta::Shape{n / kRanks}, 7, gpu(r)); },
      [&](int r) {
        auto v = porta::full<float>(porta::Shape{1}, porta::sum(x[r]), host);
        comms[r].allreduce(v);
        benchmark::DoNotOptimize(v.item(0));
      });
}

void dsum_porta(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  std::vector<dist::Communicator> comms = dist::Communicator::local(kRanks);
  std::vector<porta::Array<float>> x(kRanks);
  lockstep(
      state, n * 4, [&](int r) { x[r] = porta::random::uniform<float>(porta::Shape{n / kRanks}, 7, gpu(r)); },
      [&](int r) { benchmark::DoNotOptimize(comms[r].sum(x[r])); });
}

void unavailable(benchmark::State& state, std::string why) {
  for (auto _ : state) {
  }
  state.SkipWithError(why.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  setenv("NCCL_NVLS_ENABLE", "0", 0);  // NVLink multicast stays off on shared machines
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
  (void)cudaGetLastError();
  const bool smoke = std::getenv("PORTA_BENCH_SMOKE") != nullptr;
  if (n < kRanks || !porta::is_available(gpu(1))) {
    benchmark::RegisterBenchmark(
        "allreduce/unavailable", unavailable,
        "collectives across GPUs need two CUDA devices; this machine has " + std::to_string(n));
  } else {
    for (std::int64_t bytes = std::int64_t{1} << 20; bytes <= (std::int64_t{1} << 30); bytes <<= (smoke ? 30 : 2)) {
      const std::int64_t iters =
          std::max<std::int64_t>(10, std::min<std::int64_t>(300, (std::int64_t{1} << 33) / bytes));
      benchmark::RegisterBenchmark("allreduce/nccl", nccl_allreduce)->Arg(bytes)->Iterations(iters)->UseManualTime();
      benchmark::RegisterBenchmark("allreduce/porta", porta_allreduce)->Arg(bytes)->Iterations(iters)->UseManualTime();
      benchmark::RegisterBenchmark("allreduce/porta_stream", porta_allreduce_stream)
          ->Arg(bytes)
          ->Iterations(iters)
          ->UseManualTime();
    }
    for (std::int64_t e = std::int64_t{1} << 20; e <= (std::int64_t{1} << 28); e <<= (smoke ? 28 : 4)) {
      benchmark::RegisterBenchmark("dsum/allreduce_local", dsum_allreduce_local)
          ->Arg(e)
          ->Iterations(50)
          ->UseManualTime();
      benchmark::RegisterBenchmark("dsum/porta", dsum_porta)->Arg(e)->Iterations(50)->UseManualTime();
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
