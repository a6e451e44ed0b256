"""csr_stream's item partition (CPU): every item within capacity, rows covered once, long rows in pieces.

The kernel's reading of the items is replayed on the host (:func:`_replay`), so the partition
and the kernel's rules (a piece is an item whose row does not advance or whose first nonzero is
past its row's start) are checked together against SciPy's product.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail.kernels.csr_stream import partition
from cocktail.kernels.csr_stream import rules as stream_rules
from oracle import fake_props


def _replay(indptr, indices, data, x, item_row, item_nz, capacity):
    m = indptr.shape[0] - 1
    y = np.full(m, np.nan)
    pieces: dict[int, list] = {}
    for i in range(item_row.shape[0] - 1):
        r0, r1, z0, z1 = (int(v) for v in (item_row[i], item_row[i + 1], item_nz[i], item_nz[i + 1]))
        assert 0 <= z1 - z0 <= capacity
        products = data[z0:z1] * x[indices[z0:z1]]
        if r1 == r0 or z0 != indptr[r0]:
            first = i - (z0 - indptr[r0]) // capacity
            pieces.setdefault(first, []).append((i, r0, products.sum()))
            continue
        assert indptr[r1] == z1
        for r in range(r0, r1):
            assert np.isnan(y[r]), f"row {r} stored twice"
            y[r] = products[indptr[r] - z0:indptr[r + 1] - z0].sum()
    for first, got in pieces.items():
        rows = {r for _, r, _ in got}
        assert len(rows) == 1
        (r,) = rows
        expected_pieces = -(-(indptr[r + 1] - indptr[r]) // capacity)
        assert [i for i, _, _ in got] == list(range(first, first + expected_pieces))
        assert np.isnan(y[r])
        y[r] = sum(s for _, _, s in got)
    return y


def _matrix(kind: str, rng):
    if kind == "power_law":
        m = 3000
        lengths = np.minimum((rng.pareto(1.2, m) * 3).astype(int), 5000)
    elif kind == "empty_rows":
        m = 5000
        lengths = np.where(rng.random(m) < 0.02, rng.integers(1, 40, m), 0)
    elif kind == "one_long_row":
        m = 300
        lengths = np.ones(m, dtype=int)
        lengths[17] = 2 * 256 + 1
    elif kind == "no_entries":
        m = 700
        lengths = np.zeros(m, dtype=int)
    else:  # exact multiples of the capacity and of the run step
        m = 64
        lengths = np.full(m, 224)
        lengths[::3] = 256
        lengths[1::7] = 512
    n = 6000
    rows = np.repeat(np.arange(m), lengths)
    cols = rng.integers(0, n, rows.shape[0])
    S = sp.csr_array((rng.standard_normal(rows.shape[0]), (rows, cols)), shape=(m, n))
    S.sum_duplicates()
    return S


@pytest.mark.parametrize("kind", ["power_law", "empty_rows", "one_long_row", "no_entries", "multiples"])
@pytest.mark.parametrize("items_per_lane", [4, 8, 16])
def test_partition_replays_to_the_product(kind, items_per_lane):
    rng = np.random.default_rng(7)
    S = _matrix(kind, rng)
    capacity = 32 * items_per_lane
    own_row, rows_per_item = stream_rules.partition_shape(items_per_lane)
    indptr = S.indptr.astype(np.int32)
    item_row, item_nz = partition(indptr, capacity, own_row, rows_per_item)
    assert item_row.dtype == indptr.dtype and item_nz.dtype == indptr.dtype
    assert item_row[-1] == S.shape[0] and item_nz[-1] == S.nnz
    assert np.all(np.diff(item_row) >= 0) and np.all(np.diff(item_nz) >= 0)
    assert np.all(np.diff(item_row) <= rows_per_item)
    x = rng.standard_normal(S.shape[1])
    y = _replay(indptr, S.indices, S.data, x, item_row, item_nz, capacity)
    assert not np.isnan(y).any(), "a row was never stored"
    np.testing.assert_allclose(y, S @ x, rtol=1e-12, atol=1e-12)


def test_runs_fill_most_of_an_item_on_short_rows():
    rng = np.random.default_rng(3)
    m = 20000
    lengths = rng.integers(5, 15, m)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    own_row, rows_per_item = stream_rules.partition_shape(8)
    item_row, item_nz = partition(indptr, 256, own_row, rows_per_item)
    fill = indptr[-1] / (256 * (item_row.shape[0] - 1))

    assert fill > 0.85 * (1 - stream_rules.STREAM_OWN_ROW_SHARE)  # runs start every (1 - share) of an item


def _storage():
    from cocktail.formats.csr import CSR

    S = sp.random(50, 60, density=0.1, format="csr", random_state=1)
    return CSR.from_arrays(S.data, S.indices, S.indptr, S.shape)


def test_configuration_resolves_the_rule_and_checks_each_parameter():
    from cocktail.kernels import get
    from cocktail.tuning import kernel_rules as rules
    from cocktail.tuning import launch_rules as launch

    spec = get("csr_stream")
    config = launch.configure(spec, _storage(), {}, fake_props())
    assert config["items_per_lane"] == stream_rules.STREAM_ITEMS_PER_LANE and config["stream"] is True
    assert (config["own_row"], config["rows_per_item"]) == stream_rules.partition_shape(stream_rules.STREAM_ITEMS_PER_LANE)
    with pytest.raises(ValueError, match="items_per_lane must be one of"):
        launch.configure(spec, _storage(), {"items_per_lane": 3}, fake_props())
    with pytest.raises(ValueError, match="stream must be True or False"):
        launch.configure(spec, _storage(), {"stream": 1}, fake_props())
    with pytest.raises(ValueError, match="shared memory"):  # 1024 threads x 16 float64 = 128 KiB
        launch.configure(spec, _storage(), {"items_per_lane": 16, "block_threads": 1024}, fake_props())
    # the rule's block shrinks where its staging would not fit: 16 complex128 products a thread in 48 KiB: 128 threads
    wide = _storage().astype("complex128")
    config = launch.configure(spec, wide, {"items_per_lane": 16}, fake_props(shared=49152))
    assert config["block_threads"] * 16 * 16 <= 49152 and config["block_threads"] % 32 == 0
    assert config["block_threads"] == stream_rules.staged_block_threads(rules.BLOCK_THREADS, 16 * 16, 49152)
    # precision x index x items x stream x (three value modes with full columns, two with short ones)
    assert len(spec.all_expressions()) == len(spec.precisions) * 2 * 3 * 2 * 5
