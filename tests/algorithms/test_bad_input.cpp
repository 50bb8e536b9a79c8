// SPDX-License-Identifier: Apache-2.0
// Bad input: the right porta::Error subclass, a message that names the function and the values,
// and outputs left untouched by a failed call.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::Shape;
using porta_test::Contains;

namespace {

// An output filled with a known pattern, to check that failed calls leave it alone.
struct Sentinel {
  Array<float> arr;
  std::vector<float> host;
  Sentinel(Shape shape, Device dev) : host(static_cast<std::size_t>(shape.size())) {
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = 0.5f + static_cast<float>(i);
    arr = Array<float>::from(host, shape, dev);
  }
  bool untouched() const { return porta_test::compare_exact(arr.to_vector(), host).ok; }
};

}  // namespace

TEST_CASE("maps: shape mismatches", "[errors][map]") {
  const Device dev = PORTA_TEST_DEVICE();
  const auto a = porta::ones<float>({5}, dev);
  const auto b = porta::ones<float>({6}, dev);
  CHECK_THROWS_AS(porta::add(a, b), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::add(a, b), Contains("porta::add") && Contains("5") && Contains("6"));
  CHECK_THROWS_WITH(porta::mul(a, b), Contains("porta::mul"));
  CHECK_THROWS_WITH(porta::pow(a, b), Contains("porta::pow"));
  CHECK_THROWS_WITH(a + b, Contains("porta::add"));
  Sentinel out(Shape{5}, dev);
  CHECK_THROWS_AS(porta::sub(a, b, out.arr), porta::InvalidArgument);
  CHECK(out.untouched());
  // the output must have a's shape
  Sentinel wrong(Shape{4}, dev);
  CHECK_THROWS_AS(porta::add(a, a, wrong.arr), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::add(a, 1.0f, wrong.arr), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::add(1.0f, a, wrong.arr), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::exp(a, wrong.arr), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::exp(a, wrong.arr), Contains("porta::exp"));
  CHECK_THROWS_AS(porta::relu_grad(a, a, wrong.arr), porta::InvalidArgument);
  CHECK(wrong.untouched());
  // same size, other shape: not the same shape
  const auto m = porta::ones<float>({2, 3}, dev);
  const auto v = porta::ones<float>({6}, dev);
  CHECK_THROWS_AS(porta::add(m, porta::ones<float>({3, 2}, dev)), porta::InvalidArgument);
  // axpy and copy need equal sizes
  Sentinel y(Shape{6}, dev);
  CHECK_THROWS_AS(porta::axpy(2.0f, a, y.arr), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::axpy(2.0f, a, y.arr), Contains("porta::axpy"));
  CHECK_THROWS_AS(porta::copy(a, y.arr), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::copy(a, y.arr), Contains("porta::copy"));
  CHECK(y.untouched());
  (void)v;
}

TEST_CASE("maps: broadcasts that do not fit", "[errors][map][broadcast]") {
  const Device dev = PORTA_TEST_DEVICE();
  const auto a = porta::ones<float>({4, 3}, dev);
  for (const Shape& bad : {Shape{4}, Shape{2}, Shape{1, 4}, Shape{3, 1}, Shape{4, 2}, Shape{2, 4, 3}, Shape{}}) {
    INFO("b is " << bad.to_string());
    const auto b = porta::ones<float>(bad, dev);
    CHECK_THROWS_AS(porta::add(a, b), porta::InvalidArgument);
    CHECK_THROWS_WITH(porta::add(a, b), Contains("4x3"));
    Sentinel out(Shape{4, 3}, dev);
    CHECK_THROWS_AS(porta::maximum(a, b, out.arr), porta::InvalidArgument);
    CHECK(out.untouched());
  }
  // b may broadcast over a, not the other way round
  CHECK_THROWS_AS(porta::add(porta::ones<float>({3}, dev), a), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::add(porta::ones<float>({4, 1}, dev), a), porta::InvalidArgument);
}

