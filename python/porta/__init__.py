# SPDX-License-Identifier: Apache-2.0
"""porta from Python: one scientific code on NVIDIA GPUs, AMD GPUs and CPUs.

    import porta
    dev = porta.default_device()              # cuda:0, else hip:0, else cpu (PORTA_DEVICE overrides)
    x = porta.array([1.0, 2.0, 3.0], dtype="float32", device=dev)
    y = porta.full(3, 2.0, device=dev)
    porta.axpy(2.0, x, y)                      # y = 2x + y
    s = porta.sum(y)                           # the same bits on every device
    t = torch.from_dlpack(y)                   # zero-copy to PyTorch (or CuPy, NumPy on the CPU)
    z = porta.from_dlpack(t)                   # and back: the same memory

The functions and the Array type are those of the C++ library (docs/python.md). This file adds
what is easier in Python: dtype names of NumPy/PyTorch/CuPy, array() from lists and NumPy arrays,
numpy(), and the operators.
"""
from . import _porta
from ._porta import (
    Array,
    BackendError,
    Device,
    DeviceMismatch,
    Error,
    Event,
    InvalidArgument,
    OutOfMemory,
    Stream,
    Unavailable,
    abs,
    add,
    axpy,
    build_info,
    conj,
    copy,
    cos,
    default_device,
    describe,
    device_info,
    devices,
    div,
    dot,
    empty_cache,
    exp,
    fill,
    from_dlpack,
    gemm,
    imag,
    info,
    iota,
    is_available,
    log,
    make_complex,
    matmul,
    max,
    maximum,
    mean,
    memory_stats,
    min,
    minimum,
    mul,
    neg,
    norm2,
    pow,
    prod,
    real,
    relu,
    relu_grad,
    select_device,
    set_default_device,
    sigmoid,
    sin,
    sqrt,
    square,
    sub,
    sum,
    synchronize,
    tanh,
    transpose,
    unavailable_reason,
    vdot,
    view_as_complex,
    view_as_real,
)
from ._porta import fft, linalg, sparse

import sys as _sys

# `import porta.sparse` and `from porta.sparse import csr_matrix` (as with scipy.sparse) look the
# name up in sys.modules: the submodules live in the extension, not in files of this package.
_sys.modules[__name__ + ".sparse"] = sparse
_sys.modules[__name__ + ".linalg"] = linalg
_sys.modules[__name__ + ".fft"] = fft


def __getattr__(name):
    # porta.LinAlgError is made on first use: it derives from numpy.linalg.LinAlgError, and importing
    # NumPy would make `import porta` several times slower for programs that never need it.
    if name == "LinAlgError":
        return _porta.LinAlgError
    raise AttributeError("module %r has no attribute %r" % (__name__, name))

__version__ = _porta.__version__

float32 = "float32"
float64 = "float64"
int32 = "int32"
int64 = "int64"
complex64 = "complex64"
complex128 = "complex128"
float16 = "float16"
bfloat16 = "bfloat16"
dtypes = (float32, float64, int32, int64, complex64, complex128, float16, bfloat16)
_SUPPORTED = "porta has float32, float64, int32, int64, complex64, complex128, float16 and bfloat16"


def _dtype_name(dtype):
    """'float32' from 'float32', numpy.float32, numpy.dtype('f4'), torch.float32, float, int, complex;
    'bfloat16' from torch.bfloat16 and ml_dtypes.bfloat16."""
    if dtype is None or isinstance(dtype, str):
        return dtype
    if dtype is float:
        return float64
    if dtype is int:
        return int64
    if dtype is complex:
        return complex128
    name = getattr(dtype, "name", None)  # numpy.dtype
    if isinstance(name, str):
        return name
    name = getattr(dtype, "__name__", None)  # numpy.float32 and other scalar types
    if isinstance(name, str):
        return name
    text = str(dtype)  # torch.float32
    return text[len("torch."):] if text.startswith("torch.") else text


_TYPECODES = {float32: "f", float64: "d", int32: "i", int64: "q"}


def _flatten(obj, shape, flat, depth=0):
    if isinstance(obj, (list, tuple)):
        if len(shape) <= depth:
            shape.append(len(obj))
        elif shape[depth] != len(obj):
            raise InvalidArgument("porta.array: ragged nested sequence")
        for o in obj:
            _flatten(o, shape, flat, depth + 1)
    else:
        if len(shape) != depth:
            raise InvalidArgument("porta.array: ragged nested sequence")
        flat.append(obj)


def _host_buffer(obj, dtype):
    """A C-contiguous host buffer of obj: NumPy when it is installed, else array.array."""
    try:
        import numpy as np
    except ImportError:
        np = None
    if np is not None:
        return np.asarray(obj, dtype=dtype, order="C")  # not ascontiguousarray: it makes 0-d arrays 1-d
    import array as pyarray

    shape, flat = [], []
    _flatten(obj, shape, flat)
    if dtype is None:
        if any(isinstance(v, complex) for v in flat):
            dtype = complex128
        else:
            dtype = float64 if any(isinstance(v, float) for v in flat) else int64
    if dtype in (complex64, complex128):
        raise InvalidArgument("porta.array: complex values need NumPy here (array.array has no complex type)")
    if dtype not in _TYPECODES:
        raise InvalidArgument("porta.array: dtype '%s' is not supported (%s)" % (dtype, _SUPPORTED))
    buf = pyarray.array(_TYPECODES[dtype], flat)
    view = memoryview(buf).cast("B")
    return view.cast(_TYPECODES[dtype], shape) if shape and 0 not in shape else view.cast(_TYPECODES[dtype])


