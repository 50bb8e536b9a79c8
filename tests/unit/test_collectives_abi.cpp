// SPDX-License-Identifier: Apache-2.0
// The collectives entries of the backend table, called directly: on a GPU every kind for every
// dtype and reduce op against a host reference, with one host thread per rank and as many ranks as
// the machine has GPUs of that type (one rank on the device under test as well); on the CPU (and
// cpu:strict) every entry says at once that there are none.
//
// The values are small integers, so every sum, product, minimum and maximum is exact in every
// dtype and the order NCCL reduces in does not matter: the results are compared bit for bit.
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "runtime/registry.hpp"
#include "support/support.hpp"

using porta::Array;
using porta::Device;
using porta::Shape;

namespace {

const porta_backend_v1& table_of(Device dev) {
  return porta::detail::backend_for(dev, "test_collectives_abi");
}

// The value of rank r at element i under `seed`: a small integer, never 0 (products stay exact and
// nonzero: at most 3^ranks), the same on every thread that asks.
std::int64_t value(std::uint64_t seed, int r, std::int64_t i) {
  std::uint64_t h = seed ^ (0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(r + 1)) ^
                    (0xbf58476d1ce4e5b9ull * static_cast<std::uint64_t>(i + 1));
  h ^= h >> 31;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 29;
  static const std::int64_t kValues[] = {-3, -2, -1, 1, 2, 3};
  return kValues[h % 6];
}

std::int64_t combine(porta_reduce_op op, std::int64_t a, std::int64_t b) {
  switch (op) {
    case PORTA_REDUCE_SUM:
      return a + b;
    case PORTA_REDUCE_PROD:
      return a * b;
    case PORTA_REDUCE_MIN:
      return a < b ? a : b;
    case PORTA_REDUCE_MAX:
      return a > b ? a : b;
    default:
      return 0;
  }
}

// op over ranks of value(seed, r, i)
std::int64_t reduced(std::uint64_t seed, porta_reduce_op op, int nranks, std::int64_t i) {
  std::int64_t acc = value(seed, 0, i);
  for (int r = 1; r < nranks; ++r) acc = combine(op, acc, value(seed, r, i));
  return acc;
}

const char* kind_name(porta_coll_kind k) {
  static const char* const names[] = {"allreduce", "reduce", "broadcast", "allgather", "reduce_scatter", "send/recv"};
  return names[k < PORTA_COLL_SEND ? k : PORTA_COLL_SEND];
}

constexpr std::int64_t kPoison = 99;  // never a value nor a result

// One rank's part of the whole sequence, on `dev` with communicator c; returns the mismatches it
// saw (Catch's assertions are not thread-safe, so the threads only collect).
template <class T>
std::vector<std::string> run_rank(const porta_backend_v1& t, Device dev, porta_coll c, int nranks, int rank,
                                  std::uint64_t seed) {
  std::vector<std::string> bad;
  const porta_dtype dt = porta::detail::dtype_of<T>();
  const auto note = [&](const std::string& what) {
    if (bad.size() < 20) bad.push_back("rank " + std::to_string(rank) + " on " + dev.to_string() + ": " + what);
  };
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{1003}}) {
    for (int kd = 0; kd < PORTA_COLL_RECV; ++kd) {
      const auto kind = static_cast<porta_coll_kind>(kd);
      const bool reducing =
          kind == PORTA_COLL_ALLREDUCE || kind == PORTA_COLL_REDUCE || kind == PORTA_COLL_REDUCE_SCATTER;
      for (int o = 0; o < (reducing ? 4 : 1); ++o) {
        const auto op = static_cast<porta_reduce_op>(o);
        for (int in_place = 0; in_place < (kind == PORTA_COLL_ALLREDUCE || kind == PORTA_COLL_BROADCAST ? 2 : 1);
             ++in_place) {
          const std::int64_t send_n = kind == PORTA_COLL_REDUCE_SCATTER ? n * nranks : n;
          const std::int64_t recv_n = kind == PORTA_COLL_ALLGATHER ? n * nranks : n;
          const int root = kind == PORTA_COLL_BROADCAST ? 0 : nranks - 1;
          const int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
          std::vector<T> send_h(static_cast<std::size_t>(send_n)), expect(static_cast<std::size_t>(recv_n));
          for (std::int64_t i = 0; i < send_n; ++i) send_h[i] = static_cast<T>(value(seed, rank, i));
          for (std::int64_t i = 0; i < recv_n; ++i) {
            std::int64_t e = kPoison;
            switch (kind) {
              case PORTA_COLL_ALLREDUCE:
                e = reduced(seed, op, nranks, i);
                break;
              case PORTA_COLL_REDUCE:  // recv is the root's only (NCCL may use the others' as scratch)
                e = reduced(seed, op, nranks, i);
                break;
              case PORTA_COLL_BROADCAST:
                e = value(seed, root, i);
                break;
              case PORTA_COLL_ALLGATHER:
                e = value(seed, static_cast<int>(i / n), i % n);
                break;
              case PORTA_COLL_REDUCE_SCATTER:
                e = reduced(seed, op, nranks, rank * n + i);
                break;
              default:  // send to next, receive from prev
                e = value(seed, prev, i);
                break;
            }
            expect[i] = static_cast<T>(e);
          }
          auto send = Array<T>::from(send_h, Shape{send_n}, dev);
          auto out = porta::full<T>(Shape{recv_n}, static_cast<T>(kPoison), dev);
          Array<T>& recv = in_place ? send : out;
          if (t.synchronize(dev.index) != PORTA_OK) {
            note(std::string("synchronize: ") + t.last_error());
            return bad;
          }
          porta_status st = PORTA_OK;
          if (kind == PORTA_COLL_SEND) {
            st = t.coll_group(1);
            if (st == PORTA_OK) st = t.collective(c, PORTA_COLL_SEND, dt, op, send.data(), nullptr, n, next, nullptr);
            if (st == PORTA_OK) st = t.collective(c, PORTA_COLL_RECV, dt, op, nullptr, recv.data(), n, prev, nullptr);
            if (st == PORTA_OK) st = t.coll_group(0);
          } else {
            st = t.collective(c, kind, dt, op, send.data(), recv.data(), n, root, nullptr);
          }
          if (st == PORTA_OK) st = t.stream_synchronize(dev.index, nullptr);
          const std::string what = std::string(kind_name(kind)) + " of " + std::to_string(n) + " " +
                                   porta::detail::dtype_name(dt) + (reducing ? " op " + std::to_string(o) : "") +
                                   (in_place ? " in place" : "");
          if (st != PORTA_OK) {
            note(what + ": status " + std::to_string(st) + ": " + t.last_error());
            return bad;  // the other ranks may now wait forever in the next call: stop them too
          }
          if (kind == PORTA_COLL_REDUCE && rank != root) continue;
          const std::vector<T> got = recv.to_vector();
          for (std::int64_t i = 0; i < recv_n; ++i) {
            if (std::memcmp(&got[i], &expect[i], sizeof(T)) != 0) {
              note(what + ": element " + std::to_string(i) + " is " + std::to_string(got[i]) + ", want " +
                   std::to_string(expect[i]));
              break;
            }
          }
        }
      }
    }
  }
  return bad;
}

