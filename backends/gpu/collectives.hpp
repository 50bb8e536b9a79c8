// SPDX-License-Identifier: Apache-2.0
// Collectives between devices of one GPU backend: the six coll_* / collective
// entries of porta_backend_v1 over NCCL (CUDA) or RCCL (HIP), written once, as the rest of the
// plugin, for both vendors. Plugin<V> derives from Collectives<V, Plugin<V>>, so the table finds the
// entries by their names; the vendor struct V names the library:
//
//   static constexpr const char* kCollName = "NCCL";             // or "RCCL"
//   static constexpr const char* kCollLibrary = "libnccl.so.2";  // or "librccl.so.1"
//
// The library is dlopen()ed at the first call that needs it, never linked and its header never
// included: a build with NCCL must start where NCCL is absent (and RCCL's headers do not exist on
// most build machines). Why it did not load is kept and returned by every entry, so that
// porta-info and coll_available can say it. RCCL has NCCL's API and ABI (same names, same enum
// values), so one set of declarations serves both.
#pragma once

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "backends/common/backend_error.hpp"
#include "porta/abi/backend_v1.h"
#include "porta/detail/gpu/api.cuh"

namespace porta::detail::gpu {

// The part of nccl.h (and rccl.h) porta uses, declared here. Values checked against
// /usr/local/cuda/include/nccl.h of NCCL 2.28.9 (ncclResult_t, ncclDataType_t, ncclRedOp_t,
// NCCL_UNIQUE_ID_BYTES); they have not changed since NCCL 2.0 and RCCL copies them.
namespace nccl {
using Result = int;  // ncclResult_t
constexpr Result kSuccess = 0;
constexpr Result kInProgress = 7;
struct UniqueId {  // ncclUniqueId, passed by value to ncclCommInitRank
  char internal[128];
};
static_assert(sizeof(UniqueId) == PORTA_COLL_ID_BYTES, "porta_coll ids are ncclUniqueIds");
using Comm = void*;    // ncclComm_t: an opaque pointer
using DataType = int;  // ncclDataType_t
constexpr DataType kInt32 = 2, kInt64 = 4, kFloat16 = 6, kFloat32 = 7, kFloat64 = 8, kBfloat16 = 9;
using RedOp = int;  // ncclRedOp_t
constexpr RedOp kSum = 0, kProd = 1, kMax = 2, kMin = 3;
}  // namespace nccl

template <class V, class P>
struct Collectives {
  using Api = typename V::Api;
  using Stream = typename Api::Stream;

  // ---- the library ------------------------------------------------------------------------------
  struct Library {
    bool ok = false;
    std::string why;   // when not ok: what failed, for every entry's message
    std::string info;  // when ok: "NCCL 2.28.9 (/usr/local/cuda/lib/libnccl.so.2)"
    nccl::Result (*get_version)(int*) = nullptr;
    nccl::Result (*get_unique_id)(nccl::UniqueId*) = nullptr;
    nccl::Result (*comm_init_rank)(nccl::Comm*, int, nccl::UniqueId, int) = nullptr;
    nccl::Result (*comm_destroy)(nccl::Comm) = nullptr;
    nccl::Result (*comm_get_async_error)(nccl::Comm, nccl::Result*) = nullptr;
    const char* (*get_error_string)(nccl::Result) = nullptr;
    nccl::Result (*all_reduce)(const void*, void*, std::size_t, nccl::DataType, nccl::RedOp, nccl::Comm,
                               Stream) = nullptr;
    nccl::Result (*reduce)(const void*, void*, std::size_t, nccl::DataType, nccl::RedOp, int, nccl::Comm,
                           Stream) = nullptr;
    nccl::Result (*broadcast)(const void*, void*, std::size_t, nccl::DataType, int, nccl::Comm, Stream) = nullptr;
    nccl::Result (*all_gather)(const void*, void*, std::size_t, nccl::DataType, nccl::Comm, Stream) = nullptr;
    nccl::Result (*reduce_scatter)(const void*, void*, std::size_t, nccl::DataType, nccl::RedOp, nccl::Comm,
                                   Stream) = nullptr;
    nccl::Result (*send)(const void*, std::size_t, nccl::DataType, int, nccl::Comm, Stream) = nullptr;
    nccl::Result (*recv)(void*, std::size_t, nccl::DataType, int, nccl::Comm, Stream) = nullptr;
    nccl::Result (*group_start)() = nullptr;
    nccl::Result (*group_end)() = nullptr;
  };

  // Loaded once per process; the handle stays open until exit (communicators may outlive statics).
  static const Library& library() noexcept {
    static const Library lib = []() noexcept {
      Library l;
      try {
        load(l);
      } catch (...) {
        l.ok = false;
        l.why = "out of host memory while loading it";
      }
      return l;
    }();
    return lib;
  }

