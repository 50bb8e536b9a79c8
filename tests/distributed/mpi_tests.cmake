# SPDX-License-Identifier: Apache-2.0
# Tests under mpirun, and the collective-call checks, which run both as thread ranks and
# under mpirun. Included by tests/distributed/CMakeLists.txt.
#
#   porta_add_mpi_test(<name> <target> RANKS 1 2 3 4 [ARGS a...] [ENVIRONMENT V=x...] [LABELS l...]
#                      [TIMEOUT s])
#
# adds one ctest per rank count, "<name>:np<k>", running `mpiexec -np <k> <target> <args>`, labelled
# distributed;mpi (plus LABELS), with a TIMEOUT (120 s by default) so that a collective one rank
# never reaches fails the test instead of hanging CI. PORTA_DEVICE and PORTA_TEST_DEVICES reach the
# ranks through mpiexec's environment. Nothing is added where the MPI plugin was not built or
# mpiexec was not found (PORTA_MPI_BUILT, MPIEXEC_EXECUTABLE: cmake/PortaMpi.cmake).
include_guard(GLOBAL)

set(PORTA_MPI_TESTS OFF)
set(_porta_mpiexec_flags "")
set(_porta_mpiexec_env "")
if(PORTA_MPI_BUILT AND MPIEXEC_EXECUTABLE)
  set(PORTA_MPI_TESTS ON)
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _porta_mpiexec_version
                  ERROR_VARIABLE _porta_mpiexec_version RESULT_VARIABLE _porta_mpiexec_rc)
  if(_porta_mpiexec_version MATCHES "Open MPI|OpenRTE")
    # Open MPI refuses root without --allow-run-as-root (CI containers run as root) and more ranks
    # than cores without --oversubscribe (CI runners have two). In containers its shared-memory
    # transport's single-copy mode (CMA) is often not permitted: plain copies instead.
    set(_porta_mpiexec_flags --allow-run-as-root --oversubscribe)
    set(_porta_mpiexec_env "OMPI_MCA_btl_vader_single_copy_mechanism=none" "OMPI_MCA_rmaps_base_oversubscribe=1")
  endif()
else()
  message(STATUS "porta tests: MPI tests not added (MPI plugin built: ${PORTA_MPI_BUILT}, mpiexec: "
                 "${MPIEXEC_EXECUTABLE})")
endif()

function(porta_add_mpi_test name target)
  cmake_parse_arguments(ARG "" "TIMEOUT" "RANKS;ARGS;ENVIRONMENT;LABELS" ${ARGN})
  if(NOT PORTA_MPI_TESTS)
    return()
  endif()
  if(NOT ARG_RANKS)
    set(ARG_RANKS 1 2 3 4)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  foreach(_k IN LISTS ARG_RANKS)
    set(_test "${name}:np${_k}")
    add_test(NAME ${_test}
             COMMAND ${MPIEXEC_EXECUTABLE} ${_porta_mpiexec_flags} ${MPIEXEC_NUMPROC_FLAG} ${_k}
                     ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${target}> ${MPIEXEC_POSTFLAGS} ${ARG_ARGS})
    set_tests_properties(${_test} PROPERTIES
      LABELS "distributed;mpi;${ARG_LABELS}"
      TIMEOUT ${ARG_TIMEOUT}
      # ctest passes its own environment (PORTA_DEVICE, PORTA_TEST_DEVICES, PORTA_TEST_SEED) on to
      # mpiexec, which hands it to every rank it starts on this node.
      # ctest -j counts a run of k ranks as k processors.
      PROCESSORS ${_k}
      # The MPI library's own allocations at init are never freed, from components it dlopen'ed
      # and unloaded (frames LeakSanitizer cannot name, so no suppression file can match them): no
      # leak check under mpirun in the ASan build. porta's code is leak-checked by the other tests.
      ENVIRONMENT "${_porta_mpiexec_env};LSAN_OPTIONS=detect_leaks=0;${ARG_ENVIRONMENT}")
  endforeach()
