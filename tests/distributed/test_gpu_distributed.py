"""``cocktail.distributed`` on GPUs: mpi_distributed.py under ``mpiexec -n P --device cuda``, one GPU per rank
(P = 1 on one GPU; 2 and 4 where the machine has that many), and the bench's record of one run.

Marked ``gpu``: skipped where CuPy sees no CUDA device; each P past the GPU count is skipped (several GPUs are
lent only at times).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import cocktail
import mpi_launch

pytestmark = pytest.mark.gpu
cupy = pytest.importorskip("cupy") if cocktail.arrays.cuda_available() else None
HERE = Path(__file__).resolve().parent


def _enough_gpus(ranks: int) -> None:
    if cupy.cuda.runtime.getDeviceCount() < ranks:
        pytest.skip(f"{ranks} ranks need {ranks} GPUs; this machine has {cupy.cuda.runtime.getDeviceCount()}")


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_distributed_product_and_cg_on_gpus(ranks):
    _enough_gpus(ranks)
    argv, env = mpi_launch.command(ranks, sys.executable, str(HERE / "mpi_distributed.py"), "--device", "cuda")
    run = subprocess.run(argv, capture_output=True, text=True, timeout=900, env=env)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert f"ok: {ranks} ranks, device cuda" in run.stdout


@pytest.mark.parametrize("ranks", [1, 2])
def test_bench_distributed_record(tmp_path, ranks):
    out = tmp_path / "run.json"
    _enough_gpus(ranks)
    argv, env = mpi_launch.command(ranks, sys.executable, "-m", "cocktail", "bench", "--distributed", "--side", "40",
                                   "--repeat", "5", "--json", str(out), src_path=True)
    run = subprocess.run(argv, capture_output=True, text=True, timeout=900, env=env)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    record = json.loads(out.read_text())
    assert record["ranks"] == ranks and record["device"] == "cuda" and record["rows"] == 40 ** 3
    assert record["product_us"] > 0 and record["local_us"] > 0
    if ranks > 1:
        assert record["transport"] in ("nccl", "mpi-host-staged") and record["halo_bytes_total"] > 0
    else:
        assert record["halo_bytes_total"] == 0
