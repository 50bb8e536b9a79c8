# SPDX-License-Identifier: Apache-2.0
# porta's Python module on the CPU, against NumPy: devices and info, arrays of every dtype, the
# built-in maps, reductions and matmul, streams, and errors as Python exceptions.
import json
import os
import shutil
import subprocess

import numpy as np
import pytest
from conftest import DTYPES, FLOATS, random_host, tolerance

import porta


def test_devices_and_default():
    devs = porta.devices()
    assert porta.Device("cpu") in devs
    assert devs[-1] == "cpu"
    d = porta.default_device()
    assert isinstance(d, porta.Device) and d in devs
    assert porta.is_available("cpu") and porta.is_available(porta.Device("cpu"))
    assert porta.unavailable_reason("cpu") == ""
    assert porta.Device("cuda:1").type == "cuda" and porta.Device("cuda:1").index == 1
    assert str(porta.Device("hip", 2)) == "hip:2"
    assert repr(porta.Device("cpu")) == "porta.Device('cpu')"
    assert len({porta.Device("cpu"), porta.Device("cpu:0")}) == 1
    with pytest.raises(porta.InvalidArgument):
        porta.Device("tpu:0")


def test_info_is_porta_info_json():
    i = porta.info()
    assert set(i) == {"version", "build_info", "backends", "devices", "strict_device", "mpi", "cpu_gemm",
                      "porta_device", "default_device", "default_device_error"}
    assert i["cpu_gemm"]["f32"] and i["cpu_gemm"]["f64"] and i["cpu_gemm"]["reason"]
    assert i["strict_device"] in (None, "cpu:strict")
    assert set(i["mpi"]) == {"built", "available", "library", "version", "build_info", "cuda_aware", "hip_aware",
                             "reason"}
    assert i["mpi"]["available"] or i["mpi"]["reason"], i["mpi"]  # unavailable MPI says why
    assert i["version"] == porta.__version__
    cpu = [b for b in i["backends"] if b["name"] == "cpu"][0]
    assert cpu["available"] and cpu["loaded"] and cpu["device_count"] == 1
    for b in i["backends"]:
        assert b["available"] or b["reason"], b  # an unavailable backend always says why
    assert any(d["device"] == "cpu" for d in i["devices"])
    # The same report as the porta-info tool, where the build has it (porta-info is in <build>/bin).
    tool = None
    for p in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        cand = os.path.join(os.path.dirname(os.path.abspath(p)), "bin", "porta-info") if p else ""
        if cand and os.path.exists(cand):
            tool = cand
    if tool is None:
        tool = shutil.which("porta-info")
    if tool is not None:
        j = json.loads(subprocess.run([tool, "--json"], capture_output=True, text=True).stdout)
        assert set(j) == set(i)
        assert [b["name"] for b in j["backends"]] == [b["name"] for b in i["backends"]]
        assert [b["available"] for b in j["backends"]] == [b["available"] for b in i["backends"]]
        # The same plugin, named through the folder each process found libporta in.
        assert {**j["mpi"], "library": ""} == {**i["mpi"], "library": ""}
        # The same CPU; the BLAS may differ: NumPy, imported first, can bring its own OpenBLAS.
        assert set(j["cpu_gemm"]) == set(i["cpu_gemm"])
        assert [j["cpu_gemm"][k] for k in ("cpu", "cpu_isa", "cpu_features")] == [
            i["cpu_gemm"][k] for k in ("cpu", "cpu_isa", "cpu_features")]
        assert os.path.realpath(j["mpi"]["library"] or ".") == os.path.realpath(i["mpi"]["library"] or ".")


def test_unavailable_device_says_why():
    if porta.is_available("cuda"):
        pytest.skip("CUDA is available here")
    with pytest.raises(porta.Unavailable) as e:
        porta.zeros(3, device="cuda:0")
    assert "cuda" in str(e.value).lower()
    assert porta.unavailable_reason("cuda") != ""


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 5), (2, 3, 4), (2, 1, 3, 2), (0,), (4, 0)])
def test_array_round_trip(dtype, shape, rng, cpu):
    h = random_host(shape, dtype, rng)
    a = porta.array(h, device=cpu)
    assert a.shape == shape and a.dtype == dtype and a.device == cpu
    assert a.ndim == len(shape) and a.size == h.size and a.nbytes == h.nbytes and a.itemsize == h.itemsize
    np.testing.assert_array_equal(a.numpy(), h)
    b = a.to("cpu")
    assert b.data_ptr != a.data_ptr or a.size == 0
    np.testing.assert_array_equal(b.numpy(), h)
    np.testing.assert_array_equal(np.asarray(a.clone()), h)


