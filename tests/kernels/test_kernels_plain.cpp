// SPDX-License-Identifier: Apache-2.0
// A plain C++ translation unit (never marked with porta_add_kernels): user kernels run on the CPU,
// and asking for a GPU is an Unavailable error that names the fix.
#include "porta/kernels.hpp"
#include "porta/teams.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::Shape;
using porta_test::Contains;

#if PORTA_GPU_COMPILER
#error "test_kernels_plain.cpp must be compiled as plain C++"
#endif

TEST_CASE("plain C++: user kernels run on the CPU", "[kernels][plain]") {
  const Device cpu(porta::DeviceType::cpu);
  auto y = porta_test::poisoned<std::int64_t>(porta::Shape{1000}, cpu);
  auto yv = y.view();
  porta::parallel_for(
      cpu, 1000, PORTA_LAMBDA(std::int64_t i) { yv[i] = i * i; });
  std::vector<std::int64_t> r(1000);
  for (std::int64_t i = 0; i < 1000; ++i) r[i] = i * i;
  PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), r));
  const auto x = Array<double>::from(std::vector<double>{1, 2, 3}, cpu);
  const auto xv = x.view();
  CHECK(porta::transform_reduce(
            cpu, 3, 0.0, porta::plus{}, PORTA_LAMBDA(std::int64_t i) { return xv[i]; }) == 6.0);
}

TEST_CASE("plain C++: launching on a GPU is Unavailable and names porta_add_kernels", "[kernels][plain][errors]") {
  const auto gpu = porta_test::first_gpu();
  if (!gpu) PORTA_SKIP("no GPU device: nothing to launch on");
  INFO(gpu->to_string());
  auto y = porta::zeros<float>({16}, *gpu);
  auto yv = y.view();
  CHECK_THROWS_AS(porta::parallel_for(
                      *gpu, 16, PORTA_LAMBDA(std::int64_t i) { yv[i] = 1.0f; }),
                  porta::Unavailable);
  CHECK_THROWS_WITH(porta::parallel_for(
                        *gpu, 16, PORTA_LAMBDA(std::int64_t i) { yv[i] = 1.0f; }),
                    Contains("porta_add_kernels") && Contains("porta::parallel_for"));
  CHECK_THROWS_WITH(porta::map(
                        y, PORTA_LAMBDA(float v) { return v + 1.0f; }, y),
                    Contains("porta_add_kernels"));
  CHECK_THROWS_WITH(porta::transform_reduce(
                        *gpu, 16, 0.0f, porta::plus{}, PORTA_LAMBDA(std::int64_t) { return 1.0f; }),
                    Contains("porta_add_kernels") && Contains("porta::transform_reduce"));
  CHECK_THROWS_WITH(porta::parallel_for(*gpu, porta::teams(4), PORTA_KERNEL((const porta::Team& t) {
                      if (t.rank() == 0) yv[t.league()] = 1.0f;
                    })),
                    Contains("porta_add_kernels") && Contains("porta::parallel_for"));
  // nothing was written
  PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), std::vector<float>(16, 0.0f)));
}

// A team functor from plain C++: a team per row sums it through scratch.
struct RowSums {
  porta::View<const double> m;
  porta::View<double> out;
  void operator()(const porta::Team& t) const {
    auto row = t.scratch<double>(m.cols);
    porta::team_for(t, m.cols, [&](std::int64_t j) { row[j] = m(t.league(), j); });
    t.barrier();
    const double s = porta::team_reduce(t, m.cols, porta::plus{}, [&](std::int64_t j) { return row[j]; });
    if (t.rank() == 0 && t.lane() == 0) out[t.league()] = s;
  }
};

TEST_CASE("plain C++: a team functor runs on the CPU", "[kernels][plain][teams]") {
  const Device cpu(porta::DeviceType::cpu);
  PORTA_RNG(rng);
  const std::int64_t rows = 33, cols = 70;
  const auto hm = porta_test::nonzero<double>(rng, rows * cols);
  auto m = Array<double>::from(hm, cpu);
  m.reshape(Shape{rows, cols});
  auto out = porta_test::poisoned<double>(Shape{rows}, cpu);
  const Array<double>& cm = m;
  porta::parallel_for(cpu, porta::teams(rows, 64).scratch(cols * sizeof(double)), RowSums{cm.view(), out.view()});
  const auto got = out.to_vector();
  for (std::int64_t r = 0; r < rows; ++r) {
    double d = 0, mag = 0;
    for (std::int64_t j = 0; j < cols; ++j) {
      d += hm[r * cols + j];
      mag += std::abs(hm[r * cols + j]);
    }
    INFO("row " << r);
    CHECK(std::abs(got[r] - d) <= 1e-14 * mag);
  }
}