TEST_CASE("matmul and gemm: dimensions", "[errors][matmul]") {
  const Device dev = PORTA_TEST_DEVICE();
  const auto a = porta::ones<float>({3, 4}, dev);
  const auto b = porta::ones<float>({5, 2}, dev);
  // example-begin error-message
  try {
    auto c = porta::matmul(a, b);
    FAIL("no exception");
  } catch (const porta::InvalidArgument& e) {
    // porta::matmul: inner dimensions differ (A is 3x4, B is 5x2)
    CHECK_THAT(std::string(e.what()), Contains("porta::matmul") && Contains("3x4") && Contains("5x2"));
  }
  // example-end error-message
  CHECK_THROWS_AS(porta::matmul(porta::ones<float>({12}, dev), porta::ones<float>({12}, dev)), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::matmul(porta::ones<float>({2, 2, 2}, dev), porta::ones<float>({2, 2}, dev)),
                  porta::InvalidArgument);
  // gemm: op(A) is m x k, op(B) k x n, C m x n
  const auto a34 = porta::ones<float>({3, 4}, dev);
  const auto b45 = porta::ones<float>({4, 5}, dev);
  Sentinel c(Shape{3, 5}, dev);
  CHECK_THROWS_AS(porta::gemm(1.0f, a34, true, b45, false, 0.0f, c.arr), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::gemm(1.0f, a34, false, b45, true, 0.0f, c.arr), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::gemm(1.0f, a34, false, b45, true, 0.0f, c.arr), Contains("porta::gemm"));
  Sentinel c_wrong(Shape{5, 3}, dev);
  CHECK_THROWS_AS(porta::gemm(1.0f, a34, false, b45, false, 0.0f, c_wrong.arr), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::gemm(1.0f, a34, false, b45, false, 0.0f, c_wrong.arr), Contains("5x3"));
  CHECK(c.untouched());
  CHECK(c_wrong.untouched());
  // and the right call works on the same arrays
  porta::gemm(1.0f, a34, false, b45, false, 0.0f, c.arr);
  PORTA_CHECK_RESULT(porta_test::compare_exact(c.arr.to_vector(), std::vector<float>(15, 4.0f)));
  CHECK_THROWS_AS(porta::transpose(porta::ones<float>({2, 2, 2}, dev)), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::transpose(porta::ones<float>({8}, dev)), Contains("porta::transpose"));
}

TEST_CASE("reductions: axis out of range and size mismatches", "[errors][reduce]") {
  const Device dev = PORTA_TEST_DEVICE();
  const auto m = porta::ones<double>({3, 4}, dev);
  for (int axis : {2, 5, -3, -100}) {
    INFO("axis " << axis);
    CHECK_THROWS_AS(porta::sum(m, axis), porta::InvalidArgument);
    CHECK_THROWS_WITH(porta::sum(m, axis), Contains("porta::sum") && Contains(std::to_string(axis)));
    CHECK_THROWS_AS(porta::max(m, axis), porta::InvalidArgument);
    CHECK_THROWS_AS(porta::min(m, axis), porta::InvalidArgument);
    CHECK_THROWS_AS(porta::prod(m, axis), porta::InvalidArgument);
    CHECK_THROWS_AS(porta::mean(m, axis), porta::InvalidArgument);
  }
  CHECK_THROWS_AS(porta::sum(porta::ones<double>({5}, dev), 1), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::dot(porta::ones<double>({5}, dev), porta::ones<double>({6}, dev)), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::dot(porta::ones<double>({5}, dev), porta::ones<double>({6}, dev)),
                    Contains("porta::dot") && Contains("5") && Contains("6"));
}

TEST_CASE("arrays on different devices are a DeviceMismatch", "[errors][devices]") {
  const auto pair = porta_test::two_devices();
  if (!pair) PORTA_SKIP("one device on this machine: no DeviceMismatch to provoke (needs e.g. cuda:0 and cpu)");
  const Device d0 = pair->first, d1 = pair->second;
  INFO(d0.to_string() << " and " << d1.to_string());
  const auto a = porta::ones<float>({8}, d0);
  const auto b = porta::ones<float>({8}, d1);
  CHECK_THROWS_AS(porta::add(a, b), porta::DeviceMismatch);
  CHECK_THROWS_WITH(porta::add(a, b), Contains("porta::add") && Contains(d0.to_string()) && Contains(d1.to_string()));
  CHECK_THROWS_AS(porta::dot(a, b), porta::DeviceMismatch);
  CHECK_THROWS_AS(porta::relu_grad(a, b), porta::DeviceMismatch);
  Sentinel out(Shape{8}, d1);
  CHECK_THROWS_AS(porta::exp(a, out.arr), porta::DeviceMismatch);
  CHECK_THROWS_AS(porta::add(a, a, out.arr), porta::DeviceMismatch);
  CHECK_THROWS_AS(porta::axpy(1.0f, a, out.arr), porta::DeviceMismatch);
  CHECK(out.untouched());
  const auto ma = porta::ones<float>({2, 2}, d0);
  const auto mb = porta::ones<float>({2, 2}, d1);
  CHECK_THROWS_AS(porta::matmul(ma, mb), porta::DeviceMismatch);
  Sentinel c(Shape{2, 2}, d1);
  CHECK_THROWS_AS(porta::gemm(1.0f, ma, false, ma, false, 0.0f, c.arr), porta::DeviceMismatch);
  CHECK(c.untouched());
  // copy across devices is the explicit move: allowed
  Sentinel dst(Shape{8}, d1);
  porta::copy(a, dst.arr);
  PORTA_CHECK_RESULT(porta_test::compare_exact(dst.arr.to_vector(), std::vector<float>(8, 1.0f)));
}

