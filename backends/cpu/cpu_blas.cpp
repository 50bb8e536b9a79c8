// SPDX-License-Identifier: Apache-2.0
// Which BLAS libporta runs on, and whether it is fast on this CPU.
//
// OpenBLAS built with DYNAMIC_ARCH (every distribution's) picks its kernels once, in its load-time
// constructor, from the CPU's family and model. A model its tables do not know (a newer CPU, or a
// virtual machine that reports "Intel(R) Xeon(R) Processor") makes it fall back to Prescott, the
// SSE3 kernels: 4 floats a vector where the CPU has 16, about 5x slower than the right core on a
// 16-core AVX-512 machine. So, once, when libporta is loaded:
//
//   - the CPU's levels come from CPUID and XGETBV (cpu_isa.cpp), and the core OpenBLAS runs from
//     openblas_get_corename(), both resolved with dlsym in the library that holds sgemm_ (any other
//     BLAS has no such symbol and is called as is);
//   - if that core is weaker than the CPU and OPENBLAS_CORETYPE is not set, porta re-runs OpenBLAS's
//     own core selection with OPENBLAS_CORETYPE naming the core for the CPU's level (SkylakeX, Haswell
//     or Zen, Sandybridge): gotoblas_dynamic_quit() and gotoblas_dynamic_init(), which DYNAMIC_ARCH
//     builds export and which are what its constructor runs; the variable is unset again afterwards.
//     This changes OpenBLAS for the whole process, so the user's own BLAS calls get the core too;
//   - if OPENBLAS_CORETYPE is set, porta never overrides it (some OpenBLAS builds crash on some CPUs
//     with the core they would pick, and this is how users steer them). When the core it names, or
//     the one OpenBLAS ended on, is weaker than porta's own kernel, float and double gemm take
//     porta's kernel instead; the BLAS is left to the user's own calls.
//
// Why not set OPENBLAS_CORETYPE and load OpenBLAS with dlopen at first use: what OpenBLAS would
// pick is only known once it is loaded, so porta would have to force a core on every machine,
// overriding correct choices, and a program that links OpenBLAS itself has it loaded before porta
// runs. Re-selecting changes only what is known to be wrong. It runs at load, not at the first gemm,
// so that no other thread can be inside OpenBLAS while the core changes; libporta's constructors run
// after those of the libraries it depends on, OpenBLAS's included.
#include "cpu_blas.hpp"

#include <dlfcn.h>

#include <strings.h>
#include <cstdlib>
#include <cstring>

#include "cpu_kernels.hpp"

