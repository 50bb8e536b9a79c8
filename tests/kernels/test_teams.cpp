// SPDX-License-Identifier: Apache-2.0
// Team launches (porta/teams.hpp): scratch, barriers, nested ranges, team and vector reductions,
// team scans and scratch atomics, on every device this file can launch on (compiled as CUDA or HIP
// where the build has it). Every team shape below must give the same bits: the reductions' and
// scans' orders depend on n alone, and the references here rebuild those orders on the host.
#include "porta/teams.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "kernel_devices.hpp"
#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::Shape;

namespace {

struct Shape2 {
  int team, vector;
};
// Shapes a GPU runs as asked (the CPU runs every one as a team of one thread with one lane).
const std::vector<Shape2> kShapes = {
    {porta::team_auto, 1}, {1, 1}, {32, 1}, {96, 1}, {256, 1}, {64, 4}, {8, 32}, {3, 8}, {1024, 1}};

std::string shape_text(const Shape2& s) {
  return (s.team == porta::team_auto ? std::string("auto") : std::to_string(s.team)) + " x " + std::to_string(s.vector);
}

// A GPU may refuse a team because this kernel's registers allow fewer threads per block (a heavy
// kernel at 1024 threads); the refusal must name that limit. (A try block at each launch, not a
// function taking the launch as a lambda: nvcc allows no PORTA_KERNEL inside another lambda.)
void refused(Device dev, const Shape2& s, const porta::InvalidArgument& e) {
  const std::string what = e.what();
  INFO(what);
  REQUIRE(dev.type != porta::DeviceType::cpu);
  REQUIRE(what.find("threads per block this kernel can run (its registers)") != std::string::npos);
  REQUIRE(s.team * s.vector > 256);
}

// The documented orders, rebuilt on the host from the description in porta/teams.hpp.
template <class T, class Op>
T ref_lanes(const std::vector<T>& x, int lanes, Op op, T identity) {
  std::vector<T> acc(static_cast<std::size_t>(lanes), identity);
  for (std::size_t i = 0; i < x.size(); ++i) acc[i % lanes] = op(acc[i % lanes], x[i]);
  for (int s = lanes / 2; s >= 1; s /= 2)
    for (int l = 0; l < s; ++l) acc[l] = op(acc[l], acc[l + s]);
  return acc[0];
}

template <class T, class Op>
std::vector<T> ref_scan(const std::vector<T>& x, Op op, T identity, bool inclusive, T* total) {
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  std::vector<T> y(x.size());
  if (n == 0) {
    *total = identity;
    return y;
  }
  const std::int64_t b = (n + 255) / 256, nb = (n + b - 1) / b;
  std::vector<T> w(static_cast<std::size_t>(nb));
  for (std::int64_t k = 0; k < nb; ++k) {
    T run = identity;
    for (std::int64_t i = k * b; i < std::min(n, (k + 1) * b); ++i) run = op(run, x[i]);
    w[k] = run;
  }
  for (std::int64_t d = 1; d < nb; d *= 2) {
    std::vector<T> v = w;
    for (std::int64_t k = d; k < nb; ++k) v[k] = op(w[k - d], w[k]);
    w = v;
  }
  for (std::int64_t k = 0; k < nb; ++k) {
    T run = k == 0 ? identity : w[k - 1];
    for (std::int64_t i = k * b; i < std::min(n, (k + 1) * b); ++i) {
      if (inclusive) {
        run = op(run, x[i]);
        y[i] = run;
      } else {
        y[i] = i == 0 ? T(0) : run;
        run = op(run, x[i]);
      }
    }
  }
  *total = w[nb - 1];
  return y;
}

template <class T>
T add(T a, T b) {
  return a + b;
}
template <class T>
T max2(T a, T b) {
  return a < b ? b : a;
}

}  // namespace

