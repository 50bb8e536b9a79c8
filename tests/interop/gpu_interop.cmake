# SPDX-License-Identifier: Apache-2.0
# porta_gpu_interop_tests: porta's arrays in the user's own CUDA/HIP code (a hand-written kernel,
# cuBLAS, cuFFT) and the user's device memory borrowed by porta; on the CPU device the user's code
# is a host loop. Compiled in the GPU language when the build has one (as the kernel tests are).
add_executable(porta_gpu_interop_tests test_gpu_interop.cpp)
target_link_libraries(porta_gpu_interop_tests PRIVATE porta_test_support)
get_property(_porta_interop_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
if(COMMAND porta_add_kernels)
  porta_add_kernels(porta_gpu_interop_tests SOURCES test_gpu_interop.cpp)
  if("cuda" IN_LIST PORTA_GPU_BACKENDS_BUILT AND "CUDA" IN_LIST _porta_interop_langs)
    find_package(CUDAToolkit REQUIRED)
    target_link_libraries(porta_gpu_interop_tests PRIVATE CUDA::cublas CUDA::cufft)
  endif()
endif()
porta_add_catch_test(porta_gpu_interop_tests LABELS interop)

# With CUDA and HIP both built the test above is CUDA: compile it as HIP as well, so that a build
# without an AMD GPU still proves the HIP side compiles (as porta_kernel_tests_hip does).
if(COMMAND porta_add_kernels AND "hip" IN_LIST PORTA_GPU_BACKENDS_BUILT AND "cuda" IN_LIST PORTA_GPU_BACKENDS_BUILT
   AND "HIP" IN_LIST _porta_interop_langs)
  add_executable(porta_gpu_interop_tests_hip)
  target_link_libraries(porta_gpu_interop_tests_hip PRIVATE porta_test_support)
  porta_add_kernels(porta_gpu_interop_tests_hip LANGUAGE HIP SOURCES test_gpu_interop_hip.cpp)
  add_test(NAME porta_gpu_interop_tests_hip COMMAND porta_gpu_interop_tests_hip "~[.]")
  set_tests_properties(porta_gpu_interop_tests_hip PROPERTIES LABELS interop TIMEOUT 300)
endif()
