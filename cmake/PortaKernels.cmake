# SPDX-License-Identifier: Apache-2.0
# porta_add_kernels: compile a user's kernel sources (porta::parallel_for, map, transform_reduce)
# with the GPU language porta was built with, so that they run on the GPU as well as the CPU.
#
#   find_package(porta REQUIRED)            # or add_subdirectory(porta)
#   add_executable(app main.cpp kernels.cpp)
#   target_link_libraries(app PRIVATE porta::porta)
#   porta_add_kernels(app SOURCES kernels.cpp)
#
#   porta_add_kernels(<target> SOURCES <file>...
#                     [LANGUAGE CUDA|HIP|CXX]             # default: CUDA if built, else HIP
#                     [CUDA_ARCHITECTURES <arch>...]      # default: the target's, else PORTA_CUDA_ARCHITECTURES
#                     [HIP_ARCHITECTURES <gfx>...])       # default: the target's, else PORTA_HIP_ARCHITECTURES
#
# The sources are added to the target. In a build with CUDA they become CUDA sources (nvcc, with
# --extended-lambda for PORTA_LAMBDA and --expt-relaxed-constexpr for porta's ops); with HIP they
# become HIP sources. In a CPU-only build, or where the GPU compiler is missing, nothing changes:
# the sources stay C++ and their kernels run on the CPU (a GPU device then reports Unavailable,
# naming this function). LANGUAGE CXX asks for that in any build: a CPU-only target in a project
# that compiles other targets' kernels for a GPU.
#
# Which CUDA runtime: the static one (libcudart_static.a), so that the program starts, and runs on
# the CPU, on a machine without libcudart.so or a driver, as porta's own binaries do; it opens the
# driver (libcuda.so.1) at its first CUDA call, which user_kernels.cuh makes only when it launches
# on a CUDA device that porta's runtime has found. libporta never links a vendor library; the
# plugin libporta_cuda.so keeps the shared libcudart.so. Two runtime instances then share one
# process, which is safe for what porta passes between them, because all of it is a driver object
# (NVIDIA, CUDA Runtime API, "Interactions with the CUDA Driver API", cuda_runtime_api.h):
#  - both runtimes use the device's primary context ("a one to one relationship between CUDA
#    devices in the CUDA Runtime API and CUcontexts in the Driver API within a process");
#  - "the types CUstream and cudaStream_t are identical", likewise CUevent and cudaEvent_t, and
#    device pointers are the context's, so porta's streams, events and Array memory work in both;
#  - cudaMallocAsync allocates from the device's current memory pool (cudaDeviceGetMemPool /
#    cuDeviceGetMemPool), a driver object: the plugin's release threshold applies to user kernels'
#    temporaries too.
# Caveats: each runtime keeps its own per-thread current device and last error (user_kernels.cuh
# sets the device on every launch and clears its own error); addresses of runtime symbols
# (__device__ variables, &kernel) are valid only in the runtime that registered them ("only safe
# ... between components that link to the same instance of the CUDA runtime", Programming Guide);
# cudaDeviceReset in either runtime destroys the primary context that both use, so never call it.
# libcudart_static.a's symbols are hidden, so even a program linked with -rdynamic does not
# interpose them on the plugin's libcudart.so. PORTA_KERNELS_CUDA_RUNTIME=Shared (set before
# porta_add_kernels) links the shared runtime instead, one instance, needed at start.
# HIP has no static runtime in ROCm 5.2 (Debian ships libamdhip64.so only) and the kernels of a HIP
# source register with libamdhip64 from a static constructor (__hipRegisterFatBinary), so a HIP
# program needs libamdhip64.so.5 (with libhsa-runtime64) installed to start, though no AMD GPU.
#
# The runtime chosen is recorded in the target property PORTA_KERNELS_RUNTIME ("cudart Static",
# "cudart Shared", "amdhip64 Shared"; unset when the sources stay C++), which tests/startup reads.
#
# Works in porta's own tree (PORTA_GPU_BACKENDS_BUILT) and from an install (portaConfig.cmake sets
# PORTA_GPU_BACKENDS and includes this file). Set PORTA_KERNELS_ENABLE_LANGUAGE to OFF before
# find_package(porta) to enable the GPU language yourself.
include_guard(GLOBAL)

