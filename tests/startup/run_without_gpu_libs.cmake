# SPDX-License-Identifier: Apache-2.0
# Runs a program as on a machine without the CUDA runtime libraries, on the machine at hand.
#
#   cmake -DBINARY=<file> [-DARGS=<arg;...>] [-DPLUGINS=<libporta_cuda.so;...>] [-DEXPECT=<regex>]
#         [-DJSON_BACKEND=<name>] [-DFORBID=<regex>] [-DSKIP_REASON=<text>] [-DREADELF=<readelf>]
#         -P run_without_gpu_libs.cmake
#
# JSON_BACKEND: the output is porta-info --json, whose backend <name> must be available or give
# a reason.
#
# Moving the toolkit away needs root, so the program runs through its own dynamic loader (glibc's
# ld.so) with --inhibit-cache: /etc/ld.so.cache, where a toolkit install registers its lib folder,
# is not read, and LD_LIBRARY_PATH is dropped, so only RUNPATHs and the loader's default folders
# remain. PLUGINS, when given, are found through PORTA_BACKEND_PATH and their own RUNPATH is
# ignored too (--inhibit-rpath), so that a plugin linked against the toolkit fails to load the way
# it would on a CPU-only machine (porta-info then says "libcudart.so.13: cannot open shared object
# file"). A toolkit installed in a default folder (/usr/lib/<triplet>, as distribution packages
# do) stays visible: the run then still proves that the program starts without needing it.
cmake_minimum_required(VERSION 3.21)

if(SKIP_REASON)
  message("SKIP: ${SKIP_REASON}")
  return()
endif()
if(NOT BINARY OR NOT EXISTS "${BINARY}")
  message(FATAL_ERROR "BINARY '${BINARY}' does not exist (build it first)")
endif()
if(NOT CMAKE_HOST_SYSTEM_NAME STREQUAL "Linux")
  message("SKIP: needs glibc's dynamic loader; this host is ${CMAKE_HOST_SYSTEM_NAME}")
  return()
endif()
if(NOT READELF)
  find_program(READELF NAMES readelf)
endif()
if(NOT READELF)
  message("SKIP: readelf (binutils) was not found, so the program's loader is unknown")
  return()
endif()
execute_process(COMMAND "${READELF}" -l "${BINARY}" OUTPUT_VARIABLE _phdrs RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0 OR NOT _phdrs MATCHES "program interpreter: ([^]\n]+)\\]")
  message("SKIP: ${BINARY} names no program interpreter")
  return()
endif()
set(_ld "${CMAKE_MATCH_1}")

unset(ENV{LD_LIBRARY_PATH})
unset(ENV{LD_PRELOAD})
set(_hide --inhibit-cache)
set(_present "")
foreach(_p IN LISTS PLUGINS)
  if(EXISTS "${_p}")
    list(APPEND _present "${_p}")
  endif()
endforeach()
if(_present)
  # The loader compares --inhibit-rpath names with the path an object was opened by, so the
  # plugins are opened from exactly these paths.
  set(_dirs "")
  foreach(_p IN LISTS _present)
    get_filename_component(_d "${_p}" DIRECTORY)
    list(APPEND _dirs "${_d}")
  endforeach()
  list(REMOVE_DUPLICATES _dirs)
  string(REPLACE ";" ":" _dirs "${_dirs}")
  set(ENV{PORTA_BACKEND_PATH} "${_dirs}")
  string(REPLACE ";" ":" _inhibit "${_present}")
  list(APPEND _hide --inhibit-rpath "${_inhibit}")
endif()

# What the loader resolves in this environment: older loaders without --inhibit-cache end here.
execute_process(COMMAND "${_ld}" ${_hide} --list "${BINARY}"
                OUTPUT_VARIABLE _list ERROR_VARIABLE _list_err RESULT_VARIABLE _rc)
if(_list_err MATCHES "unrecognized option|unknown option|invalid option")
  message("SKIP: ${_ld} does not take --inhibit-cache (${_list_err})")
  return()
endif()
string(JOIN " " _hide_text ${_hide})
message("${_ld} ${_hide_text} --list ${BINARY}:\n${_list}${_list_err}")
if(NOT _rc EQUAL 0 OR _list MATCHES "not found")
  message(FATAL_ERROR "${BINARY} cannot start without the loader cache: a library it needs is missing (above)")
endif()
if(FORBID AND _list MATCHES "(^|[\n\t ])(${FORBID})")
  message(FATAL_ERROR "${BINARY} still loads a GPU runtime at start (matches '${FORBID}', above)")
endif()
execute_process(COMMAND "${_ld}" ${_hide} "${BINARY}" ${ARGS}
                OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
set(_shown "${_out}${_err}")
string(LENGTH "${_shown}" _len)
if(_len GREATER 6000)
  math(EXPR _from "${_len} - 6000")
  string(SUBSTRING "${_shown}" ${_from} -1 _shown)
  set(_shown "...\n${_shown}")
endif()
message("${BINARY} ${ARGS} (exit ${_rc}):\n${_shown}")
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "${BINARY} failed without the CUDA libraries (exit ${_rc})")
endif()
if(EXPECT AND NOT _out MATCHES "${EXPECT}")
  message(FATAL_ERROR "the output does not match '${EXPECT}'")
endif()
# porta-info --json: the backend must be available or say why not.
if(JSON_BACKEND)
  string(JSON _n ERROR_VARIABLE _jerr LENGTH "${_out}" backends)
  if(_jerr)
    message(FATAL_ERROR "no JSON backends list in the output (${_jerr})")
  endif()
  set(_found OFF)
  math(EXPR _last "${_n} - 1")
  foreach(_i RANGE ${_last})
    string(JSON _name GET "${_out}" backends ${_i} name)
    if(_name STREQUAL JSON_BACKEND)
      set(_found ON)
      string(JSON _avail GET "${_out}" backends ${_i} available)
      string(JSON _why GET "${_out}" backends ${_i} reason)
      if(_avail)
        message("${JSON_BACKEND}: available")
      elseif(_why STREQUAL "")
        message(FATAL_ERROR "${JSON_BACKEND} is unavailable and porta does not say why")
      else()
        message("${JSON_BACKEND}: unavailable, because: ${_why}")
      endif()
    endif()
  endforeach()
  if(NOT _found)
    message(FATAL_ERROR "porta-info lists no backend '${JSON_BACKEND}'")
  endif()
endif()
message("OK: ${BINARY} ran with the loader cache and the plugins' RUNPATHs hidden")
