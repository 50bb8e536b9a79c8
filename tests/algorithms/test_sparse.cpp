// SPDX-License-Identifier: Apache-2.0
// porta::sparse: products (matmul, spmm, both algorithms; Algorithm::own bit for bit), from_host,
// from_coo and their validation, to_dense and transpose, against host references on every device.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "porta/detail/rounding.hpp"
#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::none;
using porta::Shape;
namespace ps = porta::sparse;

namespace {

// A CSR matrix on the host, as the tests build it and as the references read it.
template <class T, class I>
struct HostCsr {
  std::int64_t rows = 0, cols = 0;
  std::vector<I> indptr{I(0)};
  std::vector<I> indices;
  std::vector<T> values;
  std::int64_t nnz() const { return static_cast<std::int64_t>(values.size()); }
  std::int64_t begin(std::int64_t r) const { return static_cast<std::int64_t>(indptr[static_cast<std::size_t>(r)]); }
  std::int64_t end(std::int64_t r) const { return static_cast<std::int64_t>(indptr[static_cast<std::size_t>(r) + 1]); }
};

// mean: about the average length of a non-empty row (0: no stored entries at all).
struct Pattern {
  std::int64_t rows, cols, mean;
};
// Empty shapes, nnz 0, 1x1, rectangles both ways, and one large enough that the CPU splits its rows
// over threads (about 80000 entries plus rows).
const Pattern kPatterns[] = {{0, 0, 3},     {0, 7, 3},     {7, 0, 3},       {1, 1, 1}, {1, 1, 0},
                             {6, 6, 0},     {2, 5, 3},     {9, 4, 3},       {4, 9, 3}, {33, 17, 5},
                             {64, 300, 12}, {300, 64, 12}, {3000, 1700, 30}};

const char* algo_name(ps::Algorithm a) {
  return a == ps::Algorithm::vendor ? "vendor" : "own";
}

// ±[0.5, 1) times 2^-8 .. 2^8: sums in another order, or with an FMA, come out different bits.
template <class T>
std::vector<T> wide(porta_test::Rng& rng, std::int64_t n, int scale = 8) {
  std::uniform_int_distribution<int> e(-scale, scale);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (T& x : v) {
    const T m = rng.uniform<T>(T(0.5), T(1));
    x = std::ldexp(rng.coin() ? m : -m, e(rng.engine()));
  }
  return v;
}

// Empty rows (one in five when there are more than two rows), one dense row holding every column
// in shuffled order plus two duplicates, and otherwise random columns in random order, a quarter of
// them repeating a column already in the row.
template <class T, class I>
HostCsr<T, I> random_csr(porta_test::Rng& rng, const Pattern& p) {
  HostCsr<T, I> a;
  a.rows = p.rows;
  a.cols = p.cols;
  const bool any = p.cols > 0 && p.mean > 0;
  const std::int64_t dense = any && p.rows > 2 ? rng.index(p.rows) : -1;
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const std::size_t begin = a.indices.size();
    if (r == dense) {
      std::vector<I> cols(static_cast<std::size_t>(p.cols));
      std::iota(cols.begin(), cols.end(), I(0));
      std::shuffle(cols.begin(), cols.end(), rng.engine());
      for (int d = 0; d < 2; ++d) {
        const I again = cols[static_cast<std::size_t>(rng.index(p.cols))];
        cols.insert(cols.begin() + rng.index(static_cast<std::int64_t>(cols.size()) + 1), again);
      }
      a.indices.insert(a.indices.end(), cols.begin(), cols.end());
    } else if (any && (p.rows <= 2 || rng.index(5) != 0)) {
      const std::int64_t len = 1 + rng.index(2 * p.mean);
      for (std::int64_t e = 0; e < len; ++e) {
        const auto have = static_cast<std::int64_t>(a.indices.size() - begin);
        if (have > 0 && rng.index(4) == 0)
          a.indices.push_back(a.indices[begin + static_cast<std::size_t>(rng.index(have))]);
        else
          a.indices.push_back(static_cast<I>(rng.index(p.cols)));
      }
    }
    a.indptr.push_back(static_cast<I>(a.indices.size()));
  }
  a.values = wide<T>(rng, static_cast<std::int64_t>(a.indices.size()));
  return a;
}

template <class T, class I>
ps::Csr<T, I> upload(const HostCsr<T, I>& h, Device dev) {
  return ps::Csr<T, I>::from_host(h.rows, h.cols, h.indptr, h.indices, h.values, dev);
}

// Y = alpha A X + beta Y0 in long double, X cols x k and Y rows x k row-major, with the bound
// (row length + 3) eps (|alpha| sum |a x| + |beta y0|) + the smallest normal per element.
template <class T, class I>
void product_ref(const HostCsr<T, I>& a, const std::vector<T>& x, std::int64_t k, T alpha, T beta,
                 const std::vector<T>& y0, std::vector<long double>& out, std::vector<long double>& bound) {
  out.assign(static_cast<std::size_t>(a.rows * k), 0.0L);
  bound.assign(out.size(), 0.0L);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t c = 0; c < k; ++c) {
      long double s = 0, sa = 0;
      for (std::int64_t j = a.begin(i); j < a.end(i); ++j) {
        const long double p =
            static_cast<long double>(a.values[static_cast<std::size_t>(j)]) *
            static_cast<long double>(x[static_cast<std::size_t>(a.indices[static_cast<std::size_t>(j)] * k + c)]);
        s += p;
        sa += std::fabs(p);
      }
      const std::size_t at = static_cast<std::size_t>(i * k + c);
      const long double al = alpha, be = beta, yv = beta != T(0) ? static_cast<long double>(y0[at]) : 0.0L;
      out[at] = al * s + be * yv;
      bound[at] = static_cast<long double>(a.end(i) - a.begin(i) + 3) * porta_test::eps<T>() *
                      (std::fabs(al) * sa + std::fabs(be * yv)) +
                  std::numeric_limits<T>::min();
    }
}

