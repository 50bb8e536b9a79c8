// SPDX-License-Identifier: Apache-2.0
// Numba's CUDA vector add, twice: as a user kernel (porta::map) and with the built-in op.
//
//   @cuda.jit
//   def f(a, b, c):
//       tid = cuda.grid(1)
//       if tid < len(c):
//           c[tid] = a[tid] + b[tid]
//
//   N = 100000
//   a = cuda.to_device(np.random.random(N))
//   b = cuda.to_device(np.random.random(N))
//   c = cuda.device_array_like(a)
//   f.forall(len(a))(a, b, c)
//   c.copy_to_host()
//
// The user kernel needs a GPU compiler for the GPU (CMake: porta_add_kernels() marks this file);
// the built-in op `a + b` is compiled inside porta and works from any C++ file.
#include <porta/kernels.hpp>
#include <porta/porta.hpp>

#include <cstdio>
#include <random>
#include <vector>

// c = f(a, b) elementwise. porta::map checks that the arrays share a size and a device, so the
// kernel needs neither Numba's `tid < len(c)` guard nor a launch configuration.
void add_kernel(const porta::Array<double>& a, const porta::Array<double>& b, porta::Array<double>& c) {
  porta::map(c, PORTA_KERNEL((double x, double y) { return x + y; }), a, b);
}

bool check(const char* how, const std::vector<double>& c, const std::vector<double>& ha,
           const std::vector<double>& hb) {
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < c.size(); ++i)
    if (c[i] != ha[i] + hb[i]) ++wrong;  // one IEEE addition: exact agreement with the host
  std::printf("  %-28s %zu of %zu elements wrong  %s\n", how, wrong, c.size(), wrong ? "WRONG" : "OK");
  return wrong == 0;
}

int main() try {
  const porta::Device dev = porta::default_device();
  std::printf("vector_add on %s\n", porta::describe(dev).c_str());

  const std::int64_t n = 100000;
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> random;  // np.random.random: float64 in [0, 1)
  std::vector<double> ha(n), hb(n);
  for (double& v : ha) v = random(rng);
  for (double& v : hb) v = random(rng);

  const auto a = porta::Array<double>::from(ha, dev);  // cuda.to_device(a)
  const auto b = porta::Array<double>::from(hb, dev);
  auto c = porta::empty<double>({n}, dev);  // cuda.device_array_like(a): uninitialised

  add_kernel(a, b, c);
  bool ok = check("user kernel (porta::map)", c.to_vector(), ha, hb);  // c.copy_to_host()

  const auto c2 = a + b;  // built-in porta::add; allocates its result
  ok &= check("built-in (a + b)", c2.to_vector(), ha, hb);
  return ok ? 0 : 1;
} catch (const porta::Error& e) {
  std::fprintf(stderr, "porta error: %s\n", e.what());
  return 2;
}
