"""What the blocked formats' block kernels (bcsr_spmm, bell_spmm, sbell_spmm) share: their instantiation grid,
their configuration and their compilation.

Each kernel is instantiated per value and index type, block shape ``r x c`` (all of :data:`blocks.BLOCK_SHAPES`,
as the SpMV kernels are) and columns per lane (:data:`COLUMNS_PER_LANE`, bounded by the ``r x columns`` partial
sums a lane holds in registers); the lanes per superrow are a launch argument (any of csr_spmm's
:data:`~.csr_spmm.LANES`), not a template parameter, so that the grid stays at 70 instantiations per type pair.
A matrix needs one of them: each is compiled on its own (and cached), as the SpMV kernels' are.
"""

from __future__ import annotations

import numpy as np

from ..formats.block_grid import BLOCK_SIZES
from . import blocks
from .csr_spmm import BLOCK_PARAMS, LANES, block_shape, launch_settings
from .launch import ALPHA, X, Y, Launch, beta_arg
from .spec import type_names

#: Partial sums (block rows x columns per lane) a lane may hold in registers: the instantiations' bound.
MAX_SUMS = 16
#: Columns per lane instantiated for blocks of r rows (r -> columns): 1, 2 and 4 (the widest strips the rule
#: ``spmm_shape`` picks) up to :data:`MAX_SUMS` partial sums, so 1 and 2 for 8-row blocks.
COLUMNS_PER_LANE = {r: tuple(c for c in (1, 2, 4) if r * c <= MAX_SUMS) for r in BLOCK_SIZES}

#: Parameters of the three kernels (sbell_spmm adds ``prepared``): csr_spmm's, the lanes a launch argument.
PARAMS = dict(BLOCK_PARAMS)


def expression(name: str, v: str, i: str, block, columns: int) -> str:
    """Kernel ``name``'s instantiation for values ``v``, indices ``i``, block shape ``(r, c)`` and ``columns``
    columns per lane."""
    r, c = block
    return f"{name}<{v}, {i}, {r}, {c}, {columns}>"


def expressions(name: str, v: str, i: str) -> list[str]:
    """Every instantiation of kernel ``name`` for one value and index type: each block shape with each of its
    columns per lane."""
    return [expression(name, v, i, (r, c), columns) for r, c in blocks.BLOCK_SHAPES for columns in COLUMNS_PER_LANE[r]]


def block_shapes(fmt) -> list[tuple[int, int]]:
    """Every ``(lanes, columns per lane)`` the kernels accept for the stored matrix ``fmt`` (its block's rows)."""
    return [(t, c) for t in LANES for c in COLUMNS_PER_LANE[fmt.block[0]]]


def compiled(spec, fmt, columns: int, ldg: bool, device_id: int):
    """The compiled instantiation of ``spec`` for the types and block shape of ``fmt`` and ``columns`` columns
    per lane, compiled on its own (the source has 280 instantiations, a matrix needs one)."""
    from . import source

    expr = expression(spec.name, *type_names(fmt), fmt.block, columns)
    return source.function(spec.source, (expr,), expr, ldg, device_id)


def configure(spec, fmt, p, props, rules) -> dict:
    """The block shape: lanes and columns per lane given, else the rule ``block_spmm_shape``'s for the operands'
    k and layout and the block's rows (within :data:`COLUMNS_PER_LANE`); the read path and the block size."""
    block = tuple(fmt.block)
    if block not in blocks.BLOCK_SHAPES:
        shapes = ", ".join(f"{r}x{c}" for r, c in blocks.BLOCK_SHAPES)
        raise ValueError(f"{spec.name}: no instantiation for block {fmt.block!r}; supported block shapes: {shapes}")
    r = block[0]
    allowed = COLUMNS_PER_LANE[r]
    shape = block_shape(spec, p, lambda k, row_major: rules.block_spmm_shape(k, row_major, r, allowed))
    if shape["columns_per_lane"] not in allowed:
        raise ValueError(f"{spec.name}: columns_per_lane must be one of {allowed} or None for blocks of {r} rows "
                         f"(at most {MAX_SUMS} partial sums a lane), got {shape['columns_per_lane']!r}")
    return {**launch_settings(spec, p, props, rules), **shape}


def launch_head(fmt, config: dict) -> tuple:
    """The kernels' first arguments: superrows, rows, the operands (COCKTAIL_BLOCK_ARGS), lanes and columns."""
    I = fmt.index_dtype.type
    m, n = fmt.shape
    return (I(fmt.superrows), I(m), *config["operands"].args(), np.int32(config["lanes"]), I(n))


def vector_loads(data) -> np.int32:
    """The kernels' ``vec``: 1 when ``data`` starts on a 16-byte boundary (units load as vectors), else 0."""
    return np.int32(blocks.vector_loads(data))


def superrow_launches(spec, fmt, config: dict, props, accumulate: bool, sizes: tuple, arrays: tuple) -> list:
    """The one launch of a blocked format's block kernel ``spec``: a grid-stride pass over superrows, ``lanes``
    lanes each; its arguments are :func:`launch_head`'s, the format's ``sizes``, :func:`vector_loads`, its index
    ``arrays``, then its blocks' values and the product's."""
    fn = compiled(spec, fmt, config["columns_per_lane"], config["ldg"], props.id)
    args = (*launch_head(fmt, config), *sizes, vector_loads(fmt.data), *arrays, fmt.data, X, Y, ALPHA,
            beta_arg(fmt, accumulate))
    return [Launch.striding(fn, fmt.superrows * config["lanes"], config["block_threads"], props, args, fmt.dtype)]
