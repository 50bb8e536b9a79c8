// SPDX-License-Identifier: Apache-2.0
// PyCUDA's first example, the element-wise product `dest = a * b`, as a porta user kernel.
//
// PyCUDA writes the kernel in a CUDA C string and launches one thread per element by hand:
//
//   mod = SourceModule("""
//   __global__ void multiply_them(float *dest, float *a, float *b) {
//     const int i = threadIdx.x;
//     dest[i] = a[i] * b[i];
//   }""")
//   multiply_them(drv.Out(dest), drv.In(a), drv.In(b), block=(400, 1, 1), grid=(1, 1))
//
// porta writes the body once as a lambda. porta::parallel_for picks the launch shape (any n, not
// just one block), and the same lambda runs on the CPU when there is no GPU. CMake marks this file
// with porta_add_kernels(), so a CUDA or HIP build compiles it with nvcc or hipcc and the kernel
// runs on the GPU; a CPU-only build compiles it as plain C++.
#include <porta/kernels.hpp>
#include <porta/porta.hpp>

#include <cstdio>
#include <random>
#include <vector>

// The kernel. Views are trivially copyable windows on arrays: capture them by value (PORTA_KERNEL
// makes a `[=]` lambda of its argument, host and device under nvcc/hipcc), never the Arrays
// themselves.
void multiply_them(porta::Array<float>& dest, const porta::Array<float>& a, const porta::Array<float>& b) {
  porta::View<float> d = dest.view();
  porta::View<const float> av = a.view();
  porta::View<const float> bv = b.view();
  porta::parallel_for(dest.device(), dest.size(), PORTA_KERNEL((std::int64_t i) { d[i] = av[i] * bv[i]; }));
}

// Runs the kernel on n random floats and compares with the product computed on the host.
bool run(porta::Device dev, std::int64_t n) {
  std::mt19937 rng(static_cast<unsigned>(n));
  std::normal_distribution<float> randn;  // numpy.random.randn(n).astype(numpy.float32)
  std::vector<float> ha(static_cast<std::size_t>(n)), hb(static_cast<std::size_t>(n));
  for (float& v : ha) v = randn(rng);
  for (float& v : hb) v = randn(rng);

  auto a = porta::Array<float>::from(ha, dev);  // drv.In(a)
  auto b = porta::Array<float>::from(hb, dev);
  auto dest = porta::zeros<float>({n}, dev);  // numpy.zeros_like(a)
  multiply_them(dest, a, b);
  const std::vector<float> hd = dest.to_vector();  // drv.Out(dest)

  // One IEEE multiplication per element: the result must match the host's bit for bit.
  std::int64_t wrong = 0;
  for (std::size_t i = 0; i < hd.size(); ++i)
    if (hd[i] != ha[i] * hb[i]) ++wrong;
  std::printf("  n = %-8lld dest - a*b is zero for %lld of %lld elements  %s\n", static_cast<long long>(n),
              static_cast<long long>(n - wrong), static_cast<long long>(n), wrong ? "WRONG" : "OK");
  return wrong == 0;
}

int main() try {
  const porta::Device dev = porta::default_device();
  std::printf("multiply_them on %s\n", porta::describe(dev).c_str());
  bool ok = run(dev, 400);  // PyCUDA's size: one block of 400 threads
  ok &= run(dev, 1 << 20);  // many blocks; PyCUDA's kernel would need a grid and a bounds check
  ok &= run(dev, 1000003);  // not a multiple of any block size
  return ok ? 0 : 1;
} catch (const porta::Error& e) {
  std::fprintf(stderr, "porta error: %s\n", e.what());
  return 2;
}
