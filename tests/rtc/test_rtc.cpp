// SPDX-License-Identifier: Apache-2.0
// Run-time compiled kernels (porta/rtc.hpp) on every device: results against host references for
// every dtype, argument and compile errors with the compiler's log and the user's line, the
// in-process cache, and the disk cache across processes (this executable runs itself with a hidden
// tag: a fresh cache compiles, a second process compiles nothing, a corrupt entry is compiled
// again).
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "porta/rtc.hpp"
#include "support/support.hpp"

using porta::Array;
using porta::Device;

namespace {

// One kernel over every dtype, a scalar of each and both kinds of view.
const char* kAxpy = R"(
template <class T>
PORTA_RTC_KERNEL void axpy(porta_index i, T a, porta::rtc::View<const T> x, porta::rtc::View<T> y) {
  y[i] = a * x[i] + y[i];
}
)";

template <class T>
T host_axpy(T a, T x, T y) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(x) + static_cast<U>(y));
  } else {
    const T ax = a * x;  // rounded before the add (-ffp-contract=off in the tests)
    return ax + y;
  }
}

// A fresh cache folder per process, so that the first compile below is a compile.
struct CacheDir {
  std::string path;
  CacheDir() {
    char tmpl[] = "/tmp/porta-rtc-test-XXXXXX";
    const char* d = mkdtemp(tmpl);
    path = d != nullptr ? d : "/tmp";
    setenv("PORTA_CACHE_DIR", path.c_str(), 1);
  }
  ~CacheDir() {
    if (path.rfind("/tmp/porta-rtc-test-", 0) == 0) (void)std::system(("rm -rf '" + path + "'").c_str());
  }
};
const CacheDir& cache_dir_once() {
  static CacheDir d;
  return d;
}

template <class T>
void check_axpy(Device dev, std::int64_t n) {
  PORTA_RNG(rng);
  INFO("n = " << n);
  (void)cache_dir_once();
  porta::rtc::Module m(kAxpy);
  auto k = m.kernel("axpy<" +
                    std::string(std::is_same_v<T, float>          ? "float"
                                : std::is_same_v<T, double>       ? "double"
                                : std::is_same_v<T, std::int32_t> ? "int"
                                                                  : "long long") +
                    ">");
  const std::vector<T> hx = porta_test::uniform<T>(rng, n, T(-50), T(50));
  const std::vector<T> hy = porta_test::uniform<T>(rng, n, T(-50), T(50));
  const T a = T(3);
  const Array<T> x = Array<T>::from(hx, dev);
  Array<T> y = Array<T>::from(hy, dev);
  k.launch(dev, n, a, x, y);
  const std::vector<T> got = y.to_vector();
  std::vector<T> ref(hy.size());
  for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = host_axpy(a, hx[i], hy[i]);
  PORTA_CHECK_RESULT(porta_test::compare_exact(got, ref));
}

}  // namespace

TEST_CASE("rtc: axpy for every dtype and size", "[rtc]") {
  const Device dev = PORTA_TEST_DEVICE();
  for (std::int64_t n : {std::int64_t(0), std::int64_t(1), std::int64_t(1000), std::int64_t(70001)}) {
    check_axpy<float>(dev, n);
    check_axpy<double>(dev, n);
    check_axpy<std::int32_t>(dev, n);
    check_axpy<std::int64_t>(dev, n);
  }
}

