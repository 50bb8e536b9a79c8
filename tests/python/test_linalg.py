# SPDX-License-Identifier: Apache-2.0
# porta.linalg against numpy.linalg on fresh random matrices: single matrices, tall and wide ones,
# stacks with one and two batch axes and empty ones. Where a result is unique (solve, inv,
# cholesky, eigenvalues, singular values, |diag R|) it is compared with NumPy's; where it is unique
# only up to signs (Q, eigenvectors, singular vectors) its defining identities are checked instead.
# Errors: porta.LinAlgError (also numpy.linalg.LinAlgError) naming the failing matrix of a stack,
# porta.InvalidArgument (also ValueError) for shapes, dtypes and modes porta does not take.
import subprocess
import sys
import zlib

import numpy as np
import pytest
from conftest import DEVICES, FLOATS

import porta
import porta.linalg
from porta.linalg import cholesky, eigh, inv, qr, solve, svd


SQUARE = [(1, 1), (5, 5), (16, 16), (3, 4, 4), (2, 3, 6, 6)]
EMPTY_SQUARE = [(0, 0), (0, 3, 3), (2, 0, 0), (2, 0, 4, 4)]
RECTANGULAR = [(5, 5), (7, 4), (4, 7), (1, 6), (6, 1), (3, 6, 4), (3, 4, 6), (2, 3, 5, 3), (2, 2, 3, 5)]
EMPTY_RECTANGULAR = [(0, 3), (3, 0), (0, 0), (2, 0, 3), (2, 3, 0), (0, 4, 3)]


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


def seeded(*key):
    """A generator of its own for each test case, so that a case sees the same matrices alone or in a run."""
    return np.random.default_rng([zlib.crc32(repr(k).encode()) for k in key])


def rtol(dtype, n):
    """A relative tolerance for a well-conditioned n x n problem: a few hundred rounding errors."""
    return 64 * max(n, 4) * np.finfo(dtype).eps


def well_conditioned(rng, shape, dtype):
    """Random entries in [-1, 1] plus n on the diagonal: a condition number of a few."""
    n = shape[-1]
    a = rng.uniform(-1, 1, size=shape) + n * np.eye(n)
    return a.astype(dtype)


def spd(rng, shape, dtype):
    """Symmetric positive definite: M M^T / n + I, well conditioned."""
    n = shape[-1]
    m = rng.uniform(-1, 1, size=shape)
    return (m @ np.swapaxes(m, -1, -2) / max(n, 1) + np.eye(n)).astype(dtype)


def symmetric(rng, shape, dtype):
    m = rng.uniform(-1, 1, size=shape)
    return ((m + np.swapaxes(m, -1, -2)) / 2).astype(dtype)


def on(device, h):
    return porta.array(h, device=device)


def host(x, dtype, shape):
    """x as a NumPy array, checked for its dtype and shape."""
    assert isinstance(x, porta.Array)
    h = x.numpy()
    assert h.dtype == np.dtype(dtype) and h.shape == tuple(shape), (h.dtype, h.shape, dtype, shape)
    return h.astype(np.float64)


def assert_close(got, want, tol, scale=None):
    """Elementwise within tol * scale, scale being the largest |want| of each matrix's stack (at least 1)."""
    want = np.asarray(want, dtype=np.float64)
    if scale is None:
        scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale)


def T(x):
    return np.swapaxes(x, -1, -2)


def assert_orthonormal_columns(q, tol):
    k = q.shape[-1]
    assert_close(T(q) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)), tol)


# ---- names and types ------------------------------------------------------------------------------


def test_import_and_names():
    assert porta.linalg.solve is solve
    import porta.linalg as la

    assert la is porta.linalg
    for name in ("solve", "inv", "cholesky", "qr", "eigh", "svd"):
        assert callable(getattr(la, name)) and "numpy.linalg." + name in getattr(la, name).__doc__
    assert la.QRResult._fields == ("Q", "R")
    assert la.EighResult._fields == ("eigenvalues", "eigenvectors")
    assert la.SVDResult._fields == ("U", "S", "Vh")
    assert la.LinAlgError is porta.LinAlgError
    with pytest.raises(AttributeError):
        la.no_such_function


