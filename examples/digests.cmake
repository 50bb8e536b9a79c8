# SPDX-License-Identifier: Apache-2.0
# Runs one whole-program example (cg, nbody, monte_carlo) in several configurations and fails
# unless every run exits 0 and prints the same `sha256 <64 hex digits>` line: the proof that the
# program's final state has the same bits on every device, thread count and rank count
# (docs/determinism.md, "Whole programs"). ctest runs it (examples/CMakeLists.txt):
#
#   cmake -DPROGRAM=<exe> [-DARGS="--n 256"] -DMODE=local -P digests.cmake
#       the default device (PORTA_DEVICE as given: cuda:0 on a GPU machine), cpu at 1, 2 and 3
#       OpenMP threads, cpu:strict, and 2, 3 and 4 ranks as threads of one process
#   cmake -DPROGRAM=<exe> [-DARGS=...] -DMODE=mpi -DMPIEXEC=<mpiexec> [-DNP_FLAG=-np] [-DMPIEXEC_FLAGS="..."]
#         [-DMPIEXEC_ENV="V=x W=y"] [-DRANKS="1 2 3 4"] -P digests.cmake
#       one process without MPI, then 1, 2, 3 and 4 processes under mpiexec (one OpenMP thread each)
# -DEXPECT=<64 hex digits> also requires that digest: one recorded on another machine (a CPU runner's
# on the GPU machine, or the reverse), or at an earlier commit when porta's bits must not change.
if(NOT PROGRAM OR NOT MODE)
  message(FATAL_ERROR "digests.cmake: set PROGRAM and MODE (local or mpi)")
endif()
separate_arguments(_args UNIX_COMMAND "${ARGS}")
separate_arguments(_mpiflags UNIX_COMMAND "${MPIEXEC_FLAGS}")
separate_arguments(_mpienv UNIX_COMMAND "${MPIEXEC_ENV}")
separate_arguments(_ranks UNIX_COMMAND "${RANKS}")

set(_names "")
set(_digests "")
set(_failed "")

# _run(<name> <command...>): runs the command, records its digest under <name>.
function(_run name)
  execute_process(COMMAND ${ARGN} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  string(REGEX MATCH "(^|\n)sha256 ([0-9a-f]+)\n" line "${out}")
  set(digest "${CMAKE_MATCH_2}")
  string(LENGTH "${digest}" len)
  if(NOT rc EQUAL 0 OR NOT len EQUAL 64)
    message("---- ${name}: exit status ${rc}, no digest line; its output:\n${out}${err}")
    set(_failed "${_failed} ${name}" PARENT_SCOPE)
    set(digest "(none)")
  endif()
  message("${digest}  ${name}")
  list(APPEND _names "${name}")
  list(APPEND _digests "${digest}")
  set(_names "${_names}" PARENT_SCOPE)
  set(_digests "${_digests}" PARENT_SCOPE)
endfunction()

set(_env ${CMAKE_COMMAND} -E env)
if(MODE STREQUAL "local")
  _run("default device" ${PROGRAM} ${_args})
  foreach(t 1 2 3)
    _run("cpu, ${t} OpenMP thread(s)" ${_env} PORTA_DEVICE=cpu OMP_NUM_THREADS=${t} ${PROGRAM} ${_args})
  endforeach()
  _run("cpu:strict" ${_env} PORTA_DEVICE=cpu:strict ${PROGRAM} ${_args})
  foreach(k 2 3 4)
    _run("${k} ranks as threads" ${PROGRAM} ${_args} --threads ${k})
  endforeach()
elseif(MODE STREQUAL "mpi")
  if(NOT MPIEXEC)
    message(FATAL_ERROR "digests.cmake: MODE mpi needs MPIEXEC")
  endif()
  if(NOT NP_FLAG)
    set(NP_FLAG -np)
  endif()
  if(NOT _ranks)
    set(_ranks 1 2 3 4)
  endif()
  _run("one process, no MPI" ${PROGRAM} ${_args})
  # One OpenMP thread per process: k processes of the default team would oversubscribe a 2-core CI
  # runner many times over (7 s instead of 0.9 s for nbody at 4 ranks); the thread count's own
  # effect on the bits is what MODE local checks.
  foreach(k IN LISTS _ranks)
    _run("mpiexec -np ${k}" ${_env} OMP_NUM_THREADS=1 ${_mpienv} ${MPIEXEC} ${_mpiflags} ${NP_FLAG} ${k} ${PROGRAM} ${_args})
  endforeach()
else()
  message(FATAL_ERROR "digests.cmake: MODE is local or mpi, not ${MODE}")
endif()

if(_failed)
  message(FATAL_ERROR "digests.cmake: runs that failed:${_failed}")
endif()
list(GET _digests 0 _first)
list(REMOVE_DUPLICATES _digests)
list(LENGTH _digests _distinct)
if(NOT _distinct EQUAL 1)
  message(FATAL_ERROR "digests.cmake: ${_distinct} different digests (above): the final state depends on the "
                      "configuration")
endif()
if(EXPECT AND NOT _first STREQUAL EXPECT)
  message(FATAL_ERROR "digests.cmake: every run gave sha256 ${_first}, not the expected ${EXPECT}")
endif()
message("all runs: sha256 ${_first}")
