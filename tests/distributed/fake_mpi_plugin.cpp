// SPDX-License-Identifier: Apache-2.0
// A libporta_mpi.so that needs a library the loader cannot find (tests/loader/fake_dep.cpp built into
// a folder on no search path): it fails to load the way the real plugin does where libmpi.so.40
// is missing, and porta-info must say so rather than "built without MPI".
#include "porta/abi/mpi_v1.h"

extern "C" int porta_fake_dep_value(void);

extern "C" __attribute__((visibility("default"))) const porta_mpi_v1* porta_mpi_entry_v1(void) {
  return porta_fake_dep_value() == 42 ? nullptr : nullptr;
}
