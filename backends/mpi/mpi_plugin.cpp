// SPDX-License-Identifier: Apache-2.0
// libporta_mpi.so: the MPI side of include/porta/abi/mpi_v1.h, compiled against the MPI that CMake
// found and dlopen'ed by libporta (distributed/mpi_engine.cpp) on first use of porta::distributed.
// No MPI type crosses the table: communicators and requests are porta's own heap structs, so the
// same libporta works with Open MPI (MPI_Comm is a pointer) and MPICH (an int).
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's MPIX_Query_cuda_support / MPIX_Query_rocm_support
#endif

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/common/backend_error.hpp"
#include "backends/common/host_combine.hpp"
#include "porta/abi/mpi_v1.h"

struct porta_mpi_comm_s {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
};

// A transfer of more than max_count() elements travels as several messages of one tag; MPI's
// non-overtaking rule keeps them in order between one sender and one receiver.
struct porta_mpi_request_s {
  std::vector<MPI_Request> parts;
};

namespace {

using porta::detail::backend::in_range;
using porta::detail::backend::raw_enum;
using porta::detail::backend::set_error;

// ---- errors -----------------------------------------------------------------------------------

// "allreduce: MPI_Allreduce: MPI_ERR_TRUNCATE: message truncated"
porta_status mpi_failed(const char* entry, const char* call, int rc) {
  char text[MPI_MAX_ERROR_STRING + 1] = "";
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) std::snprintf(text, sizeof text, "error code %d", rc);
  return set_error(PORTA_ERR_BACKEND, "%s: %s: %s", entry, call, text);
}

// Returns from the entry with PORTA_ERR_BACKEND when an MPI call fails.
#define PORTA_MPI_CALL(entry, call, ...)                                              \
  do {                                                                                \
    const int porta_mpi_rc_ = call(__VA_ARGS__);                                      \
    if (porta_mpi_rc_ != MPI_SUCCESS) return mpi_failed(entry, #call, porta_mpi_rc_); \
  } while (0)

#define PORTA_MPI_TRY(expr)                              \
  do {                                                   \
    const porta_status porta_mpi_st_ = (expr);           \
    if (porta_mpi_st_ != PORTA_OK) return porta_mpi_st_; \
  } while (0)

// ---- limits -----------------------------------------------------------------------------------

// MPI counts are int. PORTA_MPI_MAX_COUNT lowers the piece size (tests exercise the splitting with
// a few elements instead of 8 GiB buffers); it is read once.
std::int64_t max_count() {
  static const std::int64_t limit = [] {
    const char* s = std::getenv("PORTA_MPI_MAX_COUNT");
    if (s != nullptr && *s != '\0') {
      const long long v = std::atoll(s);
      if (v > 0 && v < INT_MAX) return static_cast<std::int64_t>(v);
    }
    return static_cast<std::int64_t>(INT_MAX);
  }();
  return limit;
}

// ---- dtypes and ops ---------------------------------------------------------------------------

porta_status check_dtype(const char* entry, porta_dtype dt, MPI_Datatype* out, std::size_t* bytes) {
  // The default arm is for values outside the list, which C callers can pass.
  static_assert(PORTA_DTYPE_COUNT == 8, "a new dtype (dtypes.inc): give it its MPI type here and in user_op");
  switch (raw_enum(dt)) {
    case PORTA_F32:
      *out = MPI_FLOAT;
      *bytes = 4;
      return PORTA_OK;
    case PORTA_F64:
      *out = MPI_DOUBLE;
      *bytes = 8;
      return PORTA_OK;
    case PORTA_I32:
      *out = MPI_INT32_T;
      *bytes = 4;
      return PORTA_OK;
    case PORTA_I64:
      *out = MPI_INT64_T;
      *bytes = 8;
      return PORTA_OK;
    case PORTA_C64:
      *out = MPI_C_FLOAT_COMPLEX;
      *bytes = 8;
      return PORTA_OK;
    case PORTA_C128:
      *out = MPI_C_DOUBLE_COMPLEX;
      *bytes = 16;
      return PORTA_OK;
    case PORTA_F16:
    case PORTA_BF16:  // moved as their bits; the front end refuses their reductions before this
      *out = MPI_UINT16_T;
      *bytes = 2;
      return PORTA_OK;
    default:
      return set_error(PORTA_ERR_INVALID, "%s: unknown dtype %d", entry, raw_enum(dt));
  }
}

// inout[i] = op(inout[i], in[i]) with ops.hpp's semantics (NaN propagates through min and max,
// integers wrap): backends/common/host_combine.hpp, which the thread engine applies too, so that
// MPI and the other host transports combine ranks alike.
template <porta_reduce_op Op>
void user_op(void* in, void* inout, int* len, MPI_Datatype* dt) {
  porta_dtype pdt = PORTA_F32;
  if (*dt == MPI_DOUBLE) {
    pdt = PORTA_F64;
  } else if (*dt == MPI_INT32_T) {
    pdt = PORTA_I32;
  } else if (*dt == MPI_INT64_T) {
    pdt = PORTA_I64;
  } else if (*dt == MPI_C_FLOAT_COMPLEX) {
    pdt = PORTA_C64;
  } else if (*dt == MPI_C_DOUBLE_COMPLEX) {
    pdt = PORTA_C128;
  }
  // porta only passes the types of check_dtype; min and max of complex numbers are refused before.
  porta::detail::backend::combine(pdt, Op, in, inout, *len);
}

struct Ops {
  MPI_Op op[4] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};
  int rc = MPI_SUCCESS;
  const char* call = "";
};

