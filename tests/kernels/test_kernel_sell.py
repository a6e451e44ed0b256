"""Host-side logic of the sell kernel: the threads-per-row rule, parameter checks, the layout
premises the kernel relies on, and a NumPy simulation of the kernel's indexing.

The simulation mirrors sell.cu step by step (warp-uniform row loop, lanes striding over a row's
slots, the stop at the first padding slot, the group sum and the permuted store) so that the
mapping is exercised on many slice heights, sorting windows and width multiples without a GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

from cocktail import reference
from cocktail.formats.csr import CSR
from cocktail.formats.sell import SELL
from cocktail.kernels import get, sell
from cocktail.kernels.sell import rules as sell_rules
from cocktail.tuning import kernel_rules as rules
from cocktail.tuning import launch_rules
from oracle import fake_props

WARP = 32


def _csr(lengths, n=40, seed=0):
    rng = np.random.default_rng(seed)
    lengths = np.minimum(np.asarray(lengths, dtype=np.int64), n)
    rows = np.repeat(np.arange(lengths.size), lengths)
    cols = (np.concatenate([np.sort(rng.choice(n, size=k, replace=False)) for k in lengths])
            if lengths.sum() else np.zeros(0, np.int64))
    vals = rng.integers(-4, 5, size=rows.size).astype(np.float64)
    return CSR.from_arrays(vals, cols, np.r_[0, np.cumsum(lengths)], (lengths.size, n))


def _sell(lengths, n=40, seed=0, **params):
    return SELL.from_csr(_csr(lengths, n, seed), max_fill=None, **params)


def _config(fmt, params=None):
    return launch_rules.configure(get("sell"), fmt, params or {}, fake_props())


# --- registry and parameters -------------------------------------------------------------------

def test_registered_with_every_instantiation():
    spec = get("sell")
    assert spec.formats == ("sell",) and spec.source == "sell" and spec.deterministic
    assert spec.defaults == {"threads_per_row": None, "ldg": True, "block_threads": None}
    assert spec.expressions("float", "int") == ([f"sell<float, int, {t}>" for t in (1, 2, 4, 8)]
                                                + [f"sell<float, int, {t}, true>" for t in (1, 2, 4, 8)])
    assert len(spec.all_expressions()) == 2 * 4 * 2 * len(spec.precisions)  # columns x threads x index x precisions
    assert spec.layouts == ("short_columns",)  # the SpMV kernel reads short columns; sell_spmm does not
    assert "sell<double, long long, 8>" in spec.all_expressions()


def test_sell_is_the_default_kernel_of_the_format():
    fmt = _sell([3, 1, 2])
    assert rules.choose_kernel(fmt) == "sell"
    complex_fmt = SELL.from_csr(CSR.from_arrays(np.ones(2, np.complex128), np.array([0, 1]), np.array([0, 1, 2]),
                                                (2, 2)))
    assert rules.choose_kernel(complex_fmt) == "sell"  # complex values too


@pytest.mark.parametrize("mean,t", [(0.0, 1), (1.0, 1), (8.0, 1), (8.5, 2), (16.0, 2), (16.5, 4), (32.0, 4),
                                    (33.0, 8), (64.0, 8), (1e6, 8)])
def test_threads_per_row_rule(mean, t):
    assert sell_rules.threads_per_row(mean) == t


def test_rule_reads_the_mean_slice_width():
    # slice_height 4: slices 20 and 0 wide (80 slots over 8 padded rows: 10 per row)
    fmt = _sell([20, 1, 1, 1, 0, 0, 0, 0], slice_height=4)
    assert [int(w) for w in fmt.slice_width] == [20, 0]
    assert _config(fmt)["threads_per_row"] == sell_rules.threads_per_row(10.0) == 2
    # the missing rows of a partial last slice count as padded rows: 3 rows, one slice of 32
    assert _config(_sell([30, 30, 30]))["threads_per_row"] == sell_rules.threads_per_row(30 * 32 / 32) == 4
    assert _config(_sell([40, 40], n=50, slice_height=2))["threads_per_row"] == 8
    assert _config(_sell([0, 0, 0]))["threads_per_row"] == 1
    assert _config(SELL.from_csr(_csr([])))["threads_per_row"] == 1


@pytest.mark.parametrize("t", [1, 2, 4, 8, np.int64(4)])
def test_threads_per_row_explicit(t):
    config = _config(_sell([3, 5]), {"threads_per_row": t, "block_threads": 64, "ldg": False})
    assert config == {"threads_per_row": t, "block_threads": 64, "ldg": False}
    assert type(config["threads_per_row"]) is int


@pytest.mark.parametrize("t", [0, 3, 16, 32, True, 2.0, "4"])
def test_threads_per_row_refused(t):
    with pytest.raises(ValueError, match=r"sell: threads_per_row must be one of \(1, 2, 4, 8\) or None"):
        _config(_sell([3]), {"threads_per_row": t})


def test_other_parameters_refused():
    for bad in (48, 2048, 0, True):
        with pytest.raises(ValueError, match="sell: block_threads must be"):
            _config(_sell([3]), {"block_threads": bad})
    with pytest.raises(ValueError, match="sell: ldg must be True or False"):
        _config(_sell([3]), {"ldg": 1})
    with pytest.raises(TypeError, match="kernel 'sell' has no parameter 'aligned'"):
        _config(_sell([3]), {"aligned": True})
    with pytest.raises(ValueError, match="kernel 'sell' multiplies sell matrices, not 'csr'"):
        _config(_csr([3]))


def test_configuration_is_complete():
    config = _config(_sell([3, 1], slice_height=64, sort_window=128))
    assert None not in config.values() and set(get("sell").defaults) == set(config)


# --- layout premises ---------------------------------------------------------------------------

@pytest.mark.parametrize("params", [{}, {"slice_height": 4, "sort_window": 8, "width_multiple": 3},
                                    {"slice_height": 1}, {"slice_height": 64, "sort_window": 128}])
def test_entries_are_packed_left(params):
    """The kernel stops a row at its first padding slot: no real entry may follow one."""
    fmt = _sell(np.random.default_rng(1).zipf(1.7, size=150), **params)
    c, ptr, col = fmt.slice_height, np.asarray(fmt.slice_ptr, np.int64), np.asarray(fmt.col)
    for s in range(fmt.nslices):
        block = col[ptr[s]:ptr[s + 1]].reshape(-1, c)  # [k, r]
        real = block >= 0
        assert not (real[1:] & ~real[:-1]).any()


def test_unsorted_layouts_have_the_identity_permutation():
    """With sort_window 1 the kernel writes y[p] without reading perm."""
    for c in (1, 3, 32, 256):
        fmt = _sell(np.random.default_rng(c).integers(0, 9, size=100), slice_height=c)
        assert not sell.permuted(fmt)
        assert np.array_equal(fmt.perm, np.arange(100))
    assert sell.permuted(_sell([1, 2, 3, 4], slice_height=2, sort_window=4))


# --- simulation --------------------------------------------------------------------------------

def simulate(fmt, x, y_old, alpha, beta, t, block, grid):
    """Run sell<T, I, t> on the host; also return the slots each lane read and the writes per row."""
    m = fmt.shape[0]
    c = fmt.slice_height
    ptr = np.asarray(fmt.slice_ptr).astype(np.int64)
    col, data, perm = np.asarray(fmt.col), np.asarray(fmt.data), np.asarray(fmt.perm)
    permuted = sell.permuted(fmt)
    y = y_old.copy()
    reads = np.zeros(col.shape[0], int)
    writes = np.zeros(m, int)
    groups = grid * block // t
    step = c * t
    for warp0 in range(0, grid * block, WARP):  # global id of each warp's first lane
        first_group = warp0 // t
        bases = list(range(first_group, m, groups))  # warp-uniform: every lane runs these
        for base in bases:
            sums = np.zeros(WARP)
            for lane_id in range(WARP):
                lane, group_in_warp = lane_id % t, lane_id // t
                assert (warp0 + lane_id) // t - group_in_warp == first_group
                p = base + group_in_warp
                if p >= m:
                    continue
                s = p // c
                r = p - s * c
                end = ptr[s + 1]
                slot = ptr[s] + lane * c + r
                while slot < end:
                    assert ptr[s] <= slot < ptr[s + 1] and (slot - ptr[s]) % c == r
                    reads[slot] += 1
                    if col[slot] < 0:
                        break
                    sums[lane_id] += data[slot] * x[col[slot]]
                    slot += step
            for g0 in range(0, WARP, t):  # group_sum: lane 0 of each group holds the total
                p = base + g0 // t
                if p < m:
                    row = perm[p] if permuted else p
                    writes[row] += 1
                    total = sums[g0:g0 + t].sum()
                    y[row] = alpha * total if beta == 0 else alpha * total + beta * y[row]
    return y, reads, writes


CASES = [
    ({}, [1, 4]),
    ({"slice_height": 32, "sort_window": 128}, [1, 8]),
    ({"slice_height": 64}, [2]),
    ({"slice_height": 128, "width_multiple": 4}, [4]),
    ({"slice_height": 256}, [8]),
    ({"slice_height": 3, "sort_window": 12, "width_multiple": 2}, [1, 4, 8]),
    ({"slice_height": 1}, [2, 8]),
    ({"slice_height": 5, "sort_window": 5000}, [2]),  # one window: the whole matrix sorted
]


@pytest.mark.parametrize("params,threads", CASES)
@pytest.mark.parametrize("m", [1, 37, 300])
def test_simulation_matches_reference(params, threads, m):
    rng = np.random.default_rng(m)
    lengths = np.minimum(rng.zipf(1.6, size=m), 35)
    lengths[::7] = 0
    fmt = _sell(lengths, n=40, seed=m, **params)
    x = rng.standard_normal(40)
    y_old = rng.standard_normal(m)
    want = reference.spmv(fmt, x)
    for t in threads:
        for block, grid in ((64, 1), (256, 3)):
            for alpha, beta in ((1.0, 0.0), (-0.5, 2.0)):
                y, reads, writes = simulate(fmt, x, y_old, alpha, beta, t, block, grid)
                np.testing.assert_allclose(y, alpha * want + beta * y_old, rtol=1e-12, atol=1e-12)
                assert (writes == 1).all()
                assert (reads <= 1).all()  # no slot is read twice
                real = np.asarray(fmt.col) >= 0
                assert (reads[real] == 1).all()  # every stored entry is read once


def test_simulation_of_a_matrix_without_entries():
    fmt = _sell([0] * 40, slice_height=8)
    assert int(fmt.slice_ptr[-1]) == 0
    y, reads, writes = simulate(fmt, np.ones(40), np.full(40, 3.0), 2.0, 0.5, 4, 64, 1)
    assert np.array_equal(y, np.full(40, 1.5)) and (writes == 1).all() and reads.size == 0
