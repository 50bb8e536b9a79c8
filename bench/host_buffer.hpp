// SPDX-License-Identifier: Apache-2.0
// Host memory for the CPU peers, allocated the way porta's CPU pool allocates (see
// backends/cpu/cpu_memory.cpp): blocks of 4 MiB and more come from mmap, 2 MiB aligned and marked
// for transparent huge pages; smaller ones are 64-byte aligned.
//
// Why: with the kernel's THP mode "madvise" (Debian's default), a plain new[] or std::vector gets
// 4 KiB pages, and streaming over them cost 10x or more in TLB misses on a virtual machine (2-core
// dev VM, 2^22..2^24 elements), so the page size, not the loop, decided the comparison. Giving every
// implementation the same kind of memory makes the ratios measure the code.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

#include "common.hpp"

namespace porta_bench {

inline constexpr std::size_t kHugePage = std::size_t(2) << 20;
inline constexpr std::size_t kLargeBlock = std::size_t(4) << 20;

template <class T>
class HostBuffer {
 public:
  HostBuffer() = default;
  // n elements, first touched in parallel with the static schedule the loops use (so pages land on
  // the NUMA node of the thread that streams them), copied from `src` or zero.
  explicit HostBuffer(std::int64_t n, const T* src = nullptr) : n_(n) {
    bytes_ = static_cast<std::size_t>(n > 0 ? n : 1) * sizeof(T);
    if (bytes_ >= kLargeBlock) {
      mapped_ = (bytes_ + kHugePage - 1) / kHugePage * kHugePage + kHugePage;
      void* m = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m == MAP_FAILED) throw std::bad_alloc();
      base_ = m;
      const auto a = (reinterpret_cast<std::uintptr_t>(m) + kHugePage - 1) / kHugePage * kHugePage;
      p_ = reinterpret_cast<T*>(a);
#if defined(MADV_HUGEPAGE)
      ::madvise(p_, mapped_ - kHugePage, MADV_HUGEPAGE);
#endif
    } else {
      p_ = static_cast<T*>(std::aligned_alloc(64, (bytes_ + 63) / 64 * 64));
      if (!p_) throw std::bad_alloc();
    }
    T* d = p_;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static)
#endif
    for (std::int64_t i = 0; i < n; ++i) d[i] = src ? src[i] : T(0);
  }
  HostBuffer(HostBuffer&& o) noexcept {
    swap(o);
  }
  HostBuffer& operator=(HostBuffer&& o) noexcept {
    HostBuffer tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer() {
    if (base_) {
      ::munmap(base_, mapped_);
    } else {
      std::free(p_);
    }
  }

  T* get() const noexcept {
    return p_;
  }
  std::int64_t size() const noexcept {
    return n_;
  }

 private:
  void swap(HostBuffer& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(base_, o.base_);
    std::swap(n_, o.n_);
    std::swap(bytes_, o.bytes_);
    std::swap(mapped_, o.mapped_);
  }
  T* p_ = nullptr;
  void* base_ = nullptr;  // the mmap'ed span, for munmap; null for aligned_alloc blocks
  std::int64_t n_ = 0;
  std::size_t bytes_ = 0;
  std::size_t mapped_ = 0;
};

// The inputs and output of one vector case (Op): x and y random, out zero; absent ones are empty.
template <class T>
struct HostVectors {
  HostBuffer<T> x, y, out;
};

template <class T>
HostVectors<T> make_host_vectors(Op op, std::int64_t n) {
  HostVectors<T> v;
  if (inputs_of(op) >= 1) v.x = HostBuffer<T>(n, host_random<T>(n, 0));
  if (inputs_of(op) >= 2) v.y = HostBuffer<T>(n, host_random<T>(n, 1));
  if (has_output(op)) v.out = HostBuffer<T>(n);
  return v;
}

}  // namespace porta_bench
