"""csr_spmm: CSR times a block of k vectors, a row per group of lanes, each stored entry read once per tile
of columns.

A block kernel (``BLOCK_SPEC``): its launches are bound for one :class:`~.block_operands.BlockOperands`
(k and the operands' steps, a configuration parameter the executor fills), so ``A.matmat(X)`` costs
the matrix's bytes once per tile of ``lanes * columns_per_lane`` columns instead of once per column,
with ``X`` and ``Y`` in any memory order. It extends the row kernels (csr_scalar, csr_vector: a row
per thread or group of lanes); csr_spmm_merge extends the load-balanced ones.
"""

from __future__ import annotations

import numpy as np

from ..block_operands import VECTOR_BYTES, BlockOperands
from ..config import block_threads, flag
from ..launch import ALPHA, X, Y, Launch, beta_arg
from ..spec import ONE_VALUE, VALUE_TYPES, cpp_bool, csr_values, own_kernel, type_names

#: Bytes of a value of each C++ value type (vector strips fill 16-byte words).
VALUE_SIZES = {name: dtype.itemsize for dtype, name in VALUE_TYPES.items()}
#: Lanes per row (or share) and columns per lane the block kernels are instantiated for.
LANES = (1, 2, 4, 8, 16, 32)
COLUMNS_PER_LANE = (1, 2, 4, 8)


def _expressions(v: str, i: str) -> list[str]:
    return vector_expressions("csr_spmm", v, i, patterns=(False, True))


def expression(name: str, v: str, i: str, lanes: int, columns: int, vector: bool | None = None,
               pattern: bool | None = None) -> str:
    """Block kernel ``name``'s instantiation for ``lanes`` lanes per unit, ``columns`` columns per lane and,
    for a kernel with vector strips, ``vector`` (spmm.cuh); for a CSR kernel, ``pattern``: of a csr_pattern
    matrix (every entry its one value) or a csr one."""
    flags = "".join(f", {cpp_bool(f)}" for f in (vector, pattern) if f is not None)
    return f"{name}<{v}, {i}, {lanes}, {columns}{flags}>"


def vector_expressions(name: str, v: str, i: str, patterns=(None,)) -> list[str]:
    """Every instantiation of a block kernel with vector strips: each shape with scalar strips, and with
    vector strips where ``columns`` values of ``v`` fill whole 16-byte words; for a CSR kernel, each of
    ``patterns`` (:func:`expression`'s ``pattern``)."""
    size = VALUE_SIZES[v]
    return ([expression(name, v, i, t, c, False, p) for p in patterns for t in LANES for c in COLUMNS_PER_LANE]
            + [expression(name, v, i, t, c, True, p) for p in patterns for t in LANES for c in COLUMNS_PER_LANE
               if (c * size) % VECTOR_BYTES == 0])


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """A grid-stride pass over rows, ``lanes`` lanes each, for the operands of the configuration."""
    m = fmt.shape[0]
    t, c, block = config["lanes"], config["columns_per_lane"], config["block_threads"]
    values, _, mode = csr_values(fmt)
    fn = BLOCK_SPEC.compiled(expression("csr_spmm", *type_names(fmt), t, c, config["vector"], mode == ONE_VALUE), config["ldg"],
                             props.id)
    args = (fmt.index_dtype.type(m), *config["operands"].args(), fmt.indptr, fmt.indices, values, X, Y, ALPHA,
            beta_arg(fmt, accumulate))
    return [Launch.striding(fn, m * t, block, props, args, fmt.dtype)]


