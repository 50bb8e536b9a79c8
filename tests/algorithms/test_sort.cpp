// SPDX-License-Identifier: Apache-2.0
// sort, argsort, sort_by_key, argmax and argmin: every dtype on every device,
// against std::stable_sort and a first-index scan on the host with porta's order written from its
// definition (not from porta/detail/sort_key.hpp): NaN after +inf, every NaN equal, -0.0 below
// +0.0. Inputs are fresh random numbers with many duplicates, NaNs of both signs and other
// payloads, infinities, signed zeros, subnormals and the integer extremes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::Shape;
using porta::SortOrder;
using porta_test::Contains;

#define PORTA_TEST_TYPES float, double, std::int32_t, std::int64_t

// The error's type and its message.
#define CHECK_THROWS_TYPED(expr, Type, matcher) \
  do {                                          \
    CHECK_THROWS_AS(expr, Type);                \
    CHECK_THROWS_WITH(expr, matcher);           \
  } while (0)

namespace {

const std::int64_t kSizes[] = {0, 1, 2, 3, 17, 255, 256, 257, 1000, 4097, 65537, (1 << 20) + 3};

template <class T>
T nan_with(bool negative, std::uint64_t payload) {
  using B = porta_test::bits_t<T>;
  B b = porta_test::bits(std::numeric_limits<T>::quiet_NaN());
  b |= static_cast<B>(payload & 0xff);
  if (negative) b |= B(1) << (8 * sizeof(T) - 1);
  T x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// Many duplicates (a small range) with the special values sprinkled in, or a wide range.
template <class T>
std::vector<T> sort_inputs(porta_test::Rng& rng, std::int64_t n, bool wide) {
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) {
    if constexpr (std::is_floating_point_v<T>) {
      if (wide) {
        x = T(rng.uniform<double>(-1, 1) * std::pow(10.0, rng.uniform<double>(-30, 30)));
      } else {
        x = T(rng.uniform<int>(-40, 40)) / T(4);
      }
    } else {
      x = wide ? rng.uniform<T>(std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max())
               : T(rng.uniform<int>(-40, 40));
    }
  }
  if (n == 0) return v;
  std::vector<T> specials;
  if constexpr (std::is_floating_point_v<T>) {
    specials = {std::numeric_limits<T>::quiet_NaN(),
                nan_with<T>(true, 0),
                nan_with<T>(false, 5),
                nan_with<T>(true, 9),
                std::numeric_limits<T>::infinity(),
                -std::numeric_limits<T>::infinity(),
                T(0),
                T(-0.0),
                std::numeric_limits<T>::denorm_min(),
                -std::numeric_limits<T>::denorm_min(),
                std::numeric_limits<T>::max(),
                std::numeric_limits<T>::lowest()};
  } else {
    specials = {std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max(), T(0), T(-1)};
  }
  const std::int64_t count = std::min<std::int64_t>(n, 1 + n / 50);
  for (std::int64_t k = 0; k < count; ++k)
    v[static_cast<std::size_t>(rng.index(n))] = specials[rng.index(specials.size())];
  return v;
}

// porta's order, from its definition.
template <class T>
bool ref_less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
    if (a == b) return std::signbit(a) && !std::signbit(b);
  }
  return a < b;
}
// Descending, stable, NaN still last.
template <class T>
bool ref_greater(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return ref_less(b, a);
}

template <class T>
std::vector<std::int64_t> ref_argsort(const std::vector<T>& x, SortOrder order) {
  std::vector<std::int64_t> idx(x.size());
  std::iota(idx.begin(), idx.end(), std::int64_t(0));
  std::stable_sort(idx.begin(), idx.end(), [&](std::int64_t a, std::int64_t b) {
    const T xa = x[static_cast<std::size_t>(a)], xb = x[static_cast<std::size_t>(b)];
    return order == SortOrder::ascending ? ref_less(xa, xb) : ref_greater(xa, xb);
  });
  return idx;
}

template <class T, class I>
std::vector<T> gather(const std::vector<T>& x, const std::vector<I>& idx) {
  std::vector<T> r;
  r.reserve(idx.size());
  for (I i : idx) r.push_back(x[static_cast<std::size_t>(i)]);
  return r;
}