// ---- the CPU executor: work, not counts, decides; exceptions; grain ------------------------------

#if defined(_OPENMP)
#include <omp.h>
#endif
#include <atomic>
#include <limits>
#include <set>
#include <stdexcept>

namespace {
// About `us` microseconds of work that the optimiser cannot remove.
double spin(std::int64_t seed, int us) {
  double x = static_cast<double>(seed % 7) + 1.0;
  for (int k = 0; k < us * 300; ++k) x = x * 0.999999 + 1e-7;
  return x;
}
}  // namespace

TEST_CASE("CPU: a few heavy items run on several threads, however few they are", "[kernels][plain][cpu-exec]") {
#if defined(_OPENMP)
  if (omp_get_max_threads() < 2) PORTA_SKIP("one OpenMP thread: nothing to split");
  const Device cpu(porta::DeviceType::cpu);
  // 16 items of ~200 us: the old executor ran anything below 4096 items on one thread.
  for (const auto& r : {porta::range(16), porta::range(16).grain(1)}) {
    std::vector<int> tid(16, -1);
    std::vector<double> out(16, 0.0);
    int* t = tid.data();
    double* o = out.data();
    porta::parallel_for(cpu, r, [=](std::int64_t i) {
      o[i] = spin(i, 200);
      t[i] = omp_get_thread_num();
    });
    const std::set<int> used(tid.begin(), tid.end());
    CHECK(used.count(-1) == 0);
    CHECK(used.size() >= 2);
    for (std::int64_t i = 0; i < 16; ++i) CHECK(out[static_cast<std::size_t>(i)] == spin(i, 200));
  }
  // A reduction of 2000 heavy terms: still split, and the bits are those of one thread.
  const double one = [&] {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    const double r = porta::transform_reduce(cpu, 2000, 0.0, porta::plus{}, [](std::int64_t i) { return spin(i, 20); });
    omp_set_num_threads(saved);
    return r;
  }();
  std::atomic<int> threads_seen{0};
  const double many = porta::transform_reduce(cpu, 2000, 0.0, porta::plus{}, [&threads_seen](std::int64_t i) {
    if (omp_get_thread_num() > 0) threads_seen.store(1, std::memory_order_relaxed);
    return spin(i, 20);
  });
  CHECK(porta_test::same_bits(one, many));
  CHECK(threads_seen.load() == 1);
#else
  PORTA_SKIP("built without OpenMP");
#endif
}

TEST_CASE("CPU: grain changes the split, never the result", "[kernels][plain][cpu-exec][determinism]") {
  const Device cpu(porta::DeviceType::cpu);
  PORTA_RNG(rng);
  for (std::int64_t n : {1, 100, 1025, 40000, 300001}) {
    const auto h = porta_test::nonzero<float>(rng, n);
    const auto x = Array<float>::from(h, cpu);
    const auto xv = x.view();
    const auto f = [=](std::int64_t i) { return xv[i] * xv[i]; };
    const float a = porta::transform_reduce(cpu, porta::range(n), 0.0f, porta::plus{}, f);
    const float b = porta::transform_reduce(cpu, porta::range(n).grain(1), 0.0f, porta::plus{}, f);
    const float c = porta::transform_reduce(cpu, porta::range(n).grain(n), 0.0f, porta::plus{}, f);
    const float expect = porta_test::ref::add(
        0.0f, porta_test::ref::canonical_reduce<float>(n, porta_test::ref::Op::sum, [&](std::int64_t i) {
          return h[static_cast<std::size_t>(i)] * h[static_cast<std::size_t>(i)];
        }));
    INFO("n = " << n);
    CHECK(porta_test::same_bits(a, expect));
    CHECK(porta_test::same_bits(b, expect));
    CHECK(porta_test::same_bits(c, expect));
    auto y = porta_test::poisoned<float>(porta::Shape{n}, cpu);
    auto yv = y.view();
    porta::parallel_for(cpu, porta::range(n).grain(7), [=](std::int64_t i) { yv[i] = xv[i] + 1.0f; });
    std::vector<float> r(h.size());
    for (std::size_t i = 0; i < h.size(); ++i) r[i] = h[i] + 1.0f;
    PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), r));
  }
  CHECK_THROWS_AS(porta::range(10).grain(-1), porta::InvalidArgument);
  // Extents and counts that do not fit 64 bits are refused, not wrapped.
  const std::int64_t lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
  CHECK_THROWS_AS(porta::Range<1>({lo}, {hi}), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::Range<2>({0, 0}, {std::int64_t{1} << 32, std::int64_t{1} << 32}), porta::InvalidArgument);
  CHECK(porta::Range<2>({-5, 0}, {5, std::int64_t{1} << 40}).size() == (std::int64_t{10} << 40));
}

