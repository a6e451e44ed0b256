"""The rule that splits a matrix between HYB's ELL and COO parts."""

from __future__ import annotations

import math

from ..arrays import get_xp

#: Bell & Garland's model: a fully occupied ELL column is about three times faster than COO.
ELL_SPEEDUP_OVER_COO = 3


def bell_garland_ell_width(row_lengths, speedup: float = ELL_SPEEDUP_OVER_COO) -> int:
    """The largest K such that at least 1/``speedup`` of the rows have K or more entries.

    Bell & Garland §3.5: adding a K-th ELL column pays while at least one third of
    the rows fill it.  Returns 0 for a matrix without rows.
    """
    xp = get_xp(row_lengths)
    m = int(row_lengths.shape[0])
    if m == 0:
        return 0
    ordered = xp.sort(row_lengths)[::-1]  # descending
    need = max(1, min(m, math.ceil(m / speedup)))
    # The need-th longest row is the widest K that `need` rows reach.
    return int(ordered[need - 1])
