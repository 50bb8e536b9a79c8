// SPDX-License-Identifier: Apache-2.0
// test_kernels.cpp once more, compiled as HIP (tests/kernels/CMakeLists.txt): in a build with both
// GPU backends the main kernel tests are compiled as CUDA, and this copy proves that user kernels
// build for AMD GPUs too. Where no AMD GPU is present it runs the same tests on the other devices.
#include "test_kernels.cpp"
