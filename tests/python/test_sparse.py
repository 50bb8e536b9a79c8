# SPDX-License-Identifier: Apache-2.0
# porta.sparse on the CPU, against NumPy: csr_matrix from CSR arrays (host and porta.Arrays),
# coordinates, dense matrices and scipy.sparse; products against a float64 dense reference, and
# algorithm="own" bit for bit against the documented order (each row's products summed in storage
# order, every product and sum rounded in the matrix's dtype); errors as Python exceptions.
import numpy as np
import pytest
from conftest import FLOATS, random_host, tolerance

import porta
import porta.sparse
from porta.sparse import csr_matrix

INDEX_DTYPES = ["int32", "int64"]
ALGORITHMS = ["vendor", "own"]


def random_csr(rng, rows, cols, dtype, most_per_row=8):
    """CSR arrays with empty rows, columns unsorted within a row and duplicate (row, col) entries."""
    counts = rng.integers(0, most_per_row + 1, size=rows)
    counts[rng.random(rows) < 0.25] = 0
    if rows > 2:
        counts[1] = 0  # at least one empty row
        counts[0] = max(counts[0], 2)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    indices = rng.integers(0, cols, size=int(indptr[-1])).astype(np.int64)
    for r in range(rows):
        if counts[r] >= 2 and r % 2 == 0:
            indices[indptr[r] + 1] = indices[indptr[r]]  # a duplicate right after the first
        if counts[r] >= 4 and r % 3 == 0:
            indices[indptr[r] + 3] = indices[indptr[r]]  # and one with another entry between them
    data = random_host((int(indptr[-1]),), dtype, rng)
    return data, indices, indptr


def dense_reference(data, indices, indptr, shape):
    """The dense matrix in float64, duplicates summed."""
    out = np.zeros(shape, dtype=np.float64)
    rows = np.repeat(np.arange(shape[0]), np.diff(indptr))
    np.add.at(out, (rows, indices), data.astype(np.float64))
    return out


def own_reference(data, indices, indptr, x, alpha=1.0, beta=0.0, y=None):
    """alpha * A @ x + beta * y as porta's own kernel computes it, with NumPy scalars of the dtype:
    each product rounded, each sum rounded, in storage order from +0, then alpha * that, then
    + beta * y (which is not read when beta == 0)."""
    dt = data.dtype.type
    x2 = x.reshape(x.shape[0], -1)
    y2 = None if y is None else y.reshape(len(indptr) - 1, -1)
    rows, k = len(indptr) - 1, x2.shape[1]
    out = np.empty((rows, k), dtype=data.dtype)
    a, b = dt(alpha), dt(beta)
    for r in range(rows):
        for c in range(k):
            acc = dt(0)
            for j in range(indptr[r], indptr[r + 1]):
                acc = acc + dt(data[j] * x2[indices[j], c])
            v = a * acc
            if beta != 0:
                v = v + b * y2[r, c]
            out[r, c] = v
    return out.reshape((rows,) + x.shape[1:])


def assert_same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    u = "u%d" % got.dtype.itemsize
    np.testing.assert_array_equal(got.view(u), want.view(u))


def assert_close(got, want64, absolute64, dtype, n):
    """got (dtype) against the float64 reference, within a tolerance scaled by sum |a| |x| of each row."""
    assert got.dtype == np.dtype(dtype)
    bound = tolerance(dtype, n) * absolute64 + np.finfo(dtype).tiny
    assert np.all(np.abs(got.astype(np.float64) - want64) <= bound), np.max(np.abs(got - want64) - bound)