TEST_CASE("a team launch runs every team once, with the members its device gives it", "[kernels][teams]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  for (const Shape2 s : kShapes) {
    for (std::int64_t league : {0, 1, 5, 1000}) {
      INFO("team " << shape_text(s) << ", league " << league << " on " << dev.to_string());
      auto members = porta_test::poisoned<std::int32_t>(Shape{league}, dev);
      auto size = porta_test::poisoned<std::int32_t>(Shape{league}, dev);
      auto lsize = porta_test::poisoned<std::int64_t>(Shape{league}, dev);
      auto mv = members.view();
      auto sv = size.view();
      auto lv = lsize.view();
      try {
        porta::parallel_for(dev, porta::teams(league, s.team, s.vector).scratch(sizeof(std::int32_t)),
                            PORTA_KERNEL((const porta::Team& t) {
                              auto count = t.scratch<std::int32_t>(1);
                              if (t.rank() == 0 && t.lane() == 0) count[0] = 0;
                              t.barrier();
                              porta::team_atomic_add(t, &count[0], 1);
                              t.barrier();
                              if (t.rank() == 0 && t.lane() == 0) {
                                mv[t.league()] = count[0];
                                sv[t.league()] = t.size() * 1000 + t.vector_length();
                                lv[t.league()] = t.league_size();
                              }
                            }));
      } catch (const porta::InvalidArgument& e) {
        refused(dev, s, e);
        continue;
      }
      const auto m = members.to_vector();
      const auto z = size.to_vector();
      const auto ls = lsize.to_vector();
      const bool gpu = dev.type != porta::DeviceType::cpu;
      for (std::int64_t l = 0; l < league; ++l) {
        INFO("team " << l);
        const int ts = z[l] / 1000, vl = z[l] % 1000;
        if (gpu) {
          if (s.team != porta::team_auto) CHECK(ts == s.team);
          CHECK(vl == s.vector);
        } else {
          CHECK(ts == 1);
          CHECK(vl == 1);
        }
        CHECK(m[l] == ts * vl);
        CHECK(ls[l] == league);
      }
    }
  }
}

TEST_CASE("thread_vector_for: every cell of the tile once, for every team shape and tile", "[kernels][teams]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  constexpr std::int64_t league = 3;
  // Tiles narrower than, as wide as and wider than a warp's lanes; fewer rows than threads; empty.
  const std::vector<std::pair<std::int64_t, std::int64_t>> tiles = {{0, 5},   {5, 0},   {1, 1},   {7, 3},
                                                                    {32, 32}, {33, 40}, {100, 1}, {2, 65}};
  for (const Shape2 s : kShapes) {
    for (const auto& tile : tiles) {
      const std::int64_t rows = tile.first,
                         cols = tile.second;  // (a lambda cannot capture a structured binding in C++17)
      INFO("team " << shape_text(s) << ", tile " << rows << " x " << cols << " on " << dev.to_string());
      const std::int64_t cells = std::max<std::int64_t>(1, rows * cols);
      auto count = porta::full<std::int32_t>({league, cells}, 0, dev);
      auto stray = porta::full<std::int32_t>({1}, 0, dev);
      auto cv = count.view();
      auto sv = stray.view();
      try {
        porta::parallel_for(dev, porta::teams(league, s.team, s.vector), PORTA_KERNEL((const porta::Team& t) {
                              porta::thread_vector_for(t, rows, cols, [&](std::int64_t r, std::int64_t c) {
                                if (r >= 0 && r < rows && c >= 0 && c < cols)
                                  porta::atomic_add(&cv(t.league(), r * cols + c), 1);
                                else
                                  porta::atomic_add(&sv[0], 1);
                              });
                            }));
      } catch (const porta::InvalidArgument& e) {
        refused(dev, s, e);
        continue;
      }
      const auto c = count.to_vector();
      CHECK(stray.to_vector()[0] == 0);
      for (std::int64_t l = 0; l < league; ++l)
        for (std::int64_t k = 0; k < rows * cols; ++k) {
          INFO("team " << l << ", cell (" << k / cols << ", " << k % cols << ")");
          REQUIRE(c[static_cast<std::size_t>(l * cells + k)] == 1);
        }
    }
  }
}

