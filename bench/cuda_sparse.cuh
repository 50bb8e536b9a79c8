// SPDX-License-Identifier: Apache-2.0
// The sparse cases on cuda:0 (sparse_common.hpp says what runs): porta::sparse::spmm as a user
// writes it, with the default options ("porta": cuSPARSE behind porta's call) and with
// Algorithm::own ("porta_own": porta's row-ordered kernel), beside cuSPARSE called directly
// ("cusparse"), as a user who calls it would: the matrix, x and y in cudaMalloc'ed arrays holding
// the same data, the handle, the descriptors (cusparseCreateCsr, cusparseCreateDnVec /
// cusparseCreateDnMat with CUSPARSE_ORDER_ROW) and the workspace (cusparseSpMV_bufferSize /
// cusparseSpMM_bufferSize) made once outside the timing, then cusparseSpMV / cusparseSpMM with
// the default algorithms on the benchmark stream. porta makes its descriptors and workspace on every
// call, which is what the porta / cusparse ratio measures at a given size.
//
// Every case is checked against the product computed on the host before it is timed, and timed by
// events around a batch (event_loop). Included by cuda_bench.cu at namespace scope after
// kernels_cuda.cuh, whose helpers (timed_gpu, to_host) it uses.
#pragma once

#include <cusparse.h>
#include <porta/porta.hpp>
#include <porta/sparse.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "sparse_common.hpp"

namespace porta_bench_cuda {

namespace ps = porta_bench_sparse;

void check_cusparse(cusparseStatus_t s, const char* what) {
  if (s != CUSPARSE_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + cusparseGetErrorName(s) + " (" + cusparseGetErrorString(s) +
                             ")");
}
#define PB_CUSPARSE(call) check_cusparse((call), #call)

template <class T>
cudaDataType_t cuda_type_of() {
  return std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_64F;
}

// ---- porta ------------------------------------------------------------------------------------------
template <class T>
struct GpuSparsePorta {
  porta::sparse::Csr<T> a;
  porta::Array<T> x, y;
};

template <class T>
void porta_sparse_gpu(GpuSparsePorta<T>& d, const porta::sparse::Options& options) {
  porta::sparse::spmm(T(1), d.a, d.x, T(0), d.y, options, *gpu().porta_stream);
}

template <class T>
GpuSparsePorta<T> make_gpu_sparse_porta(const std::string& id, std::int64_t n, std::int64_t k,
                                        const porta::sparse::Options& options) {
  const porta::Stream& s = *gpu().porta_stream;
  const ps::HostCsr<T>& h = ps::host_poisson<T>(n);
  const T* xh = pb::host_random<T>(h.rows * k, 0);
  const porta::Shape shape = k == 1 ? porta::Shape{h.rows} : porta::Shape{h.rows, k};
  GpuSparsePorta<T> d{porta::sparse::Csr<T>::from_host(h.rows, h.rows, h.indptr, h.indices, h.values, kGpu),
                      porta::Array<T>::from(xh, shape, kGpu, s), porta::full<T>(shape, T(0), kGpu, s)};
  porta_sparse_gpu(d, options);
  s.synchronize();
  ps::expect_product(id, d.y.to_vector().data(), h, xh, k);
  return d;
}

// ---- cuSPARSE -----------------------------------------------------------------------------------------
// Held by pointer in the tenant: the handle and descriptors are destroyed once, before the arrays
// they describe.
template <class T>
struct GpuSparseCusparse {
  std::int64_t k = 1;
  DeviceBuffer<std::int32_t> indptr, indices;
  DeviceBuffer<T> values, x, y;
  DeviceBuffer<unsigned char> work;
  cusparseHandle_t handle = nullptr;
  cusparseSpMatDescr_t a = nullptr;
  cusparseDnVecDescr_t xv = nullptr, yv = nullptr;
  cusparseDnMatDescr_t xm = nullptr, ym = nullptr;
  T alpha = 1, beta = 0;  // read by cuSPARSE at each call (host pointer mode)

