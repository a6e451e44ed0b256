"""The launch of csr_check.cu: whether a device CSR's row pointers and column indices hold, and whether its
columns rise within every row (the input is canonical), in one pass and one synchronisation where the checks
one CuPy operation at a time cost a dozen launches and two."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: Threads per block of the check's grid-stride loop.
BLOCK = 256


class CsrFacts(NamedTuple):
    """What one pass found: the pointers hold (start at 0, end at the entries, never fall), every column index is
    inside the matrix, and the columns rise within every row (meaningful only where the pointers hold)."""

    pointers_hold: bool
    indices_hold: bool
    rising: bool


def expressions() -> tuple[str, ...]:
    """The instantiations compiled: pointers and indices of one dtype, int32 or int64."""
    return ("csr_check<int>", "csr_check<long long>")


def device_facts(indptr, indices, data_entries: int, cols: int, launch) -> CsrFacts | None:
    """:class:`CsrFacts` of ``(indptr, indices)`` for a matrix of ``cols`` columns whose values hold
    ``data_entries``, by ``launch`` (:mod:`.helper_launch`'s protocol); None where the pass does not apply (the
    host path checks them): no launcher, pointers and indices of different dtypes or of neither int32 nor int64,
    or values of another length than the indices."""
    index = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}.get(np.dtype(indices.dtype))
    if launch is None or index is None or indptr.dtype != indices.dtype or data_entries != indices.shape[0]:
        return None
    from ..arrays import get_xp

    flags = get_xp(indices).zeros(3, dtype=np.uint32)
    rows, nnz = int(indptr.shape[0]) - 1, int(indices.shape[0])
    launch("csr_check", f"csr_check<{index}>", max(rows + 1, nnz), BLOCK,
           (indptr, indices, np.int64(rows), np.int64(nnz), np.int64(cols), flags))
    found = launch.fetch(flags)
    return CsrFacts(not found[0], not found[1], not found[2])
