// SPDX-License-Identifier: Apache-2.0
// Fused expressions as generated run-time kernels: a float or double program becomes
// straight-line source in porta's run-time dialect (porta/rtc.hpp), compiled once per program shape
// and device by NVRTC, hiprtc or the host compiler through the rtc front end (its disk and process
// caches), and launched in place of the interpreter (map_program).
//
// Why: the interpreter dispatches every op of every element (a switch per op), which on an H200
// cost 1.42x a porta::map of the same chain compiled by nvcc; a generated kernel is that porta::map
// (straight-line code, 16-byte loads of every input issued before any op, one store, a grid that
// covers the array: rtc_launch_cover) with the eager bits, because the rtc options forbid
// contraction as the eager maps' build does. exp, log, sin, cos, tanh, sigmoid and pow are porta's
// own functions in run-time kernels on every device (the prelude compiles detail/math*.hpp), as in
// the eager maps, so programs with them are generated too.
//
// Scalars are kernel arguments, never literals: a loop that changes `alpha` every step reuses one
// kernel. The key of a program is its dtype and its ops without their values.
//
// Policy (PORTA_FUSE): "auto" (default) generates on GPUs whose backend can compile run-time
// kernels and interprets on the CPU (a host compiler run costs a second per new program) and
// wherever compilation is unavailable or fails; "jit" generates wherever the backend can, and lets
// a failed compile throw (tests); "interpret" never generates. Integer programs are always
// interpreted: their ops (wrapping, via-double math, exact powers) are ops.hpp's, not the dialect's.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "algorithms/common.hpp"
#include "algorithms/fuse_jit.hpp"
#include "porta/rtc.hpp"

