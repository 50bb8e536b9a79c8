#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""porta beside PyTorch on 16-bit CUDA arrays, in one process: the same operations on the same
memory (porta's arrays are the tensors, imported through DLPack without a copy), porta's call and
PyTorch's alternating round by round, each round a batch of calls timed on the host up to a device
synchronize; the median round per call. GB/s as STREAM counts (copy, scale: 2 words per element;
add, axpy: 3; sum, max: 1; dot: 2), TFLOP/s for matmul (2 n^3). Both libraries' reductions of
16-bit tensors accumulate in float and return the value to Python.

    PYTHONPATH=build/gpu/python python3 bench/peers/half_torch.py [--sizes 16777216,268435456]
                                                                  [--matmul 4096] [--rounds 7]
                                                                  [--dtypes f16,bf16]

porta_cuda_bench (groups half, matmul_half) times the same porta calls beside CUB, Thrust, a hand
kernel and cuBLAS in C++.
"""
import argparse
import statistics
import sys
import time

WORDS = {"copy": 2, "scale": 2, "add": 3, "axpy": 3, "sum": 1, "dot": 2, "max": 1}


def per_call(sync, fn, calls, rounds):
    fn()
    sync()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        times.append((time.perf_counter() - t0) / calls)
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="16777216,67108864,268435456")
    ap.add_argument("--matmul", default="4096")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--dtypes", default="f16,bf16", help="in this order")
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("half_torch: PyTorch is not installed; nothing to compare", file=sys.stderr)
        return 0
    import porta

    if not torch.cuda.is_available():
        print("half_torch: no CUDA device for PyTorch", file=sys.stderr)
        return 0
    dev = porta.Device("cuda:0")
    p_sync = lambda: porta.synchronize(dev)  # noqa: E731
    t_sync = torch.cuda.synchronize
    print(f"porta {porta.__version__ if hasattr(porta, '__version__') else ''} beside PyTorch {torch.__version__}"
          f" on {torch.cuda.get_device_name()}")
    print("| case | dtype | n | porta | PyTorch | porta / PyTorch |")
    print("|---|---|---|---|---|---|")
    types = {"f16": torch.float16, "bf16": torch.bfloat16}
    for name, dt in ((d, types[d]) for d in args.dtypes.split(",") if d):
        for n in [int(s) for s in args.sizes.split(",") if s]:
            tx = torch.rand(n, device="cuda", dtype=dt) * 2 - 1
            ty = torch.rand(n, device="cuda", dtype=dt) * 2 - 1
            to = torch.empty_like(tx)
            t_sync()
            px, py_, po = (porta.from_dlpack(t) for t in (tx, ty, to))
            cases = {
                "copy": (lambda: porta.copy(px, po), lambda: to.copy_(tx)),
                "scale": (lambda: porta.mul(px, 0.5, out=po), lambda: torch.mul(tx, 0.5, out=to)),
                "add": (lambda: porta.add(px, py_, out=po), lambda: torch.add(tx, ty, out=to)),
                "axpy": (lambda: porta.axpy(0.5, px, py_), lambda: ty.add_(tx, alpha=0.5)),
                "sum": (lambda: porta.sum(px), lambda: tx.sum().item()),
                "dot": (lambda: porta.dot(px, py_), lambda: torch.dot(tx, ty).item()),
                "max": (lambda: porta.max(px), lambda: tx.max().item()),
            }
            calls = max(3, int(2e-2 / (n * 2 * 3 / 4e12)))
            for op, (pf, tf) in cases.items():
                pt, tt = [], []
                for _ in range(args.rounds):  # alternate, so both see the same clocks and heat
                    pt += per_call(p_sync, pf, calls, 1)
                    tt += per_call(t_sync, tf, calls, 1)
                bytes_ = WORDS[op] * n * 2
                gp, gt = bytes_ / statistics.median(pt) * 1e-9, bytes_ / statistics.median(tt) * 1e-9
                print(f"| {op} | {name} | {n} | {gp:.0f} GB/s | {gt:.0f} GB/s | {gp / gt:.2f}x |")
            del px, py_, po, tx, ty, to
            torch.cuda.empty_cache()
        for n in [int(s) for s in args.matmul.split(",") if s]:
            ta = torch.rand(n, n, device="cuda", dtype=dt) * 2 - 1
            tb = torch.rand(n, n, device="cuda", dtype=dt) * 2 - 1
            tc = torch.empty_like(ta)
            t_sync()
            pa, pb = porta.from_dlpack(ta), porta.from_dlpack(tb)
            pt, tt = [], []
            for _ in range(args.rounds):
                pt += per_call(p_sync, lambda: porta.matmul(pa, pb), 10, 1)
                tt += per_call(t_sync, lambda: torch.matmul(ta, tb, out=tc), 10, 1)
            fp, ft = 2.0 * n**3 / statistics.median(pt) * 1e-12, 2.0 * n**3 / statistics.median(tt) * 1e-12
            print(f"| matmul | {name} | {n} | {fp:.0f} TFLOP/s | {ft:.0f} TFLOP/s | {fp / ft:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
