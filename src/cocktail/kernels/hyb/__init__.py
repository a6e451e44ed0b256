"""hyb: the ELL part's kernel, then a COO kernel adding the remainder (Bell & Garland §4.5).

No kernel of its own: the ELL part's launches followed by the COO part's, bound to add into
``y``.  With the default ``coo_kernel="coo_segmented"`` the product is deterministic; the spec
says so, and :func:`cocktail.kernels.nondeterministic` also looks at the COO kernel chosen.
"""

from __future__ import annotations

from ..config import flag
from ..spec import EVERY_PRECISION, KernelSpec


def _expressions(v: str, i: str) -> list[str]:
    return []


def bind(fmt, config: dict, props, accumulate: bool = False) -> list:
    """``y = alpha*ELL@x + beta*y``, then ``y += alpha*COO@x`` (no launch when the COO part is empty).

    ``config["parts"]`` maps ``"ell"`` and ``"coo"`` to ``(spec, config)`` of each part's kernel.
    """
    (ell_spec, ell_config), (coo_spec, coo_config) = config["parts"]["ell"], config["parts"]["coo"]
    launches = ell_spec.bind(fmt.ell, ell_config, props, accumulate)
    if fmt.coo.row.shape[0]:
        launches += coo_spec.bind(fmt.coo, coo_config, props, accumulate=True)
    return launches


def configure(spec, fmt, p, props, rules) -> dict:
    """The configurations of the ELL part (ell) and the COO part (``coo_kernel``), with hyb's ``ldg``."""
    ldg = flag(spec.name, "ldg", p["ldg"])
    return {"ldg": ldg, "coo_kernel": p["coo_kernel"],
            "parts": {"ell": rules.part("ell", fmt.ell, ldg, props, "hyb's ELL kernel"),
                      "coo": rules.part(p["coo_kernel"], fmt.coo, ldg, props, "hyb: coo_kernel")}}


SPEC = KernelSpec(
    name="hyb",
    formats=("hyb",),
    default_for=("hyb",),
    source=None,
    expressions=_expressions,
    bind=bind,
    configure=configure,
    defaults={"coo_kernel": "coo_segmented", "ldg": True},
    description="ell kernel on the ELL part, then a COO kernel on the rest",
    precisions=EVERY_PRECISION,  # its parts' kernels check their own (coo_atomic takes no half y)
    order=180,
    walk="parts",
)
