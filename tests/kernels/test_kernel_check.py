"""The compile check and the kernel registry, on the CPU."""

from __future__ import annotations

import os

import numpy as np
import pytest

from cocktail import kernels
from cocktail.kernels import check, source

COMPILER = check.backend_available()
needs_compiler = pytest.mark.skipif(COMPILER is None, reason="no NVRTC (cocktail[nvrtc]) and no nvcc")


def test_the_compile_check_runs_where_it_is_required():
    """CI sets COCKTAIL_REQUIRE_COMPILER: there the compile check must run, never skip."""
    if os.environ.get("COCKTAIL_REQUIRE_COMPILER"):
        assert COMPILER is not None, "COCKTAIL_REQUIRE_COMPILER is set but neither NVRTC nor nvcc loads"


def test_registry_names_match_files_and_functions():
    specs = [kernels.get(n) for n in kernels.names()] + [kernels.get_block(n) for n in kernels.block_names()]
    assert [s.name for s in specs[-len(kernels.block_names()):]] == kernels.block_names()
    assert {"csr_spmm", "csr_spmm_merge"} <= set(kernels.block_names())
    for spec in specs:
        name = spec.name
        assert spec.name == name
        if spec.source is not None:
            assert spec.source == name
            code = source.assemble(name)
            assert f"void {name}(" in code or f"void {name} (" in code
            for expr in spec.all_expressions():
                assert expr.split("<")[0].startswith(name)


def test_unknown_kernel():
    with pytest.raises(ValueError, match="unknown kernel 'nope'; registered kernels: csr_scalar"):
        kernels.get("nope")


def test_kernel_parameters_are_checked():
    with pytest.raises(TypeError, match="kernel 'csr_scalar' has no parameter 'omega'"):
        kernels.get("csr_scalar").resolve_params({"omega": 3})


@needs_compiler
@pytest.mark.parametrize("name", kernels.names() + kernels.block_names())
def test_every_kernel_compiles_a_covering_sample(name):
    """The default tier: each kernel's functions, each template argument's every value at least once."""
    assert check.check_kernel(name, sample=True) == []


@needs_compiler
@pytest.mark.exhaustive  # every instantiation: about 15 minutes on two cores
@pytest.mark.parametrize("name", kernels.names() + kernels.block_names())
def test_every_kernel_compiles(name):
    assert check.check_kernel(name) == []


def test_the_covering_sample_holds_every_function_and_template_argument_value():
    assert check.template_arguments("csr_vector<mixed<float, f16>, long long, 2, true, 0>") == (
        "mixed<float, f16>", "long long", "2", "true", "0")
    assert check.template_arguments("spin") == ()

    def facts(expressions):  # each function, and each value of each of its template arguments
        return ({e.partition("<")[0] for e in expressions}
                | {(e.partition("<")[0], k, a) for e in expressions for k, a in enumerate(check.template_arguments(e))})

    for name in kernels.names() + kernels.block_names():
        spec = check._spec(name)
        if spec.source is not None:
            every = spec.all_expressions()
            sample = check.covering_sample(every)
            assert set(sample) <= set(every) and len(sample) == len(set(sample)) <= 20, name
            assert facts(sample) == facts(every), name


@needs_compiler
def test_check_reports_errors(monkeypatch):
    broken = source.assemble("csr_scalar").replace("entry_value<VALUES>(data, codes, j)",
                                                   "entry_value<VALUES>(undefined_name, codes, j)")
    monkeypatch.setattr(source, "assemble", lambda stem: broken)
    errors = check.check_kernel("csr_scalar")
    assert errors and "undefined_name" in errors[0]


@needs_compiler
@pytest.mark.parametrize("stem", list(source.HELPERS))
def test_harness_helpers_compile(stem):
    assert check.check_helper(stem) == []


@needs_compiler
def test_the_compile_log_leaves_python_objects_alone():
    # NVRTC writes its log (here one NUL) into the buffer it is given: given b" " * 1, which is
    # Python's shared one-byte object, it turned every b" " of the process into b"\x00" (SciPy's
    # Matrix Market writer then wrote NULs for spaces).
    assert check.check_kernel("csr_scalar", sample=True) == []
    assert b" " == bytes([32]) and b" ".join([b"1", b"2"]) == b"1 2"


