# SPDX-License-Identifier: Apache-2.0
# float16 and bfloat16 arrays from Python: dtype names, copies to and from NumPy, the buffer
# protocol and DLPack both ways (DLPack's float and bfloat codes), the maps and reductions, casts,
# Python numbers as operands and fill values (rounded once), matmul, and the refusals of what the
# 16-bit floats do not have.
# References are independent of porta: elementwise results are NumPy's float32 arithmetic rounded
# to the 16-bit format (NumPy's float16 conversion; for bfloat16 round-to-nearest-even in integer
# arithmetic on the float32 bits), compared bit for bit; porta's 16-bit bits are read from its
# memory directly. Inputs are fresh random values (the seed is printed; PORTA_TEST_SEED replays
# it); each case runs on the CPU, on cpu:strict (memory the host cannot touch, as a GPU's) and on
# the default GPU if there is one.
import ctypes
import os

import numpy as np
import pytest
from conftest import DEVICES, dl_dtype, tolerance

import porta

HALF = ["float16", "bfloat16"]
NAN_BITS = {"float16": 0x7E00, "bfloat16": 0x7FC0}
# The distance from 1 to the next value (11 and 8 significant bits).
EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7}
OTHERS = ["float32", "float64", "int32", "int64", "complex64", "complex128"]

try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


@pytest.fixture
def fresh():
    seed = int(os.environ.get("PORTA_TEST_SEED", np.random.SeedSequence().entropy % 2**32))
    print("PORTA_TEST_SEED=%d" % seed)  # pytest shows it with a failure
    return np.random.default_rng(seed)


# ---- the formats, in NumPy --------------------------------------------------------------------

def round16(f, dtype):
    """The bits of float32 values rounded to nearest even in dtype (NaN: the canonical NaN)."""
    f = np.asarray(f, dtype=np.float32)
    if dtype == "float16":
        bits = f.astype(np.float16).view(np.uint16)
    else:
        u = f.view(np.uint32).astype(np.uint64)
        one, sixteen = np.uint64(1), np.uint64(16)
        bits = ((u + np.uint64(0x7FFF) + ((u >> sixteen) & one)) >> sixteen).astype(np.uint16)
    return np.where(np.isnan(f), np.uint16(NAN_BITS[dtype]), bits).astype(np.uint16)


def f64_to_bf16(v):
    """The bits of float64 values rounded once to bfloat16 (normal results and zeros: the tests' values)."""
    u = np.asarray(v, dtype=np.float64).view(np.uint64)
    sign = (u >> np.uint64(48)) & np.uint64(0x8000)
    a = u & np.uint64(0x7FFFFFFFFFFFFFFF)
    r = (a + np.uint64((1 << 44) - 1) + ((a >> np.uint64(45)) & np.uint64(1))) >> np.uint64(45)
    r = r - np.uint64((1023 - 127) << 7)  # rebias the exponent; a carry from the mantissa goes into it
    return np.where(a == 0, sign, r | sign).astype(np.uint16)


def widen(bits, dtype):
    """float32 values of 16-bit patterns (exact)."""
    bits = np.asarray(bits, dtype=np.uint16)
    if dtype == "float16":
        return bits.view(np.float16).astype(np.float32)
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def bits_of(x):
    """The 16-bit patterns of a porta array, read from its memory (a host copy), not converted."""
    h = x.to("cpu")
    if h.size == 0:
        return np.zeros(h.shape, np.uint16)
    words = (ctypes.c_uint16 * h.size).from_address(h.data_ptr)
    return np.frombuffer(words, dtype=np.uint16).copy().reshape(h.shape)


def scalar16(v, dtype):
    """A float32-exact Python number as dtype holds it, as a float."""
    return float(widen(round16(np.float32(v), dtype), dtype))


def on(device, bits, dtype):
    """A porta array of dtype holding `bits` exactly."""
    if dtype == "float16":
        a = porta.array(np.asarray(bits, np.uint16).view(np.float16), device=device)
    else:  # exact: the float32 values are bfloat16 values
        a = porta.array(widen(bits, dtype), dtype=porta.bfloat16, device=device)
    assert a.dtype == dtype and str(a.device) == str(device)
    return a


def random16(shape, dtype, rng, low=0.25, high=2.0):
    """Fresh random 16-bit patterns, never zeros, both signs."""
    v = rng.uniform(low, high, size=shape) * rng.choice([-1, 1], size=shape)
    return round16(np.asarray(v, dtype=np.float32), dtype)


