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
                                                r"more than the 256 its one-byte codes address; store the matrix as csr") as info:
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

def test_the_coded_cut_switched_off_plans_with_the_values(monkeypatch):
    assert planner.CODED_CUT is True  # measured: docs/benchmarks.md, "Fewer bytes: a one-byte code"
    monkeypatch.setattr(planner, "CODED_CUT", False)
    assert not planner.takes_coded_cut(False, 3, np.float64)
    S = coded(graph(20_000), np.array([-1.0, 0.5, 4.0]))
    planning = plan_of(S)
    assert not any(part.coded for p in planning.candidates for part in p.parts) and not planning.uncut


def test_the_coded_cut_stores_every_csr_part_coded():
    assert planner.coded_limit() == 256
    assert planner.takes_coded_cut(False, 256, np.float64) and not planner.takes_coded_cut(False, 257, np.float64)
    assert not planner.takes_coded_cut(True, 1, np.float64)  # one value: the pattern cut's
    # measured in float32 and float64 only; values stored narrower are another measurement too
    assert planner.takes_coded_cut(False, 3, np.float32) and not planner.takes_coded_cut(False, 3, np.complex128)
    assert not planner.takes_coded_cut(False, 3, np.float64, np.float32)
    S = coded(graph(20_000), np.array([-1.0, 0.5, 4.0]))
    planning = plan_of(S)
    assert planning.uncut and not any(part.coded for p in planning.uncut for part in p.parts)
    share = planner.coded_share(np.float64)
    assert share == planner.CODED_TIME_SHARE["float64"] and 13 / 20 < share < 1  # the bytes' 0.65, measured more
    assert planner.coded_share(np.float64, np.float64) == share and planner.coded_share(np.float16) is None
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


# --- short columns (csr_family.py), csr_pattern's and csr_vi's ---------------------------------------------

