"""Structural features computed on the GPU equal those computed on the host (every zoo matrix).

Marked ``gpu``: skipped where CuPy sees no CUDA device.
"""

from __future__ import annotations

import numpy as np
import pytest

import cocktail
from cocktail.formats import CSR
from cocktail.auto import features
from zoo import ZOO

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy") if cocktail.arrays.cuda_available() else None


def _same(a, b):
    assert a.shape == b.shape and a.nnz == b.nnz and a.max_row == b.max_row
    assert a.mean_row == pytest.approx(b.mean_row)
    assert tuple(a.row_length_histogram) == tuple(b.row_length_histogram)
    np.testing.assert_array_equal(a.diagonal_counts.offsets, b.diagonal_counts.offsets)
    np.testing.assert_array_equal(a.diagonal_counts.counts, b.diagonal_counts.counts)
    assert dict(a.blocks) == dict(b.blocks)
    assert features.fingerprint(a) == features.fingerprint(b)
    assert dict(a.groups) == dict(b.groups) and a.distinct_values == b.distinct_values
    assert set(a.x_scatter) == set(b.x_scatter)
    for size in a.x_scatter:  # sums of floats in another order: equal within rounding
        assert a.x_scatter[size] == pytest.approx(b.x_scatter[size], abs=1e-9)


@pytest.mark.parametrize("zm", ZOO, ids=lambda m: m.name)
def test_device_features_equal_host_features(zm):
    host = CSR.from_arrays(zm.data, zm.indices, zm.indptr, zm.shape)
    device = CSR.from_arrays(*(cupy.asarray(a) for a in (zm.data, zm.indices, zm.indptr)), zm.shape)
    _same(features.compute(device), features.compute(host))


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_device_fingerprint_equals_host_fingerprint(index_dtype):
    import scipy.sparse as sp

    rng = np.random.default_rng(3)
    lengths = np.r_[0, 1, 2, 3, 4, 5, 0, rng.integers(0, 40, 5_000), 3_000, 0]  # empty, every bucket edge, a long row
    m, n = lengths.shape[0], 4_000
    cols = np.concatenate([np.sort(rng.choice(n, k, replace=False)) for k in lengths])
    S = sp.csr_array((np.ones(cols.shape[0]), cols, np.r_[0, np.cumsum(lengths)]), shape=(m, n))
    host = CSR.from_arrays(S.data, S.indices, S.indptr, S.shape, index_dtype=index_dtype)
    device = CSR.from_arrays(*(cupy.asarray(a) for a in (S.data, S.indices, S.indptr)), S.shape,
                             index_dtype=index_dtype)
    assert device.indptr.dtype == index_dtype
    assert features.length_histogram(device) == features.length_histogram(host)
    assert sum(features.length_histogram(device)) == m and features.length_histogram(device)[0] == int((lengths == 0).sum())
    assert features.structure_fingerprint(device) == features.structure_fingerprint(host)


def _more_matrices():
    """Structures beyond the zoo: (name, scipy CSR)."""
    import scipy.sparse as sp

    rng = np.random.default_rng(11)
    m = 20_000
    out = [("diagonal", sp.diags([np.arange(1.0, m + 1)], [0], format="csr")),
           ("laplace7", sp.diags([np.ones(m - abs(k)) * (6.0 if k == 0 else -1.0) for k in (-400, -20, -1, 0, 1, 20, 400)],
                                 [-400, -20, -1, 0, 1, 20, 400], format="csr")),
           ("fem_blocks", sp.kron(sp.random_array((3_000, 3_000), density=0.002, random_state=1),
                                  np.ones((3, 3)), format="csr")),
           ("wide", sp.random_array((300, 200_000), density=0.01, format="csr", random_state=2)),
           ("tall", sp.random_array((200_000, 40), density=0.05, format="csr", random_state=3))]
    degrees = np.minimum((rng.pareto(1.2, m) * 3).astype(np.int64), m)  # power law, empty rows, hubs
    degrees[::10] = 0
    degrees[17] = m  # a full row
    cols = np.concatenate([np.sort(rng.choice(m, d, replace=False)) for d in degrees])
    out.append(("power_law", sp.csr_array((rng.standard_normal(cols.size), cols, np.r_[0, np.cumsum(degrees)]),
                                          shape=(m, m))))
    zeros = sp.random_array((5_000, 5_000), density=0.002, format="csr", random_state=4)
    zeros.data[::3] = 0.0  # explicit zeros stay entries
    out.append(("explicit_zeros", zeros))
    pattern = sp.random_array((8_000, 8_000), density=0.003, format="csr", random_state=5)
    pattern.data[:] = 1.0
    out.append(("pattern", pattern))
    coded = sp.random_array((8_000, 8_000), density=0.003, format="csr", random_state=6)
    coded.data = rng.choice([-1.0, 0.5, 2.0, 4.0], coded.nnz)
    out.append(("four_values", coded))
    return out


MORE = _more_matrices() if cupy is not None else []
DTYPES = [np.float64, np.float32, np.float16, np.complex64, np.complex128]


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("name", [name for name, _ in MORE] or ["none"])
def test_device_features_equal_host_features_on_more_structures(name, index_dtype):
    S = dict(MORE)[name]
    for k, dtype in enumerate(DTYPES if index_dtype == np.int32 else DTYPES[:2]):
        data = S.data.astype(dtype)
        host = CSR.from_arrays(data, S.indices, S.indptr, S.shape, index_dtype=index_dtype)
        device = CSR.from_arrays(*(cupy.asarray(a) for a in (data, S.indices, S.indptr)), S.shape,
                                 index_dtype=index_dtype)
        want, got = features.compute(host), features.compute(device)
        _same(got, want)
        assert got.one_value == want.one_value
        limited = features.compute(device, block_fill_limit=1.5, one_value=want.one_value, distinct=want.distinct_values)
        assert dict(limited.blocks) == dict(features.compute(host, block_fill_limit=1.5).blocks)
        assert features.quick_facts(device) == (features.structure_fingerprint(host), want.one_value,
                                                want.distinct_values)
