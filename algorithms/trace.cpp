// SPDX-License-Identifier: Apache-2.0
// Which backend entries a profiling tool sees as launches of the built-ins (BackendCall::run).
#include "algorithms/common.hpp"

namespace porta::detail {

int traced_kind(const porta_backend_v1& t, const void* entry) noexcept {
  const auto is = [entry](auto member) { return reinterpret_cast<const void*>(member) == entry; };
  if (is(t.reduce) || is(t.dot) || is(t.argreduce)) return static_cast<int>(tools::Kind::parallel_reduce);
  if (is(t.scan)) return static_cast<int>(tools::Kind::parallel_scan);
  if (is(t.fill) || is(t.iota) || is(t.cast) || is(t.unary) || is(t.binary) || is(t.binary_scalar) || is(t.axpy) ||
      is(t.gemm) || is(t.sort) || is(t.copy_strided) || is(t.compare) || is(t.where) || is(t.take) || is(t.scatter) ||
      is(t.random) || is(t.map_program) || is(t.rtc_launch) || is(t.rtc_launch_cover) || is(t.spmm) || is(t.linalg) ||
      is(t.fft))
    return static_cast<int>(tools::Kind::parallel_for);
  return -1;
}

}  // namespace porta::detail