def test_import_and_names():
    assert porta.sparse.csr_matrix is csr_matrix
    assert callable(porta.sparse.spmm)
    m = csr_matrix((2, 3), device="cpu")
    assert porta.sparse.issparse(m) and porta.sparse.isspmatrix_csr(m)
    assert not porta.sparse.issparse(porta.zeros(3))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_properties_and_round_trip(dtype, index_dtype, rng, cpu):
    data, indices, indptr = random_csr(rng, 9, 7, dtype)
    A = csr_matrix((data, indices, indptr), shape=(9, 7), device=cpu, index_dtype=index_dtype)
    assert A.shape == (9, 7) and A.ndim == 2 and A.format == "csr"
    assert A.nnz == len(data)  # duplicates are stored entries, as in scipy.sparse
    assert A.dtype == dtype and A.index_dtype == index_dtype and A.device == cpu
    assert isinstance(A.data, porta.Array) and A.data.dtype == dtype
    assert A.indices.dtype == index_dtype and A.indptr.dtype == index_dtype
    np.testing.assert_array_equal(A.data.numpy(), data)
    np.testing.assert_array_equal(A.indices.numpy(), indices)
    np.testing.assert_array_equal(A.indptr.numpy(), indptr)
    assert "csr_matrix" in repr(A) and "nnz=%d" % len(data) in repr(A)
    D = A.toarray()
    assert isinstance(D, porta.Array) and D.shape == (9, 7) and D.dtype == dtype
    np.testing.assert_allclose(D.numpy(), dense_reference(data, indices, indptr, (9, 7)),
                               rtol=tolerance(dtype, 4), atol=0)


def test_index_dtype_follows_scipy(rng, cpu):
    data, indices, indptr = random_csr(rng, 5, 5, "float64")
    # Host indices of any integer type become int32 while the matrix fits it, as in scipy.sparse.
    assert csr_matrix((data, indices.astype(np.int64), indptr), device=cpu).index_dtype == "int32"
    assert csr_matrix((data, indices.astype(np.int16), indptr.astype(np.uint32)), device=cpu).index_dtype == "int32"
    assert csr_matrix((data, indices, indptr), device=cpu, index_dtype=np.int64).index_dtype == "int64"
    # porta.Arrays keep their own.
    B = csr_matrix((porta.array(data, device=cpu), porta.array(indices, device=cpu), porta.array(indptr, device=cpu)))
    assert B.index_dtype == "int64"


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("k", [None, 1, 4])
def test_products_against_numpy(dtype, index_dtype, algorithm, k, rng, cpu):
    rows, cols = 53, 29
    data, indices, indptr = random_csr(rng, rows, cols, dtype)
    A = csr_matrix((data, indices, indptr), shape=(rows, cols), device=cpu, index_dtype=index_dtype)
    xh = random_host((cols,) if k is None else (cols, k), dtype, rng)
    x = porta.array(xh, device=cpu)
    dense = dense_reference(data, indices, indptr, (rows, cols))
    want = dense @ xh.astype(np.float64)
    absolute = np.abs(dense) @ np.abs(xh.astype(np.float64))
    y = A.dot(x, algorithm=algorithm)
    assert isinstance(y, porta.Array) and y.shape == want.shape
    assert_close(y.numpy(), want, absolute, dtype, 8)
    if algorithm == "vendor":
        assert_close((A @ x).numpy(), want, absolute, dtype, 8)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("k", [None, 3])
def test_own_is_the_documented_order(dtype, index_dtype, k, rng, cpu):
    rows, cols = 41, 17
    data, indices, indptr = random_csr(rng, rows, cols, dtype)
    A = csr_matrix((data, indices, indptr), shape=(rows, cols), device=cpu, index_dtype=index_dtype)
    xh = random_host((cols,) if k is None else (cols, k), dtype, rng)
    x = porta.array(xh, device=cpu)
    assert_same_bits(A.dot(x, algorithm="own").numpy(), own_reference(data, indices, indptr, xh))
    # spmm: alpha * acc, then + beta * y, each rounded.
    yh = random_host((rows,) if k is None else (rows, k), dtype, rng)
    y = porta.array(yh, device=cpu)
    assert porta.sparse.spmm(0.75, A, x, -1.5, y, algorithm="own") is None
    assert_same_bits(y.numpy(), own_reference(data, indices, indptr, xh, 0.75, -1.5, yh))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("rows, k", [(6000, None), (2000, 4)])
