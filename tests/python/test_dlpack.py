# SPDX-License-Identifier: Apache-2.0
# Zero-copy interchange on the CPU: DLPack with NumPy both ways (legacy and versioned capsules),
# the buffer protocol, and the lifetimes: a tensor passed in and out again points at the same
# memory, which stays alive as long as either side holds it.
import ctypes
import gc
import weakref

import numpy as np
import pytest
from conftest import DTYPES, random_host

import porta

_name = ctypes.pythonapi.PyCapsule_GetName
_name.restype = ctypes.c_char_p
_name.argtypes = [ctypes.py_object]


def capsule_name(cap):
    return _name(cap).decode()


def in_use():
    return porta.memory_stats("cpu")["bytes_in_use"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 4), (1, 2, 1, 3), (0, 3)])
def test_numpy_in_and_out_same_memory(dtype, shape, rng):
    h = random_host(shape, dtype, rng)
    p = porta.from_dlpack(h)
    assert p.shape == shape and p.dtype == dtype and p.device == "cpu" and p.borrowed
    if h.size:
        assert p.data_ptr == h.ctypes.data
    np.testing.assert_array_equal(p.numpy(), h)
    back = np.from_dlpack(p)
    assert back.shape == shape and back.dtype == h.dtype
    if h.size:
        assert back.ctypes.data == h.ctypes.data
    # writes through one side are seen by the other: it is one buffer
    if h.size:
        porta.fill(p, 7)
        assert (h == 7).all() and (back == 7).all()


def test_porta_memory_out_and_in_again():
    a = porta.arange(12.0, device="cpu").reshape(3, 4)
    n = np.from_dlpack(a)
    assert n.ctypes.data == a.data_ptr and n.shape == (3, 4)
    np.testing.assert_array_equal(n, np.arange(12.0).reshape(3, 4))
    # NumPy marks arrays it imports read-only, and will not export them again (1.x) or flags them
    # read-only (2.x, where porta then copies): porta -> NumPy -> porta cannot be one buffer.
    # Through a writable view it is:
    again = porta.from_dlpack(np.frombuffer(memoryview(a), dtype=np.float64).reshape(3, 4))
    assert again.data_ptr == a.data_ptr


def test_numpy_memory_lives_while_porta_holds_it():
    h = np.arange(1000, dtype=np.float64)
    ref = weakref.ref(h)
    p = porta.from_dlpack(h)
    del h
    gc.collect()
    assert ref() is not None  # the consumed capsule holds NumPy's array
    assert porta.sum(p) == 999 * 1000 / 2
    v = p.reshape(10, 100)  # a view keeps it too
    del p
    gc.collect()
    assert ref() is not None
    assert porta.sum(v) == 999 * 1000 / 2
    del v
    gc.collect()
    assert ref() is None  # and releases it with the last porta array


def test_porta_memory_lives_while_numpy_holds_it():
    gc.collect()
    base = in_use()
    a = porta.full((1 << 16,), 3.0, dtype="float32", device="cpu")
    addr = a.data_ptr
    n = np.from_dlpack(a)
    del a
    gc.collect()
    assert in_use() >= base + (1 << 18)  # still allocated: NumPy holds it
    assert n.ctypes.data == addr and (n == 3.0).all()
    del n
    gc.collect()
    assert in_use() == base


def test_unconsumed_capsules_free_their_tensor():
    gc.collect()
    base = in_use()
    a = porta.ones((4096,), device="cpu")
    for kw in ({}, {"max_version": (1, 0)}):
        cap = a.__dlpack__(**kw)
        del cap
    del a
    gc.collect()
    assert in_use() == base


def test_capsule_names_versions_and_bare_capsules():
    a = porta.arange(6, dtype="int32")
    legacy = a.__dlpack__()
    assert capsule_name(legacy) == "dltensor"
    versioned = a.__dlpack__(max_version=(1, 0))
    assert capsule_name(versioned) == "dltensor_versioned"
    assert capsule_name(a.__dlpack__(max_version=(0, 8))) == "dltensor"
    for cap, used in ((legacy, "used_dltensor"), (versioned, "used_dltensor_versioned")):
        b = porta.from_dlpack(cap)
        assert capsule_name(cap) == used
        assert b.data_ptr == a.data_ptr
        np.testing.assert_array_equal(b.numpy(), np.arange(6, dtype=np.int32))
        with pytest.raises(BufferError):
            porta.from_dlpack(cap)  # a capsule is consumed once


def test_dlpack_device_stream_and_copy():
    a = porta.ones((3,), dtype="float64", device="cpu")
    assert a.__dlpack_device__() == (1, 0)
    with pytest.raises(BufferError):
        a.__dlpack__(stream=5)  # CPU arrays take stream=None
    c = porta.from_dlpack(a.__dlpack__(copy=True))
    assert c.data_ptr != a.data_ptr
    np.testing.assert_array_equal(c.numpy(), a.numpy())
    same = porta.from_dlpack(a.__dlpack__(dl_device=(1, 0)))
    assert same.data_ptr == a.data_ptr
    with pytest.raises(BufferError):
        a.__dlpack__(dl_device=(2, 0))
    h = np.ones(4)
    assert porta.from_dlpack(h, copy=True).data_ptr != h.ctypes.data
    assert porta.from_dlpack(a) is a


def test_from_dlpack_refusals_leave_the_producer_intact():
    with pytest.raises(porta.InvalidArgument, match="not C-contiguous"):
        porta.from_dlpack(np.ones((4, 6))[:, ::2])
    with pytest.raises(porta.InvalidArgument, match="uint8"):
        porta.from_dlpack(np.ones(4, np.uint8))
    with pytest.raises(TypeError):
        porta.from_dlpack([1, 2, 3])
    t = np.ones((4, 6)).T  # Fortran order: contiguous, but not row-major
    with pytest.raises(porta.InvalidArgument):
        porta.from_dlpack(t)
    np.testing.assert_array_equal(t, np.ones((6, 4)))


def test_asarray_prefers_no_copy():
    h = np.arange(5, dtype=np.float32)
    assert porta.asarray(h).data_ptr == h.ctypes.data
    assert porta.asarray(h, dtype="float64").dtype == "float64"


def test_buffer_protocol():
    a = porta.arange(12, dtype="int32", device="cpu").reshape(3, 4)
    m = memoryview(a)
    assert m.shape == (3, 4) and m.format == "i" and m.itemsize == 4 and not m.readonly
    n = np.asarray(a)
    assert n.ctypes.data == a.data_ptr
    n[0, 0] = 100
    assert a.numpy()[0, 0] == 100
    assert a.numpy().ctypes.data == a.data_ptr  # numpy() on the CPU is a view, as torch's
    assert bytes(memoryview(porta.array(np.array([1, 2], np.int32), device="cpu"))) == np.array([1, 2], np.int32).tobytes()
    assert not hasattr(a, "__cuda_array_interface__")


def test_python_call_overhead_sanity():
    # Not a performance gate (those live in the benchmark script): a call must not take
    # milliseconds, which would mean a copy or a synchronisation hiding in the binding.
    import time

    x = porta.ones((1,))
    for _ in range(100):
        porta.sum(x)
    t = time.perf_counter()
    for _ in range(2000):
        porta.sum(x)
    per_call = (time.perf_counter() - t) / 2000
    assert per_call < 1e-3
