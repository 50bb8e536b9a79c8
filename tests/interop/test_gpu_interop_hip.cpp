// SPDX-License-Identifier: Apache-2.0
// test_gpu_interop.cpp compiled as HIP (a source file's language is one per directory).
#include "test_gpu_interop.cpp"
