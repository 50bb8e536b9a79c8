// SPDX-License-Identifier: Apache-2.0
// User kernels (porta/kernels.hpp): parallel_for, map, transform_reduce on every device. CMake marks
// this file with porta_add_kernels(), so a CUDA (or HIP) build compiles it as that language and
// the same tests run on GPU devices too; a plain C++ build runs them on the CPU.
//
// Most kernels here are PORTA_LAMBDAs on purpose: that form must work under nvcc too, where it warns
// that its CPU side is slow (CMakeLists.txt silences that here; tests/compile_fail checks it).
#include "porta/kernels.hpp"

#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernel_devices.hpp"
#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::Shape;
namespace ref = porta_test::ref;

namespace {
// x * y + z as the user's lambda may be compiled: rounded twice, or contracted into one fused
// multiply-add (nvcc contracts by default; the user's compiler flags decide, not porta).
template <class T>
bool mul_add_ok(T got, T x, T y, T z) {
  if constexpr (std::is_floating_point_v<T>) {
    return porta_test::same_bits(got, static_cast<T>(x * y + z)) || porta_test::same_bits(got, std::fma(x, y, z));
  } else {
    return got == ref::add(ref::mul(x, y), z);
  }
}
template <class T>
porta_test::Result compare_mul_add(const std::vector<T>& got, const std::vector<T>& x, const std::vector<T>& y,
                                   const std::vector<T>& z) {
  return porta_test::compare_with(
      got.size(), x.size(), [&](std::size_t i) { return mul_add_ok(got[i], x[i], y[i], z[i]); },
      [&](std::size_t i) {
        return "got " + porta_test::show(got[i]) + ", expected " +
               porta_test::show(ref::add(ref::mul(x[i], y[i]), z[i])) + " (or its fused form)";
      });
}
}  // namespace

TEMPLATE_TEST_CASE("parallel_for writes every index once", "[kernels]", float, double, std::int32_t, std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : {0, 1, 7, 1000003}) {
    INFO("n = " << n << " on " << dev.to_string());
    const auto hx = porta_test::nonzero<T>(rng, n);
    const auto x = Array<T>::from(hx, dev);
    auto y = porta_test::poisoned<T>(Shape{n}, dev);
    // example-begin parallel-for
    auto xv = x.view();
    auto yv = y.view();
    porta::parallel_for(
        dev, n, PORTA_LAMBDA(std::int64_t i) { yv[i] = xv[i] * T(3) + static_cast<T>(i % 5); });
    // example-end parallel-for
    std::vector<T> threes(hx.size(), T(3)), offs(hx.size());
    for (std::int64_t i = 0; i < n; ++i) offs[i] = static_cast<T>(i % 5);
    PORTA_CHECK_RESULT(compare_mul_add(y.to_vector(), hx, threes, offs));
  }
  // 2-D view indexing
  auto m = porta_test::poisoned<T>(Shape{7, 11}, dev);
  auto mv = m.view();
  porta::parallel_for(
      dev, 7 * 11,
      PORTA_LAMBDA(std::int64_t i) { mv(i / mv.cols, i % mv.cols) = static_cast<T>(i / mv.cols * 100 + i % mv.cols); });
  std::vector<T> mref(77);
  for (int r = 0; r < 7; ++r)
    for (int c = 0; c < 11; ++c) mref[r * 11 + c] = static_cast<T>(r * 100 + c);
  PORTA_CHECK_RESULT(porta_test::compare_exact(m.to_vector(), mref));
  // negative n is an error
  CHECK_THROWS_AS(porta::parallel_for(dev, -1, PORTA_LAMBDA(std::int64_t){}), porta::InvalidArgument);
}

TEST_CASE("parallel_for on a stream", "[kernels][stream]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  porta::Stream s(dev);
  auto y = porta_test::poisoned<double>(Shape{4097}, dev);
  auto yv = y.view();
  porta::parallel_for(
      dev, 4097, PORTA_LAMBDA(std::int64_t i) { yv[i] = static_cast<double>(i) * 0.5; }, s);
  s.synchronize();
  std::vector<double> r(4097);
  for (int i = 0; i < 4097; ++i) r[i] = i * 0.5;
  PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), r));
  const auto other = porta_test::other_device(dev);
  if (other) {
    porta::Stream so(*other);
    CHECK_THROWS_AS(porta::parallel_for(dev, 4, PORTA_LAMBDA(std::int64_t){}, so), porta::DeviceMismatch);
  }
}

TEMPLATE_TEST_CASE("map with one, two and three inputs", "[kernels][map]", float, double, std::int32_t, std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : {0, 1, 7, 33, 255, 4096, 4097, 100003}) {
    INFO("n = " << n << " on " << dev.to_string());
    const auto ha = porta_test::nonzero<T>(rng, n);
    const auto hb = porta_test::nonzero<T>(rng, n);
    const auto hc = porta_test::nonzero<T>(rng, n);
    const auto a = Array<T>::from(ha, dev);
    const auto b = Array<T>::from(hb, dev);
    const auto c = Array<T>::from(hc, dev);
    std::vector<T> r1(ha.size()), r2(ha.size()), r3(ha.size());
    for (std::size_t i = 0; i < ha.size(); ++i) {
      r1[i] = ref::mul(ha[i], ha[i]);
      r2[i] = ref::sub(ha[i], hb[i]);
      r3[i] = ref::add(ref::mul(ha[i], hb[i]), hc[i]);
    }
    auto out = porta_test::poisoned<T>(Shape{n}, dev);
    porta::map(
        out, PORTA_LAMBDA(T x) { return x * x; }, a);
    PORTA_CHECK_RESULT(porta_test::compare_exact(out.to_vector(), r1));
    out = porta_test::poisoned<T>(Shape{n}, dev);
    porta::map(
        out, PORTA_LAMBDA(T x, T y) { return x - y; }, a, b);
    PORTA_CHECK_RESULT(porta_test::compare_exact(out.to_vector(), r2));
    out = porta_test::poisoned<T>(Shape{n}, dev);
    // example-begin map
    porta::map(
        out, PORTA_LAMBDA(T x, T y, T z) { return x * y + z; }, a, b, c);
    // example-end map
    PORTA_CHECK_RESULT(compare_mul_add(out.to_vector(), ha, hb, hc));
    // in place: out is also an input
    auto io = a.clone();
    porta::map(
        io, PORTA_LAMBDA(T x, T y) { return x - y; }, io, b);
    PORTA_CHECK_RESULT(porta_test::compare_exact(io.to_vector(), r2));
  }
  // mixed input types
  auto f = porta_test::poisoned<double>(Shape{5}, dev);
  porta::map(
      f, PORTA_LAMBDA(float x, std::int32_t k) { return static_cast<double>(x) * k; },
      porta::full<float>({5}, 1.5f, dev), porta::full<std::int32_t>({5}, 4, dev));
  PORTA_CHECK_RESULT(porta_test::compare_exact(f.to_vector(), std::vector<double>(5, 6.0)));
  // sizes must agree
  auto small = porta::zeros<T>({3}, dev);
  CHECK_THROWS_AS(porta::map(
                      small, PORTA_LAMBDA(T x) { return x; }, porta::zeros<T>({4}, dev)),
                  porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::map(
                        small, PORTA_LAMBDA(T x) { return x; }, porta::zeros<T>({4}, dev)),
                    porta_test::Contains("porta::map"));
}

