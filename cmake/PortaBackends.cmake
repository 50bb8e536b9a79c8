# SPDX-License-Identifier: Apache-2.0
# GPU backends: each is a MODULE plugin (libporta_<name>.so) that libporta dlopens at run time, so
# a CUDA or HIP build still starts on machines without the GPU, its driver or its libraries.
# Sets PORTA_GPU_BACKENDS_BUILT (list of cuda, hip).

set(PORTA_GPU_BACKENDS_BUILT "")
include(CheckLanguage)

# Every GPU device type of include/porta/abi/device_types.inc (PORTA_DEVICE_TYPES, read by
# PortaOptions.cmake) is a folder backends/<name>/ whose backend.cmake decides, from
# PORTA_ENABLE_<option>, whether its toolchain is there, builds the plugin and appends <name> to
# PORTA_GPU_BACKENDS_BUILT. Included rather than add_subdirectory'd: a GPU language must be enabled
# at the top level for in-tree user kernels (porta_add_kernels) to use it.
foreach(_porta_type IN LISTS PORTA_DEVICE_TYPES)
  if(_porta_type STREQUAL "cpu")
    continue()
  endif()
  set(_porta_option ${PORTA_DEVICE_TYPE_OPTION_${_porta_type}})
  if(NOT PORTA_ENABLE_${_porta_option} STREQUAL "OFF")
    include(${PROJECT_SOURCE_DIR}/backends/${_porta_type}/backend.cmake)
  endif()
endforeach()

include(${CMAKE_CURRENT_LIST_DIR}/PortaKernels.cmake)
