"""The exchange plan of a row-partitioned matrix, made once at construction (one all-to-all and one all-to-allv).

Rank ``r`` owns the entries ``col_offsets[r]:col_offsets[r + 1]`` of ``x``.  The columns its rows use beyond those
(its *halo*) are listed once, sorted: grouped by owner, since owners own consecutive ranges.  Each rank tells
each owner which of its entries it needs; the owner keeps the list as the local positions it sends.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class HaloPlan:
    """Who sends what to whom, for one rank.

    ``halo_columns``: the global columns this rank receives, sorted (the off-diagonal block's column order);
    ``recv_counts[s]``: how many come from rank ``s`` (in rank order); ``send_positions``: local positions of
    ``x`` this rank sends, grouped by destination in rank order, ``send_counts[d]`` of them to rank ``d``.
    """

    halo_columns: np.ndarray
    recv_counts: np.ndarray
    send_positions: np.ndarray
    send_counts: np.ndarray

    @property
    def recv_size(self) -> int:
        """Entries of ``x`` this rank receives per product (per column of a block)."""
        return int(self.halo_columns.shape[0])

    @property
    def send_size(self) -> int:
        """Entries of ``x`` this rank sends per product (per column of a block)."""
        return int(self.send_positions.shape[0])

    def neighbours(self) -> tuple[list, list]:
        """``(sources, destinations)``: ``(rank, start, count)`` of every rank this one receives from and sends to,
        with the start of its part in the receive or send buffer."""
        return _ranges(self.recv_counts), _ranges(self.send_counts)


def _ranges(counts) -> list:
    return [(rank, int(start), int(count)) for rank, (start, count) in enumerate(zip(_displacements(counts), counts))
            if count]


def make_plan(halo_columns: np.ndarray, col_offsets: np.ndarray, rank: int, comm) -> HaloPlan:
    """The plan of this rank, whose off-diagonal columns are ``halo_columns`` (global, sorted, unique, none its own);
    collective over ``comm`` (an mpi4py communicator): every rank calls it once."""
    size = comm.Get_size()
    owners = np.searchsorted(col_offsets, halo_columns, side="right") - 1
    recv_counts = np.bincount(owners, minlength=size).astype(np.int64) if halo_columns.size else np.zeros(
        size, dtype=np.int64)
    if recv_counts[rank]:
        raise AssertionError("a halo column owned by this rank itself")  # pragma: no cover - the split prevents it
    send_counts = np.empty(size, dtype=np.int64)
    comm.Alltoall(recv_counts, send_counts)
    wanted = np.empty(int(send_counts.sum()), dtype=np.int64)
    comm.Alltoallv([np.ascontiguousarray(halo_columns, dtype=np.int64), (recv_counts, _displacements(recv_counts))],
                   [wanted, (send_counts, _displacements(send_counts))])
    return HaloPlan(np.asarray(halo_columns, dtype=np.int64), recv_counts, wanted - int(col_offsets[rank]),
                    send_counts)


def _displacements(counts) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
