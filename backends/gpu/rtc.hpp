// SPDX-License-Identifier: Apache-2.0
// Run-time compiled kernels of the GPU plugins: the five rtc_* entries of
// porta_backend_v1, written once for CUDA and HIP. Plugin<V> derives from Rtc<V, Plugin<V>>, so the
// table finds them by name. The compiler (NVRTC, hiprtc) is dlopen()ed at first use through
// rtc_compiler.hpp; the result is loaded with the runtime's own module calls and launched as a
// grid-stride loop over n on the blocks the device keeps resident, as porta::parallel_for is. The vendor struct V
// supplies:
//
//   static const RtcNames& rtc_names();                      // library files, symbol names
//   static std::vector<std::string> rtc_options(const char* arch);  // target, std, no contraction
//   static Api::Error rtc_module_load(const void* code, const char* name, void** fn);
//   static Api::Error rtc_module_launch(void* fn, unsigned grid, unsigned block, void** args,
//                                       Api::Stream s);
//   static Api::Error rtc_resident_blocks(void* fn, int block, int* blocks_per_multiprocessor);
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "backends/common/backend_error.hpp"
#include "backends/common/rtc_options.hpp"
#include "backends/gpu/rtc_compiler.hpp"
#include "porta/abi/backend_v1.h"
#include "porta/detail/gpu/api.cuh"

struct porta_rtc_kernel_s {
  void* fn;  // CUfunction / cudaKernel_t / hipFunction_t
  int dev;
  long long resident;  // blocks of the launch's size the device keeps resident: the grid's cap
};

namespace porta::detail::gpu {

template <class V, class P>
struct Rtc {
  using Api = typename V::Api;
  using Error = typename Api::Error;

  static const RtcLibrary& rtc_library() noexcept {
    static const RtcLibrary lib = []() noexcept {
      try {
        return load_rtc_library(V::rtc_names());
      } catch (...) {
        RtcLibrary r;
        r.why = "out of host memory while loading the run-time compiler";
        return r;
      }
    }();
    return lib;
  }

  // The device's target ("sm_90", "gfx90a:sramecc+:xnack-") and multiprocessors, once per device.
  struct Target {
    std::once_flag once;
    Error error{};
    char arch[64] = "";
    int sms = 1;
  };
  static porta_status target(int dev, const char* fn, const Target** out) noexcept {
    static std::once_flag slots_once;
    static Target* slots = nullptr;
    std::call_once(slots_once, [] {
      int count = 0;
      if (Api::get_device_count(&count) != Api::kSuccess) count = 0;
      slots = new Target[count > 0 ? count : 1];  // kept until exit, as the plugin's device state
    });
    Target& t = slots[dev];  // dev was validated by enter()
    std::call_once(t.once, [&t, dev]() noexcept {
      typename Api::DeviceProp p{};
      t.error = Api::device_properties(&p, dev);
      if (t.error != Api::kSuccess) return;
      Api::arch_name(p, t.arch, sizeof t.arch);
      t.sms = p.multiProcessorCount > 0 ? p.multiProcessorCount : 1;
    });
    if (t.error != Api::kSuccess) return P::fail(fn, "device_properties", t.error);
    *out = &t;
    return PORTA_OK;
  }

  static void copy_text(const std::string& s, char* dst, size_t len) noexcept {
    if (dst == nullptr || len == 0) return;
    const std::size_t n = s.size() < len - 1 ? s.size() : len - 1;
    std::memcpy(dst, s.data(), n);
    dst[n] = '\0';
  }

  static std::string option_text(const std::vector<std::string>& opts) {
    std::string s;
    for (const std::string& o : opts) s += (s.empty() ? "" : " ") + o;
    return s;
  }

