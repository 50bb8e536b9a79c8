// SPDX-License-Identifier: Apache-2.0
// matmul, gemm (transposes, alpha, beta, both algorithms, TF32) and transpose, against a naive
// double-precision host reference; the CPU's gemm path whatever core OpenBLAS runs.
#include <strings.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/cpu_blas.hpp"
#include "backends/cpu/cpu_kernels.hpp"
#include "porta/math.hpp"
#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::GemmAlgorithm;
using porta::MatmulOptions;
using porta::Precision;
using porta::Shape;

namespace {

struct Dims {
  std::int64_t m, k, n;
};
const Dims kDims[] = {{1, 1, 1}, {3, 5, 7}, {1, 9, 4}, {6, 9, 1}, {17, 1, 3}, {257, 129, 65}};

// Row-major r x c stored as given (or transposed into it).
template <class T>
long double at(const std::vector<T>& x, std::int64_t cols, std::int64_t r, std::int64_t c) {
  return static_cast<long double>(x[static_cast<std::size_t>(r * cols + c)]);
}

// C = alpha * op(A) op(B) + beta * C0 in long double, with the per-element bound
// (k + 3) * eps * (|alpha| sum |a||b| + |beta c0|) (+ tf32's input rounding).
template <class T>
void gemm_ref(const Dims& d, long double alpha, const std::vector<T>& a, bool ta, const std::vector<T>& b, bool tb,
              long double beta, const std::vector<T>& c0, std::vector<long double>& out,
              std::vector<long double>& bound, long double input_rel = 0) {
  out.assign(static_cast<std::size_t>(d.m * d.n), 0.0L);
  bound.assign(out.size(), 0.0L);
  for (std::int64_t i = 0; i < d.m; ++i)
    for (std::int64_t j = 0; j < d.n; ++j) {
      long double s = 0, sa = 0;
      for (std::int64_t p = 0; p < d.k; ++p) {
        const long double av = ta ? at(a, d.m, p, i) : at(a, d.k, i, p);
        const long double bv = tb ? at(b, d.k, j, p) : at(b, d.n, p, j);
        s += av * bv;
        sa += std::fabs(av * bv);
      }
      const long double cv = beta != 0 ? at(c0, d.n, i, j) : 0.0L;
      out[i * d.n + j] = alpha * s + beta * cv;
      bound[i * d.n + j] = (static_cast<long double>(d.k + 3) * porta_test::eps<T>() + input_rel) *
                               (std::fabs(alpha) * sa + std::fabs(beta * cv)) +
                           std::numeric_limits<T>::min();
    }
}

template <class T>
porta_test::Result check_gemm(const std::vector<T>& got, const std::vector<long double>& ref,
                              const std::vector<long double>& bound) {
  if constexpr (std::is_floating_point_v<T>) {
    return porta_test::compare_bound(got, ref, bound);
  } else {
    std::vector<T> r(ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i) r[i] = static_cast<T>(ref[i]);
    return porta_test::compare_exact(got, r);
  }
}

template <class T>
struct AB {
  T alpha, beta;
};
// beta == 0 (C must be overwritten, never read), 1 and another value; integer values that wrap.
template <class T>
std::vector<AB<T>> alpha_betas() {
  const bool fp = std::is_floating_point_v<T>;
  return {{T(1), T(0)}, {fp ? T(-1.5) : T(-3), T(0)}, {T(2), T(1)}, {fp ? T(0.5) : T(-2), fp ? T(-0.25) : T(5)}};
}

const char* algo_name(GemmAlgorithm g) {
  return g == GemmAlgorithm::vendor ? "vendor" : "own";
}

}  // namespace