// The documented order of Algorithm::own (porta/detail/sparse_order.hpp), written out again in T:
// from +0, each stored entry of the row in storage order, product rounded, then sum rounded; then
// alpha times the sum, plus beta times the old value when beta != 0; every NaN the canonical one.
// alpha == 0 is BLAS's rule: beta * Y (or +0), A and X unread (porta/sparse.hpp).
// No FMA: add_rn / mul_rn are a plain + and * on the host, which g++ fuses after inlining wherever
// the target has FMA; the -ffp-contract=off that porta_test_support passes on is what keeps them apart.
template <class T, class I>
std::vector<T> own_ref(const HostCsr<T, I>& a, const std::vector<T>& x, std::int64_t k, T alpha, T beta,
                       const std::vector<T>& y0) {
  using porta::detail::add_rn;
  using porta::detail::mul_rn;
  std::vector<T> y(static_cast<std::size_t>(a.rows * k));
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t c = 0; c < k; ++c) {
      T acc = T(0);
      for (std::int64_t j = a.begin(i); j < a.end(i); ++j)
        acc = add_rn(acc, mul_rn(a.values[static_cast<std::size_t>(j)],
                                 x[static_cast<std::size_t>(a.indices[static_cast<std::size_t>(j)] * k + c)]));
      const std::size_t at = static_cast<std::size_t>(i * k + c);
      T v = alpha == T(0) ? T(0) : mul_rn(alpha, acc);
      if (beta != T(0)) v = alpha == T(0) ? mul_rn(beta, y0[at]) : add_rn(v, mul_rn(beta, y0[at]));
      y[at] = std::isnan(v) ? std::numeric_limits<T>::quiet_NaN() : v;
    }
  return y;
}

// Bit for bit, NaNs included (a NaN of another payload or sign is a mismatch).
template <class T>
porta_test::Result compare_bits(const std::vector<T>& got, const std::vector<T>& ref) {
  return porta_test::compare_with(
      got.size(), ref.size(), [&](std::size_t i) { return porta_test::same_bits(got[i], ref[i]); },
      [&](std::size_t i) {
        return "got " + porta_test::show(got[i]) + (porta_test::is_poison(got[i]) ? " [poison: never written]" : "") +
               ", expected " + porta_test::show(ref[i]);
      });
}

// A product's result against the long double reference (both algorithms), and against the
// documented order bit for bit (Algorithm::own).
template <class T, class I>
void check_product(const std::vector<T>& got, ps::Algorithm algo, const HostCsr<T, I>& a, const std::vector<T>& x,
                   std::int64_t k, T alpha, T beta, const std::vector<T>& y0) {
  std::vector<long double> ref, bound;
  product_ref(a, x, k, alpha, beta, y0, ref, bound);
  PORTA_CHECK_RESULT(porta_test::compare_bound(got, ref, bound));
  if (algo == ps::Algorithm::own) PORTA_CHECK_RESULT(compare_bits(got, own_ref(a, x, k, alpha, beta, y0)));
}

// A^T on the host, as its CSR form must be: the entries of column c of A, in A's row order (and in
// storage order within a row).
template <class T, class I>
HostCsr<T, I> host_transpose(const HostCsr<T, I>& a) {
  HostCsr<T, I> t;
  t.rows = a.cols;
  t.cols = a.rows;
  t.indptr.clear();
  t.indptr.push_back(I(0));
  for (std::int64_t c = 0; c < a.cols; ++c) {
    for (std::int64_t r = 0; r < a.rows; ++r)
      for (std::int64_t j = a.begin(r); j < a.end(r); ++j)
        if (a.indices[static_cast<std::size_t>(j)] == c) {
          t.indices.push_back(static_cast<I>(r));
          t.values.push_back(a.values[static_cast<std::size_t>(j)]);
        }
    t.indptr.push_back(static_cast<I>(t.indices.size()));
  }
  return t;
}

// The dense matrix: a lone entry as stored, duplicates added in storage order (canonical NaN).
template <class T, class I>
std::vector<T> host_dense(const HostCsr<T, I>& a) {
  std::vector<T> d(static_cast<std::size_t>(a.rows * a.cols), T(0));
  std::vector<bool> seen(d.size(), false);
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (std::int64_t j = a.begin(r); j < a.end(r); ++j) {
      const std::size_t at = static_cast<std::size_t>(r * a.cols + a.indices[static_cast<std::size_t>(j)]);
      const T v = a.values[static_cast<std::size_t>(j)];
      if (seen[at]) {
        const T s = porta::detail::add_rn(d[at], v);
        d[at] = std::isnan(s) ? std::numeric_limits<T>::quiet_NaN() : s;
      } else {
        d[at] = v;
      }
      seen[at] = true;
    }
  return d;
}

template <class T, class I>
void matvec_cases(Device dev, porta_test::Rng& rng) {
  for (const Pattern& p : kPatterns) {
    const auto h = random_csr<T, I>(rng, p);
    const auto a = upload(h, dev);
    INFO(p.rows << "x" << p.cols << " with " << h.nnz() << " stored entries, " << sizeof(I) * 8 << "-bit indices, on "
                << dev.to_string());
    CHECK(a.rows() == p.rows);
    CHECK(a.cols() == p.cols);
    CHECK(a.nnz() == h.nnz());
    CHECK(a.device() == dev);
    const auto hx = wide<T>(rng, p.cols);
    const auto x = Array<T>::from(hx, dev);
    for (ps::Algorithm algo : {ps::Algorithm::vendor, ps::Algorithm::own}) {
      INFO(algo_name(algo));
      porta_test::poison_pool<T>(p.rows, dev);
      const Array<T> y = ps::matmul(a, x, ps::Options{algo});
      CHECK(y.shape() == Shape{p.rows});
      CHECK(y.device() == dev);
      check_product(y.to_vector(), algo, h, hx, 1, T(1), T(0), {});
    }
    PORTA_CHECK_RESULT(porta_test::compare_exact(x.to_vector(), hx));
    PORTA_CHECK_RESULT(compare_bits(a.values().to_vector(), h.values));
    PORTA_CHECK_RESULT(porta_test::compare_exact(a.indices().to_vector(), h.indices));
  }
}

