// SPDX-License-Identifier: Apache-2.0
// complex64 and complex128 arrays on every device: copies and views, casts, elementwise arithmetic
// and functions against std::complex<long double>, the same bits as porta::complex on the host
// (so on every device), reductions and scans in the canonical order, matmul (vendor and porta's
// fixed order), random numbers, Fourier transforms, and the errors for what complex numbers do not
// have.
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "porta/fuse.hpp"
#include "support/support.hpp"

using porta::Array;
using porta::complex;
using porta::Device;
using porta::Shape;
namespace ref = porta_test::ref;

namespace {

using LC = std::complex<long double>;

template <class T>
std::vector<complex<T>> random_complex(porta_test::Rng& rng, std::int64_t n, T lo = T(-2), T hi = T(2)) {
  std::vector<complex<T>> v(static_cast<std::size_t>(n));
  for (auto& z : v) z = complex<T>(rng.uniform<T>(lo, hi), rng.uniform<T>(lo, hi));
  return v;
}

template <class T>
LC wide(complex<T> z) {
  return LC(z.re, z.im);
}

template <class T>
bool same_bits(complex<T> a, complex<T> b) {
  return porta_test::same_bits(a.re, b.re) && porta_test::same_bits(a.im, b.im);
}

// The first element whose bits differ, or -1.
template <class T>
std::int64_t first_bits_mismatch(const std::vector<complex<T>>& got, const std::vector<complex<T>>& want) {
  if (got.size() != want.size()) return 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!same_bits(got[i], want[i])) return static_cast<std::int64_t>(i);
  return -1;
}

// |got - want| <= tol * eps * scale for both parts; where the scale is beyond T's range the result
// may overflow in T and is not looked at.
template <class T>
bool close(complex<T> got, LC want, long double scale, long double tol) {
  if (scale > std::numeric_limits<T>::max()) return true;
  const long double eps = std::numeric_limits<T>::epsilon();
  const long double bound = tol * eps * scale;
  return std::fabs(got.re - want.real()) <= bound && std::fabs(got.im - want.imag()) <= bound;
}

template <class T>
void check_close(const std::vector<complex<T>>& got, const std::vector<LC>& want, const std::vector<long double>& scale,
                 long double tol) {
  REQUIRE(got.size() == want.size());
  std::int64_t bad = 0, first = -1;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!close(got[i], want[i], scale[i], tol)) {
      if (first < 0) first = static_cast<std::int64_t>(i);
      ++bad;
    }
  std::ostringstream msg;
  msg.precision(17);
  if (first >= 0)
    msg << "first mismatch at " << first << ": got (" << got[first].re << ", " << got[first].im << "), want ("
        << static_cast<double>(want[first].real()) << ", " << static_cast<double>(want[first].imag()) << "), scale "
        << static_cast<double>(scale[first]);
  INFO(msg.str());
  CHECK(bad == 0);
}

}  // namespace

TEMPLATE_TEST_CASE("complex arrays copy, fill and view as their bytes", "[complex]", float, double) {
  using T = TestType;
  using C = complex<T>;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  static_assert(sizeof(C) == 2 * sizeof(T) && alignof(C) == 2 * sizeof(T));
  static_assert(sizeof(std::complex<T>) == sizeof(C), "layout of std::complex");
  const auto h = random_complex<T>(rng, 1000);
  const auto x = Array<C>::from(h, Shape{40, 25}, dev);
  CHECK(first_bits_mismatch(x.to_vector(), h) == -1);
  // std::complex converts both ways, and the bytes are the same
  const std::complex<T> s = h[3];
  const C back = s;
  CHECK(same_bits(back, h[3]));
  // a row of the 2-D array is a view; a clone is a copy
  const auto row = x.row(7).contiguous();
  CHECK(first_bits_mismatch(row.to_vector(), std::vector<C>(h.begin() + 175, h.begin() + 200)) == -1);
  auto y = porta::full<C>(Shape{40, 25}, C(T(1.5), T(-2.5)), dev);
  porta::fill(y.row(3), C(T(-7), T(0.25)));
  const auto hy = y.to_vector();
  CHECK(same_bits(hy[3 * 25 + 4], C(T(-7), T(0.25))));
  CHECK(same_bits(hy[4 * 25], C(T(1.5), T(-2.5))));
  // printed as NumPy prints complex numbers
  std::ostringstream printed;
  printed << Array<C>::from(std::vector<C>{C(3, 4), C(T(-1.5), T(-2))}, dev);
  INFO(printed.str());
  CHECK(printed.str().find("3+4j, -1.5-2j]") != std::string::npos);
  CHECK(printed.str().find(std::is_same_v<T, float> ? "dtype=complex64" : "dtype=complex128") != std::string::npos);
  // the parts, and back
  const auto re = porta::real(x), im = porta::imag(x);
  CHECK(re.shape() == x.shape());
  const auto hre = re.to_vector(), him = im.to_vector();
  bool parts_ok = true;
  for (std::size_t i = 0; i < h.size(); ++i)
    parts_ok = parts_ok && porta_test::same_bits(hre[i], h[i].re) && porta_test::same_bits(him[i], h[i].im);
  CHECK(parts_ok);
  CHECK(first_bits_mismatch(porta::make_complex(re, im).to_vector(), h) == -1);
  // parts of a strided view (the transpose of the rows' first columns)
  const auto col = porta::real(x.col(2));
  CHECK(porta_test::same_bits(col.to_vector()[5], h[5 * 25 + 2].re));
}

