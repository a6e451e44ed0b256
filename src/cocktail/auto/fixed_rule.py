"""The rule behind ``format="auto"`` until the Cocktail planner exists.

On the GPU (``device="cuda"``), in order:

1. a matrix without entries uses ``csr``;
2. ``dia`` when its diagonals would store at most ``DIA_MAX_FILL`` values per entry;
3. ``ell`` when its padded rows would store at most ``ELL_MAX_FILL`` values per entry;
4. ``hyb`` (Bell & Garland's ELL width) when it stores at most ``HYB_MAX_FILL`` per entry;
5. ``csr`` otherwise.

On the CPU (``device="cpu"``) the choice is limited to ``CPU_FORMATS``, the formats whose
host product runs through SciPy's compiled sparse routines (csr, coo, dia and bcsr, as
SciPy's CSR, COO, DIA and BSR).  Among them the rule is ``csr`` for every matrix: SciPy's
CSR product is its fastest general routine.
"""

from __future__ import annotations

from ..formats.padding import fill_estimates
from ..tuning.hyb import bell_garland_ell_width

DIA_MAX_FILL = 1.5
ELL_MAX_FILL = 1.5
HYB_MAX_FILL = 1.5
#: Formats whose CPU product runs through SciPy's compiled routines.
CPU_FORMATS = ("csr", "coo", "dia", "bcsr")
DEVICES = ("cuda", "cpu")


_LIMITS = {"dia": DIA_MAX_FILL, "ell": ELL_MAX_FILL, "hyb": HYB_MAX_FILL}


def choose_format(csr, *, device: str = "cuda") -> str:
    """Name of the format the rule above picks for the canonical CSR ``csr`` on ``device``."""
    return choose_with_reason(csr, device=device)[0]


def choice_reason(csr, *, device: str = "cuda") -> str:
    """Why :func:`choose_format` picks what it picks for ``csr`` on ``device``, in one sentence."""
    return choose_with_reason(csr, device=device)[1]


def choose_with_reason(csr, *, device: str = "cuda") -> tuple[str, str]:
    """``(format, why)``: the rule's choice for ``csr`` on ``device`` and the sentence that explains it."""
    if device not in DEVICES:
        raise ValueError(f"choose_format: device must be one of {', '.join(map(repr, DEVICES))}, got {device!r}")
    if device == "cpu":
        return "csr", ("auto on the CPU is csr: SciPy's compiled CSR product is the fastest general host routine "
                       "(the planner that weighs the other formats runs on the GPU)")
    if csr.nnz == 0:
        return "csr", "a matrix without entries is stored as csr"
    est = fill_estimates(csr, width_rule=bell_garland_ell_width)
    slots = ", ".join(f"{name} {est[name]:.2f}" for name in _LIMITS if name in est)
    for name, limit in _LIMITS.items():
        if est.get(name, float("inf")) <= limit:
            return name, (f"the fixed rule takes the first of dia, ell, hyb storing at most {limit} slots per "
                          f"entry: {name} (slots per entry: {slots})")
    return "csr", f"the fixed rule found dia, ell and hyb all storing more slots per entry than allowed ({slots}), so csr"
