// SPDX-License-Identifier: Apache-2.0
// map_program of the CPU backend (issue 16, fused expressions): a postfix program interpreted over
// blocks of kProgramBlock elements. Each op runs over a whole block, so the op switch is taken once
// per block and per op, and the inner loop is the op's functor over a plain array, which the
// compiler vectorises as it does the single maps of cpu_maps.cpp; blocks are split across the
// OpenMP team. Every op is the functor of porta/detail/ops.hpp (backends/common/elementwise_ops.hpp), each
// result stored to T before the next op reads it, and -ffp-contract=off: the bits of the ops run
// one map at a time.
#include <cstring>
#include <type_traits>

#include "backends/common/elementwise_ops.hpp"
#include "backends/common/program.hpp"
#include "cpu_common.hpp"
#include "cpu_kernels.hpp"
#include "cpu_math.hpp"

namespace porta::detail::cpu {
namespace {

// 256 elements: a stack of 8 blocks of doubles is 16 KiB, in L1 beside the inputs' lines.
constexpr std::int64_t kProgramBlock = 256;

template <class T>
void run_block(const porta_program_op* ops, std::int32_t nops, const T* const* in, std::int64_t i0, std::int64_t len,
               T* y) {
  alignas(64) T stack[PORTA_PROGRAM_MAX_STACK][kProgramBlock];
  int sp = 0;
  for (std::int32_t k = 0; k < nops; ++k) {
    const porta_program_op& op = ops[k];
    switch (op.kind) {
      case PORTA_PROGRAM_INPUT:
        std::memcpy(stack[sp++], in[op.arg] + i0, static_cast<std::size_t>(len) * sizeof(T));
        break;
      case PORTA_PROGRAM_SCALAR: {
        const T v = scalar_value<T>(op.value);
        T* s = stack[sp++];
        PORTA_SIMD
        for (std::int64_t i = 0; i < len; ++i) s[i] = v;
        break;
      }
      case PORTA_PROGRAM_UNARY: {
        T* a = stack[sp - 1];
        // The eager map's functions and loops (cpu_math.cpp), so that fusing changes no bits.
        if constexpr (std::is_floating_point_v<T>) {
          const auto uop = static_cast<porta_unary_op>(op.arg);
          if (math_handles(uop, std::is_same_v<T, float> ? PORTA_F32 : PORTA_F64)) {
            math_block(uop, a, a, len);
            break;
          }
        }
        backend::with_unary_op(static_cast<porta_unary_op>(op.arg), 0, [&](auto f) {
          PORTA_SIMD
          for (std::int64_t i = 0; i < len; ++i) a[i] = f(a[i]);
          return 0;
        });
        break;
      }
      default: {  // PORTA_PROGRAM_BINARY(_REV) (the check allowed nothing else)
        T* a = stack[sp - 2];
        const T* b = stack[sp - 1];
        const bool rev = op.kind == PORTA_PROGRAM_BINARY_REV;
        backend::with_binary_op(static_cast<porta_binary_op>(op.arg), 0, [&](auto f) {
          if (rev) {
            PORTA_SIMD
            for (std::int64_t i = 0; i < len; ++i) a[i] = f(b[i], a[i]);
          } else {
            PORTA_SIMD
            for (std::int64_t i = 0; i < len; ++i) a[i] = f(a[i], b[i]);
          }
          return 0;
        });
        --sp;
        break;
      }
    }
  }
  std::memcpy(y + i0, stack[0], static_cast<std::size_t>(len) * sizeof(T));
}

}  // namespace

porta_status map_program(int dev, porta_dtype dt, std::int64_t n, const porta_program_op* ops, std::int32_t nops,
                         const void* const* inputs, std::int32_t ninputs, void* y, porta_stream) noexcept {
  constexpr const char* fn = "map_program";
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  if (porta_status st = backend::check::map_program(dt, n, ops, nops, inputs, ninputs, y); st != PORTA_OK) return st;
  if (n == 0) return PORTA_OK;
  PORTA_CPU_TRY
  with_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    const T* in[PORTA_PROGRAM_MAX_INPUTS] = {};
    for (std::int32_t k = 0; k < ninputs; ++k) in[k] = static_cast<const T*>(inputs[k]);
    T* out = static_cast<T*>(y);
    // Programs with a transcendental op or integer math through double cost like those ops.
    const std::int64_t blocks = (n + kProgramBlock - 1) / kProgramBlock;
    parallel_ranges(
        blocks, kGrainTranscendental / kProgramBlock * 4,
        [&](std::int64_t b0, std::int64_t b1) {
          for (std::int64_t b = b0; b < b1; ++b) {
            const std::int64_t i0 = b * kProgramBlock;
            run_block<T>(ops, nops, in, i0, std::min(kProgramBlock, n - i0), out);
          }
        },
        1);
  });
  return PORTA_OK;
  PORTA_CPU_CATCH(fn)
}

}  // namespace porta::detail::cpu