TEMPLATE_TEST_CASE("team scratch and barriers: each team reverses its block", "[kernels][teams]", float, double,
                   std::int32_t, std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  constexpr std::int64_t B = 300;  // not a multiple of any team size
  for (const Shape2 s : kShapes) {
    const std::int64_t league = 37;
    INFO("team " << shape_text(s) << " on " << dev.to_string());
    const auto hx = porta_test::nonzero<T>(rng, league * B);
    const auto x = Array<T>::from(hx, dev);
    auto y = porta_test::poisoned<T>(Shape{league * B}, dev);
    auto tag = porta_test::poisoned<std::int64_t>(Shape{league}, dev);
    auto xv = x.view();
    auto yv = y.view();
    auto gv = tag.view();
    // Two pieces: the block, then a 2 x 3 table whose start must be aligned past the block's end.
    const std::size_t bytes = ((B * sizeof(T) + 15) / 16) * 16 + 6 * sizeof(std::int64_t);
    try {
      porta::parallel_for("reverse", dev, porta::teams(league, s.team, s.vector).scratch(bytes),
                          PORTA_KERNEL((const porta::Team& t) {
                            auto block = t.scratch<T>(B);
                            auto table = t.scratch<std::int64_t>(2, 3);
                            const std::int64_t at = t.league() * B;
                            porta::team_for(t, B, [&](std::int64_t k) { block[k] = xv[at + k]; });
                            porta::team_for(t, 6, [&](std::int64_t k) { table(k / 3, k % 3) = t.league() * 10 + k; });
                            t.barrier();
                            porta::team_for(t, B, [&](std::int64_t k) { yv[at + k] = block[B - 1 - k]; });
                            if (t.rank() == 0 && t.lane() == 0) gv[t.league()] = table(1, 2) - table(0, 0);
                          }));
    } catch (const porta::InvalidArgument& e) {
      refused(dev, s, e);
      continue;
    }
    std::vector<T> ref(hx.size());
    for (std::int64_t l = 0; l < league; ++l)
      for (std::int64_t k = 0; k < B; ++k) ref[l * B + k] = hx[l * B + B - 1 - k];
    PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), ref));
    PORTA_CHECK_RESULT(porta_test::compare_exact(tag.to_vector(), std::vector<std::int64_t>(league, 5)));
  }
}

TEMPLATE_TEST_CASE("team_reduce: the same bits for every team shape, in the documented order", "[kernels][teams]",
                   float, double, std::int32_t, std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : {0, 1, 3, 255, 256, 257, 1000, 4099}) {
    const std::int64_t league = 6;
    const auto hx = porta_test::nonzero<T>(rng, league * n);
    const auto x = Array<T>::from(hx, dev);
    auto xv = x.view();
    std::vector<T> want_sum(league), want_max(league);
    for (std::int64_t l = 0; l < league; ++l) {
      const std::vector<T> row(hx.begin() + l * n, hx.begin() + (l + 1) * n);
      want_sum[l] = n == 0 ? T(0) : ref_lanes<T>(row, 256, add<T>, std::is_floating_point_v<T> ? T(-0.0) : T(0));
      want_max[l] = n == 0 ? std::numeric_limits<T>::lowest() : ref_lanes<T>(row, 256, max2<T>, hx[l * n]);
      if constexpr (std::is_floating_point_v<T>) {
        if (n == 0) want_max[l] = -std::numeric_limits<T>::infinity();
        // An independent check that it is a sum at all: double on the host, within a sum's error.
        double d = 0, mag = 0;
        for (const T v : row) {
          d += v;
          mag += std::fabs(static_cast<double>(v));
        }
        CHECK(std::fabs(static_cast<double>(want_sum[l]) - d) <= 1e-5 * mag + 1e-30);
      }
    }
    for (const Shape2 s : kShapes) {
      INFO("n = " << n << ", team " << shape_text(s) << " on " << dev.to_string());
      auto sum = porta_test::poisoned<T>(Shape{league}, dev);
      auto mx = porta_test::poisoned<T>(Shape{league}, dev);
      auto sv = sum.view();
      auto mv = mx.view();
      try {
        porta::parallel_for(
            dev, porta::teams(league, s.team, s.vector), PORTA_KERNEL((const porta::Team& t) {
              const std::int64_t row = t.league() * n;
              const T a = porta::team_reduce(t, n, porta::plus{}, [&](std::int64_t i) { return xv[row + i]; });
              const T b = porta::team_reduce(t, n, porta::maximum_op{}, [&](std::int64_t i) { return xv[row + i]; });
              if (t.rank() == 0 && t.lane() == 0) {
                sv[t.league()] = a;
                mv[t.league()] = b;
              }
            }));
      } catch (const porta::InvalidArgument& e) {
        refused(dev, s, e);
        continue;
      }
      PORTA_CHECK_RESULT(porta_test::compare_exact(sum.to_vector(), want_sum));
      PORTA_CHECK_RESULT(porta_test::compare_exact(mx.to_vector(), want_max));
    }
  }
}