// Created once, after MPI_Init (MPI_Op_create needs it); MPI_Finalize frees them.
const Ops& ops() {
  static const Ops o = [] {
    Ops r;
    MPI_User_function* fns[4] = {&user_op<PORTA_REDUCE_SUM>, &user_op<PORTA_REDUCE_PROD>, &user_op<PORTA_REDUCE_MIN>,
                                 &user_op<PORTA_REDUCE_MAX>};
    for (int i = 0; i < 4 && r.rc == MPI_SUCCESS; ++i) {
      r.rc = MPI_Op_create(fns[i], /*commute=*/1, &r.op[i]);
      r.call = "MPI_Op_create";
    }
    return r;
  }();
  return o;
}

porta_status check_op(const char* entry, porta_reduce_op op, MPI_Op* out) {
  const int v = raw_enum(op);
  if (v != PORTA_REDUCE_SUM && v != PORTA_REDUCE_PROD && v != PORTA_REDUCE_MIN && v != PORTA_REDUCE_MAX)
    return set_error(PORTA_ERR_INVALID, "%s: reduce op %d is not sum, prod, min or max", entry, v);
  const Ops& o = ops();
  if (o.rc != MPI_SUCCESS) return mpi_failed(entry, o.call, o.rc);
  *out = o.op[v];  // SUM, PROD, MIN, MAX are 0..3 in porta_reduce_op
  return PORTA_OK;
}

// ---- argument checks --------------------------------------------------------------------------

porta_status check_comm(const char* entry, porta_mpi_comm c) {
  if (c == nullptr || c->comm == MPI_COMM_NULL) return set_error(PORTA_ERR_INVALID, "%s: null communicator", entry);
  int done = 0;
  MPI_Finalized(&done);
  if (done) return set_error(PORTA_ERR_UNAVAILABLE, "%s: MPI was already finalised", entry);
  return PORTA_OK;
}

porta_status check_count(const char* entry, std::int64_t n, const void* a, const void* b) {
  if (n < 0) return set_error(PORTA_ERR_INVALID, "%s: negative element count %lld", entry, static_cast<long long>(n));
  if (n > 0 && (a == nullptr || b == nullptr))
    return set_error(PORTA_ERR_INVALID, "%s: null buffer for %lld elements", entry, static_cast<long long>(n));
  return PORTA_OK;
}

porta_status check_rank(const char* entry, const char* what, porta_mpi_comm c, int r) {
  if (r < 0 || r >= c->size)
    return set_error(PORTA_ERR_INVALID, "%s: %s %d is not a rank of a communicator of size %d", entry, what, r,
                     c->size);
  return PORTA_OK;
}

// The common head of the collectives: a usable communicator, a dtype.
struct Args {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  std::size_t bytes = 0;
};
porta_status check_common(const char* entry, porta_mpi_comm c, porta_dtype dt, Args* a) {
  PORTA_MPI_TRY(check_comm(entry, c));
  return check_dtype(entry, dt, &a->type, &a->bytes);
}

// ... and a reduction op.
porta_status check_reduction(const char* entry, porta_mpi_comm c, porta_dtype dt, porta_reduce_op op, Args* a,
                             MPI_Op* mop) {
  PORTA_MPI_TRY(check_common(entry, c, dt, a));
  return check_op(entry, op, mop);
}