struct AB {
  double alpha, beta;
};
// beta == 0 (Y overwritten, never read), 1, and another value; alpha == 0 too.
const AB kAlphaBetas[] = {{1, 0}, {-1.5, 0}, {2, 1}, {0.5, -0.25}, {0, 2}};

template <class T, class I>
void spmm_cases(Device dev, porta_test::Rng& rng) {
  const Pattern patterns[] = {{0, 5, 3}, {5, 0, 3}, {1, 1, 1}, {6, 6, 0}, {9, 4, 3}, {33, 17, 5}, {600, 500, 20}};
  for (const Pattern& p : patterns) {
    const auto h = random_csr<T, I>(rng, p);
    const auto a = upload(h, dev);
    // k == 1 twice: as 1-D vectors and as one-column matrices.
    for (const std::int64_t k :
         {std::int64_t{-1}, std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, std::int64_t{8}, std::int64_t{33}}) {
      const bool vector = k < 0;
      const std::int64_t kk = vector ? 1 : k;
      const Shape xs = vector ? Shape{p.cols} : Shape{p.cols, kk};
      const Shape ys = vector ? Shape{p.rows} : Shape{p.rows, kk};
      const auto hx = wide<T>(rng, p.cols * kk);
      const auto hy = wide<T>(rng, p.rows * kk);
      const auto x = Array<T>::from(hx, xs, dev);
      for (const AB& ab : kAlphaBetas)
        for (ps::Algorithm algo : {ps::Algorithm::vendor, ps::Algorithm::own}) {
          const T alpha = static_cast<T>(ab.alpha), beta = static_cast<T>(ab.beta);
          INFO(algo_name(algo) << " on " << dev.to_string() << ": " << p.rows << "x" << p.cols << " (" << h.nnz()
                               << " entries, " << sizeof(I) * 8 << "-bit indices) times " << xs.to_string()
                               << ", alpha " << ab.alpha << ", beta " << ab.beta);
          // beta == 0: Y starts as NaN, which must not come through
          auto y = beta == T(0) ? porta_test::poisoned<T>(ys, dev) : Array<T>::from(hy, ys, dev);
          ps::spmm(alpha, a, x, beta, y, ps::Options{algo});
          CHECK(y.shape() == ys);
          check_product(y.to_vector(), algo, h, hx, kk, alpha, beta, hy);
        }
      for (ps::Algorithm algo : {ps::Algorithm::vendor, ps::Algorithm::own}) {
        INFO("matmul, " << algo_name(algo) << " on " << dev.to_string() << ": " << p.rows << "x" << p.cols << " times "
                        << xs.to_string());
        porta_test::poison_pool<T>(p.rows * kk, dev);
        const Array<T> y = ps::matmul(a, x, ps::Options{algo});
        CHECK(y.shape() == ys);
        check_product(y.to_vector(), algo, h, hx, kk, T(1), T(0), {});
      }
      PORTA_CHECK_RESULT(porta_test::compare_exact(x.to_vector(), hx));
    }
  }
}

}  // namespace

TEMPLATE_TEST_CASE("sparse matmul: A x for CSR matrices of every shape, both algorithms", "[sparse]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  matvec_cases<T, std::int32_t>(dev, rng);
  matvec_cases<T, std::int64_t>(dev, rng);
}

TEMPLATE_TEST_CASE("sparse spmm: several right-hand sides, alpha and beta", "[sparse][spmm]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  spmm_cases<T, std::int32_t>(dev, rng);
  spmm_cases<T, std::int64_t>(dev, rng);
}

