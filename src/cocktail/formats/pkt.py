"""PKT: the packet format (Bell & Garland §3.6 and §4.6, Fig. 12-14 and 26).

The ``N = max(m, n)`` vertices are partitioned into packets of at most ``packet_rows``
vertices (METIS or reverse Cuthill-McKee on the pattern of ``A + A^T``).  An entry whose
row and column lie in the same packet is "inside" it: it is stored in the packet with a
16-bit local row and a 16-bit local column packed in one 32-bit word, and the kernel reads
its ``x`` value from the packet's shared-memory copy ``x_local``.  Every other entry goes
to a COO remainder.  Each packet's rows are spread over ``threads_per_packet`` lanes by a
greedy least-occupied-lane rule, and the lanes are stored column-major.

``packet_rows`` and ``threads_per_packet`` have no defaults here: they come from rules
(:mod:`cocktail.tuning.pkt`), which ``SparseMatrix`` applies through
:func:`cocktail.tuning.format_rules.format_params`.  The format only enforces the limits of its
layout, ``MAX_PACKET_ROWS`` and ``MAX_THREADS_PER_PACKET``.
"""

from __future__ import annotations

import numpy as np

from .. import _memory
from ..arrays import get_xp, row_ids, stable_argsort, to_numpy
from .padding import DEFAULT_MAX_FILL, check_fill
from ._params import int_param, max_fill_param, pointer_dtype
from ._partition import partition, resolve_partitioner
from .base import SparseFormat
from .coo import COO
from .csr import CSR

#: ``index`` value of an empty slot: the kernel skips it (it never touches x_local or y_local).
SENTINEL = 0xFFFFFFFF
LOCAL_BITS = 16
LOCAL_MASK = (1 << LOCAL_BITS) - 1
#: Local row and column share one 32-bit word (16 bits each) and 0xFFFFFFFF is the empty
#: slot, so a packet holds at most 65535 vertices.
MAX_PACKET_ROWS = LOCAL_MASK
#: A packet is processed by one CUDA thread block, so it has at most this many lanes.
MAX_THREADS_PER_PACKET = 1024

_RULES = {
    "packet_rows": "the shared-memory rule cocktail.tuning.pkt.default_packet_rows",
    "threads_per_packet": "the rule cocktail.tuning.pkt.default_threads_per_packet",
}


def resolve_pkt_params(params: dict) -> dict:
    """Check ``packet_rows`` and ``threads_per_packet`` (both required) and resolve ``partitioner``.

    A missing ``packet_rows`` or ``threads_per_packet`` is a ``TypeError``: the format holds
    no rule for them; ``SparseMatrix`` and ``cocktail.tuning.format_rules.format_params`` fill them in.
    """
    out = dict(params)
    for key, limit in (("packet_rows", MAX_PACKET_ROWS), ("threads_per_packet", MAX_THREADS_PER_PACKET)):
        if out[key] is None:
            raise TypeError(
                f"pkt needs {key}=: the format has no default; SparseMatrix and "
                f"cocktail.tuning.format_rules.format_params fill it in from {_RULES[key]}"
            )
        out[key] = int_param("pkt", key, out[key], 1, limit)
    out["partitioner"] = resolve_partitioner(out["partitioner"])
    out["max_fill"] = max_fill_param("pkt", out["max_fill"])
    return out


def pack_lanes(counts, packet_ptr, pkt_of_pos, lanes: int):
    """Greedy least-occupied-lane packing of every packet's rows (Bell & Garland Fig. 14).

    ``counts[v]`` is the number of inside entries of the row at perm position ``v``.  Within
    a packet, rows with entries are taken in descending count (ties: lower local row first)
    and each goes to the lane with the fewest entries so far (ties: lowest lane).  Returns
    ``(lane, start, width)``: the lane of each position, where its entries start in that
    lane, and each packet's largest lane load.

    All packets advance together, one row each per round, so the Python loop runs once per
    row of the tallest packet (at most ``packet_rows`` rounds), each round costing
    O(active packets * lanes) array work.
    """
    xp = get_xp(counts)
    npk = packet_ptr.shape[0] - 1
    nv = counts.shape[0]
    order = stable_argsort(-counts)
    order = order[stable_argsort(pkt_of_pos[order])]
    order = order[counts[order] > 0]
    nrows = xp.bincount(pkt_of_pos[order], minlength=npk)
    seg_start = xp.cumsum(nrows) - nrows
    # Packets by decreasing number of rows: those still active in round r are a prefix.
    nrows_h = to_numpy(nrows)
    by_size = np.argsort(-nrows_h, kind="stable")
    ascending = np.sort(nrows_h)
    depth = int(ascending[-1]) if npk else 0
    active = npk - np.searchsorted(ascending, np.arange(depth), side="right")
    first = seg_start[xp.asarray(by_size)]
    loads = xp.zeros((npk, lanes), dtype=xp.int64)
    lane = xp.zeros(nv, dtype=xp.int64)
    start = xp.zeros(nv, dtype=xp.int64)
    every = xp.arange(npk)
    for r in range(depth):
        k = int(active[r])
        rows_r = order[first[:k] + r]
        pick = xp.argmin(loads[:k], axis=1)
        ar = every[:k]
        start[rows_r] = loads[ar, pick]
        lane[rows_r] = pick
        loads[ar, pick] += counts[rows_r]
    width = xp.zeros(npk, dtype=xp.int64)
    width[xp.asarray(by_size)] = loads.max(axis=1)
    return lane, start, width


