#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns the JSON of porta's benchmark binaries into a markdown table and SVG plots.

    bench/report.py [--md FILE] [--svg-dir DIR] [--info NAME=FILE ...] [--strict] JSON...

Benchmarks are named <op>/<dtype>/<impl>/<size> (bench/common.hpp). For every op, dtype and size the
table gives porta's throughput (GB/s, or GFLOP/s for matmul), each peer's, and the ratio porta/peer
(above 1: porta is faster). Latency cases give microseconds per call and the ratio of times
porta/peer (below 1: porta is faster). The targets of bench/README.md are checked against the data.

Plain Python 3 only (no matplotlib): the plots are SVG written here, one file per binary, one panel
per operation, log2 of the size on x and GB/s (GFLOP/s) on a log scale on y; f32 solid, f64 dashed.
"""

import argparse
import datetime
import html
import json
import math
import os
import re
import statistics
import sys

# ---- reading ---------------------------------------------------------------------------------------

SUFFIX = re.compile(r"/(manual_time|real_time|process_time|iterations:\d+|repeats:\d+|threads:\d+|min_time:[^/]+)$")
MAP_OPS = ["copy", "scale", "axpy", "fourop"]
REDUCE_OPS = ["sum", "dot", "max"]
MATMUL_OPS = ["matmul", "matmul_ts", "matmul_tf32"]
LATENCY_OPS = ["latency_fill", "latency_add", "latency_sum", "latency_axpy", "latency_map"]
# PyTorch's x.sum().item() of 2^10 floats on the H200, host-timed: porta's sum of 2^10 with its value
# must be no slower (the small-calls target, bench group `small`)
TORCH_SMALL_SUM_US = 16.5
# User kernels (bench/kernels_common.hpp); on the CPU each also as <op>_nvcc, compiled by nvcc.
KERNEL_OPS = ["guide_axpy", "guide_jacobi", "guide_stencil3d", "heat_1d", "heat_2d", "nbody", "nbody_energy",
              "reduce_expr", "cg"]
NVCC_SUFFIX = "_nvcc"
KERNEL_FLOP_OPS = ["nbody", "nbody_energy"]
KERNEL_TARGET = 0.9  # user kernels: at least 0.9x the OpenMP loop, at 16 threads and at 1
# The kernels as docs/guide.md writes them (View accessors in the body): at least 0.95x the OpenMP
# loop nest over raw pointers, as a PORTA_LAMBDA, a functor and a PORTA_KERNEL, from C++ and nvcc.
GUIDE_OPS = ["guide_axpy", "guide_jacobi", "guide_stencil3d"]
GUIDE_TARGET = 0.95
# BabelStream's kernels (bench/babelstream.hpp): porta's built-in calls ("porta_<call>"), porta user
# kernels ("porta_kernel") and BabelStream's own OpenMP loops ("openmp").
# Dense solvers (bench/linalg_common.hpp): the factorisations report GFLOP/s, eigh and svd the time per call.
LINALG_OPS = ["solve", "solve_batched", "cholesky", "eigh", "svd"]
LINALG_TIME_OPS = ["eigh", "svd"]
# Fourier transforms (bench/fft_common.hpp): GB/s of the input read and the output written once, so the
# ratio porta/peer is one of times; the peers are FFTW (CPU, when built in) and cuFFT.
FFT_OPS = ["fft_c2c", "fft_c2c_batch", "fft_r2c", "fft_c2c_2d", "fft_r2c_3d", "ifft_c2c"]
BABELSTREAM_OPS = ["babelstream_" + k for k in ("copy", "mul", "add", "triad", "dot", "nstream")]
BABELSTREAM_KERNEL_IMPL = "porta_kernel"
# Built-in maps and BabelStream's built-in forms: at least the OpenMP loop at every size in this range
# (2^16 .. 2^28 elements), at 1 thread and at all of them.
BUILTIN_TARGET = 1.0
BUILTIN_SIZES = (1 << 16, 1 << 28)
BUILTIN_MAP_OPS = ["copy", "scale", "axpy"]
OP_TITLES = {
    "copy": "copy (porta::copy)",
    "scale": "scale (porta::mul by a scalar)",
    "axpy": "axpy (porta::axpy)",
    "fourop": "four-op user kernel sin(x)*cos(y)+x*y (porta::map)",
    "sum": "sum (porta::sum)",
    "dot": "dot (porta::dot)",
    "max": "max (porta::max)",
    "matmul": "square matmul n x n x n (porta::gemm)",
    "matmul_ts": "tall-skinny matmul (rows x 64) * (64 x 64)",
    "matmul_tf32": "square matmul, fp32 inputs on TF32 tensor cores",
    "latency_fill": "fill of one element: the cost of a call",
    "latency_add": "add of one element: the cost of a call",
    "latency_sum": "sum, value back on the host",
    "latency_axpy": "axpy, waited for",
    "latency_map": "map of one element (porta::map), waited for, beside an empty kernel launch",
    "guide_axpy": "y = a x + y over porta::range(n), the guide's form (View accessors)",
    "guide_jacobi": "the guide's Jacobi sweep over Range<2>'s interior (View accessors)",
    "guide_stencil3d": "7-point sweep over Range<3>'s interior, n^3 (View accessors)",
    "heat_1d": "heat stencil, one sweep, 1-D index over all cells (i / n, i % n); raw pointers, an extra",
    "heat_2d": "heat stencil, one sweep, 2-D interior range; raw pointers, an extra",
    "nbody": "n-body accelerations, all pairs (20 FLOP per pair)",
    "nbody_energy": "n-body potential energy: transform_reduce of a per-body sum (12 FLOP per pair)",
    "reduce_expr": "transform_reduce of sqrt(x^2 + y^2)",
    "cg": "one CG iteration, dense n x n (matvec, 2 dots, 2 axpys, p = r + beta p)",
    "cumsum": "inclusive sum scan (porta::cumsum; bytes: read + write)",
    "random_uniform": "uniform random numbers in [0, 1) (porta::random::uniform; bytes written)",
    "random_normal": "standard normal random numbers (porta::random::normal; bytes written)",
    "fused_chain": "sin(x)*cos(y)+x*y: fused expression (porta::lazy), eager operators, porta::map / loop",
    "fused_bs": "Black-Scholes call prices: fused expression (two passes), eager operators, porta::map / loop",
    "babelstream_copy": "BabelStream Copy c = a (porta::copy; bytes: 2 arrays)",
    "babelstream_mul": "BabelStream Mul b = s*c (porta::mul(s, c, b); bytes: 2 arrays)",
    "babelstream_add": "BabelStream Add c = a + b (porta::add(a, b, c); bytes: 3 arrays)",
    "babelstream_triad": "BabelStream Triad a = b + s*c (a.assign(lazy(b) + s * lazy(c)); bytes: 3 arrays)",
    "babelstream_dot": "BabelStream Dot sum a*b (porta::dot; bytes: 2 arrays)",
    "babelstream_nstream": "BabelStream Nstream a += b + s*c (a.assign(A + (B + s * C)), lazy; bytes: 4 arrays)",
    "fft_c2c": "1-D complex FFT of one line of n points (porta::fft::fft; bytes: input + output)",
    "fft_c2c_batch": "1-D complex FFTs of a batch of short lines of n points (porta::fft::fft on (batch, n, 2); "
                     "the batch is in the run's FFT sizes)",
    "fft_r2c": "1-D real-to-complex FFT of n points (porta::fft::rfft; bytes: input + output)",
    "fft_c2c_2d": "2-D complex FFT, n x n (porta::fft::fft2; bytes: input + output)",
    "fft_r2c_3d": "3-D real-to-complex FFT, n^3 (porta::fft::rfftn; bytes: input + output)",
    "ifft_c2c": "1-D inverse complex FFT of n points, divided by n (porta::fft::ifft; the _unscaled peer "
                "leaves out the division)",
}
TIME_TO_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def parse_name(name):
    """op, dtype, impl, size of a benchmark name, or None for names outside the scheme."""
    while True:
        stripped = SUFFIX.sub("", name)
        if stripped == name:
            break
        name = stripped
    parts = name.split("/")
    if len(parts) != 4:
        return None
    op, dtype, impl, size = parts
    try:
        return op, dtype, impl, int(size)
    except ValueError:
        return None


def kernel_base(op):
    """The user-kernel op that `op` is (heat_2d_nvcc -> heat_2d), or None."""
    base = op[: -len(NVCC_SUFFIX)] if op.endswith(NVCC_SUFFIX) else op
    return base if base in KERNEL_OPS else None


def kernel_target(op):
    return GUIDE_TARGET if kernel_base(op) in GUIDE_OPS else KERNEL_TARGET


def title_of(op):
    base = kernel_base(op)
    if base and base != op:
        return OP_TITLES[base] + ", compiled by nvcc"
    return OP_TITLES.get(op, op)


def kind_of(op):
    if op.startswith("latency") or op in LINALG_TIME_OPS:
        return "time"
    if op in LINALG_OPS:
        return "flops"
    if op.startswith("matmul") or kernel_base(op) in KERNEL_FLOP_OPS:
        return "flops"
    return "bytes"


class Run:
    """One binary's results: its context and a value per (op, dtype, impl, size)."""

    def __init__(self, path, data):
        self.path = path
        self.context = data.get("context", {})
        self.binary = self.context.get("porta_bench") or os.path.basename(path).replace(".json", "")
        # bench.sh --threads writes bench-cpu-t<N>.json: one section (and plot) per thread count.
        stem = os.path.basename(path).replace(".json", "")
        self.label = stem[len("bench-"):] if stem.startswith("bench-") and stem != "bench-" + self.binary else self.binary
        self.values = {}  # (op, dtype, impl, size) -> value (GB/s, GFLOP/s or us)
        self.errors = []  # (name, message)
        samples = {}
        for b in data.get("benchmarks", []):
            name = b.get("run_name") or b.get("name", "")
            if b.get("error_occurred") or b.get("skipped"):
                self.errors.append((b.get("name", name), b.get("error_message") or b.get("skip_message") or "skipped"))
                continue
            key = parse_name(name)
            if key is None:
                continue
            if b.get("run_type") == "aggregate":
                if b.get("aggregate_name") != "median":
                    continue
                samples[key] = [b]  # the median of repetitions wins over single runs
                continue
            if key in samples and samples[key][0].get("run_type") == "aggregate":
                continue
            samples.setdefault(key, []).append(b)
        for key, runs in samples.items():
            vals = [v for v in (self.value_of(key[0], b) for b in runs) if v is not None]
            if vals:
                self.values[key] = statistics.median(vals)

    @staticmethod
    def value_of(op, b):
        kind = kind_of(op)
        if kind == "bytes":
            v = b.get("bytes_per_second")
            return v / 1e9 if v else None
        if kind == "flops":
            v = b.get("flops")
            return v / 1e9 if v else None
        t = b.get("real_time")
        if t is None:
            return None
        return t * TIME_TO_US.get(b.get("time_unit", "ns"), 1e-3)

    def ops(self):
        seen = []
        for op, _, _, _ in self.values:
            if op not in seen:
                seen.append(op)
        order = MAP_OPS + REDUCE_OPS + MATMUL_OPS + LATENCY_OPS + BABELSTREAM_OPS + LINALG_OPS + FFT_OPS
        order += [o for k in KERNEL_OPS for o in (k, k + NVCC_SUFFIX)]
        return sorted(seen, key=lambda o: (order.index(o) if o in order else len(order), o))

    def impls(self, op, dtype=None):
        found = []
        for o, d, impl, _ in self.values:
            if o == op and (dtype is None or d == dtype) and impl not in found:
                found.append(impl)
        porta = sorted(i for i in found if i.startswith("porta"))
        peers = sorted(i for i in found if not i.startswith("porta"))
        return porta, peers

    def dtypes(self, op):
        return sorted({d for o, d, _, _ in self.values if o == op})

    def sizes(self, op, dtype):
        return sorted({s for o, d, _, s in self.values if o == op and d == dtype})

    def get(self, op, dtype, impl, size):
        return self.values.get((op, dtype, impl, size))


