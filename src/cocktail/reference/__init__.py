"""The reference executor: a NumPy SpMV for every format, reading that format's own arrays.

It is the test oracle of the GPU kernels and the CPU backend of :class:`cocktail.SparseMatrix`.
Each module here is named after its format and declares ``product(fmt, X)``, which returns
``A @ X`` for a 2-D block ``X`` of shape (n, k) already in the format's value dtype.  The
code is written against the array module of its inputs, so it also runs on CuPy arrays.
"""

from __future__ import annotations

from ..registry import Registry
from ..validate import product_operands

#: Every module of this package that declares a ``product``, keyed by the module's name (its format's).
_PRODUCTS = Registry(__name__, "product", "reference product", lambda module, product: module)


def register(name: str):
    """Decorator: register ``product(fmt, X)``, declared outside this package, as format ``name``'s."""

    def deco(fn):
        return _PRODUCTS.add(fn, module=name)

    return deco


def product_for(fmt):
    """The registered reference product of ``fmt``'s format."""
    return _PRODUCTS.get(fmt.name)


def spmv(fmt, x, out=None, alpha=1, beta=0):
    """``out = alpha * A @ x + beta * out`` with ``A`` stored in format object ``fmt``.

    ``x`` is (n,) or (n, k).  Without ``out`` a new array is returned (``beta`` must be 0).
    With ``beta == 0`` the old contents of ``out`` are never read, so NaN or Inf there do
    not propagate.  ``x`` is never modified.
    """
    ops = product_operands(fmt.shape, fmt.dtype, fmt.xp, x, out, alpha, beta)
    Y = product_for(fmt)(fmt, ops.X)
    if ops.alpha != 1:
        Y *= ops.alpha
    Y = Y.reshape(ops.result_shape(fmt.shape[0]))
    if out is None:
        return Y
    if ops.beta == 0:
        out[...] = Y
    else:
        out *= ops.beta
        out += Y
    return out
