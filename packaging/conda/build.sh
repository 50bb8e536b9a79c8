#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Build script of packaging/conda/recipe.yaml. The backend switches come from the recipe's
# build.script.env (PORTA_ENABLE_CUDA, PORTA_ENABLE_HIP, PORTA_ENABLE_MPI, each ON or OFF).
set -euxo pipefail

# CMAKE_ARGS: conda-forge's toolchain, install prefix and find-root settings.
cmake -S "${SRC_DIR}" -B build -G Ninja ${CMAKE_ARGS:-} \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="${PREFIX}" \
  -DCMAKE_INSTALL_LIBDIR=lib \
  -DPORTA_ENABLE_OPENMP=ON \
  -DPORTA_ENABLE_CUDA="${PORTA_ENABLE_CUDA}" \
  -DPORTA_ENABLE_HIP="${PORTA_ENABLE_HIP}" \
  -DPORTA_ENABLE_MPI="${PORTA_ENABLE_MPI}" \
  -DPORTA_USE_BLAS=ON \
  -DPORTA_BUILD_PYTHON=OFF \
  -DPORTA_BUILD_TOOLS=ON \
  -DPORTA_BUILD_TESTS=OFF \
  -DPORTA_BUILD_EXAMPLES=OFF \
  -DPORTA_BUILD_BENCH=OFF
cmake --build build --parallel "${CPU_COUNT:-1}"
cmake --install build
