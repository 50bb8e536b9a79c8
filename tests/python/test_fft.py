# SPDX-License-Identifier: Apache-2.0
# porta.fft against numpy.fft on random signals: lengths with every kind of factor (1, powers of two,
# small and large primes, 4099 for Bluestein), batches, every axis, every norm, 2-D and 3-D
# transforms over chosen axes, irfft's cropping and zero-padding. A complex porta array is a float
# array whose last axis of 2 is (real, imaginary); the results are compared with NumPy's complex128
# ones computed from the same (rounded) inputs, norm-wise relative to the data. Errors: porta's
# limits (whole axes only, at most 3 axes, no repeated axes) and NumPy's own (a bad norm, no points)
# are porta.InvalidArgument, also a ValueError.
import zlib

import numpy as np
import pytest
from conftest import DEVICES, FLOATS

import porta
import porta.fft
from porta.fft import fft, fft2, fftfreq, fftn, ifft, ifft2, ifftn, irfft, irfft2, irfftn, rfft, rfft2, rfftfreq, rfftn

LENGTHS = [1, 2, 5, 16, 17, 97, 100, 128, 4099]
NORMS = [None, "backward", "ortho", "forward"]


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


def seeded(*key):
    """A generator of its own for each test case, so that a case sees the same signal alone or in a run."""
    return np.random.default_rng([zlib.crc32(repr(k).encode()) for k in ("fft",) + key])


def real_signal(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


def complex_signal(rng, shape, dtype):
    """A complex signal of `shape` as porta lays it out: shape + (2,)."""
    return rng.standard_normal(tuple(shape) + (2,)).astype(dtype)


def as_complex(h):
    """A (..., 2) float array as complex128."""
    h = np.asarray(h, dtype=np.float64)
    return h[..., 0] + 1j * h[..., 1]


def on(device, h):
    return porta.array(h, device=device)


def host(x, dtype, shape):
    """x as a NumPy array, checked for its dtype and shape."""
    assert isinstance(x, porta.Array)
    h = x.numpy()
    assert h.dtype == np.dtype(dtype) and h.shape == tuple(shape), (h.dtype, h.shape, dtype, shape)
    return h.astype(np.float64)


def tol(dtype, n):
    """Norm-wise relative error of a transform of n points: rounding grows as sqrt(log n) on average.
    At least 15 times the largest error porta's CPU FFT shows here, room for cuFFT's other algorithms."""
    return (2e-6 if dtype == "float32" else 1e-14) * np.sqrt(max(1.0, np.log2(max(n, 2))))


def assert_close(got, want, dtype, n):
    """got within tol(dtype, n) of want, relative to want's 2-norm (the data's size, as an FFT's error is)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = np.linalg.norm(want.ravel())
    err = np.linalg.norm((got - want).ravel())
    assert err <= tol(dtype, n) * max(scale, np.finfo(np.float64).tiny), (err, scale, err / max(scale, 1e-300))


def check_complex(x, want, dtype, n):
    """Complex porta result x against NumPy's complex `want`."""
    assert_close(as_complex(host(x, dtype, want.shape + (2,))), want, dtype, n)


def check_real(x, want, dtype, n):
    assert_close(host(x, dtype, want.shape), want, dtype, n)


# ---- names ----------------------------------------------------------------------------------------


def test_import_and_names():
    import porta.fft as pf

    assert pf is porta.fft and porta.fft.fft is fft
    for name in ("fft", "ifft", "rfft", "irfft", "fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2",
                 "irfft2", "fftfreq", "rfftfreq"):
        f = getattr(pf, name)
        assert callable(f) and "numpy.fft." + name in f.__doc__, name


# ---- 1-D ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("norm", NORMS)
def test_fft_ifft(dtype, n, norm, device):
    rng = seeded("fft", dtype, n, norm)
    batch = (3,) if n < 1000 else ()
    h = complex_signal(rng, batch + (n,), dtype)
    z = as_complex(h)
    x = on(device, h)
    check_complex(fft(x, norm=norm), np.fft.fft(z, norm=norm), dtype, n)
    check_complex(ifft(x, norm=norm), np.fft.ifft(z, norm=norm), dtype, n)
    back = ifft(fft(x, norm=norm), norm=norm)
    check_complex(back, z, dtype, n)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("norm", NORMS)
def test_rfft_irfft(dtype, n, norm, device):
    rng = seeded("rfft", dtype, n, norm)
    batch = (2, 3) if n < 1000 else (2,)
    h = real_signal(rng, batch + (n,), dtype)
    X = rfft(on(device, h), norm=norm)
    want = np.fft.rfft(h.astype(np.float64), norm=norm)
    check_complex(X, want, dtype, n)
    check_real(irfft(X, n, norm=norm), h.astype(np.float64), dtype, n)  # back to x
    if n > 1:  # the default length 2 (m - 1), as NumPy's: n itself for even n
        check_real(irfft(X, norm=norm), np.fft.irfft(want, norm=norm), dtype, n)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
def test_axis(dtype, axis, device):
    rng = seeded("axis", dtype, axis)
    shape = (4, 5, 6)
    h = complex_signal(rng, shape, dtype)
    z = as_complex(h)
    n = shape[axis]
    check_complex(fft(on(device, h), axis=axis), np.fft.fft(z, axis=axis), dtype, n)
    check_complex(ifft(on(device, h), None, axis, "ortho"), np.fft.ifft(z, None, axis, "ortho"), dtype, n)
    r = real_signal(rng, shape, dtype)
    want = np.fft.rfft(r.astype(np.float64), axis=axis)
    check_complex(rfft(on(device, r), axis=axis), want, dtype, n)
    check_real(irfft(on(device, np.stack([want.real, want.imag], -1).astype(dtype)), n, axis),
               np.fft.irfft(want, n, axis), dtype, n)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [1, 2, 5, 15, 16, 17, 30, 40])
