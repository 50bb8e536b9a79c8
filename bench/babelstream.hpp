// SPDX-License-Identifier: Apache-2.0
// BabelStream's six kernels (the field's bandwidth benchmark) on the CPU, each written three ways in
// one binary and run back to back (babelstream_cpu.cpp):
//
//   babelstream_<kernel>/<dtype>/<impl>/<n>
//
//   kernel   copy (c = a), mul (b = s*c), add (c = a + b), triad (a = b + s*c), dot (sum a*b),
//            nstream (a += b + s*c); a = 0.1, b = 0.2, c = 0.0, s = 0.4, as BabelStream starts
//   impl     porta_<call>  porta's built-in as the docs tell a user to write it; <call> names it:
//                          copy: porta::copy(a, c); mul: porta::mul(s, c, b); add: porta::add(a, b, c);
//                          lazy: a.assign(porta::lazy(b) + s * porta::lazy(c)) and
//                          a.assign(A + (B + s * C)) of lazy leaves (porta/fuse.hpp: one pass, where
//                          the eager operators would make two and three); dot: porta::dot(a, b)
//            porta_kernel  porta::parallel_for / transform_reduce over Views (docs/guide.md, 4)
//            openmp        BabelStream's own OpenMP version: `#pragma omp parallel for` loops over
//                          arrays first touched by the same loop, `reduction(+:sum)` for dot
//
// Bytes are BabelStream's counts (copy and mul 2 arrays, add and triad 3, nstream 4, dot 2), so the
// GB/s match its output and the ratios are ratios of time. Sizes: the vector sizes of common.hpp,
// plus BabelStream's default 2^25 when it is in range. Group for PORTA_BENCH_OPS: "babelstream".
#pragma once

namespace porta_bench {

void register_cpu_babelstream();

}  // namespace porta_bench
