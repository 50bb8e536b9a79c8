// SPDX-License-Identifier: Apache-2.0
// libporta_hip.so: the GPU plugin of backends/gpu/plugin.hpp over the HIP runtime (ApiHip). What is
// HIP's own lives here: why there is no device, the build line, and the rocBLAS/hipBLAS glue
// (hip_blas.cpp). Compiled with CMake's HIP language (ROCm's clang), as every source of the plugin.
#include <hip/hip_version.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "backends/gpu/plugin.hpp"
#include "backends/hip/hip_blas.hpp"

#ifndef PORTA_HIP_TARGETS
#define PORTA_HIP_TARGETS "?"
#endif
#ifndef PORTA_HIP_BLAS_INFO
#define PORTA_HIP_BLAS_INFO "rocBLAS: not found (porta GEMM kernel)"
#endif

#define PORTA_HIP_STR2(x) #x
#define PORTA_HIP_STR(x) PORTA_HIP_STR2(x)

namespace porta::detail::hip {
namespace {

struct Hip {
  using Api = gpu::ApiHip;
  // The collectives library (backends/gpu/collectives.hpp), dlopen()ed at first use, never linked.
  static constexpr const char* kCollName = "RCCL";
  static constexpr const char* kCollLibrary = "librccl.so.1";

  // Run-time kernels (backends/gpu/rtc.hpp): hiprtc, dlopen()ed at first use (its own library from
  // ROCm 6; part of libamdhip64 before), code objects loaded as modules.
  static const gpu::RtcNames& rtc_names() {
    static const gpu::RtcNames n{
        "hiprtc",
        {"libhiprtc.so.6", "libhiprtc.so.5", "libhiprtc.so", "libamdhip64.so.5", "libamdhip64.so"},
        "hiprtc",
        "hiprtcGetCodeSize",
        "hiprtcGetCode"};
    return n;
  }
  // A code object for the device's full target id; no contraction into FMAs.
  static std::vector<std::string> rtc_options(const char* arch) {
    return {std::string("--gpu-architecture=") + arch, "-std=c++17", "-ffp-contract=off"};
  }
  static hipError_t rtc_module_load(const void* code, const char* name, void** fn) {
    hipModule_t mod = nullptr;
    hipError_t e = hipModuleLoadData(&mod, code);
    if (e != hipSuccess) return e;
    hipFunction_t f = nullptr;
    e = hipModuleGetFunction(&f, mod, name);
    if (e != hipSuccess) {
      (void)hipModuleUnload(mod);
      return e;
    }
    *fn = reinterpret_cast<void*>(f);
    return hipSuccess;
  }
  static hipError_t rtc_module_launch(void* fn, unsigned grid, unsigned block, void** args, hipStream_t s) {
    return hipModuleLaunchKernel(reinterpret_cast<hipFunction_t>(fn), grid, 1, 1, block, 1, 1, 0, s, args, nullptr);
  }
  static hipError_t rtc_resident_blocks(void* fn, int block, int* blocks) {
    return hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(blocks, reinterpret_cast<hipFunction_t>(fn), block, 0);
  }

  // The HIP runtime reports the same hipErrorNoDevice whether the kernel driver is missing, the
  // container lacks /dev/kfd, the user may not open it, or the visibility variables hide every
  // GPU, so look at those first and say which one it is.
  static std::string no_device_reason(hipError_t e, int n) {
    std::string why;
    struct stat st {};
    if (stat("/dev/kfd", &st) != 0) {
      why =
          "no ROCm-capable AMD GPU: /dev/kfd does not exist (the amdgpu kernel driver is not loaded, or the "
          "device is not passed into this container)";
    } else if (access("/dev/kfd", R_OK | W_OK) != 0) {
      why =
          "no ROCm-capable AMD GPU usable: /dev/kfd exists but this user may not open it (add the user to "
          "the 'render' and 'video' groups)";
    } else if (e == hipErrorInsufficientDriver) {
      why = "the AMD GPU driver is too old for this HIP runtime";
    } else {
      why = "no ROCm-capable AMD GPU found";
    }
    for (const char* var : {"HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"}) {
      if (const char* v = std::getenv(var)) why += std::string(" (") + var + "=\"" + v + "\")";
    }
    if (e != hipSuccess) {
      why += std::string(" (HIP runtime: hipGetDeviceCount: ") + hipGetErrorName(e) + ")";
    } else if (n == 0) {
      why += " (HIP runtime: hipGetDeviceCount returned 0)";
    }
    return why;
  }