endfunction()

# ---- the MPI engine on its own (distributed/mpi_engine.cpp over libporta_mpi.so) -----------------
if(PORTA_MPI_TESTS)
  add_executable(porta_mpi_engine_tests ${CMAKE_CURRENT_LIST_DIR}/test_mpi_engine.cpp)
  target_link_libraries(porta_mpi_engine_tests PRIVATE porta_test_support)
  # The engine interface is internal to libporta (distributed/engine.hpp), whose symbols it exports.
  target_include_directories(porta_mpi_engine_tests PRIVATE ${PROJECT_SOURCE_DIR})
  add_dependencies(porta_mpi_engine_tests porta_mpi)
  porta_add_mpi_test(porta_mpi_engine porta_mpi_engine_tests RANKS 1 2 3 4)
  # MPI's int counts: the plugin splits larger transfers into pieces. A limit of 7 elements makes
  # every path that splits (and the broadcast fallback of allgather(v)) run on small buffers.
  porta_add_mpi_test(porta_mpi_engine_pieces porta_mpi_engine_tests RANKS 1 3 ENVIRONMENT PORTA_MPI_MAX_COUNT=7)
endif()

# porta-info's Distributed section: the plugin loads (without initialising MPI) and says what it is.
if(PORTA_MPI_TESTS AND TARGET porta-info)
  add_test(NAME porta_mpi:porta-info COMMAND porta-info)
  set_tests_properties(porta_mpi:porta-info PROPERTIES
    ENVIRONMENT "PORTA_DEVICE=" PASS_REGULAR_EXPRESSION "Distributed\n  mpi: available\n    built:     yes"
    LABELS "distributed;mpi" TIMEOUT 60)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(Python3_Interpreter_FOUND)
    add_test(NAME porta_mpi:porta-info-json
             COMMAND sh -c "\"$1\" --json | \"$2\" -c 'import json, sys; m = json.load(sys.stdin)[\"mpi\"]; assert m[\"built\"] and m[\"available\"] and m[\"version\"] and m[\"library\"].endswith(\"libporta_mpi.so\"), m'"
                     sh $<TARGET_FILE:porta-info> ${Python3_EXECUTABLE})
    set_tests_properties(porta_mpi:porta-info-json PROPERTIES ENVIRONMENT "PORTA_DEVICE=" LABELS "distributed;mpi"
                                                              TIMEOUT 60)
  endif()
endif()