TEST_CASE("CPU: an exception thrown by a kernel reaches the caller", "[kernels][plain][errors]") {
  const Device cpu(porta::DeviceType::cpu);
  for (std::int64_t n : {100, 100000}) {
    INFO("n = " << n);
    const std::int64_t bad = n / 2 + 3;
    std::vector<int> seen(static_cast<std::size_t>(n), 0);
    int* s = seen.data();
    CHECK_THROWS_WITH(porta::parallel_for(cpu, n,
                                          [=](std::int64_t i) {
                                            if (i == bad) throw std::runtime_error("bad index " + std::to_string(i));
                                            s[i] = 1;
                                          }),
                      Contains("bad index " + std::to_string(bad)));
    CHECK(seen[static_cast<std::size_t>(bad)] == 0);
    CHECK_THROWS_AS(porta::parallel_for(cpu, porta::range(n / 10, 10),
                                        [=](std::int64_t i, std::int64_t j) {
                                          if (i * 10 + j == bad) throw std::out_of_range("2-D");
                                        }),
                    std::out_of_range);
    CHECK_THROWS_AS(porta::transform_reduce(cpu, n, 0.0, porta::plus{},
                                            [=](std::int64_t i) -> double {
                                              if (i == bad) throw std::invalid_argument("reduce");
                                              return 1.0;
                                            }),
                    std::invalid_argument);
    auto y = porta::zeros<float>({n}, cpu);
    CHECK_THROWS_AS(porta::map(
                        y,
                        [](float v) -> float {
                          if (v == 0.0f) throw std::domain_error("map");
                          return v;
                        },
                        y),
                    std::domain_error);
  }
  // After a throw the team is usable again.
  auto z = porta::zeros<std::int64_t>({5000}, cpu);
  auto zv = z.view();
  porta::parallel_for(cpu, 5000, [=](std::int64_t i) { zv[i] = i; });
  CHECK(porta::sum(z) == std::int64_t{5000} * 4999 / 2);
}

namespace {
// A kernel with a table of 8 KiB, more than a GPU launch's parameters may hold on older GPUs (a
// CPU-only kernel, hence this file): CPU tasks use it in place rather than copy it.
struct TableLookup {
  std::array<double, 1024> table;
  porta::View<const std::int32_t> key;
  porta::View<double> out;
  void operator()(std::int64_t i, std::int64_t j) const { out(i, j) = table[static_cast<std::size_t>(key(i, j))]; }
};
}  // namespace

TEST_CASE("plain C++: a kernel larger than 4 KiB runs on the CPU", "[kernels][plain]") {
  const Device dev = porta::Device{porta::DeviceType::cpu, 0};
  PORTA_RNG(rng);
  const std::int64_t n0 = 37, n1 = 301;
  const auto keys = porta_test::uniform<std::int32_t>(rng, n0 * n1, 0, 1023);
  TableLookup f{};
  for (std::size_t t = 0; t < f.table.size(); ++t) f.table[t] = rng.uniform<double>(-1.0, 1.0);
  const auto k = Array<std::int32_t>::from(keys, Shape{n0, n1}, dev);
  auto out = porta_test::poisoned<double>(Shape{n0, n1}, dev);
  f.key = k.view();
  f.out = out.view();
  static_assert(sizeof(TableLookup) > 4096, "the case is a kernel above the copy limit");
  porta::parallel_for(dev, porta::range(n0, n1), f);
  std::vector<double> expect(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) expect[i] = f.table[static_cast<std::size_t>(keys[i])];
  PORTA_CHECK_RESULT(porta_test::compare_exact(out.to_vector(), expect));
}
