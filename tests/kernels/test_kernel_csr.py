"""Host-side logic of csr_vector and csr_merge: parameter rules, and NumPy simulations of the kernels' indexing.

The simulations mirror the CUDA code line by line (merge-path search, shares, in-warp segmented
scan, block carries, fix-up; csr_vector's warp-uniform row loop and aligned start) so that the
partition logic is exercised without a GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

from cocktail.formats.csr import CSR
from cocktail.kernels import csr_merge, csr_vector, get
from cocktail.kernels.csr_merge import rules as csr_merge_rules
from cocktail.kernels.csr_vector import rules as csr_vector_rules
from cocktail.tuning import kernel_rules as rules
from cocktail.tuning import launch_rules
from oracle import fake_props

WARP = 32


def _csr(lengths, n=50, seed=0):
    rng = np.random.default_rng(seed)
    lengths = np.asarray(lengths, dtype=np.int64)
    rows = np.repeat(np.arange(lengths.size), lengths)
    cols = np.concatenate([rng.choice(max(n, int(lengths.max(initial=0))), size=k, replace=False)
                           for k in lengths]) if lengths.sum() else np.zeros(0, np.int64)
    n = max(n, int(cols.max(initial=-1)) + 1)
    vals = rng.integers(-4, 5, size=rows.size).astype(np.float64)
    indptr = np.r_[0, np.cumsum(lengths)]
    order = np.lexsort((cols, rows))
    return CSR.from_arrays(vals[order], cols[order], indptr, (lengths.size, n))


# --- parameters ----------------------------------------------------------------------------------

def test_specs_registered_with_contract_parameters():
    v = get("csr_vector")
    assert v.defaults == {"threads_per_row": None, "aligned": True, "ldg": True, "block_threads": None}
    exprs = v.expressions("float", "int")
    assert len(exprs) == 30  # threads x aligned x values (stored, one value, coded)
    assert "csr_vector<float, int, 2, true, 0>" in exprs and "csr_vector<float, int, 32, false, 2>" in exprs
    assert len(v.all_expressions()) == 30 * 2 * len(v.precisions)  # x index types x precisions
    mg = get("csr_merge")
    assert mg.defaults == {"items_per_thread": None, "block_threads": None, "ldg": True}
    assert mg.deterministic
    assert mg.expressions("double", "long long") == ["csr_merge<double, long long>",
                                                     "csr_merge_fixup<double, long long>"]


def _config(name, lengths, params=None):
    return launch_rules.configure(get(name), _csr(lengths), params or {}, fake_props())


def test_threads_per_row_rule():
    assert _config("csr_vector", [3, 2, 4, 3])["threads_per_row"] == csr_vector_rules.threads_per_row(3.0) == 4
    assert _config("csr_vector", [40] * 3)["threads_per_row"] == 32
    assert _config("csr_vector", [0, 0])["threads_per_row"] == 2
    assert _config("csr_vector", [])["threads_per_row"] == 2


@pytest.mark.parametrize("t", [2, 4, 8, 16, 32])
def test_threads_per_row_explicit(t):
    assert _config("csr_vector", [3], {"threads_per_row": t})["threads_per_row"] == t


@pytest.mark.parametrize("t", [1, 3, 64, 0, True])
def test_threads_per_row_refused(t):
    with pytest.raises(ValueError, match="threads_per_row must be one of"):
        _config("csr_vector", [3], {"threads_per_row": t})


def test_block_threads_whole_warps():
    assert launch_rules.block_threads("csr_vector", None, fake_props()) == rules.BLOCK_THREADS
    assert _config("csr_merge", [3], {"block_threads": 64})["block_threads"] == 64
    for name in ("csr_scalar", "csr_vector", "csr_merge", "dia", "ell"):
        for bad in (48, 2048, 0, True, 2.5):
            with pytest.raises(ValueError, match=f"{name}: block_threads must be"):
                launch_rules.configure(get(name), _fmt_for(name), {"block_threads": bad}, fake_props())


def _fmt_for(name):
    from cocktail.formats import get as format_get

    return format_get(get(name).formats[0]).from_csr(_csr([3, 1]))


def test_flags_are_booleans():
    with pytest.raises(ValueError, match="csr_vector: aligned must be True or False"):
        _config("csr_vector", [3], {"aligned": 1})
    with pytest.raises(ValueError, match="csr_scalar: ldg must be True or False"):
        _config("csr_scalar", [3], {"ldg": "yes"})


def test_items_per_thread():
    assert _config("csr_merge", [3])["items_per_thread"] == csr_merge_rules.MERGE_ITEMS_PER_THREAD
    assert _config("csr_merge", [3], {"items_per_thread": 13})["items_per_thread"] == 13
    for bad in (0, -2, 2.5, True):
        with pytest.raises(ValueError, match="items_per_thread"):
            _config("csr_merge", [3], {"items_per_thread": bad})


def test_configuration_is_complete():
    """Every configured value is concrete: no None is left for a product to resolve."""
    for name in ("csr_scalar", "csr_vector", "csr_merge", "dia", "ell"):
        config = launch_rules.configure(get(name), _fmt_for(name), {}, fake_props())
        assert None not in config.values(), (name, config)
        assert set(get(name).defaults) <= set(config)


def test_wrong_format_or_parameter():
    with pytest.raises(ValueError, match="kernel 'ell' multiplies ell matrices, not 'csr'"):
        launch_rules.configure(get("ell"), _csr([3]), {}, fake_props())
    with pytest.raises(TypeError, match="has no parameter 'nope'"):
        _config("csr_scalar", [3], {"nope": 1})


def test_merge_grid():
    assert csr_merge.merge_grid(10, 30, 7, 32) == (6, 1)
    assert csr_merge.merge_grid(100, 0, 1, 32) == (100, 4)
    assert csr_merge.merge_grid(1, 0, 7, 256) == (1, 1)
    assert csr_merge.merge_grid(1000, 9000, 7, 64) == (1429, 23)


# --- csr_merge simulation -----------------------------------------------------------------------

def merge_search(diagonal, m, nnz, indptr):
    """csr_merge_search: row ends consumed before ``diagonal``."""
    lo, hi = max(diagonal - nnz, 0), min(diagonal, m)
    while lo < hi:
        pivot = (lo + hi) >> 1
        if indptr[pivot + 1] <= diagonal - pivot - 1:
            lo = pivot + 1
        else:
            hi = pivot
    return lo


def simulate_merge(fmt, x, y_old, alpha, beta, items, block):
    """Run csr_merge + csr_merge_fixup on the host; also return how often each item / row was touched."""
    indptr, indices, data = (np.asarray(a) for a in (fmt.indptr, fmt.indices, fmt.data))
    m, nnz = fmt.shape[0], int(fmt.nnz)
    total = m + nnz
    _, blocks = csr_merge.merge_grid(m, nnz, items, block)
    y = y_old.copy()
    row_end_seen = np.zeros(m, int)
    nz_seen = np.zeros(nnz, int)
    writes = np.zeros(m, int)

    def store_y(row, s):
        writes[row] += 1
        y[row] = alpha * s if beta == 0 else alpha * s + beta * y[row]

    def take(j):
        nz_seen[j] += 1
        return data[j] * x[indices[j]]

    carry_row = np.empty(blocks, np.int64)
    carry_val = np.empty(blocks)
    for b in range(blocks):
        d0 = [min((b * block + t) * items, total) for t in range(block)]
        start_row = [merge_search(d, m, nnz, indptr) for d in d0]
        start_row.append(merge_search(min(d0[-1] + items, total), m, nnz, indptr))
        x0s, x1s = np.array(start_row[:-1]), np.array(start_row[1:])
        heads, carries = np.zeros(block), np.zeros(block)
        for t in range(block):
            x0, x1 = x0s[t], x1s[t]
            d1 = min(d0[t] + items, total)
            assert merge_search(d1, m, nnz, indptr) == x1  # the next thread's start is this one's end
            j, y1 = d0[t] - x0, d1 - x1
            assert x0 <= x1 and j <= y1 and (x0 == m or indptr[x0] <= j) and (x1 == m or y1 <= indptr[x1 + 1])
            if x0 < x1:
                while j < indptr[x0 + 1]:
                    heads[t] += take(j)
                    j += 1
                row_end_seen[x0] += 1
                for row in range(x0 + 1, x1):
                    s = 0.0
                    while j < indptr[row + 1]:
                        s += take(j)
                        j += 1
                    row_end_seen[row] += 1
                    store_y(row, s)
            while j < y1:
                carries[t] += take(j)
                j += 1
        assert np.all(np.diff(x1s) >= 0)  # scan keys are sorted
        run = carries.copy()
        for w0 in range(0, block, WARP):  # __shfl_up_sync steps: every lane reads the values before the step
            for offset in (1, 2, 4, 8, 16):
                before = run[w0:w0 + WARP].copy()
                for lane in range(offset, WARP):
                    if x1s[w0 + lane - offset] == x1s[w0 + lane]:
                        run[w0 + lane] = before[lane] + before[lane - offset]
        warp_row, warp_run = x1s[WARP - 1::WARP], run[WARP - 1::WARP]
        for t in range(block):
            lane, warp = t % WARP, t // WARP
            if x0s[t] < x1s[t]:
                prefix = run[t - 1] if lane > 0 else 0.0
                w = warp - 1
                while w >= 0 and warp_row[w] == x0s[t]:
                    prefix += warp_run[w]
                    w -= 1
                store_y(x0s[t], prefix + heads[t])
        out, w = run[block - 1], block // WARP - 2
        while w >= 0 and warp_row[w] == x1s[-1]:
            out += warp_run[w]
            w -= 1
        carry_row[b], carry_val[b] = x1s[-1], out
    assert carry_row[-1] == m
    for b in range(blocks if blocks > 1 else 0):  # csr_merge_fixup
        row = carry_row[b]
        if row < m and (b == 0 or carry_row[b - 1] != row):
            s, c = 0.0, b
            while c < blocks and carry_row[c] == row:
                s += carry_val[c]
                c += 1
            y[row] += alpha * s
    return y, row_end_seen, nz_seen, writes


def _patterns():
    rng = np.random.default_rng(11)
    yield "empty_rows", [0, 0, 0]
    yield "one_row", [5]
    yield "one_empty_row", [0]
    yield "ones", [1] * 200
    yield "one_long_row", [0] * 3 + [3000] + [0] * 3
    yield "long_rows", [3] * 100 + [2000, 700] + [1] * 100
    yield "zipf", list(np.minimum(rng.zipf(1.7, size=700), 600))
    yield "sparse_with_empties", list(rng.integers(0, 3, size=900) * (rng.random(900) < 0.4))
    yield "uniform", list(rng.integers(0, 40, size=150))


@pytest.mark.parametrize("items,block", [(1, 32), (2, 64), (3, 32), (7, 256), (13, 64), (50, 32)])
@pytest.mark.parametrize("name,lengths", list(_patterns()), ids=[p[0] for p in _patterns()])
def test_merge_simulation_consumes_everything_once(name, lengths, items, block):
    fmt = _csr(lengths, seed=len(lengths))
    m, n = fmt.shape
    rng = np.random.default_rng(3)
    x = rng.integers(-3, 4, size=n).astype(np.float64)
    y_old = rng.integers(-5, 6, size=m).astype(np.float64)
    exact = fmt.to_scipy() @ x  # small integers: every partial sum is exact

    y, row_ends, nzs, writes = simulate_merge(fmt, x, y_old, 1.0, 0.0, items, block)
    assert np.all(row_ends == 1) and np.all(nzs == 1) and np.all(writes == 1)
    np.testing.assert_array_equal(y, exact)

    y, *_ = simulate_merge(fmt, x, y_old, -0.5, 2.0, items, block)
    np.testing.assert_array_equal(y, -0.5 * exact + 2.0 * y_old)

    y, *_ = simulate_merge(fmt, x, np.full(m, np.nan), 3.0, 0.0, items, block)
    np.testing.assert_array_equal(y, 3.0 * exact)


def test_merge_simulation_random_patterns():
    rng = np.random.default_rng(99)
    for trial in range(40):
        m = int(rng.integers(1, 300))
        lengths = rng.integers(0, 12, size=m) * (rng.random(m) < rng.random())
        if rng.random() < 0.5:
            lengths[rng.integers(0, m)] = rng.integers(100, 1500)
        fmt = _csr(lengths, seed=trial)
        x = rng.integers(-3, 4, size=fmt.shape[1]).astype(np.float64)
        y_old = rng.integers(-5, 6, size=m).astype(np.float64)
        items, block = int(rng.integers(1, 20)), int(rng.choice([32, 64, 96, 128]))
        y, row_ends, nzs, writes = simulate_merge(fmt, x, y_old, 2.0, -1.0, items, block)
        assert np.all(row_ends == 1) and np.all(nzs == 1) and np.all(writes == 1)
        np.testing.assert_array_equal(y, 2.0 * (fmt.to_scipy() @ x) - y_old)


# --- csr_vector simulation ----------------------------------------------------------------------

@pytest.mark.parametrize("aligned", [True, False])
@pytest.mark.parametrize("threads", [2, 4, 8, 16, 32])
def test_vector_simulation_covers_rows_and_entries_once(threads, aligned):
    """The warp-uniform loop covers every row once; a row's lanes cover its entries once, aligned after step one."""
    lengths = np.minimum(np.random.default_rng(threads).zipf(1.6, size=301), 200)
    lengths[::7] = 0
    fmt = _csr(lengths)
    indptr = np.asarray(fmt.indptr)
    m = fmt.shape[0]
    block, grid = 64, 3  # fewer threads than rows * threads: several trips round the loop
    rows_done = np.zeros(m, int)
    trips = np.zeros(grid * block, int)
    for tid in range(grid * block):
        thread_in_block = tid % block
        lane, group_in_warp = thread_in_block % threads, (thread_in_block % WARP) // threads
        first_group = tid // threads - group_in_warp
        groups = grid * block // threads
        base = first_group
        while base < m:
            trips[tid] += 1
            row = base + group_in_warp
            if row < m and lane == 0:
                rows_done[row] += 1
            base += groups
    assert np.all(trips.reshape(-1, WARP) == trips.reshape(-1, WARP)[:, :1])  # warp-uniform loop
    assert np.all(rows_done == 1)

    for row in range(m):
        start, end = int(indptr[row]), int(indptr[row + 1])
        seen = []
        for lane in range(threads):
            j = (start - start % threads if aligned else start) + lane
            if aligned:
                if start <= j < end:
                    seen.append(j)
                j += threads
                assert j % threads == lane  # later steps read aligned segments
            while j < end:
                seen.append(j)
                j += threads
        assert sorted(seen) == list(range(start, end))
