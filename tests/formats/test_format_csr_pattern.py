"""csr_pattern: CSR with one value for all entries, its kernels' rule, and the planner's pattern cut (CPU)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail import SparseMatrix, reference
from cocktail.auto import decisions, planner
from cocktail.auto.features import compute
from cocktail.errors import FormatValuesError
from cocktail.reference.entries import entries_of
from cocktail.formats import CSR, get
from cocktail.formats.csr_pattern import PatternCSR, one_value
from cocktail.tuning.kernel_rules import choose_kernel, default_kernel
from oracle import assert_csr_identical, assert_product_close, random_operand
from test_planner import csr_of, plan_of


def graph(n=2000, per_row=6, seed=0, value=1.0):
    """A random graph's adjacency: ``per_row`` scattered columns a row (duplicates merged), every entry ``value``."""
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), per_row)
    S = sp.csr_array((np.ones(rows.size), (rows, rng.integers(0, n, rows.size))), shape=(n, n))
    S.data[:] = value
    return S


def test_one_value_compares_bits():
    assert one_value(np.array([2.5, 2.5, 2.5])) and one_value(np.zeros(0))
    assert not one_value(np.array([0.0, -0.0]))  # -0.0 is another value: the round trip is exact
    nan = np.array([np.nan, np.nan])
    assert one_value(nan)
    payload = nan.copy()
    payload.view(np.uint64)[1] ^= 1  # a NaN of another payload
    assert not one_value(payload)
    assert one_value(np.array([1 + 2j, 1 + 2j])) and not one_value(np.array([1 + 2j, 1 - 2j]))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_round_trip_bytes_and_product(dtype, index_dtype):
    S = graph(value=-1.5)
    csr = CSR.from_arrays(S.data.astype(dtype), S.indices, S.indptr, S.shape, index_dtype=index_dtype)
    P = get("csr_pattern").from_csr(csr)
    assert isinstance(P, PatternCSR) and P.value.shape == (1,) and P.value[0] == -1.5
    assert P.indices is csr.indices and P.indptr is csr.indptr  # shared, as the canonical CSR's own
    assert_csr_identical(P.to_csr(), csr)
    val = np.dtype(dtype).itemsize
    assert csr.nbytes - P.nbytes == csr.nnz * val - val  # no value per entry: one value kept
    assert csr.spmv_bytes() - P.spmv_bytes() == csr.nnz * val - val
    assert csr.dram_bytes() - P.dram_bytes() == csr.nnz * val - val
    x = random_operand(np.random.default_rng(1), (S.shape[1],), dtype)
    assert_product_close(reference.spmv(P, x), csr.data, csr.indices, csr.indptr, S.shape, x)
    (entries,) = entries_of(P)
    assert entries.values.shape == (1,) and (entries.pos == 0).all()  # the format's own one value


def test_a_matrix_of_two_values_is_refused_naming_them():
    S = graph()
    S.data[::7] = 2.0
    csr = csr_of(S)
    with pytest.raises(FormatValuesError, match=r"format 'csr_pattern' stores one value .* hold 2 distinct values"
                                                r".*store it as csr") as info:
        PatternCSR.from_csr(csr)
    assert (info.value.distinct, info.value.limit) == (2, 1)
    with pytest.raises(FormatValuesError):
        SparseMatrix(S, format="csr_pattern", device="cpu")


def test_an_empty_matrix_keeps_a_zero():
    csr = csr_of(sp.csr_array((5, 4)))
    P = PatternCSR.from_csr(csr)
    assert P.value.tolist() == [0.0] and P.to_csr().nnz == 0
    assert reference.spmv(P, np.ones(4)).tolist() == [0.0] * 5


def test_its_kernel_rule_never_picks_a_kernel_that_reads_values():
    long_rows = np.r_[np.full(999, 2), 50_000]
    for fmt, name in (("csr", "csr_merge"), ("csr_pattern", "csr_stream"), ("csr_vi", "csr_stream")):
        assert default_kernel(SimpleNamespace(name=fmt, row_lengths=lambda: long_rows)).name == name
    P = PatternCSR.from_csr(csr_of(graph()))
    name = choose_kernel(P)
    from cocktail import kernels

    assert "csr_pattern" in kernels.get(name).formats
    for spec in kernels.for_format("csr_pattern"):
        assert spec.name in ("csr_scalar", "csr_vector", "csr_stream")
        assert all(e.count(",") >= 2 for e in spec.expressions("float", "int"))


def test_matrix_of_a_pattern_on_the_cpu():
    S = graph(value=0.25)
    A = SparseMatrix(S, format="csr_pattern", device="cpu")
    x = np.random.default_rng(2).standard_normal(S.shape[1])
    np.testing.assert_allclose(A @ x, S @ x, rtol=1e-12)
    np.testing.assert_allclose(A.T @ x, S.T @ x, rtol=1e-12)
    assert "value: 0.25" in A.explain()


# --- the planner's pattern cut ---------------------------------------------------------------------

def test_features_say_whether_one_value_holds():
    assert compute(csr_of(graph())).one_value
    S = graph()
    S.data[3] = 2.0
    assert not compute(csr_of(S)).one_value
    assert compute(csr_of(graph()), one_value=False).one_value is False  # the caller's answer is taken


