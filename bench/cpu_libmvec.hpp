// SPDX-License-Identifier: Apache-2.0
// glibc's vector math (libmvec) over an array, all threads: the CPU math group's "libmvec" peer
// (cpu_libmvec.cpp, the one file of the benchmarks built with -ffast-math).
#pragma once

#include <cstdint>

namespace porta_bench {

// y[i] = fn(x[i]) for fn in exp, log, sin, cos, tanh; false for another name.
template <class T>
bool libmvec_map(const char* fn, const T* x, T* y, std::int64_t n);

}  // namespace porta_bench