TEMPLATE_TEST_CASE("casts between complex and the other dtypes", "[complex][cast]", float, double) {
  using T = TestType;
  using C = complex<T>;
  using Other = std::conditional_t<std::is_same_v<T, float>, double, float>;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const auto h = random_complex<T>(rng, 3000, T(-100), T(100));
  const auto z = Array<C>::from(h, dev);
  // complex -> real keeps the real part (NumPy's cast), complex -> integer truncates it
  const auto r = porta::cast<T>(z).to_vector();
  const auto i32 = porta::cast<std::int32_t>(z).to_vector();
  const auto w = porta::cast<complex<Other>>(z).to_vector();
  bool ok = true;
  for (std::size_t i = 0; i < h.size(); ++i) {
    ok = ok && porta_test::same_bits(r[i], h[i].re) && i32[i] == static_cast<std::int32_t>(h[i].re);
    ok = ok && porta_test::same_bits(w[i].re, static_cast<Other>(h[i].re)) &&
         porta_test::same_bits(w[i].im, static_cast<Other>(h[i].im));
  }
  CHECK(ok);
  // real and integer -> complex: imaginary part +0
  const auto hr = porta_test::nonzero<T>(rng, 3000);
  const auto zr = porta::cast<C>(Array<T>::from(hr, dev)).to_vector();
  const auto zi = porta::cast<C>(porta::arange<std::int64_t>(3000, dev)).to_vector();
  bool up = true;
  for (std::size_t i = 0; i < hr.size(); ++i) {
    up = up && same_bits(zr[i], C(hr[i], T(0)));
    up = up && same_bits(zi[i], C(static_cast<T>(i), T(0)));
  }
  CHECK(up);
}

TEMPLATE_TEST_CASE("complex elementwise arithmetic against long double", "[complex][maps]", float, double) {
  using T = TestType;
  using C = complex<T>;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : {std::int64_t(1), std::int64_t(1000), std::int64_t(1 << 16) + 3}) {
    INFO("n = " << n << " on " << dev.to_string());
    auto ha = random_complex<T>(rng, n);
    auto hb = random_complex<T>(rng, n);
    // a few denominators with one part zero or tiny, and a few huge values (Smith's division)
    if (n > 10) {
      hb[1] = C(T(0), T(0.5));
      hb[2] = C(T(3), T(0));
      hb[3] = C(T(1e-20), T(-2));
      ha[4] = C(std::numeric_limits<T>::max() / 4, T(1));
      hb[4] = C(std::numeric_limits<T>::max() / 8, std::numeric_limits<T>::max() / 16);
    }
    const auto a = Array<C>::from(ha, dev), b = Array<C>::from(hb, dev);
    const C s(T(0.75), T(-1.25));
    std::vector<LC> add(n), sub(n), mul(n), div(n), muls(n), sdiv(n), addr(n);
    std::vector<long double> sc_addr(n);
    std::vector<long double> sc_add(n), sc_mul(n), sc_muls(n), sc_div(n), sc_sdiv(n);
    for (std::int64_t i = 0; i < n; ++i) {
      const LC x = wide(ha[i]), y = wide(hb[i]);
      add[i] = x + y;
      sub[i] = x - y;
      mul[i] = x * y;
      div[i] = x / y;
      muls[i] = x * wide(s);
      sdiv[i] = wide(s) / x;
      addr[i] = x + LC(2.0L, 0.0L);
      sc_addr[i] = std::abs(x) + 2;
      sc_add[i] = std::abs(x) + std::abs(y);
      sc_mul[i] = std::abs(x) * std::abs(y);
      sc_muls[i] = std::abs(x) * std::abs(wide(s));
      sc_div[i] = std::abs(x) / std::abs(y);
      sc_sdiv[i] = std::abs(wide(s)) / std::abs(x);
    }
    check_close((a + b).to_vector(), add, sc_add, 1);
    check_close((a - b).to_vector(), sub, sc_add, 1);
    check_close((a * b).to_vector(), mul, sc_mul, 4);
    check_close((a / b).to_vector(), div, sc_div, 8);
    check_close((a * s).to_vector(), muls, sc_muls, 4);
    check_close((s / a).to_vector(), sdiv, sc_sdiv, 8);
    check_close((a + 2).to_vector(), addr, sc_addr, 1);
    // in place, and axpy with a complex alpha
    auto c = a.clone();
    c *= b;
    check_close(c.to_vector(), mul, sc_mul, 4);
    auto y = b.clone();
    porta::axpy(s, a, y);
    std::vector<LC> axpy(n);
    std::vector<long double> sc_axpy(n);
    for (std::int64_t i = 0; i < n; ++i) {
      axpy[i] = wide(s) * wide(ha[i]) + wide(hb[i]);
      sc_axpy[i] = std::abs(wide(s)) * std::abs(wide(ha[i])) + std::abs(wide(hb[i]));
    }
    check_close(y.to_vector(), axpy, sc_axpy, 4);
  }
}