TEMPLATE_TEST_CASE("vector_reduce: a matrix-vector product with a team per block of rows", "[kernels][teams]", float,
                   double) {
  using T = TestType;
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  constexpr std::int64_t R = 10;  // rows per team
  for (std::int64_t n : {1, 31, 32, 100, 1025}) {
    const std::int64_t league = 5, rows = league * R;
    const auto ha = porta_test::nonzero<T>(rng, rows * n);
    // Powers of two: each product is exact, so a compiler that contracts it into the sum's add
    // (the user's flags decide) still gives the documented bits.
    std::vector<T> hx(static_cast<std::size_t>(n));
    for (auto& v : hx) v = std::ldexp(T(rng.coin() ? 1 : -1), rng.uniform(-3, 3));
    auto a = Array<T>::from(ha, dev);
    a.reshape(Shape{rows, n});
    const auto x = Array<T>::from(hx, dev);
    std::vector<T> want(rows);
    for (std::int64_t r = 0; r < rows; ++r) {
      std::vector<T> prod(n);
      for (std::int64_t k = 0; k < n; ++k) prod[k] = ha[r * n + k] * hx[k];
      want[r] = ref_lanes<T>(prod, 32, add<T>, T(-0.0));
    }
    for (const Shape2 s : kShapes) {
      INFO("n = " << n << ", team " << shape_text(s) << " on " << dev.to_string());
      auto y = porta_test::poisoned<T>(Shape{rows}, dev);
      auto av = a.view();
      auto xv = x.view();
      auto yv = y.view();
      try {
        porta::parallel_for(dev, porta::teams(league, s.team, s.vector), PORTA_KERNEL((const porta::Team& t) {
                              porta::thread_for(t, R, [&](std::int64_t r) {
                                const std::int64_t row = t.league() * R + r;
                                const T v = porta::vector_reduce(t, n, porta::plus{},
                                                                 [&](std::int64_t k) { return av(row, k) * xv[k]; });
                                if (t.lane() == 0) yv[row] = v;
                              });
                            }));
      } catch (const porta::InvalidArgument& e) {
        refused(dev, s, e);
        continue;
      }
      PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), want));
    }
  }
}