TEMPLATE_TEST_CASE("rtc: the four-op chain against the eager operators and a host reference", "[rtc]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  (void)cache_dir_once();
  const std::int64_t n = 5003;
  const std::vector<T> hx = porta_test::uniform<T>(rng, n, T(-4), T(4));
  const std::vector<T> hy = porta_test::uniform<T>(rng, n, T(-4), T(4));
  const Array<T> x = Array<T>::from(hx, dev), y = Array<T>::from(hy, dev);
  Array<T> out = porta_test::poisoned<T>(porta::Shape{n}, dev);
  porta::rtc::Module m(R"(
template <class T>
PORTA_RTC_KERNEL void chain(porta_index i, porta::rtc::View<const T> x, porta::rtc::View<const T> y,
                            porta::rtc::View<T> out) {
  out[i] = porta::rtc::sin(x[i]) * porta::rtc::cos(y[i]) + x[i] * y[i];
}
)");
  m.kernel(std::is_same_v<T, float> ? "chain<float>" : "chain<double>").launch(dev, n, x, y, out);
  const std::vector<T> got = out.to_vector();
  std::vector<long double> ref(hx.size());
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const long double a = hx[i], b = hy[i];
    ref[i] = std::sin(a) * std::cos(b) + a * b;
  }
  // Cancellation makes the result's ulps meaningless near zero: bound by the terms' size instead.
  std::vector<long double> scale(hx.size());
  for (std::size_t i = 0; i < ref.size(); ++i) scale[i] = 1.0L + std::fabs(static_cast<long double>(hx[i] * hy[i]));
  const long double tol = 64 * std::numeric_limits<T>::epsilon();
  for (std::size_t i = 0; i < ref.size(); ++i) {
    INFO("i = " << i << " x = " << hx[i] << " y = " << hy[i]);
    REQUIRE(std::fabs(static_cast<long double>(got[i]) - ref[i]) <= tol * scale[i]);
  }
  const Array<T> eager = porta::add(porta::mul(porta::sin(x), porta::cos(y)), porta::mul(x, y));
  const std::vector<T> he = eager.to_vector();
  for (std::size_t i = 0; i < ref.size(); ++i) {
    INFO("i = " << i);
    REQUIRE(std::fabs(static_cast<long double>(got[i]) - he[i]) <= tol * scale[i]);
  }
}

TEST_CASE("rtc: the prelude's min and max follow porta's (the canonical NaN, -0.0 below +0.0)", "[rtc]") {
  const Device dev = PORTA_TEST_DEVICE();
  (void)cache_dir_once();
  const double nan = std::nan("");
  // A negative NaN: what comes out must still be the canonical (positive, quiet) NaN's bits.
  const std::vector<double> ha{1.0, -nan, -0.0, 0.0, 2.0, -3.0};
  const std::vector<double> hb{2.0, 1.0, 0.0, -0.0, nan, -3.0};
  const Array<double> a = Array<double>::from(ha, dev), b = Array<double>::from(hb, dev);
  Array<double> lo = porta_test::poisoned<double>(porta::Shape{6}, dev);
  Array<double> hi = porta_test::poisoned<double>(porta::Shape{6}, dev);
  porta::rtc::Module m(R"(
PORTA_RTC_KERNEL void minmax(porta_index i, porta::rtc::View<const double> a, porta::rtc::View<const double> b,
                             porta::rtc::View<double> lo, porta::rtc::View<double> hi) {
  lo[i] = porta::rtc::min(a[i], b[i]);
  hi[i] = porta::rtc::max(a[i], b[i]);
})");
  m.kernel("minmax").launch(dev, 6, a, b, lo, hi);
  PORTA_CHECK_RESULT(porta_test::compare_exact(lo.to_vector(), porta::minimum(a, b).to_vector()));
  PORTA_CHECK_RESULT(porta_test::compare_exact(hi.to_vector(), porta::maximum(a, b).to_vector()));
  const std::vector<double> hlo = lo.to_vector(), hhi = hi.to_vector();
  for (const std::size_t i : {std::size_t(1), std::size_t(4)}) {
    INFO("index " << i);
    CHECK(porta_test::same_bits(hlo[i], std::numeric_limits<double>::quiet_NaN()));
    CHECK(porta_test::same_bits(hhi[i], std::numeric_limits<double>::quiet_NaN()));
  }
}