TEMPLATE_TEST_CASE("complex functions against long double", "[complex][maps]", float, double) {
  using T = TestType;
  using C = complex<T>;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t n = 20000;
  auto h = random_complex<T>(rng, n, T(-4), T(4));
  h[0] = C(T(0), T(0));
  h[1] = C(T(-4), T(0));  // the branch cut of sqrt and log: +0 imaginary part
  h[2] = C(T(3), T(0));
  h[3] = C(T(0), T(-2));
  const auto z = Array<C>::from(h, dev);
  std::vector<LC> e(n), l(n), r(n), cj(n), ng(n), sq(n);
  std::vector<long double> sc_e(n), sc_l(n), sc_r(n), sc_1(n), sc_sq(n);
  for (std::int64_t i = 0; i < n; ++i) {
    const LC x = wide(h[i]);
    e[i] = std::exp(x);
    l[i] = i == 0 ? LC(-std::numeric_limits<long double>::infinity(), 0) : std::log(x);
    r[i] = std::sqrt(x);
    cj[i] = std::conj(x);
    ng[i] = -x;
    sq[i] = x * x;
    sc_e[i] = std::abs(e[i]);
    sc_l[i] = std::abs(l[i]) + 1;  // log|z| near |z| = 1 is accurate absolutely, not relatively
    sc_r[i] = std::abs(r[i]);
    sc_1[i] = std::abs(x);
    sc_sq[i] = std::norm(x);
  }
  check_close(porta::exp(z).to_vector(), e, sc_e, 8);
  auto lz = porta::log(z).to_vector();
  CHECK(std::isinf(lz[0].re));
  lz[0] = C(T(0), T(0));
  l[0] = LC(0, 0);
  check_close(lz, l, sc_l, 8);
  check_close(porta::sqrt(z).to_vector(), r, sc_r, 4);
  check_close(porta::conj(z).to_vector(), cj, sc_1, 0);
  check_close((-z).to_vector(), ng, sc_1, 0);
  check_close(porta::square(z).to_vector(), sq, sc_sq, 4);
  // |z|: a real array, within 1 ulp of the exact modulus
  const auto m = porta::abs(z);
  static_assert(std::is_same_v<std::decay_t<decltype(m)>, Array<T>>);
  std::vector<long double> want(n);
  for (std::int64_t i = 0; i < n; ++i) want[i] = std::abs(wide(h[i]));
  PORTA_CHECK_RESULT(porta_test::compare_ulps(m.to_vector(), want, 1.0));
}

TEMPLATE_TEST_CASE("complex maps give porta::complex's bits on every device", "[complex][maps][determinism]", float,
                   double) {
  using T = TestType;
  using C = complex<T>;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t n = 5000;
  const auto ha = random_complex<T>(rng, n, T(-3), T(3)), hb = random_complex<T>(rng, n, T(-3), T(3));
  const auto a = Array<C>::from(ha, dev), b = Array<C>::from(hb, dev);
  const auto host = [&](auto f) {
    std::vector<C> r(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) r[i] = f(ha[i], hb[i]);
    return r;
  };
  CHECK(first_bits_mismatch((a * b).to_vector(), host([](C x, C y) { return x * y; })) == -1);
  CHECK(first_bits_mismatch((a / b).to_vector(), host([](C x, C y) { return x / y; })) == -1);
  CHECK(first_bits_mismatch(porta::exp(a).to_vector(), host([](C x, C) { return porta::exp(x); })) == -1);
  CHECK(first_bits_mismatch(porta::log(a).to_vector(), host([](C x, C) { return porta::log(x); })) == -1);
  CHECK(first_bits_mismatch(porta::sqrt(a).to_vector(), host([](C x, C) { return porta::sqrt(x); })) == -1);
  const auto m = porta::abs(a).to_vector();
  bool abs_ok = true;
  for (std::int64_t i = 0; i < n; ++i) abs_ok = abs_ok && porta_test::same_bits(m[i], porta::abs(ha[i]));
  CHECK(abs_ok);
}

