"""Executors chosen at construction, on the CPU: SciPy's compiled product, the reference, bound products."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail import CPUFallbackWarning, SparseMatrix, matrix
from configs import CONFIGS, config_id
from oracle import assert_product_close, few_values, unbounded, value_limited

SCIPY_LAYOUTS = ("csr", "coo", "dia", "bcsr")


def _sample(m=64, n=48, seed=0, dtype=np.float64, few=None):
    """A random matrix whose shape is a multiple of every block size in CONFIGS (SciPy BSR needs whole blocks);
    ``few``: its values by ``oracle.few_values``, at most that many distinct."""
    S = sp.random_array((m, n), density=0.1, format="csr", random_state=seed, dtype=dtype)
    return few_values(S, few) if few else S


def _raw(S):
    return S.data, S.indices, S.indptr, S.shape


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
@pytest.mark.parametrize("executor", [None, "cpu", "reference"])
def test_cpu_executors_agree_with_scipy(config, executor):
    name, params = config
    S = _sample(few=value_limited(name, params))
    A = SparseMatrix(S, format=name, device="cpu", executor=executor, **unbounded(name, params))
    assert A.executor == (executor or "cpu")
    def expected(part_name):
        if A.executor == "cpu":
            return "scipy" if part_name in SCIPY_LAYOUTS else "reference"
        return "reference"

    if name == "cocktail":  # one executor per part, composed
        assert A.kernel == "+".join(expected(p) for p, _, _ in params["parts"])
    else:
        assert A.kernel == expected(name)
    rng = np.random.default_rng(1)
    x, y0 = rng.standard_normal(S.shape[1]), rng.standard_normal(S.shape[0])
    assert_product_close(A @ x, *_raw(S), x)
    out = y0.copy()
    assert A.matvec(x, out=out, alpha=-2.0, beta=0.5) is out
    assert_product_close(out, *_raw(S), x, alpha=-2.0, beta=0.5, y0=y0)
    X = rng.standard_normal((S.shape[1], 3))
    assert_product_close(A @ X, *_raw(S), X)


@pytest.mark.parametrize("name", SCIPY_LAYOUTS)
@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_scipy_executor_dtypes(name, dtype):
    S = _sample(dtype=np.float64).astype(dtype)
    if np.dtype(dtype).kind == "c":
        S = S + 1j * _sample(seed=3)
    A = SparseMatrix(S, format=name, device="cpu", **unbounded(name, {}))
    x = np.random.default_rng(2).standard_normal(S.shape[1]).astype(dtype)
    y = A @ x
    assert y.dtype == np.dtype(dtype)
    assert_product_close(y, *_raw(sp.csr_array(S)), x)


def test_beta_zero_never_reads_out_and_noncontiguous_out():
    S = _sample()
    A = SparseMatrix(S, device="cpu")
    x = np.ones(S.shape[1])
    out = np.full(S.shape[0], np.nan)
    A.matvec(x, out=out, alpha=1.0, beta=0.0)
    assert np.isfinite(out).all()
    wide = np.zeros((S.shape[0], 2))
    col = wide[:, 1]  # not contiguous
    col[:] = 1.0
    assert A.matvec(x, out=col, beta=2.0) is col
    np.testing.assert_allclose(wide[:, 1], S @ x + 2.0)
    assert (wide[:, 0] == 0).all()


def test_matmat_zero_columns_every_format():
    S = _sample(few=1)  # one value: every format holds it
    for name, params in CONFIGS:
        A = SparseMatrix(S, format=name, device="cpu", **unbounded(name, params))
        Y = A @ np.ones((S.shape[1], 0))
        assert Y.shape == (S.shape[0], 0)


def test_executor_errors():
    S = _sample()
    with pytest.raises(ValueError, match="executor must be one of"):
        SparseMatrix(S, device="cpu", executor="gpu")
    with pytest.raises(ValueError, match="executor='cuda' does not run on device='cpu'"):
        SparseMatrix(S, device="cpu", executor="cuda")


def test_caller_arrays_untouched_by_products():
    S = _sample()
    A = SparseMatrix(S, format="dia", device="cpu", max_fill=None)
    x = np.arange(S.shape[1], dtype=np.float64)
    x_before = x.copy()
    data_before = S.data.copy()
    A @ x
    A.matvec(x, out=np.zeros(S.shape[0]), alpha=3.0)
    np.testing.assert_array_equal(x, x_before)
    np.testing.assert_array_equal(S.data, data_before)


def test_bind_on_the_cpu():
    S = _sample()
    A = SparseMatrix(S, device="cpu")
    x = np.ones(S.shape[1])
    y = np.zeros(S.shape[0])
    p = A.bind(x, out=y, alpha=2.0, beta=1.0)
    assert p() is y
    np.testing.assert_allclose(y, 2.0 * (S @ x))
    x[:] = 3.0  # new values, written in place
    p()
    np.testing.assert_allclose(y, 2.0 * (S @ np.ones(S.shape[1])) + 2.0 * (S @ x))
    p.close()
    with pytest.raises(RuntimeError, match="closed"):
        p()


def test_bind_refuses_copies():
    S = _sample()
    A = SparseMatrix(S, device="cpu")
    with pytest.raises(TypeError, match="bind: x must have the matrix dtype float64"):
        A.bind(np.ones(S.shape[1], dtype=np.float32), out=np.zeros(S.shape[0]))
    with pytest.raises(ValueError, match=r"bind: out must have shape \(64,\)"):
        A.bind(np.ones(S.shape[1]), out=np.zeros(3))
    with pytest.raises(ValueError, match="bind: out is read-only"):
        A.bind(np.ones(S.shape[1]), out=_read_only(S))
    with pytest.raises(ValueError, match="stream= is for matrices on the GPU"):
        A.bind(np.ones(S.shape[1]), out=np.zeros(S.shape[0]), stream=object())
    with pytest.raises(ValueError, match="bind: out must be contiguous"):
        A.bind(np.ones(S.shape[1]), out=np.zeros((S.shape[0], 2))[:, 0])


@pytest.mark.parametrize("order", ["C", "F"])
def test_bind_a_block_on_the_cpu(order):
    S = _sample()
    A = SparseMatrix(S, device="cpu")
    m, n = S.shape
    X = np.array(np.random.default_rng(1).standard_normal((n, 5)), order=order)
    Y = np.array(np.ones((m, 5)), order=order)
    p = A.bind(X, out=Y, alpha=2.0, beta=-1.0)
    assert p() is Y
    np.testing.assert_allclose(Y, 2.0 * (S @ X) - 1.0)
    X[...] = 1.0  # new values, written in place
    before = Y.copy()
    p()
    np.testing.assert_allclose(Y, 2.0 * (S @ X) - before)
    p.close()
    with pytest.raises(RuntimeError, match="closed"):
        p()


def test_bind_a_block_refuses_copies_and_mixed_orders():
    S = _sample()
    A = SparseMatrix(S, device="cpu")
    m, n = S.shape
    with pytest.raises(ValueError, match=r"bind: out must have shape \(64, 3\)"):
        A.bind(np.ones((n, 3)), out=np.zeros((m, 4)))
    with pytest.raises(TypeError, match="bind: X must have the matrix dtype float64"):
        A.bind(np.ones((n, 3), dtype=np.float32), out=np.zeros((m, 3)))
    with pytest.raises(ValueError, match="bind: X must be C- or Fortran-contiguous"):
        A.bind(np.ones((n, 6))[:, ::2], out=np.zeros((m, 3)))
    with pytest.raises(ValueError, match="one memory order"):
        A.bind(np.ones((n, 3)), out=np.zeros((m, 3), order="F"))
    read_only = np.zeros((m, 3))
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="bind: out is read-only"):
        A.bind(np.ones((n, 3)), out=read_only)
    square = SparseMatrix(sp.eye(8, format="csr"), device="cpu")
    both = np.zeros((8, 3))
    with pytest.raises(ValueError, match="must not overlap"):
        square.bind(both, out=both)


def test_bind_an_empty_block_computes_nothing():
    S = _sample()
    A = SparseMatrix(S, device="cpu")
    Y = np.zeros((S.shape[0], 0))
    assert A.bind(np.zeros((S.shape[1], 0)), out=Y)() is Y


def _read_only(S):
    out = np.zeros(S.shape[0])
    out.flags.writeable = False
    return out


def test_cpu_fallback_warning_points_at_the_callers_line(monkeypatch):
    monkeypatch.setattr(matrix, "cuda_available", lambda: False)
    monkeypatch.setattr(matrix, "_warned_cpu_fallback", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SparseMatrix(_sample())
    [w] = [w for w in caught if issubclass(w.category, CPUFallbackWarning)]
    assert w.filename == __file__


# --- SciPy's DIA copy is (diagonals x columns the diagonals reach), refused before allocating a larger one -------

BIG = 3_000_000_000


def _dia(rows, cols, shape, values=None):
    """A DIA format built from triplets (rows sorted), through the canonical CSR."""
    from cocktail.formats import CSR, get

    rows, cols = np.asarray(rows, np.int64), np.asarray(cols, np.int64)
    values = np.arange(1.0, rows.size + 1) if values is None else values
    indptr = np.searchsorted(rows, np.arange(shape[0] + 1)).astype(np.int64)
    return get("dia").from_csr(CSR.from_arrays(values, cols, indptr, shape))


def _traced_peak(fn):
    """``(fn(), peak bytes traced meanwhile)``: NumPy reports its arrays to tracemalloc, failed ones too."""
    import tracemalloc

    tracemalloc.start()
    try:
        return fn(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_dia_of_a_wide_matrix_copies_only_the_columns_its_diagonals_reach(monkeypatch):
    """4 diagonals of a 3 x 3e9 matrix once made SciPy's copy (4, 3e9), 89 GiB; it is (4, 3 + 3)."""
    from cocktail import _memory
    from cocktail.executors.cpu import CpuExecutor
    from cocktail.reference.scipy_layout import dia_columns

    monkeypatch.setattr(_memory, "available", lambda device: pytest.fail("a small copy is not probed"))
    dia = _dia([0, 0, 1, 2], [0, 3, 2, 4], (3, BIG))  # offsets 0, 1, 2, 3
    assert dia.offsets.tolist() == [0, 1, 2, 3] and dia_columns(dia) == 6
    executor, peak = _traced_peak(lambda: CpuExecutor(dia))
    assert executor.kernel == "scipy" and executor._scipy.data.shape == (4, 6) and peak < 1 << 20


