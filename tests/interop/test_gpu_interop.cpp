// SPDX-License-Identifier: Apache-2.0
// porta's arrays in the user's own code and the user's memory in porta, both ways and without a
// copy (docs/interop.md, "Raw CUDA and HIP code"): a hand-written kernel on an Array's data() and
// stream, cuBLAS and cuFFT on porta's memory and stream, and memory the user allocated borrowed by
// porta. Compiled as CUDA (as HIP in test_gpu_interop_hip.cpp) when the build has that backend, so
// the cases run on the GPU devices; on the CPU device the user's code is a host loop.
#include <cmath>
#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

#include "support/support.hpp"

#if defined(__CUDACC__)
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>
#define PORTA_INTEROP_GPU 1
#define PORTA_INTEROP_TYPE ::porta::DeviceType::cuda
using gpu_stream_t = cudaStream_t;
#define gpuSuccess cudaSuccess
#define gpuGetLastError cudaGetLastError
#define gpuSetDevice cudaSetDevice
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMemcpy cudaMemcpy
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuStreamSynchronize cudaStreamSynchronize
#elif defined(__HIPCC__)
#include <hip/hip_runtime.h>
#define PORTA_INTEROP_GPU 1
#define PORTA_INTEROP_TYPE ::porta::DeviceType::hip
using gpu_stream_t = hipStream_t;
#define gpuSuccess hipSuccess
#define gpuGetLastError hipGetLastError
#define gpuSetDevice hipSetDevice
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMemcpy hipMemcpy
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuStreamSynchronize hipStreamSynchronize
#endif

namespace {

using porta_test::Rng;

// The user's code: y = 2x + 1, exact in float (the doubling is exact, one rounding either way), so
// the check is bitwise whether or not the compiler contracts it to an fma.
inline float user_op(float x) {
  return 2.0f * x + 1.0f;
}

#if defined(PORTA_INTEROP_GPU)
__global__ void user_kernel(float* p, std::int64_t n) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) p[i] = 2.0f * p[i] + 1.0f;
}

bool is_this_gpu(porta::Device d) {
  return d.type == PORTA_INTEROP_TYPE;
}
#endif

// Runs the user's code on a's memory, ordered on s as porta's own work would be.
void user_code_on(porta::Array<float>& a, const porta::Stream& s) {
  const porta::Device dev = a.device();
  if (dev.host_accessible()) {
    float* p = a.data();
    for (std::int64_t i = 0; i < a.size(); ++i) p[i] = user_op(p[i]);
    return;
  }
#if defined(PORTA_INTEROP_GPU)
  if (is_this_gpu(dev)) {
    REQUIRE(gpuSetDevice(dev.index) == gpuSuccess);
    const unsigned blocks = static_cast<unsigned>((a.size() + 255) / 256);
    user_kernel<<<blocks, 256, 0, static_cast<gpu_stream_t>(s.native_handle())>>>(a.data(), a.size());
    REQUIRE(gpuGetLastError() == gpuSuccess);
    return;
  }
#endif
  FAIL("no user code for " << dev.to_string() << " in this build");
}

bool user_code_runs_on(porta::Device dev) {
#if defined(PORTA_INTEROP_GPU)
  if (is_this_gpu(dev)) return true;
#endif
  return dev.host_accessible();
}

}  // namespace

TEST_CASE("the user's own code on an Array's memory, ordered on porta's stream", "[interop]") {
  const porta::Device dev = PORTA_TEST_DEVICE();
  if (!user_code_runs_on(dev)) {
    // cpu:strict is a separate address space that host code may not touch (docs/strict.md); what
    // it owes a user here is a clear refusal of host memory, checked by the borrow case below.
    return;
  }
  PORTA_RNG(rng);
  const std::int64_t n = 10007 + rng.index(1000);
  std::vector<float> x(static_cast<std::size_t>(n));
  for (float& v : x) v = rng.uniform(-4.0f, 4.0f);
  std::vector<float> expect(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) expect[i] = user_op(x[i]);

  porta::Stream s(dev);
  porta::Array<float> a = porta::Array<float>::from(x.data(), porta::Shape{n}, dev, s);
  user_code_on(a, s);   // queued after the copy on the same stream
  porta::neg(a, a, s);  // porta's work after the user's, on the same stream
  user_code_on(a, s);   // and the user's after porta's
  const std::vector<float> got = a.to_vector(s);
  std::vector<float> ref(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) ref[i] = user_op(-expect[i]);
  PORTA_REQUIRE_RESULT(porta_test::compare_exact(got, ref));
}