// Bit-exact, except that every NaN of `ref` must be the canonical quiet NaN in `got`.
template <class T>
porta_test::Result compare_sorted(const std::vector<T>& got, const std::vector<T>& ref) {
  return porta_test::compare_with(
      got.size(), ref.size(),
      [&](std::size_t i) {
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(ref[i]))
            return porta_test::same_bits(got[i], std::numeric_limits<T>::quiet_NaN()) && !std::signbit(got[i]);
        }
        return porta_test::same_bits(got[i], ref[i]);
      },
      [&](std::size_t i) { return "got " + porta_test::show(got[i]) + ", expected " + porta_test::show(ref[i]); });
}

const char* order_name(SortOrder o) {
  return o == SortOrder::ascending ? "ascending" : "descending";
}

template <class K, class V>
void check_sort_by_key(porta_test::Rng& rng, Device dev, const std::vector<K>& keys, SortOrder order) {
  const std::int64_t n = static_cast<std::int64_t>(keys.size());
  INFO("values " << porta_test::show(V(0)) << " of " << sizeof(V) << " bytes");
  const auto vals = porta_test::uniform<V>(rng, n, V(-1000), V(1000));
  porta_test::poison_pool<K>(n, dev);
  porta_test::poison_pool<V>(n, dev);
  const auto kd = Array<K>::from(keys, dev);
  const auto vd = Array<V>::from(vals, dev);
  auto [ks, vs] = porta::sort_by_key(kd, vd, order);
  const auto idx = ref_argsort(keys, order);
  PORTA_CHECK_RESULT(compare_sorted(ks.to_vector(), gather(keys, idx)));
  PORTA_CHECK_RESULT(porta_test::compare_exact(vs.to_vector(), gather(vals, idx)));
}

}  // namespace

TEMPLATE_TEST_CASE("sort, argsort and sort_by_key equal std::stable_sort in porta's order", "[sort]",
                   PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (const SortOrder order : {SortOrder::ascending, SortOrder::descending}) {
    for (const bool wide : {false, true}) {
      for (const std::int64_t n : kSizes) {
        INFO(order_name(order) << (wide ? ", wide" : ", duplicates") << ", n = " << n << " on " << dev.to_string());
        const auto h = sort_inputs<T>(rng, n, wide);
        const auto x = Array<T>::from(h, dev);
        const auto idx = ref_argsort(h, order);
        porta_test::poison_pool<T>(n, dev);
        const Array<T> s = porta::sort(x, order);
        CHECK(s.shape() == x.shape());
        PORTA_CHECK_RESULT(compare_sorted(s.to_vector(), gather(h, idx)));
        porta_test::poison_pool<std::int64_t>(n, dev);
        const Array<std::int64_t> a = porta::argsort(x, order);
        CHECK(a.shape() == x.shape());
        PORTA_CHECK_RESULT(porta_test::compare_exact(a.to_vector(), idx));
        // the input is untouched
        PORTA_CHECK_RESULT(porta_test::compare_exact(x.to_vector(), h));
        if (n <= 4097) {
          check_sort_by_key<T, float>(rng, dev, h, order);
          check_sort_by_key<T, double>(rng, dev, h, order);
          check_sort_by_key<T, std::int32_t>(rng, dev, h, order);
          check_sort_by_key<T, std::int64_t>(rng, dev, h, order);
        } else {
          check_sort_by_key<T, std::int32_t>(rng, dev, h, order);
        }
      }
    }
  }
}

namespace {

// Key patterns that load the CPU sort's write-combining lines unevenly: one bucket holding almost
// every key, keys spread over every bucket, long runs of one bucket (sorted either way), two
// buckets taking turns.
enum class Pattern { one_bucket, every_bucket, ascending, descending, alternating };

const char* pattern_name(Pattern p) {
  switch (p) {
    case Pattern::one_bucket:
      return "one bucket";
    case Pattern::every_bucket:
      return "every bucket";
    case Pattern::ascending:
      return "ascending";
    case Pattern::descending:
      return "descending";
    case Pattern::alternating:
      return "alternating";
  }
  return "?";
}

template <class T>
std::vector<T> pattern_inputs(porta_test::Rng& rng, std::int64_t n, Pattern p) {
  if (p == Pattern::every_bucket) return sort_inputs<T>(rng, n, true);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    T& x = v[static_cast<std::size_t>(i)];
    switch (p) {
      case Pattern::one_bucket:
        x = rng.index(1000) == 0 ? T(rng.uniform<int>(-300, 300)) : T(7);
        break;
      case Pattern::ascending:
        x = T(i % (1 << 22));
        break;
      case Pattern::descending:
        x = T((n - i) % (1 << 22));
        break;
      case Pattern::alternating:
        x = i % 2 ? T(1) : T(258);
        break;
      case Pattern::every_bucket:
        break;
    }
  }
  return v;
}

}  // namespace

