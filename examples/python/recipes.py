#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The recipes of docs/python-to-porta.md (PyTorch's device choice, PyCUDA's multiply_them, Numba's
# vector add, CuPy's arrays, a PyTorch training step) from Python through porta, one cell per
# recipe as in a notebook. Each cell checks its result against NumPy; the script exits non-zero
# when one differs. Runs on porta's default device (PORTA_DEVICE=cpu|cuda|... overrides).
#
#   PYTHONPATH=build/default/python python3 examples/python/recipes.py
import sys

import numpy as np

import porta

failures = []


def check(name, got, want, rtol=1e-5, atol=1e-6):
    ok = np.allclose(got, want, rtol=rtol, atol=atol)
    print("  %-44s %s" % (name, "ok" if ok else "MISMATCH"))
    if not ok:
        failures.append(name)


# %% Choosing the device: PyTorch's `device = "cuda" if torch.cuda.is_available() else "cpu"`
dev = porta.default_device()  # cuda:0, else hip:0, else cpu; PORTA_DEVICE overrides
print("porta %s on %s" % (porta.__version__, porta.describe(dev)))
for b in porta.info()["backends"]:  # porta-info: is my GPU being used, and if not, why?
    print("  %-5s %s" % (b["name"], "available" if b["available"] else "unavailable: " + b["reason"]))
try:
    porta.select_device("cuda:7")
except porta.Unavailable as e:  # a device you ask for that is not there is an error, never a fallback
    print("  select_device('cuda:7'): porta.Unavailable: %s" % e)

# %% PyCUDA's multiply_them: dest = a * b (a built-in map: no kernel to write from Python)
rng = np.random.default_rng(0)
ha = rng.standard_normal(400).astype(np.float32)
hb = rng.standard_normal(400).astype(np.float32)
a = porta.array(ha, device=dev)  # drv.In(a)
b = porta.array(hb, device=dev)
dest = porta.zeros(400, device=dev)  # numpy.zeros_like(a)
porta.mul(a, b, out=dest)
print("multiply_them")
check("dest = a * b", dest.numpy(), ha * hb)  # drv.Out(dest)

# %% Numba's vector add: c = a + b
print("vector_add")
ha = rng.random(100000)
hb = rng.random(100000)
a = porta.array(ha, device=dev)  # cuda.to_device(a): float64, as NumPy's
b = porta.array(hb, device=dev)
c = porta.empty(100000, dtype="float64", device=dev)  # cuda.device_array_like(a)
porta.add(a, b, out=c)
check("c = a + b", c.numpy(), ha + hb)  # c.copy_to_host()

# %% CuPy's arrays: factories, arithmetic, broadcasting, reductions
print("arrays")
x = porta.array([1, 2, 3, 4], dtype="float32", device=dev)  # cp.array([1, 2, 3, 4], dtype=cp.float32)
m = porta.arange(6.0, device=dev).reshape(2, 3)  # cp.arange(6.0).reshape(2, 3)
check("x * 2 + 1", (x * 2 + 1).numpy(), [3, 5, 7, 9])
check("(x - 1) / 2", ((x - 1) / 2).numpy(), [0, 0.5, 1, 1.5])
check("10 - x", (10 - x).numpy(), [9, 8, 7, 6])
row = porta.array([10.0, 20.0, 30.0], device=dev)
col = porta.array([[100.0], [200.0]], device=dev)
check("m + row (added to each row)", (m + row).numpy(), np.arange(6.0).reshape(2, 3) + [10, 20, 30])
check("m + col (added to each column)", (m + col).numpy(), np.arange(6.0).reshape(2, 3) + [[100], [200]])
check("cp.sum(m, axis=0)", porta.sum(m, 0).numpy(), [3, 5, 7])
check("cp.max(m, axis=1)", m.max(axis=1).numpy(), [2, 5])
check("cp.mean(m, axis=1)", porta.mean(m, 1).numpy(), [1, 4])
check("keepdims=True is a reshape", (m - porta.max(m, 1).reshape(2, 1)).numpy(), [[-2, -1, 0], [-2, -1, 0]])
check("float(cp.sum(m))", porta.sum(m), 15.0)

