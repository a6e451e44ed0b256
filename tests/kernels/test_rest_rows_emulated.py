"""The planner's rest_rows kernel (kernels/rest_rows.cu) run on the CPU, against the NumPy path of ``_rest_groups``.

The emulation is test_kernel_features_emulated.py's (g++ with a shim that runs a block's threads as host
threads; grids of at most two blocks force the grid-stride loop), its launcher standing in for CuPy's under
``planner._rest_groups``, so the launch arguments, the one transfer and the host arithmetic after it are checked
with the kernel.  Skipped without g++.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp
import test_kernel_features_emulated as emulated
from test_kernel_blocks_emulated import compiled

from cocktail.auto import features as F, planner
from cocktail.kernels import source

pytestmark = emulated.pytestmark  # skipped without g++; the exhaustive tier

EXPRESSIONS = list(source.HELPERS["rest_rows"])
CALL = ("P<I>(0), P<I>(1), S<ll>(2), P<ll>(3), S<int>(4), S<int>(5), S<int>(6), S<int>(7), P<ull>(8), P<ull>(9), "
        "P<ull>(10)")


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    """The emulation of both instantiations: case k runs EXPRESSIONS[k]."""
    index = [e.partition("<")[2].rstrip(">") for e in EXPRESSIONS]
    cases = "".join(f"case {k}: {{ typedef {index[k]} I; launch(grid, block, [&] {{ {e}({CALL}); }}); break; }}\n"
                    for k, e in enumerate(EXPRESSIONS))
    code = "".join(re.sub(r'#include "[^"]+"', "", source.read(f)) for f in ("features.cuh", "rest_rows.cu"))
    code = re.sub(r"extern __shared__ (\w[\w ]*?) (\w+)\[\];", r"\1* \2 = (\1*)emulated_shared;", code)
    return compiled(tmp_path_factory.mktemp("rest_rows"), emulated.SHIM + code + emulated.MAIN.replace("CASES", cases))


@pytest.fixture
def launcher(binary, tmp_path, monkeypatch):
    """The features test's launcher on this binary, counting its launches and transfers."""
    monkeypatch.setattr(emulated, "EXPRESSIONS", EXPRESSIONS)
    launch = emulated.EmulatedLauncher(binary, tmp_path)
    launch.fetches = 0

    def fetch(buffer):
        launch.fetches += 1
        return buffer.copy()

    launch.fetch = fetch
    return launch


def _with_diagonals(S, offsets, seed):
    """``S`` with entries on ``offsets`` (most of their cells) added."""
    m, n = S.shape
    rng = np.random.default_rng(seed)
    rows, cols = [], []
    for k in offsets:
        r = np.arange(max(0, -k), min(m, n - k))
        r = r[rng.random(r.size) < 0.9]
        rows.append(r)
        cols.append(r + k)
    D = sp.csr_array((np.ones(sum(r.size for r in rows)), (np.concatenate(rows), np.concatenate(cols))), shape=(m, n))
    return sp.csr_array(S + D)


def _cases():
    """``(label, matrix, offsets)``: more rows than a warp and than two tiles, empty rows, a row wider than the
    shrunken cap, offsets at the corners and past the entries, square and not."""
    rng = np.random.default_rng(11)
    m, n = 700, 900
    lengths = rng.integers(0, 30, m)
    lengths[::7] = 0
    lengths[5] = 600
    cols = np.concatenate([np.sort(rng.choice(n, k, replace=False)) for k in lengths])
    random = sp.csr_array((np.ones(cols.size), cols, np.r_[0, np.cumsum(lengths)]), shape=(m, n))
    corners = (1 - m, -3, 0, 2, n - 1)
    out = [("random", _with_diagonals(random, corners, 1), corners),
           ("random, no entry on them", random, (-650, 880)),
           ("band", sp.diags([np.ones(600 - abs(k)) for k in (-9, -1, 0, 1, 40)], [-9, -1, 0, 1, 40], shape=(600, 600),
                             format="csr"), (-1, 0, 1)),
           ("all on them", sp.diags([np.ones(300), np.ones(299)], [0, 1], shape=(300, 300), format="csr"), (0, 1))]
    wide = sp.random_array((40, 5000), density=0.05, format="csr", random_state=4)
    out.append(("wide", _with_diagonals(wide, (-39, 0, 4999), 2), (-39, 0, 7, 4999)))
    tall = sp.random_array((3000, 20), density=0.1, format="csr", random_state=5)
    out.append(("tall", _with_diagonals(tall, (-2999, -100, 0, 19), 3), (-2999, -100, 0, 19)))
    return out


@pytest.mark.parametrize("shrunken", [False, True], ids=["layout", "shrunken"])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64], ids=["int32", "int64"])
def test_rest_groups_on_the_kernel_equal_the_numpy_path(launcher, monkeypatch, shrunken, index_dtype):
    if shrunken:  # groups wider than the shared bins and than the cap
        monkeypatch.setattr(planner, "_REST_SHARED_WIDTHS", 12)
        monkeypatch.setattr(F, "WIDTH_CAP", 100)
    for label, S, offsets in _cases():
        csr = emulated._csr(S, np.float64, index_dtype)
        offsets = np.asarray(offsets, dtype=np.int64)
        max_row = int(np.diff(S.indptr).max())
        want = planner._rest_groups(csr, offsets, max_row)
        launches, fetches = len(launcher.launches), launcher.fetches
        got = planner._rest_groups(csr, offsets, max_row, launcher=launcher)
        assert dict(got) == dict(want), label
        assert (len(launcher.launches) - launches, launcher.fetches - fetches) == (1, 1), label