  // key == NULL: loads the compiler and says whether it works. Otherwise the cache key, without
  // loading the compiler (dlopen of NVRTC alone costs about 90 ms, which a process whose kernels are
  // all in the disk cache must not pay): the library the plugin would load, the runtime version,
  // the target and the options. A cached kernel then runs where the compiler is not installed.
  static porta_status rtc_info(int dev, char* key, size_t len) noexcept try {
    constexpr const char* fn = "rtc_info";
    copy_text(std::string(), key, len);
    DeviceGuard<Api> guard;
    if (porta_status st = P::enter(guard, dev, fn); st != PORTA_OK) return st;
    if (key == nullptr) {
      const RtcLibrary& lib = rtc_library();
      if (!lib.ok) return backend::set_error(PORTA_ERR_UNAVAILABLE, "%s: %s", fn, lib.why.c_str());
      return PORTA_OK;
    }
    const Target* t = nullptr;
    if (porta_status st = target(dev, fn, &t); st != PORTA_OK) return st;
    int runtime = 0;
    (void)Api::runtime_version(&runtime);
    (void)Api::get_last_error();
    const RtcNames& names = V::rtc_names();
    copy_text(std::string(names.name) + " (" + names.files.front() + ") with " + Api::kName + " runtime " +
                  std::to_string(runtime) + ", " + t->arch + ", " + option_text(V::rtc_options(t->arch)),
              key, len);
    return PORTA_OK;
  } catch (...) {
    return backend::set_error(PORTA_ERR_OOM, "rtc_info: out of host memory");
  }

  static porta_status rtc_compile(int dev, const char* source, const char* options, void** binary, size_t* bytes,
                                  char* log, size_t log_len) noexcept try {
    constexpr const char* fn = "rtc_compile";
    copy_text(std::string(), log, log_len);
    if (source == nullptr || binary == nullptr || bytes == nullptr)
      return backend::set_error(PORTA_ERR_INVALID, "%s: NULL source or output", fn);
    *binary = nullptr;
    *bytes = 0;
    DeviceGuard<Api> guard;
    if (porta_status st = P::enter(guard, dev, fn); st != PORTA_OK) return st;
    const RtcLibrary& lib = rtc_library();
    if (!lib.ok) return backend::set_error(PORTA_ERR_UNAVAILABLE, "%s: %s", fn, lib.why.c_str());
    const Target* t = nullptr;
    if (porta_status st = target(dev, fn, &t); st != PORTA_OK) return st;
    backend::SplitOptions user = backend::split_options(options);
    if (!user.error.empty()) return backend::set_error(PORTA_ERR_INVALID, "%s: %s", fn, user.error.c_str());
    std::vector<std::string> opts = V::rtc_options(t->arch);
    for (std::string& o : user.args) opts.push_back(std::move(o));
    std::string code, out;
    const RtcResult r = rtc_compile_program(lib, source, opts, &code, &out);
    copy_text(out, log, log_len);
    if (r == RtcResult::compile_error)
      return backend::set_error(PORTA_ERR_INVALID, "%s: %s failed:\n%s", fn, lib.info.c_str(), out.c_str());
    if (r == RtcResult::failed)
      return backend::set_error(PORTA_ERR_BACKEND, "%s: %s: %s", fn, lib.info.c_str(), out.c_str());
    void* buf = std::malloc(code.size());
    if (buf == nullptr) return backend::set_error(PORTA_ERR_OOM, "%s: out of host memory", fn);
    std::memcpy(buf, code.data(), code.size());
    *binary = buf;
    *bytes = code.size();
    return PORTA_OK;
  } catch (...) {
    return backend::set_error(PORTA_ERR_OOM, "rtc_compile: out of host memory");
  }

  static porta_status rtc_free_binary(void* binary) noexcept {
    std::free(binary);
    return PORTA_OK;
  }

