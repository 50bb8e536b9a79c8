// SPDX-License-Identifier: Apache-2.0
// The CPU backend's host memory: a caching pool for device allocations (porta::Array on the CPU)
// and the system facts (physical and available memory) that its out-of-memory checks need.
#pragma once

#include <cstddef>
#include <cstdint>

#include "porta/abi/backend_v1.h"

namespace porta::detail::cpu {

struct SystemMemory {
  std::uint64_t total = 0;      // physical memory, or the cgroup limit when lower
  std::uint64_t available = 0;  // what can still be allocated without swapping anything out
  std::uint64_t swap_total = 0;
  std::uint64_t swap_free = 0;
};
SystemMemory system_memory() noexcept;

porta_status pool_alloc(std::size_t bytes, void** out) noexcept;
porta_status pool_free(void* ptr) noexcept;
porta_status pool_stats(porta_memory_stats_v1* out) noexcept;
void pool_empty_cache() noexcept;

porta_status host_alloc(std::size_t bytes, void** out) noexcept;
porta_status host_free(void* ptr) noexcept;

// A pool block that frees itself: temporaries inside kernels (reduction partials, gemm panels).
class PoolBuffer {
 public:
  PoolBuffer() = default;
  PoolBuffer(const PoolBuffer&) = delete;
  PoolBuffer& operator=(const PoolBuffer&) = delete;
  ~PoolBuffer() {
    if (ptr_ != nullptr) pool_free(ptr_);
  }
  porta_status allocate(std::size_t bytes) noexcept { return pool_alloc(bytes, &ptr_); }
  template <class T>
  T* as() const noexcept {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_ = nullptr;
};

}  // namespace porta::detail::cpu
