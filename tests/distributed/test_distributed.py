"""``cocktail.distributed`` on the CPU: the partition, and the product and CG under ``mpiexec -n P`` for P = 1..4.

The multi-process checks live in mpi_distributed.py (every rank asserts its rows against SciPy's product
of the whole matrix); here each P is one ``mpiexec`` run of it.  They need mpi4py and an MPI (``pip install
'cocktail[distributed]'``, which CI installs).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import mpi_launch
from cocktail.distributed.partition import balanced_offsets, even_offsets

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("ranks", [1, 2, 3, 4])
def test_distributed_product_and_cg_under_mpiexec(ranks):
    argv, env = mpi_launch.command(ranks, sys.executable, str(HERE / "mpi_distributed.py"))
    run = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert f"ok: {ranks} ranks" in run.stdout


def test_offsets_balance_entries_and_rows():
    S = sp.csr_array(sp.random_array((1000, 1000), density=0.01, rng=0))
    offsets = balanced_offsets(S.indptr, 4)
    assert offsets[0] == 0 and offsets[-1] == 1000 and np.all(np.diff(offsets) >= 0)
    work = np.diff((S.indptr + np.arange(1001))[offsets])
    assert work.max() <= 1.05 * work.mean()


def test_offsets_keep_a_dense_row_whole_and_allow_empty_ranks():
    indptr = np.array([0, 1, 1001, 1002])  # one row of 1000 entries between two of one
    offsets = balanced_offsets(indptr, 4)
    assert offsets[0] == 0 and offsets[-1] == 3 and np.all(np.diff(offsets) >= 0)
    assert np.count_nonzero(np.diff(offsets)) <= 3  # three rows over four ranks: one rank is empty
    assert list(balanced_offsets(np.array([0]), 3)) == [0, 0, 0, 0]  # no rows at all


def test_even_offsets():
    assert list(even_offsets(10, 4)) == [0, 3, 6, 8, 10]
    with pytest.raises(ValueError, match="positive int"):
        balanced_offsets(np.array([0, 1]), 0)


def test_bench_distributed_under_mpiexec(tmp_path):
    import json

    out = tmp_path / "run.json"
    argv, env = mpi_launch.command(2, sys.executable, "-m", "cocktail", "bench", "--distributed", "--side", "20",
                                   "--repeat", "3", "--json", str(out), src_path=True)
    run = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    record = json.loads(out.read_text())
    assert record["ranks"] == 2 and record["rows"] == 8000 and record["transport"] == "mpi"
    assert record["halo_bytes_total"] == 2 * 20 * 20 * 8  # each rank receives its neighbour's plane: 400 entries
    assert "P=2" in run.stdout
