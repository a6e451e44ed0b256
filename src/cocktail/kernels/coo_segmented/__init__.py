"""coo_segmented: warp segmented reduction over row-sorted COO (Bell & Garland §4.4).

Deterministic: every row is written by one warp or by the fix-up kernel, never by atomics.
Works on any COO object, including the COO parts of HYB and PKT (it reads only ``row``,
``col``, ``data`` and ``shape``).
"""

from __future__ import annotations

import numpy as np

from ...precision import compute_dtype
from .. import scale_y
from ..device import WARP_SIZE, blocks_per_sm
from ..launch import ALPHA, X, Y, Launch
from ..config import row_kernel
from ..spec import EVERY_PRECISION, Sampled, own_kernel, type_names


def _expressions(v: str, i: str) -> list[str]:
    return [f"coo_segmented<{v}, {i}>", f"coo_segmented_fixup<{v}, {i}>"]


def occupancy(fmt, block: int, ldg: bool, props) -> int:
    """Blocks of ``block`` threads of the main kernel one SM holds, for sizing the partition."""
    return blocks_per_sm(SPEC.compiled(_expressions(*type_names(fmt))[0], ldg, props.id), block)


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """Scale y by beta (unless accumulating), one warp per interval of entries, then the fix-up of the carries.

    ``config`` holds ``block_threads``, ``ldg``, ``interval`` and ``warps`` (the partition); the
    carry buffers are allocated here, once.
    """
    import cupy

    launches = [] if accumulate else [scale_y.bind(fmt, config["scale_block"], props)]
    nnz, warps = int(fmt.row.shape[0]), config["warps"]
    if nnz == 0:
        return launches
    block = config["block_threads"]
    grid = -(-warps * WARP_SIZE // block)
    carry_row, carry_val = cupy.empty(warps, dtype=fmt.index_dtype), cupy.empty(warps, dtype=compute_dtype(fmt.dtype))
    main_expr, fixup_expr = _expressions(*type_names(fmt))
    launches.append(Launch(SPEC.compiled(main_expr, config["ldg"], props.id), grid, block,
                           (np.int64(nnz), np.int64(config["interval"]), fmt.row, fmt.col, fmt.data, X, Y, ALPHA,
                            carry_row, carry_val), fmt.dtype))
    if warps > 1:  # a single interval ends at nnz and never carries
        launches.append(Launch(SPEC.compiled(fixup_expr, config["ldg"], props.id), grid, block,
                               (np.int64(warps), carry_row, carry_val, Y, ALPHA), fmt.dtype))
    return launches


def configure(spec, fmt, p, props, rules) -> dict:
    """The partition into equal intervals, one per resident warp (Flegar & Anzt's segmented COO)."""
    config = row_kernel(spec, fmt, p, props, rules)
    nnz = int(fmt.row.shape[0])
    interval, warps = 0, 0
    if nnz:
        per_sm = occupancy(fmt, config["block_threads"], config["ldg"], props)
        resident = rules.coo.resident_warps(props.sm_count, per_sm, config["block_threads"])
        interval, warps = rules.coo.segmented_partition(nnz, resident)
    return {**config, "interval": interval, "warps": warps, "scale_block": rules.scale_block(props)}


SPEC = own_kernel("coo_segmented", ("coo",),
                  "warp segmented reduction over intervals, carries fixed up in warp order",
                  _expressions, bind, configure,
                  profile=(Sampled("coo_segmented", "rows", long_rows=True, launches=2),),
                  precisions=EVERY_PRECISION, order=60, colour="#827717", walk="entries")
