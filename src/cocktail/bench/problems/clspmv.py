"""Stand-ins for the six mixed-structure matrices clSpMV added to the Williams set (Su & Keutzer
2012, Table 1): circuit5M, eu-2005, in-2004, Ga41As41H72, Si41Ge41H72 and mip1.

They were chosen for having "balanced portions of diagonals, dense blocks, and random singular
non-zeros" or highly irregular rows, so each stand-in mixes those parts in roughly the
proportions clSpMV's Cocktail partition found (its Table 2: e.g. circuit5M DIA 9% / SELL 73% /
COO 18%; mip1 SBELL 80% / SELL 17% / COO 3%).  Sizes follow Table 1; circuit5M is scaled down.
Same conventions as :mod:`cocktail.bench.problems.williams`: canonical float64 CSR, fixed seeds,
vectorised generation.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .families import POWER_LAW, REGULAR
from .williams import _bernoulli_rows, _diagonal, _ranges, _stencil_graph, _values


def _edges(sizes: np.ndarray, n: int) -> np.ndarray:
    """Block boundaries ``[0, ..., n]`` from a long enough sequence of block sizes."""
    edges = np.concatenate(([0], np.cumsum(sizes)))
    edges = edges[edges < n]
    return np.append(edges, n)


def _symmetric(M: sp.csr_array) -> sp.csr_array:
    """The symmetric matrix with ``M``'s upper triangle (diagonal included)."""
    upper = sp.triu(M, format="csr")
    return sp.csr_array(upper + sp.triu(M, k=1, format="csr").T)


def _heavy(rng, n: int, mean: float, a: float, cap: float) -> np.ndarray:
    """Power-law (Zipf ``a``) per-row lengths scaled to average about ``mean``, at most ``cap``."""
    raw = rng.zipf(a, n).astype(np.float64)
    scale = mean / np.minimum(raw, cap).mean()
    return np.minimum(raw * scale, cap)


def circuit5m(seed: int = 21) -> sp.csr_array:
    """circuit5M (circuit simulation), scaled from 5.56M rows / 59.5M nonzeros to 1.5M / 16.05M.

    The scale keeps the real matrix's ~10.7 entries per row and part proportions: a full
    diagonal (~9%, clSpMV's DIA share), short symmetric local couplings in windows of 8 to
    8,192 rows (~73%), and 40 supply-net hubs whose rows and columns hold 200 to 200,000
    entries each (~18%, the COO share; the real matrix has rows over a million long).
    """
    n = 1_500_000
    rng = np.random.default_rng(seed)
    rows = np.arange(n)
    window = rng.choice(np.array([8, 64, 512, 8192]), n, p=[0.45, 0.3, 0.15, 0.1])
    upper = _bernoulli_rows(rng, rows + 1, rows + 1 + window, np.minimum(1.0, 3.9 / window), (n, n))
    hub_len = np.zeros(n)
    sizes = np.exp(rng.uniform(np.log(200), np.log(200_000), 40))
    hub_len[rng.choice(n, 40, replace=False)] = np.minimum(sizes * (1.45e6 / sizes.sum()), n)
    hubs = _bernoulli_rows(rng, 0, n, hub_len / n, (n, n))
    return sp.csr_array(_diagonal(rng, n) + upper + upper.T + hubs + hubs.T)