TEST_CASE("failed calls leave the process usable and leak nothing", "[errors][memory]") {
  const Device dev = PORTA_TEST_DEVICE();
  porta::synchronize(dev);
  const auto before = porta::memory_stats(dev).bytes_in_use;
  {
    const auto a = porta::ones<float>({100}, dev);
    const auto b = porta::ones<float>({101}, dev);
    for (int i = 0; i < 10; ++i) {
      CHECK_THROWS_AS(porta::add(a, b), porta::InvalidArgument);
      CHECK_THROWS_AS(porta::matmul(a, b), porta::InvalidArgument);
      CHECK_THROWS_AS(porta::sum(a, 3), porta::InvalidArgument);
    }
  }
  porta::synchronize(dev);
  CHECK(porta::memory_stats(dev).bytes_in_use == before);
  CHECK(porta::sum(porta::ones<float>({10}, dev)) == 10.0f);
}

// ---- bad input tried from outside (an independent tester, public headers and docs only) --------

namespace {
constexpr std::int64_t k2p32 = std::int64_t{1} << 32;
constexpr std::int64_t k2p62 = std::int64_t{1} << 62;
}  // namespace

TEST_CASE("shapes whose element count overflows 64 bits are InvalidArgument", "[errors][overflow][array]") {
  const Device dev = PORTA_TEST_DEVICE();
  // Each of these was accepted with a wrapped size() (UBSan: signed overflow in Shape::size).
  CHECK_THROWS_AS(Array<float>(Shape{k2p32, k2p32}, dev), porta::InvalidArgument);
  CHECK_THROWS_WITH(Array<float>(Shape{k2p32, k2p32}, dev),
                    Contains("porta::Shape") && Contains("4294967296x4294967296"));
  CHECK_THROWS_AS(Array<double>(Shape{65536, 65536, 65536, 65536}, dev), porta::InvalidArgument);
  // A zero dimension does not excuse the others (NumPy's rule): otherwise a reduction or a matmul
  // would derive a non-empty shape with a wrapped size from it.
  CHECK_THROWS_AS((Shape{0, k2p62, k2p62}), porta::InvalidArgument);
  CHECK_THROWS_AS((Shape{k2p32, k2p32, 0}), porta::InvalidArgument);

  const std::vector<float> four{1, 2, 3, 4};
  CHECK_THROWS_AS(Array<float>::from(four, Shape{k2p62 + 1, 4}, dev), porta::InvalidArgument);

  Sentinel a(Shape{4}, dev);
  CHECK_THROWS_AS(a.arr.reshape(Shape{k2p32, k2p32}), porta::InvalidArgument);
  CHECK(a.arr.shape() == Shape{4});
  CHECK(a.untouched());
  CHECK(porta::sum(a.arr) == 0.5f + 1.5f + 2.5f + 3.5f);
}

TEST_CASE("results whose shape would overflow are refused before anything runs", "[errors][overflow][matmul]") {
  const Device dev = PORTA_TEST_DEVICE();
  // {2^32, 0} x {0, 2^32} is a 2^32 x 2^32 result: not an empty one.
  const Array<float> a(Shape{k2p32, 0}, dev);
  const Array<float> b(Shape{0, k2p32}, dev);
  CHECK(a.size() == 0);
  CHECK_THROWS_AS(porta::matmul(a, b), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::matmul(a, b), Contains("4294967296x4294967296"));
  // An empty axis of a valid shape: min/max have no identity, sum's result does not fit in memory.
  const Array<float> e(Shape{0, std::int64_t{1} << 31, std::int64_t{1} << 31}, dev);
  CHECK_THROWS_AS(porta::max(e, 0), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::max(e, 0), Contains("porta::max"));
  CHECK_THROWS_AS(porta::sum(e, 0), porta::Error);  // 2^62 floats: 2^64 bytes do not fit a size_t
  CHECK(porta::sum(e, 1).size() == 0);              // an empty result is fine
}