def assert_bits(x, want, dtype):
    assert isinstance(x, porta.Array) and x.dtype == dtype
    got = bits_of(x)
    assert got.shape == np.shape(want)
    bad = np.flatnonzero(got.reshape(-1) != np.asarray(want).reshape(-1))
    assert bad.size == 0, "%d of %d differ, first at %d: got %#06x (%r), want %#06x (%r)" % (
        bad.size, got.size, bad[0], got.reshape(-1)[bad[0]], widen(got.reshape(-1)[bad[0]], dtype),
        np.asarray(want).reshape(-1)[bad[0]], widen(np.asarray(want).reshape(-1)[bad[0]], dtype))


def assert_faithful(x, truth, dtype):
    """x is a function's float result (within 1 float ulp of the truth) rounded to dtype."""
    t = np.asarray(truth, dtype=np.float64).astype(np.float32)
    lo = widen(round16(np.nextafter(t, np.float32(-np.inf)), dtype), dtype)
    hi = widen(round16(np.nextafter(t, np.float32(np.inf)), dtype), dtype)
    got = widen(bits_of(x), dtype)
    assert np.all((lo <= got) & (got <= hi)), (got, lo, hi)


# ---- dtypes and copies ------------------------------------------------------------------------

class TorchLike:
    """A dtype object as torch's: it prints as torch.<name>."""

    def __init__(self, name):
        self.text = "torch." + name

    def __str__(self):
        return self.text


class Producer:
    """Another library's tensor: DLPack and a torch-like dtype, no buffer protocol."""

    def __init__(self, a):
        self.a, self.dtype = a, TorchLike(a.dtype)

    def __dlpack__(self, **kwargs):
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_dtype_names():
    assert porta.float16 == "float16" and porta.bfloat16 == "bfloat16"
    assert porta.float16 in porta.dtypes and porta.bfloat16 in porta.dtypes
    for spelling, name in [(porta.float16, "float16"), ("float16", "float16"), (np.float16, "float16"),
                           (np.dtype("f2"), "float16"), ("f2", "float16"), ("half", "float16"),
                           (TorchLike("float16"), "float16"), (porta.bfloat16, "bfloat16"),
                           (TorchLike("bfloat16"), "bfloat16")]:
        z = porta.zeros(3, dtype=spelling)
        assert z.dtype == name and z.itemsize == 2 and z.nbytes == 6
        assert porta.empty((2, 2), dtype=spelling).dtype == name
        assert porta.ones(1).astype(spelling).dtype == name
    assert porta.array(np.ones(2, np.float16)).dtype == "float16"
    assert "float16" in repr(porta.zeros(1, dtype="float16"))
    assert "bfloat16" in repr(porta.zeros(1, dtype="bfloat16"))
    with pytest.raises(porta.InvalidArgument, match="float16 and bfloat16"):
        porta.zeros(3, dtype="float8")
    with pytest.raises(porta.InvalidArgument, match="float16 and bfloat16"):
        porta.array(np.ones(2, np.uint16))


SPECIAL = {"float16": [0x0000, 0x8000, 0x0001, 0x83FF, 0x0400, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00],
           "bfloat16": [0x0000, 0x8000, 0x0001, 0x807F, 0x0080, 0x3F80, 0xBF80, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0]}


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 5), (2, 3, 4), (2, 1, 3, 2), (0,), (4, 0)])
def test_copies(dtype, shape, device, fresh):
    bits = random16(shape, dtype, fresh)
    a = on(device, bits, dtype)
    assert a.shape == shape and a.ndim == len(shape) and a.size == bits.size
    assert a.nbytes == 2 * bits.size and a.itemsize == 2
    assert_bits(a, bits, dtype)
    assert_bits(a.clone(), bits, dtype)
    assert_bits(a.to("cpu"), bits, dtype)
    assert_bits(porta.transpose(a) if len(shape) == 2 else a.reshape(-1), bits.T if len(shape) == 2 else
                bits.reshape(-1), dtype)
    assert_bits(porta.real(a), bits, dtype)
    assert_bits(porta.conj(a), bits, dtype)
    assert_bits(porta.imag(a), np.zeros(shape, np.uint16), dtype)
    c = porta.empty(shape, dtype=dtype, device=device)
    porta.copy(a, c)
    assert_bits(c, bits, dtype)
    want = widen(bits, dtype)
    if bits.size == 1:
        v = a.item()
        assert isinstance(v, float) and v == float(want.reshape(-1)[0])
    listed = a.tolist()
    np.testing.assert_array_equal(np.array(listed, dtype=np.float64).reshape(shape), want)
    if dtype == "float16":
        n = a.numpy()
        assert n.dtype == np.float16 and n.shape == shape
        np.testing.assert_array_equal(n.view(np.uint16), bits)
        np.testing.assert_array_equal(porta.asarray(n, device=device).numpy().view(np.uint16), bits)
    # numpy.asarray with a dtype NumPy has: converted by porta, with or without ml_dtypes
    np.testing.assert_array_equal(np.asarray(a, dtype=np.float32), want)