TEMPLATE_TEST_CASE("map over views: strided, reversed and overlapping arrays, nothing outside written",
                   "[kernels][map][views]", float, double, std::int32_t) {
  using T = TestType;
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  const auto f = PORTA_LAMBDA(T x) {
    return x * T(2) + T(1);
  };
  const auto g = [](T x) { return ref::add(ref::mul(x, T(2)), T(1)); };
  const porta::Slice all{}, reverse{porta::none, porta::none, -1};
  for (std::int64_t n : {1, 8, 4099}) {
    INFO("n = " << n << " on " << dev.to_string());
    const auto hbuf = porta_test::nonzero<T>(rng, n + 2);  // x = buf[1 : n + 1], one guard element each side
    const auto hin = porta_test::nonzero<T>(rng, n);
    const auto in = Array<T>::from(hin, dev);
    const auto fresh = [&] { return Array<T>::from(hbuf, dev); };
    const auto at = [&](std::int64_t i) { return hbuf[static_cast<std::size_t>(i)]; };
    {  // reversed output: x[n - 1 - i] = f(in[i]); the guards keep their values
      auto buf = fresh();
      auto x = buf.slice({{1, n + 1}});
      auto rx = x.slice({reverse});
      porta::map(rx, f, in);
      std::vector<T> want = hbuf;
      for (std::int64_t i = 0; i < n; ++i) want[static_cast<std::size_t>(n - i)] = g(hin[static_cast<std::size_t>(i)]);
      PORTA_CHECK_RESULT(porta_test::compare_exact(buf.to_vector(), want));
    }
    {  // reversed input into a contiguous output
      auto buf = fresh();
      const auto rx = buf.slice({{1, n + 1}}).slice({reverse});
      auto out = porta_test::poisoned<T>(Shape{n}, dev);
      porta::map(out, f, rx);
      std::vector<T> want(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) want[static_cast<std::size_t>(i)] = g(at(n - i));
      PORTA_CHECK_RESULT(porta_test::compare_exact(out.to_vector(), want));
      // in place through the reversed view of the output itself: every f sees the old values
      auto x = buf.slice({{1, n + 1}});
      porta::map(x, f, x.slice({reverse}));
      std::vector<T> want2 = hbuf;
      for (std::int64_t i = 0; i < n; ++i) want2[static_cast<std::size_t>(1 + i)] = g(at(n - i));
      PORTA_CHECK_RESULT(porta_test::compare_exact(buf.to_vector(), want2));
    }
    {  // overlapping windows: x[1:] = f(x[:-1]) reads x as it was before the call (NumPy's rule)
      auto buf = fresh();
      auto dst = buf.slice({{1, n + 1}});
      const auto src = buf.slice({{0, n}});
      porta::map(dst, f, src);
      std::vector<T> want = hbuf;
      for (std::int64_t i = 0; i < n; ++i) want[static_cast<std::size_t>(1 + i)] = g(at(i));
      PORTA_CHECK_RESULT(porta_test::compare_exact(buf.to_vector(), want));
    }
    {  // a column as output and another as input: only that column changes
      const std::int64_t rows = n, cols = 4;
      const auto hm = porta_test::nonzero<T>(rng, rows * cols);
      auto m = Array<T>::from(hm, Shape{rows, cols}, dev);
      auto c1 = m.col(1);
      porta::map(c1, f, m.col(2));
      std::vector<T> want = hm;
      for (std::int64_t r = 0; r < rows; ++r)
        want[static_cast<std::size_t>(r * cols + 1)] = g(hm[static_cast<std::size_t>(r * cols + 2)]);
      PORTA_CHECK_RESULT(porta_test::compare_exact(m.to_vector(), want));
      // a strided input into a contiguous output, and a 2-D block (rows 0..rows, columns 1..3) of m
      auto out = porta_test::poisoned<T>(Shape{rows}, dev);
      porta::map(out, f, m.col(3));
      std::vector<T> want_col(static_cast<std::size_t>(rows));
      for (std::int64_t r = 0; r < rows; ++r)
        want_col[static_cast<std::size_t>(r)] = g(hm[static_cast<std::size_t>(r * cols + 3)]);
      PORTA_CHECK_RESULT(porta_test::compare_exact(out.to_vector(), want_col));
      auto block = m.slice({all, {1, 3}});
      auto out2 = porta_test::poisoned<T>(Shape{rows, 2}, dev);
      porta::map(out2, f, block);
      std::vector<T> want_block(static_cast<std::size_t>(rows * 2));
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < 2; ++c)
          want_block[static_cast<std::size_t>(r * 2 + c)] = g(want[static_cast<std::size_t>(r * cols + 1 + c)]);
      PORTA_CHECK_RESULT(porta_test::compare_exact(out2.to_vector(), want_block));
    }
  }
}

