#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Run here (Debian, with catch2, libbenchmark-dev, libopenblas-dev and libopenblas0-openmp installed; libfftw3-dev
# optionally) before a GPU run:
# the GPU machine has no Catch2, Google Benchmark or OpenBLAS and cannot install them, so this
# copies the headers and libraries porta's tests and benchmarks need into .vendor/ (git-ignored),
# laid out as an install prefix. scripts/gpu-check.sh points CMake at it. Carry `.vendor`.
set -euo pipefail
source "$(dirname "$0")/common.sh"
cd "$porta_root"
v=.vendor
rm -rf "$v"
mkdir -p "$v/include" "$v/lib/x86_64-linux-gnu/cmake/benchmark" "$v/blas"
multi=/usr/lib/x86_64-linux-gnu
cp -r /usr/include/catch2 "$v/include/"
cp -r /usr/include/benchmark "$v/include/"
cp -L "$multi/libbenchmark.so.1.7.1" "$v/lib/x86_64-linux-gnu/"
cp -L "$multi/libbenchmark.so.1.7.1" "$v/lib/x86_64-linux-gnu/libbenchmark.so.1debian"
cp "$multi/libbenchmark_main.a" "$v/lib/x86_64-linux-gnu/"
cp "$multi"/cmake/benchmark/*.cmake "$v/lib/x86_64-linux-gnu/cmake/benchmark/"
# The OpenMP-threaded OpenBLAS (libopenblas0-openmp) when it is installed, which porta's CPU backend
# prefers (its threads are libgomp's, porta's own team: backends/cpu/README.md); else the
# pthreads one. One copy only (35 MB; what travels is capped at 64 MiB), with the Fortran runtime it
# needs, and a relative link under the name CMake's FindBLAS looks for.
if [ -f "$multi/openblas-openmp/libopenblas.so.0" ]; then
  mkdir -p "$v/blas-openmp"
  cp -L "$multi/openblas-openmp/libopenblas.so.0" "$v/blas-openmp/libopenblas.so.0"
  ln -s libopenblas.so.0 "$v/blas-openmp/libopenblas.so"
else
  cp -L "$multi/libopenblas.so.0" "$v/blas/libopenblas.so"
fi
cp -L "$multi/libgfortran.so.5" "$multi/libquadmath.so.0" "$v/blas/"
# FFTW 3 (libfftw3-dev), the CPU peer of the fft benchmarks, when it is installed here: the double
# and float libraries and their OpenMP ones (about 5 MB), with fftw3.h, as a prefix of its own that
# gpu-check.sh hands to CMake as PORTA_FFTW_ROOT. FFTW is GPL: only porta_cpu_bench links it, never
# libporta (bench/README.md).
if [ -f "$multi/libfftw3.so.3" ] && [ -f "$multi/libfftw3f.so.3" ] && [ -f /usr/include/fftw3.h ]; then
  mkdir -p "$v/fftw/include" "$v/fftw/lib"
  cp /usr/include/fftw3.h "$v/fftw/include/"
  for lib in libfftw3 libfftw3f libfftw3_omp libfftw3f_omp; do
    [ -f "$multi/$lib.so.3" ] || continue
    cp -L "$multi/$lib.so.3" "$v/fftw/lib/"
    ln -s "$lib.so.3" "$v/fftw/lib/$lib.so"
  done
fi
du -sh "$v"
