// SPDX-License-Identifier: Apache-2.0
// Scans: inclusive and exclusive sum and max, whole and along an axis, every dtype on every device.
// Results are compared bit for bit with the canonical order (include/porta/detail/scan_order.hpp)
// as this file computes it again from its text, independently of porta's code, and the sums with a
// long double reference within a bound. [determinism]: the same bits under 1, 2 and 3 OpenMP
// threads and on every device.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::ScanOp;
using porta::Shape;
using porta_test::Contains;

#define PORTA_TEST_TYPES float, double, std::int32_t, std::int64_t

namespace {

// Around the group (16), tile (4096) and Fenwick block boundaries.
const std::int64_t kSizes[] = {1, 2, 15, 16, 17, 4095, 4096, 4097, 3 * 4096 + 5, 8 * 4096, 13 * 4096 + 1, 200003};

// ---- the canonical order, from its definition ----------------------------------------------------

template <class T>
T identity(ScanOp op) {
  if (op == ScanOp::sum) return std::is_floating_point_v<T> ? T(-0.0) : T(0);
  return std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
}
template <class T>
T apply(ScanOp op, T a, T b) {
  return op == ScanOp::sum ? porta_test::ref::add(a, b) : porta_test::ref::max(a, b);
}
template <class T>
T canon(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(v)) return std::numeric_limits<T>::quiet_NaN();
  }
  return v;
}

// B(k, j): the pairwise sum of tiles [k 2^j, (k + 1) 2^j).
template <class T>
T block_sum(const std::vector<T>& S, std::int64_t k, int j, ScanOp op) {
  if (j == 0) return S[static_cast<std::size_t>(k)];
  return apply(op, block_sum(S, 2 * k, j - 1, op), block_sum(S, 2 * k + 1, j - 1, op));
}

// The scan of x, exactly as scan_order.hpp describes it.
template <class T>
std::vector<T> canonical_scan(const std::vector<T>& x, ScanOp op, bool exclusive) {
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  const T id = identity<T>(op);
  const std::int64_t tiles = (n + 4095) / 4096;
  std::vector<T> L(static_cast<std::size_t>(tiles * 4096)), S(static_cast<std::size_t>(tiles));
  for (std::int64_t t = 0; t < tiles; ++t) {
    auto at = [&](std::int64_t i) { return t * 4096 + i < n ? x[static_cast<std::size_t>(t * 4096 + i)] : id; };
    std::vector<T> s(4096), total(256), w(256), e(256);
    for (int g = 0; g < 256; ++g) {
      s[g * 16] = at(g * 16);
      for (int j = 1; j < 16; ++j) s[g * 16 + j] = apply(op, s[g * 16 + j - 1], at(g * 16 + j));
      total[g] = s[g * 16 + 15];
    }
    for (int wp = 0; wp < 8; ++wp) {
      std::vector<T> v(total.begin() + wp * 32, total.begin() + wp * 32 + 32);
      for (int d = 1; d < 32; d *= 2) {
        std::vector<T> next = v;  // all lanes at once
        for (int l = d; l < 32; ++l) next[l] = apply(op, v[l - d], v[l]);
        v = next;
      }
      for (int l = 0; l < 32; ++l) {
        w[wp * 32 + l] = v[l];
        e[wp * 32 + l] = l == 0 ? id : v[l - 1];
      }
    }
    for (int g = 0; g < 256; ++g) {
      const int wp = g / 32;
      T P = id;
      for (int q = 0; q < wp; ++q) P = apply(op, P, w[q * 32 + 31]);
      const T p = apply(op, P, e[g]);
      for (int j = 0; j < 16; ++j) L[static_cast<std::size_t>(t * 4096 + g * 16 + j)] = apply(op, p, s[g * 16 + j]);
    }
    S[static_cast<std::size_t>(t)] = L[static_cast<std::size_t>(t * 4096 + 4095)];
  }
  std::vector<T> y(x.size());
  // Each tile's carry: the blocks of its index's binary decomposition, largest first (once per tile:
  // block_sum is a tree over up to half the tiles).
  std::vector<T> carry(static_cast<std::size_t>(tiles), id);
  for (std::int64_t t = 0; t < tiles; ++t) {
    T c = id;
    std::int64_t pos = 0;
    for (int j = 62; j >= 0; --j) {
      if ((t >> j) & 1) {
        c = apply(op, c, block_sum(S, pos >> j, j, op));
        pos += std::int64_t(1) << j;
      }
    }
    carry[static_cast<std::size_t>(t)] = c;
  }
  for (std::int64_t i = 0; i < n; ++i) {
    const T c = carry[static_cast<std::size_t>(i / 4096)];
    const T v = canon(apply(op, c, L[static_cast<std::size_t>(i)]));
    if (!exclusive) {
      y[static_cast<std::size_t>(i)] = v;
    } else if (i + 1 < n) {
      y[static_cast<std::size_t>(i + 1)] = v;
    }
  }
  if (exclusive && n > 0) y[0] = op == ScanOp::sum ? T(0) : id;
  return y;
}