TEMPLATE_TEST_CASE("arange of NaN, infinite or uncountable bounds names arange and the cause", "[errors][arange]",
                   float, double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  const T inf = std::numeric_limits<T>::infinity();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  // was "porta::Shape: negative dimension" after an undefined float-to-integer conversion
  CHECK_THROWS_AS(porta::arange<T>(T(0), inf, T(1), dev), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::arange<T>(T(0), inf, T(1), dev), Contains("porta::arange") && Contains("stop is inf"));
  CHECK_THROWS_WITH(porta::arange<T>(-inf, T(0), T(1), dev), Contains("porta::arange") && Contains("start is -inf"));
  CHECK_THROWS_WITH(porta::arange<T>(T(0), T(1), inf, dev), Contains("porta::arange") && Contains("step is inf"));
  // was an empty array; NumPy raises
  CHECK_THROWS_AS(porta::arange<T>(T(0), nan, T(1), dev), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::arange<T>(T(0), nan, T(1), dev), Contains("porta::arange") && Contains("stop is NaN"));
  CHECK_THROWS_WITH(porta::arange<T>(nan, T(1), T(1), dev), Contains("start is NaN"));
  CHECK_THROWS_WITH(porta::arange<T>(T(0), T(1), nan, dev), Contains("step is NaN"));
  // finite, but more elements than an int64 counts, or than the address space holds
  CHECK_THROWS_WITH(porta::arange<T>(T(0), T(1e19), T(1), dev), Contains("porta::arange"));
  CHECK_THROWS_WITH(porta::arange<T>(-std::numeric_limits<T>::max(), std::numeric_limits<T>::max(), T(1), dev),
                    Contains("porta::arange"));
  CHECK_THROWS_WITH(porta::arange<T>(T(0), T(8.0e18), T(1), dev), Contains("porta::arange"));
}

TEMPLATE_TEST_CASE("integer arange counts exactly at the ends of the type", "[arange][overflow]", std::int32_t,
                   std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  constexpr T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  // stop - start and -step overflow T here; a count through double rounds (int64: to 0 elements).
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::arange<T>(T(hi - 10), hi, T(3), dev).to_vector(),
                                               std::vector<T>{T(hi - 10), T(hi - 7), T(hi - 4), T(hi - 1)}));
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::arange<T>(lo, T(lo + 5), T(2), dev).to_vector(),
                                               std::vector<T>{lo, T(lo + 2), T(lo + 4)}));
  PORTA_CHECK_RESULT(porta_test::compare_exact(porta::arange<T>(T(5), T(-5), lo, dev).to_vector(), std::vector<T>{5}));
  const T quarter = T(hi / 4 + 1);  // 2^(w-3): eight steps cover [lo, hi)
  CHECK(porta::arange<T>(lo, hi, quarter, dev).size() == 8);
  CHECK(porta::arange<T>(hi, lo, T(-quarter), dev).size() == 8);
  if constexpr (sizeof(T) == 8) {
    CHECK_THROWS_WITH(porta::arange<T>(lo, hi, T(1), dev), Contains("porta::arange"));    // 2^64 - 1 elements
    CHECK_THROWS_WITH(porta::arange<T>(T(0), hi, T(1), dev), Contains("porta::arange"));  // 2^66 bytes
  } else {
    // arange(n) converted n to int32 first: 2^32 + 5 gave 5 elements
    CHECK_THROWS_AS(porta::arange<T>(k2p32 + 5, dev), porta::InvalidArgument);
    CHECK_THROWS_WITH(porta::arange<T>(k2p32 + 5, dev), Contains("porta::arange") && Contains("int32"));
  }
  CHECK(porta::arange<T>(std::int64_t{-3}, dev).size() == 0);
}

