"""Planned block products: cuSPARSE's SpMM as a block choice of CSR and COO matrices, and the block planner
(one plan per bucket of k and layout, timed on scratch blocks) of matrices planned by ``format="auto"``.

Marked ``gpu``: skipped where CuPy sees no CUDA device.
"""

from __future__ import annotations

import numpy as np
import pytest

import cocktail
from oracle import assert_product_close
from test_gpu_kernels import MATRICES, build

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy") if cocktail.arrays.cuda_available() else None

#: (format, SpMV kernel) of the matrices cusparse_spmm extends, one of each storage.
STORAGES = (("csr", "cusparse_csr"), ("coo", "coo_atomic"))


def _vendor(choices, alg):
    """The cusparse_spmm choice with algorithm ``alg`` among ``choices`` (None when it does not apply)."""
    return next((c for c in choices if c.vendor and dict(c.settings)["alg"] == alg), None)


def _planned_as(A, alg, operands):
    """Plan block products of ``A`` of the bucket and layout of ``operands`` as cuSPARSE's algorithm ``alg`` where
    it applies, else the rule's choice (nothing to plan where a kernel cannot address the operands: ``None``)."""
    if operands is None:
        return
    for leaf in A._executor.block_executors():
        leaf.set_block_choice(operands, _vendor(leaf.block_choices(operands), alg) or leaf.rule_choice(operands.k))


def _planned(A, deterministic=False, vendor=True):
    """Plan ``A``'s block products as a ``format="auto"`` matrix's are: its executor in a PlannedProduct (each
    bucket planned before its first product, the whole matrix as one CSR a rival where it may win)."""
    from cocktail.auto.plans import PlannedProduct

    A._planned = A._executor = PlannedProduct(None, A.storage, A._executor, deterministic, vendor)
    return A._executor


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("k", (2, 33))
@pytest.mark.parametrize("zm", MATRICES, ids=lambda m: m.name)
@pytest.mark.parametrize("storage", STORAGES, ids=lambda s: s[0])
def test_cusparse_spmm_gives_the_product_in_both_orders_and_in_windows(storage, zm, k, dtype):
    from cocktail.executors.base import block_key
    from cocktail.kernels import cusparse_spmm
    from cocktail.kernels.block_operands import BlockOperands

    fmt, kernel = storage
    A, raw = build(zm, fmt, {}, kernel, {}, dtype, "int32")
    m, n = zm.shape
    rng = np.random.default_rng(k)
    X_host = rng.standard_normal((n, k)).astype(dtype)
    Y0_host = rng.standard_normal((m, k)).astype(dtype)
    algs = sorted(a for s, a in cusparse_spmm.ALGORITHMS if s == fmt)
    ran = refused = 0
    for alg in algs:
        A._executor._block_plans.clear()
        A._executor._block_launches.clear()
        for order in ("C", "F"):
            X = cupy.asarray(np.array(X_host, order=order))
            # out a window of a wider (C) or taller (F) array, aligned: leading dimension 2k or 2m
            if order == "C":
                wide = cupy.asarray(np.concatenate([Y0_host, Y0_host], axis=1))
                out, other = wide[:, :k], wide[:, k:]
            else:
                wide = cupy.asarray(np.asfortranarray(np.concatenate([Y0_host, Y0_host], axis=0)))
                out, other = wide[:m], wide[m:]
            operands = BlockOperands.of(X, out)
            _planned_as(A, alg, operands)
            A.matmat(X, out=out, alpha=-0.5, beta=2.0)
            assert_product_close(out.get(), *raw, zm.shape, X_host, alpha=-0.5, beta=2.0, y0=Y0_host)
            cupy.testing.assert_array_equal(other, cupy.asarray(Y0_host))
            if m and A.nnz and cusparse_spmm.layout(operands, zm.shape) is not None:  # (X of one row is C and F)
                choice = A._executor._block_plans[block_key(operands)]
                assert choice.vendor and dict(choice.settings) == {"alg": alg}
                launches = A._executor._block_launches[operands] or ()  # None: the column loop
                vendor = [l for l in launches if isinstance(l, cusparse_spmm.SpMMLaunch)]
                if vendor:
                    assert vendor[0].alg == alg
                    ran += 1
                else:  # an algorithm cuSPARSE refuses for this order: the rule's kernel ran for these operands
                    refused += 1
    assert ran > refused or not (m and A.nnz)


