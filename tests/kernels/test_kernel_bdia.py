"""Host-side logic of the bdia and bdia_direct kernels: registration, the piece-width rule, parameter
checks, and NumPy simulations of both kernels' indexing (no GPU needed).

The simulations mirror the CUDA code line by line (block-uniform row, band and piece loops, the
staged slice of x, the skip test, each thread's in-matrix diagonal range) on data whose slots
outside the matrix are poisoned with NaN, and on a staging buffer that starts as NaN: a read of
anything the kernel must not read shows up in the product.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from kernel_configs import KERNEL_CONFIGS
from zoo import ZOO

from cocktail import SparseMatrix, reference
from cocktail.formats.bdia import BDIA, band_diagonal_offsets
from cocktail.formats.csr import CSR
from cocktail.kernels import bdia, get
from cocktail.kernels.device import grid_for
from cocktail.kernels.bdia import rules as bdia_rules
from cocktail.tuning import kernel_rules as rules
from cocktail.tuning import launch_rules
from oracle import fake_props


def _bdia(S, **params) -> BDIA:
    S = sp.csr_array(S)
    S.sum_duplicates()
    csr = CSR.from_arrays(S.data, S.indices, S.indptr, S.shape)
    return BDIA.from_csr(csr, **{"max_fill": None, **params})


def _banded(m, n, offsets, seed=0):
    """An m x n matrix whose nonzeros are exactly the diagonals ``offsets`` (clipped to the matrix)."""
    rng = np.random.default_rng(seed)
    rows, cols = [], []
    for o in offsets:
        r = np.arange(max(0, -o), min(m, n - o))
        rows.append(r)
        cols.append(r + o)
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    return sp.csr_array((rng.uniform(1, 2, rows.size), (rows, cols)), shape=(m, n))


# --- registration and parameters -------------------------------------------------------------------

def test_registered_with_every_instantiation():
    for name in ("bdia", "bdia_direct"):
        spec = get(name)
        assert spec.formats == ("bdia",) and spec.source == name and spec.deterministic
        assert spec.all_expressions() == tuple(f"{name}<{v}, {i}>" for v in ("float", "double")
                                               for i in ("int", "long long"))
    assert get("bdia").defaults == {"ldg": True, "block_threads": None, "piece_width": None}
    assert get("bdia_direct").defaults == {"ldg": True, "block_threads": None}
    with pytest.raises(TypeError, match="its parameters are: block_threads, ldg"):
        get("bdia_direct").resolve_params({"piece_width": 4})


def test_default_kernel():
    fmt = _bdia(_banded(40, 40, [-1, 0, 1]))
    assert rules.format_kernels()["bdia"] == "bdia"
    assert rules.choose_kernel(fmt) == "bdia"
    complex_fmt = _bdia(_banded(40, 40, [0]).astype(np.complex128))
    assert rules.choose_kernel(complex_fmt) is None


def test_widest_band_and_shared_bytes():
    assert bdia.widest_band(np.array([0, 3, 4, 9])) == 5
    assert bdia.widest_band(np.array([0], dtype=np.int64)) == 0
    assert bdia.widest_band(_bdia(_banded(30, 30, [-7, -1, 0, 1, 2, 9])).band_ptr) == 4
    assert bdia.shared_bytes(256, 3, 8) == 258 * 8
    assert bdia.shared_bytes(32, 1, 4) == 128


def test_piece_width_rule():
    budget = bdia_rules.BDIA_SHARED_BUDGET
    assert bdia_rules.piece_width(3, 256, 8) == 3
    assert bdia_rules.piece_width(0, 256, 8) == 1  # no bands: any positive width
    assert bdia_rules.piece_width(10 ** 6, 256, 8) == budget // 8 - 255
    assert bdia_rules.piece_width(10 ** 6, 256, 4) == budget // 4 - 255
    assert bdia.shared_bytes(256, bdia_rules.piece_width(10 ** 6, 256, 8), 8) <= budget
    assert bdia_rules.piece_width(10 ** 6, 1024, 16) == 1  # the slice of x alone fills the budget


def _config(name, fmt, params=None, props=None):
    return launch_rules.configure(get(name), fmt, params or {}, props or fake_props())


def test_piece_width_default_is_the_widest_band():
    fmt = _bdia(_banded(50, 50, [-20, -2, -1, 0, 1, 2, 30]))  # bands of widths 1, 5, 1
    config = _config("bdia", fmt)
    assert config == {"ldg": True, "block_threads": rules.BLOCK_THREADS, "piece_width": 5}
    assert _config("bdia", _bdia(sp.csr_array((6, 9))))["piece_width"] == 1  # no bands at all
    wide = _bdia(_banded(3000, 3000, range(-1000, 1000)))  # one band wider than the budget allows
    assert _config("bdia", wide)["piece_width"] == bdia_rules.piece_width(2000, rules.BLOCK_THREADS, 8) < 2000


def test_piece_width_explicit_and_refused():
    fmt = _bdia(_banded(50, 50, [-1, 0, 1]))
    assert _config("bdia", fmt, {"piece_width": 7, "block_threads": 64})["piece_width"] == 7
    assert _config("bdia", fmt, {"piece_width": np.int64(2)})["piece_width"] == 2
    for bad in (0, -3, True, 2.5, "4"):
        with pytest.raises(ValueError, match="bdia: piece_width must be a positive integer"):
            _config("bdia", fmt, {"piece_width": bad})
    # 256 + 6000 - 1 doubles exceed 48 KiB
    with pytest.raises(ValueError, match="bdia: piece_width=6000 .* choose a smaller piece_width"):
        _config("bdia", fmt, {"piece_width": 6000})
    assert _config("bdia", fmt, {"piece_width": 6000}, fake_props(shared=64 * 1024))["piece_width"] == 6000


def test_row_parameters_checked():
    fmt = _bdia(_banded(50, 50, [-1, 0, 1]))
    for name in ("bdia", "bdia_direct"):
        for bad in (48, 2048, 0, True):
            with pytest.raises(ValueError, match=f"{name}: block_threads must be"):
                _config(name, fmt, {"block_threads": bad})
        with pytest.raises(ValueError, match=f"{name}: ldg must be True or False"):
            _config(name, fmt, {"ldg": 1})
        config = _config(name, fmt)
        assert None not in config.values() and set(get(name).defaults) <= set(config)
    assert _config("bdia_direct", fmt, {"ldg": False}) == {"ldg": False, "block_threads": rules.BLOCK_THREADS}
    with pytest.raises(ValueError, match="kernel 'bdia' multiplies bdia matrices, not 'dia'"):
        launch_rules.configure(get("bdia"), SparseMatrix(_banded(5, 5, [0]), format="dia", device="cpu").storage,
                               {}, fake_props())


def test_kernel_configs_cover_both_kernels_and_split_pieces():
    configs = [c for c in KERNEL_CONFIGS if c[1] == "bdia"]
    assert {c[0] for c in configs} == {"bdia", "bdia_direct"}
    assert any(c[2].get("align") == 1 for c in configs)
    assert any(c[3].get("piece_width", 99) < 4 for c in configs if c[0] == "bdia")


# --- simulations of the kernels ------------------------------------------------------------------

def _poisoned_data(fmt):
    """``data`` flattened, NaN in every slot the kernels must not read (padding, columns outside)."""
    m, n = fmt.shape
    data = np.array(fmt.data, dtype=np.float64)
    rows = np.arange(data.shape[1])
    cols = rows[None, :] + band_diagonal_offsets(fmt.offsets, fmt.band_ptr)[:, None]
    data[(rows[None, :] >= m) | (cols < 0) | (cols >= n)] = np.nan
    return data.ravel()


def _in_matrix(c, w, n):
    """``(lo, hi)``: the ``k`` in [0, w) with ``0 <= c + k < n``, written as the kernels do."""
    lo = 0 if c >= 0 else (-c if -c < w else w)
    hi = w if n - c >= w else (n - c if n - c > lo else lo)
    return lo, hi


def simulate_bdia(fmt, x, block, piece, grid):
    """The staged kernel, block by block; returns A @ x and the number of pieces the blocks staged."""
    m, n = fmt.shape
    nbands, stride = int(fmt.offsets.shape[0]), fmt.stride
    offsets, band_ptr = np.asarray(fmt.offsets).tolist(), np.asarray(fmt.band_ptr, dtype=np.int64).tolist()
    data, y = _poisoned_data(fmt), np.full(m, np.nan)
    staged_pieces = 0
    grid_stride = grid * block
    for block_id in range(grid):
        for base in range(block_id * block, m, grid_stride):
            left = m - base
            rows = left if left < block else block
            sums = np.zeros(block)
            for b in range(nbands):
                first, width, offset = band_ptr[b], band_ptr[b + 1] - band_ptr[b], offsets[b]
                for k0 in range(0, width, piece):
                    w = width - k0 if width - k0 < piece else piece
                    c0 = base + offset + k0
                    count = rows + w - 1
                    if c0 + count <= 0 or c0 >= n:
                        continue
                    staged_pieces += 1
                    xs = np.full(block + piece - 1, np.nan)  # the dynamic shared memory requested
                    for s in range(count):
                        c = c0 + s
                        xs[s] = x[c] if 0 <= c < n else 0.0
                    for tid in range(block):
                        row = base + tid
                        if row >= m:
                            continue
                        c = c0 + tid
                        lo, hi = _in_matrix(c, w, n)
                        for k in range(lo, hi):
                            assert 0 <= tid + k < count
                            sums[tid] += data[(first + k0 + k) * stride + row] * xs[tid + k]
            for tid in range(rows):
                y[base + tid] = sums[tid]
    return y, staged_pieces


def simulate_bdia_direct(fmt, x, block, grid):
    """The direct kernel, thread by thread."""
    m, n = fmt.shape
    stride = fmt.stride
    offsets, band_ptr = np.asarray(fmt.offsets).tolist(), np.asarray(fmt.band_ptr, dtype=np.int64).tolist()
    data, y = _poisoned_data(fmt), np.full(m, np.nan)
    for start in range(grid * block):
        for row in range(start, m, grid * block):
            total = 0.0
            for b in range(len(offsets)):
                first, width = band_ptr[b], band_ptr[b + 1] - band_ptr[b]
                c = row + offsets[b]
                lo, hi = _in_matrix(c, width, n)
                for k in range(lo, hi):
                    total += data[(first + k) * stride + row] * x[c + k]
            y[row] = total
    return y


SIM_CASES = [
    ("tridiagonal", _banded(70, 70, [-1, 0, 1]), {}),
    ("bands_and_far_diagonals", _banded(90, 80, [-60, -5, -4, -3, 0, 1, 2, 3, 4, 5, 6, 40, 79]), {"align": 1}),
    ("tall", _banded(130, 20, [-110, -100, -3, -2, -1, 0, 1, 2, 3, 19]), {}),
    ("wide", _banded(20, 130, [-19, -2, -1, 0, 1, 2, 60, 61, 62, 63, 64, 129]), {"align": 8}),
    ("offsets_past_the_edge", _banded(40, 40, [-39, 39]), {}),
    ("random", sp.random_array((75, 64), density=0.15, random_state=4, format="csr"), {}),
    ("single_row", _banded(1, 9, [0, 1, 2, 7, 8]), {}),
    ("no_columns", sp.csr_array((5, 0)), {}),
    ("no_entries", sp.csr_array((6, 9)), {}),
]


@pytest.mark.parametrize("block,piece,grid", [(32, 1, 1), (32, 3, 2), (64, 5, 1), (32, 64, 3), (96, 2, 100)])
@pytest.mark.parametrize("case", SIM_CASES, ids=lambda c: c[0])
def test_bdia_simulation_matches_reference(case, block, piece, grid):
    _, S, params = case
    fmt = _bdia(S, **params)
    x = np.random.default_rng(1).standard_normal(fmt.shape[1])
    want = reference.spmv(fmt, x)
    got, staged = simulate_bdia(fmt, x, block, piece, grid)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    upper = sum(-(-w // piece) for w in np.diff(np.asarray(fmt.band_ptr))) * -(-fmt.shape[0] // block)
    assert staged <= upper  # skipped pieces are never staged


def test_bdia_skips_pieces_outside_the_matrix():
    fmt = _bdia(_banded(64, 64, [-40, 0, 40]))
    x = np.ones(64)
    _, staged = simulate_bdia(fmt, x, 32, 1, 2)
    # block 0 (rows 0-31) never reaches column -40 + 31 < 0; block 1 (rows 32-63) never reaches 32 + 40 >= 64
    assert staged == 2 * 3 - 2


@pytest.mark.parametrize("block,grid", [(32, 1), (64, 2), (32, 100)])
@pytest.mark.parametrize("case", SIM_CASES, ids=lambda c: c[0])
def test_bdia_direct_simulation_matches_reference(case, block, grid):
    _, S, params = case
    fmt = _bdia(S, **params)
    x = np.random.default_rng(2).standard_normal(fmt.shape[1])
    np.testing.assert_allclose(simulate_bdia_direct(fmt, x, block, grid), reference.spmv(fmt, x),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("zm", [z for z in ZOO if z.shape[0]], ids=lambda z: z.name)
def test_simulations_on_the_zoo_with_the_bound_launch_sizes(zm):
    fmt = SparseMatrix(sp.csr_array(zm.arrays, shape=zm.shape), format="bdia", device="cpu", max_fill=None).storage
    config = _config("bdia", fmt, {"block_threads": 32})
    grid = grid_for(fmt.shape[0], 32, fake_props(), None)
    x = np.random.default_rng(3).standard_normal(fmt.shape[1])
    want = reference.spmv(fmt, x)
    np.testing.assert_allclose(simulate_bdia(fmt, x, 32, config["piece_width"], grid)[0], want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(simulate_bdia(fmt, x, 32, 2, grid)[0], want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(simulate_bdia_direct(fmt, x, 32, grid), want, rtol=1e-12, atol=1e-12)
