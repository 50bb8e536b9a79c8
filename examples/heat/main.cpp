// SPDX-License-Identifier: Apache-2.0
// Heat diffusion on a square plate: the explicit (Jacobi) 5-point stencil, the first loop nest of
// every scientific-computing course, as a user kernel over a 2-D range.
//
//   u_new(i, j) = u(i, j) + r * (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1) - 4 u(i, j))
//
// The top edge is held at 1 (hot), the other edges at 0; the interior starts at 0. Each sweep reads
// one grid and writes the other, then the two are swapped. porta::transform_reduce over the same
// range gives the heat in the plate and the largest change of the last sweep. The result is checked
// against the same sweeps in double precision on the host.
//
// The kernels have names and the grids labels, so that a profile of this program reads as its
// source does: PORTA_PROFILE=summary ./heat prints a table of "jacobi sweep", "total heat" and
// "largest change" (docs/profiling.md), and Nsight Systems shows them as NVTX ranges.
//
//   heat [--n N] [--steps S]      N x N grid (default 256), S sweeps (default 400)
#include <porta/kernels.hpp>
#include <porta/porta.hpp>
#include <porta/profile.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

// r = alpha dt / h^2; the scheme is stable for r <= 1/4.
constexpr float kR = 0.2f;

// One sweep over the interior: the boundary of `next` is never written, so it keeps its fixed values.
void sweep(porta::Device dev, const porta::Array<float>& cur, porta::Array<float>& next, std::int64_t n) {
  const auto u = cur.view();
  const auto un = next.view();
  const float r = kR;
  porta::parallel_for(
      "jacobi sweep", dev, porta::Range<2>({1, 1}, {n - 1, n - 1}), PORTA_KERNEL((std::int64_t i, std::int64_t j) {
        un(i, j) = u(i, j) + r * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1) - 4.0f * u(i, j));
      }));
}

// Heat in the interior (the sum of u), accumulated in double.
double heat(porta::Device dev, const porta::Array<float>& cur, std::int64_t n) {
  const auto u = cur.view();
  return porta::transform_reduce("total heat", dev, porta::Range<2>({1, 1}, {n - 1, n - 1}), 0.0, porta::plus{},
                                 PORTA_KERNEL((std::int64_t i, std::int64_t j) { return double(u(i, j)); }));
}

// The largest |a - b| over the interior: how far the last sweep still moved the solution.
float largest_change(porta::Device dev, const porta::Array<float>& a, const porta::Array<float>& b, std::int64_t n) {
  const auto x = a.view();
  const auto y = b.view();
  return porta::transform_reduce("largest change", dev, porta::Range<2>({1, 1}, {n - 1, n - 1}), 0.0f,
                                 porta::maximum_op{}, PORTA_KERNEL((std::int64_t i, std::int64_t j) {
                                   const float d = x(i, j) - y(i, j);
                                   return d < 0 ? -d : d;
                                 }));
}

// The initial plate: top row hot, everything else cold.
std::vector<float> initial(std::int64_t n) {
  std::vector<float> h(static_cast<std::size_t>(n * n), 0.0f);
  for (std::int64_t j = 0; j < n; ++j) h[static_cast<std::size_t>(j)] = 1.0f;
  return h;
}

// The same sweeps on the host in double, with r rounded to float as the device sees it.
std::vector<double> reference(std::int64_t n, int steps) {
  const std::vector<float> h0 = initial(n);
  std::vector<double> u(h0.begin(), h0.end()), v = u;
  const double r = kR;
  for (int s = 0; s < steps; ++s) {
    for (std::int64_t i = 1; i < n - 1; ++i)
      for (std::int64_t j = 1; j < n - 1; ++j) {
        const std::int64_t k = i * n + j;
        v[k] = u[k] + r * (u[k - n] + u[k + n] + u[k - 1] + u[k + 1] - 4.0 * u[k]);
      }
    std::swap(u, v);
  }
  return u;
}

