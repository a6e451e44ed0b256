"""dia_vi: one thread per one or four rows over DIA-VI's value codes, the value table in shared memory."""

from __future__ import annotations

import numbers

import numpy as np

from ..launch import ALPHA, X, Y, Launch, beta_arg
from ..config import row_kernel
from .rules import rows_per_thread
from ..spec import Sampled, UNLIMITED_FILL, own_kernel, type_names

#: Rows per thread the kernel is instantiated for (4: the rows' codes of a diagonal in one load).
ROWS_PER_THREAD = (1, 4)


def _expressions(v: str, i: str) -> list[str]:
    return [f"dia_vi<{v}, {i}, {r}>" for r in ROWS_PER_THREAD]


def _address(a) -> int:
    """Address of an array's first element (host or device)."""
    interface = getattr(a, "__cuda_array_interface__", None) or a.__array_interface__
    return int(interface["data"][0])


def codes_aligned(fmt, rows: int) -> bool:
    """Whether each thread's ``rows`` codes of a diagonal can be loaded as one word: the row stride
    and the address of ``codes`` are multiples of ``rows``."""
    return fmt.stride % rows == 0 and _address(fmt.codes) % rows == 0


def shared_bytes(fmt, block: int) -> int:
    """Dynamic shared memory of one block: ``block`` staged offsets, then the value table."""
    return block * fmt.index_dtype.itemsize + int(fmt.table.shape[0]) * fmt.dtype.itemsize


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """One grid-stride pass over groups of ``rows_per_thread`` rows; each block stages the table once."""
    m, n = fmt.shape
    block, rows = config["block_threads"], config["rows_per_thread"]
    I = fmt.index_dtype.type
    v, i = type_names(fmt)
    args = (I(m), I(n), I(fmt.offsets.shape[0]), np.int64(fmt.stride), np.int32(fmt.table.shape[0]), fmt.offsets,
            fmt.codes, fmt.table, X, Y, ALPHA, beta_arg(fmt, accumulate))
    fn = SPEC.compiled(f"dia_vi<{v}, {i}, {rows}>", config["ldg"], props.id)
    shared = shared_bytes(fmt, block)
    return [Launch.striding(fn, -(-m // rows), block, props, args, fmt.dtype, shared)]


def configure(spec, fmt, p, props, rules) -> dict:
    """Rows per thread: given, else the rule's; the codes of that many rows must load as one word."""
    config = row_kernel(spec, fmt, p, props, rules)
    rows = p["rows_per_thread"]
    if rows is None:
        rows = rows_per_thread(lambda r: codes_aligned(fmt, r))
    if isinstance(rows, bool) or not isinstance(rows, numbers.Integral) or rows not in ROWS_PER_THREAD:
        raise ValueError(f"dia_vi: rows_per_thread must be one of {ROWS_PER_THREAD} or None, got {rows!r}")
    if not codes_aligned(fmt, int(rows)):
        why = (f"got stride {fmt.stride} (build with an align that is a multiple of {int(rows)}, or "
               f"rows_per_thread=1)" if fmt.stride % int(rows) else
               f"the stride is, but the codes array does not start at a multiple of {int(rows)} bytes "
               f"(use rows_per_thread=1)")
        raise ValueError(f"dia_vi: rows_per_thread={int(rows)} loads {int(rows)} codes as one word and needs a row "
                         f"stride and a codes address that are multiples of {int(rows)}: {why}")
    return {**config, "rows_per_thread": int(rows)}


SPEC = own_kernel("dia_vi", ("dia_vi",),
                  "one thread per 1 or 4 rows over one-byte value codes, the value table and offsets in shared memory",
                  _expressions, bind, configure, params={"rows_per_thread": None}, default=True,
                  profile=(Sampled("dia_vi", "band", format_params=UNLIMITED_FILL),), order=140,
                  walk="diagonals")
