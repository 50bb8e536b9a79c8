// SPDX-License-Identifier: Apache-2.0
// test_teams.cpp once more, compiled as HIP (tests/kernels/CMakeLists.txt), as test_kernels_hip.cpp
// is for test_kernels.cpp: team launches build for AMD GPUs too.
#include "test_teams.cpp"
