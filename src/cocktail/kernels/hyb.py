"""hyb: the ELL part's kernel, then a COO kernel adding the remainder (Bell & Garland §4.5).

No kernel of its own: two sub-plans kept in the plan's workspace.  With the default
``coo_kernel="coo_segmented"`` the product is deterministic.
"""

from __future__ import annotations

from .spec import KernelSpec

#: Workspace key of the ``(ell_plan, coo_plan)`` pair.
_PARTS = "hyb.parts"


def _expressions(v: str, i: str) -> list[str]:
    return []


def parts(plan):
    """The ``(ell, coo)`` sub-plans of a HYB plan, built on first use and kept in its workspace."""
    held = plan.workspace.get(_PARTS)
    if held is None:
        from . import get
        from .plan import Plan

        fmt = plan.storage
        ldg = plan.params["ldg"]
        held = (Plan(get("ell"), fmt.ell, {"ldg": ldg}),
                Plan(get(plan.params["coo_kernel"]), fmt.coo, {"ldg": ldg}))
        plan.workspace[_PARTS] = held
    return held


def launch(plan, x, y, alpha, beta) -> None:
    """``y = alpha*ELL@x + beta*y``, then ``y += alpha*COO@x`` (skipped when the COO part is empty)."""
    fmt = plan.storage
    ell, coo = parts(plan)
    ell.run(x, y, alpha, beta)
    if fmt.coo.row.shape[0]:
        coo.run(x, y, alpha, fmt.dtype.type(1))


SPEC = KernelSpec(
    name="hyb",
    formats=("hyb",),
    source=None,
    expressions=_expressions,
    launch=launch,
    defaults={"coo_kernel": "coo_segmented", "ldg": True},
    description="ell kernel on the ELL part, then a COO kernel on the rest",
)
