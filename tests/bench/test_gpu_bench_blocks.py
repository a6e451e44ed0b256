"""``cocktail bench --k`` on the GPU: every block method against the float64 answer, cuSPARSE's SpMM per
algorithm and order, the derived best and the speedups, and the command line end to end."""

from __future__ import annotations

import json

import pytest

from cocktail.bench import runner
from cocktail.bench.measuring import baselines, methods
from cocktail.bench.problems.generators import laplacian, power_law
from cocktail.bench.runner import Problem, Settings
from cocktail.cli import main

pytestmark = pytest.mark.gpu
cupy = pytest.importorskip("cupy")


@pytest.fixture(scope="module")
def records():
    problems = [Problem("generated", "laplace5_40", "test", laplacian(5, 40)),
                Problem("generated", "powerlaw_4k", "test", power_law(4096))]
    chosen = [methods.KernelMethod("csr", "csr_vector"), methods.KernelMethod("csr", "csr_merge"),
              methods.KernelMethod("ell"),
              methods.AutoMethod(), *baselines.CUSPARSE, baselines.Cupyx(), baselines.Torch()]
    settings = Settings(repeat=5, copy_gbps=1000.0, l2_bytes=50 << 20)
    return runner.run(problems, chosen, ["float32", "float64"], settings, on_gpu=True, ks=(1, 3, 16))


def test_every_block_record_is_right_or_says_why(records):
    spmm = [r for r in records if r.section == "spmm"]
    assert {r.k for r in spmm} == {3, 16}
    for r in spmm:
        if r.note:  # a format that refuses the matrix, an algorithm cuSPARSE refuses, no torch: said, never wrong
            assert not r.note.startswith(("WRONG", "error:")), (r.method, r.note)
            assert r.note.startswith("refused") or r.method == "torch", (r.method, r.note)
            continue
        assert r.kernel_us > 0 and r.rel_err < (1e-4 if r.dtype == "float32" else 1e-12), (r.method, r.rel_err)
        assert r.dram_bytes and r.gflops > 0


def test_block_records_name_their_block_kernel_and_their_cusparse_reference(records):
    by = {(r.matrix, r.dtype, r.k, r.method): r for r in records}
    for matrix in ("laplace5_40", "powerlaw_4k"):
        for k in (3, 16):
            csr = by[(matrix, "float64", k, "csr_vector")]
            assert csr.params["block"].startswith("csr_spmm ("), csr.params
            merge = by[(matrix, "float64", k, "csr_merge")]
            assert merge.params["block"].startswith("csr_spmm_merge"), merge.params
            assert by[(matrix, "float64", k, "cocktail-auto-spmvs")].params["block"].startswith(f"{k} x ")
            best = by[(matrix, "float64", k, "cusparse-spmm-best")]
            assert best.params["best_of"] and best.kernel_us > 0
            auto = by[(matrix, "float64", k, "cocktail-auto")]
            assert auto.speedup_cusparse_best == pytest.approx(best.kernel_us / auto.kernel_us)
            assert by[(matrix, "float64", k, "cocktail-auto-col")].params["layout"] == "column-major"


def test_bench_k_on_the_command_line(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["bench", "laplace5_30", "--k", "1,8", "--methods", "cocktail-auto,cusparse", "--repeat", "3",
                 "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    spmm = [r for r in rows if r["section"] == "spmm"]
    assert {r["k"] for r in spmm} == {8}
    assert {"cocktail-auto", "cocktail-auto-col", "cocktail-auto-spmvs", "cusparse-spmm-best"} <= {
        r["method"] for r in spmm}
    assert "k = 8" in capsys.readouterr().out
