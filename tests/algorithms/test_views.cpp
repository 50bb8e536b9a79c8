// SPDX-License-Identifier: Apache-2.0
// Views (slices, rows, columns, select, reshaped, contiguous), element access, printing, scalars
// of any arithmetic type and compound assignment, on every device and dtype, against host
// references that walk the indices their own way (Python's slice loop, not porta's formula).
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::none;
using porta::Shape;
using porta::Slice;

#define PORTA_TEST_TYPES float, double, std::int32_t, std::int64_t

namespace {

// The indices a Python slice picks on an axis of n, by stepping (CPython's loop), independent of
// porta's closed-form length.
std::vector<std::int64_t> py_indices(std::int64_t n, Slice s) {
  std::vector<std::int64_t> out;
  if (s.step > 0) {
    std::int64_t lo =
        s.start == none ? 0 : (s.start < 0 ? std::max<std::int64_t>(s.start + n, 0) : std::min(s.start, n));
    std::int64_t hi = s.stop == none ? n : (s.stop < 0 ? std::max<std::int64_t>(s.stop + n, 0) : std::min(s.stop, n));
    for (std::int64_t i = lo; i < hi; i += s.step) out.push_back(i);
  } else {
    std::int64_t hi =
        s.start == none ? n - 1 : (s.start < 0 ? std::max<std::int64_t>(s.start + n, -1) : std::min(s.start, n - 1));
    std::int64_t lo =
        s.stop == none ? -1 : (s.stop < 0 ? std::max<std::int64_t>(s.stop + n, -1) : std::min(s.stop, n - 1));
    for (std::int64_t i = hi; i > lo; i += s.step) out.push_back(i);
  }
  return out;
}

// Host reference of a 3-D slice: the elements of h (row-major d0 x d1 x d2) at the picked indices.
template <class T>
std::vector<T> slice_ref(const std::vector<T>& h, const std::int64_t* d, const std::vector<std::int64_t>* pick) {
  std::vector<T> out;
  for (std::int64_t i : pick[0])
    for (std::int64_t j : pick[1])
      for (std::int64_t k : pick[2]) out.push_back(h[static_cast<std::size_t>((i * d[1] + j) * d[2] + k)]);
  return out;
}

template <class T>
std::vector<T> random_values(porta_test::Rng& rng, std::int64_t n) {
  return porta_test::nonzero<T>(rng, n);
}

bool mentions(const std::string& what, const char* part) {
  return what.find(part) != std::string::npos;
}

}  // namespace

TEMPLATE_TEST_CASE("slices with start, stop and step pick NumPy's elements", "[views][slice]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t d[3] = {5, 6, 7};
  const auto h = random_values<T>(rng, d[0] * d[1] * d[2]);
  const auto x = Array<T>::from(h, Shape{d[0], d[1], d[2]}, dev);
  const std::vector<std::vector<Slice>> cases = {
      {},
      {{1, 3}},
      {{}, {none, none, 2}},
      {{none, none, -1}, {}, {1, -1, 3}},
      {{-2, none}, {5, 0, -2}, {none, none, -3}},
      {{10, 20}},                     // past the end: empty, as in NumPy
      {{-100, 100}, {-100, 100, 4}},  // clamped
      {{4, 1}},                       // start after stop with a positive step: empty
      {{2, 3}, {3, 4}, {6, 7}},       // one element
      {{}, {}, {none, none, -1}},
  };
  for (const auto& c : cases) {
    std::vector<std::int64_t> pick[3];
    for (int a = 0; a < 3; ++a) pick[a] = py_indices(d[a], a < static_cast<int>(c.size()) ? c[a] : Slice{});
    Array<T> v;
    switch (c.size()) {
      case 0:
        v = x.slice({});
        break;
      case 1:
        v = x.slice({c[0]});
        break;
      case 2:
        v = x.slice({c[0], c[1]});
        break;
      default:
        v = x.slice({c[0], c[1], c[2]});
        break;
    }
    INFO("case with " << c.size() << " slices, shape " << v.shape().to_string());
    REQUIRE(v.rank() == 3);
    for (int a = 0; a < 3; ++a) CHECK(v.dim(a) == static_cast<std::int64_t>(pick[a].size()));
    CHECK(v.borrowed());
    PORTA_CHECK_RESULT(porta_test::compare_exact(v.to_vector(), slice_ref(h, d, pick)));
    PORTA_CHECK_RESULT(porta_test::compare_exact(v.contiguous().to_vector(), slice_ref(h, d, pick)));
  }
  // The one-axis form is the same view.
  std::vector<std::int64_t> pick[3] = {py_indices(5, {}), py_indices(6, {5, none, -2}), py_indices(7, {})};
  PORTA_CHECK_RESULT(porta_test::compare_exact(x.slice(1, 5, none, -2).to_vector(), slice_ref(h, d, pick)));
  PORTA_CHECK_RESULT(porta_test::compare_exact(x.slice(-2, 5, none, -2).to_vector(), slice_ref(h, d, pick)));
  // Contiguity: a block of leading rows is contiguous, a column block is not.
  CHECK(x.slice({{1, 3}}).is_contiguous());
  CHECK_FALSE(x.slice({{}, {1, 3}}).is_contiguous());
  CHECK(x.slice({{2, 3}, {3, 4}}).is_contiguous());
}

