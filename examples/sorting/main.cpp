// SPDX-License-Identifier: Apache-2.0
// Sorting, arg-reductions and atomics (docs/sorting.md quotes this file): sort, argsort,
// sort_by_key, the k largest values, the predicted class of every row, and a histogram built with
// atomic_add in a user kernel. Every result is checked on the host; a wrong one exits non-zero.
//
//   ./sorting                      # cuda:0, else hip:0, else cpu
//   PORTA_DEVICE=cpu ./sorting
//
// Compiled through porta_add_kernels() (its histogram is a user kernel), so in a CUDA or HIP build
// the kernel runs on the GPU too.
#include <porta/kernels.hpp>
#include <porta/porta.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "common/check.hpp"

namespace {

// Every check is listed, the passing ones too.
void expect(bool ok, const char* what) {
  std::printf("  %-52s %s\n", what, ok ? "OK" : "WRONG");
  if (!ok) ++example::failures;
}

}  // namespace

// histogram-begin
// A histogram of x in `bins` bins over [-4, 4): atomic_add in a user kernel, exact counts on every
// device.
porta::Array<std::int32_t> histogram(const porta::Array<float>& x, std::int64_t bins) {
  auto hist = porta::zeros<std::int32_t>({bins}, x.device());
  auto hv = hist.view();
  auto xv = x.view();
  const float scale = static_cast<float>(bins) / 8.0f;
  porta::parallel_for(x.device(), x.size(), PORTA_KERNEL((std::int64_t i) {
                        const float t = (xv[i] + 4.0f) * scale;
                        if (t >= 0.0f && t < static_cast<float>(bins))
                          porta::atomic_add(&hv[static_cast<std::int64_t>(t)], 1);
                      }));
  return hist;
}
// histogram-end

int main() try {
  const porta::Device dev = porta::default_device();
  std::printf("sorting on %s\n", porta::describe(dev).c_str());
  const float nan = std::numeric_limits<float>::quiet_NaN();

  // sort-begin
  auto x = porta::Array<float>::from({3.f, nan, -1.f, 3.f, 0.5f}, dev);
  porta::Array<float> s = porta::sort(x);                                             // {-1, 0.5, 3, 3, NaN}: NaN last
  porta::Array<std::int64_t> order = porta::argsort(x);                               // {2, 4, 0, 3, 1}: stable
  porta::Array<std::int64_t> down = porta::argsort(x, porta::SortOrder::descending);  // {0, 3, 4, 2, 1}
  std::int64_t best = porta::argmax(x);  // 1: the first NaN wins, as in NumPy
  // sort-end
  const auto sv = s.to_vector();
  expect(sv[0] == -1.f && sv[1] == 0.5f && sv[2] == 3.f && sv[3] == 3.f && std::isnan(sv[4]), "sort puts NaN last");
  expect(order.to_vector() == std::vector<std::int64_t>{2, 4, 0, 3, 1}, "argsort is stable");
  expect(down.to_vector() == std::vector<std::int64_t>{0, 3, 4, 2, 1}, "descending: stable, NaN still last");
  expect(best == 1, "argmax: the first NaN");

  // sort_by_key-begin
  auto keys = porta::Array<std::int32_t>::from({2, 0, 2, 1}, dev);
  auto values = porta::Array<double>::from({0.5, 1.5, 2.5, 3.5}, dev);
  auto [k, v] = porta::sort_by_key(keys, values);  // k = {0, 1, 2, 2}, v = {1.5, 3.5, 0.5, 2.5}
  // sort_by_key-end
  expect(k.to_vector() == std::vector<std::int32_t>{0, 1, 2, 2} &&
             v.to_vector() == std::vector<double>{1.5, 3.5, 0.5, 2.5},
         "sort_by_key carries the values along, stably");

  // The k largest of a million values, and the class of every row of a score matrix.
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  const std::int64_t n = 1 << 20, rows = 1000, classes = 10;
  std::vector<float> h(static_cast<std::size_t>(n));
  for (float& e : h) e = normal(rng);
  auto big = porta::Array<float>::from(h, dev);
  // topk-begin
  porta::Array<float> sorted_desc = porta::sort(big, porta::SortOrder::descending);
  std::vector<float> top5 = sorted_desc.to_vector();
  top5.resize(5);  // the 5 largest, largest first
  // topk-end
  std::vector<float> ref = h;
  std::partial_sort(ref.begin(), ref.begin() + 5, ref.end(), std::greater<float>());
  expect(std::equal(top5.begin(), top5.end(), ref.begin()), "the 5 largest of 2^20 values");

  auto scores =
      porta::Array<float>::from(std::vector<float>(h.begin(), h.begin() + rows * classes), {rows, classes}, dev);
  // argmax-begin
  porta::Array<std::int64_t> predicted = porta::argmax(scores, 1);  // {rows}: a class per row
  // argmax-end
  const auto p = predicted.to_vector();
  bool rows_ok = true;
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto first = h.begin() + r * classes;
    rows_ok = rows_ok && p[static_cast<std::size_t>(r)] == std::max_element(first, first + classes) - first;
  }
  expect(rows_ok, "argmax along axis 1 of a 1000 x 10 matrix");

  // A histogram of the million values in 64 bins over [-4, 4): atomic_add in a user kernel.
  const std::int64_t bins = 64;
  const porta::Array<std::int32_t> hist = histogram(big, bins);
  std::vector<std::int32_t> expect_hist(static_cast<std::size_t>(bins), 0);
  for (float e : h) {
    const float t = (e + 4.0f) * (static_cast<float>(bins) / 8.0f);
    if (t >= 0.0f && t < float(bins)) ++expect_hist[static_cast<std::size_t>(t)];
  }
  expect(hist.to_vector() == expect_hist, "histogram counts, exact");

  return example::summary();
} catch (const std::exception& e) {
  std::fprintf(stderr, "sorting: %s\n", e.what());
  return 1;
}
