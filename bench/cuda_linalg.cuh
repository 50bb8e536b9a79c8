// SPDX-License-Identifier: Apache-2.0
// The linalg cases on cuda:0 (linalg_common.hpp says what runs): porta::linalg as a user writes it
// ("porta"), beside cuSOLVER called directly ("cusolver") as a user holding the same row-major
// arrays in cudaMalloc'ed memory would call it: the handle, the workspace (the routine's
// _bufferSize), the pivot and info arrays made once outside the timing; every call a
// cudaMemcpyAsync of A (and b) into work buffers, since the routines factor in place, then
//
//   solve          getrf, then getrs with CUBLAS_OP_T (the row-major A is the column-major A^T,
//                  whose factors solve A x = b): the same plain copy and flag porta uses
//   solve_batched  the same two calls per matrix of the stack ("cusolver", timed one call per
//                  batch: thousands of launches), and cuBLAS's batched LU ("cublas_batched"):
//                  cublas<t>getrfBatched and getrsBatched with CUBLAS_OP_T over a device array of
//                  pointers made once, what a CUDA user calls for many small systems
//   cholesky       potrf with CUBLAS_FILL_MODE_UPPER on the row-major buffer (its column-major
//                  reading is S^T = S, and the upper factor read row-major is L)
//   eigh           syevd (vectors, the upper triangle: the one porta reads); the eigenvectors come
//                  back as the buffer's rows, where porta returns them as columns
//   svd            gesvd ('S', 'S'; cuSOLVER's gesvd takes m >= n, square here): U' of the
//                  column-major A^T read row-major is A's Vh, and VT' read row-major is A's U
//
// porta's time includes what its call does beyond the routines: its copies (transposed where a
// result comes back column-major), the result arrays, and reading every matrix's info back to the host (the call waits
// for the stream to raise a LinAlgError where a factorisation failed). The peers leave info on the device, unread,
// inside the timing; it is checked once before.
//
// Every case's result is checked on the host (linalg_common.hpp) before it is timed, by events
// around a batch (event_loop). Included by cuda_bench.cu at namespace scope after kernels_cuda.cuh,
// whose helpers (timed_gpu, to_host) it uses.
#pragma once

#include <cublas_v2.h>
#include <cusolverDn.h>
#include <porta/linalg.hpp>
#include <porta/porta.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "linalg_common.hpp"

namespace porta_bench_cuda {

namespace pl = porta_bench_linalg;

void check_cusolver(cusolverStatus_t s, const char* what) {
  if (s != CUSOLVER_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": cuSOLVER status " + std::to_string(static_cast<int>(s)));
}
#define PB_CUSOLVER(call) check_cusolver((call), #call)

// The float and double routines under one name each.
template <class T>
struct LinalgRoutines;
template <>
struct LinalgRoutines<float> {
  static constexpr auto getrf_bufferSize = cusolverDnSgetrf_bufferSize;
  static constexpr auto getrf = cusolverDnSgetrf;
  static constexpr auto getrs = cusolverDnSgetrs;
  static constexpr auto potrf_bufferSize = cusolverDnSpotrf_bufferSize;
  static constexpr auto potrf = cusolverDnSpotrf;
  static constexpr auto syevd_bufferSize = cusolverDnSsyevd_bufferSize;
  static constexpr auto syevd = cusolverDnSsyevd;
  static constexpr auto gesvd_bufferSize = cusolverDnSgesvd_bufferSize;
  static constexpr auto gesvd = cusolverDnSgesvd;
  static constexpr auto getrfBatched = cublasSgetrfBatched;
  static constexpr auto getrsBatched = cublasSgetrsBatched;
};
template <>
struct LinalgRoutines<double> {
  static constexpr auto getrf_bufferSize = cusolverDnDgetrf_bufferSize;
  static constexpr auto getrf = cusolverDnDgetrf;
  static constexpr auto getrs = cusolverDnDgetrs;
  static constexpr auto potrf_bufferSize = cusolverDnDpotrf_bufferSize;
  static constexpr auto potrf = cusolverDnDpotrf;
  static constexpr auto syevd_bufferSize = cusolverDnDsyevd_bufferSize;
  static constexpr auto syevd = cusolverDnDsyevd;
  static constexpr auto gesvd_bufferSize = cusolverDnDgesvd_bufferSize;
  static constexpr auto gesvd = cusolverDnDgesvd;
  static constexpr auto getrfBatched = cublasDgetrfBatched;
  static constexpr auto getrsBatched = cublasDgetrsBatched;
};

// The codes the factorisations left for every matrix: all zero, or the case fails.
void expect_info_zero(const std::string& id, const int* device, std::int64_t count) {
  const std::vector<int> info = to_host(device, count);
  for (std::int64_t i = 0; i < count; ++i)
    if (info[static_cast<std::size_t>(i)] != 0)
      throw std::runtime_error(id + ": matrix " + std::to_string(i) + " left info " +
                               std::to_string(info[static_cast<std::size_t>(i)]));
}

// ---- porta ------------------------------------------------------------------------------------------
template <class T>
pl::PortaLinalg<T> make_gpu_linalg_porta(const std::string& id, const pl::LinalgCase& c) {
  const porta::Stream& s = *gpu().porta_stream;
  pl::PortaLinalg<T> d = pl::make_porta_linalg<T>(id, c, kGpu, s);
  s.synchronize();
  return d;
}

// ---- cuSOLVER -----------------------------------------------------------------------------------------
// Held by pointer in the tenant: the handle is destroyed once.
template <class T>
struct GpuLinalgCusolver {
  pl::LinalgCase c;
  DeviceBuffer<T> a, b;      // the inputs, as the user holds them
  DeviceBuffer<T> work, x;   // the routines' operands: A's copy (then its factors), b's copy (then x)
  DeviceBuffer<T> w, u, vt;  // eigh: w; svd: s in w, and gesvd's U and VT
  DeviceBuffer<T> workspace;
  int lwork = 0;
  DeviceBuffer<int> ipiv, info, unread;  // getrs's info reports bad arguments only
  cusolverDnHandle_t handle = nullptr;