TEMPLATE_TEST_CASE("row, col, select and reshaped are views of the same memory", "[views]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t r = 4, c = 5;
  auto h = random_values<T>(rng, r * c);
  auto m = Array<T>::from(h, Shape{r, c}, dev);
  for (std::int64_t i = -r; i < r; ++i) {
    const std::int64_t ii = i < 0 ? i + r : i;
    std::vector<T> row(h.begin() + ii * c, h.begin() + (ii + 1) * c);
    PORTA_CHECK_RESULT(porta_test::compare_exact(m.row(i).to_vector(), row));
    PORTA_CHECK_RESULT(porta_test::compare_exact(m.select(0, i).to_vector(), row));
  }
  for (std::int64_t j = 0; j < c; ++j) {
    std::vector<T> col;
    for (std::int64_t i = 0; i < r; ++i) col.push_back(h[static_cast<std::size_t>(i * c + j)]);
    const auto v = m.col(j);
    CHECK(v.shape() == Shape{r});
    CHECK(v.stride(0) == c);
    CHECK_FALSE(v.is_contiguous());
    PORTA_CHECK_RESULT(porta_test::compare_exact(v.to_vector(), col));
  }
  // select of a 1-D array gives a rank-0 array.
  const auto e = m.row(2).select(0, 3);
  CHECK(e.rank() == 0);
  CHECK(e.item() == h[2 * c + 3]);
  // Writes through views reach the original.
  const T v1 = porta_test::nonzero<T>(rng, 1).front();
  m.col(1).set(2, v1);
  h[2 * c + 1] = v1;
  porta::fill(m.row(3), T(7));
  for (std::int64_t j = 0; j < c; ++j) h[static_cast<std::size_t>(3 * c + j)] = T(7);
  auto flat = m.reshaped({r * c});
  CHECK(flat.borrowed());
  PORTA_CHECK_RESULT(porta_test::compare_exact(flat.to_vector(), h));
  flat.set(0, T(3));
  CHECK(m.item(0, 0) == T(3));
  // Reshaping a strided view without a copy is refused; contiguous() copies first.
  const auto strided = m.col(0);
  CHECK_THROWS_AS(strided.reshaped({2, 2}), porta::InvalidArgument);
  CHECK(strided.contiguous().reshaped({2, 2}).shape() == Shape{2, 2});
  CHECK_THROWS_AS(m.reshaped({3, 3}), porta::InvalidArgument);
  CHECK_THROWS_AS(m.col(5), porta::InvalidArgument);
  CHECK_THROWS_AS(m.row(-5), porta::InvalidArgument);
  CHECK_THROWS_AS(flat.col(0), porta::InvalidArgument);
  CHECK_THROWS_AS(m.slice(2, 0, 1), porta::InvalidArgument);
  CHECK_THROWS_AS(m.slice(0, 0, 1, 0), porta::InvalidArgument);
  CHECK_THROWS_AS(m.slice({{}, {}, {}}), porta::InvalidArgument);
}

