"""Solvers over a :class:`~.matrix.DistributedMatrix`: the ranks' dot products summed by MPI."""

from __future__ import annotations

import numpy as np


def _dot(A, u, v) -> float:
    """``u . v`` over every rank's slices (a real number; conjugating ``u``)."""
    local = (u.conj() @ v).real
    return A.comm.allreduce(float(local))


def cg(A, b, x0=None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None):
    """Conjugate gradients for a Hermitian positive definite distributed ``A``: each rank passes its slice of ``b``
    (and ``x0``) and gets its slice of ``x`` and the iterations run, ``(x, iterations)``; ``iterations`` is
    negative (minus the count) where ``maxiter`` ran out first.  The stopping test is SciPy's:
    ``||b - A x|| <= max(rtol * ||b||, atol)``.  Collective: every rank calls it."""
    xp = A._xp()
    if not np.array_equal(A.row_offsets, A.col_offsets):  # the same answer on every rank: all raise or none
        raise ValueError("cg needs a square matrix whose rows and columns are split alike")
    b = xp.asarray(b, dtype=A.dtype)
    x = xp.zeros_like(b) if x0 is None else xp.array(x0, dtype=A.dtype)
    r = b - A.matvec(x) if x0 is not None else b.copy()
    limit = max(rtol * np.sqrt(_dot(A, b, b)), atol)
    p, q = r.copy(), xp.empty_like(r)
    rho = _dot(A, r, r)
    maxiter = 10 * A.shape[0] if maxiter is None else maxiter
    for it in range(1, maxiter + 1):
        if np.sqrt(rho) <= limit:
            return x, it - 1
        A.matvec(p, out=q)
        alpha = rho / _dot(A, p, q)
        x += alpha * p
        r -= alpha * q
        rho, previous = _dot(A, r, r), rho
        p *= rho / previous
        p += r
    return x, (maxiter if np.sqrt(rho) <= limit else -maxiter)
