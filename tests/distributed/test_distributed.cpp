// SPDX-License-Identifier: Apache-2.0
// porta::distributed on every device: every collective for every dtype and op against a host
// reference, point to point, and the distributed sum, dot and norm2 bit for bit against porta's
// own on the whole array, for even, uneven and empty splits.
//
// Two ways to run: as a plain test, each case runs with thread groups of 1, 2, 3 and 4 ranks
// (Communicator::local); under mpirun with PORTA_TEST_MPI=1 (tests/distributed/CMakeLists.txt
// registers 1-4 ranks), each case runs once over MPI_COMM_WORLD. A rank's GPU is the device under
// test's type, spread over that type's GPUs from the device under test on: two ranks on a two-GPU
// machine use NCCL, more ranks than GPUs share them and go through host memory; both are tested.
//
// Catch2's assertions are not thread-safe: a rank collects its failures in a Report, and the
// thread that runs the test case reports them.
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "porta/distributed.hpp"
#include "support/support.hpp"

namespace dist = porta::distributed;
using porta::Array;
using porta::Device;
using porta::DeviceType;
using porta::Shape;

namespace {

struct Report {
  int rank = 0, size = 1;
  std::vector<std::string> failures;
  void expect(bool ok, const std::string& what) {
    if (!ok) failures.push_back("rank " + std::to_string(rank) + " of " + std::to_string(size) + ": " + what);
  }
};

bool mpi_mode() {
  const char* v = std::getenv("PORTA_TEST_MPI");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

const dist::Communicator& world() {
  static const dist::Communicator w = dist::Communicator::world();
  return w;
}

Device rank_device(Device dev, int local_rank) {
  if (dev.type == DeviceType::cpu) return dev;
  int count = 0;
  for (const Device& d : porta::devices())
    if (d.type == dev.type) ++count;
  return Device{dev.type, (dev.index + local_rank) % count};
}

using Body = std::function<void(const dist::Communicator&, Device, std::uint64_t, Report&)>;

void run_one(const dist::Communicator& c, Device dev, std::uint64_t seed, const Body& body, Report& rep) {
  rep.rank = c.rank();
  rep.size = c.size();
  try {
    body(c, rank_device(dev, c.local_rank()), seed, rep);
  } catch (const std::exception& e) {
    rep.failures.push_back("rank " + std::to_string(rep.rank) + " of " + std::to_string(rep.size) + " threw " +
                           e.what());
  }
}

// Runs body on every rank: the MPI world under mpirun, else thread groups of 1 to 4 ranks.
void run_ranks(Device dev, std::uint64_t seed, const Body& body) {
  if (mpi_mode()) {
    const dist::Communicator& w = world();
    auto s = Array<std::int64_t>::from(std::vector<std::int64_t>{static_cast<std::int64_t>(seed)},
                                       Device{DeviceType::cpu, 0});
    w.broadcast(s, 0);  // one seed for every rank
    Report rep;
    run_one(w, dev, static_cast<std::uint64_t>(s.item(0)), body, rep);
    for (const std::string& f : rep.failures) FAIL_CHECK(f);
    CHECK(rep.failures.empty());
    return;
  }
  for (int k = 1; k <= 4; ++k) {
    std::vector<dist::Communicator> comms = dist::Communicator::local(k);
    std::vector<Report> reps(static_cast<std::size_t>(k));
    std::vector<std::thread> threads;
    for (int r = 0; r < k; ++r) threads.emplace_back([&, r] { run_one(comms[r], dev, seed, body, reps[r]); });
    for (std::thread& t : threads) t.join();
    for (const Report& rep : reps) {
      for (const std::string& f : rep.failures) FAIL_CHECK(k << " thread ranks, " << f);
      CHECK(rep.failures.empty());
    }
  }
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <class T>
std::string show(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.17g", static_cast<double>(v));
    return buf;
  } else {
    return std::to_string(v);
  }
}

// Rank q's values for op: every rank can compute every rank's, so each checks its own result.
template <class T>
std::vector<T> values(std::uint64_t seed, int q, std::int64_t n, dist::Op op) {
  std::mt19937_64 g(seed * 1000003u + static_cast<std::uint64_t>(q) * 7919u + static_cast<std::uint64_t>(op));
  std::vector<T> v(static_cast<std::size_t>(n));
  for (T& x : v) {
    if constexpr (std::is_floating_point_v<T>) {
      std::uniform_real_distribution<double> u(op == dist::Op::prod ? 0.5 : -1.0, op == dist::Op::prod ? 1.5 : 1.0);
      x = static_cast<T>(u(g));
    } else {
      const long long lim = op == dist::Op::prod ? 3 : std::numeric_limits<T>::max();
      x = static_cast<T>(std::uniform_int_distribution<long long>(-lim, lim)(g));
    }
  }
  return v;
}

// op over ranks 0..k-1 of element i: exact for integers (wrapping, as porta's ops) and min/max; in
// double for floating-point sum and prod, with the bound the check uses.
template <class T>
struct Expect {
  double value;
  double bound;
};

template <class T>
Expect<T> reference(const std::vector<std::vector<T>>& v, std::size_t i, dist::Op op) {
  if constexpr (std::is_floating_point_v<T>) {
    double acc = v[0][i], mag = std::fabs(acc);
    for (std::size_t q = 1; q < v.size(); ++q) {
      const double x = v[q][i];
      switch (op) {
        case dist::Op::sum:
          acc += x;
          break;
        case dist::Op::prod:
          acc *= x;
          break;
        case dist::Op::min:
          acc = std::min(acc, x);
          break;
        case dist::Op::max:
          acc = std::max(acc, x);
          break;
      }
      mag = op == dist::Op::prod ? std::fabs(acc) : mag + std::fabs(x);
    }
    const double eps = std::numeric_limits<T>::epsilon();
    const bool exact = op == dist::Op::min || op == dist::Op::max;
    return {acc, exact ? 0.0 : 2.0 * static_cast<double>(v.size()) * eps * mag};
  } else {
    using U = std::make_unsigned_t<T>;
    U acc = static_cast<U>(v[0][i]);
    T best = v[0][i];
    for (std::size_t q = 1; q < v.size(); ++q) {
      const T x = v[q][i];
      if (op == dist::Op::sum) acc = static_cast<U>(acc + static_cast<U>(x));
      if (op == dist::Op::prod) acc = static_cast<U>(acc * static_cast<U>(x));
      if (op == dist::Op::min) best = std::min(best, x);
      if (op == dist::Op::max) best = std::max(best, x);
    }
    const T r = op == dist::Op::min || op == dist::Op::max ? best : static_cast<T>(acc);
    return {static_cast<double>(r), 0.0};
  }
}

template <class T>
bool matches(T got, const Expect<T>& e) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::fabs(static_cast<double>(got) - e.value) <= e.bound;
  } else {
    return static_cast<double>(got) == e.value;
  }
}

