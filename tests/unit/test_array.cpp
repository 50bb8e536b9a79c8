// SPDX-License-Identifier: Apache-2.0
// Arrays: shapes, host round trips, factories, clone, to(device), reshape, views, moved-from use,
// out-of-memory, memory statistics.
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::DeviceType;
using porta::Shape;
using porta_test::Contains;

#define PORTA_TEST_TYPES float, double, std::int32_t, std::int64_t

TEST_CASE("Shape", "[array]") {
  const Shape s0;
  CHECK(s0.rank() == 0);
  CHECK(s0.size() == 1);
  CHECK(s0.to_string() == "scalar");
  const Shape s1{7};
  CHECK(s1.rank() == 1);
  CHECK(s1.size() == 7);
  CHECK(s1.to_string() == "7");
  const Shape s4{2, 3, 4, 5};
  CHECK(s4.rank() == 4);
  CHECK(s4.size() == 120);
  CHECK(s4[0] == 2);
  CHECK(s4[3] == 5);
  CHECK(s4.to_string() == "2x3x4x5");
  CHECK(Shape{3, 0}.size() == 0);
  CHECK(Shape{3, 4} == Shape{3, 4});
  CHECK(Shape{3, 4} != Shape{4, 3});
  CHECK(Shape{12} != Shape{3, 4});
  CHECK_THROWS_AS((Shape{1, 2, 3, 4, 5}), porta::InvalidArgument);
  CHECK_THROWS_WITH((Shape{1, 2, 3, 4, 5}), Contains("porta::Shape"));
  CHECK_THROWS_AS((Shape{3, -1}), porta::InvalidArgument);
  CHECK_THROWS_WITH((Shape{3, -1}), Contains("porta::Shape") && Contains("-1"));
}

TEST_CASE("Shape: the element count fits in 64 bits, up to the last one", "[array][overflow]") {
  constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t p31 = std::int64_t{1} << 31, p32 = std::int64_t{1} << 32;
  // the largest counts are fine (a Shape is only numbers; allocating them is Array's business)
  CHECK(Shape{max}.size() == max);
  CHECK(Shape{max, 1, 1, 1}.size() == max);
  CHECK(Shape{std::int64_t{1} << 62, 1}.size() == std::int64_t{1} << 62);
  CHECK(Shape{p31, p31, 0}.size() == 0);
  CHECK(Shape{0, max}.size() == 0);
  CHECK(Shape{3, 0, p31, p31 / 2}.size() == 0);  // 3 * 2^61 nonzero: fits
  // one past: 2^63, and products that would wrap to a small or zero size() in unchecked arithmetic
  for (const auto& dims : std::vector<std::vector<std::int64_t>>{{std::int64_t{1} << 62, 2},
                                                                 {p32, p32},
                                                                 {65536, 65536, 65536, 65536},
                                                                 {(std::int64_t{1} << 62) + 1, 4},
                                                                 {max, 2},
                                                                 {3, max / 2},
                                                                 {0, p32, p32},
                                                                 {p32, p32, 0},
                                                                 {2, 2, 2, std::int64_t{1} << 61}}) {
    INFO(dims.size() << " dimensions, the first " << dims[0]);
    const auto make = [&]() -> Shape {
      switch (dims.size()) {
        case 2:
          return Shape{dims[0], dims[1]};
        case 3:
          return Shape{dims[0], dims[1], dims[2]};
        default:
          return Shape{dims[0], dims[1], dims[2], dims[3]};
      }
    };
    CHECK_THROWS_AS(make(), porta::InvalidArgument);
    CHECK_THROWS_WITH(make(), Contains("porta::Shape") && Contains("2^63 - 1"));
  }
  CHECK(Shape{3, max / 3}.size() == 3 * (max / 3));
}

