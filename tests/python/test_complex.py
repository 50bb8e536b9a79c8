# SPDX-License-Identifier: Apache-2.0
# complex64 and complex128 arrays from Python, against NumPy: dtype names, copies to and from
# NumPy, the buffer protocol and DLPack both ways (the dtype a consumer reads is DLPack's complex
# code), the maps and reductions porta defines for complex numbers, casts between complex and real
# or integer arrays, Python complex numbers as operands and fill values, and the TypeError of the
# operations complex numbers do not have (an order, or no complex form in porta).
# References are computed in complex128 from the same inputs; each case runs on the CPU, on
# cpu:strict (memory the host cannot touch, as a GPU's) and on the default GPU if there is one.

import numpy as np
import pytest
from conftest import COMPLEX, DEVICES, dl_dtype, random_host, tolerance

import porta

REAL_OF = {"complex64": "float32", "complex128": "float64"}
# Elementwise results against a complex128 reference: a few roundings of the dtype's precision.
RTOL = {"complex64": 1e-6, "complex128": 1e-14}


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


def on(device, h):
    return porta.array(h, device=device)


def ref(h):
    return np.asarray(h, dtype=np.complex128)


def check(x, want, dtype, rtol=None, atol=0.0):
    """x (a porta.Array) has dtype and want's values, relative to the complex modulus."""
    assert isinstance(x, porta.Array) and x.dtype == dtype
    got = x.numpy()
    assert got.dtype == np.dtype(dtype) and got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=RTOL[dtype] if rtol is None else rtol, atol=atol)


# ---- dtypes and copies ------------------------------------------------------------------------------

def test_dtype_names():
    assert porta.complex64 == "complex64" and porta.complex128 == "complex128"
    assert porta.complex64 in porta.dtypes and porta.complex128 in porta.dtypes
    for spelling, name in [(porta.complex64, "complex64"), (np.complex64, "complex64"), (np.dtype("c8"), "complex64"),
                           ("c8", "complex64"), ("csingle", "complex64"), (porta.complex128, "complex128"),
                           (np.complex128, "complex128"), (np.dtype("c16"), "complex128"), (complex, "complex128"),
                           ("cdouble", "complex128")]:
        z = porta.zeros(3, dtype=spelling)
        assert z.dtype == name and z.itemsize == np.dtype(name).itemsize and z.nbytes == 3 * z.itemsize
    assert porta.array([1 + 2j, 3]).dtype == "complex128"  # NumPy's choice for Python complex numbers
    assert porta.array(np.ones(2, np.complex64)).dtype == "complex64"
    assert "complex64" in repr(porta.zeros(1, dtype="complex64"))


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 5), (2, 3, 4), (2, 1, 3, 2), (0,), (4, 0)])
def test_numpy_round_trip(dtype, shape, device, rng):
    h = random_host(shape, dtype, rng)
    a = on(device, h)
    assert a.shape == shape and a.dtype == dtype and a.device == device
    assert a.ndim == len(shape) and a.size == h.size and a.nbytes == h.nbytes and a.itemsize == h.itemsize
    back = a.numpy()
    assert back.dtype == h.dtype
    np.testing.assert_array_equal(back, h)  # bit for bit: both parts, no rounding on the way
    np.testing.assert_array_equal(np.asarray(a.clone()), h)
    np.testing.assert_array_equal(a.to("cpu").numpy(), h)
    np.testing.assert_array_equal(porta.asarray(h, device=device).numpy(), h)
    if h.size == 1:
        v = a.item()
        assert isinstance(v, complex) and v == complex(h.reshape(-1)[0])
    np.testing.assert_array_equal(np.array(a.tolist(), dtype=dtype).reshape(shape), h)
    r = a.reshape(-1)
    assert r.dtype == dtype and r.shape == (h.size,)
    np.testing.assert_array_equal(r.numpy(), h.reshape(-1))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_buffer_protocol(dtype, rng):
    h = random_host((3, 4), dtype, rng)
    a = porta.array(h, device="cpu")
    m = memoryview(a)
    assert m.format == {"complex64": "Zf", "complex128": "Zd"}[dtype] and m.itemsize == h.itemsize
    assert m.shape == (3, 4)
    n = np.asarray(a)  # the same memory, through the buffer protocol
    assert n.dtype == h.dtype and n.ctypes.data == a.data_ptr
    assert n.__array_interface__["typestr"] == {"complex64": "<c8", "complex128": "<c16"}[dtype]
    np.testing.assert_array_equal(n, h)
    # and in: a buffer of complex numbers is copied into a porta array of that dtype
    b = porta.array(memoryview(h))
    assert b.dtype == dtype
    np.testing.assert_array_equal(b.numpy(), h)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_dlpack_both_ways(dtype, rng):
    h = random_host((4, 5), dtype, rng)
    p = porta.from_dlpack(h)
    assert p.dtype == dtype and p.borrowed and p.data_ptr == h.ctypes.data
    np.testing.assert_array_equal(p.numpy(), h)
    # porta's capsules say complex (DLPack's code 5) with the bits of both parts
    bits = 8 * np.dtype(dtype).itemsize
    assert dl_dtype(p.__dlpack__(), False) == (5, bits, 1)
    assert dl_dtype(p.__dlpack__(max_version=(1, 0)), True) == (5, bits, 1)
    back = np.from_dlpack(p)
    assert back.dtype == h.dtype and back.ctypes.data == h.ctypes.data
    np.testing.assert_array_equal(back, h)
    again = porta.from_dlpack(p.__dlpack__(max_version=(1, 0)))  # a bare versioned capsule
    assert again.dtype == dtype and again.data_ptr == p.data_ptr
    porta.fill(p, 1 - 2j)  # one buffer: NumPy sees porta's writes
    assert (h == 1 - 2j).all() and (back == 1 - 2j).all()
    # porta-allocated memory out and in again
    a = porta.array(random_host((3,), dtype, rng), device="cpu")
    n = np.from_dlpack(a)
    assert n.dtype == np.dtype(dtype) and n.ctypes.data == a.data_ptr
    assert porta.from_dlpack(np.frombuffer(memoryview(a), dtype=dtype)).data_ptr == a.data_ptr


