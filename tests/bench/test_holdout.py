"""The held-out suite: determinism, canonical CSR, sizes, each class's defining property, the CLI."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail.bench.problems import holdout, suites
from cocktail.cli import _problems, build_parser

NAMES = ["holdout_banded", "holdout_blockdiag", "holdout_rmat", "holdout_tall", "holdout_wide",
         "holdout_sparse_rows", "holdout_mesh2d", "holdout_mesh3d_b3", "holdout_preferential", "holdout_knn",
         "holdout_bipartite", "holdout_saddle"]


@pytest.fixture(scope="module")
def full():
    """The full-size matrices, built once (a few seconds in all)."""
    return {m.name: m.build() for m in suites.get("holdout")}


def test_suite_members():
    assert [m.name for m in suites.get("holdout")] == NAMES
    assert [m.name for m in suites.get("holdout-cpu")] == [n + "_small" for n in NAMES]
    for big, small in zip(suites.get("holdout"), suites.get("holdout-cpu")):
        assert big.kind and small.kind == big.kind + " (CPU size)"
    others = {m.name for s in ("structured", "williams", "cocktail", "default-cpu") for m in suites.get(s)}
    assert not others & {m.name for s in ("holdout", "holdout-cpu") for m in suites.get(s)}


@pytest.mark.parametrize("name", NAMES)
def test_canonical_float64_in_range(name, full):
    A = full[name]
    assert isinstance(A, sp.csr_array) and A.dtype == np.float64
    assert 200_000 <= A.nnz <= 3_000_000, A.nnz
    assert A.has_canonical_format
    for i in range(0, A.shape[0], max(1, A.shape[0] // 2000)):  # sorted and distinct, row by row
        cols = A.indices[A.indptr[i]:A.indptr[i + 1]]
        assert np.all(np.diff(cols) > 0)
    B = A.copy()
    B.has_canonical_format = False
    B.sum_duplicates()
    assert B.nnz == A.nnz and np.array_equal(B.indices, A.indices)
    assert np.all(A.data != 0)


@pytest.mark.parametrize("m", suites.get("holdout-cpu"), ids=lambda m: m.name)
def test_deterministic(m):
    A, B = m.build(), m.build()
    assert A.shape == B.shape
    for x, y in ((A.indptr, B.indptr), (A.indices, B.indices), (A.data, B.data)):
        assert np.array_equal(x, y)


def test_cpu_size_is_smaller(full):
    small = {m.name: m.build() for m in suites.get("holdout-cpu")}
    for name in NAMES:
        A, S = full[name], small[name + "_small"]
        assert A.shape[0] / 25 <= S.shape[0] <= A.shape[0] / 10, (name, S.shape, A.shape)
        assert S.nnz < A.nnz / 5


def test_banded(full):
    A = full["holdout_banded"]
    n = A.shape[0]
    rows = np.repeat(np.arange(n), np.diff(A.indptr))
    lo = A.indices[A.indptr[:-1]]
    hi = A.indices[A.indptr[1:] - 1]
    inner = np.arange(n)[(np.arange(n) >= 40) & (np.arange(n) < n - 40)]
    w = (hi - lo)[inner] // 2
    assert w.min() >= 2 and w.max() <= 40 and w.max() - w.min() >= 30  # the half-width drifts
    assert np.all(np.abs(A.indices - rows) <= 40)
    assert np.array_equal(np.diff(A.indptr), hi - lo + 1)  # dense inside the band


def test_blockdiag(full):
    A = full["holdout_blockdiag"]
    n = A.shape[0]
    edges = holdout.block_edges(n, 102)
    sizes = np.diff(edges)
    assert sizes.min() >= 1 and sizes.max() <= 64 and len(np.unique(sizes)) > 30
    block = np.searchsorted(edges, np.arange(n), side="right") - 1
    rows = np.repeat(np.arange(n), np.diff(A.indptr))
    assert np.array_equal(block[rows], block[A.indices])  # no entry outside the blocks
    counts = np.bincount(block[rows], minlength=len(sizes))
    dense = counts == sizes**2
    assert dense.sum() > 0.3 * len(sizes) and (~dense).sum() > 0.3 * len(sizes)


def test_rmat(full):
    A = full["holdout_rmat"]
    assert A.shape == (2**16, 2**16)
    degree = np.diff(A.indptr)
    assert degree.max() > 50 * degree.mean()  # power-law: hubs
    assert (degree == 0).sum() > 0.05 * A.shape[0]


def test_tall_and_wide(full):
    T, W = full["holdout_tall"], full["holdout_wide"]
    assert T.shape[0] >= 8 * T.shape[1] and W.shape[1] >= 8 * W.shape[0]
    for A in (T, W):
        lengths = np.diff(A.indptr)
        assert lengths.std() > 0.5 * lengths.mean() and lengths.max() > 8 * lengths.mean()  # uneven rows


def test_sparse_rows(full):
    A = full["holdout_sparse_rows"]
    lengths = np.diff(A.indptr)
    assert (lengths == 0).mean() >= 0.9
    filled = lengths[lengths > 0]
    assert filled.max() > 50 * np.median(filled)  # heavy tail


@pytest.mark.parametrize("name", ["holdout_mesh2d", "holdout_mesh3d_b3"])
def test_mesh_symmetric(name, full):
    A = full[name]
    assert A.shape[0] == A.shape[1]
    assert (A != A.T).nnz == 0  # symmetric pattern (and values)
    assert np.all(A.diagonal() != 0)


def test_mesh2d_is_a_triangle_mesh(full):
    A = full["holdout_mesh2d"]
    lengths = np.diff(A.indptr)
    assert 6.5 <= lengths.mean() <= 7.5 and lengths.min() >= 3  # Euler: about 6 neighbours per vertex


def test_mesh3d_has_3x3_blocks(full):
    A = full["holdout_mesh3d_b3"]
    assert A.shape[0] % 3 == 0
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    block_ids = (rows // 3) * (A.shape[1] // 3) + A.indices // 3
    _, counts = np.unique(block_ids, return_counts=True)
    assert np.all(counts == 9)  # every touched 3x3 block is full
    lengths = np.diff(A.indptr).reshape(-1, 3)
    assert np.all(lengths == lengths[:, :1])  # the three rows of a node have the same length


def test_preferential_attachment_has_hubs_first(full):
    A = full["holdout_preferential"]
    assert (A != A.T).nnz == 0 and np.all(A.diagonal() == 0)
    degree = np.diff(A.indptr)
    assert degree.max() > 100 * np.median(degree)  # hubs
    first, last = degree[: len(degree) // 100].mean(), degree[-len(degree) // 100:].mean()
    assert first > 5 * last  # the oldest vertices gathered the most edges
    assert degree.min() >= 1


def test_knn_graph_is_local_in_its_curve_order(full):
    A = full["holdout_knn"]
    assert (A != A.T).nnz == 0 and np.all(A.diagonal() != 0)
    degree = np.diff(A.indptr)
    assert degree.min() >= 9 and degree.max() <= 40  # k = 8 neighbours, the point, and those choosing it
    rows = np.repeat(np.arange(A.shape[0]), degree)
    near = np.abs(A.indices - rows) <= A.shape[0] // 100
    assert 0.6 < near.mean() < 1.0  # mostly near in index, with the curve's jumps


def test_bipartite_has_popular_columns(full):
    A = full["holdout_bipartite"]
    assert A.shape[0] == 3 * A.shape[1]
    column_counts = np.bincount(A.indices, minlength=A.shape[1])
    assert column_counts.max() > 100 * np.median(column_counts)
    lengths = np.diff(A.indptr)
    assert lengths.max() > 8 * lengths.mean()


def test_saddle_point_has_a_zero_block(full):
    A = full["holdout_saddle"]
    m = 400
    n = m * m
    assert A.shape == (n + (m // 2) ** 2,) * 2 and (A != A.T).nnz == 0
    lower = A[n:]
    assert lower.nnz == 4 * (m // 2) ** 2 and lower.indices.max() < n  # constraints touch only unknowns
    assert np.all(A.diagonal()[:n] != 0) and np.all(A.diagonal()[n:] == 0)


def test_cli_resolves_holdout(monkeypatch):
    built = []
    monkeypatch.setattr(suites, "load", lambda m: built.append(m.name) or sp.eye_array(3, format="csr"))
    args = build_parser().parse_args(["bench", "--suite", "holdout"])
    problems = _problems(args, on_gpu=False)
    assert built == NAMES
    assert [p.name for p in problems] == NAMES