TEMPLATE_TEST_CASE("matmul against a naive reference", "[matmul]", float, double, std::int32_t, std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (GemmAlgorithm algo : {GemmAlgorithm::vendor, GemmAlgorithm::own}) {
    for (const Dims& d : kDims) {
      INFO(algo_name(algo) << " on " << dev.to_string() << ": (" << d.m << "x" << d.k << ") * (" << d.k << "x" << d.n
                           << ")");
      const auto ha = porta_test::nonzero<T>(rng, d.m * d.k, T(-1), T(-1));
      const auto hb = porta_test::nonzero<T>(rng, d.k * d.n, T(-1), T(-1));
      const auto a = Array<T>::from(ha, Shape{d.m, d.k}, dev);
      const auto b = Array<T>::from(hb, Shape{d.k, d.n}, dev);
      std::vector<long double> ref, bound;
      gemm_ref<T>(d, 1, ha, false, hb, false, 0, {}, ref, bound);
      porta_test::poison_pool<T>(d.m * d.n, dev);
      MatmulOptions opt;
      opt.algorithm = algo;
      const Array<T> c = porta::matmul(a, b, opt);
      CHECK(c.shape() == Shape{d.m, d.n});
      CHECK(c.device() == dev);
      PORTA_CHECK_RESULT(check_gemm(c.to_vector(), ref, bound));
      PORTA_CHECK_RESULT(porta_test::compare_exact(a.to_vector(), ha));
      PORTA_CHECK_RESULT(porta_test::compare_exact(b.to_vector(), hb));
    }
  }
}

TEMPLATE_TEST_CASE("gemm: transposes, alpha, beta", "[matmul][gemm]", float, double, std::int32_t, std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::vector<AB<T>> abs = alpha_betas<T>();
  for (GemmAlgorithm algo : {GemmAlgorithm::vendor, GemmAlgorithm::own})
    for (const Dims& d : kDims)
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (const AB<T>& ab : abs) {
            INFO(algo_name(algo) << " on " << dev.to_string() << ": m=" << d.m << " k=" << d.k << " n=" << d.n
                                 << " trans_a=" << ta << " trans_b=" << tb << " alpha=" << porta_test::show(ab.alpha)
                                 << " beta=" << porta_test::show(ab.beta));
            const auto ha = porta_test::nonzero<T>(rng, d.m * d.k);
            const auto hb = porta_test::nonzero<T>(rng, d.k * d.n);
            const auto hc = porta_test::nonzero<T>(rng, d.m * d.n);
            const auto a = Array<T>::from(ha, ta ? Shape{d.k, d.m} : Shape{d.m, d.k}, dev);
            const auto b = Array<T>::from(hb, tb ? Shape{d.n, d.k} : Shape{d.k, d.n}, dev);
            // beta == 0 must overwrite C: start from poison (NaN) there, which must not leak through
            auto c = ab.beta == T(0) ? porta_test::poisoned<T>(Shape{d.m, d.n}, dev)
                                     : Array<T>::from(hc, Shape{d.m, d.n}, dev);
            std::vector<long double> ref, bound;
            gemm_ref<T>(d, ab.alpha, ha, ta, hb, tb, ab.beta, hc, ref, bound);
            MatmulOptions opt;
            opt.algorithm = algo;
            porta::gemm(ab.alpha, a, ta, b, tb, ab.beta, c, opt);
            CHECK(c.shape() == Shape{d.m, d.n});
            PORTA_CHECK_RESULT(check_gemm(c.to_vector(), ref, bound));
          }
}

