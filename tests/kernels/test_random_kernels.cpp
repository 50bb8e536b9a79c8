// SPDX-License-Identifier: Apache-2.0
// porta::random::Philox inside user kernels: compiled with porta_add_kernels() like test_kernels.cpp,
// so a CUDA (or HIP) build runs it on GPU devices with the user's default flags (nvcc contracts
// a * b + c into FMAs unless told otherwise), and the draws must still equal the host's bit for bit:
// every multiply-add of porta's normal map is an explicit fma. Also checks that the per-index
// stream of a kernel is the built-in's stream (porta::random::normal with Counter{i, 0}).
#include <cstdint>
#include <vector>

#include "kernel_devices.hpp"
#include "porta/kernels.hpp"
#include "porta/random.hpp"
#include "support/support.hpp"

#if defined(__CUDACC__) && !defined(__HIP__)
#include <curand_kernel.h>  // the device API is header-only: no library to link
#endif

using porta::Array;
using porta::Device;
using porta::Shape;

namespace {

// Three draws per index from stream i: a uniform, then two normals (one pair).
template <class T>
struct Draw {
  porta::View<T> out;
  std::uint64_t seed;
  PORTA_HOST_DEVICE void operator()(std::int64_t i) const {
    porta::random::Philox rng(seed, static_cast<std::uint64_t>(i));
    out[3 * i] = rng.uniform<T>();
    out[3 * i + 1] = rng.normal<T>();
    out[3 * i + 2] = rng.normal<T>();
  }
};

}  // namespace

TEMPLATE_TEST_CASE("random::Philox in a user kernel: the host's bits on every device", "[kernels][random]", float,
                   double) {
  using T = TestType;
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  const std::uint64_t seed = rng.engine()();
  const std::int64_t n = 4099;
  Array<T> out(Shape{3 * n}, dev);
  porta::parallel_for(dev, n, Draw<T>{out.view(), seed});
  std::vector<T> expect(static_cast<std::size_t>(3 * n));
  for (std::int64_t i = 0; i < n; ++i) {
    porta::random::Philox host(seed, static_cast<std::uint64_t>(i));
    // Drawn in the same order as the kernel: a uniform, then the two normals of one pair.
    expect[static_cast<std::size_t>(3 * i)] = host.uniform<T>();
    expect[static_cast<std::size_t>(3 * i + 1)] = host.normal<T>();
    expect[static_cast<std::size_t>(3 * i + 2)] = host.normal<T>();
  }
  INFO(dev.to_string() << ", seed " << seed);
  PORTA_CHECK_RESULT(porta_test::compare_exact(out.to_vector(), expect));

  // The stream of index i is the built-in's stream i: its first normals are the kernel's when the
  // kernel draws normals only.
  Array<T> z(Shape{n}, dev);
  auto zv = z.view();
  porta::parallel_for(
      dev, n, PORTA_LAMBDA(std::int64_t i) {
        porta::random::Philox r(seed, static_cast<std::uint64_t>(i));
        zv[i] = r.normal<T>();
      });
  const std::vector<T> got = z.to_vector();
  for (std::int64_t i = 0; i < n; i += 997) {
    const std::vector<T> first =
        porta::random::normal<T>(Shape{1}, seed, dev, {static_cast<std::uint64_t>(i), 0}).to_vector();
    CHECK(porta_test::same_bits(got[static_cast<std::size_t>(i)], first[0]));
  }
}

#if defined(__CUDACC__) && !defined(__HIP__)
namespace {
__global__ void curand_words(std::uint32_t* out, std::int64_t n, std::uint64_t seed, std::uint64_t offset) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  curandStatePhilox4_32_10_t st;
  curand_init(seed, static_cast<unsigned long long>(i), offset, &st);
  for (int k = 0; k < 6; ++k) out[6 * i + k] = curand(&st);
}
}  // namespace

TEST_CASE("random::Philox draws cuRAND's Philox4_32_10 words: curand_init(seed, stream, 4 * offset)",
          "[kernels][random]") {
  const std::vector<Device> devs = kernel_devices();
  bool found = false;
  for (const Device& d : devs) found = found || d.type == porta::DeviceType::cuda;
  if (!found) return;  // needs a CUDA device (cuda:0, the runtime's current one)
  PORTA_RNG(rng);
  const std::uint64_t seed = rng.engine()();
  const std::int64_t n = 1000;
  for (std::uint64_t offset : {0ull, 4ull * 12345}) {
    std::uint32_t* d = nullptr;
    REQUIRE(cudaMalloc(&d, 6 * n * sizeof(std::uint32_t)) == cudaSuccess);
    curand_words<<<(n + 127) / 128, 128>>>(d, n, seed, offset);
    std::vector<std::uint32_t> got(static_cast<std::size_t>(6 * n));
    REQUIRE(cudaMemcpy(got.data(), d, got.size() * sizeof(std::uint32_t), cudaMemcpyDeviceToHost) == cudaSuccess);
    cudaFree(d);
    std::int64_t bad = -1;
    for (std::int64_t i = 0; i < n && bad < 0; ++i) {
      porta::random::Philox p(seed, static_cast<std::uint64_t>(i), offset / 4);
      for (int k = 0; k < 6; ++k)
        if (p.next_u32() != got[static_cast<std::size_t>(6 * i + k)]) bad = i;
    }
    INFO("seed " << seed << ", offset " << offset << ": first stream that differs " << bad);
    CHECK(bad < 0);
  }
}
#endif