bool parse_args(int argc, char** argv, std::int64_t* n, int* steps) {
  for (int a = 1; a < argc; ++a) {
    const bool has_value = a + 1 < argc;
    if (std::strcmp(argv[a], "--n") == 0 && has_value) {
      *n = std::atoll(argv[++a]);
    } else if (std::strcmp(argv[a], "--steps") == 0 && has_value) {
      *steps = std::atoi(argv[++a]);
    } else {
      std::fprintf(stderr, "usage: %s [--n N (>= 3)] [--steps S (>= 1)]\n", argv[0]);
      return false;
    }
  }
  if (*n < 3 || *steps < 1) {
    std::fprintf(stderr, "heat: --n must be >= 3 and --steps >= 1\n");
    return false;
  }
  return true;
}

int main(int argc, char** argv) try {
  std::int64_t n = 256;
  int steps = 400;
  if (!parse_args(argc, argv, &n, &steps)) return 2;
  const porta::Device dev = porta::default_device();
  std::printf("heat on %s: %lld x %lld grid, %d sweeps\n", porta::describe(dev).c_str(), static_cast<long long>(n),
              static_cast<long long>(n), steps);

  const std::vector<float> h0 = initial(n);
  porta::Array<float> cur({n, n}, dev, "temperature");
  porta::Array<float> next({n, n}, dev, "next temperature");
  cur.copy_from_host(h0.data());
  next.copy_from_host(h0.data());  // the boundary lives in both grids
  // The error bound of the result, derived below the loop.
  const double eps = std::numeric_limits<float>::epsilon() / 2;
  const double tol = 8.0 * steps * eps;
  const double heat_tol = tol * static_cast<double>((n - 2) * (n - 2));
  double previous_heat = heat(dev, cur, n);
  bool monotone = true;  // heat flows in from the hot edge, so the plate only warms (up to rounding)
  float change = 0;
  {  // one span in a profile around the time loop
    const porta::profile_region region("time steps");
    for (int s = 1; s <= steps; ++s) {
      sweep(dev, cur, next, n);
      if (s == steps) change = largest_change(dev, next, cur, n);
      std::swap(cur, next);
      if (s % std::max(1, steps / 4) == 0 || s == steps) {
        const double e = heat(dev, cur, n);
        monotone &= e >= previous_heat - heat_tol;
        previous_heat = e;
        std::printf("  sweep %5d  heat %.6f\n", s, e);
      }
    }
  }
  std::printf("  last sweep changed the plate by at most %.3e\n", static_cast<double>(change));

  const std::vector<float> got = cur.to_vector();
  const std::vector<double> want = reference(n, steps);
  double worst = 0, want_heat = 0;
  for (std::size_t k = 0; k < got.size(); ++k)
    worst = std::max(worst, std::fabs(static_cast<double>(got[k]) - want[k]));
  for (std::int64_t i = 1; i < n - 1; ++i)
    for (std::int64_t j = 1; j < n - 1; ++j) want_heat += want[static_cast<std::size_t>(i * n + j)];

  // Error bound. With r <= 1/4, a sweep maps u to a convex combination of u's values, so it never
  // amplifies an error already present (max norm) and values stay in [0, 1]. Each float sweep adds
  // at most about 6 roundings of values up to 4 (the neighbours' sum), times r, plus two roundings
  // of values up to 1: under 8 * 2^-24 per sweep (less where the compiler fuses into FMAs). So the
  // field is within 8 * steps * 2^-24 of the double reference, and the heat, a sum over the
  // (n-2)^2 interior cells, within that many times as much (tol and heat_tol above).
  const double heat_err = std::fabs(previous_heat - want_heat);
  const bool ok_field = worst <= tol;
  const bool ok_heat = heat_err <= heat_tol;
  std::printf("  field vs double reference: max error %.3e (bound %.3e)  %s\n", worst, tol, ok_field ? "OK" : "WRONG");
  std::printf("  heat  vs double reference: %.6f vs %.6f, error %.3e (bound %.3e)  %s\n", previous_heat, want_heat,
              heat_err, heat_tol, ok_heat ? "OK" : "WRONG");
  std::printf("  heat never decreased: %s\n", monotone ? "OK" : "WRONG");
  return ok_field && ok_heat && monotone ? 0 : 1;
} catch (const porta::Error& e) {
  std::fprintf(stderr, "porta error: %s\n", e.what());
  return 2;
}
