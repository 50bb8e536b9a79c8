// SPDX-License-Identifier: Apache-2.0
// map_program of the CPU backend (fused expressions): a postfix program run over the elements in one
// pass, split, vectorised and stored as the eager maps are (cpu_map_common.hpp). Every op is the
// functor of porta/detail/ops.hpp (backends/common/elementwise_ops.hpp), each result rounded to T
// before the next op reads it, and -ffp-contract=off: the bits of the ops run one map at a time.
//
// Two ways to run a program:
//
// - Sums of scaled arrays, the commonest fused expressions (BabelStream's triad b + s*c and nstream
//   a + (b + s*c), axpy-like updates, x*a + y*b): two or three terms, each an input or a scalar times
//   an input, joined by + and -. They run as one loop compiled for the shape, every value in
//   registers, as a hand-written loop would. An input alone is run as 1 * x, which is x bit for bit
//   (x * 1 is exact, and the sum it joins quietens a signalling NaN either way), so 12 loops per
//   dtype serve every such sum. The operands of + and * may be swapped relative to the expression:
//   IEEE + and * are commutative, up to which NaN's payload a NaN + NaN keeps (not something porta
//   promises: GCC swaps them too, GPUs return one canonical NaN).
// - Every other program is interpreted over blocks of kProgramBlock elements: each op runs over a
//   whole block, so the op switch is taken once per block and op, and its loop is the op's functor
//   over plain arrays, which vectorises. Inputs are read where they are, scalars stay scalars, and
//   the last op writes the output; only the values in between go through L1 tiles.
#include <cstring>
#include <type_traits>

#include "backends/common/elementwise_ops.hpp"
#include "backends/common/program.hpp"
#include "cpu_common.hpp"
#include "cpu_kernels.hpp"
#include "cpu_map_common.hpp"
#include "cpu_math.hpp"