// Views with unit stride along the last axis are read in place, any other is copied first
// (porta/sparse.hpp); the host references gather each view by its own index formula.
TEMPLATE_TEST_CASE("sparse products read strided views of x and X", "[sparse][views]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const Pattern p{40, 30, 6};
  const auto h = random_csr<T, std::int32_t>(rng, p);
  const auto a = upload(h, dev);
  const std::int64_t n = p.cols, k = 3;
  const auto hy = wide<T>(rng, p.rows * 7);  // Y for the widest X below (7 columns)

  const auto run = [&](const char* what, const Array<T>& x, const std::vector<T>& hx, std::int64_t kk) {
    INFO(what << " on " << dev.to_string() << " (shape " << x.shape().to_string() << ")");
    REQUIRE(static_cast<std::int64_t>(hx.size()) == n * kk);
    REQUIRE(static_cast<std::int64_t>(hy.size()) >= p.rows * kk);
    const Shape ys = x.rank() == 1 ? Shape{p.rows} : Shape{p.rows, kk};
    for (ps::Algorithm algo : {ps::Algorithm::vendor, ps::Algorithm::own}) {
      INFO(algo_name(algo));
      porta_test::poison_pool<T>(p.rows * kk, dev);
      check_product(ps::matmul(a, x, ps::Options{algo}).to_vector(), algo, h, hx, kk, T(1), T(0), {});
      const std::vector<T> y0(hy.begin(), hy.begin() + p.rows * kk);
      auto y = Array<T>::from(y0, ys, dev);
      ps::spmm(T(-0.75), a, x, T(1.5), y, ps::Options{algo});
      check_product(y.to_vector(), algo, h, hx, kk, T(-0.75), T(1.5), y0);
    }
  };

  // x = M[:, 1] of an n x 3 matrix: stride 3
  const auto hm = wide<T>(rng, n * 3);
  const auto m = Array<T>::from(hm, Shape{n, 3}, dev);
  std::vector<T> col1(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) col1[static_cast<std::size_t>(i)] = hm[static_cast<std::size_t>(i * 3 + 1)];
  run("a column of a matrix", m.col(1), col1, 1);

  // x = v[::2] and v[::-1]
  const auto hv = wide<T>(rng, 2 * n);
  const auto v = Array<T>::from(hv, dev);
  std::vector<T> even(static_cast<std::size_t>(n)), back(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) even[static_cast<std::size_t>(i)] = hv[static_cast<std::size_t>(2 * i)];
  run("v[::2]", v.slice({{none, none, 2}}), even, 1);
  const auto hw = wide<T>(rng, n);
  const auto w = Array<T>::from(hw, dev);
  for (std::int64_t i = 0; i < n; ++i) back[static_cast<std::size_t>(i)] = hw[static_cast<std::size_t>(n - 1 - i)];
  run("w[::-1]", w.slice({{none, none, -1}}), back, 1);

  // X = W[:, 1:4] of an n x 7 matrix (row stride 7, read in place) and W[:, ::2] (copied)
  const auto hbig = wide<T>(rng, n * 7);
  const auto big = Array<T>::from(hbig, Shape{n, 7}, dev);
  std::vector<T> block(static_cast<std::size_t>(n * k)), every2(static_cast<std::size_t>(n * 4));
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t c = 0; c < k; ++c)
      block[static_cast<std::size_t>(i * k + c)] = hbig[static_cast<std::size_t>(i * 7 + 1 + c)];
    for (std::int64_t c = 0; c < 4; ++c)
      every2[static_cast<std::size_t>(i * 4 + c)] = hbig[static_cast<std::size_t>(i * 7 + 2 * c)];
  }
  run("W[:, 1:4]", big.slice({{}, {1, 4}}), block, k);
  run("W[:, ::2]", big.slice({{}, {none, none, 2}}), every2, 4);
  std::vector<T> one_col(static_cast<std::size_t>(n)), flipped(static_cast<std::size_t>(n * 7));
  for (std::int64_t i = 0; i < n; ++i) {
    one_col[static_cast<std::size_t>(i)] = hbig[static_cast<std::size_t>(i * 7 + 5)];
    for (std::int64_t c = 0; c < 7; ++c)
      flipped[static_cast<std::size_t>(i * 7 + c)] = hbig[static_cast<std::size_t>((n - 1 - i) * 7 + c)];
  }
  run("W[:, 5:6]", big.slice({{}, {5, 6}}), one_col, 1);
  run("W[::-1]", big.slice({{none, none, -1}}), flipped, 7);

  // X = U[::2] of a 2n x 3 matrix: row stride 6
  const auto hu = wide<T>(rng, 2 * n * k);
  const auto u = Array<T>::from(hu, Shape{2 * n, k}, dev);
  std::vector<T> rows2(static_cast<std::size_t>(n * k));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t c = 0; c < k; ++c)
      rows2[static_cast<std::size_t>(i * k + c)] = hu[static_cast<std::size_t>(2 * i * k + c)];
  run("U[::2]", u.slice({{none, none, 2}}), rows2, k);
}

// beta == 0 never reads Y: not a NaN of any payload, not an infinity (0 * inf would be a NaN).
TEMPLATE_TEST_CASE("sparse spmm with beta == 0 overwrites Y whatever it holds", "[sparse][spmm][ieee]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const auto h = random_csr<T, std::int32_t>(rng, {50, 20, 4});
  const auto a = upload(h, dev);
  std::vector<T> junk = porta_test::nan_patterns<T>();
  junk.push_back(std::numeric_limits<T>::infinity());
  junk.push_back(-std::numeric_limits<T>::infinity());
  for (const std::int64_t k : {std::int64_t{1}, std::int64_t{4}}) {
    const auto hx = wide<T>(rng, h.cols * k);
    const auto x = Array<T>::from(hx, Shape{h.cols, k}, dev);
    std::vector<T> hy(static_cast<std::size_t>(h.rows * k));
    for (std::size_t i = 0; i < hy.size(); ++i) hy[i] = junk[i % junk.size()];
    for (ps::Algorithm algo : {ps::Algorithm::vendor, ps::Algorithm::own})
      for (const T alpha : {T(1), T(-2), T(0)}) {
        INFO(algo_name(algo) << " on " << dev.to_string() << ", k " << k << ", alpha " << alpha);
        auto y = Array<T>::from(hy, Shape{h.rows, k}, dev);
        ps::spmm(alpha, a, x, T(0), y, ps::Options{algo});
        const auto got = y.to_vector();
        CHECK(porta_test::first_poison(got) == -1);
        check_product(got, algo, h, hx, k, alpha, T(0), hy);
      }
  }
}

// BLAS's rule, as porta::gemm: alpha == 0 gives beta * Y even where A or X hold a NaN or an infinity.
TEMPLATE_TEST_CASE("sparse spmm with alpha == 0 reads neither A nor X", "[sparse][spmm][ieee]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  auto h = random_csr<T, std::int32_t>(rng, {30, 12, 4});
  REQUIRE(h.nnz() > 1);
  h.values[0] = std::numeric_limits<T>::quiet_NaN();
  h.values[1] = std::numeric_limits<T>::infinity();
  const auto a = upload(h, dev);
  for (const std::int64_t k : {std::int64_t{1}, std::int64_t{3}}) {
    auto hx = wide<T>(rng, h.cols * k);
    hx[0] = porta_test::nan_patterns<T>()[2];
    hx.back() = -std::numeric_limits<T>::infinity();
    const auto x = Array<T>::from(hx, Shape{h.cols, k}, dev);
    const auto hy = wide<T>(rng, h.rows * k);
    for (ps::Algorithm algo : {ps::Algorithm::vendor, ps::Algorithm::own})
      for (const T beta : {T(0), T(1), T(-2.5)}) {
        INFO(algo_name(algo) << " on " << dev.to_string() << ", k " << k << ", beta " << beta);
        auto y =
            beta == T(0) ? porta_test::poisoned<T>(Shape{h.rows, k}, dev) : Array<T>::from(hy, Shape{h.rows, k}, dev);
        ps::spmm(T(0), a, x, beta, y, ps::Options{algo});
        std::vector<T> want(hy.size());
        for (std::size_t i = 0; i < hy.size(); ++i) want[i] = beta == T(0) ? T(0) : static_cast<T>(beta * hy[i]);
        PORTA_CHECK_RESULT(compare_bits(y.to_vector(), want));
      }
  }
}