TEMPLATE_TEST_CASE("complex reductions follow the canonical order of each part", "[complex][reduce][determinism]",
                   float, double) {
  using T = TestType;
  using C = complex<T>;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : {std::int64_t(1), std::int64_t(777), std::int64_t(100003)}) {
    INFO("n = " << n << " on " << dev.to_string());
    const auto h = random_complex<T>(rng, n), g = random_complex<T>(rng, n);
    const auto x = Array<C>::from(h, dev), y = Array<C>::from(g, dev);
    std::vector<T> re(n), im(n), pre(n), pim(n), cre(n), cim(n);
    long double sq = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      re[i] = h[i].re;
      im[i] = h[i].im;
      const C p = h[i] * g[i], q = porta::conj(h[i]) * g[i];
      pre[i] = p.re;
      pim[i] = p.im;
      cre[i] = q.re;
      cim[i] = q.im;
      sq += std::norm(wide(h[i]));
    }
    // a complex sum is the canonical sum of the real parts and of the imaginary parts
    const C s = porta::sum(x);
    CHECK(porta_test::same_bits(s.re, ref::reduce(re, ref::Op::sum)));
    CHECK(porta_test::same_bits(s.im, ref::reduce(im, ref::Op::sum)));
    const C d = porta::dot(x, y), v = porta::vdot(x, y);
    CHECK(porta_test::same_bits(d.re, ref::reduce(pre, ref::Op::sum)));
    CHECK(porta_test::same_bits(d.im, ref::reduce(pim, ref::Op::sum)));
    CHECK(porta_test::same_bits(v.re, ref::reduce(cre, ref::Op::sum)));
    CHECK(porta_test::same_bits(v.im, ref::reduce(cim, ref::Op::sum)));
    const C mn = porta::mean(x);
    CHECK(same_bits(mn, porta::detail::canonical_nan(s / C(static_cast<T>(n)))));
    const T nrm = porta::norm2(x);
    CHECK(std::fabs(nrm - std::sqrt(sq)) <= 4 * std::numeric_limits<T>::epsilon() * std::sqrt(sq) * (1 + n / 1000.0L));
  }
  // along an axis: each output element the canonical sum of its column's parts
  const std::int64_t rows = 300, cols = 7;
  const auto h = random_complex<T>(rng, rows * cols);
  const auto x = Array<C>::from(h, Shape{rows, cols}, dev);
  const auto s0 = porta::sum(x, 0).to_vector();
  const auto m0 = porta::mean(x, 0).to_vector();
  bool ok = true;
  for (std::int64_t c = 0; c < cols; ++c) {
    std::vector<T> re(rows), im(rows);
    for (std::int64_t r = 0; r < rows; ++r) {
      re[r] = h[r * cols + c].re;
      im[r] = h[r * cols + c].im;
    }
    const C want(ref::reduce(re, ref::Op::sum), ref::reduce(im, ref::Op::sum));
    ok = ok && same_bits(s0[c], want) && same_bits(m0[c], porta::detail::canonical_nan(want / C(T(rows))));
  }
  CHECK(ok);
}

TEMPLATE_TEST_CASE("complex comparisons and what complex numbers do not have", "[complex][errors]", float, double) {
  using T = TestType;
  using C = complex<T>;
  const Device dev = PORTA_TEST_DEVICE();
  const auto a = Array<C>::from(std::vector<C>{C(1, 2), C(3, 4), C(5, -6)}, dev);
  const auto b = Array<C>::from(std::vector<C>{C(1, 2), C(3, -4), C(5, -6)}, dev);
  CHECK(porta::equal(a, b).to_vector() == std::vector<std::int32_t>{1, 0, 1});
  CHECK(porta::not_equal(a, b).to_vector() == std::vector<std::int32_t>{0, 1, 0});
  const std::string dtype = std::is_same_v<T, float> ? "complex64" : "complex128";
  using Catch::Matchers::Contains;
  // cpu:strict reports a queued call's error at the next synchronize, as a GPU stream may
  const auto synced = [&](auto f) {
    return [f, dev] {
      (void)f();
      porta::synchronize(dev);
    };
  };
  const std::string undefined = "not defined for " + dtype;
  CHECK_THROWS_WITH(synced([&] { return porta::min(a); })(), Contains(undefined));
  CHECK_THROWS_WITH(synced([&] { return porta::maximum(a, b); })(), Contains(undefined));
  CHECK_THROWS_WITH(synced([&] { return porta::sin(a); })(), Contains(undefined));
  CHECK_THROWS_WITH(synced([&] { return porta::less(a, b); })(), Contains(undefined));
  CHECK_THROWS_WITH(synced([&] { return porta::sort(a); })(), Contains(undefined));
  CHECK_THROWS_WITH(synced([&] { return porta::cummax(a); })(), Contains(undefined));
  // abs into a complex array would write reals: refused, by name
  Array<C> out(Shape{3}, dev);
  CHECK_THROWS_AS(porta::abs(a, out), porta::InvalidArgument);
}

