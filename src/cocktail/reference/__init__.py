"""The reference executor: a NumPy SpMV for every format, reading that format's own arrays.

It is the test oracle of the GPU kernels and the CPU backend of :class:`cocktail.SparseMatrix`.
Each module here is named after its format and registers ``product(fmt, X)``, which returns
``A @ X`` for a 2-D block ``X`` of shape (n, k) already in the format's value dtype.  The
code is written against the array module of its inputs, so it also runs on CuPy arrays.
"""

from __future__ import annotations

from importlib import import_module

from .. import validate
from .._xp import get_xp

_PRODUCTS = {}


def register(name: str):
    """Decorator: register ``product(fmt, X)`` as the reference product of format ``name``."""

    def deco(fn):
        _PRODUCTS[name] = fn
        return fn

    return deco


def product_for(fmt):
    """The registered reference product of ``fmt``'s format."""
    if fmt.name not in _PRODUCTS:
        import_module(f"{__name__}.{fmt.name}")  # each module registers its product on import
    return _PRODUCTS[fmt.name]


def spmv(fmt, x, out=None, alpha=1, beta=0):
    """``out = alpha * A @ x + beta * out`` with ``A`` stored in format object ``fmt``.

    ``x`` is (n,) or (n, k).  Without ``out`` a new array is returned (``beta`` must be 0).
    With ``beta == 0`` the old contents of ``out`` are never read, so NaN or Inf there do
    not propagate.  ``x`` is never modified.
    """
    validate.operand(x, fmt.shape, fmt.dtype)
    xp = fmt.xp
    if get_xp(x) is not xp:
        where = "GPU" if xp.__name__ == "cupy" else "CPU"
        raise TypeError(f"x is a {type(x).__module__}.{type(x).__name__} but the matrix lives on the {where}")
    alpha = validate.scalar(alpha, fmt.dtype, "alpha")
    beta = validate.scalar(beta, fmt.dtype, "beta")
    ncols_x = None if x.ndim == 1 else x.shape[1]
    if out is None:
        if beta != 0:
            raise ValueError("beta != 0 needs out= holding the y to scale and add to")
    else:
        validate.output(out, fmt.shape, fmt.dtype, ncols_x)
        if get_xp(out) is not xp:
            raise TypeError("out must live on the same device as the matrix")
    X = x.reshape(fmt.shape[1], 1 if ncols_x is None else ncols_x).astype(fmt.dtype, copy=False)
    Y = product_for(fmt)(fmt, X)
    if alpha != 1:
        Y *= alpha
    Y = Y.reshape((fmt.shape[0],) if ncols_x is None else (fmt.shape[0], ncols_x))
    if out is None:
        return Y
    if beta == 0:
        out[...] = Y
    else:
        out *= beta
        out += Y
    return out
