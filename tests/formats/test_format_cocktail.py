"""The Cocktail format: selectors, errors, byte model and the composed executor (CPU)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail import SparseMatrix
from cocktail.formats import CSR, get
from cocktail.tuning.format_rules import format_params


def _csr(S):
    S = sp.csr_array(S)
    return CSR.from_arrays(S.data, S.indices, S.indptr, S.shape)


def _build(S, parts):
    csr = _csr(S)
    return get("cocktail").from_csr(csr, **format_params("cocktail", csr.dtype, {"parts": parts}))


def _dense(fmt):
    return fmt.to_csr().to_scipy().toarray()


def test_selectors_take_disjoint_shares_in_order():
    A = np.arange(1, 26, dtype=float).reshape(5, 5)
    A[A % 3 == 0] = 0
    fmt = _build(A, [("dia", {"max_fill": None}, ("diagonals", [0])),
                     ("ell", {"max_fill": None}, ("row_prefix", 1)),
                     ("coo", {}, ("rest",))])
    dia, ell, coo = fmt.parts
    np.testing.assert_array_equal(_dense(dia), np.diag(np.diag(A)))
    rest = A - np.diag(np.diag(A))
    first = np.zeros_like(A)
    for i, row in enumerate(rest):  # the first remaining entry of every row
        nz = np.flatnonzero(row)
        if nz.size:
            first[i, nz[0]] = row[nz[0]]
    np.testing.assert_array_equal(_dense(ell), first)
    np.testing.assert_array_equal(_dense(coo), rest - first)
    np.testing.assert_array_equal(_dense(fmt), A)
    assert fmt.nnz == dia.nnz + ell.nnz + coo.nnz
    assert fmt.shares() == " ".join(f"{p.name}({100 * p.nnz / fmt.nnz:.0f}%)" for p in fmt.parts)


def test_byte_model_counts_y_once_more_per_later_part():
    S = sp.random_array((40, 40), density=0.2, format="csr", random_state=3)
    fmt = _build(S, [("ell", {"max_fill": None}, ("row_prefix", 2)), ("csr", {}, ("rest",))])
    assert fmt.spmv_bytes() == sum(p.spmv_bytes() for p in fmt.parts) + 40 * 8
    assert fmt.spmv_bytes("float32") == sum(p.spmv_bytes("float32") for p in fmt.parts) + 40 * 4


@pytest.mark.parametrize("parts, error, match", [
    (None, TypeError, "cocktail needs parts="),
    ([("csr", {}, ("diagonals", [0]))], ValueError, "entries are in no part"),
    ([("csr", {}, ("everything",))], ValueError, "selector must be one of"),
    ([("csr", {}, ("row_prefix", -1)), ("coo", {}, ("rest",))], ValueError, "non-negative integer"),
    ([("csr", {})], ValueError, r"part 0 must be \(format, params, selector\)"),
    ([("cocktail", {}, ("rest",))], ValueError, "cannot itself be a cocktail"),
])
def test_bad_plans_are_refused(parts, error, match):
    S = sp.random_array((20, 20), density=0.3, format="csr", random_state=1)
    with pytest.raises(error, match=match):
        SparseMatrix(S, format="cocktail", device="cpu", parts=parts)


def test_composed_executor_and_kernel_refused():
    S = sp.random_array((50, 60), density=0.1, format="csr", random_state=2) + sp.eye_array(50, 60)
    parts = [("dia", {"max_fill": None}, ("diagonals", [0])), ("csr", {}, ("rest",))]
    A = SparseMatrix(S, format="cocktail", device="cpu", parts=parts)
    assert A.executor == "cpu" and A.kernel == "scipy+scipy"
    assert "parts: dia(" in A.explain()
    x, y0 = np.ones(60), np.arange(50, dtype=float)
    out = y0.copy()
    A.matvec(x, out=out, alpha=0.5, beta=-2.0)  # the first part applies beta, the second adds
    np.testing.assert_allclose(out, 0.5 * (S @ x) - 2.0 * y0)
    X = np.random.default_rng(0).standard_normal((60, 3))
    np.testing.assert_allclose(A @ X, S @ X)
    with pytest.raises(ValueError, match="kernel= names one kernel"):
        from cocktail import executors

        executors.create(None, A.storage, "cpu", kernel=object())


def test_parts_that_take_nothing_are_left_out():
    S = sp.eye_array(30, format="csr") * 2.0
    fmt = _build(S, [("dia", {"max_fill": None}, ("diagonals", [0])), ("csr", {}, ("rest",))])
    assert [p.name for p in fmt.parts] == ["dia"]  # rest took nothing
    empty = _build(sp.csr_array((4, 4)), [("dia", {"max_fill": None}, ("diagonals", [1])), ("csr", {}, ("rest",))])
    assert len(empty.parts) == 1 and empty.nnz == 0
    np.testing.assert_array_equal(_dense(empty), np.zeros((4, 4)))


@pytest.mark.parametrize("offsets", [[0.5], ["a"]])
def test_diagonal_offsets_must_be_integers(offsets):
    with pytest.raises(ValueError, match="diagonal offsets must be integers"):
        _build(sp.eye_array(5, format="csr"), [("dia", {}, ("diagonals", offsets)), ("csr", {}, ("rest",))])


def test_a_parts_own_error_names_the_part():
    S = sp.random_array((40, 40), density=0.05, format="csr", random_state=5)
    with pytest.raises(ValueError, match=r"cocktail part 0 \(dia, rest\): .*dia"):
        _build(S, [("dia", {"max_fill": 1.0}, ("rest",))])


def test_format_params_completes_each_part_without_touching_the_plan():
    plan = [("hyb", {}, ("row_prefix", 2)), ("pkt", {"max_fill": None}, ("rest",))]
    given = {"parts": plan}
    out = format_params("cocktail", np.float64, given)
    assert given == {"parts": plan} and plan[0][1] == {}  # nothing mutated
    (_, hyb, _), (_, pkt, _) = out["parts"]
    assert hyb["width_rule"].__name__ == "bell_garland_ell_width"
    assert pkt["packet_rows"] == 3072 and pkt["max_fill"] is None


@pytest.mark.parametrize("executor", [None, "reference"])
def test_composed_beta_zero_never_reads_out(executor):
    S = sp.random_array((60, 60), density=0.1, format="csr", random_state=6) + sp.eye_array(60)
    parts = [("ell", {"max_fill": None}, ("row_prefix", 1)), ("sell", {"max_fill": None}, ("row_prefix", 2)),
             ("coo", {}, ("rest",))]
    A = SparseMatrix(S, format="cocktail", device="cpu", executor=executor, parts=parts)
    out = np.full(60, np.nan)
    A.matvec(np.ones(60), out=out, alpha=3.0, beta=0.0)
    np.testing.assert_allclose(out, 3.0 * (S @ np.ones(60)))


def test_parts_are_built_from_lent_rows_that_no_csr_keeps():
    """Each part's builder reuses the rows of its entries, lent on its CSR for the build only: neither the
    input nor a part kept as CSR holds them afterwards, and the parts equal those built from plain CSRs."""
    rng = np.random.default_rng(5)
    S = sp.random_array((60, 50), density=0.15, random_state=rng, format="csr") + sp.eye_array(60, 50)
    csr = _csr(S)
    parts = [("dia", {"max_fill": None}, ("diagonals", [-1, 0, 1])), ("sell", {"short_columns": None}, ("row_prefix", 2)),
             ("ell", {"max_fill": None}, ("row_prefix", 1)), ("dia_vi", {"max_fill": None}, ("diagonals", [3])),
             ("csr", {}, ("rest",))]
    fmt = get("cocktail").from_csr(csr, parts=parts)
    assert not hasattr(csr, "_entry_rows")
    assert all(not hasattr(p, "_entry_rows") for p in fmt.parts)
    free = np.ones(csr.nnz, dtype=bool)
    from cocktail.formats.cocktail import _selected, _subset

    for (name, params, selector), part in zip(parts, fmt.parts):
        take = _selected(selector, csr, free)
        plain = CSR.from_arrays(*(getattr(_subset(csr, take)[0], k) for k in ("data", "indices", "indptr")), csr.shape)
        alone = get(name).from_csr(plain, **params)
        for k, v in alone.arrays().items():
            got = part.arrays()[k]
            assert got.dtype == v.dtype
            np.testing.assert_array_equal(got, v)
        free &= ~take
    np.testing.assert_array_equal(fmt.to_csr().to_scipy().toarray(), S.toarray())