TEMPLATE_TEST_CASE("complex fused expressions give the eager chain's bits", "[complex][fuse]", float, double) {
  using T = TestType;
  using C = complex<T>;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (const std::int64_t n : {std::int64_t(1), std::int64_t(9), std::int64_t(100003)}) {
    INFO("n = " << n << " on " << dev.to_string());
    const auto xa = Array<C>::from(random_complex<T>(rng, n), dev);
    const auto ya = Array<C>::from(random_complex<T>(rng, n), dev);
    const auto za = Array<C>::from(random_complex<T>(rng, n, T(0.25), T(3)), dev);
    const auto x = porta::lazy(xa), y = porta::lazy(ya), z = porta::lazy(za);
    const C s(T(0.5), T(-1));
    // every op complex numbers have, scalars complex and real, on either side
    const Array<C> arith_f = (x * y - z) / (x + s) + porta::conj(y) * T(2) - T(1) / z;
    const Array<C> arith_e = (xa * ya - za) / (xa + s) + porta::conj(ya) * T(2) - T(1) / za;
    CHECK(first_bits_mismatch(arith_f.to_vector(), arith_e.to_vector()) == -1);
    const Array<C> func_f = porta::exp(x) * porta::sqrt(y) - porta::log(z) + porta::square(x) - (-y);
    const Array<C> func_e = porta::exp(xa) * porta::sqrt(ya) - porta::log(za) + porta::square(xa) - (-ya);
    CHECK(first_bits_mismatch(func_f.to_vector(), func_e.to_vector()) == -1);
    // |z| in a complex program is the complex number |z| + 0i: the eager abs's bits in its real part
    const auto abs_f = Array<C>(porta::abs(x * y)).to_vector();
    const auto abs_e = porta::abs(Array<C>(xa * ya)).to_vector();
    std::int64_t bad = 0;
    for (std::size_t i = 0; i < abs_e.size(); ++i)
      bad += !porta_test::same_bits(abs_f[i].re, abs_e[i]) || abs_f[i].im != T(0);
    CHECK(bad == 0);
    CHECK(same_bits(porta::sum(x * y + s), porta::sum(Array<C>(xa * ya + s))));
  }
  // what complex numbers do not have is refused by name inside an expression too
  const auto a = porta::lazy(Array<C>::from(std::vector<C>{C(1, 2), C(3, 4)}, dev));
  const std::string undefined =
      std::string("not defined for ") + (std::is_same_v<T, float> ? "complex64" : "complex128");
  const auto synced = [&](auto f) {
    return [f, dev] {
      (void)f();
      porta::synchronize(dev);
    };
  };
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(synced([&] { return Array<C>(porta::sin(a) + a); })(), Contains(undefined));
  CHECK_THROWS_WITH(synced([&] { return Array<C>(porta::maximum(a, a * T(2))); })(), Contains(undefined));
  CHECK_THROWS_WITH(synced([&] { return Array<C>(porta::relu(a)); })(), Contains(undefined));
}

namespace {

struct MatDims {
  std::int64_t m, k, n;
};

// op(A)[i][p] of a row-major A stored as given (transposed: A is k x m).
template <class X>
X op_at(const std::vector<X>& a, bool trans, std::int64_t rows, std::int64_t cols, std::int64_t i, std::int64_t p) {
  return a[static_cast<std::size_t>(trans ? p * rows + i : i * cols + p)];
}

// porta's fixed complex GEMM order (GemmAlgorithm::own, docs/determinism.md) with porta::complex's
// host arithmetic: s from (+0, +0), s = s + a b over k in order, then alpha s, then + beta C.
template <class T>
std::vector<complex<T>> fixed_order_cgemm(const MatDims& d, complex<T> alpha, const std::vector<complex<T>>& a, bool ta,
                                          const std::vector<complex<T>>& b, bool tb, complex<T> beta,
                                          const std::vector<complex<T>>& c0) {
  using C = complex<T>;
  namespace pd = porta::detail;
  std::vector<C> out(static_cast<std::size_t>(d.m * d.n));
  for (std::int64_t i = 0; i < d.m; ++i)
    for (std::int64_t j = 0; j < d.n; ++j) {
      C s(T(0), T(0));
      for (std::int64_t p = 0; p < d.k; ++p)
        s = pd::add_rn(s, pd::mul_rn(op_at(a, ta, d.m, d.k, i, p), op_at(b, tb, d.k, d.n, p, j)));
      const C cv = c0[static_cast<std::size_t>(i * d.n + j)];
      const bool use_ab = !(alpha == C(0)), use_c = !(beta == C(0));
      C v = use_ab ? pd::mul_rn(alpha, s) : C(0);
      if (use_c) v = use_ab ? pd::add_rn(v, pd::mul_rn(beta, cv)) : pd::mul_rn(beta, cv);
      out[static_cast<std::size_t>(i * d.n + j)] = pd::canonical_nan(v);
    }
  return out;
}

}  // namespace