def test_linalg_error_classes():
    assert issubclass(porta.LinAlgError, porta.Error)
    assert issubclass(porta.LinAlgError, np.linalg.LinAlgError)
    assert porta.LinAlgError is porta._porta.LinAlgError
    from porta import LinAlgError

    assert LinAlgError is porta.LinAlgError
    with pytest.raises(AttributeError):
        porta.no_such_name


def test_import_does_not_import_numpy():
    # porta.LinAlgError's NumPy base is looked up when the class is first asked for, not at import.
    code = "import sys, porta; assert 'numpy' not in sys.modules, 'numpy imported'; porta.LinAlgError; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_linalg_error_without_numpy():
    # NumPy is optional for the module (the wheel does not require it): porta.Error is then the one base.
    code = (
        "import sys; sys.modules['numpy'] = None; import porta; "
        "assert porta.LinAlgError.__bases__ == (porta.Error,), porta.LinAlgError.__bases__; "
        "a = porta.zeros((2, 2), dtype='float64')\n"
        "try:\n    porta.linalg.inv(a)\nexcept porta.LinAlgError as e:\n    print(e.index, e.info)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.split() == ["0", "1"], out.stderr


# ---- solve and inv --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SQUARE)
@pytest.mark.parametrize("k", [1, 3])
def test_solve_matrix_rhs(dtype, shape, k, device):
    rng = seeded("solve", dtype, shape, k)
    a = well_conditioned(rng, shape, dtype)
    b = rng.uniform(-1, 1, size=shape[:-1] + (k,)).astype(dtype)
    x = host(solve(on(device, a), on(device, b)), dtype, b.shape)
    assert_close(x, np.linalg.solve(a.astype(np.float64), b.astype(np.float64)), rtol(dtype, shape[-1]))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [1, 4, 17])
def test_solve_vector_rhs(dtype, n, device):
    rng = seeded("solve vector", dtype, n)
    a = well_conditioned(rng, (n, n), dtype)
    b = rng.uniform(-1, 1, size=n).astype(dtype)
    x = host(solve(on(device, a), on(device, b)), dtype, (n,))
    assert_close(x, np.linalg.solve(a.astype(np.float64), b.astype(np.float64)), rtol(dtype, n))
    assert_close(a.astype(np.float64) @ x, b, rtol(dtype, n))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", EMPTY_SQUARE)
def test_solve_and_inv_empty(dtype, shape, device):
    a = np.zeros(shape, dtype=dtype)
    b = np.zeros(shape[:-1] + (2,), dtype=dtype)
    want = np.linalg.solve(a, b)
    host(solve(on(device, a), on(device, b)), dtype, want.shape)
    host(inv(on(device, a)), dtype, np.linalg.inv(a).shape)


def test_solve_with_no_right_hand_sides(device):
    a = well_conditioned(seeded("solve k=0"), (3, 3), "float64")
    host(solve(on(device, a), on(device, np.zeros((3, 0)))), "float64", (3, 0))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SQUARE)
def test_inv(dtype, shape, device):
    rng = seeded("inv", dtype, shape)
    a = well_conditioned(rng, shape, dtype)
    ai = host(inv(on(device, a)), dtype, shape)
    n = shape[-1]
    assert_close(ai, np.linalg.inv(a.astype(np.float64)), rtol(dtype, n))
    assert_close(a.astype(np.float64) @ ai, np.broadcast_to(np.eye(n), shape), rtol(dtype, n))


def test_inputs_are_not_modified(device):
    rng = seeded("inputs kept")
    a = well_conditioned(rng, (3, 4, 4), "float64")
    b = rng.uniform(-1, 1, size=(3, 4, 2))
    pa, pb = on(device, a), on(device, b)
    solve(pa, pb)
    inv(pa)
    qr(pa)
    svd(pa)
    cholesky(on(device, spd(rng, (4, 4), "float64")))
    np.testing.assert_array_equal(pa.numpy(), a)
    np.testing.assert_array_equal(pb.numpy(), b)