def test_a_block_kernel_is_found_by_format_and_configured_for_k():
    from types import SimpleNamespace

    from cocktail.kernels.block_operands import BlockOperands
    from cocktail.kernels.csr_spmm_merge import rules as merge_rules
    from cocktail.tuning import kernel_rules
    from cocktail.tuning.launch_rules import RULES

    row_kernel, balanced = kernels.get("csr_vector"), kernels.get("csr_merge")
    assert kernels.block_for("csr", row_kernel).name == "csr_spmm"
    assert kernels.block_for("csr", balanced).name == "csr_spmm_merge"
    assert kernels.block_for("csr", kernels.get("csr_stream")).name == "csr_spmm_merge"
    assert kernels.block_for("coo", kernels.get("coo_atomic")).name == "csr_spmm_merge"  # through its row pointers
    assert kernels.block_for("bcsr", kernels.get("bcsr")).name == "bcsr_spmm"
    assert "csr_spmm" not in kernels.names()  # not an SpMV kernel: no SpMV path lists it
    props = SimpleNamespace(max_threads_per_block=1024, sm_count=132, max_threads_per_sm=2048)
    fmt = SimpleNamespace(name="csr", shape=(10_000, 10_000), nnz=90_000, dtype=np.dtype("float32"))
    # csr_spmm, row-major X: up to 4 columns a lane, then lanes up to a warp (tiles of 128 columns past
    # that); csr_spmm_merge (float32): a 16-byte word of columns a lane (2 columns for a column-major X), 4
    # to 8 lanes
    expected = {"csr_spmm": {1: (1, 1), 3: (1, 4), 16: (4, 4), 33: (16, 4), 256: (32, 4), 999: (32, 4)},
                "csr_spmm_merge": {1: (4, 4), 3: (4, 4), 16: (4, 4), 33: (8, 4), 256: (8, 4), 999: (8, 4)}}
    column_major_expected = {"csr_spmm": (2, 4), "csr_spmm_merge": (8, 2)}
    for name in ("csr_spmm", "csr_spmm_merge"):
        spec = kernels.get_block(name)
        shapes = {k: spec.configure(spec, fmt, spec.resolve_params({"operands": BlockOperands.row_major(k)}),
                                    props, RULES)
                  for k in (1, 3, 16, 33, 256, 999)}
        assert {k: (c["lanes"], c["columns_per_lane"]) for k, c in shapes.items()} == expected[name]
        column_major = BlockOperands(16, (1, 5000), (1, 4000))
        assert not column_major.x_row_major
        config = spec.configure(spec, fmt, spec.resolve_params({"operands": column_major}), props, RULES)
        assert (config["lanes"], config["columns_per_lane"]) == column_major_expected[name]
        assert not config.get("vector", False)
        for bad in ({"operands": None}, {"operands": 4}, {"operands": BlockOperands.row_major(0)},
                    {"operands": BlockOperands.row_major(4), "lanes": 3},
                    {"operands": BlockOperands.row_major(4), "columns_per_lane": 16}):
            with pytest.raises(ValueError, match=name):
                spec.configure(spec, fmt, spec.resolve_params(bad), props, RULES)
    # csr_spmm's vector strips: 4 adjacent float32 columns in one 16-byte word when k, the steps and the
    # alignment allow; never for a column-major block or k = 3; asked for where they do not fit, an error
    spec = kernels.get_block("csr_spmm")
    vector = {k: spec.configure(spec, fmt, spec.resolve_params({"operands": operands}), props, RULES)["vector"]
              for k, operands in {16: BlockOperands.row_major(16), 3: BlockOperands.row_major(3),
                                  32: BlockOperands(32, (32, 1), (32, 1), aligned=False),
                                  8: BlockOperands(8, (10, 1), (8, 1))}.items()}
    assert vector == {16: True, 3: False, 32: False, 8: False}
    with pytest.raises(ValueError, match="csr_spmm: vector must be"):
        spec.configure(spec, fmt, spec.resolve_params({"operands": BlockOperands.row_major(3), "vector": True}),
                       props, RULES)
    forced = spec.configure(spec, fmt, spec.resolve_params({"operands": BlockOperands.row_major(16),
                                                            "vector": False}), props, RULES)
    assert forced["vector"] is False
    assert kernel_rules.spmm_shape(64) == (16, 4) and kernel_rules.spmm_shape(64, row_major=False) == (2, 4)
    assert kernel_rules.spmm_min_columns(kernels.get("cusparse_csr")) == kernel_rules.SPMM_VENDOR_MIN_COLUMNS
    assert kernel_rules.spmm_min_columns(kernels.get("csr_merge")) == 2
    assert kernels.block_for("csr", kernels.get("cusparse_csr")).name == "csr_spmm_merge"
    assert kernel_rules.spmm_shape(4, row_major=False) == (1, 4)
    merge = kernels.get_block("csr_spmm_merge")
    config = merge.configure(merge, fmt, merge.resolve_params({"operands": BlockOperands.row_major(8)}), props, RULES)
    assert (config["items_per_share"], config["short_run"], config["chunk"]) == (
        merge_rules.SPMM_MERGE_MIN_ITEMS, merge_rules.SPMM_MERGE_SHORT_RUN, merge_rules.SPMM_MERGE_CHUNK)
    assert merge_rules.items_per_share(24_000_000, 132 * 2048) == merge_rules.SPMM_MERGE_ITEMS
    assert merge_rules.items_per_share(2_000_000, 132 * 2048) == 2_000_000 // (132 * 2048 // 4)
    for bad in ({"items_per_share": 0}, {"short_run": 1.5}, {"items_per_share": True}, {"chunk": 0},
                {"prepared": "shares"}):
        with pytest.raises(ValueError, match="csr_spmm_merge"):
            merge.configure(merge, fmt, merge.resolve_params({"operands": BlockOperands.row_major(8), **bad}),
                            props, RULES)