  GpuSparseCusparse() = default;
  GpuSparseCusparse(const GpuSparseCusparse&) = delete;
  GpuSparseCusparse& operator=(const GpuSparseCusparse&) = delete;
  ~GpuSparseCusparse() {
    if (xv) cusparseDestroyDnVec(xv);
    if (yv) cusparseDestroyDnVec(yv);
    if (xm) cusparseDestroyDnMat(xm);
    if (ym) cusparseDestroyDnMat(ym);
    if (a) cusparseDestroySpMat(a);
    if (handle) cusparseDestroy(handle);
  }
};

template <class T>
void cusparse_call(GpuSparseCusparse<T>& d) {
  if (d.k == 1) {
    PB_CUSPARSE(cusparseSpMV(d.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &d.alpha, d.a, d.xv, &d.beta, d.yv,
                             cuda_type_of<T>(), CUSPARSE_SPMV_ALG_DEFAULT, d.work.p));
  } else {
    PB_CUSPARSE(cusparseSpMM(d.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &d.alpha,
                             d.a, d.xm, &d.beta, d.ym, cuda_type_of<T>(), CUSPARSE_SPMM_ALG_DEFAULT, d.work.p));
  }
}

template <class T>
std::unique_ptr<GpuSparseCusparse<T>> make_gpu_sparse_cusparse(const std::string& id, std::int64_t n, std::int64_t k) {
  const ps::HostCsr<T>& h = ps::host_poisson<T>(n);
  const T* xh = pb::host_random<T>(h.rows * k, 0);
  const cudaDataType_t type = cuda_type_of<T>();
  auto d = std::make_unique<GpuSparseCusparse<T>>();
  d->k = k;
  d->indptr = DeviceBuffer<std::int32_t>(h.rows + 1, h.indptr.data());
  d->indices = DeviceBuffer<std::int32_t>(h.nnz, h.indices.data());
  d->values = DeviceBuffer<T>(h.nnz, h.values.data());
  d->x = DeviceBuffer<T>(h.rows * k, xh);
  d->y = DeviceBuffer<T>(h.rows * k);
  PB_CUSPARSE(cusparseCreate(&d->handle));
  PB_CUSPARSE(cusparseSetStream(d->handle, gpu().stream));
  PB_CUSPARSE(cusparseCreateCsr(&d->a, h.rows, h.rows, h.nnz, d->indptr.p, d->indices.p, d->values.p,
                                CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type));
  std::size_t bytes = 0;
  if (k == 1) {
    PB_CUSPARSE(cusparseCreateDnVec(&d->xv, h.rows, d->x.p, type));
    PB_CUSPARSE(cusparseCreateDnVec(&d->yv, h.rows, d->y.p, type));
    PB_CUSPARSE(cusparseSpMV_bufferSize(d->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &d->alpha, d->a, d->xv, &d->beta,
                                        d->yv, type, CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
  } else {
    PB_CUSPARSE(cusparseCreateDnMat(&d->xm, h.rows, k, k, d->x.p, type, CUSPARSE_ORDER_ROW));
    PB_CUSPARSE(cusparseCreateDnMat(&d->ym, h.rows, k, k, d->y.p, type, CUSPARSE_ORDER_ROW));
    PB_CUSPARSE(cusparseSpMM_bufferSize(d->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                        &d->alpha, d->a, d->xm, &d->beta, d->ym, type, CUSPARSE_SPMM_ALG_DEFAULT,
                                        &bytes));
  }
  d->work = DeviceBuffer<unsigned char>(static_cast<std::int64_t>(bytes));
  cusparse_call(*d);
  PB_CUDA(cudaStreamSynchronize(gpu().stream));
  ps::expect_product(id, to_host(d->y.p, h.rows * k).data(), h, xh, k);
  return d;
}

// ---- registration ---------------------------------------------------------------------------------------
template <class T>
void register_sparse_case(const std::string& op, std::int64_t n, std::int64_t k) {
  const char* dt = pb::dtype_name<T>();
  const double bytes = ps::sparse_bytes<T>(n, k);
  std::vector<benchmark::internal::Benchmark*> added;
  for (const bool own : {false, true}) {
    porta::sparse::Options options;
    if (own) options.algorithm = porta::sparse::Algorithm::own;
    added.push_back(pb::add(op, dt, own ? "porta_own" : "porta", n, [=](benchmark::State& st, const std::string& id) {
      require_porta(st);
      const int calls = timed_gpu<GpuSparsePorta<T>>(
          st, id, reps_for_bytes(bytes), [&] { return make_gpu_sparse_porta<T>(id, n, k, options); },
          [&](GpuSparsePorta<T>& d) { porta_sparse_gpu(d, options); });
      pb::set_bytes(st, bytes * calls);
    }));
  }
  added.push_back(pb::add(op, dt, "cusparse", n, [=](benchmark::State& st, const std::string& id) {
    const int calls = timed_gpu<std::unique_ptr<GpuSparseCusparse<T>>>(
        st, id, reps_for_bytes(bytes), [&] { return make_gpu_sparse_cusparse<T>(id, n, k); },
        [](std::unique_ptr<GpuSparseCusparse<T>>& d) { cusparse_call(*d); });
    pb::set_bytes(st, bytes * calls);
  }));
  for (auto* b : added) b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

void register_sparse() {
  const bool spmv = ps::wanted_sparse("spmv"), spmm = ps::wanted_sparse("spmm");
  if (!spmv && !spmm) return;
  ps::add_sparse_context(spmm);
  int major = 0, minor = 0, patch = 0;
  if (cusparseGetProperty(MAJOR_VERSION, &major) == CUSPARSE_STATUS_SUCCESS &&
      cusparseGetProperty(MINOR_VERSION, &minor) == CUSPARSE_STATUS_SUCCESS &&
      cusparseGetProperty(PATCH_LEVEL, &patch) == CUSPARSE_STATUS_SUCCESS)
    benchmark::AddCustomContext("cusparse_version",
                                std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch));
  for (std::int64_t n : ps::sparse_sides()) {
    if (spmv) {
      register_sparse_case<float>("spmv", n, 1);
      register_sparse_case<double>("spmv", n, 1);
    }
    if (spmm) {
      register_sparse_case<float>("spmm", n, ps::kSpmmK);
      register_sparse_case<double>("spmm", n, ps::kSpmmK);
    }
  }
}

}  // namespace porta_bench_cuda