char* at(void* p, std::int64_t elements, std::size_t bytes) {
  return static_cast<char*>(p) + elements * static_cast<std::int64_t>(bytes);
}
const char* at(const void* p, std::int64_t elements, std::size_t bytes) {
  return static_cast<const char*>(p) + elements * static_cast<std::int64_t>(bytes);
}

int piece_of(std::int64_t n, std::int64_t off) {
  const std::int64_t left = n - off;
  return static_cast<int>(left < max_count() ? left : max_count());
}

// ---- init and queries -------------------------------------------------------------------------

std::mutex g_init_mutex;
bool g_porta_initialised = false;

void finalize_at_exit() {
  int init = 0, done = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&done);
  if (init && !done) MPI_Finalize();
}

int thread_level_of(int provided) {
  if (provided == MPI_THREAD_SINGLE) return 0;
  if (provided == MPI_THREAD_FUNNELED) return 1;
  if (provided == MPI_THREAD_SERIALIZED) return 2;
  if (provided == MPI_THREAD_MULTIPLE) return 3;
  return -1;
}

porta_status mpi_init(int initialise, char* version, std::size_t len, int* thread_level) {
  if (version != nullptr && len > 0) {
    char text[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
    int n = 0;
    if (MPI_Get_library_version(text, &n) != MPI_SUCCESS) text[0] = '\0';
    text[MPI_MAX_LIBRARY_VERSION_STRING] = '\0';
    std::size_t k = 0;
    while (text[k] != '\0' && text[k] != '\n' && text[k] != '\r' && k + 1 < len) {
      version[k] = text[k];
      ++k;
    }
    version[k] = '\0';
  }
  if (thread_level != nullptr) *thread_level = -1;
  std::lock_guard<std::mutex> lock(g_init_mutex);
  int init = 0, done = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&done);
  if (done) {
    if (initialise) return set_error(PORTA_ERR_UNAVAILABLE, "init: MPI was already finalised");
    return PORTA_OK;
  }
  if (!init) {
    if (!initialise) return PORTA_OK;
    int provided = 0;
    PORTA_MPI_CALL("init", MPI_Init_thread, nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    g_porta_initialised = true;
    // Only what porta started, porta ends; an application that called MPI_Init finalises itself.
    std::atexit(&finalize_at_exit);
  }
  int provided = 0;
  PORTA_MPI_CALL("init", MPI_Query_thread, &provided);
  if (thread_level != nullptr) *thread_level = thread_level_of(provided);
  return PORTA_OK;
}

int mpi_device_aware(int device_type) {
  if (device_type == PORTA_DEVICE_CUDA) {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support() ? 1 : 0;
#endif
  }
  if (device_type == PORTA_DEVICE_HIP) {
#if defined(MPIX_ROCM_AWARE_SUPPORT) && MPIX_ROCM_AWARE_SUPPORT
    return MPIX_Query_rocm_support() ? 1 : 0;
#endif
  }
  return 0;
}

// ---- communicators ----------------------------------------------------------------------------

// porta's duplicate of `parent`, errors returned rather than fatal, its node-local rank and size
// computed once.
porta_status make_comm(const char* entry, MPI_Comm parent, porta_mpi_comm* out) {
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "%s: null output pointer", entry);
  *out = nullptr;
  int init = 0, done = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&done);
  if (!init || done)
    return set_error(PORTA_ERR_UNAVAILABLE, "%s: MPI is %s", entry, done ? "already finalised" : "not initialised");
  porta_mpi_comm c = new (std::nothrow) porta_mpi_comm_s;
  if (c == nullptr) return set_error(PORTA_ERR_OOM, "%s: out of host memory", entry);
  porta_status st = PORTA_OK;
  const auto fail = [&](const char* call, int rc) {
    st = mpi_failed(entry, call, rc);
    if (c->comm != MPI_COMM_NULL) MPI_Comm_free(&c->comm);
    delete c;
    return st;
  };
  int rc = MPI_Comm_dup(parent, &c->comm);
  if (rc != MPI_SUCCESS) return fail("MPI_Comm_dup", rc);
  if ((rc = MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN)) != MPI_SUCCESS)
    return fail("MPI_Comm_set_errhandler", rc);
  if ((rc = MPI_Comm_rank(c->comm, &c->rank)) != MPI_SUCCESS) return fail("MPI_Comm_rank", rc);
  if ((rc = MPI_Comm_size(c->comm, &c->size)) != MPI_SUCCESS) return fail("MPI_Comm_size", rc);
  MPI_Comm node = MPI_COMM_NULL;
  if ((rc = MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node)) != MPI_SUCCESS)
    return fail("MPI_Comm_split_type", rc);
  const int rc1 = MPI_Comm_rank(node, &c->local_rank);
  const int rc2 = MPI_Comm_size(node, &c->local_size);
  MPI_Comm_free(&node);
  if (rc1 != MPI_SUCCESS) return fail("MPI_Comm_rank", rc1);
  if (rc2 != MPI_SUCCESS) return fail("MPI_Comm_size", rc2);
  *out = c;
  return PORTA_OK;
}

