// SPDX-License-Identifier: Apache-2.0
// Comparisons into masks, where, count_nonzero, take, scatter (duplicates: the last wins) and
// matrix-vector products, on every device and dtype, against host references.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::Shape;
using Mask = Array<std::int32_t>;
using Index = Array<std::int64_t>;

#define PORTA_TEST_TYPES float, double, std::int32_t, std::int64_t

namespace {

bool mentions(const std::string& what, const char* part) {
  return what.find(part) != std::string::npos;
}

// Values with repeats (so == is sometimes true) and, for floating point, NaN, -0.0 and 0.0.
template <class T>
std::vector<T> with_specials(porta_test::Rng& rng, std::int64_t n) {
  auto v = std::is_floating_point_v<T> ? porta_test::uniform<T>(rng, n, T(-3), T(3))
                                       : porta_test::uniform<T>(rng, n, T(-3), T(3));
  if constexpr (std::is_floating_point_v<T>) {
    for (auto& x : v) x = std::round(x);  // repeats
    if (n > 3) {
      v[0] = std::numeric_limits<T>::quiet_NaN();
      v[1] = T(-0.0);
      v[2] = T(0.0);
    }
  }
  return v;
}

template <class T>
struct CompareCase {
  const char* name;
  std::function<Mask(const Array<T>&, const Array<T>&)> aa;
  std::function<Mask(const Array<T>&, T)> as;
  std::function<bool(T, T)> ref;
};

template <class T>
std::vector<CompareCase<T>> compare_cases() {
  return {
      {"equal", [](auto& a, auto& b) { return porta::equal(a, b); }, [](auto& a, T b) { return porta::equal(a, b); },
       [](T a, T b) { return a == b; }},
      {"not_equal", [](auto& a, auto& b) { return porta::not_equal(a, b); },
       [](auto& a, T b) { return porta::not_equal(a, b); }, [](T a, T b) { return a != b; }},
      {"less", [](auto& a, auto& b) { return porta::less(a, b); }, [](auto& a, T b) { return porta::less(a, b); },
       [](T a, T b) { return a < b; }},
      {"less_equal", [](auto& a, auto& b) { return porta::less_equal(a, b); },
       [](auto& a, T b) { return porta::less_equal(a, b); }, [](T a, T b) { return a <= b; }},
      {"greater", [](auto& a, auto& b) { return porta::greater(a, b); },
       [](auto& a, T b) { return porta::greater(a, b); }, [](T a, T b) { return a > b; }},
      {"greater_equal", [](auto& a, auto& b) { return porta::greater_equal(a, b); },
       [](auto& a, T b) { return porta::greater_equal(a, b); }, [](T a, T b) { return a >= b; }},
  };
}

}  // namespace

TEMPLATE_TEST_CASE("comparisons give int32 masks with IEEE semantics", "[indexing][compare]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : {0, 1, 5, 1000, 100003}) {
    INFO("n = " << n);
    const auto ha = with_specials<T>(rng, n), hb = with_specials<T>(rng, n);
    const auto a = Array<T>::from(ha, dev), b = Array<T>::from(hb, dev);
    for (const auto& c : compare_cases<T>()) {
      INFO(c.name);
      std::vector<std::int32_t> ref(ha.size()), ref_s(ha.size()), ref_same(ha.size());
      for (std::size_t i = 0; i < ha.size(); ++i) {
        ref[i] = c.ref(ha[i], hb[i]) ? 1 : 0;
        ref_s[i] = c.ref(ha[i], T(0)) ? 1 : 0;
        ref_same[i] = c.ref(ha[i], ha[i]) ? 1 : 0;
      }
      porta_test::poison_pool<std::int32_t>(n, dev);
      PORTA_CHECK_RESULT(porta_test::compare_exact(c.aa(a, b).to_vector(), ref));
      PORTA_CHECK_RESULT(porta_test::compare_exact(c.as(a, T(0)).to_vector(), ref_s));
      PORTA_CHECK_RESULT(porta_test::compare_exact(c.aa(a, a).to_vector(), ref_same));  // NaN != NaN
    }
  }
  // Broadcasting and views, as for the binary maps; scalars of other arithmetic types.
  const std::int64_t r = 6, cols = 7;
  const auto hm = with_specials<T>(rng, r * cols), hv = with_specials<T>(rng, cols);
  const auto m = Array<T>::from(hm, Shape{r, cols}, dev), v = Array<T>::from(hv, dev);
  std::vector<std::int32_t> ref(hm.size()), ref_col(static_cast<std::size_t>(r)), ref_int(hm.size());
  for (std::int64_t i = 0; i < r; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) {
      ref[static_cast<std::size_t>(i * cols + j)] = hm[static_cast<std::size_t>(i * cols + j)] < hv[j] ? 1 : 0;
      ref_int[static_cast<std::size_t>(i * cols + j)] = hm[static_cast<std::size_t>(i * cols + j)] >= T(1) ? 1 : 0;
    }
    ref_col[static_cast<std::size_t>(i)] =
        hm[static_cast<std::size_t>(i * cols + 2)] > hm[static_cast<std::size_t>(i * cols + 5)] ? 1 : 0;
  }
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::less(m, v).to_vector(), ref));
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::greater(m.col(2), m.col(5)).to_vector(), ref_col));
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::greater_equal(m, 1).to_vector(), ref_int));
  CHECK_THROWS_AS(porta::less(m, Array<T>::from(hv, dev).reshaped({1, 1, cols})), porta::InvalidArgument);
}