  template <class Fn>
  static bool find(void* handle, Library& l, Fn*& fn, const char* name) {
    fn = reinterpret_cast<Fn*>(dlsym(handle, name));
    if (fn != nullptr) return true;
    if (l.why.empty()) l.why = std::string(V::kCollLibrary) + " has no " + name + " (too old?)";
    return false;
  }

  static void load(Library& l) {
    (void)dlerror();
    void* h = dlopen(V::kCollLibrary, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* e = dlerror();
      l.why = std::string("dlopen(") + V::kCollLibrary + ") failed: " + (e != nullptr ? e : "unknown error") +
              " (install " + V::kCollName + " or add its folder to LD_LIBRARY_PATH)";
      return;
    }
    bool ok = find(h, l, l.get_version, "ncclGetVersion");
    ok = find(h, l, l.get_unique_id, "ncclGetUniqueId") && ok;
    ok = find(h, l, l.comm_init_rank, "ncclCommInitRank") && ok;
    ok = find(h, l, l.comm_destroy, "ncclCommDestroy") && ok;
    ok = find(h, l, l.comm_get_async_error, "ncclCommGetAsyncError") && ok;
    ok = find(h, l, l.get_error_string, "ncclGetErrorString") && ok;
    ok = find(h, l, l.all_reduce, "ncclAllReduce") && ok;
    ok = find(h, l, l.reduce, "ncclReduce") && ok;
    ok = find(h, l, l.broadcast, "ncclBroadcast") && ok;
    ok = find(h, l, l.all_gather, "ncclAllGather") && ok;
    ok = find(h, l, l.reduce_scatter, "ncclReduceScatter") && ok;
    ok = find(h, l, l.send, "ncclSend") && ok;
    ok = find(h, l, l.recv, "ncclRecv") && ok;
    ok = find(h, l, l.group_start, "ncclGroupStart") && ok;
    ok = find(h, l, l.group_end, "ncclGroupEnd") && ok;
    if (!ok) return;  // the handle stays open: harmless, and dlclose of a half-used library is not
    int code = 0;
    if (l.get_version(&code) != nccl::kSuccess) code = 0;
    // NCCL_VERSION: X*1000 + Y*100 + Z up to 2.8, X*10000 + Y*100 + Z from 2.9.
    const int major = code >= 10000 ? code / 10000 : code / 1000;
    const int minor = code >= 10000 ? (code % 10000) / 100 : (code % 1000) / 100;
    const int patch = code % 100;
    std::string where = V::kCollLibrary;
    Dl_info dl{};
    if (dladdr(reinterpret_cast<void*>(l.get_version), &dl) != 0 && dl.dli_fname != nullptr) where = dl.dli_fname;
    char text[64];
    std::snprintf(text, sizeof text, "%s %d.%d.%d (", V::kCollName, major, minor, patch);
    l.info = text + where + ")";
    l.ok = true;
  }

  static porta_status unavailable(const char* fn) noexcept {
    return backend::set_error(PORTA_ERR_UNAVAILABLE, "%s: %s is not available: %s", fn, V::kCollName,
                              library().why.c_str());
  }
  static porta_status failed(const char* fn, const char* call, nccl::Result r) noexcept {
    const char* text = library().get_error_string != nullptr ? library().get_error_string(r) : nullptr;
    return backend::set_error(PORTA_ERR_BACKEND, "%s: %s %s: %s (%d)", fn, V::kCollName, call,
                              text != nullptr ? text : "unknown error", r);
  }

  // ---- communicators ----------------------------------------------------------------------------
  static constexpr std::uint32_t kMagic = 0x706c6c63u;  // marks a live communicator of this plugin
  struct Comm {
    std::uint32_t magic = kMagic;
    int dev = 0, nranks = 0, rank = 0;
    nccl::Comm comm = nullptr;
  };
  static Comm* live(porta_coll c) noexcept {
    Comm* k = reinterpret_cast<Comm*>(c);
    return k != nullptr && k->magic == kMagic ? k : nullptr;
  }

  // ---- entries ----------------------------------------------------------------------------------
  static porta_status coll_available(char* info, size_t len) noexcept {
    const Library& l = library();
    if (info != nullptr && len > 0) std::snprintf(info, len, "%s", l.ok ? l.info.c_str() : "");
    return l.ok ? PORTA_OK : unavailable("coll_available");
  }

  static porta_status coll_unique_id(void* id) noexcept {
    constexpr const char* fn = "coll_unique_id";
    if (id == nullptr) return backend::set_error(PORTA_ERR_INVALID, "%s: NULL id", fn);
    if (!library().ok) return unavailable(fn);
    nccl::UniqueId u{};
    if (const nccl::Result r = library().get_unique_id(&u); r != nccl::kSuccess)
      return failed(fn, "ncclGetUniqueId", r);
    std::memcpy(id, &u, sizeof u);
    return PORTA_OK;
  }

