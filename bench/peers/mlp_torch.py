#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""PyTorch twin of examples/mlp: the same network, data, loss and optimizer, timed the same way.

    python3 bench/peers/mlp_torch.py             # batch 4096 on cuda, 50 timed steps
    python3 bench/peers/mlp_torch.py --batch 256 --steps 100 --device cpu

Prints the median wall time of one training step (forward, backward, Adam), each step waited for
with torch.cuda.synchronize(), after 5 warm-up steps, as `./mlp --bench` does:

    torch_ms_per_step=<x>

Like porta's default (MatmulOptions precision=highest), fp32 matrix products do not use TF32
unless --tf32 is given.
"""
import argparse
import statistics
import time

import torch
import torch.nn.functional as F

IN, HIDDEN, CLASSES = 784, 512, 10
NOISE = 4.0  # per-coordinate noise around the class centres (examples/mlp/main.cpp: kNoise)


def make_batches(count, batch, device, generator):
    """`count` batches: each sample is its class's random centre plus Gaussian noise."""
    centres = torch.randn(CLASSES, IN, generator=generator)
    batches = []
    for _ in range(count):
        labels = torch.randint(0, CLASSES, (batch,), generator=generator)
        x = centres[labels] + NOISE * torch.randn(batch, IN, generator=generator)
        batches.append((x.to(device), labels.to(device)))
    return batches


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=50, help="timed steps")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--tf32", action="store_true", help="allow TF32 tensor cores in fp32 matmuls")
    parser.add_argument(
        "--adam",
        choices=["default", "foreach", "fused"],
        default="default",
        help="torch.optim.Adam implementation (porta's example fuses each tensor's update into one kernel)",
    )
    args = parser.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    torch.backends.cudnn.allow_tf32 = args.tf32
    device = torch.device(args.device)
    generator = torch.Generator().manual_seed(0)
    torch.manual_seed(0)

    model = torch.nn.Sequential(
        torch.nn.Linear(IN, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, CLASSES)
    ).to(device)
    impl = {"default": {}, "foreach": {"foreach": True}, "fused": {"fused": True}}[args.adam]
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, **impl)
    data = make_batches(4, args.batch, device, generator)

    def train_step(x, labels):
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), labels)  # mean over the batch, as in mlp.hpp
        loss.backward()
        optimizer.step()
        return loss

    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(f"torch {torch.__version__} on {device} ({name})")
    print(
        f"{IN} -> {HIDDEN} -> ReLU -> {CLASSES}, batch {args.batch}, {args.steps} steps, "
        f"Adam ({args.adam}) lr {args.lr}, TF32 {'on' if args.tf32 else 'off'}"
    )

    first = train_step(*data[0]).item()
    for i in range(1, 5):  # warm-up: cuBLAS handles, caching allocator, kernel selection
        train_step(*data[i % len(data)])
    sync(device)

    times_ms = []
    for s in range(args.steps):
        x, labels = data[s % len(data)]
        t0 = time.perf_counter()
        train_step(x, labels)
        sync(device)
        times_ms.append((time.perf_counter() - t0) * 1e3)

    ms = statistics.median(times_ms)
    gflop = 2.0 * args.batch * (2 * IN * HIDDEN + 3 * HIDDEN * CLASSES) * 1e-9  # x needs no gradient
    print(f"median {ms:.3f} ms per training step ({gflop / ms * 1e3:.0f} GFLOP/s in the matrix products)")
    with torch.no_grad():
        x, labels = data[0]
        last = F.cross_entropy(model(x), labels).item()
    print(f"loss {first:.4f} -> {last:.4f} after {args.steps + 5} steps")
    print(f"torch_ms_per_step={ms:.4f}")


if __name__ == "__main__":
    main()
