"""csr_stream's items (CPU): the kernel's reading of ``item_row`` replayed on the host.

:func:`_replay` follows the kernel step by step (rows ending in an item, the spanning first row's
head share, the tail share of the row continuing past the item, tickets and the finisher's sum in
item order), so the item rows and the kernel's rules are checked together against SciPy's product.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail.kernels.csr_stream import item_rows


def _replay(indptr, indices, data, x, item_row, capacity):
    m, nnz = indptr.shape[0] - 1, int(indptr[-1])
    n_items = item_row.shape[0] - 1
    y = np.full(m, np.nan)
    head, tail = np.full(n_items, np.nan), np.full(n_items, np.nan)
    tickets: dict[int, list] = {}
    for i in range(n_items):
        z0, z1 = i * capacity, min((i + 1) * capacity, nnz)
        r0, r1 = int(item_row[i]), int(item_row[i + 1])
        products = np.zeros(capacity)
        products[:z1 - z0] = data[z0:z1] * x[indices[z0:z1]]
        tail_start = indptr[r1] if r1 < m else z1
        if tail_start < z1:
            tail[i] = products[max(tail_start, z0) - z0:z1 - z0].sum()
            first, last = tail_start // capacity, (indptr[r1 + 1] - 1) // capacity
            tickets.setdefault(first, []).append((i, r1, last))
        for r in range(r0, r1):
            assert indptr[r + 1] <= z1 and (indptr[r + 1] > z0 or i == 0), f"row {r} does not end in item {i}"
            v = products[max(indptr[r], z0) - z0:indptr[r + 1] - z0].sum()
            if r == r0 and indptr[r] < z0:
                head[i] = v
                tickets.setdefault(indptr[r] // capacity, []).append((i, r, i))
            else:
                assert np.isnan(y[r]), f"row {r} stored twice"
                y[r] = v
    for first, takers in tickets.items():
        rows = {r for _, r, _ in takers}
        assert len(rows) == 1, "one ticket, one row"
        (r,) = rows
        last = takers[0][2]
        assert sorted(i for i, _, _ in takers) == list(range(first, last + 1)), "every share takes one ticket"
        assert np.isnan(y[r])
        y[r] = tail[first:last].sum() + head[last]
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
    elif kind == "empty_edges":  # empty rows in front, at item boundaries and at the end
        m = 400
        lengths = np.full(m, 16)
        lengths[:5] = 0
        lengths[-7:] = 0
        lengths[21:30] = 0  # rows 5..20 fill exactly 256 entries: empty rows sit on the boundary
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


@pytest.mark.parametrize("kind", ["power_law", "empty_rows", "one_long_row", "empty_edges", "no_entries", "multiples"])
@pytest.mark.parametrize("items_per_lane", [4, 8, 16])
def test_item_rows_replay_to_the_product(kind, items_per_lane):
    rng = np.random.default_rng(7)
    S = _matrix(kind, rng)
    capacity = 32 * items_per_lane
    indptr = S.indptr.astype(np.int32)
    item_row = item_rows(indptr, capacity)
    assert item_row.dtype == indptr.dtype
    assert item_row.shape[0] - 1 == max(1, -(-S.nnz // capacity))
    assert item_row[0] == 0 and item_row[-1] == S.shape[0] and np.all(np.diff(item_row) >= 0)
    x = rng.standard_normal(S.shape[1])
    y = _replay(indptr, S.indices, S.data, x, item_row, capacity)
    assert not np.isnan(y).any(), "a row was never stored"
    np.testing.assert_allclose(y, S @ x, rtol=1e-12, atol=1e-12)


def _props():
    from cocktail.kernels.device import DeviceProps

    return DeviceProps(0, "fake", 132, 1024, 2048, 49152, 232448, 2**31 - 1, 32, 50 << 20, (9, 0))


def _storage():
    from cocktail.formats.csr import CSR

    S = sp.random(50, 60, density=0.1, format="csr", random_state=1)
    return CSR.from_arrays(S.data, S.indices, S.indptr, S.shape)


def test_configuration_resolves_the_rule_and_checks_each_parameter():
    from cocktail.kernels import get
    from cocktail.tuning import kernels as rules
    from cocktail.tuning import launch

    spec = get("csr_stream")
    config = launch.configure(spec, _storage(), {}, _props())
    assert config["items_per_lane"] == rules.STREAM_ITEMS_PER_LANE and config["stream"] is True
    with pytest.raises(ValueError, match="items_per_lane must be one of"):
        launch.configure(spec, _storage(), {"items_per_lane": 3}, _props())
    with pytest.raises(ValueError, match="stream must be True or False"):
        launch.configure(spec, _storage(), {"stream": 1}, _props())
    with pytest.raises(ValueError, match="shared memory"):  # 1024 threads x 16 float64 = 128 KiB
        launch.configure(spec, _storage(), {"items_per_lane": 16, "block_threads": 1024}, _props())
    assert len(spec.all_expressions()) == 2 * 2 * 3 * 2