namespace porta::detail {
namespace {

constexpr const char* kKernel = "porta_fused";
// 16-byte vectors per input per index; an index covers kUnroll * 16 bytes of every array.
constexpr int kUnroll = 2;

enum class FuseMode { automatic, jit, interpret };

FuseMode fuse_mode(const char* fn) {
  const char* e = std::getenv("PORTA_FUSE");
  if (e == nullptr || e[0] == '\0' || std::strcmp(e, "auto") == 0) return FuseMode::automatic;
  if (std::strcmp(e, "jit") == 0) return FuseMode::jit;
  if (std::strcmp(e, "interpret") == 0) return FuseMode::interpret;
  throw_invalid(fn, (std::string("PORTA_FUSE=") + e + ": expected auto, jit or interpret").c_str());
}

template <class T>
const char* type_name() {
  return std::is_same_v<T, float> ? "float" : "double";
}

// The eager ops' formulas (detail/ops.hpp) in the dialect's math (detail/rtc_prelude.hpp), by op
// number: $a and $b are the operands, $t the dtype.
constexpr const char* kUnaryCode[] = {
    "-$a",                      // NEG
    "porta::rtc::fabs($a)",     // ABS
    "porta::rtc::sqrt($a)",     // SQRT
    "porta::rtc::exp($a)",      // EXP
    "porta::rtc::log($a)",      // LOG
    "porta::rtc::sin($a)",      // SIN
    "porta::rtc::cos($a)",      // COS
    "porta::rtc::tanh($a)",     // TANH
    "porta::rtc::relu($a)",     // RELU
    "porta::rtc::sigmoid($a)",  // SIGMOID
    "$a * $a",                  // SQUARE
    "$a",                       // CONJ (of the real and integer dtypes fused expressions take)
};
constexpr const char* kBinaryCode[] = {
    "$a + $b",                    // ADD
    "$a - $b",                    // SUB
    "$a * $b",                    // MUL
    "$a / $b",                    // DIV
    "porta::rtc::min($a, $b)",    // MIN
    "porta::rtc::max($a, $b)",    // MAX
    "porta::rtc::pow($a, $b)",    // POW
    "($b > $t(0) ? $a : $t(0))",  // RELU_GRAD
};
static_assert(sizeof kUnaryCode / sizeof *kUnaryCode == PORTA_UNARY_COUNT && PORTA_UNARY_CONJ == 11,
              "a unary op without its run-time form");
static_assert(sizeof kBinaryCode / sizeof *kBinaryCode == PORTA_BINARY_COUNT && PORTA_BINARY_RELU_GRAD == 7,
              "a binary op without its run-time form");

std::string fill(const char* code, const std::string& a, const std::string& b, const char* t) {
  std::string out;
  for (const char* c = code; *c != '\0'; ++c) {
    if (c[0] == '$' && (c[1] == 'a' || c[1] == 'b' || c[1] == 't')) {
      out += c[1] == 'a' ? a : c[1] == 'b' ? b : std::string(t);
      ++c;
    } else {
      out += *c;
    }
  }
  return out;
}

// One element of the program as C++: the stack is the variables s0..s7, inputs x0..x7, scalars c0...
// Empty when an op has no run-time form.
std::string element_code(const porta_program_op* ops, std::int32_t nops, const char* t) {
  std::ostringstream c;
  int depth = 0, most = 1, scalar = 0;
  const auto s = [](int d) { return "s" + std::to_string(d); };
  for (std::int32_t k = 0; k < nops; ++k) {
    const porta_program_op& op = ops[k];
    if (op.kind == PORTA_PROGRAM_INPUT) {
      c << "  " << s(depth++) << " = x" << op.arg << ";\n";
    } else if (op.kind == PORTA_PROGRAM_SCALAR) {
      c << "  " << s(depth++) << " = c" << scalar++ << ";\n";
    } else if (op.kind == PORTA_PROGRAM_UNARY && op.arg >= 0 && op.arg < PORTA_UNARY_COUNT) {
      c << "  " << s(depth - 1) << " = " << fill(kUnaryCode[op.arg], s(depth - 1), "", t) << ";\n";
    } else if ((op.kind == PORTA_PROGRAM_BINARY || op.kind == PORTA_PROGRAM_BINARY_REV) && op.arg >= 0 &&
               op.arg < PORTA_BINARY_COUNT) {
      // BINARY: op(below, top); BINARY_REV: op(top, below) (the right operand was pushed first).
      const bool rev = op.kind == PORTA_PROGRAM_BINARY_REV;
      const std::string below = s(depth - 2), top = s(depth - 1);
      c << "  " << below << " = " << fill(kBinaryCode[op.arg], rev ? top : below, rev ? below : top, t) << ";\n";
      --depth;
    } else {
      return std::string();
    }
    if (depth > most) most = depth;
  }
  std::string decl = "  " + std::string(t);
  for (int d = 0; d < most; ++d) decl += (d ? ", " : " ") + s(d);
  // Only the result is canonicalised (a NaN's payload never decides whether a later value is a NaN,
  // ops.hpp), which gives the eager chain's bits, where each op canonicalises its own result.
  return decl + ";\n" + c.str() + "  return porta::rtc::canonical_nan(s0);\n";
}

// The module's source: the element function and the kernel over indices of kUnroll vectors each.
// Every input's vectors are loaded before any op runs (the loads are in flight together, as in
// porta::map); indices past the last full vector, and every index when an address is not 16-byte
// aligned (vec == 0), go element by element.
std::string fused_source(const porta_program_op* ops, std::int32_t nops, std::int32_t ninputs, int nscalars,
                         const char* t, int width) {
  const std::string body = element_code(ops, nops, t);
  if (body.empty()) return std::string();
  const int per = kUnroll * width;
  std::ostringstream p;
  p << "// a porta fused expression (algorithms/fuse_jit.cpp)\n"
    << "struct alignas(16) porta_fused_vec { " << t << " v[" << width << "]; };\n"
    << "PORTA_RTC_FUNCTION " << t << " porta_fused_element(";
  for (std::int32_t k = 0; k < ninputs; ++k) p << (k ? ", " : "") << t << " x" << k;
  for (int k = 0; k < nscalars; ++k) p << (k || ninputs ? ", " : "") << t << " c" << k;
  p << ") {\n" << body << "}\n";
  p << "PORTA_RTC_KERNEL void " << kKernel << "(porta_index g, long long n, int vec, porta::rtc::View<" << t << "> y";
  for (std::int32_t k = 0; k < ninputs; ++k) p << ", porta::rtc::View<const " << t << "> in" << k;
  for (int k = 0; k < nscalars; ++k) p << ", " << t << " c" << k;
  p << ") {\n  const long long b = g * " << per << ";\n";
  std::string call = "porta_fused_element(";
  for (std::int32_t k = 0; k < ninputs; ++k)
    call += (k ? ", " : "") + std::string("r") + std::to_string(k) + "[u].v[l]";
  for (int k = 0; k < nscalars; ++k) call += (k || ninputs ? ", c" : "c") + std::to_string(k);
  call += ")";
  p << "  if (vec && b + " << per << " <= n) {\n";
  for (std::int32_t k = 0; k < ninputs; ++k) {
    p << "    porta_fused_vec r" << k << "[" << kUnroll << "];\n"
      << "    for (int u = 0; u < " << kUnroll << "; ++u) r" << k << "[u] = reinterpret_cast<const porta_fused_vec*>(in"
      << k << ".data() + b)[u];\n";
  }
  p << "    porta_fused_vec o[" << kUnroll << "];\n"
    << "    for (int u = 0; u < " << kUnroll << "; ++u)\n"
    << "      for (int l = 0; l < " << width << "; ++l) o[u].v[l] = " << call << ";\n"
    << "    for (int u = 0; u < " << kUnroll << "; ++u) reinterpret_cast<porta_fused_vec*>(y.data() + b)[u] = o[u];\n"
    << "  } else {\n"
    << "    for (long long i = b; i < n && i < b + " << per << "; ++i) y[i] = porta_fused_element(";
  for (std::int32_t k = 0; k < ninputs; ++k) p << (k ? ", " : "") << "in" << k << "[i]";
  for (int k = 0; k < nscalars; ++k) p << (k || ninputs ? ", c" : "c") << k;
  p << ");\n  }\n}\n";
  return p.str();
}

// Programs seen in this process, by device type and key: the module (null when generation failed in
// auto mode, so that the program is interpreted from then on without trying again).
std::mutex g_mutex;
std::map<std::string, std::shared_ptr<rtc::detail::ModuleState>>& modules() {
  static auto* m = new std::map<std::string, std::shared_ptr<rtc::detail::ModuleState>>;
  return *m;
}

// The launch's arguments as porta::rtc::Kernel::launch builds them: (n, vec, y, inputs..., scalars...).
template <class T>
struct FusedArgs {
  std::int64_t n = 0;
  std::int32_t vec = 0;
  rtc::detail::ViewBits views[1 + PORTA_PROGRAM_MAX_INPUTS] = {};
  T scalars[PORTA_PROGRAM_MAX_OPS] = {};
  rtc::detail::ViewBits unused{};
  std::vector<rtc::detail::Arg> list;