TEST_CASE("mean of integers does not wrap: it accumulates in double, as NumPy", "[reduce][overflow]") {
  const Device dev = PORTA_TEST_DEVICE();
  constexpr std::int32_t i32max = std::numeric_limits<std::int32_t>::max();
  constexpr std::int64_t i64max = std::numeric_limits<std::int64_t>::max();
  // was -1.0: the int32 sum wrapped before the division
  CHECK(porta::mean(Array<std::int32_t>::from({i32max, i32max}, dev)) == 2147483647.0);
  CHECK(porta::mean(Array<std::int32_t>::from({-i32max - 1, -i32max - 1, -i32max - 1}, dev)) == -2147483648.0);
  // int64 elements convert to double (rounding above 2^53), as NumPy's float64 accumulator
  CHECK(porta::mean(Array<std::int64_t>::from({i64max, i64max}, dev)) == 9223372036854775808.0);
  // sum keeps the array's type and wraps (two's complement): the documented rule; cast to widen
  CHECK(porta::sum(Array<std::int32_t>::from({i32max, 1}, dev)) == -i32max - 1);
  CHECK(porta::sum(porta::cast<std::int64_t>(Array<std::int32_t>::from({i32max, 1}, dev))) == std::int64_t{i32max} + 1);
}

TEST_CASE("scatter by indices that are a view of its own output reads them before writing", "[errors][indexing]") {
  const Device dev = PORTA_TEST_DEVICE();
  // x = [2, 0, 1, 10, 20, 30]; indices = x[0:3] = [2, 0, 1] (int64, the same memory as x); values
  // [7, 8, 9]: x[2] = 7, x[0] = 8, x[1] = 9 with the indices as they were before the call.
  auto x = Array<std::int64_t>::from(std::vector<std::int64_t>{2, 0, 1, 10, 20, 30}, dev);
  const auto idx = x.slice({{0, 3}});
  const auto values = Array<std::int64_t>::from(std::vector<std::int64_t>{7, 8, 9}, dev);
  porta::scatter(x, idx, values);
  CHECK(x.to_vector() == std::vector<std::int64_t>{8, 9, 7, 10, 20, 30});
}

TEST_CASE("item with an unsigned index above 2^63 - 1 is out of range, not the last element", "[errors][array]") {
  const Device dev = PORTA_TEST_DEVICE();
  const auto x = porta::arange<float>(4, dev);
  const std::uint64_t huge = std::numeric_limits<std::uint64_t>::max();  // would wrap to -1
  CHECK_THROWS_AS(x.item(huge), porta::InvalidArgument);
  CHECK_THROWS_WITH(x.item(huge), Contains("porta::Array::item") && Contains("out of range"));
  CHECK(x.item(std::uint64_t{3}) == 3.0f);
  CHECK(x.item(std::size_t{1}) == 1.0f);
}

TEST_CASE("random::blocks_for counts up to INT64_MAX without overflow", "[errors][random][overflow]") {
  constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max();
  CHECK(porta::random::blocks_for<float>(big) == static_cast<std::uint64_t>(big / 4 + 1));
  CHECK(porta::random::blocks_for<double>(big) == static_cast<std::uint64_t>(big / 2 + 1));
  CHECK(porta::random::blocks_for<float>(big - 3) == static_cast<std::uint64_t>(big / 4));
  CHECK(porta::random::blocks_for<float>(5) == 2);
  CHECK(porta::random::blocks_for<double>(4) == 2);
  CHECK(porta::random::blocks_for<double>(0) == 0);
  CHECK(porta::random::blocks_for<float>(-7) == 0);
}

TEST_CASE("sort with an order that is no SortOrder is refused", "[errors][sort]") {
  const Device dev = PORTA_TEST_DEVICE();
  const auto x = Array<float>::from(std::vector<float>{3, 1, 2}, dev);
  const auto bad = static_cast<porta::SortOrder>(7);
  CHECK_THROWS_WITH(porta::sort(x, bad), Contains("porta::sort") && Contains("order 7"));
  CHECK_THROWS_AS(porta::argsort(x, bad), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::sort_by_key(x, porta::arange<std::int64_t>(3, dev), bad), porta::InvalidArgument);
}

TEST_CASE("borrow of a null pointer for elements is refused at once", "[errors][array]") {
  const Device dev = PORTA_TEST_DEVICE();
  CHECK_THROWS_WITH(Array<float>::borrow(nullptr, Shape{4}, dev, nullptr),
                    Contains("porta::Array::borrow") && Contains("null pointer"));
  const auto empty = Array<float>::borrow(nullptr, Shape{0}, dev, nullptr);  // no elements: nothing to point at
  CHECK(empty.size() == 0);
}
