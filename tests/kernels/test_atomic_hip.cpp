// SPDX-License-Identifier: Apache-2.0
// test_atomic.cpp compiled as HIP (tests/kernels/CMakeLists.txt), as test_kernels_hip.cpp does for
// the kernel tests: in a build with both GPU backends, it proves that porta's atomics build for AMD
// GPUs.
#include "test_atomic.cpp"