TEMPLATE_TEST_CASE("team scans: exclusive and inclusive, sum and max, the same bits for every team shape",
                   "[kernels][teams]", float, double, std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : {0, 1, 2, 255, 256, 257, 700, 5000}) {
    const std::int64_t league = 4;
    const auto hx = porta_test::nonzero<T>(rng, league * n);
    const auto x = Array<T>::from(hx, dev);
    const T lowest =
        std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
    std::vector<T> want_ex(hx.size()), want_in(hx.size()), want_mx(hx.size()), want_tot(league);
    for (std::int64_t l = 0; l < league; ++l) {
      const std::vector<T> row(hx.begin() + l * n, hx.begin() + (l + 1) * n);
      T tot{}, unused{};
      const auto ex = ref_scan<T>(row, add<T>, std::is_floating_point_v<T> ? T(-0.0) : T(0), false, &tot);
      const auto in = ref_scan<T>(row, add<T>, std::is_floating_point_v<T> ? T(-0.0) : T(0), true, &unused);
      auto mxs = ref_scan<T>(row, max2<T>, lowest, true, &unused);
      std::copy(ex.begin(), ex.end(), want_ex.begin() + l * n);
      std::copy(in.begin(), in.end(), want_in.begin() + l * n);
      std::copy(mxs.begin(), mxs.end(), want_mx.begin() + l * n);
      want_tot[l] = n == 0 ? T(0) : tot;
      if constexpr (std::is_floating_point_v<T>) {
        // Independently: the inclusive sums follow a double prefix sum within a sum's error.
        double d = 0, mag = 0;
        for (std::int64_t i = 0; i < n; ++i) {
          d += row[i];
          mag += std::fabs(static_cast<double>(row[i]));
          REQUIRE(std::fabs(static_cast<double>(in[i]) - d) <= 1e-5 * mag + 1e-30);
        }
      }
    }
    for (const Shape2 s : kShapes) {
      INFO("n = " << n << ", team " << shape_text(s) << " on " << dev.to_string());
      auto ex = porta_test::poisoned<T>(Shape{league * n}, dev);
      auto in = porta_test::poisoned<T>(Shape{league * n}, dev);
      auto mx = porta_test::poisoned<T>(Shape{league * n}, dev);
      auto tot = porta_test::poisoned<T>(Shape{league}, dev);
      auto xv = x.view();
      auto ev = ex.view();
      auto iv = in.view();
      auto mv = mx.view();
      auto tv = tot.view();
      try {
        porta::parallel_for(dev, porta::teams(league, s.team, s.vector), PORTA_KERNEL((const porta::Team& t) {
                              const std::int64_t row = t.league() * n;
                              const auto value = [&](std::int64_t i) { return xv[row + i]; };
                              const T total = porta::team_exclusive_scan(t, n, value,
                                                                         [&](std::int64_t i, T p) { ev[row + i] = p; });
                              porta::team_inclusive_scan(t, n, value, [&](std::int64_t i, T p) { iv[row + i] = p; });
                              porta::team_inclusive_scan(t, n, porta::maximum_op{}, value,
                                                         [&](std::int64_t i, T p) { mv[row + i] = p; });
                              if (t.rank() == 0 && t.lane() == 0) tv[t.league()] = total;
                            }));
      } catch (const porta::InvalidArgument& e) {
        refused(dev, s, e);
        continue;
      }
      PORTA_CHECK_RESULT(porta_test::compare_exact(ex.to_vector(), want_ex));
      PORTA_CHECK_RESULT(porta_test::compare_exact(in.to_vector(), want_in));
      PORTA_CHECK_RESULT(porta_test::compare_exact(mx.to_vector(), want_mx));
      PORTA_CHECK_RESULT(porta_test::compare_exact(tot.to_vector(), want_tot));
    }
  }
}

