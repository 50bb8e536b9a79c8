# SPDX-License-Identifier: Apache-2.0
# The GPU plugins' kernel translation units: one per kernel family and dtype, generated into the
# build tree from kernels.cu.in. The dtype list (include/porta/abi/dtypes.inc) and the family list
# below are the only places that spell the grid: a new dtype is a line there, a new family a word
# here. Included by backends/cuda and backends/hip, which compile the same generated files, each
# with its own compiler (source properties are per directory).
#
# One translation unit per family and dtype keeps a build spread over cores: the vendor's radix
# sort (sort_kernels.cuh) is the slowest template of the plugin to compile.

# <family>_kernels.cuh defines <Family>Kernels<Api, T> (backends/gpu/kernels.hpp declares them).
set(PORTA_GPU_KERNEL_FAMILIES map reduce gemm sort index scan program random sparse)
# Families that exist for the dtypes of kind "real" only, and those that exist for kind "complex"
# too (the others are for real and integer types).
set(PORTA_GPU_REAL_KERNEL_FAMILIES random sparse)
set(PORTA_GPU_COMPLEX_KERNEL_FAMILIES map reduce index gemm program)
# Families compiled for the 16-bit floats (kind "half"), which compute in float.
set(PORTA_GPU_HALF_KERNEL_FAMILIES map reduce index program)

# PORTA_DTYPES: the dtypes' names (f32, ...), in the list's order; PORTA_REAL_DTYPES and
# PORTA_COMPLEX_DTYPES, PORTA_HALF_DTYPES: those of kind real, complex and half;
# PORTA_DTYPE_CTYPE_<name>: the C type.
file(STRINGS ${PROJECT_SOURCE_DIR}/include/porta/abi/dtypes.inc _porta_dtype_lines REGEX "^PORTA_DTYPE\\(")
# A build folder re-runs CMake when the list changes, so a new dtype gets its translation units.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/porta/abi/dtypes.inc)
set(PORTA_DTYPES "")
set(PORTA_REAL_DTYPES "")
set(PORTA_COMPLEX_DTYPES "")
set(PORTA_HALF_DTYPES "")
foreach(_line IN LISTS _porta_dtype_lines)
  if(NOT _line MATCHES "^PORTA_DTYPE\\(([A-Z0-9]+), ([a-z0-9]+), ([a-z0-9_]+), ([0-9]+), \"([^\"]*)\", (real|integer|complex|half)\\)$")
    message(FATAL_ERROR "porta: cannot read this line of dtypes.inc: ${_line}")
  endif()
  list(APPEND PORTA_DTYPES ${CMAKE_MATCH_2})
  set(PORTA_DTYPE_CTYPE_${CMAKE_MATCH_2} ${CMAKE_MATCH_3})
  if(CMAKE_MATCH_6 STREQUAL "real")
    list(APPEND PORTA_REAL_DTYPES ${CMAKE_MATCH_2})
  elseif(CMAKE_MATCH_6 STREQUAL "complex")
    list(APPEND PORTA_COMPLEX_DTYPES ${CMAKE_MATCH_2})
  elseif(CMAKE_MATCH_6 STREQUAL "half")
    list(APPEND PORTA_HALF_DTYPES ${CMAKE_MATCH_2})
  endif()
endforeach()
if(NOT PORTA_DTYPES)
  message(FATAL_ERROR "porta: no dtype in include/porta/abi/dtypes.inc")
endif()

set(_porta_gpu_instantiate_dir ${CMAKE_CURRENT_LIST_DIR})

# porta_gpu_kernel_sources(<var>): writes the translation units (configure_file rewrites a file
# only when its text changes) and sets <var> to all of them and <var>_<family> to each family's.
function(porta_gpu_kernel_sources var)
  set(_all "")
  foreach(PORTA_KERNEL_FAMILY IN LISTS PORTA_GPU_KERNEL_FAMILIES)
    set(_dtypes ${PORTA_DTYPES})
    if(PORTA_KERNEL_FAMILY IN_LIST PORTA_GPU_REAL_KERNEL_FAMILIES)
      set(_dtypes ${PORTA_REAL_DTYPES})
    else()
      if(NOT PORTA_KERNEL_FAMILY IN_LIST PORTA_GPU_COMPLEX_KERNEL_FAMILIES)
        list(REMOVE_ITEM _dtypes ${PORTA_COMPLEX_DTYPES})
      endif()
      if(NOT PORTA_KERNEL_FAMILY IN_LIST PORTA_GPU_HALF_KERNEL_FAMILIES)
        list(REMOVE_ITEM _dtypes ${PORTA_HALF_DTYPES})
      endif()
    endif()
    # map -> MapKernels
    string(SUBSTRING ${PORTA_KERNEL_FAMILY} 0 1 _first)
    string(SUBSTRING ${PORTA_KERNEL_FAMILY} 1 -1 _rest)
    string(TOUPPER ${_first} _first)
    set(PORTA_KERNEL_CLASS ${_first}${_rest}Kernels)
    set(_files "")
    foreach(_dtype IN LISTS _dtypes)
      set(PORTA_KERNEL_TYPE ${PORTA_DTYPE_CTYPE_${_dtype}})
      set(_file ${PROJECT_BINARY_DIR}/backends/gpu/instantiate/${PORTA_KERNEL_FAMILY}_${_dtype}.cu)
      configure_file(${_porta_gpu_instantiate_dir}/kernels.cu.in ${_file} @ONLY)
      list(APPEND _files ${_file})
    endforeach()
    set(${var}_${PORTA_KERNEL_FAMILY} ${_files} PARENT_SCOPE)
    list(APPEND _all ${_files})
  endforeach()
  set(${var} ${_all} PARENT_SCOPE)
endfunction()