// Matrix-vector shapes (n == 1: C is a column; m == 1: C is a row), which the CPU backend sends to
// its own gemv kernel: odd lengths around its vector widths, 4-row blocks and 8 KiB strips, k long
// enough to be cut into chunks, and alpha == 0 (A and B not read, as BLAS).
TEMPLATE_TEST_CASE("gemm: matrix-vector shapes", "[matmul][gemm][gemv]", float, double, std::int32_t, std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  std::vector<AB<T>> abs = alpha_betas<T>();
  abs.push_back({T(0), T(2)});  // A and B must not be read
  struct LK {
    std::int64_t len, k;  // len: the vector length of C
  };
  const LK sizes[] = {{1, 1},    {1, 7},      {1, 100003}, {7, 1},      {7, 33},     {7, 100003},
                      {1023, 7}, {1023, 300}, {4097, 1},   {4097, 300}, {2050, 2049}};
  for (const LK& s : sizes)
    for (bool column : {true, false}) {
      // column: (len x k) * (k x 1); row: (1 x k) * (k x len)
      const Dims d = column ? Dims{s.len, s.k, 1} : Dims{1, s.k, s.len};
      const auto ha = porta_test::nonzero<T>(rng, d.m * d.k);
      const auto hb = porta_test::nonzero<T>(rng, d.k * d.n);
      const auto hc = porta_test::nonzero<T>(rng, d.m * d.n);
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          // alpha = 1, beta = 0 gives the plain sums; the other cases scale them on the host.
          std::vector<long double> sum, sum_bound;
          gemm_ref<T>(d, 1, ha, ta, hb, tb, 0, {}, sum, sum_bound);
          const auto a = Array<T>::from(ha, ta ? Shape{d.k, d.m} : Shape{d.m, d.k}, dev);
          const auto b = Array<T>::from(hb, tb ? Shape{d.n, d.k} : Shape{d.k, d.n}, dev);
          for (const AB<T>& ab : abs)
            for (GemmAlgorithm algo : {GemmAlgorithm::vendor, GemmAlgorithm::own}) {
              INFO(algo_name(algo) << " on " << dev.to_string() << ": m=" << d.m << " k=" << d.k << " n=" << d.n
                                   << " trans_a=" << ta << " trans_b=" << tb << " alpha=" << porta_test::show(ab.alpha)
                                   << " beta=" << porta_test::show(ab.beta));
              std::vector<long double> ref(sum.size()), bound(sum.size());
              for (std::size_t i = 0; i < sum.size(); ++i) {
                const long double al = ab.alpha, be = ab.beta, cv = be != 0 ? static_cast<long double>(hc[i]) : 0;
                ref[i] = al * sum[i] + be * cv;
                // sum_bound = (k + 3) eps sum|a b| + min: scale its first part by |alpha|
                const long double tiny = std::numeric_limits<T>::min();
                bound[i] = std::fabs(al) * (sum_bound[i] - tiny) +
                           static_cast<long double>(d.k + 3) * porta_test::eps<T>() * std::fabs(be * cv) + tiny;
              }
              if constexpr (!std::is_floating_point_v<T>) {  // wraps like the unsigned arithmetic
                for (std::size_t i = 0; i < sum.size(); ++i) {
                  T sv = 0;
                  for (std::int64_t p = 0; p < d.k; ++p) {
                    const std::int64_t ii = column ? static_cast<std::int64_t>(i) : 0;
                    const std::int64_t jj = column ? 0 : static_cast<std::int64_t>(i);
                    const T av = ha[static_cast<std::size_t>(ta ? p * d.m + ii : ii * d.k + p)];
                    const T bv = hb[static_cast<std::size_t>(tb ? jj * d.k + p : p * d.n + jj)];
                    sv = porta_test::ref::add(sv, porta_test::ref::mul(av, bv));
                  }
                  T r = porta_test::ref::mul(ab.alpha, sv);
                  if (ab.beta != T(0)) r = porta_test::ref::add(porta_test::ref::mul(ab.beta, hc[i]), r);
                  ref[i] = static_cast<long double>(r);
                }
              }
              auto c = ab.beta == T(0) ? porta_test::poisoned<T>(Shape{d.m, d.n}, dev)
                                       : Array<T>::from(hc, Shape{d.m, d.n}, dev);
              MatmulOptions opt;
              opt.algorithm = algo;
              porta::gemm(ab.alpha, a, ta, b, tb, ab.beta, c, opt);
              PORTA_CHECK_RESULT(check_gemm(c.to_vector(), ref, bound));
            }
          if (!ta && !tb) {  // matmul allocates its result: it must write every element too
            porta_test::poison_pool<T>(d.m * d.n, dev);
            PORTA_CHECK_RESULT(check_gemm(porta::matmul(a, b).to_vector(), sum, sum_bound));
          }
        }
    }
}

