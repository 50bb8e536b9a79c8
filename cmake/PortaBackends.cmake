# SPDX-License-Identifier: Apache-2.0
# GPU backends: each is a MODULE plugin (libporta_<name>.so) that libporta dlopens at run time, so
# a CUDA or HIP build still starts on machines without the GPU, its driver or its libraries.
# Sets PORTA_GPU_BACKENDS_BUILT (list of cuda, hip).

set(PORTA_GPU_BACKENDS_BUILT "")
include(CheckLanguage)

# ---- CUDA ----
if(NOT PORTA_ENABLE_CUDA STREQUAL "OFF")
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    add_subdirectory(backends/cuda)
    list(APPEND PORTA_GPU_BACKENDS_BUILT cuda)
  elseif(PORTA_ENABLE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "PORTA_ENABLE_CUDA=ON but no CUDA compiler was found (set CMAKE_CUDA_COMPILER)")
  endif()
endif()

# ---- HIP ----
if(NOT PORTA_ENABLE_HIP STREQUAL "OFF")
  include(${CMAKE_CURRENT_LIST_DIR}/PortaHip.cmake OPTIONAL RESULT_VARIABLE _porta_hip_file)
endif()

include(${CMAKE_CURRENT_LIST_DIR}/PortaKernels.cmake)
