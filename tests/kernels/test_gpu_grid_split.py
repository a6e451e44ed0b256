"""Grids capped below the work they cover: the warps of csr_stream and the blocks of csr_merge loop.

A real matrix never needs more blocks than ``gridDim.x`` allows on an 80 GB GPU, so the device's
limit is lowered here to 1 and 3 blocks: every warp or block then takes several passes, reusing
its shared memory between them, and the product must still equal SciPy's.

Marked ``gpu``: skipped where CuPy sees no CUDA device.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

import cocktail
from cocktail import SparseMatrix
from cocktail.kernels import device

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy") if cocktail.arrays.cuda_available() else None


def _long_and_short_rows(m=3000, n=2000, seed=5):
    """Runs of short rows and a few rows of 2,000-2,500 entries (several csr_stream pieces each)."""
    rng = np.random.default_rng(seed)
    lengths = np.minimum(rng.zipf(2.0, m), 40)
    lengths[[3, 1500, m - 1]] = (2000, 2500, 2200)
    rows = np.repeat(np.arange(m), lengths)
    cols = rng.integers(0, n, rows.size)
    return sp.csr_array((rng.standard_normal(rows.size), (rows, cols)), shape=(m, n))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("max_grid_x", [1, 3])
@pytest.mark.parametrize("kernel", ["csr_stream", "csr_merge"])
def test_a_grid_capped_below_the_work_still_covers_it(kernel, max_grid_x, dtype, monkeypatch):
    real = device.props(cupy.cuda.Device().id)
    monkeypatch.setattr(device, "props", lambda device_id: dataclasses.replace(real, max_grid_x=max_grid_x))
    S = _long_and_short_rows().astype(dtype)
    A = SparseMatrix(S, format="csr", kernel=kernel, device="cuda")
    assert max(launch.grid for launch in A._executor.launches) <= max_grid_x
    rng = np.random.default_rng(1)
    x, y0 = rng.standard_normal(S.shape[1]).astype(dtype), rng.standard_normal(S.shape[0]).astype(dtype)
    y = cupy.asarray(y0)
    A.matvec(cupy.asarray(x), out=y, alpha=1.5, beta=-0.5)
    expected = 1.5 * (S.astype(np.float64) @ x.astype(np.float64)) - 0.5 * y0.astype(np.float64)
    scale = 1.5 * (abs(S) @ np.abs(x.astype(np.float64))) + 0.5 * np.abs(y0.astype(np.float64))
    tol = 3000 * np.finfo(dtype).eps  # the longest row has 2,500 terms
    assert np.all(np.abs(cupy.asnumpy(y) - expected) <= tol * scale)
