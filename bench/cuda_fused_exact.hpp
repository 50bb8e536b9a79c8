// SPDX-License-Identifier: Apache-2.0
// porta::map of the fused cases' formulas built with -fmad=false (cuda_fused_exact.cu): the chain
// when c is null, Black-Scholes of (a, b, c) otherwise.
#pragma once

#include <porta/porta.hpp>

namespace porta_bench_cuda {

template <class T>
void fused_map_exact(const porta::Stream& s, porta::Array<T>& out, const porta::Array<T>& a, const porta::Array<T>& b,
                     const porta::Array<T>* c);

}  // namespace porta_bench_cuda