# ---- cholesky -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SQUARE + EMPTY_SQUARE)
def test_cholesky(dtype, shape, device):
    rng = seeded("cholesky", dtype, shape)
    a = spd(rng, shape, dtype)
    n = shape[-1]
    L = host(cholesky(on(device, a)), dtype, shape)
    assert_close(L, np.linalg.cholesky(a.astype(np.float64)), rtol(dtype, n))
    assert np.all(np.triu(L, 1) == 0)
    assert_close(L @ T(L), a, rtol(dtype, n))


def test_cholesky_reads_the_lower_triangle(device):
    a = spd(seeded("cholesky lower"), (5, 5), "float64")
    junk = a + np.triu(np.full((5, 5), 7.0), 1)  # the upper triangle is not read, as in NumPy
    L = host(cholesky(on(device, junk)), "float64", (5, 5))
    assert_close(L, np.linalg.cholesky(a), rtol("float64", 5))


# ---- qr -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", RECTANGULAR)
def test_qr(dtype, shape, device):
    rng = seeded("qr", dtype, shape)
    a = rng.uniform(-1, 1, size=shape).astype(dtype)
    m, n = shape[-2:]
    p = min(m, n)
    res = qr(on(device, a))
    assert isinstance(res, porta.linalg.QRResult) and isinstance(res, tuple)
    Q = host(res.Q, dtype, shape[:-2] + (m, p))
    R = host(res.R, dtype, shape[:-2] + (p, n))
    tol = rtol(dtype, max(m, n))
    assert_close(Q @ R, a, tol)
    assert_orthonormal_columns(Q, tol)
    assert np.all(np.tril(R, -1) == 0)
    _, R_np = np.linalg.qr(a.astype(np.float64))
    assert_close(np.abs(np.diagonal(R, axis1=-2, axis2=-1)), np.abs(np.diagonal(R_np, axis1=-2, axis2=-1)), tol)
    q2, r2 = res  # unpacks as NumPy's
    assert q2 is res.Q and r2 is res.R


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", EMPTY_RECTANGULAR)
def test_qr_empty(dtype, shape, device):
    a = np.zeros(shape, dtype=dtype)
    q_np, r_np = np.linalg.qr(a)
    Q, R = qr(on(device, a))
    host(Q, dtype, q_np.shape)
    host(R, dtype, r_np.shape)


@pytest.mark.parametrize("mode", ["complete", "r", "raw", "full"])
def test_qr_other_modes_are_refused(mode, device):
    a = on(device, np.eye(3))
    with pytest.raises(porta.InvalidArgument, match="mode='reduced'"):
        qr(a, mode)
    with pytest.raises(ValueError):
        qr(a, mode=mode)
    assert host(qr(a, mode="reduced").R, "float64", (3, 3)).shape == (3, 3)


# ---- eigh -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SQUARE + EMPTY_SQUARE)
def test_eigh(dtype, shape, device):
    rng = seeded("eigh", dtype, shape)
    a = symmetric(rng, shape, dtype)
    n = shape[-1]
    res = eigh(on(device, a))
    assert isinstance(res, porta.linalg.EighResult)
    w = host(res.eigenvalues, dtype, shape[:-1])
    v = host(res.eigenvectors, dtype, shape)
    tol = rtol(dtype, n)
    assert_close(w, np.linalg.eigvalsh(a.astype(np.float64)), tol)
    assert np.all(np.diff(w, axis=-1) >= 0)
    assert_close(a.astype(np.float64) @ v, v * w[..., None, :], tol)
    assert_orthonormal_columns(v, tol)
    w2, v2 = res
    assert w2 is res.eigenvalues and v2 is res.eigenvectors


def test_eigh_reads_the_lower_triangle(device):
    a = symmetric(seeded("eigh lower"), (6, 6), "float64")
    junk = a + np.triu(np.full((6, 6), 5.0), 1)
    w, _ = eigh(on(device, junk), UPLO="L")
    assert_close(host(w, "float64", (6,)), np.linalg.eigvalsh(a), rtol("float64", 6))


def test_eigh_uplo(device):
    a = on(device, np.eye(3))
    with pytest.raises(porta.InvalidArgument, match="UPLO='U' is not supported"):
        eigh(a, "U")
    with pytest.raises(ValueError, match="'L' or 'U'"):
        eigh(a, UPLO="X")