def test_own_order_on_a_matrix_split_over_threads(dtype, rows, k, rng, cpu):
    # Work enough for the CPU backend to split the rows over two or more threads (it does from
    # (nnz + rows) * k = 2^16 on); the split must not change a bit.
    cols = 800
    data, indices, indptr = random_csr(rng, rows, cols, dtype, most_per_row=30)
    assert (len(data) + rows) * (k or 1) >= 2**16
    A = csr_matrix((data, indices, indptr), shape=(rows, cols), device=cpu)
    xh = random_host((cols,) if k is None else (cols, k), dtype, rng)
    got = A.dot(porta.array(xh, device=cpu), algorithm="own").numpy()
    assert_same_bits(got, own_reference(data, indices, indptr, xh))


def test_duplicates_and_empty_rows(cpu):
    # Row 0 holds (0, 2) three times, unsorted among others; rows 1 and 3 are empty.
    data = np.array([1.0, 2.0, 0.5, 4.0, 0.25, 8.0, 3.0])
    indices = np.array([2, 0, 2, 1, 2, 0, 3])
    indptr = np.array([0, 5, 5, 7, 7])
    A = csr_matrix((data, indices, indptr), shape=(4, 4), device=cpu)
    assert A.nnz == 7
    want = np.array([[2.0, 4.0, 1.75, 0.0], [0.0] * 4, [8.0, 0.0, 0.0, 3.0], [0.0] * 4])
    np.testing.assert_array_equal(A.toarray().numpy(), want)
    x = porta.array([1.0, 10.0, 100.0, 1000.0], device=cpu)
    for algorithm in ALGORITHMS:
        np.testing.assert_array_equal(A.dot(x, algorithm=algorithm).numpy(), want @ x.numpy())
    # Shape inferred as scipy.sparse does: len(indptr) - 1 rows, the largest column + 1.
    assert csr_matrix((data, indices, indptr), device=cpu).shape == (4, 4)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_coo(dtype, index_dtype, rng, cpu):
    n = 60
    row = rng.integers(0, 7, size=n)
    col = rng.integers(0, 5, size=n)
    data = random_host((n,), dtype, rng)
    A = csr_matrix((data, (row, col)), shape=(8, 6), device=cpu, index_dtype=index_dtype)
    assert A.shape == (8, 6) and A.dtype == dtype and A.index_dtype == index_dtype
    # Sorted by row, then column; duplicates merged into one entry each.
    pairs = sorted(set(zip(row.tolist(), col.tolist())))
    assert A.nnz == len(pairs)
    np.testing.assert_array_equal(A.indices.numpy(), [c for _, c in pairs])
    np.testing.assert_array_equal(A.indptr.numpy(), np.searchsorted([r for r, _ in pairs], np.arange(9)))
    # Each merged entry is its duplicates summed in input order, rounded in the dtype.
    want = np.zeros((8, 6), dtype=dtype)
    seen = np.zeros((8, 6), dtype=bool)
    for r, c, v in zip(row, col, data):
        want[r, c] = want[r, c] + v if seen[r, c] else v
        seen[r, c] = True
    assert_same_bits(A.toarray().numpy(), want)
    assert csr_matrix((data, (row, col)), device=cpu).shape == (int(row.max()) + 1, int(col.max()) + 1)
    # From porta.Arrays: the same matrix on their device, with their dtypes.
    B = csr_matrix((porta.array(data, device=cpu), (porta.array(row.astype(index_dtype), device=cpu),
                                                    porta.array(col.astype(index_dtype), device=cpu))), shape=(8, 6))
    assert B.index_dtype == index_dtype
    assert_same_bits(B.toarray().numpy(), want)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_transpose(dtype, index_dtype, rng, cpu):
    data, indices, indptr = random_csr(rng, 13, 9, dtype)
    A = csr_matrix((data, indices, indptr), shape=(13, 9), device=cpu, index_dtype=index_dtype)
    for T in (A.T, A.transpose(), A.transpose(stream=porta.Stream("cpu"))):
        assert T.shape == (9, 13) and T.nnz == A.nnz
        assert T.dtype == dtype and T.index_dtype == index_dtype and T.device == cpu
        assert_same_bits(T.toarray().numpy(), np.ascontiguousarray(A.toarray().numpy().T))
    assert_same_bits(A.T.T.toarray().numpy(), A.toarray().numpy())
    xh = random_host((13,), dtype, rng)
    want = dense_reference(data, indices, indptr, (13, 9)).T @ xh.astype(np.float64)
    absolute = np.abs(dense_reference(data, indices, indptr, (13, 9))).T @ np.abs(xh.astype(np.float64))
    assert_close((A.T @ porta.array(xh, device=cpu)).numpy(), want, absolute, dtype, 16)