  static porta_status coll_init(int dev, int nranks, int rank, const void* id, porta_coll* out) noexcept {
    constexpr const char* fn = "coll_init";
    if (out == nullptr || id == nullptr) return backend::set_error(PORTA_ERR_INVALID, "%s: NULL argument", fn);
    *out = nullptr;
    if (nranks < 1 || rank < 0 || rank >= nranks)
      return backend::set_error(PORTA_ERR_INVALID, "%s: rank %d of %d ranks (want 0 <= rank < nranks)", fn, rank,
                                nranks);
    if (!library().ok) return unavailable(fn);
    DeviceGuard<Api> guard;
    if (const porta_status st = P::enter(guard, dev, fn); st != PORTA_OK) return st;
    Comm* k = new (std::nothrow) Comm;
    if (k == nullptr) return backend::set_error(PORTA_ERR_OOM, "%s: out of host memory", fn);
    nccl::UniqueId u{};
    std::memcpy(&u, id, sizeof u);
    if (const nccl::Result r = library().comm_init_rank(&k->comm, nranks, u, rank); r != nccl::kSuccess) {
      delete k;
      return failed(fn, "ncclCommInitRank", r);
    }
    k->dev = dev;
    k->nranks = nranks;
    k->rank = rank;
    *out = reinterpret_cast<porta_coll>(k);
    return PORTA_OK;
  }

  static porta_status coll_destroy(porta_coll c) noexcept {
    constexpr const char* fn = "coll_destroy";
    if (c == nullptr) return PORTA_OK;
    Comm* k = live(c);
    if (k == nullptr)
      return backend::set_error(PORTA_ERR_INVALID, "%s: %p is not a live communicator", fn, static_cast<void*>(c));
    DeviceGuard<Api> guard;
    if (const porta_status st = P::enter(guard, k->dev, fn); st != PORTA_OK) return st;
    const nccl::Result r = library().comm_destroy(k->comm);
    k->magic = 0;
    delete k;
    return r == nccl::kSuccess ? PORTA_OK : failed(fn, "ncclCommDestroy", r);
  }

  static porta_status coll_group(int begin) noexcept {
    constexpr const char* fn = "coll_group";
    if (!library().ok) return unavailable(fn);
    const nccl::Result r = begin != 0 ? library().group_start() : library().group_end();
    return r == nccl::kSuccess ? PORTA_OK : failed(fn, begin != 0 ? "ncclGroupStart" : "ncclGroupEnd", r);
  }

  // NCCL's type for dt and how many of them one element is. NCCL has no complex type: a complex
  // element is two of its part type, which is exact for moving data and for sums (a complex sum is
  // the sum of each part); a complex product is not two products, and is refused.
  static bool data_type(porta_dtype dt, nccl::DataType* out, int* parts) noexcept {
    // The default arm is for values outside the list, which C callers can pass.
    static_assert(PORTA_DTYPE_COUNT == 8, "a new dtype (dtypes.inc): give it its NCCL type here");
    *parts = 1;
    switch (backend::raw_enum(dt)) {
      case PORTA_F32:
        *out = nccl::kFloat32;
        return true;
      case PORTA_F64:
        *out = nccl::kFloat64;
        return true;
      case PORTA_C64:
        *out = nccl::kFloat32;
        *parts = 2;
        return true;
      case PORTA_C128:
        *out = nccl::kFloat64;
        *parts = 2;
        return true;
      case PORTA_I32:
        *out = nccl::kInt32;
        return true;
      case PORTA_I64:
        *out = nccl::kInt64;
        return true;
      case PORTA_F16:  // moved only: the front end refuses 16-bit reductions (NCCL sums them in 16 bits)
        *out = nccl::kFloat16;
        return true;
      case PORTA_BF16:
        *out = nccl::kBfloat16;
        return true;
      default:
        return false;
    }
  }
  static bool red_op(porta_reduce_op op, nccl::RedOp* out) noexcept {
    switch (backend::raw_enum(op)) {
      case PORTA_REDUCE_SUM:
        *out = nccl::kSum;
        return true;
      case PORTA_REDUCE_PROD:
        *out = nccl::kProd;
        return true;
      case PORTA_REDUCE_MIN:
        *out = nccl::kMin;
        return true;
      case PORTA_REDUCE_MAX:
        *out = nccl::kMax;
        return true;
      default:
        return false;
    }
  }

