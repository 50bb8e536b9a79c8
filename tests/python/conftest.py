# SPDX-License-Identifier: Apache-2.0
# The tests import the porta package from PYTHONPATH (the build tree's python/ folder when ctest
# runs them: python/CMakeLists.txt sets it) and run on the CPU, plus CUDA where torch/cupy and a GPU
# are present (test_cuda_interop.py).
import ctypes
import numpy as np
import pytest

import porta

DTYPES = ["float32", "float64", "int32", "int64"]
FLOATS = ["float32", "float64"]
COMPLEX = ["complex64", "complex128"]


def _devices():
    """The CPU, cpu:strict (a CPU whose memory the host cannot touch, as a GPU's) and a GPU if there is one."""
    devs = ["cpu"]
    if porta.info()["strict_device"]:
        devs.append("cpu:strict")
    d = porta.default_device()
    if d.type != "cpu":
        devs.append(str(d))
    return devs


# The devices the tests of a module that takes every device are parametrised over.
DEVICES = _devices()


def random_host(shape, dtype, rng, low=-2.0, high=2.0):
    """Fresh random values, never zeros (a kernel that writes nothing must not pass); complex ones
    have both parts non-zero, so that a lost imaginary part shows."""
    if dtype.startswith("int"):
        v = rng.integers(1, 50, size=shape)
        return np.asarray(v * rng.choice([-1, 1], size=shape), dtype=dtype)
    if dtype.startswith("complex"):
        re, im = (rng.uniform(0.25, high, size=shape) * rng.choice([-1, 1], size=shape) for _ in range(2))
        return np.asarray(re + 1j * im, dtype=dtype)
    v = rng.uniform(0.25, high, size=shape) * rng.choice([-1, 1], size=shape)
    return np.asarray(v, dtype=dtype)  # a 0-d array, not a NumPy scalar, for shape ()


def tolerance(dtype, n=1):
    """Relative tolerance from n and the dtype, for sums of n terms."""
    if dtype.startswith("int"):
        return 0.0
    eps = np.finfo(dtype).eps
    return 4 * eps * max(1.0, np.log2(max(n, 2))) + eps


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture
def cpu():
    return porta.Device("cpu")


# The dtype of a DLPack capsule, read through ctypes without consuming it (the export tests).
_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("dtype", _DLDataType), ("shape", ctypes.c_void_p),
                ("strides", ctypes.c_void_p), ("byte_offset", ctypes.c_uint64)]


def dl_dtype(capsule, versioned):
    """(code, bits, lanes) of the tensor in an unconsumed capsule."""
    p = _get_pointer(capsule, b"dltensor_versioned" if versioned else b"dltensor")
    # DLManagedTensorVersioned: version (8 bytes), manager_ctx, deleter, flags, then the tensor.
    offset = 8 + 2 * ctypes.sizeof(ctypes.c_void_p) + 8 if versioned else 0
    t = _DLTensor.from_address(p + offset)
    return t.dtype.code, t.dtype.bits, t.dtype.lanes