TEST_CASE("map: mixed types, sizes around the vector width, offset windows", "[kernels][map]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  // On a GPU, map reads and writes 16-byte vectors where the output and every input are aligned
  // alike, with a scalar head and tail, and goes element by element where they never align alike.
  // Windows that start a few elements into their arrays (through detail::map_pointers, which
  // porta::map calls with data()) reach every one of those paths; the elements outside the output's
  // window must stay poison. Maps of up to 4096 elements take a one-element-per-thread kernel
  // instead (4096 and 4097 sit on either side), launched as whole warps below one block.
  struct Offsets {
    std::int64_t out, a, b, c;
  };
  const Offsets offsets[] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}, {1, 0, 2, 3}, {0, 3, 1, 2}};
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{3}, std::int64_t{1000}, std::int64_t{4096},
                         std::int64_t{4097}, (std::int64_t{1} << 20) + 3}) {
    const std::int64_t len = n + 3;  // room for the largest offset
    const auto ha = porta_test::nonzero<float>(rng, len);
    const auto hb = porta_test::nonzero<double>(rng, len);
    const auto hk = porta_test::nonzero<std::int32_t>(rng, len);
    const auto hl = porta_test::nonzero<std::int64_t>(rng, len);
    const auto a = Array<float>::from(ha, dev);
    const auto b = Array<double>::from(hb, dev);
    const auto k = Array<std::int32_t>::from(hk, dev);
    const auto l = Array<std::int64_t>::from(hl, dev);
    for (const Offsets& o : offsets) {
      INFO("n = " << n << ", offsets out " << o.out << ", inputs " << o.a << " " << o.b << " " << o.c << " on "
                  << dev.to_string());
      const porta::Stream stream;
      // Host references in double; every operation is exact or rounds once, as on the device.
      const auto expect = [&](auto poison_value, auto ref) {
        std::vector<decltype(poison_value)> r(static_cast<std::size_t>(len), poison_value);
        for (std::int64_t i = 0; i < n; ++i) r[static_cast<std::size_t>(o.out + i)] = ref(i);
        return r;
      };
      // one input, float -> int32: four elements per vector
      auto y1 = porta_test::poisoned<std::int32_t>(Shape{len}, dev);
      porta::detail::map_pointers(
          stream, dev, n, y1.data() + o.out, PORTA_LAMBDA(float x) { return static_cast<std::int32_t>(x * 100.0f); },
          a.data() + o.a);
      PORTA_CHECK_RESULT(
          porta_test::compare_exact(y1.to_vector(), expect(porta_test::poison<std::int32_t>(), [&](std::int64_t i) {
                                      return static_cast<std::int32_t>(ha[static_cast<std::size_t>(o.a + i)] * 100.0f);
                                    })));
      // one input, float -> double: two per vector, the float input read as half a vector
      auto y2 = porta_test::poisoned<double>(Shape{len}, dev);
      porta::detail::map_pointers(
          stream, dev, n, y2.data() + o.out, PORTA_LAMBDA(float x) { return 2.0 * x; }, a.data() + o.a);
      PORTA_CHECK_RESULT(
          porta_test::compare_exact(y2.to_vector(), expect(porta_test::poison<double>(), [&](std::int64_t i) {
                                      return 2.0 * static_cast<double>(ha[static_cast<std::size_t>(o.a + i)]);
                                    })));
      // two inputs, double and int32 -> float
      auto y3 = porta_test::poisoned<float>(Shape{len}, dev);
      porta::detail::map_pointers(
          stream, dev, n, y3.data() + o.out,
          PORTA_LAMBDA(double x, std::int32_t m) { return static_cast<float>(x * m); }, b.data() + o.b, k.data() + o.c);
      PORTA_CHECK_RESULT(porta_test::compare_exact(
          y3.to_vector(), expect(porta_test::poison<float>(), [&](std::int64_t i) {
            return static_cast<float>(hb[static_cast<std::size_t>(o.b + i)] *
                                      static_cast<double>(hk[static_cast<std::size_t>(o.c + i)]));
          })));
      // three inputs, int64, float and double -> double
      auto y4 = porta_test::poisoned<double>(Shape{len}, dev);
      porta::detail::map_pointers(
          stream, dev, n, y4.data() + o.out,
          PORTA_LAMBDA(std::int64_t m, float x, double z) {
            return static_cast<double>(x) - z + static_cast<double>(m);
          },
          l.data() + o.c, a.data() + o.a, b.data() + o.b);
      PORTA_CHECK_RESULT(porta_test::compare_exact(
          y4.to_vector(), expect(porta_test::poison<double>(), [&](std::int64_t i) {
            const auto j = [&](std::int64_t off) { return static_cast<std::size_t>(off + i); };
            return static_cast<double>(ha[j(o.a)]) - hb[j(o.b)] + static_cast<double>(hl[j(o.c)]);
          })));
    }
  }
}

TEMPLATE_TEST_CASE("transform_reduce follows the canonical order", "[kernels][reduce][determinism]", float, double,
                   std::int32_t, std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : {0, 1, 7, 1025, 32769, 1000003}) {
    INFO("n = " << n << " on " << dev.to_string());
    const auto h = porta_test::nonzero<T>(rng, n);
    const auto x = Array<T>::from(h, dev);
    const auto xv = x.view();
    // example-begin transform-reduce
    const T s = porta::transform_reduce(
        dev, n, T(0), porta::plus{}, PORTA_LAMBDA(std::int64_t i) { return xv[i]; });
    // example-end transform-reduce
    const T expect = n == 0 ? T(0) : ref::add(T(0), ref::reduce(h, ref::Op::sum));
    INFO("got " << porta_test::show(s) << ", canonical " << porta_test::show(expect));
    CHECK(porta_test::same_bits(s, expect));
    // equal to the built-in sum's bits (non-zero data: init 0 + s changes no bit)
    if (n > 0) CHECK(porta_test::same_bits(s, porta::sum(x)));
    const T mx = porta::transform_reduce(
        dev, n, std::numeric_limits<T>::lowest(), porta::maximum_op{}, PORTA_LAMBDA(std::int64_t i) { return xv[i]; });
    const T mn = porta::transform_reduce(
        dev, n, std::numeric_limits<T>::max(), porta::minimum_op{}, PORTA_LAMBDA(std::int64_t i) { return xv[i]; });
    if (n > 0) {
      CHECK(porta_test::same_bits(mx, porta::max(x)));
      CHECK(porta_test::same_bits(mn, porta::min(x)));
    } else {
      CHECK(mx == std::numeric_limits<T>::lowest());
      CHECK(mn == std::numeric_limits<T>::max());
    }
    // a generated sequence, no memory: squares of i % 13
    const T sq = porta::transform_reduce(
        dev, n, T(5), porta::plus{}, PORTA_LAMBDA(std::int64_t i) { return static_cast<T>((i % 13) * (i % 13)); });
    const T sq_ref = ref::add(T(5), ref::canonical_reduce<T>(n, ref::Op::sum, [](std::int64_t i) {
                                return static_cast<T>((i % 13) * (i % 13));
                              }));
    CHECK(porta_test::same_bits(sq, sq_ref));
  }
  // Past a GPU's multiprocessors x 32768 terms the kernel is evaluated inside the reduction, below
  // it first into scratch (user_kernels.cuh): both give the canonical bits.
  {
    const std::int64_t n = (std::int64_t{1} << 23) + 5;
    const T sq = porta::transform_reduce(
        dev, n, T(0), porta::plus{}, PORTA_LAMBDA(std::int64_t i) { return static_cast<T>((i % 13) * (i % 7)); });
    const T sq_ref = ref::add(T(0), ref::canonical_reduce<T>(n, ref::Op::sum, [](std::int64_t i) {
                                return static_cast<T>((i % 13) * (i % 7));
                              }));
    CHECK(porta_test::same_bits(sq, sq_ref));
  }
  // a product with its identity
  const T p = porta::transform_reduce(
      dev, 10, T(2), porta::multiplies{}, PORTA_LAMBDA(std::int64_t) { return T(2); });
  CHECK(p == T(2048));
  CHECK_THROWS_AS(porta::transform_reduce(
                      dev, -5, T(0), porta::plus{}, PORTA_LAMBDA(std::int64_t) { return T(1); }),
                  porta::InvalidArgument);
}

