"""A composed executor: the parts of a Cocktail, each with its own executor, into one ``y``."""

from __future__ import annotations

from .base import Executor


class Composed(Executor):
    """Runs the parts in order on the current stream: the first applies ``beta``, the others add (beta = 1).

    Every part's executor runs on the same device without host synchronisation, so the whole
    product can be captured in a CUDA graph like a single kernel's.
    """

    def __init__(self, parts):
        if not parts:
            raise ValueError("a composed executor needs at least one part")
        self.parts = tuple(parts)
        self._first, self._rest = self.parts[0], self.parts[1:]
        names = [p.name for p in self.parts]
        # The device's executor when any part runs a kernel; parts without one run the reference path.
        self.name = "cuda" if "cuda" in names else names[0]
        self.kernel = "+".join(p.kernel for p in self.parts)
        self.config = {f"part{i}.{k}": v for i, p in enumerate(self.parts) for k, v in p.config.items()}
        self.nondeterministic = tuple(dict.fromkeys(n for p in self.parts for n in p.nondeterministic))
        # Block products: per bucket of k and layout (block_key), (the whole matrix's executor or None, planned).
        self._wholes = {}
        self.block_times = {}  # block_key -> {"parts": µs, "whole matrix: <choice>": µs}, what block_rival timed

    def run(self, x, y, alpha, beta) -> None:
        """``y = alpha*(A_0 + A_1 + ...)@x + beta*y``, part after part."""
        self._first.run(x, y, alpha, beta)
        for part in self._rest:
            part.run(x, y, alpha, 1)

    #: ``rival(composed, operands, whole) -> executor or None``, with the matrix's ``shape`` and ``can_time()``
    #: (False inside a CUDA graph capture, where the bucket runs the parts unplanned): for the bucket of k
    #: and layout of ``operands``, an executor of the whole matrix (``whole``: the one another bucket already
    #: runs, or None) whose block product is faster than the parts' one after another, or None to keep the
    #: parts (:class:`cocktail.auto.block_plans.WholeRival`, set by a planned matrix).  None: always the parts.
    block_rival = None

    def _whole_for(self, operands, plan: bool = False):
        """The executor of the whole matrix that block products of ``operands``' bucket and layout run, or None
        (the parts): decided by ``block_rival`` on first use of the bucket (again with ``plan``, where a capture
        left it to the parts; never inside a capture, where nothing can be timed)."""
        from .cuda import block_key

        key = block_key(operands)
        found = self._wholes.get(key)
        if found is None or (plan and not found[1]):
            if not self.block_rival.can_time():
                found = self._wholes[key] = (None, False)
            else:
                current = next((w for w, _ in self._wholes.values() if w is not None), None)
                found = self._wholes[key] = (self.block_rival(self, operands, current), True)
        return found[0]

    def _block_runner(self, X, Y):
        """What runs a block product of ``X`` and ``Y``: an executor of the whole matrix, or None (the parts)."""
        if self.block_rival is None or X.shape[1] == 1:
            return None
        from ..kernels.block_operands import BlockOperands

        operands = BlockOperands.of(X, Y)
        return None if operands is None else self._whole_for(operands)

    def block_kernels(self, k: int, row_major: bool = True) -> tuple[str, ...]:
        """Each part's block product, in order; the whole matrix's, where its bucket runs it whole."""
        whole = self._whole_of_layout(k, row_major)
        if whole is not None:
            return tuple(f"whole matrix: {name}" for name in whole.block_kernels(k, row_major))
        return tuple(name for part in self.parts for name in part.block_kernels(k, row_major))

    def reads_once(self, k: int) -> tuple[bool, ...]:
        """Each part's answer, in order (each part's the whole matrix's, where its bucket runs it whole)."""
        whole = self._whole_of_layout(k, True)
        if whole is not None:
            return whole.reads_once(k) * len(self.parts)
        return tuple(once for part in self.parts for once in part.reads_once(k))

    def _whole_of_layout(self, k: int, row_major: bool):
        """The whole matrix's executor that aligned blocks of ``k`` columns in that layout run, or None."""
        if self.block_rival is None or k == 1:
            return None
        from ..kernels.block_operands import BlockOperands

        m, n = self.block_rival.shape
        operands = BlockOperands.row_major(k) if row_major else BlockOperands(k, (1, max(n, 1)), (1, max(m, 1)))
        return self._whole_for(operands)

    def block_executors(self) -> tuple:
        """Every part's."""
        return tuple(e for part in self.parts for e in part.block_executors())

    def prepare_blocks(self) -> None:
        """Every part's, and the whole matrix's where a bucket runs it."""
        for part in self.parts:
            part.prepare_blocks()
        for whole, _ in self._wholes.values():
            if whole is not None:
                whole.prepare_blocks()

    def plan_blocks(self, operands) -> None:
        """Plan block products of ``operands``' bucket and layout now: each part's, then whether the whole
        matrix runs them (``block_rival``), and bind what runs them for ``operands``."""
        for part in self.parts:
            part.plan_blocks(operands)
        whole = self._whole_for(operands, plan=True) if self.block_rival is not None and operands.k > 1 else None
        if whole is not None:
            whole.plan_blocks(operands)

    def captures_block(self, X, Y) -> bool:
        """Whether a block product of ``X`` and ``Y`` can be captured: what runs it can (every part, or the whole
        matrix's executor)."""
        whole = self._block_runner(X, Y)
        if whole is not None:
            return whole.captures_block(X, Y)
        return all(part.captures_block(X, Y) for part in self.parts)

    def run_block(self, X, Y, alpha, beta) -> None:
        """The same for a block of vectors (or the whole matrix's block product, where its bucket runs it)."""
        whole = self._block_runner(X, Y)
        if whole is not None:
            return whole.run_block(X, Y, alpha, beta)
        self._first.run_block(X, Y, alpha, beta)
        for part in self._rest:
            part.run_block(X, Y, alpha, 1)