porta_status mpi_comm_world(porta_mpi_comm* out) {
  return make_comm("comm_world", MPI_COMM_WORLD, out);
}

// Open MPI's MPI_Comm_f2c returns a null pointer (not MPI_COMM_NULL) for an index that names no
// communicator, and MPI_Comm_dup of it would end the process; MPICH's MPI_Comm is an int.
template <class C>
bool is_null_pointer(C c) {
  if constexpr (std::is_pointer_v<C>) {
    return c == nullptr;
  } else {
    return false;
  }
}

porta_status mpi_comm_from_fortran(std::int64_t handle, porta_mpi_comm* out) {
  if (out != nullptr) *out = nullptr;
  if (handle < INT_MIN || handle > INT_MAX)
    return set_error(PORTA_ERR_INVALID, "comm_from_fortran: %lld is not a Fortran communicator handle",
                     static_cast<long long>(handle));
  int init = 0;
  MPI_Initialized(&init);
  if (!init) return set_error(PORTA_ERR_UNAVAILABLE, "comm_from_fortran: MPI is not initialised");
  const MPI_Comm user = MPI_Comm_f2c(static_cast<MPI_Fint>(handle));
  if (user == MPI_COMM_NULL || is_null_pointer(user))
    return set_error(PORTA_ERR_INVALID, "comm_from_fortran: %lld is not a communicator (MPI_Comm_f2c gave %s)",
                     static_cast<long long>(handle), user == MPI_COMM_NULL ? "MPI_COMM_NULL" : "no handle");
  return make_comm("comm_from_fortran", user, out);
}

porta_status mpi_comm_free(porta_mpi_comm c) {
  if (c == nullptr) return PORTA_OK;
  int done = 0;
  MPI_Finalized(&done);
  int rc = MPI_SUCCESS;
  if (!done && c->comm != MPI_COMM_NULL) rc = MPI_Comm_free(&c->comm);
  delete c;
  return rc == MPI_SUCCESS ? PORTA_OK : mpi_failed("comm_free", "MPI_Comm_free", rc);
}

porta_status mpi_comm_ranks(porta_mpi_comm c, int* rank, int* size, int* local_rank, int* local_size) {
  if (c == nullptr) return set_error(PORTA_ERR_INVALID, "comm_ranks: null communicator");
  if (rank) *rank = c->rank;
  if (size) *size = c->size;
  if (local_rank) *local_rank = c->local_rank;
  if (local_size) *local_size = c->local_size;
  return PORTA_OK;
}

// ---- collectives ------------------------------------------------------------------------------

porta_status mpi_allreduce(porta_mpi_comm c, const void* send, void* recv, std::int64_t n, porta_dtype dt,
                           porta_reduce_op op) {
  const char* e = "allreduce";
  Args a;
  MPI_Op mop;
  PORTA_MPI_TRY(check_reduction(e, c, dt, op, &a, &mop));
  PORTA_MPI_TRY(check_count(e, n, send, recv));
  const bool in_place = send == recv;
  for (std::int64_t off = 0; off < n; off += max_count()) {
    const void* s = in_place ? MPI_IN_PLACE : at(send, off, a.bytes);
    PORTA_MPI_CALL(e, MPI_Allreduce, s, at(recv, off, a.bytes), piece_of(n, off), a.type, mop, c->comm);
  }
  return PORTA_OK;
}

