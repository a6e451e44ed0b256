"""Checking and shaping the operands of ``y = alpha*A@x + beta*y``, shared by every executor."""

from __future__ import annotations

from dataclasses import dataclass

from . import validate
from ._xp import get_xp


@dataclass
class Operands:
    """Validated operands: ``X`` is 2-D (n, k) in the matrix dtype; ``ncols`` is None for a vector."""

    X: object
    out: object
    alpha: object
    beta: object
    ncols: int | None

    def result_shape(self, m: int) -> tuple:
        return (m,) if self.ncols is None else (m, self.ncols)


def prepare(fmt, x, out=None, alpha=1, beta=0) -> Operands:
    """Validate ``x``, ``out``, ``alpha`` and ``beta`` against format object ``fmt``.

    ``x`` is never modified: a dtype conversion makes a copy.  Raises ``TypeError`` or
    ``ValueError`` naming the problem.
    """
    validate.operand(x, fmt.shape, fmt.dtype)
    xp = fmt.xp
    if get_xp(x) is not xp:
        where = "GPU" if xp.__name__ == "cupy" else "CPU"
        raise TypeError(f"x is a {type(x).__module__}.{type(x).__name__} but the matrix lives on the {where}")
    alpha = validate.scalar(alpha, fmt.dtype, "alpha")
    beta = validate.scalar(beta, fmt.dtype, "beta")
    ncols = None if x.ndim == 1 else int(x.shape[1])
    if out is None:
        if beta != 0:
            raise ValueError("beta != 0 needs out= holding the y to scale and add to")
    else:
        validate.output(out, fmt.shape, fmt.dtype, ncols)
        if get_xp(out) is not xp:
            raise TypeError("out must live on the same device as the matrix")
    X = x.reshape(fmt.shape[1], 1 if ncols is None else ncols).astype(fmt.dtype, copy=False)
    return Operands(X, out, alpha, beta, ncols)