@pytest.mark.parametrize("norm", NORMS)
def test_irfft_crops_and_pads(dtype, n, norm, device):
    # 9 complex values: n < 16 crops them to n // 2 + 1, n > 17 pads with zeros, as NumPy does.
    rng = seeded("irfft n", dtype, n, norm)
    h = complex_signal(rng, (3, 9), dtype)
    check_real(irfft(on(device, h), n=n, norm=norm), np.fft.irfft(as_complex(h), n=n, norm=norm), dtype, n)


def test_irfft_ignores_imaginary_parts_numpy_ignores(device):
    # The imaginary parts of the zero frequency and (n even) of n / 2 do not reach a real signal.
    rng = seeded("irfft imag")
    h = complex_signal(rng, (9,), "float64")
    for n in (16, 17):
        check_real(irfft(on(device, h), n), np.fft.irfft(as_complex(h), n), "float64", n)


# ---- several axes ---------------------------------------------------------------------------------

ND_CASES = [
    ((8, 6), None),
    ((5, 7), (0, 1)),
    ((5, 7), (1, 0)),
    ((6, 5), (0,)),
    ((4, 5, 6), None),
    ((4, 5, 6), (0, 2)),
    ((4, 5, 6), (2, 0)),
    ((3, 4, 5), (-1, -2)),
    ((3, 4, 5), (1,)),
    ((2, 17, 9), (1, 2)),
    ((16, 12, 10), (0, 1, 2)),
]


def points(shape, axes):
    return int(np.prod([shape[a] for a in (axes if axes is not None else range(len(shape)))]))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,axes", ND_CASES)
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_fftn_ifftn(dtype, shape, axes, norm, device):
    rng = seeded("fftn", dtype, shape, axes, norm)
    h = complex_signal(rng, shape, dtype)
    z = as_complex(h)
    n = points(shape, axes)
    check_complex(fftn(on(device, h), axes=axes, norm=norm), np.fft.fftn(z, axes=axes, norm=norm), dtype, n)
    check_complex(ifftn(on(device, h), None, axes, norm), np.fft.ifftn(z, None, axes, norm), dtype, n)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,axes", ND_CASES)
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_rfftn_irfftn(dtype, shape, axes, norm, device):
    rng = seeded("rfftn", dtype, shape, axes, norm)
    h = real_signal(rng, shape, dtype)
    n = points(shape, axes)
    want = np.fft.rfftn(h.astype(np.float64), axes=axes, norm=norm)
    X = rfftn(on(device, h), axes=axes, norm=norm)
    check_complex(X, want, dtype, n)
    real_axis = axes[-1] if axes is not None else len(shape) - 1
    s = [shape[a] for a in (axes if axes is not None else range(len(shape)))]
    # The real length given (odd ones are not 2 (m - 1)): back to x.
    check_real(irfftn(X, s=s, axes=axes, norm=norm), h.astype(np.float64), dtype, n)
    # The default, 2 (m - 1) along the real axis, as NumPy's.
    if shape[real_axis] > 1:
        check_real(irfftn(X, axes=axes, norm=norm), np.fft.irfftn(want, axes=axes, norm=norm), dtype, n)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("last", [1, 4, 7, 12, 13, 20])