const char* op_name(dist::Op op) {
  switch (op) {
    case dist::Op::sum:
      return "sum";
    case dist::Op::prod:
      return "prod";
    case dist::Op::min:
      return "min";
    case dist::Op::max:
      return "max";
  }
  return "?";
}

// 2 * x as porta's ops compute it: integers wrap (the host reference must not overflow itself).
template <class T>
T twice_of(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(x * T(2));
  } else {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(x) * U(2)));
  }
}

template <class T>
T poison() {
  return std::is_floating_point_v<T> ? static_cast<T>(std::numeric_limits<double>::quiet_NaN()) : T(-77);
}

}  // namespace

TEMPLATE_TEST_CASE("collectives match a host reference", "[distributed]", float, double, std::int32_t, std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  run_ranks(dev, rng.seed(), [](const dist::Communicator& c, Device d, std::uint64_t seed, Report& rep) {
    const int k = c.size(), r = c.rank();
    const std::int64_t n = 1000 + static_cast<std::int64_t>(seed % 97);
    for (dist::Op op : {dist::Op::sum, dist::Op::prod, dist::Op::min, dist::Op::max}) {
      const std::string where = std::string(op_name(op)) + " on " + d.to_string() + " via " + c.transport(d);
      std::vector<std::vector<T>> v;
      for (int q = 0; q < k; ++q) v.push_back(values<T>(seed, q, n, op));
      auto check_all = [&](const std::vector<T>& got, const char* what) {
        std::int64_t bad = 0, first = -1;
        for (std::int64_t i = 0; i < n; ++i)
          if (!matches(got[static_cast<std::size_t>(i)], reference(v, static_cast<std::size_t>(i), op))) {
            if (first < 0) first = i;
            ++bad;
          }
        rep.expect(bad == 0, std::string(what) + " " + where + ": " + std::to_string(bad) + " wrong, first at " +
                                 std::to_string(first) +
                                 (first >= 0 ? " = " + show(got[static_cast<std::size_t>(first)]) + ", expected " +
                                                   show(reference(v, static_cast<std::size_t>(first), op).value)
                                             : ""));
      };
      // out of place, into a poisoned output
      auto x = Array<T>::from(v[static_cast<std::size_t>(r)], d);
      auto y = porta::full<T>(Shape{n}, poison<T>(), d);
      c.allreduce(x, y, op);
      check_all(y.to_vector(), "allreduce");
      rep.expect(x.to_vector() == v[static_cast<std::size_t>(r)], "allreduce changed its input, " + where);
      // in place
      c.allreduce(x, op);
      check_all(x.to_vector(), "allreduce in place");
      // to the last rank only
      auto z = Array<T>::from(v[static_cast<std::size_t>(r)], d);
      auto w = porta::full<T>(Shape{n}, poison<T>(), d);
      c.reduce(z, w, k - 1, op);
      if (r == k - 1) check_all(w.to_vector(), "reduce");
    }
    // broadcast from the middle rank
    const int root = k / 2;
    const std::vector<T> mine = values<T>(seed, r, 333, dist::Op::sum);
    auto b = Array<T>::from(mine, d);
    c.broadcast(b, root);
    rep.expect(b.to_vector() == values<T>(seed, root, 333, dist::Op::sum), "broadcast from " + std::to_string(root));
    // allgather: every rank's block in rank order
    auto g = porta::full<T>(Shape{333 * k}, poison<T>(), d);
    c.allgather(Array<T>::from(mine, d), g);
    std::vector<T> want;
    for (int q = 0; q < k; ++q) {
      const std::vector<T> vq = values<T>(seed, q, 333, dist::Op::sum);
      want.insert(want.end(), vq.begin(), vq.end());
    }
    rep.expect(g.to_vector() == want, "allgather");
    // reduce_scatter: max (exact), block r of the elementwise max over ranks
    std::vector<std::vector<T>> big;
    for (int q = 0; q < k; ++q) big.push_back(values<T>(seed + 1, q, 50 * k, dist::Op::max));
    auto rs = porta::full<T>(Shape{50}, poison<T>(), d);
    c.reduce_scatter(Array<T>::from(big[static_cast<std::size_t>(r)], d), rs, dist::Op::max);
    const std::vector<T> got = rs.to_vector();
    bool ok = true;
    for (std::int64_t i = 0; i < 50; ++i) {
      T m = big[0][static_cast<std::size_t>(r * 50 + i)];
      for (int q = 1; q < k; ++q)
        m = std::max(m, big[static_cast<std::size_t>(q)][static_cast<std::size_t>(r * 50 + i)]);
      ok &= same_bits(got[static_cast<std::size_t>(i)], m);
    }
    rep.expect(ok, "reduce_scatter max");
  });
}