@pytest.mark.parametrize("dtype", HALF)
def test_special_values(dtype, device):
    bits = np.array(SPECIAL[dtype], np.uint16)
    a = on(device, bits, dtype)
    assert_bits(a, bits, dtype)
    assert_bits(a.astype("float32").astype(dtype), bits, dtype)  # widening is exact, and back
    w = a.astype("float64").numpy()
    np.testing.assert_array_equal(w, widen(bits, dtype).astype(np.float64))


def test_rounded_once_from_python_numbers(device):
    # Each of these lies just above a tie of the 16-bit format and below float32's precision: rounded
    # through float32 first it would become the tie and round down to even.
    for dtype, v, want in [("float16", 1 + 2.0**-11 + 2.0**-30, 1 + 2.0**-10),
                           ("bfloat16", 1 + 2.0**-8 + 2.0**-30, 1 + 2.0**-7)]:
        assert porta.full(2, v, dtype=dtype, device=device).tolist() == [want, want]
        assert porta.array([v, -v], dtype=dtype, device=device).tolist() == [want, -want]
        x = porta.ones(3, dtype=dtype, device=device)
        porta.fill(x, v)
        assert x.tolist() == [want] * 3
        assert (porta.ones(3, dtype=dtype, device=device) * v).tolist() == [want] * 3
        assert porta.array([v], device=device).astype(dtype).item() == want  # float64 -> 16 bits
    # an int64 that float32 would round to a tie of bfloat16's
    big = 2**40 + 2**32 + 1
    assert porta.full(1, big, dtype="bfloat16", device=device).item() == 2.0**40 + 2.0**33
    assert porta.array([big], dtype="int64", device=device).astype("bfloat16").item() == 2.0**40 + 2.0**33
    # beyond the range: infinity, as NumPy
    assert porta.full(1, 70000, dtype="float16", device=device).item() == np.inf
    assert porta.full(1, -1e300, dtype="bfloat16", device=device).item() == -np.inf
    assert porta.full(1, 1e39, dtype="bfloat16", device=device).item() == np.inf
    assert_bits(porta.full(2, float("nan"), dtype="float16", device=device), [0x7E00] * 2, "float16")
    assert_bits(porta.full(2, float("nan"), dtype="bfloat16", device=device), [0x7FC0] * 2, "bfloat16")


def test_buffer_protocol(fresh):
    bits = random16((3, 4), "float16", fresh)
    h = bits.view(np.float16)
    a = porta.array(h, device="cpu")
    m = memoryview(a)
    assert m.format == "e" and m.itemsize == 2 and m.shape == (3, 4)
    n = np.asarray(a)  # the same memory
    assert n.dtype == np.float16 and n.ctypes.data == a.data_ptr
    np.testing.assert_array_equal(n.view(np.uint16), bits)
    b = porta.array(memoryview(h))
    assert b.dtype == "float16"
    assert_bits(b, bits, "float16")
    # PEP 3118 has no bfloat16: no buffer rather than one of integers
    z = porta.zeros((2, 2), dtype="bfloat16", device="cpu")
    with pytest.raises(BufferError, match="bfloat16: the buffer protocol has no format"):
        memoryview(z)


@pytest.mark.skipif(ml_dtypes is not None, reason="ml_dtypes gives NumPy a bfloat16")
def test_bfloat16_to_numpy_without_ml_dtypes(device):
    z = porta.full((2, 3), 1.5, dtype="bfloat16", device=device)
    for f in (z.numpy, lambda: np.asarray(z), lambda: np.array(z)):
        with pytest.raises(porta.Unavailable, match="no bfloat16 without ml_dtypes.*astype\\(porta.float32\\)"):
            f()
    # what works without it: a conversion NumPy asks for, item(), tolist()
    np.testing.assert_array_equal(np.asarray(z, dtype=np.float32), np.full((2, 3), 1.5, np.float32))
    np.testing.assert_array_equal(z.astype(porta.float32).numpy(), np.full((2, 3), 1.5, np.float32))
    assert z.tolist() == [[1.5] * 3] * 2
    assert porta.sum(z, 0).tolist() == [3.0] * 3