def test_irfftn_last_length(dtype, last, device):
    # s[-1] crops or pads the real axis's complex values as irfft's n does; the other entries are x's.
    rng = seeded("irfftn s", dtype, last)
    h = complex_signal(rng, (3, 4, 6), dtype)
    z = as_complex(h)
    for axes in ((0, 2), (2, 1), (1,)):
        s = [h.shape[a] for a in axes[:-1]] + [last]
        check_real(irfftn(on(device, h), s, axes), np.fft.irfftn(z, s, axes), dtype, last * 12)
    check_real(irfft2(on(device, h), s=(4, last)), np.fft.irfft2(z, s=(4, last)), dtype, last * 4)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(8, 6), (3, 8, 6), (17, 16), (2, 5, 7)])
@pytest.mark.parametrize("norm", NORMS)
def test_2d(dtype, shape, norm, device):
    rng = seeded("2d", dtype, shape, norm)
    n = shape[-1] * shape[-2]
    h = complex_signal(rng, shape, dtype)
    z = as_complex(h)
    check_complex(fft2(on(device, h), norm=norm), np.fft.fft2(z, norm=norm), dtype, n)
    check_complex(ifft2(on(device, h), norm=norm), np.fft.ifft2(z, norm=norm), dtype, n)
    check_complex(fft2(on(device, h), axes=(0, -1), norm=norm), np.fft.fft2(z, axes=(0, -1), norm=norm), dtype,
                  shape[0] * shape[-1])
    r = real_signal(rng, shape, dtype)
    want = np.fft.rfft2(r.astype(np.float64), norm=norm)
    X = rfft2(on(device, r), norm=norm)
    check_complex(X, want, dtype, n)
    check_real(irfft2(X, s=shape[-2:], norm=norm), r.astype(np.float64), dtype, n)
    check_real(irfft2(X, norm=norm), np.fft.irfft2(want, norm=norm), dtype, n)


def test_s_alone_names_the_last_axes(device):
    # NumPy's rule: s without axes is over the last len(s) axes.
    rng = seeded("s alone")
    h = complex_signal(rng, (3, 4, 5), "float64")
    z = as_complex(h)
    check_complex(fftn(on(device, h), s=(4, 5)), np.fft.fftn(z, s=(4, 5)), "float64", 20)
    check_real(irfftn(on(device, h), s=(4, 7)), np.fft.irfftn(z, s=(4, 7)), "float64", 28)
    r = real_signal(rng, (3, 4, 5), "float64")
    check_complex(rfftn(on(device, r), s=[5]), np.fft.rfftn(r, s=[5]), "float64", 5)


def test_sizes_equal_to_x_are_accepted(device):
    rng = seeded("same sizes")
    h = complex_signal(rng, (4, 6), "float64")
    z = as_complex(h)
    check_complex(fft(on(device, h), n=6), np.fft.fft(z), "float64", 6)
    check_complex(ifft(on(device, h), n=4, axis=0), np.fft.ifft(z, axis=0), "float64", 4)
    check_complex(fftn(on(device, h), s=(6, 4), axes=(1, 0)), np.fft.fftn(z, axes=(1, 0)), "float64", 24)
    check_complex(ifft2(on(device, h), s=np.array([4, 6])), np.fft.ifft2(z), "float64", 24)
    r = real_signal(rng, (4, 7), "float64")
    check_complex(rfft(on(device, r), 7), np.fft.rfft(r), "float64", 7)
    check_complex(rfft2(on(device, r), s=(4, 7)), np.fft.rfft2(r), "float64", 28)


