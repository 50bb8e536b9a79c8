# SPDX-License-Identifier: Apache-2.0
# The tests import the porta package from PYTHONPATH (the build tree's python/ folder when ctest
# runs them: python/CMakeLists.txt sets it) and run on the CPU, plus CUDA where torch/cupy and a GPU
# are present (test_cuda_interop.py).
import numpy as np
import pytest

import porta

DTYPES = ["float32", "float64", "int32", "int64"]
FLOATS = ["float32", "float64"]


def random_host(shape, dtype, rng, low=-2.0, high=2.0):
    """Fresh random values, never zeros (a kernel that writes nothing must not pass)."""
    if dtype.startswith("int"):
        v = rng.integers(1, 50, size=shape)
        return np.asarray(v * rng.choice([-1, 1], size=shape), dtype=dtype)
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