TEMPLATE_TEST_CASE("Array from/to_vector round trip, shapes up to 4-D", "[array]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const Shape shapes[] = {Shape{0},    Shape{1},       Shape{7},          Shape{1000},    Shape{3, 5}, Shape{1, 9},
                          Shape{9, 1}, Shape{2, 3, 4}, Shape{2, 3, 4, 5}, Shape{4, 0, 2}, Shape{}};
  for (const Shape& shape : shapes) {
    INFO("shape " << shape.to_string());
    const auto h = porta_test::nonzero<T>(rng, shape.size());
    auto a = Array<T>::from(h, shape, dev);
    CHECK(a.valid());
    CHECK(static_cast<bool>(a));
    CHECK(a.shape() == shape);
    CHECK(a.rank() == shape.rank());
    for (int i = 0; i < shape.rank(); ++i) CHECK(a.dim(i) == shape[i]);
    CHECK(a.size() == shape.size());
    CHECK(a.nbytes() == static_cast<std::size_t>(shape.size()) * sizeof(T));
    CHECK(a.device() == dev);
    PORTA_CHECK_RESULT(porta_test::compare_exact(a.to_vector(), h));
    // copy_to_host / copy_from_host with raw pointers
    std::vector<T> back(h.size(), porta_test::poison<T>());
    a.copy_to_host(back.data());
    PORTA_CHECK_RESULT(porta_test::compare_exact(back, h));
    const auto h2 = porta_test::nonzero<T>(rng, shape.size());
    a.copy_from_host(h2.data());
    PORTA_CHECK_RESULT(porta_test::compare_exact(a.to_vector(), h2));
  }
  // 1-D from a vector
  const auto h = porta_test::nonzero<T>(rng, 37);
  auto a = Array<T>::from(h, dev);
  CHECK(a.shape() == Shape{37});
  PORTA_CHECK_RESULT(porta_test::compare_exact(a.to_vector(), h));
  // a shape that does not match the vector
  CHECK_THROWS_AS(Array<T>::from(h, Shape{6, 6}, dev), porta::InvalidArgument);
  CHECK_THROWS_WITH(Array<T>::from(h, Shape{6, 6}, dev), Contains("porta::Array::from"));
}

TEMPLATE_TEST_CASE("zeros, ones, full, empty", "[array]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  for (const Shape& shape : {Shape{0}, Shape{1}, Shape{7}, Shape{3, 5}, Shape{2, 3, 4, 5}, Shape{1000003}}) {
    INFO("shape " << shape.to_string());
    const std::size_t n = static_cast<std::size_t>(shape.size());
    porta_test::poison_pool<T>(shape.size(), dev);
    auto z = porta::zeros<T>(shape, dev);
    CHECK(z.shape() == shape);
    CHECK(z.device() == dev);
    PORTA_CHECK_RESULT(porta_test::compare_exact(z.to_vector(), std::vector<T>(n, T(0))));
    porta_test::poison_pool<T>(shape.size(), dev);
    auto o = porta::ones<T>(shape, dev);
    PORTA_CHECK_RESULT(porta_test::compare_exact(o.to_vector(), std::vector<T>(n, T(1))));
    porta_test::poison_pool<T>(shape.size(), dev);
    auto f = porta::full<T>(shape, T(-3), dev);
    PORTA_CHECK_RESULT(porta_test::compare_exact(f.to_vector(), std::vector<T>(n, T(-3))));
    auto e = porta::empty<T>(shape, dev);
    CHECK(e.shape() == shape);
    CHECK(e.size() == shape.size());
  }
  if constexpr (std::is_floating_point_v<T>) {
    // -0.0 is kept (fill copies bits)
    auto f = porta::full<T>({5}, T(-0.0), dev);
    for (T v : f.to_vector()) CHECK(std::signbit(v));
  } else {
    const T big = std::numeric_limits<T>::lowest();
    auto f = porta::full<T>({5}, big, dev);
    PORTA_CHECK_RESULT(porta_test::compare_exact(f.to_vector(), std::vector<T>(5, big)));
  }
}