def test_empty_axes_is_a_copy(device):
    # NumPy transforms nothing over axes=(); porta returns a copy.
    h = complex_signal(seeded("no axes"), (3, 4), "float64")
    x = on(device, h)
    for f in (fftn, ifftn):
        y = f(x, axes=())
        np.testing.assert_array_equal(host(y, "float64", h.shape), h)
        assert y.data_ptr != x.data_ptr
    np.testing.assert_array_equal(host(fftn(x, s=()), "float64", h.shape), h)


# ---- shapes, dtypes and views ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_empty_batch(dtype, device):
    h = np.zeros((0, 8, 2), dtype=dtype)
    assert host(fft(on(device, h)), dtype, (0, 8, 2)).size == 0
    assert host(rfft(on(device, np.zeros((0, 8), dtype=dtype))), dtype, (0, 5, 2)).size == 0
    assert host(irfft(on(device, np.zeros((0, 5, 2), dtype=dtype))), dtype, (0, 8)).size == 0


def test_reshaped_view_input(device):
    # A reshape is a view of the same memory: transforming it reads that memory.
    rng = seeded("view")
    h = complex_signal(rng, (24,), "float64")
    x = on(device, h).reshape(4, 6, 2)
    check_complex(fft(x), np.fft.fft(as_complex(h).reshape(4, 6)), "float64", 6)


def test_inputs_are_not_modified(device):
    rng = seeded("inputs kept")
    h = complex_signal(rng, (4, 6), "float64")
    r = real_signal(rng, (4, 6), "float64")
    x, xr = on(device, h), on(device, r)
    for f in (fft, ifft, irfft, fftn, ifftn, irfftn, fft2, ifft2, irfft2):
        f(x)
    for f in (rfft, rfftn, rfft2):
        f(xr)
    fft(x, axis=0)
    irfft(x, 20, 0)
    np.testing.assert_array_equal(host(x, "float64", h.shape), h)
    np.testing.assert_array_equal(host(xr, "float64", r.shape), r)


def test_result_device_and_dtype(device):
    x = on(device, np.ones((4, 2), dtype="float32"))
    for y in (fft(x), ifft2(on(device, np.ones((3, 4, 2), dtype="float32"))), irfft(x), rfft(x)):
        assert str(y.device) == device and y.dtype == "float32"


def test_stream_argument(device):
    h = complex_signal(seeded("stream"), (5, 16), "float64")
    s = porta.Stream(porta.Device(device))
    y = fft(on(device, h), stream=s)
    Y = fftn(on(device, h), stream=s)
    s.synchronize()
    check_complex(y, np.fft.fft(as_complex(h)), "float64", 16)
    check_complex(Y, np.fft.fftn(as_complex(h)), "float64", 80)


