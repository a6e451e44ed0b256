"""Vertex partitioners for the PKT format (Bell & Garland §3.6, Fig. 12-13).

The graph has ``N = max(m, n)`` vertices and an edge ``{i, j}`` for every stored entry
``(i, j)`` with ``i != j`` (the pattern of ``A + A^T`` on the N x N square).  Partitioners
are host algorithms, so this module works in NumPy/SciPy and moves its results to the
matrix's array module at the end.
"""

from __future__ import annotations

import numpy as np

from ..arrays import to_numpy

PARTITIONERS = ("auto", "metis", "rcm")
METIS_HINT = "pip install 'cocktail[pkt]'"


def _pymetis(required: bool):
    """The ``pymetis`` module, or ``None`` when it is missing and not ``required``."""
    try:
        import pymetis
    except ImportError as exc:
        if required:
            raise ImportError(
                f"partitioner='metis' needs pymetis, which is not installed; install the pkt extra "
                f"with {METIS_HINT}, or use partitioner='rcm'"
            ) from exc
        return None
    return pymetis


def resolve_partitioner(partitioner: str) -> str:
    """``'metis'`` or ``'rcm'``: ``'auto'`` is rcm in every install.  It once picked METIS where pymetis imported,
    so one matrix stored as pkt held other packets, and its products other rounding, in another install: METIS is
    asked for by name (a clear ImportError without pymetis)."""
    if not isinstance(partitioner, str) or partitioner not in PARTITIONERS:
        raise ValueError(f"partitioner must be one of {', '.join(map(repr, PARTITIONERS))}, got {partitioner!r}")
    if partitioner == "auto":
        return "rcm"
    if partitioner == "metis":
        _pymetis(required=True)
    return partitioner


def symmetric_graph(csr):
    """The pattern of ``A + A^T`` on ``N = max(m, n)`` vertices, diagonal removed, as a SciPy CSR."""
    import scipy.sparse as sp

    nv = max(csr.shape)
    rows = to_numpy(csr.row_ids()).astype(np.int64)
    cols = to_numpy(csr.indices).astype(np.int64)
    off = rows != cols
    rows, cols = rows[off], cols[off]
    both_r = np.concatenate([rows, cols])
    both_c = np.concatenate([cols, rows])
    graph = sp.coo_array((np.ones(both_r.shape[0], dtype=np.int8), (both_r, both_c)), shape=(nv, nv)).tocsr()
    graph.sum_duplicates()
    return graph


def _chunks(order, part, nparts: int, budget: int):
    """Pointers that cut each part (contiguous in ``order``) into chunks of at most ``budget``."""
    sizes = np.bincount(part[order], minlength=nparts)
    sizes = sizes[sizes > 0]
    nchunks = -(-sizes // budget)
    # chunk c of a part of size s has size min(budget, s - c * budget)
    part_of_chunk = np.repeat(np.arange(sizes.shape[0]), nchunks)
    first_chunk = np.cumsum(nchunks) - nchunks
    within = np.arange(part_of_chunk.shape[0]) - first_chunk[part_of_chunk]
    chunk_sizes = np.minimum(budget, sizes[part_of_chunk] - within * budget)
    ptr = np.zeros(chunk_sizes.shape[0] + 1, dtype=np.int64)
    np.cumsum(chunk_sizes, out=ptr[1:])
    return ptr


def _metis_parts(graph, nparts: int):
    """Part number of every vertex from pymetis (k-way, minimising the edge cut)."""
    nv = graph.shape[0]
    if nparts <= 1 or nv <= 1:
        return np.zeros(nv, dtype=np.int64)
    pymetis = _pymetis(required=True)
    result = pymetis.part_graph(nparts, xadj=graph.indptr.astype(np.int64), adjncy=graph.indices.astype(np.int64))
    part = np.asarray(result[1], dtype=np.int64)
    if part.shape != (nv,) or (nv and int(part.min()) < 0):
        raise RuntimeError(f"pymetis returned {part.shape} part numbers for {nv} vertices")
    return part


def partition(csr, packet_rows: int, method: str):
    """Order the vertices so that packets of at most ``packet_rows`` are contiguous.

    ``method`` is ``'metis'`` (``ceil(N / packet_rows)`` parts; a part larger than
    ``packet_rows`` is cut into contiguous chunks) or ``'rcm'`` (reverse Cuthill-McKee
    order cut into chunks of ``packet_rows``).  Returns ``(perm, packet_ptr)`` as int64
    arrays of ``csr``'s array module: packet ``p`` owns ``perm[packet_ptr[p]:packet_ptr[p+1]]``.
    """
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    nv = max(csr.shape)
    xp = csr.xp
    if nv == 0:
        return xp.zeros(0, dtype=xp.int64), xp.zeros(1, dtype=xp.int64)
    graph = symmetric_graph(csr)
    if method == "rcm":
        order = np.asarray(reverse_cuthill_mckee(graph, symmetric_mode=True), dtype=np.int64)
        part = np.empty(nv, dtype=np.int64)
        part[order] = np.arange(nv) // packet_rows
        nparts = -(-nv // packet_rows)
    elif method == "metis":
        nparts = -(-nv // packet_rows)
        part = _metis_parts(graph, nparts)
        nparts = int(part.max()) + 1
        order = np.argsort(part, kind="stable")  # a part's vertices in ascending order
    else:
        raise ValueError(f"unknown partitioner {method!r}; expected 'metis' or 'rcm'")
    ptr = _chunks(order, part, nparts, packet_rows)
    return xp.asarray(order), xp.asarray(ptr)
