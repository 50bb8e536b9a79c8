# SPDX-License-Identifier: Apache-2.0
# What the install test drivers (run_consumer.cmake, run_package.cmake) share: running a command
# that must succeed, and the configure arguments of a consumer project built like this build.
cmake_minimum_required(VERSION 3.21)

function(run)
  string(JOIN " " _cmd ${ARGN})
  message(STATUS "run: ${_cmd}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "failed (${_rc}): ${_cmd}")
  endif()
endfunction()

set(_configure
  -G "${GENERATOR}"
  -DCMAKE_CXX_COMPILER=${CXX}
  "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
  "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}"
  # the consumer must find the package under test, not a registry entry or this build tree
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
if(MAKE_PROGRAM)
  list(APPEND _configure -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
endif()
if(CONFIG)
  list(APPEND _configure -DCMAKE_BUILD_TYPE=${CONFIG})
  set(_config_args --config ${CONFIG})
endif()