TEST_CASE("a histogram with per-team bins in scratch, merged in a fixed order", "[kernels][teams]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  constexpr std::int64_t kBins = 64, kPerTeam = 5000;
  const std::int64_t league = 23, n = league * kPerTeam - 17;  // the last team's share is short
  std::vector<std::int32_t> hk(static_cast<std::size_t>(n));
  for (auto& k : hk) k = rng.uniform<std::int32_t>(0, kBins - 1);
  const auto keys = Array<std::int32_t>::from(hk, dev);
  for (const Shape2 s : kShapes) {
    INFO("team " << shape_text(s) << " on " << dev.to_string());
    auto bins = porta_test::poisoned<std::int32_t>(Shape{league, kBins}, dev);
    auto kv = keys.view();
    auto bv = bins.view();
    try {
      porta::parallel_for(dev, porta::teams(league, s.team, s.vector).scratch(kBins * sizeof(std::int32_t)),
                          PORTA_KERNEL((const porta::Team& t) {
                            auto local = t.scratch<std::int32_t>(kBins);
                            porta::team_for(t, kBins, [&](std::int64_t b) { local[b] = 0; });
                            t.barrier();
                            const std::int64_t lo = t.league() * kPerTeam;
                            const std::int64_t hi = lo + kPerTeam < n ? lo + kPerTeam : n;
                            porta::team_for(t, lo, hi,
                                            [&](std::int64_t i) { porta::team_atomic_add(t, &local[kv[i]], 1); });
                            t.barrier();
                            porta::team_for(t, kBins, [&](std::int64_t b) { bv(t.league(), b) = local[b]; });
                          }));
    } catch (const porta::InvalidArgument& e) {
      refused(dev, s, e);
      continue;
    }
    std::vector<std::int32_t> want(static_cast<std::size_t>(league * kBins), 0);
    for (std::int64_t i = 0; i < n; ++i) ++want[(i / kPerTeam) * kBins + hk[i]];
    PORTA_CHECK_RESULT(porta_test::compare_exact(bins.to_vector(), want));
  }
}

TEST_CASE("team launches: shapes no GPU can run are refused on every device", "[kernels][teams]") {
  CHECK_THROWS_AS(porta::teams(-1), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::teams(4, -2), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::teams(4, 32, 3), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::teams(4, 32, 64), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::teams(4, 64, 32), porta_test::Contains("1024 threads"));
  CHECK_THROWS_AS(porta::teams(4, 2048), porta::InvalidArgument);
  CHECK_NOTHROW(porta::teams(4, 1024));
}

TEST_CASE("team scratch: a request past the launch's scratch gives an empty View, and fails on the CPU",
          "[kernels][teams]") {
  // This file does not check its views: on a GPU the request only comes back empty (a checked
  // file fails the kernel there too: test_debug.cpp); the CPU always fails it.
  const Device dev = PORTA_KERNEL_DEVICE();
  INFO("on " << dev.to_string());
  auto out = porta_test::poisoned<float>(Shape{4}, dev);
  auto ov = out.view();
  std::string what;
  try {
    porta::parallel_for("greedy", dev, porta::teams(4, 32).scratch(64), PORTA_KERNEL((const porta::Team& t) {
                          auto a = t.scratch<float>(8);   // 32 bytes
                          auto b = t.scratch<float>(16);  // 64 more: past the end
                          if (b.size == 16) b[0] = a[0];
                          if (t.rank() == 0) ov[t.league()] = static_cast<float>(b.size);
                        }));
    porta::synchronize(dev);
  } catch (const porta::KernelError& e) {
    what = e.what();
  }
  INFO(what);
  if (dev.type == porta::DeviceType::cpu) {
    CHECK(what.find("does not fit the launch's scratch") != std::string::npos);
    CHECK(what.find("greedy") != std::string::npos);
  } else {
    CHECK(what.empty());
    PORTA_CHECK_RESULT(porta_test::compare_exact(out.to_vector(), std::vector<float>(4, 0.0f)));
  }
}