def test_shares_porta_arrays(rng, cpu):
    data, indices, indptr = random_csr(rng, 6, 6, "float32")
    d = porta.array(data, device=cpu)
    ix = porta.array(indices.astype(np.int32), device=cpu)
    ip = porta.array(indptr.astype(np.int32), device=cpu)
    A = csr_matrix((d, ix, ip), shape=(6, 6))
    assert A.device == cpu and A.dtype == "float32" and A.index_dtype == "int32"
    assert A.data.data_ptr == d.data_ptr and A.indices.data_ptr == ix.data_ptr and A.indptr.data_ptr == ip.data_ptr
    # Writes through data change the matrix, as scipy.sparse's A.data does.
    porta.fill(A.data, 1.0)
    np.testing.assert_array_equal(A.toarray().numpy(), dense_reference(np.ones_like(data), indices, indptr, (6, 6)))
    B = csr_matrix((d, ix, ip), shape=(6, 6), copy=True)
    assert B.data.data_ptr != d.data_ptr
    C = A.copy()
    assert C.data.data_ptr != A.data.data_ptr and C.shape == A.shape
    np.testing.assert_array_equal(C.toarray().numpy(), A.toarray().numpy())
    D = csr_matrix(A)  # another csr_matrix: shared
    assert D.data.data_ptr == A.data.data_ptr


def test_dense_and_empty(rng, cpu):
    dense = random_host((5, 4), "float32", rng)
    dense[dense < 0] = 0
    dense[2] = 0
    A = csr_matrix(dense, device=cpu)
    assert A.dtype == "float32" and A.nnz == int(np.count_nonzero(dense))
    np.testing.assert_array_equal(A.toarray().numpy(), dense)
    B = csr_matrix(porta.array(dense, device=cpu))
    np.testing.assert_array_equal(B.toarray().numpy(), dense)
    E = csr_matrix((3, 5), device=cpu)
    assert E.shape == (3, 5) and E.nnz == 0 and E.dtype == "float64"
    np.testing.assert_array_equal((E @ porta.ones(5, dtype="float64", device=cpu)).numpy(), np.zeros(3))
    # Zero columns and zero rows.
    Z = csr_matrix((3, 0), dtype="float32", device=cpu)
    np.testing.assert_array_equal((Z @ porta.zeros(0, device=cpu)).numpy(), np.zeros(3, dtype=np.float32))
    W = csr_matrix((0, 4), dtype="float32", device=cpu)
    assert (W @ porta.ones(4, device=cpu)).shape == (0,)