# ---- svd ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", RECTANGULAR)
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd(dtype, shape, full_matrices, device):
    rng = seeded("svd", dtype, shape, full_matrices)
    a = rng.uniform(-1, 1, size=shape).astype(dtype)
    lead, (m, n) = shape[:-2], shape[-2:]
    p = min(m, n)
    res = svd(on(device, a), full_matrices=full_matrices)
    assert isinstance(res, porta.linalg.SVDResult)
    U = host(res.U, dtype, lead + ((m, m) if full_matrices else (m, p)))
    S = host(res.S, dtype, lead + (p,))
    Vh = host(res.Vh, dtype, lead + ((n, n) if full_matrices else (p, n)))
    tol = rtol(dtype, max(m, n))
    assert_close(S, np.linalg.svd(a.astype(np.float64), compute_uv=False), tol)
    assert np.all(np.diff(S, axis=-1) <= 0) and np.all(S >= 0)
    assert_close((U[..., :, :p] * S[..., None, :]) @ Vh[..., :p, :], a, tol)
    assert_orthonormal_columns(U, tol)
    assert_orthonormal_columns(T(Vh), tol)
    u2, s2, vh2 = res
    assert u2 is res.U and s2 is res.S and vh2 is res.Vh


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (2, 3, 5, 5)])
def test_svd_values_only(dtype, shape, device):
    a = seeded("svd S", dtype, shape).uniform(-1, 1, size=shape).astype(dtype)
    S = svd(on(device, a), compute_uv=False)
    assert isinstance(S, porta.Array)
    got = host(S, dtype, shape[:-2] + (min(shape[-2:]),))
    assert_close(got, np.linalg.svd(a.astype(np.float64), compute_uv=False), rtol(dtype, max(shape[-2:])))
    S2 = svd(on(device, a), False, False)
    np.testing.assert_array_equal(S2.numpy(), S.numpy())


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", EMPTY_RECTANGULAR)
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_empty(dtype, shape, full_matrices, device):
    a = np.zeros(shape, dtype=dtype)
    u_np, s_np, vh_np = np.linalg.svd(a, full_matrices=full_matrices)
    U, S, Vh = svd(on(device, a), full_matrices=full_matrices)
    np.testing.assert_array_equal(host(U, dtype, u_np.shape), u_np)  # identities where square, as NumPy
    host(S, dtype, s_np.shape)
    np.testing.assert_array_equal(host(Vh, dtype, vh_np.shape), vh_np)


def test_rank_deficient_svd_and_qr(device):
    rng = seeded("rank 2")
    a = rng.uniform(-1, 1, size=(6, 2)) @ rng.uniform(-1, 1, size=(2, 5))
    S = host(svd(on(device, a), compute_uv=False), "float64", (5,))
    assert_close(S, np.linalg.svd(a, compute_uv=False), rtol("float64", 6))
    assert np.all(S[2:] < 1e-12 * S[0])
    Q, R = qr(on(device, a))
    assert_close(host(Q, "float64", (6, 5)) @ host(R, "float64", (5, 5)), a, rtol("float64", 6))


@pytest.mark.parametrize("dtype", FLOATS)
def test_blocked_sizes(dtype, device):
    # Past LAPACK's block size (32 to 64), where the factorisations take their blocked paths.
    rng = seeded("blocked", dtype)
    n = 97
    a = well_conditioned(rng, (2, n, n), dtype)
    tol = rtol(dtype, n)
    assert_close(host(inv(on(device, a)), dtype, a.shape), np.linalg.inv(a.astype(np.float64)), tol)
    s = spd(rng, (n, n), dtype)
    assert_close(host(cholesky(on(device, s)), dtype, s.shape), np.linalg.cholesky(s.astype(np.float64)), tol)
    w = host(eigh(on(device, s)).eigenvalues, dtype, (n,))
    assert_close(w, np.linalg.eigvalsh(s.astype(np.float64)), tol)
    r = rng.uniform(-1, 1, size=(n + 20, n)).astype(dtype)
    S = host(svd(on(device, r), compute_uv=False), dtype, (n,))
    assert_close(S, np.linalg.svd(r.astype(np.float64), compute_uv=False), tol)
    Q, R = qr(on(device, r))
    assert_close(host(Q, dtype, r.shape) @ host(R, dtype, (n, n)), r, tol)


# ---- errors ---------------------------------------------------------------------------------------