TEST_CASE("matmul with TF32 precision", "[matmul][tf32]") {
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (GemmAlgorithm algo : {GemmAlgorithm::vendor, GemmAlgorithm::own}) {
    const Dims d{257, 129, 65};
    INFO(algo_name(algo) << " on " << dev.to_string());
    const auto ha = porta_test::nonzero<float>(rng, d.m * d.k);
    const auto hb = porta_test::nonzero<float>(rng, d.k * d.n);
    std::vector<long double> ref, bound;
    // TF32 keeps 10 explicit mantissa bits: each input is off by up to 2^-11 relative
    gemm_ref<float>(d, 1, ha, false, hb, false, 0, {}, ref, bound, 2 * std::ldexp(1.0L, -11) + 1e-6L);
    MatmulOptions opt;
    opt.precision = Precision::tf32;
    opt.algorithm = algo;
    const auto c =
        porta::matmul(Array<float>::from(ha, Shape{d.m, d.k}, dev), Array<float>::from(hb, Shape{d.k, d.n}, dev), opt);
    PORTA_CHECK_RESULT(porta_test::compare_bound(c.to_vector(), ref, bound));
  }
  // TF32 on doubles is ignored (full precision)
  const auto hd = porta_test::nonzero<double>(rng, 9 * 5);
  MatmulOptions opt;
  opt.precision = Precision::tf32;
  const auto a = Array<double>::from(hd, Shape{9, 5}, dev);
  const auto b = Array<double>::from(hd, Shape{5, 9}, dev);
  std::vector<long double> ref, bound;
  gemm_ref<double>({9, 5, 9}, 1, hd, false, hd, false, 0, {}, ref, bound);
  PORTA_CHECK_RESULT(porta_test::compare_bound(porta::matmul(a, b, opt).to_vector(), ref, bound));
}

TEMPLATE_TEST_CASE("integer matmul is exact, also with wrapping", "[matmul][int]", std::int32_t, std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const Dims d{31, 17, 23};
  const auto ha = porta_test::nonzero<T>(rng, d.m * d.k, T(1), T(100000));  // int32 products wrap
  const auto hb = porta_test::nonzero<T>(rng, d.k * d.n, T(1), T(100000));
  std::vector<T> ref(static_cast<std::size_t>(d.m * d.n));
  for (std::int64_t i = 0; i < d.m; ++i)
    for (std::int64_t j = 0; j < d.n; ++j) {
      T s = 0;
      for (std::int64_t p = 0; p < d.k; ++p)
        s = porta_test::ref::add(s, porta_test::ref::mul(ha[i * d.k + p], hb[p * d.n + j]));
      ref[i * d.n + j] = s;
    }
  for (GemmAlgorithm algo : {GemmAlgorithm::vendor, GemmAlgorithm::own}) {
    INFO(algo_name(algo));
    MatmulOptions opt;
    opt.algorithm = algo;
    const auto c =
        porta::matmul(Array<T>::from(ha, Shape{d.m, d.k}, dev), Array<T>::from(hb, Shape{d.k, d.n}, dev), opt);
    PORTA_CHECK_RESULT(porta_test::compare_exact(c.to_vector(), ref));
  }
}

TEST_CASE("gemm with k = 0 scales C by beta; empty outputs are fine", "[matmul][empty]") {
  const Device dev = PORTA_TEST_DEVICE();
  const auto a = porta::zeros<double>({4, 0}, dev);
  const auto b = porta::zeros<double>({0, 3}, dev);
  const auto c = porta::matmul(a, b);
  CHECK(c.shape() == Shape{4, 3});
  PORTA_CHECK_RESULT(porta_test::compare_exact(c.to_vector(), std::vector<double>(12, 0.0)));
  auto c2 = porta::full<double>({4, 3}, 2.0, dev);
  porta::gemm(1.0, a, false, b, false, 3.0, c2);
  PORTA_CHECK_RESULT(porta_test::compare_exact(c2.to_vector(), std::vector<double>(12, 6.0)));
  const auto e = porta::matmul(porta::zeros<float>({0, 5}, dev), porta::zeros<float>({5, 2}, dev));
  CHECK(e.shape() == Shape{0, 2});
}