// Inputs: floats of mixed signs and magnitudes (so that the order shows in the bits), integers that
// wrap in int32 sums.
template <class T>
std::vector<T> scan_input(porta_test::Rng& rng, std::int64_t n) {
  if constexpr (std::is_floating_point_v<T>) {
    std::vector<T> v = porta_test::nonzero<T>(rng, n, T(-1), T(1));
    for (auto& a : v) a = std::ldexp(a, static_cast<int>(rng.uniform<std::int64_t>(-8, 8)));
    return v;
  } else {
    return porta_test::uniform<T>(rng, n, std::numeric_limits<T>::lowest() / 2, std::numeric_limits<T>::max() / 2);
  }
}

template <class T>
std::vector<T> run(const Array<T>& x, ScanOp op, bool exclusive) {
  return (exclusive ? porta::exclusive_scan(x, op) : porta::inclusive_scan(x, op)).to_vector();
}

// Lines along `axis` of a row-major array of `dims`: scanned one by one with canonical_scan.
template <class T>
std::vector<T> axis_reference(const std::vector<T>& h, const std::vector<std::int64_t>& dims, int axis, ScanOp op,
                              bool exclusive) {
  std::int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= dims[static_cast<std::size_t>(i)];
  for (std::size_t i = static_cast<std::size_t>(axis) + 1; i < dims.size(); ++i) inner *= dims[i];
  const std::int64_t n = dims[static_cast<std::size_t>(axis)];
  std::vector<T> out(h.size());
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      std::vector<T> line(static_cast<std::size_t>(n));
      for (std::int64_t q = 0; q < n; ++q)
        line[static_cast<std::size_t>(q)] = h[static_cast<std::size_t>((o * n + q) * inner + i)];
      const std::vector<T> r = canonical_scan(line, op, exclusive);
      for (std::int64_t q = 0; q < n; ++q)
        out[static_cast<std::size_t>((o * n + q) * inner + i)] = r[static_cast<std::size_t>(q)];
    }
  }
  return out;
}

}  // namespace

TEMPLATE_TEST_CASE("scans: inclusive and exclusive sum and max, bit for bit the canonical order", "[scan]",
                   PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : kSizes) {
    const std::vector<T> h = scan_input<T>(rng, n);
    const Array<T> x = Array<T>::from(h, dev);
    for (ScanOp op : {ScanOp::sum, ScanOp::max}) {
      for (bool exclusive : {false, true}) {
        INFO(dev.to_string() << ", n = " << n << (op == ScanOp::sum ? ", sum" : ", max")
                             << (exclusive ? ", exclusive" : ", inclusive"));
        const std::vector<T> got = run(x, op, exclusive);
        PORTA_CHECK_RESULT(porta_test::compare_exact(got, canonical_scan(h, op, exclusive)));
      }
    }
    // The input is untouched.
    PORTA_CHECK_RESULT(porta_test::compare_exact(x.to_vector(), h));
  }
}