def test_factories(cpu):
    np.testing.assert_array_equal(porta.zeros((2, 3)).numpy(), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(porta.ones(4, dtype="int32").numpy(), np.ones(4, np.int32))
    np.testing.assert_array_equal(porta.full((2,), 7.5, dtype=np.float64).numpy(), [7.5, 7.5])
    assert porta.empty((3, 2), dtype="int64").shape == (3, 2)
    np.testing.assert_array_equal(porta.arange(5).numpy(), np.arange(5))
    np.testing.assert_array_equal(porta.arange(0.0, 2.0, 0.5).numpy(), np.arange(0.0, 2.0, 0.5))
    np.testing.assert_array_equal(porta.arange(10, 0, -3, dtype="int32").numpy(), np.arange(10, 0, -3, dtype=np.int32))
    assert porta.array([[1, 2], [3, 4]]).dtype == "int64"
    assert porta.array([1.5]).dtype == "float64"
    assert porta.array(np.ones(3, np.float32), dtype="float64").dtype == "float64"
    with pytest.raises(porta.InvalidArgument):
        porta.array(np.ones(3, np.uint8))
    with pytest.raises(porta.InvalidArgument):
        porta.zeros(3, dtype="uint16")


def test_reshape_shares_memory_and_astype(rng):
    h = random_host((3, 4), "float32", rng)
    a = porta.array(h)
    r = a.reshape(4, -1)
    assert r.shape == (4, 3) and r.data_ptr == a.data_ptr and r.borrowed
    del a  # the view keeps the memory
    np.testing.assert_array_equal(r.numpy(), h.reshape(4, 3))
    with pytest.raises(porta.InvalidArgument):
        r.reshape(5, 5)
    np.testing.assert_array_equal(r.astype(np.int32).numpy(), h.reshape(4, 3).astype(np.int32))
    np.testing.assert_array_equal(porta.cast(r, "float64").numpy(), h.reshape(4, 3).astype(np.float64))


BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "minimum": np.minimum,
          "maximum": np.maximum}
UNARY = {"neg": np.negative, "abs": np.abs, "sqrt": lambda x: np.sqrt(np.abs(x)), "exp": np.exp,
         "log": lambda x: np.log(np.abs(x)), "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
         "relu": lambda x: np.maximum(x, 0), "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "square": np.square}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_maps(op, dtype, rng):
    if op == "div" and dtype.startswith("int"):
        pytest.skip("integer division semantics are porta's own (C++ tests cover them)")
    f, ref = getattr(porta, op), BINARY[op]
    ha, hb = random_host((5, 7), dtype, rng), random_host((5, 7), dtype, rng)
    a, b = porta.array(ha), porta.array(hb)
    rtol = tolerance(dtype)
    np.testing.assert_allclose(f(a, b).numpy(), ref(ha, hb).astype(dtype), rtol=rtol)
    s = 3 if dtype.startswith("int") else 1.5
    np.testing.assert_allclose(f(a, s).numpy(), ref(ha, np.array(s, dtype)), rtol=rtol)
    np.testing.assert_allclose(f(s, a).numpy(), ref(np.array(s, dtype), ha), rtol=rtol)
    out = porta.empty((5, 7), dtype=dtype)
    assert f(a, b, out=out) is out
    np.testing.assert_allclose(out.numpy(), ref(ha, hb).astype(dtype), rtol=rtol)
    # broadcasting a row and a column over a 2-D array
    row, col = random_host((7,), dtype, rng), random_host((5, 1), dtype, rng)
    np.testing.assert_allclose(f(a, porta.array(row)).numpy(), ref(ha, row).astype(dtype), rtol=rtol)
    np.testing.assert_allclose(f(a, porta.array(col)).numpy(), ref(ha, col).astype(dtype), rtol=rtol)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_maps(op, dtype, rng):
    h = random_host((4, 9), dtype, rng)
    x = porta.array(h)
    arg = np.abs(h) if op in ("sqrt", "log") else h
    px = porta.array(arg) if op in ("sqrt", "log") else x
    np.testing.assert_allclose(getattr(porta, op)(px).numpy(), UNARY[op](arg).astype(dtype), rtol=8 * tolerance(dtype),
                               atol=1e-6 if dtype == "float32" else 1e-14)


def test_operators_and_other_maps(rng):
    h = random_host((6,), "float64", rng)
    x = porta.array(h)
    np.testing.assert_allclose((x * 2 + 1).numpy(), h * 2 + 1)
    np.testing.assert_allclose((10 - x).numpy(), 10 - h)
    np.testing.assert_allclose((1 / x).numpy(), 1 / h)
    np.testing.assert_allclose((-x).numpy(), -h)
    np.testing.assert_allclose(abs(x).numpy(), np.abs(h))
    np.testing.assert_allclose((abs(x) ** 0.5).numpy(), np.abs(h) ** 0.5)
    y = x.clone()
    addr = y.data_ptr
    y += x
    y *= 2
    assert y.data_ptr == addr
    np.testing.assert_allclose(y.numpy(), 4 * h)
    z = porta.array(h)
    porta.axpy(3.0, x, z)
    np.testing.assert_allclose(z.numpy(), 4 * h)
    porta.fill(z, 2.5)
    np.testing.assert_array_equal(z.numpy(), np.full(6, 2.5))
    porta.iota(z, 1.0, 0.5)
    np.testing.assert_array_equal(z.numpy(), 1.0 + 0.5 * np.arange(6))
    porta.copy(x, z)
    np.testing.assert_array_equal(z.numpy(), h)
    g = porta.array(h[::-1].copy())
    np.testing.assert_array_equal(porta.relu_grad(g, x).numpy(), h[::-1] * (h > 0))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1,), (1000,), (37, 61), (3, 4, 5)])