TEST_CASE("transform_reduce: NaN comes back as the canonical quiet NaN", "[kernels][reduce][ieee]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  const float nan = -std::numeric_limits<float>::quiet_NaN();
  const float r = porta::transform_reduce(
      dev, 5000, 0.0f, porta::plus{}, PORTA_LAMBDA(std::int64_t i) { return i == 4321 ? nan : 1.0f; });
  CHECK(porta_test::same_bits(r, std::numeric_limits<float>::quiet_NaN()));
}

// ---- ranges: 2-D and 3-D index spaces, offsets, tiles ------------------------------------------

namespace {
// Every point of [begin, end) of an n0 x n1 array incremented once (from zero) and tagged with its
// indices; every point outside still poison.
template <class T>
void check_2d(const std::vector<T>& got, std::int64_t n0, std::int64_t n1, std::array<std::int64_t, 2> b,
              std::array<std::int64_t, 2> e) {
  std::vector<T> expect(static_cast<std::size_t>(n0 * n1), porta_test::poison<T>());
  for (std::int64_t i = b[0]; i < e[0]; ++i)
    for (std::int64_t j = b[1]; j < e[1]; ++j)
      expect[static_cast<std::size_t>(i * n1 + j)] = static_cast<T>(i * 1000 + j);
  PORTA_CHECK_RESULT(porta_test::compare_exact(got, expect));
}
}  // namespace

TEMPLATE_TEST_CASE("parallel_for over 2-D ranges: every point once, nothing outside", "[kernels][range]", float,
                   std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_KERNEL_DEVICE();
  struct Case {
    std::int64_t n0, n1;
    std::array<std::int64_t, 2> b, e, tile;  // tile {0, 0}: the default
  };
  const Case cases[] = {{1, 1, {0, 0}, {1, 1}, {0, 0}},
                        {7, 300, {0, 0}, {7, 300}, {0, 0}},
                        {33, 65, {1, 1}, {32, 64}, {4, 16}},
                        {1000, 3, {0, 1}, {1000, 3}, {0, 0}},
                        {130, 257, {2, 5}, {129, 250}, {3, 100}},
                        {64, 64, {0, 0}, {64, 64}, {64, 1}},
                        {5, 9, {2, 3}, {2, 9}, {0, 0}},  // empty in the first dimension
                        // more rows than a GPU grid covers (65535 blocks of 8): the strided kernel
                        {600000, 2, {0, 0}, {600000, 2}, {0, 0}}};
  for (const Case& c : cases) {
    INFO(c.n0 << " x " << c.n1 << ", [" << c.b[0] << ", " << c.e[0] << ") x [" << c.b[1] << ", " << c.e[1] << "), tile "
              << c.tile[0] << " x " << c.tile[1] << " on " << dev.to_string());
    auto a = porta_test::poisoned<T>(Shape{c.n0, c.n1}, dev);
    auto av = a.view();
    porta::Range<2> r(c.b, c.e);
    if (c.tile[0] > 0) r = r.tile(c.tile);
    // Two passes: zero, then add the tag, so that a point visited twice shows up.
    porta::parallel_for(
        dev, r, PORTA_LAMBDA(std::int64_t i, std::int64_t j) { av(i, j) = T(0); });
    porta::parallel_for(
        dev, r, PORTA_LAMBDA(std::int64_t i, std::int64_t j) { av(i, j) += static_cast<T>(i * 1000 + j); });
    check_2d(a.to_vector(), c.n0, c.n1, c.b, c.e);
  }
  // porta::range(n0, n1) is [0, n0) x [0, n1)
  auto a = porta_test::poisoned<T>(Shape{9, 31}, dev);
  auto av = a.view();
  porta::parallel_for(
      dev, porta::range(9, 31),
      PORTA_LAMBDA(std::int64_t i, std::int64_t j) { av(i, j) = static_cast<T>(i * 1000 + j); });
  check_2d(a.to_vector(), 9, 31, {0, 0}, {9, 31});
  CHECK_THROWS_AS(porta::range(-1, 4), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::Range<2>({3, 0}, {2, 4}), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::range(3, 4).tile({0, 4}), porta::InvalidArgument);
}