# ---- formatting --------------------------------------------------------------------------------------


def fmt_value(v):
    if v is None:
        return "—"
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    if v >= 1:
        return "%.2f" % v
    return "%.3g" % v


def fmt_ratio(r):
    return "—" if r is None else "%.2f" % r


def fmt_size(op, size):
    base = kernel_base(op)
    if base in ("heat_1d", "heat_2d", "guide_jacobi"):
        return "%dx%d" % (size, size)
    if base == "guide_stencil3d" or op == "fft_r2c_3d":
        return "%d^3" % size
    if op == "fft_c2c_2d":
        return "%dx%d" % (size, size)
    if base in ("nbody", "nbody_energy", "cg"):
        return str(size)
    if op.startswith("matmul_ts"):
        return "%dx64" % size
    if op.startswith("matmul"):
        return str(size)
    if size > 1 and size & (size - 1) == 0:
        return "2^%d" % (size.bit_length() - 1)
    return str(size)


def ratio(op, porta, peer):
    if porta is None or peer is None or porta <= 0 or peer <= 0:
        return None
    return porta / peer  # throughput: porta/peer; time: porta time / peer time


def unit_of(op):
    return {"bytes": "GB/s", "flops": "GFLOP/s", "time": "µs per call"}[kind_of(op)]