def test_host_dtype_conversion(cpu):
    # Host data may be converted (it is copied anyway); integers need dtype= to say which float.
    A = csr_matrix(([1, 2, 3], [0, 1, 2], [0, 1, 2, 3]), dtype="float32", device=cpu)
    assert A.dtype == "float32"
    np.testing.assert_array_equal(A.toarray().numpy(), np.diag([1, 2, 3]).astype(np.float32))
    assert csr_matrix((np.ones(3), [0, 1, 2], [0, 1, 2, 3]), dtype=np.float32, device=cpu).dtype == "float32"
    with pytest.raises(porta.InvalidArgument, match="dtype"):
        csr_matrix(([1, 2, 3], [0, 1, 2], [0, 1, 2, 3]), device=cpu)


class _FakeScipy:
    """What from_scipy reads of a scipy.sparse matrix, for machines without SciPy."""

    def __init__(self, data, indices, indptr, shape):
        self.data, self.indices, self.indptr, self.shape = data, indices, indptr, shape

    def tocsr(self):
        return self


def test_from_scipy_protocol(rng, cpu):
    data, indices, indptr = random_csr(rng, 7, 5, "float64")
    m = _FakeScipy(data, indices.astype(np.int32), indptr.astype(np.int32), (7, 5))
    A = csr_matrix.from_scipy(m, device=cpu)
    assert A.shape == (7, 5) and A.index_dtype == "int32"
    np.testing.assert_array_equal(A.toarray().numpy(), dense_reference(data, indices, indptr, (7, 5)))


@pytest.mark.parametrize("fmt", ["csr", "coo", "csc"])
def test_from_scipy(fmt, rng, cpu):
    sp = pytest.importorskip("scipy.sparse")
    m = sp.random(40, 30, density=0.1, format=fmt, dtype=np.float32, random_state=7)
    A = csr_matrix.from_scipy(m, device=cpu)
    assert A.shape == (40, 30) and A.dtype == "float32"
    np.testing.assert_array_equal(A.toarray().numpy(), m.toarray())
    B = csr_matrix(m, device=cpu, index_dtype="int64")
    assert B.index_dtype == "int64"
    xh = random_host((30,), "float32", rng)
    want = m.astype(np.float64) @ xh.astype(np.float64)
    absolute = abs(m).astype(np.float64) @ np.abs(xh.astype(np.float64))
    assert_close((B @ porta.array(xh, device=cpu)).numpy(), want, absolute, "float32", 30)


@pytest.mark.parametrize("dtype", FLOATS)
def test_spmm_alpha_beta_rules(dtype, rng, cpu):
    data, indices, indptr = random_csr(rng, 10, 8, dtype)
    A = csr_matrix((data, indices, indptr), shape=(10, 8), device=cpu)
    xh = random_host((8, 2), dtype, rng)
    x = porta.array(xh, device=cpu)
    # beta == 0 overwrites y: a NaN there does not come through.
    y = porta.full((10, 2), float("nan"), dtype=dtype, device=cpu)
    porta.sparse.spmm(1.0, A, x, 0.0, y)
    assert_same_bits(y.numpy(), A.dot(x).numpy())
    # alpha == 0 is y = beta * y.
    yh = random_host((10, 2), dtype, rng)
    y = porta.array(yh, device=cpu)
    porta.sparse.spmm(0.0, A, x, 2.0, y, stream=porta.Stream("cpu"))
    np.testing.assert_array_equal(y.numpy(), yh * np.asarray(2.0, dtype=dtype))