// Complex matmul through the vendor BLAS (cgemm/zgemm of OpenBLAS, cuBLAS, rocBLAS) and porta's own
// kernel, against long double: transposes, complex alpha and beta, matrix-vector shapes, and a
// poisoned C where beta == 0 (never read). The bound is the classic one for a dot product of k
// complex terms, relative to sum |alpha| |a| |b| + |beta| |c|.
TEMPLATE_TEST_CASE("complex matmul and gemm against long double", "[complex][matmul]", float, double) {
  using T = TestType;
  using C = complex<T>;
  using porta::GemmAlgorithm;
  using porta::MatmulOptions;
  using porta::Precision;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const MatDims dims[] = {{1, 1, 1}, {7, 1, 9}, {33, 70, 65}, {64, 129, 17}, {1, 200, 40}, {40, 200, 1}};
  const std::pair<C, C> scalars[] = {{C(1), C(0)}, {C(T(0.5), T(-1.25)), C(0)}, {C(T(-1), T(2)), C(T(0.75), T(0.5))}};
  for (GemmAlgorithm algo : {GemmAlgorithm::vendor, GemmAlgorithm::own})
    for (const MatDims& d : dims)
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (const auto& [alpha, beta] : scalars) {
            INFO((algo == GemmAlgorithm::own ? "own" : "vendor")
                 << " on " << dev.to_string() << ": m=" << d.m << " k=" << d.k << " n=" << d.n << " trans_a=" << ta
                 << " trans_b=" << tb << " alpha=" << porta_test::show(alpha) << " beta=" << porta_test::show(beta));
            const auto ha = random_complex<T>(rng, d.m * d.k), hb = random_complex<T>(rng, d.k * d.n);
            const auto hc = random_complex<T>(rng, d.m * d.n);
            const auto a = Array<C>::from(ha, ta ? Shape{d.k, d.m} : Shape{d.m, d.k}, dev);
            const auto b = Array<C>::from(hb, tb ? Shape{d.n, d.k} : Shape{d.k, d.n}, dev);
            const T nan = std::numeric_limits<T>::quiet_NaN();
            auto c = beta == C(0) ? Array<C>::from(std::vector<C>(hc.size(), C(nan, nan)), Shape{d.m, d.n}, dev)
                                  : Array<C>::from(hc, Shape{d.m, d.n}, dev);
            porta::gemm(alpha, a, ta, b, tb, beta, c, MatmulOptions{Precision::highest, algo});
            std::vector<LC> want(hc.size());
            std::vector<long double> scale(hc.size());
            for (std::int64_t i = 0; i < d.m; ++i)
              for (std::int64_t j = 0; j < d.n; ++j) {
                LC s = 0;
                long double mag = 0;
                for (std::int64_t p = 0; p < d.k; ++p) {
                  const LC x = wide(op_at(ha, ta, d.m, d.k, i, p)), y = wide(op_at(hb, tb, d.k, d.n, p, j));
                  s += x * y;
                  mag += std::abs(x) * std::abs(y);
                }
                const std::size_t e = static_cast<std::size_t>(i * d.n + j);
                want[e] = wide(alpha) * s + (beta == C(0) ? LC(0) : wide(beta) * wide(hc[e]));
                scale[e] = std::abs(wide(alpha)) * mag + std::abs(wide(beta)) * std::abs(wide(hc[e])) +
                           std::numeric_limits<T>::min();
              }
            check_close(c.to_vector(), want, scale, static_cast<long double>(2 * d.k + 8));
          }
  // matmul: matrix-matrix, matrix-vector and vector-matrix, against gemm's own results
  const auto ha = random_complex<T>(rng, 30 * 20), hx = random_complex<T>(rng, 20), hy = random_complex<T>(rng, 30);
  const auto a = Array<C>::from(ha, Shape{30, 20}, dev);
  const auto av = porta::matmul(a, Array<C>::from(hx, dev)).to_vector();
  const auto ya = porta::matmul(Array<C>::from(hy, dev), a).to_vector();
  REQUIRE(av.size() == 30);
  REQUIRE(ya.size() == 20);
  std::vector<LC> want_av(30), want_ya(20);
  std::vector<long double> scale_av(30), scale_ya(20);
  for (int i = 0; i < 30; ++i)
    for (int p = 0; p < 20; ++p) {
      const LC aip = wide(ha[static_cast<std::size_t>(i * 20 + p)]);
      want_av[i] += aip * wide(hx[p]);
      scale_av[i] += std::abs(aip) * std::abs(wide(hx[p]));
      want_ya[p] += wide(hy[i]) * aip;
      scale_ya[p] += std::abs(aip) * std::abs(wide(hy[i]));
    }
  check_close(av, want_av, scale_av, 48.0L);
  check_close(ya, want_ya, scale_ya, 68.0L);
}

// GemmAlgorithm::own is porta's fixed complex order on every device: the host's sequential chain
// predicts every bit. k crosses the CPU's slices of 128 and the GPU's of 16 with ragged tails; C
// crosses the tiles (16 x 64 on the CPU, 64 x 64 on GPUs); a NaN in A makes canonical NaNs.
TEMPLATE_TEST_CASE("complex gemm with GemmAlgorithm::own: the fixed order, bit for bit on every device",
                   "[complex][matmul][determinism]", float, double) {
  using T = TestType;
  using C = complex<T>;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const MatDims dims[] = {{1, 1, 1}, {1, 300, 3}, {70, 131, 1}, {37, 257, 129}};
  const std::pair<C, C> scalars[] = {{C(1), C(0)}, {C(T(-1.5), T(0.25)), C(T(0.5), T(-2))}, {C(0), C(T(2), T(1))}};
  for (const MatDims& d : dims)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (const auto& [alpha, beta] : scalars) {
          INFO("own on " << dev.to_string() << ": m=" << d.m << " k=" << d.k << " n=" << d.n << " trans_a=" << ta
                         << " trans_b=" << tb << " alpha=" << porta_test::show(alpha)
                         << " beta=" << porta_test::show(beta));
          auto ha = random_complex<T>(rng, d.m * d.k);
          const auto hb = random_complex<T>(rng, d.k * d.n), hc = random_complex<T>(rng, d.m * d.n);
          if (d.m * d.k > 1) ha[1].im = std::numeric_limits<T>::quiet_NaN();
          const auto a = Array<C>::from(ha, ta ? Shape{d.k, d.m} : Shape{d.m, d.k}, dev);
          const auto b = Array<C>::from(hb, tb ? Shape{d.n, d.k} : Shape{d.k, d.n}, dev);
          auto c = Array<C>::from(hc, Shape{d.m, d.n}, dev);
          porta::gemm(alpha, a, ta, b, tb, beta, c,
                      porta::MatmulOptions{porta::Precision::highest, porta::GemmAlgorithm::own});
          const auto got = c.to_vector();
          const auto want = fixed_order_cgemm<T>(d, alpha, ha, ta, hb, tb, beta, hc);
          const std::int64_t bad = first_bits_mismatch(got, want);
          if (bad >= 0)
            INFO("element " << bad << ": got " << porta_test::show(got[bad]) << ", expected "
                            << porta_test::show(want[bad]));
          CHECK(bad == -1);
        }
}

