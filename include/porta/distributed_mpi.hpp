// SPDX-License-Identifier: Apache-2.0
// porta::distributed::from_mpi: a Communicator over an MPI communicator the application already has.
// Include it after <mpi.h> in code that uses MPI itself; porta.hpp does not include it, so code
// without MPI never needs MPI's headers.
//
//   #include <mpi.h>
//   #include <porta/distributed_mpi.hpp>
//   MPI_Comm rows;
//   MPI_Comm_split(MPI_COMM_WORLD, color, key, &rows);
//   auto comm = porta::distributed::from_mpi(rows);   // porta works on its own duplicate of rows
//
// MPI_Comm differs between MPI libraries (a pointer in Open MPI, an int in MPICH); its Fortran
// handle (MPI_Comm_c2f) is an integer in every one, so that is what crosses into libporta.
#pragma once

#include <mpi.h>

#include "porta/distributed.hpp"

namespace porta::distributed {

inline Communicator from_mpi(MPI_Comm comm) {
  return Communicator::from_fortran_handle(static_cast<std::int64_t>(MPI_Comm_c2f(comm)));
}

}  // namespace porta::distributed
