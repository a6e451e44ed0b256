"""The rule behind ``format="auto"`` until the Cocktail planner exists.

Documented rule, in order:

1. a matrix without entries uses ``csr``;
2. ``dia`` when its diagonals would store at most ``DIA_MAX_FILL`` values per entry;
3. ``ell`` when its padded rows would store at most ``ELL_MAX_FILL`` values per entry;
4. ``hyb`` (Bell & Garland's ELL width) when it stores at most ``HYB_MAX_FILL`` per entry;
5. ``csr`` otherwise.
"""

from __future__ import annotations

from ..formats._fill import fill_estimates
from .hyb import bell_garland_ell_width

DIA_MAX_FILL = 1.5
ELL_MAX_FILL = 1.5
HYB_MAX_FILL = 1.5


def choose_format(csr) -> str:
    """Name of the format the simple rule above picks for the canonical CSR ``csr``."""
    if csr.nnz == 0:
        return "csr"
    est = fill_estimates(csr, width_rule=bell_garland_ell_width)
    for name, limit in (("dia", DIA_MAX_FILL), ("ell", ELL_MAX_FILL), ("hyb", HYB_MAX_FILL)):
        if est.get(name, float("inf")) <= limit:
            return name
    return "csr"
