# SPDX-License-Identifier: Apache-2.0
# Driver of the install:* tests (tests/install/CMakeLists.txt): cmake -D... -P run_consumer.cmake
cmake_minimum_required(VERSION 3.21)

function(run)
  string(JOIN " " _cmd ${ARGN})
  message(STATUS "run: ${_cmd}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "failed (${_rc}): ${_cmd}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

set(_configure
  -G "${GENERATOR}"
  -DCMAKE_CXX_COMPILER=${CXX}
  "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
  "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}"
  # the consumer must find the installed package, not a registry entry or this build tree
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
if(MAKE_PROGRAM)
  list(APPEND _configure -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
endif()
if(CONFIG)
  list(APPEND _configure -DCMAKE_BUILD_TYPE=${CONFIG})
  set(_config_args --config ${CONFIG})
endif()

if(MODE STREQUAL "find_package")
  # Copies the already built files; builds nothing.
  run(${CMAKE_COMMAND} --install "${PORTA_BUILD_DIR}" --prefix "${WORK}/prefix" ${_config_args})
  run(${CMAKE_COMMAND} -S "${SOURCE}" -B "${WORK}/build" ${_configure}
      "-DCMAKE_PREFIX_PATH=${WORK}/prefix" "-DPORTA_EXPECTED_PREFIX=${WORK}/prefix")
  run(${CMAKE_COMMAND} --build "${WORK}/build" ${_config_args})
  run("${WORK}/build/porta_consumer")
elseif(MODE STREQUAL "add_subdirectory")
  run(${CMAKE_COMMAND} -S "${SOURCE}" -B "${WORK}/build" ${_configure}
      "-DPORTA_SOURCE_DIR=${PORTA_SOURCE_DIR}"
      -DPORTA_ENABLE_CUDA=${ENABLE_CUDA} -DPORTA_ENABLE_HIP=${ENABLE_HIP})
  if(FULL_BUILD)
    run(${CMAKE_COMMAND} --build "${WORK}/build" ${_config_args})
    run("${WORK}/build/porta_consumer")
  else()
    message(STATUS "configure-only (PORTA_INSTALL_TEST_FULL_BUILD=OFF)")
  endif()
else()
  message(FATAL_ERROR "MODE must be find_package or add_subdirectory")
endif()
