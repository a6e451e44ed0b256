"""Stand-ins for the Williams et al. (Bell & Garland Table 4) and clSpMV (Su & Keutzer Table 1)
matrices: sizes near the real ones, canonical CSR, deterministic, and each class's structure.

Every matrix is built once per module by a module-scoped fixture (pytest keeps one at a time).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail.bench.problems import clspmv as clspmv_matrices, suites, williams

# rows, columns, nonzeros of the real matrices; circuit5M scaled from 5.56M rows / 59.5M nonzeros
TARGETS = {
    "dense": (2_000, 2_000, 4_000_000),
    "protein": (36_417, 36_417, 4_344_765),
    "fem_spheres": (83_334, 83_334, 6_010_480),
    "fem_cantilever": (62_451, 62_451, 4_007_383),
    "wind_tunnel": (217_918, 217_918, 11_634_424),
    "fem_harbor": (46_835, 46_835, 2_374_001),
    "qcd": (49_152, 49_152, 1_916_928),
    "fem_ship": (140_874, 140_874, 7_813_404),
    "economics": (206_500, 206_500, 1_273_389),
    "epidemiology": (525_825, 525_825, 2_100_225),
    "fem_accelerator": (121_192, 121_192, 2_624_331),
    "circuit": (170_998, 170_998, 958_936),
    "webbase": (1_000_005, 1_000_005, 3_105_536),
    "lp": (4_284, 1_092_610, 11_279_748),
    "circuit5m": (1_500_000, 1_500_000, 16_050_000),
    "eu2005": (862_664, 862_664, 19_200_000),
    "in2004": (1_382_908, 1_382_908, 16_900_000),
    "ga41as41h72": (268_096, 268_096, 18_500_000),
    "si41ge41h72": (185_639, 185_639, 15_000_000),
    "mip1": (66_463, 66_463, 10_400_000),
}

BUILDERS = {name: build for name, _, build in williams.MATRICES + clspmv_matrices.MATRICES}


#: Built at full size in the exhaustive tier only (about 18 s of 28 on two cores): their classes' structure is checked
#: in the default tier at full size by another matrix of the class or at CPU size (test_cpu_size_structure).
EXHAUSTIVE_ONLY = {"eu2005", "in2004", "ga41as41h72", "mip1", "webbase", "lp"}


@pytest.fixture(scope="module", params=[pytest.param(n, marks=pytest.mark.exhaustive) if n in EXHAUSTIVE_ONLY else n
                                        for n in TARGETS])
def built(request):
    return request.param, BUILDERS[request.param]()


def within(value, target, tol=0.2):
    return abs(value - target) <= tol * target


def row_lengths(A):
    return np.diff(A.indptr)


def is_symmetric(A):
    """Pattern and values equal to the transpose's, compared array by array."""
    T = sp.csr_array(A.T.tocsr())
    T.sort_indices()
    return (np.array_equal(A.indptr, T.indptr) and np.array_equal(A.indices, T.indices)
            and np.array_equal(A.data, T.data))


def pattern_symmetric(A):
    P = sp.csr_array((np.ones(A.nnz), A.indices, A.indptr), shape=A.shape)
    return is_symmetric(P)


def diagonal_offsets(A):
    return A.indices - np.repeat(np.arange(A.shape[0]), row_lengths(A))


# --------------------------------------------------------------------------- every matrix


def test_registry():
    assert [n for n, _, _ in williams.MATRICES] == [
        "dense", "protein", "fem_spheres", "fem_cantilever", "wind_tunnel", "fem_harbor", "qcd",
        "fem_ship", "economics", "epidemiology", "fem_accelerator", "circuit", "webbase", "lp"]
    assert [n for n, _, _ in clspmv_matrices.MATRICES] == [
        "circuit5m", "eu2005", "in2004", "ga41as41h72", "si41ge41h72", "mip1"]
    assert set(BUILDERS) == set(TARGETS)
    for _, kind, build in williams.MATRICES + clspmv_matrices.MATRICES:
        assert kind and build.__doc__ and len(build.__doc__) > 40


def test_size(built):
    name, A = built
    rows, cols, nnz = TARGETS[name]
    assert within(A.shape[0], rows) and within(A.shape[1], cols), (A.shape, rows, cols)
    assert within(A.nnz, nnz), (A.nnz, nnz)
    assert within(A.nnz / A.shape[0], nnz / rows), (A.nnz / A.shape[0], nnz / rows)


def test_canonical_csr(built):
    _, A = built
    assert isinstance(A, sp.csr_array) and A.dtype == np.float64
    assert A.indptr[0] == 0 and A.indptr[-1] == A.nnz == len(A.indices) == len(A.data)
    assert np.all(np.diff(A.indptr) >= 0)
    assert A.indices.min() >= 0 and A.indices.max() < A.shape[1]
    step = np.diff(A.indices.astype(np.int64))
    same_row = np.ones(len(step), dtype=bool)
    starts = A.indptr[1:-1]
    starts = starts[(starts > 0) & (starts < A.nnz)]
    same_row[starts - 1] = False
    assert np.all(step[same_row] > 0)  # sorted, no duplicates
    assert np.all(np.isfinite(A.data))


def test_deterministic(built):
    name, A = built
    B = BUILDERS[name]()
    for part in ("indptr", "indices", "data"):
        assert np.array_equal(getattr(A, part), getattr(B, part)), part