TEMPLATE_TEST_CASE("gemm with alpha = 0 reads neither A nor B (the BLAS rule), on every path", "[matmul][gemm][ieee]",
                   float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const T nan = std::numeric_limits<T>::quiet_NaN();
  for (GemmAlgorithm algo : {GemmAlgorithm::vendor, GemmAlgorithm::own}) {
    for (const auto& mkn : {std::array<std::int64_t, 3>{2, 2, 2}, {7, 1, 5}, {1, 9, 3}, {33, 17, 65}}) {
      const std::int64_t m = mkn[0], n = mkn[1], k = mkn[2];
      INFO(algo_name(algo) << " on " << dev.to_string() << ": m " << m << ", n " << n << ", k " << k);
      auto ha = porta_test::nonzero<T>(rng, m * k);
      auto hb = porta_test::nonzero<T>(rng, k * n);
      ha[0] = nan;
      hb[static_cast<std::size_t>(k * n - 1)] = std::numeric_limits<T>::infinity();
      const auto hc = porta_test::nonzero<T>(rng, m * n);
      const auto a = Array<T>::from(ha, Shape{m, k}, dev);
      const auto b = Array<T>::from(hb, Shape{k, n}, dev);
      for (const T beta : {T(0), T(1), T(-2.5)}) {
        auto c = Array<T>::from(hc, Shape{m, n}, dev);
        porta::gemm(T(0), a, false, b, false, beta, c, porta::MatmulOptions{porta::Precision::highest, algo});
        std::vector<T> expect(hc.size());
        for (std::size_t i = 0; i < hc.size(); ++i) expect[i] = beta == T(0) ? T(0) : static_cast<T>(beta * hc[i]);
        PORTA_CHECK_RESULT(porta_test::compare_exact(c.to_vector(), expect));
      }
    }
  }
}

TEST_CASE("out of memory for matmul's result names porta::matmul; a result past 2^63 elements is refused",
          "[matmul][errors][oom]") {
  const Device dev = PORTA_TEST_DEVICE();
  // 2^21 x 2^21 floats: 16 TiB, more than any device here has.
  const auto a = porta::ones<float>({std::int64_t{1} << 21, 1}, dev);
  const auto b = porta::ones<float>({1, std::int64_t{1} << 21}, dev);
  try {
    (void)porta::matmul(a, b);
    FAIL("a 16 TiB result was allocated");
  } catch (const porta::OutOfMemory& e) {
    CHECK_THAT(e.what(), porta_test::Contains("porta::matmul"));
    CHECK(e.requested_bytes() == (std::uint64_t{1} << 44));
    CHECK(e.device() == dev);
  }
  // Still usable afterwards.
  const auto s = porta::matmul(porta::ones<float>({2, 3}, dev), porta::ones<float>({3, 2}, dev));
  PORTA_CHECK_RESULT(porta_test::compare_exact(s.to_vector(), std::vector<float>(4, 3.0f)));
  const auto z1 = porta::zeros<float>({std::int64_t{1} << 32, 0}, dev);
  const auto z2 = porta::zeros<float>({0, std::int64_t{1} << 32}, dev);
  CHECK_THROWS_WITH(porta::matmul(z1, z2), porta_test::Contains("porta::matmul") && porta_test::Contains("2^63"));
}

TEMPLATE_TEST_CASE("transpose", "[matmul][transpose]", float, double, std::int32_t, std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  struct RC {
    std::int64_t r, c;
  };
  for (RC rc : {RC{1, 1}, RC{1, 7}, RC{7, 1}, RC{3, 5}, RC{33, 65}, RC{1000, 1001}, RC{0, 4}}) {
    INFO(rc.r << "x" << rc.c);
    const auto h = porta_test::nonzero<T>(rng, rc.r * rc.c);
    std::vector<T> ref(h.size());
    for (std::int64_t i = 0; i < rc.r; ++i)
      for (std::int64_t j = 0; j < rc.c; ++j) ref[j * rc.r + i] = h[i * rc.c + j];
    porta_test::poison_pool<T>(rc.r * rc.c, dev);
    const auto t = porta::transpose(Array<T>::from(h, Shape{rc.r, rc.c}, dev));
    CHECK(t.shape() == Shape{rc.c, rc.r});
    PORTA_CHECK_RESULT(porta_test::compare_exact(t.to_vector(), ref));
  }
}