_NO_ML_DTYPES = []  # [True] once `import ml_dtypes` failed: not looked for again


def _ml_bfloat16():
    """ml_dtypes' bfloat16 NumPy dtype, or None: NumPy has no bfloat16 of its own."""
    if _NO_ML_DTYPES:
        return None
    try:
        import ml_dtypes
        import numpy as np
    except ImportError:
        _NO_ML_DTYPES.append(True)
        return None
    return np.dtype(ml_dtypes.bfloat16)


def _is_bfloat16(obj):
    """Whether obj is another library's bfloat16 array (ml_dtypes' NumPy array, a torch tensor)."""
    dt = getattr(obj, "dtype", None)
    return dt is not None and not isinstance(obj, Array) and _dtype_name(dt) == bfloat16


def _numpy_module():
    try:
        import numpy as np
    except ImportError:
        return None
    return np


def array(obj, dtype=None, device=None, stream=None):
    """A copy of obj (a porta.Array, a NumPy array, nested lists, a number) on `device`.

    dtype None keeps NumPy's choice (float64 for Python floats, int64 for ints); device None is
    default_device().
    """
    dtype = _dtype_name(dtype)
    if isinstance(obj, Array):
        a = obj if dtype is None or dtype == obj.dtype else obj.astype(dtype, stream=stream)
        if a is not obj and (device is None or a.device == device):
            return a
        return a.to(a.device if device is None else device, stream=stream)
    if _is_bfloat16(obj):
        # PEP 3118 has no bfloat16 format: ml_dtypes' arrays come as their 16-bit words, the rest
        # (torch) through DLPack, then copied as a porta array is.
        np = _numpy_module()
        if np is not None and isinstance(obj, (np.ndarray, np.generic)):
            a = _porta._from_buffer(np.asarray(obj, order="C").view(np.uint16), device, stream, bfloat16)
            return a if dtype in (None, bfloat16) else a.astype(dtype, stream=stream)
        return array(from_dlpack(obj), dtype, device, stream)
    if dtype == bfloat16 or (dtype == float16 and _numpy_module() is None):
        # NumPy has no bfloat16 (ml_dtypes rounds through float) and array.array no 16-bit float:
        # the values come in their own dtype and porta's cast rounds them once.
        buf = _host_buffer(obj, None)
        if hasattr(buf, "dtype") and buf.dtype.name not in dtypes:
            buf = buf.astype(float64)  # bool, uint8, uint16, uint32, ...: exact in float64
        return _porta._from_buffer(buf, device, stream).astype(dtype, stream=stream)
    buf = _host_buffer(obj, dtype)
    if dtype is None and hasattr(buf, "dtype") and buf.dtype.name not in dtypes:
        raise InvalidArgument("porta.array: dtype %s is not supported (%s)" % (buf.dtype.name, _SUPPORTED))
    return _porta._from_buffer(buf, device, stream)


def asarray(obj, dtype=None, device=None):
    """obj as a porta.Array without a copy where possible (DLPack), else array(obj, ...)."""
    dtype = _dtype_name(dtype)
    if isinstance(obj, Array):
        return array(obj, dtype, device) if (dtype not in (None, obj.dtype) or (device is not None and obj.device != device)) else obj
    if hasattr(obj, "__dlpack__"):
        try:
            a = from_dlpack(obj)
        except (BufferError, InvalidArgument, Unavailable):
            a = None  # a dtype, layout or device porta cannot view: copy through the host instead
        if a is not None:
            return asarray(a, dtype, device)
    return array(obj, dtype, device)


def empty(shape, dtype=float32, device=None):
    """Uninitialised storage (float32 unless told, as PyTorch)."""
    return _porta.empty(shape, _dtype_name(dtype), device)


def full(shape, value, dtype=float32, device=None, stream=None):
    return _porta.full(shape, value, _dtype_name(dtype), device, stream)


def zeros(shape, dtype=float32, device=None):
    return _porta.full(shape, 0, _dtype_name(dtype), device, None)


def ones(shape, dtype=float32, device=None):
    return _porta.full(shape, 1, _dtype_name(dtype), device, None)


def arange(start, stop=None, step=1, dtype=None, device=None):
    """NumPy's arange: int64 for int arguments, float64 when one is a float, unless dtype says."""
    if stop is None:
        start, stop = 0, start
    dtype = _dtype_name(dtype)
    if dtype is None:
        dtype = float64 if any(isinstance(v, float) for v in (start, stop, step)) else int64
    return _porta._arange(start, stop, step, dtype, device)


