# SPDX-License-Identifier: Apache-2.0
# Enables CMake's HIP language for porta's HIP plugin and for user kernels (porta_add_kernels),
# including on ROCm installs that CMake cannot set up by itself. Installed with porta's package.
#
#   include(PortaHipLanguage.cmake)
#   porta_hip_enable_language(<ok_var> <why_var> [ARCHITECTURES <gfx...>])   # at file scope
#
# <ok_var> becomes TRUE when the HIP language is enabled; otherwise <why_var> says why not.
#
# Why the HIP language and not hipcc as a custom command: with LANGUAGE HIP, a .hip file gets the
# target's include directories, definitions, options, dependency scanning and PIC like any other
# source, user kernels are marked with one source property (as the CUDA build does), and the rest
# of the project keeps its own C++ compiler (g++). CMake runs clang directly (it refuses hipcc),
# so this file asks hipcc how it calls clang and hands that to CMake:
#
# - CMAKE_HIP_COMPILER: the clang++ that hipcc runs (Debian's hipcc runs /usr/bin/clang++-15,
#   while /usr/bin/clang++ is clang 14, which CMake would pick on its own).
# - CMAKE_HIP_FLAGS: hipcc's --rocm-path, --hip-device-lib-path and --hip-version. ROCm's own clang
#   finds the HIP headers, device libraries and version beside itself; a distribution's clang
#   (Debian bookworm, ROCm 5.2) does not: it fails with "cannot find ROCm device library", and
#   without a HIP version it leaves out the runtime wrapper that defines __host__/__device__.
# - CMAKE_HIP_COMPILER_ROCM_ROOT: CMake 3.21-3.27 require <root>/lib/cmake/hip-lang, but Debian
#   installs it under lib/<multiarch>/cmake. A one-file forwarding package in the build tree fills
#   the gap (it also points at amd_comgr, which CMake's HIP try_compile projects cannot find there
#   because the multiarch folder is not known yet when the HIP compiler is being identified).
# - CMAKE_HIP_ARCHITECTURES: set up front, since CMake would otherwise run rocm_agent_enumerator,
#   which fails on machines without /dev/kfd (every CI runner).
#
# Before enabling anything, a throw-away CMake project builds a tiny HIP module with exactly these
# settings, so that a broken or partial ROCm turns PORTA_ENABLE_HIP=AUTO into "not built, because
# ..." instead of a failed configure. The result is cached per hipcc, compiler and architecture list.
include_guard(GLOBAL)

set(_PORTA_HIP_LANGUAGE_DIR ${CMAKE_CURRENT_LIST_DIR})