def test_bfloat16_with_ml_dtypes(device, fresh):
    ml = pytest.importorskip("ml_dtypes")
    bits = random16((4, 5), "bfloat16", fresh)
    h = bits.view(ml.bfloat16)
    a = porta.array(h, device=device)
    assert a.dtype == "bfloat16"
    assert_bits(a, bits, "bfloat16")
    assert_bits(porta.asarray(h, device=device), bits, "bfloat16")
    assert porta.array(h, dtype="float32", device=device).dtype == "float32"
    n = a.numpy()
    assert n.dtype == np.dtype(ml.bfloat16) and n.shape == (4, 5)
    np.testing.assert_array_equal(n.view(np.uint16), bits)
    if device == "cpu":
        assert n.ctypes.data == a.data_ptr  # a view, as for every dtype on the CPU
    assert porta.zeros(2, dtype=ml.bfloat16).dtype == "bfloat16"


# ---- DLPack -------------------------------------------------------------------------------------

def test_dlpack_float16_with_numpy(fresh):
    bits = random16((4, 5), "float16", fresh)
    h = bits.view(np.float16).copy()
    p = porta.from_dlpack(h)
    assert p.dtype == "float16" and p.borrowed and p.data_ptr == h.ctypes.data
    assert_bits(p, bits, "float16")
    assert dl_dtype(p.__dlpack__(), False) == (2, 16, 1)  # kDLFloat
    assert dl_dtype(p.__dlpack__(max_version=(1, 0)), True) == (2, 16, 1)
    back = np.from_dlpack(p)
    assert back.dtype == np.float16 and back.ctypes.data == h.ctypes.data
    porta.fill(p, 1.5)  # one buffer: NumPy sees porta's writes
    assert (h == 1.5).all() and (back == 1.5).all()
    assert porta.asarray(h).data_ptr == h.ctypes.data  # asarray shares through DLPack
    a = on("cpu", random16((3,), "float16", fresh), "float16")
    n = np.from_dlpack(a)
    assert n.dtype == np.float16 and n.ctypes.data == a.data_ptr


@pytest.mark.parametrize("dtype", HALF)
def test_dlpack_capsules(dtype, fresh):
    bits = random16((3, 4), dtype, fresh)
    a = on("cpu", bits, dtype)
    code = {"float16": 2, "bfloat16": 4}[dtype]  # kDLFloat, kDLBfloat
    assert dl_dtype(a.__dlpack__(), False) == (code, 16, 1)
    assert dl_dtype(a.__dlpack__(max_version=(1, 0)), True) == (code, 16, 1)
    for cap in (a.__dlpack__(), a.__dlpack__(max_version=(1, 0))):  # porta reads its own capsules
        b = porta.from_dlpack(cap)
        assert b.dtype == dtype and b.data_ptr == a.data_ptr and b.borrowed
    c = porta.from_dlpack(a.__dlpack__(), copy=True)
    assert c.data_ptr != a.data_ptr
    assert_bits(c, bits, dtype)
    assert porta.asarray(a) is a
    assert porta.asarray(Producer(a)).data_ptr == a.data_ptr
    if dtype == "bfloat16":  # no host buffer to copy from: a copy through DLPack
        d = porta.array(Producer(a), device="cpu:strict" if "cpu:strict" in DEVICES else "cpu")
        assert d.dtype == dtype and d.data_ptr != a.data_ptr
        assert_bits(d, bits, dtype)
        assert porta.array(Producer(a), dtype="float32").numpy().tolist() == widen(bits, dtype).tolist()


def _torch_devices():
    torch = pytest.importorskip("torch")
    devs = ["cpu"]
    if porta.default_device().type == "cuda" and torch.cuda.is_available():
        devs.append("cuda")
    return torch, devs


