"""SciPy sparse arrays over a format's own arrays, so the CPU executor can use SciPy's compiled matvec.

``scipy_matrix(fmt)`` answers a SciPy sparse array ``S`` with ``S @ X == A @ X`` (``X`` of shape
(n,) or (n, k)), or ``None`` for a format SciPy has no layout for.  What is shared and what is
copied, for a format on the host:

* ``csr`` -> ``csr_array`` sharing ``data``, ``indices`` and ``indptr``: no copy.  The arrays are
  read-only views; SciPy keeps them as they are (``copy=False``, any index dtype it accepts) and,
  the CSR being canonical, never needs to sort them for a product.
* ``coo`` -> ``coo_array`` sharing ``data``, ``row`` and ``col``: no copy.
* ``dia`` -> ``dia_array``: SciPy aligns a diagonal by column (``data[d, j] = A[j - off, j]``),
  Cocktail by row (``data[d, i] = A[i, i + off]``), so the values are copied once into SciPy's
  layout, ``(ndiag, L)`` with ``L = min(n, m + max offset)`` (:func:`dia_columns`: no row reaches
  a column past it, and SciPy reads ``data[d, j]`` only for ``j < L``); the offsets may be shared.
  That copy can still be far larger than the format: a 3 x 3,000,000,000 matrix with diagonals
  at offsets 0 and 2,000,000,000 stores 64 slots but would copy 4e9.  Where the copy holds more
  than :data:`DIA_MAX_COPY_RATIO` times the format's in-matrix slots (and at least
  ``_memory.PROBE_FLOOR`` bytes), or does not fit in free host memory, the answer is ``None``:
  the CPU executor then runs the reference product, one axpy per diagonal over its in-matrix
  rows, which copies nothing.
* ``bcsr`` -> ``bsr_array``: SciPy wants ``data`` as (nblocks, r, c) and block-column indices;
  ``indptr`` is ``row_ptr`` (shared).  The values are one transposed copy of ``data`` (r, nblocks, c),
  except for r == 1 where the transpose is already contiguous and is shared; the indices
  (``col // c``) are a copy except for c == 1.  SciPy's BSR cannot hold a partial block at the
  edge (its ``indptr`` has ``rows // r + 1`` entries and its matvec reads ``c`` x values for every
  block, past ``n`` in a partial last block column), so a shape that is not a multiple of the
  block gives ``None``.
* every other format -> ``None``.

SciPy quirk (1.17): a ``coo_array`` of one row multiplied by a 1-D vector returns a scalar, not
a (1,) array; pass ``X`` as (n, k) (as the reference executor does) to always get (m, k).

``scipy_copy_bytes(fmt)`` measures what was copied: the bytes of the SciPy array's own arrays
that share no memory with any array of the format.
"""

from __future__ import annotations

import numpy as np

from .. import _memory
from ..arrays import get_xp

#: SciPy's DIA copy may hold up to this many times the format's in-matrix slots (those a product
#: reads); past it, once the copy takes ``_memory.PROBE_FLOOR`` bytes, SciPy is not used (see above).
DIA_MAX_COPY_RATIO = 4


def _host(fmt):
    if fmt.xp is not np:
        raise TypeError(f"scipy_matrix needs a format on the host, got {fmt!r} (use fmt.to_xp(numpy))")


def _csr(fmt):
    import scipy.sparse as sp

    return sp.csr_array((fmt.data, fmt.indices, fmt.indptr), shape=fmt.shape, copy=False)


def _coo(fmt):
    import scipy.sparse as sp

    return sp.coo_array((fmt.data, (fmt.row, fmt.col)), shape=fmt.shape, copy=False)


def dia_columns(fmt) -> int:
    """Columns of SciPy's column-aligned copy of a DIA: ``min(n, m + max offset)``, 0 without diagonals.

    Row ``i < m`` of the diagonal at ``off`` lies in column ``i + off``, so no stored diagonal
    reaches column ``m + max offset``; SciPy's products read ``data[d, j]`` only for ``j < L``.
    """
    if not fmt.offsets.shape[0]:
        return 0
    m, n = fmt.shape
    return max(0, min(n, m + int(fmt.offsets.max())))


