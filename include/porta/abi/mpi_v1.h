/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The MPI plugin ABI, version 1: what crosses between libporta and libporta_mpi.so.
 *
 * MPI has no common binary interface (MPI_Comm is a pointer in Open MPI and an int in MPICH), so
 * libporta never includes mpi.h: libporta_mpi.so is compiled against the MPI found at build time,
 * dlopen'ed on first use of porta::distributed, and exports porta_mpi_entry_v1() returning a static
 * porta_mpi_v1 table. Where the MPI library is missing at run time the dlopen fails, and the
 * reason is kept for porta-info and for the Unavailable that Communicator::world() throws.
 *
 * Conventions are those of backend_v1.h: every call returns a porta_status and keeps a thread-local
 * message for last_error(); counts are in elements of dt and 64-bit (the plugin splits or refuses
 * what MPI's int counts cannot carry); buffers are host memory, or device memory where
 * device_aware() said the MPI library reads it. Reductions use porta's own op semantics
 * (include/porta/detail/ops.hpp: NaN propagates through min and max, integers wrap), applied by
 * user-defined MPI_Ops, so that MPI and the other transports agree.
 */
#ifndef PORTA_ABI_MPI_V1_H
#define PORTA_ABI_MPI_V1_H

#include "backend_v1.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PORTA_MPI_ABI_VERSION 1u
#define PORTA_MPI_ENTRY_SYMBOL "porta_mpi_entry_v1"

typedef struct porta_mpi_comm_s* porta_mpi_comm;
typedef struct porta_mpi_request_s* porta_mpi_request;

typedef struct porta_mpi_v1 {
  uint32_t abi_version;   /* PORTA_MPI_ABI_VERSION */
  uint32_t struct_size;   /* sizeof(porta_mpi_v1) as the plugin was built */
  const char* build_info; /* the headers it was built with: "Open MPI 4.1.4 (MPI 3.1)" */

  /* Thread-local message of the last failing call on this thread. Never NULL. */
  const char* (*last_error)(void);

  /* With initialise != 0: initialises MPI (MPI_Init_thread asking for MPI_THREAD_MULTIPLE) unless
   * the application already did; when porta initialised it, porta finalises it at exit. Safe to
   * call more than once. With initialise == 0 (porta-info) it only asks. Fills version with the
   * first line of MPI_Get_library_version (callable before MPI_Init) and *thread_level with the
   * level provided (MPI_THREAD_*: 0..3; -1 when not initialised). */
  porta_status (*init)(int initialise, char* version, size_t len, int* thread_level);
  /* 1 when the library can read and write device memory of that porta_device_type directly
   * (Open MPI: MPIX_Query_cuda_support / MPIX_Query_rocm_support), else 0. Also before init. */
  int (*device_aware)(int device_type);

  /* Communicators: porta always works on its own duplicate (MPI_Comm_dup), so its messages never
   * match the application's. */
  porta_status (*comm_world)(porta_mpi_comm* out);
  porta_status (*comm_from_fortran)(int64_t handle, porta_mpi_comm* out); /* MPI_Comm_c2f of the user's */
  porta_status (*comm_free)(porta_mpi_comm c);                            /* a no-op once MPI is finalised */
  /* rank and size in c; local_*: within the ranks of c on this node (MPI_COMM_TYPE_SHARED). */
  porta_status (*comm_ranks)(porta_mpi_comm c, int* rank, int* size, int* local_rank, int* local_size);

  /* Collectives, blocking. op: PORTA_REDUCE_SUM, PROD, MIN or MAX. send == recv means in place. */
  porta_status (*allreduce)(porta_mpi_comm c, const void* send, void* recv, int64_t n, porta_dtype dt,
                            porta_reduce_op op);
  porta_status (*reduce)(porta_mpi_comm c, const void* send, void* recv, int64_t n, porta_dtype dt, porta_reduce_op op,
                         int root); /* recv used on root only */
  porta_status (*broadcast)(porta_mpi_comm c, void* buf, int64_t n, porta_dtype dt, int root);
  /* recv[r * n + i] = send of rank r, element i */
  porta_status (*allgather)(porta_mpi_comm c, const void* send, int64_t n, void* recv, porta_dtype dt);
  /* counts[r]: elements from rank r (every rank passes the same counts); recv holds them in rank order */
  porta_status (*allgatherv)(porta_mpi_comm c, const void* send, int64_t n, void* recv, const int64_t* counts,
                             porta_dtype dt);
  /* recv[i] = op over ranks r of send_r[rank * n + i] (send holds size * n elements) */
  porta_status (*reduce_scatter)(porta_mpi_comm c, const void* send, void* recv, int64_t n, porta_dtype dt,
                                 porta_reduce_op op);
  porta_status (*barrier)(porta_mpi_comm c);

  /* Point to point, non-blocking. wait and a test that reports done free the request. */
  porta_status (*isend)(porta_mpi_comm c, const void* buf, int64_t n, porta_dtype dt, int dest, int tag,
                        porta_mpi_request* out);
  porta_status (*irecv)(porta_mpi_comm c, void* buf, int64_t n, porta_dtype dt, int source, int tag,
                        porta_mpi_request* out);
  porta_status (*wait)(porta_mpi_request r);
  porta_status (*test)(porta_mpi_request r, int* done);
} porta_mpi_v1;

typedef const porta_mpi_v1* (*porta_mpi_entry_v1_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* PORTA_ABI_MPI_V1_H */
