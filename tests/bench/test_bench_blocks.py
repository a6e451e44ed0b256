"""``cocktail bench --k``: block widths on the command line, the block methods, SpMM records, their
speedups and the console's SpMM table (on the CPU, with records made by hand)."""

from __future__ import annotations

import io

import numpy as np
import pytest

from cocktail import SparseMatrix
from cocktail.bench import runner
from cocktail.bench.measuring import baselines, blocks, methods
from cocktail.bench.output import blocks as block_output
from cocktail.bench.output.console import print_report
from cocktail.bench.problems.generators import laplacian
from cocktail.bench.records.record import SPMM, Record
from cocktail.cli import _block_widths, main


def test_block_widths_are_positive_integers_sorted_once():
    assert _block_widths("16,1,4,16") == [1, 4, 16]
    assert _block_widths("8") == [8]
    for bad in ("0", "x", "1,-4", ","):
        with pytest.raises(ValueError, match="--k"):
            _block_widths(bad)


def test_block_products_are_refused_on_the_cpu(capsys):
    assert main(["bench", "--cpu", "--k", "1,4", "laplace5_10"]) == 2
    assert "--k times block products on the GPU" in capsys.readouterr().err


def test_every_spmv_method_has_its_block_counterpart():
    chosen = [methods.KernelMethod("csr"), methods.KernelMethod("csr", "csr_merge"), methods.AutoMethod(),
              methods.OWN, *baselines.BASELINES]
    assert runner.methods_for(chosen, 1) == chosen
    names = [m.name for m in runner.methods_for(chosen, 16)]
    assert names[:3] == ["csr", "csr_merge", "cocktail-auto"]
    assert {"cocktail-auto-col", "cocktail-auto-spmvs", "cocktail-auto-own", "cupyx", "torch"} <= set(names)
    spmm = [n for n in names if n.startswith("cusparse-spmm-")]
    assert spmm == [f"cusparse-spmm-csr-alg{a}-{o}" for a in (1, 2, 3) for o in ("row", "col")]
    assert "scipy" not in names and not any(n.startswith("cusparse-csr") for n in names)
    with_coo = [m.name for m in runner.methods_for(chosen, 16, all_kernels=True)]
    assert "cusparse-spmm-coo-alg4-row" in with_coo
    assert len(names) == len(set(names))


def test_block_inputs_are_blocks_with_their_answer():
    S = laplacian(5, 6)
    inputs = methods.Inputs.create(S, "float32", on_gpu=False, k=3)
    assert inputs.k == 3 and len(inputs.x_host) == methods.X_BLOCK_BUFFERS
    assert inputs.x_host[0].shape == (S.shape[1], 3) and inputs.x_host[0].flags.c_contiguous
    np.testing.assert_allclose(inputs.want, S @ inputs.x_host[0].astype(np.float64))
    assert inputs.rel_err(inputs.want) == 0.0


def _record(matrix, method, k, us, **params):
    r = Record("s", matrix, 10, 10, 30, "float32", method, kernel_us=us, params=params)
    r.section, r.k = SPMM, k
    return r


def test_spmm_best_and_speedups_are_per_block_width():
    recs = [_record("a", "cusparse-spmm-csr-alg1-row", 4, 40.0, alg=1, storage="csr", layout="row-major"),
            _record("a", "cusparse-spmm-csr-alg2-col", 4, 30.0, alg=2, storage="csr", layout="col-major"),
            _record("a", "cocktail-auto", 4, 15.0, block="csr_spmm (lanes=1, columns_per_lane=4)"),
            _record("a", "cusparse-spmm-csr-alg1-row", 16, 100.0, alg=1, storage="csr", layout="row-major"),
            _record("a", "cocktail-auto", 16, 125.0)]
    best = blocks.best_of_cusparse_spmm(recs)
    assert sorted((b.k, b.kernel_us, b.method) for b in best) == [(4, 30.0, "cusparse-spmm-best"),
                                                                   (16, 100.0, "cusparse-spmm-best")]
    recs += best
    runner.add_speedups(recs)
    auto = {r.k: r for r in recs if r.method == "cocktail-auto"}
    assert auto[4].speedup_cusparse_best == pytest.approx(2.0) and auto[16].speedup_cusparse_best == pytest.approx(0.8)


