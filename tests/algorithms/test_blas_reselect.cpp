// SPDX-License-Identifier: Apache-2.0
// What a user gets on a CPU model OpenBLAS does not know: OpenBLAS falls back to its generic
// Prescott kernels, and porta, loaded after it, switches it to the core for this CPU's instruction
// sets. Here OpenBLAS is loaded with OPENBLAS_CORETYPE=Prescott standing in for that fallback, the
// variable is removed, and libporta is loaded after it, as in a program that links both. porta
// must re-select the core, route float and double gemm to OpenBLAS, leave the environment as it
// was, and OpenBLAS must compute right on the new core.
//
// PORTA_LIBRARY and PORTA_OPENBLAS_LIBRARY (the file libporta links) are compiled in. The choice is
// read through dlsym, since libporta is loaded here, not linked. Exit status: 0 passed, 1 failed,
// 77 skipped (no AVX, where Prescott is the right core; an OpenBLAS without DYNAMIC_ARCH).
#include <dlfcn.h>
#include <strings.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/cpu_blas.hpp"

namespace pcpu = porta::detail::cpu;

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what.c_str());
    ++failures;
  }
}

// C = A B (column-major m x k by k x n, as Fortran BLAS) through the library's own gemm, against
// a double-precision reference with the usual (k + 3) eps sum |a b| bound.
template <class T>
void check_gemm(void* blas, const char* name) {
  using Gemm = void (*)(const char*, const char*, const int*, const int*, const int*, const T*, const T*, const int*,
                        const T*, const int*, const T*, T*, const int*, std::size_t, std::size_t);
  const auto gemm = reinterpret_cast<Gemm>(::dlsym(blas, name));
  check(gemm != nullptr, std::string(name) + " in the BLAS");
  if (gemm == nullptr) return;
  const int m = 67, k = 389, n = 45;
  std::vector<T> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(k) * n), c(m * n, T(NAN));
  unsigned s = 12345;
  auto next = [&s] { return static_cast<T>((s = s * 1103515245u + 12345u) >> 16 & 0x7fff) / T(32768) - T(0.5); };
  for (T& x : a) x = next();
  for (T& x : b) x = next();
  const T one = 1, zero = 0;
  gemm("N", "N", &m, &n, &k, &one, a.data(), &m, b.data(), &k, &zero, c.data(), &m, 1, 1);
  double worst = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double ref = 0, mag = 0;
      for (int p = 0; p < k; ++p) {
        const double t = static_cast<double>(a[i + p * m]) * static_cast<double>(b[p + j * k]);
        ref += t, mag += std::fabs(t);
      }
      const double bound = (k + 3) * static_cast<double>(std::numeric_limits<T>::epsilon()) * mag;
      const double err = std::fabs(static_cast<double>(c[i + j * m]) - ref);
      if (!(err <= bound)) worst = std::max(worst, std::isnan(err) ? INFINITY : err / bound);
    }
  check(worst == 0, std::string(name) + " on the re-selected core is off by " + std::to_string(worst) + "x its bound");
}

}  // namespace

int main() {
  ::setenv("OPENBLAS_CORETYPE", "Prescott", 1);
  void* blas = ::dlopen(PORTA_OPENBLAS_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
  ::unsetenv("OPENBLAS_CORETYPE");
  void* porta = blas != nullptr ? ::dlopen(PORTA_LIBRARY, RTLD_NOW) : nullptr;
  if (blas == nullptr || porta == nullptr) {
    std::fprintf(stderr, "FAILED: dlopen: %s\n", ::dlerror());
    return 1;
  }
  using ChoiceFn = const pcpu::GemmChoice& (*)();
  using IsaFn = const pcpu::CpuIsa& (*)();
  using NameFn = const char* (*)(pcpu::IsaLevel);
  const auto choice = reinterpret_cast<ChoiceFn>(::dlsym(porta, "_ZN5porta6detail3cpu11gemm_choiceEv"));
  const auto isa = reinterpret_cast<IsaFn>(::dlsym(porta, "_ZN5porta6detail3cpu7cpu_isaEv"));
  const auto level_name =
      reinterpret_cast<NameFn>(::dlsym(porta, "_ZN5porta6detail3cpu14isa_level_nameENS1_8IsaLevelE"));
  if (choice == nullptr || isa == nullptr || level_name == nullptr) {
    std::fprintf(stderr, "FAILED: porta::detail::cpu::gemm_choice / cpu_isa / isa_level_name not found in %s\n",
                 PORTA_LIBRARY);
    return 1;
  }
  const pcpu::GemmChoice& g = choice();
  const pcpu::CpuIsa& cpu = isa();
  std::printf("CPU %s: %s (%s)\nOpenBLAS core %s, at load %s; f32 %s, f64 %s\n%s\n", cpu.brand.c_str(),
              level_name(cpu.level), cpu.features.c_str(), g.core.c_str(), g.core_at_load.c_str(), g.f32.c_str(),
              g.f64.c_str(), g.reason.c_str());
  if (cpu.level == pcpu::IsaLevel::baseline) {
    std::printf("skipped: this CPU has no AVX, so Prescott is its core\n");
    return 77;
  }
  check(g.openblas, "OpenBLAS found");
  if (g.openblas && ::strcasecmp(g.core_at_load.c_str(), "Prescott") != 0) {
    std::printf("skipped: this OpenBLAS ignores OPENBLAS_CORETYPE (one core, not DYNAMIC_ARCH)\n");
    return 77;
  }
  check(g.core_reselected, "porta re-selected the core");
  check(::strcasecmp(g.core.c_str(), "Prescott") != 0, "OpenBLAS no longer runs Prescott");
  check(!g.coretype_env, "porta saw no OPENBLAS_CORETYPE");
  check(std::getenv("OPENBLAS_CORETYPE") == nullptr, "OPENBLAS_CORETYPE is unset again");
  check(g.path == pcpu::GemmPath::blas, "float and double gemm call OpenBLAS");
  check(g.f32 == "OpenBLAS (" + g.core + ")" && g.f64 == g.f32, "the path names the core");
  check_gemm<float>(blas, "sgemm_");
  check_gemm<double>(blas, "dgemm_");
  std::printf("%s\n", failures == 0 ? "passed" : "FAILED");
  return failures == 0 ? 0 : 1;
}
