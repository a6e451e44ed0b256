"""Reference SBELL product: every non-padding block slot (col != -1), located through slice_ptr."""

from .._xp import get_xp
from ..formats._blocks import block_product
from . import register


@register("sbell")
def product(fmt, X):
    """``A @ X`` from ``slice_ptr``, ``col`` and the 1-D ``data``."""
    xp = get_xp(X)
    slots = xp.nonzero(fmt.col != -1)[0].astype(xp.int64)
    superrow, _, vals = fmt.slot_values(slots)
    return block_product(X, superrow, fmt.col[slots], vals, fmt.shape, fmt.dtype)
