// SPDX-License-Identifier: Apache-2.0
// CPUID and XGETBV, read directly rather than through the CPU model: virtual machines and CI
// runners often hide the model ("Intel(R) Xeon(R) Processor", a family/model pair that no table
// knows) while passing the instruction sets through, and a model table is what made OpenBLAS run
// SSE3 kernels on AVX-512 machines.
#include "cpu_isa.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define PORTA_CPU_X86 1
#endif

namespace porta::detail::cpu {

const char* isa_level_name(IsaLevel level) noexcept {
  switch (level) {
    case IsaLevel::avx512:
      return "avx512";
    case IsaLevel::avx2:
      return "avx2+fma";
    case IsaLevel::avx:
      return "avx";
    case IsaLevel::baseline:
      break;
  }
  return "baseline";
}

namespace {

#if defined(PORTA_CPU_X86)
struct Regs {
  unsigned a = 0, b = 0, c = 0, d = 0;
};

Regs cpuid(unsigned leaf, unsigned sub = 0) {
  Regs r;
  if (__get_cpuid_count(leaf, sub, &r.a, &r.b, &r.c, &r.d) == 0) r = Regs{};
  return r;
}

// XCR0: which register states the OS saves on a context switch. Only valid when CPUID says the OS
// enabled XSAVE (OSXSAVE); the instruction is emitted as bytes so that no -mxsave is needed.
std::uint64_t xcr0() {
  unsigned lo = 0, hi = 0;
  __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}

CpuIsa detect() {
  CpuIsa r;
  r.x86 = true;
  const Regs v = cpuid(0);
  char vendor[13] = {};
  std::memcpy(vendor, &v.b, 4);
  std::memcpy(vendor + 4, &v.d, 4);
  std::memcpy(vendor + 8, &v.c, 4);
  r.vendor = vendor;
  const unsigned max_leaf = v.a;

  const Regs l1 = cpuid(1);
  const unsigned fam = (l1.a >> 8) & 0xf, model = (l1.a >> 4) & 0xf;
  r.family = static_cast<int>(fam == 0xf ? fam + ((l1.a >> 20) & 0xff) : fam);
  r.model = static_cast<int>(fam == 0x6 || fam == 0xf ? model + (((l1.a >> 16) & 0xf) << 4) : model);
  const Regs l7 = max_leaf >= 7 ? cpuid(7, 0) : Regs{};

  const bool osxsave = (l1.c >> 27) & 1;
  const std::uint64_t xcr = osxsave ? xcr0() : 0;
  r.os_ymm = (xcr & 0x6) == 0x6;                // SSE and AVX state
  r.os_zmm = r.os_ymm && (xcr & 0xe0) == 0xe0;  // opmask, upper zmm0-15, zmm16-31

  const bool sse3 = l1.c & 1, ssse3 = (l1.c >> 9) & 1, sse41 = (l1.c >> 19) & 1, sse42 = (l1.c >> 20) & 1;
  const bool cpu_avx = (l1.c >> 28) & 1, cpu_fma = (l1.c >> 12) & 1, cpu_avx2 = (l7.b >> 5) & 1;
  const bool f = (l7.b >> 16) & 1, dq = (l7.b >> 17) & 1, cd = (l7.b >> 28) & 1, bw = (l7.b >> 30) & 1,
             vl = (l7.b >> 31) & 1;
  r.avx = cpu_avx && r.os_ymm;
  r.fma = cpu_fma && r.os_ymm;
  r.avx2 = cpu_avx2 && r.os_ymm;
  r.avx512 = f && cd && bw && dq && vl && r.os_zmm;
  r.level = r.avx512 && r.avx2 && r.fma ? IsaLevel::avx512
            : r.avx2 && r.fma           ? IsaLevel::avx2
            : r.avx                     ? IsaLevel::avx
                                        : IsaLevel::baseline;

  const struct {
    bool has;
    const char* name;
  } listed[] = {{sse3, "sse3"},   {ssse3, "ssse3"}, {sse41, "sse4.1"},  {sse42, "sse4.2"},
                {cpu_avx, "avx"}, {cpu_fma, "fma"}, {cpu_avx2, "avx2"}, {f, "avx512f"},
                {cd, "avx512cd"}, {bw, "avx512bw"}, {dq, "avx512dq"},   {vl, "avx512vl"}};
  std::string& s = r.features;
  for (const auto& x : listed)
    if (x.has) s += std::string(s.empty() ? "" : " ") + x.name;
  s += osxsave ? (r.os_zmm   ? "; OS saves ymm and zmm state"
                  : r.os_ymm ? "; OS saves ymm state, not zmm"
                             : "; OS saves no ymm state")
               : "; OS has not enabled XSAVE";

  if (cpuid(0x80000000).a >= 0x80000004) {
    char brand[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
      const Regs b = cpuid(0x80000002 + i);
      std::memcpy(brand + 16 * i, &b, 16);
    }
    const char* p = brand;
    while (*p == ' ') ++p;
    r.brand = p;
  }
  return r;
}
#else
CpuIsa detect() {
  return CpuIsa{};
}
#endif

}  // namespace

const CpuIsa& cpu_isa() noexcept {
  static const CpuIsa value = [] {
    try {
      return detect();
    } catch (...) {  // std::string out of memory: report nothing rather than throw from here
      return CpuIsa{};
    }
  }();
  return value;
}

IsaLevel own_kernel_level() noexcept {
  static const IsaLevel value = [] {
    IsaLevel best = IsaLevel::baseline;
#if defined(PORTA_GEMM_X86_DISPATCH)
    const IsaLevel cpu = cpu_isa().level;
    if (cpu == IsaLevel::avx2 || cpu == IsaLevel::avx512) best = cpu;
#endif
    if (const char* cap = std::getenv("PORTA_CPU_GEMM_ISA")) {
      if (std::strcmp(cap, "base") == 0) best = IsaLevel::baseline;
      if (std::strcmp(cap, "avx2") == 0 && best == IsaLevel::avx512) best = IsaLevel::avx2;
    }
    return best;
  }();
  return value;
}

}  // namespace porta::detail::cpu