def _web(n: int, per_row: float, template: int, template_p: float, local: float, seed: int,
         popular: float = 1000):
    """A host-clustered web graph with about ``per_row`` links per page before losses.

    Pages fall in hosts of log-normal size (median 150).  Every page links to its host's first
    ``template`` pages with probability ``template_p`` (navigation links: a dense block per
    host), and has a power-law number of further links (Zipf 2.1, at most 7,000), a fraction
    ``local`` inside its host and the rest on ``[0, g)`` with ``g`` log-uniform on
    ``[popular, n)`` (popular low-numbered pages).  Links that fall outside a small host or
    coincide are lost (~10%), so callers pass a nominal ``per_row`` calibrated to the target count.
    """
    rng = np.random.default_rng(seed)
    rows = np.arange(n)
    edges = _edges(np.ceil(rng.lognormal(np.log(150), 1.2, n // 20 + 10)).astype(np.int64), n)
    host = np.searchsorted(edges, rows, side="right") - 1
    lo, hi = edges[host], edges[host + 1]
    nav = _bernoulli_rows(rng, lo, np.minimum(hi, lo + template), template_p, (n, n))
    rest = per_row - template_p * np.minimum(hi - lo, template).mean()
    length = _heavy(rng, n, rest, 2.1, 7000)
    inner = _bernoulli_rows(rng, lo, hi, local * length / (hi - lo), (n, n))
    g = np.exp(rng.uniform(np.log(popular), np.log(n), n))
    far = _bernoulli_rows(rng, 0, g, (1 - local) * length / g, (n, n))
    return sp.csr_array(nav + inner + far)


def eu2005(seed: int = 22) -> sp.csr_array:
    """eu-2005 (web crawl of .eu): 862,664 pages, 19.2M links (22 per row).

    Host-clustered links (85% of the non-navigation links stay inside the host), 8 navigation
    links per host forming dense blocks, and power-law out-degrees (the real maximum is 6,985).
    """
    return _web(862_664, 26.5, 8, 0.8, 0.85, seed)


def in2004(seed: int = 23, n: int = 1_382_908) -> sp.csr_array:
    """in-2004 (web crawl of .in): 1,382,908 pages, 16.9M links (12 per row).

    As :func:`eu2005` with stronger navigation blocks (every page links to its host's first 6
    pages with probability 0.9: the dense blocks clSpMV stores as SBELL) and 75% host-local
    further links.  ``n`` (default: the real page count) resizes it; the popular pages
    (``[0, 1000)`` at full size) scale with ``n``, host sizes and row lengths do not.
    """
    return _web(n, 13.1, 6, 0.9, 0.75, seed, popular=1000 * (n / 1_382_908))


def _parsec(dims, atoms: int, radius: float, cluster: float, seed: int) -> sp.csr_array:
    """A real-space electronic-structure Hamiltonian (PARSEC class), symmetric.

    Grid points of a ``dims`` box couple by a 12th-order finite-difference Laplacian (+/- 6
    points along each axis: the 13 contiguous diagonals around the main one, clSpMV's BDIA
    part, and 24 more at plane strides), and through nonlocal pseudopotential projectors
    ``v v^T``: each of ``atoms`` atoms, placed at random inside a central ball (``cluster``
    times the half-width), couples all grid points within ``radius`` of it to each other,
    giving long, overlapping rows near the atoms.
    """
    rng = np.random.default_rng(seed)
    dims = np.asarray(dims, dtype=np.int64)
    axes = np.eye(3, dtype=np.int64)
    offsets = np.vstack([np.zeros((1, 3), dtype=np.int64)]
                        + [s * k * axes for k in range(1, 7) for s in (1, -1)])
    node, k, off, linear = _stencil_graph(dims, offsets)
    n = int(dims.prod())
    reach = np.abs(off).sum(axis=1)
    coef = np.where(reach == 0, 0.0, 1.0 / np.maximum(reach, 1) ** 2)
    potential = rng.uniform(0.5, 1.0, n)
    fd_vals = np.where(reach[k] == 0, potential[node] + 3.0, -coef[k])
    indptr = np.concatenate(([0], np.cumsum(np.bincount(node, minlength=n))))
    laplacian = sp.csr_array((fd_vals, node + linear[k], indptr), shape=(n, n))
    # projectors: the grid points of a cube around each atom, kept if within the radius
    centre = (dims - 1) / 2
    direction = rng.normal(size=(atoms, 3))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    where = centre + direction * (cluster * centre.min() * rng.random((atoms, 1)) ** (1 / 3))
    r = int(np.ceil(radius))
    cube = np.indices((2 * r + 1,) * 3).reshape(3, -1).T - r
    pts = np.round(where)[:, None, :].astype(np.int64) + cube[None]  # atoms x cube x 3
    dist2 = ((pts - where[:, None, :]) ** 2).sum(axis=2)
    inside = (dist2 <= radius ** 2) & np.all((pts >= 0) & (pts < dims), axis=2)
    idx = np.ravel_multi_index(tuple(np.clip(pts, 0, dims - 1).transpose(2, 0, 1)), dims)
    weight = np.exp(-dist2 / radius ** 2) * rng.uniform(0.5, 1.0, (atoms, 1))
    count = inside.sum(axis=1)
    members, w = idx[inside], weight[inside]  # per atom, in atom order
    start = np.concatenate(([0], np.cumsum(count)))[:-1]
    # entry (a, p, q) of atom a's block: members[start_a + p], members[start_a + q]
    first = _ranges(np.repeat(start, count), np.repeat(count, count))
    second = np.repeat(np.arange(len(members)), np.repeat(count, count))
    proj = sp.coo_array((w[first] * w[second], (members[second], members[first])), shape=(n, n)).tocsr()
    proj.sum_duplicates()
    return sp.csr_array(laplacian + 0.05 * proj)


def ga41as41h72(seed: int = 24) -> sp.csr_array:
    """Ga41As41H72 (PARSEC, a Ga-As-H cluster): 268,096 rows, 18.5M nonzeros (69 per row).

    A 64 x 64 x 65 grid (266,240 points) with 154 atoms (41 + 41 + 72); see :func:`_parsec`.
    """
    return _parsec((65, 64, 64), 154, 4.0, 0.8, seed)


def si41ge41h72(seed: int = 25) -> sp.csr_array:
    """Si41Ge41H72 (PARSEC, a Si-Ge-H cluster): 185,639 rows, 15.0M nonzeros (81 per row).

    A 57^3 grid (185,193 points) with 154 atoms; see :func:`_parsec`.
    """
    return _parsec((57, 57, 57), 154, 4.0, 0.75, seed)


def mip1(seed: int = 26, n: int = 66_463) -> sp.csr_array:
    """mip1 (mixed-integer programming): 66,463 rows, 10.4M nonzeros (156 per row), symmetric.

    Mostly dense blocks (clSpMV: SBELL 80%): indices fall in segments of 8-128 and about 1,600
    segment pairs are fully dense (670 random pairs a geometric distance from the diagonal,
    mirrored, and 30% of the diagonal segments); a dense band of 31 diagonals (~20%, the BDIA
    share on AMD); two full rows and columns; and a sprinkling of scattered entries.  ``n``
    (default: the real 66,463 rows) resizes it; segment sizes and pair distances are counted in
    rows and segments, so they stay as they are.
    """
    rng = np.random.default_rng(seed)
    edges = _edges(rng.integers(8, 128, n // 8 + 2), n)
    nb = len(edges) - 1
    size = np.diff(edges)
    # coarse pattern: segment pairs (I, J), J = I + geometric distance, plus some diagonal blocks
    pairs = int(0.7 * nb)
    bi = rng.integers(0, nb, pairs)
    bj = np.minimum(bi + rng.geometric(1 / 12, pairs), nb - 1)
    diag = np.flatnonzero(rng.random(nb) < 0.3)
    coarse = sp.coo_array((np.ones(2 * pairs + len(diag)),
                           (np.concatenate((bi, bj, diag)), np.concatenate((bj, bi, diag)))),
                          shape=(nb, nb)).tocsr()
    coarse.sum_duplicates()
    J = coarse.indices
    coarse_row = np.repeat(np.arange(nb), np.diff(coarse.indptr))
    width = np.bincount(coarse_row, weights=size[J], minlength=nb).astype(np.int64)
    cols = _ranges(edges[J], size[J])  # the column list of each coarse row, back to back
    offset = np.concatenate(([0], np.cumsum(width)))[:-1]
    seg = np.searchsorted(edges, np.arange(n), side="right") - 1
    indices = cols[_ranges(offset[seg], width[seg])]
    indptr = np.concatenate(([0], np.cumsum(width[seg])))
    blocks = sp.csr_array((_values(rng, len(indices)), indices, indptr), shape=(n, n))
    rows = np.arange(n)
    band = _bernoulli_rows(rng, rows - 15, rows + 16, 1.0, (n, n))
    full = np.zeros(n)
    full[rng.choice(n, 2, replace=False)] = 1.0
    dense_rows = _bernoulli_rows(rng, 0, n, full, (n, n))
    scatter = _bernoulli_rows(rng, 0, n, 1.0 / n, (n, n))
    parts = blocks + band + dense_rows + dense_rows.T + scatter + scatter.T
    return _symmetric(sp.csr_array(parts))


#: (short name, class, function) for the six clSpMV additions
MATRICES = (
    ("circuit5m", "circuit: diagonal, local rows, dense hub rows/cols (scaled 1/3.7)", circuit5m),
    ("eu2005", "web graph: host blocks, power-law rows", eu2005),
    ("in2004", "web graph: dense navigation blocks, power-law rows", in2004),
    ("ga41as41h72", "electronic structure: FD diagonals + atom blocks", ga41as41h72),
    ("si41ge41h72", "electronic structure: FD diagonals + atom blocks", si41ge41h72),
    ("mip1", "optimisation: dense blocks, band, full rows", mip1),
)

#: Family of each matrix (:mod:`.families`): mip1's full rows and columns make it power-law.
FAMILIES = {"circuit5m": POWER_LAW, "eu2005": POWER_LAW, "in2004": POWER_LAW, "ga41as41h72": REGULAR,
            "si41ge41h72": REGULAR, "mip1": POWER_LAW}