// Complex arrays: sums and products over ranks against long double, broadcast and allgather bit for
// bit. Over NCCL or RCCL (no complex type there) a complex element travels as its two parts, which
// sums allow; a complex product is refused there by name.
TEMPLATE_TEST_CASE("complex collectives match a host reference", "[distributed][complex]", float, double) {
  using C = porta::complex<TestType>;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  run_ranks(dev, rng.seed(), [](const dist::Communicator& c, Device d, std::uint64_t seed, Report& rep) {
    using T = typename C::value_type;
    const int k = c.size(), r = c.rank();
    const std::int64_t n = 500 + static_cast<std::int64_t>(seed % 31);
    const bool ccl = c.transport(d).find("ccl") != std::string::npos;
    const auto rank_values = [&](int q, dist::Op op, std::int64_t count = -1) {
      std::mt19937_64 g(seed * 1000003u + static_cast<std::uint64_t>(q) * 7919u + static_cast<std::uint64_t>(op));
      // products of numbers near the unit circle stay in range for any rank count
      std::uniform_real_distribution<double> re(op == dist::Op::prod ? 0.5 : -1.0, 1.0), im(-0.5, 0.5);
      std::vector<C> v(static_cast<std::size_t>(count < 0 ? n : count));
      for (C& z : v) z = C(static_cast<T>(re(g)), static_cast<T>(im(g)));
      return v;
    };
    const std::string where = d.to_string() + " via " + c.transport(d);
    for (dist::Op op : {dist::Op::sum, dist::Op::prod}) {
      std::vector<std::vector<C>> v;
      for (int q = 0; q < k; ++q) v.push_back(rank_values(q, op));
      auto x = Array<C>::from(v[static_cast<std::size_t>(r)], d);
      auto y = Array<C>::from(std::vector<C>(static_cast<std::size_t>(n), C(T(-77), T(-77))), d);
      if (op == dist::Op::prod && ccl) {
        bool refused = false;
        try {
          c.allreduce(x, y, op);
          porta::synchronize(d);
        } catch (const porta::Unavailable& e) {
          refused =
              std::string(e.what()).find(std::is_same_v<T, float> ? "complex64" : "complex128") != std::string::npos;
        }
        rep.expect(refused, "a complex product over " + where + " is refused by name");
        continue;
      }
      c.allreduce(x, y, op);
      const std::vector<C> got = y.to_vector();
      std::int64_t bad = 0, first = -1;
      for (std::int64_t i = 0; i < n; ++i) {
        std::complex<long double> acc(v[0][static_cast<std::size_t>(i)].re, v[0][static_cast<std::size_t>(i)].im);
        long double mag = std::abs(acc);
        for (int q = 1; q < k; ++q) {
          const C z = v[static_cast<std::size_t>(q)][static_cast<std::size_t>(i)];
          const std::complex<long double> w(z.re, z.im);
          acc = op == dist::Op::sum ? acc + w : acc * w;
          mag = op == dist::Op::sum ? mag + std::abs(w) : std::abs(acc);
        }
        const long double bound = 8.0L * k * std::numeric_limits<T>::epsilon() * (mag + 1e-30L);
        const C g = got[static_cast<std::size_t>(i)];
        if (!(std::fabs(g.re - acc.real()) <= bound && std::fabs(g.im - acc.imag()) <= bound)) {
          if (first < 0) first = i;
          ++bad;
        }
      }
      rep.expect(bad == 0, std::string(op_name(op)) + " allreduce on " + where + ": " + std::to_string(bad) +
                               " wrong, first at " + std::to_string(first));
    }
    // no order: min is refused on every transport
    bool no_min = false;
    try {
      auto m = Array<C>::from(rank_values(r, dist::Op::sum), d);
      c.allreduce(m, dist::Op::min);
    } catch (const porta::Unavailable& e) {
      no_min = std::string(e.what()).find("no order") != std::string::npos;
    }
    rep.expect(no_min, "a complex min over " + where + " is refused");
    // broadcast and allgather move the bytes
    const std::vector<C> mine = rank_values(r, dist::Op::sum);
    auto b = Array<C>::from(mine, d);
    c.broadcast(b, k - 1);
    const std::vector<C> from_root = rank_values(k - 1, dist::Op::sum), got_b = b.to_vector();
    rep.expect(std::memcmp(got_b.data(), from_root.data(), from_root.size() * sizeof(C)) == 0,
               "complex broadcast on " + where);
    auto g = Array<C>::from(std::vector<C>(static_cast<std::size_t>(n * k), C(T(-77), T(-77))), d);
    c.allgather(Array<C>::from(mine, d), g);
    std::vector<C> want;
    for (int q = 0; q < k; ++q) {
      const std::vector<C> vq = rank_values(q, dist::Op::sum);
      want.insert(want.end(), vq.begin(), vq.end());
    }
    const std::vector<C> got_g = g.to_vector();
    rep.expect(std::memcmp(got_g.data(), want.data(), want.size() * sizeof(C)) == 0, "complex allgather on " + where);
    // sum, dot and norm2 of the concatenation have porta's bits for the whole array; uneven parts
    // of about 20000 elements put boundaries inside the canonical order's chunks of 32768
    const auto big_n = [&](int q) { return std::int64_t{20000} + 1000 * q + static_cast<std::int64_t>(seed % 29); };
    const auto x = Array<C>::from(rank_values(r, dist::Op::sum, big_n(r)), d);
    std::vector<C> whole;
    for (int q = 0; q < k; ++q) {
      const std::vector<C> vq = rank_values(q, dist::Op::sum, big_n(q));
      whole.insert(whole.end(), vq.begin(), vq.end());
    }
    const auto all = Array<C>::from(whole, d);
    const C s_all = porta::sum(all), d_all = porta::dot(all, all), s_mine = c.sum(x), d_mine = c.dot(x, x);
    const T n_all = porta::norm2(all), n_mine = c.norm2(x);
    rep.expect(std::memcmp(&s_all, &s_mine, sizeof(C)) == 0, "complex distributed sum on " + where);
    rep.expect(std::memcmp(&d_all, &d_mine, sizeof(C)) == 0, "complex distributed dot on " + where);
    rep.expect(std::memcmp(&n_all, &n_mine, sizeof(T)) == 0, "complex distributed norm2 on " + where);
  });
}

