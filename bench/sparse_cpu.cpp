// SPDX-License-Identifier: Apache-2.0
// The sparse cases on the CPU (sparse_common.hpp says what runs): porta::sparse::spmm as a user
// writes it, with the default options ("porta") and with Algorithm::own ("porta_own": on the CPU
// the same kernel, so the row is there to compare with the GPU's), beside the CSR loop a user would
// otherwise write ("openmp"): `omp parallel for schedule(static)` over rows, each row's products
// summed in a local, on the same arrays in the same layout, in memory of porta's kind
// (host_buffer.hpp). Before timing, each porta case is compared with the loop.
#include <porta/porta.hpp>
#include <porta/sparse.hpp>

#include <cstdint>
#include <string>

#include "host_buffer.hpp"
#include "kernels_common.hpp"
#include "sparse_common.hpp"

#if defined(_OPENMP)
#define PBS_OMP(directive) _Pragma(directive)
#else
#define PBS_OMP(directive)
#endif

namespace porta_bench_sparse_cpu {

namespace pb = porta_bench;
namespace ps = porta_bench_sparse;

const porta::Device kCpu{porta::DeviceType::cpu, 0};

template <class T>
struct SpmvPorta {
  porta::sparse::Csr<T> a;
  porta::Array<T> x, y;
};
template <class T>
struct SpmvPeer {
  std::int64_t rows = 0;
  pb::HostBuffer<std::int32_t> indptr, indices;
  pb::HostBuffer<T> values, x, y;
};

// The loop a user writes for y = A x. The accumulator is the value type (a float loop sums in
// float, as porta's kernel does), so both compute the same thing. Out of line, so that the compiler
// cannot fold one call into the next.
template <class T>
[[gnu::noinline]] void omp_spmv(std::int64_t rows, const std::int32_t* __restrict indptr,
                                const std::int32_t* __restrict col, const T* __restrict val, const T* __restrict x,
                                T* __restrict y) {
  PBS_OMP("omp parallel for schedule(static)")
  for (std::int64_t i = 0; i < rows; ++i) {
    T s = 0;
    for (std::int32_t j = indptr[i]; j < indptr[i + 1]; ++j) s += val[j] * x[col[j]];
    y[i] = s;
  }
}
template <class T>
void omp_spmv(SpmvPeer<T>& d) {
  omp_spmv(d.rows, d.indptr.get(), d.indices.get(), d.values.get(), d.x.get(), d.y.get());
}

template <class T>
SpmvPeer<T> make_peer(std::int64_t n) {
  const ps::HostCsr<T>& h = ps::host_poisson<T>(n);
  return SpmvPeer<T>{h.rows,
                     pb::HostBuffer<std::int32_t>(h.rows + 1, h.indptr.data()),
                     pb::HostBuffer<std::int32_t>(h.nnz, h.indices.data()),
                     pb::HostBuffer<T>(h.nnz, h.values.data()),
                     pb::HostBuffer<T>(h.rows, pb::host_random<T>(h.rows, 0)),
                     pb::HostBuffer<T>(h.rows)};
}

template <class T>
void porta_spmv(SpmvPorta<T>& d, const porta::sparse::Options& options) {
  porta::sparse::spmm(T(1), d.a, d.x, T(0), d.y, options);
}

template <class T>
SpmvPorta<T> make_porta(const std::string& id, std::int64_t n, const porta::sparse::Options& options) {
  const ps::HostCsr<T>& h = ps::host_poisson<T>(n);
  SpmvPorta<T> d{porta::sparse::Csr<T>::from_host(h.rows, h.rows, h.indptr, h.indices, h.values, kCpu),
                 porta::Array<T>::from(pb::host_random<T>(h.rows, 0), porta::Shape{h.rows}, kCpu),
                 porta::full<T>(porta::Shape{h.rows}, T(0), kCpu)};
  porta_spmv(d, options);
  SpmvPeer<T> p = make_peer<T>(n);
  omp_spmv(p);
  pb::expect_close(id, d.y.to_vector().data(), p.y.get(), h.rows, ps::sparse_tolerance<T>());
  return d;
}

template <class T>
void register_spmv(std::int64_t n) {
  const char* dt = pb::dtype_name<T>();
  const double bytes = ps::sparse_bytes<T>(n, 1);
  for (const bool own : {false, true}) {
    porta::sparse::Options options;
    if (own) options.algorithm = porta::sparse::Algorithm::own;
    pb::configure_cpu(
        pb::add("spmv", dt, own ? "porta_own" : "porta", n, [=](benchmark::State& st, const std::string& id) {
          pb::timed<SpmvPorta<T>>(
              st, id, [&] { return make_porta<T>(id, n, options); }, [&](SpmvPorta<T>& d) { porta_spmv(d, options); });
          pb::set_bytes(st, bytes);
        }));
  }
  pb::configure_cpu(pb::add("spmv", dt, "openmp", n, [=](benchmark::State& st, const std::string& id) {
    pb::timed<SpmvPeer<T>>(
        st, id, [&] { return make_peer<T>(n); }, [](SpmvPeer<T>& d) { omp_spmv(d); });
    pb::set_bytes(st, bytes);
  }));
}

void register_all() {
  if (!ps::wanted_sparse("spmv")) return;
  ps::add_sparse_context(false);
  for (std::int64_t n : ps::sparse_sides()) {
    register_spmv<float>(n);
    register_spmv<double>(n);
  }
}

}  // namespace porta_bench_sparse_cpu

void porta_bench::register_cpu_sparse() {
  porta_bench_sparse_cpu::register_all();
}