TEMPLATE_TEST_CASE("arange", "[array]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  struct Case {
    double start, stop, step;
  };
  // Values exactly representable in every dtype; counts as NumPy's ceil((stop - start) / step).
  const Case cases[] = {{0, 10, 1}, {10, 0, -3}, {-5, 5, 2},  {5, 5, 1},       {5, 0, 1},
                        {0, 5, -1}, {3, -4, -1}, {-7, -6, 1}, {0, 1000003, 1}, {100, -100, -7}};
  for (const Case& c : cases) {
    INFO("arange(" << c.start << ", " << c.stop << ", " << c.step << ")");
    const double cnt = std::ceil((c.stop - c.start) / c.step);
    const std::int64_t n = cnt > 0 ? static_cast<std::int64_t>(cnt) : 0;
    std::vector<T> ref(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) ref[i] = static_cast<T>(c.start + static_cast<double>(i) * c.step);
    porta_test::poison_pool<T>(n, dev);
    auto a = porta::arange<T>(static_cast<T>(c.start), static_cast<T>(c.stop), static_cast<T>(c.step), dev);
    CHECK(a.shape() == Shape{n});
    CHECK(a.device() == dev);
    PORTA_CHECK_RESULT(porta_test::compare_exact(a.to_vector(), ref));
  }
  if constexpr (std::is_floating_point_v<T>) {
    auto a = porta::arange<T>(T(0), T(1), T(0.25), dev);
    PORTA_CHECK_RESULT(porta_test::compare_exact(a.to_vector(), std::vector<T>{0, 0.25, 0.5, 0.75}));
    auto b = porta::arange<T>(T(1), T(0), T(-0.375), dev);  // 1, 0.625, 0.25
    PORTA_CHECK_RESULT(porta_test::compare_exact(b.to_vector(), std::vector<T>{1, 0.625, 0.25}));
  }
  auto r = porta::arange<T>(std::int64_t{6}, dev);
  PORTA_CHECK_RESULT(porta_test::compare_exact(r.to_vector(), std::vector<T>{0, 1, 2, 3, 4, 5}));
  CHECK(porta::arange<T>(std::int64_t{0}, dev).size() == 0);
  CHECK_THROWS_AS(porta::arange<T>(T(0), T(5), T(0), dev), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::arange<T>(T(0), T(5), T(0), dev), Contains("porta::arange"));
}

TEMPLATE_TEST_CASE("clone is a deep copy", "[array]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (const Shape& shape : {Shape{0}, Shape{1}, Shape{7, 3}, Shape{100003}}) {
    INFO("shape " << shape.to_string());
    const auto h = porta_test::nonzero<T>(rng, shape.size());
    auto a = Array<T>::from(h, shape, dev);
    auto b = a.clone();
    CHECK(b.shape() == shape);
    CHECK(b.device() == dev);
    if (shape.size() > 0) CHECK(b.data() != a.data());
    PORTA_CHECK_RESULT(porta_test::compare_exact(b.to_vector(), h));
    porta::fill(b, T(5));
    PORTA_CHECK_RESULT(porta_test::compare_exact(a.to_vector(), h));
    PORTA_CHECK_RESULT(porta_test::compare_exact(b.to_vector(), std::vector<T>(h.size(), T(5))));
  }
}

TEST_CASE("labels: given at creation or later, kept by views and copies, never dangling", "[array][labels]") {
  const Device dev = PORTA_TEST_DEVICE();
  Array<double> unnamed(Shape{4}, dev);
  CHECK(std::string(unnamed.label()) == "");
  porta::Array<double> u({3, 4}, dev, "temperature");
  CHECK(std::string(u.label()) == "temperature");
  std::string name = "pressure";
  Array<double> p(Shape{2}, dev, name);
  name = "overwritten";  // the Array keeps its own copy of the characters
  CHECK(std::string(p.label()) == "pressure");
  CHECK(std::string(u.row(1).label()) == "temperature");
  CHECK(std::string(u.clone().label()) == "temperature");
  CHECK(std::string(u.to(Device(DeviceType::cpu)).label()) == "temperature");
  const char* kept = u.label();
  {
    Array<double> v(Shape{2}, dev, "temperature");
    CHECK(v.label() == kept);  // one copy per distinct label
  }
  auto view = u.row(0);
  view.set_label("first row");
  CHECK(std::string(view.label()) == "first row");
  CHECK(std::string(u.label()) == "temperature");
  Array<double> moved = std::move(u);
  CHECK(std::string(moved.label()) == "temperature");
  CHECK(std::string(u.label()) == "");  // NOLINT(bugprone-use-after-move): a moved-from Array has no label
  moved.set_label("");
  CHECK(std::string(moved.label()) == "");
  CHECK(std::string(kept) == "temperature");  // still readable after every Array that named it changed
}