TEST_CASE("team scratch beyond 48 KiB where the device has it; past the device's limit an error", "[kernels][teams]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  INFO("on " << dev.to_string());
  // 100 KiB: an H100/H200 block can have it (AMD GPUs: 64 KiB, so 60 there).
  const std::int64_t kBig = (dev.type == porta::DeviceType::hip ? 60 : 100) * 1024 / sizeof(float);
  auto out = porta_test::poisoned<float>(Shape{3}, dev);
  auto ov = out.view();
  porta::parallel_for(dev, porta::teams(3, 256).scratch(kBig * sizeof(float)), PORTA_KERNEL((const porta::Team& t) {
                        auto s = t.scratch<float>(kBig);
                        porta::team_for(t, kBig, [&](std::int64_t i) { s[i] = static_cast<float>(i % 7); });
                        t.barrier();
                        const float total =
                            porta::team_reduce(t, kBig, porta::plus{}, [&](std::int64_t i) { return s[i]; });
                        if (t.rank() == 0 && t.lane() == 0) ov[t.league()] = total;
                      }));
  double want = 0;
  for (std::int64_t i = 0; i < kBig; ++i) want += i % 7;  // small integers: exact in float too
  PORTA_CHECK_RESULT(porta_test::compare_exact(out.to_vector(), std::vector<float>(3, static_cast<float>(want))));
  // Just under 48 KiB with porta's 4 KiB of static shared memory (team_reduce) needs the opt-in too.
  auto near = porta_test::poisoned<float>(Shape{2}, dev);
  auto nv = near.view();
  constexpr std::int64_t kNear = 46 * 1024 / sizeof(float);
  porta::parallel_for(dev, porta::teams(2, 128).scratch(kNear * sizeof(float)), PORTA_KERNEL((const porta::Team& t) {
                        auto s = t.scratch<float>(kNear);
                        porta::team_for(t, kNear, [&](std::int64_t i) { s[i] = 1.0f; });
                        t.barrier();
                        const float total =
                            porta::team_reduce(t, kNear, porta::plus{}, [&](std::int64_t i) { return s[i]; });
                        if (t.rank() == 0 && t.lane() == 0) nv[t.league()] = total;
                      }));
  PORTA_CHECK_RESULT(porta_test::compare_exact(near.to_vector(), std::vector<float>(2, static_cast<float>(kNear))));
  if (dev.type != porta::DeviceType::cpu) {
    CHECK_THROWS_WITH(porta::parallel_for(dev, porta::teams(3, 32).scratch(std::size_t(1) << 20),
                                          PORTA_KERNEL((const porta::Team& t) { (void)t; })),
                      porta_test::Contains("bytes of shared memory a block may have"));
  }
}

TEST_CASE("cpu:strict gives each team scratch that holds garbage, as a GPU's does", "[kernels][teams][strict]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  if (dev.type != porta::DeviceType::cpu || dev.host_accessible()) return;
  auto out = porta_test::poisoned<std::int32_t>(Shape{3}, dev);
  auto ov = out.view();
  porta::parallel_for(dev, porta::teams(3).scratch(16), PORTA_KERNEL((const porta::Team& t) {
                        auto s = t.scratch<std::int32_t>(4);
                        ov[t.league()] = s[t.league()];  // read before any write
                        s[0] = 7;
                        s[1] = 7;
                        s[2] = 7;
                      }));
  PORTA_CHECK_RESULT(porta_test::compare_exact(out.to_vector(), std::vector<std::int32_t>(3, -1)));
}

namespace {
// A team kernel as a functor: each team scales its block of x through scratch, reversed twice.
struct ScaleBlock {
  porta::View<const float> x;
  porta::View<float> y;
  std::int64_t block;
  PORTA_HOST_DEVICE void operator()(const porta::Team& t) const {
    auto s = t.scratch<float>(block);
    const std::int64_t at = t.league() * block;
    porta::team_for(t, block, [&](std::int64_t k) { s[block - 1 - k] = x[at + k]; });
    t.barrier();
    porta::thread_for(t, block, [&](std::int64_t k) {
      porta::vector_for(t, 1, [&](std::int64_t) { y[at + k] = 2.0f * s[block - 1 - k]; });
    });
  }
};
}  // namespace

TEST_CASE("a team kernel can be a functor", "[kernels][teams]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  INFO("on " << dev.to_string());
  PORTA_RNG(rng);
  const std::int64_t block = 129, league = 17;
  const auto hx = porta_test::nonzero<float>(rng, block * league);
  const auto x = Array<float>::from(hx, dev);
  auto y = porta_test::poisoned<float>(Shape{block * league}, dev);
  porta::parallel_for(dev, porta::teams(league, 32, 4).scratch(block * sizeof(float)),
                      ScaleBlock{x.view(), y.view(), block});
  std::vector<float> want(hx.size());
  for (std::size_t i = 0; i < hx.size(); ++i) want[i] = 2.0f * hx[i];
  PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), want));
}