# Built with MPI, run where the MPI library is missing: a fake libporta_mpi.so whose dependency
# (tests/loader/fake_dep.cpp, in a folder of its own) cannot be found, alone beside a copy of libporta (LD_LIBRARY_PATH comes before porta-info's
# RUNPATH, so libporta's folder, the first place searched after PORTA_BACKEND_PATH, is that copy's).
if(PORTA_MPI_BUILT AND TARGET porta-info)
  add_library(porta_fake_mpi_dep SHARED ${CMAKE_CURRENT_LIST_DIR}/../loader/fake_dep.cpp)
  set_target_properties(porta_fake_mpi_dep PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fake_mpi_dep)
  add_library(porta_fake_mpi MODULE ${CMAKE_CURRENT_LIST_DIR}/fake_mpi_plugin.cpp)
  target_include_directories(porta_fake_mpi PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(porta_fake_mpi PRIVATE porta_fake_mpi_dep)
  set_target_properties(porta_fake_mpi PROPERTIES SKIP_BUILD_RPATH ON
                                                  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fake_mpi)
  target_link_options(porta_fake_mpi PRIVATE "LINKER:--no-as-needed")
  add_dependencies(porta-info porta_fake_mpi)
  set(_d ${CMAKE_CURRENT_BINARY_DIR}/fake_mpi_run)
  add_test(NAME porta_mpi:porta-info-libmpi-missing
           COMMAND sh -c "rm -rf \"$4\" && mkdir -p \"$4\" && cp \"$1\" \"$4/\" && cp \"$2\" \"$4/libporta_mpi.so\" && LD_LIBRARY_PATH=\"$4\" \"$3\""
                   sh $<TARGET_SONAME_FILE:porta> $<TARGET_FILE:porta_fake_mpi> $<TARGET_FILE:porta-info> ${_d})
  set_tests_properties(porta_mpi:porta-info-libmpi-missing PROPERTIES
    ENVIRONMENT "PORTA_DEVICE=;PORTA_BACKEND_PATH="
    PASS_REGULAR_EXPRESSION "mpi: unavailable\n    built:     yes\n    library:   [^\n]*fake_mpi_run/libporta_mpi.so\n    reason:    [^\n]*fake_mpi_run/libporta_mpi.so: libporta_fake_mpi_dep.so: cannot open shared object file"
    LABELS "distributed;mpi" TIMEOUT 60)
  # The same broken plugin first on PORTA_BACKEND_PATH, and the build's own libporta_mpi.so beside
  # libporta (as an installed one would be): the search stops at the broken copy and names the
  # other as not tried (docs/plugins.md).
  if(TARGET porta_mpi)
    set(_f ${CMAKE_CURRENT_BINARY_DIR}/fake_mpi_first)
    add_test(NAME porta_mpi:porta-info-broken-first
             COMMAND sh -c "rm -rf \"$3\" && mkdir -p \"$3\" && cp \"$1\" \"$3/libporta_mpi.so\" && PORTA_BACKEND_PATH=\"$3\" \"$2\""
                     sh $<TARGET_FILE:porta_fake_mpi> $<TARGET_FILE:porta-info> ${_f})
    set_tests_properties(porta_mpi:porta-info-broken-first PROPERTIES
      ENVIRONMENT "PORTA_DEVICE="
      PASS_REGULAR_EXPRESSION "mpi: unavailable\n    built:     yes\n    library:   [^\n]*fake_mpi_first/libporta_mpi.so\n    reason:    [^\n]*fake_mpi_first/libporta_mpi.so: libporta_fake_mpi_dep.so: cannot open shared object file[^\n]*; not tried: [^\n]*/libporta_mpi.so \\(porta loads the first"
      LABELS "distributed;mpi" TIMEOUT 60)
  endif()
endif()

# An application that calls MPI itself: porta initialises and finalises MPI only when it started it.
if(PORTA_MPI_TESTS)
  add_executable(porta_mpi_app_init ${CMAKE_CURRENT_LIST_DIR}/mpi_app_init.cpp)
  target_link_libraries(porta_mpi_app_init PRIVATE porta::porta MPI::MPI_C)
  target_compile_definitions(porta_mpi_app_init PRIVATE OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
  target_include_directories(porta_mpi_app_init PRIVATE ${PROJECT_SOURCE_DIR})
  add_dependencies(porta_mpi_app_init porta_mpi)
  porta_add_mpi_test(porta_mpi_app_init porta_mpi_app_init RANKS 1 2 ARGS app-init)
  porta_add_mpi_test(porta_mpi_app_finalize porta_mpi_app_init RANKS 1 2 ARGS app-finalize)
endif()

# Collectives that the ranks call differently, a thread rank that leaves, absent devices
# (distributed/calls.cpp and the engines): thread ranks everywhere, and 2 and 3 MPI ranks. A check
# that fails to fire is a hang, hence the short time limits.
find_package(Threads REQUIRED)
add_executable(porta_dist_check_tests ${CMAKE_CURRENT_LIST_DIR}/test_call_checks.cpp)
target_link_libraries(porta_dist_check_tests PRIVATE porta_test_support Threads::Threads)
porta_test_pch(porta_dist_check_tests)
porta_add_catch_test(porta_dist_check_tests LABELS distributed TIMEOUT 60)
porta_add_mpi_test(porta_dist_check_tests porta_dist_check_tests RANKS 2 3 ENVIRONMENT PORTA_TEST_MPI=1 TIMEOUT 90)