// ---- the CPU's gemm path whatever core OpenBLAS runs ---------------------------------------------
// OpenBLAS picks its kernels from the CPU model and falls back to Prescott's SSE3 kernels on a model
// it does not know, which virtual machines make common. ctest runs the [blas-core] cases a second
// time with OPENBLAS_CORETYPE=Prescott in the environment, a value porta must leave alone: float
// and double gemm must then take porta's own kernel, porta-info must say so, and the results must
// be right.
namespace {

namespace pcpu = porta::detail::cpu;

bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && ::strcasecmp(v, value) == 0;
}

#if defined(PORTA_INFO_EXE)
std::string run_porta_info(const char* args) {
  std::string out;
  if (FILE* p = ::popen((std::string("\"") + PORTA_INFO_EXE + "\" " + args).c_str(), "r")) {
    char buf[4096];
    for (std::size_t got; (got = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, got);
    ::pclose(p);
  }
  return out;
}
#endif

}  // namespace

TEST_CASE("CPU gemm never runs on an OpenBLAS core weaker than porta's own kernel", "[matmul][blas-core]") {
  const pcpu::GemmChoice& g = pcpu::gemm_choice();
  const pcpu::CpuIsa& cpu = pcpu::cpu_isa();
  INFO("CPU " << cpu.brand << ": " << pcpu::isa_level_name(cpu.level) << " (" << cpu.features << "); OpenBLAS core "
              << g.core << " (at load " << g.core_at_load << "); f32 " << g.f32 << ", f64 " << g.f64 << "; "
              << g.reason);
  CHECK(!g.reason.empty());
  CHECK(g.f32 == g.f64);
  const std::string own = std::string("porta kernel (") + pcpu::isa_level_name(g.own_level) + ")";
  if (g.path == pcpu::GemmPath::own) CHECK(g.f32 == own);
  pcpu::IsaLevel core = pcpu::IsaLevel::baseline;
  if (g.path == pcpu::GemmPath::blas && g.openblas && pcpu::openblas_core_level(g.core, core)) {
    CHECK(g.f32 == "OpenBLAS (" + g.core + ")");
    CHECK(core >= g.own_level);
    CHECK(core <= cpu.level);
  }
  if (g.coretype_env) CHECK_FALSE(g.core_reselected);  // a user's OPENBLAS_CORETYPE is never overridden
  if (env_is("PORTA_TEST_EXPECT_OPENBLAS", "1")) REQUIRE(g.openblas);
  // OPENBLAS_CORETYPE only reaches OpenBLAS builds that carry several cores (DYNAMIC_ARCH).
  const bool dynamic_arch = std::string(pcpu::blas_description()).find("DYNAMIC_ARCH") != std::string::npos;
  if (env_is("OPENBLAS_CORETYPE", "Prescott") && g.openblas && dynamic_arch) {
    CHECK(g.coretype_env);
    CHECK(g.coretype == std::getenv("OPENBLAS_CORETYPE"));
    CHECK(::strcasecmp(g.core.c_str(), "Prescott") == 0);
    if (g.own_level > pcpu::IsaLevel::baseline) {
      CHECK(g.path == pcpu::GemmPath::own);
      CHECK(g.f32 == own);
    }
  }
#if defined(PORTA_INFO_EXE)
  const std::string text = run_porta_info(""), json = run_porta_info("--json");
  CHECK_THAT(text, porta_test::Contains("f32 gemm:      " + g.f32 + "\n"));
  CHECK_THAT(text, porta_test::Contains("f64 gemm:      " + g.f64 + "\n"));
  CHECK_THAT(text, porta_test::Contains(std::string("CPU ISA:       ") + pcpu::isa_level_name(cpu.level)));
  CHECK_THAT(json, porta_test::Contains("\"f32\": \"" + g.f32 + "\""));
  CHECK_THAT(json, porta_test::Contains("\"openblas_core\": \"" + g.core + "\""));
#endif
}