def test_the_console_prints_an_spmm_table_per_dtype_and_block_width():
    recs = [_record("a", "cusparse-spmm-best", 4, 30.0, alg=2, storage="csr", layout="col-major"),
            _record("a", "cocktail-auto", 4, 15.0, block="csr_spmm (lanes=1, columns_per_lane=4)"),
            _record("a", "cocktail-auto-spmvs", 4, 45.0),
            _record("b", "cusparse-spmm-best", 4, 10.0, alg=1, storage="csr", layout="row-major"),
            _record("b", "cocktail-auto", 4, 20.0)]
    rows = [r.as_dict() for r in recs]
    ((head, header, body),) = block_output.sections(rows)
    assert head.startswith("float32, k = 4: cocktail-auto 1.00x cusparse-spmm-best in geometric mean over 2 matrices "
                           "(lowest 0.50x); 3.00x 4 separate SpMVs of its plan")
    assert body[0][:6] == ["a", "15.0", "csr_spmm (lanes=1, columns_per_lane=4)", "30.0", "csr alg2 col", "2.00x"]
    assert body[0][6:8] == ["45.0", "3.00x"] and body[1][6:8] == ["-", "-"]
    out = io.StringIO()
    print_report(rows, file=out, plain=True)
    assert "k = 4" in out.getvalue() and "csr alg2 col" in out.getvalue()


def test_explain_names_the_block_product():
    A = SparseMatrix(laplacian(5, 8), format="csr", device="cpu")
    text = A.explain(k=16)
    assert "block products (k=16): scipy" in text
    assert f"bytes per block product (DRAM model, k=16): {A.storage.dram_bytes(None, k=16):,}" in text
    assert "block products" not in A.explain()
    assert A.block_plan(16) == "scipy" == A.block_plan(16, row_major=False)
    with pytest.raises(ValueError, match="block_plan: k"):
        A.block_plan(0)
    A.prepare_block_products()  # nothing to make on the CPU
    assert A.block_dram_bytes(None, 16) == A.storage.dram_bytes(None, k=16)  # SciPy's one product for the block


def test_block_bytes_count_the_matrix_once_a_column_where_no_block_kernel_runs():
    from cocktail.executors.base import Executor

    A = SparseMatrix(laplacian(5, 8), format="csr", device="cpu")

    class PerColumn(Executor):
        kernel = "k"

    A._executor = PerColumn()
    assert A.block_plan(4) == "k per column"
    assert A.block_dram_bytes(1 << 20, 4) == 4 * A.storage.dram_bytes(1 << 20)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="explain: k"):
            A.explain(k=bad)


def test_a_block_goes_column_by_column_without_copies_when_its_columns_are_contiguous():
    from cocktail.executors.base import Executor

    S = laplacian(5, 6).toarray()

    class Columns(Executor):
        kernel = "k"
        seen = []

        def run(self, x, y, alpha, beta):
            assert x.flags.c_contiguous and y.flags.c_contiguous
            self.seen.append((np.shares_memory(x, self.X), np.shares_memory(y, self.Y)))
            y[...] = alpha * (S @ x) + (beta * y if beta else 0)

    rng = np.random.default_rng(0)
    for order in ("C", "F"):
        X = np.array(rng.standard_normal((36, 3)), order=order)
        Y0 = np.array(rng.standard_normal((36, 3)), order=order)
        Y = Y0.copy(order=order)
        ex = Columns()
        ex.seen, ex.X, ex.Y = [], X, Y
        ex.run_block(X, Y, 2.0, 0.5)
        np.testing.assert_allclose(Y, 2.0 * S @ X + 0.5 * Y0)
        assert ex.seen == [(order == "F", order == "F")] * 3  # C-ordered blocks go through copies
    X, Y = np.asfortranarray(rng.standard_normal((36, 2))), np.zeros((36, 2), order="F")
    ex = Columns()
    ex.seen, ex.X, ex.Y = [], X, Y
    ex.run_block(X, Y, 1.0, 0.0)
    assert ex.seen == [(True, True), (True, True)]  # views of the caller's columns, written in place
    np.testing.assert_allclose(Y, S @ X)
