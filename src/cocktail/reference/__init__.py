"""The reference executor: a NumPy SpMV for every format, reading that format's own arrays.

It is the test oracle of the GPU kernels and the CPU backend of :class:`cocktail.SparseMatrix`.
Each module here is named after its format and declares ``product(fmt, X)``, which returns
``A @ X`` for a 2-D block ``X`` of shape (n, k) already in the format's value dtype.  A half
matrix, or one whose values are stored narrower than its dtype, multiplies as
:func:`arithmetic_form` gives it: in the dtype its products sum in.  The
code is written against the array module of its inputs, so it also runs on CuPy arrays.
"""

from __future__ import annotations

from ..precision import compute_dtype
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
    wide = arithmetic_form(fmt)
    Y = product_for(wide)(wide, ops.X.astype(wide.dtype, copy=False))
    if ops.alpha != 1:
        Y *= ops.alpha
    Y = Y.reshape(ops.result_shape(fmt.shape[0]))
    if out is None:
        return Y.astype(fmt.dtype, copy=False)
    if ops.beta == 0:
        out[...] = Y
    elif wide.dtype == out.dtype:
        out *= ops.beta
        out += Y
    else:  # a half y: scaled and added in float32, rounded once
        out[...] = out.astype(wide.dtype) * ops.beta + Y
    return out


def arithmetic_form(fmt):
    """``fmt`` itself, or for a half matrix or one whose values are stored narrower than its dtype, the same
    matrix in the dtype its products sum in (:func:`cocktail.precision.compute_dtype`; values widened exactly):
    the reference product of every precision runs in its arithmetic."""
    return fmt.widened(compute_dtype(fmt.dtype))
