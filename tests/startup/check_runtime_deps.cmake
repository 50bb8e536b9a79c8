# SPDX-License-Identifier: Apache-2.0
# Fails when a program's load-time dependencies include a GPU runtime it must start without.
#
#   cmake -DBINARY=<file> -DFORBID=<regex> [-DDIRECTORIES=<dir;...>] [-DSKIP_REASON=<text>]
#         [-DREADELF=<readelf>] -P check_runtime_deps.cmake
#
# FORBID is matched against the file name of every library in the closure of the program's
# DT_NEEDED entries (not only its own: a libporta that needed libcudart.so would stop the program
# as surely). SKIP_REASON, when set, prints "SKIP: <reason>" and checks nothing, for builds where
# the kernel sources were not compiled with the static runtime (ctest marks the test skipped).
cmake_minimum_required(VERSION 3.21)

if(SKIP_REASON)
  message("SKIP: ${SKIP_REASON}")
  return()
endif()
if(NOT BINARY OR NOT EXISTS "${BINARY}")
  message(FATAL_ERROR "BINARY '${BINARY}' does not exist (build it first)")
endif()
if(NOT FORBID)
  message(FATAL_ERROR "set FORBID to the regex of the libraries that must not be needed")
endif()
if(NOT CMAKE_HOST_SYSTEM_NAME STREQUAL "Linux")
  message("SKIP: the check reads ELF dependencies; this host is ${CMAKE_HOST_SYSTEM_NAME}")
  return()
endif()

# The direct list first, as readelf prints it, so that the log shows what the linker recorded.
if(NOT READELF)
  find_program(READELF NAMES readelf)
endif()
if(READELF)
  execute_process(COMMAND "${READELF}" -d "${BINARY}" OUTPUT_VARIABLE _dyn RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "readelf -d ${BINARY} failed (${_rc})")
  endif()
  string(REGEX MATCHALL "[^\n]*\\((NEEDED|RUNPATH|RPATH)\\)[^\n]*" _lines "${_dyn}")
  message("readelf -d ${BINARY}:")
  foreach(_l IN LISTS _lines)
    message("  ${_l}")
  endforeach()
endif()

# Then the whole closure, resolved the way the dynamic loader would (RUNPATH, ld.so.conf).
set(CMAKE_GET_RUNTIME_DEPENDENCIES_PLATFORM "linux+elf")
file(GET_RUNTIME_DEPENDENCIES
  EXECUTABLES "${BINARY}"
  RESOLVED_DEPENDENCIES_VAR _resolved
  UNRESOLVED_DEPENDENCIES_VAR _unresolved
  DIRECTORIES ${DIRECTORIES})
set(_bad "")
foreach(_dep IN LISTS _resolved _unresolved)
  get_filename_component(_name "${_dep}" NAME)
  if(_name MATCHES "${FORBID}")
    list(APPEND _bad "${_dep}")
  endif()
endforeach()
list(LENGTH _resolved _n)
message("load-time closure: ${_n} libraries; unresolved: ${_unresolved}")
if(_bad)
  message(FATAL_ERROR "${BINARY} needs ${_bad} to start (matches '${FORBID}'): a machine without that GPU "
                      "runtime could not run it on the CPU. Was a kernel source linked with the shared runtime "
                      "(CUDA::cudart, CUDA_RUNTIME_LIBRARY Shared), or does libporta link it?")
endif()
message("OK: nothing in the load-time closure of ${BINARY} matches '${FORBID}'")
