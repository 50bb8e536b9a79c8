// SPDX-License-Identifier: Apache-2.0
// porta/kokkos.hpp against a real Kokkos (Debian's Serial build in CI): Views written by Kokkos read
// by porta with the bits porta promises, porta's results read by Kokkos, the layouts, ranks and
// devices that are refused and how, and who keeps the memory alive.
//
// Every test case runs once per device under test (PORTA_TEST_DEVICES). Kokkos' HostSpace is the
// memory of porta's CPU device, so the data checks run where the device is the plain CPU; on
// cpu:strict and on GPUs each test case checks instead that the wrap is refused as the header
// documents (a Serial Kokkos has no GPU memory to hand over).
#include <Kokkos_Core.hpp>

#include "porta/kokkos.hpp"
#include "porta/math.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "support/support.hpp"

#define PORTA_TEST_TYPES float, double, std::int32_t, std::int64_t

namespace {

using porta::Array;
using porta::Device;
using porta::Shape;
using porta_test::Contains;
namespace ref = porta_test::ref;

template <class T>
using HostView1 = Kokkos::View<T*, Kokkos::LayoutRight, Kokkos::HostSpace>;
template <class T>
using HostView2 = Kokkos::View<T**, Kokkos::LayoutRight, Kokkos::HostSpace>;
template <class T>
using Unmanaged1 = Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using Range = Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::IndexType<std::int64_t>>;

// A View of h.size() elements written by a Kokkos parallel_for (from the host vector h), fenced.
template <class T>
HostView1<T> kokkos_written(const char* label, const std::vector<T>& h) {
  const auto n = static_cast<std::int64_t>(h.size());
  HostView1<T> v(std::string(label), h.size());
  const Unmanaged1<T> src(h.data(), h.size());
  Kokkos::parallel_for(
      label, Range(0, n), KOKKOS_LAMBDA(std::int64_t i) { v(i) = src(i); });
  Kokkos::fence();  // docs/interop.md: Kokkos' writes land before porta reads them
  return v;
}

// On a device that cannot hold HostSpace memory, the wrap is refused: cpu:strict as
// Array::borrow refuses host memory there (naming from_kokkos), a GPU with a DeviceMismatch.
template <class ViewT>
void check_refused(const ViewT& v, Device dev) {
  INFO("device " << dev.to_string());
  if (dev.is_strict()) {
    CHECK_THROWS_AS(porta::from_kokkos(v, dev), porta::InvalidArgument);
    CHECK_THROWS_WITH(porta::from_kokkos(v, dev),
                      Contains("porta::from_kokkos") && Contains("cpu:strict can only borrow its own device memory"));
  } else {
    CHECK_THROWS_AS(porta::from_kokkos(v, dev), porta::DeviceMismatch);
    CHECK_THROWS_WITH(porta::from_kokkos(v, dev), Contains("Kokkos::HostSpace") && Contains("wrap it on cpu"));
  }
}

}  // namespace

TEMPLATE_TEST_CASE("a View written by Kokkos is summed by porta in the canonical order", "[interop][kokkos]",
                   PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (std::int64_t n : {std::int64_t(0), std::int64_t(1), std::int64_t(1000), std::int64_t(100003)}) {
    INFO("n = " << n);
    const auto h = porta_test::nonzero<T>(rng, n);
    const auto v = kokkos_written<T>("x", h);
    if (!dev.host_accessible()) {
      if (n > 0) check_refused(v, dev);  // an empty View has no memory to refuse
      continue;
    }
    const Array<T> x = porta::from_kokkos(v, dev);
    CHECK(x.device() == dev);
    CHECK(x.shape() == Shape{n});
    CHECK(x.data() == v.data());  // no copy
    CHECK(x.borrowed());
    const T got = porta::sum(x);
    // The sum of nothing is +0 (NumPy's), not the reference's -0.0 identity.
    const T want = n == 0 ? T(0) : ref::reduce(h, ref::Op::sum);
    CHECK(porta_test::same_bits(got, want));
  }
}

