"""The matrix zoo: small matrices, fixed seeds, chosen to break format builders.

Each entry is raw CSR arrays exactly as a user might hand them over: some with unsorted
column indices, duplicates and explicit zeros.  Values are float64; tests convert.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ZooMatrix:
    name: str
    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    shape: tuple

    @property
    def arrays(self):
        return self.data, self.indices, self.indptr


def raw_csr(rows, cols, vals, shape, rng=None, shuffle=False):
    """CSR arrays from triplets, grouped by row but NOT canonicalised (order kept, or shuffled within rows)."""
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    vals = np.asarray(vals, dtype=np.float64)
    order = np.argsort(rows, kind="stable")
    if shuffle:
        keys = rng.random(rows.shape[0])
        order = np.lexsort((keys, rows))
    indptr = np.zeros(shape[0] + 1, dtype=np.int64)
    np.add.at(indptr, rows + 1, 1)
    return vals[order], cols[order], np.cumsum(indptr)


def _random_entries(rng, m, n, lengths):
    rows = np.repeat(np.arange(m), lengths)
    cols = np.concatenate([rng.choice(n, size=k, replace=False) for k in lengths]) if m else np.zeros(0, int)
    return rows, cols.astype(np.int64), rng.standard_normal(rows.shape[0])


def _entry(name, rows, cols, vals, shape, rng=None, shuffle=False):
    data, indices, indptr = raw_csr(rows, cols, vals, shape, rng, shuffle)
    return ZooMatrix(name, data, indices, indptr, tuple(shape))


def _laplacian_2d(k):
    idx = np.arange(k * k).reshape(k, k)
    rows, cols, vals = [idx.ravel()], [idx.ravel()], [np.full(k * k, 4.0)]
    for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        src = idx[max(0, -di):k - max(0, di), max(0, -dj):k - max(0, dj)]
        dst = idx[max(0, di):k - max(0, -di) or None, max(0, dj):k - max(0, -dj) or None]
        rows.append(src.ravel())
        cols.append(dst.ravel())
        vals.append(np.full(src.size, -1.0))
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)


def build_zoo() -> list[ZooMatrix]:
    """Every zoo matrix, freshly generated from fixed seeds."""
    rng = np.random.default_rng(20081124)
    z = []
    empty = (np.zeros(0, int), np.zeros(0, int), np.zeros(0))
    z.append(_entry("0x0", *empty, (0, 0)))
    z.append(_entry("0xn", *empty, (0, 7)))
    z.append(_entry("mx0", *empty, (5, 0)))
    z.append(_entry("no_entries", *empty, (6, 9)))
    z.append(_entry("1x1", [0], [0], [2.5], (1, 1)))

    lengths = rng.integers(1, 6, size=40)
    lengths[:3] = 0                # empty leading rows
    lengths[-4:] = 0               # empty trailing rows
    lengths[10:30:3] = 0           # interleaved empty rows
    z.append(_entry("empty_rows", *_random_entries(rng, 40, 30, lengths), (40, 30)))

    lengths = rng.integers(1, 4, size=60)
    lengths[17] = 70
    z.append(_entry("long_row", *_random_entries(rng, 60, 70, lengths), (60, 70)))

    lengths = np.minimum(rng.zipf(1.8, size=200), 150)
    z.append(_entry("power_law", *_random_entries(rng, 200, 150, lengths), (200, 150)))

    z.append(_entry("single_row", *_random_entries(rng, 1, 50, np.array([20])), (1, 50)))
    z.append(_entry("single_col", *_random_entries(rng, 45, 1, rng.integers(0, 2, size=45)), (45, 1)))
    z.append(_entry("tall", *_random_entries(rng, 120, 15, rng.integers(0, 6, size=120)), (120, 15)))
    z.append(_entry("wide", *_random_entries(rng, 15, 120, rng.integers(0, 40, size=15)), (15, 120)))

    r, c, v = _random_entries(rng, 30, 30, rng.integers(2, 9, size=30))
    z.append(_entry("unsorted", r, c, v, (30, 30), rng, shuffle=True))

    r, c, v = _random_entries(rng, 30, 30, rng.integers(1, 6, size=30))
    pick = rng.choice(r.shape[0], size=25, replace=False)
    dr, dc, dv = r[pick], c[pick], rng.standard_normal(25)
    dv[:5] = -v[pick[:5]]          # five duplicates that sum to an explicit zero
    z.append(_entry("duplicates", np.r_[r, dr, dr[:8]], np.r_[c, dc, dc[:8]],
                    np.r_[v, dv, np.ones(8)], (30, 30), rng, shuffle=True))

    r, c, v = _random_entries(rng, 30, 30, rng.integers(1, 7, size=30))
    v[::4] = 0.0
    v[1] = -0.0
    z.append(_entry("explicit_zeros", r, c, v, (30, 30)))

    z.append(_entry("stencil", *_laplacian_2d(12), (144, 144)))

    bi, bj = np.meshgrid(np.arange(16) + 20, np.arange(16) + 5, indexing="ij")
    r2, c2, v2 = _random_entries(rng, 50, 50, rng.integers(0, 3, size=50))
    keep = ~((r2 >= 20) & (r2 < 36) & (c2 >= 5) & (c2 < 21))
    z.append(_entry("dense_block", np.r_[bi.ravel(), r2[keep]], np.r_[bj.ravel(), c2[keep]],
                    np.r_[rng.standard_normal(256), v2[keep]], (50, 50)))
    return z


ZOO = build_zoo()
ZOO_BY_NAME = {m.name: m for m in ZOO}