// NaNs of any payload, inf * 0 and inf - inf (x86 makes those a NaN with the sign bit set): the
// canonical quiet NaN, in the result and when beta * Y is one.
TEMPLATE_TEST_CASE("sparse products with Algorithm::own give the canonical NaN", "[sparse][ieee]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  const T inf = std::numeric_limits<T>::infinity();
  const std::vector<T> nans = porta_test::nan_patterns<T>();
  // row 0: a NaN value; row 1: inf * 0; row 2: inf - inf; row 3: finite; row 4: inf
  HostCsr<T, std::int32_t> h;
  h.rows = 5;
  h.cols = 3;
  h.indptr = {0, 2, 3, 5, 7, 8};
  h.indices = {1, 0, 2, 0, 0, 1, 0, 0};
  h.values = {nans[1], T(1), inf, inf, -inf, T(2), T(-3), inf};
  const auto a = upload(h, dev);
  for (const T& nan : nans) {
    const std::vector<T> hx = {T(1), T(0.5), T(0)};
    const auto x = Array<T>::from(hx, dev);
    const std::vector<T> hy = {T(1), T(1), T(1), nan, T(1)};
    INFO("Y holds " << porta_test::show(nan) << " on " << dev.to_string());
    porta_test::poison_pool<T>(h.rows, dev);
    PORTA_CHECK_RESULT(
        compare_bits(ps::matmul(a, x, ps::Options{ps::Algorithm::own}).to_vector(), own_ref(h, hx, 1, T(1), T(0), {})));
    auto y = Array<T>::from(hy, dev);
    ps::spmm(T(2), a, x, T(3), y, ps::Options{ps::Algorithm::own});
    const auto got = y.to_vector();
    PORTA_CHECK_RESULT(compare_bits(got, own_ref(h, hx, 1, T(2), T(3), hy)));
    for (std::size_t i = 0; i < 4; ++i) CHECK(porta_test::same_bits(got[i], std::numeric_limits<T>::quiet_NaN()));
    CHECK(got[4] == inf);
  }
}

// Each row's sum starts from +0, so products that are all -0 add up to +0, not -0.
TEMPLATE_TEST_CASE("sparse products with Algorithm::own start each row's sum from +0", "[sparse][ieee]", float,
                   double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  HostCsr<T, std::int32_t> h;
  h.rows = 3;
  h.cols = 2;
  h.indptr = {0, 2, 2, 3};
  h.indices = {0, 1, 1};
  h.values = {T(-0.0), T(1), T(1)};
  const auto a = upload(h, dev);
  const std::vector<T> hx = {T(1), T(-0.0)};
  const auto y = ps::matmul(a, Array<T>::from(hx, dev), ps::Options{ps::Algorithm::own}).to_vector();
  REQUIRE(y.size() == 3);
  // row 0: +0 + (-0 * 1) + (1 * -0) = +0 (from -0 it would be -0); row 1 (empty): +0; row 2: +0 + (1 * -0) = +0
  for (const T v : y) CHECK(porta_test::same_bits(v, T(0)));
  PORTA_CHECK_RESULT(compare_bits(y, own_ref(h, hx, 1, T(1), T(0), {})));
}

// porta::sparse::Algorithm::own promises one order whatever the CPU's team size: rows are split by
// stored entries, so matrices with dense rows put the splits in odd places.
#if defined(_OPENMP)
TEMPLATE_TEST_CASE("sparse products with Algorithm::own: the CPU's bits do not depend on the thread count",
                   "[sparse][determinism][cpu]", float, double) {
  using T = TestType;
  PORTA_RNG(rng);
  const Device cpu(porta::DeviceType::cpu);
  HostCsr<T, std::int32_t> h = random_csr<T, std::int32_t>(rng, {20000, 3000, 8});
  const auto a = upload(h, cpu);
  for (const std::int64_t k : {std::int64_t{1}, std::int64_t{5}}) {
    const auto hx = wide<T>(rng, h.cols * k);
    const auto hy = wide<T>(rng, h.rows * k);
    const auto x = Array<T>::from(hx, Shape{h.cols, k}, cpu);
    const auto want = own_ref(h, hx, k, T(1.25), T(-0.5), hy);
    porta_test::for_each_thread_count({1, 2, 3, 7, 16}, [&](int threads) {
      INFO(threads << " threads, k " << k);
      auto y = Array<T>::from(hy, Shape{h.rows, k}, cpu);
      ps::spmm(T(1.25), a, x, T(-0.5), y, ps::Options{ps::Algorithm::own});
      PORTA_CHECK_RESULT(compare_bits(y.to_vector(), want));
    });
  }
}
#endif