def test_a_planned_block_product_times_its_choices_once_per_bucket_and_runs_the_fastest(monkeypatch):
    from cocktail.auto import block_plans
    from cocktail.executors.base import block_key
    from cocktail.kernels.block_operands import BlockOperands

    monkeypatch.setattr(block_plans, "device_profile", lambda: None)  # no SpMM samples: every choice is raced

    zm = next(z for z in MATRICES if z.name == "powerlaw_5000x3000")
    A, raw = build(zm, "csr", {}, "cusparse_csr", {}, "float32", "int32")
    ex = A._executor
    product = _planned(A)
    m, n = zm.shape
    X_host = np.random.default_rng(1).standard_normal((n, 12)).astype("float32")
    Y = A @ cupy.asarray(X_host)  # bucket 16, row-major: planned now
    assert_product_close(Y.get(), *raw, zm.shape, X_host)
    key = block_key(BlockOperands.row_major(12))
    times = ex.block_times[key]
    labels = set(times)
    assert "cusparse_csr per column" in labels and "csr_spmm_merge" in labels
    assert {"cusparse_spmm(alg=1)", "cusparse_spmm(alg=2)", "cusparse_spmm(alg=3)"} <= labels
    (choice,) = ex._block_plans.values()
    assert product._buckets == {key: True} and times[choice.label(ex.kernel)] <= min(times.values()) * 1.04
    A @ cupy.asarray(X_host[:, :9])  # the same bucket (9 .. 16): no new timing
    assert list(ex.block_times) == [key]
    assert A.block_plan(16).startswith(choice.label(ex.kernel).split("(")[0])
    assert "block plan timed (µs): cusparse_csr per column" in A.explain(k=12)
    assert set(A.block_timings(16)) == labels


def test_the_block_planner_keeps_to_deterministic_and_to_our_own_kernels_when_asked():
    from cocktail.kernels.block_operands import BlockOperands

    zm = next(z for z in MATRICES if z.name == "powerlaw_5000x3000")
    A, _ = build(zm, "csr", {}, "csr_merge", {}, "float64", "int32")
    ex = A._executor
    operands = BlockOperands.row_major(16)
    everything = {c.label(ex.kernel) for c in ex.block_choices(operands)}
    assert "cusparse_spmm(alg=2)" in everything
    deterministic = {c.label(ex.kernel) for c in ex.block_choices(operands, deterministic=True)}
    assert "cusparse_spmm(alg=3)" in deterministic and "cusparse_spmm(alg=2)" not in deterministic
    _planned(A, vendor=False).plan_blocks(operands)
    assert not ex.block_choice(operands).vendor
    assert not any("cusparse" in label for label in ex.block_times[(16, "row")])


def test_an_auto_matrix_plans_its_block_products_and_a_capture_takes_the_rule_until_prepared():
    from cocktail.auto.plans import PlannedProduct
    from cocktail.executors.base import block_key
    from cocktail.kernels.block_operands import BlockOperands

    zm = next(z for z in MATRICES if z.name == "laplace7_20^3")
    data, indices, indptr = zm.data, zm.indices, zm.indptr
    import scipy.sparse as sp

    S = sp.csr_array((data.astype("float64"), indices, indptr), shape=zm.shape)
    A = cocktail.SparseMatrix(S, format="auto", device="cuda")
    A.prepare_block_products()  # a merge kernel's shares, if the plan has one
    leaves = A._executor.block_executors()
    assert isinstance(A._executor, PlannedProduct)
    m, n = zm.shape
    X = cupy.asarray(np.random.default_rng(2).standard_normal((n, 4)))
    Y = cupy.zeros((m, 4))
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        A.matmat(X, out=Y)  # bucket 4 first met inside the capture: the rule's choice, untimed
        graph = stream.end_capture()
        graph.launch(stream)
    stream.synchronize()
    assert_product_close(Y.get(), data, indices, indptr, zm.shape, X.get())
    key = block_key(BlockOperands.row_major(4))
    assert all(key not in leaf.block_times for leaf in leaves)
    A.prepare_block_products(4)  # now timed
    assert all(key in leaf.block_times for leaf in leaves if len(leaf.block_choices(BlockOperands.row_major(4))) > 1)
    assert_product_close((A @ X).get(), data, indices, indptr, zm.shape, X.get())