TEMPLATE_TEST_CASE("a view keeps its memory alive after the array is gone", "[views][lifetime]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const auto h = random_values<T>(rng, 1000);
  Array<T> tail;
  {
    auto x = Array<T>::from(h, dev);
    tail = x.slice({{500, none}});
  }                                       // x is destroyed here; tail still holds the memory
  porta_test::poison_pool<T>(1000, dev);  // a reused block would show as poison
  PORTA_CHECK_RESULT(porta_test::compare_exact(tail.to_vector(), std::vector<T>(h.begin() + 500, h.end())));
  auto moved = std::move(tail);
  CHECK_FALSE(tail.valid());
  CHECK(moved.size() == 500);
  CHECK(moved.item(-1) == h.back());
}

TEMPLATE_TEST_CASE("contiguous() copies a strided view and shares a contiguous array", "[views][contiguous]",
                   PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const auto h = random_values<T>(rng, 3 * 4 * 5 * 6);
  auto x = Array<T>::from(h, Shape{3, 4, 5, 6}, dev);
  auto v = x.slice({{none, none, 2}, {1, 3}, {none, none, -1}, {0, 6, 5}});
  std::vector<T> ref;
  for (std::int64_t a : {0, 2})
    for (std::int64_t b : {1, 2})
      for (std::int64_t c : {4, 3, 2, 1, 0})
        for (std::int64_t d : {0, 5}) ref.push_back(h[static_cast<std::size_t>(((a * 4 + b) * 5 + c) * 6 + d)]);
  auto cpy = v.contiguous();
  CHECK(cpy.is_contiguous());
  CHECK_FALSE(cpy.borrowed());
  PORTA_CHECK_RESULT(porta_test::compare_exact(cpy.to_vector(), ref));
  // The copy is independent of x; a contiguous array's contiguous() is x itself.
  porta::fill(x, T(1));
  PORTA_CHECK_RESULT(porta_test::compare_exact(cpy.to_vector(), ref));
  auto same = x.contiguous();
  same.set(0, 0, 0, 0, T(9));
  CHECK(x.item(0, 0, 0, 0) == T(9));
  // clone() and to() of a view are compact copies.
  const auto cl = x.slice({{}, {}, {}, {none, none, 3}}).clone();
  CHECK(cl.is_contiguous());
  CHECK(cl.shape() == Shape{3, 4, 5, 2});
}

TEMPLATE_TEST_CASE("item and set read and write one element", "[views][item]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const auto h = random_values<T>(rng, 2 * 3 * 4);
  auto x = Array<T>::from(h, Shape{2, 3, 4}, dev);
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < 3; ++j)
      for (std::int64_t k = 0; k < 4; ++k) CHECK(porta_test::same_bits(x.item(i, j, k), h[(i * 3 + j) * 4 + k]));
  CHECK(porta_test::same_bits(x.item(-1, -1, -1), h.back()));
  x.set(1, 2, 3, T(5));
  CHECK(x.item(1, 2, 3) == T(5));
  CHECK(x.to_vector().back() == T(5));
  if constexpr (std::is_floating_point_v<T>) {  // bits survive: -0.0 and NaN
    x.set(0, 0, 0, T(-0.0));
    CHECK(std::signbit(x.item(0, 0, 0)));
  }
  auto one = porta::full<T>({1, 1}, T(4), dev);
  CHECK(one.item() == T(4));
  // Wrong counts and out-of-range indices name the function and the values.
  try {
    (void)x.item(0, 3, 0);
    FAIL("no exception");
  } catch (const porta::InvalidArgument& e) {
    CHECK(mentions(e.what(), "porta::Array::item"));
    CHECK(mentions(e.what(), "index 3 is out of range for axis 1 of size 3"));
  }
  CHECK_THROWS_AS(x.item(0, 0), porta::InvalidArgument);
  CHECK_THROWS_AS(x.item(), porta::InvalidArgument);
  CHECK_THROWS_AS(x.set(2, 0, 0, T(1)), porta::InvalidArgument);
  CHECK_THROWS_AS(x.set(0, T(1)), porta::InvalidArgument);
  Array<T> moved = std::move(x);
  CHECK_THROWS_AS(x.item(0, 0, 0), porta::InvalidArgument);
}

