// SPDX-License-Identifier: Apache-2.0
// Fused expressions on cuda:0 beside the eager operators and porta::map of the same
// formula compiled here by nvcc (included by cuda_bench.cu, after its helpers). Names, bytes, impls
// and the group: fused_bench.hpp. The fused case checks once, before it is timed, that its result
// has the eager chain's bits (a mismatch fails the case). Timed by events around a batch.
#include <cstring>

#include <porta/fuse.hpp>

#include "cuda_fused_exact.hpp"
#include "fused_bench.hpp"

namespace porta_bench_cuda {

template <class T>
struct FusedVectors {
  porta::Array<T> a, b, c, d1, out;
};

template <class T>
FusedVectors<T> make_fused_vectors(std::int64_t n, bool bs) {
  FusedVectors<T> v;
  const porta::Stream& s = *gpu().porta_stream;
  std::vector<T> a(pb::host_random<T>(n, 0), pb::host_random<T>(n, 0) + n);
  std::vector<T> b(pb::host_random<T>(n, 1), pb::host_random<T>(n, 1) + n);
  if (bs) {
    std::vector<T> c(pb::host_random<T>(n, 2), pb::host_random<T>(n, 2) + n);
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = pb::bs_spot(a[i]);
      b[i] = pb::bs_spot(b[i]);
      c[i] = pb::bs_years(c[i]);
    }
    v.c = porta::Array<T>::from(c.data(), porta::Shape{n}, kGpu, s);
    v.d1 = porta::full<T>(porta::Shape{n}, T(0), kGpu, s);
  }
  v.a = porta::Array<T>::from(a.data(), porta::Shape{n}, kGpu, s);
  v.b = porta::Array<T>::from(b.data(), porta::Shape{n}, kGpu, s);
  v.out = porta::full<T>(porta::Shape{n}, T(0), kGpu, s);
  s.synchronize();
  return v;
}

template <class T>
porta::Array<T> fused_eager(FusedVectors<T>& v, bool bs) {
  const porta::Stream& s = *gpu().porta_stream;
  (void)s;  // the operators run on the arrays' default stream; porta_stream is blocking, so ordered
  if (bs) return pb::bs_price<T>(v.a, v.b, v.c, pb::bs_d1<T>(v.a, v.b, v.c));
  return porta::sin(v.a) * porta::cos(v.b) + v.a * v.b;
}

template <class T>
void fused_run(FusedVectors<T>& v, bool bs) {
  const porta::Stream& s = *gpu().porta_stream;
  const auto x = porta::lazy(v.a), y = porta::lazy(v.b);
  if (bs) {
    const auto t = porta::lazy(v.c);
    v.d1.assign(pb::bs_d1<T>(x, y, t), s);
    v.out.assign(pb::bs_price<T>(x, y, t, porta::lazy(v.d1)), s);
  } else {
    v.out.assign(porta::sin(x) * porta::cos(y) + x * y, s);
  }
}

template <class T>
void fused_case(benchmark::State& st, const std::string& id, const std::string& impl, bool bs, std::int64_t n) {
  require_porta(st);
  const pb::FuseModeScope mode(impl == "porta_interp" ? "interpret" : nullptr);
  const porta::Stream& s = *gpu().porta_stream;
  auto& v = pb::tenant<FusedVectors<T>>(id, [&] {
    FusedVectors<T> made = make_fused_vectors<T>(n, bs);
    if (impl == "porta" || impl == "porta_interp" || impl == "porta_map_exact") {
      if (impl != "porta_map_exact") {
        fused_run(made, bs);
      } else {
        fused_map_exact<T>(s, made.out, made.a, made.b, bs ? &made.c : nullptr);
      }
      const std::vector<T> got = made.out.to_vector(s), want = fused_eager(made, bs).to_vector(s);
      if (std::memcmp(got.data(), want.data(), got.size() * sizeof(T)) != 0)
        throw std::runtime_error(impl + ": the bits differ from the eager chain's");
    }
    return made;
  });
  const double bytes = (bs ? 4.0 : 3.0) * static_cast<double>(n) * sizeof(T);
  int calls = 0;
  if (impl == "porta" || impl == "porta_interp") {
    calls = event_loop(st, reps_for_bytes(bytes), [&] { fused_run(v, bs); });
  } else if (impl == "porta_eager") {
    calls = event_loop(st, reps_for_bytes(bytes), [&] {
      v.out = fused_eager(v, bs);
      benchmark::DoNotOptimize(v.out.data());
    });
  } else if (impl == "porta_map_exact") {
    calls = event_loop(st, reps_for_bytes(bytes), [&] { fused_map_exact<T>(s, v.out, v.a, v.b, bs ? &v.c : nullptr); });
  } else if (bs) {
    calls = event_loop(st, reps_for_bytes(bytes), [&] {
      porta::map(
          s, v.out, PORTA_LAMBDA(T sp, T k, T t) { return pb::bs_call(sp, k, t); }, v.a, v.b, v.c);
    });
  } else {
    calls = event_loop(st, reps_for_bytes(bytes), [&] {
      porta::map(
          s, v.out, PORTA_LAMBDA(T a, T b) { return pb::FourOp<T>{}(a, b); }, v.a, v.b);
    });
  }
  pb::set_bytes(st, bytes * calls);
}

template <class T>
void register_fused_dtype(std::int64_t n) {
  const char* dt = pb::dtype_name<T>();
  for (const bool bs : {false, true}) {
    const std::string op = bs ? "fused_bs" : "fused_chain";
    if (!pb::wanted(op, "fused")) continue;
    for (const char* impl : {"porta", "porta_interp", "porta_eager", "porta_map", "porta_map_exact"}) {
      const std::string im = impl;
      pb::add(op, dt, im, n, [im, bs, n](benchmark::State& st, const std::string& id) {
        fused_case<T>(st, id, im, bs, n);
      })->UseManualTime();
    }
  }
}

void register_fused() {
  for (std::int64_t n : pb::fused_sizes()) {
    register_fused_dtype<float>(n);
    register_fused_dtype<double>(n);
  }
}

}  // namespace porta_bench_cuda
