"""Host-side logic of coo_segmented, coo_atomic and hyb: partition rules, parameter checks, the
HYB composition, and NumPy simulations of the two COO kernels.

The simulations mirror the CUDA code step by step (32-lane steps, ballots, the bit arithmetic
that finds segment heads and ends, shuffle scans, carries and their fix-up) so that the
partition and carry logic is exercised without a GPU.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from kernel_configs import KERNEL_CONFIGS

from cocktail.formats.coo import COO
from cocktail.formats.csr import CSR
from cocktail.formats.hyb import HYB
from cocktail.kernels import get
from cocktail.tuning import coo as coo_rules
from cocktail.tuning import kernel_rules as rules
from cocktail.tuning import launch_rules
from oracle import fake_props

WARP = 32
LANES = np.arange(WARP)
FULL = 0xFFFFFFFF


def _entries(lengths, n=64, seed=0):
    rng = np.random.default_rng(seed)
    lengths = np.minimum(np.asarray(lengths, dtype=np.int64), n)
    rows = np.repeat(np.arange(lengths.size), lengths)
    cols = (np.concatenate([np.sort(rng.choice(n, size=k, replace=False)) for k in lengths])
            if rows.size else np.zeros(0, np.int64))
    return rows, cols, rng.integers(-4, 5, size=rows.size).astype(np.float64), n


# --- partition rules ---------------------------------------------------------------------------

def test_resident_warps():
    assert coo_rules.resident_warps(132, 6, 256) == 132 * 48
    assert coo_rules.resident_warps(132, 1, 1024) == 132 * 32
    assert coo_rules.resident_warps(0, 0, 256) == 1


@pytest.mark.parametrize("nnz", [1, 31, 32, 33, 1000, 4095, 4096, 123457])
@pytest.mark.parametrize("resident", [1, 3, 64, 6336, 10 ** 7])
def test_segmented_partition(nnz, resident):
    interval, warps = coo_rules.segmented_partition(nnz, resident)
    assert interval % WARP == 0 and interval > 0
    assert (warps - 1) * interval < nnz <= warps * interval  # every warp has entries
    assert warps <= resident
    # as few entries per warp as a single wave allows
    assert interval == WARP * -(-coo_rules.units(nnz) // resident)


def test_segmented_partition_empty():
    assert coo_rules.segmented_partition(0, 100) == (0, 0)


def test_atomic_warps_formula_and_cap():
    # omega threads per core on 132 SMs of 128 cores: ceil(omega * 132 * 128 / 32)
    assert coo_rules.atomic_warps(10 ** 9, 1, 132, 128) == 528
    assert coo_rules.atomic_warps(10 ** 9, 128, 132, 128) == 528 * 128
    assert coo_rules.atomic_warps(10 ** 9, 0.01, 132, 128) == 6
    assert coo_rules.atomic_warps(100, 128, 132, 128) == 4  # capped by ceil(100 / 32) chunks
    assert coo_rules.atomic_warps(0, 8, 132, 128) == 0


@pytest.mark.parametrize("nnz,warps", [(1, 1), (32, 1), (33, 2), (1000, 7), (1000, 32), (123457, 528), (64, 2)])
def test_atomic_chunks(nnz, warps):
    chunks = coo_rules.atomic_chunks(nnz, warps)
    assert len(chunks) == warps
    assert chunks[0][0] == 0 and chunks[-1][1] == nnz
    assert all(a[1] == b[0] for a, b in itertools.pairwise(chunks))  # contiguous
    sizes = [e - b for b, e in chunks]
    assert all(s > 0 for s in sizes)
    assert all(s % WARP == 0 for s in sizes[:-1])
    full = [e - b for b, e in coo_rules.atomic_chunks(coo_rules.units(nnz) * WARP, warps)]
    assert max(full) - min(full) <= WARP


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "8", None, True])
def test_omega_is_checked(bad):
    with pytest.raises(ValueError, match="omega must be a positive number"):
        coo_rules.check_omega(bad)


def test_omega_accepts_numbers():
    assert coo_rules.check_omega(2) == 2.0
    assert coo_rules.check_omega(np.float32(0.5)) == 0.5


def test_atomic_warps_use_flegar_anzt_rule():
    props = fake_props()
    cores = rules.cores_per_sm(props.compute_capability)
    for nnz in (5 * 10 ** 4, 5 * 10 ** 5, 5 * 10 ** 6):
        omega = rules.coo_omega(nnz)
        config = launch_rules.configure(get("coo_atomic"), _coo_of_size(nnz), {}, props)
        assert config["warps"] == min(coo_rules.units(nnz), -(-omega * props.sm_count * cores // WARP))
        assert config["omega"] == omega
    assert launch_rules.configure(get("coo_atomic"), _coo_of_size(10 ** 7), {"omega": 1}, props)["warps"] == 528
    with pytest.raises(ValueError, match="omega must be a positive number"):
        launch_rules.configure(get("coo_atomic"), _coo_of_size(100), {"omega": -1}, props)


def _coo_of_size(nnz):
    """A COO whose entry count is ``nnz`` (only sizes are read by the rules): one entry per row."""
    rows = np.arange(nnz, dtype=np.int32)
    return COO((nnz, 1), np.float64, np.int32, nnz, COO.resolve_params({}), row=rows,
               col=np.zeros(nnz, np.int32), data=np.ones(nnz))


@pytest.mark.parametrize("block", [32, 256, 1024, np.int64(64)])
def test_block_threads_accepted(block):
    assert launch_rules.block_threads("k", block, fake_props()) == int(block)


@pytest.mark.parametrize("block", [0, 48, 2048, -32, 64.0, True])
def test_block_threads_refused(block):
    with pytest.raises(ValueError, match="k: block_threads must be"):
        launch_rules.block_threads("k", block, fake_props())


def test_block_threads_default():
    assert launch_rules.block_threads("k", None, fake_props()) == rules.BLOCK_THREADS


# --- specs and beta scaling ------------------------------------------------------------------

def test_specs():
    seg, atom, h = get("coo_segmented"), get("coo_atomic"), get("hyb")
    assert seg.deterministic and not atom.deterministic and h.deterministic
    assert seg.defaults == {"ldg": True, "block_threads": None}
    assert atom.defaults == {"omega": None, "ldg": True, "block_threads": None}
    assert h.defaults == {"coo_kernel": "coo_segmented", "ldg": True}
    assert h.source is None and h.all_expressions() == () and h.formats == ("hyb",)
    assert "coo_segmented_fixup<double, long long>" in seg.all_expressions()
    assert len(seg.all_expressions()) == 4 * len(seg.precisions) and len(atom.all_expressions()) == 2 * len(atom.precisions)


def test_gpu_suite_parameters_exist():
    for kernel, _, _, kparams in KERNEL_CONFIGS:
        if kernel in ("coo_segmented", "coo_atomic", "hyb"):
            get(kernel).resolve_params(kparams)


# --- HYB composition -------------------------------------------------------------------------

def _hyb(lengths, **params):
    _, cols, vals, n = _entries(lengths)
    indptr = np.r_[0, np.cumsum(np.minimum(lengths, n))]
    return HYB.from_csr(CSR.from_arrays(vals, cols, indptr, (len(lengths), n)), **params)


def test_hyb_parts_configured():
    # coo_atomic: its configuration needs no compiled kernel (coo_segmented's reads the occupancy).
    storage = _hyb([1, 5, 2, 9], ell_width=2)
    config = launch_rules.configure(get("hyb"), storage, {"ldg": False, "coo_kernel": "coo_atomic"}, fake_props())
    (ell, ell_config), (coo, coo_config) = config["parts"]["ell"], config["parts"]["coo"]
    assert ell.name == "ell" and ell_config["ldg"] is False and ell_config["block_threads"] == rules.BLOCK_THREADS
    assert coo.name == "coo_atomic" and coo_config["ldg"] is False
    assert coo_config["omega"] == rules.coo_omega(storage.coo.nnz)
    with pytest.raises(ValueError, match="hyb: coo_kernel must be a kernel for coo matrices"):
        launch_rules.configure(get("hyb"), storage, {"coo_kernel": "ell"}, fake_props())
    assert launch_rules.user_view(config) == {"ldg": False, "coo_kernel": "coo_atomic"}


class _Part:
    """A stand-in kernel spec that records how the HYB binder asks for its launches."""

    def __init__(self, calls, name):
        self.calls, self.name = calls, name

    def bind(self, fmt, config, props, accumulate=False):
        self.calls.append((self.name, accumulate))
        return [self.name]


@pytest.mark.parametrize("lengths,expect_coo", [([1, 5, 2, 9], True), ([2, 2, 1, 0], False)])
def test_hyb_launch_order_and_beta(lengths, expect_coo):
    storage = _hyb(lengths, ell_width=2)
    calls = []
    config = {"parts": {"ell": (_Part(calls, "ell"), {}), "coo": (_Part(calls, "coo"), {})}}
    launches = get("hyb").bind(storage, config, fake_props())
    assert calls[0] == ("ell", False)  # the ELL part applies beta
    if expect_coo:
        assert calls[1:] == [("coo", True)] and launches == ["ell", "coo"]  # accumulate: beta fixed at 1
    else:
        assert calls[1:] == [] and launches == ["ell"]


# --- NumPy simulations of the kernels ---------------------------------------------------------

def _clz(v):
    return 32 - int(v).bit_length()


def _ffs(v):
    v = int(v)
    return (v & -v).bit_length()


def _ballot(pred):
    return int(sum(1 << int(lane) for lane in LANES[pred]))


def _shfl_up(a, d):
    return np.where(LANES >= d, a[np.maximum(LANES - d, 0)], a)


def _shfl_down(a, d):
    return np.where(LANES + d < WARP, a[np.minimum(LANES + d, WARP - 1)], a)


def _step(row, col, data, x, base, end):
    j = base + LANES
    valid = j < end
    jj = np.where(valid, j, end - 1)
    return row[jj], np.where(valid, data[jj] * x[col[jj]], 0.0)


def _simulate_segmented(row, col, data, x, y, alpha, resident):
    nnz = row.shape[0]
    interval, warps = coo_rules.segmented_partition(nnz, resident)
    carry_row = np.full(warps, -7)
    carry_val = np.full(warps, np.nan)
    writers = np.zeros(y.shape[0], int)
    for w in range(warps):
        begin = w * interval
        end = min(begin + interval, nnz)
        cr, cv = row[begin], 0.0
        for base in range(begin, end, WARP):
            r, v = _step(row, col, data, x, base, end)
            heads = _ballot((LANES == 0) | (r != _shfl_up(r, 1)))
            start = np.array([31 - _clz(heads & (FULL >> (31 - lane))) for lane in LANES])
            if r[0] == cr:
                v[0] += cv
            else:
                y[cr] += alpha * cv
                writers[cr] += 1
            for d in (1, 2, 4, 8, 16):
                v = np.where(LANES - d >= start, v + _shfl_up(v, d), v)
            for lane in range(31):
                if (heads >> (lane + 1)) & 1:
                    y[r[lane]] += alpha * v[lane]
                    writers[r[lane]] += 1
            cr, cv = r[31], v[31]
        if end < nnz and row[end] == cr:
            carry_row[w], carry_val[w] = cr, cv
        else:
            y[cr] += alpha * cv
            writers[cr] += 1
            carry_row[w] = -1
    assert writers.max(initial=0) <= 1  # one writer per row in the main kernel
    for first in range(warps if warps > 1 else 0):
        r = carry_row[first]
        if r < 0 or (first > 0 and carry_row[first - 1] == r):
            continue
        acc, base = np.zeros(WARP), first
        while True:
            k = np.minimum(base + LANES, warps - 1)
            same = (base + LANES < warps) & (carry_row[k] == r)
            acc = np.where(same, acc + carry_val[k], acc)
            if _ballot(same) != FULL:
                break
            base += WARP
        y[r] += alpha * acc.sum()


def _simulate_atomic(row, col, data, x, y, alpha, warps):
    for begin, end in coo_rules.atomic_chunks(row.shape[0], warps):
        cur, part = row[begin], np.zeros(WARP)
        for base in range(begin, end, WARP):
            r, v = _step(row, col, data, x, base, end)
            if not (r != cur).any():
                part = part + v
                continue
            running = part.sum()
            tails = _ballot((LANES == 31) | (r != _shfl_down(r, 1)))
            heads = ((tails << 1) & FULL) | 1
            seg_end = np.array([lane + _ffs(tails >> lane) - 1 for lane in LANES])
            last_head = 31 - _clz(heads)
            if r[0] == cur:
                v[0] += running
            else:
                y[cur] += alpha * running
            for d in (1, 2, 4, 8, 16):
                v = np.where(LANES + d <= seg_end, v + _shfl_down(v, d), v)
            for lane in LANES:
                if (heads >> lane) & 1 and lane != last_head:
                    y[r[lane]] += alpha * v[lane]
            cur, part = r[31], np.where(LANES == last_head, v, 0.0)
        y[cur] += alpha * part.sum()


def _cases():
    rng = np.random.default_rng(11)
    yield [3] * 40                       # short regular rows
    yield [0, 0, 64, 0, 1, 0, 0, 33, 0]   # empty rows, rows of a warp and more
    yield [0] * 20 + [64] + [0] * 20      # one long row across many intervals
    yield list(np.minimum(rng.zipf(1.5, 120), 64))
    yield list(rng.integers(0, 20, 80))
    yield [1]


@pytest.mark.parametrize("lengths", list(_cases()))
def test_simulated_kernels_match_product(lengths):
    rows, cols, vals, n = _entries(lengths)
    m = len(lengths)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n)
    y0 = rng.standard_normal(m)
    want = 0.5 * y0 + 1.5 * np.bincount(rows, weights=vals * x[cols], minlength=m)
    nnz = rows.size
    for resident in (1, 2, 3, 7, 10 ** 6):
        y = 0.5 * y0
        _simulate_segmented(rows, cols, vals, x, y, 1.5, resident)
        np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)
    for warps in sorted({1, 2, 3, coo_rules.units(nnz)}):
        y = 0.5 * y0
        _simulate_atomic(rows, cols, vals, x, y, 1.5, min(warps, coo_rules.units(nnz)))
        np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)


def test_coo_part_fields_only():
    # The binders read row/col/data/shape: a HYB remainder is a plain COO.
    storage = _hyb([1, 5, 2, 9], ell_width=2)
    assert isinstance(storage.coo, COO) and storage.coo.row.shape[0] == 3 + 7
    assert launch_rules.configure(get("coo_atomic"), storage.coo, {"omega": 4}, fake_props())["warps"] == 1