TEMPLATE_TEST_CASE("point to point: a ring with two tags", "[distributed]", float, std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  run_ranks(dev, rng.seed(), [](const dist::Communicator& c, Device d, std::uint64_t seed, Report& rep) {
    const int k = c.size(), r = c.rank();
    const int next = (r + 1) % k, prev = (r + k - 1) % k;
    const std::int64_t n = 4097;
    auto a = Array<T>::from(values<T>(seed, r, n, dist::Op::sum), d);
    auto b = Array<T>::from(values<T>(seed + 9, r, 17, dist::Op::sum), d);
    auto ra = porta::full<T>(Shape{n}, poison<T>(), d);
    auto rb = porta::full<T>(Shape{17}, poison<T>(), d);
    std::vector<dist::Request> reqs;
    reqs.push_back(c.irecv(rb, prev, 8));  // posted before, sent after: tags keep them apart
    reqs.push_back(c.irecv(ra, prev, 7));
    reqs.push_back(c.isend(a, next, 7));
    reqs.push_back(c.isend(b, next, 8));
    dist::wait_all(reqs);
    rep.expect(ra.to_vector() == values<T>(seed, prev, n, dist::Op::sum), "tag 7 from " + std::to_string(prev));
    rep.expect(rb.to_vector() == values<T>(seed + 9, prev, 17, dist::Op::sum), "tag 8 from " + std::to_string(prev));
    // the received data is there for work queued after wait() on the array's stream
    auto twice = ra * T(2);
    const std::vector<T> t = twice.to_vector(), p = values<T>(seed, prev, n, dist::Op::sum);
    bool ok = true;
    for (std::size_t i = 0; i < t.size(); ++i) ok &= t[i] == twice_of(p[i]);
    rep.expect(ok, "work queued after wait() sees the message");
  });
}