// A complex draw is the real draw of its parts, bit for bit (so the same on every device); a complex
// normal is scaled to E|z|^2 = 1. The moments are checked on 2^16 values (5 sigma bounds).
TEMPLATE_TEST_CASE("complex random numbers are the real draws of their parts", "[complex][random]", float, double) {
  using T = TestType;
  using C = complex<T>;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::uint64_t seed = rng.engine()();
  const std::int64_t n = std::int64_t{1} << 16;
  const porta::random::Counter at{3, 5};
  const auto u = porta::random::uniform<C>(Shape{n}, seed, dev, at).to_vector();
  const auto ur = porta::random::uniform<T>(Shape{2 * n}, seed, dev, at).to_vector();
  const auto z = porta::random::normal<C>(Shape{n}, seed, dev, at).to_vector();
  const auto zr = porta::random::normal<T>(Shape{2 * n}, seed, dev, at).to_vector();
  const T half = static_cast<T>(0.707106781186547524400844362104849039L);
  bool parts = true;
  long double m_re = 0, m_im = 0, power = 0, cross = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    parts = parts && porta_test::same_bits(u[i].re, ur[2 * i]) && porta_test::same_bits(u[i].im, ur[2 * i + 1]);
    parts = parts && porta_test::same_bits(z[i].re, zr[2 * i] * half) &&
            porta_test::same_bits(z[i].im, zr[2 * i + 1] * half);
    m_re += z[i].re;
    m_im += z[i].im;
    power += static_cast<long double>(z[i].re) * z[i].re + static_cast<long double>(z[i].im) * z[i].im;
    cross += static_cast<long double>(z[i].re) * z[i].im;
  }
  CHECK(parts);
  const long double sn = std::sqrt(static_cast<long double>(n));
  CHECK(std::fabs(m_re / n) < 5 * 0.7072L / sn);
  CHECK(std::fabs(m_im / n) < 5 * 0.7072L / sn);
  CHECK(std::fabs(power / n - 1) < 5 * 1.0L / sn);  // Var |z|^2 = 1 for a complex normal
  CHECK(std::fabs(cross / n) < 5 * 0.5L / sn);
  // the next draw starts where blocks_for says this one ended
  porta::random::Counter next = at;
  next.offset += porta::random::blocks_for<C>(n);
  const auto after = porta::random::uniform<T>(Shape{2}, seed, dev, next).to_vector();
  const auto longer = porta::random::uniform<T>(Shape{2 * n + 2}, seed, dev, at).to_vector();
  CHECK(porta_test::same_bits(after[0], longer[2 * n]));
  CHECK(porta_test::same_bits(after[1], longer[2 * n + 1]));
  // into an existing array
  Array<C> out(Shape{n}, dev);
  porta::random::normal(out, seed, at);
  CHECK(first_bits_mismatch(out.to_vector(), z) == -1);
}

// A complex prefix sum is the prefix sum of each part: bit for bit the real scans of real(x) and
// imag(x) on the same device (whose canonical order the scan tests pin down), and close to long
// double; whole-array, along each axis of a 3-D array, inclusive and exclusive, and from a view.
TEMPLATE_TEST_CASE("complex scans are the scans of their parts", "[complex][scan][determinism]", float, double) {
  using T = TestType;
  using C = complex<T>;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const Shape shape{5, 700, 3};
  const auto h = random_complex<T>(rng, shape.size());
  const auto x = Array<C>::from(h, shape, dev);
  const auto re = porta::real(x), im = porta::imag(x);
  const auto same_as_parts = [](const Array<C>& got, const Array<T>& want_re, const Array<T>& want_im) {
    REQUIRE(got.shape() == want_re.shape());
    const auto g = got.to_vector();
    const auto r = want_re.to_vector(), i = want_im.to_vector();
    bool ok = true;
    for (std::size_t e = 0; e < g.size(); ++e)
      ok = ok && porta_test::same_bits(g[e].re, r[e]) && porta_test::same_bits(g[e].im, i[e]);
    return ok;
  };
  CHECK(same_as_parts(porta::cumsum(x), porta::cumsum(re), porta::cumsum(im)));
  CHECK(same_as_parts(porta::exclusive_scan(x), porta::exclusive_scan(re), porta::exclusive_scan(im)));
  for (int axis : {0, 1, 2, -1}) {
    INFO("axis " << axis);
    CHECK(same_as_parts(porta::cumsum(x, axis), porta::cumsum(re, axis), porta::cumsum(im, axis)));
    CHECK(same_as_parts(porta::exclusive_scan(x, axis), porta::exclusive_scan(re, axis),
                        porta::exclusive_scan(im, axis)));
  }
  // a strided view (the middle element of the last axis), scanned along its 700 elements
  const auto view = x.slice(2, 1, 2);
  CHECK(
      same_as_parts(porta::cumsum(view, 1), porta::cumsum(porta::real(view), 1), porta::cumsum(porta::imag(view), 1)));
  // against long double, along axis 1
  const auto got = porta::cumsum(x, 1).to_vector();
  std::vector<LC> want(h.size());
  std::vector<long double> scale(h.size());
  for (std::int64_t a = 0; a < 5; ++a)
    for (std::int64_t c = 0; c < 3; ++c) {
      LC s = 0;
      long double mag = 0;
      for (std::int64_t b = 0; b < 700; ++b) {
        const std::size_t e = static_cast<std::size_t>((a * 700 + b) * 3 + c);
        s += wide(h[e]);
        mag += std::fabs(h[e].re) + std::fabs(h[e].im);
        want[e] = s;
        scale[e] = mag;
      }
    }
  check_close(got, want, scale, 16.0L);
}