// One reduce of n elements to root, in pieces; recv matters on root only.
porta_status reduce_pieces(const char* e, porta_mpi_comm c, const void* send, void* recv, std::int64_t n, const Args& a,
                           MPI_Op mop, int root) {
  const bool is_root = c->rank == root;
  const bool in_place = is_root && send == recv;
  for (std::int64_t off = 0; off < n; off += max_count()) {
    const void* s = in_place ? MPI_IN_PLACE : at(send, off, a.bytes);
    void* r = is_root ? at(recv, off, a.bytes) : nullptr;
    PORTA_MPI_CALL(e, MPI_Reduce, s, r, piece_of(n, off), a.type, mop, root, c->comm);
  }
  return PORTA_OK;
}

porta_status mpi_reduce(porta_mpi_comm c, const void* send, void* recv, std::int64_t n, porta_dtype dt,
                        porta_reduce_op op, int root) {
  const char* e = "reduce";
  Args a;
  MPI_Op mop;
  PORTA_MPI_TRY(check_reduction(e, c, dt, op, &a, &mop));
  PORTA_MPI_TRY(check_rank(e, "root", c, root));
  PORTA_MPI_TRY(check_count(e, n, send, c->rank == root ? recv : send));
  return reduce_pieces(e, c, send, recv, n, a, mop, root);
}

porta_status bcast_pieces(const char* e, porta_mpi_comm c, void* buf, std::int64_t n, const Args& a, int root) {
  for (std::int64_t off = 0; off < n; off += max_count())
    PORTA_MPI_CALL(e, MPI_Bcast, at(buf, off, a.bytes), piece_of(n, off), a.type, root, c->comm);
  return PORTA_OK;
}

porta_status mpi_broadcast(porta_mpi_comm c, void* buf, std::int64_t n, porta_dtype dt, int root) {
  const char* e = "broadcast";
  Args a;
  PORTA_MPI_TRY(check_common(e, c, dt, &a));
  PORTA_MPI_TRY(check_rank(e, "root", c, root));
  PORTA_MPI_TRY(check_count(e, n, buf, buf));
  return bcast_pieces(e, c, buf, n, a, root);
}

// allgatherv over int counts and displacements when they fit; otherwise one (split) broadcast per
// rank, which carries any size at the price of `size` collectives instead of one.
porta_status gather_counts(const char* e, porta_mpi_comm c, const void* send, std::int64_t n, void* recv,
                           const std::vector<std::int64_t>& counts, const Args& a) {
  std::vector<int> icounts(counts.size()), displs(counts.size());
  std::int64_t total = 0;
  bool fits = true;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] > max_count() || total > max_count()) fits = false;
    icounts[r] = static_cast<int>(counts[r] > INT_MAX ? INT_MAX : counts[r]);
    displs[r] = static_cast<int>(total > INT_MAX ? INT_MAX : total);
    total += counts[r];
  }
  std::int64_t mine = 0;
  for (int r = 0; r < c->rank; ++r) mine += counts[static_cast<std::size_t>(r)];
  const bool in_place = send == at(recv, mine, a.bytes);
  if (fits) {
    const void* s = in_place ? MPI_IN_PLACE : send;
    PORTA_MPI_CALL(e, MPI_Allgatherv, s, static_cast<int>(n), a.type, recv, icounts.data(), displs.data(), a.type,
                   c->comm);
    return PORTA_OK;
  }
  std::int64_t off = 0;
  for (int r = 0; r < c->size; ++r) {
    const std::int64_t k = counts[static_cast<std::size_t>(r)];
    char* dst = at(recv, off, a.bytes);
    if (r == c->rank && !in_place && k > 0) std::memcpy(dst, send, static_cast<std::size_t>(k) * a.bytes);
    PORTA_MPI_TRY(bcast_pieces(e, c, dst, k, a, r));
    off += k;
  }
  return PORTA_OK;
}

porta_status mpi_allgather(porta_mpi_comm c, const void* send, std::int64_t n, void* recv, porta_dtype dt) {
  const char* e = "allgather";
  Args a;
  PORTA_MPI_TRY(check_common(e, c, dt, &a));
  PORTA_MPI_TRY(check_count(e, n, send, recv));
  if (n <= max_count() && n * c->size <= max_count()) {
    const void* s = send == at(recv, n * c->rank, a.bytes) ? MPI_IN_PLACE : send;
    PORTA_MPI_CALL(e, MPI_Allgather, s, static_cast<int>(n), a.type, recv, static_cast<int>(n), a.type, c->comm);
    return PORTA_OK;
  }
  return gather_counts(e, c, send, n, recv, std::vector<std::int64_t>(static_cast<std::size_t>(c->size), n), a);
}