TEMPLATE_TEST_CASE("built-ins accept strided views", "[views][builtins]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t r = 37, c = 41;
  const auto ha = random_values<T>(rng, r * c), hb = random_values<T>(rng, r * c);
  const auto a = Array<T>::from(ha, Shape{r, c}, dev), b = Array<T>::from(hb, Shape{r, c}, dev);
  const auto av = a.slice({{1, none, 2}, {none, none, -3}});  // strided both ways, reversed columns
  const auto bv = b.slice({{none, -1, 2}, {0, 40, 3}});
  REQUIRE(av.shape() == bv.shape());
  const auto ac = av.contiguous(), bc = bv.contiguous();
  // Maps, reductions, casts and matmul on views give what they give on the compact copies.
  PORTA_CHECK_RESULT(porta_test::compare_exact((av + bv).to_vector(), (ac + bc).to_vector()));
  PORTA_CHECK_RESULT(porta_test::compare_exact((av * bv).to_vector(), (ac * bc).to_vector()));
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::maximum(av, bc).to_vector(), porta::maximum(ac, bc).to_vector()));
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::neg(av).to_vector(), porta::neg(ac).to_vector()));
  PORTA_CHECK_RESULT(porta_test::compare_exact((av - T(3)).to_vector(), (ac - T(3)).to_vector()));
  PORTA_CHECK_RESULT(
      porta_test::compare_exact(porta::cast<double>(av).to_vector(), porta::cast<double>(ac).to_vector()));
  CHECK(porta_test::same_bits(porta::sum(av), porta::sum(ac)));
  CHECK(porta_test::same_bits(porta::max(av), porta::max(ac)));
  CHECK(porta_test::same_bits(porta::dot(av, bv), porta::dot(ac, bc)));
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::sum(av, 0).to_vector(), porta::sum(ac, 0).to_vector()));
  // A strided row broadcast over the rows of a strided view.
  PORTA_CHECK_RESULT(
      porta_test::compare_exact((av + bv.row(0)).to_vector(), (ac + bc.row(0).contiguous()).to_vector()));
  // 3-D views that do not fold into rows x columns are copied internally.
  const auto h3 = random_values<T>(rng, 4 * 5 * 6);
  const auto x3 = Array<T>::from(h3, Shape{4, 5, 6}, dev);
  const auto v3 = x3.slice({{none, none, -1}, {none, none, 2}, {1, 5}});
  PORTA_CHECK_RESULT(porta_test::compare_exact((v3 + v3).to_vector(), (v3.contiguous() + v3.contiguous()).to_vector()));
  // Writing into a view: out= forms, fill, copy, assign.
  auto y = porta_test::poisoned<T>(Shape{r, c}, dev);
  auto yv = y.slice({{1, none, 2}, {none, none, -3}});
  porta::add(av, bv, yv);
  PORTA_CHECK_RESULT(porta_test::compare_exact(yv.to_vector(), (ac + bc).to_vector()));
  porta::copy(bv, yv);
  PORTA_CHECK_RESULT(porta_test::compare_exact(yv.to_vector(), bc.to_vector()));
  porta::fill(yv, T(2));
  PORTA_CHECK_RESULT(
      porta_test::compare_exact(yv.to_vector(), std::vector<T>(static_cast<std::size_t>(yv.size()), T(2))));
  // Elements outside the view were not written.
  const auto hy = y.to_vector();
  for (std::int64_t i = 0; i < r; i += 2)
    for (std::int64_t j = 0; j < c; ++j) CHECK(porta_test::is_poison(hy[static_cast<std::size_t>(i * c + j)]));
}

TEMPLATE_TEST_CASE("functions that need contiguous memory say so", "[views][errors]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  auto m = porta::full<T>({4, 4}, T(1), dev);
  const auto v = m.col(1);
  auto c = porta::full<T>({4, 4}, T(0), dev);
  const auto check = [](const std::string& what, const char* fn) {
    INFO(what);
    CHECK(mentions(what, fn));
    CHECK(mentions(what, "strided view"));
    CHECK(mentions(what, "contiguous()"));
  };
  try {
    auto cv = c.slice({{}, {none, none, 2}});
    porta::gemm(T(1), m, false, m, false, T(0), cv);
    FAIL("no exception");
  } catch (const porta::InvalidArgument& e) {
    check(e.what(), "porta::gemm");
  }
  try {
    (void)porta::transpose(m.slice({{}, {none, none, 2}}));
    FAIL("no exception");
  } catch (const porta::InvalidArgument& e) {
    check(e.what(), "porta::transpose");
  }
  try {
    (void)v.view();
    FAIL("no exception");
  } catch (const porta::InvalidArgument& e) {
    CHECK(mentions(e.what(), "porta::Array::view"));
  }
  porta::HostArray<T> h({4}, dev);
  CHECK_THROWS_AS(porta::copy(v, h), porta::InvalidArgument);
}