// Sizes about the CPU sort's line flushes (a line is 64 bytes: 16 or 8 keys; 256 of them per
// thread), large enough for 2 and 3 threads, and beyond 8 MiB, where the sort scatters through its
// lines (and streams them) with buckets filling them unevenly as the patterns make them.
TEMPLATE_TEST_CASE("sort and argsort stay stable whatever the buckets' sizes and the thread count", "[sort][buckets]",
                   PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  constexpr std::int64_t kLineKeys = 64 / sizeof(T);
  const std::int64_t big = (std::int64_t(8) << 20) / std::int64_t(sizeof(T)) + 7;
  porta_test::for_each_thread_count({1, 2, 3}, [&](int threads) {
    for (const Pattern p :
         {Pattern::one_bucket, Pattern::every_bucket, Pattern::ascending, Pattern::descending, Pattern::alternating}) {
      std::vector<std::int64_t> sizes = {
          kLineKeys - 1,       kLineKeys,       kLineKeys + 1,       2 * kLineKeys + 3,
          256 * kLineKeys - 1, 256 * kLineKeys, 256 * kLineKeys + 1, (std::int64_t(3) << 16) + 1};
      sizes.push_back(big);
      for (const std::int64_t n : sizes) {
        INFO(pattern_name(p) << ", n = " << n << ", " << threads << " threads on " << dev.to_string());
        const auto h = pattern_inputs<T>(rng, n, p);
        const auto x = Array<T>::from(h, dev);
        const SortOrder order = rng.coin() ? SortOrder::ascending : SortOrder::descending;
        const auto idx = ref_argsort(h, order);
        porta_test::poison_pool<T>(n, dev);
        PORTA_CHECK_RESULT(compare_sorted(porta::sort(x, order).to_vector(), gather(h, idx)));
        porta_test::poison_pool<std::int64_t>(n, dev);
        PORTA_CHECK_RESULT(porta_test::compare_exact(porta::argsort(x, order).to_vector(), idx));
        if (n < big) check_sort_by_key<T, std::int32_t>(rng, dev, h, order);
      }
    }
  });
}

TEMPLATE_TEST_CASE("sort agrees with min and max bit for bit; argmax and argmin point at them", "[sort][argmax]",
                   PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (const std::int64_t n : {1, 5, 1000, 70001}) {
    INFO("n = " << n);
    // Signed zeros among other values, no NaN: porta::min and max order -0.0 below +0.0 too.
    auto h = sort_inputs<T>(rng, n, false);
    for (auto& v : h)
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(v)) v = rng.coin() ? T(0) : T(-0.0);
      }
    const auto x = Array<T>::from(h, dev);
    const auto s = porta::sort(x).to_vector();
    CHECK(porta_test::same_bits(s.front(), porta::min(x)));
    CHECK(porta_test::same_bits(s.back(), porta::max(x)));
    CHECK(porta_test::same_bits(h[static_cast<std::size_t>(porta::argmax(x))], porta::max(x)));
    CHECK(porta_test::same_bits(h[static_cast<std::size_t>(porta::argmin(x))], porta::min(x)));
  }
}

