# SPDX-License-Identifier: Apache-2.0
# The HIP backend (libporta_hip.so), included by cmake/PortaBackends.cmake unless PORTA_ENABLE_HIP=OFF.
# Appends `hip` to PORTA_GPU_BACKENDS_BUILT when the plugin is built.
#
# The toolchain is found through hipcc and driven through CMake's HIP language
# (cmake/PortaHipLanguage.cmake says why and how); only the plugin's sources are compiled by
# ROCm's clang, the rest of porta keeps the project's C++ compiler.

include(${PROJECT_SOURCE_DIR}/cmake/PortaHipLanguage.cmake)

option(PORTA_HIP_USE_VENDOR_BLAS
       "libporta_hip.so: use rocBLAS (or hipBLAS) for float/double gemm when found; otherwise porta's GEMM kernel" ON)

porta_hip_enable_language(_porta_hip_ok _porta_hip_why ARCHITECTURES ${PORTA_HIP_ARCHITECTURES})
if(_porta_hip_ok)
  add_subdirectory(${CMAKE_CURRENT_LIST_DIR} ${PROJECT_BINARY_DIR}/backends/hip)
  list(APPEND PORTA_GPU_BACKENDS_BUILT hip)
  # User projects enable HIP through the same helper (PortaKernels.cmake includes it).
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/PortaHipLanguage.cmake DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/porta)
elseif(PORTA_ENABLE_HIP STREQUAL "ON")
  message(FATAL_ERROR "porta: PORTA_ENABLE_HIP=ON, but the HIP toolchain does not work: ${_porta_hip_why}")
else()
  message(STATUS "porta: HIP backend not built (PORTA_ENABLE_HIP=AUTO): ${_porta_hip_why}")
endif()
unset(_porta_hip_ok)
unset(_porta_hip_why)