TEMPLATE_TEST_CASE("an overlapping copy reads its source whole first", "[views][overlap]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t n = 1001;
  const auto h = random_values<T>(rng, n);
  auto x = Array<T>::from(h, dev);
  x.slice({{1, none}}).assign(x.slice({{0, n - 1}}));  // x[1:] = x[:-1]
  std::vector<T> ref(h);
  for (std::int64_t i = n - 1; i >= 1; --i) ref[static_cast<std::size_t>(i)] = h[static_cast<std::size_t>(i - 1)];
  PORTA_CHECK_RESULT(porta_test::compare_exact(x.to_vector(), ref));
  auto y = Array<T>::from(h, dev);
  y.assign(y.slice({{none, none, -1}}));  // y = y[::-1]
  PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), std::vector<T>(h.rbegin(), h.rend())));
  // An elementwise map whose output overlaps an input in another order.
  auto z = Array<T>::from(h, dev);
  porta::add(z, z.slice({{none, none, -1}}), z);
  std::vector<T> zr(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) zr[i] = porta_test::ref::add(h[i], h[h.size() - 1 - i]);
  PORTA_CHECK_RESULT(porta_test::compare_exact(z.to_vector(), zr));
}

TEMPLATE_TEST_CASE("scalars of any arithmetic type keep the array's dtype", "[operators][scalars]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const auto h = random_values<T>(rng, 257);
  const auto x = Array<T>::from(h, dev);
  std::vector<T> r1(h.size()), r2(h.size()), r3(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) {
    r1[i] = porta_test::ref::add(porta_test::ref::mul(h[i], T(2)), T(1));  // x * 2 + 1
    r2[i] = porta_test::ref::sub(T(3), h[i]);                              // 3 - x
    r3[i] = porta_test::ref::mul(T(2), h[i]);
  }
  const Array<T> y = x * 2 + 1;  // int literals with any dtype (the guide's own example)
  PORTA_CHECK_RESULT(porta_test::compare_exact(y.to_vector(), r1));
  PORTA_CHECK_RESULT(porta_test::compare_exact((3LL - x).to_vector(), r2));
  PORTA_CHECK_RESULT(porta_test::compare_exact((short(2) * x).to_vector(), r3));
  PORTA_CHECK_RESULT(porta_test::compare_exact((2u * x).to_vector(), r3));
  if constexpr (std::is_floating_point_v<T>) {
    PORTA_CHECK_RESULT(porta_test::compare_exact((x * 2.0).to_vector(), r3));
    PORTA_CHECK_RESULT(porta_test::compare_exact((2.0f * x).to_vector(), r3));
    if constexpr (std::is_same_v<T, float>) {  // 0.1 (double) rounds to 0.1f, as NumPy's float32 * 0.1
      std::vector<T> r4(h.size());
      for (std::size_t i = 0; i < h.size(); ++i) r4[i] = h[i] * 0.1f;
      PORTA_CHECK_RESULT(porta_test::compare_exact((x * 0.1).to_vector(), r4));
      const auto inf = (x * 1e300).to_vector();  // beyond float: +-inf, not undefined behaviour
      for (std::size_t i = 0; i < h.size(); ++i) CHECK(std::isinf(inf[i]));
    }
  } else {
    // An integer the dtype cannot hold is refused, naming the value.
    const long long big = std::is_same_v<T, std::int32_t> ? 3000000000LL : 0;
    if (big != 0) {
      try {
        (void)(x + big);
        FAIL("no exception");
      } catch (const porta::InvalidArgument& e) {
        CHECK(mentions(e.what(), "3000000000"));
        CHECK(mentions(e.what(), "porta::operator+"));
      }
    }
    CHECK_THROWS_AS(x * std::numeric_limits<unsigned long long>::max(), porta::InvalidArgument);
  }
}

