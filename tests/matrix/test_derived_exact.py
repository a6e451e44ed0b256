"""Every matrix made from another holds exactly the values it should, bit for bit, in every install.

``SparseMatrix(S)`` of a SciPy matrix and every matrix derived from it (transposes, the conjugate, scaled and
negated forms, copies, ``astype`` to its own dtype, a product by 1) must hold exactly the values SciPy computes,
for float32, float64, complex64 and complex128, on the CPU and on the GPU.  Without the optional ml_dtypes these
once took a bfloat16 path through float32 for float64 (``np.dtype("float64") != None`` is False), rounding every
value to float32 precision; the test runs in installs without ml_dtypes too (CI's minimal leg, and
tests/test_optional_packages.py with ml_dtypes hidden).  The products that run through a derived matrix
(``rmatvec``, ``rmatmat``, ``x @ A``, SciPy's ``lsmr``) are checked against an error bound of their own dtype,
which float32-rounded values break by orders of magnitude.

Values are drawn so that none is representable in a narrower dtype: a float64 value rounded to float32 is never
itself.  The sizes reach past a warp and past several slices and blocks (the GPU kernels' units).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from cocktail import SparseMatrix

DTYPES = ["float32", "float64", "complex64", "complex128"]
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
#: Formats stored with every kind of value: the planner's choice, and two that store values in their own layout.
FORMATS = ["auto", "csr", "ell"]
SEEDS = [0, 1, 2]


#: Each dtype's real part and the next narrower real dtype, which none of the drawn values may be representable in.
_NARROWER_PART = {"float32": np.float16, "float64": np.float32, "complex64": np.float16, "complex128": np.float32}


def _source(dtype, seed: int, shape=(157, 93), density=0.08):
    """A canonical SciPy CSR matrix of ``dtype`` whose values (each part of a complex one) are never representable
    in the next narrower dtype, so any rounding through it shows."""
    rng = np.random.default_rng(seed)
    S = sp.random_array(shape, density=density, format="csr", rng=rng, dtype=np.float64)
    real = np.dtype(dtype).kind == "f"
    data = rng.uniform(0.5, 2.0, S.nnz) * rng.choice([-1.0, 1.0], S.nnz)
    if not real:
        data = data + 1j * rng.uniform(0.5, 2.0, S.nnz)
    data = data.astype(dtype)
    narrow = _NARROWER_PART[np.dtype(dtype).name]
    for part in ((data,) if real else (data.real, data.imag)):  # views: a value that happens to be
        same = part.astype(narrow).astype(part.dtype) == part  # narrow-representable moves up one ulp
        part[same] = np.nextafter(part[same], np.inf)
    out = sp.csr_array((data, S.indices.copy(), S.indptr.copy()), shape=shape)
    out.sort_indices()
    return out


def _host_csr(M) -> sp.csr_array:
    """``M`` (SciPy, cupyx or a SparseMatrix) as a canonical SciPy CSR array on the host."""
    if isinstance(M, SparseMatrix):
        M = M.to_scipy()
    elif not sp.issparse(M):  # cupyx
        M = M.get()
    M = sp.csr_array(M)
    M.sort_indices()
    return M


def _assert_identical(got, want, what: str) -> None:
    """``got`` holds exactly ``want``'s entries: shape, dtype, pattern and every value's bits."""
    g, w = _host_csr(got), _host_csr(want)
    assert g.shape == w.shape, (what, g.shape, w.shape)
    assert g.dtype == w.dtype, f"{what}: dtype {g.dtype} != {w.dtype}"
    assert np.array_equal(g.indptr, w.indptr) and np.array_equal(g.indices, w.indices), f"{what}: pattern differs"
    differ = g.data.view(np.uint8).reshape(len(g.data), -1) != w.data.view(np.uint8).reshape(len(w.data), -1)
    bad = np.flatnonzero(differ.any(axis=1))
    assert bad.size == 0, (f"{what}: {bad.size} of {g.nnz} values differ from SciPy's, the worst by "
                           f"{np.max(np.abs(g.data[bad] - w.data[bad])):.3g} (e.g. {g.data[bad[0]]!r} != "
                           f"{w.data[bad[0]]!r})")


def _derived(A):
    """``name -> (the derived matrix, its SciPy expectation from A's source)``, each a pair of callables."""
    return {
        "A": (lambda: A, lambda S: S),
        "A.T": (lambda: A.T, lambda S: S.T),
        "A.H": (lambda: A.H, lambda S: S.conj().T),
        "A.transpose()": (lambda: A.transpose(), lambda S: S.T),
        "A.adjoint()": (lambda: A.adjoint(), lambda S: S.conj().T),
        "A.conj()": (lambda: A.conj(), lambda S: S.conj()),
        "A.T.T": (lambda: A.T.T, lambda S: S),
        "A * 2": (lambda: A * 2, lambda S: S * 2),
        "2 * A": (lambda: 2 * A, lambda S: S * 2),
        "A * 1": (lambda: A * 1, lambda S: S),
        "A / 1": (lambda: A / 1, lambda S: S),
        "-A": (lambda: -A, lambda S: -S),
        "A.copy()": (lambda: A.copy(), lambda S: S),
        "A.astype(own dtype)": (lambda: A.astype(A.dtype), lambda S: S),
        "A.astype(own name)": (lambda: A.astype(A.dtype.name), lambda S: S),
        "A.astype(own, copy=False)": (lambda: A.astype(A.dtype, copy=False), lambda S: S),
        "A.tocsr()": (lambda: A.tocsr(), lambda S: S),
        "A.tocsc()": (lambda: A.tocsc(), lambda S: S),
        "A.tocoo()": (lambda: A.tocoo(), lambda S: S),
        "A.T.tocsr()": (lambda: A.T.tocsr(), lambda S: S.T),
    }


DERIVED = list(_derived(None))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_derived_matrices_hold_scipy_values_bit_for_bit(dtype, fmt, device):
    for seed in SEEDS:
        S = _source(dtype, seed)
        A = SparseMatrix(S, format=fmt, device=device, dtype=dtype)
        assert A.dtype == np.dtype(dtype) and A.value_dtype == np.dtype(dtype)
        for name, (made, expected) in _derived(A).items():
            got = made()
            if isinstance(got, SparseMatrix):
                assert got.device == device, name
            _assert_identical(got, expected(S), f"{name} of a {dtype} {fmt} matrix on {device} (seed {seed})")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_dtype_given_as_the_source_dtype_keeps_every_value(dtype, device):
    """``SparseMatrix(S, dtype=S.dtype)`` and ``SparseMatrix(S)`` store the same bits, and so does a matrix of a
    matrix."""
    S = _source(dtype, 7)
    for A in (SparseMatrix(S, device=device), SparseMatrix(S, device=device, dtype=dtype),
              SparseMatrix(S, device=device, dtype=np.dtype(dtype)),
              SparseMatrix(SparseMatrix(S, device=device), device=device, dtype=dtype)):
        _assert_identical(A, S, f"SparseMatrix of a {dtype} matrix on {device}")


def _xp(device):
    return np if device == "cpu" else pytest.importorskip("cupy")


def _host(a):
    return a if isinstance(a, np.ndarray) else a.get()


def _assert_product(got, S, x, what: str) -> None:
    """``got`` is ``S @ x`` to ``S``'s own precision: per entry within ``4 (k+2) eps |S||x|`` of the product computed
    in complex128/float64 from the same stored values (float32-rounded float64 values miss it by 1e7)."""
    got = _host(got)
    wide = np.complex128 if np.iscomplexobj(S.data) or np.iscomplexobj(x) else np.float64
    want = S.astype(wide) @ x.astype(wide)
    absS = sp.csr_array((np.abs(S.data).astype(np.float64), S.indices, S.indptr), shape=S.shape)
    k = np.diff(S.indptr).astype(np.float64)
    if x.ndim == 2:
        k = k[:, None]
    bound = 4 * np.finfo(S.dtype).eps * (k + 2) * (absS @ np.abs(x).astype(np.float64)) + np.finfo(S.dtype).tiny
    err = np.abs(got.astype(wide) - want)
    assert got.dtype == S.dtype, f"{what}: result dtype {got.dtype} != {S.dtype}"
    assert (err <= bound).all(), f"{what}: error {err.max():.3g} past the bound ({bound[err > bound].min():.3g})"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_products_through_derived_matrices_keep_their_precision(dtype, device):
    xp = _xp(device)
    S = _source(dtype, 3)
    A = SparseMatrix(S, device=device, dtype=dtype)
    rng = np.random.default_rng(11)
    kind = np.dtype(dtype).kind

    def operand(*shape):
        v = rng.uniform(0.5, 2.0, shape)
        return (v + 1j * rng.uniform(0.5, 2.0, shape) if kind == "c" else v).astype(dtype)

    x, u, U = operand(S.shape[1]), operand(S.shape[0]), operand(S.shape[0], 4)
    cases = [
        ("A @ x", lambda: A @ xp.asarray(x), S, x),
        ("A.rmatvec(u)", lambda: A.rmatvec(xp.asarray(u)), S.conj().T.tocsr(), u),
        ("A.rmatmat(U)", lambda: A.rmatmat(xp.asarray(U)), S.conj().T.tocsr(), U),
        ("u @ A", lambda: xp.asarray(u) @ A, S.T.tocsr(), u),
        ("A.T @ u", lambda: A.T @ xp.asarray(u), S.T.tocsr(), u),
        ("(-A) @ x", lambda: (-A) @ xp.asarray(x), (-S).tocsr(), x),
        ("(A * 2) @ x", lambda: (A * 2) @ xp.asarray(x), (S * 2).tocsr(), x),
        ("A.copy() @ x", lambda: A.copy() @ xp.asarray(x), S, x),
    ]
    for what, product, M, operand_ in cases:
        _assert_product(product(), M, operand_, f"{what}, {dtype} on {device}")


@pytest.mark.parametrize("device", DEVICES)
def test_lsmr_through_the_transpose_solves_a_float64_problem_in_float64(device):
    """lsmr multiplies by ``A`` and ``A.H``: with our matrix (SciPy's lsmr on the CPU, cupyx's on the GPU) it must
    reach SciPy's own solution to float64 precision (float32-rounded values left it about 1e-7 off)."""
    xp = _xp(device)
    S = _source("float64", 5, shape=(300, 120), density=0.05)
    S = (S + sp.eye_array(300, 120, format="csr") * 4).tocsr()
    b = np.random.default_rng(2).uniform(-1, 1, 300)
    tol = dict(atol=1e-15, btol=1e-15, maxiter=5000)
    want = spla.lsmr(S, b, **tol)[0]
    A = SparseMatrix(S, device=device)
    if device == "cpu":
        got = spla.lsmr(A, b, **tol)[0]
    else:
        csla = pytest.importorskip("cupyx.scipy.sparse.linalg")
        got = _host(csla.lsmr(A, xp.asarray(b), **tol)[0])
    assert np.linalg.norm(got - want) <= 1e-11 * np.linalg.norm(want), np.linalg.norm(got - want)
