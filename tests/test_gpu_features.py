"""Structural features computed on the GPU equal those computed on the host (every zoo matrix).

Marked ``gpu``: skipped where CuPy sees no CUDA device.
"""

from __future__ import annotations

import numpy as np
import pytest

import cocktail
from cocktail.formats import CSR
from cocktail.tuning import features
from zoo import ZOO

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy") if cocktail._xp.cuda_available() else None


def _same(a, b):
    assert a.shape == b.shape and a.nnz == b.nnz and a.max_row == b.max_row
    assert a.mean_row == pytest.approx(b.mean_row)
    assert tuple(a.row_length_histogram) == tuple(b.row_length_histogram)
    np.testing.assert_array_equal(a.diagonal_counts.offsets, b.diagonal_counts.offsets)
    np.testing.assert_array_equal(a.diagonal_counts.counts, b.diagonal_counts.counts)
    assert dict(a.blocks) == dict(b.blocks)
    assert features.fingerprint(a) == features.fingerprint(b)
    assert set(a.x_scatter) == set(b.x_scatter)
    for size in a.x_scatter:  # sums of floats in another order: equal within rounding
        assert a.x_scatter[size] == pytest.approx(b.x_scatter[size], abs=1e-9)


@pytest.mark.parametrize("zm", ZOO, ids=lambda m: m.name)
def test_device_features_equal_host_features(zm):
    host = CSR.from_arrays(zm.data, zm.indices, zm.indptr, zm.shape)
    device = CSR.from_arrays(*(cupy.asarray(a) for a in (zm.data, zm.indices, zm.indptr)), zm.shape)
    _same(features.compute(device), features.compute(host))
