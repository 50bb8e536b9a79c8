// SPDX-License-Identifier: Apache-2.0
// Random numbers and scans (docs/random-and-scans.md): a Monte Carlo estimate of pi from porta's
// Philox generator, the same draws inside a user kernel, and scans — a running sum and its
// exclusive form as offsets, a running maximum, a scan along an axis. Every result is checked on the
// host; a wrong one exits non-zero.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "common/check.hpp"
#include "porta/kernels.hpp"
#include "porta/porta.hpp"

using example::expect;

int main() {
  const porta::Device dev = porta::default_device();
  std::printf("porta random_scans on %s\n", porta::describe(dev).c_str());
  const std::int64_t n = std::int64_t(1) << 20;
  const std::uint64_t seed = 2024;

  // ---- random numbers: NumPy's rng.random(n) and rng.standard_normal(n)
  auto x = porta::random::uniform<double>({n}, seed, dev);                  // [0, 1)
  auto y = porta::random::uniform<double>({n}, seed, dev, {/*stream=*/1});  // an independent stream
  auto z = porta::random::normal<float>({n}, seed, dev);                    // mean 0, deviation 1
  const std::int64_t inside = porta::count_nonzero(porta::less_equal(x * x + y * y, 1.0));
  const double pi = 4.0 * static_cast<double>(inside) / static_cast<double>(n);
  std::printf("pi ~ %.4f from %lld points; normals: mean %.4f\n", pi, static_cast<long long>(n), porta::mean(z));
  expect(std::fabs(pi - 3.14159265) < 0.01, "pi from uniforms");
  expect(std::fabs(porta::mean(z)) < 0.01, "mean of normals");

  // The same generator inside a kernel: one stream per index; draw k of stream i is what the
  // built-in gives for Counter{i, 0}. Same bits on the CPU and the GPU.
  porta::Array<float> w({n}, dev);
  auto wv = w.view();
  porta::parallel_for(dev, n, PORTA_KERNEL((std::int64_t i) {
                        porta::random::Philox rng(seed, /*stream=*/static_cast<std::uint64_t>(i));
                        wv[i] = rng.normal<float>();
                      }));
  const float w7 = w.item(7);
  const float b7 = porta::random::normal<float>({1}, seed, dev, {/*stream=*/7, /*offset=*/0}).item(0);
  expect(w7 == b7, "kernel stream 7 equals the built-in's stream 7");

  // ---- scans: np.cumsum, exclusive offsets, np.maximum.accumulate, along an axis
  auto counts = porta::Array<std::int64_t>::from({3, 0, 2, 5, 1}, dev);
  auto ends = porta::cumsum(counts);            // {3, 3, 5, 10, 11}
  auto starts = porta::exclusive_scan(counts);  // {0, 3, 3, 5, 10}: where each part starts
  auto peak = porta::cummax(porta::Array<float>::from({1, 3, 2, 5, 4}, dev));  // {1, 3, 3, 5, 5}
  auto table = porta::Array<double>::from({1, 2, 3, 4, 5, 6}, {2, 3}, dev);
  auto across = porta::cumsum(table, 1);  // {{1, 3, 6}, {4, 9, 15}}
  expect(ends.to_vector() == std::vector<std::int64_t>{3, 3, 5, 10, 11}, "cumsum");
  expect(starts.to_vector() == std::vector<std::int64_t>{0, 3, 3, 5, 10}, "exclusive_scan");
  expect(peak.to_vector() == std::vector<float>{1, 3, 3, 5, 5}, "cummax");
  expect(across.to_vector() == std::vector<double>{1, 3, 6, 4, 9, 15}, "cumsum along axis 1");

  // A float cumsum has the same bits on every backend and thread count: compare a GPU result with
  // the CPU's bit for bit.
  const auto cpu_sum = porta::cumsum(z.to(porta::Device(porta::DeviceType::cpu))).to_vector();
  expect(porta::cumsum(z).to_vector() == cpu_sum, "cumsum: the same bits as on the CPU");

  return example::summary();
}
