# SPDX-License-Identifier: Apache-2.0
# The CUDA backend (libporta_cuda.so), included by cmake/PortaBackends.cmake unless
# PORTA_ENABLE_CUDA=OFF. Appends `cuda` to PORTA_GPU_BACKENDS_BUILT when the plugin is built.
#
# The language is enabled here, at the top level, so that in-tree user kernels (examples, tests:
# porta_add_kernels) can be CUDA too. The architectures default to the plugin's, so that CMake
# does not probe a GPU (there is none on CI runners).
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES "${PORTA_CUDA_ARCHITECTURES}")
endif()
check_language(CUDA)
if(CMAKE_CUDA_COMPILER)
  enable_language(CUDA)
  find_package(CUDAToolkit)
  if(CUDAToolkit_FOUND AND TARGET CUDA::cudart AND TARGET CUDA::cublas AND TARGET CUDA::cusparse
     AND TARGET CUDA::cusolver AND TARGET CUDA::cufft)
    add_subdirectory(${CMAKE_CURRENT_LIST_DIR} ${PROJECT_BINARY_DIR}/backends/cuda)
    list(APPEND PORTA_GPU_BACKENDS_BUILT cuda)
  elseif(PORTA_ENABLE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "PORTA_ENABLE_CUDA=ON, but the CUDA toolkit's runtime, cuBLAS, cuSPARSE, cuSOLVER or cuFFT was not "
                        "found (CUDAToolkit_FOUND=${CUDAToolkit_FOUND}; set CUDAToolkit_ROOT)")
  else()
    message(STATUS "porta: CUDA backend not built (PORTA_ENABLE_CUDA=AUTO): the CUDA runtime, cuBLAS, cuSPARSE, "
                   "cuSOLVER or cuFFT was not found")
  endif()
elseif(PORTA_ENABLE_CUDA STREQUAL "ON")
  message(FATAL_ERROR "PORTA_ENABLE_CUDA=ON but no CUDA compiler was found (set CMAKE_CUDA_COMPILER)")
else()
  message(STATUS "porta: CUDA backend not built (PORTA_ENABLE_CUDA=AUTO): no CUDA compiler found")
endif()
