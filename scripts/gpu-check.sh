#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One command for the GPU machine: configure, build, porta-info, the whole suite on cpu and
# cuda:0, the examples on the GPU, compute-sanitizer memcheck, the MLP against PyTorch, and the
# benchmarks of the GPU and of the machine's CPU. Logs go to $OUT (default: out/gpu-check). Carry
# .vendor (scripts/gpu-vendor.sh) when the machine has no Catch2 / Google Benchmark / OpenBLAS.
#
#   scripts/gpu-check.sh [all|build|test|sanitize|mlp|python|kernels|bench|peer|dist|rtc|fused|small|tune]...
#                        (default: all, which is every step but fused, small and tune)
#
# kernels runs the user-kernel benchmarks: on cuda, and on the CPU at 1 thread and at
# every core. bench runs scripts/bench.sh on cuda and on the machine's CPU (PORTA_CPU_BENCH_ARGS adds
# arguments for that run only); PORTA_BENCH_ARGS goes to both. tune runs bench/tune_gpu.cu's
# launch-configuration sweep (porta_tune_gpu). fused puts porta's fused expressions beside their
# Python peers in one log: porta's bench group fused on cuda (the fused expression, the eager
# operators, porta::map compiled by nvcc), then bench/peers/fused_peers.py (PyTorch eager, CuPy eager,
# cupy.fuse, ElementwiseKernel; PORTA_FUSED_PEERS_ARGS adds arguments, e.g. --torch-compile); bench
# already runs porta's half of it. Each benchmark run's report comes back as
# $OUT/<run>.md; the JSON and plots of every run as $OUT/bench-files.tar.gz.
#
# Every step runs even when an earlier one fails; the summary at the end says which failed.
set -uo pipefail
source "$(dirname "$0")/common.sh"
cd "$porta_root"
porta_setup_path
OUT=${OUT:-$porta_root/out/gpu-check}
mkdir -p "$OUT"
build=${PORTA_BUILD_DIR:-build/gpu}
jobs=$(porta_jobs)
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(all)
want() {
  for s in "${steps[@]}"; do
    { [ "$s" = all ] && [ "$1" != tune ] && [ "$1" != fused ] && [ "$1" != small ]; } || [ "$s" = "$1" ] && return 0
  done
  return 1
}
summary=()
run() { # name logfile command...
  local name=$1 log=$2; shift 2
  local t0=$SECONDS
  echo "== $name" | tee -a "$log"
  "$@" >>"$log" 2>&1
  local rc=$?
  summary+=("$(printf '%-28s rc=%-3s %4ss' "$name" "$rc" $((SECONDS - t0)))")
  tail -n 5 "$log" | sed 's/^/   /'
  return $rc
}

vendor_args=()
if [ -d .vendor ]; then
  v=$porta_root/.vendor
  vendor_args+=(-DPORTA_CATCH2_INCLUDE_DIR="$v/include" -Dbenchmark_DIR="$v/lib/x86_64-linux-gnu/cmake/benchmark")
  if [ -d "$v/blas-openmp" ]; then
    # porta's CPU backend and the benchmarks' BLAS peer both take the OpenMP-threaded OpenBLAS.
    vendor_args+=(-DPORTA_OPENBLAS_OPENMP_DIR="$v/blas-openmp" -DCMAKE_LIBRARY_PATH="$v/blas-openmp")
  else
    vendor_args+=(-DBLAS_LIBRARIES="$v/blas/libopenblas.so")
  fi
  export LD_LIBRARY_PATH="$v/blas:$v/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
# FFTW, the CPU peer of the fft benchmarks (GPL: linked into porta_cpu_bench only, never into
# libporta): gpu-vendor.sh's copy when it made one, else the machine's own when it has one.
if [ -f .vendor/fftw/include/fftw3.h ]; then
  vendor_args+=(-DPORTA_BENCH_FFTW=ON -DPORTA_FFTW_ROOT="$porta_root/.vendor/fftw")
  export LD_LIBRARY_PATH="$porta_root/.vendor/fftw/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
elif [ -f /usr/include/fftw3.h ]; then
  vendor_args+=(-DPORTA_BENCH_FFTW=ON)
fi

# NCCL for porta's device collectives (its plugin loads libnccl.so.2 at run time) and for the
# benchmark that calls it directly: the CUDA toolkit's, else the nvidia-nccl Python wheel's.
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on shared machines
nccl_root=$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))' 2>/dev/null ||
  python3 -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null || true)
if [ -n "$nccl_root" ] && [ -d "$nccl_root/lib" ]; then
  vendor_args+=(-DPORTA_NCCL_ROOT="$nccl_root")
  export LD_LIBRARY_PATH="$nccl_root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

