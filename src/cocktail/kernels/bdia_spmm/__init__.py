"""bdia_spmm: BDIA times a block of k vectors, a group of lanes per few consecutive rows walking the bands,
each in-matrix slot read once per tile of columns.

A block kernel (``BLOCK_SPEC``) extending bdia and bdia_direct, on csr_spmm's instantiation grid (lanes per
row, columns per lane, chosen by the rule ``spmm_shape``; vector strips decided as for csr_spmm and
dia_vi_spmm) times ``rows_per_group`` (the rule ``spmm_diagonal_rows``: a band's diagonals share their X
rows; bdia's ``piece_width`` is not used: x is not staged): ``A.matmat(X)`` reads the bands once per tile of
``lanes * columns_per_lane`` columns instead of once per column, with ``X`` and ``Y`` in any memory order.
"""

from __future__ import annotations

from ..bdia import band_args, band_ptr64
from ..csr_spmm import ROW_GROUP_PARAMS, configure_rows, expression, row_group_expressions, with_rows
from ..launch import ALPHA, X, Y, Launch, beta_arg
from ..spec import own_kernel, type_names


def _expressions(v: str, i: str) -> list[str]:
    return row_group_expressions("bdia_spmm", v, i)


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """A grid-stride pass over groups of ``rows_per_group`` rows, ``lanes`` lanes each, for the operands of the
    configuration.

    The kernel reads band pointers as 64-bit: the prepared ones (:func:`prepare`), else ``band_ptr`` widened
    here.
    """
    t, c, block, group = config["lanes"], config["columns_per_lane"], config["block_threads"], config["rows_per_group"]
    rows = fmt.shape[0]
    m, n, nbands, stride = band_args(fmt)
    fn = BLOCK_SPEC.compiled(with_rows(expression("bdia_spmm", *type_names(fmt), t, c, config["vector"]), group),
                             config["ldg"], props.id)
    band_ptr = config["prepared"] if config["prepared"] is not None else prepare(fmt)
    args = (m, *config["operands"].args(), n, nbands, stride, fmt.offsets, band_ptr, fmt.data, X, Y, ALPHA,
            beta_arg(fmt, accumulate))
    return [Launch.striding(fn, -(-rows // group) * t, block, props, args, fmt.dtype)]


def prepare(fmt, props=None, rules=None):
    """The band pointers as 64-bit, once per matrix (:meth:`~cocktail.SparseMatrix.prepare_block_products` or
    the first block product): a 32-bit ``band_ptr`` is widened on the device then, so that binding a block
    product for new operands does no device work."""
    return band_ptr64(fmt)


def configure(spec, fmt, p, props, rules) -> dict:
    """csr_spmm's block shape with vector strips and rows a group, read path and block size, and the prepared
    band pointers, passed on."""
    return {**configure_rows(spec, fmt, p, props, rules), "prepared": p["prepared"]}


BLOCK_SPEC = own_kernel("bdia_spmm", ("bdia",),
                        "a group of 1-32 lanes per 1-4 consecutive rows, each lane a strip of up to 8 of the block's "
                        "columns, walking the bands; every in-matrix slot read once per tile of columns",
                        _expressions, bind, configure, params={**ROW_GROUP_PARAMS, "prepared": None},
                        default=True, extends=("bands",), prepare=prepare)
