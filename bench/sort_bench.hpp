// SPDX-License-Identifier: Apache-2.0
// Sorting beside its peers: the registration hooks that cpu_bench.cpp
// (cpu_sort.cpp) and cuda_bench.cu (cuda_sort.cuh) call.
//
//   sort/<dtype>/<impl>/<n>      n keys sorted; bytes: one read and one write of every key
//   argsort/<dtype>/<impl>/<n>   the int64 permutation that sorts n keys (key and index pairs);
//                                bytes: the keys read and written, the indices read and written
//
// Inputs are uniform random numbers (no NaN: std::sort with < needs a strict weak order). Group
// for PORTA_BENCH_OPS: "sort".
#pragma once

#include <cstdint>

namespace porta_bench {
void register_cpu_sort();

template <class T>
double sort_bytes(std::int64_t n, bool argsort) {
  return static_cast<double>(n) * (2.0 * sizeof(T) + (argsort ? 2.0 * sizeof(std::int64_t) : 0.0));
}
}  // namespace porta_bench
