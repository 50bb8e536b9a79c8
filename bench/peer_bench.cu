// SPDX-License-Identifier: Apache-2.0
// Copies between two GPUs of one machine: porta beside cudaMemcpyPeerAsync.
//
//   peer/cudaMemcpyPeerAsync/<bytes>   the CUDA call on a stream of cuda:0, peer access enabled both
//                                      ways, then cudaStreamSynchronize: the ceiling
//   peer/porta_copy/<bytes>            porta::copy(src on cuda:0, dst on cuda:1), then the
//                                      destination synchronised (the copy is asynchronous)
//   peer/porta_to/<bytes>              src.to(cuda:1) including the allocation from the pool
//
// Host wall-clock time per copy (manual time) after a warm-up copy; bytes per second are reported.
// The cases of one size run one after the other in one process, peer and porta alike. With fewer
// than two CUDA devices the binary registers one case that says why and exits 0.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>
#include <porta/porta.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

const porta::Device kSrc{porta::DeviceType::cuda, 0};
const porta::Device kDst{porta::DeviceType::cuda, 1};

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "peer_bench: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

template <class Body>
void timed(benchmark::State& state, std::int64_t bytes, Body&& body) {
  body();  // warm-up: peer access, pool growth
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    body();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

void cuda_peer(benchmark::State& state) {
  const std::int64_t bytes = state.range(0);
  void *src = nullptr, *dst = nullptr;
  cudaStream_t s = nullptr;
  check(cudaSetDevice(1), "cudaSetDevice");
  check(cudaMalloc(&dst, bytes), "cudaMalloc");
  (void)cudaDeviceEnablePeerAccess(0, 0);
  check(cudaSetDevice(0), "cudaSetDevice");
  check(cudaMalloc(&src, bytes), "cudaMalloc");
  (void)cudaDeviceEnablePeerAccess(1, 0);
  (void)cudaGetLastError();  // "already enabled" when porta's cases ran first
  check(cudaStreamCreate(&s), "cudaStreamCreate");
  check(cudaMemset(src, 1, bytes), "cudaMemset");
  timed(state, bytes, [&] {
    check(cudaMemcpyPeerAsync(dst, 1, src, 0, bytes, s), "cudaMemcpyPeerAsync");
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  });
  check(cudaStreamDestroy(s), "cudaStreamDestroy");
  check(cudaFree(src), "cudaFree");
  check(cudaFree(dst), "cudaFree");
}

void porta_copy(benchmark::State& state) {
  const std::int64_t bytes = state.range(0);
  auto src = porta::full<float>(porta::Shape{bytes / 4}, 1.0f, kSrc);
  porta::Array<float> dst(porta::Shape{bytes / 4}, kDst);
  timed(state, bytes, [&] {
    porta::copy(src, dst);
    porta::synchronize(kDst);
  });
}

void porta_to(benchmark::State& state) {
  const std::int64_t bytes = state.range(0);
  auto src = porta::full<float>(porta::Shape{bytes / 4}, 1.0f, kSrc);
  timed(state, bytes, [&] {
    auto dst = src.to(kDst);
    porta::synchronize(kDst);
  });
}

void unavailable(benchmark::State& state, std::string why) {
  for (auto _ : state) {
  }
  state.SkipWithError(why.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
  (void)cudaGetLastError();
  // PORTA_BENCH_SMOKE=1 (scripts/bench.sh --smoke): one small size.
  const bool smoke = std::getenv("PORTA_BENCH_SMOKE") != nullptr;
  if (n < 2 || !porta::is_available(kDst)) {
    benchmark::RegisterBenchmark("peer/unavailable", unavailable,
                                 "copies between GPUs need two CUDA devices; this machine has " + std::to_string(n));
  } else {
    for (std::int64_t bytes = std::int64_t{1} << 20; bytes <= (std::int64_t{1} << 30); bytes <<= (smoke ? 30 : 2)) {
      // The peer first at each size, then porta: interleaved, one process, same conditions.
      benchmark::RegisterBenchmark("peer/cudaMemcpyPeerAsync", cuda_peer)->Arg(bytes)->UseManualTime();
      benchmark::RegisterBenchmark("peer/porta_copy", porta_copy)->Arg(bytes)->UseManualTime();
      benchmark::RegisterBenchmark("peer/porta_to", porta_to)->Arg(bytes)->UseManualTime();
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