def test_cuda_array_interface_typestr():
    d = porta.default_device()
    if d.type != "cuda":
        pytest.skip("__cuda_array_interface__ is for CUDA arrays; the default device is %s" % d)
    for dtype, typestr in [("complex64", "<c8"), ("complex128", "<c16")]:
        z = porta.zeros((2, 3), dtype=dtype, device=d)
        cai = z.__cuda_array_interface__
        assert cai["typestr"] == typestr and cai["shape"] == (2, 3) and cai["data"][0] == z.data_ptr


# ---- maps ---------------------------------------------------------------------------------------

BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_maps(op, dtype, device, rng):
    f, npf = getattr(porta, op), BINARY[op]
    ha, hb = random_host((5, 7), dtype, rng), random_host((5, 7), dtype, rng)
    a, b = on(device, ha), on(device, hb)
    check(f(a, b), npf(ref(ha), ref(hb)), dtype)
    s = complex(rng.uniform(0.5, 2), rng.uniform(-2, -0.5))  # a fresh Python complex number
    sd = ref(np.asarray(s, dtype=dtype))  # the scalar as the array's dtype holds it
    check(f(a, s), npf(ref(ha), sd), dtype)
    check(f(s, a), npf(sd, ref(ha)), dtype)
    check(f(a, 1.5), npf(ref(ha), 1.5), dtype)  # a real number is (1.5, 0)
    check(f(3, a), npf(3, ref(ha)), dtype)
    check(f(a, np.complex64(s)), npf(ref(ha), ref(np.complex64(s))), dtype)  # a NumPy scalar
    out = porta.empty((5, 7), dtype=dtype, device=device)
    assert f(a, b, out=out) is out
    check(out, npf(ref(ha), ref(hb)), dtype)
    # broadcasting a row and a column over a 2-D array
    row, col = random_host((7,), dtype, rng), random_host((5, 1), dtype, rng)
    check(f(a, on(device, row)), npf(ref(ha), ref(row)), dtype)
    check(f(a, on(device, col)), npf(ref(ha), ref(col)), dtype)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_operators(dtype, device, rng):
    h = random_host((6,), dtype, rng)
    x, r = on(device, h), ref(h)
    check(x * 2 + 1j, r * 2 + 1j, dtype)
    check((1 - 1j) - x, (1 - 1j) - r, dtype)
    check(1j / x, 1j / r, dtype)
    check(-x, -r, dtype)
    check(x * x, r * r, dtype)
    y = x.clone()
    addr = y.data_ptr
    y += x
    y *= 1 + 1j
    y -= 2j
    y /= 2
    assert y.data_ptr == addr
    check(y, ((r + r) * (1 + 1j) - 2j) / 2, dtype)
    z = on(device, h)
    porta.axpy(2 - 1j, x, z)
    check(z, (2 - 1j) * r + r, dtype)
    porta.copy(x, z)
    np.testing.assert_array_equal(z.numpy(), h)