@pytest.mark.parametrize("dtype", HALF)
def test_dlpack_with_torch(dtype, fresh):
    torch, devs = _torch_devices()
    tdt = getattr(torch, dtype)
    assert porta.zeros(2, dtype=tdt).dtype == dtype
    for dev in devs:
        bits = random16((5, 7), dtype, fresh)
        t = torch.from_numpy(bits.astype(np.int16)).view(tdt).to(dev)
        p = porta.from_dlpack(t)
        assert p.dtype == dtype and p.data_ptr == t.data_ptr()
        assert_bits(p, bits, dtype)
        assert porta.asarray(t).data_ptr == t.data_ptr()
        if dev == "cpu":  # a copy through the host (bfloat16: through DLPack)
            copied = porta.array(t)
            assert copied.dtype == dtype and copied.data_ptr != t.data_ptr()
            assert_bits(copied, bits, dtype)
        back = torch.from_dlpack(p)
        assert back.dtype == tdt and back.data_ptr() == t.data_ptr()
        # a map against torch's own: the float product rounded once
        s = scalar16(fresh.uniform(0.5, 2), dtype)
        want = (t.float() * s).to(tdt)
        got = torch.from_dlpack(p * s)
        assert torch.equal(got.view(torch.int16), want.view(torch.int16))
        u = torch.from_dlpack(porta.full((2, 2), 2.5, dtype=dtype, device=str(p.device)))
        assert u.dtype == tdt and (u.float() == 2.5).all()


def test_cuda_array_interface():
    d = porta.default_device()
    if d.type != "cuda":
        with pytest.raises(AttributeError, match="only CUDA arrays"):
            porta.zeros(2, dtype="float16").__cuda_array_interface__
        pytest.skip("__cuda_array_interface__ is for CUDA arrays; the default device is %s" % d)
    h = porta.zeros((2, 3), dtype="float16", device=d)
    cai = h.__cuda_array_interface__
    assert cai["typestr"] == "<f2" and cai["shape"] == (2, 3) and cai["data"][0] == h.data_ptr
    b = porta.zeros((2, 3), dtype="bfloat16", device=d)
    assert not hasattr(b, "__cuda_array_interface__")  # a consumer moves on to DLPack
    with pytest.raises(AttributeError, match="no typestr for bfloat16.*DLPack"):
        b.__cuda_array_interface__


# ---- maps ---------------------------------------------------------------------------------------

BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "minimum": np.minimum,
          "maximum": np.maximum}


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_maps(op, dtype, device, fresh):
    f, npf = getattr(porta, op), BINARY[op]
    ba, bb = random16((5, 7), dtype, fresh), random16((5, 7), dtype, fresh)
    a, b = on(device, ba, dtype), on(device, bb, dtype)
    A, B = widen(ba, dtype), widen(bb, dtype)
    assert_bits(f(a, b), round16(npf(A, B), dtype), dtype)
    s = float(np.float32(fresh.uniform(0.5, 3)))  # a fresh Python float, as the array's dtype holds it
    s16 = np.float32(scalar16(s, dtype))
    assert_bits(f(a, s), round16(npf(A, s16), dtype), dtype)
    assert_bits(f(s, a), round16(npf(s16, A), dtype), dtype)
    assert_bits(f(a, 3), round16(npf(A, np.float32(3)), dtype), dtype)
    assert_bits(f(a, np.float16(0.5)), round16(npf(A, np.float32(0.5)), dtype), dtype)  # a NumPy scalar
    out = porta.empty((5, 7), dtype=dtype, device=device)
    assert f(a, b, out=out) is out
    assert_bits(out, round16(npf(A, B), dtype), dtype)
    # broadcasting a row and a column over a 2-D array
    row, col = random16((7,), dtype, fresh), random16((5, 1), dtype, fresh)
    assert_bits(f(a, on(device, row, dtype)), round16(npf(A, widen(row, dtype)), dtype), dtype)
    assert_bits(f(a, on(device, col, dtype)), round16(npf(A, widen(col, dtype)), dtype), dtype)


