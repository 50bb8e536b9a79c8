// SPDX-License-Identifier: Apache-2.0
// Sorting and arg-reductions on GPUs: definitions of SortKernels<Api, T>
// (kernels.hpp), instantiated one dtype per file (instantiate/kernels.cmake).
//
// Sorting is the vendor's radix sort over porta's key order (porta/detail/sort_key.hpp: NaN after
// +inf, all NaNs equal, -0.0 below +0.0), with temporary storage from the stream-ordered pool:
// - CUDA: CUB's DeviceRadixSort. Floating-point keys are sorted as a porta key type whose
//   cub::NumericTraits (CUB's documented customisation point) twiddle in and out through porta's
//   codec, so the order costs nothing: no extra pass over the keys, the speed of CUB's own float
//   sort. (CUB's own float order puts NaNs with the sign bit first and -0.0 equal to +0.0.)
// - HIP: rocPRIM's radix sort over the unsigned keys, encoded and decoded by a pass each (rocPRIM
//   5.2's mid-size merge path compares keys itself, so a key type of our own would need more than
//   its codec).
// Integers use the vendors' own integer sorts, which already have porta's order.
//
// argreduce needs no vendor library: each thread keeps the first best key of its elements, and
// blocks combine (key, index) pairs, ties to the lower index; that combination is associative and
// commutative, so the answer is the same for any grid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "backends/gpu/kernels.hpp"
#include "porta/detail/gpu/api.cuh"
#include "porta/detail/sort_key.hpp"

#if defined(__HIP__)
#include <rocprim/device/device_radix_sort.hpp>
#else
#include <cub/device/device_radix_sort.cuh>
#endif

namespace porta::detail::gpu {

// ---- sort ---------------------------------------------------------------------------------------

// A floating-point key as CUB sees it: the bits of a T, ordered by porta's codec (the
// NumericTraits specialisation below). NanHigh: ascending sorts; descending sorts use the other,
// which CUB complements, so that NaN is last either way.
template <class T, bool NanHigh>
struct alignas(T) PortaSortKey {
  SortBits<T> bits;
};

}  // namespace porta::detail::gpu

#if !defined(__HIP__)
CUB_NAMESPACE_BEGIN
template <class T, bool NanHigh>
struct NumericTraits<::porta::detail::gpu::PortaSortKey<T, NanHigh>>
    : BaseTraits<UNSIGNED_INTEGER, true, ::porta::detail::SortBits<T>, ::porta::detail::SortBits<T>> {
  using Codec = ::porta::detail::SortKey<T, NanHigh>;
  using UnsignedBits = ::porta::detail::SortBits<T>;
  // The raw keys with the smallest and the largest encoding: CUB pads partial tiles with them.
  static constexpr UnsignedBits LOWEST_KEY = NanHigh ? Codec::kNegInf : Codec::kCanonicalNan;
  static constexpr UnsignedBits MAX_KEY = NanHigh ? Codec::kCanonicalNan : Codec::kPosInf;
  static _CCCL_HOST_DEVICE _CCCL_FORCEINLINE UnsignedBits TwiddleIn(UnsignedBits key) {
    return Codec::encode_bits(key);
  }
  static _CCCL_HOST_DEVICE _CCCL_FORCEINLINE UnsignedBits TwiddleOut(UnsignedBits key) {
    return Codec::decode_bits(key);
  }
};
CUB_NAMESPACE_END
#endif

