#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""PyTorch's side of the small calls of bench group `small` (bench/cuda_small_calls.cuh):

    x.sum().item()        on 2^10 float32 elements (the value back on the host)
    out = x + 1; sync     on one float32 element (a map of one element, waited for)

Host wall-clock time per call after a warm-up, the median of --reps batches of --calls calls, as
porta's latency cases time theirs. Exits 0 with a message when PyTorch or a CUDA device is missing.

    python3 bench/peers/small_calls_torch.py [--reps 21] [--calls 2000]
"""
import argparse
import statistics
import sys
import time


def per_call_us(fn, calls, reps):
    for _ in range(calls // 10 + 1):
        fn()
    batches = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        batches.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(batches), min(batches)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--calls", type=int, default=2000)
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("small_calls_torch: PyTorch is not installed; nothing to time")
        return 0
    if not torch.cuda.is_available():
        print("small_calls_torch: PyTorch sees no CUDA device; nothing to time")
        return 0
    dev = torch.device("cuda:0")
    x = torch.rand(1 << 10, device=dev, dtype=torch.float32)
    one = torch.rand(1, device=dev, dtype=torch.float32)
    out = torch.empty_like(one)
    stream = torch.cuda.current_stream(dev)

    def map_one():
        torch.add(one, 1.0, out=out)
        stream.synchronize()

    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(dev)}")
    for name, fn in (("latency_sum f32 2^10 x.sum().item()", lambda: x.sum().item()),
                     ("latency_map f32 1 torch.add(out=) + sync", map_one)):
        med, best = per_call_us(fn, args.calls, args.reps)
        print(f"{name:44s} median {med:7.2f} us   best {best:7.2f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
