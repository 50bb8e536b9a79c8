// SPDX-License-Identifier: Apache-2.0
// Arrays the CuPy way: create them on the device, compute with operators, reduce, copy back.
// The NumPy / CuPy line that each statement replaces is in the comment beside it
// (`cp` is `import cupy as cp`; with NumPy the same lines run on the CPU).
#include <porta/porta.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/check.hpp"

namespace {

// Compares a device result with the expected values (all exactly representable here, so the
// comparison is exact) and prints one line.
void expect(const std::string& what, const std::vector<float>& got, const std::vector<float>& want) {
  const bool ok = got == want;
  if (!ok) ++example::failures;
  std::printf("  %-40s [", what.c_str());
  for (std::size_t i = 0; i < got.size(); ++i) std::printf(i ? " %g" : "%g", got[i]);
  std::printf("]  %s\n", ok ? "OK" : "WRONG");
}
void expect(const std::string& what, double got, double want) {
  expect(what, std::vector<float>{float(got)}, std::vector<float>{float(want)});
}

}  // namespace

int main() try {
  const porta::Device dev = porta::default_device();
  std::printf("arrays on %s\n", porta::describe(dev).c_str());

  // ---- creation -------------------------------------------------------------------------------
  // Every factory takes the device last; without it, porta::default_device() is used.
  auto x = porta::Array<float>::from({1, 2, 3, 4}, dev);                // x = cp.array([1, 2, 3, 4], dtype=cp.float32)
  auto m = porta::Array<float>::from({0, 1, 2, 3, 4, 5}, {2, 3}, dev);  // m = cp.arange(6.0).reshape(2, 3)
  auto z = porta::zeros<float>({4}, dev);                               // cp.zeros(4, dtype=cp.float32)
  auto o = porta::ones<float>({2, 3}, dev);                             // cp.ones((2, 3), dtype=cp.float32)
  auto r = porta::arange<float>(0.0f, 2.0f, 0.5f, dev);                 // cp.arange(0, 2, 0.5)
  auto f = porta::full<float>({3}, 7.0f, dev);                          // cp.full(3, 7.0)
  expect("cp.zeros(4)", z.to_vector(), {0, 0, 0, 0});                   // to_vector() is cp.asnumpy()
  expect("cp.ones((2, 3))", o.to_vector(), {1, 1, 1, 1, 1, 1});
  expect("cp.arange(0, 2, 0.5)", r.to_vector(), {0, 0.5f, 1, 1.5f});
  expect("cp.full(3, 7.0)", f.to_vector(), {7, 7, 7});
  std::printf("  m.shape = %s, m.size = %lld\n", m.shape().to_string().c_str(), static_cast<long long>(m.size()));

  // ---- arithmetic: operators and scalars, each one a map that allocates its result -------------
  expect("x * 2 + 1", (x * 2.0f + 1.0f).to_vector(), {3, 5, 7, 9});
  expect("x * x - x", (x * x - x).to_vector(), {0, 2, 6, 12});
  expect("(x - 1) / 2", ((x - 1.0f) / 2.0f).to_vector(), {0, 0.5f, 1, 1.5f});
  expect("10 - x", (10.0f - x).to_vector(), {9, 8, 7, 6});
  expect("cp.sqrt(x * x)", porta::sqrt(x * x).to_vector(), {1, 2, 3, 4});
  expect("cp.maximum(x, 2.5)", porta::maximum(x, 2.5f).to_vector(), {2.5f, 2.5f, 3, 4});
  porta::axpy(10.0f, x, z);  // in place, no temporary for 10 * x
  expect("z += 10 * x", z.to_vector(), {10, 20, 30, 40});

  // ---- broadcasting: NumPy's rules for a row {cols} (or {1, cols}) and a column {rows, 1} ------
  auto row = porta::Array<float>::from({10, 20, 30}, dev);                   // row = cp.array([10, 20, 30])
  expect("m + row", (m + row).to_vector(), {10, 21, 32, 13, 24, 35});        // row added to each row
  auto col = porta::Array<float>::from({100, 200}, {2, 1}, dev);             // col = cp.array([[100], [200]])
  expect("m + col", (m + col).to_vector(), {100, 101, 102, 203, 204, 205});  // col added to each column

  // ---- reductions -------------------------------------------------------------------------------
  // Full reductions return a host value (like float(cp.sum(m))) and synchronize.
  expect("float(cp.sum(m))", porta::sum(m), 15);
  expect("float(cp.mean(m))", porta::mean(m), 2.5);
  expect("float(cp.max(m))", porta::max(m), 5);
  expect("float(cp.min(x))", porta::min(x), 1);
  expect("float(cp.dot(x, x))", porta::dot(x, x), 30);
  expect("float(cp.linalg.norm(x))", porta::norm2(x), std::sqrt(30.0f));
  // Along an axis the result stays on the device and drops that axis: {2, 3} -> {3} or {2}.
  expect("cp.sum(m, axis=0)", porta::sum(m, 0).to_vector(), {3, 5, 7});
  expect("cp.max(m, axis=1)", porta::max(m, 1).to_vector(), {2, 5});
  expect("cp.mean(m, axis=1)", porta::mean(m, 1).to_vector(), {1, 4});

  // keepdims=True is a reshape: put the axis back as 1 to broadcast the result as a column.
  auto row_max = porta::max(m, 1).reshaped({2, 1});  // cp.max(m, axis=1, keepdims=True)
  expect("m - cp.max(m, axis=1, keepdims=True)", (m - row_max).to_vector(), {-2, -1, 0, -2, -1, 0});

  // ---- matrix product and transpose --------------------------------------------------------------
  expect("m @ m.T", porta::matmul(m, porta::transpose(m)).to_vector(), {5, 14, 14, 50});

  // ---- back to the host ------------------------------------------------------------------------------
  std::vector<float> host = m.to_vector();  // cp.asnumpy(m) / m.get()
  std::printf("  to_vector(m) holds %zu floats, row-major\n", host.size());

  // Arrays are move-only (no hidden copies); clone() is an explicit copy, to(dev) a copy elsewhere.
  auto m2 = m.clone();                                       // m.copy()
  auto m_cpu = m.to(porta::Device(porta::DeviceType::cpu));  // torch: m.to("cpu")
  expect("m.copy()", m2.to_vector(), {0, 1, 2, 3, 4, 5});
  expect("m.to(\"cpu\")", m_cpu.to_vector(), {0, 1, 2, 3, 4, 5});

  return example::summary();
} catch (const porta::Error& e) {
  std::fprintf(stderr, "porta error: %s\n", e.what());
  return 2;
}