TEST_CASE("memory the user allocated, borrowed by porta without a copy", "[interop]") {
  const porta::Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t n = 4096 + rng.index(4096);
  std::vector<float> hx(static_cast<std::size_t>(n)), hy(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < hx.size(); ++i) {
    hx[i] = rng.uniform(-1.0f, 1.0f);
    hy[i] = rng.uniform(-1.0f, 1.0f);
  }
  const std::size_t bytes = hx.size() * sizeof(float);

  if (!dev.host_accessible()) {
    // Ordinary host memory is neither a GPU's (unless the device reaches pageable memory: HMM, ATS)
    // nor cpu:strict's device memory: borrowing it must fail at once and say what to do.
    std::vector<float> user(hx);
    bool refused = false;
    try {
      (void)porta::Array<float>::borrow(user.data(), porta::Shape{n}, dev, nullptr);
    } catch (const porta::InvalidArgument& e) {
      refused = true;
      INFO(e.what());
      CHECK(std::string(e.what()).find("Array::from") != std::string::npos);
    }
    if (!refused) WARN(dev.to_string() << " reaches pageable host memory: borrowing it is allowed there");
    if (!user_code_runs_on(dev)) {
      REQUIRE(refused);
      return;
    }
  }

  // The user's allocation and its release; the flag proves porta released it, once, at the end.
  float* px = nullptr;
  float* py = nullptr;
  std::shared_ptr<int> released = std::make_shared<int>(0);
  std::shared_ptr<void> owner;
  if (dev.host_accessible()) {
    px = new float[hx.size()];
    py = new float[hy.size()];
    std::copy(hx.begin(), hx.end(), px);
    std::copy(hy.begin(), hy.end(), py);
    owner = std::shared_ptr<void>(px, [py, released](void* p) {
      delete[] static_cast<float*>(p);
      delete[] py;
      ++*released;
    });
  }
#if defined(PORTA_INTEROP_GPU)
  if (is_this_gpu(dev)) {
    REQUIRE(gpuSetDevice(dev.index) == gpuSuccess);
    REQUIRE(gpuMalloc(reinterpret_cast<void**>(&px), bytes) == gpuSuccess);
    REQUIRE(gpuMalloc(reinterpret_cast<void**>(&py), bytes) == gpuSuccess);
    REQUIRE(gpuMemcpy(px, hx.data(), bytes, gpuMemcpyHostToDevice) == gpuSuccess);
    REQUIRE(gpuMemcpy(py, hy.data(), bytes, gpuMemcpyHostToDevice) == gpuSuccess);
    owner = std::shared_ptr<void>(px, [py, released](void* p) {
      (void)gpuFree(p);
      (void)gpuFree(py);
      ++*released;
    });
  }
#endif
  REQUIRE(owner);

  porta::Stream s(dev);
  {
    porta::Array<float> x = porta::Array<float>::borrow(px, porta::Shape{n}, dev, owner);
    porta::Array<float> y = porta::Array<float>::borrow(py, porta::Shape{n}, dev, owner);
    owner.reset();  // the Arrays hold the user's memory now
    REQUIRE(x.borrowed());
    REQUIRE(x.data() == px);

    // porta writes into the user's buffer: y = 3x + y, the same bits as on porta's own memory.
    porta::axpy(3.0f, x, y, s);
    porta::Array<float> ox = porta::Array<float>::from(hx.data(), porta::Shape{n}, dev, s);
    porta::Array<float> oy = porta::Array<float>::from(hy.data(), porta::Shape{n}, dev, s);
    porta::axpy(3.0f, ox, oy, s);
    const std::vector<float> own = oy.to_vector(s);

    // ... read back by the user's own copy, after the user synchronises porta's stream.
    std::vector<float> got(hy.size());
    s.synchronize();
    if (dev.host_accessible()) {
      std::copy(py, py + n, got.begin());
    }
#if defined(PORTA_INTEROP_GPU)
    if (is_this_gpu(dev)) REQUIRE(gpuMemcpy(got.data(), py, bytes, gpuMemcpyDeviceToHost) == gpuSuccess);
#endif
    PORTA_REQUIRE_RESULT(porta_test::compare_exact(got, own));
    std::vector<long double> ref(hy.size());
    for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = 3.0L * hx[i] + hy[i];
    PORTA_REQUIRE_RESULT(porta_test::compare_bound(got, ref, std::vector<long double>(ref.size(), 4e-7L * 4)));

    // A view of a borrowed Array keeps the user's memory too.
    porta::Array<float> tail = y.slice(0, n / 2, n);
    x = porta::Array<float>();
    y = porta::Array<float>();
    CHECK(*released == 0);
    CHECK(tail.item(0) == got[static_cast<std::size_t>(n / 2)]);
  }
  CHECK(*released == 1);
}

#if defined(__CUDACC__)
namespace {
#define REQUIRE_CUBLAS(x) REQUIRE((x) == CUBLAS_STATUS_SUCCESS)
#define REQUIRE_CUFFT(x) REQUIRE((x) == CUFFT_SUCCESS)
}  // namespace