def wide_band(m=3000, n=400_000, per_row=12, seed=1):
    """Rows whose columns lie within a few thousand of ``row * n / m``: chunks of 256 entries span far less than
    65,536 columns, far from column 0."""
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(m), per_row)
    cols = np.clip(rows * (n // m) + rng.integers(-2000, 2000, rows.size), 0, n - 1)
    S = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(m, n))
    S.data[:] = 1.0  # duplicates summed: one value again
    return S


@pytest.mark.parametrize("name", ["csr_pattern", "csr_vi"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_short_columns_round_trip_and_cut_two_bytes_an_entry(name, index_dtype):
    from cocktail.formats.csr_family import CHUNK

    S = wide_band()
    if name == "csr_vi":
        S = coded(S)
    csr = CSR.from_arrays(S.data, S.indices, S.indptr, S.shape, index_dtype=index_dtype)
    full = get(name).from_csr(csr)
    short = get(name).from_csr(csr, short_columns=True)
    assert not full.short and full.layouts() == () and full.column_base.shape == (0,)
    assert short.short and short.layouts() == ("short_columns",) and short.indices.dtype == np.uint16
    chunks = -(-csr.nnz // CHUNK)
    assert short.column_base.shape == (chunks,) and short.column_base.dtype == np.dtype(index_dtype)
    assert int(short.column_base.max()) > 300_000  # far from column 0: the offsets are not the columns
    assert short.resolved_params() == {"short_columns": True} and full.resolved_params() == {"short_columns": False}
    assert_csr_identical(short.to_csr(), csr)
    assert (short.columns() == csr.indices).all() and short.columns().dtype == csr.indices.dtype
    idx = np.dtype(index_dtype).itemsize
    cut = csr.nnz * (idx - 2) - chunks * idx
    assert full.spmv_bytes() - short.spmv_bytes() == cut
    assert full.nbytes - short.nbytes == cut
    x = random_operand(np.random.default_rng(1), (S.shape[1],), "float64")
    np.testing.assert_array_equal(reference.spmv(short, x), reference.spmv(full, x))  # the same entries, in order
    (entries,) = entries_of(short)
    assert (entries.cols == csr.indices).all()
    assert get(name).from_csr(csr, short_columns=None).short  # unset: where it fits, and it fits
    assert short.describe()["short columns"].startswith("yes") and full.describe()["short columns"] == "no"


@pytest.mark.parametrize("name", ["csr_pattern", "csr_vi"])
def test_short_columns_that_do_not_fit_are_refused_or_left_full(name):
    S = graph(100_000, per_row=4)  # random columns over 100,000: a chunk spans most of them
    if name == "csr_vi":
        S = coded(S)
    csr = csr_of(S)
    with pytest.raises(ValueError, match=rf"{name}: short_columns=True needs every chunk of 256 entries within "
                                         r"65,536 columns; chunk \d+ \(entries \d+ to \d+\) spans [\d,]+ \(columns"):
        get(name).from_csr(csr, short_columns=True)
    assert not get(name).from_csr(csr, short_columns=None).short
    with pytest.raises(ValueError, match="short_columns must be True, False or None"):
        get(name).from_csr(csr, short_columns=1)
    # 65,536 columns fit whatever the pattern; the last chunk is partial
    small = csr_of(coded(graph(65_536, per_row=3)) if name == "csr_vi" else graph(65_536, per_row=3))
    assert small.nnz % 256 and get(name).from_csr(small, short_columns=True).short


@pytest.mark.parametrize("nnz", [0, 255, 256, 512, 700])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_short_column_chunks_at_their_edges(nnz, index_dtype):
    from cocktail.formats.csr_family import CHUNK, columns, short_columns

    rng = np.random.default_rng(nnz)
    base = 3 * 2**31 if index_dtype == np.int64 else 2**30  # past int32 where the index type allows
    cols = (base + np.sort(rng.integers(0, 65_536, nnz))).astype(index_dtype)
    if nnz:
        cols[-1] = cols[-(nnz % CHUNK or CHUNK)] + 65_535  # the last chunk spans 65,536 columns exactly
    offsets, lo = short_columns("t", cols, True, index_dtype)
    assert offsets.dtype == np.uint16 and lo.shape == (-(-nnz // CHUNK),) and lo.dtype == index_dtype
    back = columns(offsets, lo, index_dtype)
    assert back.dtype == index_dtype and (back == cols).all()
    assert short_columns("t", cols, None, index_dtype)[0].dtype == (np.uint16 if nnz else index_dtype)  # none: full
    if nnz:
        wider = cols.copy()
        wider[-1] += 1  # 65,537 columns: refused, or left full
        with pytest.raises(ValueError, match=f"chunk {(nnz - 1) // CHUNK} "):
            short_columns("t", wider, True, index_dtype)
        assert short_columns("t", wider, None, index_dtype)[0] is wider


def test_only_csr_stream_reads_short_columns():
    from cocktail.kernels.spec import csr_columns

    short = get("csr_vi").from_csr(csr_of(coded(wide_band())), short_columns=True)
    assert [s.name for s in kernels.for_format("csr_vi") if s.takes(short)] == ["csr_stream"]
    assert choose_kernel(short) == "csr_stream"  # whatever the row-length rule says, the one that reads them
    indices, base, shift = csr_columns(short)
    assert indices is short.indices and base is short.column_base and shift == 8
    full = get("csr_vi").from_csr(csr_of(coded(wide_band())))
    assert csr_columns(full)[2] == 0 and csr_columns(full)[1].shape == (0,)
    from cocktail.tuning import launch_rules
    from oracle import fake_props

    with pytest.raises(TypeError, match="kernel 'csr_vector' does not read csr_vi stored with short_columns"):
        launch_rules.configure(kernels.get("csr_vector"), short, {}, fake_props())
    assert launch_rules.configure(kernels.get("csr_stream"), short, {}, fake_props())["items_per_lane"]
    A = SparseMatrix(wide_band(), format="csr_pattern", short_columns=True, device="cpu")
    x = np.random.default_rng(4).standard_normal(A.shape[1])
    np.testing.assert_allclose(A @ x, wide_band() @ x, rtol=1e-12)
    np.testing.assert_allclose(A.T @ x[:A.shape[0]], wide_band().T @ x[:A.shape[0]], rtol=1e-12)


def test_bench_values_few_gives_sixteen_weights_and_renames():
    from cocktail.bench.runner import FEW_VALUES, Problem, few_values_of
    from cocktail.cli import _problems, build_parser

    S = graph(500, value=3.0)
    p = few_values_of(Problem("williams", "web", "web graph", S, "power-law"))
    assert (p.suite, p.name, p.family) == ("williams", "web:few", "power-law")
    assert set(np.unique(p.S.data)) <= set(FEW_VALUES) and len(np.unique(p.S.data)) == 16
    assert p.S.nnz == S.nnz and (S.data == 3.0).all()  # the problem's own matrix kept
    again = few_values_of(Problem("williams", "web", "web graph", S, "power-law"))
    assert (again.S.data == p.S.data).all()  # reproducible: the records of two runs compare
    args = build_parser().parse_args(["bench", "laplace5_10", "--values", "few"])
    (q,) = _problems(args, on_gpu=False)
    assert q.name == "laplace5_10:few" and len(np.unique(q.S.data)) <= 16
    assert CodedCSR.from_csr(csr_of(q.S)).table.shape[0] <= 16