def table(run, op):
    lines = []
    porta_impls, peers = run.impls(op)
    kind = kind_of(op)
    better = "below 1: porta faster" if kind == "time" else "above 1: porta faster"
    lines.append("#### %s — %s" % (title_of(op), unit_of(op)))
    lines.append("")
    head = ["dtype", "size"] + porta_impls + peers
    head += ["%s / %s" % (p, q) for p in porta_impls for q in peers]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for dtype in run.dtypes(op):
        for size in run.sizes(op, dtype):
            row = [dtype, fmt_size(op, size)]
            row += [fmt_value(run.get(op, dtype, i, size)) for i in porta_impls + peers]
            row += [
                fmt_ratio(ratio(op, run.get(op, dtype, p, size), run.get(op, dtype, q, size)))
                for p in porta_impls
                for q in peers
            ]
            lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.append("Ratios: %s." % better)
    lines.append("")
    return lines


# ---- targets (bench/README.md) ------------------------------------------------------------------------


def largest(run, op, dtype):
    s = run.sizes(op, dtype)
    return s[-1] if s else None


def target_rows(run):
    """(target, where, measured, pass) for the binary's targets; measured None = not measured."""
    rows = []

    def at_largest(ops, peer, need, label):
        for op in ops:
            for dtype in ("f32", "f64"):
                size = largest(run, op, dtype)
                if size is None:
                    continue
                r = ratio(op, run.get(op, dtype, "porta", size), run.get(op, dtype, peer, size))
                rows.append((label, "%s %s %s" % (op, dtype, fmt_size(op, size)), r, None if r is None else r >= need))

    def matmul_at(ops, impl, peer, need, label, size_wanted):
        for op in ops:
            for dtype in ("f32", "f64"):
                sizes = run.sizes(op, dtype)
                if not sizes:
                    continue
                size = size_wanted if size_wanted in sizes else sizes[-1]
                r = ratio(op, run.get(op, dtype, impl, size), run.get(op, dtype, peer, size))
                if r is None and run.get(op, dtype, impl, size) is None:
                    continue
                rows.append((label, "%s %s %s" % (op, dtype, fmt_size(op, size)), r, None if r is None else r >= need))

    if run.binary == "cuda":
        at_largest(MAP_OPS, "thrust", 0.97, "map ≥ 0.97× Thrust")
        at_largest(REDUCE_OPS, "cub", 0.95, "reduce ≥ 0.95× CUB (value returned to the host)")
        at_largest(["cumsum"], "cub", 0.9, "scan ≥ 0.9× CUB DeviceScan")
        at_largest(["sort"], "cub", 0.9, "sort ≥ 0.9× CUB DeviceRadixSort")
        matmul_at(["matmul", "matmul_ts"], "porta", "cublas", 0.98, "matmul ≥ 0.98× cuBLAS", 4096)
        matmul_at(["matmul_tf32"], "porta", "cublas-tf32", 0.98, "matmul TF32 ≥ 0.98× cuBLAS TF32", 4096)
        for dtype in ("f32",):
            op = "matmul"
            sizes = run.sizes(op, dtype)
            if sizes:
                size = 4096 if 4096 in sizes else sizes[-1]
                r = ratio(op, run.get(op, dtype, "porta_own", size), run.get(op, dtype, "cublas", size))
                rows.append(("own GEMM ≥ 0.6× cuBLAS fp32 at 4096", "matmul f32 %d" % size, r,
                             None if r is None else r >= 0.6))
        # the fused chain sin(x)*cos(y)+x*y from plain C++ within 1.15x the time of porta::map compiled by nvcc
        size = largest(run, "fused_chain", "f32")
        if size is not None:
            r = ratio("fused_chain", run.get("fused_chain", "f32", "porta", size),
                      run.get("fused_chain", "f32", "porta_map", size))
            t = None if r is None else 1.0 / r
            rows.append(("fused chain time ≤ 1.15× porta::map compiled by nvcc (time ratio)",
                         "fused_chain f32 %s" % fmt_size("fused_chain", size), t, None if t is None else t <= 1.15))
        for dtype in ("f32", "f64"):
            size = largest(run, "fourop", dtype)
            if size is not None:
                # throughput ratio ≥ 1/1.1  <=>  time ≤ 1.1× the three-word copy's
                r = ratio("fourop", run.get("fourop", dtype, "porta", size), run.get("fourop", dtype, "add3", size))
                t = None if r is None else 1.0 / r
                rows.append(("four-op time ≤ 1.1× a three-word copy (add3), shown as time ratio",
                             "fourop %s %s" % (dtype, fmt_size("fourop", size)), t, None if t is None else t <= 1.1))
        t = ratio("latency_sum", run.get("latency_sum", "f32", "porta", 1024), run.get("latency_sum", "f32", "cub", 1024))
        rows.append(("sum of 2^10 within 1.2× CUB's time (time ratio)", "latency_sum f32 2^10", t,
                     None if t is None else t <= 1.2))
        # small calls (bench group `small`): absolute times in µs, not ratios
        t = run.get("latency_sum", "f32", "porta", 1024)
        rows.append(("sum of 2^10 with its value ≤ PyTorch's x.sum().item(), %.1f µs (µs)" % TORCH_SMALL_SUM_US,
                     "latency_sum f32 2^10", t, None if t is None else t <= TORCH_SMALL_SUM_US))
        m, k = run.get("latency_map", "f32", "porta", 1), run.get("latency_map", "f32", "kernel", 1)
        d = None if m is None or k is None else m - k
        rows.append(("map of 1 element ≤ an empty kernel launch + 0.5 µs (µs over the launch)", "latency_map f32 1", d,
                     None if d is None else d <= 0.5))
    elif run.binary == "cpu":
        for op, dtype, impl, size, r in kernel_ratios(run, "openmp"):
            need = kernel_target(op)
            rows.append(("user kernel%s ≥ %.2g× OpenMP loop (OpenMP threads: %s)" % (
                " in the guide's form" if need == GUIDE_TARGET else "", need, run.context.get("openmp_threads", "?")),
                "%s %s %s %s" % (op, dtype, impl, fmt_size(op, size)), r, None if r is None else r >= need))
        threads = run.context.get("openmp_threads", "?")
        for op, dtype, impl, size, r in builtin_minima(run, BUILTIN_MAP_OPS, "porta"):
            rows.append(("built-in map ≥ %.1f× OpenMP loop at every size 2^16..2^28 (threads: %s; worst size)" % (
                BUILTIN_TARGET, threads), "%s %s %s" % (op, dtype, fmt_size(op, size)), r, r >= BUILTIN_TARGET))
        at_largest(["fourop"], "openmp", 0.95, "map ≥ 0.95× OpenMP loop")
        for op, dtype, impl, size, r in builtin_minima(run, BABELSTREAM_OPS, None):
            rows.append(("BabelStream: porta's built-in ≥ %.1f× BabelStream's OpenMP at every size 2^16..2^28 "
                         "(threads: %s; worst size)" % (BUILTIN_TARGET, threads),
                         "%s %s %s %s" % (op, dtype, impl, fmt_size(op, size)), r, r >= BUILTIN_TARGET))
        at_largest(REDUCE_OPS, "openmp", 0.9, "reduce ≥ 0.9× OpenMP loop")
        at_largest(["cumsum", "random_uniform", "random_normal"], "copy", 0.6,
                   "scan (read + write) and random (write) ≥ 0.6× the GB/s of a copy (read + write)")
        _, peers = run.impls("matmul")
        blas = next((p for p in peers if p in ("openblas", "blas")), None)
        if blas:
            matmul_at(["matmul", "matmul_ts"], "porta", blas, 0.95, "matmul ≥ 0.95× %s" % blas, 4096)
    return rows