# %% Zero-copy interchange: NumPy on the CPU, PyTorch and CuPy on CUDA, through DLPack
print("interchange")
h = np.arange(8, dtype=np.float32)
v = porta.from_dlpack(h) if dev.type == "cpu" else porta.array(h, device=dev)
if dev.type == "cpu":
    check("from_dlpack(numpy) is the same memory", v.data_ptr == h.ctypes.data, True)
try:
    import torch

    t = torch.from_dlpack(v)
    check("torch.from_dlpack(porta) is the same memory", t.data_ptr() == v.data_ptr, True)
    check("porta.sum(from_dlpack(torch))", porta.sum(porta.from_dlpack(t)), 28.0)
except ImportError:
    print("  (PyTorch not installed: its cells are skipped)")

# %% PyTorch's training step: a 2-layer MLP, gradients written out, SGD with momentum
print("mlp")
batch, n_in, hidden, n_out = 64, 20, 32, 4
X = rng.standard_normal((batch, n_in)).astype(np.float32)
W_true = rng.standard_normal((n_in, n_out)).astype(np.float32)
labels = np.argmax(X @ W_true, axis=1)
Y = np.eye(n_out, dtype=np.float32)[labels]  # one-hot rows (porta has no gather)
x, y = porta.array(X, device=dev), porta.array(Y, device=dev)
w1 = porta.array(rng.standard_normal((hidden, n_in)).astype(np.float32) * 0.3, device=dev)
b1 = porta.zeros(hidden, device=dev)
w2 = porta.array(rng.standard_normal((n_out, hidden)).astype(np.float32) * 0.3, device=dev)
b2 = porta.zeros(n_out, device=dev)
params = [w1, b1, w2, b2]
velocity = [porta.zeros(p.shape, device=dev) for p in params]


def forward():
    z1 = porta.empty((batch, hidden), device=dev)
    porta.gemm(1.0, x, w1, 0.0, z1, trans_b=True)  # z1 = x W1^T
    porta.add(z1, b1, out=z1)  # + b1, broadcast over the rows
    a1 = porta.relu(z1)
    z2 = porta.matmul(a1, w2.T) + b2
    shifted = z2 - porta.max(z2, 1).reshape(batch, 1)  # a numerically stable log-softmax
    logp = shifted - porta.log(porta.sum(porta.exp(shifted), 1)).reshape(batch, 1)
    return z1, a1, logp


def loss_of(logp):
    return -porta.dot(y.reshape(-1), logp.reshape(-1)) / batch  # mean cross-entropy


losses = []
for step in range(60):
    z1, a1, logp = forward()
    losses.append(loss_of(logp))
    dz2 = (porta.exp(logp) - y) / float(batch)  # softmax - onehot, averaged
    gw2 = porta.empty(w2.shape, device=dev)
    porta.gemm(1.0, dz2, a1, 0.0, gw2, trans_a=True)  # dW2 = dz2^T a1
    gb2 = porta.sum(dz2, 0)
    dz1 = porta.relu_grad(porta.matmul(dz2, w2), z1)  # back through layer 2 and the ReLU
    gw1 = porta.empty(w1.shape, device=dev)
    porta.gemm(1.0, dz1, x, 0.0, gw1, trans_a=True)  # dW1 = dz1^T x
    gb1 = porta.sum(dz1, 0)
    for p, g, vel in zip(params, [gw1, gb1, gw2, gb2], velocity):
        vel *= 0.9  # optimizer.step(): SGD with momentum, in place
        vel += g
        porta.axpy(-0.5, vel, p)
_, _, logp = forward()
accuracy = float(np.mean(np.argmax(logp.numpy(), axis=1) == labels))
print("  loss %.3f -> %.3f, training accuracy %.2f" % (losses[0], loss_of(logp), accuracy))
check("training halves the loss", loss_of(logp) < 0.5 * losses[0], True)

print("all recipes ok" if not failures else "FAILED: " + ", ".join(failures))
sys.exit(1 if failures else 0)