# At most eight files come back from the GPU machine: check.log (every step's output), summary.txt,
# one report per benchmark run, and one archive of the benchmarks' JSON and plots.
log=$OUT/check.log
{ date; nvidia-smi; nvcc --version; cmake --version | head -1; g++ --version | head -1; nproc; } >"$log" 2>&1

if want build; then
  run configure "$log" cmake --preset gpu-check -B "$build" "${vendor_args[@]}"
  # PORTA_BUILD_TARGETS="a b ..." builds only those targets (a short device call for a few runs).
  run build "$log" cmake --build "$build" -j "$jobs" ${PORTA_BUILD_TARGETS:+--target $PORTA_BUILD_TARGETS}
fi

if want test; then
  run porta-info "$log" "$build/bin/porta-info"
  "$build/bin/porta-info" --json >>"$log" 2>&1
  # Each algorithm test runs on every device porta finds: cpu and cuda:0 here.
  run "ctest (cpu + cuda:0)" "$log" ctest --test-dir "$build" --output-on-failure -j 8
  run "ctest examples on cpu" "$log" env PORTA_DEVICE=cpu ctest --test-dir "$build" -L examples --output-on-failure
  for t in 1 2 16; do
    run "determinism, $t OpenMP threads" "$log" env OMP_NUM_THREADS=$t ctest --test-dir "$build" -L determinism --output-on-failure
  done
fi

if want sanitize && command -v compute-sanitizer >/dev/null; then
  # memcheck over the whole suite; [oom] makes cudaMallocAsync fail on purpose, so its runs turn off
  # only the report of that API error (accesses and frees are still checked); the overlap test times
  # concurrency, which the tool serialises. porta_kernel_fault_test is left out: its out-of-bounds
  # write is the test. racecheck and synccheck over the user kernels and the reductions (shared
  # memory, shuffles); initcheck over the examples.
  # PORTA_SANITIZE="synccheck initcheck" picks tools (default all four); PORTA_SANITIZE_RUNS picks
  # runs by name ("kernels", "reductions", "examples", "suite", "oom"; default all), so one device
  # call can finish what an earlier one had no time left for.
  cs=(compute-sanitizer --error-exitcode 9 --print-limit 50)
  gpu=(env PORTA_TEST_DEVICES=cuda:0 PORTA_DEVICE=cuda:0)
  tools=" ${PORTA_SANITIZE:-memcheck racecheck synccheck initcheck} "
  runs=" ${PORTA_SANITIZE_RUNS:-suite oom kernels reductions examples} "
  use() { [[ $tools == *" $1 "* && $runs == *" $2 "* ]]; }
  use memcheck suite && for exe in porta_unit_tests porta_algorithm_tests porta_kernel_tests; do
    [ -x "$build/bin/$exe" ] || continue
    run "memcheck $exe" "$log" "${gpu[@]}" timeout 580 "${cs[@]}" --tool memcheck "$build/bin/$exe" '~[overlap]~[oom]~[.]'
  done
  use memcheck oom && for exe in porta_unit_tests porta_algorithm_tests porta_fault_tests; do
    [ -x "$build/bin/$exe" ] || continue
    run "memcheck $exe [oom]" "$log" "${gpu[@]}" timeout 300 "${cs[@]}" --tool memcheck --report-api-errors no \
      "$build/bin/$exe" '[oom]'
  done
  for tool in racecheck synccheck; do
    use "$tool" kernels && run "$tool porta_kernel_tests" "$log" "${gpu[@]}" timeout 580 "${cs[@]}" --tool "$tool" \
      "$build/bin/porta_kernel_tests" '~[overlap]~[.]'
    use "$tool" reductions && run "$tool reductions" "$log" "${gpu[@]}" timeout 580 "${cs[@]}" --tool "$tool" \
      "$build/bin/porta_algorithm_tests" '[reduce]'
  done
  use initcheck examples && for ex in quickstart multiply_them vector_add arrays devices "mlp --steps 12 --batch 256" mlp_test \
            "overlap --chunks 4 --chunk-mb 4" heat cg "nbody --n 256 --steps 5" "monte_carlo --draws 65536"; do
    set -- $ex
    [ -x "$build/bin/$1" ] || continue
    run "initcheck $1" "$log" env PORTA_DEVICE=cuda:0 timeout 300 "${cs[@]}" --tool initcheck "$build/bin/$1" "${@:2}"
  done
fi

