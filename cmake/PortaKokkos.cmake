# SPDX-License-Identifier: Apache-2.0
# Finding Kokkos, for the code of this project that builds against it: the Kokkos interop tests
# (tests/interop), the Kokkos example (examples/kokkos_interop) and the Kokkos peer of the
# benchmarks (bench/). porta itself never needs Kokkos; include/porta/kokkos.hpp is header-only.
#
#   include(${PROJECT_SOURCE_DIR}/cmake/PortaKokkos.cmake)
#   porta_find_kokkos([CONTEXT "<prefix of the messages>"])
#   if(PORTA_KOKKOS_FOUND)
#     target_link_libraries(<target> PRIVATE Kokkos::kokkos)
#   endif()
#
# Honours Kokkos_ROOT. Imported targets are local to a directory, so each directory that links
# Kokkos::kokkos calls porta_find_kokkos() itself. Sets in the caller:
#   PORTA_KOKKOS_FOUND          ON when Kokkos::kokkos is usable
#   PORTA_KOKKOS_VERSION        Kokkos_VERSION
#   PORTA_KOKKOS_DIR            where its package config was found
#   PORTA_KOKKOS_DEVICES        Kokkos_DEVICES (SERIAL, OPENMP, THREADS, CUDA, HIP, ...)
#   PORTA_KOKKOS_PARALLEL_HOST  ON when a host backend runs on more than one core (OpenMP, Threads)
#
# Debian's libtrilinos-kokkos-dev (Kokkos 3.4 of Trilinos 13.2, Serial backend only; what CI
# installs, scripts/common.sh) needs two workarounds, which live here and nowhere else:
#   - its KokkosConfig.cmake points Kokkos::kokkos's include directory at <libdir>/../include
#     (/usr/lib/include), which does not exist (CMake then refuses to generate); its headers are in
#     include/trilinos;
#   - it forces CMAKE_CXX_EXTENSIONS OFF into the cache unless the variable is defined, which would
#     change the flags of every target of the project from the next configure on; the function
#     defines it in its own scope, so neither the cache nor the caller's directory changes.
include_guard(GLOBAL)

function(porta_find_kokkos)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "CONTEXT" "")
  if(NOT ARG_CONTEXT)
    set(ARG_CONTEXT "porta")
  endif()
  if(NOT DEFINED CMAKE_CXX_EXTENSIONS)
    set(CMAKE_CXX_EXTENSIONS OFF)
  endif()
  find_package(Kokkos QUIET)
  set(_found OFF)
  if(Kokkos_FOUND AND TARGET Kokkos::kokkos)
    get_target_property(_inc Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
    set(_inc_ok ON)
    foreach(_d IN LISTS _inc)
      if(NOT _d MATCHES "^\\$<" AND NOT EXISTS "${_d}")
        set(_inc_ok OFF)
      endif()
    endforeach()
    if(_inc_ok)
      set(_found ON)
    else()
      find_path(PORTA_KOKKOS_INCLUDE_DIR Kokkos_Core.hpp PATH_SUFFIXES trilinos kokkos)
      mark_as_advanced(PORTA_KOKKOS_INCLUDE_DIR)
      if(PORTA_KOKKOS_INCLUDE_DIR)
        set_target_properties(Kokkos::kokkos PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${PORTA_KOKKOS_INCLUDE_DIR}")
        set(_found ON)
      else()
        message(STATUS "${ARG_CONTEXT}: Kokkos at ${Kokkos_DIR} names include directories that do not exist "
                       "(${_inc}) and no Kokkos_Core.hpp was found elsewhere; left out")
      endif()
    endif()
  endif()
  set(_parallel OFF)
  if(Kokkos_ENABLE_OPENMP OR Kokkos_ENABLE_THREADS OR "OPENMP" IN_LIST Kokkos_DEVICES
     OR "THREADS" IN_LIST Kokkos_DEVICES)
    set(_parallel ON)
  endif()
  set(PORTA_KOKKOS_FOUND ${_found} PARENT_SCOPE)
  set(PORTA_KOKKOS_VERSION "${Kokkos_VERSION}" PARENT_SCOPE)
  set(PORTA_KOKKOS_DIR "${Kokkos_DIR}" PARENT_SCOPE)
  set(PORTA_KOKKOS_DEVICES "${Kokkos_DEVICES}" PARENT_SCOPE)
  set(PORTA_KOKKOS_PARALLEL_HOST ${_parallel} PARENT_SCOPE)
endfunction()
