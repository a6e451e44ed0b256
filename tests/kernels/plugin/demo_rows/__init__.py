"""demo_rows: the plug-in test kernel, a kernel declared in a folder of its own and nothing else (one thread per row
of a CSR matrix, with a rule and a threshold of its own).  tests/kernels/test_plugin_kernel.py puts this folder on
``cocktail.kernels.__path__`` and checks that every layer finds it."""

from __future__ import annotations

from cocktail.kernels.config import row_kernel
from cocktail.kernels.device import WARP_SIZE
from cocktail.kernels.launch import ALPHA, X, Y, Launch, beta_arg
from cocktail.kernels.spec import Sampled, own_kernel, type_names

#: Its own threshold: rows at most this long on average run it by default (a rule no built-in kernel has).
DEMO_MAX_MEAN_ROW = 0.5


def _expressions(v: str, i: str) -> list[str]:
    return [f"demo_rows<{v}, {i}>"]


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """A grid-stride pass over rows, one thread each."""
    m = fmt.shape[0]
    fn = SPEC.compiled(_expressions(*type_names(fmt))[0], config["ldg"], props.id)
    args = (fmt.index_dtype.type(m), fmt.indptr, fmt.indices, fmt.data, X, Y, ALPHA, beta_arg(fmt, accumulate))
    return [Launch.striding(fn, m, config["block_threads"], props, args, fmt.dtype)]


SPEC = own_kernel("demo_rows", ("csr",), "one thread per row (the plug-in test kernel)", _expressions, bind,
                  row_kernel, default=True, precedence=9, default_when=lambda rows: 0 < rows.mean <= DEMO_MAX_MEAN_ROW,
                  profile=(Sampled("demo_rows", "rows"),), order=15, colour="#123456", walk="rows",
                  group_rows=lambda kernel_params, format_params: WARP_SIZE)
