# SPDX-License-Identifier: Apache-2.0
# Install rules and the exported package: find_package(porta) + porta::porta, porta.pc for
# pkg-config, and the .deb (cmake/PortaPackage.cmake). Every file of the install tree names other
# files by relative paths ($ORIGIN run paths, the package's own folder, ${pcfiledir}), so the tree
# works when moved to another prefix; docs/install.md says what each file is for.
include(CMakePackageConfigHelpers)

install(TARGETS porta EXPORT portaTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/porta DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(PORTA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/porta)
install(EXPORT portaTargets NAMESPACE porta:: DESTINATION ${PORTA_CMAKE_DIR})
configure_package_config_file(cmake/portaConfig.cmake.in ${PROJECT_BINARY_DIR}/portaConfig.cmake
  INSTALL_DESTINATION ${PORTA_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/portaConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
# PortaHipLanguage.cmake: porta_add_kernels enables HIP through it, and a consumer of a porta with
# both GPU backends includes it to enable HIP beside CUDA (find_package enables only CUDA then).
install(FILES ${PROJECT_BINARY_DIR}/portaConfig.cmake ${PROJECT_BINARY_DIR}/portaConfigVersion.cmake
              cmake/PortaKernels.cmake cmake/PortaHipLanguage.cmake
        DESTINATION ${PORTA_CMAKE_DIR})

# ---- porta.pc ------------------------------------------------------------------------------------
# The prefix is found from the .pc file's own folder, so that a moved tree still gives its own paths
# (absolute install folders, which GNUInstallDirs allows, are written as they are: they do not move).
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(PORTA_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _porta_pc_up /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
  string(REGEX REPLACE "/$" "" _porta_pc_up "${_porta_pc_up}")
  set(PORTA_PC_PREFIX "\${pcfiledir}/${_porta_pc_up}")
endif()
set(PORTA_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
set(PORTA_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
foreach(_v LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_v}}")
    set(PORTA_PC_${_v} "${CMAKE_INSTALL_${_v}}")
  endif()
endforeach()
# Header-only user kernels (porta/kernels.hpp) run their CPU loops with OpenMP in the user's code,
# so a pkg-config user needs the flag to compile and to link, as porta::porta gives it in CMake.
set(PORTA_PC_OPENMP_FLAGS "")
if(PORTA_HAVE_OPENMP AND OpenMP_CXX_FLAGS)
  set(PORTA_PC_OPENMP_FLAGS " ${OpenMP_CXX_FLAGS}")
endif()
string(JOIN "," PORTA_GPU_BACKENDS_TEXT ${PORTA_GPU_BACKENDS_BUILT})
configure_file(cmake/porta.pc.in ${PROJECT_BINARY_DIR}/porta.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/porta.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

include(${CMAKE_CURRENT_LIST_DIR}/PortaPackage.cmake)