@pytest.mark.parametrize("dtype", HALF)
def test_operators_and_axpy(dtype, device, fresh):
    bx = random16((6, 3), dtype, fresh)
    x, X = on(device, bx, dtype), widen(bx, dtype)

    def r(v):  # one rounding to dtype, as float32 values
        return widen(round16(v, dtype), dtype)

    f32 = np.float32
    assert_bits(x * 2.5 + 1, round16(r(X * f32(2.5)) + f32(1), dtype), dtype)
    assert_bits(1.5 - x, round16(f32(1.5) - X, dtype), dtype)
    assert_bits(3 / x, round16(f32(3) / X, dtype), dtype)
    assert_bits(-x, round16(-X, dtype), dtype)
    assert_bits(x * x, round16(X * X, dtype), dtype)
    y = x.clone()
    addr = y.data_ptr
    y += x
    y *= 0.75
    y -= 2
    y /= 3
    assert y.data_ptr == addr
    assert_bits(y, round16(r(r(r(X + X) * f32(0.75)) - f32(2)) / f32(3), dtype), dtype)
    alpha = scalar16(fresh.uniform(-2, 2), dtype)
    bz = random16((6, 3), dtype, fresh)
    z = on(device, bz, dtype)
    porta.axpy(alpha, x, z)  # alpha x + y in float, rounded once
    assert_bits(z, round16(f32(alpha) * X + widen(bz, dtype), dtype), dtype)
    bg = random16((6, 3), dtype, fresh)
    assert_bits(porta.relu_grad(on(device, bg, dtype), x), round16(np.where(X > 0, widen(bg, dtype), 0), dtype), dtype)


EXACT_UNARY = {"neg": np.negative, "abs": np.abs, "sqrt": lambda v: np.sqrt(np.abs(v)), "square": np.square,
               "relu": lambda v: np.maximum(v, np.float32(0))}
FUNCTIONS = {"exp": np.exp, "log": lambda v: np.log(np.abs(v)), "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
             "sigmoid": lambda v: 1 / (1 + np.exp(-v))}


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("op", sorted(EXACT_UNARY))
def test_unary_maps(op, dtype, device, fresh):
    bits = random16((4, 9), dtype, fresh)
    x = on(device, bits, dtype)
    if op in ("sqrt",):
        x = porta.abs(x)
    want = round16(EXACT_UNARY[op](widen(bits, dtype)), dtype)
    assert_bits(getattr(porta, op)(x), want, dtype)
    out = porta.empty((4, 9), dtype=dtype, device=device)
    assert getattr(porta, op)(x, out=out) is out
    assert_bits(out, want, dtype)


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("op", sorted(FUNCTIONS) + ["pow"])
def test_functions(op, dtype, device, fresh):
    # porta's float functions are within 1 ulp of float: their 16-bit result is one that a float within
    # 1 ulp of the exact value rounds to (checked against a float64 reference)
    bits = random16((4, 9), dtype, fresh, high=3.0)
    x, X = on(device, bits, dtype), widen(bits, dtype).astype(np.float64)
    if op == "pow":
        e = scalar16(fresh.uniform(-2, 2), dtype)
        assert_faithful(porta.abs(x) ** e, np.abs(X) ** e, dtype)
        bexp = random16((4, 9), dtype, fresh, high=2.0)
        assert_faithful(porta.pow(porta.abs(x), on(device, bexp, dtype)),
                        np.abs(X) ** widen(bexp, dtype).astype(np.float64), dtype)
        return
    arg = porta.abs(x) if op == "log" else x
    assert_faithful(getattr(porta, op)(arg), FUNCTIONS[op](X), dtype)


# ---- reductions ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("shape", [(1,), (1000,), (37, 61), (3, 4, 5)])
def test_reductions(dtype, shape, device, fresh):
    bits = random16(shape, dtype, fresh, high=1.2)
    x, X = on(device, bits, dtype), widen(bits, dtype)
    x32 = x.astype("float32")
    n = X.size

    def once(v):  # a float32 result rounded once to dtype, as a Python float
        return float(widen(round16(np.float32(v), dtype), dtype))

    # accumulated in float and rounded once: the float32 reduction of the widened values, rounded
    s = porta.sum(x)
    assert isinstance(s, float) and s == once(porta.sum(x32)) and x.sum() == s
    exact = X.astype(np.float64).sum()
    assert abs(s - exact) <= EPS[dtype] * abs(exact) + tolerance("float32", n) * np.abs(X).sum()
    m = porta.mean(x)
    assert isinstance(m, float) and m == porta.mean(x32)  # the float mean, not rounded to 16 bits
    np.testing.assert_allclose(m, X.astype(np.float64).mean(), rtol=0, atol=tolerance("float32", n) * 2)
    assert porta.min(x) == float(X.min()) and porta.max(x) == float(X.max())
    if n <= 64:
        p = porta.prod(x)
        assert p == once(porta.prod(x32))
    flat = x.reshape(-1)
    by = random16((n,), dtype, fresh)
    y = on(device, by, dtype)
    d = porta.dot(flat, y)
    assert isinstance(d, float) and d == once(porta.dot(flat.astype("float32"), y.astype("float32")))
    assert porta.vdot(flat, y) == d
    exact = np.dot(X.reshape(-1).astype(np.float64), widen(by, dtype).astype(np.float64))
    assert abs(d - exact) <= EPS[dtype] * abs(exact) + tolerance("float32", n) * np.abs(X).sum() * 2
    nrm = porta.norm2(x)
    assert isinstance(nrm, float) and nrm == once(porta.norm2(x32))
    np.testing.assert_allclose(nrm, np.linalg.norm(X.reshape(-1).astype(np.float64)), rtol=EPS[dtype])
    for axis in range(-len(shape), len(shape)):
        assert_bits(porta.sum(x, axis), round16(porta.sum(x32, axis).numpy(), dtype), dtype)
        assert_bits(porta.mean(x, axis), round16(porta.mean(x32, axis).numpy(), dtype), dtype)
        assert_bits(porta.min(x, axis), round16(X.min(axis=axis), dtype), dtype)
        assert_bits(x.max(axis), round16(X.max(axis=axis), dtype), dtype)
        if shape[axis] <= 64:
            assert_bits(porta.prod(x, axis), round16(porta.prod(x32, axis).numpy(), dtype), dtype)