TEMPLATE_TEST_CASE("scans: a long array, over a thousand tiles and eleven levels of carry blocks", "[scan]",
                   PORTA_TEST_TYPES) {
  // GPUs gather a tile's carry from the totals of its 32-tile window, the 32-tile blocks of its
  // 256-tile window and published blocks of 256 tiles and up (scan_kernels.cuh): 1025 tiles reach
  // all three, with blocks of up to 1024 tiles.
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t n = (std::int64_t(1) << 22) + 5;
  const std::vector<T> h = scan_input<T>(rng, n);
  const Array<T> x = Array<T>::from(h, dev);
  for (const auto& [op, exclusive] : {std::pair{ScanOp::sum, false}, std::pair{ScanOp::sum, true},
                                      std::pair{ScanOp::max, false}, std::pair{ScanOp::max, true}}) {
    INFO(dev.to_string() << ", n = " << n << (op == ScanOp::sum ? ", sum" : ", max")
                         << (exclusive ? ", exclusive" : ", inclusive"));
    PORTA_CHECK_RESULT(porta_test::compare_exact(run(x, op, exclusive), canonical_scan(h, op, exclusive)));
  }
}

TEMPLATE_TEST_CASE("scans: sums agree with a long double reference", "[scan]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t n = 300007;
  const std::vector<T> h = scan_input<T>(rng, n);
  const std::vector<T> got = porta::cumsum(Array<T>::from(h, dev)).to_vector();
  REQUIRE(got.size() == h.size());
  long double s = 0, abs_sum = 0;
  // A group of 16, 5 Kogge-Stone levels, 8 warps, a carry of at most log2(tiles) blocks, each a
  // pairwise tree: a few dozen roundings on any path.
  const long double bound = 96 * porta_test::eps<T>();
  std::int64_t bad = -1;
  for (std::int64_t i = 0; i < n; ++i) {
    s += h[static_cast<std::size_t>(i)];
    abs_sum += std::fabs(static_cast<long double>(h[static_cast<std::size_t>(i)]));
    if (std::fabs(static_cast<long double>(got[static_cast<std::size_t>(i)]) - s) > bound * abs_sum && bad < 0) bad = i;
  }
  INFO("first element outside the bound: " << bad);
  CHECK(bad < 0);
}

TEMPLATE_TEST_CASE("scans along an axis of 2-D and 3-D arrays", "[scan]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  // {3, 8193}: rows 2 and 3 start off a 16-byte boundary, with whole tiles in them (the GPU scan's
  // scalar path for full tiles).
  const std::vector<std::vector<std::int64_t>> shapes = {{3, 5000},    {5000, 3},    {7, 1},   {1, 9},
                                                         {4, 33, 130}, {2, 4100, 3}, {3, 8193}};
  for (const auto& dims : shapes) {
    const Shape shape = dims.size() == 2 ? Shape{dims[0], dims[1]} : Shape{dims[0], dims[1], dims[2]};
    const std::vector<T> h = scan_input<T>(rng, shape.size());
    const Array<T> x = Array<T>::from(h, shape, dev);
    for (int axis = 0; axis < static_cast<int>(dims.size()); ++axis) {
      for (bool exclusive : {false, true}) {
        for (ScanOp op : {ScanOp::sum, ScanOp::max}) {
          INFO(dev.to_string() << ", shape " << shape.to_string() << ", axis " << axis
                               << (exclusive ? ", exclusive" : ", inclusive")
                               << (op == ScanOp::sum ? ", sum" : ", max"));
          const Array<T> y = exclusive ? porta::exclusive_scan(x, axis, op) : porta::inclusive_scan(x, axis, op);
          CHECK(y.shape() == shape);
          PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), axis_reference(h, dims, axis, op, exclusive)));
        }
      }
    }
    // A negative axis counts from the end; cumsum and cummax are the inclusive scans.
    PORTA_CHECK_RESULT(porta_test::compare_exact(
        porta::cumsum(x, -1).to_vector(), porta::inclusive_scan(x, static_cast<int>(dims.size()) - 1).to_vector()));
    PORTA_CHECK_RESULT(porta_test::compare_exact(porta::cummax(x, 0).to_vector(),
                                                 porta::inclusive_scan(x, 0, ScanOp::max).to_vector()));
  }
}