def test_reductions(dtype, shape, rng):
    h = random_host(shape, dtype, rng, high=1.2)
    x = porta.array(h)
    ref = h.astype(np.float64)
    n = h.size
    rtol = tolerance(dtype, n)
    s = porta.sum(x)
    assert isinstance(s, int if dtype.startswith("int") else float)
    np.testing.assert_allclose(s, ref.sum(), rtol=rtol, atol=rtol * np.abs(ref).sum())
    assert porta.min(x) == h.min() and porta.max(x) == h.max()
    np.testing.assert_allclose(porta.mean(x), ref.mean(), rtol=rtol, atol=rtol * np.abs(ref).mean())
    np.testing.assert_allclose(x.sum(), s)
    if dtype.startswith("int"):  # wraps modulo 2^bits, in any order
        assert porta.prod(x) == np.prod(h, dtype=h.dtype)
    elif n <= 64:
        np.testing.assert_allclose(porta.prod(x), np.prod(ref), rtol=8 * n * tolerance(dtype))
    np.testing.assert_allclose(porta.dot(x, x), (ref * ref).sum(), rtol=rtol)
    if not dtype.startswith("int"):
        np.testing.assert_allclose(porta.norm2(x), np.sqrt((ref * ref).sum()), rtol=rtol)
    for axis in range(-len(shape), len(shape)):
        np.testing.assert_allclose(porta.sum(x, axis).numpy(), ref.sum(axis=axis), rtol=rtol,
                                   atol=rtol * np.abs(ref).sum())
        np.testing.assert_array_equal(porta.max(x, axis).numpy(), h.max(axis=axis))
        np.testing.assert_array_equal(x.min(axis=axis).numpy(), h.min(axis=axis))
        if not dtype.startswith("int"):
            np.testing.assert_allclose(porta.mean(x, axis).numpy(), ref.mean(axis=axis), rtol=rtol, atol=rtol)


def test_reductions_are_deterministic(rng):
    h = random_host((1 << 16,), "float32", rng)
    x = porta.array(h)
    bits = {np.float32(porta.sum(x)).tobytes() for _ in range(5)}
    assert len(bits) == 1