@pytest.mark.parametrize("dtype", HALF)
def test_sums_accumulate_in_float(dtype, device):
    # 16-bit running sums would stop at 2048 (float16) and 256 (bfloat16)
    n = {"float16": 5000, "bfloat16": 1000}[dtype]
    ones = porta.ones(n, dtype=dtype, device=device)
    assert porta.sum(ones) == float(n) and porta.mean(ones) == 1.0
    assert porta.dot(ones, ones) == float(n)
    assert porta.sum(porta.ones((3, n), dtype=dtype, device=device), 1).tolist() == [float(n)] * 3
    assert porta.sum(porta.empty(0, dtype=dtype, device=device)) == 0.0
    with pytest.raises(porta.InvalidArgument, match="empty"):
        porta.min(porta.empty(0, dtype=dtype, device=device))


# ---- casts, scalars, fill, ranges ---------------------------------------------------------------

@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("other", OTHERS + HALF)
def test_casts(dtype, other, device, fresh):
    bits = round16(fresh.uniform(0.25, 2, size=(4, 6)) * fresh.choice([-20, 20], size=(4, 6)), dtype)
    x, X = on(device, bits, dtype), widen(bits, dtype)
    c = x.astype(other)
    assert c.dtype == other
    if other in HALF:
        assert_bits(c, round16(X, other), other)  # exact widening, then one rounding
    else:
        np.testing.assert_array_equal(c.numpy(), X.astype(other))  # truncated toward zero for integers
    # and to 16 bits from the other dtype, rounded once from its own values
    if other in HALF:
        return
    if other.startswith("int"):
        o = fresh.integers(-3000, 3000, size=(4, 6)).astype(other)
    else:
        o = (fresh.uniform(0.25, 2, size=(4, 6)) * fresh.choice([-20, 20], size=(4, 6))).astype(other)
        if other.startswith("complex"):
            o = o + 1j * fresh.uniform(1, 2, size=(4, 6))  # dropped, as NumPy's cast drops it
    back = porta.cast(porta.array(o, device=device), dtype)
    real = np.real(o).astype(np.float64)
    want = real.astype(np.float16).view(np.uint16) if dtype == "float16" else f64_to_bf16(real)
    assert_bits(back, want, dtype)


@pytest.mark.parametrize("dtype", HALF)
def test_scalars_and_fill(dtype, device, fresh):
    v = float(np.float32(fresh.uniform(-3, 3)))
    w = scalar16(v, dtype)
    assert porta.full((2, 3), v, dtype=dtype, device=device).tolist() == [[w] * 3] * 2
    assert porta.zeros(4, dtype=dtype, device=device).tolist() == [0.0] * 4
    assert porta.ones(4, dtype=dtype, device=device).tolist() == [1.0] * 4
    x = porta.empty((5,), dtype=dtype, device=device)
    porta.fill(x, v)
    assert x.tolist() == [w] * 5
    porta.fill(x, 7)
    assert x.tolist() == [7.0] * 5
    porta.fill(x, np.float64(v))
    assert x.tolist() == [w] * 5
    porta.iota(x, 1.5, 0.25)
    assert x.tolist() == [1.5, 1.75, 2.0, 2.25, 2.5]
    assert porta.full(1, v, dtype=dtype, device=device).item() == w
    assert porta.array(v, dtype=dtype, device=device).item() == w