TEST_CASE("memory_report lists live labelled arrays by label", "[array][labels][memory]") {
  const Device dev = PORTA_TEST_DEVICE();
  // A label of this run's own, so that arrays of other tests cannot be counted under it.
  const std::string label = "report-" + std::to_string(porta_test::base_seed());
  const auto count_line = [&]() -> std::string {
    const std::string r = porta::memory_report(dev);
    CHECK(r.rfind(dev.to_string() + ": ", 0) == 0);
    CHECK(r.find("(unlabelled)") != std::string::npos);
    const auto at = r.find("  " + label + " ");
    return at == std::string::npos ? std::string() : r.substr(at, r.find('\n', at) - at);
  };
  CHECK(count_line().empty());
  {
    Array<float> a(Shape{1000}, dev, label);      // 4000 bytes
    Array<double> b(Shape{10, 100}, dev, label);  // 8000 bytes
    Array<float> other(Shape{5}, dev);
    const std::string line = count_line();
    INFO(line);
    CHECK(line.find(" 2 arrays ") != std::string::npos);
    CHECK(line.find("11.7 KiB") != std::string::npos);
    auto view = b.row(3);  // a view is not another allocation
    CHECK(count_line() == line);
  }
  CHECK(count_line().empty());  // freed with the last Array holding the memory
}

TEMPLATE_TEST_CASE("to(device) between every pair of devices", "[array]", PORTA_TEST_TYPES) {
  using T = TestType;
  PORTA_RNG(rng);
  const auto all = porta::devices();
  for (const Device& from : all)
    for (const Device& to : all) {
      INFO(from.to_string() << " -> " << to.to_string());
      for (const Shape& shape : {Shape{0}, Shape{5}, Shape{3, 4}, Shape{65537}}) {
        INFO("shape " << shape.to_string());
        const auto h = porta_test::nonzero<T>(rng, shape.size());
        auto a = Array<T>::from(h, shape, from);
        auto b = a.to(to);
        CHECK(b.device() == to);
        CHECK(b.shape() == shape);
        PORTA_CHECK_RESULT(porta_test::compare_exact(b.to_vector(), h));
        PORTA_CHECK_RESULT(porta_test::compare_exact(a.to_vector(), h));
        // and porta::copy into an existing array on the other device
        auto c = porta_test::poisoned<T>(shape, to);
        porta::copy(a, c);
        PORTA_CHECK_RESULT(porta_test::compare_exact(c.to_vector(), h));
      }
    }
}

TEMPLATE_TEST_CASE("reshape and reshaped", "[array]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const auto h = porta_test::nonzero<T>(rng, 24);
  auto a = Array<T>::from(h, dev);
  const T* p = a.data();
  a.reshape({2, 3, 4});
  CHECK(a.shape() == Shape{2, 3, 4});
  CHECK(a.data() == p);
  PORTA_CHECK_RESULT(porta_test::compare_exact(a.to_vector(), h));
  a.reshape({24});
  a.reshape({1, 24});
  a.reshape({2, 2, 2, 3});
  CHECK(a.rank() == 4);
  CHECK_THROWS_AS(a.reshape({5, 5}), porta::InvalidArgument);
  CHECK_THROWS_WITH(a.reshape({5, 5}), Contains("porta::Array::reshape") && Contains("5x5"));
  CHECK(a.shape() == Shape{2, 2, 2, 3});  // unchanged by the failed call
  auto b = std::move(a).reshaped({4, 6});
  CHECK(b.shape() == Shape{4, 6});
  CHECK(b.data() == p);
  CHECK_FALSE(a.valid());
  PORTA_CHECK_RESULT(porta_test::compare_exact(b.to_vector(), h));
}

