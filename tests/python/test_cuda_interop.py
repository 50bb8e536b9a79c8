# SPDX-License-Identifier: Apache-2.0
# Interchange with PyTorch and CuPy on CUDA: the same memory in and out (by address), lifetimes on
# both sides, the DLPack stream handshake, __cuda_array_interface__, and porta's algorithms on
# tensors that porta did not allocate. Skips cleanly without a GPU, without porta's CUDA backend,
# or without torch / cupy.
import gc

import numpy as np
import pytest

import porta

cuda_ok = porta.is_available("cuda")
pytestmark = pytest.mark.skipif(not cuda_ok, reason="porta's CUDA backend is not available: "
                                + (porta.unavailable_reason("cuda") if not cuda_ok else ""))

try:
    import torch
except ImportError:
    torch = None


def torch_cuda():
    if torch is None or not torch.cuda.is_available():
        pytest.skip("PyTorch with CUDA is not installed")
    return torch


def cupy_mod():
    cp = pytest.importorskip("cupy")
    try:
        cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - any CUDA error means no usable CuPy
        pytest.skip("CuPy cannot use the GPU: %s" % e)
    return cp


def porta_in_use(dev="cuda:0"):
    porta.synchronize(dev)
    return porta.memory_stats(dev)["bytes_in_use"]


TORCH_DTYPES = ["float32", "float64", "int32", "int64"]


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_torch_in_and_out_same_memory(dtype):
    th = torch_cuda()
    t = (th.arange(1, 4097, device="cuda") % 97).to(getattr(th, dtype)).reshape(64, 64)
    p = porta.from_dlpack(t)
    assert p.device == "cuda:0" and p.shape == (64, 64) and p.dtype == dtype and p.borrowed
    assert p.data_ptr == t.data_ptr()
    assert porta.sum(p) == pytest.approx(float(t.double().sum().item()))
    np.testing.assert_array_equal(porta.sum(p, 0).numpy(), t.double().sum(0).cpu().numpy().astype(dtype))
    back = th.from_dlpack(p)
    assert back.data_ptr() == t.data_ptr() and back.dtype == t.dtype and back.device == t.device
    porta.fill(p, 3)
    th.cuda.synchronize()
    assert bool((t == 3).all())


def test_torch_tensor_lives_while_porta_holds_it():
    th = torch_cuda()
    th.cuda.synchronize()
    base = th.cuda.memory_allocated()
    t = th.full((1 << 20,), 2.0, device="cuda")
    p = porta.from_dlpack(t)
    del t
    gc.collect()
    assert th.cuda.memory_allocated() >= base + (1 << 22)  # porta holds the storage
    assert porta.sum(p) == 2.0 * (1 << 20)
    del p
    gc.collect()
    assert th.cuda.memory_allocated() == base


def test_porta_memory_lives_while_torch_holds_it():
    th = torch_cuda()
    base = porta_in_use()
    p = porta.full((1 << 20,), 5.0, device="cuda:0")
    addr = p.data_ptr
    t = th.from_dlpack(p)
    del p
    gc.collect()
    assert porta_in_use() >= base + (1 << 22)
    assert t.data_ptr() == addr and float(t.sum().item()) == 5.0 * (1 << 20)
    del t
    gc.collect()
    assert porta_in_use() == base


def test_stream_handshake_with_a_torch_side_stream():
    th = torch_cuda()
    n = 1 << 24
    for _ in range(3):
        p = porta.full((n,), 1.0, device="cuda:0")
        porta.mul(p, 3.0, out=p)  # queued on porta's stream; not synchronised here
        s = th.cuda.Stream()
        with th.cuda.stream(s):
            t = th.from_dlpack(p)  # torch passes s: porta makes s wait for its work
            total = t.sum()
        s.synchronize()
        assert float(total.item()) == 3.0 * n
    # and the other way: torch writes on a side stream, porta reads on its default stream
    s = th.cuda.Stream()
    with th.cuda.stream(s):
        t = th.ones(n, device="cuda")
        t.mul_(7.0)
        p = porta.from_dlpack(t)
        assert porta.sum(p) == 7.0 * n
    # explicit streams in __dlpack__: -1 (no sync), 1 (legacy), 2 (per-thread), a handle; 0 is refused
    p = porta.ones((16,), device="cuda:0")
    # (torch's handle of the legacy default stream is 0, which DLPack reserves: ask for it as 1)
    handles = {th.cuda.current_stream().cuda_stream, s.cuda_stream} - {0}
    for st in (-1, 1, 2, *handles):
        q = porta.from_dlpack(p.__dlpack__(stream=st))
        assert q.data_ptr == p.data_ptr
    with pytest.raises(BufferError):
        p.__dlpack__(stream=0)
    # porta consuming on one of its own streams
    ps = porta.Stream("cuda:0")
    q = porta.from_dlpack(th.ones(16, device="cuda"), stream=ps)
    assert porta.sum(q, stream=ps) == 16.0