  static porta_status rtc_load(int dev, const void* binary, size_t bytes, const char* name,
                               porta_rtc_kernel* out) noexcept try {
    constexpr const char* fn = "rtc_load";
    if (binary == nullptr || bytes == 0 || name == nullptr || out == nullptr)
      return backend::set_error(PORTA_ERR_INVALID, "%s: NULL or empty argument", fn);
    *out = nullptr;
    DeviceGuard<Api> guard;
    if (porta_status st = P::enter(guard, dev, fn); st != PORTA_OK) return st;
    void* f = nullptr;
    const Error e = V::rtc_module_load(binary, name, &f);
    if (e != Api::kSuccess || f == nullptr) {
      // A binary the driver refuses (a corrupt cache entry, another architecture) is bad input.
      (void)Api::get_last_error();
      return backend::set_error(PORTA_ERR_INVALID, "%s: %s cannot load the kernel %s (%s)", fn, Api::kName, name,
                                Api::error_name(e));
    }
    // The grid of porta::parallel_for, whose kernels have the same shape (a grid-stride loop over n):
    // the blocks the device keeps resident, so that no partial second wave of equally long blocks
    // doubles the time (a fixed 8 blocks per multiprocessor did, for kernels that fit fewer).
    const Target* t = nullptr;
    if (porta_status st = target(dev, fn, &t); st != PORTA_OK) return st;
    int per_sm = 0;
    if (V::rtc_resident_blocks(f, static_cast<int>(kBlockThreads), &per_sm) != Api::kSuccess || per_sm < 1) {
      (void)Api::get_last_error();
      per_sm = 8;  // 2048 threads of 256: a full multiprocessor of the GPUs porta knows
    }
    *out = new porta_rtc_kernel_s{f, dev, static_cast<long long>(per_sm) * t->sms};
    return PORTA_OK;
  } catch (...) {
    return backend::set_error(PORTA_ERR_OOM, "rtc_load: out of host memory");
  }

  static porta_status rtc_launch(int dev, porta_rtc_kernel k, int64_t n, const void* args, size_t args_bytes,
                                 porta_stream s) noexcept {
    return launch(dev, k, n, args, args_bytes, s, false, "rtc_launch");
  }
  static porta_status rtc_launch_cover(int dev, porta_rtc_kernel k, int64_t n, const void* args, size_t args_bytes,
                                       porta_stream s) noexcept {
    return launch(dev, k, n, args, args_bytes, s, true, "rtc_launch_cover");
  }

 private:
  // rtc_launch: a grid-stride loop over the resident blocks (rtc_load), fewer when n is small.
  // rtc_launch_cover: a grid that covers [0, n), for entries whose index is a vector's work (the
  // generated fused kernels). On the H200, over 2^28 floats of sin(x) * cos(y) + x * y: one element
  // per index took 0.97 ms on the resident grid and 1.07 ms on a covering one; eight elements per
  // index (two 16-byte vectors per input) 0.86 and 0.74 ms, the latter porta::map's time.
  static porta_status launch(int dev, porta_rtc_kernel k, int64_t n, const void* args, size_t args_bytes,
                             porta_stream s, bool cover, const char* fn) noexcept {
    if (k == nullptr || k->fn == nullptr) return backend::set_error(PORTA_ERR_INVALID, "%s: NULL kernel", fn);
    if (k->dev != dev)
      return backend::set_error(PORTA_ERR_INVALID, "%s: the kernel was loaded on %s:%d, not %s:%d", fn, Api::kPrefix,
                                k->dev, Api::kPrefix, dev);
    if (n < 0) return backend::set_error(PORTA_ERR_INVALID, "%s: n is %lld", fn, static_cast<long long>(n));
    if (args == nullptr && args_bytes > 0) return backend::set_error(PORTA_ERR_INVALID, "%s: NULL arguments", fn);
    if (n == 0) return PORTA_OK;
    DeviceGuard<Api> guard;
    if (porta_status st = P::enter(guard, dev, fn); st != PORTA_OK) return st;
    const std::int64_t want = (n + kBlockThreads - 1) / kBlockThreads;
    const std::int64_t grid = clamp_grid(want, cover ? kMaxGrid : k->resident);
    long long count = n;
    void* params[2] = {&count, const_cast<void*>(args)};
    const Error e = V::rtc_module_launch(k->fn, static_cast<unsigned>(grid), static_cast<unsigned>(kBlockThreads),
                                         params, reinterpret_cast<typename Api::Stream>(s));
    if (e != Api::kSuccess) return P::fail(fn, "launch", e);
    return PORTA_OK;
  }
};

}  // namespace porta::detail::gpu
