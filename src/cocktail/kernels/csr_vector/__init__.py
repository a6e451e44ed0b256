"""csr_vector: a group of threads per row, shuffle-reduced (Bell & Garland §4.3, Baskaran & Bordawekar §4)."""

from __future__ import annotations

from ..launch import ALPHA, X, Y, Launch, beta_arg
from ..config import flag, row_kernel
from ..device import WARP_SIZE
from .rules import long_mean_row, threads_per_row
from ..spec import (CSR_FORMATS, CSR_VALUES, EVERY_PRECISION, STORED_VALUES, Sampled, cpp_bool, csr_values,
                   own_kernel, type_names)

#: Threads per row the source is instantiated for.
THREADS_PER_ROW = (2, 4, 8, 16, 32)


def _expressions(v: str, i: str) -> list[str]:
    return [expression(v, i, t, a, mode) for t in THREADS_PER_ROW for a in (True, False) for mode in CSR_VALUES]


def expression(v: str, i: str, threads: int, aligned: bool, values: int = STORED_VALUES) -> str:
    """The instantiation for ``threads`` lanes per row, aligned or not, of a csr, csr_pattern or csr_vi matrix
    (``values``: :func:`~.spec.csr_values`' mode)."""
    return f"csr_vector<{v}, {i}, {threads}, {cpp_bool(aligned)}, {values}>"


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """A grid-stride pass over rows, ``threads_per_row`` lanes each."""
    m = fmt.shape[0]
    t, block = config["threads_per_row"], config["block_threads"]
    values, codes, mode = csr_values(fmt)
    fn = SPEC.compiled(expression(*type_names(fmt), t, config["aligned"], mode), config["ldg"], props.id)
    args = (fmt.index_dtype.type(m), fmt.indptr, fmt.indices, values, codes, X, Y, ALPHA, beta_arg(fmt, accumulate))
    return [Launch.striding(fn, m * t, block, props, args, fmt.dtype)]


def configure(spec, fmt, p, props, rules) -> dict:
    """Threads per row: given, else the rule's for the mean row length; and whether rows start aligned."""
    t = p["threads_per_row"]
    if t is None:
        m = fmt.shape[0]
        t = threads_per_row(fmt.nnz / m if m else 0.0)
    if isinstance(t, bool) or t not in THREADS_PER_ROW:
        raise ValueError(f"csr_vector: threads_per_row must be one of {THREADS_PER_ROW} or None, got {t!r}")
    return {**row_kernel(spec, fmt, p, props, rules), "threads_per_row": int(t),
            "aligned": flag(spec.name, "aligned", p["aligned"])}


SPEC = own_kernel("csr_vector", CSR_FORMATS,
                  "a group of 2-32 threads per row, shuffle reduction, optionally aligned to the group width",
                  _expressions, bind, configure, params={"threads_per_row": None, "aligned": True},
                  profile=tuple(Sampled(f"csr_vector(t={t})", "rows", kernel_params={"threads_per_row": t},
                                        long_rows=t >= 8) for t in THREADS_PER_ROW),
                  precisions=EVERY_PRECISION, order=20, colour="#43a047",
                  walk="rows", group_rows=lambda kernel_params, format_params: WARP_SIZE // kernel_params.get(
                      "threads_per_row", 1),
                  default=True, precedence=1, default_when=long_mean_row)