  FusedArgs(Device device, const porta_program_op* ops, std::int32_t nops, const void* const* inputs,
            std::int32_t ninputs, T* y, std::int64_t count)
      : n(count) {
    bool aligned = reinterpret_cast<std::uintptr_t>(y) % 16 == 0;
    for (std::int32_t k = 0; k < ninputs; ++k)
      aligned = aligned && reinterpret_cast<std::uintptr_t>(inputs[k]) % 16 == 0;
    vec = aligned ? 1 : 0;
    list.push_back(rtc::detail::make_arg(n, unused));
    list.push_back(rtc::detail::make_arg(vec, unused));
    views[0] = rtc::detail::ViewBits{y, count};
    list.push_back(rtc::detail::Arg{rtc::detail::view_type<T, false>(), sizeof(rtc::detail::ViewBits), &views[0],
                                    device, true, "Array&", true});
    for (std::int32_t k = 0; k < ninputs; ++k) {
      views[1 + k] = rtc::detail::ViewBits{inputs[k], count};
      list.push_back(rtc::detail::Arg{rtc::detail::view_type<T, true>(), sizeof(rtc::detail::ViewBits), &views[1 + k],
                                      device, true, "const Array&", true});
    }
    int next = 0;
    for (std::int32_t k = 0; k < nops; ++k) {
      if (ops[k].kind != PORTA_PROGRAM_SCALAR) continue;
      if constexpr (std::is_same_v<T, float>) {
        scalars[next] = ops[k].value.f32;
      } else {
        scalars[next] = ops[k].value.f64;
      }
      list.push_back(rtc::detail::make_arg(scalars[next], unused));
      ++next;
    }
  }
  FusedArgs(const FusedArgs&) = delete;  // list points into this object
  FusedArgs& operator=(const FusedArgs&) = delete;
};

int scalar_count(const porta_program_op* ops, std::int32_t nops) {
  int c = 0;
  for (std::int32_t k = 0; k < nops; ++k) c += ops[k].kind == PORTA_PROGRAM_SCALAR;
  return c;
}

template <class T>
std::string source_of(const porta_program_op* ops, std::int32_t nops, std::int32_t ninputs) {
  return fused_source(ops, nops, ninputs, scalar_count(ops, nops), type_name<T>(), static_cast<int>(16 / sizeof(T)));
}

}  // namespace

template <class T>
bool fused_jit(const BackendCall& c, const Stream& stream, const porta_program_op* ops, std::int32_t nops,
               const void* const* inputs, std::int32_t ninputs, T* y, std::int64_t n) {
  if constexpr (!std::is_floating_point_v<T>) {
    return false;
  } else {
    const FuseMode mode = fuse_mode(c.fn);
    if (mode == FuseMode::interpret) return false;
    if (mode == FuseMode::automatic && c.device.type == DeviceType::cpu) return false;
    const int nscalars = scalar_count(ops, nops);
    // rtc's argument limit: n, vec, y, the inputs, the scalars.
    if (3 + ninputs + nscalars > 32) return false;
    // No check that a compiler is there first: asking loads it (NVRTC: about 90 ms), which a process
    // whose kernels are all in the disk cache never needs. A missing compiler fails the first
    // compile instead, below.
    std::string key = std::to_string(static_cast<int>(c.device.type)) + "|" + type_name<T>();
    for (std::int32_t k = 0; k < nops; ++k)
      key += "|" + std::to_string(ops[k].kind) + "," +
             std::to_string(ops[k].kind == PORTA_PROGRAM_SCALAR ? 0 : ops[k].arg);
    key += "|" + std::to_string(ninputs);
    std::shared_ptr<rtc::detail::ModuleState> module;
    bool known = false;
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      auto it = modules().find(key);
      if (it != modules().end()) {
        module = it->second;
        known = true;
      }
    }
    if (known && module == nullptr) return false;
    if (!known) {
      const std::string src = source_of<T>(ops, nops, ninputs);
      if (!src.empty()) module = rtc::detail::make_module(src, std::string(), "porta_fused_expression");
    }
    constexpr std::int64_t per = kUnroll * static_cast<std::int64_t>(16 / sizeof(T));
    const FusedArgs<T> args(c.device, ops, nops, inputs, ninputs, y, n);
    try {
      if (module == nullptr) throw_invalid(c.fn, "a program op has no run-time form");
      rtc::detail::launch(module, kKernel, c.device, &stream, (n + per - 1) / per, args.list, true);
    } catch (const Error&) {
      if (mode == FuseMode::jit || known) throw;
      // A program that does not compile here (no run-time compiler on this machine, or a bug) is
      // interpreted from now on, on this device type.
      std::lock_guard<std::mutex> lock(g_mutex);
      modules().emplace(key, nullptr);
      return false;
    }
    if (!known) {
      std::lock_guard<std::mutex> lock(g_mutex);
      modules().emplace(key, module);
    }
    return true;
  }
}

std::string fused_program_text(const porta_program_op* ops, std::int32_t nops, std::int32_t ninputs, bool f64) {
  const void* none[PORTA_PROGRAM_MAX_INPUTS] = {};
  const auto text = [&](auto zero) {
    using T = decltype(zero);
    const FusedArgs<T> args(Device(), ops, nops, none, ninputs, nullptr, 0);
    return rtc::detail::program_text(source_of<T>(ops, nops, ninputs), kKernel, args.list);
  };
  return f64 ? text(0.0) : text(0.0f);
}

#define PORTA_INSTANTIATE_FUSED_JIT(T)                                                                 \
  template bool fused_jit<T>(const BackendCall&, const Stream&, const porta_program_op*, std::int32_t, \
                             const void* const*, std::int32_t, T*, std::int64_t);
PORTA_FOR_EACH_DTYPE(PORTA_INSTANTIATE_FUSED_JIT)

}  // namespace porta::detail