TEST_CASE("rtc: launches on a stream", "[rtc]") {
  const Device dev = PORTA_TEST_DEVICE();
  (void)cache_dir_once();
  porta::Stream s(dev);
  Array<std::int64_t> y = porta_test::poisoned<std::int64_t>(porta::Shape{300}, dev);
  porta::rtc::Module m(
      "PORTA_RTC_KERNEL void iota(porta_index i, porta::rtc::View<long long> y, long long k) "
      "{ y[i] = i * k; }");
  m.kernel("iota").launch(s, y.size(), y, std::int64_t(7));
  s.synchronize();
  const std::vector<std::int64_t> got = y.to_vector(s);
  std::vector<std::int64_t> ref(300);
  for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = static_cast<std::int64_t>(i) * 7;
  PORTA_CHECK_RESULT(porta_test::compare_exact(got, ref));
}

TEST_CASE("rtc: argument types are checked by the compiler", "[rtc][errors]") {
  const Device dev = PORTA_TEST_DEVICE();
  (void)cache_dir_once();
  porta::rtc::Module m(R"(
PORTA_RTC_KERNEL void scale(porta_index i, float a, porta::rtc::View<float> y) {
  y[i] = a * y[i];
})");
  auto k = m.kernel("scale");
  Array<float> y = Array<float>::from(std::vector<float>{1, 2, 3}, dev);
  const Array<float> cy = Array<float>::from(std::vector<float>{1, 2, 3}, dev);
  Array<double> yd = Array<double>::from(std::vector<double>{1, 2, 3}, dev);
  // double for float, a double array for a float view, a read-only array for a writable view, one
  // argument too few: each is a compile error in the generated call, which says so.
  auto expect_compile_error = [&](auto&& launch, const char* what) {
    INFO(what);
    try {
      launch();
      FAIL("no CompileError");
    } catch (const porta::CompileError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find("scale(") != std::string::npos);
      CHECK(std::string(e.what()).find(dev.to_string()) != std::string::npos);
      CHECK(!e.log().empty());
      // The generated call, or the kernel's declaration (line 2) where the compiler points there.
      if (e.line() == 0) {
        CHECK(std::string(e.what()).find("argument types do not match") != std::string::npos);
      } else {
        CHECK(e.line() == 2);
      }
    }
  };
  expect_compile_error([&] { k.launch(dev, 3, 2.0, y); }, "double for float");
  expect_compile_error([&] { k.launch(dev, 3, 2.0f, yd); }, "Array<double> for View<float>");
  expect_compile_error([&] { k.launch(dev, 3, 2.0f, cy); }, "const Array<float> for View<float>");
  expect_compile_error([&] { k.launch(dev, 3, 2.0f); }, "too few arguments");
  // The right types still work after the failures.
  k.launch(dev, 3, 2.0f, y);
  PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), std::vector<float>{2, 4, 6}));
  // And a CompileError is an InvalidArgument.
  CHECK_THROWS_AS(k.launch(dev, 3, 2, y), porta::InvalidArgument);
}

TEST_CASE("rtc: a compile error names the line of the user's source and quotes the log", "[rtc][errors]") {
  const Device dev = PORTA_TEST_DEVICE();
  (void)cache_dir_once();
  porta::rtc::Module m(
      "// line 1\n"
      "PORTA_RTC_KERNEL void broken(porta_index i, porta::rtc::View<float> y) {\n"
      "  y[i] = undeclared_name * 2;\n"
      "}\n");
  Array<float> y = Array<float>::from(std::vector<float>{1}, dev);
  try {
    m.kernel("broken").launch(dev, 1, y);
    FAIL("no CompileError");
  } catch (const porta::CompileError& e) {
    INFO(e.what());
    CHECK(e.line() == 3);
    CHECK(std::string(e.what()).find("line 3") != std::string::npos);
    CHECK(std::string(e.what()).find("undeclared_name") != std::string::npos);
    CHECK(e.log().find("undeclared_name") != std::string::npos);
  }
}