UNARY = {"neg": np.negative, "sqrt": np.sqrt, "exp": np.exp, "log": np.log, "square": np.square,
         "conj": np.conj}


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_maps(op, dtype, device, rng):
    h = random_host((4, 9), dtype, rng)
    x = on(device, h)
    check(getattr(porta, op)(x), UNARY[op](ref(h)), dtype)
    out = porta.empty((4, 9), dtype=dtype, device=device)
    assert getattr(porta, op)(x, out=out) is out
    check(out, UNARY[op](ref(h)), dtype)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_abs_real_imag_conj(dtype, device, rng):
    h = random_host((3, 7), dtype, rng)
    x, r, real = on(device, h), ref(h), REAL_OF[dtype]
    m = porta.abs(x)
    assert m.dtype == real and m.shape == h.shape  # |z| is real, as numpy.abs
    np.testing.assert_allclose(m.numpy(), np.abs(r), rtol=RTOL[dtype])
    assert abs(x).dtype == real
    out = porta.empty((3, 7), dtype=real, device=device)
    assert porta.abs(x, out=out) is out
    np.testing.assert_allclose(out.numpy(), np.abs(r), rtol=RTOL[dtype])
    with pytest.raises(porta.InvalidArgument, match="out is " + dtype):
        porta.abs(x, out=porta.empty((3, 7), dtype=dtype, device=device))
    for part, want in [(porta.real(x), h.real), (porta.imag(x), h.imag), (x.real, h.real), (x.imag, h.imag)]:
        assert part.dtype == real and part.shape == h.shape
        np.testing.assert_array_equal(part.numpy(), want)  # exact: a part is copied, not computed
    np.testing.assert_array_equal(porta.conj(x).numpy(), np.conj(h))
    np.testing.assert_array_equal(x.conj().numpy(), np.conj(h))
    np.testing.assert_array_equal(x.conjugate().numpy(), np.conj(h))
    # of a real array: itself, zeros, itself, as NumPy's
    f = random_host((5,), real, rng)
    fx = on(device, f)
    np.testing.assert_array_equal(porta.real(fx).numpy(), f)
    np.testing.assert_array_equal(porta.imag(fx).numpy(), np.zeros(5, real))
    np.testing.assert_array_equal(porta.conj(fx).numpy(), f)
    assert porta.imag(fx).dtype == real