namespace porta::detail::cpu {
namespace {

#if defined(PORTA_HAVE_BLAS)
// The library that defines the sgemm_ libporta calls: its handle finds OpenBLAS's own functions
// even where another library in the process exports the same names. RTLD_DEFAULT when sgemm_ is
// in the executable (a static BLAS).
void* blas_handle() {
  static void* const handle = [] {
    Dl_info info;
    if (::dladdr(reinterpret_cast<void*>(&sgemm_), &info) != 0 && info.dli_fname != nullptr)
      if (void* h = ::dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)) return h;
    return RTLD_DEFAULT;
  }();
  return handle;
}

template <class Fn>
Fn blas_symbol(const char* name) {
  return reinterpret_cast<Fn>(::dlsym(blas_handle(), name));
}

// The core to ask OpenBLAS for on a CPU of this level, or nullptr. SkylakeX rather than Cooperlake
// on bf16 CPUs: the same float and double kernels, and no bf16 code that older builds got wrong.
const char* core_for(const CpuIsa& cpu) {
  switch (cpu.level) {
    case IsaLevel::avx512:
      return "SkylakeX";
    case IsaLevel::avx2:
      return cpu.vendor == "AuthenticAMD" || cpu.vendor == "HygonGenuine" ? "Zen" : "Haswell";
    case IsaLevel::avx:
      return "Sandybridge";
    case IsaLevel::baseline:
      break;
  }
  return nullptr;
}
#endif

struct CoreState {
  bool openblas = false;
  std::string at_load;
  bool env = false;
  std::string env_value;
  bool reselected = false;
};

CoreState select_core() {
  CoreState s;
#if defined(PORTA_HAVE_BLAS)
  using NameFn = char* (*)();
  using VoidFn = void (*)();
  const NameFn corename = blas_symbol<NameFn>("openblas_get_corename");
  if (corename == nullptr || corename() == nullptr) return s;
  s.openblas = true;
  s.at_load = corename();
  if (const char* env = std::getenv("OPENBLAS_CORETYPE")) s.env = true, s.env_value = env;
  IsaLevel have;
  const CpuIsa& cpu = cpu_isa();
  const char* target = core_for(cpu);
  if (s.env || target == nullptr || !openblas_core_level(s.at_load, have) || have >= cpu.level) return s;
  const VoidFn quit = blas_symbol<VoidFn>("gotoblas_dynamic_quit");
  const VoidFn init = blas_symbol<VoidFn>("gotoblas_dynamic_init");
  if (quit == nullptr || init == nullptr) return s;  // not a DYNAMIC_ARCH build: one core only
  if (::setenv("OPENBLAS_CORETYPE", target, 1) != 0) return s;
  quit();
  init();
  ::unsetenv("OPENBLAS_CORETYPE");
  s.reselected = true;
#endif
  return s;
}

const CoreState& core_state() {
  static const CoreState s = [] {
    try {
      return select_core();
    } catch (...) {  // out of memory for a name, while the library loads: leave OpenBLAS as it is
      return CoreState{};
    }
  }();
  return s;
}

// Runs select_core() while libporta is being loaded (see the top of the file).
[[maybe_unused]] const bool kCoreSelectedAtLoad = (core_state(), true);

std::string core_now() {
#if defined(PORTA_HAVE_BLAS)
  if (const auto corename = blas_symbol<char* (*)()>("openblas_get_corename"))
    if (const char* c = corename()) return c;
#endif
  return {};
}

GemmChoice decide() {
  GemmChoice g;
  const CpuIsa& cpu = cpu_isa();
  const CoreState& st = core_state();
  g.own_level = own_kernel_level();
  const std::string own = std::string("porta kernel (") + isa_level_name(g.own_level) + ")";
  g.openblas = st.openblas;
  g.core_at_load = st.at_load;
  g.core = core_now();
  g.core_reselected = st.reselected;
  g.coretype_env = st.env;
  g.coretype = st.env_value;
  g.path = GemmPath::blas;
#if defined(PORTA_HAVE_BLAS)
  IsaLevel core = IsaLevel::baseline;
  const bool known = g.openblas && openblas_core_level(g.core, core);
  const std::string here = std::string("this CPU's ") + isa_level_name(cpu.level);
  const std::string runs = "OpenBLAS runs " + g.core + " (" + isa_level_name(core) + ")";
  if (!g.openblas) {
    g.reason = "not OpenBLAS (no openblas_get_corename): called as is";
  } else if (!known) {
    g.reason = "OpenBLAS runs " + g.core + ", a core porta has no level for: called as is";
  } else if (core > cpu.level) {
    // OPENBLAS_CORETYPE names kernels this CPU cannot run: an illegal instruction at the first call.
    g.path = GemmPath::own;
    g.reason = runs + ", beyond " + here;
  } else if (core == cpu.level) {
    g.reason = st.reselected ? "OpenBLAS chose " + st.at_load + " on " + here + "; porta re-selected " + g.core
                             : runs + ", which matches " + here;
  } else if (core >= g.own_level) {
    g.reason = runs + " on " + here + ", as fast as porta's kernel here";
  } else {
    g.path = GemmPath::own;
    g.reason = runs + " on " + here;
    if (st.env)
      g.reason += "; OPENBLAS_CORETYPE=" + st.env_value + " is set, and porta does not override it";
    else if (st.reselected)
      g.reason += "; porta asked it for " + std::string(core_for(cpu)) + ", which this build lacks";
    else
      g.reason += "; this build cannot change its core (not DYNAMIC_ARCH)";
  }
#else
  (void)cpu;
  g.path = GemmPath::own;
  g.reason = "porta was built without BLAS";
#endif
  g.f32 = g.f64 = g.path == GemmPath::own ? own : g.openblas ? "OpenBLAS (" + g.core + ")" : std::string("BLAS");
  return g;
}

}  // namespace

