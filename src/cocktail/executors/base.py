"""What every executor provides: a product on 1-D operands and one on blocks of vectors."""

from __future__ import annotations

from ..kernels.block_operands import BlockOperands
from ..tuning.launch_rules import RULES


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
        part (:meth:`own_block_kernels`), or the whole matrix's block product where its bucket runs it."""
        whole = self.whole_for_width(k, row_major)
        if whole is not None:
            return tuple(f"whole matrix: {name}" for name in whole.block_kernels(k, row_major))
        return self.own_block_kernels(k, row_major)

    def own_block_kernels(self, k: int, row_major: bool = True) -> tuple[str, ...]:
        """:meth:`block_kernels` of the matrix as stored: here ``"<kernel> per column"``."""
        return (f"{self.kernel} per column",)

    def reads_once(self, k: int) -> tuple[bool, ...]:
        """Per part, whether a block product of ``k`` columns reads the stored matrix once (:meth:`own_reads_once`;
        each part the whole matrix's answer, where its bucket runs it)."""
        whole = self.whole_for_width(k, True)
        if whole is not None:
            return whole.reads_once(k) * len(self.block_executors())
        return self.own_reads_once(k)

    def own_reads_once(self, k: int) -> tuple[bool, ...]:
        """:meth:`reads_once` of the matrix as stored: here once a column, unless ``k == 1``."""
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

    def plan_blocks(self, operands):
        """Plan block products of ``operands``' bucket of k and layout now: the matrix as stored
        (:meth:`plan_own_blocks`, whose answer this returns), then, where a ``block_rival`` is set, whether the
        whole matrix runs them instead; what runs them is bound for ``operands``."""
        own = self.plan_own_blocks(operands)
        whole = self._whole_for(operands, plan=True) if self.block_rival is not None and operands.k > 1 else None
        if whole is not None:
            whole.plan_blocks(operands)
        return own

    def plan_own_blocks(self, operands):
        """Plan block products of the matrix as stored (nothing to plan here)."""

    #: ``rival(executor, operands, whole) -> executor or None``, with the matrix's ``shape`` and ``can_time()``
    #: (False inside a CUDA graph capture, where the bucket runs the matrix as stored, unplanned): for the
    #: bucket of k and layout of ``operands``, an executor of the whole matrix in another format (``whole``: the
    #: one another bucket already runs, or None) whose block product is faster than this executor's, or None
    #: (:class:`cocktail.auto.block_plans.WholeRival`, set by a planned matrix).  None: the matrix as stored.
    block_rival = None

    def _whole_for(self, operands, plan: bool = False):
        """The whole matrix's executor that block products of ``operands``' bucket and layout run, or None (the
        matrix as stored): decided by ``block_rival`` on first use of the bucket (again with ``plan``, where a
        capture left it unplanned; never inside a capture, where nothing can be timed)."""
        wholes = self.__dict__.setdefault("_wholes", {})  # block_key -> (the whole's executor or None, planned)
        key = block_key(operands)
        found = wholes.get(key)
        if found is None or (plan and not found[1]):
            if not self.block_rival.can_time():
                found = wholes[key] = (None, False)
            else:
                current = next((w for w, _ in wholes.values() if w is not None), None)
                found = wholes[key] = (self.block_rival(self, operands, current), True)
        return found[0]

    def _block_runner(self, X, Y):
        """What runs a block product of ``X`` and ``Y`` instead of the matrix as stored: the whole matrix's
        executor, or None."""
        if self.block_rival is None or X.shape[1] == 1:
            return None
        operands = BlockOperands.of(X, Y)
        return None if operands is None else self._whole_for(operands)

    def whole_for_width(self, k: int, row_major: bool = True):
        """The whole matrix's executor that aligned blocks of ``k`` columns in that layout (row-major, or
        column-major) run instead of the matrix as stored, or None; deciding it times the bucket's choices once."""
        if self.block_rival is None or k == 1:
            return None
        m, n = self.block_rival.shape
        operands = BlockOperands.row_major(k) if row_major else BlockOperands(k, (1, max(n, 1)), (1, max(m, 1)))
        return self._whole_for(operands)

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


def block_key(operands) -> tuple[int, str]:
    """The plan a block product shares with others: its bucket of k (the rule ``spmm_bucket``) and its layout,
    ``"row"`` (each row of X and Y contiguous), ``"col"`` (each column) or ``"strided"``."""
    (x_row, x_col), (y_row, y_col) = operands.x_steps, operands.y_steps
    layout = "row" if x_col == 1 and y_col == 1 else "col" if x_row == 1 and y_row == 1 else "strided"
    return RULES.spmm_bucket(operands.k), layout
