"""Half precision, values stored narrower than the matrix dtype, and complex values on the GPU: every kernel
instantiated for a precision against the exact product of the stored values within the bound of :mod:`cocktail.precision`, on
matrices far larger than a warp (power-law rows up to 3,000 long, empty rows, a banded matrix); ``format="auto"``,
cuSPARSE's half SpMV, block products and bound (graph-captured) products in every precision.

Marked ``gpu``: skipped where CuPy sees no CUDA device.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import cocktail
from cocktail import SparseMatrix, kernels, precision
from oracle import assert_within_precision

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy") if cocktail.arrays.cuda_available() else None

#: (matrix dtype, stored value dtype)
PRECISIONS = [("float16", None), ("float32", "float16"), ("float64", "float32"), ("complex64", None),
              ("complex128", None)]
if precision.BFLOAT16 is not None:
    PRECISIONS += [("bfloat16", None), ("float32", "bfloat16")]
IDS = [d if s is None else f"{d}-stored-{s}" for d, s in PRECISIONS]


def power_law(n=20_000, seed=3):
    """Rows of power-law lengths up to 3,000 (every thirteenth empty), values in [-1, 1)."""
    rng = np.random.default_rng(seed)
    lengths = np.minimum(rng.zipf(1.7, n), 3_000)
    lengths[::13] = 0
    rows = np.repeat(np.arange(n), lengths)
    return sp.csr_array((rng.uniform(-1, 1, rows.size), (rows, rng.integers(0, n, rows.size))), shape=(n, n))


def banded(n=30_000):
    """Seven diagonals, the outer ones far: for dia, ell, sell and bcsr."""
    offsets = [-500, -2, -1, 0, 1, 2, 500]
    return sp.diags([np.linspace(-1, 1, n - abs(o)) + 0.1 * k for k, o in enumerate(offsets)], offsets,
                    shape=(n, n), format="csr")


#: (format, kernel, kernel params, matrix)
CASES = [("csr", "csr_scalar", {}, power_law), ("csr", "csr_vector", {"threads_per_row": 4}, power_law),
         ("csr", "csr_vector", {"threads_per_row": 32}, power_law), ("csr", "csr_stream", {}, power_law),
         ("csr", "csr_merge", {}, power_law), ("coo", "coo_segmented", {}, power_law),
         ("coo", "coo_atomic", {}, power_law), ("hyb", "hyb", {}, power_law), ("ell", "ell", {}, banded),
         ("sell", "sell", {"threads_per_row": 1}, banded), ("sell", "sell", {"threads_per_row": 4}, power_law),
         ("dia", "dia", {}, banded), ("bcsr", "bcsr", {}, banded)]


def _operands(S, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x, y0 = rng.standard_normal(S.shape[1]), rng.standard_normal(S.shape[0])
    if np.dtype(dtype).kind == "c":
        x, y0 = x + 1j * rng.standard_normal(x.shape), y0 - 1j * rng.standard_normal(y0.shape)
    return x.astype(dtype), y0.astype(dtype)


def _values(S, dtype):
    """``S`` with complex values (a phase per entry) for a complex ``dtype``, else as it is."""
    if np.dtype(dtype).kind != "c":
        return S
    S = sp.csr_array(S).astype(np.complex128)
    S.data = S.data * np.exp(1j * np.linspace(0, 6.0, S.nnz))
    return S


@pytest.mark.parametrize("prec", PRECISIONS, ids=IDS)
@pytest.mark.parametrize("fmt,kernel,params,make", CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_every_kernel_in_every_precision(fmt, kernel, params, make, prec):
    dtype, stored = prec
    S = _values(make(), dtype)
    format_params = {"max_fill": None} if fmt in ("ell", "sell", "dia", "bcsr") else {}
    try:
        A = SparseMatrix(S, fmt, kernel=kernel, dtype=dtype, value_dtype=stored, **params, **format_params)
    except TypeError as exc:
        # coo_atomic adds into y with atomics, which take float and double only: a half y is refused by name
        assert kernel == "coo_atomic" and stored is None and "has no instantiation for" in str(exc), exc
        return
    assert A.kernel == kernel and A.dtype == precision.dtype_named(dtype)
    assert A.value_dtype == precision.dtype_named(stored or dtype)
    stored_values = A.to_scipy()  # the values as stored, widened exactly
    x, y0 = _operands(S, A.dtype)
    y = A @ cupy.asarray(x)
    assert y.dtype == A.dtype
    # a half y is rounded once per write of a row: csr_merge stores a row, then its fix-up may add the carries;
    # coo_segmented (and hyb's COO part) add a row's sum and its carries into a y already scaled
    rounds = {"csr_merge": 2, "coo_segmented": 3, "hyb": 3}.get(kernel, 1)
    assert_within_precision(y.get(), stored_values, x, A.dtype, rounds=rounds, what=kernel)
    out = cupy.asarray(y0)
    alpha, beta = (1.5 - 0.5j, -0.5 + 0.25j) if A.dtype.kind == "c" else (1.5, -0.5)
    A.matvec(cupy.asarray(x), out=out, alpha=alpha, beta=beta)
    assert_within_precision(out.get(), stored_values, x, A.dtype, alpha, beta, y0, rounds=rounds, what=kernel)
    out.fill(np.nan)  # beta == 0 never reads y
    A.matvec(cupy.asarray(x), out=out, alpha=-2.0, beta=0.0)
    assert_within_precision(out.get(), stored_values, x, A.dtype, -2.0, rounds=rounds, what=kernel)


@pytest.mark.parametrize("prec", PRECISIONS, ids=IDS)
@pytest.mark.parametrize("make", [power_law, banded])
def test_auto_plans_every_precision_with_kernels_that_take_it(modelled, make, prec):
    dtype, stored = prec
    S = _values(make(), dtype)
    A = SparseMatrix(S, dtype=dtype, value_dtype=stored)
    assert A.auto is not None
    want = kernels.spec.precision_name(A.dtype, A.value_dtype)
    for leaf in A._executor.block_executors():
        assert want in kernels.get(leaf.kernel).precisions, (leaf.kernel, want)
        if leaf.kernel == "hyb":  # a composed kernel: its COO part's kernel must take the precision too
            assert want in kernels.get(leaf.config["coo_kernel"]).precisions, (leaf.config, want)
    x, y0 = _operands(S, A.dtype, seed=1)
    out = cupy.asarray(y0)
    A.matvec(cupy.asarray(x), out=out, alpha=0.75, beta=0.25)
    parts = max(1, len(getattr(A.storage, "parts", ())))
    assert_within_precision(out.get(), A.to_scipy(), x, A.dtype, 0.75, 0.25, y0, rounds=parts + 1,
                            what=A.auto.plan.label(A.nnz))


@pytest.mark.parametrize("dtype", [d for d, s in PRECISIONS if s is None])
def test_cusparse_half_and_complex_spmv(dtype):
    S = _values(power_law(), dtype)
    A = SparseMatrix(S, "csr", kernel="cusparse_csr", dtype=dtype)
    x, y0 = _operands(S, A.dtype, seed=2)
    out = cupy.asarray(y0)
    A.matvec(cupy.asarray(x), out=out, alpha=1.25, beta=0.5)
    assert_within_precision(out.get(), A.to_scipy(), x, A.dtype, 1.25, 0.5, y0, what="cusparse_csr")


@pytest.mark.parametrize("prec", PRECISIONS, ids=IDS)
def test_block_and_bound_products_in_every_precision(prec):
    dtype, stored = prec
    S = _values(power_law(n=5_000), dtype)
    A = SparseMatrix(S, "csr", dtype=dtype, value_dtype=stored)
    X = np.stack([_operands(S, A.dtype, seed=j)[0] for j in range(5)], axis=1)
    Y = A @ cupy.asarray(X)  # no block kernel takes a narrow precision: one product per column
    assert Y.dtype == A.dtype
    stored_values = A.to_scipy()
    for j in range(5):
        assert_within_precision(Y[:, j].get(), stored_values, X[:, j], A.dtype, rounds=2)
    x = cupy.asarray(X[:, 0])
    y = cupy.zeros(S.shape[0], dtype=A.dtype)
    bound = A.bind(x, y, alpha=2.0)
    bound()
    bound()  # a replay of the captured graph
    assert_within_precision(y.get(), stored_values, X[:, 0], A.dtype, 2.0, rounds=2)


def test_a_half_matrix_of_a_format_without_a_half_kernel_is_refused_by_name():
    with pytest.raises(TypeError, match=r"no GPU kernel multiplies pkt matrices of float16.*store it as one of "
                                        r"bcsr, coo, csr, csr_pattern, csr_vi, dia, ell, hyb, sell"):
        SparseMatrix(power_law(n=2_000), "pkt", dtype="float16")


@pytest.mark.parametrize("prec", PRECISIONS, ids=IDS)
def test_conversions_and_transposes_in_every_precision(prec):
    dtype, stored = prec
    S = _values(power_law(n=3_000), dtype)
    A = SparseMatrix(S, "csr", dtype=dtype, value_dtype=stored)
    back = A.tocsr()  # cupyx has no half: a half matrix comes back in float32, narrower values widened
    assert back.dtype == precision.compute_dtype(A.dtype)
    np.testing.assert_array_equal(back.get().toarray(), A.to_scipy().toarray())
    u, _ = _operands(S.T, A.dtype, seed=5)
    assert_within_precision((A.T @ cupy.asarray(u)).get(), A.to_scipy().T, u, A.dtype, rounds=3)
    if A.value_dtype != A.dtype or precision.is_half(A.dtype):
        with pytest.raises(ValueError, match="needs transpose='store'"):
            SparseMatrix(S, "csr", dtype=dtype, value_dtype=stored, transpose="scatter")


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_scatter_add_of_complex_values_on_the_gpu(dtype):
    """CuPy's add.at takes real dtypes only: a complex scatter-add (the distributed product adds its off-diagonal
    block's rows so) goes through the real and imaginary parts, repeated indices accumulated."""
    rng = np.random.default_rng(5)
    index = rng.integers(0, 50, 400)
    values = (rng.standard_normal(400) + 1j * rng.standard_normal(400)).astype(dtype)
    base = (rng.standard_normal(50) + 1j * rng.standard_normal(50)).astype(dtype)
    want = base.copy()
    np.add.at(want, index, values)
    out = cupy.asarray(base)
    got = cocktail.arrays.scatter_add(out, cupy.asarray(index), cupy.asarray(values))
    assert got is out
    np.testing.assert_allclose(cupy.asnumpy(out), want, rtol=1e-5 if dtype == "complex64" else 1e-12)
