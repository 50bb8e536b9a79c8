// SPDX-License-Identifier: Apache-2.0
// Bad input: the right porta::Error subclass, a message that names the function and the values,
// and outputs left untouched by a failed call.
#include <cstdint>
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