TEMPLATE_TEST_CASE("CPU matmul on the path porta picks for the BLAS core: edges of the kernel's tiles and blocks",
                   "[matmul][blas-core]", float, double) {
  using T = TestType;
  const Device dev(porta::DeviceType::cpu, 0);
  PORTA_RNG(rng);
  INFO("f32 " << pcpu::gemm_choice().f32 << "; " << pcpu::gemm_choice().reason);
  // Own-kernel tiles are 12 x 32 floats / 12 x 16 doubles (AVX-512) and 6 x 16 / 6 x 8 (AVX2); its
  // blocks are 384 / 256 deep, 1020 rows tall and 1024 / 768 columns wide.
  const Dims dims[] = {{13, 7, 33},     {12, 384, 32},   {25, 385, 97}, {100, 300, 77},
                       {1021, 257, 35}, {37, 777, 1030}, {6, 1, 17},    {2, 2, 2}};
  for (const Dims& d : dims) {
    INFO("(" << d.m << "x" << d.k << ") * (" << d.k << "x" << d.n << ")");
    const auto ha = porta_test::nonzero<T>(rng, d.m * d.k);
    const auto hb = porta_test::nonzero<T>(rng, d.k * d.n);
    std::vector<long double> ref, bound;
    gemm_ref<T>(d, 1, ha, false, hb, false, 0, {}, ref, bound);
    porta_test::poison_pool<T>(d.m * d.n, dev);
    const auto c = porta::matmul(Array<T>::from(ha, Shape{d.m, d.k}, dev), Array<T>::from(hb, Shape{d.k, d.n}, dev));
    PORTA_CHECK_RESULT(check_gemm(c.to_vector(), ref, bound));
  }
  // Transposes, alpha and beta on a shape that is no multiple of any tile.
  const Dims d{67, 389, 45};
  const auto hc = porta_test::nonzero<T>(rng, d.m * d.n);
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (const AB<T>& ab : alpha_betas<T>()) {
        INFO("trans_a=" << ta << " trans_b=" << tb << " alpha=" << ab.alpha << " beta=" << ab.beta);
        const auto ha = porta_test::nonzero<T>(rng, d.m * d.k);
        const auto hb = porta_test::nonzero<T>(rng, d.k * d.n);
        std::vector<long double> ref, bound;
        gemm_ref<T>(d, ab.alpha, ha, ta, hb, tb, ab.beta, hc, ref, bound);
        auto c =
            ab.beta == T(0) ? porta_test::poisoned<T>(Shape{d.m, d.n}, dev) : Array<T>::from(hc, Shape{d.m, d.n}, dev);
        porta::gemm(ab.alpha, Array<T>::from(ha, ta ? Shape{d.k, d.m} : Shape{d.m, d.k}, dev), ta,
                    Array<T>::from(hb, tb ? Shape{d.n, d.k} : Shape{d.k, d.n}, dev), tb, ab.beta, c);
        PORTA_CHECK_RESULT(check_gemm(c.to_vector(), ref, bound));
      }
}

namespace {

// porta's fixed GEMM order (GemmAlgorithm::own, docs/determinism.md), on the host: each element is
// one fused multiply-add chain over k in order from +0, then alpha * s, then + beta * C (C alone
// when alpha == 0, nothing of C when beta == 0), each rounded once; a NaN is the canonical NaN.
template <class T>
std::vector<T> fixed_order_ref(const Dims& d, T alpha, const std::vector<T>& a, bool ta, const std::vector<T>& b,
                               bool tb, T beta, const std::vector<T>& c0) {
  namespace pm = porta::math;
  std::vector<T> out(static_cast<std::size_t>(d.m * d.n));
  for (std::int64_t i = 0; i < d.m; ++i)
    for (std::int64_t j = 0; j < d.n; ++j) {
      T s = T(0);
      for (std::int64_t p = 0; p < d.k; ++p) {
        const T av = a[static_cast<std::size_t>(ta ? p * d.m + i : i * d.k + p)];
        const T bv = b[static_cast<std::size_t>(tb ? j * d.k + p : p * d.n + j)];
        s = pm::fma(av, bv, s);
      }
      const T cv = c0[static_cast<std::size_t>(i * d.n + j)];
      T v = alpha == T(0) ? T(0) : pm::mul(alpha, s);
      if (beta != T(0)) v = alpha == T(0) ? pm::mul(beta, cv) : pm::add(v, pm::mul(beta, cv));
      out[static_cast<std::size_t>(i * d.n + j)] = std::isnan(v) ? std::numeric_limits<T>::quiet_NaN() : v;
    }
  return out;
}

}  // namespace

