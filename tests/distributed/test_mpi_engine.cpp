// SPDX-License-Identifier: Apache-2.0
// The MPI engine (distributed/mpi_engine.cpp over libporta_mpi.so) on its own, under mpirun at 1-4
// ranks (tests/distributed/mpi_tests.cmake): ranks, every collective for every dtype and op against
// a host reference, uneven allgatherv counts, isend/irecv with tags, in place, NaN and integer
// wrap. Every rank generates every rank's input from one seed (rank 0's, broadcast), so each rank
// computes the reference itself. Inputs are chosen so that the result does not depend on the order
// MPI combines the ranks in (integers in floating point, powers of two for products; min and max
// are associative), and results are compared bit for bit.
//
// CHECK, never REQUIRE, between collectives: a rank that stopped early would leave the others
// waiting in the next collective (ctest's TIMEOUT ends such a run).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "distributed/engine.hpp"
#include "porta/detail/ops.hpp"
#include "porta/detail/runtime.hpp"
#include "support/support.hpp"

namespace dist = porta::detail::dist;

namespace {

dist::HostEngine& engine() {
  static const std::shared_ptr<dist::HostEngine> e = dist::mpi_world("test_mpi_engine");
  return *e;
}

// Rank 0's seed (PORTA_TEST_SEED or fresh), known to every rank.
std::uint64_t shared_seed() {
  static const std::uint64_t seed = [] {
    std::int64_t s = static_cast<std::int64_t>(porta_test::base_seed());
    engine().broadcast(&s, 1, PORTA_I64, 0);
    return static_cast<std::uint64_t>(s);
  }();
  return seed;
}

// Rank r's input of one case: the same on every rank that asks.
template <class T>
std::vector<T> input(int r, std::uint64_t which, std::int64_t n, porta_reduce_op op) {
  std::mt19937_64 g(shared_seed() ^ (which * 0x9E3779B97F4A7C15ull) ^ (static_cast<std::uint64_t>(r + 1) << 40));
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) {
    if constexpr (std::is_integral_v<T>) {
      x = static_cast<T>(g());  // the full range: sums and products wrap
    } else if (op == PORTA_REDUCE_PROD) {
      static const T pow2[] = {T(-2), T(-1), T(-0.5), T(0.5), T(1), T(2)};
      x = pow2[g() % 6];  // exact in any order for a few ranks
    } else if (op == PORTA_REDUCE_SUM) {
      x = static_cast<T>(static_cast<int>(g() % 2001) - 1000);  // integers: exact sums
    } else {
      x = static_cast<T>(std::uniform_real_distribution<double>(-1e6, 1e6)(g));
      if (g() % 16 == 0) x = (g() & 1) ? T(0.0) : T(-0.0);  // min/max order -0.0 below +0.0
    }
  }
  return v;
}

template <class T>
T apply(porta_reduce_op op, T a, T b) {
  switch (op) {
    case PORTA_REDUCE_SUM:
      return porta::detail::SumOp{}(a, b);
    case PORTA_REDUCE_PROD:
      return porta::detail::ProdOp{}(a, b);
    case PORTA_REDUCE_MIN:
      return porta::detail::MinOp{}(a, b);
    default:
      return porta::detail::MaxOp{}(a, b);
  }
}

// The reduction over ranks of element i of every rank's input, on the host.
template <class T>
std::vector<T> reference(int size, std::uint64_t which, std::int64_t n, porta_reduce_op op) {
  std::vector<T> acc = input<T>(0, which, n, op);
  for (int r = 1; r < size; ++r) {
    const std::vector<T> x = input<T>(r, which, n, op);
    for (std::size_t i = 0; i < acc.size(); ++i) acc[i] = apply(op, acc[i], x[i]);
  }
  return acc;
}

template <class T>
T poison() {
  return std::is_integral_v<T> ? T(-777) : T(-7.77e7);
}