def dia_copy_fits(fmt) -> bool:
    """Whether SciPy's copy of the DIA ``fmt`` (``ndiag x dia_columns(fmt)`` values) is worth making: under
    ``_memory.PROBE_FLOOR`` bytes, or at most :data:`DIA_MAX_COPY_RATIO` times the in-matrix slots and
    free in host memory."""
    slots = int(fmt.offsets.shape[0]) * dia_columns(fmt)
    nbytes = slots * np.dtype(fmt.dtype).itemsize
    if nbytes < _memory.PROBE_FLOOR:
        return True
    return slots <= DIA_MAX_COPY_RATIO * fmt.x_reads() and _memory.fits(nbytes, "cpu")


def _dia(fmt):
    """SciPy's column-aligned copy: ``sdata[d, j] = data[d, j - off]`` for the in-matrix rows; None where
    the copy is not worth making (:func:`dia_copy_fits`)."""
    import scipy.sparse as sp

    if not dia_copy_fits(fmt):
        return None
    m, n = fmt.shape
    sdata = np.zeros((int(fmt.offsets.shape[0]), dia_columns(fmt)), dtype=fmt.dtype)
    for d, off in enumerate(fmt.offsets.tolist()):
        lo, hi = max(0, -off), min(m, n - off)  # the rows whose column lies inside the matrix
        if lo < hi:
            sdata[d, lo + off:hi + off] = fmt.data[d, lo:hi]
    return sp.dia_array((sdata, fmt.offsets), shape=fmt.shape, copy=False)


def _bcsr(fmt):
    import scipy.sparse as sp

    m, n = fmt.shape
    r, c = fmt.block
    if m % r or n % c:
        return None  # a partial edge block: SciPy's BSR cannot express it (see the module docstring)
    data = np.ascontiguousarray(fmt.data.transpose(1, 0, 2))  # (nblocks, r, c): a view when r == 1
    indices = fmt.col if c == 1 else fmt.col // fmt.col.dtype.type(c)
    return sp.bsr_array((data, indices, fmt.row_ptr), shape=fmt.shape, blocksize=(r, c), copy=False)


_BUILDERS = {"csr": _csr, "coo": _coo, "dia": _dia, "bcsr": _bcsr}


def scipy_matrix(fmt):
    """A SciPy sparse array computing ``A @ X`` with SciPy's compiled routines, or ``None``.

    ``None`` for a format SciPy has no layout for, a BCSR with a partial edge block, and a DIA
    whose SciPy copy would be far larger than the format or would not fit (:func:`dia_copy_fits`).
    ``fmt`` must be on the host.  See the module docstring for what is shared and copied.
    """
    _host(fmt)
    build = _BUILDERS.get(fmt.name)
    return None if build is None else build(fmt)


def _scipy_arrays(S) -> list:
    if S.format == "coo":
        return [S.data, *S.coords]
    if S.format == "dia":
        return [S.data, S.offsets]
    return [S.data, S.indices, S.indptr]


def scipy_copy_bytes(fmt, matrix=None):
    """Bytes of ``scipy_matrix(fmt)``'s arrays that share no memory with the format's arrays.

    0 means SciPy works on the format's own arrays; ``None`` when SciPy has no layout for
    ``fmt``.  ``matrix`` is a ``scipy_matrix(fmt)`` already built (built here otherwise).
    """
    S = scipy_matrix(fmt) if matrix is None else matrix
    if S is None:
        return None
    own = [a for a in fmt.arrays().values() if get_xp(a) is np and a.size]
    return int(sum(a.nbytes for a in _scipy_arrays(S)
                   if a.size and not any(np.shares_memory(a, b) for b in own)))
