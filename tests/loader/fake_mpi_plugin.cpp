// SPDX-License-Identifier: Apache-2.0
// Fake libporta_mpi.so plugins for the loader tests: one rank, no MPI library, each with one thing
// wrong that the loader must refuse or tame, never crash on (one per FAKE_MPI_MODE):
//   FAKE_MPI_UNALIGNED    struct_size four bytes past the end of the table
//   FAKE_MPI_HUGE         struct_size 0xfffffff8
//   FAKE_MPI_NULL_ENTRY   comm_ranks left NULL
//   FAKE_MPI_RANKS        comm_ranks says rank 0 of 2^31 - 1
//   FAKE_MPI_UNTERMINATED init fills the whole version buffer, with no NUL
#include <climits>
#include <cstdint>
#include <cstring>

#include "porta/abi/mpi_v1.h"

#define FAKE_MPI_UNALIGNED 0
#define FAKE_MPI_HUGE 1
#define FAKE_MPI_NULL_ENTRY 2
#define FAKE_MPI_RANKS 3
#define FAKE_MPI_UNTERMINATED 4

#ifndef FAKE_MPI_MODE
#error "define FAKE_MPI_MODE"
#endif

namespace {

// Any non-NULL handle: the loader never looks behind it.
porta_mpi_comm world_handle() {
  static char world;
  return reinterpret_cast<porta_mpi_comm>(&world);
}

const char* last_error() {
  return "fake MPI: not implemented";
}

porta_status init(int, char* version, size_t len, int* thread_level) {
  if (version != nullptr && len > 0) {
#if FAKE_MPI_MODE == FAKE_MPI_UNTERMINATED
    std::memset(version, 'V', len);
#else
    std::strncpy(version, "fake MPI for porta's loader tests", len - 1);
    version[len - 1] = '\0';
#endif
  }
  if (thread_level != nullptr) *thread_level = 3;
  return PORTA_OK;
}

int device_aware(int) {
  return 0;
}

porta_status comm_world(porta_mpi_comm* out) {
  *out = world_handle();
  return PORTA_OK;
}

porta_status comm_from_fortran(int64_t, porta_mpi_comm* out) {
  *out = world_handle();
  return PORTA_OK;
}

porta_status comm_free(porta_mpi_comm) {
  return PORTA_OK;
}

porta_status comm_ranks(porta_mpi_comm, int* rank, int* size, int* local_rank, int* local_size) {
  *rank = 0;
  *size = FAKE_MPI_MODE == FAKE_MPI_RANKS ? INT_MAX : 1;
  *local_rank = 0;
  *local_size = 1;
  return PORTA_OK;
}

// One rank: every collective is a copy of n elements (the sizes of porta_dtype: 4 or 8 bytes).
size_t bytes_of(int64_t n, porta_dtype dt) {
  return static_cast<size_t>(n) * ((dt == PORTA_F32 || dt == PORTA_I32) ? 4 : 8);
}

porta_status copy_over(const void* send, void* recv, int64_t n, porta_dtype dt) {
  if (send != recv && n > 0) std::memmove(recv, send, bytes_of(n, dt));
  return PORTA_OK;
}

porta_status allreduce(porta_mpi_comm, const void* send, void* recv, int64_t n, porta_dtype dt, porta_reduce_op) {
  return copy_over(send, recv, n, dt);
}

porta_status reduce(porta_mpi_comm, const void* send, void* recv, int64_t n, porta_dtype dt, porta_reduce_op, int) {
  return copy_over(send, recv, n, dt);
}

porta_status broadcast(porta_mpi_comm, void*, int64_t, porta_dtype, int) {
  return PORTA_OK;
}

porta_status allgather(porta_mpi_comm, const void* send, int64_t n, void* recv, porta_dtype dt) {
  return copy_over(send, recv, n, dt);
}

porta_status allgatherv(porta_mpi_comm, const void* send, int64_t n, void* recv, const int64_t*, porta_dtype dt) {
  return copy_over(send, recv, n, dt);
}

porta_status reduce_scatter(porta_mpi_comm, const void* send, void* recv, int64_t n, porta_dtype dt, porta_reduce_op) {
  return copy_over(send, recv, n, dt);
}

porta_status barrier(porta_mpi_comm) {
  return PORTA_OK;
}

porta_status isend(porta_mpi_comm, const void*, int64_t, porta_dtype, int, int, porta_mpi_request*) {
  return PORTA_ERR_UNSUPPORTED;
}

porta_status irecv(porta_mpi_comm, void*, int64_t, porta_dtype, int, int, porta_mpi_request*) {
  return PORTA_ERR_UNSUPPORTED;
}

porta_status wait_(porta_mpi_request) {
  return PORTA_OK;
}

porta_status test_(porta_mpi_request, int* done) {
  *done = 1;
  return PORTA_OK;
}

porta_mpi_v1 make_table() {
  porta_mpi_v1 t;
  std::memset(&t, 0, sizeof t);
  t.abi_version = PORTA_MPI_ABI_VERSION;
#if FAKE_MPI_MODE == FAKE_MPI_UNALIGNED
  t.struct_size = sizeof(porta_mpi_v1) + 4;
#elif FAKE_MPI_MODE == FAKE_MPI_HUGE
  t.struct_size = 0xfffffff8u;
#else
  t.struct_size = sizeof(porta_mpi_v1);
#endif
  t.build_info = "fake MPI plugin for porta's loader tests";
  t.last_error = &last_error;
  t.init = &init;
  t.device_aware = &device_aware;
  t.comm_world = &comm_world;
  t.comm_from_fortran = &comm_from_fortran;
  t.comm_free = &comm_free;
#if FAKE_MPI_MODE == FAKE_MPI_NULL_ENTRY
  (void)&comm_ranks;
#else
  t.comm_ranks = &comm_ranks;
#endif
  t.allreduce = &allreduce;
  t.reduce = &reduce;
  t.broadcast = &broadcast;
  t.allgather = &allgather;
  t.allgatherv = &allgatherv;
  t.reduce_scatter = &reduce_scatter;
  t.barrier = &barrier;
  t.isend = &isend;
  t.irecv = &irecv;
  t.wait = &wait_;
  t.test = &test_;
  return t;
}

const porta_mpi_v1 g_table = make_table();

}  // namespace

extern "C" __attribute__((visibility("default"))) const porta_mpi_v1* porta_mpi_entry_v1(void) {
  return &g_table;
}
