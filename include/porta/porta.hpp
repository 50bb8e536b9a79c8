// SPDX-License-Identifier: Apache-2.0
// porta: one scientific code on NVIDIA GPUs (CUDA), AMD GPUs (HIP) and CPUs (OpenMP).
//
//   #include <porta/porta.hpp>
//   porta::Device dev = porta::default_device();          // cuda:0, else hip:0, else cpu
//   auto x = porta::Array<float>::from(host, dev);
//   float s = porta::sum(x);
//
// porta/kernels.hpp (user kernels) and porta/teams.hpp (team launches) are opt-in and not included here.
#pragma once

#include "porta/algorithms.hpp"
#include "porta/array.hpp"
#include "porta/debug.hpp"
#include "porta/device.hpp"
#include "porta/error.hpp"
#include "porta/fft.hpp"
#include "porta/host_array.hpp"
#include "porta/indexing.hpp"
#include "porta/linalg.hpp"
#include "porta/print.hpp"
#include "porta/profile.hpp"
#include "porta/random.hpp"
#include "porta/scan.hpp"
#include "porta/sort.hpp"
#include "porta/sparse.hpp"
#include "porta/stream.hpp"