def kernel_ratios(run, peer):
    """(op, dtype, impl, size, porta/peer) for every porta variant of every user-kernel op at its
    largest size."""
    out = []
    for op in run.ops():
        if not kernel_base(op):
            continue
        porta_impls, _ = run.impls(op)
        for dtype in run.dtypes(op):
            size = largest(run, op, dtype)
            for impl in porta_impls:
                out.append((op, dtype, impl, size, ratio(op, run.get(op, dtype, impl, size),
                                                         run.get(op, dtype, peer, size))))
    return out


def builtin_impl(run, op, dtype):
    """The built-in case of a BabelStream op (porta_copy, porta_lazy, ...): its porta impl that is not
    the user kernel."""
    porta_impls, _ = run.impls(op, dtype)
    return next((i for i in porta_impls if i != BABELSTREAM_KERNEL_IMPL), None)


def builtin_minima(run, ops, impl):
    """(op, dtype, impl, size, ratio) with the lowest porta/openmp ratio over the sizes in BUILTIN_SIZES,
    for each op and dtype measured there; impl None: the BabelStream built-in of the op."""
    out = []
    for op in ops:
        for dtype in run.dtypes(op):
            im = impl or builtin_impl(run, op, dtype)
            worst = None
            for size in run.sizes(op, dtype):
                if not BUILTIN_SIZES[0] <= size <= BUILTIN_SIZES[1]:
                    continue
                r = ratio(op, run.get(op, dtype, im, size), run.get(op, dtype, "openmp", size))
                if r is not None and (worst is None or r < worst[1]):
                    worst = (size, r)
            if worst:
                out.append((op, dtype, im, worst[0], worst[1]))
    return out