namespace porta::detail::cpu {
namespace {

// ---- sums of scaled inputs --------------------------------------------------------------------------
struct AddStep {
  template <class T>
  PORTA_MAP_INLINE T operator()(T acc, T t) const {
    return AddOp{}(acc, t);
  }
};
struct SubStep {
  template <class T>
  PORTA_MAP_INLINE T operator()(T acc, T t) const {
    return SubOp{}(acc, t);
  }
};
struct RevSubStep {
  template <class T>
  PORTA_MAP_INLINE T operator()(T acc, T t) const {
    return SubOp{}(t, acc);
  }
};
struct NoStep {};

// y = (s[0] x[0] step1 s[1] x[1]) step2 s[2] x[2]; step2 absent for two terms.
template <class T>
struct ScaledSum {
  const T* x[3];
  T s[3];
  int terms;
  int step[2];  // 0: acc + t, 1: acc - t, 2: t - acc
};

template <class T, class Step1, class Step2>
PORTA_MAP_CLONES void scaled_sum_range(ScaledSum<T> p, T* y, std::int64_t lo, std::int64_t hi, bool stream) {
  write_range(y, lo, hi, stream, [&p](T* dst, std::int64_t i0, std::int64_t len) {
    const T *x0 = p.x[0] + i0, *x1 = p.x[1] + i0, *x2 = p.x[2] + i0;
    const T s0 = p.s[0], s1 = p.s[1], s2 = p.s[2];
    // The products without MulOp's NaN canonicalisation: the steps canonicalise what they add, which
    // gives the same bits (a NaN's payload never decides whether the sum is a NaN) for one compare
    // and blend per vector and step instead of one more per term.
    const auto mul = [](T a, T b) { return mul_rn(a, b); };
    PORTA_SIMD
    for (std::int64_t j = 0; j < len; ++j) {
      T acc = Step1{}(mul(s0, x0[j]), mul(s1, x1[j]));
      if constexpr (!std::is_same_v<Step2, NoStep>) acc = Step2{}(acc, mul(s2, x2[j]));
      dst[j] = acc;
    }
  });
}

template <class F>
void with_step(int step, F&& f) {
  if (step == 0) return f(AddStep{});
  if (step == 1) return f(SubStep{});
  return f(RevSubStep{});
}

// The program's tree: node k is op k, its operands earlier nodes.
struct Node {
  std::int32_t kind, arg, left, right;
};

// Parses the (checked) postfix program into nodes; returns the root.
std::int32_t parse(const porta_program_op* ops, std::int32_t nops, Node* nodes) {
  std::int32_t stack[PORTA_PROGRAM_MAX_STACK] = {};
  int sp = 0;
  for (std::int32_t k = 0; k < nops; ++k) {
    Node& nd = nodes[k];
    nd = Node{ops[k].kind, ops[k].arg, -1, -1};
    if (nd.kind == PORTA_PROGRAM_UNARY) {
      nd.left = stack[sp - 1];
      --sp;
    } else if (nd.kind == PORTA_PROGRAM_BINARY) {
      nd.left = stack[sp - 2], nd.right = stack[sp - 1];
      sp -= 2;
    } else if (nd.kind == PORTA_PROGRAM_BINARY_REV) {  // the right operand was evaluated first
      nd.left = stack[sp - 1], nd.right = stack[sp - 2];
      sp -= 2;
    }
    stack[sp++] = k;
  }
  return stack[0];
}

bool is_binary(const Node& nd, porta_binary_op op) {
  return (nd.kind == PORTA_PROGRAM_BINARY || nd.kind == PORTA_PROGRAM_BINARY_REV) && nd.arg == op;
}

// Node k as a term s * x (an input alone: s = 1).
template <class T>
bool as_term(const porta_program_op* ops, const Node* nodes, std::int32_t k, const T* const* in, const T** x, T* s) {
  const Node& nd = nodes[k];
  if (nd.kind == PORTA_PROGRAM_INPUT) {
    *x = in[nd.arg], *s = T(1);
    return true;
  }
  if (!is_binary(nd, PORTA_BINARY_MUL)) return false;
  const Node &l = nodes[nd.left], &r = nodes[nd.right];
  const bool ls = l.kind == PORTA_PROGRAM_SCALAR, rs = r.kind == PORTA_PROGRAM_SCALAR;
  if (ls && r.kind == PORTA_PROGRAM_INPUT) {
    *x = in[r.arg], *s = scalar_value<T>(ops[nd.left].value);
    return true;
  }
  if (rs && l.kind == PORTA_PROGRAM_INPUT) {
    *x = in[l.arg], *s = scalar_value<T>(ops[nd.right].value);
    return true;
  }
  return false;
}

// Node k as t0 +- t1: the first two terms and step of p.
template <class T>
bool as_pair(const porta_program_op* ops, const Node* nodes, std::int32_t k, const T* const* in, ScaledSum<T>& p) {
  const Node& nd = nodes[k];
  const bool add = is_binary(nd, PORTA_BINARY_ADD);
  if (!add && !is_binary(nd, PORTA_BINARY_SUB)) return false;
  p.step[0] = add ? 0 : 1;
  return as_term(ops, nodes, nd.left, in, &p.x[0], &p.s[0]) && as_term(ops, nodes, nd.right, in, &p.x[1], &p.s[1]);
}

// The program as a sum of two or three scaled inputs, or false.
template <class T>
bool as_scaled_sum(const porta_program_op* ops, std::int32_t nops, const T* const* in, ScaledSum<T>& p) {
  if (nops > 11) return false;  // three scaled terms of three ops each, two joins
  Node nodes[PORTA_PROGRAM_MAX_OPS];
  const std::int32_t top = parse(ops, nops, nodes);
  const Node& root = nodes[top];
  if (as_pair(ops, nodes, top, in, p)) {
    p.terms = 2;
    p.step[1] = 0;
    p.x[2] = p.x[0], p.s[2] = T(0);  // unread
    return true;
  }
  const bool add = is_binary(root, PORTA_BINARY_ADD);
  if (!add && !is_binary(root, PORTA_BINARY_SUB)) return false;
  p.terms = 3;
  if (as_pair(ops, nodes, root.left, in, p) && as_term(ops, nodes, root.right, in, &p.x[2], &p.s[2])) {
    p.step[1] = add ? 0 : 1;  // (t0 +- t1) + t2, (t0 +- t1) - t2
    return true;
  }
  if (as_pair(ops, nodes, root.right, in, p) && as_term(ops, nodes, root.left, in, &p.x[2], &p.s[2])) {
    p.step[1] = add ? 0 : 2;  // t2 + (t0 +- t1), t2 - (t0 +- t1)
    return true;
  }
  return false;
}

// ---- the interpreter -----------------------------------------------------------------------------
// 256 elements: 8 tiles of doubles are 16 KiB, in L1 beside the inputs' lines.
constexpr std::int64_t kProgramBlock = 256;

// A value on the stack for the current block: its elements (an input where it is, or a tile), or
// one scalar.
template <class T>
struct Slot {
  const T* p;
  T v;
  bool scalar;
};

// One op over a block. These are the functions built per ISA: the op switch that calls them is too
// large to be inlined into a clone, and what is not inlined into one runs with the baseline ISA.
template <class T, class F>
PORTA_MAP_CLONES void unary_block(F f, Slot<T> a, T* d, std::int64_t len) {
  const T* ap = a.p;
  PORTA_SIMD
  for (std::int64_t i = 0; i < len; ++i) d[i] = f(ap[i]);
}

template <class T, class F>
PORTA_MAP_CLONES void binary_block(F f, Slot<T> a, Slot<T> b, T* d, std::int64_t len) {
  const T *ap = a.p, *bp = b.p;
  const T av = a.v, bv = b.v;
  if (a.scalar) {
    PORTA_SIMD
    for (std::int64_t i = 0; i < len; ++i) d[i] = f(av, bp[i]);
  } else if (b.scalar) {
    PORTA_SIMD
    for (std::int64_t i = 0; i < len; ++i) d[i] = f(ap[i], bv);
  } else {
    PORTA_SIMD
    for (std::int64_t i = 0; i < len; ++i) d[i] = f(ap[i], bp[i]);
  }
}

// Elements [i0, i0 + len) of the program into out (len <= kProgramBlock); tiles: the stack's
// blocks. out may be an input itself (y = f(y, ...)): each element is read before it is written.
template <class T>
void run_block(const porta_program_op* ops, std::int32_t nops, const T* const* in, std::int64_t i0, std::int64_t len,
               T* out, T (*tiles)[kProgramBlock]) {
  Slot<T> st[PORTA_PROGRAM_MAX_STACK];
  int sp = 0;
  for (std::int32_t k = 0; k < nops; ++k) {
    const porta_program_op& op = ops[k];
    switch (op.kind) {
      case PORTA_PROGRAM_INPUT:
        st[sp++] = Slot<T>{in[op.arg] + i0, T(0), false};
        break;
      case PORTA_PROGRAM_SCALAR:
        st[sp++] = Slot<T>{nullptr, scalar_value<T>(op.value), true};
        break;
      case PORTA_PROGRAM_UNARY: {
        Slot<T>& a = st[sp - 1];
        // The eager map's functions and loops (cpu_math.cpp), so that fusing changes no bits.
        if constexpr (std::is_floating_point_v<T>) {
          const auto uop = static_cast<porta_unary_op>(op.arg);
          if (math_handles(uop, std::is_same_v<T, float> ? PORTA_F32 : PORTA_F64)) {
            if (a.scalar) {
              a.v = math_scalar(uop, a.v);
            } else {
              T* d = k + 1 == nops ? out : tiles[sp - 1];
              math_block(uop, a.p, d, len);
              a.p = d;
            }
            break;
          }
        }
        backend::with_unary_op(static_cast<porta_unary_op>(op.arg), 0, [&](auto f) {
          if constexpr (op_defined_v<decltype(f), T>) {  // (the check refused the others)
            if (a.scalar) {
              a.v = f(a.v);
            } else {
              T* d = k + 1 == nops ? out : tiles[sp - 1];
              unary_block<T>(f, a, d, len);
              a.p = d;
            }
          }
          return 0;
        });
        break;
      }
      default: {  // PORTA_PROGRAM_BINARY(_REV) (the check allowed nothing else)
        const bool rev = op.kind == PORTA_PROGRAM_BINARY_REV;
        const Slot<T> a = rev ? st[sp - 1] : st[sp - 2], b = rev ? st[sp - 2] : st[sp - 1];
        Slot<T>& r = st[sp - 2];
        backend::with_binary_op(static_cast<porta_binary_op>(op.arg), 0, [&](auto f) {
          if constexpr (op_defined_v<decltype(f), T>) {
            if (a.scalar && b.scalar) {
              r = Slot<T>{nullptr, f(a.v, b.v), true};
            } else {
              T* d = k + 1 == nops ? out : tiles[sp - 2];
              binary_block<T>(f, a, b, d, len);
              r = Slot<T>{d, T(0), false};
            }
          }
          return 0;
        });
        --sp;
        break;
      }
    }
  }
  // A last op that left a scalar or an input on the stack has not written out yet.
  const Slot<T>& top = st[0];
  if (top.scalar) {
    const T v = top.v;
    PORTA_SIMD
    for (std::int64_t i = 0; i < len; ++i) out[i] = v;
  } else if (top.p != out) {
    std::memmove(out, top.p, static_cast<std::size_t>(len) * sizeof(T));
  }
}

template <class T>
void interpret_range(const porta_program_op* ops, std::int32_t nops, const T* const* in, T* y, std::int64_t lo,
                     std::int64_t hi, bool stream) {
  alignas(64) T tiles[PORTA_PROGRAM_MAX_STACK][kProgramBlock];
  write_range(y, lo, hi, stream, [&](T* dst, std::int64_t i0, std::int64_t len) {
    for (std::int64_t b = 0; b < len; b += kProgramBlock)
      run_block<T>(ops, nops, in, i0 + b, std::min(kProgramBlock, len - b), dst + b, tiles);
  });
}

// Whether an element of the program costs like a transcendental (libm calls, integer math through
// double, integer division) rather than like an add.
template <class T>
bool expensive_program(const porta_program_op* ops, std::int32_t nops) {
  for (std::int32_t k = 0; k < nops; ++k) {
    const porta_program_op& op = ops[k];
    if (op.kind == PORTA_PROGRAM_UNARY) {
      const bool cheap = op.arg == PORTA_UNARY_NEG || op.arg == PORTA_UNARY_ABS || op.arg == PORTA_UNARY_RELU ||
                         op.arg == PORTA_UNARY_SQUARE || op.arg == PORTA_UNARY_CONJ ||
                         (op.arg == PORTA_UNARY_SQRT && std::is_floating_point_v<T>);
      if (!cheap) return true;
    } else if (op.kind == PORTA_PROGRAM_BINARY || op.kind == PORTA_PROGRAM_BINARY_REV) {
      if (op.arg == PORTA_BINARY_POW || (op.arg == PORTA_BINARY_DIV && std::is_integral_v<T>)) return true;
    }
  }
  return false;
}

// The program over n elements of type T.
template <class T>
void run_program(std::int64_t n, const porta_program_op* ops, std::int32_t nops, const void* const* inputs,
                 std::int32_t ninputs, void* y) {
  const T* in[PORTA_PROGRAM_MAX_INPUTS] = {};
  for (std::int32_t k = 0; k < ninputs; ++k) in[k] = static_cast<const T*>(inputs[k]);
  T* out = static_cast<T*>(y);
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(T);
  bool out_is_input = false;
  for (std::int32_t k = 0; k < ninputs; ++k) out_is_input = out_is_input || bytes_overlap(out, bytes, in[k], bytes);
  const bool stream = stream_output(static_cast<double>(ninputs + 1) * static_cast<double>(bytes), out_is_input);
  const int threads = map_threads(n, expensive_program<T>(ops, nops));
  if constexpr (std::is_floating_point_v<T>) {
    ScaledSum<T> sum{};
    if (as_scaled_sum<T>(ops, nops, in, sum)) {
      with_step(sum.step[0], [&](auto s1) {
        const auto run = [&](auto s2) {
          map_split(n, threads, out, [&](std::int64_t lo, std::int64_t hi) {
            scaled_sum_range<T, decltype(s1), decltype(s2)>(sum, out, lo, hi, stream);
          });
        };
        if (sum.terms == 2) return run(NoStep{});
        with_step(sum.step[1], run);
      });
      return;
    }
  }
  map_split(n, threads, out,
            [&](std::int64_t lo, std::int64_t hi) { interpret_range<T>(ops, nops, in, out, lo, hi, stream); });
}

}  // namespace

porta_status map_program(int dev, porta_dtype dt, std::int64_t n, const porta_program_op* ops, std::int32_t nops,
                         const void* const* inputs, std::int32_t ninputs, void* y, porta_stream) noexcept {
  constexpr const char* fn = "map_program";
  if (porta_status st = check_device(dev, fn); st != PORTA_OK) return st;
  if (porta_status st = check::map_program(dt, n, ops, nops, inputs, ninputs, y); st != PORTA_OK) return st;
  if (n == 0) return PORTA_OK;
  PORTA_CPU_TRY
  porta_status status = PORTA_OK;
  const bool known = with_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!op_defined_v<ProgramFamily, T>) {
      status = unsupported_dtype(fn, dt);
    } else {
      run_program<T>(n, ops, nops, inputs, ninputs, y);
    }
  });
  return known ? status : unknown_dtype(fn, dt);
  PORTA_CPU_CATCH(fn)
}

}  // namespace porta::detail::cpu