  // The versions of the headers the plugin was compiled against; device_info reports the runtime
  // and driver actually loaded.
  static const char* build_info() noexcept {
    return "HIP " PORTA_HIP_STR(HIP_VERSION_MAJOR) "." PORTA_HIP_STR(HIP_VERSION_MINOR) " (ROCm), clang " PORTA_HIP_STR(
        __clang_major__) "." PORTA_HIP_STR(__clang_minor__) "." PORTA_HIP_STR(__clang_patchlevel__) ", " PORTA_HIP_BLAS_INFO
                                                                                                    ", targets: " PORTA_HIP_TARGETS;
  }

  static bool blas_takes(porta_dtype dt, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda,
                         std::int64_t ldb, std::int64_t ldc, std::uint32_t flags) noexcept {
    return vendor_gemm_takes(dt, m, n, k, lda, ldb, ldc, flags);
  }
  static porta_status blas_gemm(int dev, porta_dtype dt, int trans_a, int trans_b, std::int64_t m, std::int64_t n,
                                std::int64_t k, porta_scalar alpha, const void* a, std::int64_t lda, const void* b,
                                std::int64_t ldb, porta_scalar beta, void* c, std::int64_t ldc, std::uint32_t,
                                porta_stream s) noexcept {
    return vendor_gemm(dev, dt, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
  }

  // rocSPARSE is not linked yet (no AMD GPU is reachable to test its glue on): porta's kernel runs
  // every sparse product, so HIP devices give the bits of PORTA_SPARSE_OWN_KERNEL also by default.
  static bool sparse_takes(std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::uint32_t) noexcept {
    return false;
  }
  static porta_status sparse_spmm(int, porta_dtype, porta_dtype, std::int64_t, std::int64_t, std::int64_t, const void*,
                                  const void*, const void*, std::int64_t, porta_scalar, const void*, std::int64_t,
                                  porta_scalar, void*, std::int64_t, porta_stream) noexcept {
    return backend::set_error(PORTA_ERR_UNAVAILABLE, "spmm: no vendor sparse library in the HIP backend");
  }

  // rocSOLVER is not packaged in Debian, so none is linked: the front end runs factorisations of
  // HIP arrays on the CPU's LAPACK instead.
  static porta_status linalg(int, porta_linalg_op, porta_dtype, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                             void*, void*, void*, void*, std::int32_t*, std::uint32_t, porta_stream) noexcept {
    return backend::set_error(PORTA_ERR_UNSUPPORTED, "linalg: no rocSOLVER in the HIP backend");
  }

  // Nor is hipFFT: the front end runs transforms of HIP arrays on the CPU.
  static porta_status fft(int, porta_fft_kind, porta_dtype, std::int32_t, std::int64_t, std::int64_t, std::int64_t,
                          std::int64_t, const void*, void*, double, porta_stream) noexcept {
    return backend::set_error(PORTA_ERR_UNSUPPORTED, "fft: no hipFFT in the HIP backend");
  }
};

}  // namespace
}  // namespace porta::detail::hip

extern "C" __attribute__((visibility("default"))) const porta_backend_v1* porta_backend_entry_v1(void) {
  return porta::detail::gpu::Plugin<porta::detail::hip::Hip>::table();
}