// Bit for bit (NaN equal to NaN, -0.0 unequal to +0.0); the first mismatch in the message.
template <class T>
bool same_bits(const std::vector<T>& got, const std::vector<T>& want, std::string& where) {
  if (got.size() != want.size()) {
    where = "size " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
    return false;
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
      where = "element " + std::to_string(i) + ": got " + std::to_string(got[i]) + ", want " + std::to_string(want[i]);
      return false;
    }
  }
  return true;
}

#define CHECK_BITS(got, want)                        \
  do {                                               \
    std::string where_;                              \
    const bool same_ = same_bits(got, want, where_); \
    INFO(where_);                                    \
    CHECK(same_);                                    \
  } while (0)

const porta_reduce_op kOps[] = {PORTA_REDUCE_SUM, PORTA_REDUCE_PROD, PORTA_REDUCE_MIN, PORTA_REDUCE_MAX};
const std::int64_t kSizes[] = {0, 1, 7, 1000};

const char* op_name(porta_reduce_op op) {
  switch (op) {
    case PORTA_REDUCE_SUM:
      return "sum";
    case PORTA_REDUCE_PROD:
      return "prod";
    case PORTA_REDUCE_MIN:
      return "min";
    default:
      return "max";
  }
}

}  // namespace

TEST_CASE("mpi engine: ranks, sizes and node-local ranks", "[mpi]") {
  dist::HostEngine& e = engine();
  const int rank = e.rank(), size = e.size();
  CHECK(size >= 1);
  CHECK(rank >= 0);
  CHECK(rank < size);
  CHECK(e.local_rank() >= 0);
  CHECK(e.local_rank() < e.local_size());
  CHECK(e.local_size() <= size);
  CHECK_THAT(e.describe(), porta_test::Contains("MPI ("));
  CHECK_FALSE(e.device_aware(porta::DeviceType::cpu));
  // mpirun says how many ranks it started, and how many on this node.
  if (const char* s = std::getenv("OMPI_COMM_WORLD_SIZE")) CHECK(size == std::atoi(s));
  if (const char* s = std::getenv("OMPI_COMM_WORLD_RANK")) CHECK(rank == std::atoi(s));
  if (const char* s = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE")) CHECK(e.local_size() == std::atoi(s));
  if (const char* s = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK")) CHECK(e.local_rank() == std::atoi(s));
  // Every rank number once.
  std::int32_t mine = rank;
  std::vector<std::int32_t> all(static_cast<std::size_t>(size), -1);
  e.allgather(&mine, 1, all.data(), PORTA_I32);
  for (int r = 0; r < size; ++r) CHECK(all[static_cast<std::size_t>(r)] == r);

  const dist::MpiStatus st = dist::mpi_status(false);
  CHECK(st.built);
  CHECK(st.available);
  CHECK_THAT(st.library, porta_test::Contains("libporta_mpi.so"));
  CHECK_FALSE(st.version.empty());
  CHECK_FALSE(st.build_info.empty());
}

TEMPLATE_TEST_CASE("mpi engine: allreduce, reduce and reduce_scatter of every op", "[mpi]", float, double, std::int32_t,
                   std::int64_t) {
  using T = TestType;
  const porta_dtype dt = porta::detail::dtype_of<T>();
  dist::HostEngine& e = engine();
  const int rank = e.rank(), size = e.size();
  std::uint64_t which = 100 * static_cast<std::uint64_t>(dt);
  for (porta_reduce_op op : kOps) {
    for (std::int64_t n : kSizes) {
      INFO(op_name(op) << " of " << n << " elements, rank " << rank << " of " << size);
      ++which;
      const std::vector<T> want = reference<T>(size, which, n, op);
      const std::vector<T> x = input<T>(rank, which, n, op);

      std::vector<T> y(static_cast<std::size_t>(n), poison<T>());
      e.allreduce(x.data(), y.data(), n, dt, op);
      CHECK_BITS(y, want);

      std::vector<T> z = x;  // in place
      e.allreduce(z.data(), z.data(), n, dt, op);
      CHECK_BITS(z, want);

      for (int root = 0; root < size; ++root) {
        std::vector<T> w(static_cast<std::size_t>(n), poison<T>());
        e.reduce(x.data(), w.data(), n, dt, op, root);
        if (rank == root) {
          CHECK_BITS(w, want);
        } else {
          CHECK_BITS(w, std::vector<T>(static_cast<std::size_t>(n), poison<T>()));  // untouched
        }
      }

      // reduce_scatter: every rank contributes size blocks of n; rank r gets block r reduced.
      ++which;
      const std::vector<T> all_want = reference<T>(size, which, n * size, op);
      const std::vector<T> blocks = input<T>(rank, which, n * size, op);
      std::vector<T> mine(static_cast<std::size_t>(n), poison<T>());
      e.reduce_scatter(blocks.data(), mine.data(), n, dt, op);
      CHECK_BITS(mine, std::vector<T>(all_want.begin() + n * rank, all_want.begin() + n * (rank + 1)));
    }
  }
}

TEMPLATE_TEST_CASE("mpi engine: broadcast, allgather and uneven allgatherv", "[mpi]", float, double, std::int32_t,
                   std::int64_t) {
  using T = TestType;
  const porta_dtype dt = porta::detail::dtype_of<T>();
  dist::HostEngine& e = engine();
  const int rank = e.rank(), size = e.size();
  std::uint64_t which = 1000 + 100 * static_cast<std::uint64_t>(dt);
  for (std::int64_t n : kSizes) {
    INFO(n << " elements, rank " << rank << " of " << size);
    for (int root = 0; root < size; ++root) {
      ++which;
      const std::vector<T> want = input<T>(root, which, n, PORTA_REDUCE_MAX);
      std::vector<T> buf = rank == root ? want : std::vector<T>(static_cast<std::size_t>(n), poison<T>());
      e.broadcast(buf.data(), n, dt, root);
      CHECK_BITS(buf, want);
    }

    ++which;
    std::vector<T> want;
    for (int r = 0; r < size; ++r) {
      const std::vector<T> x = input<T>(r, which, n, PORTA_REDUCE_MAX);
      want.insert(want.end(), x.begin(), x.end());
    }
    const std::vector<T> x = input<T>(rank, which, n, PORTA_REDUCE_MAX);
    std::vector<T> got(static_cast<std::size_t>(n * size), poison<T>());
    e.allgather(x.data(), n, got.data(), dt);
    CHECK_BITS(got, want);
    // In place: this rank's part already sits at rank * n of the receive buffer.
    std::vector<T> inplace(static_cast<std::size_t>(n * size), poison<T>());
    std::copy(x.begin(), x.end(), inplace.begin() + n * rank);
    e.allgather(inplace.data() + n * rank, n, inplace.data(), dt);
    CHECK_BITS(inplace, want);
  }

  // Uneven counts, rank 1 (when there is one) sending nothing; then every rank sending nothing.
  for (int pattern = 0; pattern < 2; ++pattern) {
    INFO("allgatherv pattern " << pattern << ", rank " << rank << " of " << size);
    std::vector<std::int64_t> counts(static_cast<std::size_t>(size));
    for (int r = 0; r < size; ++r) counts[static_cast<std::size_t>(r)] = pattern == 1 || r == 1 ? 0 : 3 + 5 * r;
    ++which;
    std::vector<T> want;
    for (int r = 0; r < size; ++r) {
      const std::vector<T> part = input<T>(r, which, counts[static_cast<std::size_t>(r)], PORTA_REDUCE_MIN);
      want.insert(want.end(), part.begin(), part.end());
    }
    const std::vector<T> mine = input<T>(rank, which, counts[static_cast<std::size_t>(rank)], PORTA_REDUCE_MIN);
    std::vector<T> got(want.size(), poison<T>());
    e.allgatherv(mine.data(), static_cast<std::int64_t>(mine.size()), got.data(), counts.data(), dt);
    CHECK_BITS(got, want);
  }
}

TEMPLATE_TEST_CASE("mpi engine: NaN propagates through min and max", "[mpi]", float, double) {
  using T = TestType;
  const porta_dtype dt = porta::detail::dtype_of<T>();
  dist::HostEngine& e = engine();
  const int rank = e.rank(), size = e.size();
  // Element k holds NaN on rank k % size only; element 3 on no rank.
  std::vector<T> x = {T(rank), T(-rank), T(2 * rank), T(rank + 0.5)};
  for (int k = 0; k < 3; ++k)
    if (k % size == rank) x[static_cast<std::size_t>(k)] = std::numeric_limits<T>::quiet_NaN();
  for (porta_reduce_op op : {PORTA_REDUCE_MIN, PORTA_REDUCE_MAX}) {
    INFO(op_name(op) << ", rank " << rank << " of " << size);
    std::vector<T> y(4, poison<T>());
    e.allreduce(x.data(), y.data(), 4, dt, op);
    CHECK(std::isnan(y[0]));
    CHECK(std::isnan(y[1]));
    CHECK(std::isnan(y[2]));
    CHECK(y[3] == (op == PORTA_REDUCE_MIN ? T(0.5) : T(size - 1 + 0.5)));
  }
}

TEMPLATE_TEST_CASE("mpi engine: integer sums and products wrap", "[mpi]", std::int32_t, std::int64_t) {
  using T = TestType;
  using U = std::make_unsigned_t<T>;
  const porta_dtype dt = porta::detail::dtype_of<T>();
  dist::HostEngine& e = engine();
  const int size = e.size();
  std::vector<T> x = {std::numeric_limits<T>::max(), std::numeric_limits<T>::min(), T(-1)};
  std::vector<T> y(3, poison<T>());
  e.allreduce(x.data(), y.data(), 3, dt, PORTA_REDUCE_SUM);
  CHECK(y[0] == static_cast<T>(static_cast<U>(std::numeric_limits<T>::max()) * static_cast<U>(size)));
  CHECK(y[1] == static_cast<T>(static_cast<U>(std::numeric_limits<T>::min()) * static_cast<U>(size)));
  CHECK(y[2] == T(-size));
  if (size % 2 == 0) CHECK(y[0] == T(-size));  // k * MAX wraps to -k for even k
  std::vector<T> big = {std::numeric_limits<T>::max() / 2 + 7};
  std::vector<T> p(1, poison<T>());
  e.allreduce(big.data(), p.data(), 1, dt, PORTA_REDUCE_PROD);
  U want = 1;
  for (int r = 0; r < size; ++r) want = static_cast<U>(want * static_cast<U>(big[0]));
  CHECK(p[0] == static_cast<T>(want));
}

TEMPLATE_TEST_CASE("mpi engine: isend/irecv around a ring, matched by tag", "[mpi]", float, double, std::int32_t,
                   std::int64_t) {
  using T = TestType;
  const porta_dtype dt = porta::detail::dtype_of<T>();
  dist::HostEngine& e = engine();
  const int rank = e.rank(), size = e.size();
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  const std::uint64_t which = 5000 + static_cast<std::uint64_t>(dt);
  // Two messages of different lengths and tags to the next rank; the previous rank's are received
  // in the opposite order, so only the tags can pair them up.
  const std::vector<T> a = input<T>(rank, which, 1000, PORTA_REDUCE_MAX);
  const std::vector<T> b = input<T>(rank, which + 1, 3, PORTA_REDUCE_MAX);
  std::vector<T> ra(1000, poison<T>()), rb(3, poison<T>()), rz(1, poison<T>());
  auto recv_b = e.irecv(rb.data(), 3, dt, prev, 20);
  auto recv_a = e.irecv(ra.data(), 1000, dt, prev, 10);
  auto recv_z = e.irecv(rz.data(), 0, dt, prev, 30);
  auto send_a = e.isend(a.data(), 1000, dt, next, 10);
  auto send_z = e.isend(nullptr, 0, dt, next, 30);
  auto send_b = e.isend(b.data(), 3, dt, next, 20);
  while (!recv_b->test()) {
  }
  CHECK(recv_b->test());  // stays done
  recv_a->wait();
  recv_z->wait();
  send_a->wait();
  send_b->wait();
  send_z->wait();
  CHECK_BITS(ra, input<T>(prev, which, 1000, PORTA_REDUCE_MAX));
  CHECK_BITS(rb, input<T>(prev, which + 1, 3, PORTA_REDUCE_MAX));
  CHECK(rz[0] == poison<T>());
  e.barrier();
}

TEST_CASE("mpi engine: a communicator from the application's Fortran handle", "[mpi]") {
  // Open MPI's Fortran handles are indices: 0 is MPI_COMM_WORLD, 1 MPI_COMM_SELF, 2 MPI_COMM_NULL.
  // (MPICH's are other numbers; this test knows Open MPI's.)
  if (std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr) {
    PORTA_SKIP("not under Open MPI's mpirun");
  }
  dist::HostEngine& w = engine();
  const std::shared_ptr<dist::HostEngine> world = dist::mpi_from_fortran(0, "test");
  CHECK(world->rank() == w.rank());
  CHECK(world->size() == w.size());
  std::int64_t one = 1, total = 0;
  world->allreduce(&one, &total, 1, PORTA_I64, PORTA_REDUCE_SUM);
  CHECK(total == w.size());
  const std::shared_ptr<dist::HostEngine> self = dist::mpi_from_fortran(1, "test");
  CHECK(self->rank() == 0);
  CHECK(self->size() == 1);
  for (std::int64_t bad : {std::int64_t(2), std::int64_t(123456), std::int64_t(1) << 40}) {
    INFO("handle " << bad);
    CHECK_THROWS_AS(dist::mpi_from_fortran(bad, "test"), porta::InvalidArgument);
  }
  w.barrier();
}

TEST_CASE("mpi engine: bad arguments are typed errors naming the call", "[mpi]") {
  dist::HostEngine& e = engine();
  const int size = e.size();
  // Checked before MPI is called, on every rank alike, so no rank is left waiting.
  float x = 1, y = 0;
  CHECK_THROWS_MATCHES(e.reduce(&x, &y, 1, PORTA_F32, PORTA_REDUCE_SUM, size), porta::InvalidArgument,
                       Catch::Matchers::Predicate<porta::InvalidArgument>([&](const porta::InvalidArgument& err) {
                         const std::string m = err.what();
                         return m.rfind("porta::distributed::reduce: ", 0) == 0 &&
                                m.find("root " + std::to_string(size)) != std::string::npos;
                       }));
  CHECK_THROWS_AS(e.allreduce(&x, &y, 1, static_cast<porta_dtype>(9), PORTA_REDUCE_SUM), porta::InvalidArgument);
  CHECK_THROWS_AS(e.allreduce(&x, &y, 1, PORTA_F32, PORTA_REDUCE_SUMSQ), porta::InvalidArgument);
  CHECK_THROWS_AS(e.allreduce(&x, &y, -1, PORTA_F32, PORTA_REDUCE_SUM), porta::InvalidArgument);
  CHECK_THROWS_AS(e.broadcast(&x, 1, PORTA_F32, -1), porta::InvalidArgument);
  CHECK_THROWS_AS(e.isend(&x, 1, PORTA_F32, size, 0), porta::InvalidArgument);
  CHECK_THROWS_AS(e.irecv(&y, 1, PORTA_F32, 0, -5), porta::InvalidArgument);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(size), 1);
  counts[static_cast<std::size_t>(e.rank())] = 2;  // this rank claims to send 2 but passes 1
  std::vector<float> out(static_cast<std::size_t>(size) + 1);
  CHECK_THROWS_AS(e.allgatherv(&x, 1, out.data(), counts.data(), PORTA_F32), porta::InvalidArgument);
  e.barrier();
}