namespace porta::detail::gpu {

#if !defined(__HIP__)
// CUB's keys: porta's key type for floating point, the integer itself otherwise.
template <class T, bool Descending>
using CubKey = std::conditional_t<std::is_floating_point_v<T>, PortaSortKey<T, !Descending>, T>;

// CUB's dispatch with the tuning of the dtype T itself rather than of porta's key type. CUB tunes by
// key type: on sm_90, float keys take 18 items per thread, any other 4-byte key 19, and there its
// onesweep kernel needs 75 registers instead of 56, so 2 blocks of 384 threads fit a multiprocessor
// instead of 3 (measured on the H200: porta's float keys 6.76 ms for 2^28 against CUB's float 5.75;
// with float's tuning the same kernel takes 56 registers and 5.87 ms). CCCL 3 names the tuning as a
// policy hub; older CCCL falls back to the public SortKeys / SortPairs (correct, tuned as an
// integer key).
template <bool Descending, class T, class K, class V>
cudaError_t cub_dispatch(void* temp, std::size_t& bytes, const K* keys_in, K* keys_out, const V* values_in,
                         V* values_out, std::int64_t n, cudaStream_t s) {
  constexpr int kBits = int(8 * sizeof(K));
#if defined(CCCL_MAJOR_VERSION) && CCCL_MAJOR_VERSION >= 3
  using Val = std::conditional_t<std::is_void_v<V>, cub::NullType, V>;
  using Offset = unsigned long long;  // what CUB's own entries choose for a 64-bit count
  using Hub = cub::detail::radix::policy_hub<std::conditional_t<std::is_floating_point_v<T>, T, K>, Val, Offset>;
  constexpr cub::SortOrder kOrder = Descending ? cub::SortOrder::Descending : cub::SortOrder::Ascending;
  cub::DoubleBuffer<K> keys(const_cast<K*>(keys_in), keys_out);
  cub::DoubleBuffer<Val> values;
  if constexpr (!std::is_void_v<V>) values = cub::DoubleBuffer<Val>(const_cast<Val*>(values_in), values_out);
  return cub::DispatchRadixSort<kOrder, K, Val, Offset, cub::detail::identity_decomposer_t, Hub>::Dispatch(
      temp, bytes, keys, values, static_cast<Offset>(n), 0, kBits, false, s);
#else
  if constexpr (std::is_void_v<V>) {
    if constexpr (Descending) {
      return cub::DeviceRadixSort::SortKeysDescending(temp, bytes, keys_in, keys_out, n, 0, kBits, s);
    } else {
      return cub::DeviceRadixSort::SortKeys(temp, bytes, keys_in, keys_out, n, 0, kBits, s);
    }
  } else if constexpr (Descending) {
    return cub::DeviceRadixSort::SortPairsDescending(temp, bytes, keys_in, keys_out, values_in, values_out, n, 0, kBits,
                                                     s);
  } else {
    return cub::DeviceRadixSort::SortPairs(temp, bytes, keys_in, keys_out, values_in, values_out, n, 0, kBits, s);
  }
#endif
}

template <class Api, bool Descending, class T, class K, class V>
int cub_sort(std::int64_t n, const K* keys_in, K* keys_out, const V* values_in, V* values_out, typename Api::Stream s) {
  std::size_t bytes = 0;
  typename Api::Error e = cub_dispatch<Descending, T>(nullptr, bytes, keys_in, keys_out, values_in, values_out, n, s);
  if (e != Api::kSuccess) return static_cast<int>(e);
  void* temp = nullptr;
  e = Api::malloc_async(&temp, bytes > 0 ? bytes : 1, s);
  if (e != Api::kSuccess) return static_cast<int>(e);
  e = cub_dispatch<Descending, T>(temp, bytes, keys_in, keys_out, values_in, values_out, n, s);
  const typename Api::Error f = Api::free_async(temp, s);
  return static_cast<int>(e != Api::kSuccess ? e : f);
}

template <class Api, class T, class V>
int vendor_sort(std::int64_t n, const T* keys_in, T* keys_out, const V* values_in, V* values_out, bool descending,
                typename Api::Stream s) {
  if (descending) {
    using K = CubKey<T, true>;
    return cub_sort<Api, true, T>(n, reinterpret_cast<const K*>(keys_in), reinterpret_cast<K*>(keys_out), values_in,
                                  values_out, s);
  }
  using K = CubKey<T, false>;
  return cub_sort<Api, false, T>(n, reinterpret_cast<const K*>(keys_in), reinterpret_cast<K*>(keys_out), values_in,
                                 values_out, s);
}
#else
template <class T>
__global__ void __launch_bounds__(kBlockThreads)
    encode_keys_kernel(std::int64_t n, const T* x, SortBits<T>* k, bool descending) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    k[i] = sort_key<T>(x[i], descending);
}
template <class T>
__global__ void __launch_bounds__(kBlockThreads) decode_keys_kernel(std::int64_t n, T* x, bool descending) {
  auto* k = reinterpret_cast<SortBits<T>*>(x);
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    x[i] = sort_key_value<T>(k[i], descending);
}