def test_bad_structure_is_invalid_argument(cpu):
    data, indices = np.ones(3), np.array([0, 1, 2])
    bad = {
        "decreases": np.array([0, 2, 1, 3]),
        "ends at": np.array([0, 1, 2, 2]),
        "indptr\\[0\\]": np.array([1, 1, 2, 3]),
        "offsets": np.array([0, 1, 3]),
    }
    for what, indptr in bad.items():
        with pytest.raises(porta.InvalidArgument, match=what):
            csr_matrix((data, indices, indptr), shape=(3, 3), device=cpu)
        with pytest.raises(porta.InvalidArgument, match=what):  # and from porta.Arrays
            csr_matrix((porta.array(data, device=cpu), porta.array(indices, device=cpu),
                        porta.array(indptr, device=cpu)), shape=(3, 3))
    with pytest.raises(porta.InvalidArgument, match="outside"):
        csr_matrix((data, np.array([0, 1, 3]), np.array([0, 1, 2, 3])), shape=(3, 3), device=cpu)
    with pytest.raises(porta.InvalidArgument, match="outside"):
        csr_matrix((data, (np.array([0, 1, 5]), np.array([0, 1, 2]))), shape=(3, 3), device=cpu)
    with pytest.raises(porta.InvalidArgument, match="int32"):
        csr_matrix((np.ones(1), np.array([2**31]), np.array([0, 1])), shape=(1, 4), index_dtype="int32", device=cpu)
    with pytest.raises(TypeError, match="integers"):
        csr_matrix((data, indices.astype(np.float64), np.array([0, 1, 2, 3])), device=cpu)


def test_dtype_mismatch_is_type_error(cpu):
    A = csr_matrix((np.ones(3, dtype=np.float32), np.array([0, 1, 2]), np.array([0, 1, 2, 3])), device=cpu)
    x64 = porta.ones(3, dtype="float64", device=cpu)
    x32 = porta.ones(3, dtype="float32", device=cpu)
    with pytest.raises(TypeError, match="float32.*float64.*does not promote"):
        A @ x64
    with pytest.raises(TypeError, match="does not promote"):
        A.dot(x64, algorithm="own")
    with pytest.raises(TypeError, match="does not promote"):
        porta.sparse.spmm(1.0, A, x64, 0.0, porta.zeros(3, dtype="float32", device=cpu))
    with pytest.raises(TypeError, match="does not promote"):
        porta.sparse.spmm(1.0, A, x32, 0.0, porta.zeros(3, dtype="float64", device=cpu))
    with pytest.raises(TypeError, match="porta.Array"):
        A @ np.ones(3, dtype=np.float32)
    with pytest.raises(TypeError, match="sparse"):
        A @ A
    # porta.Arrays are shared, so their dtypes must be the matrix's.
    d = porta.ones(3, dtype="float32", device=cpu)
    with pytest.raises(TypeError, match="int32 or both int64"):
        csr_matrix((d, porta.array(np.array([0, 1, 2], dtype=np.int32), device=cpu),
                    porta.array(np.array([0, 1, 2, 3], dtype=np.int64), device=cpu)))
    with pytest.raises(TypeError, match="float32 or float64"):
        csr_matrix((porta.ones(3, dtype="int64", device=cpu), porta.arange(3, device=cpu),
                    porta.arange(4, device=cpu)))
    with pytest.raises(TypeError, match="does not promote"):
        csr_matrix((d, porta.arange(3, device=cpu), porta.arange(4, device=cpu)), dtype="float64")
    with pytest.raises(TypeError, match="porta.Arrays"):
        csr_matrix((d, np.arange(3), np.arange(4)))


def test_other_errors(cpu):
    A = csr_matrix((np.ones(3), np.array([0, 1, 2]), np.array([0, 1, 2, 3])), device=cpu)
    with pytest.raises(porta.InvalidArgument, match="vector of 3"):
        A @ porta.ones(4, dtype="float64", device=cpu)
    with pytest.raises(porta.InvalidArgument, match="algorithm"):
        A.dot(porta.ones(3, dtype="float64", device=cpu), algorithm="fast")
    with pytest.raises(porta.InvalidArgument, match="expected 3"):
        porta.sparse.spmm(1.0, A, porta.ones(3, dtype="float64", device=cpu), 0.0,
                          porta.zeros(4, dtype="float64", device=cpu))
    with pytest.raises(TypeError):
        csr_matrix((np.ones(3), np.arange(3), np.arange(4), np.arange(4)))
