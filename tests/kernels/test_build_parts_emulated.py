"""The device builds of SELL and ELL (sell_build.cu) and a Cocktail's split among its parts (part_split.cu) run on
the CPU, against the NumPy path of the same builders, to the bit.

The emulation is test_build_kernels_emulated.py's (every thread of a grid of at most two blocks of 32 run one
after another, g++ with AddressSanitizer and UBSan, the arrays the kernels write whole starting as garbage), its
launcher standing in for CuPy's under :func:`cocktail.kernels.helper_launch.launching`, so the formats' device paths
run whole on NumPy arrays.  Skipped without g++.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import scipy.sparse as sp
from test_build_kernels_emulated import _build, _check, _csr, _same, binary, launcher  # noqa: F401 (fixtures)

from cocktail.formats.csr import CSR
from cocktail.kernels import block_build, part_split, sell_build, source

# the exhaustive tier (pytest --exhaustive): every host emulation compiles its kernels with g++
pytestmark = [pytest.mark.skipif(shutil.which("g++") is None, reason="no g++"), pytest.mark.exhaustive]

CASES = [(np.float64, np.int32), (np.float32, np.int64), (np.complex128, np.int32), (np.float16, np.int64)]


def _rows_matrix(m=203, n=403, seed=5):
    """More rows than the emulated grid's threads, empty rows (a run of them too), a row longer than a warp, a full
    row, entries in the last columns."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 9, size=m)
    lengths[::6] = 0
    lengths[40:75] = 0
    lengths[7], lengths[m // 2] = 70, n
    cols = np.concatenate([np.sort(rng.choice(n, size=k, replace=False)) for k in lengths])
    rows = np.repeat(np.arange(m), lengths)
    rows, cols = np.r_[rows, 0, m - 1], np.r_[cols, n - 1, n - 2]
    return sp.coo_array((rng.standard_normal(rows.size), (rows, cols)), shape=(m, n)).tocsr()


def _matrices():
    """The rows matrix, a banded one (for the diagonals selectors), one row, wide columns (slices spanning more and
    less than short columns hold), and the degenerate shapes."""
    band = sp.diags([np.arange(1.0, 151 - abs(k)) for k in (-2, 0, 1, 9)], [-2, 0, 1, 9], shape=(150, 150))
    banded = sp.csr_array(band + sp.random_array((150, 150), density=0.04, random_state=3))
    spread = sp.csr_array(([1.0, 2.0, 3.0, 4.0, 5.0], ([0, 0, 3, 40, 41], [0, 150000, 7, 65534, 70000])),
                          shape=(45, 200000))
    return [("rows", _rows_matrix()), ("banded", banded), ("one row", sp.csr_array(np.arange(1.0, 81)[None, :])),
            ("spread", spread), ("1x1", sp.csr_array(np.array([[2.0]]))), ("empty", sp.csr_array((70, 9))),
            ("no rows", sp.csr_array((0, 5)))]


SELL_PARAMS = [{"slice_height": 32}, {"slice_height": 3, "width_multiple": 4}, {"slice_height": 1},
               {"slice_height": 100, "short_columns": None}, {"slice_height": 3, "sort_window": 6},
               {"slice_height": 32, "sort_window": 64, "short_columns": None},
               {"slice_height": 8, "short_columns": True}, {"slice_height": 4, "max_fill": 1.2}]


@pytest.mark.parametrize("dtype,index_dtype", CASES, ids=lambda v: np.dtype(v).name)
def test_sell_built_by_the_kernels_equals_the_host_build(launcher, dtype, index_dtype):
    params_list = SELL_PARAMS if dtype == np.float64 else SELL_PARAMS[::2] + SELL_PARAMS[-3:-2]
    for label, S in _matrices():
        csr = _csr(S, dtype, index_dtype, zeros=4, seed=len(label))
        for params in params_list:
            params = {"max_fill": None, **params}
            launches, fetches = len(launcher.launches), launcher.fetches
            got = _check("sell", csr, params, launcher, (label, params))
            if csr.shape[0] and not isinstance(got, Exception):
                # the slices' pass, one transfer, the write (none without slots)
                assert launcher.launches[launches].startswith("sell_build_slices"), (label, params)
                assert len(launcher.launches) - launches == 1 + bool(got.data.size), (label, params)
                assert launcher.fetches - fetches == 1, (label, params)


ELL_PARAMS = [{}, {"align": 1}, {"align": 7, "width": 90}, {"width": 3}, {"max_fill": 1.0}, {"align": 64}]


@pytest.mark.parametrize("dtype,index_dtype", CASES, ids=lambda v: np.dtype(v).name)
def test_ell_built_by_the_kernels_equals_the_host_build(launcher, dtype, index_dtype):
    for label, S in _matrices():
        if S.shape[1] > 1000:
            continue  # ELL of a row of all 80 entries is the one-row case already
        csr = _csr(S, dtype, index_dtype, zeros=4, seed=len(label))
        for params in ELL_PARAMS:
            params = {"max_fill": None, **params}
            launches = len(launcher.launches)
            got = _check("ell", csr, params, launcher, (label, params))
            if not isinstance(got, Exception):
                assert len(launcher.launches) - launches == bool(got.data.size), (label, params)
                assert all(e.startswith("sell_build_write") for e in launcher.launches[launches:])


def _plans():
    """Every selector mix: diagonals parts (overlapping, empty, out of the matrix, as NumPy unsigned offsets), row
    prefixes before and after them (none, one, more than a row holds), rest or no rest, and parts in the device
    builds' formats and others."""
    nomax = {"max_fill": None}
    return [
        [("dia", nomax, ("diagonals", [-2, 0, 1])), ("sell", {"short_columns": None}, ("row_prefix", 2)),
         ("csr", {}, ("rest",))],
        [("ell", nomax, ("row_prefix", 1)), ("bdia", nomax, ("diagonals", np.array([0, 9], np.uint8))),
         ("sell", {"slice_height": 3, "max_fill": None}, ("row_prefix", 3)), ("coo", {}, ("rest",))],
        [("coo", {}, ("diagonals", [0])), ("csr", {}, ("diagonals", [1, 0, -2000, 10 ** 7])),
         ("ell", nomax, ("rest",))],
        [("csr", {}, ("rest",))],
        [("csr", {}, ("row_prefix", 0)), ("coo", {}, ("diagonals", [])), ("sell", nomax, ("row_prefix", 10 ** 12)),
         ("csr", {}, ("rest",))],
        [("csr", {}, ("diagonals", [0]))],  # entries left in no part
        [("csr", {}, ("row_prefix", 2)), ("csr", {}, ("everything",)), ("coo", {}, ("rest",))],  # a bad selector
        [("ell", {"max_fill": 1.0}, ("row_prefix", 60)), ("csr", {}, ("bogus",))],  # part 0 refuses first
        [("coo", {}, ("row_prefix", 1)), ("csr", {})],  # a malformed part
    ]


@pytest.mark.parametrize("dtype,index_dtype", CASES, ids=lambda v: np.dtype(v).name)
def test_a_cocktail_split_by_the_kernels_equals_the_host_split(launcher, dtype, index_dtype):
    plans = _plans() if dtype == np.float64 else _plans()[:3]
    for label, S in _matrices():
        if S.shape[1] > 1000 and dtype != np.float64:
            continue
        csr = _csr(S, dtype, index_dtype, zeros=4, seed=len(label))
        for k, parts in enumerate(plans):
            launches, fetches = len(launcher.launches), launcher.fetches
            got = _check("cocktail", csr, {"parts": parts}, launcher, (label, k))
            if isinstance(got, Exception):
                continue
            want = _build("cocktail", csr, {"parts": parts})
            assert got.kept == want.kept and [p.nnz for p in got.parts] == [p.nnz for p in want.parts], (label, k)
            if csr.nnz:  # the split: one count, one transfer (then the parts' own builds)
                assert launcher.launches[launches].startswith("part_split_count"), (label, k)
                assert launcher.fetches > fetches
            fills = [e for e in launcher.launches[launches:] if e.startswith("part_split_fill")]
            assert len(fills) == sum(1 for p in want.parts if p.nnz), (label, k)  # a pass per part holding entries


def test_a_row_longer_than_the_split_walks_goes_to_the_masks(launcher, monkeypatch):
    """A thread walks each row: a matrix with a row past part_split.LONG_ROW is split by the masks' passes instead
    (no split kernel launched), into the same parts."""
    S = _rows_matrix(90, 120, seed=9)
    csr = _csr(S, np.float64, np.int32)
    parts = [("coo", {}, ("diagonals", [0, 1])), ("ell", {"max_fill": None}, ("row_prefix", 2)), ("csr", {}, ("rest",))]
    longest = int(np.diff(csr.indptr).max())
    for limit, walked in ((longest, True), (longest - 1, False)):
        monkeypatch.setattr(part_split, "LONG_ROW", limit)
        launches = len(launcher.launches)
        got = _check("cocktail", csr, {"parts": parts}, launcher, limit)
        want = _build("cocktail", csr, {"parts": parts})
        assert [p.nnz for p in got.parts] == [p.nnz for p in want.parts]
        assert any(e.startswith("part_split_count") for e in launcher.launches[launches:]) == walked


def test_a_split_numbers_each_entry_as_a_host_walk_does(launcher):
    """The kernels' parts, directly: the entries each part holds, against a walk of every row in Python."""
    S = _rows_matrix(90, 120, seed=8)
    csr = _csr(S, np.float64, np.int64)
    selectors = [("row_prefix", 1), ("diagonals", np.array([0, 1, 5, -3], np.int64)), ("row_prefix", 2),
                 ("diagonals", np.array([5, 7], np.int64)), ("rest",)]
    split = part_split.split(csr, selectors, launcher)
    want = [[] for _ in selectors]
    for r in range(csr.shape[0]):
        taken = [0] * len(selectors)
        for j in range(csr.indptr[r], csr.indptr[r + 1]):
            d = int(csr.indices[j]) - r
            for p, s in enumerate(selectors):
                if (s[0] == "diagonals" and d in s[1]) or (s[0] == "row_prefix" and taken[p] < s[1]) or s[0] == "rest":
                    taken[p] += 1
                    want[p].append(j)
                    break
    assert split.sizes == [len(w) for w in want]
    for p, w in enumerate(want):
        data, indices, indptr = split.part(p)
        np.testing.assert_array_equal(indices, csr.indices[w])
        np.testing.assert_array_equal(data, csr.data[w])
        assert indptr.dtype == csr.indptr.dtype and int(indptr[-1]) == len(w)


def test_the_instantiations_cover_every_value_and_index_type():
    """Every value word with both index types (and both column types for SELL's write)."""
    words = {block_build.word(np.dtype(d)) for d in (np.float16, np.float32, np.float64, np.complex64, np.complex128)}
    sell, split = set(), set()
    for i in ("int", "long long"):
        sell.add(f"sell_build_slices<{i}>")
        split.add(f"part_split_count<{i}>")
        for w in words:
            sell.update(f"sell_build_write<{w}, {i}, {c}>" for c in (i, "unsigned short"))
            split.add(f"part_split_fill<{w}, {i}>")
    # exactly these: every one compiled (CI's compile check reads HELPERS), none the kernels lack
    assert set(source.HELPERS["sell_build"]) == sell and set(source.HELPERS["part_split"]) == split


def test_a_slice_wider_than_the_write_walks_goes_to_the_scatter(launcher, monkeypatch):
    """A thread writes each row's slots: SELL with a slice (ELL with a width) past sell_build.LONG_ROW is written by
    CuPy's scatter instead (no write kernel launched), into the same arrays."""
    S = _rows_matrix(90, 120, seed=10)
    csr = _csr(S, np.float64, np.int32)
    longest = int(np.diff(csr.indptr).max())
    for name, params in (("sell", {"slice_height": 4, "max_fill": None}), ("ell", {"max_fill": None})):
        for limit, written in ((longest, True), (longest - 1, False)):
            monkeypatch.setattr(sell_build, "LONG_ROW", limit)
            launches = len(launcher.launches)
            _check(name, csr, params, launcher, (name, limit))
            assert any(e.startswith("sell_build_write") for e in launcher.launches[launches:]) == written, name


@pytest.mark.gpu
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_the_device_builds_equal_the_host_builds(index_dtype):
    import cupy

    cases = [("sell", {"max_fill": None, **p}) for p in SELL_PARAMS] + [("ell", {"max_fill": None, **p})
                                                                          for p in ELL_PARAMS]
    cases += [("cocktail", {"parts": parts}) for parts in _plans()]
    for label, S in _matrices():
        for dtype in (np.float64, np.float32, np.complex128, np.float16):
            host = _csr(S, dtype, index_dtype, zeros=5)
            dev = CSR.from_arrays(*(cupy.asarray(a) for a in (host.data, host.indices, host.indptr)), host.shape,
                                  index_dtype=index_dtype)
            for name, params in cases:
                want, got = _build(name, host, params), _build(name, dev, params)
                if isinstance(want, Exception):
                    assert type(got) is type(want) and str(got) == str(want), (label, name, params)
                    continue
                assert got.params == want.params and list(got.arrays()) == list(want.arrays())
                for key, arr in want.arrays().items():
                    g = got.arrays()[key]
                    assert g.dtype == arr.dtype and g.shape == arr.shape, (label, name, key)
                    assert cupy.asnumpy(g).tobytes() == np.ascontiguousarray(arr).tobytes(), (label, name, key, params)