// GemmAlgorithm::own is porta's fixed-order kernel: the same bits on every device, thread count and
// shape (matrix-vector included), so the host's sequential chain predicts every bit. Inputs span
// 2^-8 .. 2^8 so that any other order or a missing FMA shows; k crosses the CPU's blocks of k (384
// floats, 256 doubles) and the GPU's steps of 8 with a ragged tail; C crosses the tiles.
TEMPLATE_TEST_CASE("gemm with GemmAlgorithm::own: porta's fixed order, bit for bit on every device",
                   "[matmul][gemm][determinism]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  std::uniform_int_distribution<int> scale(-8, 8);
  const auto values = [&](std::int64_t n) {
    std::vector<T> v(static_cast<std::size_t>(n));
    for (T& x : v) x = std::ldexp(rng.uniform<T>(T(-1), T(1)), scale(rng.engine()));
    return v;
  };
  const Dims dims[] = {{1, 1, 1}, {1, 300, 1}, {1, 301, 50}, {50, 301, 1}, {37, 300, 29}, {130, 1001, 70}};
  const AB<T> abs[] = {{T(1), T(0)}, {T(0.75), T(0)}, {T(-1.5), T(0.5)}, {T(0), T(2)}};
  for (const Dims& d : dims)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (const AB<T>& ab : abs) {
          INFO("own on " << dev.to_string() << ": m=" << d.m << " k=" << d.k << " n=" << d.n << " trans_a=" << ta
                         << " trans_b=" << tb << " alpha=" << porta_test::show(ab.alpha)
                         << " beta=" << porta_test::show(ab.beta));
          auto ha = values(d.m * d.k);
          const auto hb = values(d.k * d.n), hc = values(d.m * d.n);
          if (d.m * d.k > 1) ha[1] = std::numeric_limits<T>::quiet_NaN();  // a NaN row (or column): canonical
          const auto a = Array<T>::from(ha, ta ? Shape{d.k, d.m} : Shape{d.m, d.k}, dev);
          const auto b = Array<T>::from(hb, tb ? Shape{d.n, d.k} : Shape{d.k, d.n}, dev);
          auto c = ab.beta == T(0) ? porta_test::poisoned<T>(Shape{d.m, d.n}, dev)
                                   : Array<T>::from(hc, Shape{d.m, d.n}, dev);
          porta::gemm(ab.alpha, a, ta, b, tb, ab.beta, c, MatmulOptions{Precision::highest, GemmAlgorithm::own});
          const auto want = fixed_order_ref<T>(d, ab.alpha, ha, ta, hb, tb, ab.beta, hc);
          const auto got = c.to_vector();
          REQUIRE(got.size() == want.size());
          for (std::size_t i = 0; i < got.size(); ++i) {
            INFO("element " << i << ": got " << porta_test::show(got[i]) << ", expected " << porta_test::show(want[i]));
            REQUIRE(porta_test::same_bits(got[i], want[i]));
          }
        }
  // A sum that underflows to -0 stays -0 through the rest of k (the GPU pads k to its step of 8).
  const T tiny = std::is_same_v<T, float> ? T(1e-30) : T(1e-200);
  const auto a = Array<T>::from(std::vector<T>{T(0), -tiny}, Shape{1, 2}, dev);
  const auto b = Array<T>::from(std::vector<T>{T(1), tiny}, Shape{2, 1}, dev);
  const auto c = porta::matmul(a, b, MatmulOptions{Precision::highest, GemmAlgorithm::own});
  const T got = c.to_vector()[0];
  CHECK(got == T(0));
  CHECK(std::signbit(got));
}