def test_block_operands_read_the_steps_of_any_layout():
    from cocktail.kernels.block_operands import BlockOperands

    X = np.zeros((50, 6), dtype=np.float32)
    Y = np.zeros((40, 6), dtype=np.float32)
    assert BlockOperands.of(X, Y) == BlockOperands(6, (6, 1), (6, 1)) == BlockOperands.row_major(6)
    F = BlockOperands.of(np.asfortranarray(X), np.asfortranarray(Y))
    assert F == BlockOperands(6, (1, 50), (1, 40)) and not F.x_row_major
    wide = np.zeros((40, 10), dtype=np.float32)
    assert BlockOperands.of(X, wide[:, 2:8]).y_steps == (10, 1)
    assert BlockOperands.of(X[::-1], Y) is None  # a negative step: through a copy
    assert BlockOperands.of(X, np.broadcast_to(Y[:1], Y.shape)) is None  # Y's rows would overlap
    assert BlockOperands.of(np.broadcast_to(X[:1], X.shape), Y).x_steps == (0, 1)  # X may repeat
    from cocktail.validate import may_repeat_elements

    assert not may_repeat_elements(Y) and not may_repeat_elements(np.asfortranarray(Y))
    assert not may_repeat_elements(wide[:, 2:8]) and not may_repeat_elements(Y[::-1])
    assert may_repeat_elements(np.broadcast_to(Y[:1], Y.shape))
    assert may_repeat_elements(np.lib.stride_tricks.as_strided(Y, shape=(40, 6), strides=(4, 4)))
    assert not may_repeat_elements(np.zeros((0, 6))) and not may_repeat_elements(np.zeros((1, 1)))
    operands = BlockOperands(8, (8, 1), (12, 1))
    assert operands.vectors_fit(4, 4) and operands.vectors_fit(2, 8) and not operands.vectors_fit(2, 4)
    assert not operands.vectors_fit(8, 4)  # a row step of 12 is no multiple of 8 columns
    assert not BlockOperands(8, (1, 100), (8, 1)).vectors_fit(4, 4)  # column-major X
    assert [int(a) for a in BlockOperands.of(X, Y).args()] == [6, 6, 1, 6, 1]


@pytest.mark.parametrize("items", [1, 2, 3, 7, 128])
def test_merge_shares_of_csr_and_of_the_same_coo_agree_with_a_walk_of_the_merge_path(items):
    import scipy.sparse as sp

    from cocktail import SparseMatrix
    from cocktail.kernels import csr_spmm_merge

    rng = np.random.default_rng(items)
    lengths = np.r_[rng.integers(0, 4, 60), [0, 0, 300], rng.integers(0, 3, 40), [0]]
    rows = np.repeat(np.arange(lengths.size), lengths)
    S = sp.csr_array((rng.standard_normal(rows.size), (rows, rng.integers(0, 50, rows.size))), shape=(lengths.size, 50))
    S.sum_duplicates()
    csr = SparseMatrix(S, format="csr", device="cpu").storage
    coo = SparseMatrix(S, format="coo", device="cpu").storage
    np.testing.assert_array_equal(csr_spmm_merge.row_pointers(coo), csr.indptr)
    for fmt in (csr, coo):
        share_row, (run_row, run_first, run_count) = csr_spmm_merge.shares_of(fmt, items)
        indptr = np.asarray(csr.indptr, dtype=np.int64)
        m, nnz = fmt.shape[0], int(indptr[-1])
        # the merge path: row end r at r + indptr[r + 1] (before the nonzero of that index), nonzero e after
        # the row ends before it; share s starts at diagonal s * items
        ends = np.arange(m) + indptr[1:]
        total = m + nnz
        d = np.minimum(np.arange(len(share_row)) * items, total)
        np.testing.assert_array_equal(share_row, [int((ends < x).sum()) for x in d])
        assert share_row[-1] == m
        carried = {}
        for s in range(len(share_row) - 1):
            row = int(share_row[s + 1])
            taken = int(d[s + 1]) - row  # nonzeros consumed by the end of share s
            if row < m and taken > indptr[row]:
                carried.setdefault(row, []).append(s)
        runs = {int(r): list(range(int(f), int(f) + int(c))) for r, f, c in zip(run_row, run_first, run_count)}
        assert runs == carried  # every share that carries part of a row, in runs of consecutive shares
    shares = csr_spmm_merge.Shares.of(coo, items, short_run=2, chunk=16)
    np.testing.assert_array_equal(shares.indptr, csr.indptr)
    assert shares.carry.shape == (shares.shares * 16,)
    assert all(int(c) <= 2 for c in shares.short[2]) and all(int(c) > 2 for c in shares.long[2])