def test_a_vendor_plan_meets_operands_it_cannot_take_and_a_capture_after_planning():
    from cocktail.kernels import cusparse_spmm
    from cocktail.kernels.block_operands import BlockOperands

    zm = next(z for z in MATRICES if z.name == "powerlaw_5000x3000")
    A, raw = build(zm, "csr", {}, "cusparse_csr", {}, "float32", "int32")
    _planned_as(A, 2, BlockOperands.row_major(8))
    m, n = zm.shape
    A.prepare_block_products(8)  # planned (cuSPARSE's algorithm 2) and bound for aligned row-major blocks of 8
    ex = A._executor
    (launches,) = ex._block_launches.values()
    assert any(isinstance(l, cusparse_spmm.SpMMLaunch) for l in launches)
    X_host = np.random.default_rng(4).standard_normal((n, 9)).astype("float32")
    base = cupy.asarray(X_host)
    X = base[:, 1:]  # 4 bytes past an aligned start: cuSPARSE's layout refuses it, the rule's kernel runs
    assert_product_close(A.matmat(X).get(), *raw, zm.shape, X_host[:, 1:])
    X8, Y8 = cupy.asarray(np.ascontiguousarray(X_host[:, :8])), cupy.zeros((m, 8), dtype="float32")
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:  # the launch bound by prepare_block_products is replayed: nothing is built inside the capture
        stream.begin_capture()
        A.matmat(X8, out=Y8)
        graph = stream.end_capture()
        graph.launch(stream)
    stream.synchronize()
    assert_product_close(Y8.get(), *raw, zm.shape, X_host[:, :8])


@pytest.mark.parametrize("kernel, order, k", [("csr_merge", "C", 16), ("csr_vector", "F", 5), ("cusparse_csr", "F", 4),
                                              ("cusparse_csr", "C", 12)])
def test_a_bound_block_product_replays_its_graph(kernel, order, k):
    zm = next(z for z in MATRICES if z.name == "powerlaw_5000x3000")
    A, raw = build(zm, "csr", {}, kernel, {}, "float64", "int32")
    m, n = zm.shape
    X = cupy.asarray(np.array(np.random.default_rng(k).standard_normal((n, k)), order=order))
    Y = cupy.asarray(np.array(np.ones((m, k)), order=order))
    p = A.bind(X, out=Y, alpha=2.0, beta=-1.0)
    assert p.graph is not None
    assert p() is Y
    cupy.cuda.get_current_stream().synchronize()
    assert_product_close(Y.get(), *raw, zm.shape, X.get(), alpha=2.0, beta=-1.0, y0=np.ones((m, k)))
    X[...] = 1.0  # new values in place: the replay reads them
    Y[...] = 0.0
    p()
    cupy.cuda.get_current_stream().synchronize()
    assert_product_close(Y.get(), *raw, zm.shape, np.ones((n, k)), alpha=2.0)
    p.close()


def test_a_column_loop_through_copies_cannot_be_bound():
    zm = next(z for z in MATRICES if z.name == "powerlaw_5000x3000")
    A, _ = build(zm, "csr", {}, "cusparse_csr", {}, "float64", "int32")  # below 8 columns: one SpMV a column
    m, n = zm.shape
    with pytest.raises(ValueError, match="bind Fortran-ordered X and out"):
        A.bind(cupy.zeros((n, 4)), out=cupy.zeros((m, 4)))


# --- block products on the matrix as stored or on the whole matrix as one CSR ---------------------------------------

def _cocktail(dtype="float64", deterministic=False):
    """A DIA + COO Cocktail of a 2-D Laplacian with a few scattered entries, its block products planned as a
    ``format="auto"`` matrix's are (each part planned, the whole matrix as one CSR a rival)."""
    import scipy.sparse as sp

    n = 60
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    S = (sp.kron(sp.eye(n), T) + sp.kron(T, sp.eye(n))).tocsr()
    S = (S + sp.random_array(S.shape, density=2e-4, random_state=9, format="csr")).tocsr().astype(dtype)
    parts = [("dia", {}, ("diagonals", [-n, -1, 0, 1, n])), ("coo", {}, ("rest",))]
    A = cocktail.SparseMatrix(S, format="cocktail", device="cuda", parts=parts, deterministic=deterministic)
    assert _planned(A, deterministic)._rival is not None
    return A, S


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_cocktails_block_product_races_its_parts_against_the_whole_matrix(order):
    A, S = _cocktail()
    m, n = S.shape
    A.prepare_block_products(16, row_major=order == "C")
    timed = A.block_timings(16, row_major=order == "C")
    wholes = [label for label in timed if label.startswith("whole matrix: ")]
    assert "as stored" in timed and len(wholes) == 1 and all(us > 0 for us in timed.values())
    from cocktail.auto.block_plans import RACE_TIE

    tie = RACE_TIE if "cusparse" in wholes[0] else -RACE_TIE  # a tie goes to the vendor, else to the parts
    whole_wins = timed[wholes[0]] <= timed["as stored"] * (1 + tie)
    assert A.block_plan(16, row_major=order == "C").startswith("whole matrix: ") == whole_wins
    X = cupy.asarray(np.random.default_rng(3).standard_normal((n, 12)), order=order)
    Y0 = cupy.asarray(np.random.default_rng(4).standard_normal((m, 12)), order=order)
    got = A.matmat(X, out=Y0.copy(), alpha=2.0, beta=-0.5)
    assert_product_close(got.get(), S.data, S.indices, S.indptr, S.shape, X.get(), 2.0, -0.5, Y0.get())


