# SPDX-License-Identifier: Apache-2.0
# Build options. The backend switches take AUTO (on when the toolchain is found), ON (required:
# configure fails without it) or OFF.

# One switch per device type of include/porta/abi/device_types.inc (its "option" column), so that
# a new device type gets its PORTA_ENABLE_<option> from the line that declares it. Also sets
# PORTA_DEVICE_TYPES (the names: cpu;cuda;hip) and PORTA_DEVICE_TYPE_OPTION_<name>.
set(_porta_tristate AUTO ON OFF)
file(STRINGS ${CMAKE_CURRENT_LIST_DIR}/../include/porta/abi/device_types.inc _porta_type_lines
     REGEX "^PORTA_DEVICE_TYPE\\(")
set(PORTA_DEVICE_TYPES "")
set(_porta_options "")
foreach(_line IN LISTS _porta_type_lines)
  if(NOT _line MATCHES "^PORTA_DEVICE_TYPE\\(([a-z0-9_]+), *[A-Z0-9_]+, *[0-9]+, *\"[^\"]*\", *\"[^\"]*\", *[0-9]+, *\"([A-Z0-9_]+)\"")
    message(FATAL_ERROR "porta: cannot read this line of device_types.inc: ${_line}")
  endif()
  list(APPEND PORTA_DEVICE_TYPES ${CMAKE_MATCH_1})
  set(PORTA_DEVICE_TYPE_OPTION_${CMAKE_MATCH_1} ${CMAKE_MATCH_2})
  list(APPEND _porta_options ${CMAKE_MATCH_2})
endforeach()
# PORTA_ENABLE_MPI: the MPI plugin of porta::distributed (cmake/PortaMpi.cmake), same three values.
list(APPEND _porta_options MPI)
foreach(_b IN LISTS _porta_options)
  set(PORTA_ENABLE_${_b} AUTO CACHE STRING "Build the ${_b} backend: AUTO, ON or OFF")
  set_property(CACHE PORTA_ENABLE_${_b} PROPERTY STRINGS ${_porta_tristate})
  string(TOUPPER "${PORTA_ENABLE_${_b}}" PORTA_ENABLE_${_b})
  if(NOT PORTA_ENABLE_${_b} IN_LIST _porta_tristate)
    message(FATAL_ERROR "PORTA_ENABLE_${_b} must be AUTO, ON or OFF, not '${PORTA_ENABLE_${_b}}'")
  endif()
endforeach()

option(PORTA_BUILD_TESTS "Build porta's tests" ${PROJECT_IS_TOP_LEVEL})
option(PORTA_BUILD_BENCH "Build porta's benchmarks (needs Google Benchmark)" OFF)
option(PORTA_BUILD_EXAMPLES "Build porta's examples" ${PROJECT_IS_TOP_LEVEL})
option(PORTA_BUILD_TOOLS "Build porta-info" ON)
option(PORTA_USE_BLAS "Use a BLAS library for CPU matmul when one is found" ON)
# Every porta::View index checked in the code of targets that link porta::porta, installed
# consumers too (docs/debugging.md); a debugging build: each access gains a compare and a branch.
option(PORTA_BOUNDS_CHECK "Check every porta::View index in user kernels (debugging: docs/debugging.md)" OFF)
set(PORTA_CUDA_ARCHITECTURES "90-real;90-virtual" CACHE STRING
    "CUDA architectures of libporta_cuda.so (sm_90 machine code plus PTX for newer GPUs by default)")
set(PORTA_HIP_ARCHITECTURES "gfx90a;gfx1030" CACHE STRING "AMD GPU targets of libporta_hip.so")