def babelstream_thread_table(runs):
    """porta / BabelStream's OpenMP side by side for CPU runs at different thread counts (bench.sh
    --threads 1,16): the worst ratio over 2^16..2^28 and the one at BabelStream's default 2^25, for the
    built-in and the user-kernel form of every kernel."""
    cpu = [r for r in runs if r.binary == "cpu" and any(op in BABELSTREAM_OPS for op in r.ops())]
    if not cpu:
        return []
    cols = []
    for r in cpu:
        t = r.context.get("openmp_threads", r.label)
        cols += ["threads %s: worst (size)" % t, "threads %s: 2^25" % t]
    lines = ["## BabelStream on the CPU: porta / BabelStream's OpenMP version", "",
             "Target: porta's built-in form ≥ %.1f at every size 2^16..2^28 and every thread count. Each pair "
             "of columns is one run of porta_cpu_bench." % BUILTIN_TARGET, "",
             "| kernel | dtype | porta form | " + " | ".join(cols) + " |", "|" + "---|" * (3 + len(cols))]
    keys = []
    for r in cpu:
        for op in BABELSTREAM_OPS:
            for dtype in r.dtypes(op):
                for impl in (builtin_impl(r, op, dtype), BABELSTREAM_KERNEL_IMPL):
                    if impl and (op, dtype, impl) not in keys:
                        keys.append((op, dtype, impl))
    for op, dtype, impl in keys:
        cells = []
        for r in cpu:
            worst = [m for m in builtin_minima(r, [op], impl) if m[1] == dtype]
            if worst:
                w = worst[0]
                text = "%.2f (%s)" % (w[4], fmt_size(op, w[3]))
                cells.append("**%s**" % text if impl != BABELSTREAM_KERNEL_IMPL and w[4] < BUILTIN_TARGET else text)
            else:
                cells.append("—")
            cells.append(fmt_ratio(ratio(op, r.get(op, dtype, impl, 1 << 25), r.get(op, dtype, "openmp", 1 << 25))))
        lines.append("| %s | %s | %s | %s |" % (op[len("babelstream_"):], dtype, impl, " | ".join(cells)))
    lines += ["", "Bold: a built-in below the target. porta_kernel: the same kernel as porta::parallel_for / "
              "transform_reduce over Views (no target here; user kernels have theirs above).", ""]
    return lines