def block_shape(spec, p, rule, itemsize: int | None = None) -> dict:
    """``operands`` (required: the executor's), and lanes and columns per lane: given, else ``rule``'s for
    the operands' k and layout. Shared by the block kernels of this module's instantiation grid.  With
    ``itemsize`` (a kernel with vector strips), also ``vector``: given (True only where the operands let
    strips move in 16-byte words), else whether they do."""
    operands = p["operands"]
    if not isinstance(operands, BlockOperands):
        raise ValueError(f"{spec.name}: operands must be the BlockOperands of the product (k and the steps "
                         f"of X and Y), got {operands!r}")
    if operands.k < 1:
        raise ValueError(f"{spec.name}: k (the columns of X) must be a positive integer, got {operands.k}")
    lanes, columns = rule(operands.k, operands.x_row_major)
    lanes = lanes if p["lanes"] is None else p["lanes"]
    columns = columns if p["columns_per_lane"] is None else p["columns_per_lane"]
    if isinstance(lanes, bool) or lanes not in LANES:
        raise ValueError(f"{spec.name}: lanes must be one of {LANES} or None, got {lanes!r}")
    if isinstance(columns, bool) or columns not in COLUMNS_PER_LANE:
        raise ValueError(f"{spec.name}: columns_per_lane must be one of {COLUMNS_PER_LANE} or None, got {columns!r}")
    shape = {"operands": operands, "lanes": int(lanes), "columns_per_lane": int(columns)}
    if itemsize is not None:
        fits = operands.vectors_fit(int(columns), itemsize)
        vector = fits if p["vector"] is None else p["vector"]
        if not isinstance(vector, bool) or (vector and not fits):
            raise ValueError(f"{spec.name}: vector must be None, False, or True where the operands let strips of "
                             f"{columns} columns move in 16-byte words (column steps 1, k and row steps multiples "
                             f"of {columns}, aligned), got {p['vector']!r}")
        shape["vector"] = vector
    return shape


def launch_settings(spec, p, props, rules) -> dict:
    """The read path and the block size: given, else the rules'."""
    return {"ldg": flag(spec.name, "ldg", p["ldg"]),
            "block_threads": block_threads(spec.name, p["block_threads"], props, rules.BLOCK_THREADS)}


def configure(spec, fmt, p, props, rules) -> dict:
    """The block shape (:func:`block_shape`, the rule ``spmm_shape``), the read path and the block size."""
    return {**launch_settings(spec, p, props, rules), **block_shape(spec, p, rules.spmm_shape)}


def configure_vector(spec, fmt, p, props, rules) -> dict:
    """:func:`configure` for a kernel with vector strips (``vector``, see :func:`block_shape`)."""
    return {**launch_settings(spec, p, props, rules),
            **block_shape(spec, p, rules.spmm_shape, np.dtype(fmt.dtype).itemsize)}


#: Consecutive rows a group of lanes takes in the diagonal block kernels (spmm.cuh's row groups).
ROWS_PER_GROUP = (1, 2, 4)


def row_group_expressions(name: str, v: str, i: str) -> list[str]:
    """:func:`vector_expressions` of a diagonal block kernel, each for every count of ROWS_PER_GROUP."""
    return [with_rows(e, r) for r in ROWS_PER_GROUP for e in vector_expressions(name, v, i)]


def with_rows(expression: str, rows: int) -> str:
    """A block kernel instantiation with one more template argument: ``rows`` rows a group."""
    return f"{expression[:-1]}, {rows}>"


def configure_rows(spec, fmt, p, props, rules) -> dict:
    """:func:`configure_vector`, and rows a group: given, else the rule ``spmm_diagonal_rows``."""
    out = configure_vector(spec, fmt, p, props, rules)
    rows = (rules.spmm_diagonal_rows(np.dtype(fmt.dtype).itemsize) if p["rows_per_group"] is None
            else p["rows_per_group"])
    if isinstance(rows, bool) or rows not in ROWS_PER_GROUP:
        raise ValueError(f"{spec.name}: rows_per_group must be one of {ROWS_PER_GROUP} or None, got {rows!r}")
    return {**out, "rows_per_group": int(rows)}


#: Parameters of every block kernel with this instantiation grid (and of one with vector strips).
BLOCK_PARAMS = {"operands": None, "lanes": None, "columns_per_lane": None}
VECTOR_BLOCK_PARAMS = {**BLOCK_PARAMS, "vector": None}
ROW_GROUP_PARAMS = {**VECTOR_BLOCK_PARAMS, "rows_per_group": None}

BLOCK_SPEC = own_kernel("csr_spmm", ("csr", "csr_pattern"),
                        "a group of 1-32 lanes per row, each lane a strip of up to 8 of the block's columns; "
                        "every entry read once per tile of columns",
                        _expressions, bind, configure_vector, params=dict(VECTOR_BLOCK_PARAMS), default=True,
                        extends=("rows",))
