#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Timing of porta from Python (not a test: run by hand, on the GPU machine for the CUDA part).

    PYTHONPATH=build/ci/python python3 tests/python/bench_roundtrip.py            # both parts
    PYTHONPATH=build/ci/python python3 tests/python/bench_roundtrip.py --cpu-only

1. Python call overhead on the CPU backend: per call of a built-in on a 1-element array, beside a
   do-nothing pybind11-free baseline (target: under 3 us per call).
2. The round trip PyTorch tensor -> porta.from_dlpack -> porta.sum -> back, on 2^28 float32 on
   CUDA: porta.sum of the imported tensor against porta.sum of a porta-owned array (what C++
   porta::sum costs plus one Python call) and torch.sum; and the proof that there is no copy
   (same address, no memory allocated by porta or torch). Target: within 1.05x of porta's own.
   The C++ figure for comparison: scripts/bench.sh --build-dir build/ci -- --benchmark_filter='sum/f32'
"""
import argparse
import statistics
import sys
import time

import porta


def per_call_us(f, reps):
    for _ in range(min(reps, 1000)):
        f()
    best = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(reps):
            f()
        best.append((time.perf_counter() - t) / reps * 1e6)
    return min(best)


def cpu_overhead(reps):
    cpu = porta.Device("cpu")
    x = porta.ones((1,), device=cpu)
    y = porta.ones((1,), device=cpu)
    out = porta.empty((1,), device=cpu)
    m = porta.ones((1, 1), device=cpu)
    rows = [
        ("python baseline: a no-op function call", lambda: None),
        ("porta.sum(x)", lambda: porta.sum(x)),
        ("x.sum()", lambda: x.sum()),
        ("porta.add(x, y, out=out)", lambda: porta.add(x, y, out=out)),
        ("porta.add(x, y) (allocates)", lambda: porta.add(x, y)),
        ("x + y (operator, allocates)", lambda: x + y),
        ("porta.axpy(2.0, x, y)", lambda: porta.axpy(2.0, x, y)),
        ("porta.sum(x, 0) (axis, allocates)", lambda: porta.sum(x, 0)),
        ("porta.matmul(m, m) 1x1", lambda: porta.matmul(m, m)),
    ]
    print("Python call overhead, CPU backend, 1-element arrays (best of 5 x %d calls)" % reps)
    for name, f in rows:
        print("  %-40s %7.2f us" % (name, per_call_us(f, reps)))


def median_ms(f, reps):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def cuda_round_trip(log2n, reps):
    try:
        import torch
    except ImportError:
        print("CUDA round trip: skipped (no PyTorch)")
        return
    if not torch.cuda.is_available() or not porta.is_available("cuda"):
        print("CUDA round trip: skipped (torch CUDA: %s; porta: %s)"
              % (torch.cuda.is_available(), porta.unavailable_reason("cuda") or "available"))
        return
    n = 1 << log2n
    dev = porta.Device("cuda:0")
    print("CUDA round trip on %s, %d float32 (2^%d), median of %d" % (porta.describe(dev), n, log2n, reps))
    t = torch.rand(n, device="cuda", dtype=torch.float32)
    own = porta.from_dlpack(t, copy=True)  # a porta-owned array with the same values
    torch.cuda.synchronize()
    porta.synchronize(dev)
    alloc_torch = torch.cuda.memory_allocated()
    alloc_porta = porta.memory_stats(dev)["bytes_in_use"]

    imported = porta.from_dlpack(t)
    assert imported.data_ptr == t.data_ptr(), "from_dlpack copied"
    back = torch.from_dlpack(imported)
    assert back.data_ptr() == t.data_ptr(), "the way back copied"
    del back

    for _ in range(5):  # warm-up: plugin, pools, clocks
        porta.sum(own), porta.sum(porta.from_dlpack(t)), t.sum().item()
    s_own = porta.sum(own)
    s_rt = porta.sum(porta.from_dlpack(t))
    assert s_own == s_rt, "the same bits either way (%r vs %r)" % (s_own, s_rt)

    ms_own = median_ms(lambda: porta.sum(own), reps)
    ms_imported = median_ms(lambda: porta.sum(imported), reps)
    ms_round = median_ms(lambda: porta.sum(porta.from_dlpack(t)), reps)
    ms_torch = median_ms(lambda: t.sum().item(), reps)
    gbs = lambda ms: n * 4 / ms / 1e6  # noqa: E731
    print("  porta.sum(porta-owned array)            %8.3f ms  %7.1f GB/s  (C++ porta::sum + one Python call)"
          % (ms_own, gbs(ms_own)))
    print("  porta.sum(from_dlpack(t)) once imported %8.3f ms  %7.1f GB/s  ratio %.3f"
          % (ms_imported, gbs(ms_imported), ms_imported / ms_own))
    print("  porta.sum(porta.from_dlpack(t)) per call%8.3f ms  %7.1f GB/s  ratio %.3f  (target <= 1.05)"
          % (ms_round, gbs(ms_round), ms_round / ms_own))
    print("  torch: t.sum().item()                   %8.3f ms  %7.1f GB/s" % (ms_torch, gbs(ms_torch)))
    del imported
    torch.cuda.synchronize()
    porta.synchronize(dev)
    extra_torch = torch.cuda.memory_allocated() - alloc_torch
    extra_porta = porta.memory_stats(dev)["bytes_in_use"] - alloc_porta
    print("  no copy: same address both ways; memory allocated during the runs: torch %+d B, porta %+d B"
          % (extra_torch, extra_porta))
    ok = ms_round / ms_own <= 1.05 and extra_torch == 0 and extra_porta == 0
    print("  round trip target (<= 1.05x, no copy): %s" % ("met" if ok else "MISSED"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu-only", action="store_true")
    ap.add_argument("--log2n", type=int, default=28)
    ap.add_argument("--reps", type=int, default=50, help="timed repetitions of the CUDA sums")
    ap.add_argument("--calls", type=int, default=20000, help="calls per overhead sample")
    a = ap.parse_args()
    print("porta", porta.__version__, "from", porta.__file__, "| Python", sys.version.split()[0])
    cpu_overhead(a.calls)
    if not a.cpu_only:
        cuda_round_trip(a.log2n, a.reps)


if __name__ == "__main__":
    main()
