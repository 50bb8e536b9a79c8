# SPDX-License-Identifier: Apache-2.0
# vcpkg port of porta, built from the checkout that holds this folder: use it as an overlay port
# (packaging/README.md). A port in a registry would fetch a release instead (vcpkg_from_git or
# vcpkg_from_github with its SHA512), once the project has a public address.
get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)

# libporta is a shared library by design: its GPU and MPI plugins are dlopen'ed modules that call
# back into it, and a static libporta would be a second copy of the registry in every plugin.
vcpkg_check_linkage(ONLY_DYNAMIC_LIBRARY)

# Each feature switches one CMake option ON or OFF, never AUTO: the features alone decide what is
# built, whatever toolchains the machine happens to have. ON fails the configure when the
# toolchain is missing instead of building less than asked.
vcpkg_check_features(OUT_FEATURE_OPTIONS FEATURE_OPTIONS
  FEATURES
    blas    PORTA_USE_BLAS
    cuda    PORTA_ENABLE_CUDA
    hip     PORTA_ENABLE_HIP
    mpi     PORTA_ENABLE_MPI
    python  PORTA_BUILD_PYTHON
)

vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    ${FEATURE_OPTIONS}
    -DPORTA_BUILD_TESTS=OFF
    -DPORTA_BUILD_EXAMPLES=OFF
    -DPORTA_BUILD_BENCH=OFF
    -DPORTA_BUILD_TOOLS=ON
  OPTIONS_DEBUG
    # porta-info is a release tool: the debug tree gets the libraries only.
    -DPORTA_BUILD_TOOLS=OFF
)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup(PACKAGE_NAME porta CONFIG_PATH "lib/cmake/porta")
if(EXISTS "${CURRENT_PACKAGES_DIR}/lib/pkgconfig/porta.pc")
  vcpkg_fixup_pkgconfig()
endif()
vcpkg_copy_tools(TOOL_NAMES porta-info AUTO_CLEAN)

file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/debug/include" "${CURRENT_PACKAGES_DIR}/debug/share")
file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