// nranks ranks on devices[0..nranks) of one GPU backend, one thread each, every dtype.
void run_group(const porta_backend_v1& t, const std::vector<Device>& devs, std::uint64_t seed) {
  const int nranks = static_cast<int>(devs.size());
  char id[PORTA_COLL_ID_BYTES];
  REQUIRE(t.coll_unique_id(id) == PORTA_OK);
  std::vector<std::vector<std::string>> bad(devs.size());
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; ++r) {
    threads.emplace_back([&, r] {
      porta_coll c = nullptr;
      if (t.coll_init(devs[r].index, nranks, r, id, &c) != PORTA_OK) {
        bad[r].push_back(std::string("coll_init: ") + t.last_error());
        return;
      }
      // A rank that stops leaves the others waiting in NCCL: every rank stops at its first failure,
      // which every rank then sees in the same call (or ctest's timeout ends the run).
      bad[r] = run_rank<float>(t, devs[r], c, nranks, r, seed);
      if (bad[r].empty()) bad[r] = run_rank<double>(t, devs[r], c, nranks, r, seed);
      if (bad[r].empty()) bad[r] = run_rank<std::int32_t>(t, devs[r], c, nranks, r, seed);
      if (bad[r].empty()) bad[r] = run_rank<std::int64_t>(t, devs[r], c, nranks, r, seed);
      if (t.coll_destroy(c) != PORTA_OK) bad[r].push_back(std::string("coll_destroy: ") + t.last_error());
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& v : bad)
    for (const auto& s : v) FAIL_CHECK(s);
}

}  // namespace