template <class Api, class T, class V>
int vendor_sort(std::int64_t n, const T* keys_in, T* keys_out, const V* values_in, V* values_out, bool descending,
                typename Api::Stream s) {
  using U = SortBits<T>;
  const unsigned grid = static_cast<unsigned>(clamp_grid((n + kBlockThreads - 1) / kBlockThreads, 65536));
  void* encoded = nullptr;
  typename Api::Error e = Api::malloc_async(&encoded, static_cast<std::size_t>(n) * sizeof(U), s);
  if (e != Api::kSuccess) return static_cast<int>(e);
  auto* ek = static_cast<U*>(encoded);
  auto* out = reinterpret_cast<U*>(keys_out);
  e = Api::launch(encode_keys_kernel<T>, grid, kBlockThreads, 0, s, n, keys_in, ek, descending);
  std::size_t bytes = 0;
  const auto call = [&](void* temp) {
    if constexpr (std::is_void_v<V>) {
      return rocprim::radix_sort_keys(temp, bytes, ek, out, static_cast<std::size_t>(n), 0u, unsigned(8 * sizeof(U)),
                                      s);
    } else {
      return rocprim::radix_sort_pairs(temp, bytes, ek, out, values_in, values_out, static_cast<std::size_t>(n), 0u,
                                       unsigned(8 * sizeof(U)), s);
    }
  };
  if (e == Api::kSuccess) e = call(nullptr);
  void* temp = nullptr;
  if (e == Api::kSuccess) e = Api::malloc_async(&temp, bytes > 0 ? bytes : 1, s);
  if (e == Api::kSuccess) e = call(temp);
  if (e == Api::kSuccess) e = Api::launch(decode_keys_kernel<T>, grid, kBlockThreads, 0, s, n, keys_out, descending);
  if (temp != nullptr) (void)Api::free_async(temp, s);
  const typename Api::Error f = Api::free_async(encoded, s);
  return static_cast<int>(e != Api::kSuccess ? e : f);
}
#endif

template <class Api, class T>
int SortKernels<Api, T>::sort(std::int64_t n, const T* keys_in, T* keys_out, int value_bytes, const void* values_in,
                              void* values_out, bool descending, void* stream) {
  const auto s = static_cast<typename Api::Stream>(stream);
  if (n == 0) return 0;
  if (value_bytes == 0) return vendor_sort<Api, T, void>(n, keys_in, keys_out, nullptr, nullptr, descending, s);
  if (value_bytes == 4)
    return vendor_sort<Api, T>(n, keys_in, keys_out, static_cast<const std::uint32_t*>(values_in),
                               static_cast<std::uint32_t*>(values_out), descending, s);
  return vendor_sort<Api, T>(n, keys_in, keys_out, static_cast<const std::uint64_t*>(values_in),
                             static_cast<std::uint64_t*>(values_out), descending, s);
}

// ---- argreduce ----------------------------------------------------------------------------------

// argmax keeps the largest key (NaN is all ones), argmin the smallest (NaN is zero).
template <class T, bool IsMax>
struct ArgBest {
  using U = SortBits<T>;
  U key;
  std::int64_t index;

  PORTA_HOST_DEVICE static U key_of(T x) { return SortKey<T, IsMax>::encode(x); }
  // Is (k, i) better than this? Ties go to the lower index, which makes the choice independent of
  // the order in which candidates meet.
  PORTA_HOST_DEVICE bool beaten_by(U k, std::int64_t i) const {
    return IsMax ? (k > key || (k == key && i < index)) : (k < key || (k == key && i < index));
  }
};