def cast(x, dtype, stream=None):
    """x converted to dtype (porta's one conversion: NaN to int is 0, out-of-range saturates)."""
    return x.astype(_dtype_name(dtype), stream=stream)


# ---- Array methods that are easier in Python -----------------------------------------------------
class _Words:
    """A CPU bfloat16 array's memory as uint16 for NumPy, which then holds this (and so the array)
    as its base: the buffer protocol has no bfloat16 format to share it with."""

    def __init__(self, a):
        self._array = a
        self.__array_interface__ = {"shape": a.shape, "typestr": "<u2", "data": (a.data_ptr, False),
                                    "strides": None, "version": 3}


def _numpy(self, stream=None):
    """A NumPy array: on the CPU a view of the same memory (as torch's .numpy()), else a host copy."""
    import numpy as np

    # cpu:strict's memory is not host memory (docs/strict.md): copied, as a GPU's.
    on_host = self.device.type == "cpu" and str(self.device) != "cpu:strict"
    if self.dtype == bfloat16:
        bf16 = _ml_bfloat16()
        if bf16 is None:
            # Not the raw 16-bit words: NumPy would compute with them as integers.
            raise Unavailable("porta.Array.numpy: NumPy has no bfloat16 without ml_dtypes (pip install ml-dtypes); "
                              "x.astype(porta.float32) widens it exactly, DLPack shares it (torch.from_dlpack)")
        if on_host and self.size > 0:
            return np.asarray(_Words(self)).view(bf16)
        words = np.empty(self.shape, dtype=np.uint16)
        self._copy_to_host(words, stream)
        return words.view(bf16)
    if on_host:
        return np.asarray(self)  # the buffer protocol: no copy, keeps self alive
    out = np.empty(self.shape, dtype=self.dtype)
    self._copy_to_host(out, stream)
    return out


def _array_protocol(self, dtype=None, copy=None):
    if self.dtype == bfloat16 and dtype is not None and _ml_bfloat16() is None and _dtype_name(dtype) in dtypes:
        # numpy.asarray(x, dtype=...) of a dtype NumPy has: porta converts, exactly for float32.
        return _numpy(self.astype(_dtype_name(dtype)))
    a = _numpy(self)
    if copy and a.base is not None:
        a = a.copy()
    return a if dtype is None else a.astype(dtype, copy=False)


def _item(self):
    if self.size != 1:
        raise InvalidArgument("porta.Array.item: the array has %d elements, not 1" % self.size)
    if self.dtype == bfloat16:
        return _item(self.astype(float32))  # exact; a Python float with or without ml_dtypes
    return _numpy(self).reshape(-1)[0].item() if self.device.type == "cpu" else _numpy(self).item()


def _tolist(self):
    if self.dtype == bfloat16:
        return _numpy(self.astype(float32)).tolist()  # exact; Python floats with or without ml_dtypes
    return _numpy(self).tolist()


def _astype_dtype(self, dtype, stream=None, _astype=Array.astype):
    return _astype(self, _dtype_name(dtype), stream)


Array.numpy = _numpy
Array.__array__ = _array_protocol
Array.tolist = _tolist
Array.item = _item
Array.astype = _astype_dtype
Array.T = property(transpose)
Array.real = property(real, doc="The real part, a new array (numpy's .real; float32 or float64 for complex).")
Array.imag = property(imag, doc="The imaginary part, a new array (numpy's .imag; zeros for a real array).")
Array.conj = lambda self, stream=None: conj(self, stream=stream)
Array.conjugate = Array.conj
Array.sum = lambda self, axis=None, stream=None: sum(self, axis, stream=stream)
Array.prod = lambda self, axis=None, stream=None: prod(self, axis, stream=stream)
Array.min = lambda self, axis=None, stream=None: min(self, axis, stream=stream)
Array.max = lambda self, axis=None, stream=None: max(self, axis, stream=stream)
Array.mean = lambda self, axis=None, stream=None: mean(self, axis, stream=stream)
Array.__add__ = lambda a, b: add(a, b)
Array.__radd__ = lambda a, b: add(b, a)
Array.__sub__ = lambda a, b: sub(a, b)
Array.__rsub__ = lambda a, b: sub(b, a)
Array.__mul__ = lambda a, b: mul(a, b)
Array.__rmul__ = lambda a, b: mul(b, a)
Array.__truediv__ = lambda a, b: div(a, b)
Array.__rtruediv__ = lambda a, b: div(b, a)
Array.__pow__ = lambda a, b: pow(a, b)
Array.__rpow__ = lambda a, b: pow(b, a)
Array.__iadd__ = lambda a, b: add(a, b, out=a)
Array.__isub__ = lambda a, b: sub(a, b, out=a)
Array.__imul__ = lambda a, b: mul(a, b, out=a)
Array.__itruediv__ = lambda a, b: div(a, b, out=a)
Array.__neg__ = lambda a: neg(a)
Array.__abs__ = lambda a: abs(a)
Array.__matmul__ = lambda a, b: matmul(a, b)