TEST_CASE("sort: the documented examples", "[sort]") {
  const Device dev = PORTA_TEST_DEVICE();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto x = Array<float>::from({3.f, nan, -1.f, 3.f, -0.f, 0.f, -nan}, dev);
  const auto s = porta::sort(x).to_vector();
  CHECK(s[0] == -1.f);
  CHECK((std::signbit(s[1]) && s[1] == 0.f));
  CHECK((!std::signbit(s[2]) && s[2] == 0.f));
  CHECK((s[3] == 3.f && s[4] == 3.f && std::isnan(s[5]) && std::isnan(s[6])));
  CHECK(porta::argsort(x).to_vector() == std::vector<std::int64_t>{2, 4, 5, 0, 3, 1, 6});
  CHECK(porta::argsort(x, SortOrder::descending).to_vector() == std::vector<std::int64_t>{0, 3, 5, 4, 2, 1, 6});
  CHECK(porta::argmax(x) == 1);  // the first NaN wins
  CHECK(porta::argmin(x) == 1);
  const auto k = Array<std::int32_t>::from({2, 1, 2, 0}, dev);
  const auto v = Array<double>::from({0.5, 1.5, 2.5, 3.5}, dev);
  auto [ks, vs] = porta::sort_by_key(k, v);
  CHECK(ks.to_vector() == std::vector<std::int32_t>{0, 1, 2, 2});
  CHECK(vs.to_vector() == std::vector<double>{3.5, 1.5, 0.5, 2.5});
}

// ---- argmax / argmin ------------------------------------------------------------------------------
namespace {

// Is a better than b for argmax (IsMax) or argmin? NaN beats everything; -0.0 is below +0.0.
template <class T>
bool ref_better(T a, T b, bool is_max) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(b)) return false;
    if (std::isnan(a)) return true;
  }
  return is_max ? ref_less(b, a) : ref_less(a, b);
}

// First best index along the middle axis of h viewed as [outer, n, inner].
template <class T>
std::vector<std::int64_t> ref_arg(const std::vector<T>& h, std::int64_t outer, std::int64_t n, std::int64_t inner,
                                  bool is_max) {
  std::vector<std::int64_t> r(static_cast<std::size_t>(outer * inner));
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      std::int64_t best = 0;
      for (std::int64_t j = 1; j < n; ++j)
        if (ref_better(h[static_cast<std::size_t>((o * n + j) * inner + i)],
                       h[static_cast<std::size_t>((o * n + best) * inner + i)], is_max))
          best = j;
      r[static_cast<std::size_t>(o * inner + i)] = best;
    }
  }
  return r;
}

}  // namespace

TEMPLATE_TEST_CASE("argmax and argmin: the first best index, the first NaN winning", "[argmax]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  for (const std::int64_t n : {1, 2, 255, 4096, 4097, 100000, (1 << 21) + 7}) {
    for (const bool wide : {false, true}) {
      INFO("n = " << n << (wide ? ", wide" : ", duplicates") << " on " << dev.to_string());
      auto h = sort_inputs<T>(rng, n, wide);
      if constexpr (std::is_floating_point_v<T>) {
        // Also without NaN, so that the numbers themselves decide.
        if (rng.coin())
          for (auto& v : h)
            if (std::isnan(v)) v = T(1);
      }
      const auto x = Array<T>::from(h, dev);
      CHECK(porta::argmax(x) == ref_arg(h, 1, n, 1, true)[0]);
      CHECK(porta::argmin(x) == ref_arg(h, 1, n, 1, false)[0]);
    }
  }
  // Ties: the first of equal elements; an all-equal array gives 0.
  const auto same = Array<T>::from(std::vector<T>(50000, T(7)), dev);
  CHECK(porta::argmax(same) == 0);
  CHECK(porta::argmin(same) == 0);
}

