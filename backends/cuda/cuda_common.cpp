// SPDX-License-Identifier: Apache-2.0
#include "backends/cuda/cuda_common.hpp"

#include <cuda_runtime_api.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace porta::detail::cuda {

porta_status cuda_error(const char* call, cudaError_t e) noexcept {
  (void)cudaGetLastError();
  const porta_status st = (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorInvalidDevice)
                              ? PORTA_ERR_UNAVAILABLE
                              : (e == cudaErrorMemoryAllocation ? PORTA_ERR_OOM : PORTA_ERR_BACKEND);
  return set_error(st, "%s: %s (%s)", call, cudaGetErrorString(e), cudaGetErrorName(e));
}

porta_status launch_error(const char* what, int code, int dev) noexcept {
  const auto e = static_cast<cudaError_t>(code);
  (void)cudaGetLastError();
  if (e == cudaErrorMemoryAllocation) {
    std::size_t free_b = 0, total_b = 0;
    (void)cudaMemGetInfo(&free_b, &total_b);
    (void)cudaGetLastError();
    return set_error(PORTA_ERR_OOM,
                     "cudaMallocAsync: no device memory for the temporaries of %s on cuda:%d (%zu of %zu bytes free; "
                     "cudaErrorMemoryAllocation)",
                     what, dev, free_b, total_b);
  }
  return set_error(PORTA_ERR_BACKEND, "%s kernel: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

namespace {

struct Devices {
  int count = 0;
  std::string reason;
  std::unique_ptr<DeviceState[]> states;
};

const Devices& devices() noexcept {
  static const Devices d = []() noexcept {
    Devices r;
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    char buf[512];
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      int runtime = 0;
      (void)cudaRuntimeGetVersion(&runtime);
      if (e == cudaErrorInsufficientDriver) {
        std::snprintf(buf, sizeof buf,
                      "CUDA driver is not installed, or is older than CUDA runtime %d.%d needs "
                      "(cudaErrorInsufficientDriver: %s)",
                      runtime / 1000, (runtime % 1000) / 10, cudaGetErrorString(e));
      } else if (e == cudaErrorNoDevice) {
        const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
        std::snprintf(buf, sizeof buf, "no CUDA device found (cudaErrorNoDevice: %s)%s%s%s", cudaGetErrorString(e),
                      visible ? "; CUDA_VISIBLE_DEVICES=\"" : "", visible ? visible : "", visible ? "\"" : "");
      } else {
        std::snprintf(buf, sizeof buf, "cudaGetDeviceCount failed: %s (%s)", cudaGetErrorString(e),
                      cudaGetErrorName(e));
      }
      n = 0;
      try {
        r.reason = buf;
      } catch (...) {
      }
    } else if (n <= 0) {
      n = 0;
      try {
        r.reason = "no CUDA device found (cudaGetDeviceCount returned 0)";
      } catch (...) {
      }
    }
    if (n > 0) {
      try {
        r.states.reset(new DeviceState[static_cast<std::size_t>(n)]);
      } catch (...) {
        n = 0;
        r.reason = "out of host memory while setting up the CUDA backend";
      }
    }
    r.count = n;
    return r;
  }();
  return d;
}

}  // namespace

int device_count(const char** reason) noexcept {
  const Devices& d = devices();
  if (reason != nullptr) *reason = d.count > 0 ? "" : d.reason.c_str();
  return d.count;
}

DeviceState& device_state(int dev) noexcept {
  return devices().states[static_cast<std::size_t>(dev)];
}

porta_status enter(int dev, const char* fn) noexcept {
  const Devices& d = devices();
  if (d.count == 0) return set_error(PORTA_ERR_UNAVAILABLE, "%s: %s", fn, d.reason.c_str());
  if (dev < 0 || dev >= d.count)
    return set_error(PORTA_ERR_INVALID, "cuda:%d does not exist (%d CUDA device%s)", dev, d.count,
                     d.count == 1 ? "" : "s");
  // cudaGetDevice only reads a thread-local; cudaSetDevice is skipped when it would change nothing.
  // (No cache of our own: user kernels and other libraries may switch the device in between.)
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess || current != dev) {
    const cudaError_t e = cudaSetDevice(dev);
    if (e != cudaSuccess) return cuda_error("cudaSetDevice", e);
  }
  return PORTA_OK;
}

porta_status pool_of(int dev, cudaMemPool_t* pool, bool* supported) noexcept {
  DeviceState& s = device_state(dev);
  std::call_once(s.pool_once, [&s, dev]() noexcept {
    int ok = 0;
    cudaError_t e = cudaDeviceGetAttribute(&ok, cudaDevAttrMemoryPoolsSupported, dev);
    if (e == cudaSuccess && ok != 0) {
      e = cudaDeviceGetDefaultMemPool(&s.pool, dev);
      if (e == cudaSuccess) {
        std::uint64_t keep = UINT64_MAX;
        e = cudaMemPoolSetAttribute(s.pool, cudaMemPoolAttrReleaseThreshold, &keep);
      }
      s.pools_supported = e == cudaSuccess;
    }
    s.pool_error = e;
    if (e != cudaSuccess) (void)cudaGetLastError();
  });
  if (s.pool_error != cudaSuccess) return cuda_error("setting up the stream-ordered memory pool", s.pool_error);
  *pool = s.pool;
  *supported = s.pools_supported;
  return PORTA_OK;
}

}  // namespace porta::detail::cuda