def test_the_pattern_cut_stores_every_csr_part_without_values(monkeypatch):
    monkeypatch.setattr(planner, "CODED_CUT", False)  # the twin of two values plans with its values
    S = graph(20_000)
    planning = plan_of(S)
    share = planner.pattern_share(np.float64, np.int32)
    assert share == pytest.approx(0.6)
    stored = plan_of(with_two_values(S))
    cut = [part for p in planning.candidates for part in p.parts if part.pattern]
    assert cut and all(part.format == "csr_pattern" and part.variant.startswith("csr_") for part in cut)
    from cocktail import kernels

    for p in planning.candidates:
        for part in p.parts:
            form = get(part._v.format).pattern_format
            takes = form is not None and form in kernels.get(part.kernel).formats
            assert part.pattern == takes, part  # every part that can be cut is, no other
    assert not any(part.pattern for p in stored.candidates for part in p.parts)
    # each cut single's prediction is its uncut twin's times the share
    single = next(p for p in planning.candidates if p.single and p.parts[0].pattern)
    twin = next(p for p in stored.candidates if p.single and p.parts[0].variant == single.parts[0].variant)
    assert single.predicted_us == pytest.approx(twin.predicted_us * share, rel=0.05)
    assert single.label() == f"{single.parts[0].variant}@csr_pattern"
    assert planning.candidates == sorted(planning.candidates, key=lambda p: p.predicted_us)


def with_two_values(S):
    out = S.copy()
    out.data = np.where(np.arange(out.nnz) % 2 == 0, 1.0, 2.0)
    return out


def test_a_cut_plan_round_trips_through_json_and_builds():
    from cocktail.auto.planning import build

    S = graph(20_000)
    csr = csr_of(S)
    chosen = next(p for p in plan_of(S).candidates if p.parts[0].pattern and p.parts[0].kernel != "csr_merge")
    again = planner.Plan.from_json(chosen.to_json())
    assert again.parts == chosen.parts and again.parts[0].pattern
    old = chosen.to_json()
    for part in old["parts"]:
        del part["pattern"]  # a decision cached before the cut: a plain part
    assert not planner.Plan.from_json(old).parts[0].pattern
    storage, _ = build(chosen, csr, device="cpu")
    assert storage.name == "csr_pattern"
    x = np.random.default_rng(3).standard_normal(S.shape[1])
    np.testing.assert_allclose(reference.spmv(storage, x), S @ x, rtol=1e-12)
    with pytest.raises(FormatValuesError):  # a cached cut plan met by a matrix of other values: refused
        build(chosen, csr_of(with_two_values(S)), device="cpu", guard=True)


def test_the_decision_key_tells_a_one_value_matrix_apart():
    args = ("fp", "dev", np.float64, np.int32, False, True, "model", "digest")
    assert decisions.key(*args) != decisions.key(*args, one_value=True)
    assert decisions.key(*args).endswith("|digest") and decisions.key(*args, one_value=True).endswith("|one-value")


def test_bench_values_pattern_renames_and_sets_every_entry_to_one():
    from cocktail.bench.runner import Problem, pattern_of
    from cocktail.cli import _problems, build_parser

    S = graph(50, value=3.0)
    S.data[0] = 0.0  # an explicit zero is an entry of the pattern too
    p = pattern_of(Problem("williams", "web", "web graph", S, "power-law"))
    assert (p.suite, p.name, p.kind, p.family) == ("williams", "web:pattern", "web graph", "power-law")
    assert (p.S.data == 1.0).all() and p.S.nnz == S.nnz and S.data[0] == 0.0  # the problem's own matrix kept
    args = build_parser().parse_args(["bench", "laplace5_10", "--values", "pattern"])
    (q,) = _problems(args, on_gpu=False)
    assert q.name == "laplace5_10:pattern" and (q.S.data == 1.0).all()
    assert build_parser().parse_args(["bench"]).values == "stored"


def test_bench_labels_a_kernel_on_its_second_format_apart():
    from cocktail.bench.measuring.methods import KernelMethod, kernel_label

    assert kernel_label("csr_stream", "csr") == "csr_stream"
    assert kernel_label("csr_stream", "csr_pattern") == "csr_stream@csr_pattern"
    assert KernelMethod("csr_pattern", "csr_vector").name == "csr_vector@csr_pattern"
    assert KernelMethod("csr", "csr_vector").name == "csr_vector" and KernelMethod("csr_pattern").name == "csr_pattern"


def test_a_kernel_compiles_one_value_and_index_pair_at_a_time():
    from cocktail import kernels

    spec = kernels.get_block("csr_spmm_merge")
    expr = "csr_spmm_merge<double, int, 4, 2, true, true>"
    group = spec.sibling_expressions(expr)
    assert expr in group and group == tuple(spec.expressions("double", "int"))
    assert 3 * len(group) < len(spec.all_expressions())  # a quarter, give or take the vector strips of each type
    assert "csr_spmm_merge_fixup<double, false>" in group  # the helpers of its types come along
    # a helper of no index type goes into the module of the matrix's index type, not the first that lists it
    wide = spec.sibling_expressions("csr_spmm_merge_fixup<double, false>", ("double", "long long"))
    assert wide == tuple(spec.expressions("double", "long long"))
    assert spec.sibling_expressions("not one of them") == spec.all_expressions()
    assert all(e.endswith(("false>", "true>")) for e in kernels.get_block("csr_spmm").expressions("float", "int"))


@pytest.mark.parametrize("value", [0.5, np.inf, np.nan, -0.0])
def test_its_reference_equals_csrs_bit_for_bit_even_for_non_finite_values(value):
    S = graph(300, value=value)
    S = sp.vstack([S, sp.csr_array((3, S.shape[1]))]).tocsr()  # empty rows stay 0, whatever the value
    csr = csr_of(S)
    x = np.random.default_rng(5).standard_normal(S.shape[1])
    x[::7] = np.inf
    got, want = reference.spmv(PatternCSR.from_csr(csr), x), reference.spmv(csr, x)
    np.testing.assert_array_equal(got, want)
    assert (got[-3:] == 0).all()
    A = SparseMatrix(S, format="csr_pattern", device="cpu")
    np.testing.assert_array_equal(A @ x, want)
