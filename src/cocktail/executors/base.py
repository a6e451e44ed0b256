"""What every executor provides: a product on 1-D operands and one on blocks of vectors."""

from __future__ import annotations


class Executor:
    """Base class: ``run(x, y, alpha, beta)`` for vectors; ``run_block`` loops over columns unless overridden.

    ``name`` is the executor's name and ``kernel`` what computes the product (a kernel name,
    ``"scipy"`` or ``"reference"``); ``config`` the resolved kernel parameters (possibly empty);
    ``nondeterministic`` the names of what in the product sums in an order that varies from run to
    run (floating-point atomics).
    """

    name = ""
    kernel = ""
    config: dict = {}
    nondeterministic: tuple = ()

    @property
    def deterministic(self) -> bool:
        """Whether every product with the same operands gives bit-identical results."""
        return not self.nondeterministic

    #: True when the product is computed whole before ``y`` is written, so ``y`` may overlap ``x``
    #: (the host executors); a kernel, or parts adding into ``y`` one after another, read ``x`` late.
    overlap_safe = False

    def run(self, x, y, alpha, beta) -> None:  # pragma: no cover - abstract
        """``y = alpha*A@x + beta*y`` for contiguous 1-D ``x`` (n,) and ``y`` (m,) in the matrix dtype."""
        raise NotImplementedError

    def fresh(self, x, y_empty, alpha):
        """``alpha*A@x`` into a new array: by default the product into ``y_empty`` (allocated by the caller)."""
        self.run(x, y_empty, alpha, 0)
        return y_empty

    def block_kernels(self, k: int, row_major: bool = True) -> tuple[str, ...]:
        """What computes a block product of ``k`` columns (row-major or column-major blocks), one entry per
        part: here ``"<kernel> per column"``."""
        return (f"{self.kernel} per column",)

    def reads_once(self, k: int) -> tuple[bool, ...]:
        """Per part, whether a block product of ``k`` columns reads the stored matrix once (here: once a column,
        unless ``k == 1``)."""
        return (k == 1,)

    #: ``planner(executor, operands) -> BlockChoice``: plans each bucket of k and layout of block products
    #: (:mod:`cocktail.auto.block_plans`, set by a planned matrix on each of :meth:`block_executors`); None:
    #: the rule's choice.  Only an executor with block kernels (``cuda``) consults it.
    block_planner = None

    def block_executors(self) -> tuple:
        """The executors whose block products are planned on their own: this one (a composed one: its parts)."""
        return (self,)

    def captures_block(self, X, Y) -> bool:
        """Whether a block product of ``X`` and ``Y`` can be captured in a CUDA graph: here, where it loops over
        the columns in place (no copies to allocate)."""
        return X.shape[1] == 1 or (_columns_contiguous(X) and _columns_contiguous(Y))

    def prepare_blocks(self) -> None:
        """Make now what block products need made once (nothing here)."""

    def plan_blocks(self, operands) -> None:
        """Plan block products of ``operands``' bucket of k and layout now (nothing to plan here)."""

    def run_block(self, X, Y, alpha, beta) -> None:
        """``Y = alpha*A@X + beta*Y`` for 2-D ``X`` (n, k) and ``Y`` (m, k): one product per column, on the columns
        themselves where each column of both is contiguous (column-major blocks, windows of taller ones), else
        through C-ordered copies of their transposes."""
        from ..arrays import get_xp

        if _columns_contiguous(X) and _columns_contiguous(Y):  # every column contiguous: no copy
            for j in range(X.shape[1]):
                self.run(X[:, j], Y[:, j], alpha, beta)
            return
        xp = get_xp(X)
        Xt = xp.ascontiguousarray(X.T)
        Yt = xp.ascontiguousarray(Y.T) if beta != 0 else xp.empty((Y.shape[1], Y.shape[0]), dtype=Y.dtype)
        for j in range(Xt.shape[0]):
            self.run(Xt[j], Yt[j], alpha, beta)
        Y[...] = Yt.T


def _columns_contiguous(a) -> bool:
    """Whether every column of the 2-D ``a`` is contiguous (one row, or consecutive elements down a column)."""
    return a.shape[0] <= 1 or a.strides[0] == a.itemsize