# ---- reductions ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("shape", [(1,), (1000,), (37, 61), (3, 4, 5)])
def test_reductions(dtype, shape, device, rng):
    h = random_host(shape, dtype, rng, high=1.2)
    x, r = on(device, h), ref(h)
    n = h.size
    rtol = tolerance(dtype, n)
    s = porta.sum(x)
    assert isinstance(s, complex)
    np.testing.assert_allclose(s, r.sum(), rtol=rtol, atol=rtol * np.abs(r).sum())
    assert x.sum() == s
    m = porta.mean(x)
    assert isinstance(m, complex)
    np.testing.assert_allclose(m, r.mean(), rtol=rtol, atol=rtol * np.abs(r).mean())
    if n <= 64:
        np.testing.assert_allclose(porta.prod(x), np.prod(r), rtol=8 * n * tolerance(dtype))
    flat = x.reshape(-1)
    y = on(device, random_host((n,), dtype, rng))
    ry = ref(y.numpy())
    d = porta.dot(flat, y)  # no conjugation, as numpy.dot
    assert isinstance(d, complex)
    np.testing.assert_allclose(d, np.dot(r.reshape(-1), ry), rtol=rtol, atol=rtol * np.abs(r).sum() * 2)
    v = porta.vdot(flat, y)  # conj(x) . y, as numpy.vdot
    np.testing.assert_allclose(v, np.vdot(r.reshape(-1), ry), rtol=rtol, atol=rtol * np.abs(r).sum() * 2)
    sq = porta.vdot(flat, flat)
    assert abs(sq.imag) <= rtol * sq.real
    np.testing.assert_allclose(sq.real, np.vdot(r, r).real, rtol=rtol)
    nrm = porta.norm2(x)
    assert isinstance(nrm, float)
    np.testing.assert_allclose(nrm, np.linalg.norm(r.reshape(-1)), rtol=rtol)
    for axis in range(-len(shape), len(shape)):
        got = porta.sum(x, axis)
        assert got.dtype == dtype
        np.testing.assert_allclose(got.numpy(), r.sum(axis=axis), rtol=rtol, atol=rtol * np.abs(r).sum())
        np.testing.assert_allclose(porta.mean(x, axis).numpy(), r.mean(axis=axis), rtol=rtol, atol=rtol)
        if h.shape[axis] <= 64:
            np.testing.assert_allclose(porta.prod(x, axis).numpy(), np.prod(r, axis=axis),
                                       rtol=8 * h.shape[axis] * tolerance(dtype))


def test_vdot_of_real_arrays_is_dot(rng):
    h, g = random_host((50,), "float64", rng), random_host((50,), "float64", rng)
    v = porta.vdot(porta.array(h), porta.array(g))
    assert isinstance(v, float)
    np.testing.assert_allclose(v, np.vdot(h, g), rtol=1e-14)


# ---- casts, scalars, fill -----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("other", ["float32", "float64", "int32", "int64", "complex64", "complex128"])
def test_casts(dtype, other, device, rng):
    h = random_host((4, 6), dtype, rng) * 20  # integers of a few tens after truncation
    x = on(device, h)
    c = x.astype(other)
    assert c.dtype == other
    if other.startswith("complex"):
        np.testing.assert_array_equal(c.numpy(), h.astype(other))
    else:
        # NumPy's cast of complex to real: the real part (truncated toward zero for integers)
        np.testing.assert_array_equal(c.numpy(), h.real.astype(other))
    # and back: a real or integer array becomes (x, 0)
    o = random_host((4, 6), other, rng)
    back = porta.cast(on(device, o), dtype)
    assert back.dtype == dtype
    np.testing.assert_array_equal(back.numpy(), o.astype(dtype))
    if not other.startswith("complex"):
        assert (back.numpy().imag == 0).all()


@pytest.mark.parametrize("dtype", COMPLEX)
def test_scalars_and_fill(dtype, device, rng):
    v = complex(rng.uniform(-3, 3), rng.uniform(-3, 3))
    want = np.asarray(v, dtype=dtype)
    np.testing.assert_array_equal(porta.full((2, 3), v, dtype=dtype, device=device).numpy(), np.full((2, 3), want))
    np.testing.assert_array_equal(porta.zeros(4, dtype=dtype, device=device).numpy(), np.zeros(4, dtype))
    np.testing.assert_array_equal(porta.ones(4, dtype=dtype, device=device).numpy(), np.ones(4, dtype))
    x = porta.empty((5,), dtype=dtype, device=device)
    porta.fill(x, v)
    np.testing.assert_array_equal(x.numpy(), np.full(5, want))
    porta.fill(x, 2.5)  # a real value is (2.5, 0)
    np.testing.assert_array_equal(x.numpy(), np.full(5, 2.5, dtype))
    porta.fill(x, np.complex128(v))
    np.testing.assert_array_equal(x.numpy(), np.full(5, want))
    if dtype == "complex64":  # a double beyond float's range rounds to infinity, as NumPy's cast
        porta.fill(x, complex(1e300, -1e300))
        assert (x.numpy().real == np.inf).all() and (x.numpy().imag == -np.inf).all()


