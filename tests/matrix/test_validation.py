"""Every bad input raises ValueError or TypeError naming the broken invariant, before any work."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import cocktail
from cocktail import SparseMatrix, reference, validate


def good():
    data = np.array([1.0, 2.0, 3.0])
    indices = np.array([0, 2, 1], dtype=np.int32)
    indptr = np.array([0, 2, 2, 3], dtype=np.int32)
    return data, indices, indptr


def build(data, indices, indptr, shape=(3, 3)):
    return SparseMatrix((data, indices, indptr), shape=shape, device="cpu")


@pytest.mark.parametrize("mutate, exc, message", [
    (lambda d, i, p: (d, i, p[:-1]), ValueError, "indptr must have rows+1 = 4 entries, got 3"),
    (lambda d, i, p: (d, i, np.array([1, 2, 2, 3])), ValueError, "indptr[0] must be 0, got 1"),
    (lambda d, i, p: (d, i, np.array([0, 2, 1, 3])), ValueError, "non-decreasing: indptr[2] = 1 < indptr[1] = 2"),
    (lambda d, i, p: (d, i, np.array([0, 2, 2, 2])), ValueError, "indptr[-1] must equal len(indices) and len(data)"),
    (lambda d, i, p: (d[:2], i, p), ValueError, "len(data) = 2"),
    (lambda d, i, p: (d, np.array([0, -4, 1]), p), ValueError, "non-negative: indices[1] = -4"),
    (lambda d, i, p: (d, np.array([0, 2, 7]), p), ValueError, "indices must be < cols = 3: indices[2] = 7"),
    (lambda d, i, p: (d, i.astype(np.float64), p), TypeError, "integer dtype, got float64"),
    (lambda d, i, p: (d, i, p.astype(np.float32)), TypeError, "integer dtype, got float32"),
    (lambda d, i, p: (d.astype(np.int64), i, p), TypeError, "dtype int64 is not supported"),
    (lambda d, i, p: (d.astype(np.int8), i, p), TypeError, "dtype int8 is not supported"),
    (lambda d, i, p: (d.reshape(3, 1), i, p), ValueError, "data must be 1-D"),
    (lambda d, i, p: (d, i.reshape(1, 3), p), ValueError, "indices must be 1-D"),
])
def test_bad_csr_arrays(mutate, exc, message):
    arrays = mutate(*good())
    with pytest.raises(exc) as info:
        build(*arrays)
    assert message in str(info.value)


@pytest.mark.parametrize("shape, exc, message", [
    ((3,), ValueError, "shape must be a pair"),
    ((-1, 3), ValueError, "shape must be non-negative"),
    ((3.0, 3), TypeError, "shape must hold integers"),
])
def test_bad_shape(shape, exc, message):
    with pytest.raises(exc, match=message):
        build(*good(), shape=shape)


def test_tuple_needs_shape():
    with pytest.raises(ValueError, match="needs shape="):
        SparseMatrix(good(), device="cpu")


def test_unsupported_input_type():
    with pytest.raises(TypeError, match="takes a scipy.sparse matrix"):
        SparseMatrix(np.eye(3), device="cpu")


def test_validation_never_mutates():
    arrays = good()
    before = [a.copy() for a in arrays]
    A = build(*arrays)
    np.testing.assert_array_equal(A @ np.ones(3), [3.0, 0.0, 3.0])
    for a, b in zip(arrays, before):
        np.testing.assert_array_equal(a, b)
        assert a.flags.writeable


def test_int32_only_when_it_fits():
    assert validate.choose_index_dtype(2**31 - 1) == np.int32
    assert validate.choose_index_dtype(2**31) == np.int64
    with pytest.raises(ValueError, match="index_dtype=int32 cannot hold 2147483648"):
        validate.choose_index_dtype(2**31, np.int32)
    with pytest.raises(TypeError, match="index_dtype must be one of int32, int64"):
        validate.choose_index_dtype(5, np.int16)
    A = build(*good())
    assert A.index_dtype == np.int32
    assert SparseMatrix(A, index_dtype="int64", device="cpu").index_dtype == np.int64


def test_dia_offsets_must_be_unique():
    validate.dia_offsets(np.array([-1, 0, 2]), (4, 4))
    with pytest.raises(ValueError, match="DIA offsets must be unique: offset 0 appears more than once"):
        validate.dia_offsets(np.array([-1, 0, 2, 0]), (4, 4))
    with pytest.raises(TypeError, match="integer dtype"):
        validate.dia_offsets(np.array([0.0]), (4, 4))


@pytest.fixture
def A():
    return build(*good())


@pytest.mark.parametrize("x, exc, message", [
    (np.ones(4), ValueError, "x has 4 rows but the matrix has 3 columns"),
    (np.ones((3, 2, 2)), ValueError, "1-D (n,) or 2-D (n, k)"),
    (np.ones(3, dtype=np.complex128), TypeError, "complex128, which does not cast safely to the matrix dtype float64"),
    (np.array(["a", "b", "c"]), TypeError, "x must be numeric"),
    ([1.0, 2.0, 3.0], TypeError, "x must be an array"),
])
def test_bad_x(A, x, exc, message):
    with pytest.raises(exc) as info:
        reference.spmv(A.storage, x)
    assert message in str(info.value)


def test_float64_x_into_float32_matrix_gives_float64():
    A = SparseMatrix(sp.eye_array(3, format="csr"), dtype=np.float32, device="cpu")
    assert (A @ np.ones(3)).dtype == np.float64  # numpy.result_type, as SciPy
    assert (A @ np.ones(3, dtype=np.float32)).dtype == np.float32
    assert (A @ np.ones(3, dtype=np.int8)).dtype == np.float32


@pytest.mark.parametrize("out, exc, message", [
    (np.zeros(4), ValueError, "out must have shape (3,) for this product, got (4,)"),
    (np.zeros((3, 1)), ValueError, "out must have shape (3,)"),
    (np.zeros(3, dtype=np.float32), TypeError, "out must have the matrix dtype float64, got float32"),
])
def test_bad_out(A, out, exc, message):
    with pytest.raises(exc) as info:
        A.matvec(np.ones(3), out=out)
    assert message in str(info.value)


def test_read_only_out(A):
    out = np.zeros(3)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="out is read-only"):
        A.matvec(np.ones(3), out=out)


def test_beta_without_out(A):
    with pytest.raises(ValueError, match="beta != 0 needs out="):
        A.matvec(np.ones(3), beta=1.0)


@pytest.mark.parametrize("alpha, exc, message", [
    ("2", TypeError, "alpha must be a scalar number"),
    (1 + 2j, TypeError, "is complex but the matrix dtype float64 is real"),
    (np.ones(2), TypeError, "alpha must be a scalar number"),
])
def test_bad_alpha(A, alpha, exc, message):
    with pytest.raises(exc) as info:
        A.matvec(np.ones(3), alpha=alpha)
    assert message in str(info.value)


def test_matvec_and_matmat_dimensionality(A):
    with pytest.raises(ValueError, match="matvec takes a 1-D x"):
        A.matvec(np.ones((3, 2)))
    with pytest.raises(ValueError, match="matmat takes a 2-D X"):
        A.matmat(np.ones(3))
    with pytest.raises(TypeError, match="A @ x needs a 1-D or 2-D array"):
        A @ 3.0


def test_unknown_format_and_parameter():
    with pytest.raises(ValueError, match="unknown format 'nope'; registered formats: csr, csr_pattern, csr_vi, coo"):
        build(*good()).__class__(sp.eye_array(3), format="nope", device="cpu")
    with pytest.raises(TypeError, match="format 'csr' has no parameter 'width'"):
        SparseMatrix(sp.eye_array(3), format="csr", device="cpu", width=3)
    with pytest.raises(TypeError, match="format='auto' picks its own format, kernel and parameters"):
        SparseMatrix(sp.eye_array(3), format="auto", device="cpu", width=3)


def test_bad_device():
    with pytest.raises(ValueError, match="device must be one of"):
        SparseMatrix(sp.eye_array(3), device="tpu")


def test_bad_dtype_argument():
    with pytest.raises(TypeError, match="dtype int32 is not supported"):
        SparseMatrix(sp.eye_array(3), device="cpu", dtype=np.int32)


def test_errors_are_cocktail_errors_where_raised_on_purpose():
    assert issubclass(cocktail.MatrixFileError, cocktail.CocktailError)
    assert issubclass(cocktail.FormatFillError, ValueError)


def test_scipy_dia_with_duplicate_offsets_is_refused():
    D = sp.dia_array((np.ones((2, 4)), np.array([0, 1])), shape=(4, 4))
    D.offsets = np.array([0, 0])  # SciPy checks offsets only at construction
    with pytest.raises(ValueError, match="DIA offsets must be unique: offset 0 appears more than once"):
        SparseMatrix(D, device="cpu")
    D.offsets = np.array([0, 1])
    np.testing.assert_array_equal(SparseMatrix(D, device="cpu") @ np.ones(4), D @ np.ones(4))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_scalars_that_overflow_the_dtype_are_refused_by_name(dtype):
    import scipy.sparse as sp

    from cocktail import SparseMatrix

    A = SparseMatrix(sp.eye(3, format="csr", dtype=dtype), device="cpu")
    x, y = np.ones(3, dtype), np.zeros(3, dtype)
    with pytest.raises(ValueError, match=r"alpha = 1000000000000000\.\.\. \(401 digits\) does not fit the matrix dtype"):
        A.matvec(x, alpha=10**400)
    if np.dtype(dtype).itemsize * (1 if np.dtype(dtype).kind == "f" else 0.5) < 8:  # 32-bit parts
        with pytest.raises(ValueError, match=r"beta = 1e\+300 overflows the matrix dtype \w+ \(largest 3\.403e\+38\)"):
            A.matvec(x, out=y, beta=1e300)
    else:
        np.testing.assert_allclose(A.matvec(x, alpha=1e300), np.full(3, 1e300))
    assert np.isnan(A.matvec(x, alpha=float("nan"))).all()  # given, not produced by an overflow


def test_a_sparse_x_is_refused_with_the_fix():
    import scipy.sparse as sp

    from cocktail import SparseMatrix

    A = SparseMatrix(sp.eye(3, format="csr"), device="cpu")
    with pytest.raises(TypeError, match=r"X is a sparse csr_array: pass a dense array \(X.toarray\(\)\)"):
        A @ sp.csr_array(np.ones((3, 1)))
