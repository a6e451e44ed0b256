"""Stand-ins for the 14 unstructured matrices of Williams et al. (Bell & Garland, Table 4).

The real matrices come from collections we do not ship; each function here builds a matrix of
the same class with about the same rows, nonzeros and nonzeros per row (within ~20%), from a
fixed-seed ``numpy.random.Generator``, so the benchmark is reproducible without downloads.
Every function returns a canonical float64 ``scipy.sparse.csr_array`` (sorted column indices,
no duplicates).  Generation is vectorised: rows are sampled as Bernoulli processes over column
windows (geometric gaps, so each row comes out sorted), and parts are merged with CSR sums.

The FEM matrices are a structured grid substitute in every install (one suite matrix is one matrix
whatever is installed); scikit-fem's assembly (linear elasticity on a tetrahedral mesh) is asked for by
name (``backend="skfem"``, as examples/cg_fem.py does); see :func:`fem`.
"""

from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp

from .families import POWER_LAW, REGULAR

# --------------------------------------------------------------------------- building blocks


def _ranges(starts, lengths) -> np.ndarray:
    """``concatenate([arange(s, s + l) for s, l in zip(starts, lengths)])``, without the loop."""
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    ends = np.cumsum(lengths)
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(ends[-1] if len(ends) else 0)


def _values(rng: np.random.Generator, n: int) -> np.ndarray:
    """Nonzero values in [0.1, 1): positive, so that summing parts never cancels an entry."""
    return rng.uniform(0.1, 1.0, n)


def _csr(indptr, indices, shape, data) -> sp.csr_array:
    """A CSR array from parts already sorted and free of duplicates."""
    A = sp.csr_array((np.asarray(data, dtype=np.float64), np.asarray(indices), np.asarray(indptr)),
                     shape=shape)
    A.has_canonical_format = True
    return A


def _bernoulli_rows(rng, lo, hi, p, shape) -> sp.csr_array:
    """Row ``i`` keeps each column of ``[lo[i], hi[i])`` independently with probability ``p[i]``.

    Drawn as geometric gaps between kept columns, so each row comes out sorted and distinct.
    ``lo``/``hi`` are clipped to the column range; rows with an empty window stay empty.
    """
    n_rows, n_cols = shape
    lo = np.clip(np.broadcast_to(np.asarray(lo, dtype=np.int64), (n_rows,)), 0, n_cols)
    hi = np.clip(np.broadcast_to(np.asarray(hi, dtype=np.int64), (n_rows,)), 0, n_cols)
    width = np.maximum(hi - lo, 0)
    p = np.clip(np.broadcast_to(np.asarray(p, dtype=np.float64), (n_rows,)), 0.0, 1.0)
    p = np.where(width > 0, p, 0.0)
    mean = p * width
    draws = np.where(p > 0, np.minimum(width, np.ceil(mean + 4 * np.sqrt(mean) + 4)), 0).astype(np.int64)
    rate = -np.log1p(-np.minimum(p, 1 - 1e-16))  # P(gap > k) = (1 - p)^k
    rate = np.where(p >= 1.0, np.inf, rate)
    skip = np.floor(np.minimum(rng.standard_exponential(draws.sum()) / np.repeat(rate, draws), 2.0**40))
    pos = np.cumsum(skip.astype(np.int64) + 1)
    ends = np.cumsum(draws)
    first = ends - draws
    before = np.concatenate(([0], pos))[first]  # running total before each row's first gap
    pos = pos - np.repeat(before, draws) - 1  # offset of each candidate column inside its window
    keep = pos < np.repeat(width, draws)
    kept_before = np.concatenate(([0], np.cumsum(keep)))
    counts = kept_before[ends] - kept_before[first]  # kept candidates form a prefix of each row
    indices = (np.repeat(lo, draws) + pos)[keep]
    indptr = np.concatenate(([0], np.cumsum(counts)))
    return _csr(indptr, indices, shape, _values(rng, len(indices)))


