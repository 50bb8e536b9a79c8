#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Python peers of porta's fused expressions (PyTorch, CuPy), timed on the GPU.

    python3 bench/peers/fused_peers.py                  # 2^20, 2^22, ..., 2^28 float32 on cuda:0
    python3 bench/peers/fused_peers.py --log2 20,24 --reps 50 --json out/fused-peers.json
    python3 bench/peers/fused_peers.py --torch-compile  # also torch.compile (slow first calls)

The two formulas of porta's `fused` benchmark group (bench/fused_bench.hpp), on float32:

    chain          sin(x) * cos(y) + x * y                          x, y in [-1, 1)     3 words/element
    black-scholes  call prices from spot, strike, years (r = 0.02,  spot, strike in     4 words/element
                   v = 0.3; the normal CDF as a tanh approximation)  [10, 100), years
                                                                     in [0.25, 2)

each through PyTorch eager, CuPy eager, cupy.fuse and a cupy.ElementwiseKernel (and torch.compile
with --torch-compile). GB/s counts the bytes porta's benchmark counts for the same case (inputs
read once and the output written once), so the numbers sit beside porta's fused_chain / fused_bs
rows. Each call is timed by CUDA events around it on the library's current stream, after warm-up
calls (the first of which compiles the fused and ElementwiseKernel peers); the table shows the
median of --reps calls. A peer's result is checked against the same library's float64 evaluation
of the formula on the first elements; a wrong result is reported and makes the exit status 1.

