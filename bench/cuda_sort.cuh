// SPDX-License-Identifier: Apache-2.0
// Sorting on cuda:0 beside CUB (included by cuda_bench.cu, after its helpers; names and bytes:
// sort_bench.hpp):
//
//   cub   sort: cub::DeviceRadixSort::SortKeys from the input into a second buffer (the target:
//         porta >= 0.9x at 2^28 keys); argsort: SortPairs of the keys with a ready-made index
//         array 0..n-1 (porta writes that iota itself, inside its timing). Temporary storage is
//         allocated once. CUB's float order differs from porta's in NaN and -0.0 only, which
//         uniform random inputs do not have.
//
// porta allocates its result (and argsort its temporaries) from the stream-ordered pool on every
// call, as its API does. Every case is timed by events around a batch (event_loop).
#include <cub/device/device_radix_sort.cuh>

#include "sort_bench.hpp"

namespace porta_bench_cuda {

template <class T>
struct SortVectors {
  porta::Array<T> x;                        // porta's input
  DeviceBuffer<T> keys, keys_out;           // CUB's
  DeviceBuffer<std::int64_t> idx, idx_out;  // CUB's argsort values
  DeviceBuffer<unsigned char> tmp;          // CUB's temporary storage
  std::size_t tmp_bytes = 0;
};

template <class T>
SortVectors<T> make_sort_vectors(std::int64_t n, bool porta_side, bool argsort) {
  SortVectors<T> v;
  const T* h = pb::host_random<T>(n, 0);
  if (porta_side) {
    v.x = porta::Array<T>::from(h, porta::Shape{n}, kGpu, *gpu().porta_stream);
    gpu().porta_stream->synchronize();
    return v;
  }
  v.keys = DeviceBuffer<T>(n, h);
  v.keys_out = DeviceBuffer<T>(n);
  if (argsort) {
    std::vector<std::int64_t> iota(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) iota[static_cast<std::size_t>(i)] = i;
    v.idx = DeviceBuffer<std::int64_t>(n, iota.data());
    v.idx_out = DeviceBuffer<std::int64_t>(n);
    PB_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, v.tmp_bytes, v.keys.p, v.keys_out.p, v.idx.p, v.idx_out.p, n));
  } else {
    PB_CUDA(cub::DeviceRadixSort::SortKeys(nullptr, v.tmp_bytes, v.keys.p, v.keys_out.p, n));
  }
  v.tmp = DeviceBuffer<unsigned char>(static_cast<std::int64_t>(v.tmp_bytes));
  return v;
}

template <class T>
void sort_case(benchmark::State& st, const std::string& id, const std::string& impl, std::int64_t n, bool argsort) {
  const bool porta_side = impl == "porta";
  if (porta_side) require_porta(st);
  auto& v = pb::tenant<SortVectors<T>>(id, [&] { return make_sort_vectors<T>(n, porta_side, argsort); });
  const double bytes = pb::sort_bytes<T>(n, argsort);
  const cudaStream_t s = gpu().stream;
  int calls = 0;
  if (porta_side) {
    calls = event_loop(st, reps_for_bytes(bytes), [&] {
      if (argsort) {
        porta::Array<std::int64_t> i = porta::argsort(v.x, porta::SortOrder::ascending, *gpu().porta_stream);
        benchmark::DoNotOptimize(i.data());
      } else {
        porta::Array<T> y = porta::sort(v.x, porta::SortOrder::ascending, *gpu().porta_stream);
        benchmark::DoNotOptimize(y.data());
      }
    });
  } else {
    calls = event_loop(st, reps_for_bytes(bytes), [&] {
      std::size_t tb = v.tmp_bytes;
      if (argsort) {
        PB_CUDA(cub::DeviceRadixSort::SortPairs(v.tmp.p, tb, v.keys.p, v.keys_out.p, v.idx.p, v.idx_out.p, n, 0,
                                                int(8 * sizeof(T)), s));
      } else {
        PB_CUDA(cub::DeviceRadixSort::SortKeys(v.tmp.p, tb, v.keys.p, v.keys_out.p, n, 0, int(8 * sizeof(T)), s));
      }
    });
  }
  pb::set_bytes(st, bytes * calls);
}

template <class T>
void register_sort_dtype(std::int64_t n) {
  const char* dt = pb::dtype_name<T>();
  std::vector<benchmark::internal::Benchmark*> added;
  for (const bool argsort : {false, true}) {
    const std::string op = argsort ? "argsort" : "sort";
    if (!pb::wanted(op, "sort")) continue;
    for (const char* impl : {"porta", "cub"}) {
      const std::string im = impl;
      added.push_back(pb::add(op, dt, im, n, [im, n, argsort](benchmark::State& st, const std::string& id) {
        sort_case<T>(st, id, im, n, argsort);
      }));
    }
  }
  for (auto* b : added) b->UseManualTime();
}

void register_sort() {
  for (std::int64_t n : pb::vector_sizes()) {
    register_sort_dtype<float>(n);
    register_sort_dtype<double>(n);
  }
}

}  // namespace porta_bench_cuda
