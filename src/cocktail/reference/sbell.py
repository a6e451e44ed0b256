"""Reference SBELL product: every non-padding block slot (col != -1), located through slice_ptr."""

from ..arrays import get_xp
from ..formats.block_grid import block_product
from ..formats.sbell import slot_coordinates
from .entries import Entries, block_entries


def product(fmt, X):
    """``A @ X`` from ``slice_ptr``, ``col`` and the 1-D ``data``."""
    xp = get_xp(X)
    slots = xp.nonzero(fmt.col != -1)[0].astype(xp.int64)
    superrow, _, vals = fmt.slot_values(slots)
    return block_product(X, superrow, fmt.col[slots], vals, fmt.shape, fmt.dtype)


def entries(fmt) -> list[Entries]:
    """Real slot ``slice_ptr[s] + k*h + u`` (``col != -1``) of superrow ``s*h + u``: cell
    ``(ri, cj)`` at ``slice_ptr[s]*r*c + ((k*r + ri)*h + u)*c + cj`` of the 1-D ``data``.

    Padding slots, rows and columns of a partial block past the matrix edge, then fill,
    are left out.
    """
    xp = fmt.xp
    r, c = fmt.block
    h = fmt.slice_height
    slots = xp.nonzero(fmt.col != -1)[0].astype(xp.int64)
    s, k, u = slot_coordinates(fmt.slice_ptr, slots, h)
    base = fmt.slice_ptr.astype(xp.int64)[s] * (r * c)

    def position(b, ri, cj):
        return base[b] + ((k[b] * r + ri) * h + u[b]) * c + cj

    return block_entries(fmt, s * h + u, fmt.col[slots], position, fmt.data)