// The block's best of each thread's candidate, in thread 0. kBlockThreads threads.
template <class T, bool IsMax>
__device__ ArgBest<T, IsMax> block_best(ArgBest<T, IsMax> b) {
  __shared__ SortBits<T> keys[kBlockThreads];
  __shared__ std::int64_t index[kBlockThreads];
  keys[threadIdx.x] = b.key;
  index[threadIdx.x] = b.index;
  __syncthreads();
  for (unsigned s = kBlockThreads / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) {
      const ArgBest<T, IsMax> mine{keys[threadIdx.x], index[threadIdx.x]};
      if (mine.beaten_by(keys[threadIdx.x + s], index[threadIdx.x + s])) {
        keys[threadIdx.x] = keys[threadIdx.x + s];
        index[threadIdx.x] = index[threadIdx.x + s];
      }
    }
    __syncthreads();
  }
  return ArgBest<T, IsMax>{keys[0], index[0]};
}

// Rows of n contiguous elements, each cut into `segs` segments of seg_len; block p takes segment
// p % segs of row p / segs. One segment per row: the index goes to y; else the partials.
template <class T, bool IsMax>
__global__ void __launch_bounds__(kBlockThreads)
    arg_rows_kernel(std::int64_t rows, std::int64_t n, const T* x, std::int64_t segs, std::int64_t seg_len,
                    SortBits<T>* part_key, std::int64_t* part_index, std::int64_t* y) {
  using B = ArgBest<T, IsMax>;
  for (std::int64_t p = blockIdx.x; p < rows * segs; p += gridDim.x) {
    const std::int64_t row = p / segs, b = (p % segs) * seg_len, e = b + seg_len < n ? b + seg_len : n;
    const T* r = x + row * n;
    // Identity: the worst key at an index past the end (every real candidate beats it).
    B best{IsMax ? SortBits<T>(0) : ~SortBits<T>(0), n};
    for (std::int64_t j = b + threadIdx.x; j < e; j += kBlockThreads) {
      const SortBits<T> k = B::key_of(r[j]);
      if (best.beaten_by(k, j)) best = B{k, j};
    }
    best = block_best<T, IsMax>(best);
    if (threadIdx.x == 0) {
      if (segs == 1) {
        y[row] = best.index;
      } else {
        part_key[p] = best.key;
        part_index[p] = best.index;
      }
    }
    __syncthreads();  // the shared arrays are reused by the next p
  }
}

template <class T, bool IsMax>
__global__ void __launch_bounds__(kBlockThreads)
    arg_partials_kernel(std::int64_t rows, std::int64_t segs, const SortBits<T>* part_key,
                        const std::int64_t* part_index, std::int64_t* y) {
  using B = ArgBest<T, IsMax>;
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    B best{IsMax ? SortBits<T>(0) : ~SortBits<T>(0), INT64_MAX};
    for (std::int64_t j = threadIdx.x; j < segs; j += kBlockThreads) {
      const std::int64_t p = row * segs + j;
      if (best.beaten_by(part_key[p], part_index[p])) best = B{part_key[p], part_index[p]};
    }
    best = block_best<T, IsMax>(best);
    if (threadIdx.x == 0) y[row] = best.index;
    __syncthreads();
  }
}

// Along a middle axis: one thread per output, neighbours reading neighbouring elements.
template <class T, bool IsMax>
__global__ void __launch_bounds__(kBlockThreads)
    arg_inner_kernel(std::int64_t outer, std::int64_t n, std::int64_t inner, const T* x, std::int64_t* y) {
  using B = ArgBest<T, IsMax>;
  for (std::int64_t q = blockIdx.x * std::int64_t(kBlockThreads) + threadIdx.x; q < outer * inner;
       q += std::int64_t(gridDim.x) * kBlockThreads) {
    const std::int64_t o = q / inner, i = q % inner;
    const T* base = x + o * n * inner + i;
    B best{B::key_of(base[0]), 0};
    for (std::int64_t j = 1; j < n; ++j) {
      const SortBits<T> k = B::key_of(base[j * inner]);
      if (best.beaten_by(k, j)) best = B{k, j};
    }
    y[q] = best.index;
  }
}