namespace {

// Coordinates with many repeats (half the entries repeat an earlier coordinate), in random order,
// values over 2^-20 .. 2^20 so that the sum of a repeated coordinate depends on its order.
template <class T, class I>
void coo_cases(Device dev, porta_test::Rng& rng) {
  struct Case {
    std::int64_t rows, cols, n;
  };
  const Case cases[] = {{0, 0, 0}, {3, 0, 0}, {0, 3, 0}, {4, 5, 0}, {1, 1, 6}, {20, 15, 60}, {200, 100, 3000}};
  for (const Case& cs : cases) {
    std::vector<I> row, col;
    for (std::int64_t e = 0; e < cs.n; ++e) {
      if (e > 0 && rng.coin()) {
        const auto at = static_cast<std::size_t>(rng.index(e));
        row.push_back(row[at]);
        col.push_back(col[at]);
      } else {
        row.push_back(static_cast<I>(rng.index(cs.rows)));
        col.push_back(static_cast<I>(rng.index(cs.cols)));
      }
    }
    std::vector<T> val = wide<T>(rng, cs.n, 20);
    // a NaN of another payload among repeats: their sum is the canonical NaN
    if (cs.n >= 6) {
      row.back() = row.front();
      col.back() = col.front();
      val.back() = porta_test::nan_patterns<T>()[3];
    }
    INFO(cs.rows << "x" << cs.cols << " from " << cs.n << " coordinates, " << sizeof(I) * 8 << "-bit indices, on "
                 << dev.to_string());

    // The reference: each (row, col)'s entries added up as they come in input order (a lone one as
    // given), then walked in (row, col) order.
    std::map<std::pair<std::int64_t, std::int64_t>, T> sums;
    for (std::size_t e = 0; e < val.size(); ++e) {
      const auto key = std::make_pair(static_cast<std::int64_t>(row[e]), static_cast<std::int64_t>(col[e]));
      const auto it = sums.find(key);
      if (it == sums.end()) {
        sums.emplace(key, val[e]);
      } else {
        const T s = porta::detail::add_rn(it->second, val[e]);
        it->second = std::isnan(s) ? std::numeric_limits<T>::quiet_NaN() : s;
      }
    }
    HostCsr<T, I> want;
    want.rows = cs.rows;
    want.cols = cs.cols;
    want.indptr.assign(static_cast<std::size_t>(cs.rows) + 1, I(0));
    for (const auto& [key, s] : sums) {
      want.indices.push_back(static_cast<I>(key.second));
      want.values.push_back(s);
      ++want.indptr[static_cast<std::size_t>(key.first) + 1];
    }
    for (std::size_t r = 0; r < static_cast<std::size_t>(cs.rows); ++r) want.indptr[r + 1] += want.indptr[r];

    const auto a = ps::Csr<T, I>::from_coo(cs.rows, cs.cols, row, col, val, dev);
    CHECK(a.rows() == cs.rows);
    CHECK(a.cols() == cs.cols);
    CHECK(a.nnz() == want.nnz());
    CHECK(a.device() == dev);
    PORTA_CHECK_RESULT(porta_test::compare_exact(a.indptr().to_vector(), want.indptr));
    PORTA_CHECK_RESULT(porta_test::compare_exact(a.indices().to_vector(), want.indices));
    PORTA_CHECK_RESULT(compare_bits(a.values().to_vector(), want.values));
    // and the matrix works as one: A x in the documented order of the merged entries
    const auto hx = wide<T>(rng, cs.cols);
    const auto y = ps::matmul(a, Array<T>::from(hx, dev), ps::Options{ps::Algorithm::own});
    PORTA_CHECK_RESULT(compare_bits(y.to_vector(), own_ref(want, hx, 1, T(1), T(0), {})));
  }
}

template <class T, class I>
void dense_and_transpose_cases(Device dev, porta_test::Rng& rng) {
  const Pattern patterns[] = {{0, 0, 3}, {0, 4, 3}, {4, 0, 3}, {1, 1, 1}, {5, 5, 0}, {9, 4, 3}, {4, 9, 3}, {70, 50, 8}};
  for (const Pattern& p : patterns) {
    const auto h = random_csr<T, I>(rng, p);
    const auto a = upload(h, dev);
    INFO(p.rows << "x" << p.cols << " with " << h.nnz() << " stored entries, " << sizeof(I) * 8 << "-bit indices, on "
                << dev.to_string());
    const std::vector<T> dense = host_dense(h);
    porta_test::poison_pool<T>(p.rows * p.cols, dev);
    const Array<T> d = a.to_dense();
    CHECK(d.shape() == Shape{p.rows, p.cols});
    CHECK(d.device() == dev);
    PORTA_CHECK_RESULT(compare_bits(d.to_vector(), dense));

    const HostCsr<T, I> ht = host_transpose(h);
    const auto t = a.transpose();
    CHECK(t.rows() == p.cols);
    CHECK(t.cols() == p.rows);
    CHECK(t.nnz() == h.nnz());
    CHECK(t.device() == dev);
    PORTA_CHECK_RESULT(porta_test::compare_exact(t.indptr().to_vector(), ht.indptr));
    PORTA_CHECK_RESULT(porta_test::compare_exact(t.indices().to_vector(), ht.indices));
    PORTA_CHECK_RESULT(compare_bits(t.values().to_vector(), ht.values));
    // (A^T)^T sorts each row by column, keeping repeats in storage order: the same dense matrix
    const auto tt = t.transpose();
    CHECK(tt.rows() == p.rows);
    CHECK(tt.cols() == p.cols);
    PORTA_CHECK_RESULT(compare_bits(tt.to_dense().to_vector(), dense));
    // A^T x against A^T x computed from A's own entries
    const auto hx = wide<T>(rng, p.rows);
    const auto x = Array<T>::from(hx, dev);
    std::vector<long double> ref(static_cast<std::size_t>(p.cols), 0.0L), sa(ref.size(), 0.0L), bound(ref.size());
    std::vector<std::int64_t> len(ref.size(), 0);
    for (std::int64_t r = 0; r < p.rows; ++r)
      for (std::int64_t j = h.begin(r); j < h.end(r); ++j) {
        const auto c = static_cast<std::size_t>(h.indices[static_cast<std::size_t>(j)]);
        const long double prod =
            static_cast<long double>(h.values[static_cast<std::size_t>(j)]) * hx[static_cast<std::size_t>(r)];
        ref[c] += prod;
        sa[c] += std::fabs(prod);
        ++len[c];
      }
    for (std::size_t c = 0; c < ref.size(); ++c)
      bound[c] = static_cast<long double>(len[c] + 3) * porta_test::eps<T>() * sa[c] + std::numeric_limits<T>::min();
    for (ps::Algorithm algo : {ps::Algorithm::vendor, ps::Algorithm::own}) {
      INFO("A^T x, " << algo_name(algo));
      porta_test::poison_pool<T>(p.cols, dev);
      const auto got = ps::matmul(t, x, ps::Options{algo}).to_vector();
      PORTA_CHECK_RESULT(porta_test::compare_bound(got, ref, bound));
      if (algo == ps::Algorithm::own) PORTA_CHECK_RESULT(compare_bits(got, own_ref(ht, hx, 1, T(1), T(0), {})));
    }
  }
}

}  // namespace