namespace {

// Element offsets of k ranks' parts of a total: even, uneven at random (one rank empty when k > 1),
// or all on the last rank.
std::vector<std::int64_t> split(std::int64_t total, int k, int how, std::mt19937_64& g) {
  std::vector<std::int64_t> start(static_cast<std::size_t>(k) + 1, 0);
  for (int q = 0; q < k; ++q) {
    std::int64_t len = 0;
    if (how == 0) {
      len = total / k + (q < total % k ? 1 : 0);
    } else if (how == 1) {
      const std::int64_t left = total - start[q];
      len = q == k - 1 ? left : (q == 1 ? 0 : std::uniform_int_distribution<std::int64_t>(0, left)(g));
    } else {
      len = q == k - 1 ? total : 0;
    }
    start[q + 1] = start[q] + len;
  }
  return start;
}

template <class T>
std::vector<T> global_values(std::uint64_t seed, std::int64_t n) {
  std::mt19937_64 g(seed);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (T& x : v) {
    if constexpr (std::is_floating_point_v<T>) {
      // mixed signs and magnitudes: a sum whose bits depend on the order
      x = static_cast<T>(std::uniform_real_distribution<double>(-1, 1)(g) *
                         std::ldexp(1.0, std::uniform_int_distribution<int>(-8, 8)(g)));
    } else {
      x = static_cast<T>(g());  // the whole range: the sum wraps
    }
  }
  return v;
}

}  // namespace