@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul_and_gemm(dtype, rng):
    ha, hb = random_host((7, 5), dtype, rng), random_host((5, 3), dtype, rng)
    a, b = porta.array(ha), porta.array(hb)
    ref = ha.astype(np.float64) @ hb.astype(np.float64)
    rtol = 8 * tolerance(dtype, 5)
    np.testing.assert_allclose(porta.matmul(a, b).numpy(), ref, rtol=rtol, atol=rtol)
    np.testing.assert_allclose((a @ b).numpy(), ref, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(porta.matmul(a, b, algorithm="own").numpy(), ref, rtol=rtol, atol=rtol)
    if dtype == "float32":
        np.testing.assert_allclose(porta.matmul(a, b, precision="tf32").numpy(), ref, rtol=2e-3, atol=2e-3)
    # c = 2 a^T b2^T + c: a is 7x5, b2 is 3x7, c is 5x3
    hb2, hc = random_host((3, 7), dtype, rng), random_host((5, 3), dtype, rng)
    c = porta.array(hc)
    assert porta.gemm(2, a, porta.array(hb2), 1, c, trans_a=True, trans_b=True) is None
    ref2 = 2 * (ha.astype(np.float64).T @ hb2.astype(np.float64).T) + hc
    np.testing.assert_allclose(c.numpy(), ref2, rtol=rtol, atol=rtol * 10)
    np.testing.assert_array_equal(porta.transpose(a).numpy(), ha.T)
    np.testing.assert_array_equal(a.T.numpy(), ha.T)


def test_errors_are_porta_classes_with_porta_messages():
    with pytest.raises(porta.InvalidArgument, match=r"porta::matmul: inner dimensions differ \(A is 3x4, B is 5x2\)"):
        porta.matmul(porta.ones((3, 4)), porta.ones((5, 2)))
    with pytest.raises(ValueError):  # InvalidArgument is also a ValueError
        porta.add(porta.ones(3), porta.ones(4))
    with pytest.raises(porta.Error):
        porta.min(porta.zeros(0))
    with pytest.raises(porta.InvalidArgument, match="does not promote"):
        porta.add(porta.ones(3), porta.ones(3, dtype="int32"))
    with pytest.raises(porta.InvalidArgument, match="float"):
        porta.add(porta.ones(3, dtype="int32"), 1.5)
    with pytest.raises(porta.InvalidArgument, match="does not fit"):
        porta.add(porta.ones(3, dtype="int32"), 2**40)
    with pytest.raises(porta.InvalidArgument, match="precision"):
        porta.matmul(porta.ones((2, 2)), porta.ones((2, 2)), precision="fast")
    with pytest.raises(porta.InvalidArgument, match="axis"):
        porta.sum(porta.ones((2, 2)), 2)
    with pytest.raises(TypeError):
        porta.add(1, 2)
    assert issubclass(porta.OutOfMemory, MemoryError) and issubclass(porta.DeviceMismatch, porta.Error)
    assert issubclass(porta.Unavailable, porta.Error) and issubclass(porta.BackendError, porta.Error)
    assert issubclass(porta.Error, RuntimeError)


def test_out_of_memory_carries_numbers():
    with pytest.raises(porta.OutOfMemory) as e:
        porta.empty((1 << 60,), dtype="int32", device="cpu")
    assert e.value.requested_bytes >= 1 << 62 or e.value.requested_bytes > 0
    assert e.value.device == "cpu"


def test_streams_and_events(rng):
    s = porta.Stream("cpu")
    assert s.device == "cpu" and s.query()
    h = random_host((100,), "float32", rng)
    x = porta.array(h, device="cpu", stream=s)
    start, stop = porta.Event("cpu"), porta.Event("cpu")
    start.record(s)
    y = porta.mul(x, 2.0, stream=s)
    stop.record(s)
    s.synchronize()
    assert porta.Event.elapsed_ms(start, stop) >= 0
    np.testing.assert_array_equal(y.numpy(), h * 2)
    assert porta.sum(y, stream=s) == pytest.approx(float((h * 2).astype(np.float64).sum()), rel=1e-5)
    porta.synchronize()
    porta.synchronize("cpu")
    d = porta.Stream.default("cpu")
    assert d.handle == 0


def test_memory_stats_return_to_baseline():
    porta.synchronize()
    base = porta.memory_stats("cpu")["bytes_in_use"]
    a = porta.ones((1000,), device="cpu")
    assert porta.memory_stats("cpu")["bytes_in_use"] >= base + 4000
    del a
    assert porta.memory_stats("cpu")["bytes_in_use"] == base