def thread_table(runs):
    """User kernels / OpenMP loop side by side for CPU runs at different thread counts
    (bench.sh --threads 1,16), or nothing when there are fewer than two such runs."""
    cpu = [r for r in runs if r.binary == "cpu" and any(kernel_base(op) for op in r.ops())]
    if len(cpu) < 2:
        return []
    cols = ["threads: %s" % r.context.get("openmp_threads", r.label) for r in cpu]
    lines = ["## User kernels on the CPU by thread count: porta / OpenMP loop", "",
             "Targets: ≥ %.2g for the guide_ cases, ≥ %.1f for the others, at every thread count. Each column "
             "is one run of porta_cpu_bench." % (GUIDE_TARGET, KERNEL_TARGET), "",
             "| op | dtype | size | impl | " + " | ".join(cols) + " |", "|" + "---|" * (4 + len(cols))]
    keys = []
    for r in cpu:
        for op, dtype, impl, size, _ in kernel_ratios(r, "openmp"):
            if (op, dtype, impl, size) not in keys:
                keys.append((op, dtype, impl, size))
    for op, dtype, impl, size in keys:
        cells = []
        for r in cpu:
            v = ratio(op, r.get(op, dtype, impl, size), r.get(op, dtype, "openmp", size))
            cells.append("—" if v is None else ("%.2f" % v if v >= kernel_target(op) else "**%.2f**" % v))
        lines.append("| %s | %s | %s | %s | %s |" % (op, dtype, fmt_size(op, size), impl, " | ".join(cells)))
    lines += ["", "Bold: below the target.", ""]
    return lines


# ---- SVG ---------------------------------------------------------------------------------------------

PALETTE = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#aec7e8"]
PORTA_COLORS = {"porta": "#d62728", "porta_own": "#ff7f0e"}


def nice_log_ticks(lo, hi):
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if b == a:
        b = a + 1
    return a, b


