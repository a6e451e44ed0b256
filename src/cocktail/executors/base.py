"""What every executor provides: a product on 1-D operands and one on blocks of vectors."""

from __future__ import annotations

from ..kernels.block_operands import BlockOperands
from ..tuning.launch_rules import RULES


class Executor:
    """Base class: ``run(x, y, alpha, beta)`` for vectors; ``run_block`` loops over columns unless overridden.

    ``name`` is the executor's name and ``kernel`` what computes the product (a kernel name,
    ``"scipy"`` or ``"reference"``); ``config`` the resolved kernel parameters (possibly empty);
    ``nondeterministic`` the names of what in the product sums in an order that varies from run to
    run (floating-point atomics).  An executor runs the block products it is given: which bucket of k and
    layout runs on the whole matrix in another format (:meth:`set_whole`) and, on the GPU, which block
    choice each bucket runs are decided elsewhere (a planned matrix's :mod:`cocktail.auto.plans`).
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

    def block_executors(self) -> tuple:
        """The executors whose block products are planned on their own: this one (a composed one: its parts)."""
        return (self,)

    def captures_block(self, X, Y) -> bool:
        """Whether a block product of ``X`` and ``Y`` can be captured in a CUDA graph: here, where it loops over
        the columns in place (no copies to allocate)."""
        return X.shape[1] == 1 or (_columns_contiguous(X) and _columns_contiguous(Y))

    def prepare_blocks(self) -> None:
        """Make now what block products need made once (nothing here)."""

    def bind_blocks(self, operands) -> None:
        """Bind now what block products of ``operands`` run, so that a CUDA graph capture can use them: the whole
        matrix's executor where their bucket runs it (:meth:`set_whole`), and the matrix as stored (nothing to
        bind here)."""
        whole = self.whole_for(operands)
        if whole is not None:
            whole.bind_blocks(operands)

    def set_whole(self, operands, whole) -> None:
        """Run block products of ``operands``' bucket of k and layout on ``whole``, an executor of the whole matrix
        in another format (as a planned matrix decided), or, with None, on the matrix as stored."""
        self.__dict__.setdefault("_wholes", {})[block_key(operands)] = whole

    def whole_for(self, operands):
        """The whole matrix's executor set for ``operands``' bucket and layout, or None (the matrix as stored)."""
        wholes = _wholes(self)
        return wholes.get(block_key(operands)) if wholes else None

    def built_whole(self):
        """The whole matrix's executor some bucket runs, or None: another bucket may take it too."""
        return next((w for w in _wholes(self).values() if w is not None), None)

    def whole_for_width(self, k: int, row_major: bool = True):
        """The whole matrix's executor that aligned blocks of ``k`` columns in that layout (row-major, or
        column-major) run instead of the matrix as stored, or None."""
        wholes = _wholes(self)
        return wholes.get((RULES.spmm_bucket(k), "row" if row_major else "col")) if wholes and k > 1 else None

    def _block_runner(self, X, Y):
        """What runs a block product of ``X`` and ``Y`` instead of the matrix as stored: the whole matrix's
        executor, or None."""
        if X.shape[1] == 1:
            return None
        operands = BlockOperands.of(X, Y)
        return None if operands is None else self.whole_for(operands)

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


def _wholes(executor) -> dict:
    """``executor``'s block_key -> the whole matrix's executor set for that bucket (None: the matrix as stored);
    empty where none was set."""
    return executor.__dict__.get("_wholes") or {}


def _columns_contiguous(a) -> bool:
    """Whether every column of the 2-D ``a`` is contiguous (one row, or consecutive elements down a column)."""
    return a.shape[0] <= 1 or a.strides[0] == a.itemsize


def block_key(operands) -> tuple[int, str]:
    """The plan a block product shares with others: its bucket of k (the rule ``spmm_bucket``) and its layout,
    ``"row"`` (each row of X and Y contiguous), ``"col"`` (each column) or ``"strided"``."""
    (x_row, x_col), (y_row, y_col) = operands.x_steps, operands.y_steps
    layout = "row" if x_col == 1 and y_col == 1 else "col" if x_row == 1 and y_row == 1 else "strided"
    return RULES.spmm_bucket(operands.k), layout