porta_status mpi_allgatherv(porta_mpi_comm c, const void* send, std::int64_t n, void* recv, const std::int64_t* counts,
                            porta_dtype dt) {
  const char* e = "allgatherv";
  Args a;
  PORTA_MPI_TRY(check_common(e, c, dt, &a));
  if (counts == nullptr) return set_error(PORTA_ERR_INVALID, "allgatherv: null counts");
  std::vector<std::int64_t> v(counts, counts + c->size);
  std::int64_t total = 0;
  for (int r = 0; r < c->size; ++r) {
    if (v[static_cast<std::size_t>(r)] < 0)
      return set_error(PORTA_ERR_INVALID, "allgatherv: counts[%d] is %lld", r,
                       static_cast<long long>(v[static_cast<std::size_t>(r)]));
    total += v[static_cast<std::size_t>(r)];
  }
  if (v[static_cast<std::size_t>(c->rank)] != n)
    return set_error(PORTA_ERR_INVALID, "allgatherv: rank %d sends %lld elements but counts[%d] is %lld", c->rank,
                     static_cast<long long>(n), c->rank, static_cast<long long>(v[static_cast<std::size_t>(c->rank)]));
  PORTA_MPI_TRY(check_count(e, n, send, send));
  PORTA_MPI_TRY(check_count(e, total, recv, recv));
  return gather_counts(e, c, send, n, recv, v, a);
}

porta_status mpi_reduce_scatter(porta_mpi_comm c, const void* send, void* recv, std::int64_t n, porta_dtype dt,
                                porta_reduce_op op) {
  const char* e = "reduce_scatter";
  Args a;
  MPI_Op mop;
  PORTA_MPI_TRY(check_reduction(e, c, dt, op, &a, &mop));
  PORTA_MPI_TRY(check_count(e, n, send, recv));
  const bool in_place = send == recv;
  if (n <= max_count()) {
    PORTA_MPI_CALL(e, MPI_Reduce_scatter_block, in_place ? MPI_IN_PLACE : send, recv, static_cast<int>(n), a.type, mop,
                   c->comm);
    return PORTA_OK;
  }
  if (in_place)
    return set_error(
        PORTA_ERR_UNSUPPORTED,
        "reduce_scatter: in place with %lld elements per rank, above MPI's int count %lld; pass a separate "
        "receive buffer",
        static_cast<long long>(n), static_cast<long long>(max_count()));
  // One reduce per rank, each of its block, in pieces.
  for (int r = 0; r < c->size; ++r) PORTA_MPI_TRY(reduce_pieces(e, c, at(send, n * r, a.bytes), recv, n, a, mop, r));
  return PORTA_OK;
}

porta_status mpi_barrier(porta_mpi_comm c) {
  PORTA_MPI_TRY(check_comm("barrier", c));
  PORTA_MPI_CALL("barrier", MPI_Barrier, c->comm);
  return PORTA_OK;
}

// ---- point to point ---------------------------------------------------------------------------

template <class Start>
porta_status start_transfer(const char* e, porta_mpi_comm c, std::int64_t n, porta_dtype dt, int peer, int tag,
                            porta_mpi_request* out, const void* buf, Start start) {
  if (out == nullptr) return set_error(PORTA_ERR_INVALID, "%s: null request pointer", e);
  *out = nullptr;
  Args a;
  PORTA_MPI_TRY(check_common(e, c, dt, &a));
  PORTA_MPI_TRY(check_count(e, n, buf, buf));
  PORTA_MPI_TRY(check_rank(e, "peer", c, peer));
  int* tag_ub = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(c->comm, MPI_TAG_UB, &tag_ub, &flag);
  const int ub = (flag && tag_ub != nullptr) ? *tag_ub : 32767;
  if (tag < 0 || tag > ub) return set_error(PORTA_ERR_INVALID, "%s: tag %d is outside 0..%d", e, tag, ub);
  porta_mpi_request r = new (std::nothrow) porta_mpi_request_s;
  if (r == nullptr) return set_error(PORTA_ERR_OOM, "%s: out of host memory", e);
  // At least one message, so that a 0-element transfer still matches its partner.
  std::int64_t off = 0;
  do {
    MPI_Request q = MPI_REQUEST_NULL;
    const int rc = start(off, piece_of(n, off), a, &q);
    if (rc != MPI_SUCCESS) {
      // The pieces already started cannot be withdrawn portably: wait for them before failing.
      MPI_Waitall(static_cast<int>(r->parts.size()), r->parts.data(), MPI_STATUSES_IGNORE);
      delete r;
      return mpi_failed(e, std::strcmp(e, "isend") == 0 ? "MPI_Isend" : "MPI_Irecv", rc);
    }
    r->parts.push_back(q);
    off += max_count();
  } while (off < n);
  *out = r;
  return PORTA_OK;
}

