// SPDX-License-Identifier: Apache-2.0
// Scans and random numbers on cuda:0 beside CUB, Thrust and cuRAND (included by cuda_bench.cu, after
// its helpers; names, bytes and groups: scan_random_bench.hpp):
//
//   cub          cub::DeviceScan::InclusiveSum, temporary storage allocated once (the target:
//                porta >= 0.9x at 2^28 elements)
//   thrust       thrust::inclusive_scan on the stream
//   curand       the host API with CURAND_RNG_PSEUDO_PHILOX4_32_10 (curandGenerateUniform / Normal
//                and their Double forms) on the stream; the same generator, its own float maps
//
// porta's scan allocates its result from the stream-ordered pool on every call, as its API does;
// the peers write into a buffer made once. Every case is timed by events around a batch (event_loop).
#include <curand.h>
#include <thrust/scan.h>

#include <cub/device/device_scan.cuh>

namespace porta_bench_cuda {

void check_curand(curandStatus_t s, const char* what) {
  if (s != CURAND_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuRAND status " + std::to_string(s));
}

template <class T>
struct ScanVectors {
  porta::Array<T> x;                // porta's input
  DeviceBuffer<T> rx, ry;           // the peers' input and output
  DeviceBuffer<unsigned char> tmp;  // CUB's temporary storage
  std::size_t tmp_bytes = 0;
};

template <class T>
ScanVectors<T> make_scan_vectors(std::int64_t n, bool porta_side) {
  ScanVectors<T> v;
  const T* h = pb::host_random<T>(n, 0);
  if (porta_side) {
    v.x = porta::Array<T>::from(h, porta::Shape{n}, kGpu, *gpu().porta_stream);
    gpu().porta_stream->synchronize();
  } else {
    v.rx = DeviceBuffer<T>(n, h);
    v.ry = DeviceBuffer<T>(n);
    PB_CUDA(cub::DeviceScan::InclusiveSum(nullptr, v.tmp_bytes, v.rx.p, v.ry.p, static_cast<int>(n)));
    v.tmp = DeviceBuffer<unsigned char>(static_cast<std::int64_t>(v.tmp_bytes));
  }
  return v;
}

template <class T>
void scan_case(benchmark::State& st, const std::string& id, const std::string& impl, std::int64_t n) {
  const bool porta_side = impl == "porta";
  if (porta_side) require_porta(st);
  auto& v = pb::tenant<ScanVectors<T>>(id, [&] { return make_scan_vectors<T>(n, porta_side); });
  const double bytes = 2.0 * static_cast<double>(n) * sizeof(T);
  const cudaStream_t s = gpu().stream;
  int calls = 0;
  if (porta_side) {
    calls = event_loop(st, reps_for_bytes(bytes), [&] {
      porta::Array<T> y = porta::cumsum(v.x, *gpu().porta_stream);
      benchmark::DoNotOptimize(y.data());
    });
  } else if (impl == "cub") {
    calls = event_loop(st, reps_for_bytes(bytes), [&] {
      std::size_t tb = v.tmp_bytes;
      PB_CUDA(cub::DeviceScan::InclusiveSum(v.tmp.p, tb, v.rx.p, v.ry.p, static_cast<int>(n), s));
    });
  } else {
    calls = event_loop(st, reps_for_bytes(bytes),
                       [&] { thrust::inclusive_scan(thrust::cuda::par_nosync.on(s), v.rx.p, v.rx.p + n, v.ry.p); });
  }
  pb::set_bytes(st, bytes * calls);
}

template <class T, bool Normal>
void random_case(benchmark::State& st, const std::string& id, const std::string& impl, std::int64_t n) {
  const double bytes = static_cast<double>(n) * sizeof(T);
  std::uint64_t seed = 1;
  int calls = 0;
  if (impl == "porta") {
    require_porta(st);
    auto& out = pb::tenant<porta::Array<T>>(id, [&] {
      porta::Array<T> a = porta::full<T>(porta::Shape{n}, T(0), kGpu, *gpu().porta_stream);
      gpu().porta_stream->synchronize();
      return a;
    });
    calls = event_loop(st, reps_for_bytes(bytes), [&] {
      if constexpr (Normal) {
        porta::random::normal(out, seed++, {}, *gpu().porta_stream);
      } else {
        porta::random::uniform(out, seed++, {}, *gpu().porta_stream);
      }
    });
  } else {
    struct Curand {
      curandGenerator_t gen = nullptr;
      DeviceBuffer<T> out;
      Curand() = default;
      Curand(Curand&& o) noexcept : gen(std::exchange(o.gen, nullptr)), out(std::move(o.out)) {}
      ~Curand() {
        if (gen) curandDestroyGenerator(gen);
      }
    };
    auto& c = pb::tenant<Curand>(id, [&] {
      Curand r;
      check_curand(curandCreateGenerator(&r.gen, CURAND_RNG_PSEUDO_PHILOX4_32_10), "curandCreateGenerator");
      check_curand(curandSetStream(r.gen, gpu().stream), "curandSetStream");
      r.out = DeviceBuffer<T>(n);
      return r;
    });
    calls = event_loop(st, reps_for_bytes(bytes), [&] {
      // curandGenerateNormal wants an even count; the benchmark sizes are powers of two.
      check_curand(curandSetPseudoRandomGeneratorSeed(c.gen, seed++), "curandSetPseudoRandomGeneratorSeed");
      if constexpr (std::is_same_v<T, float>) {
        check_curand(Normal ? curandGenerateNormal(c.gen, c.out.p, static_cast<std::size_t>(n), 0.0f, 1.0f)
                            : curandGenerateUniform(c.gen, c.out.p, static_cast<std::size_t>(n)),
                     "curandGenerate");
      } else {
        check_curand(Normal ? curandGenerateNormalDouble(c.gen, c.out.p, static_cast<std::size_t>(n), 0.0, 1.0)
                            : curandGenerateUniformDouble(c.gen, c.out.p, static_cast<std::size_t>(n)),
                     "curandGenerate");
      }
    });
  }
  pb::set_bytes(st, bytes * calls);
}

template <class T>
void register_scan_random_dtype(std::int64_t n) {
  const char* dt = pb::dtype_name<T>();
  std::vector<benchmark::internal::Benchmark*> added;
  if (pb::wanted("cumsum", "scan")) {
    for (const char* impl : {"porta", "cub", "thrust"}) {
      const std::string im = impl;
      added.push_back(pb::add("cumsum", dt, im, n,
                              [im, n](benchmark::State& st, const std::string& id) { scan_case<T>(st, id, im, n); }));
    }
  }
  for (const bool normal : {false, true}) {
    const std::string op = normal ? "random_normal" : "random_uniform";
    if (!pb::wanted(op, "random") || n < 2) continue;
    for (const char* impl : {"porta", "curand"}) {
      const std::string im = impl;
      added.push_back(pb::add(op, dt, im, n, [im, n, normal](benchmark::State& st, const std::string& id) {
        if (normal) {
          random_case<T, true>(st, id, im, n);
        } else {
          random_case<T, false>(st, id, im, n);
        }
      }));
    }
  }
  for (auto* b : added) b->UseManualTime();
}

void register_scan_random() {
  for (std::int64_t n : pb::vector_sizes()) {
    register_scan_random_dtype<float>(n);
    register_scan_random_dtype<double>(n);
  }
}

}  // namespace porta_bench_cuda
