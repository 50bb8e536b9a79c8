// SPDX-License-Identifier: Apache-2.0
// Random numbers of the GPU plugins: definitions of RandomKernels<Api, T> (kernels.hpp). One thread
// per Philox block (4 floats or 2 doubles: one 16-byte store), the maps of porta/detail/philox.hpp,
// so element i is the CPU's element i bit for bit. Compile with contraction off (-fmad=false): the
// maps write every multiply-add as an fma already, this keeps anything else from being fused.
#pragma once

#include <cstdint>

#include "backends/gpu/kernels.hpp"
#include "porta/detail/gpu/api.cuh"
#include "porta/detail/philox.hpp"

namespace porta::detail::gpu {

template <class T, bool Normal>
__global__ void __launch_bounds__(kBlockThreads)
    random_kernel(T* y, std::int64_t n, std::uint64_t seed, std::uint64_t stream, std::uint64_t offset) {
  constexpr int per = philox::kPerBlock<T>;
  const std::int64_t blocks = (n + per - 1) / per;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks; b += step) {
    Pack<T, per> v;
    philox::block_values<T, Normal>(philox::block(seed, stream, offset + static_cast<std::uint64_t>(b)), v.v);
    const std::int64_t i0 = b * per;
    if (i0 + per <= n && is_aligned(y + i0, sizeof v)) {
      *reinterpret_cast<Pack<T, per>*>(y + i0) = v;
    } else {
      for (int j = 0; j < per && i0 + j < n; ++j) y[i0 + j] = v.v[j];
    }
  }
}

template <class Api, class T>
int RandomKernels<Api, T>::random(porta_random_dist dist, std::int64_t n, std::uint64_t seed, std::uint64_t stream_id,
                                  std::uint64_t offset, T* y, void* stream) {
  const auto s = static_cast<typename Api::Stream>(stream);
  constexpr int per = philox::kPerBlock<T>;
  const std::int64_t blocks = (n + per - 1) / per;
  const std::int64_t grid = clamp_grid((blocks + kBlockThreads - 1) / kBlockThreads, kMaxGrid);
  switch (dist) {
    case PORTA_RANDOM_UNIFORM:
      return static_cast<int>(Api::launch(random_kernel<T, false>, dim3(static_cast<unsigned>(grid)),
                                          dim3(kBlockThreads), 0, s, y, n, seed, stream_id, offset));
    case PORTA_RANDOM_NORMAL:
      return static_cast<int>(Api::launch(random_kernel<T, true>, dim3(static_cast<unsigned>(grid)),
                                          dim3(kBlockThreads), 0, s, y, n, seed, stream_id, offset));
    case PORTA_RANDOM_COUNT:
      break;
  }
  return static_cast<int>(Api::kInvalidValue);  // the entry validated dist: unreachable
}

}  // namespace porta::detail::gpu