  static porta_status collective(porta_coll c, porta_coll_kind kind, porta_dtype dt, porta_reduce_op op,
                                 const void* send, void* recv, int64_t n, int peer, porta_stream s) noexcept {
    constexpr const char* fn = "collective";
    Comm* k = live(c);
    if (k == nullptr)
      return backend::set_error(PORTA_ERR_INVALID, "%s: %p is not a live communicator", fn, static_cast<void*>(c));
    const int kd = backend::raw_enum(kind);
    if (!backend::in_range(kd, 0, PORTA_COLL_COUNT))
      return backend::set_error(PORTA_ERR_INVALID, "%s: unknown kind %d", fn, kd);
    nccl::DataType type = 0;
    int parts = 1;
    if (!data_type(dt, &type, &parts))
      return backend::set_error(PORTA_ERR_INVALID, "%s: unknown dtype %d", fn, backend::raw_enum(dt));
    const bool reducing = kd == PORTA_COLL_ALLREDUCE || kd == PORTA_COLL_REDUCE || kd == PORTA_COLL_REDUCE_SCATTER;
    nccl::RedOp rop = nccl::kSum;
    if (reducing && !red_op(op, &rop))
      return backend::set_error(PORTA_ERR_INVALID, "%s: reduce op %d is not sum, prod, min or max", fn,
                                backend::raw_enum(op));
    if (reducing && parts == 2 && rop != nccl::kSum)
      return backend::set_error(PORTA_ERR_UNSUPPORTED,
                                "%s: NCCL reduces %s by sums only (it has no complex type; a sum is the sum of "
                                "each part)",
                                fn, backend::dtype_name(dt));
    if (n < 0) return backend::set_error(PORTA_ERR_INVALID, "%s: negative count %lld", fn, static_cast<long long>(n));
    const bool rooted =
        kd == PORTA_COLL_REDUCE || kd == PORTA_COLL_BROADCAST || kd == PORTA_COLL_SEND || kd == PORTA_COLL_RECV;
    if (rooted && (peer < 0 || peer >= k->nranks))
      return backend::set_error(PORTA_ERR_INVALID, "%s: peer %d outside the %d ranks", fn, peer, k->nranks);
    if (n == 0) return PORTA_OK;
    // REDUCE writes recv on the root only; BROADCAST reads send on the root only.
    const bool needs_send = kd != PORTA_COLL_RECV && !(kd == PORTA_COLL_BROADCAST && k->rank != peer);
    const bool needs_recv = kd != PORTA_COLL_SEND && !(kd == PORTA_COLL_REDUCE && k->rank != peer);
    if ((needs_send && send == nullptr) || (needs_recv && recv == nullptr))
      return backend::set_error(PORTA_ERR_INVALID, "%s: NULL %s buffer", fn,
                                needs_send && send == nullptr ? "send" : "recv");
    const Library& l = library();
    nccl::Result async = nccl::kSuccess;
    if (l.comm_get_async_error(k->comm, &async) == nccl::kSuccess && async != nccl::kSuccess &&
        async != nccl::kInProgress)
      return failed(fn, "ncclCommGetAsyncError", async);
    DeviceGuard<Api> guard;
    if (const porta_status st = P::enter(guard, k->dev, fn); st != PORTA_OK) return st;
    const auto count = static_cast<std::size_t>(n) * static_cast<std::size_t>(parts);
    const Stream st = reinterpret_cast<Stream>(s);
    nccl::Result r = nccl::kSuccess;
    const char* call = "";
    switch (static_cast<porta_coll_kind>(kd)) {
      case PORTA_COLL_ALLREDUCE:
        call = "ncclAllReduce";
        r = l.all_reduce(send, recv, count, type, rop, k->comm, st);
        break;
      case PORTA_COLL_REDUCE:
        call = "ncclReduce";
        r = l.reduce(send, recv, count, type, rop, peer, k->comm, st);
        break;
      case PORTA_COLL_BROADCAST:
        call = "ncclBroadcast";
        r = l.broadcast(send, recv, count, type, peer, k->comm, st);
        break;
      case PORTA_COLL_ALLGATHER:
        call = "ncclAllGather";
        r = l.all_gather(send, recv, count, type, k->comm, st);
        break;
      case PORTA_COLL_REDUCE_SCATTER:
        call = "ncclReduceScatter";
        r = l.reduce_scatter(send, recv, count, type, rop, k->comm, st);
        break;
      case PORTA_COLL_SEND:
        call = "ncclSend";
        r = l.send(send, count, type, peer, k->comm, st);
        break;
      case PORTA_COLL_RECV:
        call = "ncclRecv";
        r = l.recv(recv, count, type, peer, k->comm, st);
        break;
      case PORTA_COLL_COUNT:
        break;
    }
    return r == nccl::kSuccess ? PORTA_OK : failed(fn, call, r);
  }
};

}  // namespace porta::detail::gpu
