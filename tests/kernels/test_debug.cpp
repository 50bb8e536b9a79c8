// SPDX-License-Identifier: Apache-2.0
// Bounds-checked views and porta::fail (porta/debug.hpp) on every device this file can launch on.
// This translation unit checks its views; test_debug_off.cpp, in the same executable, does not:
// the two accessors are different symbols, so each keeps its own (the linker cannot merge them).
//
// On the CPU a failure is thrown by the launch; on a GPU and on cpu:strict (queued kernels) it is
// raised by the next wait. Either way it is a porta::KernelError.
#define PORTA_BOUNDS_CHECK 1
#include "porta/kernels.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "kernel_devices.hpp"
#include "porta/debug.hpp"
#include "porta/teams.hpp"
#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::Shape;

namespace {

// The text of the failure that `launch` causes on `dev`, raised by the launch (CPU) or by the next
// wait (GPU, cpu:strict); "" when nothing failed.
template <class Launch>
std::string failure_of(Device dev, Launch&& launch) {
  try {
    launch();
    porta::synchronize(dev);
  } catch (const porta::KernelError& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

static_assert(PORTA_DETAIL_BOUNDS, "this file checks its views");

TEST_CASE("a bounds-checked operator[] reports reads and writes outside the view", "[kernels][debug]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  INFO("on " << dev.to_string());
  Array<float> u(Shape{10}, dev, "u");
  auto out = porta::zeros<float>(Shape{1}, dev);
  auto uv = u.view();
  auto ov = out.view();

  const std::string past =
      failure_of(dev, [&] { porta::parallel_for(dev, 1, PORTA_KERNEL((std::int64_t i) { ov[0] = uv[i + 10]; })); });
  INFO(past);
  CHECK(has(past, "index 10 is out of bounds for array 'u' of shape (10)"));

  const std::string negative =
      failure_of(dev, [&] { porta::parallel_for(dev, 1, PORTA_KERNEL((std::int64_t i) { uv[i - 1] = 2.0f; })); });
  INFO(negative);
  CHECK(has(negative, "index -1 is out of bounds for array 'u' of shape (10)"));

  // A const view checks the same way.
  const Array<float>& cu = u;
  auto cv = cu.view();
  const std::string konst =
      failure_of(dev, [&] { porta::parallel_for(dev, 1, PORTA_KERNEL((std::int64_t i) { ov[0] = cv[i + 12]; })); });
  CHECK(has(konst, "index 12 is out of bounds for array 'u' of shape (10)"));
}

TEST_CASE("a bounds-checked operator() checks each dimension", "[kernels][debug]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  INFO("on " << dev.to_string());
  auto m = porta::zeros<double>(Shape{4, 5}, dev);
  m.set_label("m");
  auto mv = m.view();
  struct Case {
    std::int64_t r, c;
    const char* text;
  };
  // (0, 5) and (1, -1) are inside the allocation: only the per-dimension check finds them.
  for (const Case k : {Case{4, 0, "index (4, 0)"}, Case{0, 5, "index (0, 5)"}, Case{-1, 2, "index (-1, 2)"},
                       Case{1, -1, "index (1, -1)"}}) {
    const std::int64_t r = k.r, c = k.c;
    const std::string text =
        failure_of(dev, [&] { porta::parallel_for(dev, 1, PORTA_KERNEL((std::int64_t) { mv(r, c) = 1.0; })); });
    INFO(text);
    CHECK(has(text, std::string(k.text) + " is out of bounds for array 'm' of shape (4, 5)"));
  }
  // Reading a rank-2 array through v[i] reports its shape and element count.
  const std::string flat =
      failure_of(dev, [&] { porta::parallel_for(dev, 1, PORTA_KERNEL((std::int64_t i) { mv[i + 20] = 1.0; })); });
  INFO(flat);
  CHECK(has(flat, "index 20 is out of bounds for array 'm' of shape (4, 5) (20 elements)"));
  // Nothing was written: the failing accesses never reached the memory.
  CHECK(m.to_vector() == std::vector<double>(20, 0.0));
}

TEST_CASE("a violating access does not touch memory, and the device stays usable", "[kernels][debug]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  INFO("on " << dev.to_string());
  auto big = porta::zeros<std::int32_t>(Shape{16}, dev);
  Array<std::int32_t> prefix = big.slice(0, 0, 8);  // shares big's memory: index 8 is big's element 8
  auto pv = prefix.view();
  const std::string text =
      failure_of(dev, [&] { porta::parallel_for(dev, 9, PORTA_KERNEL((std::int64_t i) { pv[i] = 7; })); });
  INFO(text);
  CHECK(has(text, "index 8 is out of bounds for array <unnamed> of shape (8)"));
  const std::vector<std::int32_t> after = big.to_vector();
  CHECK(after[8] == 0);
  for (int i = 9; i < 16; ++i) CHECK(after[i] == 0);

  // The same device runs the next kernel, and reports the next failure.
  porta::parallel_for(dev, 8, PORTA_KERNEL((std::int64_t i) { pv[i] = static_cast<std::int32_t>(i); }));
  const std::vector<std::int32_t> ok = prefix.to_vector();
  for (int i = 0; i < 8; ++i) CHECK(ok[i] == i);
  const std::string again =
      failure_of(dev, [&] { porta::parallel_for(dev, 1, PORTA_KERNEL((std::int64_t i) { pv[i + 100] = 1; })); });
  CHECK(has(again, "index 100 is out of bounds"));
}

TEST_CASE("the first failure of a GPU kernel is raised by the next wait", "[kernels][debug]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  if (dev.type == porta::DeviceType::cpu) return;  // the CPU throws at the launch
  auto x = porta::zeros<float>(Shape{64}, dev);
  x.set_label("x");
  auto xv = x.view();
  // Every thread fails; one report, the first to claim the record.
  porta::parallel_for(dev, 64, PORTA_KERNEL((std::int64_t i) { xv[i + 64] = 1.0f; }));
  try {
    (void)x.to_vector();  // a copy to the host waits, then raises
    FAIL("no error raised");
  } catch (const porta::KernelError& e) {
    const std::string text = e.what();
    INFO(text);
    CHECK(has(text, "porta::copy_to_host"));
    CHECK(has(text, "on " + dev.to_string()));
    CHECK(has(text, "is out of bounds for array 'x' of shape (64)"));
  }
  // Cleared: the next wait has nothing to raise.
  porta::Stream s(dev);
  s.synchronize();
  CHECK(x.to_vector() == std::vector<float>(64, 0.0f));
}

TEST_CASE("porta::fail reports its message and values on every device", "[kernels][debug]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  INFO("on " << dev.to_string());
  auto y = porta::zeros<double>(Shape{16}, dev);
  auto yv = y.view();
  const std::string text = failure_of(dev, [&] {
    porta::parallel_for(dev, 16, PORTA_KERNEL((std::int64_t i) {
                          if (i == 5) {
                            porta::fail("negative density at", i, -0.25, 1.5f, static_cast<std::uint32_t>(7));
                            return;
                          }
                          yv[i] = 1.0;
                        }));
  });
  INFO(text);
  CHECK(has(text, "negative density at 5 -0.25 1.5 7"));
  // A message alone.
  const std::string bare = failure_of(
      dev, [&] { porta::parallel_for(dev, 1, PORTA_KERNEL((std::int64_t) { porta::fail("unreachable branch"); })); });
  CHECK(has(bare, "unreachable branch"));
  // From a map and a transform_reduce too.
  auto out = porta::zeros<float>(Shape{8}, dev);
  const auto in = porta::full<float>(Shape{8}, 2.0f, dev);
  const std::string mapped = failure_of(dev, [&] {
    porta::map(out, PORTA_KERNEL((float a) {
                 if (a > 1.0f) porta::fail("too large:", a);
                 return a;
               }),
               in);
  });
  CHECK(has(mapped, "too large: 2"));
  auto iv = in.view();
  const std::string reduced = failure_of(dev, [&] {
    (void)porta::transform_reduce(dev, 9, 0.0, porta::plus{}, PORTA_KERNEL((std::int64_t i) { return double(iv[i]); }));
  });
  CHECK(has(reduced, "index 8 is out of bounds for array <unnamed> of shape (8)"));
}

TEST_CASE("a CPU fault names the kernel once the launch adds its name", "[kernels][debug]") {
  porta::detail::FaultInfo f{};
  f.kind = porta::detail::kFaultBounds;
  f.rank = 1;
  f.label = "u";
  f.index[0] = 12;
  f.size = 10;
  f.rows = 1;
  f.cols = 10;
  const porta::detail::KernelFault fault(f);
  CHECK(std::string(fault.what()) == "porta: a kernel failed: index 12 is out of bounds for array 'u' of shape (10)");
  try {
    porta::detail::name_fault(fault, "porta::parallel_for", "smooth", Device::parse("cpu"));
  } catch (const porta::KernelError& e) {
    CHECK(std::string(e.what()) ==
          "porta::parallel_for: kernel 'smooth' on cpu: index 12 is out of bounds for array 'u' of shape (10)");
  }
}

TEST_CASE("a failure names the launch's kernel and device", "[kernels][debug]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  auto u = porta::zeros<float>(Shape{10}, dev);
  u.set_label("u");
  auto uv = u.view();
  const std::string text = failure_of(
      dev, [&] { porta::parallel_for("smooth", dev, 1, PORTA_KERNEL((std::int64_t i) { uv[i + 12] = 1.0f; })); });
  INFO(text);
  // Thrown by the launch on cpu, raised by the wait elsewhere: the call's name differs, not the rest.
  CHECK(has(text, "kernel 'smooth' on " + dev.to_string() + ": index 12 is out of bounds for array 'u' of shape (10)"));
  const std::string failed = failure_of(dev, [&] {
    porta::parallel_for("eos", dev, 4, PORTA_KERNEL((std::int64_t i) {
                          if (i == 3) porta::fail("negative density at", i, -0.25);
                        }));
  });
  CHECK(has(failed, "kernel 'eos' on " + dev.to_string() + ": negative density at 3 -0.25"));
}

TEST_CASE("every wait raises a queued kernel's failure once", "[kernels][debug]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  if (dev.host_accessible()) return;  // the plain CPU throws at the launch
  INFO("on " << dev.to_string());
  auto x = porta::zeros<float>(Shape{4}, dev);
  auto xv = x.view();
  const auto bad = [&](const porta::Stream& s) {
    porta::parallel_for("bad", dev, 1, PORTA_KERNEL((std::int64_t i) { xv[i + 4] = 1.0f; }), s);
  };
  porta::Stream s(dev);
  bad(s);
  CHECK_THROWS_AS(s.synchronize(), porta::KernelError);
  s.synchronize();  // raised once, then cleared
  bad(s);
  porta::Event e(dev);
  e.record(s);
  CHECK_THROWS_AS(e.synchronize(), porta::KernelError);
  bad(s);
  CHECK_THROWS_AS(porta::synchronize(dev), porta::KernelError);
  CHECK(x.item(0) == 0.0f);  // nothing left to raise, and nothing written
}

TEST_CASE("a team barrier that only some threads of a warp reach fails the kernel on CUDA", "[kernels][debug][teams]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  INFO("on " << dev.to_string());
  auto out = porta::zeros<float>(Shape{64}, dev);
  auto ov = out.view();
  // Branches that join again before the barrier are fine.
  const std::string joined = failure_of(dev, [&] {
    porta::parallel_for("joined", dev, porta::teams(2, 64).scratch(64 * sizeof(float)),
                        PORTA_KERNEL((const porta::Team& t) {
                          auto s = t.scratch<float>(64);
                          porta::thread_for(t, 64, [&](std::int64_t k) { s[k] = k % 2 ? 1.0f : 2.0f; });
                          t.barrier();
                          porta::thread_for(t, 64, [&](std::int64_t k) { ov[k] = s[63 - k]; });
                        }));
  });
  CHECK(joined.empty());
  if (dev.type != porta::DeviceType::cuda) return;  // a CPU team is one thread: nothing can diverge
  const std::string split = failure_of(dev, [&] {
    porta::parallel_for("split", dev, porta::teams(2, 64), PORTA_KERNEL((const porta::Team& t) {
                          if (t.rank() % 2 == 0) t.barrier();
                        }));
  });
  INFO(split);
  CHECK(has(split, "kernel 'split' on " + dev.to_string() + ": porta::Team::barrier: reached by only some threads"));
}

TEST_CASE("a checked team scratch request past the launch's scratch fails the kernel on every device",
          "[kernels][debug][teams]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  INFO("on " << dev.to_string());
  auto out = porta::zeros<float>(Shape{4}, dev);
  auto ov = out.view();
  const std::string what = failure_of(dev, [&] {
    porta::parallel_for("greedy", dev, porta::teams(4, 32).scratch(64), PORTA_KERNEL((const porta::Team& t) {
                          auto a = t.scratch<float>(8);   // 32 bytes
                          auto b = t.scratch<float>(16);  // 64 more: past the end
                          if (b.size == 16) b[0] = a[0];
                          if (t.rank() == 0) ov[t.league()] = static_cast<float>(b.size);
                        }));
  });
  INFO(what);
  CHECK(has(what, "kernel 'greedy' on " + dev.to_string() + ": porta::Team::scratch: the request does not fit"));
  // The device stays usable.
  porta::parallel_for(dev, porta::teams(4, 32), PORTA_KERNEL((const porta::Team& t) {
                        if (t.rank() == 0) ov[t.league()] = 1.0f;
                      }));
  PORTA_CHECK_RESULT(porta_test::compare_exact(out.to_vector(), std::vector<float>(4, 1.0f)));
}
