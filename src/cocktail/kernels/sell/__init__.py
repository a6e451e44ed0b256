"""sell: a group of threads per row over SELL-C-sigma / SELL-P slices (clSpMV §4.3.2)."""

from __future__ import annotations

import numbers

import numpy as np

from ..launch import ALPHA, X, Y, Launch, beta_arg
from ..config import row_kernel
from .rules import threads_per_row
from ..spec import EVERY_PRECISION, Sampled, UNLIMITED_FILL, own_kernel, type_names

#: Threads per row the source is instantiated for (at most 8: a warp step then still reads
#: runs of at least 4 consecutive rows of one slot column).
THREADS_PER_ROW = (1, 2, 4, 8)
#: Slice heights C the device profile samples (multiples of the 128-byte alignment, as clSpMV), each
#: with every THREADS_PER_ROW.
SAMPLED_HEIGHTS = (32, 64, 128, 256)


def _expressions(v: str, i: str) -> list[str]:
    return [expression(v, i, t, short) for short in (False, True) for t in THREADS_PER_ROW]


def expression(v: str, i: str, threads: int, short: bool = False) -> str:
    """The instantiation for ``threads`` lanes per row (``short``: 16-bit columns from each slice's base)."""
    return f"sell<{v}, {i}, {threads}, true>" if short else f"sell<{v}, {i}, {threads}>"


def permuted(fmt) -> bool:
    """Whether the rows are sorted (``sort_window`` > 1); otherwise ``perm`` is the identity and is not read."""
    return int(fmt.params["sort_window"]) != 1


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """A grid-stride pass over the permuted rows, ``threads_per_row`` lanes each.

    The kernel reads slice pointers as 64-bit; a 32-bit ``slice_ptr`` is widened once, here.
    """
    m = fmt.shape[0]
    t, block = config["threads_per_row"], config["block_threads"]
    fn = SPEC.compiled(expression(*type_names(fmt), t, fmt.short), config["ldg"], props.id)
    slice_ptr = fmt.slice_ptr.astype(np.int64, copy=False)
    args = (fmt.index_dtype.type(m), np.int64(fmt.slice_height), np.int32(permuted(fmt)), slice_ptr, fmt.col,
            fmt.slice_base, fmt.data, fmt.perm, X, Y, ALPHA, beta_arg(fmt, accumulate))
    return [Launch.striding(fn, m * t, block, props, args, fmt.dtype)]


def configure(spec, fmt, p, props, rules) -> dict:
    """Threads per row: given, else the rule's for the mean slice width."""
    t = p["threads_per_row"]
    if t is None:
        rows = fmt.nslices * fmt.slice_height  # padded rows: every slice is slice_height rows
        t = threads_per_row(fmt.stored_slots / rows if rows else 0.0)
    if isinstance(t, bool) or not isinstance(t, numbers.Integral) or t not in THREADS_PER_ROW:
        raise ValueError(f"sell: threads_per_row must be one of {THREADS_PER_ROW} or None, got {t!r}")
    return {**row_kernel(spec, fmt, p, props, rules), "threads_per_row": int(t)}


SPEC = own_kernel("sell", ("sell",),
                  "a group of 1-8 threads per row over column-major slices, shuffle reduction, "
                  "the row permutation applied to y",
                  _expressions, bind, configure, params={"threads_per_row": None}, default=True,
                  profile=tuple(Sampled(f"sell(C={c},t={t})", "rows", format_params={"slice_height": c, **UNLIMITED_FILL},
                                        kernel_params={"threads_per_row": t}, long_rows=t >= 4)
                                for c in SAMPLED_HEIGHTS for t in THREADS_PER_ROW),
                  precisions=EVERY_PRECISION, layouts=("short_columns",), order=100,
                  walk="rows", group_rows=lambda kernel_params, format_params: format_params["slice_height"])