TEST_CASE("parallel_for over 3-D ranges", "[kernels][range]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  struct Case {
    std::int64_t n0, n1, n2;
    std::array<std::int64_t, 3> b, e, tile;
  };
  const Case cases[] = {{5, 6, 7, {0, 0, 0}, {5, 6, 7}, {0, 0, 0}},
                        {3, 1, 257, {0, 0, 1}, {3, 1, 256}, {1, 1, 64}},
                        {4, 70, 40, {1, 2, 3}, {4, 69, 40}, {2, 8, 16}},
                        {2, 3, 4, {0, 0, 0}, {2, 3, 0}, {0, 0, 0}},
                        {140000, 1, 2, {0, 0, 0}, {140000, 1, 2}, {0, 0, 0}}};  // past grid z: strided
  for (const Case& c : cases) {
    INFO(c.n0 << " x " << c.n1 << " x " << c.n2 << ", tile " << c.tile[0] << " x " << c.tile[1] << " x " << c.tile[2]
              << " on " << dev.to_string());
    auto a = porta_test::poisoned<std::int64_t>(Shape{c.n0, c.n1, c.n2}, dev);
    auto av = a.view();
    const std::int64_t n1 = c.n1, n2 = c.n2;
    porta::Range<3> r(c.b, c.e);
    if (c.tile[0] > 0) r = r.tile(c.tile);
    porta::parallel_for(
        dev, r, PORTA_LAMBDA(std::int64_t i, std::int64_t j, std::int64_t k) { av[(i * n1 + j) * n2 + k] = 0; });
    porta::parallel_for(
        dev, r, PORTA_LAMBDA(std::int64_t i, std::int64_t j, std::int64_t k) {
          av[(i * n1 + j) * n2 + k] += i * 1000000 + j * 1000 + k;
        });
    std::vector<std::int64_t> expect(static_cast<std::size_t>(c.n0 * c.n1 * c.n2), porta_test::poison<std::int64_t>());
    for (std::int64_t i = c.b[0]; i < c.e[0]; ++i)
      for (std::int64_t j = c.b[1]; j < c.e[1]; ++j)
        for (std::int64_t k = c.b[2]; k < c.e[2]; ++k)
          expect[static_cast<std::size_t>((i * n1 + j) * n2 + k)] = i * 1000000 + j * 1000 + k;
    PORTA_CHECK_RESULT(porta_test::compare_exact(a.to_vector(), expect));
  }
}

TEST_CASE("a tile larger than a GPU thread block is an error on GPUs only", "[kernels][range][errors]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  auto a = porta_test::poisoned<float>(Shape{64, 64}, dev);
  auto av = a.view();
  const auto r = porta::range(64, 64).tile({64, 64});
  const auto body = PORTA_LAMBDA(std::int64_t i, std::int64_t j) {
    av(i, j) = 1.0f;
  };
  if (dev.type == porta::DeviceType::cpu) {
    porta::parallel_for(dev, r, body);
    PORTA_CHECK_RESULT(porta_test::compare_exact(a.to_vector(), std::vector<float>(64 * 64, 1.0f)));
  } else {
    CHECK_THROWS_WITH(porta::parallel_for(dev, r, body),
                      porta_test::Contains("porta::parallel_for") && porta_test::Contains("thread block"));
  }
}

TEMPLATE_TEST_CASE("transform_reduce over 2-D and 3-D ranges: the canonical order of the linear index",
                   "[kernels][range][reduce][determinism]", float, double, std::int32_t) {
  using T = TestType;
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  for (const auto& shape : {std::pair<std::int64_t, std::int64_t>{1, 1}, {3, 1000}, {257, 129}, {40, 2049}}) {
    const std::int64_t n0 = shape.first, n1 = shape.second;
    INFO(n0 << " x " << n1 << " on " << dev.to_string());
    const auto h = porta_test::nonzero<T>(rng, (n0 + 2) * (n1 + 2));
    const auto x = Array<T>::from(h, Shape{n0 + 2, n1 + 2}, dev);
    const auto xv = x.view();
    // The interior [1, n0 + 1) x [1, n1 + 1) of an (n0 + 2) x (n1 + 2) array.
    const T s = porta::transform_reduce(
        dev, porta::Range<2>({1, 1}, {n0 + 1, n1 + 1}), T(0), porta::plus{},
        PORTA_LAMBDA(std::int64_t i, std::int64_t j) { return xv(i, j); });
    const T expect = ref::add(T(0), ref::canonical_reduce<T>(n0 * n1, ref::Op::sum, [&](std::int64_t k) {
                                return h[static_cast<std::size_t>((k / n1 + 1) * (n1 + 2) + k % n1 + 1)];
                              }));
    CHECK(porta_test::same_bits(s, expect));
  }
  const std::int64_t n0 = 6, n1 = 70, n2 = 90;
  const auto h = porta_test::nonzero<T>(rng, n0 * n1 * n2);
  const auto x = Array<T>::from(h, dev);
  const auto xv = x.view();
  const T mx = porta::transform_reduce(
      dev, porta::range(n0, n1, n2), std::numeric_limits<T>::lowest(), porta::maximum_op{},
      PORTA_LAMBDA(std::int64_t i, std::int64_t j, std::int64_t k) { return xv[(i * n1 + j) * n2 + k]; });
  CHECK(porta_test::same_bits(mx, porta::max(x)));
  const T s3 = porta::transform_reduce(
      dev, porta::range(n0, n1, n2), T(0), porta::plus{},
      PORTA_LAMBDA(std::int64_t i, std::int64_t j, std::int64_t k) { return xv[(i * n1 + j) * n2 + k]; });
  CHECK(porta_test::same_bits(s3, porta::sum(x)));
}

TEST_CASE("transform_reduce takes its type from f, not from the init literal", "[kernels][reduce]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  // The literal 0 used to make the result an int and truncate every term.
  const auto d = porta::transform_reduce(
      dev, 30000, 0, porta::plus{}, PORTA_LAMBDA(std::int64_t) { return 1.0; });
  static_assert(std::is_same_v<std::decay_t<decltype(d)>, double>);
  CHECK(d == 30000.0);
  const auto f = porta::transform_reduce(
      dev, 1000, 0, porta::plus{}, PORTA_LAMBDA(std::int64_t) { return 0.5f; });
  static_assert(std::is_same_v<std::decay_t<decltype(f)>, float>);
  CHECK(f == 500.0f);
  // bool counts, in int32
  const auto c = porta::transform_reduce(
      dev, 1001, 0, porta::plus{}, PORTA_LAMBDA(std::int64_t i) { return i % 3 == 0; });
  static_assert(std::is_same_v<std::decay_t<decltype(c)>, std::int32_t>);
  CHECK(c == 334);
  // a named result type converts each term first
  const auto e = porta::transform_reduce<double>(
      dev, 4, 0, porta::plus{}, PORTA_LAMBDA(std::int64_t i) { return static_cast<float>(i) + 0.25f; });
  static_assert(std::is_same_v<std::decay_t<decltype(e)>, double>);
  CHECK(e == 7.0);
}