porta_status mpi_isend(porta_mpi_comm c, const void* buf, std::int64_t n, porta_dtype dt, int dest, int tag,
                       porta_mpi_request* out) {
  return start_transfer("isend", c, n, dt, dest, tag, out, buf,
                        [&](std::int64_t off, int k, const Args& a, MPI_Request* q) {
                          return MPI_Isend(at(buf, off, a.bytes), k, a.type, dest, tag, c->comm, q);
                        });
}

porta_status mpi_irecv(porta_mpi_comm c, void* buf, std::int64_t n, porta_dtype dt, int source, int tag,
                       porta_mpi_request* out) {
  return start_transfer("irecv", c, n, dt, source, tag, out, buf,
                        [&](std::int64_t off, int k, const Args& a, MPI_Request* q) {
                          return MPI_Irecv(at(buf, off, a.bytes), k, a.type, source, tag, c->comm, q);
                        });
}

porta_status mpi_wait(porta_mpi_request r) {
  if (r == nullptr) return set_error(PORTA_ERR_INVALID, "wait: null request");
  const int rc = MPI_Waitall(static_cast<int>(r->parts.size()), r->parts.data(), MPI_STATUSES_IGNORE);
  delete r;
  return rc == MPI_SUCCESS ? PORTA_OK : mpi_failed("wait", "MPI_Waitall", rc);
}

porta_status mpi_test(porta_mpi_request r, int* done) {
  if (r == nullptr || done == nullptr) return set_error(PORTA_ERR_INVALID, "test: null request or flag");
  *done = 0;
  int flag = 0;
  const int rc = MPI_Testall(static_cast<int>(r->parts.size()), r->parts.data(), &flag, MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS) return mpi_failed("test", "MPI_Testall", rc);
  if (flag) {
    delete r;
    *done = 1;
  }
  return PORTA_OK;
}

const char* mpi_last_error() {
  return porta::detail::backend::last_error();
}

// "Open MPI 4.1.4 (MPI 3.1)", from the headers this plugin was compiled with.
#define PORTA_MPI_STR2(x) #x
#define PORTA_MPI_STR(x) PORTA_MPI_STR2(x)
#if defined(OPEN_MPI) && OPEN_MPI
#define PORTA_MPI_BUILD_INFO                                                                             \
  "Open MPI " PORTA_MPI_STR(OMPI_MAJOR_VERSION) "." PORTA_MPI_STR(OMPI_MINOR_VERSION) "." PORTA_MPI_STR( \
      OMPI_RELEASE_VERSION) " (MPI " PORTA_MPI_STR(MPI_VERSION) "." PORTA_MPI_STR(MPI_SUBVERSION) ")"
#elif defined(MPICH_VERSION)
#define PORTA_MPI_BUILD_INFO \
  "MPICH " MPICH_VERSION " (MPI " PORTA_MPI_STR(MPI_VERSION) "." PORTA_MPI_STR(MPI_SUBVERSION) ")"
#else
#define PORTA_MPI_BUILD_INFO "MPI " PORTA_MPI_STR(MPI_VERSION) "." PORTA_MPI_STR(MPI_SUBVERSION)
#endif

const porta_mpi_v1 kTable = {
    PORTA_MPI_ABI_VERSION,
    sizeof(porta_mpi_v1),
    PORTA_MPI_BUILD_INFO,
    &mpi_last_error,
    &mpi_init,
    &mpi_device_aware,
    &mpi_comm_world,
    &mpi_comm_from_fortran,
    &mpi_comm_free,
    &mpi_comm_ranks,
    &mpi_allreduce,
    &mpi_reduce,
    &mpi_broadcast,
    &mpi_allgather,
    &mpi_allgatherv,
    &mpi_reduce_scatter,
    &mpi_barrier,
    &mpi_isend,
    &mpi_irecv,
    &mpi_wait,
    &mpi_test,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const porta_mpi_v1* porta_mpi_entry_v1(void) {
  return &kTable;
}