TEST_CASE("cuBLAS and cuFFT called by the user on porta's arrays and stream", "[interop]") {
  for (const porta::Device dev : porta_test::test_devices()) {
    if (dev.type != porta::DeviceType::cuda) continue;
    INFO("device " << dev.to_string());
    PORTA_RNG(rng);
    REQUIRE(cudaSetDevice(dev.index) == cudaSuccess);
    porta::Stream s(dev);
    const auto stream = static_cast<cudaStream_t>(s.native_handle());

    // Row-major porta arrays are column-major transposes to cuBLAS: C^T = B^T A^T.
    const std::int64_t m = 70 + rng.index(60), k = 50 + rng.index(60), n = 90 + rng.index(60);
    std::vector<float> ha(static_cast<std::size_t>(m * k)), hb(static_cast<std::size_t>(k * n));
    for (float& v : ha) v = rng.uniform(-1.0f, 1.0f);
    for (float& v : hb) v = rng.uniform(-1.0f, 1.0f);
    porta::Array<float> a = porta::Array<float>::from(ha.data(), porta::Shape{m, k}, dev, s);
    porta::Array<float> b = porta::Array<float>::from(hb.data(), porta::Shape{k, n}, dev, s);
    porta::Array<float> c(porta::Shape{m, n}, dev, s);
    porta::fill(c, std::nanf(""), s);  // poison: cuBLAS must write every element
    cublasHandle_t h = nullptr;
    REQUIRE_CUBLAS(cublasCreate(&h));
    std::unique_ptr<cublasContext, decltype(&cublasDestroy)> hold(h, &cublasDestroy);
    REQUIRE_CUBLAS(cublasSetStream(h, stream));
    REQUIRE_CUBLAS(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));  // no TF32: the check is float's
    const float one = 1.0f, zero = 0.0f;
    REQUIRE_CUBLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                               static_cast<int>(k), &one, b.data(), static_cast<int>(n), a.data(), static_cast<int>(k),
                               &zero, c.data(), static_cast<int>(n)));
    const float total = porta::sum(c, s);  // porta reads cuBLAS's result in stream order
    const std::vector<float> got = c.to_vector(s);
    std::vector<long double> ref(got.size()), bound(got.size());
    long double ref_total = 0;
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        long double acc = 0, mag = 0;
        for (std::int64_t p = 0; p < k; ++p) {
          const long double t = static_cast<long double>(ha[static_cast<std::size_t>(i * k + p)]) *
                                hb[static_cast<std::size_t>(p * n + j)];
          acc += t;
          mag += std::fabs(t);
        }
        ref[static_cast<std::size_t>(i * n + j)] = acc;
        bound[static_cast<std::size_t>(i * n + j)] = 2.0L * static_cast<long double>(k) * 6e-8L * mag;
        ref_total += acc;
      }
    PORTA_REQUIRE_RESULT(porta_test::compare_bound(got, ref, bound));
    CHECK(std::fabs(static_cast<long double>(total) - ref_total) <= 1e-3L * (1 + std::fabs(ref_total)));

    // A complex-to-complex FFT of porta memory (interleaved re, im) into porta memory.
    const int len = 256 + 2 * static_cast<int>(rng.index(64));
    std::vector<float> hz(static_cast<std::size_t>(2 * len));
    for (float& v : hz) v = rng.uniform(-1.0f, 1.0f);
    porta::Array<float> z = porta::Array<float>::from(hz.data(), porta::Shape{2 * len}, dev, s);
    porta::Array<float> f(porta::Shape{2 * len}, dev, s);
    porta::fill(f, std::nanf(""), s);
    cufftHandle plan = 0;
    REQUIRE_CUFFT(cufftPlan1d(&plan, len, CUFFT_C2C, 1));
    REQUIRE_CUFFT(cufftSetStream(plan, stream));
    const cufftResult run = cufftExecC2C(plan, reinterpret_cast<cufftComplex*>(z.data()),
                                         reinterpret_cast<cufftComplex*>(f.data()), CUFFT_FORWARD);
    cufftDestroy(plan);
    REQUIRE(run == CUFFT_SUCCESS);
    const std::vector<float> fg = f.to_vector(s);
    std::vector<long double> fr(fg.size());
    const long double two_pi = 6.283185307179586476925286766559L;
    long double norm = 0;
    for (int q = 0; q < len; ++q) {
      std::complex<long double> acc = 0;
      for (int t = 0; t < len; ++t) {
        const long double ang = -two_pi * static_cast<long double>((static_cast<std::int64_t>(q) * t) % len) / len;
        acc += std::complex<long double>(hz[2 * t], hz[2 * t + 1]) * std::polar(1.0L, ang);
      }
      fr[2 * q] = acc.real();
      fr[2 * q + 1] = acc.imag();
      norm = std::max(norm, std::abs(acc));
    }
    PORTA_REQUIRE_RESULT(porta_test::compare_bound(fg, fr, std::vector<long double>(fr.size(), 1e-5L * (norm + len))));
  }
}
#endif