@pytest.mark.parametrize("dtype", HALF)
def test_arange(dtype, device):
    r = porta.arange(0, 2, 0.25, dtype=dtype, device=device)
    assert r.dtype == dtype and r.tolist() == [i * 0.25 for i in range(8)]
    assert porta.arange(5, dtype=dtype, device=device).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert porta.arange(1, 0, -0.125, dtype=dtype, device=device).tolist() == [1 - i * 0.125 for i in range(8)]
    assert porta.arange(3, 3, dtype=dtype, device=device).shape == (0,)
    with pytest.raises(porta.InvalidArgument, match="step is zero"):
        porta.arange(0, 1, 0.0, dtype=dtype)
    with pytest.raises(porta.InvalidArgument, match="NaN"):
        porta.arange(0, float("nan"), 1, dtype=dtype)


# ---- matmul --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("algorithm", ["vendor", "own"])
def test_matmul_and_gemm(device, dtype, algorithm, fresh):
    ba, bb, bx = (random16(s, dtype, fresh) for s in [(13, 40), (40, 9), (40,)])
    a, b, x = on(device, ba, dtype), on(device, bb, dtype), on(device, bx, dtype)
    A, B, Xv = (widen(v, dtype).astype(np.float64) for v in (ba, bb, bx))

    def check(got, want, scale):
        # accumulated in float, rounded once to 16 bits
        assert got.dtype == dtype and got.shape == want.shape
        g = widen(bits_of(got), dtype).astype(np.float64)
        assert np.all(np.abs(g - want) <= EPS[dtype] * np.abs(want) + 8 * tolerance("float32", 40) * scale)

    check(porta.matmul(a, b, algorithm=algorithm), A @ B, np.abs(A) @ np.abs(B))
    check(a @ b, A @ B, np.abs(A) @ np.abs(B))
    check(porta.matmul(a, x, algorithm=algorithm), A @ Xv, np.abs(A) @ np.abs(Xv))
    bc = random16((40, 40), dtype, fresh)
    c = on(device, bc, dtype)
    alpha, beta = 0.5, -0.25
    porta.gemm(alpha, a, a, beta, c, trans_a=True, algorithm=algorithm)
    C = widen(bc, dtype).astype(np.float64)
    check(c, alpha * (A.T @ A) + beta * C, alpha * (np.abs(A).T @ np.abs(A)) + abs(beta) * np.abs(C))


# ---- what the 16-bit floats do not have ---------------------------------------------------------

@pytest.mark.parametrize("dtype", HALF)
def test_refusals(dtype):
    x = porta.ones((2, 2), dtype=dtype)
    not_defined = "not defined for %s" % dtype
    for f in (porta.linalg.inv, porta.linalg.cholesky, lambda a: porta.linalg.solve(a, a)):
        with pytest.raises(porta.Unavailable, match=not_defined + ".*astype\\('float32'\\)"):
            f(x)
    for f in (porta.fft.fft, porta.fft.rfft, porta.fft.fft2):
        with pytest.raises(porta.Unavailable, match=not_defined):
            f(x)
    with pytest.raises(porta.Unavailable, match=not_defined):
        porta.sparse.csr_matrix((porta.ones(2, dtype=dtype), porta.arange(2), porta.arange(3)))
    with pytest.raises(porta.Unavailable, match=not_defined):
        porta.sparse.csr_matrix(porta.ones((2, 2), dtype=dtype))
    # no complex form of 16 bits: complex numbers are refused, not cut to their real part
    with pytest.raises(porta.InvalidArgument, match="is complex and the array is %s.*astype\\('complex64'\\)" % dtype):
        x + 1j
    with pytest.raises(porta.InvalidArgument, match="is complex"):
        porta.full(2, 1j, dtype=dtype)
    with pytest.raises(porta.InvalidArgument, match="float32 or float64"):
        porta.view_as_complex(porta.ones((3, 2), dtype=dtype))
    with pytest.raises(porta.InvalidArgument, match="float32 or float64"):
        porta.make_complex(x, x)
    # porta does not promote, also between the two 16-bit formats
    other = "bfloat16" if dtype == "float16" else "float16"
    for y in (porta.ones((2, 2), dtype=other), porta.ones((2, 2), dtype="float32")):
        with pytest.raises(porta.InvalidArgument, match="does not promote"):
            porta.add(x, y)