PyTorch and CuPy are each optional: a missing one (or one that finds no GPU) is reported and its
peers skipped; with neither, the script says so and exits 0.
"""
import argparse
import json
import platform
import statistics
import sys

RATE, VOL = 0.02, 0.3  # bench/fused_bench.hpp: kBsRate, kBsVol
CDF_SCALE, CDF_CUBIC = 0.7978845608, 0.044715  # bench/fused_bench.hpp: bs_cdf
WORDS = {"chain": 3, "black-scholes": 4}  # bench/fused_bench.hpp: the bytes of fused_chain, fused_bs
CHECK_N = 1 << 16  # elements checked against float64
# Largest |float32 result - float64 result| accepted: chain results are below 2 in size; prices
# below 100, where a float ulp is 8e-6 and d1's rounding moves a price by a few of them.
TOLERANCE = {"chain": 1e-5, "black-scholes": 2e-3}


# ---- the formulas, written once for any module with sin/cos/log/exp/sqrt/tanh (torch, cupy) -----
def chain(m, x, y):
    return m.sin(x) * m.cos(y) + x * y


def black_scholes(m, s, k, t):
    def cdf(d):
        return 0.5 * (1.0 + m.tanh(CDF_SCALE * (d + CDF_CUBIC * d * d * d)))

    d1 = (m.log(s / k) + (RATE + 0.5 * VOL * VOL) * t) / (VOL * m.sqrt(t))
    d2 = d1 - VOL * m.sqrt(t)
    return s * cdf(d1) - k * m.exp(-RATE * t) * cdf(d2)


FORMULAS = {"chain": chain, "black-scholes": black_scholes}


def bound(m):
    """The formulas on module m as functions of the arrays alone (a fixed arity: cupy.fuse traces it)."""
    return {"chain": lambda x, y: chain(m, x, y), "black-scholes": lambda s, k, t: black_scholes(m, s, k, t)}

# The same formulas as CUDA C for cupy.ElementwiseKernel (float constants: float32 throughout).
ELEMENTWISE = {
    "chain": ("float32 x, float32 y", "float32 z", "z = sinf(x) * cosf(y) + x * y", ""),
    "black-scholes": (
        "float32 s, float32 k, float32 t",
        "float32 p",
        f"""
        const float r = {RATE}f, v = {VOL}f;
        const float d1 = (logf(s / k) + (r + 0.5f * v * v) * t) / (v * sqrtf(t));
        const float d2 = d1 - v * sqrtf(t);
        p = s * porta_cdf(d1) - k * expf(-r * t) * porta_cdf(d2);
        """,
        f"""
        __device__ float porta_cdf(float d) {{
          return 0.5f * (1.0f + tanhf({CDF_SCALE}f * (d + {CDF_CUBIC}f * d * d * d)));
        }}
        """,
    ),
}


# ---- timing ----------------------------------------------------------------------------------------
def time_calls(lib, fn, warmup, reps):
    """Milliseconds of each of `reps` calls of fn(), by events around each, after `warmup` calls."""
    for _ in range(warmup):
        fn()
    lib.sync()
    times = []
    for _ in range(reps):
        start, end = lib.event(), lib.event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(lib.elapsed_ms(start, end))
    return times


# ---- the libraries: each gives its module (m), inputs, events, and its peers (name -> op -> callable)
def load_torch():
    try:
        import torch
    except ImportError as e:
        return None, f"PyTorch is not installed ({e}): its peers are skipped"
    if not torch.cuda.is_available():
        return None, f"PyTorch {torch.__version__} finds no CUDA device: its peers are skipped"
    return torch, None


def load_cupy():
    try:
        import cupy
    except ImportError as e:
        return None, f"CuPy is not installed ({e}): its peers are skipped"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None, f"CuPy {cupy.__version__} finds no CUDA device: its peers are skipped"
    except Exception as e:  # cupy raises its own CUDARuntimeError without a driver
        return None, f"CuPy {cupy.__version__} cannot use CUDA ({e}): its peers are skipped"
    return cupy, None


class Torch:
    name = "torch"

    def __init__(self, torch):
        self.m = self.torch = torch
        self.gen = torch.Generator(device="cuda").manual_seed(16)
        self.version = torch.__version__
        self.device_name = torch.cuda.get_device_name(0)

    def uniform(self, n, lo, hi):
        u = self.torch.rand(n, device="cuda", dtype=self.torch.float32, generator=self.gen)
        return u * (hi - lo) + lo

    def event(self):
        return self.torch.cuda.Event(enable_timing=True)

    def elapsed_ms(self, start, end):
        return start.elapsed_time(end)

    def sync(self):
        self.torch.cuda.synchronize()

    def as64(self, a):
        return a[:CHECK_N].double()

    def max_error(self, got, want):
        return float((got[:CHECK_N].double() - want).abs().max())

    def free(self):
        self.torch.cuda.empty_cache()

    def peers(self, args):
        peers = {"torch eager": bound(self.torch)}
        if args.torch_compile:
            # Whole-graph compiles, one per size (dynamic=False): a fused Triton kernel per case.
            peers["torch.compile"] = {
                op: self.torch.compile(f, dynamic=False, fullgraph=True) for op, f in bound(self.torch).items()
            }
        return peers


class Cupy:
    name = "cupy"

    def __init__(self, cupy):
        self.m = self.cupy = cupy
        self.rng = cupy.random.RandomState(16)
        self.version = cupy.__version__
        props = cupy.cuda.runtime.getDeviceProperties(0)
        self.device_name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])

    def uniform(self, n, lo, hi):
        return self.rng.random_sample(n, dtype=self.cupy.float32) * self.cupy.float32(hi - lo) + self.cupy.float32(lo)

    def event(self):
        return self.cupy.cuda.Event()

    def elapsed_ms(self, start, end):
        return self.cupy.cuda.get_elapsed_time(start, end)

    def sync(self):
        self.cupy.cuda.Device().synchronize()

    def as64(self, a):
        return a[:CHECK_N].astype(self.cupy.float64)

    def max_error(self, got, want):
        return float(self.cupy.abs(got[:CHECK_N].astype(self.cupy.float64) - want).max())

    def free(self):
        self.cupy.get_default_memory_pool().free_all_blocks()

    def peers(self, args):
        cp = self.cupy
        fused = {op: cp.fuse(kernel_name=kernel_name(op))(f) for op, f in bound(cp).items()}
        kernels = {}
        for op, (params, out, body, preamble) in ELEMENTWISE.items():
            kernels[op] = cp.ElementwiseKernel(params, out, body, kernel_name(op), preamble=preamble)
        return {"cupy eager": bound(cp), "cupy.fuse": fused, "cupy ElementwiseKernel": kernels}


def kernel_name(op):
    return "porta_peer_" + op.replace("-", "_")


INPUTS = {
    "chain": [(-1.0, 1.0), (-1.0, 1.0)],
    "black-scholes": [(10.0, 100.0), (10.0, 100.0), (0.25, 2.0)],
}


def run(lib, args, records, table):
    try:
        peers = lib.peers(args)
    except Exception as e:
        print(f"{lib.name}: its peers could not be set up: {type(e).__name__}: {e}")
        return False
    ok = True
    for op in args.ops:
        for lg in args.log2:
            n = 1 << lg
            try:
                inputs = [lib.uniform(n, lo, hi) for lo, hi in INPUTS[op]]
                want = FORMULAS[op](lib.m, *[lib.as64(a) for a in inputs])
            except Exception as e:  # out of memory at the largest sizes on a smaller GPU
                print(f"{lib.name} {op} 2^{lg}: inputs failed: {type(e).__name__}: {e}")
                lib.free()
                ok = False
                continue
            for peer, fns in peers.items():
                fn = fns[op]
                rec = {"op": op, "dtype": "float32", "n": n, "log2": lg, "peer": peer, "library": lib.name,
                       "bytes": WORDS[op] * 4 * n}
                try:
                    out = fn(*inputs)
                    err = lib.max_error(out, want)
                    rec["out_dtype"] = str(out.dtype).replace("torch.", "")
                    if rec["out_dtype"] != "float32":  # then it moved more bytes than counted
                        print(f"note: {peer} {op} returns {rec['out_dtype']}, not float32")
                    del out
                    times = time_calls(lib, lambda: fn(*inputs), args.warmup, args.reps)
                    ms = statistics.median(times)
                    rec.update(ms=ms, ms_min=min(times), reps=len(times), gbps=rec["bytes"] / ms / 1e6,
                               max_error=err, ok=err <= TOLERANCE[op])
                    if not rec["ok"]:
                        ok = False
                        print(f"WRONG RESULT: {peer} {op} 2^{lg}: max |error| {err:.3g} > {TOLERANCE[op]:g}")
                except Exception as e:
                    ok = False
                    rec.update(error=f"{type(e).__name__}: {e}")
                    print(f"{peer} {op} 2^{lg}: failed: {rec['error']}")
                records.append(rec)
                table.setdefault((op, lg), {})[peer] = rec
            del inputs, want
            lib.free()
    return ok


def print_table(table, peers):
    head = "| op | n |" + "".join(f" {p} ms | GB/s |" for p in peers)
    print(head)
    print("|---|---|" + "---|---|" * len(peers))
    for (op, lg), row in sorted(table.items(), key=lambda kv: (list(WORDS).index(kv[0][0]), kv[0][1])):
        cells = []
        for p in peers:
            rec = row.get(p)
            if rec is None or "ms" not in rec:
                cells.append(" - | - |")
            else:
                mark = "" if rec["ok"] else " WRONG"
                cells.append(f" {rec['ms']:.3f}{mark} | {rec['gbps']:.0f} |")
        print(f"| {op} | 2^{lg} |" + "".join(cells))


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], epilog=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--log2", default="20,22,24,26,28", help="sizes as powers of two, comma-separated")
    parser.add_argument("--ops", default="chain,black-scholes", help="chain, black-scholes or both")
    parser.add_argument("--reps", type=int, default=20, help="timed calls per case (the median is shown)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed calls before them")
    parser.add_argument("--torch-compile", action="store_true", help="also torch.compile (a compile per size)")
    parser.add_argument("--json", metavar="FILE", help="write every case's times and the machine's libraries")
    args = parser.parse_args()
    args.log2 = [int(v) for v in args.log2.split(",") if v]
    args.ops = [v for v in args.ops.split(",") if v]
    bad = [op for op in args.ops if op not in FORMULAS]
    if bad or args.reps < 1 or args.warmup < 1:
        parser.error(f"--ops takes {', '.join(FORMULAS)}; --reps and --warmup at least 1")

    libs, notes = [], []
    for load, cls in ((load_torch, Torch), (load_cupy, Cupy)):
        mod, why = load()
        if mod is None:
            notes.append(why)
            print(why)
        else:
            libs.append(cls(mod))
    records, table, ok = [], {}, True
    if not libs:
        print("fused_peers.py: neither PyTorch nor CuPy can run here, nothing to time")
    else:
        print(f"# Python peers of porta's fused expressions (float32), median of {args.reps} calls\n")
        for lib in libs:
            print(f"{lib.name} {lib.version} on {lib.device_name}")
        print()
        for lib in libs:
            ok = run(lib, args, records, table) and ok
        print_table(table, list(dict.fromkeys(r["peer"] for r in records)))

    if args.json:
        meta = {"python": platform.python_version(), "notes": notes,
                "libraries": {lib.name: {"version": lib.version, "device": lib.device_name} for lib in libs},
                "reps": args.reps, "warmup": args.warmup, "timing": "CUDA events around each call, median"}
        with open(args.json, "w") as f:
            json.dump({"context": meta, "results": records}, f, indent=1)
        print(f"\nwrote {args.json}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