def test_complex_scalar_with_real_array_is_refused():
    # porta does not promote: a complex number would otherwise lose its imaginary part
    for dtype, hint in [("float32", "complex64"), ("float64", "complex128"), ("int32", "complex128"),
                        ("int64", "complex128")]:
        x = porta.ones(3, dtype=dtype)
        with pytest.raises(porta.InvalidArgument, match="is complex and the array is %s.*astype\\('%s'\\)" % (dtype,
                                                                                                            hint)):
            x + 1j
        with pytest.raises(porta.InvalidArgument, match="is complex"):
            porta.mul(np.complex64(1 + 1j), x)
        with pytest.raises(porta.InvalidArgument, match="is complex"):
            porta.fill(x, 2j)
        with pytest.raises(porta.InvalidArgument, match="is complex"):
            porta.full(2, 1j, dtype=dtype)
    with pytest.raises(porta.InvalidArgument, match="does not promote"):
        porta.add(porta.ones(3, dtype="complex64"), porta.ones(3, dtype="complex128"))
    with pytest.raises(porta.InvalidArgument, match="does not promote"):
        porta.add(porta.ones(3, dtype="complex64"), porta.ones(3, dtype="float32"))


# ---- matmul --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("algorithm", ["vendor", "own"])
def test_matmul_and_gemm(device, dtype, algorithm):
    rng = np.random.default_rng()
    ha, hb, hx = (random_host(s, dtype, rng) for s in [(13, 40), (40, 9), (40,)])
    a, b, x = on(device, ha), on(device, hb), on(device, hx)
    # relative to the product of the magnitudes: sums of k terms of both signs
    scale = np.abs(ref(ha)) @ np.abs(ref(hb))
    got = porta.matmul(a, b, algorithm=algorithm)
    assert got.dtype == dtype and got.shape == (13, 9)
    assert np.all(np.abs(got.numpy() - ref(ha) @ ref(hb)) <= 8 * tolerance(dtype, 40) * scale)
    assert np.allclose((a @ b).numpy(), ref(ha) @ ref(hb), rtol=50 * RTOL[dtype])
    assert np.allclose(porta.matmul(a, x).numpy(), ref(ha) @ ref(hx), rtol=50 * RTOL[dtype])
    # c = alpha a^T b + beta c with complex scalars, in place
    hc = random_host((40, 40), dtype, rng)
    c = on(device, hc)
    alpha, beta = 0.5 - 1.5j, -0.25 + 2j
    porta.gemm(alpha, a, a, beta, c, trans_a=True, algorithm=algorithm)
    want = alpha * (ref(ha).T @ ref(ha)) + beta * ref(hc)
    np.testing.assert_allclose(c.numpy(), want, rtol=0, atol=64 * tolerance(dtype, 13) * np.max(np.abs(want)))


# ---- views of the pairs ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", COMPLEX)
def test_view_as_real_and_complex(device, dtype):
    rng = np.random.default_rng()
    h = random_host((3, 4), dtype, rng)
    z = on(device, h)
    r = porta.view_as_real(z)
    assert r.dtype == REAL_OF[dtype] and r.shape == (3, 4, 2)
    np.testing.assert_array_equal(r.numpy(), np.ascontiguousarray(h).view(REAL_OF[dtype]).reshape(3, 4, 2))
    porta.fill(r, 5)  # a view: z changes
    np.testing.assert_array_equal(z.numpy(), np.full((3, 4), 5 + 5j, dtype=dtype))
    back = porta.view_as_complex(r)
    assert back.dtype == dtype and back.shape == (3, 4)
    re, im = random_host((6,), REAL_OF[dtype], rng), random_host((6,), REAL_OF[dtype], rng)
    w = porta.make_complex(on(device, re), on(device, im))
    assert w.dtype == dtype
    np.testing.assert_array_equal(w.numpy(), (re + 1j * im).astype(dtype))
    with pytest.raises(porta.InvalidArgument, match="complex64 or complex128"):
        porta.view_as_real(r)
    with pytest.raises(porta.InvalidArgument, match="last axis of 2"):
        porta.view_as_complex(on(device, np.ones((2, 3), REAL_OF[dtype])))