class _WholeAlways:
    """The whole-matrix rival made to win every bucket (its timings kept), to test that path on its own."""

    def __init__(self, rival):
        self.rival = rival

    def __call__(self, composed, operands, whole=None):
        whole = whole or self.rival._whole()
        self.rival(composed, operands, whole)
        return whole


@pytest.mark.parametrize("deterministic", [False, True])
@pytest.mark.parametrize("order", ["C", "F"])
def test_the_whole_matrix_runs_a_bucket_it_wins_matmat_and_bound(order, deterministic):
    A, S = _cocktail("float32", deterministic)
    A._executor._rival = _WholeAlways(A._executor._rival)
    m, n = S.shape
    X = cupy.asarray(np.random.default_rng(5).standard_normal((n, 16)).astype("float32"), order=order)
    got = A @ X
    assert A.block_plan(16, row_major=order == "C").startswith("whole matrix: ")
    assert_product_close(got.get(), S.data, S.indices, S.indptr, S.shape, X.get())
    whole = A._executor.current.built_whole()
    assert whole.deterministic or not deterministic
    if order == "C":  # the DRAM model prices what runs: the whole matrix's CSR
        assert A.block_dram_bytes(None, 16) == whole.storage.dram_bytes(None, k=16)
    if deterministic:  # of cuSPARSE's CSR algorithms only the third is deterministic
        from cocktail.kernels.block_operands import BlockOperands

        label = whole.block_choice(BlockOperands.of(X, got)).label(whole.kernel)
        assert "cusparse" not in label or label == "cusparse_spmm(alg=3)"
        assert bool(((A @ X) == got).all())
    Y = cupy.zeros((m, 16), dtype="float32", order=order)
    bound = A.bind(X, out=Y)  # planned and bound before the capture: the graph replays the whole's launches
    for _ in range(2):
        bound()
    assert_product_close(Y.get(), S.data, S.indices, S.indptr, S.shape, X.get())
    assert_product_close((A @ X[:, :3]).get(), S.data, S.indices, S.indptr, S.shape, X[:, :3].get())


@pytest.mark.parametrize("fmt", ["bcsr", "hyb"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_a_format_the_vendors_spmm_does_not_take_races_the_whole_matrix_as_csr(order, fmt):
    import scipy.sparse as sp

    from cocktail.auto.block_plans import WholeRival

    B = sp.random_array((300, 300), density=0.02, random_state=7, format="csr")
    S = sp.kron(B, np.ones((3, 3))).tocsr().astype("float32")  # 3 x 3 dense blocks
    A = cocktail.SparseMatrix(S, format=fmt, device="cuda")
    assert WholeRival.wanted(A._executor, A.storage)
    assert _planned(A)._rival is not None
    A.prepare_block_products(16, row_major=order == "C")
    timed = A.block_timings(16, row_major=order == "C")
    wholes = [label for label in timed if label.startswith("whole matrix: ")]
    assert "as stored" in timed and len(wholes) == 1 and any(label.startswith(A.kernel) for label in timed)
    m, n = S.shape
    X = cupy.asarray(np.random.default_rng(6).standard_normal((n, 16)).astype("float32"), order=order)
    Y = cupy.zeros((m, 16), dtype="float32", order=order)
    A.bind(X, out=Y)()
    assert_product_close(Y.get(), S.data, S.indices, S.indptr, S.shape, X.get())
    assert_product_close((A @ X[:, :5]).get(), S.data, S.indices, S.indptr, S.shape, X[:, :5].get())