def _diagonal(rng, n: int) -> sp.csr_array:
    return _csr(np.arange(n + 1), np.arange(n), (n, n), _values(rng, n))


def _blocks(rng, n: int, low: int, high: int) -> np.ndarray:
    """Boundaries ``[0, b1, ..., n]`` of consecutive blocks with sizes drawn from ``[low, high)``."""
    sizes = rng.integers(low, high, size=n // low + 2)
    edges = np.concatenate(([0], np.cumsum(sizes)))
    edges = edges[edges < n]
    return np.append(edges, n)


def _block_of(edges: np.ndarray, n: int) -> np.ndarray:
    """For each row, the index of the block (from :func:`_blocks`) containing it."""
    return np.searchsorted(edges, np.arange(n), side="right") - 1


def _stencil_graph(dims, offsets):
    """Adjacency of a (non-periodic, C-ordered) grid under integer ``offsets``.

    Returns ``(rows, k)``: for every kept (node, neighbour) pair in CSR order, the node and the
    index into ``offsets`` (sorted by linear offset, so each row's neighbours come out sorted),
    plus the sorted offsets and their linear values.
    """
    dims = np.asarray(dims, dtype=np.int64)
    strides = np.cumprod(np.concatenate((dims[1:], [1]))[::-1])[::-1]
    offsets = np.asarray(offsets, dtype=np.int64)
    linear = offsets @ strides
    order = np.argsort(linear, kind="stable")
    offsets, linear = offsets[order], linear[order]
    coords = np.indices(dims).reshape(len(dims), -1)
    valid = np.ones((coords.shape[1], len(offsets)), dtype=bool)
    for d in range(len(dims)):  # a loop over the 3 (or 4) dimensions, not over nodes
        shifted = coords[d][:, None] + offsets[None, :, d]
        valid &= (shifted >= 0) & (shifted < dims[d])
    rows, k = np.nonzero(valid)
    return rows, k, offsets, linear


def _shell_offsets(radius: int = 3) -> np.ndarray:
    """3-D offsets in ``[-radius, radius]^3``, nearest first, each ``+o`` followed by ``-o``."""
    pts = [o for o in itertools.product(range(-radius, radius + 1), repeat=3) if o > (0, 0, 0)]
    pts.sort(key=lambda o: (sum(c * c for c in o), o))
    out = [(0, 0, 0)]
    for o in pts:
        out += [o, tuple(-c for c in o)]
    return np.array(out, dtype=np.int64)


# --------------------------------------------------------------------------- dense and protein


def dense(seed: int = 1) -> sp.csr_array:
    """Dense: a full 2,000 x 2,000 matrix stored as sparse (4.0M entries, 2,000 per row)."""
    n = 2000
    rng = np.random.default_rng(seed)
    return _csr(np.arange(n + 1) * n, np.tile(np.arange(n), n), (n, n), _values(rng, n * n))


def protein(seed: int = 2) -> sp.csr_array:
    """Protein (pdb1HYS class): symmetric, dense-ish irregular blocks along the diagonal.

    Rows fall in consecutive blocks of 60-300 rows; inside its block a row keeps each column
    with a per-block probability in [0.35, 0.65]; a sparser band (width 400-2,500 past the
    block) couples neighbouring blocks.  The upper triangle is mirrored, so the pattern and the
    values are symmetric; about 119 entries per row.
    """
    n = 36_417
    rng = np.random.default_rng(seed)
    edges = _blocks(rng, n, 60, 300)
    block = _block_of(edges, n)
    nb = len(edges) - 1
    fill = rng.uniform(0.35, 0.65, nb)[block]
    band = rng.integers(400, 2500, nb)[block]
    end = edges[block + 1]
    rows = np.arange(n)
    inner = _bernoulli_rows(rng, rows + 1, end, fill, (n, n))
    outer = _bernoulli_rows(rng, end, end + band, 9.0 / band, (n, n))
    upper = inner + outer
    return sp.csr_array(upper + upper.T + 40.0 * _diagonal(rng, n))


# --------------------------------------------------------------------------- FEM


#: nonzeros per row of 3-D elasticity on scikit-fem's six-tetrahedra-per-cube mesh (measured)
_SKFEM_PER_ROW = {"P1": 42.0, "P2": 82.0}


def _fem_grid(rows: int, nnz: int, aspect, seed: int) -> sp.csr_array:
    """Structured substitute for an FEM elasticity matrix (the suites' FEM matrices).

    Nodes sit on a 3-D grid shaped like ``aspect`` with about ``rows / 3`` points; every node is
    coupled to the nodes of a fixed neighbourhood stencil (nearest shells first, offsets in
    +/- pairs) whose size is chosen so the exact nonzero count, boundary included, is closest to
    ``nnz``.  Each coupled node pair is a dense 3 x 3 block (three displacement components per
    node); blocks are ``-s_ij M`` with ``s_ij = s_ji`` random and ``M`` symmetric, and diagonal
    blocks dominate, so the matrix is symmetric with a 3 x 3 block structure.
    """
    rng = np.random.default_rng(seed)
    aspect = np.asarray(aspect, dtype=np.float64)
    scale = (rows / 3 / aspect.prod()) ** (1 / 3)
    dims = np.maximum(2, np.round(aspect * scale)).astype(np.int64)
    shells = _shell_offsets()
    per_offset = np.prod(np.maximum(dims[None, :] - np.abs(shells), 0), axis=1)
    stencil_nnz = 9 * np.cumsum(per_offset)[::2]  # stencils of 1, 3, 5, ... offsets
    size = 1 + 2 * int(np.argmin(np.abs(stencil_nnz - nnz)))
    node, k, _, linear = _stencil_graph(dims, shells[:size])
    n_nodes = int(dims.prod())
    # symmetric pair weights: entry (i, i + o) uses the draw of the pair's lower node
    centre = int(np.flatnonzero(linear == 0)[0])
    partner = np.array([int(np.flatnonzero(linear == -v)[0]) for v in linear])
    pair = np.minimum(np.arange(size), partner)
    weights = rng.uniform(0.5, 1.5, (n_nodes, size))
    lower = np.where(linear[k] < 0, node + linear[k], node)
    s = weights[lower, pair[k]]
    row_sum = np.bincount(node, weights=np.where(k == centre, 0.0, s), minlength=n_nodes)
    s = np.where(k == centre, row_sum[node] + 1.0, -s)
    off = np.array([[1.0, 0.3, 0.2], [0.3, 1.0, 0.3], [0.2, 0.3, 1.0]])
    data = s[:, None, None] * off[None]
    indptr = np.concatenate(([0], np.cumsum(np.bincount(node, minlength=n_nodes))))
    indices = node + linear[k]
    A = sp.bsr_array((data, indices, indptr), shape=(3 * n_nodes, 3 * n_nodes)).tocsr()
    A.has_canonical_format = True
    return A


def _fem_skfem(rows: int, nnz: int, aspect):
    """3-D linear elasticity assembled by scikit-fem on ``MeshTet.init_tensor`` (a box shaped
    like ``aspect``, six tetrahedra per cube), or None when neither P1 nor P2 elements give
    nonzeros per row near the target.  Raises ImportError without scikit-fem.

    The element is whichever of P1 (~42 per row) and P2 (~82 per row) is nearer the target, if
    within 18% (of the Williams set: Spheres with P2, Harbor with P1; the others fall back to
    the grid substitute).  The mesh is sized between the row and nonzero targets, and the result
    is dropped (grid substitute instead) if its rows or nonzeros miss them by more than 19%.  Degrees of
    freedom are renumbered node by node (x, y, z of a node adjacent), the matrix is symmetrised
    exactly, and every coupled node pair is stored as a full 3 x 3 block (explicit zeros kept).
    """
    from skfem import Basis, ElementTetP1, ElementTetP2, ElementVector, MeshTet, asm
    from skfem.models.elasticity import lame_parameters, linear_elasticity

    target = nnz / rows
    name = min(_SKFEM_PER_ROW, key=lambda e: abs(_SKFEM_PER_ROW[e] - target))
    if abs(_SKFEM_PER_ROW[name] - target) > 0.18 * target:
        return None
    aspect = np.asarray(aspect, dtype=np.float64)

    def nodes(c):  # vertices (+ edges for P2) of an a x b x c box of cubes, six tets per cube
        a, b, d = c
        verts = (a + 1) * (b + 1) * (d + 1)
        if name == "P1":
            return verts
        axis = a * (b + 1) * (d + 1) + (a + 1) * b * (d + 1) + (a + 1) * (b + 1) * d
        faces = a * b * (d + 1) + a * (b + 1) * d + (a + 1) * b * d
        return verts + axis + faces + a * b * d

    # aim between the row and nonzero targets, since the element fixes the nonzeros per row
    want = rows * np.sqrt(target / _SKFEM_PER_ROW[name])
    base = (want / 3 / aspect.prod() / (1 if name == "P1" else 8)) ** (1 / 3)
    cells = {tuple(int(max(1, r(a * s))) for a, r in zip(aspect, rounding))
             for s in np.linspace(0.5, 1.5, 200) * base
             for rounding in itertools.product((np.floor, np.ceil), repeat=3)}
    cells = min(sorted(cells), key=lambda c: abs(3 * nodes(c) - want))
    mesh = MeshTet.init_tensor(*(np.linspace(0.0, a, c + 1) for a, c in zip(aspect, cells)))
    element = ElementTetP1() if name == "P1" else ElementTetP2()
    basis = Basis(mesh, ElementVector(element))
    K = sp.csr_array(asm(linear_elasticity(*lame_parameters(1.0, 0.3)), basis))
    node_dofs = basis.nodal_dofs
    if name == "P2":
        node_dofs = np.hstack((node_dofs, basis.edge_dofs))
    perm = np.asarray(node_dofs).T.ravel()  # dofs of one node adjacent
    K = K[perm][:, perm]
    K = sp.csr_array((K + K.T) * 0.5)
    K.sum_duplicates()
    A = sp.bsr_array(K, blocksize=(3, 3)).tocsr()
    A.sum_duplicates()
    if max(abs(A.shape[0] / rows - 1), abs(A.nnz / nnz - 1)) > 0.19:  # the estimate was too hopeful
        return None
    return A


def fem(rows: int, nnz: int, aspect=(1, 1, 1), seed: int = 0, backend: str = "grid") -> sp.csr_array:
    """An FEM-class matrix: 3-D linear elasticity, 3 x 3 blocks per coupled node pair, symmetric.

    ``backend="grid"`` (default) builds the structured substitute of :func:`_fem_grid`, the same in every
    install; ``"skfem"`` assembles with scikit-fem (an ImportError naming it without it).  There is no
    "whichever is installed": that gave one suite matrix two sets of rows and values in two installs.
    """
    if backend not in ("skfem", "grid"):
        raise ValueError(f"unknown FEM backend {backend!r}; choose grid or skfem")
    if backend == "grid":
        return _fem_grid(rows, nnz, aspect, seed)
    try:
        A = _fem_skfem(rows, nnz, aspect)
    except ImportError as exc:
        raise ImportError("backend='skfem' needs scikit-fem, which is not installed (pip install scikit-fem); "
                          "backend='grid' needs nothing") from exc
    if A is None:
        raise ValueError(f"scikit-fem elements cannot reach {nnz / rows:.1f} nonzeros per row")
    return A


def fem_spheres(backend: str = "grid") -> sp.csr_array:
    """FEM/Spheres: 3-D elasticity, concentric spheres; 83,334 rows, 6.0M nonzeros (72/row), cube."""
    return fem(83_334, 6_010_480, (1, 1, 1), seed=3, backend=backend)


def fem_cantilever(backend: str = "grid") -> sp.csr_array:
    """FEM/Cantilever: 3-D elasticity of a beam; 62,451 rows, 4.0M nonzeros (64/row), 4:1:1 box."""
    return fem(62_451, 4_007_383, (4, 1, 1), seed=4, backend=backend)


def wind_tunnel(backend: str = "grid") -> sp.csr_array:
    """Wind Tunnel (pwtk class): 3-D structural FEM; 217,918 rows, 11.6M nonzeros (53/row), 3:1:1."""
    return fem(217_918, 11_634_424, (3, 1, 1), seed=5, backend=backend)


def fem_harbor(backend: str = "grid") -> sp.csr_array:
    """FEM/Harbor: 3-D FEM of a harbour basin; 46,835 rows, 2.37M nonzeros (51/row), flat 3:3:1."""
    return fem(46_835, 2_374_001, (3, 3, 1), seed=6, backend=backend)


def fem_ship(backend: str = "grid") -> sp.csr_array:
    """FEM/Ship: 3-D FEM of a ship section; 140,874 rows, 7.8M nonzeros (55/row), 5:1.5:1 box."""
    return fem(140_874, 7_813_404, (5, 1.5, 1), seed=7, backend=backend)


def fem_accelerator(backend: str = "grid") -> sp.csr_array:
    """FEM/Accelerator: FEM of an accelerator cavity; 121,192 rows, 2.6M nonzeros (22/row), 1:1:4."""
    return fem(121_192, 2_624_331, (1, 1, 4), seed=8, backend=backend)


# --------------------------------------------------------------------------- lattice and Markov


def qcd(seed: int = 9) -> sp.csr_array:
    """QCD: lattice gauge theory, perfectly regular; 49,152 rows, exactly 39 entries per row.

    Three colour components per site of a periodic 16 x 16 x 8 x 8 lattice (16,384 sites).  Each
    site couples through a dense 3 x 3 colour block to itself, its 8 nearest neighbours and the
    4 sites three steps away along the two long axes (a Naik-like term): 13 blocks, 39 entries.
    """
    rng = np.random.default_rng(seed)
    dims = np.array([16, 16, 8, 8])
    coords = np.indices(dims).reshape(4, -1)
    steps = [np.zeros(4, dtype=np.int64)]
    for axis, reach in ((0, (1, 3)), (1, (1, 3)), (2, (1,)), (3, (1,))):
        for r in reach:
            for sign in (1, -1):
                e = np.zeros(4, dtype=np.int64)
                e[axis] = sign * r
                steps.append(e)
    steps = np.array(steps)  # 13 x 4
    neighbour = np.ravel_multi_index((coords[:, :, None] + steps.T[:, None, :]) % dims[:, None, None], dims)
    neighbour = np.sort(neighbour, axis=1)  # sites x 13, sorted
    cols = (3 * neighbour[:, :, None] + np.arange(3)).reshape(len(neighbour), 39)
    cols = np.repeat(cols, 3, axis=0)  # the three colour rows of a site share the pattern
    n = cols.shape[0]
    return _csr(np.arange(n + 1) * 39, cols.ravel(), (n, n), _values(rng, cols.size))


def epidemiology(seed: int = 10) -> sp.csr_array:
    """Epidemiology: a 2-D Markov chain (generator matrix) on a 675 x 779 grid of states.

    State ``(s, i)`` moves to ``(s, i - 1)`` (recovery), ``(s - 1, i + 1)`` (infection) and
    ``(s + 1, 0)`` (a reset whose offset ``779 - i`` varies with the state): three diagonals
    carry three quarters of the ~4 entries per row, the rest spread over ~780 diagonals.
    Off-diagonal rates are positive; each diagonal entry is minus its row's total rate.
    """
    rng = np.random.default_rng(seed)
    ns, ni = 675, 779
    n = ns * ni
    r = np.arange(n)
    s, i = r // ni, r % ni
    cols = np.stack((r - ni + 1, r - 1, r, r + ni - i), axis=1)  # already sorted per row
    ok = np.stack(((s > 0) & (i < ni - 1), i > 0, np.ones(n, dtype=bool), s < ns - 1), axis=1)
    rates = np.where(ok, rng.uniform(0.1, 1.0, cols.shape), 0.0)
    rates[:, 2] = -rates.sum(axis=1)
    indptr = np.concatenate(([0], np.cumsum(ok.sum(axis=1))))
    return _csr(indptr, cols[ok], (n, n), rates[ok])


# --------------------------------------------------------------------------- irregular


def economics(seed: int = 11) -> sp.csr_array:
    """Economics (macroeconomic model class): irregular and unsymmetric, about 6 per row.

    A diagonal, sparse coupling inside sectors (blocks of 20-400 rows, ~2.5 per row), a lag to
    the previous period (column ``i - 10,325``, half the rows), and scattered entries anywhere
    with heavy-tailed per-row counts (a few rows carry dozens).
    """
    n = 206_500
    rng = np.random.default_rng(seed)
    edges = _blocks(rng, n, 20, 400)
    block = _block_of(edges, n)
    lo, hi = edges[block], edges[block + 1]
    rows = np.arange(n)
    lag = 10_325
    scatter = rng.exponential(1.85, n) * np.where(rng.random(n) < 0.01, 20.0, 1.0)
    parts = (_diagonal(rng, n),
             _bernoulli_rows(rng, lo, hi, 2.5 / (hi - lo), (n, n)),
             _bernoulli_rows(rng, rows - lag, np.where(rows >= lag, rows - lag + 1, 0), 0.5, (n, n)),
             _bernoulli_rows(rng, 0, n, scatter / n, (n, n)))
    return sp.csr_array(sum(parts[1:], parts[0]))


def circuit(seed: int = 12, n: int = 170_998) -> sp.csr_array:
    """Circuit (scircuit class): mostly short rows plus a few very dense rows and columns.

    Each node couples to ~1.6 later nodes, mostly close by (windows of 4 to 1,024 rows), mirrored
    to a symmetric pattern (~3 neighbours), plus a diagonal; 12 supply-net nodes couple to
    1,500-25,000 random nodes each: a handful of very dense rows and the matching dense columns.
    ``n`` (default: the real 170,998 rows) resizes it; hub lengths scale with ``n`` so the hubs
    keep their share of the nonzeros.
    """
    scale = n / 170_998
    rng = np.random.default_rng(seed)
    rows = np.arange(n)
    window = rng.choice(np.array([4, 16, 64, 1024]), n, p=[0.4, 0.3, 0.2, 0.1])
    upper = _bernoulli_rows(rng, rows + 1, rows + 1 + window, np.minimum(1.0, 1.6 / window), (n, n))
    hub_rows = rng.choice(n, 12, replace=False)
    hub_len = np.zeros(n)
    hub_len[hub_rows] = np.exp(rng.uniform(np.log(1500 * scale), np.log(25_000 * scale), 12))
    hubs = _bernoulli_rows(rng, 0, n, hub_len / n, (n, n))
    return sp.csr_array(_diagonal(rng, n) + upper + upper.T + hubs + hubs.T)


def webbase(seed: int = 13, n: int = 1_000_005) -> sp.csr_array:
    """Webbase (web crawl class): power-law row lengths, very uneven, unsymmetric; ~3.1 per row.

    Row lengths follow a Zipf law (capped at 4,700, like the real matrix's longest row).  Every
    page links to one page within 8 of it; of its further links 70% land near it (same-site
    pages) and 30% on ``[0, g)`` with ``g`` log-uniform, so low-numbered pages collect many
    in-links.  ``n`` (default: the real 1,000,005 rows) resizes it; the lower end of ``g`` (1,000
    at full size) scales with ``n``.  The cap does not: it truncates the row-length law, and
    keeping it keeps the per-row statistics (mean, longest row) of the full matrix.
    """
    rng = np.random.default_rng(seed)
    rows = np.arange(n)
    step = rng.integers(1, 9, n) * rng.choice(np.array([-1, 1]), n)
    step = np.where((rows + step < 0) | (rows + step >= n), -step, step)
    first = _csr(np.arange(n + 1), rows + step, (n, n), _values(rng, n))
    more = np.minimum(rng.zipf(2.2, n), 4700).astype(np.float64) - 1
    w = 8 + 2 * more
    local = _bernoulli_rows(rng, rows - w, rows + w, 0.7 * more / (2 * w), (n, n))
    g = np.exp(rng.uniform(np.log(1000 * (n / 1_000_005)), np.log(n), n))
    far = _bernoulli_rows(rng, 0, g, 0.3 * more / g, (n, n))
    return sp.csr_array(first + local + far)


def lp(seed: int = 14, m: int = 4284, n: int = 1_092_610, nnz: int = 11_279_748) -> sp.csr_array:
    """LP (rail4284 class): 4,284 x 1,092,610 set-covering constraints, very uneven rows.

    Row lengths are log-normal (sigma 1.3) scaled to 11.3M nonzeros in all (2,633 per row on
    average, from tens to tens of thousands); each row keeps columns uniformly at random.
    ``m`` x ``n`` with about ``nnz`` nonzeros resizes it (defaults: the real matrix).
    """
    rng = np.random.default_rng(seed)
    weight = rng.lognormal(0.0, 1.3, m)
    length = np.minimum(weight * (nnz / weight.sum()), 0.5 * n)
    return _bernoulli_rows(rng, 0, n, length / n, (m, n))


#: (short name, class, function) for each Williams et al. matrix, in Bell & Garland's order
MATRICES = (
    ("dense", "dense", dense),
    ("protein", "protein: dense blocks along the diagonal", protein),
    ("fem_spheres", "FEM: 3-D elasticity, 3x3 blocks", fem_spheres),
    ("fem_cantilever", "FEM: 3-D elasticity, 3x3 blocks", fem_cantilever),
    ("wind_tunnel", "FEM: 3-D elasticity, 3x3 blocks", wind_tunnel),
    ("fem_harbor", "FEM: 3-D elasticity, 3x3 blocks", fem_harbor),
    ("qcd", "QCD: regular 4-D lattice, 39 per row", qcd),
    ("fem_ship", "FEM: 3-D elasticity, 3x3 blocks", fem_ship),
    ("economics", "economics: irregular, unsymmetric", economics),
    ("epidemiology", "epidemiology: 2-D Markov chain, 3 main diagonals", epidemiology),
    ("fem_accelerator", "FEM: 3-D elasticity, 3x3 blocks", fem_accelerator),
    ("circuit", "circuit: short rows, a few dense rows and columns", circuit),
    ("webbase", "web graph: power-law rows", webbase),
    ("lp", "LP: wide, very uneven rows", lp),
)

#: Family of each matrix (:mod:`.families`): heavy-tailed rows or scattered columns are power-law.
FAMILIES = {
    "dense": REGULAR, "protein": REGULAR, "fem_spheres": REGULAR, "fem_cantilever": REGULAR,
    "wind_tunnel": REGULAR, "fem_harbor": REGULAR, "qcd": REGULAR, "fem_ship": REGULAR,
    "economics": POWER_LAW, "epidemiology": REGULAR, "fem_accelerator": REGULAR, "circuit": POWER_LAW,
    "webbase": POWER_LAW, "lp": POWER_LAW,
}
