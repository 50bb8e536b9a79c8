#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The test command (CI runs exactly this): sets up a fresh machine, then
#   1. builds porta with every backend whose toolchain is present (CUDA and HIP plugins are built
#      even without a GPU: on a GPU-less machine the suite proves the run-time fallback to the CPU),
#      and runs the whole ctest suite;
#   2. reruns the reduction tests with 1, 2 and 3 OpenMP threads (bits must not change);
#   3. builds the CPU suite with ASan + UBSan and runs it: the unit, algorithm, kernel, interop,
#      strict and distributed tests and the examples on cpu:strict (docs/strict.md), the rest on cpu;
#   4. builds the unit tests (threads, streams, pools) with ThreadSanitizer and runs them;
#   5. runs every benchmark once at tiny sizes so they never rot.
# PORTA_TEST_QUICK=1 skips steps 3 to 5 and runs step 3's cpu:strict set on the build of step 1.
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

step "reductions under 1, 2 and 3 OpenMP threads"
for t in 1 2 3; do
  OMP_NUM_THREADS=$t ctest --test-dir build/ci -L determinism --output-on-failure -j "$jobs"
done

# The cpu:strict set (docs/strict.md): the CPU as a separate address space with deferred streams,
# so a host read of device memory, a View used after free or a missing synchronize, in porta or in
# its tests, fails as on a GPU. Not the tests that choose their own device or environment.
strict_set=(-L 'unit|algorithms|kernels|interop|examples|strict|distributed'
  -LE 'env|loader|startup|determinism|overlap|mpi|install' -E compile_fail)
strict_env=(env PORTA_DEVICE=cpu:strict PORTA_TEST_DEVICES=cpu:strict)
test_numbers() { ctest --test-dir "$1" -N "${@:2}" | sed -n 's/^ *Test *#\([0-9]*\):.*/\1/p' | sort; }

if [ "${PORTA_TEST_QUICK:-0}" = 1 ]; then
  step "the cpu:strict set"
  "${strict_env[@]}" ctest --test-dir build/ci "${strict_set[@]}" --output-on-failure -j "$jobs"
else
  step "ASan + UBSan build of the CPU suite"
  cmake --preset asan
  cmake --build --preset asan -j "$jobs"
  # The cpu:strict set under the sanitizers, and every other entry on cpu: each test runs once,
  # sanitized, on a device as strict as its subject allows (the suite of step 1 ran it on cpu).
  # Not the MPI entries: Open MPI's own start-up is what ASan would read (its leaks cannot be
  # suppressed; docs/distributed-mpi.md), and the same code runs here in the thread-rank tests.
  "${strict_env[@]}" ctest --test-dir build/asan "${strict_set[@]}" --output-on-failure -j "$jobs"
  rest=$(comm -23 <(test_numbers build/asan -LE 'install|mpi') <(test_numbers build/asan "${strict_set[@]}") | paste -sd,)
  ctest --test-dir build/asan -I "0,0,0,$rest" --output-on-failure -j "$jobs"

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