TEMPLATE_TEST_CASE("porta writes a map into a wrapped View that Kokkos then reads", "[interop][kokkos]",
                   PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t n = 4099;
  const auto hx = porta_test::nonzero<T>(rng, n);
  const auto hy = porta_test::nonzero<T>(rng, n);
  const auto x = kokkos_written<T>("x", hx);
  const auto y = kokkos_written<T>("y", hy);
  HostView1<T> out("out", static_cast<std::size_t>(n));
  Kokkos::deep_copy(out, porta_test::poison<T>());
  Kokkos::fence();
  if (!dev.host_accessible()) return check_refused(out, dev);

  Array<T> pout = porta::from_kokkos(out, dev);
  porta::add(porta::from_kokkos(x, dev), porta::from_kokkos(y, dev), pout);
  porta::synchronize(dev);  // docs/interop.md: porta's writes land before Kokkos reads them

  std::vector<T> want(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = ref::add(hx[i], hy[i]);
  // Kokkos reads the result: the number of elements that differ from the host reference in bits.
  const Unmanaged1<T> w(want.data(), want.size());
  std::int64_t differ = -1;
  Kokkos::parallel_reduce(
      "check", Range(0, n),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t & bad) { bad += porta_test::same_bits(out(i), w(i)) ? 0 : 1; },
      differ);
  CHECK(differ == 0);
  std::vector<T> got(out.data(), out.data() + n);
  PORTA_CHECK_RESULT(porta_test::compare_exact(got, want));
}

TEMPLATE_TEST_CASE("matmul of 2-D Views with porta's fixed order, read back by Kokkos", "[interop][kokkos]", float,
                   double) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t m = 37, k = 70, n = 19;
  const auto ha = porta_test::nonzero<T>(rng, m * k);
  const auto hb = porta_test::nonzero<T>(rng, k * n);
  HostView2<T> a("a", m, k), b("b", k, n);
  const Unmanaged1<T> sa(ha.data(), ha.size()), sb(hb.data(), hb.size());
  Kokkos::parallel_for(
      "fill a", Range(0, m * k), KOKKOS_LAMBDA(std::int64_t i) { a(i / k, i % k) = sa(i); });
  Kokkos::parallel_for(
      "fill b", Range(0, k * n), KOKKOS_LAMBDA(std::int64_t i) { b(i / n, i % n) = sb(i); });
  Kokkos::fence();
  if (!dev.host_accessible()) return check_refused(a, dev);

  const Array<T> pa = porta::from_kokkos(a, dev);
  CHECK(pa.shape() == Shape{m, k});
  const Array<T> pc = porta::matmul(pa, porta::from_kokkos(b, dev),
                                    porta::MatmulOptions{porta::Precision::highest, porta::GemmAlgorithm::own});
  porta::synchronize(dev);
  const auto c = porta::to_kokkos<2, Kokkos::HostSpace>(pc);
  static_assert(std::is_same_v<typename decltype(c)::value_type, const T>, "a const Array gives a View of const T");
  REQUIRE(c.extent(0) == static_cast<std::size_t>(m));
  REQUIRE(c.extent(1) == static_cast<std::size_t>(n));
  CHECK(c.data() == pc.data());

  // docs/determinism.md, "Matrix products": one FMA chain over k in order from +0 per element.
  std::vector<T> want(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      T s = T(0);
      for (std::int64_t p = 0; p < k; ++p)
        s = porta::math::fma(ha[static_cast<std::size_t>(i * k + p)], hb[static_cast<std::size_t>(p * n + j)], s);
      want[static_cast<std::size_t>(i * n + j)] = s;
    }
  std::vector<T> got(static_cast<std::size_t>(m * n), porta_test::poison<T>());
  const Kokkos::View<T**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> g(got.data(),
                                                                                                             m, n);
  Kokkos::parallel_for(
      "read c", Range(0, m * n), KOKKOS_LAMBDA(std::int64_t i) { g(i / n, i % n) = c(i / n, i % n); });
  Kokkos::fence();
  PORTA_CHECK_RESULT(porta_test::compare_exact(got, want));
}

