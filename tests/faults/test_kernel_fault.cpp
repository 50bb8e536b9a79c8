// SPDX-License-Identifier: Apache-2.0
// A user kernel that writes far out of bounds on a GPU. GPU kernels cannot throw, so the fault
// shows where CUDA reports it: at the next synchronisation, which must throw porta::BackendError
// naming that call, the vendor's error and the kernel last launched there, not abort or hang. The
// fault is sticky (the process's CUDA context is lost), so this is its own executable and ctest entry, and
// it ends by running porta-info in a fresh process, which must still find the GPU.
//
// Compiled as CUDA (or HIP) by porta_add_kernels; in a plain C++ compilation there is no GPU
// kernel to fault and the test skips. Never run it under compute-sanitizer memcheck: the
// out-of-bounds write is the point (docs/testing.md).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "porta/kernels.hpp"
#include "support/support.hpp"

using porta::Device;
using porta::DeviceType;
using porta_test::Contains;

namespace {

// The GPU type this translation unit's kernels run on, if it was compiled for one.
std::optional<DeviceType> kernel_gpu_type() {
#if defined(__HIPCC__) || defined(__HIP__)
  return DeviceType::hip;
#elif defined(__CUDACC__)
  return DeviceType::cuda;
#else
  return std::nullopt;
#endif
}

// Runs `command`, returns its exit status and standard output.
std::pair<int, std::string> run_process(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return {-1, out};
  char buf[4096];
  std::size_t got = 0;
  while ((got = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, got);
  const int status = pclose(p);
  return {status, out};
}

}  // namespace

TEST_CASE("an out-of-bounds write in a user kernel is a BackendError at the next synchronisation",
          "[.][kernel-fault]") {
  const std::optional<DeviceType> type = kernel_gpu_type();
  if (!type) PORTA_SKIP("this build compiles no GPU kernels (CPU-only): nothing to fault");
  if (!porta::is_available(*type)) PORTA_SKIP("no " << porta::to_string(*type) << " device on this machine");
  const Device dev(*type, 0);
  INFO("on " << porta::describe(dev));

  auto x = porta::zeros<float>({1024}, dev);
  auto v = x.view();
  // An index that lands in the first page of the address space, which no GPU maps: "far" past the
  // array whatever the allocator returned, and never another allocation's memory.
  const std::int64_t far = -static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(v.data) / sizeof(float)) + 16;
  porta::Stream s(dev);
  porta::parallel_for("stray write", dev, 1, PORTA_KERNEL((std::int64_t i) { v.data[far + i] = 1.0f; }), s);
  try {
    s.synchronize();
    FAIL("the out-of-bounds write went unreported at the next synchronisation");
  } catch (const porta::BackendError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK_THAT(what, Contains("porta::Stream::synchronize"));
    CHECK_THAT(what, Contains(*type == DeviceType::cuda ? "cudaErrorIllegalAddress" : "hipError"));
    // The error names the kernel that probably caused it (porta/debug.hpp).
    CHECK_THAT(what, Contains("the last user kernel launched on " + dev.to_string() + " was 'stray write'"));
  }
  // The context is lost; later calls keep failing as porta errors (no abort), whichever they are.
  CHECK_THROWS_AS(porta::sum(x), porta::Error);

  // A fresh process still sees and uses the GPU.
#if defined(PORTA_INFO_EXE)
  const auto [status, out] = run_process(std::string("\"") + PORTA_INFO_EXE + "\" 2>&1");
  INFO("porta-info said:\n" << out);
  CHECK(status == 0);
  CHECK_THAT(out, Contains(dev.to_string()));
#endif
}
