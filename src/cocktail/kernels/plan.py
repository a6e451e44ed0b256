"""A kernel bound to one stored matrix, and the GPU product that runs it."""

from __future__ import annotations

from .._operands import prepare


class Plan:
    """A kernel spec, the matrix it multiplies, its resolved parameters and its workspace.

    The workspace holds device buffers a kernel reuses between calls (carries, converted
    pointers), so repeated products allocate nothing and can be captured in a CUDA graph.
    """

    def __init__(self, spec, storage, params: dict):
        if storage.name not in spec.formats:
            raise ValueError(f"kernel {spec.name!r} multiplies {', '.join(spec.formats)} matrices, "
                             f"not {storage.name!r}")
        self.spec = spec
        self.storage = storage
        self.params = spec.resolve_params(params)
        self.workspace: dict = {}

    def run(self, x, y, alpha, beta) -> None:
        """``y = alpha*A@x + beta*y`` for contiguous 1-D device arrays ``x`` and ``y``."""
        self.spec.launch(self, x, y, alpha, beta)


def spmv(plan: Plan, x, out=None, alpha=1, beta=0):
    """``alpha*A@x + beta*out`` on the GPU with ``plan``'s kernel; ``x`` (n,) or (n, k) CuPy arrays.

    A block of vectors runs one launch per column.  ``x`` is never modified.
    """
    import cupy

    fmt = plan.storage
    ops = prepare(fmt, x, out, alpha, beta)
    m = fmt.shape[0]
    if ops.ncols is None:
        y = out if out is not None and out.flags.c_contiguous else cupy.empty(m, dtype=fmt.dtype)
        if out is not None and y is not out and ops.beta != 0:
            y[...] = out
        plan.run(cupy.ascontiguousarray(ops.X[:, 0]), y, ops.alpha, ops.beta)
    else:
        Xt = cupy.ascontiguousarray(ops.X.T)
        Yt = cupy.empty((ops.ncols, m), dtype=fmt.dtype)
        if ops.beta != 0:
            Yt[...] = out.T
        for j in range(ops.ncols):
            plan.run(Xt[j], Yt[j], ops.alpha, ops.beta)
        y = Yt.T
    if out is None:
        return y if ops.ncols is None else cupy.ascontiguousarray(y)
    if y is not out:
        out[...] = y
    return out