TEST_CASE("scans: NaN, signed zero, infinities, the exclusive first element and empty arrays", "[scan]") {
  const Device dev = PORTA_TEST_DEVICE();
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  {
    // -0.0 stays -0.0 (the identity is -0.0, exact); the exclusive scan starts at +0.0.
    const auto x = Array<double>::from({-0.0, -0.0, 1.0}, dev);
    const auto inc = porta::cumsum(x).to_vector();
    CHECK(std::signbit(inc[0]));
    CHECK(std::signbit(inc[1]));
    CHECK(inc[2] == 1.0);
    const auto exc = porta::exclusive_scan(x).to_vector();
    CHECK((exc[0] == 0.0 && !std::signbit(exc[0])));
    CHECK(std::signbit(exc[1]));
    const auto mx = porta::cummax(Array<double>::from({-0.0, 0.0, -0.0}, dev)).to_vector();
    CHECK(std::signbit(mx[0]));
    CHECK(!std::signbit(mx[1]));
    CHECK(!std::signbit(mx[2]));
    const auto mexc = porta::exclusive_scan(x, ScanOp::max).to_vector();
    CHECK(mexc[0] == -inf);
  }
  {
    // NaN from its position on, as the canonical quiet NaN; inf - inf is NaN too.
    std::vector<float> h(10000, 1.0f);
    h[5000] = std::numeric_limits<float>::signaling_NaN();
    const auto x = Array<float>::from(h, dev);
    for (ScanOp op : {ScanOp::sum, ScanOp::max}) {
      const auto y = porta::inclusive_scan(x, op).to_vector();
      CHECK(y[4999] == (op == ScanOp::sum ? 5000.0f : 1.0f));
      for (std::size_t i = 5000; i < h.size(); ++i) {
        if (!porta_test::same_bits(y[i], std::numeric_limits<float>::quiet_NaN())) {
          FAIL_CHECK("element " << i << " is " << porta_test::show(y[i]));
          break;
        }
      }
    }
    const auto z = porta::cumsum(Array<double>::from({inf, -inf, 1.0}, dev)).to_vector();
    CHECK(z[0] == inf);
    CHECK(porta_test::same_bits(z[1], nan));
  }
  {
    const Array<float> e(Shape{0}, dev);
    CHECK(porta::cumsum(e).size() == 0);
    CHECK(porta::exclusive_scan(e, ScanOp::max).size() == 0);
    const Array<float> e2(Shape{3, 0}, dev);
    CHECK(porta::cumsum(e2, 0).shape() == e2.shape());
    CHECK(porta::cumsum(e2, 1).shape() == e2.shape());
    // A scalar scans as one element.
    const Array<std::int32_t> s = Array<std::int32_t>::from(std::vector<std::int32_t>{7}, Shape{}, dev);
    CHECK(porta::cumsum(s).to_vector() == std::vector<std::int32_t>{7});
    CHECK(porta::exclusive_scan(s).to_vector() == std::vector<std::int32_t>{0});
  }
  {
    // Integers wrap, as the reductions do.
    const auto y = porta::cumsum(Array<std::int32_t>::from({2147483647, 1, 1}, dev)).to_vector();
    CHECK(y == std::vector<std::int32_t>{2147483647, -2147483647 - 1, -2147483647});
    const auto m = porta::exclusive_scan(Array<std::int64_t>::from({5, -3}, dev), ScanOp::max).to_vector();
    CHECK(m == std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::lowest(), 5});
  }
}

TEST_CASE("scans: bad arguments name the function and the values", "[scan]") {
  const Device dev = PORTA_TEST_DEVICE();
  const auto x = Array<float>::from(std::vector<float>(6, 1.0f), Shape{2, 3}, dev);
  CHECK_THROWS_AS(porta::cumsum(x, 2), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::cumsum(x, 2), Contains("porta::inclusive_scan") && Contains("axis 2") && Contains("2x3"));
  CHECK_THROWS_WITH(porta::exclusive_scan(x, -3), Contains("porta::exclusive_scan") && Contains("axis -3"));
  const Array<float> scalar = Array<float>::from(std::vector<float>{1.0f}, Shape{}, dev);
  CHECK_THROWS_WITH(porta::cumsum(scalar, 0), Contains("porta::inclusive_scan") && Contains("scalar"));
  Array<float> moved = Array<float>::from({1.0f, 2.0f}, dev);
  Array<float> taken = std::move(moved);
  CHECK_THROWS_AS(porta::cumsum(moved), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::cumsum(moved), Contains("porta::inclusive_scan"));
  CHECK_THROWS_WITH(porta::inclusive_scan(taken, static_cast<ScanOp>(7)), Contains("unknown ScanOp 7"));
  if (const auto other = porta_test::other_device(dev)) {
    porta::Stream s(*other);
    CHECK_THROWS_AS(porta::cumsum(taken, s), porta::DeviceMismatch);
  }
}