  GpuLinalgCusolver() = default;
  GpuLinalgCusolver(const GpuLinalgCusolver&) = delete;
  GpuLinalgCusolver& operator=(const GpuLinalgCusolver&) = delete;
  ~GpuLinalgCusolver() {
    if (handle) cusolverDnDestroy(handle);
  }
};

template <class T>
void cusolver_call(GpuLinalgCusolver<T>& d) {
  using R = LinalgRoutines<T>;
  const cudaStream_t s = gpu().stream;
  const int n = static_cast<int>(d.c.n);
  const std::int64_t nn = d.c.n * d.c.n, count = d.c.matrices();
  PB_CUDA(
      cudaMemcpyAsync(d.work.p, d.a.p, sizeof(T) * static_cast<std::size_t>(count * nn), cudaMemcpyDeviceToDevice, s));
  switch (d.c.kind) {
    case pl::Kind::solve:
      PB_CUDA(cudaMemcpyAsync(d.x.p, d.b.p, sizeof(T) * static_cast<std::size_t>(count * d.c.n),
                              cudaMemcpyDeviceToDevice, s));
      for (std::int64_t m = 0; m < count; ++m) {
        T* a = d.work.p + m * nn;
        PB_CUSOLVER(R::getrf(d.handle, n, n, a, n, d.workspace.p, d.ipiv.p, d.info.p + m));
        PB_CUSOLVER(R::getrs(d.handle, CUBLAS_OP_T, n, 1, a, n, d.ipiv.p, d.x.p + m * d.c.n, n, d.unread.p));
      }
      break;
    case pl::Kind::cholesky:
      PB_CUSOLVER(R::potrf(d.handle, CUBLAS_FILL_MODE_UPPER, n, d.work.p, n, d.workspace.p, d.lwork, d.info.p));
      break;
    case pl::Kind::eigh:
      PB_CUSOLVER(R::syevd(d.handle, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, n, d.work.p, n, d.w.p,
                           d.workspace.p, d.lwork, d.info.p));
      break;
    case pl::Kind::svd:
      // rwork (the unconverged superdiagonal) is optional for real types.
      PB_CUSOLVER(R::gesvd(d.handle, 'S', 'S', n, n, d.work.p, n, d.w.p, d.u.p, n, d.vt.p, n, d.workspace.p, d.lwork,
                           nullptr, d.info.p));
      break;
  }
}

template <class T>
std::unique_ptr<GpuLinalgCusolver<T>> make_gpu_linalg_cusolver(const std::string& id, const pl::LinalgCase& c) {
  using R = LinalgRoutines<T>;
  pl::HostLinalg<T>& h = pl::host_linalg<T>(c);
  const int n = static_cast<int>(c.n);
  const std::int64_t nn = c.n * c.n, count = c.matrices();
  auto d = std::make_unique<GpuLinalgCusolver<T>>();
  d->c = c;
  d->a = DeviceBuffer<T>(count * nn, h.a.data());
  d->work = DeviceBuffer<T>(count * nn);
  d->info = DeviceBuffer<int>(count);
  PB_CUSOLVER(cusolverDnCreate(&d->handle));
  PB_CUSOLVER(cusolverDnSetStream(d->handle, gpu().stream));
  switch (c.kind) {
    case pl::Kind::solve:
      d->b = DeviceBuffer<T>(count * c.n, h.b.data());
      d->x = DeviceBuffer<T>(count * c.n);
      d->ipiv = DeviceBuffer<int>(c.n);
      d->unread = DeviceBuffer<int>(1);
      PB_CUSOLVER(R::getrf_bufferSize(d->handle, n, n, d->work.p, n, &d->lwork));
      break;
    case pl::Kind::cholesky:
      PB_CUSOLVER(R::potrf_bufferSize(d->handle, CUBLAS_FILL_MODE_UPPER, n, d->work.p, n, &d->lwork));
      break;
    case pl::Kind::eigh:
      d->w = DeviceBuffer<T>(c.n);
      PB_CUSOLVER(R::syevd_bufferSize(d->handle, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, n, d->work.p, n,
                                      d->w.p, &d->lwork));
      break;
    case pl::Kind::svd:
      d->w = DeviceBuffer<T>(c.n);
      d->u = DeviceBuffer<T>(nn);
      d->vt = DeviceBuffer<T>(nn);
      PB_CUSOLVER(R::gesvd_bufferSize(d->handle, n, n, &d->lwork));
      break;
  }
  d->workspace = DeviceBuffer<T>(std::max(d->lwork, 1));
  cusolver_call(*d);
  PB_CUDA(cudaStreamSynchronize(gpu().stream));
  expect_info_zero(id, d->info.p, count);
  switch (c.kind) {
    case pl::Kind::solve:
      pl::expect_solve(id, h, to_host(d->x.p, count * c.n).data());
      break;
    case pl::Kind::cholesky:
      pl::expect_cholesky(id, h, to_host(d->work.p, nn).data(), false);
      break;
    case pl::Kind::eigh:
      pl::expect_eigh(id, h, to_host(d->w.p, c.n).data(), to_host(d->work.p, nn).data(), true);
      break;
    case pl::Kind::svd:
      pl::expect_svd(id, h, to_host(d->vt.p, nn).data(), to_host(d->w.p, c.n).data(), to_host(d->u.p, nn).data());
      break;
  }
  return d;
}

// ---- cuBLAS's batched LU (the stack of small systems) ----------------------------------------------
template <class T>
struct GpuLinalgBatched {
  pl::LinalgCase c;
  DeviceBuffer<T> a, b, work, x;
  DeviceBuffer<T*> work_ptrs, x_ptrs;  // matrix i's and right-hand side i's place in work and x
  DeviceBuffer<int> ipiv, info;
};

template <class T>
void cublas_batched_call(GpuLinalgBatched<T>& d) {
  using R = LinalgRoutines<T>;
  const cudaStream_t s = gpu().stream;
  const int n = static_cast<int>(d.c.n), count = static_cast<int>(d.c.count);
  PB_CUDA(cudaMemcpyAsync(d.work.p, d.a.p, sizeof(T) * static_cast<std::size_t>(d.c.count * d.c.n * d.c.n),
                          cudaMemcpyDeviceToDevice, s));
  PB_CUDA(cudaMemcpyAsync(d.x.p, d.b.p, sizeof(T) * static_cast<std::size_t>(d.c.count * d.c.n),
                          cudaMemcpyDeviceToDevice, s));
  PB_CUBLAS(R::getrfBatched(gpu().blas, n, d.work_ptrs.p, n, d.ipiv.p, d.info.p, count));
  // The host int reports bad arguments only (set before the call returns).
  int bad = 0;
  PB_CUBLAS(R::getrsBatched(gpu().blas, CUBLAS_OP_T, n, 1, d.work_ptrs.p, n, d.ipiv.p, d.x_ptrs.p, n, &bad, count));
  if (bad != 0) throw std::runtime_error("getrsBatched rejected argument " + std::to_string(-bad));
}

template <class T>
GpuLinalgBatched<T> make_gpu_linalg_batched(const std::string& id, const pl::LinalgCase& c) {
  pl::HostLinalg<T>& h = pl::host_linalg<T>(c);
  const std::int64_t n = c.n, nn = n * n, count = c.count;
  GpuLinalgBatched<T> d;
  d.c = c;
  d.a = DeviceBuffer<T>(count * nn, h.a.data());
  d.b = DeviceBuffer<T>(count * n, h.b.data());
  d.work = DeviceBuffer<T>(count * nn);
  d.x = DeviceBuffer<T>(count * n);
  std::vector<T*> wp(static_cast<std::size_t>(count)), xp(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    wp[static_cast<std::size_t>(i)] = d.work.p + i * nn;
    xp[static_cast<std::size_t>(i)] = d.x.p + i * n;
  }
  d.work_ptrs = DeviceBuffer<T*>(count, wp.data());
  d.x_ptrs = DeviceBuffer<T*>(count, xp.data());
  d.ipiv = DeviceBuffer<int>(count * n);
  d.info = DeviceBuffer<int>(count);
  cublas_batched_call(d);
  PB_CUDA(cudaStreamSynchronize(gpu().stream));
  expect_info_zero(id, d.info.p, count);
  pl::expect_solve(id, h, to_host(d.x.p, count * n).data());
  return d;
}

// ---- registration ---------------------------------------------------------------------------------------
template <class T>
void register_linalg_case(const pl::LinalgCase& c) {
  const char* dt = pb::dtype_name<T>();
  const double flops = pl::linalg_flops(c);
  // eigh and svd report time alone: one call a timed batch, so that the time is a call's.
  const int reps = flops > 0 ? reps_for_flops(flops) : 1;
  std::vector<benchmark::internal::Benchmark*> added;
  added.push_back(pb::add(c.op, dt, "porta", c.size(), [=](benchmark::State& st, const std::string& id) {
    require_porta(st);
    const int calls = timed_gpu<pl::PortaLinalg<T>>(
        st, id, reps, [&] { return make_gpu_linalg_porta<T>(id, c); },
        [](pl::PortaLinalg<T>& d) { pl::porta_linalg(d, *gpu().porta_stream); });
    if (flops > 0) pb::set_flops(st, flops * calls);
  }));
  // A stack is thousands of launches a call through the loop: one call a batch keeps it short.
  const int loop_reps = c.count > 0 ? 1 : reps;
  added.push_back(pb::add(c.op, dt, "cusolver", c.size(), [=](benchmark::State& st, const std::string& id) {
    const int calls = timed_gpu<std::unique_ptr<GpuLinalgCusolver<T>>>(
        st, id, loop_reps, [&] { return make_gpu_linalg_cusolver<T>(id, c); },
        [](std::unique_ptr<GpuLinalgCusolver<T>>& d) { cusolver_call(*d); });
    if (flops > 0) pb::set_flops(st, flops * calls);
  }));
  if (c.kind == pl::Kind::solve && c.count > 0) {
    added.push_back(pb::add(c.op, dt, "cublas_batched", c.size(), [=](benchmark::State& st, const std::string& id) {
      const int calls = timed_gpu<GpuLinalgBatched<T>>(
          st, id, reps, [&] { return make_gpu_linalg_batched<T>(id, c); },
          [](GpuLinalgBatched<T>& d) { cublas_batched_call(d); });
      pb::set_flops(st, flops * calls);
    }));
  }
  for (auto* b : added) b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

void register_linalg() {
  const std::vector<pl::LinalgCase> cases = pl::linalg_cases();
  if (cases.empty()) return;
  pl::add_linalg_context(cases);
  int major = 0, minor = 0, patch = 0;
  if (cusolverGetProperty(MAJOR_VERSION, &major) == CUSOLVER_STATUS_SUCCESS &&
      cusolverGetProperty(MINOR_VERSION, &minor) == CUSOLVER_STATUS_SUCCESS &&
      cusolverGetProperty(PATCH_LEVEL, &patch) == CUSOLVER_STATUS_SUCCESS)
    benchmark::AddCustomContext("cusolver_version",
                                std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch));
  for (const pl::LinalgCase& c : cases) {
    register_linalg_case<float>(c);
    register_linalg_case<double>(c);
  }
}

}  // namespace porta_bench_cuda