set(_PORTA_KERNELS_DIR ${CMAKE_CURRENT_LIST_DIR})
if(NOT DEFINED PORTA_CUDA_ARCHITECTURES)
  set(PORTA_CUDA_ARCHITECTURES "90-real;90-virtual")
endif()
if(NOT DEFINED PORTA_HIP_ARCHITECTURES)
  set(PORTA_HIP_ARCHITECTURES "gfx90a;gfx1030")
endif()
if(NOT DEFINED PORTA_KERNELS_CUDA_RUNTIME)
  set(PORTA_KERNELS_CUDA_RUNTIME Static)
endif()
if(NOT DEFINED PORTA_KERNELS_ENABLE_LANGUAGE)
  set(PORTA_KERNELS_ENABLE_LANGUAGE ON)
endif()

# The GPU backends of this porta: in-tree the list PortaBackends.cmake builds, installed the list
# portaConfig.cmake records.
macro(_porta_kernels_backends out)
  if(DEFINED PORTA_GPU_BACKENDS_BUILT)
    set(${out} "${PORTA_GPU_BACKENDS_BUILT}")
  elseif(DEFINED PORTA_GPU_BACKENDS)
    set(${out} "${PORTA_GPU_BACKENDS}")
  else()
    set(${out} "")
  endif()
endmacro()

# A consumer of an installed porta gets the GPU language enabled here, at file scope (which
# enable_language requires), when porta has that backend and the compiler is on this machine.
_porta_kernels_backends(_porta_k_backends)
get_property(_porta_k_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
if(PORTA_KERNELS_ENABLE_LANGUAGE AND "cuda" IN_LIST _porta_k_backends AND NOT "CUDA" IN_LIST _porta_k_langs)
  include(CheckLanguage)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "${PORTA_CUDA_ARCHITECTURES}")
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
  else()
    message(STATUS "porta: no CUDA compiler found; porta_add_kernels sources stay C++ (CPU only)")
  endif()
