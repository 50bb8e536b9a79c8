# SPDX-License-Identifier: Apache-2.0
# The MPI plugin (backends/mpi, libporta_mpi.so), built unless PORTA_ENABLE_MPI=OFF when CMake's
# FindMPI finds an MPI for C (AUTO), or required (ON). Sets PORTA_MPI_BUILT, and tells libporta
# through the compile definition PORTA_MPI_BUILT=0/1, so that porta-info can tell "built without
# MPI" from "built, but libmpi is missing here". FindMPI also sets MPIEXEC_EXECUTABLE, which the
# MPI tests use (tests/distributed/mpi_tests.cmake).
set(PORTA_MPI_BUILT OFF)
if(NOT PORTA_ENABLE_MPI STREQUAL "OFF")
  include(CheckLanguage)
  check_language(C)
  if(CMAKE_C_COMPILER)
    # FindMPI's C component needs the C language (the plugin itself is C++ calling MPI's C API).
    enable_language(C)
    if(PORTA_ENABLE_MPI STREQUAL "ON")
      find_package(MPI REQUIRED COMPONENTS C)
    else()
      find_package(MPI COMPONENTS C)
    endif()
  elseif(PORTA_ENABLE_MPI STREQUAL "ON")
    message(FATAL_ERROR "PORTA_ENABLE_MPI=ON needs a C compiler for FindMPI (set CMAKE_C_COMPILER)")
  endif()
  if(MPI_C_FOUND)
    add_subdirectory(${PROJECT_SOURCE_DIR}/backends/mpi ${PROJECT_BINARY_DIR}/backends/mpi)
    set(PORTA_MPI_BUILT ON)
    message(STATUS "porta: MPI plugin: MPI ${MPI_C_VERSION} (${MPI_C_LIB_NAMES}), mpiexec ${MPIEXEC_EXECUTABLE}")
  else()
    message(STATUS "porta: MPI plugin not built (PORTA_ENABLE_MPI=AUTO): no MPI for C found")
  endif()
endif()
if(PORTA_MPI_BUILT)
  target_compile_definitions(porta PRIVATE PORTA_MPI_BUILT=1)
else()
  target_compile_definitions(porta PRIVATE PORTA_MPI_BUILT=0)
endif()