TEST_CASE("rtc: options are arguments, never shell text", "[rtc][errors][security]") {
  const Device dev = PORTA_TEST_DEVICE();
  (void)cache_dir_once();
  PORTA_RNG(rng);
  const std::int64_t n = 1000;
  const std::vector<float> hx = porta_test::nonzero<float>(rng, n);
  const Array<float> x = Array<float>::from(hx, dev);
  const char* kScale = R"(
PORTA_RTC_KERNEL void scale(porta_index i, porta::rtc::View<const float> x, porta::rtc::View<float> y) {
  y[i] = x[i] * (SCALE);
})";
  // Quoted options with blanks and quotes keep them, on every compiler.
  for (const auto& [options, factor] : {std::pair<const char*, float>{"\"-DSCALE=(1.0f + 2.0f)\"", 3.0f},
                                        {"'-DSCALE=(2.0f * 2.0f)' -DUNUSED=\"a;b\"", 4.0f},
                                        {"-DSCALE=5.0f\\ +\\ 0.0f", 5.0f}}) {
    INFO("options: " << options);
    Array<float> y = porta_test::poisoned<float>(porta::Shape{n}, dev);
    porta::rtc::Module(kScale, options).kernel("scale").launch(dev, n, x, y);
    std::vector<float> ref(hx.size());
    for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = hx[i] * factor;
    PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), ref));
  }
  // Command substitution, backticks and a second command reach no shell: the marker file is never
  // made, and the compiler sees a strange macro or a missing input file.
  char dir_tmpl[] = "/tmp/porta-rtc-shell-XXXXXX";
  REQUIRE(mkdtemp(dir_tmpl) != nullptr);
  const std::string marker = std::string(dir_tmpl) + "/pwned";
  for (const std::string& options :
       {"-DSCALE=1 -DX=$(touch " + marker + ")", "-DSCALE=1 -DX=`touch " + marker + "`", "-DSCALE=1; touch " + marker,
        "-DSCALE=1 | touch " + marker, "-DSCALE=1 && touch " + marker}) {
    INFO("options: " << options);
    Array<float> y = porta_test::poisoned<float>(porta::Shape{n}, dev);
    try {
      porta::rtc::Module(kScale, options).kernel("scale").launch(dev, n, x, y);
    } catch (const porta::InvalidArgument&) {  // what the compiler makes of those arguments
    }
    CHECK(access(marker.c_str(), F_OK) != 0);
  }
  rmdir(dir_tmpl);
  // An unterminated quote is the caller's mistake, said when the Module is made.
  CHECK_THROWS_AS(porta::rtc::Module(kScale, "-DSCALE=\"2"), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::rtc::Module(kScale, "-DSCALE='2"), porta_test::Contains("unterminated single quote"));
}

TEST_CASE("rtc: a source file whose path holds quotes and backslashes", "[rtc][errors]") {
  const Device dev = PORTA_TEST_DEVICE();
  (void)cache_dir_once();
  char dir_tmpl[] = "/tmp/porta-rtc-path-XXXXXX";
  REQUIRE(mkdtemp(dir_tmpl) != nullptr);
  const std::string path = std::string(dir_tmpl) + "/it's \"my\" \\kernel.porta";
  {
    std::ofstream f(path);
    f << "// line 1\n"
         "\n"
         "PORTA_RTC_KERNEL void broken(porta_index i, porta::rtc::View<float> y) {\n"
         "  y[i] = undeclared_name;\n"
         "}\n";
  }
  const porta::rtc::Module m = porta::rtc::Module::from_file(path);
  Array<float> y = Array<float>::from(std::vector<float>{1.5f, -2.0f}, dev);
  try {
    m.kernel("broken").launch(dev, 2, y);
    FAIL("no CompileError");
  } catch (const porta::CompileError& e) {
    INFO(e.what());
    CHECK(e.line() == 4);
    CHECK(std::string(e.what()).find(path + ", line 4") != std::string::npos);
  }
  std::remove(path.c_str());
  rmdir(dir_tmpl);
}