TEST_CASE("device collectives through the backend table", "[collectives]") {
  const Device dev = PORTA_TEST_DEVICE();
  PORTA_RNG(rng);
  const porta_backend_v1& t = table_of(dev);
  char info[256] = "poison";

  if (!dev.is_gpu()) {
    const std::string why =
        "the CPU has no device collectives: porta::distributed moves CPU arrays through MPI or threads";
    const auto unavailable = [&](porta_status st, const char* fn) {
      INFO(fn);
      CHECK(st == PORTA_ERR_UNAVAILABLE);
      CHECK(std::string(t.last_error()) == std::string(fn) + ": " + why);
    };
    unavailable(t.coll_available(info, sizeof info), "coll_available");
    CHECK(std::string(info).empty());
    char id[PORTA_COLL_ID_BYTES];
    unavailable(t.coll_unique_id(id), "coll_unique_id");
    porta_coll c = reinterpret_cast<porta_coll>(&info);
    unavailable(t.coll_init(0, 1, 0, id, &c), "coll_init");
    CHECK(c == nullptr);
    // On cpu:strict too the error comes at once, not from a later synchronize.
    auto x = porta::full<float>(Shape{4}, 1.0f, dev);
    unavailable(
        t.collective(nullptr, PORTA_COLL_ALLREDUCE, PORTA_F32, PORTA_REDUCE_SUM, x.data(), x.data(), 4, 0, nullptr),
        "collective");
    unavailable(t.coll_group(1), "coll_group");
    CHECK(t.coll_destroy(nullptr) == PORTA_OK);
    CHECK(t.synchronize(dev.index) == PORTA_OK);
    return;
  }

  if (t.coll_available(info, sizeof info) != PORTA_OK) {
    const std::string why = t.last_error();
    WARN(dev.to_string() << ": no collectives library: " << why);
    CHECK(why.rfind("coll_available: ", 0) == 0);
    CHECK(std::string(info).empty());
    char id[PORTA_COLL_ID_BYTES];
    CHECK(t.coll_unique_id(id) == PORTA_ERR_UNAVAILABLE);
    return;
  }
  INFO(dev.to_string() << ": " << info);
  CHECK((std::string(info).rfind("NCCL ", 0) == 0 || std::string(info).rfind("RCCL ", 0) == 0));
  const std::uint64_t seed = rng.engine()();

  SECTION("one rank on the device under test") {
    run_group(t, {dev}, seed);
  }

  SECTION("one rank on every GPU of the type, one thread each") {
    std::vector<Device> same;
    for (const Device& d : porta::devices())
      if (d.type == dev.type) same.push_back(d);
    if (dev != same.front() || same.size() < 2) return;  // the group runs once per type, from its first device
    INFO(same.size() << " ranks");
    run_group(t, same, seed);
  }

  SECTION("bad arguments are typed errors naming the entry and the value") {
    char id[PORTA_COLL_ID_BYTES];
    REQUIRE(t.coll_unique_id(id) == PORTA_OK);
    porta_coll c = nullptr;
    CHECK(t.coll_init(dev.index, 2, 2, id, &c) == PORTA_ERR_INVALID);
    CHECK(std::string(t.last_error()) == "coll_init: rank 2 of 2 ranks (want 0 <= rank < nranks)");
    CHECK(t.coll_init(-1, 1, 0, id, &c) == PORTA_ERR_INVALID);
    REQUIRE(t.coll_init(dev.index, 1, 0, id, &c) == PORTA_OK);
    auto x = porta::full<float>(Shape{8}, 1.0f, dev);
    CHECK(t.collective(c, PORTA_COLL_ALLREDUCE, PORTA_F32, PORTA_REDUCE_SUMSQ, x.data(), x.data(), 8, 0, nullptr) ==
          PORTA_ERR_INVALID);
    CHECK(std::string(t.last_error()) == "collective: reduce op 4 is not sum, prod, min or max");
    CHECK(t.collective(c, PORTA_COLL_COUNT, PORTA_F32, PORTA_REDUCE_SUM, x.data(), x.data(), 8, 0, nullptr) ==
          PORTA_ERR_INVALID);
    CHECK(std::string(t.last_error()) == "collective: unknown kind 7");
    CHECK(t.collective(c, PORTA_COLL_BROADCAST, PORTA_F32, PORTA_REDUCE_SUM, x.data(), x.data(), 8, 1, nullptr) ==
          PORTA_ERR_INVALID);
    CHECK(std::string(t.last_error()) == "collective: peer 1 outside the 1 ranks");
    CHECK(t.collective(c, PORTA_COLL_ALLREDUCE, PORTA_F32, PORTA_REDUCE_SUM, x.data(), x.data(), -1, 0, nullptr) ==
          PORTA_ERR_INVALID);
    CHECK(t.collective(c, PORTA_COLL_ALLREDUCE, PORTA_F32, PORTA_REDUCE_SUM, nullptr, x.data(), 8, 0, nullptr) ==
          PORTA_ERR_INVALID);
    CHECK(t.collective(nullptr, PORTA_COLL_ALLREDUCE, PORTA_F32, PORTA_REDUCE_SUM, x.data(), x.data(), 8, 0, nullptr) ==
          PORTA_ERR_INVALID);
    CHECK(t.coll_destroy(c) == PORTA_OK);
    CHECK(t.coll_destroy(nullptr) == PORTA_OK);
  }
}
