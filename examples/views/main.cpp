// SPDX-License-Identifier: Apache-2.0
// The array toolkit of docs/arrays.md: views (slices, rows, columns, reshape), element access,
// printing, scalars and compound assignment, masks, take and scatter, and matrix-vector products.
// Every result is checked against a host computation; a wrong one exits non-zero.
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <vector>

#include "common/check.hpp"
#include "porta/porta.hpp"

using example::expect;

int main() {
  const porta::Device dev = porta::default_device();
  std::printf("porta views on %s\n", porta::describe(dev).c_str());

  // ---- views: no copies; writes through a view change the array it views
  auto m = porta::arange<float>(12, dev).reshaped({3, 4});  // [[0 1 2 3] [4 5 6 7] [8 9 10 11]]
  auto row = m.row(1);                                      // m[1]      -> [4 5 6 7]
  auto col = m.col(2);                                      // m[:, 2]   -> [2 6 10], strided
  auto block = m.slice({{0, 2}, {1, 3}});                   // m[0:2, 1:3]
  auto rev = m.slice({{porta::none, porta::none, -1}});     // m[::-1]
  auto flat = m.reshaped({12});                             // the same memory, 1-D
  std::cout << block << "\n";
  expect(row.to_vector() == std::vector<float>{4, 5, 6, 7}, "m.row(1)");
  expect(col.to_vector() == std::vector<float>{2, 6, 10} && !col.is_contiguous(), "m.col(2)");
  expect(block.to_vector() == std::vector<float>{1, 2, 5, 6}, "m.slice({{0, 2}, {1, 3}})");
  expect(rev.row(0).to_vector() == std::vector<float>{8, 9, 10, 11}, "m[::-1]");
  col *= 10.0f;  // writes m[:, 2] in place
  expect(flat.item(6) == 60.0f, "a write through col() seen through reshaped()");
  auto packed = col.contiguous();  // a compact copy of a strided view
  expect(packed.is_contiguous() && packed.to_vector() == std::vector<float>{20, 60, 100}, "contiguous()");

  // ---- element access: synchronous, one copy each; for many elements use to_vector()
  const float v = m.item(2, 3);  // m[2, 3]
  m.set(0, 0, -1.0f);            // m[0, 0] = -1
  expect(v == 11.0f && m.item(0, 0) == -1.0f, "item / set");

  // ---- scalars of any arithmetic type keep the array's dtype; compound assignment writes in place
  auto x = porta::arange<float>(5, dev);  // [0 1 2 3 4]
  auto y = x * 2 + 1;                     // int literals with a float array: float
  y += x;                                 // y = 3x + 1, no new array
  m.row(0) -= 0.5;                        // through a temporary view
  expect(y.to_vector() == std::vector<float>{1, 4, 7, 10, 13}, "x * 2 + 1, +=");
  expect(m.item(0, 1) == 0.5f, "m.row(0) -= 0.5");

  // ---- masks (int32 0/1), where, count_nonzero
  const auto big = porta::greater(y, 5);         // NumPy: y > 5
  const auto clipped = porta::where(big, y, 5);  // np.where(y > 5, y, 5)
  const std::int64_t n_big = porta::count_nonzero(big);
  expect(big.to_vector() == std::vector<std::int32_t>{0, 0, 1, 1, 1}, "greater");
  expect(clipped.to_vector() == std::vector<float>{5, 5, 7, 10, 13} && n_big == 3, "where, count_nonzero");

  // ---- take (gather) and scatter; for repeated indices the last occurrence wins
  const auto idx = porta::Array<std::int64_t>::from({2, 0, 2}, dev);
  const auto picked = porta::take(y, idx);  // y[[2, 0, 2]] -> [7 1 7]
  auto table = porta::zeros<float>({4}, dev);
  porta::scatter(table, idx, porta::Array<float>::from({1, 2, 3}, dev));  // table[[2, 0, 2]] = [1 2 3]
  expect(picked.to_vector() == std::vector<float>{7, 1, 7}, "take");
  expect(table.to_vector() == std::vector<float>{2, 0, 3, 0}, "scatter: the last duplicate wins");

  // ---- matrix-vector products through the vendor BLAS
  const auto a = porta::ones<float>({3, 5}, dev);
  const auto ax = porta::matmul(a, x);                             // A @ x: 3 elements
  const auto xa = porta::matmul(porta::arange<float>(3, dev), a);  // x @ A: 5 elements
  expect(ax.to_vector() == std::vector<float>{10, 10, 10}, "matmul(A, x)");
  expect(xa.to_vector() == std::vector<float>(5, 3.0f), "matmul(x, A)");

  // ---- complex arrays (complex64, complex128)
  using cf = porta::complex<float>;
  const auto z = porta::Array<cf>::from({cf(3, 4), cf(0, 1), cf(-2, 0)}, dev);
  const auto w = z * z + cf(1, -1);             // (3+4i)^2 + 1 - i = -6 + 23i
  const porta::Array<float> r = porta::abs(z);  // |z|: a float array, [5 1 2]
  const cf s = porta::vdot(z, z);               // sum of conj(z) z = |z|^2 summed: 30 + 0i
  const auto re = porta::real(w), im = porta::imag(porta::conj(w));
  expect(w.item(0) == cf(-6, 23) && r.to_vector() == std::vector<float>{5, 1, 2}, "complex maps, abs");
  expect(s == cf(30, 0) && re.item(0) == -6.0f && im.item(0) == -23.0f, "vdot, real, imag, conj");

  std::cout << m << "\n";
  return example::summary();
}