def svg_plot(run, path):
    # A user-kernel case at one size is a single point, and the FFT cases are one size each or lengths of
    # different kinds (2^20, 10^6, a prime): their tables say more than a panel would.
    ops = [op for op in run.ops() if kind_of(op) != "time" and op not in FFT_OPS and not (
        kernel_base(op) and len({s for o, _, _, s in run.values if o == op}) < 2)]
    if not ops:
        return False
    impls = []
    for op in ops:
        p, q = run.impls(op)
        for i in p + q:
            if i not in impls:
                impls.append(i)
    colors = {}
    k = 0
    for i in impls:
        if i in PORTA_COLORS:
            colors[i] = PORTA_COLORS[i]
        else:
            colors[i] = PALETTE[k % len(PALETTE)]
            k += 1

    pw, ph = 380, 270  # one panel
    ml, mr, mt, mb = 58, 12, 30, 40
    cols = 3
    rows = (len(ops) + cols - 1) // cols
    legend_h = 26 + 18 * ((len(impls) + 5) // 6)
    title_h = 34
    width = cols * pw
    height = title_h + legend_h + rows * ph
    out = []
    out.append('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
               'font-family="sans-serif" font-size="11">' % (width, height, width, height))
    out.append('<rect width="100%" height="100%" fill="white"/>')
    device = run.context.get("cuda_device") or run.context.get("porta_device") or ""
    if len(device) > 70:
        device = device[:67] + "..."
    title = "porta %s benchmarks — %s — %s" % (run.label, device, run.context.get("date", ""))
    out.append('<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>' % (10, html.escape(title)))
    # legend
    y0 = title_h + 8
    for idx, impl in enumerate(impls):
        x = 10 + (idx % 6) * 185
        y = y0 + 18 * (idx // 6)
        w = 3 if impl.startswith("porta") else 1.8
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="%s"/>' % (x, y, x + 26, y,
                                                                                             colors[impl], w))
        out.append('<text x="%d" y="%d">%s</text>' % (x + 32, y + 4, html.escape(impl)))
    out.append('<text x="%d" y="%d" fill="#555">solid: f32, dashed: f64</text>' % (
        10, y0 + 18 * ((len(impls) + 5) // 6)))

    for n, op in enumerate(ops):
        px = (n % cols) * pw
        py = title_h + legend_h + (n // cols) * ph
        x0, x1 = px + ml, px + pw - mr
        y_top, y_bot = py + mt, py + ph - mb
        pts = [(s, v) for (o, d, i, s), v in run.values.items() if o == op and v and v > 0]
        if not pts:
            continue
        xs = [math.log2(s) for s, _ in pts]
        xlo, xhi = min(xs), max(xs)
        if xhi == xlo:
            xlo, xhi = xlo - 1, xhi + 1
        lo, hi = nice_log_ticks(min(v for _, v in pts), max(v for _, v in pts))

        def sx(lx):
            return x0 + (lx - xlo) / (xhi - xlo) * (x1 - x0)

        def sy(v):
            return y_bot - (math.log10(v) - lo) / (hi - lo) * (y_bot - y_top)

        out.append('<text x="%d" y="%d" font-size="12" font-weight="bold">%s</text>' % (
            px + ml, py + 18, html.escape(title_of(op))))
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>' % (
            x0, y_top, x1 - x0, y_bot - y_top))
        for e in range(lo, hi + 1):
            y = sy(10 ** e)
            out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e5e5e5"/>' % (x0, y, x1, y))
            label = ("%g" % (10 ** e)) if -3 <= e <= 5 else "1e%d" % e
            out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (x0 - 4, y + 4, label))
        step = 2 if xhi - xlo > 10 else 1
        t = math.ceil(xlo)
        while t <= xhi:
            x = sx(t)
            out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e5e5e5"/>' % (x, y_top, x, y_bot))
            out.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (x, y_bot + 14, t))
            t += step
        xlabel = "log2 n (matrix side)" if op == "matmul" or op == "matmul_tf32" else (
            "log2 rows" if op == "matmul_ts" else "log2 elements")
        out.append('<text x="%d" y="%d" text-anchor="middle" fill="#444">%s</text>' % ((x0 + x1) // 2, y_bot + 30,
                                                                                     xlabel))
        out.append('<text x="%d" y="%d" fill="#444" transform="rotate(-90 %d %d)" text-anchor="middle">%s</text>' % (
            px + 14, (y_top + y_bot) // 2, px + 14, (y_top + y_bot) // 2, unit_of(op)))
        porta_impls, peers = run.impls(op)
        for impl in peers + porta_impls:  # porta last: drawn on top
            for dtype in run.dtypes(op):
                line = [(s, run.get(op, dtype, impl, s)) for s in run.sizes(op, dtype)]
                line = [(s, v) for s, v in line if v]
                if not line:
                    continue
                coords = " ".join("%.1f,%.1f" % (sx(math.log2(s)), sy(v)) for s, v in line)
                w = 2.6 if impl.startswith("porta") else 1.6
                dash = ' stroke-dasharray="5,3"' if dtype == "f64" else ""
                out.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="%s"%s/>' % (
                    coords, colors[impl], w, dash))
                for s, v in line:
                    out.append('<circle cx="%.1f" cy="%.1f" r="2.2" fill="%s"><title>%s %s %s %s: %s %s</title>'
                               '</circle>' % (sx(math.log2(s)), sy(v), colors[impl], op, dtype, impl,
                                              fmt_size(op, s), fmt_value(v), unit_of(op)))
    out.append("</svg>")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    return True


# ---- markdown ----------------------------------------------------------------------------------------


def machine_lines(infos):
    lines = []
    for name, path in infos:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read().strip()
        except OSError:
            continue
        if not text:
            continue
        lines.append("<details><summary>%s</summary>" % html.escape(name))
        lines.append("")
        lines.append("```")
        lines.append(text if len(text) < 20000 else text[:20000] + "\n...")
        lines.append("```")
        lines.append("")
        lines.append("</details>")
        lines.append("")
    return lines


