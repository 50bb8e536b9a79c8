// SPDX-License-Identifier: Apache-2.0
// The fused cases' porta::map compiled WITHOUT contraction (this file alone builds with -fmad=false,
// bench/CMakeLists.txt): the one-pass kernel with the eager chain's bits, which a fused expression
// also gives. Beside cuda_fused.cuh's porta_map (nvcc's default, which contracts a * b + c into an
// FMA, also inside the math library's sin and cos), it tells the interpreter's own cost apart from
// the price of the eager bits.
#include <porta/kernels.hpp>
#include <porta/porta.hpp>

#include "cuda_fused_exact.hpp"
#include "fused_bench.hpp"

namespace porta_bench_cuda {

template <class T>
void fused_map_exact(const porta::Stream& s, porta::Array<T>& out, const porta::Array<T>& a, const porta::Array<T>& b,
                     const porta::Array<T>* c) {
  namespace pb = porta_bench;
  if (c != nullptr) {
    porta::map(
        s, out, PORTA_LAMBDA(T sp, T k, T t) { return pb::bs_call(sp, k, t); }, a, b, *c);
  } else {
    porta::map(
        s, out, PORTA_LAMBDA(T x, T y) { return pb::FourOp<T>{}(x, y); }, a, b);
  }
}

template void fused_map_exact<float>(const porta::Stream&, porta::Array<float>&, const porta::Array<float>&,
                                     const porta::Array<float>&, const porta::Array<float>*);
template void fused_map_exact<double>(const porta::Stream&, porta::Array<double>&, const porta::Array<double>&,
                                      const porta::Array<double>&, const porta::Array<double>*);

}  // namespace porta_bench_cuda