TEMPLATE_TEST_CASE("sparse from_coo: entries ordered by (row, col), repeats summed in input order", "[sparse][coo]",
                   float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  coo_cases<T, std::int32_t>(dev, rng);
  coo_cases<T, std::int64_t>(dev, rng);
}

TEMPLATE_TEST_CASE("sparse to_dense and transpose against the host", "[sparse]", float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  dense_and_transpose_cases<T, std::int32_t>(dev, rng);
  dense_and_transpose_cases<T, std::int64_t>(dev, rng);
}

TEST_CASE("sparse from_arrays shares arrays already on the device and validates them", "[sparse]") {
  const Device dev = PORTA_TEST_DEVICE();
  const std::vector<std::int32_t> indptr{0, 2, 2, 3}, indices{2, 0, 1};
  const std::vector<double> values{1.5, -2, 4};
  auto p = Array<std::int32_t>::from(indptr, dev);
  auto ix = Array<std::int32_t>::from(indices, dev);
  auto v = Array<double>::from(values, dev);
  const double* shared = v.data();
  const auto a = ps::Csr<double>::from_arrays(3, 3, std::move(p), std::move(ix), std::move(v));
  CHECK(a.values().data() == shared);
  CHECK(a.nnz() == 3);
  PORTA_CHECK_RESULT(
      porta_test::compare_exact(a.to_dense().to_vector(), std::vector<double>{-2, 0, 1.5, 0, 0, 0, 0, 4, 0}));
  // -2 * 1 + 1.5 * 3, then nothing, then 4 * 2
  PORTA_CHECK_RESULT(
      porta_test::compare_exact(ps::matmul(a, Array<double>::from(std::vector<double>{1, 2, 3}, dev)).to_vector(),
                                std::vector<double>{2.5, 0, 8}));

  const auto bad = Array<std::int32_t>::from(std::vector<std::int32_t>{0, 2, 1, 3}, dev);
  REQUIRE_THROWS_AS(ps::Csr<double>::from_arrays(3, 3, bad.clone(), Array<std::int32_t>::from(indices, dev),
                                                 Array<double>::from(values, dev)),
                    porta::InvalidArgument);
  REQUIRE_THROWS_WITH(
      ps::Csr<double>::from_arrays(3, 3, bad.clone(), Array<std::int32_t>::from(indices, dev),
                                   Array<double>::from(values, dev)),
      porta_test::Contains("porta::sparse::Csr::from_arrays") && porta_test::Contains("indptr decreases at row 1"));
  const auto flat = Array<std::int32_t>::from(indptr, Shape{2, 2}, dev);
  REQUIRE_THROWS_AS(ps::Csr<double>::from_arrays(3, 3, flat.clone(), Array<std::int32_t>::from(indices, dev),
                                                 Array<double>::from(values, dev)),
                    porta::InvalidArgument);
  REQUIRE_THROWS_WITH(ps::Csr<double>::from_arrays(3, 3, flat.clone(), Array<std::int32_t>::from(indices, dev),
                                                   Array<double>::from(values, dev)),
                      porta_test::Contains("must be 1-D"));
}

// Each structural error is an InvalidArgument whose message names the function and the first
// offending position.
#define REQUIRE_INVALID(expr, matcher)                       \
  do {                                                       \
    REQUIRE_THROWS_AS((void)(expr), porta::InvalidArgument); \
    REQUIRE_THROWS_WITH((void)(expr), matcher);              \
  } while (0)

TEMPLATE_TEST_CASE("sparse from_host and from_coo refuse malformed input, naming the position", "[sparse][errors]",
                   std::int32_t, std::int64_t) {
  using I = TestType;
  using Csr = ps::Csr<double, I>;
  using porta_test::Contains;
  const Device dev = PORTA_TEST_DEVICE();
  using VI = std::vector<I>;
  using VD = std::vector<double>;
  const VD four{1, 2, 3, 4};
  // the well-formed 3x4 matrix the cases below break one thing of
  CHECK(Csr::from_host(3, 4, VI{0, 2, 2, 4}, VI{0, 3, 1, 1}, four, dev).nnz() == 4);
  const auto host = Contains("porta::sparse::Csr::from_host");

  REQUIRE_INVALID(Csr::from_host(3, 4, VI{0, 2, 4}, VI{0, 3, 1, 1}, four, dev),
                  host && Contains("indptr has 3 offsets") && Contains("rows + 1 = 4"));
  REQUIRE_INVALID(Csr::from_host(3, 4, VI{0, 2, 2, 4, 4}, VI{0, 3, 1, 1}, four, dev),
                  host && Contains("indptr has 5 offsets"));
  REQUIRE_INVALID(Csr::from_host(3, 4, VI{0, 2, 2, 4}, VI{0, 3, 1, 1}, VD{1, 2, 3}, dev),
                  host && Contains("indices has 4 entries and values 3"));
  REQUIRE_INVALID(Csr::from_host(3, 4, VI{1, 2, 2, 4}, VI{0, 3, 1, 1}, four, dev), host && Contains("indptr[0] is 1"));
  REQUIRE_INVALID(
      Csr::from_host(3, 4, VI{0, 3, 2, 4}, VI{0, 3, 1, 1}, four, dev),
      host && Contains("indptr decreases at row 1") && Contains("indptr[1] = 3") && Contains("indptr[2] = 2"));
  REQUIRE_INVALID(Csr::from_host(3, 4, VI{0, 2, 2, 3}, VI{0, 3, 1, 1}, four, dev),
                  host && Contains("indptr ends at 3") && Contains("4 stored entries"));
  REQUIRE_INVALID(Csr::from_host(3, 4, VI{0, 2, 2, 5}, VI{0, 3, 1, 1}, four, dev),
                  host && Contains("indptr ends at 5"));
  REQUIRE_INVALID(Csr::from_host(3, 4, VI{0, 2, 2, 4}, VI{0, 3, 4, 1}, four, dev),
                  host && Contains("indices[2] = 4") && Contains("4 columns"));
  REQUIRE_INVALID(Csr::from_host(3, 4, VI{0, 2, 2, 4}, VI{0, -1, 1, 1}, four, dev),
                  host && Contains("indices[1] = -1"));
  REQUIRE_INVALID(Csr::from_host(-1, 4, VI{0}, VI{}, VD{}, dev), host && Contains("negative shape -1x4"));
  REQUIRE_INVALID(Csr::from_host(0, 0, VI{}, VI{}, VD{}, dev), host && Contains("indptr has 0 offsets"));
  if (std::is_same_v<I, std::int32_t>)
    REQUIRE_INVALID(Csr::from_host(std::int64_t{1} << 31, 4, VI{0}, VI{}, VD{}, dev),
                    host && Contains("32-bit indices") && Contains("std::int64_t"));

  const auto coo = Contains("porta::sparse::Csr::from_coo");
  CHECK(Csr::from_coo(3, 4, VI{0, 2, 1}, VI{3, 0, 1}, VD{1, 2, 3}, dev).nnz() == 3);
  REQUIRE_INVALID(Csr::from_coo(3, 4, VI{0, 2, 1}, VI{3, 0}, VD{1, 2, 3}, dev),
                  coo && Contains("row, col and values have 3, 2 and 3 entries"));
  REQUIRE_INVALID(Csr::from_coo(3, 4, VI{0, 2, 1}, VI{3, 0, 1}, VD{1, 2}, dev), coo && Contains("3, 3 and 2 entries"));
  REQUIRE_INVALID(Csr::from_coo(3, 4, VI{0, 3, 1}, VI{3, 0, 1}, VD{1, 2, 3}, dev),
                  coo && Contains("entry 1 at (3, 0) is outside the 3x4 matrix"));
  REQUIRE_INVALID(Csr::from_coo(3, 4, VI{0, 2, 1}, VI{3, 0, 4}, VD{1, 2, 3}, dev),
                  coo && Contains("entry 2 at (1, 4)"));
  REQUIRE_INVALID(Csr::from_coo(3, 4, VI{-1, 2, 1}, VI{3, 0, 1}, VD{1, 2, 3}, dev),
                  coo && Contains("entry 0 at (-1, 3)"));
  REQUIRE_INVALID(Csr::from_coo(2, -3, VI{}, VI{}, VD{}, dev), coo && Contains("negative shape 2x-3"));
}