template <class Api, class T, bool IsMax>
int arg_launch(std::int64_t outer, std::int64_t n, std::int64_t inner, const T* x, std::int64_t* y,
               typename Api::Stream s) {
  const std::int64_t outputs = outer * inner;
  if (inner > 1) {
    const std::int64_t grid = clamp_grid((outputs + kBlockThreads - 1) / kBlockThreads, 1 << 20);
    return static_cast<int>(Api::launch(arg_inner_kernel<T, IsMax>, static_cast<unsigned>(grid), kBlockThreads, 0, s,
                                        outer, n, inner, x, y));
  }
  // Few long rows are cut into segments of at least 16 elements per thread, at most 1024 per row.
  constexpr std::int64_t kMinSeg = std::int64_t(kBlockThreads) * 16, kMaxSegs = 1024;
  std::int64_t segs = 1;
  if (outputs < 1024 && n > kMinSeg) {
    segs = (n + kMinSeg - 1) / kMinSeg;
    if (segs > kMaxSegs) segs = kMaxSegs;
  }
  const std::int64_t seg_len = (n + segs - 1) / segs;
  segs = (n + seg_len - 1) / seg_len;
  const std::int64_t blocks = clamp_grid(outputs * segs, 1 << 20);
  if (segs == 1)
    return static_cast<int>(Api::launch(arg_rows_kernel<T, IsMax>, static_cast<unsigned>(blocks), kBlockThreads, 0, s,
                                        outputs, n, x, segs, seg_len, static_cast<SortBits<T>*>(nullptr),
                                        static_cast<std::int64_t*>(nullptr), y));
  const std::size_t parts = static_cast<std::size_t>(outputs * segs);
  void* scratch = nullptr;
  typename Api::Error e = Api::malloc_async(&scratch, parts * (sizeof(SortBits<T>) + sizeof(std::int64_t)), s);
  if (e != Api::kSuccess) return static_cast<int>(e);
  auto* part_index = static_cast<std::int64_t*>(scratch);
  auto* part_key = reinterpret_cast<SortBits<T>*>(part_index + parts);
  e = Api::launch(arg_rows_kernel<T, IsMax>, static_cast<unsigned>(blocks), kBlockThreads, 0, s, outputs, n, x, segs,
                  seg_len, part_key, part_index, y);
  if (e == Api::kSuccess)
    e = Api::launch(arg_partials_kernel<T, IsMax>, static_cast<unsigned>(clamp_grid(outputs, 1 << 20)), kBlockThreads,
                    0, s, outputs, segs, static_cast<const SortBits<T>*>(part_key),
                    static_cast<const std::int64_t*>(part_index), y);
  const typename Api::Error f = Api::free_async(scratch, s);
  return static_cast<int>(e != Api::kSuccess ? e : f);
}

template <class Api, class T>
int SortKernels<Api, T>::argreduce(porta_arg_op op, std::int64_t outer, std::int64_t n, std::int64_t inner, const T* x,
                                   std::int64_t* y, void* stream) {
  const auto s = static_cast<typename Api::Stream>(stream);
  if (outer * inner == 0) return 0;
  switch (op) {
    case PORTA_ARG_MAX:
      return arg_launch<Api, T, true>(outer, n, inner, x, y, s);
    case PORTA_ARG_MIN:
      return arg_launch<Api, T, false>(outer, n, inner, x, y, s);
    case PORTA_ARG_COUNT:
      break;
  }
  return static_cast<int>(Api::kInvalidValue);  // the entry validated op: unreachable
}

}  // namespace porta::detail::gpu