// view_as_real / view_as_complex share memory; the transforms of complex arrays are those of their
// pair-axis form, bit for bit, and a naive DFT in long double checks one of them.
TEMPLATE_TEST_CASE("complex views and Fourier transforms of complex arrays", "[complex][fft]", float, double) {
  using T = TestType;
  using C = complex<T>;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const auto h = random_complex<T>(rng, 6 * 10);
  auto z = Array<C>::from(h, Shape{6, 10}, dev);
  auto r = porta::view_as_real(z);
  CHECK(r.shape() == Shape{6, 10, 2});
  CHECK(static_cast<const void*>(r.data()) == static_cast<const void*>(z.data()));
  const auto hr = r.to_vector();
  CHECK(std::memcmp(hr.data(), h.data(), h.size() * sizeof(C)) == 0);
  porta::fill(r, T(3));  // writes through the view
  CHECK(same_bits(z.to_vector()[17], C(3, 3)));
  const auto back = porta::view_as_complex(r);
  CHECK(back.shape() == Shape{6, 10});
  CHECK(static_cast<const void*>(back.data()) == static_cast<const void*>(z.data()));
  CHECK_THROWS_AS(porta::view_as_complex(Array<T>(Shape{4, 3}, dev)), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::view_as_real(z.col(1)), porta::InvalidArgument);  // strided
  CHECK_THROWS_AS(porta::view_as_real(Array<C>(Shape{2, 2, 2, 2}, dev)), porta::InvalidArgument);

  const auto x = Array<C>::from(h, Shape{6, 10}, dev);
  const auto pairs = porta::view_as_real(x).clone();
  const auto bits_of = [](const Array<C>& got, const Array<T>& want) {
    const auto g = got.to_vector();
    const auto w = want.to_vector();
    return g.size() * 2 == w.size() && std::memcmp(g.data(), w.data(), w.size() * sizeof(T)) == 0;
  };
  namespace pf = porta::fft;
  CHECK(bits_of(pf::fft(x), pf::fft(pairs)));
  CHECK(bits_of(pf::ifft(x, 0, pf::Norm::ortho), pf::ifft(pairs, 0, pf::Norm::ortho)));
  CHECK(bits_of(pf::fft2(x), pf::fft2(pairs)));
  CHECK(bits_of(pf::ifftn(x), pf::ifftn(pairs)));
  CHECK(bits_of(pf::fft(x.col(3)), pf::fft(porta::view_as_real(x.col(3).contiguous()))));  // a strided view
  const auto real_back = pf::irfft(x, 18);
  CHECK(real_back.shape() == Shape{6, 18});
  const auto rb = real_back.to_vector(), rp = pf::irfft(pairs, 18).to_vector();
  CHECK(std::memcmp(rb.data(), rp.data(), rb.size() * sizeof(T)) == 0);
  // the 1-D transform of each row against a naive DFT
  const auto got = pf::fft(x).to_vector();
  std::vector<LC> want(h.size());
  std::vector<long double> scale(h.size());
  const long double two_pi = 6.283185307179586476925286766559L;
  for (int row = 0; row < 6; ++row)
    for (int k = 0; k < 10; ++k) {
      LC s = 0;
      long double mag = 0;
      for (int j = 0; j < 10; ++j) {
        const LC w = std::polar(1.0L, -two_pi * j * k / 10);
        s += wide(h[static_cast<std::size_t>(row * 10 + j)]) * w;
        mag += std::abs(wide(h[static_cast<std::size_t>(row * 10 + j)]));
      }
      want[static_cast<std::size_t>(row * 10 + k)] = s;
      scale[static_cast<std::size_t>(row * 10 + k)] = mag;
    }
  check_close(got, want, scale, 16.0L);
  // rfft's pairs as a complex array, without a copy
  const auto sig = porta::random::uniform<T>(Shape{16}, 7, dev);
  const auto spec = porta::view_as_complex(pf::rfft(sig));
  CHECK(spec.shape() == Shape{9});
  CHECK(std::fabs(spec.to_vector()[0].re - porta::sum(sig)) <= 16 * std::numeric_limits<T>::epsilon() * 16);
}