# ---- fftfreq --------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 5, 8, 9, 100])
@pytest.mark.parametrize("d", [1.0, 0.1, 3])
@pytest.mark.parametrize("dtype", FLOATS)
def test_fftfreq(n, d, dtype, device):
    f = fftfreq(n, d, dtype=dtype, device=device)
    np.testing.assert_array_equal(host(f, dtype, (n,)), np.fft.fftfreq(n, d).astype(dtype))
    r = rfftfreq(n, d=d, dtype=dtype, device=device)
    np.testing.assert_array_equal(host(r, dtype, (n // 2 + 1,)), np.fft.rfftfreq(n, d).astype(dtype))
    assert str(f.device) == device and str(r.device) == device


def test_fftfreq_defaults():
    f = fftfreq(6)
    assert f.dtype == "float64" and f.device == porta.default_device()
    np.testing.assert_array_equal(f.numpy(), np.fft.fftfreq(6))
    assert fftfreq(4, dtype=np.float32).dtype == "float32"
    with pytest.raises(ValueError, match="at least 1"):
        fftfreq(0)
    with pytest.raises(ValueError, match="zero"):
        rfftfreq(4, 0.0)
    with pytest.raises(porta.InvalidArgument, match="float32 or float64"):
        fftfreq(4, dtype="int64")


# ---- errors ---------------------------------------------------------------------------------------


def test_real_input_to_a_complex_transform(device):
    x = on(device, np.ones((4, 3)))
    for f in (fft, ifft, irfft, fftn, ifftn, irfftn, fft2, ifft2, irfft2):
        with pytest.raises(porta.InvalidArgument, match="complex"):
            f(x)
    with pytest.raises(ValueError, match="complex"):
        fft(on(device, np.ones(4)))
    with pytest.raises(ValueError, match="complex"):
        fftn(x, axes=())


@pytest.mark.parametrize("norm", ["Ortho", "", "backwards", 1, 0.5])
def test_bad_norm(norm, device):
    x = on(device, np.ones((4, 2)))
    y = on(device, np.ones((2, 3, 2)))
    for call in (lambda: fft(x, norm=norm), lambda: rfftn(x, norm=norm), lambda: irfft2(y, norm=norm)):
        with pytest.raises(ValueError, match="norm must be None, 'backward', 'ortho' or 'forward'"):
            call()
    with pytest.raises(ValueError):  # as NumPy's
        np.fft.fft(np.ones(4), norm=norm)


def test_cropping_and_padding_are_not_supported(device):
    c = on(device, np.ones((4, 6, 2)))
    r = on(device, np.ones((4, 6)))
    for call in (lambda: fft(c, n=8), lambda: ifft(c, 3), lambda: fft(c, n=6, axis=0), lambda: rfft(r, 5),
                 lambda: fftn(c, s=(4, 8)), lambda: ifft2(c, s=(2, 6)), lambda: rfftn(r, s=(4, 7)),
                 lambda: rfft2(r, s=(3, 6)), lambda: irfftn(c, s=(3, 10)), lambda: irfft2(c, s=(5, 10)),
                 lambda: fftn(c, s=[6, 6], axes=[0, 1])):
        with pytest.raises(porta.InvalidArgument, match="is not supported: x has .* porta.fft transforms whole axes"):
            call()
    with pytest.raises(ValueError, match="whole axes"):
        fft(c, 7)


def test_invalid_lengths(device):
    c = on(device, np.ones((4, 6, 2)))
    r = on(device, np.ones((4, 6)))
    for call in (lambda: fft(c, 0), lambda: irfft(c, 0), lambda: irfft(c, -3), lambda: rfft(r, n=-1),
                 lambda: irfftn(c, s=(4, 0)), lambda: fftn(c, s=(0, 6))):
        with pytest.raises(ValueError, match="not a valid number of points"):
            call()
    with pytest.raises(ValueError, match="not positive"):  # one complex value: 2 (m - 1) = 0 points
        irfft(on(device, np.ones((3, 1, 2))))
    with pytest.raises(ValueError, match="different lengths"):
        fftn(c, s=(4, 6), axes=(0,))
    with pytest.raises(ValueError, match="at least one axis"):
        rfftn(r, axes=())
    with pytest.raises(ValueError, match="at least one axis"):
        irfftn(c, axes=[])


def test_axes_errors(device):
    c = on(device, np.ones((4, 6, 2)))
    for call in (lambda: fft(c, axis=2), lambda: fft(c, axis=-3), lambda: fftn(c, axes=(0, 5)),
                 lambda: fft2(on(device, np.ones((6, 2)))), lambda: rfft(on(device, np.ones(4)), axis=1),
                 lambda: fft(c, axis=2**40)):
        with pytest.raises(porta.InvalidArgument, match="out of range"):
            call()
    with pytest.raises(porta.InvalidArgument, match="repeated"):
        fftn(c, axes=(0, 0))  # NumPy transforms twice; porta refuses
    with pytest.raises(porta.InvalidArgument, match="at most 4"):
        rfftn(on(device, np.ones((2, 2, 2, 2))))  # the result would need a fifth axis
    for bad in (3, "01", [0.0, 1.0]):
        with pytest.raises(TypeError, match="sequence of ints"):
            fftn(c, axes=bad)
    with pytest.raises(TypeError):
        fft(c, n=4.0)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_dtypes_are_refused(dtype, device):
    x = on(device, np.ones((4, 2), dtype=dtype))
    for f in (fft, ifft, rfft, irfft, fftn, ifftn, rfftn, irfftn, fft2, ifft2, rfft2, irfft2):
        with pytest.raises(porta.InvalidArgument, match="float32 or float64"):
            f(x)


def test_non_arrays_are_refused():
    with pytest.raises(TypeError, match="porta.Array"):
        fft(np.ones((4, 2)))
    with pytest.raises(TypeError, match="porta.Array"):
        rfftn([1.0, 2.0])