TEMPLATE_TEST_CASE("views", "[array]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  auto m = porta::zeros<T>({3, 5}, dev);
  const porta::View<T> v = m.view();
  CHECK(v.data == m.data());
  CHECK(v.size == 15);
  CHECK(v.rows == 3);
  CHECK(v.cols == 5);
  const auto& cm = m;
  const porta::View<const T> cv = cm.view();
  CHECK(cv.data == m.data());
  CHECK(cv.rows == 3);
  auto x = porta::zeros<T>({2, 3, 4}, dev);
  CHECK(x.view().rows == 1);
  CHECK(x.view().cols == 24);
  CHECK(x.view().size == 24);
  static_assert(std::is_trivially_copyable_v<porta::View<T>>);
  if (!dev.is_gpu() && !dev.is_strict()) {
    // On the CPU a view is host memory (cpu:strict's is not): (r, c) indexes row-major.
    auto a = porta::arange<T>(std::int64_t{15}, dev).reshaped({3, 5});
    auto av = a.view();
    CHECK(av(2, 3) == T(13));
    CHECK(av[7] == T(7));
  }
}

TEMPLATE_TEST_CASE("a moved-from array is an InvalidArgument naming the function", "[array][errors]",
                   PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  auto a = porta::ones<T>({4}, dev);
  Array<T> b = std::move(a);
  CHECK(b.valid());
  CHECK(b.size() == 4);
  CHECK_FALSE(a.valid());
  CHECK_FALSE(static_cast<bool>(a));
  CHECK(a.size() == 0);
  CHECK_THROWS_AS(a.to_vector(), porta::InvalidArgument);
  CHECK_THROWS_WITH(a.to_vector(), Contains("porta::Array::to_vector"));
  CHECK_THROWS_WITH(a.clone(), Contains("porta::Array::"));
  CHECK_THROWS_WITH(a.to(dev), Contains("porta::Array::to"));
  CHECK_THROWS_WITH(a.reshape({4}), Contains("porta::Array::reshape"));
  CHECK_THROWS_WITH(a.view(), Contains("porta::Array::view"));
  std::vector<T> h(4);
  CHECK_THROWS_WITH(a.copy_to_host(h.data()), Contains("porta::Array::copy_to_host"));
  CHECK_THROWS_WITH(a.copy_from_host(h.data()), Contains("porta::Array::copy_from_host"));
  CHECK_THROWS_AS(porta::sum(a), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::sum(a), Contains("porta::sum"));
  CHECK_THROWS_WITH(porta::add(a, b), Contains("porta::add"));
  CHECK_THROWS_WITH(porta::add(b, a), Contains("porta::add"));
  CHECK_THROWS_WITH(porta::exp(a), Contains("porta::exp"));
  CHECK_THROWS_WITH(porta::fill(a, T(1)), Contains("porta::fill"));
  CHECK_THROWS_WITH(porta::copy(b, a), Contains("porta::copy"));
  CHECK_THROWS_WITH(porta::axpy(T(2), a, b), Contains("porta::axpy"));
  CHECK_THROWS_WITH(porta::max(a), Contains("porta::max"));
  CHECK_THROWS_WITH((porta::cast<double>(a)), Contains("porta::cast"));
  const Array<T> null;
  CHECK_FALSE(null.valid());
  CHECK_THROWS_AS(null.to_vector(), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::transpose(null), porta::InvalidArgument);
  // Assigning to a moved-from array revives it.
  a = porta::full<T>({2}, T(3), dev);
  CHECK(a.valid());
  PORTA_CHECK_RESULT(porta_test::compare_exact(a.to_vector(), std::vector<T>{3, 3}));
  // b is untouched by all of the above
  PORTA_CHECK_RESULT(porta_test::compare_exact(b.to_vector(), std::vector<T>(4, T(1))));
}