def test_torch_refusals():
    th = torch_cuda()
    with pytest.raises(porta.InvalidArgument, match="not C-contiguous"):
        porta.from_dlpack(th.ones((4, 6), device="cuda").t())
    with pytest.raises(porta.InvalidArgument, match="int16"):
        porta.from_dlpack(th.ones(4, device="cuda", dtype=th.int16))
    t = th.arange(10, device="cuda", dtype=th.float32)[1:]  # an offset view: still contiguous
    p = porta.from_dlpack(t)
    assert p.data_ptr == t.data_ptr() and porta.sum(p) == 45.0


def test_torch_cpu_tensors_too():
    th = pytest.importorskip("torch")
    t = th.arange(6, dtype=th.float64).reshape(2, 3)
    p = porta.from_dlpack(t)
    assert p.device == "cpu" and p.data_ptr == t.data_ptr()
    assert th.from_dlpack(p).data_ptr() == t.data_ptr()


def test_gpu_array_to_host_and_copies():
    p = porta.arange(10.0, device="cuda:0")
    np.testing.assert_array_equal(p.numpy(), np.arange(10.0))
    np.testing.assert_array_equal(np.asarray(p), np.arange(10.0))
    with pytest.raises(BufferError):
        memoryview(p)
    host = np.from_dlpack(porta.from_dlpack(p.__dlpack__(dl_device=(1, 0), copy=True)))
    np.testing.assert_array_equal(host, np.arange(10.0))
    assert p.__dlpack_device__() == (2, 0)


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_cupy_in_and_out_same_memory(dtype):
    cp = cupy_mod()
    c = (cp.arange(1, 1001) % 31).astype(dtype)
    p = porta.from_dlpack(c)
    assert p.data_ptr == c.data.ptr and p.device == "cuda:0"
    assert porta.sum(p) == pytest.approx(float(c.astype(cp.float64).sum()))
    back = cp.from_dlpack(p)
    assert back.data.ptr == c.data.ptr
    via_cai = cp.asarray(p)  # __cuda_array_interface__
    assert via_cai.data.ptr == p.data_ptr and via_cai.dtype == np.dtype(dtype)
    cai = p.__cuda_array_interface__
    assert cai["version"] == 3 and cai["data"][0] == p.data_ptr and cai["shape"] == (1000,)


def test_cupy_lifetimes():
    cp = cupy_mod()
    c = cp.full((1 << 20,), 4.0, dtype=cp.float32)
    addr = c.data.ptr
    p = porta.from_dlpack(c)
    del c
    gc.collect()
    assert porta.sum(p) == 4.0 * (1 << 20) and p.data_ptr == addr
    q = porta.full((1 << 20,), 6.0, device="cuda:0")
    d = cp.from_dlpack(q)
    del q
    gc.collect()
    assert float(d.sum()) == 6.0 * (1 << 20)


def test_round_trip_makes_no_copy():
    th = torch_cuda()
    t = th.rand(1 << 22, device="cuda")
    th.cuda.synchronize()
    before_torch, before_porta = th.cuda.memory_allocated(), porta_in_use()
    for _ in range(10):
        s = porta.sum(porta.from_dlpack(t))
    assert th.cuda.memory_allocated() == before_torch
    assert porta_in_use() == before_porta  # the full sum's scratch is freed in the call
    assert s == pytest.approx(float(t.double().sum().item()), rel=1e-5)
