"""csr_vi: CSR with one-byte codes into a table of its distinct values, its kernels' rule, and the planner's
coded cut (CPU)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail import SparseMatrix, kernels, reference
from cocktail.auto import decisions, planner
from cocktail.errors import FormatValuesError
from cocktail.formats import CSR, get
from cocktail.formats.csr_vi import CodedCSR
from cocktail.reference.entries import entries_of
from cocktail.tuning.kernel_rules import choose_kernel
from oracle import assert_csr_identical, assert_product_close, random_operand
from test_format_csr_pattern import graph
from test_planner import csr_of, plan_of

#: Values a coded matrix holds: signed zeros among them, each its own code.
VALUES = np.array([-2.5, -1.0, -0.0, 0.0, 0.125, 3.0])


def coded(S, values=VALUES, seed=0):
    """``S`` with every entry one of ``values``."""
    out = sp.csr_array(S, copy=True)
    out.data = values[np.random.default_rng(seed).integers(0, values.size, out.nnz)].astype(out.dtype)
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_round_trip_bytes_and_product(dtype, index_dtype):
    S = coded(graph()).astype(dtype)
    csr = CSR.from_arrays(S.data, S.indices, S.indptr, S.shape, index_dtype=index_dtype)
    V = get("csr_vi").from_csr(csr)
    assert isinstance(V, CodedCSR) and V.codes.dtype == np.uint8 and V.table.dtype == np.dtype(dtype)
    assert V.table.shape == (VALUES.size,)  # -0.0 and 0.0 each their own, by their bits
    assert V.indices is csr.indices and V.indptr is csr.indptr  # shared, as the canonical CSR's own
    assert_csr_identical(V.to_csr(), csr)
    N = coded(graph(), np.r_[VALUES, np.nan]).astype(dtype)  # a NaN is a value too, decoded to its bits
    nan = CSR.from_arrays(N.data, N.indices, N.indptr, N.shape, index_dtype=index_dtype)
    assert_csr_identical(CodedCSR.from_csr(nan).to_csr(), nan)
    val = np.dtype(dtype).itemsize
    table = VALUES.size * val
    assert csr.nbytes - V.nbytes == csr.nnz * (val - 1) - table  # a byte per entry in place of a value
    assert csr.spmv_bytes() - V.spmv_bytes() == csr.nnz * (val - 1) - table
    assert csr.dram_bytes() - V.dram_bytes() == csr.nnz * (val - 1) - table
    x = random_operand(np.random.default_rng(1), (S.shape[1],), dtype)
    assert_product_close(reference.spmv(V, x), csr.data, csr.indices, csr.indptr, S.shape, x)
    (entries,) = entries_of(V)
    assert entries.values.shape == (VALUES.size,) and (entries.pos == V.codes).all()  # its own table, by code


def test_more_values_than_a_code_addresses_are_refused_naming_them():
    S = graph(2000, per_row=4)
    S.data = np.arange(S.nnz, dtype=np.float64)
    with pytest.raises(FormatValuesError, match=r"format 'csr_vi' would need a table of [\d,]+ distinct values, "
                                                r"more than the 256") as info:
        CodedCSR.from_csr(csr_of(S))
    assert info.value.limit == 256 and info.value.distinct > 256
    with pytest.raises(FormatValuesError):
        SparseMatrix(S, format="csr_vi", device="cpu")
    S.data = np.arange(S.nnz) % 256 - 100.0  # 256 exactly: the table is full
    assert CodedCSR.from_csr(csr_of(S)).table.shape == (256,)


def test_an_empty_matrix_has_an_empty_table():
    V = CodedCSR.from_csr(csr_of(sp.csr_array((5, 4))))
    assert V.table.shape == (0,) and V.codes.shape == (0,) and V.to_csr().nnz == 0
    assert reference.spmv(V, np.ones(4)).tolist() == [0.0] * 5


def test_half_and_narrow_storage_code_the_stored_values():
    S = coded(graph(), np.array([-2.5, 0.0, 0.125, 3.0]))
    A = SparseMatrix(S, format="csr_vi", value_dtype="float32", device="cpu")
    assert A.storage.table.dtype == np.float32 and A.dtype == np.float64 and A.value_dtype == np.float32
    x = np.random.default_rng(2).standard_normal(S.shape[1])
    np.testing.assert_allclose(A @ x, S @ x, rtol=1e-12)  # every value is exact in float32
    H = SparseMatrix(S, format="csr_vi", dtype="float16", device="cpu")
    assert H.storage.table.dtype == np.float16
    np.testing.assert_allclose(H.to_scipy().toarray(), S.toarray())


def test_its_kernel_rule_never_picks_a_kernel_that_reads_values():
    V = CodedCSR.from_csr(csr_of(coded(graph())))
    assert "csr_vi" in kernels.get(choose_kernel(V)).formats
    long_rows = sp.csr_array((np.ones(60_000), (np.zeros(60_000, int), np.arange(60_000))), shape=(1000, 60_000))
    L = CodedCSR.from_csr(csr_of(coded(long_rows)))
    assert choose_kernel(L) == "csr_stream"  # csr_merge's place: csr_merge reads values
    assert {s.name for s in kernels.for_format("csr_vi")} == {"csr_scalar", "csr_vector", "csr_stream"}


def test_matrix_of_codes_on_the_cpu_explains_its_table():
    S = coded(graph(), np.array([-1.0, 0.5, 4.0]))
    A = SparseMatrix(S, format="csr_vi", device="cpu")
    x = np.random.default_rng(2).standard_normal(S.shape[1])
    np.testing.assert_allclose(A @ x, S @ x, rtol=1e-12)
    np.testing.assert_allclose(A.T @ x, S.T @ x, rtol=1e-12)
    assert "distinct values: 3" in A.explain()


# --- the planner's coded cut -----------------------------------------------------------------------

def test_the_coded_cut_is_off_until_measured():
    assert planner.CODED_CUT is False
    assert not planner.takes_coded_cut(False, 3)
    S = coded(graph(20_000), np.array([-1.0, 0.5, 4.0]))
    assert not any(part.coded for p in plan_of(S).candidates for part in p.parts)


def test_the_coded_cut_stores_every_csr_part_coded(monkeypatch):
    monkeypatch.setattr(planner, "CODED_CUT", True)
    assert planner.coded_limit() == 256
    assert planner.takes_coded_cut(False, 256) and not planner.takes_coded_cut(False, 257)
    assert not planner.takes_coded_cut(True, 1)  # one value: the pattern cut's
    S = coded(graph(20_000), np.array([-1.0, 0.5, 4.0]))
    planning = plan_of(S)
    share = planner.coded_share(np.float64, np.int32)
    assert share == pytest.approx(13 / 20)
    cut = [part for p in planning.candidates for part in p.parts if part.coded]
    assert cut and all(part.format == "csr_vi" and not part.pattern for part in cut)
    for p in planning.candidates:
        for part in p.parts:
            form = get(part._v.format).coded_format
            assert part.coded == (form is not None and form in kernels.get(part.kernel).formats), part
    many = S.copy()
    many.data = np.arange(many.nnz, dtype=np.float64)
    stored = plan_of(many)
    assert not any(part.coded for p in stored.candidates for part in p.parts)
    single = next(p for p in planning.candidates if p.single and p.parts[0].coded)
    twin = next(p for p in stored.candidates if p.single and p.parts[0].variant == single.parts[0].variant)
    assert single.predicted_us == pytest.approx(twin.predicted_us * share, rel=0.05)
    assert single.label() == f"{single.parts[0].variant}@csr_vi"
    # a cut plan round-trips through JSON (a decision cached before the cut reads as a plain part) and builds
    from cocktail.auto.planning import build

    again = planner.Plan.from_json(single.to_json())
    assert again.parts == single.parts and again.parts[0].coded
    old = single.to_json()
    del old["parts"][0]["coded"]
    assert not planner.Plan.from_json(old).parts[0].coded
    storage, _ = build(single, csr_of(S), device="cpu")
    assert storage.name == "csr_vi"
    x = np.random.default_rng(3).standard_normal(S.shape[1])
    np.testing.assert_allclose(reference.spmv(storage, x), S @ x, rtol=1e-12)
    with pytest.raises(FormatValuesError):  # a cached cut plan met by a matrix of other values: refused
        build(single, csr_of(many), device="cpu", guard=True)


def test_the_decision_key_tells_a_coded_matrix_apart():
    args = ("fp", "dev", np.float64, np.int32, False, True, "model", "digest")
    assert decisions.key(*args) != decisions.key(*args, coded=True)
    assert decisions.key(*args, coded=True).endswith("|coded")