TEST_CASE("user kernels on a device that does not exist are Unavailable", "[kernels][errors]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  const Device missing(dev.type, 63);
  INFO(missing.to_string());
  CHECK_THROWS_WITH(porta::parallel_for(missing, 10, PORTA_LAMBDA(std::int64_t){}),
                    porta_test::Contains("porta::parallel_for") && porta_test::Contains(missing.to_string()));
  CHECK_THROWS_AS(porta::parallel_for(missing, porta::range(2, 2), PORTA_LAMBDA(std::int64_t, std::int64_t){}),
                  porta::Unavailable);
  CHECK_THROWS_AS(porta::transform_reduce(
                      missing, 10, 0.0, porta::plus{}, PORTA_LAMBDA(std::int64_t) { return 1.0; }),
                  porta::Unavailable);
  // A device type porta does not know (an integer cast to DeviceType) names the call too.
  const Device unknown(static_cast<porta::DeviceType>(97), 0);
  CHECK_THROWS_AS(porta::parallel_for(unknown, 10, PORTA_LAMBDA(std::int64_t){}), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::parallel_for(unknown, 10, PORTA_LAMBDA(std::int64_t){}),
                    porta_test::Contains("porta::parallel_for: device type 97"));
}

// ---- the guide's stencil: a lambda and a functor over the interior of a grid ---------------------

// example-begin functor
// A functor: a plain struct, so the host compiler inlines and vectorises it on the CPU even in a
// file that nvcc compiles (where PORTA_LAMBDA's host side is called through a pointer).
struct JacobiStep {
  porta::View<const float> u;
  porta::View<float> next;
  float k;
  PORTA_HOST_DEVICE void operator()(std::int64_t i, std::int64_t j) const {
    next(i, j) = u(i, j) + k * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1) - 4.0f * u(i, j));
  }
};
// example-end functor

TEST_CASE("the guide's stencil: a lambda and a functor agree with the host", "[kernels][range]") {
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t ny = 67, nx = 130;
  const auto h = porta_test::uniform<float>(rng, ny * nx, 0.0f, 1.0f);
  const auto a = Array<float>::from(h, Shape{ny, nx}, dev);
  std::vector<float> expect(h);
  const float k = 0.2f;
  for (std::int64_t i = 1; i < ny - 1; ++i)
    for (std::int64_t j = 1; j < nx - 1; ++j) {
      const auto at = [&](std::int64_t r, std::int64_t c) { return h[static_cast<std::size_t>(r * nx + c)]; };
      // The same operations in the same order: no contraction in test code (-ffp-contract=off), and
      // the kernel's own compiler may fuse, so both forms are accepted below.
      expect[static_cast<std::size_t>(i * nx + j)] =
          at(i, j) + k * (at(i - 1, j) + at(i + 1, j) + at(i, j - 1) + at(i, j + 1) - 4.0f * at(i, j));
    }
  auto b = a.clone();
  {
    // example-begin stencil
    auto u = a.view();
    auto next = b.view();
    porta::parallel_for(dev, porta::Range<2>({1, 1}, {ny - 1, nx - 1}), PORTA_KERNEL((std::int64_t i, std::int64_t j) {
                          next(i, j) =
                              u(i, j) + k * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1) - 4.0f * u(i, j));
                        }));
    // example-end stencil
  }
  auto c = a.clone();
  porta::parallel_for(dev, porta::Range<2>({1, 1}, {ny - 1, nx - 1}).tile({4, 32}), JacobiStep{a.view(), c.view(), k});
  for (const auto* out : {&b, &c}) {
    const auto got = out->to_vector();
    PORTA_CHECK_RESULT(porta_test::compare_with(
        got.size(), expect.size(),
        [&](std::size_t i) {
          return porta_test::same_bits(got[i], expect[i]) || std::abs(got[i] - expect[i]) <= 4e-7f;
        },
        [&](std::size_t i) {
          return "got " + porta_test::show(got[i]) + ", expected " + porta_test::show(expect[i]);
        }));
  }
}

// ---- stencils over 3-D ranges: CPU tasks that start and end anywhere in a plane ----------------

namespace {
// The 7-point stencil of the 3-D test below, in double: the reference the kernels' T results are
// compared with.
double stencil7_ref(const std::vector<double>& u, std::int64_t n1, std::int64_t n2, double c, std::int64_t i,
                    std::int64_t j, std::int64_t k) {
  const auto at = [&](std::int64_t a, std::int64_t b, std::int64_t d) {
    return u[static_cast<std::size_t>((a * n1 + b) * n2 + d)];
  };
  return at(i, j, k) + c * (at(i - 1, j, k) + at(i + 1, j, k) + at(i, j - 1, k) + at(i, j + 1, k) + at(i, j, k - 1) +
                            at(i, j, k + 1) - 6.0 * at(i, j, k));
}

// |got - ref| within a few roundings of T of the terms' size (each |u| <= 1, c <= 1/8: at most 3).
template <class T>
porta_test::Result compare_stencil(const std::vector<T>& got, const std::vector<double>& ref) {
  const double tol = 16 * static_cast<double>(std::numeric_limits<T>::epsilon()) * 3;
  return porta_test::compare_with(
      got.size(), ref.size(), [&](std::size_t i) { return std::abs(static_cast<double>(got[i]) - ref[i]) <= tol; },
      [&](std::size_t i) {
        return "got " + porta_test::show(got[i]) + ", expected " + porta_test::show(ref[i]) + " (double)";
      });
}
}  // namespace

