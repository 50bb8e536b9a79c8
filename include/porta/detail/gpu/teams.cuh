// SPDX-License-Identifier: Apache-2.0
// The GPU side of porta/teams.hpp: a team is a thread block of vector_length x team_size threads
// (x: a thread's lanes, y: the team's threads) and its scratch is the block's dynamic shared
// memory. Included by teams.hpp in translation units compiled as CUDA or HIP.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

#include "porta/detail/gpu/api.cuh"
#include "porta/detail/gpu/faults.cuh"
#include "porta/detail/gpu/user_kernels.cuh"

namespace porta::detail::gpu_user {

// One block per team while the grid holds the league; beyond 2^31 - 1 teams, blocks take several,
// with a barrier between, since they reuse the scratch.
template <class F>
__global__ void team_kernel(std::int64_t league, std::size_t scratch, F f) {
  extern __shared__ __align__(16) unsigned char porta_team_scratch[];
  for (std::int64_t l = blockIdx.x; l < league; l += gridDim.x) {
    const Team t(TeamState{l, league, static_cast<int>(threadIdx.y), static_cast<int>(blockDim.y),
                           static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x), porta_team_scratch, scratch});
    f(t);
    if (l + gridDim.x < league) __syncthreads();
  }
}

// What a team kernel may use on one device, asked once per kernel and device: the driver's
// attribute calls cost more than a launch.
struct TeamLimits {
  int max_threads = 0;                  // threads per block this kernel can run (its registers decide)
  std::size_t static_smem = 0;          // bytes of static shared memory (porta's team reductions)
  int max_smem = 0;                     // bytes of shared memory a block may have on the device (opt-in)
  std::atomic<int> dynamic_allowed{0};  // dynamic shared memory the kernel is set up for (48 KiB less
                                        // its static shared memory, until porta opts it in to more)
};

template <class Kernel>
TeamLimits& team_limits(Kernel kernel, Device device, const char* fn) {
  static constexpr int kDevices = 64;
  static TeamLimits limits[kDevices];
  static std::atomic<bool> ready[kDevices];
  static std::mutex mutex;
  if (device.index < 0 || device.index >= kDevices)
    throw InvalidArgument(std::string(fn) + ": " + device_string(device) + ": team launches reach devices 0-63");
  TeamLimits& l = limits[device.index];
  if (!ready[device.index].load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!ready[device.index].load(std::memory_order_relaxed)) {
      int dynamic = 0;
      Api::Error e = Api::kernel_limits(kernel, &l.max_threads, &l.static_smem, &dynamic);
      if (e != Api::kSuccess) throw_api_error(fn, device, "reading the team kernel's limits", e);
      e = Api::max_shared_per_block(device.index, &l.max_smem);
      if (e != Api::kSuccess) throw_api_error(fn, device, "reading the shared memory per block", e);
      l.dynamic_allowed.store(dynamic, std::memory_order_relaxed);
      ready[device.index].store(true, std::memory_order_release);
    }
  }
  return l;
}

// f(team) for every member of every team of `p` on `device`, asynchronous on `native_stream`.
template <class F>
void teams(Device device, const Teams& p, const F& f, void* native_stream, const char* fn, const char* name) {
  gpu::DeviceGuard<Api> guard;
  enter(guard, device, fn);
  if (p.league() == 0) return;
  auto kernel = team_kernel<F>;
  TeamLimits& lim = team_limits(kernel, device, fn);
  const int vl = p.vector_length();
  int ts = p.team_size();
  if (ts == team_auto) {
    const int most = lim.max_threads < 256 ? lim.max_threads : 256;
    ts = most / vl < 1 ? 1 : most / vl;
  }
  if (ts * vl > lim.max_threads)
    throw InvalidArgument(std::string(fn) + ": " + device_string(device) + ": a team of " + std::to_string(ts) +
                          " threads x " + std::to_string(vl) + " lanes is more than the " +
                          std::to_string(lim.max_threads) +
                          " threads per block this kernel can run (its registers); ask for a smaller team, or "
                          "porta::team_auto");
  const std::size_t bytes = p.scratch_bytes();
  if (bytes + lim.static_smem > static_cast<std::size_t>(lim.max_smem))
    throw InvalidArgument(
        std::string(fn) + ": " + device_string(device) + ": team scratch of " + std::to_string(bytes) + " bytes" +
        (lim.static_smem ? " (and " + std::to_string(lim.static_smem) + " bytes of porta's team reductions and scans)"
                         : std::string()) +
        " is more than the " + std::to_string(lim.max_smem) +
        " bytes of shared memory a block may have on this device");
  if (static_cast<int>(bytes) > lim.dynamic_allowed.load(std::memory_order_relaxed)) {
    const Api::Error e = Api::allow_dynamic_shared(kernel, static_cast<int>(bytes));
    if (e != Api::kSuccess) throw_api_error(fn, device, "allowing the team scratch", e);
    lim.dynamic_allowed.store(static_cast<int>(bytes), std::memory_order_relaxed);
  }
  gpu_faults::prepare_faults(device, name);
  const std::int64_t grid = gpu::clamp_grid(p.league(), gpu::kMaxGrid);
  const Api::Error e =
      Api::launch(kernel, dim3(static_cast<unsigned>(grid)), dim3(static_cast<unsigned>(vl), static_cast<unsigned>(ts)),
                  bytes, static_cast<Api::Stream>(native_stream), p.league(), bytes, f);
  if (e != Api::kSuccess) throw_api_error(fn, device, "kernel launch", e);
}

}  // namespace porta::detail::gpu_user
