// SPDX-License-Identifier: Apache-2.0
// Scans and random numbers beside their peers: the registration hooks that
// cpu_bench.cpp (cpu_scan_random.cpp) and cuda_bench.cu (cuda_scan_random.cuh) call.
//
//   cumsum/<dtype>/<impl>/<n>          inclusive sum scan; bytes: one read and one write per element
//   random_uniform, random_normal      n values in [0, 1) / N(0, 1); bytes: one write per element
//   <op>/<dtype>/copy/<n>              porta::copy of n elements; bytes: one read and one write per
//                                      element (porta/copy: the fraction of the copy's bandwidth)
//
// Groups for PORTA_BENCH_OPS: "scan", "random".
#pragma once

namespace porta_bench {
void register_cpu_scan_random();
}
