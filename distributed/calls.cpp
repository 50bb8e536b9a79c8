// SPDX-License-Identifier: Apache-2.0
// The collective-call check's shared part (distributed/engine.hpp, Call): how a call reads in an
// error, and how it travels as integers. A mismatch names two ranks' calls in words a user can find
// in their code: "rank 0 called allreduce(float32, 1024, sum), rank 1 called allreduce(float64,
// 1024, sum)".
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "distributed/engine.hpp"
#include "porta/detail/runtime.hpp"

namespace porta::detail::dist {

bool calls_checked() {
  static const bool on = [] {
    const char* v = std::getenv("PORTA_DIST_CHECK");
    return !(v != nullptr && (std::strcmp(v, "0") == 0 || std::strcmp(v, "off") == 0 || std::strcmp(v, "OFF") == 0));
  }();
  return on;
}

namespace {

const char* kind_name(CallKind k) {
  switch (k) {
    case CallKind::allreduce:
      return "allreduce";
    case CallKind::reduce:
      return "reduce";
    case CallKind::broadcast:
      return "broadcast";
    case CallKind::allgather:
      return "allgather";
    case CallKind::reduce_scatter:
      return "reduce_scatter";
    case CallKind::barrier:
      return "barrier";
    case CallKind::sum:
      return "sum";
    case CallKind::dot:
      return "dot";
    case CallKind::norm2:
      return "norm2";
    case CallKind::setup:
      return "the set-up of device collectives";
  }
  return "an unknown call";
}

const char* op_name(std::int32_t op) {
  switch (op) {
    case PORTA_REDUCE_SUM:
      return "sum";
    case PORTA_REDUCE_PROD:
      return "prod";
    case PORTA_REDUCE_MIN:
      return "min";
    case PORTA_REDUCE_MAX:
      return "max";
    default:
      return "?";
  }
}

std::string device_name(std::int32_t type) {
  return type < 0 ? std::string("no device") : std::string(porta::to_string(static_cast<DeviceType>(type)));
}

}  // namespace

std::string describe(const Call& c, const Call* other) {
  std::string s = kind_name(c.kind);
  std::string args;
  auto add = [&args](const std::string& a) { args += (args.empty() ? "" : ", ") + a; };
  if (c.kind == CallKind::setup) {
    const std::string d = device_name(c.device);
    s += " on " + d + " (transport(), or a first isend or irecv on " + d + ")";
  } else {
    if (c.dtype >= 0) add(dtype_name(static_cast<porta_dtype>(c.dtype)));
    if (c.count >= 0) add(std::to_string(c.count));
    if (c.op >= 0) add(op_name(c.op));
    if (c.root >= 0) add("root " + std::to_string(c.root));
    s += "(" + args + ")";
    if (other != nullptr && c.device >= 0 && other->device >= 0 && other->device != c.device)
      s += " on " + device_name(c.device);
  }
  if (other != nullptr && other->seq != c.seq) s += " as its call " + std::to_string(c.seq) + " on the communicator";
  return s;
}

std::string mismatch(int rank_a, const Call& a, int rank_b, const Call& b) {
  std::string m = "rank " + std::to_string(rank_a) + " called " + describe(a, &b) + ", rank " + std::to_string(rank_b) +
                  " called " + describe(b, &a);
  if (a.seq != b.seq) {
    m += " (a rank is a call ahead: a collective that failed on one rank alone, before it reached the others, "
         "leaves the ranks out of step)";
  } else {
    m += " (every rank must make the same collective calls, in the same order)";
  }
  return m;
}

// Three words: the call's number, its count, and the small fields side by side (each + 1, so that
// -1 packs as 0). Exact, not a hash: equal words are equal calls.
void pack(const Call& c, std::int64_t* w) {
  const auto field = [](std::int32_t v, int shift) { return static_cast<std::uint64_t>(v + 1) << shift; };
  w[0] = static_cast<std::int64_t>(c.seq);
  w[1] = c.count;
  const std::uint64_t small = field(static_cast<std::int32_t>(c.kind), 0) | field(c.dtype, 8) | field(c.op, 16) |
                              field(c.device, 24) |
                              (static_cast<std::uint64_t>(static_cast<std::uint32_t>(c.root + 1)) << 32);
  w[2] = static_cast<std::int64_t>(small);
}

Call unpack(const std::int64_t* w) {
  Call c;
  c.checked = true;
  c.seq = static_cast<std::uint64_t>(w[0]);
  c.count = w[1];
  const std::uint64_t small = static_cast<std::uint64_t>(w[2]);
  const auto field = [small](int shift) { return static_cast<std::int32_t>((small >> shift) & 0xff) - 1; };
  c.kind = static_cast<CallKind>(field(0));
  c.dtype = field(8);
  c.op = field(16);
  c.device = field(24);
  c.root = static_cast<std::int32_t>(static_cast<std::uint32_t>(small >> 32)) - 1;
  return c;
}

}  // namespace porta::detail::dist
