# SPDX-License-Identifier: Apache-2.0
# Driver of the install:* tests (tests/install/CMakeLists.txt): cmake -D... -P run_consumer.cmake
cmake_minimum_required(VERSION 3.21)

include(${CMAKE_CURRENT_LIST_DIR}/driver_common.cmake)

# A consumer whose kernels were linked with the static CUDA runtime must start without libcudart.so
#: its load-time closure holds none, and it runs with the CUDA libraries hidden. The
# checks are the ones of porta's own build (tests/startup).
function(check_startup binary build_dir lib_dirs)
  file(READ "${build_dir}/porta_kernels_runtime.txt" _rt)
  if(NOT _rt STREQUAL "cudart Static")
    message(STATUS "startup checks skipped: the consumer's kernels use '${_rt}', not the static CUDA runtime")
    return()
  endif()
  set(_plugins "")
  foreach(_d IN LISTS lib_dirs)
    if(EXISTS "${_d}/libporta_cuda.so")
      list(APPEND _plugins "${_d}/libporta_cuda.so")
    endif()
  endforeach()
  list(GET lib_dirs 0 _libdir)  # only a hint: the consumer's RUNPATH names it already
  run(${CMAKE_COMMAND} "-DBINARY=${binary}" "-DFORBID=^lib(cudart|amdhip64)\\.so" "-DDIRECTORIES=${_libdir}"
      -P "${PORTA_SOURCE_DIR}/tests/startup/check_runtime_deps.cmake")
  run(${CMAKE_COMMAND} "-DBINARY=${binary}" "-DPLUGINS=${_plugins}" "-DFORBID=libcudart\\.so"
      "-DEXPECT=kernel sum = 500500.0"
      -P "${PORTA_SOURCE_DIR}/tests/startup/run_without_gpu_libs.cmake")
endfunction()

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")


if(MODE STREQUAL "find_package")
  # Copies the already built files; builds nothing.
  run(${CMAKE_COMMAND} --install "${PORTA_BUILD_DIR}" --prefix "${WORK}/prefix" ${_config_args})
  run(${CMAKE_COMMAND} -S "${SOURCE}" -B "${WORK}/build" ${_configure}
      "-DCMAKE_PREFIX_PATH=${WORK}/prefix" "-DPORTA_EXPECTED_PREFIX=${WORK}/prefix")
  run(${CMAKE_COMMAND} --build "${WORK}/build" ${_config_args})
  run("${WORK}/build/porta_consumer")
  file(GLOB _libdirs LIST_DIRECTORIES true "${WORK}/prefix/lib" "${WORK}/prefix/lib64" "${WORK}/prefix/lib/*-linux-gnu")
  check_startup("${WORK}/build/porta_consumer" "${WORK}/build" "${_libdirs}")
elseif(MODE STREQUAL "add_subdirectory")
  run(${CMAKE_COMMAND} -S "${SOURCE}" -B "${WORK}/build" ${_configure}
      "-DPORTA_SOURCE_DIR=${PORTA_SOURCE_DIR}"
      -DPORTA_ENABLE_CUDA=${ENABLE_CUDA} -DPORTA_ENABLE_HIP=${ENABLE_HIP})
  if(FULL_BUILD)
    run(${CMAKE_COMMAND} --build "${WORK}/build" ${_config_args})
    run("${WORK}/build/porta_consumer")
    check_startup("${WORK}/build/porta_consumer" "${WORK}/build" "${WORK}/build/porta/lib")
  else()
    message(STATUS "configure-only (PORTA_INSTALL_TEST_FULL_BUILD=OFF)")
  endif()
else()
  message(FATAL_ERROR "MODE must be find_package or add_subdirectory")
endif()
