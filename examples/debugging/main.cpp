// SPDX-License-Identifier: Apache-2.0
// Kernels that go wrong, and what porta says: an index one past an array, a column one past a
// matrix's row (inside the allocation, so only a per-dimension check sees it), and a failure
// reported on purpose with porta::fail. Bounds checks are on for this file only (the macro before
// the first porta include; -DPORTA_BOUNDS_CHECK=ON turns them on for a whole build).
//
// It runs on the best device present and then on cpu:strict, prints each error, and checks that
// each names the kernel, the array, its shape and the index (docs/debugging.md quotes it).
#define PORTA_BOUNDS_CHECK 1
#include <porta/kernels.hpp>
#include <porta/porta.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

// Runs `launch` and a wait, and returns what the KernelError said ("" when nothing failed).
template <class Launch>
std::string error_of(porta::Device dev, Launch launch) {
  try {
    launch();
    porta::synchronize(dev);
  } catch (const porta::KernelError& e) {
    std::puts(e.what());
    return e.what();
  }
  return {};
}

bool says(const std::string& what, const std::vector<std::string>& parts) {
  if (what.empty()) {
    std::puts("  MISSING: the kernel's failure was not reported");
    return false;
  }
  for (const std::string& p : parts)
    if (what.find(p) == std::string::npos) {
      std::printf("  MISSING \"%s\"\n", p.c_str());
      return false;
    }
  return true;
}

// One element past u.
void fill(porta::Device dev, porta::View<float> uv) {
  porta::parallel_for("fill", dev, 11, PORTA_KERNEL((std::int64_t i) { uv[i] = 1.0f; }));
}

// Column 5 of a 4 x 5 matrix: inside the allocation, outside the row.
void clear(porta::Device dev, porta::View<double> mv) {
  porta::parallel_for("clear", dev, porta::Range<2>({0, 0}, {4, 6}),
                      PORTA_KERNEL((std::int64_t i, std::int64_t j) { mv(i, j) = 0.0; }));
}

// A check of the program's own.
void eos(porta::Device dev) {
  porta::parallel_for("eos", dev, 4, PORTA_KERNEL((std::int64_t i) {
                        if (i == 3) porta::fail("negative density at", i, -0.25);
                      }));
}

bool run_on(porta::Device dev) {
  const std::string d = dev.to_string();
  porta::Array<float> u({10}, dev, "u");
  porta::Array<double> m({4, 5}, dev, "m");
  auto uv = u.view();
  auto mv = m.view();
  bool ok = true;
  ok &= says(error_of(dev, [&] { fill(dev, uv); }),
             {"kernel 'fill' on " + d, "index 10 is out of bounds for array 'u' of shape (10)"});
  ok &= says(error_of(dev, [&] { clear(dev, mv); }),
             {"kernel 'clear' on " + d, "index (0, 5) is out of bounds for array 'm' of shape (4, 5)"});
  ok &= says(error_of(dev, [&] { eos(dev); }), {"kernel 'eos' on " + d, "negative density at 3 -0.25"});
  // The device is still usable: a correct kernel runs and its result arrives.
  porta::parallel_for("fill correctly", dev, 10, PORTA_KERNEL((std::int64_t i) { uv[i] = 2.0f; }));
  ok &= porta::sum(u) == 20.0f;
  return ok;
}

}  // namespace

int main() try {
  const porta::Device best = porta::default_device();
  bool ok = run_on(best);
  if (!best.is_strict()) ok &= run_on(porta::Device::cpu_strict());
  std::printf("debugging: %s\n", ok ? "every failure reported as expected" : "FAILED");
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "debugging: %s\n", e.what());
  return 1;
}
