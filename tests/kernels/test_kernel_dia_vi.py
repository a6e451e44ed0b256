"""Host-side logic of the dia_vi kernel: registration, the rows-per-thread rule and its checks, and a NumPy
simulation of the kernel's indexing (no GPU needed).

The simulation mirrors the CUDA code (block-uniform row loop, offsets staged a chunk at a time,
the table staged once, ``rows_per_thread`` consecutive rows per thread, the skip test, the
per-row bounds) on codes whose slots outside the matrix point at a NaN appended to the table:
a read of anything the kernel must not read shows up in the product.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from kernel_configs import KERNEL_CONFIGS
from zoo import ZOO

from cocktail import SparseMatrix, reference
from cocktail.formats.csr import CSR
from cocktail.formats.dia_vi import DIAVI
from cocktail.kernels import dia_vi, get
from cocktail.kernels.device import grid_for
from cocktail.kernels.dia_vi import rules as dia_vi_rules
from cocktail.tuning import kernel_rules as rules
from cocktail.tuning import launch_rules
from oracle import few_values
from oracle import fake_props


def _dia_vi(S, **params) -> DIAVI:
    S = sp.csr_array(S)
    S.sum_duplicates()
    csr = CSR.from_arrays(S.data, S.indices, S.indptr, S.shape)
    return DIAVI.from_csr(csr, **{"max_fill": None, **params})


def _banded(m, n, offsets, seed=0):
    """An m x n matrix whose nonzeros are exactly the diagonals ``offsets``, values from five."""
    rng = np.random.default_rng(seed)
    rows, cols = [], []
    for o in offsets:
        r = np.arange(max(0, -o), min(m, n - o))
        rows.append(r)
        cols.append(r + o)
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    return sp.csr_array((rng.choice([-1.0, 0.5, 2.0, 3.0, 6.0], rows.size), (rows, cols)), shape=(m, n))


def _config(fmt, params=None, props=None):
    return launch_rules.configure(get("dia_vi"), fmt, params or {}, props or fake_props())


# --- registration and parameters -------------------------------------------------------------------
def test_registered_with_every_instantiation():
    spec = get("dia_vi")
    assert spec.formats == ("dia_vi",) and spec.source == "dia_vi" and spec.deterministic
    assert spec.all_expressions() == tuple(f"dia_vi<{v}, {i}, {r}>" for v in ("float", "double")
                                           for i in ("int", "long long") for r in (1, 4))
    assert spec.defaults == {"ldg": True, "block_threads": None, "rows_per_thread": None}
    assert dia_vi.ROWS_PER_THREAD == (1, 4)


def test_default_kernel():
    fmt = _dia_vi(_banded(40, 40, [-1, 0, 1]))
    assert rules.format_kernels()["dia_vi"] == "dia_vi" and rules.choose_kernel(fmt) == "dia_vi"
    assert rules.choose_kernel(_dia_vi(_banded(40, 40, [0]).astype(np.complex128))) is None


def test_rows_per_thread_rule():
    assert dia_vi_rules.rows_per_thread(lambda rows: True) == dia_vi_rules.DIA_VI_ROWS_PER_THREAD == 4
    assert dia_vi_rules.rows_per_thread(lambda rows: False) == 1
    assert _config(_dia_vi(_banded(50, 50, [-1, 0, 1]))) == {"ldg": True, "block_threads": rules.BLOCK_THREADS,
                                                             "rows_per_thread": 4}  # stride 64
    assert _config(_dia_vi(_banded(33, 33, [0]), align=1))["rows_per_thread"] == 1  # stride 33
    assert _config(_dia_vi(_banded(36, 36, [0]), align=1))["rows_per_thread"] == 4  # stride 36
    assert _config(_dia_vi(_banded(50, 50, [0])), {"rows_per_thread": 1, "ldg": False}) == {
        "ldg": False, "block_threads": rules.BLOCK_THREADS, "rows_per_thread": 1}


def test_rows_per_thread_checked():
    fmt = _dia_vi(_banded(33, 33, [-1, 0]), align=1)
    with pytest.raises(ValueError, match=r"dia_vi: rows_per_thread=4 loads 4 codes as one word and needs a row "
                                         r"stride and a codes address that are multiples of 4: got stride 33"):
        _config(fmt, {"rows_per_thread": 4})
    for bad in (2, 0, True, "4", 4.0):
        with pytest.raises(ValueError, match=r"dia_vi: rows_per_thread must be one of \(1, 4\) or None"):
            _config(fmt, {"rows_per_thread": bad})
    with pytest.raises(ValueError, match="dia_vi: block_threads must be"):
        _config(fmt, {"block_threads": 48})
    with pytest.raises(TypeError, match="its parameters are: block_threads, ldg, rows_per_thread"):
        get("dia_vi").resolve_params({"piece_width": 4})
    assert _config(fmt, {"rows_per_thread": np.int64(1)})["rows_per_thread"] == 1


def test_codes_aligned_and_shared_bytes():
    fmt = _dia_vi(_banded(36, 36, [0, 1]), align=1)
    assert dia_vi.codes_aligned(fmt, 4) and dia_vi.codes_aligned(fmt, 1)
    odd = _dia_vi(_banded(35, 35, [0, 1]), align=1)
    assert not dia_vi.codes_aligned(odd, 4) and dia_vi.codes_aligned(odd, 1)
    assert dia_vi.shared_bytes(fmt, 256) == 256 * 4 + int(fmt.table.shape[0]) * 8
    assert dia_vi.shared_bytes(fmt, 1024) + 256 * 8 <= 48 * 1024  # any block and the largest table fit


def test_kernel_configs_cover_both_row_counts():
    configs = [c for c in KERNEL_CONFIGS if c[0] == "dia_vi"]
    assert {c[3].get("rows_per_thread") for c in configs} >= {None, 1, 4}
    assert any(c[2].get("align") == 1 for c in configs)


# --- a simulation of the kernel ---------------------------------------------------------------------
def _poisoned(fmt):
    """``codes`` flattened, and the table with a NaN appended that every slot the kernel must not read
    points at (padding, columns outside the matrix)."""
    m, n = fmt.shape
    codes = np.array(fmt.codes, dtype=np.int64)
    rows = np.arange(codes.shape[1])
    cols = rows[None, :] + np.asarray(fmt.offsets, dtype=np.int64)[:, None]
    table = np.r_[np.asarray(fmt.table, dtype=np.float64), np.nan]
    codes[(rows[None, :] >= m) | (cols < 0) | (cols >= n)] = table.shape[0] - 1
    return codes.ravel(), table


def simulate(fmt, x, block, rows_per_thread, grid):
    """The kernel, block by block and thread by thread; returns A @ x."""
    m, n = fmt.shape
    R = rows_per_thread
    ndiag, stride = int(fmt.offsets.shape[0]), fmt.stride
    offsets = np.asarray(fmt.offsets, dtype=np.int64).tolist()
    codes, table = _poisoned(fmt)
    values = table[:int(fmt.table.shape[0])]  # the staged table: ntable values, not the poison
    y = np.full(m, np.nan)
    rows_per_block = block * R
    for block_id in range(grid):
        for base in range(block_id * rows_per_block, m, grid * rows_per_block):
            sums = np.zeros((block, R))
            for d0 in range(0, ndiag, block):
                staged = offsets[d0:d0 + block]
                for tid in range(block):
                    row0 = base + tid * R
                    if row0 >= m:
                        continue
                    for k, off in enumerate(staged):
                        col0 = row0 + off
                        if col0 + R <= 0 or col0 >= n:
                            continue
                        start = (d0 + k) * stride + row0
                        assert start % R == 0 and row0 + R <= stride  # one aligned word, inside the row
                        c = codes[start:start + R]
                        for r in range(R):
                            col = col0 + r
                            if row0 + r < m and 0 <= col < n:
                                assert c[r] < values.shape[0]
                                sums[tid, r] += values[c[r]] * x[col]
            for tid in range(block):
                for r in range(R):
                    if base + tid * R + r < m:
                        y[base + tid * R + r] = sums[tid, r]
    return y


SIM_CASES = [
    ("tridiagonal", _banded(70, 72, [-1, 0, 1]), {}),
    ("odd_stride", _banded(70, 72, [-1, 0, 1]), {"align": 1}),  # one row per thread only
    ("far_diagonals", _banded(90, 80, [-60, -5, -4, 0, 1, 6, 40, 79]), {"align": 4}),
    ("tall", _banded(130, 20, [-110, -100, -3, 0, 2, 19]), {}),
    ("wide", _banded(20, 130, [-19, -2, 0, 1, 60, 129]), {"align": 8}),
    ("offsets_past_the_edge", _banded(40, 40, [-39, 39]), {}),
    ("many_diagonals", _banded(64, 64, list(range(-40, 41, 2))), {}),  # more than a 32-thread chunk
    ("single_row", _banded(1, 9, [0, 1, 2, 7, 8]), {}),
    ("no_columns", sp.csr_array((5, 0)), {}),
    ("no_entries", sp.csr_array((6, 9)), {}),
]


@pytest.mark.parametrize("block,grid", [(32, 1), (64, 2), (32, 100)])
@pytest.mark.parametrize("rows_per_thread", [1, 4])
@pytest.mark.parametrize("case", SIM_CASES, ids=lambda c: c[0])
def test_simulation_matches_reference(case, rows_per_thread, block, grid):
    _, S, params = case
    fmt = _dia_vi(S, **params)
    if not dia_vi.codes_aligned(fmt, rows_per_thread):
        pytest.skip("the binder never asks for four rows on this stride")
    x = np.random.default_rng(1).standard_normal(fmt.shape[1])
    np.testing.assert_allclose(simulate(fmt, x, block, rows_per_thread, grid), reference.spmv(fmt, x),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("zm", [z for z in ZOO if z.shape[0]], ids=lambda z: z.name)
def test_simulation_on_the_zoo_with_the_bound_launch_sizes(zm):
    S = few_values(sp.csr_array(zm.arrays, shape=zm.shape))
    for align in (32, 1):
        fmt = SparseMatrix(S, format="dia_vi", device="cpu", max_fill=None, align=align).storage
        rows = _config(fmt, {"block_threads": 32})["rows_per_thread"]
        grid = grid_for(-(-fmt.shape[0] // rows), 32, fake_props(), None)  # bind sizes it so, or smaller (its occupancy)
        x = np.random.default_rng(3).standard_normal(fmt.shape[1])
        np.testing.assert_allclose(simulate(fmt, x, 32, rows, grid), reference.spmv(fmt, x), rtol=1e-12, atol=1e-12)