TEMPLATE_TEST_CASE("where selects per element; count_nonzero counts", "[indexing][where]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : {0, 1, 17, 100003}) {
    INFO("n = " << n);
    // Any non-zero mask value is true, not only 1.
    const auto hm = porta_test::uniform<std::int32_t>(rng, n, -2, 2);
    const auto ha = porta_test::nonzero<T>(rng, n), hb = porta_test::nonzero<T>(rng, n);
    const auto mask = Mask::from(hm, dev);
    const auto a = Array<T>::from(ha, dev), b = Array<T>::from(hb, dev);
    std::vector<T> r_ab(ha.size()), r_as(ha.size()), r_sb(ha.size());
    std::int64_t nz = 0;
    for (std::size_t i = 0; i < ha.size(); ++i) {
      r_ab[i] = hm[i] != 0 ? ha[i] : hb[i];
      r_as[i] = hm[i] != 0 ? ha[i] : T(7);
      r_sb[i] = hm[i] != 0 ? T(-4) : hb[i];
      nz += hm[i] != 0;
    }
    porta_test::poison_pool<T>(n, dev);
    PORTA_CHECK_RESULT(porta_test::compare_exact(porta::where(mask, a, b).to_vector(), r_ab));
    PORTA_CHECK_RESULT(porta_test::compare_exact(porta::where(mask, a, 7).to_vector(), r_as));
    PORTA_CHECK_RESULT(porta_test::compare_exact(porta::where(mask, -4, b).to_vector(), r_sb));
    CHECK(porta::count_nonzero(mask) == nz);
    CHECK(porta::count_nonzero(a) == n);  // nonzero<T> never gives 0
  }
  if constexpr (std::is_floating_point_v<T>) {  // NaN counts, -0.0 does not (NumPy)
    const auto x = Array<T>::from({T(0), T(-0.0), std::numeric_limits<T>::quiet_NaN(), T(1e-30)}, dev);
    CHECK(porta::count_nonzero(x) == 2);
  }
  // relu from a mask, on a strided view.
  const auto hx = porta_test::nonzero<T>(rng, 40);
  const auto x = Array<T>::from(hx, Shape{8, 5}, dev);
  const auto xv = x.col(3);
  std::vector<T> relu;
  for (std::int64_t i = 0; i < 8; ++i) relu.push_back(std::max(hx[static_cast<std::size_t>(i * 5 + 3)], T(0)));
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::where(porta::greater(xv, 0), xv, 0).to_vector(), relu));
  CHECK_THROWS_AS(porta::where(Mask::from({1, 0}, dev), x, x), porta::InvalidArgument);
}

