#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs porta's benchmarks (bench/) and writes the table and the plots that bench/README.md shows.
#
#   scripts/bench.sh [--device cpu|cuda|all] [--max-log2 N] [--matmul-max N] [--ops LIST]
#                    [--min-time S] [--repetitions N] [--threads LIST] [--out DIR] [--build-dir DIR]
#                    [--smoke] [-- ARGS for the benchmark binaries]
#
#   --device      cpu: porta_cpu_bench; cuda: porta_cuda_bench; all: both. Default: cpu, plus cuda
#                 when that binary is built and nvidia-smi lists a GPU.
#   --max-log2    largest vector size, 2^N elements (default 28); --matmul-max likewise for matmul
#   --ops         only these ops or groups, comma-separated (copy,axpy,sum,matmul_ts,map,reduce,matmul,latency,
#                 small: the sum of 2^10 with its value and the map of one element, beside an empty launch;
#                 kernels: the user-kernel cases, or one family of them: guide,heat,nbody,reduce_expr,cg;
#                 fused: fused expressions beside the eager operators and porta::map / an OpenMP loop)
#   --min-time    Google Benchmark's minimum time per case, in seconds (default: its own, 0.5)
#   --threads     run the CPU binary once per OpenMP thread count in this comma-separated list
#                 (e.g. 1,16), with OMP_NUM_THREADS set for porta and every peer alike, into
#                 bench-cpu-t<N>.json; the report gets a section per count and a table of the user
#                 kernels' ratios side by side. Default: one run with the environment's setting.
#   --out         where bench-<binary>.json, bench-results.md and bench-<binary>.svg go
#                 (default: out/bench)
#   --build-dir   a build tree to use (configured with PORTA_BUILD_BENCH=ON if it is not yet);
#                 default: build/bench
#   --smoke       CI: every case, 3 iterations each, at tiny sizes (2^10..2^12, matmul 256,
#                 tall-skinny 4096x64) in well under a minute, then the report; fails when a case fails.
#
# Environment: PORTA_BENCH_MIN_LOG2, PORTA_BENCH_MATMUL_MIN, PORTA_BENCH_TS_ROWS and
# PORTA_BENCH_ITERATIONS (a fixed iteration count for every case) reach the binaries
# as they are (bench/common.hpp); OMP_NUM_THREADS and OMP_PROC_BIND apply to porta and every CPU peer.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -f "$root/scripts/common.sh" ]; then
  # shellcheck source=scripts/common.sh
  source "$root/scripts/common.sh"
  porta_setup_path
fi

device=auto
max_log2=""
matmul_max=""
ops=""
min_time=""
repetitions=""
out=""
build=""
smoke=0
threads=""
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --device) device=$2; shift 2 ;;
    --device=*) device=${1#*=}; shift ;;
    --max-log2) max_log2=$2; shift 2 ;;
    --max-log2=*) max_log2=${1#*=}; shift ;;
    --matmul-max) matmul_max=$2; shift 2 ;;
    --matmul-max=*) matmul_max=${1#*=}; shift ;;
    --ops) ops=$2; shift 2 ;;
    --ops=*) ops=${1#*=}; shift ;;
    --min-time) min_time=$2; shift 2 ;;
    --min-time=*) min_time=${1#*=}; shift ;;
    --repetitions) repetitions=$2; shift 2 ;;
    --repetitions=*) repetitions=${1#*=}; shift ;;
    --threads) threads=$2; shift 2 ;;
    --threads=*) threads=${1#*=}; shift ;;
    --out) out=$2; shift 2 ;;
    --out=*) out=${1#*=}; shift ;;
    --build-dir) build=$2; shift 2 ;;
    --build-dir=*) build=${1#*=}; shift ;;
    --smoke) smoke=1; shift ;;
    -h|--help) awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "bench.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$device" in auto|cpu|cuda|all) ;; *) echo "bench.sh: --device must be cpu, cuda or all" >&2; exit 2 ;; esac
if [ -n "$threads" ] && ! [[ "$threads" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]]; then
  echo "bench.sh: --threads takes positive integers separated by commas (e.g. 1,16)" >&2
  exit 2
fi

cd "$root"
build=${build:-build/bench}
if [ "$smoke" = 1 ]; then
  max_log2=${max_log2:-12}
  matmul_max=${matmul_max:-256}
  # A fixed count, not a minimum time: under load, Google Benchmark's time-based estimate can ask
  # for thousands of iterations that each wait on a descheduled OpenMP thread.
  export PORTA_BENCH_ITERATIONS=${PORTA_BENCH_ITERATIONS:-3}
  export PORTA_BENCH_MIN_LOG2=${PORTA_BENCH_MIN_LOG2:-10}
  export PORTA_BENCH_TS_ROWS=${PORTA_BENCH_TS_ROWS:-4096}
fi
[ -n "$max_log2" ] && export PORTA_BENCH_MAX_LOG2=$max_log2
[ -n "$matmul_max" ] && export PORTA_BENCH_MATMUL_MAX=$matmul_max
[ -n "$ops" ] && export PORTA_BENCH_OPS=$ops
if [ -z "$out" ]; then
  if [ "$smoke" = 1 ]; then
    out=$(mktemp -d "${TMPDIR:-/tmp}/porta-bench-smoke.XXXXXX")
  else
    out=out/bench
  fi
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

