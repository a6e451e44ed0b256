"""The LinearOperator protocol, transposes and SciPy's conveniences of a SparseMatrix, on the CPU.

SciPy's own sparse array is the oracle: every product, solver and conversion is compared with the
same call on it.  ``test_gpu_operator.py`` runs the GPU side (cupyx's solvers, the scatter kernels).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as sla

import cocktail

warnings.simplefilter("ignore", cocktail.CPUFallbackWarning)

FORMATS = ("csr", "coo", "ell", "dia", "bcsr", "hyb", "cocktail")
#: Format parameters that let a random matrix be stored in a padded format (the transpose gets them too).
PARAMS = {"dia": {"max_fill": None}, "ell": {"max_fill": None},
          "cocktail": {"parts": [("dia", {"max_fill": None}, ("diagonals", [0])), ("csr", {}, ("rest",))]}}


def _spd(n=150, seed=0):
    """A symmetric positive definite matrix: random entries, symmetrised, diagonal dominant."""
    rng = np.random.default_rng(seed)
    R = sp.random_array((n, n), density=0.04, format="csr", rng=rng)
    return ((R + R.T) + sp.eye_array(n) * 8.0).tocsr()


def _rect(m=190, n=120, seed=1, dtype=np.float64):
    rng = np.random.default_rng(seed)
    R = sp.random_array((m, n), density=0.06, format="csr", rng=rng, dtype=dtype)
    if np.dtype(dtype).kind == "c":
        R = (R + 1j * sp.random_array((m, n), density=0.06, format="csr", rng=rng)).tocsr()
    return R


@pytest.fixture(scope="module")
def spd():
    S = _spd()
    return S, cocktail.SparseMatrix(S, device="cpu")


def test_is_a_scipy_linear_operator(spd):
    S, A = spd
    assert isinstance(A, sla.LinearOperator)
    assert sla.aslinearoperator(A) is A  # SciPy's solvers get our block product too
    assert A.shape == S.shape and A.dtype == S.dtype


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_transposes_match_scipy(fmt, dtype):
    R = _rect(dtype=dtype)
    A = cocktail.SparseMatrix(R, format=fmt, device="cpu", **PARAMS.get(fmt, {}))
    rng = np.random.default_rng(2)
    u = rng.standard_normal(R.shape[0]) + (1j * rng.standard_normal(R.shape[0]) if A.dtype.kind == "c" else 0)
    U = rng.standard_normal((R.shape[0], 3))
    np.testing.assert_allclose(A.T @ u, R.T @ u, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(A.H @ u, R.conj().T @ u, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(A.rmatvec(u), R.conj().T @ u, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(A.rmatmat(U), R.conj().T @ U, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(u @ A, u @ R, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(U.T @ A, U.T @ R, rtol=1e-12, atol=1e-12)
    assert A.T.shape == (R.shape[1], R.shape[0])
    assert A.T.T is A and A.H.H is A and A.transpose() is A.T and A.adjoint() is A.H
    assert (A.H is A.T) == (A.dtype.kind != "c")
    assert A.T.format == fmt  # built with the same options


def test_transpose_is_built_once_and_lazily():
    A = cocktail.SparseMatrix(_rect(), device="cpu")
    assert "T" not in A._kept  # nothing built until asked
    first = A.T
    assert A.T is first and A._kept["T"] is first


def test_transpose_does_not_keep_its_matrix_alive():
    import gc
    import weakref

    A = cocktail.SparseMatrix(_rect(), device="cpu")
    B = A.T
    ref = weakref.ref(A)
    del A
    gc.collect()
    assert ref() is None  # A.T refers back weakly
    assert B.T.shape == (190, 120)  # ... and builds the transpose again where A is gone


@pytest.mark.parametrize("fmt", ["csr", "dia", "ell", "hyb"])
def test_scatter_transpose_stores_nothing(fmt):
    R = _rect()
    A = cocktail.SparseMatrix(R, format=fmt, device="cpu", transpose="scatter", **PARAMS.get(fmt, {}))
    u = np.random.default_rng(3).standard_normal(R.shape[0])
    np.testing.assert_allclose(A.T @ u, R.T @ u, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(A.T.matmat(np.stack([u, 2 * u], 1)), R.T @ np.stack([u, 2 * u], 1), rtol=1e-12)
    assert A.T.storage is A.storage  # the transpose's products read A's own arrays
    assert A.T.format == f"{fmt}^T" and A.T.T is A
    assert "transpose='scatter'" in A.T.explain()
    np.testing.assert_allclose(A.T.toarray(), R.T.toarray())


def test_transpose_option_is_checked():
    with pytest.raises(ValueError, match="transpose must be one of"):
        cocktail.SparseMatrix(_rect(), device="cpu", transpose="lazy")


def test_matvec_takes_a_column_vector(spd):
    S, A = spd
    x = np.arange(S.shape[1], dtype=np.float64)
    y = A.matvec(x[:, None])
    assert y.shape == (S.shape[0], 1)
    np.testing.assert_allclose(y[:, 0], S @ x)
    assert A.rmatvec(x[:, None]).shape == (S.shape[1], 1)
    out = np.empty((S.shape[0], 1))
    assert A.matvec(x[:, None], out=out) is out


@pytest.mark.parametrize("xdtype,want", [(np.float64, np.float64), (np.int64, np.float64), (np.int32, np.float64),
                                         (np.complex64, np.complex64), (np.complex128, np.complex128),
                                         (np.float32, np.float32), (np.int16, np.float32)])
def test_results_follow_numpy_result_type(xdtype, want):
    S = _rect().astype(np.float32)
    A = cocktail.SparseMatrix(S, device="cpu")
    rng = np.random.default_rng(4)
    x = (rng.standard_normal(S.shape[1]) * 4).astype(xdtype)
    if np.dtype(xdtype).kind == "c":
        x = x + 1j * np.arange(S.shape[1]).astype(xdtype)
    y = A @ x
    assert y.dtype == np.result_type(S.dtype, x.dtype) == want
    # Without loss: a float64 x is multiplied by the float32 values in float64.
    exact = S.astype(y.dtype) @ x.astype(y.dtype)
    np.testing.assert_allclose(y, exact, rtol=1e-5 if want == np.float32 else 1e-13, atol=1e-12)
    Y = A @ np.stack([x, x], 1)
    assert Y.dtype == want
    np.testing.assert_allclose(Y[:, 1], exact, rtol=1e-5 if want == np.float32 else 1e-13, atol=1e-12)


def test_widened_products_with_out_alpha_beta():
    S = _rect().astype(np.float32)
    A = cocktail.SparseMatrix(S, device="cpu")
    x = np.linspace(-1, 1, S.shape[1]) + 0.5j
    out = np.ones(S.shape[0], dtype=np.complex128)
    got = A.matvec(x, out=out, alpha=2.0, beta=-1j)
    assert got is out
    np.testing.assert_allclose(out, 2.0 * (S.astype(np.float64) @ x) - 1j, rtol=1e-13)
    wide = A.matvec(np.linspace(0, 1, S.shape[1]))  # float64: a float64 copy of A, built once and kept
    assert wide.dtype == np.float64 and ("dtype", "float64") in A._kept
    with pytest.raises(TypeError, match="result dtype complex128"):
        A.matvec(x, out=np.empty(S.shape[0], dtype=np.float32))


def test_scalar_multiples_and_conversions(spd):
    S, A = spd
    x = np.linspace(0, 1, S.shape[1])
    for made, want in [(A * 2, 2 * S), (3 * A, 3 * S), (-A, -S), (A / 4, S / 4), (+A, S)]:
        assert isinstance(made, cocktail.SparseMatrix)
        np.testing.assert_allclose(made @ x, want @ x, rtol=1e-13)
    assert (A * np.float32(2)).dtype == np.float64
    assert (cocktail.SparseMatrix(S.astype(np.float32), device="cpu") * 2.0).dtype == np.float32
    assert (A * 1j).dtype == np.complex128
    assert A.astype(np.float32).dtype == np.float32 and A.astype(np.float64, copy=False) is A
    copy = A.copy()
    assert copy is not A and copy.storage is not A.storage
    assert not any(np.shares_memory(a, b) for a in A.storage.arrays().values() for b in copy.storage.arrays().values())
    np.testing.assert_array_equal(copy.toarray(), S.toarray())
    assert isinstance(A.tocsr(), sp.csr_array) and (A.tocsr() != S).nnz == 0
    assert (A.tocoo() != S).nnz == 0 and (A.tocsc() != S).nnz == 0
    np.testing.assert_array_equal(A.toarray(), S.toarray())
    np.testing.assert_array_equal(A.diagonal(), S.diagonal())
    assert A.trace() == pytest.approx(S.trace())
    assert A.conj() is A
    assert sp.csr_array(A.tocsr()).nnz == S.nnz


def test_conj_of_complex():
    R = _rect(dtype=np.complex128)
    A = cocktail.SparseMatrix(R, device="cpu")
    x = np.ones(R.shape[1])
    np.testing.assert_allclose(A.conj() @ x, R.conj() @ x)
    assert A.conj() is A.conj()  # kept


@pytest.mark.parametrize("expr,match", [
    ("A + A.tocsr()", "A \\+ B"), ("A.tocsr() + A", "B \\+ A"), ("A - 1", "A - B"), ("A[0, 0]", "indexing"),
    ("A.multiply(A)", "A.multiply"), ("A.sum()", "A.sum"), ("np.asarray(A)", "toarray"), ("A * x", "A @ x"),
    ("x * A", "x @ A"), ("A / x", "division"), ("x @ A @ A", None)])
def test_what_an_operator_refuses_says_what_to_call(spd, expr, match):
    S, A = spd
    x = np.ones(S.shape[0])
    if match is None:  # x @ A @ A is two row-vector products, not a refusal
        np.testing.assert_allclose(eval(expr), x @ S @ S)
        return
    with pytest.raises(TypeError, match=match):
        eval(expr)


def test_scipy_operator_algebra_still_composes(spd):
    S, A = spd
    x = np.linspace(0, 1, S.shape[1])
    total = A + sla.aslinearoperator(S)  # SciPy's lazy sum of operators
    np.testing.assert_allclose(total @ x, 2 * (S @ x))
    np.testing.assert_allclose((A * sla.aslinearoperator(S)) @ x, S @ (S @ x))
    np.testing.assert_allclose(A.dot(x), S @ x)
    np.testing.assert_allclose(A.dot(list(x)), S @ x)
    np.testing.assert_allclose(A(x), S @ x)
    np.testing.assert_allclose((A ** 2) @ x, S @ (S @ x))  # SciPy's lazy power
    B = cocktail.SparseMatrix(S, device="cpu")
    difference = A - B
    assert B in difference.args[1].args  # B itself, lazily negated: never a copy of it
    np.testing.assert_allclose(difference @ x, 0 * x, atol=1e-12)


# --- every solver of scipy.sparse.linalg takes a SparseMatrix directly -------------------------------

def _solve_check(name, S, A):
    rng = np.random.default_rng(5)
    b = rng.standard_normal(S.shape[0])
    if name in ("cg", "gmres", "minres", "bicgstab"):
        x, info = getattr(sla, name)(A, b, rtol=1e-10)
        assert info == 0
        np.testing.assert_allclose(S @ x, b, atol=1e-7)
    elif name in ("lsqr", "lsmr"):
        R = _rect()
        B = cocktail.SparseMatrix(R, device="cpu")
        r = rng.standard_normal(R.shape[0])
        ours, theirs = getattr(sla, name)(B, r)[0], getattr(sla, name)(R, r)[0]
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    elif name == "eigsh":
        np.testing.assert_allclose(np.sort(sla.eigsh(A, k=4)[0]), np.sort(sla.eigsh(S, k=4)[0]), rtol=1e-10)
    elif name == "svds":
        R = _rect()
        got = sla.svds(cocktail.SparseMatrix(R, device="cpu"), k=4, random_state=0)[1]
        np.testing.assert_allclose(np.sort(got), np.sort(sla.svds(R, k=4, random_state=0)[1]), rtol=1e-10)
    elif name == "lobpcg":
        X0 = rng.standard_normal((S.shape[0], 3))
        got = sla.lobpcg(A, X0, tol=1e-9, maxiter=500)[0]
        want = sla.lobpcg(S, X0, tol=1e-9, maxiter=500)[0]
        np.testing.assert_allclose(np.sort(got), np.sort(want), rtol=1e-8)
    elif name == "onenormest":
        assert sla.onenormest(A) == pytest.approx(sla.onenormest(S))
    elif name == "expm_multiply":
        M, T = -0.05 * A, -0.05 * S
        np.testing.assert_allclose(sla.expm_multiply(M, b, traceA=M.trace()), sla.expm_multiply(T, b),
                                   rtol=1e-10, atol=1e-12)
    else:  # pragma: no cover
        raise AssertionError(name)


@pytest.mark.parametrize("name", ["cg", "gmres", "minres", "bicgstab", "lsqr", "lsmr", "eigsh", "svds", "lobpcg",
                                  "onenormest", "expm_multiply"])
def test_scipy_solver_takes_a_sparse_matrix(spd, name):
    S, A = spd
    _solve_check(name, S, A)


def test_float32_matrix_with_float64_right_hand_side(spd):
    S, _ = spd
    A32 = cocktail.SparseMatrix(S.astype(np.float32), device="cpu")
    b = np.random.default_rng(6).standard_normal(S.shape[0])
    x, info = sla.cg(A32, b, rtol=1e-10)
    assert info == 0 and x.dtype == np.float64
    np.testing.assert_allclose(S.astype(np.float32).astype(np.float64) @ x, b, atol=1e-7)


def test_complex_right_hand_side_on_real_matrix(spd):
    S, A = spd
    b = np.random.default_rng(7).standard_normal(S.shape[0]) * (1 + 2j)
    x, info = sla.gmres(A, b, rtol=1e-10)
    assert info == 0 and x.dtype == np.complex128
    np.testing.assert_allclose(S @ x, b, atol=1e-7)


def test_transposes_of_a_scatter_transpose():
    R = _rect(dtype=np.complex128)
    A = cocktail.SparseMatrix(R, device="cpu", transpose="scatter")
    v = np.linspace(0, 1, R.shape[1]) + 1j
    np.testing.assert_allclose(A.T.H @ v, R.conj() @ v, rtol=1e-12)  # (A^T)^H is conj(A)
    np.testing.assert_allclose(A.H.T @ v, R.conj() @ v, rtol=1e-12)
    assert A.T.T is A and A.H.H is A
    B = cocktail.SparseMatrix(_rect(), device="cpu", transpose="scatter").T  # its matrix kept alive by it
    import gc

    gc.collect()
    np.testing.assert_allclose(B.T @ np.ones(120), _rect() @ np.ones(120), rtol=1e-12)


def test_a_transpose_that_the_format_refuses_says_so():
    n = 200
    S = sp.csr_array((np.ones(n), (np.arange(n), np.zeros(n, dtype=int))), shape=(n, n))  # one dense column
    A = cocktail.SparseMatrix(S, format="ell", device="cpu")
    with pytest.raises(cocktail.FormatFillError, match=r"building A.T .* transpose='scatter'"):
        A.rmatvec(np.ones(n))


def test_widened_operands_are_checked_before_the_wider_copy_is_built():
    A = cocktail.SparseMatrix(_rect().astype(np.float32), device="cpu")
    with pytest.raises(ValueError, match="x has 5 rows"):
        A @ np.ones(5)
    assert not any(isinstance(key, tuple) for key in A._kept)  # no float64 copy built for a refused x
    with pytest.raises(ValueError, match=r"matvec takes a 1-D x"):
        A.matvec(np.ones((120, 3), dtype=np.complex128))
    with pytest.raises(TypeError, match="alpha must be a scalar"):
        A.matvec(np.ones(120), alpha="2")
    with pytest.raises(TypeError, match="alpha = 1j is complex"):  # the result (float64) cannot hold it
        A.matvec(np.ones(120), alpha=1j)


def test_adjoint_and_row_vector_shape_errors_name_the_matrix_itself():
    A = cocktail.SparseMatrix(_rect(), device="cpu")  # 190 x 120
    with pytest.raises(ValueError, match=r"rmatvec: x has 120 rows but the matrix has 190 rows \(shape \(190, 120\)"):
        A.rmatvec(np.ones(120))
    with pytest.raises(ValueError, match=r"rmatmat: x has 5 rows but the matrix has 190 rows"):
        A.rmatmat(np.ones((5, 2)))
    with pytest.raises(ValueError, match=r"x @ A: x has 7 entries but the matrix has 190 rows"):
        np.ones(7) @ A
    with pytest.raises(ValueError, match=r"x @ A: x has 7 entries per row but the matrix has 190 rows"):
        np.ones((3, 7)) @ A
