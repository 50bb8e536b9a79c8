// SPDX-License-Identifier: Apache-2.0
// Random numbers of the CPU backend: Philox4x32-10 blocks and the maps of porta/detail/philox.hpp,
// block by block over the OpenMP team. Element i depends on (seed, stream, offset, i) only, so the
// bits do not depend on the thread count and equal the GPU's.
#include <algorithm>
#include <cstdint>

#include "backends/common/scan_random_checks.hpp"
#include "cpu_common.hpp"
#include "cpu_kernels.hpp"
#include "porta/detail/philox.hpp"

namespace porta::detail::cpu {
namespace {

template <class T, bool Normal>
void fill_random(std::int64_t n, std::uint64_t seed, std::uint64_t stream, std::uint64_t offset, T* y) {
  constexpr std::int64_t per = philox::kPerBlock<T>;
  const std::int64_t blocks = (n + per - 1) / per;
  // A block costs about what a transcendental map costs per element.
  parallel_ranges(blocks, kGrainTranscendental / per, [&](std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      T v[per];
      philox::block_values<T, Normal>(philox::block(seed, stream, offset + static_cast<std::uint64_t>(b)), v);
      const std::int64_t i0 = b * per;
      const std::int64_t m = std::min(per, n - i0);
      for (std::int64_t j = 0; j < m; ++j) y[i0 + j] = v[j];
    }
  });
}

}  // namespace

porta_status random(int dev, porta_random_dist dist, porta_dtype dt, std::int64_t n, std::uint64_t seed,
                    std::uint64_t stream, std::uint64_t offset, void* y, porta_stream) noexcept {
  constexpr const char* fn = "random";
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  if (porta_status st = backend::check::random(dist, dt, n, y); st != PORTA_OK) return st;
  if (n == 0) return PORTA_OK;
  const bool normal = raw_enum(dist) == PORTA_RANDOM_NORMAL;
  PORTA_CPU_TRY
  if (raw_enum(dt) == PORTA_F32) {
    if (normal) {
      fill_random<float, true>(n, seed, stream, offset, static_cast<float*>(y));
    } else {
      fill_random<float, false>(n, seed, stream, offset, static_cast<float*>(y));
    }
  } else if (normal) {
    fill_random<double, true>(n, seed, stream, offset, static_cast<double*>(y));
  } else {
    fill_random<double, false>(n, seed, stream, offset, static_cast<double*>(y));
  }
  return PORTA_OK;
  PORTA_CPU_CATCH(fn)
}

}  // namespace porta::detail::cpu
