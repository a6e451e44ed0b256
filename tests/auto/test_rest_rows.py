"""The planner's helpers over a Cocktail's diagonals, on the CPU: the rows off the diagonals (``_rest_groups``'s
NumPy path) and the selection of the fuller diagonals (``_FullerDiagonals``), against plain NumPy."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from cocktail.auto import planner
from cocktail.auto.features import DiagonalCounts, row_groups
from cocktail.formats.csr import CSR


def test_rest_groups_count_the_entries_off_the_diagonals():
    rng = np.random.default_rng(2)
    for shape in ((300, 300), (40, 900), (900, 40)):
        S = sp.random_array(shape, density=0.08, format="csr", random_state=rng)
        S = sp.csr_array(S + sp.eye_array(*shape, k=1, format="csr"))
        S.sort_indices()
        csr = CSR.from_arrays(S.data, S.indices, S.indptr, S.shape)
        offsets = np.array([1 - shape[0], -3, 0, 1, shape[1] - 1])
        coo = S.tocoo()
        off = ~np.isin(coo.col.astype(np.int64) - coo.row, offsets)
        want = row_groups(np.bincount(coo.row[off], minlength=shape[0]))
        assert dict(planner._rest_groups(csr, offsets, int(np.diff(S.indptr).max()))) == dict(want), shape


def test_fuller_diagonals_select_as_a_comparison_does():
    rng = np.random.default_rng(3)
    counts = rng.integers(1, 60, 5000)
    bounds = [(30.0, False), (29.5, True), (40.0, True), (40.0, False), (10.0, True), (10.0, False), (59.0, True),
              (25.0, True), (25.0, False), (60.0, False), (0.5, True)]
    offsets = np.arange(5000) - 2500
    fuller = planner._FullerDiagonals(DiagonalCounts((5000, 5000), offsets, counts))
    for bound, strict in bounds:  # bounds rising, falling and repeated with the other strictness
        want = np.flatnonzero(counts > bound if strict else counts >= bound)
        got_offsets, got_counts = fuller.select(bound, strict)
        assert np.array_equal(got_offsets, offsets[want]) and np.array_equal(got_counts, counts[want]), (bound, strict)