# ---- Fourier transforms ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", COMPLEX)
def test_fft_of_complex_arrays(device, dtype):
    rng = np.random.default_rng()
    h = random_host((5, 12), dtype, rng)
    x = on(device, h)
    scale = np.sum(np.abs(ref(h)), axis=-1, keepdims=True)
    tol = 16 * np.finfo(REAL_OF[dtype]).eps
    for f, want in [(porta.fft.fft, np.fft.fft(ref(h))), (porta.fft.ifft, np.fft.ifft(ref(h)) * 12),
                    (porta.fft.fft2, np.fft.fft2(ref(h))), (porta.fft.ifftn, np.fft.ifftn(ref(h)) * 60)]:
        y = f(x) if f not in (porta.fft.ifft, porta.fft.ifftn) else f(x, norm="forward")
        assert y.dtype == dtype and y.shape == want.shape
        bound = tol * (scale if f in (porta.fft.fft, porta.fft.ifft) else np.sum(np.abs(ref(h))))
        assert np.all(np.abs(y.numpy() - want) <= bound), f.__name__
    # the same bits as the pair form of the same values
    pairs = porta.array(np.ascontiguousarray(h).view(REAL_OF[dtype]).reshape(5, 12, 2), device=device)
    got = porta.fft.fft(x, axis=0).numpy()
    assert np.array_equal(got.view(REAL_OF[dtype]).reshape(5, 12, 2), porta.fft.fft(pairs, axis=0).numpy())
    # irfft of a complex half spectrum is real
    half = on(device, np.fft.rfft(np.real(ref(h))).astype(dtype))
    back = porta.fft.irfft(half, n=12)
    assert back.dtype == REAL_OF[dtype] and back.shape == (5, 12)
    np.testing.assert_allclose(back.numpy(), np.real(ref(h)), rtol=0, atol=tol * 24)


# ---- what complex numbers do not have -----------------------------------------------------------

@pytest.mark.parametrize("dtype", COMPLEX)
def test_operations_complex_does_not_have(dtype):
    x = porta.ones((2, 3), dtype=dtype)
    order = "complex numbers have no order"
    for f in (porta.min, porta.max, lambda x: porta.min(x, 0), lambda x: porta.max(x, 1), lambda x: x.max(),
              porta.relu):
        with pytest.raises(TypeError, match="not defined for %s \\(%s\\)" % (dtype, order)):
            f(x)
    for f in (porta.minimum, porta.maximum, porta.relu_grad):
        with pytest.raises(TypeError, match=order):
            f(x, x)
    for f in (porta.sin, porta.cos, porta.tanh, porta.sigmoid, porta.iota):
        with pytest.raises(TypeError, match="not defined for %s .*no complex form" % dtype):
            f(x)
    with pytest.raises(TypeError, match="porta.pow: not defined"):
        x ** 2
    # arange makes ordered ranges: real and integer dtypes only
    with pytest.raises(porta.InvalidArgument, match="arange: dtype %s is not supported" % dtype):
        porta.arange(3, dtype=dtype)
    # the submodules that take real arrays only say so, without a hint that would drop the imaginary part
    with pytest.raises(porta.InvalidArgument, match="no complex"):
        porta.linalg.inv(porta.ones((2, 2), dtype=dtype))
    with pytest.raises(porta.InvalidArgument, match="takes a real array"):
        porta.fft.rfft(porta.ones((4,), dtype=dtype))
    with pytest.raises(TypeError, match="float32 or float64"):
        porta.sparse.csr_matrix((porta.ones(2, dtype=dtype), porta.arange(2), porta.arange(3)))
    with pytest.raises(porta.InvalidArgument):
        porta.sparse.csr_matrix((2, 2), dtype=dtype)