TEST_CASE("zero-element arrays are valid", "[array]") {
  const Device dev = PORTA_TEST_DEVICE();
  auto a = porta::zeros<float>({0}, dev);
  CHECK(a.valid());
  CHECK(a.size() == 0);
  CHECK(a.to_vector().empty());
  auto b = a.clone();
  CHECK(b.valid());
  auto c = Array<double>(Shape{3, 0}, dev);
  CHECK(c.valid());
  CHECK(c.shape() == Shape{3, 0});
  CHECK(c.to_vector().empty());
}

// [oom]: the failed cudaMallocAsync/hipMallocAsync is the point, so under compute-sanitizer memcheck
// this test runs with --report-api-errors no (docs/testing.md); memory access checking stays on.
TEST_CASE("an impossible allocation is OutOfMemory and the next one works", "[array][errors][memory][oom]") {
  const Device dev = PORTA_TEST_DEVICE();
  const std::uint64_t bytes = std::uint64_t{1} << 50;  // 1 PiB
  const porta::MemoryStats before = porta::memory_stats(dev);
  bool thrown = false;
  try {
    Array<double> huge(Shape{static_cast<std::int64_t>(bytes / sizeof(double))}, dev);
  } catch (const porta::OutOfMemory& e) {
    thrown = true;
    INFO(e.what());
    CHECK(e.requested_bytes() == bytes);
    CHECK(e.device() == dev);
    CHECK(e.free_bytes() < bytes);
    CHECK_THAT(std::string(e.what()), Contains("porta::Array"));
  }
  CHECK(thrown);
  // OutOfMemory is a porta::Error
  CHECK_THROWS_AS(porta::zeros<float>({std::int64_t{1} << 48}, dev), porta::Error);
  const porta::MemoryStats after = porta::memory_stats(dev);
  CHECK(after.bytes_in_use == before.bytes_in_use);
  auto ok = porta::ones<double>({1000}, dev);
  CHECK(porta::sum(ok) == 1000.0);
}

TEST_CASE("memory_stats count live arrays", "[array][memory]") {
  const Device dev = PORTA_TEST_DEVICE();
  porta::synchronize(dev);
  const porta::MemoryStats s0 = porta::memory_stats(dev);
  CHECK(s0.peak_bytes_in_use >= s0.bytes_in_use);
  CHECK(s0.bytes_reserved >= s0.bytes_in_use);
  {
    auto a = porta::zeros<double>({1 << 20}, dev);  // 8 MiB
    auto b = porta::zeros<float>({12345}, dev);
    const porta::MemoryStats s1 = porta::memory_stats(dev);
    INFO("in use " << s0.bytes_in_use << " -> " << s1.bytes_in_use);
    CHECK(s1.bytes_in_use >= s0.bytes_in_use + a.nbytes() + b.nbytes());
    CHECK(s1.bytes_reserved >= s1.bytes_in_use);
    CHECK(s1.peak_bytes_in_use >= s1.bytes_in_use);
    CHECK(s1.alloc_count >= s0.alloc_count + 2);
  }
  porta::synchronize(dev);
  const porta::MemoryStats s2 = porta::memory_stats(dev);
  CHECK(s2.bytes_in_use == s0.bytes_in_use);
  CHECK(s2.peak_bytes_in_use >= s0.bytes_in_use + (std::uint64_t{8} << 20));
  porta::empty_cache(dev);
  const porta::MemoryStats s3 = porta::memory_stats(dev);
  CHECK(s3.bytes_in_use == s0.bytes_in_use);
  CHECK(s3.bytes_reserved <= s2.bytes_reserved);
}
