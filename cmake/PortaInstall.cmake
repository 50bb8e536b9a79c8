# SPDX-License-Identifier: Apache-2.0
# Install rules and the exported package: find_package(porta) + porta::porta.
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
install(FILES ${PROJECT_BINARY_DIR}/portaConfig.cmake ${PROJECT_BINARY_DIR}/portaConfigVersion.cmake
              cmake/PortaKernels.cmake
        DESTINATION ${PORTA_CMAKE_DIR})