TEST_CASE("sparse products refuse operands of the wrong shape", "[sparse][errors]") {
  using porta_test::Contains;
  const Device dev = PORTA_TEST_DEVICE();
  // 3x4, and a square 4x4
  const auto a = ps::Csr<double>::from_host(3, 4, {0, 2, 2, 4}, {0, 3, 1, 1}, {1, 2, 3, 4}, dev);
  const auto sq = ps::Csr<double>::from_host(4, 4, {0, 1, 2, 3, 4}, {0, 1, 2, 3}, {1, 2, 3, 4}, dev);
  const auto mm = Contains("porta::sparse::matmul");
  const auto sp = Contains("porta::sparse::spmm");

  REQUIRE_INVALID(ps::matmul(a, porta::zeros<double>({5}, dev)), mm && Contains("A is 3x4") && Contains("x is 5"));
  REQUIRE_INVALID(ps::matmul(a, porta::zeros<double>({3}, dev)), mm && Contains("x is 3"));
  REQUIRE_INVALID(ps::matmul(a, porta::zeros<double>({0}, dev)), mm && Contains("x is 0"));
  REQUIRE_INVALID(ps::matmul(a, porta::zeros<double>({5, 2}, dev)), mm && Contains("x is 5x2"));
  REQUIRE_INVALID(ps::matmul(a, porta::zeros<double>({4, 2, 2}, dev)), mm && Contains("x is 4x2x2"));
  REQUIRE_INVALID(ps::matmul(ps::Csr<double>(), porta::zeros<double>({4}, dev)), mm && Contains("moved from"));

  const auto x = porta::ones<double>({4}, dev);
  const auto X = porta::ones<double>({4, 2}, dev);
  auto y4 = porta::zeros<double>({4}, dev);
  REQUIRE_INVALID(ps::spmm(1.0, a, x, 0.0, y4), sp && Contains("Y is 4, expected 3"));
  auto y32 = porta::zeros<double>({3, 2}, dev);
  REQUIRE_INVALID(ps::spmm(1.0, a, x, 0.0, y32), sp && Contains("Y is 3x2, expected 3"));
  auto y33 = porta::zeros<double>({3, 3}, dev);
  REQUIRE_INVALID(ps::spmm(1.0, a, X, 0.0, y33), sp && Contains("Y is 3x3, expected 3x2"));
  auto y3 = porta::zeros<double>({3}, dev);
  REQUIRE_INVALID(ps::spmm(1.0, a, X, 0.0, y3), sp && Contains("Y is 3, expected 3x2"));
  REQUIRE_INVALID(ps::spmm(1.0, a, porta::ones<double>({3}, dev), 0.0, y3), sp && Contains("X is 3"));
  // Y the same array as X
  auto v = porta::ones<double>({4}, dev);
  REQUIRE_INVALID(ps::spmm(1.0, sq, v, 0.0, v), sp && Contains("must not be X"));
  auto V = porta::ones<double>({4, 3}, dev);
  REQUIRE_INVALID(ps::spmm(2.0, sq, V, 1.0, V), sp && Contains("must not be X"));
  // nothing was written by the refused calls
  PORTA_CHECK_RESULT(porta_test::compare_exact(v.to_vector(), std::vector<double>(4, 1.0)));
  PORTA_CHECK_RESULT(porta_test::compare_exact(y3.to_vector(), std::vector<double>(3, 0.0)));

  if (const auto other = porta_test::other_device(dev)) {
    CHECK_THROWS_AS(ps::matmul(a, porta::ones<double>({4}, *other)), porta::DeviceMismatch);
    auto y_other = porta::zeros<double>({3}, *other);
    CHECK_THROWS_AS(ps::spmm(1.0, a, x, 0.0, y_other), porta::Error);
  }
}