if want mlp && [ -x "$build/bin/mlp" ]; then
  run "mlp porta" "$log" "$build/bin/mlp" --bench --batch 4096
  if python3 -c 'import torch' 2>/dev/null; then
    run "mlp torch" "$log" python3 bench/peers/mlp_torch.py --batch 4096
  fi
fi

if want python && [ -d "$build/python/porta" ]; then
  # The pytest suite (label python: CPU and, with torch and CuPy, the CUDA interchange) ran with ctest;
  # this is the round trip PyTorch tensor -> porta.sum -> back, timed against porta::sum's own time.
  run "python round trip" "$log" env PYTHONPATH="$build/python" python3 tests/python/bench_roundtrip.py
fi

if want peer && [ -x "$build/bench/porta_peer_bench" ]; then
  # Copies between two GPUs beside cudaMemcpyPeerAsync (needs the two-GPU machine; says why otherwise).
  run "peer copies" "$log" "$build/bench/porta_peer_bench" --benchmark_min_time=0.2 --benchmark_counters_tabular=true
fi

if want dist; then
  # porta::distributed across the machine's GPUs: the heat plate split over ranks as
  # threads, bit-identical to one rank (NCCL between distinct GPUs, staged where ranks share one),
  # and allreduce / the distributed sum beside NCCL called directly.
  for k in 2 4; do
    [ -x "$build/bin/heat_distributed" ] &&
      run "heat_distributed, $k ranks" "$log" "$build/bin/heat_distributed" --threads $k --n 2048 --steps 200
  done
  [ -x "$build/bench/porta_dist_bench" ] &&
    run "allreduce vs NCCL" "$log" "$build/bench/porta_dist_bench" --benchmark_counters_tabular=true
fi

if want rtc && [ -x "$build/bench/porta_rtc_bench" ]; then
  # Run-time compiled kernels: first-call compile, a second process's cached start, and
  # the chain as a run-time kernel beside the same formula compiled by nvcc (porta::map), 2^20..2^28.
  run "run-time kernels float" "$log" "$build/bench/porta_rtc_bench" --device cuda:0
  run "run-time kernels double" "$log" "$build/bench/porta_rtc_bench" --device cuda:0 --dtype double --max-log2 27
fi

if want tune && [ -x "$build/bench/porta_tune_gpu" ]; then
  run "tune" "$log" "$build/bench/porta_tune_gpu"
fi

benchdir=${PORTA_BENCH_DIR:-/tmp/porta-gpu-bench}
bench_run() { # name bench.sh-arguments...
  local name=$1; shift
  run "bench $name" "$log" scripts/bench.sh --build-dir "$build" --out "$benchdir/$name" "$@"
  local rc=$?
  [ -f "$benchdir/$name/bench-results.md" ] && cp "$benchdir/$name/bench-results.md" "$OUT/$name.md"
  return $rc
}

if want kernels; then
  bench_run kernels-cuda --device cuda --ops kernels ${PORTA_BENCH_ARGS:-}
  bench_run kernels-cpu --device cpu --ops kernels --threads "1,$(nproc)" ${PORTA_BENCH_ARGS:-}
fi

if want bench; then
  bench_run cuda --device cuda ${PORTA_BENCH_ARGS:-}
  bench_run cpu --device cpu ${PORTA_BENCH_ARGS:-} ${PORTA_CPU_BENCH_ARGS:-}
fi

if want fused; then
  # porta at 2^20..2^28 in f32 and f64, then the peers in f32 at the same sizes; their JSON goes into
  # bench-files.tar.gz beside porta's.
  bench_run fused-cuda --device cuda --ops fused ${PORTA_BENCH_ARGS:-}
  mkdir -p "$benchdir/fused-peers"
  run "fused peers (python)" "$log" python3 bench/peers/fused_peers.py --json "$benchdir/fused-peers/fused-peers.json" \
    ${PORTA_FUSED_PEERS_ARGS:-}
fi

if want small; then
  # The small calls: porta's sum of 2^10 floats with its value, and a map of one element,
  # beside CUB, bare kernels and PyTorch's x.sum().item() / a one-element add, in one step.
  bench_run small-cuda --device cuda --ops small ${PORTA_BENCH_ARGS:-}
  run "small calls (torch)" "$log" python3 bench/peers/small_calls_torch.py
fi

if [ -d "$benchdir" ]; then
  tar -czf "$OUT/bench-files.tar.gz" -C "$benchdir" . 2>/dev/null
fi

echo
echo "== summary ($OUT)"
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
# Without a pipe: under pipefail, grep -q exiting early would fail printf and flip the verdict.
status=0
for line in "${summary[@]}"; do [[ $line == *"rc=0 "* ]] || status=1; done
exit $status