TEST_CASE("rtc: bad launches are typed errors naming the values", "[rtc][errors]") {
  const Device dev = PORTA_TEST_DEVICE();
  (void)cache_dir_once();
  porta::rtc::Module m("PORTA_RTC_KERNEL void one(porta_index i, porta::rtc::View<float> y) { y[i] = 1; }");
  Array<float> y = Array<float>::from(std::vector<float>{0, 0}, dev);
  CHECK_THROWS_WITH(m.kernel("one").launch(dev, -1, y), porta_test::Contains("n is -1"));
  CHECK_THROWS_WITH(m.kernel("two").launch(dev, 2, y), porta_test::Contains("no kernel named two"));
  CHECK_THROWS_WITH(m.kernel("one; int x").launch(dev, 2, y), porta_test::Contains("not a C++ identifier"));
  Array<float> moved = std::move(y);
  CHECK_THROWS_WITH(m.kernel("one").launch(dev, 2, y), porta_test::Contains("moved-from"));
  Array<float> wide = Array<float>::from(std::vector<float>(6, 0.0f), porta::Shape{2, 3}, dev);
  CHECK_THROWS_WITH(m.kernel("one").launch(dev, 2, wide.col(1)), porta_test::Contains("strided view"));
  if (auto other = porta_test::other_device(dev)) {
    Array<float> elsewhere = Array<float>::from(std::vector<float>{0}, *other);
    CHECK_THROWS_AS(m.kernel("one").launch(dev, 1, elsewhere), porta::DeviceMismatch);
  }
  // A launch on a device that does not exist is about the device, not about where the arrays are.
  const Device absent(dev.type, 63);
  CHECK_THROWS_AS(m.kernel("one").launch(absent, 2, moved), porta::Unavailable);
  CHECK_THROWS_WITH(m.kernel("one").launch(absent, 2, moved), porta_test::Contains(absent.to_string()));
  // An n of 0 compiles (and checks the types) but runs nothing.
  m.kernel("one").launch(dev, 0, moved);
  PORTA_CHECK_RESULT(porta_test::compare_exact(moved.to_vector(), std::vector<float>{0, 0}));
}

TEST_CASE("rtc: a second Module with the same source compiles nothing in this process", "[rtc][cache]") {
  const Device dev = PORTA_TEST_DEVICE();
  (void)cache_dir_once();
  const std::string src = "PORTA_RTC_KERNEL void twice(porta_index i, porta::rtc::View<int> y) { y[i] = 2 * i; }";
  const std::string token = "-DPORTA_TEST_TOKEN=" + std::to_string(porta_test::base_seed());
  Array<std::int32_t> y = Array<std::int32_t>::from(std::vector<std::int32_t>(5, -1), dev);
  const porta::rtc::Stats before = porta::rtc::stats();
  porta::rtc::Module(src, token).kernel("twice").launch(dev, 5, y);
  const porta::rtc::Stats mid = porta::rtc::stats();
  porta::rtc::Module(src, token).kernel("twice").launch(dev, 5, y);
  const porta::rtc::Stats after = porta::rtc::stats();
  CHECK(after.compiles == mid.compiles);
  CHECK(after.memory_hits == mid.memory_hits + 1);
  CHECK(mid.compiles + mid.disk_hits == before.compiles + before.disk_hits + 1);
  PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), std::vector<std::int32_t>{0, 2, 4, 6, 8}));
}