TEMPLATE_TEST_CASE("a 3-D stencil over lines and tiles, split at any line", "[kernels][range]", float, double) {
  using T = TestType;
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  struct Case {
    std::int64_t n0, n1, n2;
    std::array<std::int64_t, 3> tile;
    std::int64_t grain;
  };
  // Lines (the default) with blocks of tasks that start and end inside a plane (odd line counts,
  // a grain of one line or of a few), and tiles that do not divide the extents.
  const Case cases[] = {{7, 11, 19, {0, 0, 0}, 0},  {7, 11, 19, {0, 0, 0}, 1},  {6, 23, 5, {0, 0, 0}, 7},
                        {33, 3, 66, {0, 0, 0}, 64}, {8, 9, 10, {3, 2, 4}, 0},   {8, 9, 10, {1, 4, 100}, 5},
                        {3, 3, 3, {0, 0, 0}, 0},    {40, 40, 40, {0, 0, 0}, 0}, {5, 67, 129, {2, 1, 64}, 0}};
  for (const Case& cs : cases) {
    const std::int64_t n0 = cs.n0, n1 = cs.n1, n2 = cs.n2;
    INFO(n0 << " x " << n1 << " x " << n2 << ", tile " << cs.tile[0] << " x " << cs.tile[1] << " x " << cs.tile[2]
            << ", grain " << cs.grain << " on " << dev.to_string());
    const auto h = porta_test::uniform<T>(rng, n0 * n1 * n2, T(-1), T(1));
    const std::vector<double> hd(h.begin(), h.end());
    std::vector<double> expect(hd);
    for (std::int64_t i = 1; i < n0 - 1; ++i)
      for (std::int64_t j = 1; j < n1 - 1; ++j)
        for (std::int64_t k = 1; k < n2 - 1; ++k)
          expect[static_cast<std::size_t>((i * n1 + j) * n2 + k)] = stencil7_ref(hd, n1, n2, 0.125, i, j, k);
    const auto a = Array<T>::from(h, Shape{n0, n1, n2}, dev);
    auto b = a.clone();
    auto u = a.view();
    auto v = b.view();
    const T c = T(0.125);
    auto r = porta::Range<3>({1, 1, 1}, {n0 - 1, n1 - 1, n2 - 1}).grain(cs.grain);
    if (cs.tile[0] > 0) r = r.tile(cs.tile);
    porta::parallel_for(
        dev, r, PORTA_LAMBDA(std::int64_t i, std::int64_t j, std::int64_t k) {
          const std::int64_t p = (i * n1 + j) * n2 + k;
          v[p] =
              u[p] + c * (u[p - n1 * n2] + u[p + n1 * n2] + u[p - n2] + u[p + n2] + u[p - 1] + u[p + 1] - T(6) * u[p]);
        });
    PORTA_CHECK_RESULT(compare_stencil(b.to_vector(), expect));
  }
}

// ---- PORTA_KERNEL: the lambda as one macro argument, host-inlined on the CPU even under nvcc ------

TEMPLATE_TEST_CASE("PORTA_KERNEL runs the kernel of its text on every device and rank", "[kernels][range]", float,
                   double) {
  using T = TestType;
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  INFO("on " << dev.to_string());
  {  // 1-D: y = a x + y
    const std::int64_t n = 100003;
    const auto hx = porta_test::uniform<T>(rng, n, T(-1), T(1));
    const auto hy = porta_test::uniform<T>(rng, n, T(-1), T(1));
    const auto x = Array<T>::from(hx, dev);
    auto y = Array<T>::from(hy, dev);
    const T a = T(0.75);
    // example-begin kernel-macro
    auto xv = x.view();
    auto yv = y.view();
    porta::parallel_for(dev, n, PORTA_KERNEL((std::int64_t i) { yv[i] = a * xv[i] + yv[i]; }));
    // example-end kernel-macro
    PORTA_CHECK_RESULT(compare_mul_add(y.to_vector(), std::vector<T>(static_cast<std::size_t>(n), a), hx, hy));
  }
  {  // 2-D: the guide's stencil, default rows and tiles
    const std::int64_t ny = 71, nx = 133;
    const auto h = porta_test::uniform<T>(rng, ny * nx, T(-1), T(1));
    const std::vector<double> hd(h.begin(), h.end());
    const auto a = Array<T>::from(h, Shape{ny, nx}, dev);
    const T k = T(0.125);
    std::vector<double> expect(hd);
    for (std::int64_t i = 1; i < ny - 1; ++i)
      for (std::int64_t j = 1; j < nx - 1; ++j) {
        const auto at = [&](std::int64_t r, std::int64_t c) { return hd[static_cast<std::size_t>(r * nx + c)]; };
        expect[static_cast<std::size_t>(i * nx + j)] =
            at(i, j) + 0.125 * (at(i - 1, j) + at(i + 1, j) + at(i, j - 1) + at(i, j + 1) - 4.0 * at(i, j));
      }
    for (const std::array<std::int64_t, 2> tile : {std::array<std::int64_t, 2>{0, 0}, {3, 40}}) {
      INFO("tile " << tile[0] << " x " << tile[1]);
      auto b = a.clone();
      auto u = a.view();
      auto next = b.view();
      auto r = porta::Range<2>({1, 1}, {ny - 1, nx - 1});
      if (tile[0] > 0) r = r.tile(tile);
      porta::parallel_for(dev, r, PORTA_KERNEL((std::int64_t i, std::int64_t j) {
                            next(i, j) =
                                u(i, j) + k * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1) - T(4) * u(i, j));
                          }));
      PORTA_CHECK_RESULT(compare_stencil(b.to_vector(), expect));
    }
  }
  {  // 3-D: a 7-point stencil over the interior, flat indices from captured extents
    const std::int64_t n0 = 9, n1 = 13, n2 = 37;
    const auto h = porta_test::uniform<T>(rng, n0 * n1 * n2, T(-1), T(1));
    const std::vector<double> hd(h.begin(), h.end());
    const auto a = Array<T>::from(h, Shape{n0, n1, n2}, dev);
    std::vector<double> expect(hd);
    for (std::int64_t i = 1; i < n0 - 1; ++i)
      for (std::int64_t j = 1; j < n1 - 1; ++j)
        for (std::int64_t k = 1; k < n2 - 1; ++k)
          expect[static_cast<std::size_t>((i * n1 + j) * n2 + k)] = stencil7_ref(hd, n1, n2, 0.125, i, j, k);
    auto b = a.clone();
    auto u = a.view();
    auto v = b.view();
    const T c = T(0.125);
    porta::parallel_for(dev, porta::Range<3>({1, 1, 1}, {n0 - 1, n1 - 1, n2 - 1}),
                        PORTA_KERNEL((std::int64_t i, std::int64_t j, std::int64_t k) {
                          const std::int64_t p = (i * n1 + j) * n2 + k;
                          v[p] = u[p] + c * (u[p - n1 * n2] + u[p + n1 * n2] + u[p - n2] + u[p + n2] + u[p - 1] +
                                             u[p + 1] - T(6) * u[p]);
                        }));
    PORTA_CHECK_RESULT(compare_stencil(b.to_vector(), expect));
  }
  {  // map, into a whole array and into every other element of one
    const std::int64_t n = 4099;
    const auto hx = porta_test::uniform<T>(rng, n, T(-1), T(1));
    const auto hy = porta_test::uniform<T>(rng, n, T(-1), T(1));
    const auto x = Array<T>::from(hx, dev);
    const auto y = Array<T>::from(hy, dev);
    auto out = porta_test::poisoned<T>(Shape{n}, dev);
    const T s = T(-1.5);
    porta::map(out, PORTA_KERNEL((T a, T b) { return s * a + b; }), x, y);
    PORTA_CHECK_RESULT(compare_mul_add(out.to_vector(), std::vector<T>(static_cast<std::size_t>(n), s), hx, hy));
    auto wide = porta_test::poisoned<T>(Shape{2 * n}, dev);
    auto every_other = wide.slice({{porta::none, porta::none, 2}});
    porta::map(every_other, PORTA_KERNEL((T a) { return -a; }), x);
    const auto got = wide.to_vector();
    std::vector<T> expect(static_cast<std::size_t>(2 * n), porta_test::poison<T>());
    for (std::int64_t i = 0; i < n; ++i) expect[static_cast<std::size_t>(2 * i)] = -hx[static_cast<std::size_t>(i)];
    PORTA_CHECK_RESULT(porta_test::compare_exact(got, expect));
  }
  {  // transform_reduce: the same terms as PORTA_LAMBDA's, so the same bits (canonical order)
    const std::int64_t n = 70001;
    const auto h = porta_test::uniform<T>(rng, n, T(-1), T(1));
    const auto x = Array<T>::from(h, dev);
    const auto xv = x.view();
    const double s1 = porta::transform_reduce(
        dev, n, 0.0, porta::plus{}, PORTA_KERNEL((std::int64_t i) { return static_cast<double>(xv[i]) * xv[i]; }));
    const double s2 = porta::transform_reduce(
        dev, n, 0.0, porta::plus{}, PORTA_LAMBDA(std::int64_t i) { return static_cast<double>(xv[i]) * xv[i]; });
    CHECK(porta_test::same_bits(s1, s2));
    long double exact = 0;
    for (T v : h) exact += static_cast<long double>(v) * v;
    CHECK(std::abs(static_cast<long double>(s1) - exact) <= porta_test::sum_tolerance<double>(n, exact));
  }
}