TEMPLATE_TEST_CASE("compound assignment writes in place, also through views", "[operators][compound]",
                   PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t r = 9, c = 13;
  const auto h = random_values<T>(rng, r * c), g = random_values<T>(rng, r * c);
  auto x = Array<T>::from(h, Shape{r, c}, dev);
  const auto y = Array<T>::from(g, Shape{r, c}, dev);
  const T* before = x.data();
  x += y;
  x -= 2;
  x *= y;
  std::vector<T> ref(h.size());
  for (std::size_t i = 0; i < h.size(); ++i)
    ref[i] = porta_test::ref::mul(porta_test::ref::sub(porta_test::ref::add(h[i], g[i]), T(2)), g[i]);
  CHECK(x.data() == before);  // no new array
  PORTA_CHECK_RESULT(porta_test::compare_exact(x.to_vector(), ref));
  // Through temporary views: a row, a column, a broadcast row.
  x.row(2) += y.row(3);
  x.col(4) *= 3;
  x += y.row(0);
  for (std::int64_t j = 0; j < c; ++j)
    ref[static_cast<std::size_t>(2 * c + j)] =
        porta_test::ref::add(ref[static_cast<std::size_t>(2 * c + j)], g[static_cast<std::size_t>(3 * c + j)]);
  for (std::int64_t i = 0; i < r; ++i)
    ref[static_cast<std::size_t>(i * c + 4)] = porta_test::ref::mul(ref[static_cast<std::size_t>(i * c + 4)], T(3));
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j)
      ref[static_cast<std::size_t>(i * c + j)] =
          porta_test::ref::add(ref[static_cast<std::size_t>(i * c + j)], g[static_cast<std::size_t>(j)]);
  PORTA_CHECK_RESULT(porta_test::compare_exact(x.to_vector(), ref));
  if constexpr (std::is_floating_point_v<T>) {
    auto d = porta::full<T>({5}, T(3), dev);
    d /= 2;
    d -= 0.5;
    PORTA_CHECK_RESULT(porta_test::compare_exact(d.to_vector(), std::vector<T>(5, T(1))));
  }
  auto small = porta::full<T>({3}, T(1), dev);
  CHECK_THROWS_AS(small += x, porta::InvalidArgument);
}

TEST_CASE("printing follows NumPy: aligned columns, truncation, shape, dtype and device", "[print]") {
  const Device dev = PORTA_TEST_DEVICE();
  const std::string where = ", device=" + dev.to_string() + ")";
  const auto str = [](const auto& a) {
    std::ostringstream os;
    os << a;
    return os.str();
  };
  const auto m = porta::arange<std::int32_t>(6, dev).reshaped({2, 3});
  CHECK(str(m) == "array([[0, 1, 2],\n       [3, 4, 5]], shape=2x3, dtype=int32" + where);
  CHECK(str(m.col(1)) == "array([1, 4], shape=2, dtype=int32" + where);
  const auto f = Array<float>::from({0.5f, -12.25f, std::nanf(""), -std::numeric_limits<float>::infinity()}, dev);
  CHECK(str(f) == "array([   0.5, -12.25,    nan,   -inf], shape=4, dtype=float32" + where);
  CHECK(str(porta::full<double>({}, 2.5, dev)) == "array(2.5, shape=scalar, dtype=float64" + where);
  CHECK(str(porta::zeros<std::int64_t>({0}, dev)) == "array([], shape=0, dtype=int64" + where);
  const auto cube = porta::arange<std::int64_t>(8, dev).reshaped({2, 2, 2});
  CHECK(str(cube) ==
        "array([[[0, 1],\n        [2, 3]],\n\n       [[4, 5],\n        [6, 7]]], shape=2x2x2, dtype=int64" + where);
  // Above 1000 elements: the first and last 3 of each long axis.
  const auto big = porta::arange<std::int32_t>(2000, dev);
  CHECK(str(big) == "array([   0,    1,    2, ..., 1997, 1998, 1999], shape=2000, dtype=int32" + where);
  const auto grid = porta::arange<std::int32_t>(100 * 20, dev).reshaped({100, 20});
  const std::string g = str(grid);
  CHECK(mentions(g, "[   0,    1,    2, ...,   17,   18,   19]"));
  CHECK(mentions(g, "...,\n"));
  CHECK(mentions(g, "[1980, 1981, 1982, ..., 1997, 1998, 1999]]"));
  CHECK(str(Array<float>()) == "array(<moved-from>)");
}