TEMPLATE_TEST_CASE("take gathers along an axis; bad indices are typed errors", "[indexing][take]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t d0 = 7, d1 = 9, d2 = 3;
  const auto h = porta_test::nonzero<T>(rng, d0 * d1 * d2);
  const auto x = Array<T>::from(h, Shape{d0, d1, d2}, dev);
  const auto at = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
    return h[static_cast<std::size_t>((i * d1 + j) * d2 + k)];
  };
  for (std::int64_t m : {0, 1, 5, 2000}) {
    INFO("m = " << m);
    const auto hi = porta_test::uniform<std::int64_t>(rng, m, 0, d1 - 1);  // with repeats
    const auto idx = Index::from(hi, dev);
    porta_test::poison_pool<T>(d0 * m * d2, dev);
    const auto got = porta::take(x, idx, 1);
    CHECK(got.shape() == Shape{d0, m, d2});
    std::vector<T> ref;
    for (std::int64_t i = 0; i < d0; ++i)
      for (std::int64_t j = 0; j < m; ++j)
        for (std::int64_t k = 0; k < d2; ++k) ref.push_back(at(i, hi[static_cast<std::size_t>(j)], k));
    PORTA_CHECK_RESULT(porta_test::compare_exact(got.to_vector(), ref));
  }
  // A 2-D index array along the last axis (negative axis), and a 1-D take.
  const auto hi2 = std::vector<std::int64_t>{2, 0, 1, 1};
  const auto got2 = porta::take(x, Index::from(hi2, Shape{2, 2}, dev), -1);
  CHECK(got2.shape() == Shape{d0, d1, 2, 2});
  std::vector<T> ref2;
  for (std::int64_t i = 0; i < d0; ++i)
    for (std::int64_t j = 0; j < d1; ++j)
      for (std::int64_t k : hi2) ref2.push_back(at(i, j, k));
  PORTA_CHECK_RESULT(porta_test::compare_exact(got2.to_vector(), ref2));
  const auto flat = x.reshaped({d0 * d1 * d2});
  const auto one = porta::take(flat, Index::from({5, 0, 188}, dev));
  PORTA_CHECK_RESULT(porta_test::compare_exact(one.to_vector(), std::vector<T>{h[5], h[0], h[188]}));
  // From a strided view (rows 0, 2, 4, 6).
  const auto v = x.slice({{porta::none, porta::none, 2}});
  const auto gv = porta::take(v, Index::from({8, 1}, dev), 1);
  std::vector<T> refv;
  for (std::int64_t i = 0; i < d0; i += 2)
    for (std::int64_t j : {8, 1})
      for (std::int64_t k = 0; k < d2; ++k) refv.push_back(at(i, j, k));
  PORTA_CHECK_RESULT(porta_test::compare_exact(gv.to_vector(), refv));
  // Out of range: before anything runs, naming the index and the axis.
  try {
    (void)porta::take(x, Index::from({0, 9}, dev), 1);
    FAIL("no exception");
  } catch (const porta::InvalidArgument& e) {
    CHECK(mentions(e.what(), "porta::take"));
    CHECK(mentions(e.what(), "index 9 is out of range for axis 1 of size 9"));
  }
  CHECK_THROWS_AS(porta::take(x, Index::from({-1}, dev), 0), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::take(x, Index::from({0}, dev), 3), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::take(x, Index::from({0, 1, 0, 1}, Shape{1, 2, 2}, dev), 0), porta::InvalidArgument);
}

TEMPLATE_TEST_CASE("scatter writes in place; for repeated indices the last occurrence wins", "[indexing][scatter]",
                   PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : {1, 10, 1000}) {
    for (std::int64_t m : {0, 1, 7, 5000}) {
      INFO("n = " << n << ", m = " << m);
      const std::int64_t rows = 3, inner = 4;
      const auto h = porta_test::nonzero<T>(rng, rows * n * inner);
      const auto hi = porta_test::uniform<std::int64_t>(rng, m, 0, n - 1);  // many repeats when m > n
      const auto hv = porta_test::nonzero<T>(rng, rows * m * inner);
      auto x = Array<T>::from(h, Shape{rows, n, inner}, dev);
      porta::scatter(x, Index::from(hi, dev), Array<T>::from(hv, Shape{rows, m, inner}, dev), 1);
      std::vector<T> ref(h);
      for (std::int64_t j = 0; j < m; ++j)  // in index order: later writes replace earlier ones
        for (std::int64_t o = 0; o < rows; ++o)
          for (std::int64_t c = 0; c < inner; ++c)
            ref[static_cast<std::size_t>((o * n + hi[static_cast<std::size_t>(j)]) * inner + c)] =
                hv[static_cast<std::size_t>((o * m + j) * inner + c)];
      PORTA_CHECK_RESULT(porta_test::compare_exact(x.to_vector(), ref));
    }
  }
  // All duplicates of one position: the last value, on every backend and run.
  auto y = porta::zeros<T>({4}, dev);
  for (int run = 0; run < 3; ++run) {
    std::vector<T> vals(3000);
    for (std::size_t i = 0; i < vals.size(); ++i) vals[i] = T(static_cast<int>(i % 100) + 1);
    porta::scatter(y, Index::from(std::vector<std::int64_t>(3000, 2), dev), Array<T>::from(vals, dev));
    PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), std::vector<T>{T(0), T(0), vals.back(), T(0)}));
  }
  // Into a strided view: only the viewed elements change.
  auto z = porta::zeros<T>({4, 6}, dev);
  auto zc = z.col(2);
  porta::scatter(zc, Index::from({3, 0, 3}, dev), Array<T>::from({T(1), T(2), T(3)}, dev));
  std::vector<T> zr(24, T(0));
  zr[3 * 6 + 2] = T(3);
  zr[0 * 6 + 2] = T(2);
  PORTA_CHECK_RESULT(porta_test::compare_exact(z.to_vector(), zr));
  // Bad input: nothing is written.
  auto w = porta::full<T>({5}, T(1), dev);
  try {
    porta::scatter(w, Index::from({0, 5}, dev), Array<T>::from({T(2), T(3)}, dev));
    FAIL("no exception");
  } catch (const porta::InvalidArgument& e) {
    CHECK(mentions(e.what(), "porta::scatter"));
    CHECK(mentions(e.what(), "index 5 is out of range for axis 0 of size 5"));
  }
  CHECK_THROWS_AS(porta::scatter(w, Index::from({0}, dev), Array<T>::from({T(2), T(3)}, dev)), porta::InvalidArgument);
  PORTA_CHECK_RESULT(porta_test::compare_exact(w.to_vector(), std::vector<T>(5, T(1))));
}