// ---- across processes ------------------------------------------------------------------------------
namespace {
const char* kCacheSource =
    "PORTA_RTC_KERNEL void stamp(porta_index i, porta::rtc::View<double> y, double v) { y[i] = v + i; }";

int run_child(const std::string& mode, Device dev) {
  // This executable, by its path (in std::system, /proc/self/exe would be the shell).
  char self[4096];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return -1;
  self[len] = '\0';
  const std::string cmd = "PORTA_RTC_CHILD=" + mode + " PORTA_RTC_CHILD_DEVICE=" + dev.to_string() + " '" +
                          std::string(self) + "' \"[.rtc-child]\" > /dev/null 2>&1";
  return std::system(cmd.c_str());
}
}  // namespace

TEST_CASE("rtc: the disk cache serves a new process and survives a corrupt entry", "[rtc][cache]") {
  const Device dev = PORTA_TEST_DEVICE();
  char tmpl[] = "/tmp/porta-rtc-child-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  const char* old = std::getenv("PORTA_CACHE_DIR");
  const std::string saved = old != nullptr ? old : "";
  setenv("PORTA_CACHE_DIR", dir.c_str(), 1);
  CHECK(run_child("fresh", dev) == 0);   // compiles once, writes the entry
  CHECK(run_child("cached", dev) == 0);  // compiles nothing
  // Corrupt every entry: one truncated, the payload's bytes flipped.
  const std::string cmd =
      "for f in '" + dir + "'/rtc/*.bin; do head -c 40 \"$f\" > \"$f.x\" && mv \"$f.x\" \"$f\"; done";
  REQUIRE(std::system(cmd.c_str()) == 0);
  CHECK(run_child("corrupt", dev) == 0);  // compiles again, replaces the entry
  CHECK(run_child("cached", dev) == 0);
  setenv("PORTA_CACHE_DIR", saved.c_str(), 1);
  (void)std::system(("rm -rf '" + dir + "'").c_str());
}

TEST_CASE("rtc child process", "[.rtc-child]") {
  const char* mode = std::getenv("PORTA_RTC_CHILD");
  const char* dev_name = std::getenv("PORTA_RTC_CHILD_DEVICE");
  REQUIRE(mode != nullptr);
  REQUIRE(dev_name != nullptr);
  const Device dev = Device::parse(dev_name);
  Array<double> y = Array<double>::from(std::vector<double>(4, 0.0), dev);
  porta::rtc::Module(kCacheSource).kernel("stamp").launch(dev, 4, y, 0.5);
  const porta::rtc::Stats s = porta::rtc::stats();
  PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), std::vector<double>{0.5, 1.5, 2.5, 3.5}));
  const std::string m = mode;
  if (m == "fresh") {
    CHECK(s.compiles == 1);
    CHECK(s.disk_hits == 0);
  } else if (m == "cached") {
    CHECK(s.compiles == 0);
    CHECK(s.disk_hits == 1);
  } else {
    CHECK(s.disk_corrupt == 1);
    CHECK(s.compiles == 1);
  }
}

TEST_CASE("rtc: a missing host compiler makes the CPU's run-time kernels unavailable, saying why", "[rtc]") {
  const Device dev = PORTA_TEST_DEVICE();
  if (dev.is_gpu()) return;
  (void)cache_dir_once();
  CHECK(porta::rtc::unavailable_reason(dev).empty());
  CHECK(!porta::rtc::compiler_info(dev).empty());
  setenv("PORTA_RTC_CXX", "/nonexistent/c++", 1);
  const std::string why = porta::rtc::unavailable_reason(dev);
  Array<float> y = Array<float>::from(std::vector<float>{0}, dev);
  porta::rtc::Module m("PORTA_RTC_KERNEL void z(porta_index i, porta::rtc::View<float> y) { y[i] = 3; }",
                       "-DPORTA_NO_COMPILER_TEST");
  CHECK_THROWS_AS(m.kernel("z").launch(dev, 1, y), porta::Unavailable);
  unsetenv("PORTA_RTC_CXX");
  CHECK(why.find("/nonexistent/c++") != std::string::npos);
  CHECK(why.find("PORTA_RTC_CXX") != std::string::npos);
}
