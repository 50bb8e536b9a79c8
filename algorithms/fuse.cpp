// SPDX-License-Identifier: Apache-2.0
// Front end of fused expressions (porta/fuse.hpp): checks an expression's leaves and
// program, then runs it in one pass: as a generated kernel where fuse_jit.cpp's policy allows,
// else through the backend's map_program entry (the interpreter).
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/common.hpp"
#include "algorithms/fuse_jit.hpp"
#include "algorithms/strided.hpp"
#include "porta/fuse.hpp"

namespace porta::detail {
namespace {

std::string input_name(std::int32_t k) {
  return "input " + std::to_string(k);
}

// The leaves: valid, on one device, of one shape (no broadcasting); the program: within the
// backend's limits. Returns the device.
template <class T>
Device check_fused(const char* fn, const porta_program_op* ops, std::int32_t nops, const Array<T>* const* leaves,
                   std::int32_t nleaves) {
  for (std::int32_t k = 0; k < nleaves; ++k)
    if (!leaves[k]->valid())
      throw_invalid(fn, ("the array of " + input_name(k) + " was moved from (or default-constructed)").c_str());
  const Array<T>& first = *leaves[0];
  for (std::int32_t k = 1; k < nleaves; ++k) {
    const Array<T>& a = *leaves[k];
    if (a.device() != first.device())
      throw DeviceMismatch(std::string(fn) + ": arrays are on different devices (input 0 on " +
                           first.device().to_string() + ", " + input_name(k) + " on " + a.device().to_string() + ")");
    if (a.shape() != first.shape())
      throw_invalid(fn, ("shapes differ (input 0 is " + first.shape().to_string() + ", " + input_name(k) + " is " +
                         a.shape().to_string() +
                         "): a fused expression does not broadcast; broadcast with the eager operators first")
                            .c_str());
  }
  if (nops > PORTA_PROGRAM_MAX_OPS)
    throw_invalid(
        fn, ("the expression has " + std::to_string(nops) + " ops; at most " + std::to_string(PORTA_PROGRAM_MAX_OPS) +
             " run in one pass: evaluate a part of it first (.eval() or an Array)")
                .c_str());
  if (nleaves > PORTA_PROGRAM_MAX_INPUTS)
    throw_invalid(fn, ("the expression reads " + std::to_string(nleaves) + " arrays; at most " +
                       std::to_string(PORTA_PROGRAM_MAX_INPUTS) +
                       " in one pass: evaluate a part of it first (.eval() or an Array)")
                          .c_str());
  int depth = 0, most = 0;  // Expr::depth, without copying the program into a vector
  for (std::int32_t k = 0; k < nops; ++k) {
    const std::int32_t kind = ops[k].kind;
    depth += (kind == PORTA_PROGRAM_INPUT || kind == PORTA_PROGRAM_SCALAR) -
             (kind == PORTA_PROGRAM_BINARY || kind == PORTA_PROGRAM_BINARY_REV);
    most = depth > most ? depth : most;
  }
  if (most > PORTA_PROGRAM_MAX_STACK)
    throw_invalid(fn, ("the expression nests " + std::to_string(most) + " pending values; at most " +
                       std::to_string(PORTA_PROGRAM_MAX_STACK) + ": evaluate a part of it first (.eval() or an Array)")
                          .c_str());
  return first.device();
}

// out (contiguous, the leaves' shape, no overlap with a leaf other than being that very leaf) = the
// program over the leaves, strided leaves compacted first.
template <class T>
void fused_run(const BackendCall& c, const porta_program_op* ops, std::int32_t nops, const Array<T>* const* leaves,
               std::int32_t nleaves, Array<T>& out, const Stream& stream) {
  if (out.size() == 0) return;
  // Compact copies of strided leaves, made only where there are some: expressions are often
  // evaluated in a loop, on arrays.
  std::vector<Array<T>> hold;
  const void* inputs[PORTA_PROGRAM_MAX_INPUTS] = {};
  for (std::int32_t k = 0; k < nleaves; ++k) {
    if (leaves[k]->is_contiguous()) {
      inputs[k] = leaves[k]->data();
    } else {
      hold.reserve(static_cast<std::size_t>(nleaves));
      hold.push_back(leaves[k]->contiguous(stream));
      inputs[k] = hold.back().data();
    }
  }
  if (fused_jit(c, stream, ops, nops, inputs, nleaves, out.data(), out.size())) return;
  c.run(c.table->map_program, dtype_of<T>(), out.size(), ops, nops, inputs, nleaves, out.data(), c.stream);
}

}  // namespace

template <class T>
Array<T> fused_new(const char* fn, const porta_program_op* ops, std::int32_t nops, const Array<T>* const* leaves,
                   std::int32_t nleaves, const Stream& stream) {
  const Device dev = check_fused(fn, ops, nops, leaves, nleaves);
  const BackendCall c = make_call(fn, dev, stream);
  Array<T> out = new_output<T>(fn, leaves[0]->shape(), dev, stream);
  fused_run(c, ops, nops, leaves, nleaves, out, stream);
  return out;
}

template <class T>
void fused_into(const char* fn, const porta_program_op* ops, std::int32_t nops, const Array<T>* const* leaves,
                std::int32_t nleaves, Array<T>& out, const Stream& stream) {
  if (!out.valid()) throw_invalid(fn, "the array out was moved from (or default-constructed)");
  const Device dev = check_fused(fn, ops, nops, leaves, nleaves);
  if (out.device() != dev)
    throw DeviceMismatch(std::string(fn) + ": arrays are on different devices (input 0 on " + dev.to_string() +
                         ", out on " + out.device().to_string() + ")");
  if (out.shape() != leaves[0]->shape())
    throw_invalid(fn, ("out is " + out.shape().to_string() + ", expected " + leaves[0]->shape().to_string() +
                       " (the shape of the expression's arrays)")
                          .c_str());
  const BackendCall c = make_call(fn, dev, stream);
  bool direct = out.is_contiguous();
  for (std::int32_t k = 0; k < nleaves && direct; ++k) {
    const Array<T>& leaf = *leaves[k];
    if (leaf.is_contiguous()) {  // of out's shape: the same elements, or apart, or partly shared
      const auto bytes = static_cast<std::uintptr_t>(out.size()) * sizeof(T);
      const auto p = reinterpret_cast<std::uintptr_t>(out.data()), q = reinterpret_cast<std::uintptr_t>(leaf.data());
      direct = p == q || p >= q + bytes || q >= p + bytes;
    } else {
      direct = !overlaps_not_identical(out, leaf);
    }
  }
  if (direct) return fused_run(c, ops, nops, leaves, nleaves, out, stream);
  Array<T> tmp = new_output<T>(fn, out.shape(), dev, stream);
  fused_run(c, ops, nops, leaves, nleaves, tmp, stream);
  out.assign(tmp, stream);
}

#define PORTA_INSTANTIATE_FUSED(T)                                                                           \
  template Array<T> fused_new<T>(const char*, const porta_program_op*, std::int32_t, const Array<T>* const*, \
                                 std::int32_t, const Stream&);                                               \
  template void fused_into<T>(const char*, const porta_program_op*, std::int32_t, const Array<T>* const*,    \
                              std::int32_t, Array<T>&, const Stream&);
PORTA_FOR_EACH_DTYPE(PORTA_INSTANTIATE_FUSED)

}  // namespace porta::detail