endif()
get_property(_porta_k_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
if(PORTA_KERNELS_ENABLE_LANGUAGE AND "hip" IN_LIST _porta_k_backends AND NOT "CUDA" IN_LIST _porta_k_langs
   AND NOT "HIP" IN_LIST _porta_k_langs AND EXISTS ${_PORTA_KERNELS_DIR}/PortaHipLanguage.cmake)
  include(${_PORTA_KERNELS_DIR}/PortaHipLanguage.cmake)
  porta_hip_enable_language(_porta_k_hip_ok _porta_k_hip_why ARCHITECTURES ${PORTA_HIP_ARCHITECTURES})
  if(NOT _porta_k_hip_ok)
    message(STATUS "porta: HIP is not usable here (${_porta_k_hip_why}); porta_add_kernels sources stay C++ (CPU only)")
  endif()
endif()
if("CUDA" IN_LIST _porta_k_langs AND NOT TARGET CUDA::cudart_static)
  find_package(CUDAToolkit QUIET)
endif()
unset(_porta_k_langs)
unset(_porta_k_backends)

# <lang>_ARCHITECTURES of `target`: the explicit list if given, else the target's own, else
# porta's default for that language; and <lang>_STANDARD at least 17.
function(_porta_kernels_lang_props target lang explicit_archs default_archs)
  if(explicit_archs)
    set_property(TARGET ${target} PROPERTY ${lang}_ARCHITECTURES ${explicit_archs})
  else()
    get_target_property(_archs ${target} ${lang}_ARCHITECTURES)
    if(NOT _archs)
      set_property(TARGET ${target} PROPERTY ${lang}_ARCHITECTURES ${default_archs})
    endif()
  endif()
  get_target_property(_std ${target} ${lang}_STANDARD)
  if(NOT _std OR _std LESS 17)
    set_property(TARGET ${target} PROPERTY ${lang}_STANDARD 17)
  endif()
endfunction()

function(porta_add_kernels target)
  cmake_parse_arguments(PARSE_ARGV 1 _pak "" "LANGUAGE" "SOURCES;CUDA_ARCHITECTURES;HIP_ARCHITECTURES")
  if(NOT TARGET ${target})
    message(FATAL_ERROR "porta_add_kernels: '${target}' is not a target (create it first)")
  endif()
  if(NOT _pak_SOURCES)
    message(FATAL_ERROR "porta_add_kernels(${target}): no SOURCES given")
  endif()
  if(_pak_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "porta_add_kernels(${target}): unexpected arguments: ${_pak_UNPARSED_ARGUMENTS}")
  endif()
  target_sources(${target} PRIVATE ${_pak_SOURCES})

  _porta_kernels_backends(_backends)
  get_property(_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  set(_lang "")
  if(_pak_LANGUAGE)
    string(TOUPPER "${_pak_LANGUAGE}" _lang)
    string(TOLOWER "${_pak_LANGUAGE}" _backend)
    if(_lang STREQUAL "CXX")
      return()  # CPU-only by request
    endif()
    if(NOT _lang MATCHES "^(CUDA|HIP)$")
      message(FATAL_ERROR "porta_add_kernels(${target}): LANGUAGE must be CUDA, HIP or CXX, not '${_pak_LANGUAGE}'")
    endif()
    if(NOT _backend IN_LIST _backends)
      message(FATAL_ERROR "porta_add_kernels(${target}): porta was built without ${_lang} "
                          "(configure porta with -DPORTA_ENABLE_${_lang}=ON)")
    endif()
    if(NOT _lang IN_LIST _langs)
      message(FATAL_ERROR "porta_add_kernels(${target}): the ${_lang} language is not enabled in this project "
                          "(enable_language(${_lang}) at the top level)")
    endif()
  elseif("cuda" IN_LIST _backends AND "CUDA" IN_LIST _langs)
    set(_lang CUDA)
  elseif("hip" IN_LIST _backends AND "HIP" IN_LIST _langs)
    set(_lang HIP)
  endif()
  if(NOT _lang)
    return()  # CPU-only: the sources stay C++ and their kernels run on the CPU
  endif()

  # Source properties are per directory; TARGET_DIRECTORY puts them where the target lives.
  set_source_files_properties(${_pak_SOURCES} TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE ${_lang})

  if(_lang STREQUAL "CUDA")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda --expt-relaxed-constexpr>)
    # OpenMP::OpenMP_CXX only flags C++ sources; a kernel source compiled as CUDA still runs its
    # kernels on the CPU device and should do so on every core.
    if(TARGET OpenMP::OpenMP_CXX AND OpenMP_CXX_FLAGS)
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${OpenMP_CXX_FLAGS}>)
    endif()
    _porta_kernels_lang_props(${target} CUDA "${_pak_CUDA_ARCHITECTURES}" "${PORTA_CUDA_ARCHITECTURES}")
    # The static CUDA runtime by default, so that the program starts where libcudart.so is missing
    # (the comment at the top of this file says why that is safe beside the plugin's shared one).
    set(_rt "${PORTA_KERNELS_CUDA_RUNTIME}")
    string(TOLOWER "${_rt}" _rt_lower)
    if(_rt_lower STREQUAL "shared")
      set(_rt Shared)
      set(_rt_target CUDA::cudart)
    elseif(_rt_lower STREQUAL "static")
      set(_rt Static)
      set(_rt_target CUDA::cudart_static)
    else()
      message(FATAL_ERROR "porta_add_kernels(${target}): PORTA_KERNELS_CUDA_RUNTIME must be Static or Shared, "
                          "not '${PORTA_KERNELS_CUDA_RUNTIME}'")
    endif()
    set_property(TARGET ${target} PROPERTY CUDA_RUNTIME_LIBRARY ${_rt})
    # The linker of a target with C++ sources is the C++ compiler, which does not always add the
    # runtime that the property names; the imported target makes sure. Through the property, not
    # target_link_libraries, so that it mixes with either signature.
    if(TARGET ${_rt_target})
      set_property(TARGET ${target} APPEND PROPERTY LINK_LIBRARIES ${_rt_target})
    endif()
    set_property(TARGET ${target} PROPERTY PORTA_KERNELS_RUNTIME "cudart ${_rt}")
  else()
    _porta_kernels_lang_props(${target} HIP "${_pak_HIP_ARCHITECTURES}" "${PORTA_HIP_ARCHITECTURES}")
    # HIP's __fadd_rn/__fmul_rn are plain + and *, which clang would fuse into FMAs: the canonical
    # reduction order of transform_reduce needs each rounded.
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:HIP>:-ffp-contract=off>)
    if(TARGET hip-lang::device)
      set_property(TARGET ${target} APPEND PROPERTY LINK_LIBRARIES hip-lang::device)
    endif()
    set_property(TARGET ${target} PROPERTY PORTA_KERNELS_RUNTIME "amdhip64 Shared")
  endif()
endfunction()
