#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""PyTorch's side of the CPU matmul: torch.matmul of two n x n matrices on the CPU, on a set
number of threads, timed as porta_cpu_bench times `matmul/<dtype>/porta/<n>` (wall clock per call
after a warm-up; GFLOP/s = 2 n^3 / time, 8 n^3 / time for complex64 and complex128). With
porta_cpu_bench JSON files (--benchmark_out) it also prints porta's cases from each file and their
ratio to torch.

    python3 bench/peers/matmul_torch.py [--n 4096] [--threads 16] [--dtypes float32,float64,complex64,complex128]
                                    [--reps 10] [BENCH.json ...]

Without PyTorch it says so and prints the benchmark files' cases alone.
"""
import argparse
import json
import statistics
import sys
import time


def torch_gflops(torch, n, dtype, reps):
    a = torch.rand(n, n, dtype=dtype)  # complex: both parts uniform
    b = torch.rand(n, n, dtype=dtype)
    c = torch.empty(n, n, dtype=dtype)
    for _ in range(2):
        torch.matmul(a, b, out=c)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        torch.matmul(a, b, out=c)
        times.append(time.perf_counter() - t0)
    flop = (8.0 if dtype.is_complex else 2.0) * n * n * n
    return flop / min(times) * 1e-9, flop / statistics.median(times) * 1e-9


def bench_cases(path, n):
    """{(dtype, impl): GFLOP/s} of the square matmul cases of size n in a Google Benchmark JSON file."""
    with open(path) as f:
        data = json.load(f)
    out = {}
    for b in data.get("benchmarks", []):
        parts = (b.get("run_name") or b.get("name", "")).split("/")
        if len(parts) >= 4 and parts[0] == "matmul" and parts[3] == str(n) and "flops" in b:
            if b.get("run_type", "iteration") == "iteration":
                out[(parts[1], parts[2])] = max(out.get((parts[1], parts[2]), 0.0), b["flops"] * 1e-9)
    return out, data.get("context", {})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("bench", nargs="*", help="porta_cpu_bench --benchmark_out files to compare with")
    args = ap.parse_args()
    torch_best = {}
    try:
        import torch
    except ImportError:
        torch = None
        print("matmul_torch: PyTorch is not installed; nothing to time")
    if torch is not None:
        torch.set_num_threads(args.threads)
        blas = [l.strip() for l in torch.__config__.show().splitlines() if "BLAS_INFO" in l or "USE_MKL" in l]
        print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; {' '.join(blas)}")
        names = {"float32": "f32", "float64": "f64", "complex64": "c64", "complex128": "c128"}
        for name in args.dtypes.split(","):
            best, med = torch_gflops(torch, args.n, getattr(torch, name), args.reps)
            torch_best[names[name]] = best
            print(f"torch.matmul {name} {args.n}: best {best:8.1f} GFLOP/s   median {med:8.1f} GFLOP/s")
    for path in args.bench:
        cases, ctx = bench_cases(path, args.n)
        print(f"\n{path}: {ctx.get('cpu_blas', '')}")
        for (dt, impl), gf in sorted(cases.items()):
            ratio = f"{gf / torch_best[dt]:.2f}x torch" if dt in torch_best else ""
            print(f"  {f'matmul/{dt}/{impl}/{args.n}':28s} {gf:8.1f} GFLOP/s  {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