TEMPLATE_TEST_CASE("scans: the same bits under 1, 2 and 3 threads and on every device", "[scan][determinism]", float,
                   double) {
  using T = TestType;
  PORTA_RNG(rng);
  const std::int64_t n = 37 * 4096 + 11;  // 38 tiles: every Fenwick level up to 32
  const std::vector<T> h = scan_input<T>(rng, n);
  const std::vector<T> expect = canonical_scan(h, ScanOp::sum, false);
  const std::vector<T> expect_x = canonical_scan(h, ScanOp::sum, true);
  for (const Device dev : porta_test::test_devices()) {
    const Array<T> x = Array<T>::from(h, dev);
    porta_test::for_each_thread_count({1, 2, 3}, [&](int threads) {
      INFO(dev.to_string() << ", " << threads << " threads");
      PORTA_CHECK_RESULT(porta_test::compare_exact(porta::cumsum(x).to_vector(), expect));
      PORTA_CHECK_RESULT(porta_test::compare_exact(porta::exclusive_scan(x).to_vector(), expect_x));
      // A 2-D view of the same data along axis 0 (columns): per-line order, any thread count.
      const std::vector<T> hm(h.begin(), h.begin() + (n / 11) * 11);
      const Array<T> m = Array<T>::from(hm, Shape{n / 11, 11}, dev);
      PORTA_CHECK_RESULT(porta_test::compare_exact(porta::cumsum(m, 0).to_vector(),
                                                   axis_reference(hm, {n / 11, 11}, 0, ScanOp::sum, false)));
    });
  }
}

TEST_CASE("scans of strided views: the view's elements in its order", "[scan]") {
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::vector<double> h = scan_input<double>(rng, 3 * 5000);
  const auto m = Array<double>::from(h, Shape{5000, 3}, dev);
  const auto col = m.col(1);  // every third element: strided
  REQUIRE(!col.is_contiguous());
  std::vector<double> hc;
  for (std::size_t i = 1; i < h.size(); i += 3) hc.push_back(h[i]);
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::cumsum(col).to_vector(), canonical_scan(hc, ScanOp::sum, false)));
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::exclusive_scan(col, 0, ScanOp::max).to_vector(),
                                               canonical_scan(hc, ScanOp::max, true)));
}

namespace {

// PORTA_CPU_SCAN_ISA set for a scope (cpu_scan.cpp reads it at every scan), the old value restored.
class ScanIsaCap {
 public:
  explicit ScanIsaCap(const char* cap) {
    const char* old = std::getenv("PORTA_CPU_SCAN_ISA");
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv("PORTA_CPU_SCAN_ISA", cap, 1);
  }
  ~ScanIsaCap() {
    if (had_) {
      setenv("PORTA_CPU_SCAN_ISA", old_.c_str(), 1);
    } else {
      unsetenv("PORTA_CPU_SCAN_ISA");
    }
  }
  ScanIsaCap(const ScanIsaCap&) = delete;
  ScanIsaCap& operator=(const ScanIsaCap&) = delete;

