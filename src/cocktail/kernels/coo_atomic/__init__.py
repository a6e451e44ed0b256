"""coo_atomic: balanced warp chunks with atomic row updates (Flegar & Anzt 2017, §3).

Not deterministic: rows shared by several warps are summed by floating-point atomics.
Works on any COO object, including the COO parts of HYB and PKT (it reads only ``row``,
``col``, ``data`` and ``shape``).
"""

from __future__ import annotations

import numpy as np

from .. import scale_y
from ..device import WARP_SIZE
from ..launch import ALPHA, X, Y, Launch
from ..config import row_kernel
from ..spec import Sampled, WIDE_OPERANDS, own_kernel, type_names


def _expressions(v: str, i: str) -> list[str]:
    return [f"coo_atomic<{v}, {i}>"]


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """Scale y by beta (unless accumulating), then one warp per chunk of entries adding row sums with atomics.

    ``config`` holds ``block_threads``, ``ldg`` and ``warps`` (from the oversubscription rule).
    """
    launches = [] if accumulate else [scale_y.bind(fmt, config["scale_block"], props)]
    nnz, warps = int(fmt.row.shape[0]), config["warps"]
    if nnz == 0:
        return launches
    block = config["block_threads"]
    launches.append(Launch(SPEC.compiled(_expressions(*type_names(fmt))[0], config["ldg"], props.id),
                           -(-warps * WARP_SIZE // block), block,
                           (np.int64(nnz), np.int64(warps), fmt.row, fmt.col, fmt.data, X, Y, ALPHA), fmt.dtype))
    return launches


def configure(spec, fmt, p, props, rules) -> dict:
    """Warps from the oversubscription omega: given, else the rule's for the nonzero count (Flegar & Anzt)."""
    config = row_kernel(spec, fmt, p, props, rules)
    nnz = int(fmt.row.shape[0])
    omega = rules.coo_omega(nnz) if p["omega"] is None else p["omega"]
    warps = rules.coo.atomic_warps(nnz, omega, props.sm_count, rules.cores_per_sm(props.compute_capability))
    return {**config, "omega": rules.coo.check_omega(omega), "warps": warps, "scale_block": rules.scale_block(props)}


SPEC = own_kernel("coo_atomic", ("coo",),
                  "equal warp chunks, segmented scan, one atomicAdd per row segment",
                  _expressions, bind, configure, params={"omega": None}, default=True, deterministic=False,
                  profile=(Sampled("coo_atomic", "rows", long_rows=True, launches=2),),
                  precisions=WIDE_OPERANDS, order=50, colour="#c0ca33", walk="entries")