def singular_stack(dtype, bad):
    """Four well-conditioned 3 x 3 matrices but for matrix `bad`, whose row and column 1 are zero:
    the LU factorisation of it (or of its transpose) meets an exactly zero pivot at column 1
    (LAPACK's info 2)."""
    a = well_conditioned(seeded("singular", dtype, bad), (4, 3, 3), dtype)
    a[bad, :, 1] = 0
    a[bad, 1, :] = 0
    return a


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("bad", [0, 2])
def test_singular_is_linalg_error(dtype, bad, device):
    a = on(device, singular_stack(dtype, bad))
    b = on(device, np.ones((4, 3, 2), dtype=dtype))
    for call in (lambda: solve(a, b), lambda: inv(a)):
        with pytest.raises(porta.LinAlgError, match="singular") as e:
            call()
        assert e.value.index == bad and e.value.info == 2
        assert "matrix %d of the batch" % bad in str(e.value)
        assert isinstance(e.value, porta.Error) and isinstance(e.value, np.linalg.LinAlgError)
    with pytest.raises(np.linalg.LinAlgError):  # code written for NumPy catches it
        inv(a)


def test_single_singular_matrix(device):
    a = np.array([[1.0, 0.0], [0.0, 0.0]])
    with pytest.raises(porta.LinAlgError, match="the matrix is singular") as e:
        inv(on(device, a))
    assert e.value.index == 0 and e.value.info == 2


@pytest.mark.parametrize("dtype", FLOATS)
def test_not_positive_definite_is_linalg_error(dtype, device):
    a = spd(seeded("not spd", dtype), (2, 3, 4, 4), dtype)
    a[1, 2] = np.diag([1.0, -1.0, 1.0, 1.0])  # its leading minor of order 2 is negative
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite") as e:
        cholesky(on(device, a))
    assert isinstance(e.value, porta.LinAlgError)
    assert e.value.index == 1 * 3 + 2 and e.value.info == 2  # the flat index over both batch axes


def test_shape_errors(device):
    sq = on(device, np.eye(3))
    rect = on(device, np.ones((3, 4)))
    for f in (inv, cholesky, eigh):
        with pytest.raises(porta.InvalidArgument, match="square"):
            f(rect)
    with pytest.raises(ValueError, match="square"):
        solve(rect, on(device, np.ones(3)))
    for b in (np.ones(4), np.ones((4, 2)), np.ones((2, 3, 1))):
        with pytest.raises(porta.InvalidArgument, match="does not match"):
            solve(sq, on(device, b))
    stack = on(device, np.broadcast_to(np.eye(3), (2, 3, 3)).copy())
    with pytest.raises(ValueError, match="does not match"):
        solve(stack, on(device, np.ones((3, 3, 1))))  # batch axes are not broadcast
    with pytest.raises(porta.InvalidArgument, match="at least 2 dimensions"):
        inv(on(device, np.ones(3)))
    for f in (qr, svd):
        with pytest.raises(porta.InvalidArgument, match="at least 2 dimensions"):
            f(on(device, np.ones(3)))


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_dtypes_are_refused(dtype, device):
    a = on(device, np.eye(3, dtype=dtype))
    for f in (inv, cholesky, qr, eigh, svd):
        with pytest.raises(porta.InvalidArgument, match="float32 or float64"):
            f(a)
    with pytest.raises(porta.InvalidArgument, match="float32 or float64"):
        solve(a, a)


def test_mixed_dtypes_and_non_arrays(device):
    a = on(device, np.eye(3, dtype="float32"))
    with pytest.raises(porta.InvalidArgument, match="promote"):
        solve(a, on(device, np.ones(3, dtype="float64")))
    with pytest.raises(TypeError, match="porta.Array"):
        inv(np.eye(3))
    with pytest.raises(TypeError, match="porta.Array"):
        solve(a, np.ones(3, dtype="float32"))


def test_stream_argument(device):
    a = well_conditioned(seeded("stream"), (4, 4), "float64")
    s = porta.Stream(porta.Device(device))
    x = inv(on(device, a), stream=s)
    s.synchronize()
    assert_close(host(x, "float64", (4, 4)), np.linalg.inv(a), rtol("float64", 4))