TEMPLATE_TEST_CASE("matmul of a matrix and a vector, and of a vector and a matrix", "[indexing][gemv][matmul]",
                   PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  struct Dims {
    std::int64_t m, k;
  };
  for (const Dims d : {Dims{0, 3}, Dims{3, 0}, Dims{1, 1}, Dims{17, 33}, Dims{300, 129}, Dims{2, 4000}}) {
    INFO("m = " << d.m << ", k = " << d.k);
    const auto ha = porta_test::nonzero<T>(rng, d.m * d.k), hx = porta_test::nonzero<T>(rng, d.k),
               hy = porta_test::nonzero<T>(rng, d.m);
    const auto a = Array<T>::from(ha, Shape{d.m, d.k}, dev);
    const auto x = Array<T>::from(hx, dev), y = Array<T>::from(hy, dev);
    // A x (m) and y A (k), in long double with the gemm bound (k + 3) eps sum |a x|.
    std::vector<long double> ax(static_cast<std::size_t>(d.m)), ax_b(ax.size()), ya(static_cast<std::size_t>(d.k)),
        ya_b(ya.size());
    for (std::int64_t i = 0; i < d.m; ++i)
      for (std::int64_t p = 0; p < d.k; ++p) {
        const long double t = static_cast<long double>(ha[static_cast<std::size_t>(i * d.k + p)]) * hx[p];
        const long double u = static_cast<long double>(ha[static_cast<std::size_t>(i * d.k + p)]) * hy[i];
        ax[i] += t;
        ax_b[i] += std::fabs(t);
        ya[p] += u;
        ya_b[p] += std::fabs(u);
      }
    const auto check = [&](const Array<T>& got, const std::vector<long double>& ref, std::vector<long double> bound,
                           std::int64_t k) {
      CHECK(got.rank() == 1);
      if constexpr (std::is_floating_point_v<T>) {
        for (auto& b : bound) b = b * static_cast<long double>(k + 3) * porta_test::eps<T>();
        return porta_test::compare_bound(got.to_vector(), ref, bound);
      } else {
        std::vector<T> r(ref.size());
        for (std::size_t i = 0; i < ref.size(); ++i) r[i] = static_cast<T>(ref[i]);
        return porta_test::compare_exact(got.to_vector(), r);
      }
    };
    porta_test::poison_pool<T>(std::max(d.m, d.k), dev);
    PORTA_CHECK_RESULT(check(porta::matmul(a, x), ax, ax_b, d.k));
    PORTA_CHECK_RESULT(check(porta::matmul(y, a), ya, ya_b, d.m));
    // The same through views: a transposed-layout matrix (a column block of a wider array read
    // through its transpose is exercised by the slices) and a strided vector.
    if (d.m > 0 && d.k > 0) {
      auto wide = porta::zeros<T>({d.m, d.k + 3}, dev);
      wide.slice({{}, {1, d.k + 1}}).assign(a);
      auto xs = porta::zeros<T>({d.k, 2}, dev);
      xs.col(1).assign(x);
      PORTA_CHECK_RESULT(check(porta::matmul(wide.slice({{}, {1, d.k + 1}}), xs.col(1)), ax, ax_b, d.k));
      auto ys = porta::zeros<T>({d.m, 3}, dev);
      ys.col(0).assign(y);
      PORTA_CHECK_RESULT(check(porta::matmul(ys.col(0), wide.slice({{}, {1, d.k + 1}})), ya, ya_b, d.m));
    }
  }
  const auto v = porta::ones<T>({3}, dev);
  try {
    (void)porta::matmul(v, v);
    FAIL("no exception");
  } catch (const porta::InvalidArgument& e) {
    CHECK(mentions(e.what(), "porta::dot"));
  }
  CHECK_THROWS_AS(porta::matmul(porta::ones<T>({2, 4}, dev), v), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::matmul(v, porta::ones<T>({4, 2}, dev)), porta::InvalidArgument);
}