TEMPLATE_TEST_CASE("the distributed sum, dot and norm2 have porta's bits for any split", "[distributed]", float, double,
                   std::int32_t, std::int64_t) {
  using T = TestType;
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  run_ranks(dev, rng.seed(), [](const dist::Communicator& c, Device d, std::uint64_t seed, Report& rep) {
    const int k = c.size(), r = c.rank();
    constexpr std::int64_t K = 32768;  // the canonical order's chunk
    for (std::int64_t total :
         {std::int64_t{0}, std::int64_t{1}, std::int64_t{7}, K - 1, K, K + 1, 2 * K + 3, 5 * K + 11}) {
      const std::vector<T> x = global_values<T>(seed + static_cast<std::uint64_t>(total), total);
      const std::vector<T> y = global_values<T>(seed * 3 + static_cast<std::uint64_t>(total), total);
      auto gx = Array<T>::from(x, d);
      auto gy = Array<T>::from(y, d);
      const T want_sum = porta::sum(gx), want_dot = porta::dot(gx, gy);
      std::mt19937_64 g(seed ^ static_cast<std::uint64_t>(total));
      for (int how = 0; how < 3; ++how) {
        const std::vector<std::int64_t> at = split(total, k, how, g);
        const std::int64_t b = at[static_cast<std::size_t>(r)], e = at[static_cast<std::size_t>(r) + 1];
        const std::vector<T> px(x.begin() + b, x.begin() + e), py(y.begin() + b, y.begin() + e);
        auto lx = Array<T>::from(px, Shape{e - b}, d);
        auto ly = Array<T>::from(py, Shape{e - b}, d);
        const std::string where = "N=" + std::to_string(total) + " split " + std::to_string(how) + " part [" +
                                  std::to_string(b) + ", " + std::to_string(e) + ") on " + d.to_string();
        const T s = c.sum(lx);
        rep.expect(same_bits(s, want_sum), "sum " + where + ": " + show(s) + ", porta::sum " + show(want_sum));
        const T dt = c.dot(lx, ly);
        rep.expect(same_bits(dt, want_dot), "dot " + where + ": " + show(dt) + ", porta::dot " + show(want_dot));
        if constexpr (std::is_floating_point_v<T>) {
          const T nm = c.norm2(lx), want = porta::norm2(gx);
          rep.expect(same_bits(nm, want), "norm2 " + where + ": " + show(nm) + ", porta::norm2 " + show(want));
        }
      }
    }
    // a 2-D part is flattened: rows of a matrix split over ranks
    const std::vector<T> m = global_values<T>(seed + 5, 6 * 1000);
    const T want = porta::sum(Array<T>::from(m, Shape{6, 1000}, d));
    const std::int64_t rows_b = 6 * r / k, rows_e = 6 * (r + 1) / k;
    const std::vector<T> part(m.begin() + rows_b * 1000, m.begin() + rows_e * 1000);
    const T got = c.sum(Array<T>::from(part, Shape{rows_e - rows_b, 1000}, d));
    rep.expect(same_bits(got, want), "sum of rows " + std::to_string(rows_b) + ".." + std::to_string(rows_e));
  });
}