# Sets the probe's cache entries; returns ok/why in the caller's variables.
function(_porta_hip_probe ok_var why_var archs)
  set(${ok_var} FALSE PARENT_SCOPE)

  find_program(PORTA_HIPCC NAMES hipcc
               HINTS ENV ROCM_PATH ENV HIP_PATH /opt/rocm
               PATH_SUFFIXES bin
               DOC "hipcc of the ROCm used to build porta's HIP backend")
  set(_user_compiler "")
  if(DEFINED CMAKE_HIP_COMPILER AND CMAKE_HIP_COMPILER)
    set(_user_compiler "${CMAKE_HIP_COMPILER}")
  endif()
  if(NOT PORTA_HIPCC AND NOT _user_compiler)
    set(${why_var} "hipcc was not found (install ROCm, e.g. Debian's hipcc and libamdhip64-dev, or set ROCM_PATH or CMAKE_HIP_COMPILER)" PARENT_SCOPE)
    return()
  endif()

  set(_key "3|${PORTA_HIPCC}|${_user_compiler}|${archs}|${CMAKE_VERSION}")  # 3: the probe's version
  if(DEFINED PORTA_HIP_PROBE_KEY AND PORTA_HIP_PROBE_KEY STREQUAL _key)
    set(${ok_var} ${PORTA_HIP_PROBE_OK} PARENT_SCOPE)
    set(${why_var} "${PORTA_HIP_PROBE_WHY}" PARENT_SCOPE)
    return()
  endif()

  set(_dir ${CMAKE_BINARY_DIR}/CMakeFiles/PortaHipProbe)
  file(REMOVE_RECURSE ${_dir})
  file(MAKE_DIRECTORY ${_dir}/src)
  # __host__ __device__ before any include, as in a user kernel that includes porta's headers first.
  file(WRITE ${_dir}/src/probe.hip
       "__host__ __device__ inline float porta_probe_twice(float v) { return v + v; }\n"
       "#include <hip/hip_runtime.h>\n"
       "__global__ void porta_probe_kernel(float* x) { x[threadIdx.x] = porta_probe_twice(x[threadIdx.x]); }\n"
       "extern \"C\" int porta_probe(void) {\n"
       "  int n = 0;\n"
       "  return hipGetDeviceCount(&n) == hipSuccess ? n : -1;\n"
       "}\n")

  set(_compiler "${_user_compiler}")
  set(_flags "")
  set(_rocm_root "")
  if(PORTA_HIPCC)
    # hipcc compiles the probe for every architecture and shows (HIPCC_VERBOSE=1) its clang call.
    set(_arch_flags "")
    foreach(_a IN LISTS archs)
      list(APPEND _arch_flags "--offload-arch=${_a}")
    endforeach()
    execute_process(
      COMMAND ${CMAKE_COMMAND} -E env HIPCC_VERBOSE=1
              ${PORTA_HIPCC} -std=c++17 ${_arch_flags} -c ${_dir}/src/probe.hip -o ${_dir}/probe.o
      WORKING_DIRECTORY ${_dir}
      RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
    if(NOT _rc EQUAL 0)
      string(REGEX REPLACE "hipcc-cmd:[^\n]*\n" "" _err "${_err}")
      string(STRIP "${_err}" _err)
      string(REPLACE "\n" " | " _err "${_err}")
      if(NOT _err)
        set(_err "exit status ${_rc}")
      endif()
      string(REPLACE ";" " " _archs_text "${archs}")
      set(_why "${PORTA_HIPCC} cannot compile HIP code for ${_archs_text}: ${_err}")
      set(PORTA_HIP_PROBE_KEY "${_key}" CACHE INTERNAL "")
      set(PORTA_HIP_PROBE_OK FALSE CACHE INTERNAL "")
      set(PORTA_HIP_PROBE_WHY "${_why}" CACHE INTERNAL "")
      set(${why_var} "${_why}" PARENT_SCOPE)
      return()
    endif()
    if("${_out}${_err}" MATCHES "hipcc-cmd: *(\"[^\"]+\"|[^ \n]+)([^\n]*)")
      set(_cmd_compiler "${CMAKE_MATCH_1}")
      set(_cmd_args "${CMAKE_MATCH_2}")
      string(REPLACE "\"" "" _cmd_compiler "${_cmd_compiler}")
      if(NOT _compiler)
        set(_compiler "${_cmd_compiler}")
      endif()
      # --hip-version matters as much as the paths: without it, a clang that does not recognise
      # the ROCm layout also skips its HIP runtime wrapper, and __host__/__device__ stay undefined
      # until hip_runtime.h is included (porta's headers come first in user kernels).
      foreach(_opt rocm-path hip-device-lib-path rocm-device-lib-path hip-version)
        if(_cmd_args MATCHES "--${_opt}=(\"[^\"]*\"|[^ ]+)")
          string(REPLACE "\"" "" _value "${CMAKE_MATCH_1}")
          list(APPEND _flags "--${_opt}=${_value}")
          if(_opt STREQUAL "rocm-path")
            set(_rocm_root "${_value}")
          endif()
        endif()
      endforeach()
    endif()
  endif()
  if(NOT _compiler)
    set(_why "could not tell which clang ${PORTA_HIPCC} runs (set CMAKE_HIP_COMPILER to ROCm's clang++)")
    set(${why_var} "${_why}" PARENT_SCOPE)
    return()
  endif()
  if(NOT _rocm_root)
    execute_process(COMMAND hipconfig --rocmpath OUTPUT_VARIABLE _rocm_root RESULT_VARIABLE _rc ERROR_QUIET)
    if(NOT _rc EQUAL 0)
      set(_rocm_root "")
    endif()
    string(STRIP "${_rocm_root}" _rocm_root)
  endif()

  # hip-lang where CMake looks for it, or a forwarding package that CMake can find.
  set(_root_for_cmake "")
  if(_rocm_root AND NOT EXISTS "${_rocm_root}/lib/cmake/hip-lang/hip-lang-config.cmake")
    file(GLOB _hip_lang_cfg "${_rocm_root}/lib/*/cmake/hip-lang/hip-lang-config.cmake"
                            "${_rocm_root}/lib64/cmake/hip-lang/hip-lang-config.cmake")
    if(_hip_lang_cfg)
      list(GET _hip_lang_cfg 0 _hip_lang_cfg)
      get_filename_component(_cmake_pkgs "${_hip_lang_cfg}" DIRECTORY)
      get_filename_component(_cmake_pkgs "${_cmake_pkgs}" DIRECTORY)
      set(_shim ${CMAKE_BINARY_DIR}/porta-hip-rocm-root)
      set(_shim_text "# Generated by porta (cmake/PortaHipLanguage.cmake): forwards to ${_hip_lang_cfg}\n")
      foreach(_dep amd_comgr AMDDeviceLibs)
        if(EXISTS "${_cmake_pkgs}/${_dep}")
          string(APPEND _shim_text "if(NOT ${_dep}_DIR)\n  set(${_dep}_DIR \"${_cmake_pkgs}/${_dep}\")\nendif()\n")
        endif()
      endforeach()
      string(APPEND _shim_text "include(\"${_hip_lang_cfg}\")\n")
      if(_rocm_root STREQUAL "/usr")
        # hip-lang adds <prefix>/include, here /usr/include, as an -isystem directory. Ahead of
        # libstdc++'s own directories it breaks <cmath>'s #include_next <math.h>, which shows as
        # soon as clang pre-includes its HIP runtime wrapper (it includes <cmath>): in CMake's
        # compiler checks, before /usr/include is known to be implicit. It is searched anyway.
        string(APPEND _shim_text
               "foreach(_porta_t hip-lang::amdhip64 hip-lang::device)\n"
               "  set_target_properties(\${_porta_t} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES \"\"\n"
               "                        INTERFACE_SYSTEM_INCLUDE_DIRECTORIES \"\")\n"
               "endforeach()\n")
      endif()
      file(WRITE ${_shim}/lib/cmake/hip-lang/hip-lang-config.cmake "${_shim_text}")
      set(_root_for_cmake ${_shim})
    endif()
  elseif(_rocm_root)
    set(_root_for_cmake "${_rocm_root}")
  endif()

  # The throw-away project: the same settings that porta_hip_enable_language will use.
  list(JOIN _flags " " _flags_str)
  file(WRITE ${_dir}/src/CMakeLists.txt
       "cmake_minimum_required(VERSION 3.21)\n"
       "project(PortaHipProbe LANGUAGES HIP)\n"
       "add_library(probe MODULE probe.hip)\n")
  # Settings go through an initial-cache script: a list on the command line would be split.
  file(WRITE ${_dir}/init.cmake
       "set(CMAKE_HIP_COMPILER [==[${_compiler}]==] CACHE FILEPATH \"\")\n"
       "set(CMAKE_HIP_FLAGS [==[${_flags_str}]==] CACHE STRING \"\")\n"
       "set(CMAKE_HIP_ARCHITECTURES [==[${archs}]==] CACHE STRING \"\")\n"
       "set(CMAKE_BUILD_TYPE Release CACHE STRING \"\")\n")
  if(_root_for_cmake)
    file(APPEND ${_dir}/init.cmake "set(CMAKE_HIP_COMPILER_ROCM_ROOT [==[${_root_for_cmake}]==] CACHE PATH \"\")\n")
  endif()
  set(_defs -C ${_dir}/init.cmake)
  set(_gen -G "${CMAKE_GENERATOR}")
  if(CMAKE_MAKE_PROGRAM AND NOT CMAKE_GENERATOR MATCHES "Visual Studio|Xcode")
    list(APPEND _gen "-DCMAKE_MAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} ${_gen} ${_defs} -S ${_dir}/src -B ${_dir}/build
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  if(_rc EQUAL 0)
    execute_process(COMMAND ${CMAKE_COMMAND} --build ${_dir}/build
                    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out2 ERROR_VARIABLE _err2)
    string(APPEND _out "${_out2}")
    string(APPEND _err "${_err2}")
  endif()
  file(WRITE ${_dir}/probe.log "${_out}\n${_err}\n")
  if(NOT _rc EQUAL 0)
    set(_why "CMake's HIP language does not work with ${_compiler} (see ${_dir}/probe.log)")
    set(PORTA_HIP_PROBE_KEY "${_key}" CACHE INTERNAL "")
    set(PORTA_HIP_PROBE_OK FALSE CACHE INTERNAL "")
    set(PORTA_HIP_PROBE_WHY "${_why}" CACHE INTERNAL "")
    set(${why_var} "${_why}" PARENT_SCOPE)
    return()
  endif()

  set(PORTA_HIP_PROBE_KEY "${_key}" CACHE INTERNAL "")
  set(PORTA_HIP_PROBE_OK TRUE CACHE INTERNAL "")
  set(PORTA_HIP_PROBE_WHY "" CACHE INTERNAL "")
  set(PORTA_HIP_PROBE_COMPILER "${_compiler}" CACHE INTERNAL "")
  set(PORTA_HIP_PROBE_FLAGS "${_flags_str}" CACHE INTERNAL "")
  set(PORTA_HIP_PROBE_ROCM_ROOT "${_root_for_cmake}" CACHE INTERNAL "")
  set(${ok_var} TRUE PARENT_SCOPE)
endfunction()

# A macro, because enable_language must run at file scope. Call it at the top level of a project
# (or of the directory that owns the HIP targets).
macro(porta_hip_enable_language _phl_ok _phl_why)
  cmake_parse_arguments(_phl "" "" "ARCHITECTURES" ${ARGN})
  if(NOT _phl_ARCHITECTURES)
    if(DEFINED PORTA_HIP_ARCHITECTURES)
      set(_phl_ARCHITECTURES "${PORTA_HIP_ARCHITECTURES}")
    elseif(DEFINED CMAKE_HIP_ARCHITECTURES)
      set(_phl_ARCHITECTURES "${CMAKE_HIP_ARCHITECTURES}")
    else()
      set(_phl_ARCHITECTURES gfx90a gfx1030)
    endif()
  endif()
  set(${_phl_ok} FALSE)
  set(${_phl_why} "")
  get_property(_phl_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if("HIP" IN_LIST _phl_languages)
    # Enabled already (by the including project, or an earlier call): use it as it is.
    set(${_phl_ok} TRUE)
  else()
    _porta_hip_probe(${_phl_ok} ${_phl_why} "${_phl_ARCHITECTURES}")
    if(${_phl_ok})
      if(NOT DEFINED CMAKE_HIP_COMPILER OR NOT CMAKE_HIP_COMPILER)
        set(CMAKE_HIP_COMPILER "${PORTA_HIP_PROBE_COMPILER}" CACHE FILEPATH "HIP compiler: the clang++ that hipcc runs")
      endif()
      if(PORTA_HIP_PROBE_ROCM_ROOT AND NOT CMAKE_HIP_COMPILER_ROCM_ROOT)
        set(CMAKE_HIP_COMPILER_ROCM_ROOT "${PORTA_HIP_PROBE_ROCM_ROOT}")
      endif()
      if(NOT DEFINED CMAKE_HIP_ARCHITECTURES)
        set(CMAKE_HIP_ARCHITECTURES "${_phl_ARCHITECTURES}" CACHE STRING "AMD GPU targets of HIP code")
      endif()
      # A normal variable in this directory scope (and below): it must reach every compile, and
      # it must not overwrite flags the user keeps in the cache.
      if(PORTA_HIP_PROBE_FLAGS AND NOT "${CMAKE_HIP_FLAGS}" MATCHES "--rocm-path")
        set(CMAKE_HIP_FLAGS "${PORTA_HIP_PROBE_FLAGS} ${CMAKE_HIP_FLAGS}")
      endif()
      enable_language(HIP)
    endif()
  endif()
  unset(_phl_languages)
  unset(_phl_ARCHITECTURES)
endmacro()