TEMPLATE_TEST_CASE("user kernels over complex elements give porta::complex's bits", "[kernels][complex]", float,
                   double) {
  using T = TestType;
  using C = porta::complex<T>;
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t n = 4099;
  std::vector<C> ha(static_cast<std::size_t>(n)), hb(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    ha[i] = C(rng.uniform<T>(T(-2), T(2)), rng.uniform<T>(T(-2), T(2)));
    hb[i] = C(rng.uniform<T>(T(-2), T(2)), rng.uniform<T>(T(-2), T(2)));
  }
  const auto a = Array<C>::from(ha, dev), b = Array<C>::from(hb, dev);
  Array<C> y(Shape{n}, dev);
  Array<T> m(Shape{n}, dev);
  const auto av = a.view(), bv = b.view();
  auto yv = y.view();
  auto mv = m.view();
  porta::parallel_for(dev, n, PORTA_KERNEL((std::int64_t i) {
                        yv[i] = porta::exp(av[i] * bv[i]) / (porta::conj(bv[i]) + T(3));
                        mv[i] = porta::abs(porta::sqrt(av[i])) + porta::arg(bv[i]);
                      }));
  const auto gy = y.to_vector();
  const auto gm = m.to_vector();
  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const C want = porta::exp(ha[i] * hb[i]) / (porta::conj(hb[i]) + T(3));
    const T want_m = porta::abs(porta::sqrt(ha[i])) + porta::arg(hb[i]);
    // the last add of mv is the user's own (+), which a GPU compiler may not contract: no product
    if (!porta_test::same_bits(gy[i].re, want.re) || !porta_test::same_bits(gy[i].im, want.im) ||
        !porta_test::same_bits(gm[i], want_m))
      ++bad;
  }
  CHECK(bad == 0);
  // against long double: e^(ab) / (conj(b) + 3) to a few ulps of its size
  const std::int64_t i = rng.index(n);
  const std::complex<long double> za(ha[i].re, ha[i].im), zb(hb[i].re, hb[i].im);
  const auto w = std::exp(za * zb) / (std::conj(zb) + 3.0L);
  const long double tol = 64 * std::numeric_limits<T>::epsilon() * std::abs(w);
  CHECK(std::fabs(gy[i].re - w.real()) <= tol);
  CHECK(std::fabs(gy[i].im - w.imag()) <= tol);
}

TEMPLATE_TEST_CASE("user kernels over 16-bit elements compute in float and round once", "[kernels][half]",
                   porta::float16, porta::bfloat16) {
  using H = TestType;
  const Device dev = PORTA_KERNEL_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t n = 4099;
  std::vector<H> ha(static_cast<std::size_t>(n)), hb(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    ha[i] = H(rng.uniform<float>(-4.0f, 4.0f));
    hb[i] = H(rng.uniform<float>(0.25f, 4.0f));
  }
  const auto a = Array<H>::from(ha, dev), b = Array<H>::from(hb, dev);
  Array<H> y(Shape{n}, dev);
  Array<float> f(Shape{n}, dev);
  const auto av = a.view(), bv = b.view();
  auto yv = y.view();
  auto fv = f.view();
  // H op H is H (rounded once per op); mixed with float it is float; H(float) rounds explicitly
  porta::parallel_for(dev, n, PORTA_KERNEL((std::int64_t i) {
                        yv[i] = av[i] * bv[i] + av[i] / bv[i];
                        fv[i] = av[i] * 0.5f + float(av[i] > -av[i] ? av[i] : -av[i]);
                      }));
  // a reduction over 16-bit elements in the user's own accumulator type (float here)
  const float total =
      porta::transform_reduce(dev, n, 0.0f, porta::plus{}, PORTA_KERNEL((std::int64_t i) { return float(av[i]); }));
  const auto gy = y.to_vector();
  const auto gf = f.to_vector();
  std::int64_t bad = 0;
  double want_total = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const H p = H(float(ha[i]) * float(hb[i])), q = H(float(ha[i]) / float(hb[i]));
    const H want = H(float(p) + float(q));
    const float want_f = float(ha[i]) * 0.5f + std::fabs(float(ha[i]));
    if (gy[i].bits != want.bits || !porta_test::same_bits(gf[i], want_f)) ++bad;
    want_total += float(ha[i]);
  }
  CHECK(bad == 0);
  // porta's order over the widened values: the bits of porta::sum of the float array
  CHECK(porta_test::same_bits(total, porta::sum(porta::cast<float>(a))));
  CHECK(std::fabs(total - want_total) <= 1e-3 * (1 + std::fabs(want_total)));
}
