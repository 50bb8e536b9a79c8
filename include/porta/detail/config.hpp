// SPDX-License-Identifier: Apache-2.0
// Macros shared by host and device code. Plain C++ sees empty qualifiers; nvcc and hipcc see
// __host__ __device__, so one definition of each op serves every backend.
#pragma once

#if defined(__HIPCC__) && !defined(__HIPCC_RTC__)
// The device intrinsics the ops and math functions use (__fadd_rn, __int_as_float, ...): nvcc
// declares them in every file, hipcc only through this header.
#include <hip/hip_runtime.h>
#endif

#if defined(__CUDACC__) || defined(__HIPCC__)
#define PORTA_HOST_DEVICE __host__ __device__
#define PORTA_GPU_COMPILER 1
#else
#define PORTA_HOST_DEVICE
#define PORTA_GPU_COMPILER 0
#endif

#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define PORTA_DEVICE_PASS 1
#else
#define PORTA_DEVICE_PASS 0
#endif

#define PORTA_VERSION_MAJOR 0
#define PORTA_VERSION_MINOR 1
#define PORTA_VERSION_PATCH 0