TEMPLATE_TEST_CASE("a porta Array exported to Kokkos is read by parallel_reduce", "[interop][kokkos]",
                   PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const std::int64_t rows = 61, cols = 33;
  const auto h = porta_test::nonzero<T>(rng, rows * cols);
  Array<T> x = Array<T>::from(h, Shape{rows, cols}, dev);
  if (!dev.host_accessible()) {
    // cpu:strict's memory is device memory, a GPU's is no Kokkos space of a Serial build.
    CHECK_THROWS_AS((porta::to_kokkos<2, Kokkos::HostSpace>(x)), porta::DeviceMismatch);
    CHECK_THROWS_WITH((porta::to_kokkos<2, Kokkos::HostSpace>(x)), Contains("Kokkos::HostSpace"));
    return;
  }
  porta::synchronize(dev);
  const auto v = porta::to_kokkos<2, Kokkos::HostSpace>(x);
  static_assert(std::is_same_v<typename decltype(v)::value_type, T>, "a mutable Array gives a mutable View");
  CHECK(v.use_count() == 0);  // unmanaged: the Array owns the memory
  REQUIRE(v.extent(0) == static_cast<std::size_t>(rows));
  REQUIRE(v.extent(1) == static_cast<std::size_t>(cols));
  CHECK(v.data() == x.data());

  // Element by element against the host copy, then a sum in double: both read by Kokkos.
  const Unmanaged1<T> hv(h.data(), h.size());
  std::int64_t differ = -1;
  Kokkos::parallel_reduce(
      "compare", Range(0, rows * cols),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t & bad) {
        bad += porta_test::same_bits(v(i / cols, i % cols), hv(i)) ? 0 : 1;
      },
      differ);
  CHECK(differ == 0);
  double total = 0;
  Kokkos::parallel_reduce(
      "sum", Range(0, rows * cols),
      KOKKOS_LAMBDA(std::int64_t i, double& s) { s += static_cast<double>(v(i / cols, i % cols)); }, total);
  long double want = 0, mag = 0;
  for (T e : h) {
    want += static_cast<long double>(e);
    mag += std::fabs(static_cast<long double>(e));
  }
  CHECK(std::fabs(static_cast<long double>(total) - want) <= porta_test::sum_tolerance<double>(rows * cols, mag));

  // Kokkos writes through the View; porta sees it after the fence.
  Kokkos::parallel_for(
      "scale", Range(0, rows), KOKKOS_LAMBDA(std::int64_t i) { v(i, 0) = T(7); });
  Kokkos::fence();
  CHECK(x.item(rows - 1, 0) == T(7));
  // Rank 1 of a reshaped view, rank 0 of a one-element array.
  Array<T> xflat = x.reshaped({rows * cols});  // a named view: the exported View must not outlive it
  const auto flat = porta::to_kokkos<1, Kokkos::HostSpace>(xflat);
  CHECK(flat.extent(0) == static_cast<std::size_t>(rows * cols));
  auto one = porta::full<T>(Shape{}, T(3), dev);
  CHECK(porta::to_kokkos<0, Kokkos::HostSpace>(one)() == T(3));
}