# --------------------------------------------------------------------------- structure by class


def check_dense(A):
    assert A.nnz == A.shape[0] * A.shape[1]


def check_protein(A):
    assert is_symmetric(A)
    assert np.mean(np.abs(diagonal_offsets(A)) < 3000) > 0.9  # blocks along the diagonal


def check_fem(A):
    assert is_symmetric(A)
    assert A.shape[0] % 3 == 0
    blocks = sp.bsr_array(A, blocksize=(3, 3))
    assert blocks.indices.size * 9 == A.nnz  # every touched 3x3 block is full


def check_qcd(A):
    assert np.all(row_lengths(A) == 39)


def check_economics(A):
    assert not pattern_symmetric(A)
    distance = np.abs(diagonal_offsets(A))
    assert np.mean(distance < 400) > 0.3 and np.mean(distance > 10_000) > 0.1


def check_epidemiology(A):
    _, counts = np.unique(diagonal_offsets(A), return_counts=True)
    assert np.sort(counts)[-3:].sum() > 0.7 * A.nnz  # mostly on three diagonals
    assert 500 < len(counts) < 1500  # the real matrix occupies 769


def check_circuit(A):
    lengths = row_lengths(A)
    dense_rows = np.count_nonzero(lengths > 100 * lengths.mean())
    assert 1 <= dense_rows <= 50 and np.median(lengths) <= 6
    assert pattern_symmetric(A)  # dense rows come with dense columns


def check_webbase(A):
    lengths = row_lengths(A)
    assert lengths.max() > 100 * lengths.mean() and np.median(lengths) < lengths.mean()


def check_lp(A):
    lengths = row_lengths(A)
    assert A.shape[1] > 100 * A.shape[0]
    assert lengths.std() > 0.8 * lengths.mean() and lengths.max() > 50 * lengths.min()


def check_circuit5m(A):
    assert np.all(A.diagonal() != 0)
    lengths = row_lengths(A)
    assert 10 <= np.count_nonzero(lengths > 100 * lengths.mean()) <= 100


def check_web(A):
    lengths = row_lengths(A)
    assert lengths.max() > 100 * lengths.mean()  # power-law rows
    assert np.mean(np.abs(diagonal_offsets(A)) < 5000) > 0.5  # host-local links


def check_parsec(A):
    assert pattern_symmetric(A)
    assert np.mean(np.abs(diagonal_offsets(A)) <= 6) > 0.12  # dense diagonals around the main one
    lengths = row_lengths(A)
    assert lengths.max() > 5 * lengths.mean() and lengths.min() < 0.5 * lengths.mean()


def check_mip1(A):
    assert is_symmetric(A)
    assert row_lengths(A).max() > 0.9 * A.shape[1]
    n = A.shape[0] - A.shape[0] % 4
    tiles = sp.bsr_array(A[:n, :n], blocksize=(4, 4))
    full = np.count_nonzero(tiles.data, axis=(1, 2)) == 16
    assert 16 * full.sum() > 0.5 * A.nnz  # mostly dense blocks


STRUCTURE = {
    "dense": check_dense, "protein": check_protein, "qcd": check_qcd, "economics": check_economics,
    "epidemiology": check_epidemiology, "circuit": check_circuit, "webbase": check_webbase,
    "lp": check_lp, "circuit5m": check_circuit5m, "eu2005": check_web, "in2004": check_web,
    "ga41as41h72": check_parsec, "si41ge41h72": check_parsec, "mip1": check_mip1,
    **{n: check_fem for n in ("fem_spheres", "fem_cantilever", "wind_tunnel", "fem_harbor", "fem_ship",
                             "fem_accelerator")},
}


def test_structure(built):
    name, A = built
    STRUCTURE[name](A)


@pytest.mark.parametrize("matrix", [m for m in suites.get("default-cpu") if m.name.endswith("_small")],
                         ids=lambda m: m.name)
def test_cpu_size_structure(matrix):
    """The CPU-size matrices of the default-cpu suite keep their full-size class's structure."""
    A = matrix.build()
    STRUCTURE[matrix.name.removesuffix("_small")](A)
    test_canonical_csr(("", A))


def test_fem_backends():
    """The suites' FEM matrices are the grid substitute whether or not scikit-fem imports (one suite matrix is one
    matrix in every install); scikit-fem's assembly is asked for by name, and names the package where missing."""
    assert np.array_equal(williams.fem_harbor().indices, williams.fem_harbor(backend="grid").indices)
    try:
        import skfem  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="scikit-fem"):
            williams.fem(3000, 150_000, backend="skfem")
    else:  # real finite-element assembly: 3-D elasticity, symmetric, full 3x3 blocks
        assembled = williams.fem(3000, 150_000, (1, 2, 1), backend="skfem")
        check_fem(assembled)
        assert within(assembled.shape[0], 3000) and within(assembled.nnz, 150_000)
        assert not np.array_equal(assembled.indptr, williams.fem(3000, 150_000, (1, 2, 1), backend="grid").indptr)
    with pytest.raises(ValueError, match="unknown FEM backend"):
        williams.fem(3000, 150_000, backend="nope")
    with pytest.raises(ValueError, match="unknown FEM backend"):
        williams.fem(3000, 150_000, backend="auto")
    small = williams.fem(3000, 150_000, (1, 2, 1), backend="grid")
    check_fem(small)
    assert within(small.shape[0], 3000) and within(small.nnz, 150_000)
