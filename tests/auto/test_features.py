"""Structural features (clSpMV §3-4): hand-built answers, brute-force counts, the fingerprint."""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail.formats import CSR
from cocktail.auto import features as F


def csr_from_dense(dense):
    dense = np.asarray(dense, dtype=np.float64)
    S = sp.csr_array(dense)
    return CSR.from_arrays(S.data, S.indices, S.indptr, dense.shape)


def csr_from_entries(rows, cols, vals, shape):
    rows, cols = np.asarray(rows, np.int64), np.asarray(cols, np.int64)
    return CSR.from_triplets(rows, cols, np.asarray(vals, np.float64), shape, np.int32)


def brute_blocks(rows, cols, r, c):
    """(total, max per superrow, dense) of the r x c blocks, counted in Python."""
    per_block = Counter((int(i) // r, int(j) // c) for i, j in zip(rows, cols))
    per_superrow = Counter(bi for bi, _ in per_block)
    dense = sum(1 for v in per_block.values() if v == r * c)
    return len(per_block), max(per_superrow.values(), default=0), dense


def brute_diagonals(rows, cols):
    counts = Counter(int(j) - int(i) for i, j in zip(rows, cols))
    return sorted(counts.items())


def test_length_buckets_layout():
    assert F.length_buckets(0) == (0,)
    assert F.length_buckets(1) == (0, 1)
    assert F.length_buckets(2) == (0, 1, 2)
    assert F.length_buckets(3) == (0, 1, 2, 4)
    assert F.length_buckets(8) == (0, 1, 2, 4, 8)
    assert F.length_buckets(9) == (0, 1, 2, 4, 8, 16)


def test_block_sizes():
    assert F.BLOCK_SIZES == ((1, 4), (2, 4), (4, 4), (8, 4), (1, 8), (2, 8), (4, 8), (8, 8), (2, 2), (3, 3))


def test_tridiagonal():
    m = 6
    A = csr_from_dense(np.diag(np.full(m, 2.0)) + np.diag(np.ones(m - 1), 1) + np.diag(np.ones(m - 1), -1))
    f = F.compute(A)
    assert f.shape == (m, m) and f.nnz == 3 * m - 2
    assert f.max_row == 3 and f.mean_row == pytest.approx((3 * m - 2) / m)
    assert f.row_length_edges == (0, 1, 2, 4)
    assert f.row_length_histogram == (0, 0, 2, m - 2)
    d = f.diagonal_counts
    assert d.offsets.tolist() == [-1, 0, 1]
    assert d.counts.tolist() == [m - 1, m, m - 1]
    assert d.lengths().tolist() == [m - 1, m, m - 1]
    assert f.dense_diagonals(1.0).tolist() == [-1, 0, 1]
    assert d.dense_diagonals(1.0).tolist() == [-1, 0, 1]
    # 2x2: the three diagonal blocks are full, four off-diagonal blocks hold one entry each.
    assert f.blocks[(2, 2)] == F.BlockStats(7, 3, 3, 7 * 4 / (3 * m - 2), (0, 0, 2, 1), 3 * 32)
    # 3x3: the diagonal blocks miss their corners.
    assert (f.blocks[(3, 3)].total, f.blocks[(3, 3)].dense) == (4, 0)


def test_dense_8x8():
    rng = np.random.default_rng(0)
    A = csr_from_dense(rng.uniform(1, 2, (8, 8)))
    f = F.compute(A)
    assert f.nnz == 64 and f.max_row == 8 and f.row_length_histogram == (0, 0, 0, 0, 8)
    assert f.blocks[(8, 8)] == F.BlockStats(1, 1, 1, 1.0, (0, 1), 32)
    assert f.blocks[(4, 4)] == F.BlockStats(4, 2, 4, 1.0, (0, 0, 2), 2 * 32)
    assert f.blocks[(1, 8)] == F.BlockStats(8, 1, 8, 1.0, (0, 8), 32)
    assert f.blocks[(8, 4)].total == 2 and f.blocks[(8, 4)].dense == 2
    # 3x3 on an 8x8 grid: 9 blocks, only the four that lie inside the matrix are dense.
    assert f.blocks[(3, 3)].total == 9 and f.blocks[(3, 3)].dense == 4
    assert f.blocks[(3, 3)].fill == pytest.approx(81 / 64)
    d = f.diagonal_counts
    assert d.offsets.tolist() == list(range(-7, 8))
    assert d.counts.tolist() == [8 - abs(k) for k in range(-7, 8)]
    assert f.dense_diagonals(1.0).tolist() == list(range(-7, 8))


def test_block_diagonal_2x2():
    A = csr_from_dense(np.kron(np.eye(4), np.ones((2, 2))))
    f = F.compute(A)
    assert f.blocks[(2, 2)] == F.BlockStats(4, 1, 4, 1.0, (0, 4), 32)
    assert f.dense_diagonals(1.0).tolist() == [0]
    assert f.dense_diagonals(0.5).tolist() == [-1, 0, 1]


@pytest.mark.parametrize("shape", [(0, 0), (5, 7), (0, 3), (4, 0)])
def test_empty(shape):
    A = csr_from_entries([], [], [], shape)
    f = F.compute(A)
    m, n = shape
    assert f.shape == shape and f.nnz == 0 and f.max_row == 0 and f.mean_row == 0.0
    assert f.row_length_edges == (0,) and f.row_length_histogram == (m,)
    assert len(f.diagonal_counts) == 0 and f.dense_diagonals(0.0).tolist() == []
    for (r, c), b in f.blocks.items():
        assert (b.total, b.max_per_superrow, b.dense, b.fill) == (0, 0, 0, 1.0)
        assert b.superrow_histogram == (-(-m // r),)
    assert isinstance(F.fingerprint(f), str)


def test_empty_rows():
    # rows 0, 3 and 6 empty; row 1: 1 entry; row 2: 3; row 4: 5; row 5: 2
    entries = {1: [0], 2: [0, 4, 9], 4: [1, 2, 3, 5, 8], 5: [6, 7]}
    rows = [i for i, cs in entries.items() for _ in cs]
    cols = [j for cs in entries.values() for j in cs]
    A = csr_from_entries(rows, cols, np.arange(1, len(rows) + 1), (7, 10))
    f = F.compute(A)
    assert f.max_row == 5 and f.row_length_edges == (0, 1, 2, 4, 8)
    assert f.row_length_histogram == (3, 1, 1, 1, 1)
    assert sum(f.row_length_histogram) == 7
    assert f.mean_row == pytest.approx(11 / 7)
    for (r, c), b in f.blocks.items():
        assert (b.total, b.max_per_superrow, b.dense) == brute_blocks(rows, cols, r, c)
    assert f.blocks[(1, 4)].superrow_histogram == (3, 2, 0, 2)


def test_rectangular():
    # 3 x 10: diagonal k has min(3, 10 - k) - max(0, -k) in-matrix cells.
    rows = [0, 1, 2, 0, 1, 2, 0, 1, 2, 1]
    cols = [5, 6, 7, 8, 9, 9, 0, 1, 0, 0]
    A = csr_from_entries(rows, cols, np.ones(len(rows)), (3, 10))
    f = F.compute(A)
    d = f.diagonal_counts
    assert list(zip(d.offsets.tolist(), d.counts.tolist())) == brute_diagonals(rows, cols)
    assert d.offsets.tolist() == [-2, -1, 0, 5, 7, 8]
    assert d.lengths().tolist() == [1, 2, 3, 3, 3, 2]
    assert d.counts.tolist() == [1, 1, 2, 3, 1, 2]
    assert f.dense_diagonals(1.0).tolist() == [-2, 5, 8]
    assert f.dense_diagonals(0.5).tolist() == [-2, -1, 0, 5, 8]
    for (r, c), b in f.blocks.items():
        assert (b.total, b.max_per_superrow, b.dense) == brute_blocks(rows, cols, r, c)
        assert b.fill == pytest.approx(b.total * r * c / len(rows))
    # tall: 10 x 3, the transpose
    T = F.compute(csr_from_entries(cols, rows, np.ones(len(rows)), (10, 3)))
    assert (-T.diagonal_counts.offsets[::-1]).tolist() == d.offsets.tolist()
    assert T.diagonal_counts.lengths().tolist() == d.lengths().tolist()[::-1]


def random_entries(rng, m, n, density, zero_fraction=0.1):
    mask = rng.random((m, n)) < density
    rows, cols = np.nonzero(mask)
    vals = rng.uniform(1, 2, rows.shape[0])
    vals[rng.random(rows.shape[0]) < zero_fraction] = 0.0  # explicit zeros are entries
    return rows, cols, vals


@pytest.mark.parametrize("seed", range(8))
def test_random_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(1, 40)), int(rng.integers(1, 40))
    rows, cols, vals = random_entries(rng, m, n, float(rng.choice([0.05, 0.3, 0.9])))
    A = csr_from_entries(rows, cols, vals, (m, n))
    assert A.nnz == rows.shape[0]
    f = F.compute(A)
    assert sum(f.row_length_histogram) == m
    lengths = np.bincount(rows, minlength=m)
    assert f.max_row == (int(lengths.max()) if m else 0)
    edges = f.row_length_edges
    expect = [int(((lengths > (edges[i - 1] if i else -1)) & (lengths <= edges[i])).sum())
              for i in range(len(edges))]
    assert list(f.row_length_histogram) == expect
    d = f.diagonal_counts
    assert int(d.counts.sum()) == A.nnz
    assert list(zip(d.offsets.tolist(), d.counts.tolist())) == brute_diagonals(rows, cols)
    assert (d.counts <= d.lengths()).all()
    assert set(f.blocks) == set(F.BLOCK_SIZES)
    for (r, c), b in f.blocks.items():
        assert (b.total, b.max_per_superrow, b.dense) == brute_blocks(rows, cols, r, c), (r, c)
        assert sum(b.superrow_histogram) == -(-m // r)
        assert b.fill == pytest.approx(b.total * r * c / A.nnz) if A.nnz else b.fill == 1.0


def test_block_key_overflow_path_agrees(monkeypatch):
    rng = np.random.default_rng(42)
    rows, cols, vals = random_entries(rng, 37, 29, 0.6)
    A = csr_from_entries(rows, cols, vals, (37, 29))
    keyed = F.compute(A).blocks
    monkeypatch.setattr(F, "_KEY_LIMIT", 0)
    assert dict(F.compute(A).blocks) == dict(keyed)


def test_features_are_frozen_host_values():
    f = F.compute(csr_from_dense(np.eye(5)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.nnz = 3
    with pytest.raises(TypeError):
        f.blocks[(1, 4)] = None
    with pytest.raises(ValueError):
        f.diagonal_counts.counts[0] = 7
    assert isinstance(f.diagonal_counts.offsets, np.ndarray)
    assert f == F.compute(csr_from_dense(2 * np.eye(5)))


def test_fingerprint():
    rng = np.random.default_rng(3)
    rows, cols, vals = random_entries(rng, 20, 30, 0.2, zero_fraction=0.0)
    a = F.fingerprint(F.compute(csr_from_entries(rows, cols, vals, (20, 30))))
    b = F.fingerprint(F.compute(csr_from_entries(rows, cols, 3 * vals + 1, (20, 30))))
    assert a == b and isinstance(a, str) and len(a) == 32
    assert F.fingerprint(F.compute(csr_from_entries(rows, cols, vals, (20, 31)))) != a
    # Same shape and nnz, one entry of the tridiagonal moved from row 0 to row 5.
    tri = ([0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5], [0, 1, 0, 1, 2, 1, 2, 3, 2, 3, 4, 3, 4, 5, 4, 5])
    moved = (tri[0][:1] + tri[0][2:] + [5], tri[1][:1] + tri[1][2:] + [0])
    t1 = F.fingerprint(F.compute(csr_from_entries(*tri, np.ones(16), (6, 6))))
    t2 = F.fingerprint(F.compute(csr_from_entries(*moved, np.ones(16), (6, 6))))
    t3 = F.fingerprint(F.compute(csr_from_entries(*tri, np.arange(16), (6, 6))))
    assert t1 != t2 and t1 == t3
    assert F.fingerprint(F.compute(csr_from_entries(rows[1:], cols[1:], vals[1:], (20, 30)))) != a


def laplacian_7pt(k):
    """The 7-point Laplacian of a k x k x k grid as a canonical CSR, built without SciPy."""
    N = k ** 3
    i = np.arange(N, dtype=np.int64)
    x, y, z = i % k, (i // k) % k, i // (k * k)
    parts = [(i, i)]
    for step, ok in ((1, x < k - 1), (-1, x > 0), (k, y < k - 1), (-k, y > 0),
                     (k * k, z < k - 1), (-k * k, z > 0)):
        parts.append((i[ok], i[ok] + step))
    rows = np.concatenate([p[0] for p in parts])
    cols = np.concatenate([p[1] for p in parts])
    vals = np.where(rows == cols, 6.0, -1.0)
    return CSR.from_triplets(rows, cols, vals, (N, N), np.int32)


@pytest.mark.exhaustive  # a million rows: the scale, not a rule
def test_million_row_laplacian():
    # 100^3 rows: compute stays array-only (a few seconds on a CPU); no timing assertion.
    k = 100
    A = laplacian_7pt(k)
    f = F.compute(A)
    N = k ** 3
    assert f.shape == (N, N) and f.nnz == 7 * N - 6 * k * k
    assert f.max_row == 7 and sum(f.row_length_histogram) == N
    d = f.diagonal_counts
    assert d.offsets.tolist() == [-k * k, -k, -1, 0, 1, k, k * k]
    assert d.counts.tolist() == [N - k * k] * 3 + [N] + [N - k * k] * 3
    assert f.dense_diagonals(1.0).tolist() == [-k * k, 0, k * k]
    assert f.blocks[(1, 4)].max_per_superrow == 6


def test_block_fill_limit_leaves_out_only_shapes_past_it():
    rng = np.random.default_rng(8)
    rows, cols, vals = random_entries(rng, 64, 64, 0.08)
    A = csr_from_entries(rows, cols, vals, (64, 64))
    full = F.compute(A).blocks
    limited = F.compute(A, block_fill_limit=3.0).blocks
    for (r, c), stats in full.items():
        if (r, c) in limited:
            assert limited[(r, c)] == stats
        else:  # left out: r > 1 and a shorter shape of its width is past the limit, so its own fill is too
            assert r > 1 and stats.fill > 3.0
            shorter = [full[(q, c)].fill for q in (1, 2, 4) if q < r and (q, c) in full]
            assert not shorter or max(shorter) > 3.0
    assert set(limited) < set(full)
    # A limit between the 1 x 4 and 2 x 4 fills: 2 x 4 is counted, the taller 4 x 4 and 8 x 4 are not.
    limit = (full[(1, 4)].fill + full[(2, 4)].fill) / 2
    assert full[(1, 4)].fill < limit < full[(2, 4)].fill
    between = F.compute(A, block_fill_limit=limit).blocks
    assert (2, 4) in between and (4, 4) not in between and (8, 4) not in between


def test_distinct_values():
    A = laplacian_7pt(10)
    assert F.compute(A).distinct_values == 3  # 6, -1 and zero
    assert F.distinct_values(np.array([1.0, 0.0, 1.0])) == 2
    assert F.distinct_values(np.zeros(0)) == 1  # zero alone
    assert F.distinct_values(np.array([-0.0, 2.0])) == 3  # -0.0 is a bit pattern of its own
    assert F.distinct_values(np.array([complex(-0.0, 1.0), complex(0.0, 1.0)])) == 3
    assert F.distinct_values(np.arange(1000.0)) == F.DISTINCT_CAP
    assert F.distinct_values(np.arange(256.0)) == 256  # zero among them
    # the sample of many entries holds every value: exact without a sort of all of them
    many = np.tile(np.arange(1.0, 101.0), 1000)
    assert F.distinct_values(many) == 101
    # a value the sample misses is still counted, and a cap reached only past the sample too
    rare = many.copy()
    rare[12345] = 0.5
    assert F.distinct_values(rare) == 102
    assert F.distinct_values(np.r_[many, np.arange(200.0, 400.0)]) == F.DISTINCT_CAP
    # complex keys number values within one array: the sample and the full pass must not mix them
    rare_complex = rare.astype(np.complex128) * (1 + 1j)
    assert F.distinct_values(rare_complex) == 102
    assert F.distinct_values(many.astype(np.complex128) * 1j) == 101
    assert F.distinct_values(np.r_[many, np.array([np.nan, np.nan])]) == 102


# --- locality: how scattered the gathers of x are ------------------------------------------------------
def _csr_of(S):
    S = sp.csr_array(S)
    S.sort_indices()
    return CSR.from_arrays(S.data, S.indices, S.indptr, S.shape)


def _adjacent_rows(n: int, k: int):
    rows = np.repeat(np.arange(n), k)
    cols = (rows - k // 2 + np.tile(np.arange(k), n)) % n
    return sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(n, n))


def test_x_scatter_places_a_matrix_between_adjacent_and_uniform_columns():
    n = 100_000
    adjacent = F.x_scatter(_csr_of(_adjacent_rows(n, 8)))
    uniform = F.x_scatter(_csr_of(sp.random_array((n, n), density=8 / n, format="csr", rng=np.random.default_rng(1))))
    assert set(adjacent) == set(uniform) == set(F.SCATTER_ITEMSIZES)
    for size in F.SCATTER_ITEMSIZES:
        assert adjacent[size] < 0.01 and uniform[size] > 0.95
    # A 2-D stencil is local; the same stencil in a random order is scattered.
    side = 300
    lap = sp.kronsum(sp.diags_array([1.0, -2.0, 1.0], offsets=[-1, 0, 1], shape=(side, side)),
                     sp.diags_array([1.0, -2.0, 1.0], offsets=[-1, 0, 1], shape=(side, side)), format="csr")
    order = np.random.default_rng(2).permutation(side * side)
    local, shuffled = F.x_scatter(_csr_of(lap)), F.x_scatter(_csr_of(lap[order][:, order]))
    assert local[8] < 0.25 < 0.6 < shuffled[8]
    assert F.compute(_csr_of(lap)).x_scatter == local


def test_x_scatter_of_matrices_without_entries_is_zero():
    for S in (sp.csr_array((0, 5)), sp.csr_array((7, 3))):
        assert dict(F.x_scatter(_csr_of(S))) == {size: 0.0 for size in F.SCATTER_ITEMSIZES}


def test_x_scatter_samples_about_scatter_entries_on_long_rows(monkeypatch):
    monkeypatch.setattr(F, "SCATTER_ENTRIES", 1000)
    S = sp.random_array((64, 20_000), density=0.05, format="csr", rng=np.random.default_rng(4))  # 1,000 per row
    sorted_sizes = []
    real_sort = np.sort
    monkeypatch.setattr(np, "sort", lambda a, *k, **kw: sorted_sizes.append(a.shape[0]) or real_sort(a, *k, **kw))
    got = F.x_scatter(_csr_of(S))
    # At least one whole group is sampled, and here no more: 32 of the 64 rows, not all 64,000 entries.
    assert sorted_sizes and max(sorted_sizes) == S[:32].nnz < S.nnz
    assert got[8] > 0.5  # still reads as scattered


def test_block_heights_of_one_width_divide_each_other():
    # compute() leaves out a taller shape once a shorter one of its width is past the fill limit:
    # sound only while each height of a width divides the next.
    heights = {}
    for r, c in F.BLOCK_SIZES:
        heights.setdefault(c, [1])
        assert r % heights[c][-1] == 0 and r >= heights[c][-1]
        heights[c].append(r)
