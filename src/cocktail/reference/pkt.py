"""Reference PKT product: stage x per packet, accumulate the slots, write y back, add the remainder."""

from ..arrays import get_xp, row_ids, scatter_add
from ..formats.pkt import LOCAL_BITS, LOCAL_MASK, SENTINEL
from . import product_for
from .entries import Entries, entries_of, make


def product(fmt, X):
    """``A @ X`` from ``perm``, ``packet_ptr``, ``packet_offset``, ``index``, ``data`` and ``rest``.

    All packets are processed at once: a vertex's ``x_local``/``y_local`` slot is its
    position in ``perm`` (the packet's base ``packet_ptr[p]`` plus its local index).
    """
    xp = get_xp(X)
    m, n = fmt.shape
    k = X.shape[1]
    perm = fmt.perm.astype(xp.int64)
    nv = perm.shape[0]
    x_local = xp.zeros((nv, k), dtype=fmt.dtype)
    has_x = perm < n
    x_local[has_x] = X[perm[has_x]]
    y_local = xp.zeros((nv, k), dtype=fmt.dtype)

    owner = row_ids(fmt.packet_offset, fmt.index.shape[0]).astype(xp.int64)
    keep = fmt.index != SENTINEL
    packed = fmt.index[keep].astype(xp.int64)
    base = fmt.packet_ptr.astype(xp.int64)[owner[keep]]
    local_rows = base + (packed >> LOCAL_BITS)
    local_cols = base + (packed & LOCAL_MASK)
    scatter_add(y_local, local_rows, fmt.data[keep][:, None] * x_local[local_cols])

    Y = xp.zeros((m, k), dtype=fmt.dtype)
    has_y = perm < m
    Y[perm[has_y]] = y_local[has_y]
    Y += product_for(fmt.rest)(fmt.rest, X)
    return Y


def entries(fmt) -> list[Entries]:
    """The filled packet slots (``index != SENTINEL``) in original indices, then the remainder's.

    Slot ``t`` of packet ``p`` (``packet_offset[p] <= t < packet_offset[p+1]``) holds local row
    ``index[t] >> 16`` and local column ``index[t] & 0xFFFF``; local ``v`` is vertex
    ``perm[packet_ptr[p] + v]``.  Empty slots are left out.
    """
    xp = fmt.xp
    slot = xp.nonzero(fmt.index != SENTINEL)[0].astype(xp.int64)
    owner = row_ids(fmt.packet_offset, fmt.index.shape[0]).astype(xp.int64)[slot]
    packed = fmt.index[slot].astype(xp.int64)
    base = fmt.packet_ptr.astype(xp.int64)[owner]
    perm = fmt.perm.astype(xp.int64)
    rows = perm[base + (packed >> LOCAL_BITS)]
    cols = perm[base + (packed & LOCAL_MASK)]
    return [make(rows, cols, slot, fmt.data)] + entries_of(fmt.rest)