TEMPLATE_TEST_CASE("argmax and argmin along an axis", "[argmax][axis]", PORTA_TEST_TYPES) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  struct Case {
    Shape shape;
    int axis;
  };
  const Case cases[] = {{Shape{7}, 0},          {Shape{3, 5}, 0},       {Shape{3, 5}, 1},        {Shape{3, 5}, -1},
                        {Shape{1000, 10}, 1},   {Shape{10, 1000}, 0},   {Shape{2, 30000}, 1},    {Shape{4, 33, 5}, 1},
                        {Shape{2, 3, 4, 5}, 2}, {Shape{2, 3, 4, 5}, 3}, {Shape{2, 3, 4, 5}, -4}, {Shape{3, 70001}, -1}};
  for (const Case& c : cases) {
    INFO("shape " << c.shape.to_string() << ", axis " << c.axis << " on " << dev.to_string());
    const int rank = c.shape.rank(), ax = c.axis < 0 ? c.axis + rank : c.axis;
    std::int64_t outer = 1, inner = 1;
    std::vector<std::int64_t> dims;
    for (int d = 0; d < rank; ++d) {
      if (d < ax) outer *= c.shape[d];
      if (d > ax) inner *= c.shape[d];
      if (d != ax) dims.push_back(c.shape[d]);
    }
    const auto h = sort_inputs<T>(rng, c.shape.size(), rng.coin());
    const auto x = Array<T>::from(h, c.shape, dev);
    for (const bool is_max : {true, false}) {
      porta_test::poison_pool<std::int64_t>(outer * inner, dev);
      const auto got = is_max ? porta::argmax(x, c.axis) : porta::argmin(x, c.axis);
      CHECK(got.rank() == rank - 1);
      for (int d = 0; d + 1 < rank; ++d) CHECK(got.dim(d) == dims[static_cast<std::size_t>(d)]);
      PORTA_CHECK_RESULT(porta_test::compare_exact(got.to_vector(), ref_arg(h, outer, c.shape[ax], inner, is_max)));
    }
  }
  // An empty result needs no elements; an empty axis with a non-empty result is an error.
  const auto e = Array<T>::from(std::vector<T>{}, Shape{0, 3}, dev);
  CHECK(porta::argmax(e, 1).size() == 0);
  CHECK_THROWS_AS(porta::argmax(e, 0), porta::InvalidArgument);
}

TEST_CASE("sort and argmax: bad arguments are typed errors naming the function and the values", "[sort][bad-input]") {
  const Device dev = PORTA_TEST_DEVICE();
  const auto m = Array<float>::from(std::vector<float>(12, 1.f), Shape{3, 4}, dev);
  CHECK_THROWS_TYPED(porta::sort(m), porta::InvalidArgument, Contains("porta::sort") && Contains("3x4"));
  CHECK_THROWS_TYPED(porta::argsort(m), porta::InvalidArgument, Contains("porta::argsort") && Contains("3x4"));
  const auto k = Array<float>::from(std::vector<float>(5, 1.f), dev);
  const auto v = Array<std::int32_t>::from(std::vector<std::int32_t>(4, 1), dev);
  CHECK_THROWS_TYPED(porta::sort_by_key(k, v), porta::InvalidArgument,
                     Contains("porta::sort_by_key") && Contains("keys is 5") && Contains("values is 4"));
  const auto empty = Array<double>::from(std::vector<double>{}, dev);
  CHECK_THROWS_TYPED(porta::argmax(empty), porta::InvalidArgument, Contains("porta::argmax") && Contains("empty"));
  CHECK_THROWS_TYPED(porta::argmin(empty), porta::InvalidArgument, Contains("porta::argmin") && Contains("empty"));
  CHECK_THROWS_TYPED(porta::argmax(m, 2), porta::InvalidArgument,
                     Contains("porta::argmax") && Contains("axis 2") && Contains("2-D"));
  const auto e = Array<float>::from(std::vector<float>{}, Shape{3, 0}, dev);
  CHECK_THROWS_TYPED(porta::argmin(e, 1), porta::InvalidArgument,
                     Contains("porta::argmin") && Contains("empty axis 1") && Contains("3x0"));
  // Empty and one-element sorts are fine.
  CHECK(porta::sort(empty).size() == 0);
  CHECK(porta::argsort(empty).size() == 0);
  CHECK(porta::sort(Array<double>::from({-0.0}, dev)).to_vector()[0] == 0.0);
  Array<float> moved = Array<float>::from({1.f}, dev);
  Array<float> taken = std::move(moved);
  CHECK_THROWS_AS(porta::sort(moved), porta::InvalidArgument);
  CHECK_THROWS_AS(porta::argmax(moved), porta::InvalidArgument);
  if (const auto pair = porta_test::two_devices()) {
    const auto a = Array<float>::from({1.f, 2.f}, pair->first);
    const auto b = Array<float>::from({1.f, 2.f}, pair->second);
    CHECK_THROWS_AS(porta::sort_by_key(a, b), porta::DeviceMismatch);
  }
}