TEST_CASE("layouts, ranks and strides porta cannot read as they are are named errors", "[interop][kokkos]") {
  const Device dev = PORTA_TEST_DEVICE();
  if (!dev.host_accessible()) return;  // the refusals of those devices: the test cases above
  constexpr std::size_t m = 4, n = 6;

  // Column-major: LayoutLeft of rank 2 is refused whatever its shape; of rank 1 it is plain memory.
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> left("left", m, n);
  CHECK_THROWS_AS(porta::from_kokkos(left, dev), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::from_kokkos(left, dev), Contains("Kokkos::LayoutLeft View of rank 2") &&
                                                       Contains("\"left\"") && Contains("column-major") &&
                                                       Contains("deep_copy"));
  Kokkos::View<double*, Kokkos::LayoutLeft, Kokkos::HostSpace> left1("left1", m);
  CHECK(porta::from_kokkos(left1, dev).shape() == Shape{static_cast<std::int64_t>(m)});

  // A column of a LayoutRight matrix is a LayoutStride View with gaps; a row is contiguous.
  HostView2<double> right("right", m, n);
  const auto column = Kokkos::subview(right, Kokkos::ALL, 2);
  CHECK_THROWS_AS(porta::from_kokkos(column, dev), porta::InvalidArgument);
  CHECK_THROWS_WITH(porta::from_kokkos(column, dev), Contains("not contiguous row-major") && Contains("deep_copy") &&
                                                         Contains("LayoutRight View first"));
  const auto row = Kokkos::subview(right, 1, Kokkos::ALL);
  const Array<double> prow = porta::from_kokkos(row, dev);
  CHECK(prow.shape() == Shape{static_cast<std::int64_t>(n)});
  CHECK(prow.data() == &right(1, 0));
  // A LayoutStride View with row-major strides is contiguous and accepted.
  const std::size_t dims[] = {m, n};
  const int order[] = {1, 0};  // the last index fastest
  Kokkos::View<double**, Kokkos::LayoutStride, Kokkos::HostSpace> strided(
      "strided", Kokkos::LayoutStride::order_dimensions(2, order, dims));
  CHECK(porta::from_kokkos(strided, dev).shape() == Shape{4, 6});
  // 3-D: the extents become the shape.
  Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::HostSpace> cube("cube", 2, 3, 5);
  CHECK(porta::from_kokkos(cube, dev).shape() == Shape{2, 3, 5});

  // A GPU device for HostSpace memory.
  CHECK_THROWS_AS(porta::from_kokkos(right, Device(porta::DeviceType::cuda, 0)), porta::DeviceMismatch);

  // Exports: the rank must match; strided views need a copy first.
  auto x = porta::zeros<double>(Shape{3, 4}, dev);
  CHECK_THROWS_AS((porta::to_kokkos<1, Kokkos::HostSpace>(x)), porta::InvalidArgument);
  CHECK_THROWS_WITH((porta::to_kokkos<1, Kokkos::HostSpace>(x)),
                    Contains("porta::to_kokkos") && Contains("3x4 (rank 2)") && Contains("to_kokkos<2>"));
  const Array<double> column_view = x.col(1);
  CHECK_THROWS_AS((porta::to_kokkos<1, Kokkos::HostSpace>(column_view)), porta::InvalidArgument);
  CHECK_THROWS_WITH((porta::to_kokkos<1, Kokkos::HostSpace>(column_view)), Contains("contiguous"));
  const Array<double> packed = x.col(1).contiguous();
  CHECK((porta::to_kokkos<1, Kokkos::HostSpace>(packed)).extent(0) == 3);
  Array<double> moved = std::move(x);
  CHECK_THROWS_AS((porta::to_kokkos<2, Kokkos::HostSpace>(x)), porta::InvalidArgument);  // NOLINT: moved from
}

TEST_CASE("the porta Array keeps the Kokkos allocation alive, and lets it go", "[interop][kokkos]") {
  const Device dev = PORTA_TEST_DEVICE();
  if (!dev.host_accessible()) return;
  PORTA_RNG(rng);
  const auto h = porta_test::nonzero<double>(rng, 5000);
  auto v = kokkos_written<double>("kept", h);
  const auto probe = v;  // a second holder, to watch the count once v is gone
  REQUIRE(v.use_count() == 2);
  Array<double> x = porta::from_kokkos(v, dev);
  CHECK(v.use_count() == 3);  // porta holds one reference
  {
    const Array<double> half = x.slice({{0, 2500}});  // a view of x shares porta's one reference
    CHECK(v.use_count() == 3);
    const Array<double> again = porta::from_kokkos(v, dev);  // a second wrap holds its own
    CHECK(v.use_count() == 4);
  }
  CHECK(v.use_count() == 3);
  v = HostView1<double>();  // the user's View goes out of scope
  CHECK(probe.use_count() == 2);
  CHECK(porta_test::same_bits(porta::sum(x), ref::reduce(h, ref::Op::sum)));  // still readable
  x = Array<double>();
  CHECK(probe.use_count() == 1);  // porta let go of it

  // An unmanaged View: nothing to hold, the caller keeps the memory.
  std::vector<double> mine(10, 1.5);
  const Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> u(mine.data(), mine.size());
  CHECK(porta::sum(porta::from_kokkos(u, dev)) == 15.0);
}

TEST_CASE("HostSpace Views go to the default device when it is a CPU device", "[interop][kokkos]") {
  const Device dev = PORTA_TEST_DEVICE();
  HostView1<float> v("v", 8);
  struct Restore {
    Device before = porta::default_device();
    ~Restore() { porta::set_default_device(before); }
  } restore;
  porta::set_default_device(dev);
  if (dev.is_strict()) {
    CHECK_THROWS_WITH(porta::from_kokkos(v), Contains("porta::from_kokkos") && Contains("cpu:strict"));
  } else {
    // The default device when it is a CPU device, else the plain CPU.
    CHECK(porta::from_kokkos(v).device() == (dev.host_accessible() ? dev : Device(porta::DeviceType::cpu, 0)));
  }
}
