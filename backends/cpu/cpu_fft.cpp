// SPDX-License-Identifier: Apache-2.0
// The fft entry of the CPU backend: the checks, then the build of porta's FFT engine
// (cpu_fft_engine.inc) for the instruction set this CPU runs best.
#include <cstdint>

#include "backends/cpu/cpu_common.hpp"
#include "backends/cpu/cpu_isa.hpp"
#include "backends/cpu/cpu_kernels.hpp"

namespace porta::detail::cpu {

#define PORTA_DECLARE_FFT_ENGINE(isa)                                                                            \
  namespace isa {                                                                                                \
  void fft_run(porta_fft_kind kind, int rank, const std::int64_t* n, std::int64_t batch, const void* x, void* y, \
               double scale, bool f32);                                                                          \
  }
PORTA_DECLARE_FFT_ENGINE(base)
#if defined(PORTA_GEMM_X86_DISPATCH)
PORTA_DECLARE_FFT_ENGINE(avx2)
PORTA_DECLARE_FFT_ENGINE(avx512)
#endif
#undef PORTA_DECLARE_FFT_ENGINE

namespace {
IsaLevel fft_level() noexcept {
#if defined(PORTA_GEMM_X86_DISPATCH)
  const IsaLevel level = cpu_isa().level;
  return level == IsaLevel::avx ? IsaLevel::baseline : level;  // no build for plain AVX
#else
  return IsaLevel::baseline;
#endif
}
}  // namespace

const char* fft_engine_isa() noexcept {
  return isa_level_name(fft_level());
}

porta_status fft(int dev, porta_fft_kind kind, porta_dtype dt, std::int32_t rank, std::int64_t n0, std::int64_t n1,
                 std::int64_t n2, std::int64_t batch, const void* x, void* y, double scale, porta_stream) noexcept {
  constexpr const char* fn = "fft";
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  backend::check::FftSizes z;
  if (porta_status st = check::fft(kind, dt, rank, n0, n1, n2, batch, x, y, scale, &z); st != PORTA_OK) return st;
  if (batch == 0) return PORTA_OK;
  PORTA_CPU_TRY
  const porta_fft_kind k = static_cast<porta_fft_kind>(raw_enum(kind));
  const bool f32 = dt == PORTA_F32;
#if defined(PORTA_GEMM_X86_DISPATCH)
  const IsaLevel level = fft_level();
  if (level == IsaLevel::avx512)
    avx512::fft_run(k, rank, z.n, batch, x, y, scale, f32);
  else if (level == IsaLevel::avx2)
    avx2::fft_run(k, rank, z.n, batch, x, y, scale, f32);
  else
#endif
    base::fft_run(k, rank, z.n, batch, x, y, scale, f32);
  return PORTA_OK;
  PORTA_CPU_CATCH(fn)
}

}  // namespace porta::detail::cpu
