"""What the blocked-format kernels (bcsr, bell, sbell) share: their block shapes and instantiations."""

from __future__ import annotations

from ..formats.block_grid import BLOCK_SIZES
from .config import row_kernel
from .spec import type_names

#: Block shapes ``(r, c)`` every blocked kernel is instantiated for: all that the formats accept
#: (clSpMV's 1x4, 2x4, 4x4, 8x4, 1x8, 2x8, 4x8 and 8x8 among them).
BLOCK_SHAPES = tuple((r, c) for r in BLOCK_SIZES for c in BLOCK_SIZES)

#: Byte alignment of a data array that lets the kernels load 1 x c units as vectors (float4, double2).
VECTOR_ALIGNMENT = 16


def expression(name: str, v: str, i: str, block) -> str:
    """The instantiation of kernel ``name`` for values ``v``, indices ``i`` and block shape ``(r, c)``."""
    r, c = block
    return f"{name}<{v}, {i}, {r}, {c}>"


def expressions(name: str, v: str, i: str) -> list[str]:
    """Every instantiation of kernel ``name`` for one value and index type: one per block shape."""
    return [expression(name, v, i, b) for b in BLOCK_SHAPES]


def vector_loads(data) -> int:
    """1 when the device array ``data`` starts on a :data:`VECTOR_ALIGNMENT` boundary, else 0."""
    return int(data.data.ptr % VECTOR_ALIGNMENT == 0)


def compiled(spec, fmt, ldg: bool, device_id: int):
    """The compiled instantiation of blocked kernel ``spec`` for the types and block shape of ``fmt``.

    Compiled on its own (and cached per instantiation), not with the whole source: the source
    has 100 instantiations (25 block shapes x 4 type pairs), seconds of compilation, and a
    matrix needs one of them.
    """
    from . import source

    expr = expression(spec.name, *type_names(fmt), fmt.block)
    return source.function(spec.source, (expr,), expr, ldg, device_id)


def block_config(spec, fmt, p, props, rules) -> dict:
    """``ldg`` and ``block_threads`` of a blocked-format kernel, after checking its block shape is instantiated
    (``configure`` of bell and sbell; bcsr adds its lanes per superrow)."""
    if tuple(fmt.block) not in BLOCK_SHAPES:
        shapes = ", ".join(f"{r}x{c}" for r, c in BLOCK_SHAPES)
        raise ValueError(f"{spec.name}: no instantiation for block {fmt.block!r}; supported block shapes: {shapes}")
    return row_kernel(spec, fmt, p, props, rules)
