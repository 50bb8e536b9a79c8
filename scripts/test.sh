#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The test command (CI runs exactly this): sets up a fresh machine, then
#   1. builds porta with every backend whose toolchain is present (CUDA and HIP plugins are built
#      even without a GPU: on a GPU-less machine the suite proves the run-time fallback to the CPU),
#      and runs the whole ctest suite;
#   2. reruns the unit, algorithm, kernel and strict tests and the examples on cpu:strict (docs/strict.md),
#      and the reduction tests with 1, 2 and 3 OpenMP threads (bits must not change);
#   3. builds the CPU suite with ASan + UBSan and runs it;
#   4. builds the unit tests (threads, streams, pools) with ThreadSanitizer and runs them;
#   5. runs every benchmark once at tiny sizes so they never rot.
# PORTA_TEST_QUICK=1 skips steps 3 to 5.
set -euo pipefail
source "$(dirname "$0")/common.sh"
cd "$porta_root"
porta_install_deps
porta_setup_path
jobs=$(porta_jobs)

step() { printf '\n== %s\n' "$*"; }

step "configure + build (all backends found)"
cmake --preset ci
cmake --build --preset ci -j "$jobs"

step "install into the build's prefix"
# The suite runs after an install, as a packager's would: a plugin installed in the prefix must
# never stand in for the build's own (docs/plugins.md).
cmake --install build/ci > /dev/null

step "porta-info"
./build/ci/bin/porta-info

step "test suite"
ctest --preset ci -j "$jobs"

step "the suite and the examples on cpu:strict (docs/strict.md)"
# The CPU as a separate address space with deferred streams: a host read of device memory, a View
# used after free or a missing synchronize, in porta or in its tests, fails here as on a GPU. Not the
# reruns with the CPU's vector paths capped (gemm-isa, random-isa): the same kernels as on cpu.
PORTA_DEVICE=cpu:strict PORTA_TEST_DEVICES=cpu:strict \
  ctest --test-dir build/ci -L 'unit|algorithms|kernels|interop|examples|strict|distributed' \
  -LE 'env|loader|startup|determinism|overlap|mpi|gemm-isa|random-isa' \
  -E compile_fail --output-on-failure -j "$jobs"

step "reductions under 1, 2 and 3 OpenMP threads"
for t in 1 2 3; do
  OMP_NUM_THREADS=$t ctest --test-dir build/ci -L determinism --output-on-failure -j "$jobs"
done

if [ "${PORTA_TEST_QUICK:-0}" != 1 ]; then
  step "ASan + UBSan build of the CPU suite"
  cmake --preset asan
  cmake --build --preset asan -j "$jobs"
  # Not the MPI entries: Open MPI's own start-up is what ASan would read (its leaks cannot be
  # suppressed; docs/distributed-mpi.md), and the same code runs here in the thread-rank tests.
  # (the preset's label filter would override a -LE given beside it, hence the test folder)
  ctest --test-dir build/asan --output-on-failure -LE 'install|mpi' -j "$jobs"

  step "ThreadSanitizer build of the unit tests"
  cmake --preset tsan
  cmake --build --preset tsan -j "$jobs"
  # One OpenMP thread per team: libgomp is not instrumented, and its thread pool would be reported
  # as races that are not there; the host threads of the tests are what is under test. GCC 12's
  # TSan cannot map its shadow under high-entropy ASLR, hence setarch -R where it is allowed.
  norand=()
  if setarch "$(uname -m)" -R true 2>/dev/null; then norand=(setarch "$(uname -m)" -R); fi
  OMP_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" "${norand[@]}" build/tsan/bin/porta_unit_tests

  step "benchmarks, once at tiny sizes"
  scripts/bench.sh --smoke --build-dir build/ci
fi
echo
echo "scripts/test.sh: all steps passed"