# ---- build -------------------------------------------------------------------------------------
jobs=${PORTA_JOBS:-$(nproc 2>/dev/null || echo 2)}
cache="$build/CMakeCache.txt"
if [ ! -f "$cache" ] || ! grep -q '^PORTA_BUILD_BENCH:BOOL=ON' "$cache"; then
  echo "== bench.sh: configuring $build with PORTA_BUILD_BENCH=ON"
  if [ -f "$cache" ]; then
    cmake -S "$root" -B "$build" -DPORTA_BUILD_BENCH=ON
  else
    gen=()
    command -v ninja >/dev/null && gen=(-G Ninja)
    cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DPORTA_BUILD_BENCH=ON \
      -DPORTA_BUILD_TESTS=OFF -DPORTA_BUILD_EXAMPLES=OFF
  fi
fi
# The target list is read whole first: `... | grep -q` under pipefail fails whenever grep exits
# before cmake has written everything (SIGPIPE), which made CI skip the CUDA smoke run at random.
has_target() {
  local targets
  targets=$(cmake --build "$build" --target help 2>/dev/null) || return 1
  grep -q -- "$1" <<<"$targets"
}
cpu_exe="$build/bench/porta_cpu_bench"
cuda_exe="$build/bench/porta_cuda_bench"
info_exe="$build/bin/porta-info"
have_cuda_target=0
has_target porta_cuda_bench && have_cuda_target=1

# Which binaries: --device decides; auto takes the CPU, plus CUDA when it is built and a GPU is
# there (in --smoke also without a GPU: the binary must then start, say why, and exit 0, which is
# part of what CI checks).
run_cpu=0
run_cuda=0
case "$device" in
  cpu) run_cpu=1 ;;
  cuda) run_cuda=1 ;;
  all) run_cpu=1; run_cuda=1 ;;
  auto)
    run_cpu=1
    if [ "$have_cuda_target" = 1 ]; then
      if [ "$smoke" = 1 ]; then
        run_cuda=1
      elif command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q GPU; then
        run_cuda=1
      fi
    fi
    ;;
esac
if [ "$run_cuda" = 1 ] && [ "$have_cuda_target" = 0 ]; then
  echo "bench.sh: $build has no porta_cuda_bench (configure with the CUDA backend: -DPORTA_ENABLE_CUDA=ON)" >&2
  exit 1
fi

# Only what will run is built, so a CPU run does not wait for (or fail on) the CUDA binary.
targets=()
[ "$run_cpu" = 1 ] && targets+=(porta_cpu_bench)
[ "$run_cuda" = 1 ] && targets+=(porta_cuda_bench)
has_target porta-info && targets+=(porta-info)
echo "== bench.sh: building ${targets[*]} in $build"
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

# ---- run ---------------------------------------------------------------------------------------
bench_args=(--benchmark_out_format=json)
[ -n "$min_time" ] && bench_args+=(--benchmark_min_time="$min_time")
if [ -n "$repetitions" ]; then
  bench_args+=(--benchmark_repetitions="$repetitions" --benchmark_report_aggregates_only=true)
fi
bench_args+=(${extra[@]+"${extra[@]}"})

tmp=$(mktemp -d "${TMPDIR:-/tmp}/porta-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
jsons=()
run_binary() { # name exe
  local name=$1 exe=$2 json="$out/bench-$1.json"
  echo "== bench.sh: $exe (sizes 2^${PORTA_BENCH_MIN_LOG2:-10}..2^${PORTA_BENCH_MAX_LOG2:-28}${OMP_NUM_THREADS:+, OMP_NUM_THREADS=$OMP_NUM_THREADS})"
  local t0=$SECONDS
  "$exe" --benchmark_out="$json" "${bench_args[@]}"
  echo "== bench.sh: $name done in $((SECONDS - t0)) s -> $json"
  jsons+=("$json")
}
if [ "$run_cpu" = 1 ]; then
  if [ -n "$threads" ]; then
    for t in ${threads//,/ }; do
      OMP_NUM_THREADS=$t run_binary "cpu-t$t" "$cpu_exe"
    done
  else
    run_binary cpu "$cpu_exe"
  fi
fi
[ "$run_cuda" = 1 ] && run_binary cuda "$cuda_exe"

# ---- what the machine is -----------------------------------------------------------------------
infos=()
if [ -x "$info_exe" ]; then
  "$info_exe" --json >"$tmp/porta-info.json" 2>&1 || true
  infos+=(--info "porta-info --json=$tmp/porta-info.json")
fi
if command -v lscpu >/dev/null; then
  lscpu >"$tmp/lscpu.txt" 2>&1 || true
  infos+=(--info "lscpu=$tmp/lscpu.txt")
fi
if [ "$run_cuda" = 1 ] && command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit \
    --format=csv >"$tmp/nvidia-smi.txt" 2>&1 || true
  infos+=(--info "nvidia-smi=$tmp/nvidia-smi.txt")
fi

report_args=()
[ "$smoke" = 1 ] && [ "${PORTA_BENCH_SMOKE_STRICT:-1}" = 1 ] && report_args+=(--strict)
python3 "$root/bench/report.py" --md "$out/bench-results.md" --svg-dir "$out" \
  ${infos[@]+"${infos[@]}"} ${report_args[@]+"${report_args[@]}"} "${jsons[@]}"
echo "== bench.sh: $out/bench-results.md and $(cd "$out" && ls bench-*.svg 2>/dev/null | tr '\n' ' ')"