TEST_CASE("communicators: ranks, devices, transports and bad arguments", "[distributed]") {
  const Device dev = PORTA_TEST_DEVICE();
  dist::Communicator self = dist::Communicator::self();
  CHECK(self.rank() == 0);
  CHECK(self.size() == 1);
  CHECK(self.local_size() == 1);
  CHECK(self.describe().find("rank 0 of 1") != std::string::npos);
  CHECK(self.transport(Device{DeviceType::cpu, 0}) == "threads");
  if (dev.is_strict()) CHECK(self.transport(dev).find("staged") != std::string::npos);
  const Device ld = self.local_device();
  CHECK(ld.type == porta::default_device().type);

  auto x = porta::zeros<float>(Shape{8}, dev);
  auto y = porta::zeros<float>(Shape{9}, dev);
  CHECK_THROWS_AS(self.allreduce(x, y), porta::InvalidArgument);
  CHECK_THROWS_AS(self.broadcast(x, 1), porta::InvalidArgument);
  CHECK_THROWS_AS(self.reduce(x, x, -1), porta::InvalidArgument);
  CHECK_THROWS_AS(self.allgather(x, y), porta::InvalidArgument);
  CHECK_THROWS_AS(self.isend(x, 0, 32767), porta::InvalidArgument);
  CHECK_THROWS_AS(self.isend(x, 1, 0), porta::InvalidArgument);
  auto m = porta::zeros<float>(Shape{4, 4}, dev);
  auto col = m.col(1);
  CHECK_THROWS_WITH(self.allreduce(col),
                    porta_test::Contains("porta::distributed::allreduce") && porta_test::Contains("contiguous"));
  CHECK_THROWS_AS(dist::Communicator{}.rank(), porta::InvalidArgument);
  CHECK_THROWS_AS(dist::Communicator::local(0), porta::InvalidArgument);
  // a group of one: every collective is a copy, the sum is porta's
  auto v = Array<double>::from(std::vector<double>{1.5, -2.25, 4.0}, dev);
  self.allreduce(v);
  CHECK(v.to_vector() == std::vector<double>{1.5, -2.25, 4.0});
  CHECK(self.sum(v) == porta::sum(v));
  // requests keep their communicator alive
  {
    auto src = Array<float>::from(std::vector<float>{1, 2, 3}, dev);
    auto dst = porta::full<float>(Shape{3}, -1.0f, dev);
    dist::Request rr, rs;
    {
      dist::Communicator c = dist::Communicator::self();
      rr = c.irecv(dst, 0, 3);
      rs = c.isend(src, 0, 3);
    }
    rs.wait();
    rr.wait();
    CHECK(dst.to_vector() == std::vector<float>{1, 2, 3});
  }
  // MPI's status is reported either way, and says why when it is not there
  const dist::MpiInfo mi = dist::mpi_info();
  CHECK((mi.available || !mi.reason.empty()));
}
