# SPDX-License-Identifier: Apache-2.0
# Test plumbing: finds Catch2 (v3, v2, or a vendored single header) and registers test
# executables with ctest.
#
#   PORTA_CATCH2_INCLUDE_DIR  a folder holding catch2/catch.hpp (Catch2 v2 single header); when
#                             set, no find_package is done (machines without a Catch2 package).
#
# Defines
#   porta_catch2              INTERFACE target: the Catch2 headers (+ library for v3) and
#                             PORTA_CATCH2_V3 when the v3 API is in use.
#   porta_add_catch_test(<target> [LABELS l...] [TAGS t...] [TIMEOUT s])
#                             registers <target> with ctest: one ctest test per TEST_CASE when
#                             Catch's catch_discover_tests is available, else one per test_*.cpp;
#                             plus one entry per tag in TAGS, labelled with the tag.
include_guard(GLOBAL)

set(PORTA_CATCH2_INCLUDE_DIR "" CACHE PATH "Folder holding catch2/catch.hpp (vendored Catch2 v2 single header)")

add_library(porta_catch2 INTERFACE)
set(PORTA_CATCH2_DISCOVER OFF)

if(PORTA_CATCH2_INCLUDE_DIR)
  if(NOT EXISTS "${PORTA_CATCH2_INCLUDE_DIR}/catch2/catch.hpp")
    message(FATAL_ERROR "PORTA_CATCH2_INCLUDE_DIR=${PORTA_CATCH2_INCLUDE_DIR} has no catch2/catch.hpp")
  endif()
  target_include_directories(porta_catch2 SYSTEM INTERFACE "${PORTA_CATCH2_INCLUDE_DIR}")
  set(PORTA_CATCH2_VERSION 2)
  message(STATUS "porta tests: vendored Catch2 from ${PORTA_CATCH2_INCLUDE_DIR}")
else()
  find_package(Catch2 3 QUIET)
  if(Catch2_FOUND)
    # Catch2::Catch2 is the library without main(); tests/support/main.cpp is the runner.
    target_link_libraries(porta_catch2 INTERFACE Catch2::Catch2)
    target_compile_definitions(porta_catch2 INTERFACE PORTA_CATCH2_V3=1)
    set(PORTA_CATCH2_VERSION 3)
  else()
    find_package(Catch2 2 QUIET)
    if(NOT Catch2_FOUND)
      message(FATAL_ERROR
        "porta tests need Catch2 (apt-get install catch2), or -DPORTA_CATCH2_INCLUDE_DIR=<folder with "
        "catch2/catch.hpp>, or -DPORTA_BUILD_TESTS=OFF")
    endif()
    target_link_libraries(porta_catch2 INTERFACE Catch2::Catch2)
    set(PORTA_CATCH2_VERSION 2)
  endif()
  if(EXISTS "${Catch2_DIR}/Catch.cmake")
    include("${Catch2_DIR}/Catch.cmake")
  else()
    include(Catch OPTIONAL)
  endif()
  if(COMMAND catch_discover_tests)
    set(PORTA_CATCH2_DISCOVER ON)
  endif()
  message(STATUS "porta tests: Catch2 ${Catch2_VERSION} (${Catch2_DIR}), per-test ctest entries: ${PORTA_CATCH2_DISCOVER}")
endif()

function(porta_add_catch_test target)
  # TAGS t...: test cases tagged [t] run in one extra ctest entry "<target>:[t]" that carries the
  # label t (for example `ctest -L determinism`), and not as separate entries.
  cmake_parse_arguments(ARG "" "TIMEOUT" "LABELS;TAGS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  set(_exclude "")
  foreach(_tag IN LISTS ARG_TAGS)
    string(APPEND _exclude "~[${_tag}]")
    add_test(NAME "${target}:[${_tag}]" COMMAND ${target} "[${_tag}]")
    set_tests_properties("${target}:[${_tag}]" PROPERTIES LABELS "${ARG_LABELS};${_tag}" TIMEOUT ${ARG_TIMEOUT})
  endforeach()
  if(PORTA_CATCH2_DISCOVER)
    if(_exclude)
      # an explicit spec would select hidden ([.]) test cases too: keep them out
      set(_spec TEST_SPEC "${_exclude}~[.]")
    endif()
    catch_discover_tests(${target}
      TEST_PREFIX "${target}:"
      ${_spec}
      PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT})
  else()
    # One entry per test_*.cpp (Catch's file-name tags, -#), so that a large binary's files run in
    # parallel and each has the whole timeout, as the discovered entries do. Other sources (a main,
    # helpers) hold no test cases.
    set(_no_tests "")
    if(PORTA_CATCH2_VERSION EQUAL 3)
      set(_no_tests --allow-running-no-tests)  # a file whose cases are all in a tag entry
    endif()
    get_target_property(_sources ${target} SOURCES)
    set(_stems "")
    foreach(_src IN LISTS _sources)
      get_filename_component(_stem "${_src}" NAME_WE)
      if(_stem MATCHES "^test_")
        list(APPEND _stems ${_stem})  # a file compiled twice (CUDA and HIP wrappers) counts once
      endif()
    endforeach()
    list(REMOVE_DUPLICATES _stems)
    list(LENGTH _stems _files)
    foreach(_stem IN LISTS _stems)
      add_test(NAME "${target}:${_stem}" COMMAND ${target} ${_no_tests} "-#" "[#${_stem}]${_exclude}~[.]")
      set_tests_properties("${target}:${_stem}" PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT})
    endforeach()
    if(_files EQUAL 0)
      add_test(NAME ${target} COMMAND ${target} ${_no_tests} "${_exclude}~[.]")
      set_tests_properties(${target} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT})
    endif()
  endif()
endfunction()