def test_dia_with_a_far_diagonal_runs_the_reference_without_scipys_copy(monkeypatch):
    """A far diagonal makes SciPy's copy reach the last columns: 4 x 3e9 slots for 12 the product reads."""
    from cocktail import _memory
    from cocktail.executors.cpu import CpuExecutor
    from cocktail.reference.scipy_layout import dia_columns, dia_copy_fits, scipy_matrix

    monkeypatch.setattr(_memory, "available", lambda device: 10**15)  # refused for its waste, not for memory
    dia = _dia([0, 0, 1, 2], [0, 1, 2_000_000_001, BIG - 1], (3, BIG))  # offsets 0, 1, 2e9, 3e9 - 3
    assert dia_columns(dia) == BIG and dia.x_reads() == 12
    assert not dia_copy_fits(dia)
    executor, peak = _traced_peak(lambda: CpuExecutor(dia))
    assert executor.kernel == "reference" and executor._scipy is None and peak < 1 << 20
    assert scipy_matrix(dia) is None


def test_dia_fallback_products_are_right_and_small_copies_stay_with_scipy(monkeypatch):
    from cocktail import _memory
    from cocktail.executors.cpu import CpuExecutor

    monkeypatch.setattr(_memory, "PROBE_FLOOR", 0)
    monkeypatch.setattr(_memory, "available", lambda device: 10**12)
    m, n = 6, 1000
    rows = np.repeat(np.arange(m), 2)
    cols = np.stack([np.arange(m), np.arange(m) + 900], axis=1).ravel()  # offsets 0 and 900
    S = sp.csr_array((np.arange(1.0, 2 * m + 1), (rows, cols)), shape=(m, n))
    rng = np.random.default_rng(0)
    x, X = rng.standard_normal(n), rng.standard_normal((n, 3))
    A = SparseMatrix(S, format="dia", device="cpu", executor="cpu")
    assert A.kernel == "reference"  # SciPy's copy: 2 x 906 slots for the 12 in-matrix ones
    np.testing.assert_allclose(A @ x, S @ x)
    np.testing.assert_allclose(A @ X, S @ X)
    band = sp.diags_array([np.ones(n - 1), np.full(n, 2.0), np.ones(n - 1)], offsets=[-1, 0, 1], format="csr")
    B = SparseMatrix(band, format="dia", device="cpu", executor="cpu")
    assert B.kernel == "scipy"  # its copy is its in-matrix slots and fits
    np.testing.assert_allclose(B @ x, band @ x)
    monkeypatch.setattr(_memory, "available", lambda device: 3 * n * 8 - 1)  # the copy no longer fits
    C = CpuExecutor(B.storage)
    assert C.kernel == "reference"
    Y = np.ones((n, 3))
    C.run_block(X, Y, 2.0, 1.0)
    np.testing.assert_allclose(Y, 2 * (band @ X) + 1)
