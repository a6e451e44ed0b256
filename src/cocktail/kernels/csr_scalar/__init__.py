"""csr_scalar: one thread per row (Bell & Garland §4.3)."""

from __future__ import annotations

from ..launch import ALPHA, X, Y, Launch, beta_arg
from ..config import row_kernel
from ..device import WARP_SIZE
from ..spec import CSR_FORMATS, CSR_VALUES, EVERY_PRECISION, Sampled, csr_values, own_kernel, type_names


def _expressions(v: str, i: str) -> list[str]:
    return [expression(v, i, mode) for mode in CSR_VALUES]


def expression(v: str, i: str, values: int) -> str:
    """The instantiation for a csr, csr_pattern or csr_vi matrix (``values``: :func:`~.spec.csr_values`' mode)."""
    return f"csr_scalar<{v}, {i}, {values}>"


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """One grid-stride pass over the rows."""
    m = fmt.shape[0]
    block = config["block_threads"]
    values, codes, mode = csr_values(fmt)
    fn = SPEC.compiled(expression(*type_names(fmt), mode), config["ldg"], props.id)
    args = (fmt.index_dtype.type(m), fmt.indptr, fmt.indices, values, codes, X, Y, ALPHA, beta_arg(fmt, accumulate))
    return [Launch.striding(fn, m, block, props, args, fmt.dtype)]


SPEC = own_kernel("csr_scalar", CSR_FORMATS,
                  "one thread per row",
                  _expressions, bind, row_kernel, default=True, profile=(Sampled("csr_scalar", "rows"),),
                  precisions=EVERY_PRECISION, order=10, colour="#1b5e20",
                  walk="rows", group_rows=lambda kernel_params, format_params: WARP_SIZE)