 private:
  bool had_ = false;
  std::string old_;
};

// Inputs whose max and sum depend on how equal values and special values are combined: signed
// zeros among negatives (max keeps +0 over -0 in either order, -0 + +0 is +0), infinities of both
// signs (inf - inf is a NaN), and one NaN in the last tile.
template <class T>
std::vector<T> special_input(porta_test::Rng& rng, std::int64_t n, int kind) {
  std::vector<T> v = scan_input<T>(rng, n);
  const T inf = std::numeric_limits<T>::infinity();
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t r = rng.uniform<std::int64_t>(0, 15);
    T& a = v[static_cast<std::size_t>(i)];
    if (kind == 0) {
      a = r < 6 ? T(-0.0) : r < 12 ? T(0.0) : r < 15 ? -std::fabs(a) : -inf;
    } else if (r == 0) {
      a = rng.uniform<std::int64_t>(0, 1) ? inf : -inf;
    }
  }
  if (kind == 1 && n > 100) v[static_cast<std::size_t>(n - 100)] = std::numeric_limits<T>::quiet_NaN();
  return v;
}

}  // namespace

TEMPLATE_TEST_CASE("scans on the CPU: every vector width (PORTA_CPU_SCAN_ISA) gives the canonical bits",
                   "[scan][determinism]", float, double) {
  // The CPU backend runs float and double tiles at the widest width the CPU has (AVX-512, AVX2 or
  // SSE2); the cap forces the narrower ones on the same machine. Sizes around group and tile
  // boundaries, misaligned rows, exclusive scans (their output starts one element off alignment)
  // and one scan large enough for non-temporal stores (8 MiB).
  using T = TestType;
  const Device dev{porta::DeviceType::cpu, 0};
  PORTA_RNG(rng);
  const std::int64_t big = (std::int64_t(8) << 20) / static_cast<std::int64_t>(sizeof(T)) + 2 * 4096 + 7;
  const std::int64_t sizes[] = {4096, 4097, 2 * 4096, 5 * 4096 + 17, 37 * 4096 + 11, big};
  std::vector<std::pair<std::vector<T>, std::string>> inputs;
  for (std::int64_t n : sizes) {
    inputs.emplace_back(scan_input<T>(rng, n), "random, n = " + std::to_string(n));
    if (n < big) {
      inputs.emplace_back(special_input<T>(rng, n, 0), "signed zeros, n = " + std::to_string(n));
      inputs.emplace_back(special_input<T>(rng, n, 1), "infinities and a NaN, n = " + std::to_string(n));
    }
  }
  for (const auto& [h, what] : inputs) {
    const Array<T> x = Array<T>::from(h, dev);
    for (ScanOp op : {ScanOp::sum, ScanOp::max}) {
      for (bool exclusive : {false, true}) {
        const std::vector<T> expect = canonical_scan(h, op, exclusive);
        for (const char* cap : {"widest", "avx2", "base"}) {
          const ScanIsaCap scoped(cap);
          INFO("PORTA_CPU_SCAN_ISA=" << cap << ", " << what << (op == ScanOp::sum ? ", sum" : ", max")
                                     << (exclusive ? ", exclusive" : ", inclusive"));
          PORTA_CHECK_RESULT(porta_test::compare_exact(run(x, op, exclusive), expect));
        }
      }
    }
  }
  // Rows of 8193 start off every vector alignment after the first; the rows of {2, 4100, 3} run
  // through the gathered-column path.
  for (const std::vector<std::int64_t>& dims :
       {std::vector<std::int64_t>{3, 8193}, std::vector<std::int64_t>{2, 4100, 3}}) {
    const Shape shape = dims.size() == 2 ? Shape{dims[0], dims[1]} : Shape{dims[0], dims[1], dims[2]};
    const std::vector<T> h = special_input<T>(rng, shape.size(), 0);
    const Array<T> x = Array<T>::from(h, shape, dev);
    const int axis = 1;
    for (ScanOp op : {ScanOp::sum, ScanOp::max}) {
      const std::vector<T> expect = axis_reference(h, dims, axis, op, false);
      for (const char* cap : {"widest", "avx2", "base"}) {
        const ScanIsaCap scoped(cap);
        INFO("PORTA_CPU_SCAN_ISA=" << cap << ", shape " << shape.to_string()
                                   << (op == ScanOp::sum ? ", sum" : ", max"));
        PORTA_CHECK_RESULT(porta_test::compare_exact(porta::inclusive_scan(x, axis, op).to_vector(), expect));
      }
    }
  }
}