#: int64 arrays of one entry per vertex that a build holds besides ``perm``: positions, packet of
#: each position, inside-entry counts, lanes and lane starts.
_VERTEX_WORK_ARRAYS = 5


def _require_vertices(csr, nv: int) -> None:
    """Refuse, before partitioning, a matrix whose ``max(m, n)`` vertices do not fit in free memory.

    PKT permutes every vertex, so it is O(max(m, n)) whatever the entry count (a 3 x 3e9 matrix
    needs 24 GB for ``perm`` alone); so is the ``x`` of any product of that matrix.
    """
    _memory.require(f"format 'pkt' of a {_memory.shape_text(csr.shape)} matrix with {csr.nnz:,} entries",
                    [(f"its permutation of max(rows, cols) = {nv:,} vertices", nv * csr.index_dtype.itemsize),
                     ("per-vertex work arrays", nv * 8 * _VERTEX_WORK_ARRAYS)], _memory.device_of(csr.data))


class PKT(SparseFormat):
    """Packets of the vertex partition plus a COO remainder (Bell & Garland §3.6).

    Arrays (``P`` packets, ``T = threads_per_packet`` lanes, ``N = max(m, n)``):

    - ``perm`` (N,) index dtype: the vertices in packet order;
    - ``packet_ptr`` (P+1,) index dtype: packet ``p`` owns ``perm[packet_ptr[p]:packet_ptr[p+1]]``;
      a vertex's local index is its position minus ``packet_ptr[p]``;
    - ``packet_offset`` (P+1,) index dtype, int64 when the slot count needs it: packet ``p``
      has ``W_p = (packet_offset[p+1] - packet_offset[p]) / T`` slots per lane, and slot
      ``(i, lane)`` at ``packet_offset[p] + i*T + lane`` (column-major);
    - ``index`` (slots,) uint32: ``(local_row << 16) | local_col``, ``0xFFFFFFFF`` when empty;
    - ``data`` (slots,) values, 0 in empty slots;
    - ``rest``: a row-sorted COO of the entries outside every packet, original indices.
    """

    name = "pkt"
    order = 110
    colour = "#5d4037"
    family = "ell"
    summary = "Meshes and other local structure: each packet of rows keeps its x in shared memory."
    traffic = ("the row permutation and packet pointers, a packed 4-byte index and a value per packet"
               " slot (empty slots included), x read once into shared memory, y written once, plus "
               "the coo remainder")
    array_fields = ("perm", "packet_ptr", "packet_offset", "index", "data")
    part_fields = ("rest",)
    defaults = {"packet_rows": None, "threads_per_packet": None, "partitioner": "auto",
                "max_fill": DEFAULT_MAX_FILL}

    @classmethod
    def from_csr(cls, csr: CSR, **params):
        """Partition the vertices, split the entries, and pack each packet's rows into lanes."""
        params = resolve_pkt_params(cls.resolve_params(params))
        budget, lanes = params["packet_rows"], params["threads_per_packet"]
        xp = csr.xp
        idt = csr.index_dtype
        nv = max(csr.shape)
        _require_vertices(csr, nv)
        perm, packet_ptr = partition(csr, budget, params["partitioner"])
        npk = packet_ptr.shape[0] - 1
        pos = xp.empty(nv, dtype=xp.int64)
        pos[perm] = xp.arange(nv, dtype=xp.int64)
        pkt_of_pos = row_ids(packet_ptr, nv).astype(xp.int64)

        rows = csr.row_ids()
        prow = pos[rows.astype(xp.int64)]
        pcol = pos[csr.indices.astype(xp.int64)]
        inside = pkt_of_pos[prow] == pkt_of_pos[pcol]
        outside = ~inside
        rest = COO.from_entries(rows[outside], csr.indices[outside], csr.data[outside], csr.shape, idt,
                                dtype=csr.dtype)

        prow, pcol, vals = prow[inside], pcol[inside], csr.data[inside]
        order = stable_argsort(pcol)
        order = order[stable_argsort(prow[order])]  # by packet, local row, local column
        prow, pcol, vals = prow[order], pcol[order], vals[order]
        counts = xp.bincount(prow, minlength=nv) if nv else xp.zeros(0, dtype=xp.int64)
        lane, start, width = pack_lanes(counts, packet_ptr, pkt_of_pos, lanes)

        slots = width * lanes
        total = int(slots.sum())
        check_fill(cls.name, total + rest.nnz, csr, params["max_fill"])
        odt = pointer_dtype(idt, total)
        packet_offset = xp.zeros(npk + 1, dtype=odt)
        packet_offset[1:] = xp.cumsum(slots).astype(odt)

        rank = xp.arange(prow.shape[0], dtype=xp.int64) - (xp.cumsum(counts) - counts)[prow]
        owner = pkt_of_pos[prow]
        base = packet_ptr[owner]
        slot = packet_offset[owner].astype(xp.int64) + (start[prow] + rank) * lanes + lane[prow]
        index = xp.full(total, SENTINEL, dtype=xp.uint32)
        index[slot] = (((prow - base) << LOCAL_BITS) | (pcol - base)).astype(xp.uint32)
        data = xp.zeros(total, dtype=csr.data.dtype)
        data[slot] = vals
        return cls(csr.shape, csr.dtype, idt, csr.nnz, params, perm=perm.astype(idt),
                   packet_ptr=packet_ptr.astype(idt), packet_offset=packet_offset, index=index, data=data,
                   rest=rest)

    def packet_entries(self):
        """``(row, col, value)`` in original indices of every filled packet slot, in slot order."""
        xp = self.xp
        total = self.index.shape[0]
        owner = row_ids(self.packet_offset, total).astype(xp.int64)
        keep = self.index != SENTINEL
        packed = self.index[keep].astype(xp.int64)
        base = self.packet_ptr.astype(xp.int64)[owner[keep]]
        perm = self.perm.astype(xp.int64)
        return perm[base + (packed >> LOCAL_BITS)], perm[base + (packed & LOCAL_MASK)], self.data[keep]

    def to_csr(self) -> CSR:
        """Decode the packets to original indices and merge them with the remainder."""
        xp = self.xp
        rows, cols, vals = self.packet_entries()
        rows = xp.concatenate([rows, self.rest.row.astype(xp.int64)])
        cols = xp.concatenate([cols, self.rest.col.astype(xp.int64)])
        vals = xp.concatenate([vals, self.rest.data])
        return CSR.from_triplets(rows, cols, vals, self.shape, self.index_dtype, self.dtype)

    @property
    def npackets(self) -> int:
        """Number of packets ``P``."""
        return int(self.packet_ptr.shape[0]) - 1

    @property
    def stored_slots(self) -> int:
        return int(self.index.shape[0]) + self.rest.stored_slots

    def spmv_bytes(self, dtype=None) -> int:
        """``N*idx + (P+1)*(idx + off) + n*val + slots*(4 + val) + m*val + rest``.

        ``perm`` (N entries) and both pointer arrays are read once; each packet stages its
        vertices below ``n`` into ``x_local`` (``n`` values in all); every slot, empty ones
        included, reads a 4-byte packed index and a value; each row's ``y`` is written once
        from ``y_local``.  ``rest`` is the COO remainder's model with its ``y`` write replaced
        by a read and a write of the rows it adds into.  ``off`` is the item size of
        ``packet_offset``.  Reads of x_local/y_local (shared memory) are free.
        """
        val, idx = self._sizes(dtype)
        m, n = self.shape
        nv = max(m, n)
        ptrs = (self.npackets + 1) * (idx + self.packet_offset.dtype.itemsize)
        slots = int(self.index.shape[0])
        rest = self.rest.spmv_bytes(dtype) - m * val + self.rest.y_bytes(val, accumulate=True)
        return nv * idx + ptrs + n * val + slots * (4 + val) + m * val + rest

    def x_reads(self) -> int:
        """``n`` (each vertex below ``n`` staged once into ``x_local``) plus the remainder's."""
        return self.shape[1] + self.rest.x_reads()

    def y_bytes(self, val: int, accumulate: bool = False) -> int:
        """Every row from ``y_local``, then the remainder adding into the rows it touches."""
        return super().y_bytes(val, accumulate) + self.rest.y_bytes(val, accumulate=True)

    def describe(self) -> dict:
        xp = self.xp
        npk, lanes = self.npackets, self.params["threads_per_packet"]
        total = self.index.shape[0]
        keep = self.index != SENTINEL
        owner = row_ids(self.packet_offset, total).astype(xp.int64)[keep]
        local_row = self.index[keep].astype(xp.int64) >> LOCAL_BITS
        rows = int(xp.unique(owner * (LOCAL_MASK + 1) + local_row).shape[0]) if total else 0
        inside = self.nnz - self.rest.nnz
        return {
            "packets": npk,
            "vertices per packet (max)": self.params["packet_rows"],
            "threads per packet": lanes,
            "mean rows per lane": round(rows / (npk * lanes), 2) if npk else 0.0,
            "share of entries inside packets": round(inside / self.nnz, 3) if self.nnz else 1.0,
            "remainder entries": self.rest.nnz,
            "partitioner": self.params["partitioner"],
        }


FORMAT = PKT
