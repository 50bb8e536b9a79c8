// SPDX-License-Identifier: Apache-2.0
// The CPU backend's collectives entries: there are none. Device collectives are
// NCCL's and RCCL's, in the GPU plugins; CPU arrays travel through porta::distributed's engines
// (MPI, or threads of one process), which need no backend entry. Every entry but the destruction
// of NULL says so with PORTA_ERR_UNAVAILABLE, so that a caller can test coll_available once.
#include "cpu_common.hpp"
#include "cpu_kernels.hpp"

namespace porta::detail::cpu {
namespace {

porta_status no_collectives(const char* fn) noexcept {
  return set_error(PORTA_ERR_UNAVAILABLE,
                   "%s: the CPU has no device collectives: porta::distributed moves CPU arrays through MPI or threads",
                   fn);
}

}  // namespace

porta_status coll_available(char* info, size_t len) noexcept {
  if (info != nullptr && len > 0) info[0] = '\0';
  return no_collectives("coll_available");
}

porta_status coll_unique_id(void*) noexcept {
  return no_collectives("coll_unique_id");
}

porta_status coll_init(int, int, int, const void*, porta_coll* out) noexcept {
  if (out != nullptr) *out = nullptr;
  return no_collectives("coll_init");
}

porta_status coll_destroy(porta_coll c) noexcept {
  return c == nullptr ? PORTA_OK : no_collectives("coll_destroy");
}

porta_status collective(porta_coll, porta_coll_kind, porta_dtype, porta_reduce_op, const void*, void*, int64_t, int,
                        porta_stream) noexcept {
  return no_collectives("collective");
}

porta_status coll_group(int) noexcept {
  return no_collectives("coll_group");
}

}  // namespace porta::detail::cpu