const BlasRuntime& blas_runtime() noexcept {
  static const BlasRuntime rt = [] {
    BlasRuntime r;
#if defined(PORTA_HAVE_BLAS)
    using GetIntFn = int (*)();
    const GetIntFn parallel = blas_symbol<GetIntFn>("openblas_get_parallel");
    if (parallel == nullptr) return r;
    const int p = parallel();
    r.kind = p == 0   ? BlasThreads::sequential
             : p == 1 ? BlasThreads::pthreads
             : p == 2 ? BlasThreads::openmp
                      : BlasThreads::unknown;
    r.set = blas_symbol<void (*)(int)>("openblas_set_num_threads");
    r.get = blas_symbol<GetIntFn>("openblas_get_num_threads");
    if (r.kind == BlasThreads::pthreads && (r.set == nullptr || r.get == nullptr)) r.kind = BlasThreads::unknown;
#endif
    return r;
  }();
  return rt;
}

const GemmChoice& gemm_choice() noexcept {
  static const GemmChoice value = [] {
    try {
      return decide();
    } catch (...) {  // out of memory for the strings: porta's kernel, which needs no BLAS facts
      GemmChoice g;
      g.own_level = own_kernel_level();
      return g;
    }
  }();
  return value;
}

bool openblas_core_level(const std::string& core, IsaLevel& level) noexcept {
  static const struct {
    const char* name;
    IsaLevel level;
  } cores[] = {
      {"SkylakeX", IsaLevel::avx512},
      {"Cooperlake", IsaLevel::avx512},
      {"SapphireRapids", IsaLevel::avx512},
      {"Haswell", IsaLevel::avx2},
      {"Zen", IsaLevel::avx2},
      {"Sandybridge", IsaLevel::avx},
      {"Bulldozer", IsaLevel::avx},
      {"Piledriver", IsaLevel::avx},
      {"Steamroller", IsaLevel::avx},
      {"Excavator", IsaLevel::avx},
      {"Prescott", IsaLevel::baseline},
      {"Core2", IsaLevel::baseline},
      {"Penryn", IsaLevel::baseline},
      {"Dunnington", IsaLevel::baseline},
      {"Nehalem", IsaLevel::baseline},
      {"Atom", IsaLevel::baseline},
      {"Nano", IsaLevel::baseline},
      {"Opteron", IsaLevel::baseline},
      {"Opteron_SSE3", IsaLevel::baseline},
      {"Barcelona", IsaLevel::baseline},
      {"Bobcat", IsaLevel::baseline},
      {"Katmai", IsaLevel::baseline},
      {"Coppermine", IsaLevel::baseline},
      {"Northwood", IsaLevel::baseline},
      {"Banias", IsaLevel::baseline},
      {"Athlon", IsaLevel::baseline},
      {"Generic", IsaLevel::baseline},
      {"Unknown", IsaLevel::baseline},
  };
  if (!cpu_isa().x86) return false;
  for (const auto& c : cores)
    if (::strcasecmp(core.c_str(), c.name) == 0) return level = c.level, true;
  return false;
}

const char* blas_description() noexcept {
  static const std::string text = []() -> std::string {
#if defined(PORTA_HAVE_BLAS)
    std::string s;
    if (const auto config = blas_symbol<char* (*)()>("openblas_get_config")) {
      s = config();
#if defined(_OPENMP)
      constexpr const char* pthreads = " (pthreads; run one-threaded per block of C by porta's OpenMP threads)";
#else
      constexpr const char* pthreads = " (pthreads; its own thread pool, porta has no OpenMP)";
#endif
      switch (blas_runtime().kind) {
        case BlasThreads::sequential:
          s += " (sequential)";
          break;
        case BlasThreads::pthreads:
          s += pthreads;
          break;
        case BlasThreads::openmp:
          s += " (OpenMP; its threads are porta's OpenMP threads)";
          break;
        default:
          break;
      }
    } else {
      s = "Fortran BLAS";
    }
    Dl_info info;
    if (::dladdr(reinterpret_cast<void*>(&sgemm_), &info) != 0 && info.dli_fname != nullptr) {
      s += " in ";
      s += info.dli_fname;
    }
    const GemmChoice& g = gemm_choice();
    if (g.core_reselected) s += ", core re-selected by porta (OpenBLAS chose " + g.core_at_load + ")";
    if (g.path == GemmPath::own) s += ", not used for gemm (" + g.reason + ")";
    return s;
#else
    return "none (porta's own kernel)";
#endif
  }();
  return text.c_str();
}

}  // namespace porta::detail::cpu
