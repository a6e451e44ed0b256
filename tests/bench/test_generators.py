"""The generated Laplacians match Bell & Garland's Table 3 shapes and nonzero counts."""

from __future__ import annotations

import numpy as np
import pytest

from cocktail.bench.problems.generators import by_name, laplacian


@pytest.mark.parametrize("points, k, dims, star", [(3, 50, 1, True), (5, 12, 2, True), (7, 6, 3, True),
                                                   (9, 12, 2, False), (27, 6, 3, False)])
def test_shape_and_nonzeros(points, k, dims, star):
    A = laplacian(points, k)
    assert A.shape == (k ** dims, k ** dims)
    expected = k ** dims * (2 * dims + 1) - 2 * dims * k ** (dims - 1) if star else (3 * k - 2) ** dims
    assert A.nnz == expected
    assert np.diff(A.indptr).max() == points
    interior = np.flatnonzero(np.diff(A.indptr) == points)
    np.testing.assert_allclose(A.sum(axis=1)[interior], 0.0, atol=1e-12)  # each interior row sums to zero
    assert (A != A.T).nnz == 0


def test_table3_counts():
    # Bell & Garland Table 3: the 7-point Laplacian on 100^3 has 6,940,000 nonzeros
    assert laplacian(7, 100).nnz == 6_940_000


def test_names():
    assert by_name("laplace5_4").shape == (16, 16)
    assert by_name("powerlaw") is None
    with pytest.raises(ValueError, match="no 4-point Laplacian"):
        laplacian(4, 3)


def test_power_law_rows_are_zipf_long_and_fixed_by_the_seed():
    from cocktail.bench.problems.generators import power_law

    S = power_law(2000)
    lengths = np.diff(S.indptr)
    assert S.shape == (2000, 2000) and S.has_canonical_format
    assert lengths.max() > 20 * np.median(lengths)  # a heavy tail
    assert (power_law(2000) != S).nnz == 0 and (power_law(2000, seed=8) != S).nnz > 0