def report(runs, infos, svgs):
    lines = ["# porta benchmark results", ""]
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines.append("Generated %s by bench/report.py from %s." % (
        now, ", ".join(os.path.basename(r.path) for r in runs)))
    lines.append("")
    for run in runs:
        c = run.context
        lines.append("## %s binary" % run.label)
        lines.append("")
        facts = [
            ("date of the run", c.get("date")),
            ("host", c.get("host_name")),
            ("porta device", c.get("porta_device")),
            ("CUDA device", c.get("cuda_device")),
            ("CUDA versions", c.get("cuda_versions")),
            ("CPUs", "%s x %s MHz" % (c.get("num_cpus"), c.get("mhz_per_cpu")) if c.get("num_cpus") else None),
            ("OpenMP threads", c.get("openmp_threads")),
            ("porta build", c.get("porta_build")),
            ("peers", c.get("porta_peers")),
            ("Thrust", c.get("thrust_version")),
            ("Kokkos", c.get("kokkos") or c.get("kokkos-serial")),
            ("sizes", c.get("porta_sizes")),
            ("user-kernel sizes", c.get("porta_kernel_sizes")),
            ("FFT sizes", c.get("porta_fft_sizes")),
            ("FFTW", c.get("fftw")),
            ("cuFFT", c.get("cufft_version")),
            ("Google Benchmark build", c.get("library_build_type")),
        ]
        for k, v in facts:
            if v:
                lines.append("- %s: %s" % (k, v))
        if c.get("library_build_type") == "debug":
            lines.append("- note: Google Benchmark itself is a debug build (its timings are still valid; its own "
                         "overhead per iteration is higher)")
        lines.append("")
        if run.label in svgs:
            lines.append("![%s plot](%s)" % (run.label, svgs[run.label]))
            lines.append("")
        rows = target_rows(run)
        if rows:
            lines.append("### Targets (bench/README.md)")
            lines.append("")
            lines.append("| target | case | measured | met |")
            lines.append("|---|---|---|---|")
            for label, where, value, ok in rows:
                met = "not measured" if ok is None else ("yes" if ok else "**no**")
                lines.append("| %s | %s | %s | %s |" % (label, where, fmt_ratio(value), met))
            lines.append("")
        kernel_ops = [op for op in run.ops() if kernel_base(op)]
        groups = [("Maps", MAP_OPS), ("Reductions", REDUCE_OPS), ("Matrix products", MATMUL_OPS),
                  ("BabelStream (porta's built-ins, porta user kernels, BabelStream's OpenMP version)",
                   BABELSTREAM_OPS),
                  ("User kernels (porta beside the loop or kernel a user would write)", kernel_ops),
                  ("Dense solvers", LINALG_OPS),
                  ("Fourier transforms (porta::fft beside FFTW or cuFFT called directly)", FFT_OPS)]
        latency = [op for op in run.ops() if kind_of(op) == "time" and op not in LINALG_OPS]
        groups.append(("Latency (host-observed time per call)", latency))
        # Every other group (sorts, scans, random numbers, sparse products, ...) under its op's name.
        shown = {op for _, ops in groups for op in ops}
        groups.append(("Other cases", [op for op in run.ops() if op not in shown]))
        for title, ops in groups:
            present = [op for op in run.ops() if op in ops]
            if not present:
                continue
            lines.append("### %s" % title)
            lines.append("")
            for op in present:
                lines += table(run, op)
        if run.errors:
            lines.append("### Cases that did not run")
            lines.append("")
            for name, msg in run.errors:
                lines.append("- `%s`: %s" % (name, msg.replace("\n", " ")))
            lines.append("")
    lines += thread_table(runs)
    lines += babelstream_thread_table(runs)
    machine = machine_lines(infos)
    if machine:
        lines.append("## Machine")
        lines.append("")
        lines += machine
    return "\n".join(lines) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+", help="--benchmark_out files of porta_cpu_bench / porta_cuda_bench")
    ap.add_argument("--md", help="markdown output (default: stdout)")
    ap.add_argument("--svg-dir", help="write bench-<binary>.svg here (default: beside --md)")
    ap.add_argument("--info", action="append", default=[], metavar="NAME=FILE",
                    help="a text file about the machine (lscpu, nvidia-smi, porta-info --json) to include")
    ap.add_argument("--strict", action="store_true",
                    help="exit 1 when a case failed (cases skipped for want of a GPU excepted)")
    args = ap.parse_args(argv)

    runs = []
    for path in args.json:
        try:
            with open(path, encoding="utf-8") as f:
                runs.append(Run(path, json.load(f)))
        except (OSError, ValueError) as e:
            print("report.py: cannot read %s: %s" % (path, e), file=sys.stderr)
            return 2
    infos = []
    for item in args.info:
        name, _, path = item.partition("=")
        infos.append((name, path) if path else (os.path.basename(name), name))

    svg_dir = args.svg_dir or (os.path.dirname(os.path.abspath(args.md)) if args.md else None)
    svgs = {}
    if svg_dir:
        os.makedirs(svg_dir, exist_ok=True)
        for run in runs:
            path = os.path.join(svg_dir, "bench-%s.svg" % run.label)
            if svg_plot(run, path):
                if args.md:
                    svgs[run.label] = os.path.relpath(path, os.path.dirname(os.path.abspath(args.md)))
                else:
                    svgs[run.label] = path
    text = report(runs, infos, svgs)
    if args.md:
        with open(args.md, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)

    failed = [(r.binary, n, m) for r in runs for n, m in r.errors if n != "cuda_unavailable"]
    for binary, name, msg in failed:
        print("report.py: %s: %s did not run: %s" % (binary, name, msg), file=sys.stderr)
    if args.strict and failed:
        return 1
    if not any(r.values for r in runs) and not any(n == "cuda_unavailable" for r in runs for n, _ in r.errors):
        print("report.py: no results in %s" % ", ".join(args.json), file=sys.stderr)
        return 1 if args.strict else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
