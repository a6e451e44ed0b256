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

    def run(self, x, y, alpha, beta) -> None:
        """``y = alpha*(A_0 + A_1 + ...)@x + beta*y``, part after part."""
        self._first.run(x, y, alpha, beta)
        for part in self._rest:
            part.run(x, y, alpha, 1)

    def own_block_kernels(self, k: int, row_major: bool = True) -> tuple[str, ...]:
        """Each part's block product, in order."""
        return tuple(name for part in self.parts for name in part.block_kernels(k, row_major))

    def own_reads_once(self, k: int) -> tuple[bool, ...]:
        """Each part's answer, in order."""
        return tuple(once for part in self.parts for once in part.reads_once(k))

    def block_executors(self) -> tuple:
        """Every part's."""
        return tuple(e for part in self.parts for e in part.block_executors())

    def prepare_blocks(self) -> None:
        """Every part's."""
        for part in self.parts:
            part.prepare_blocks()

    def bind_blocks(self, operands) -> None:
        """Every part's, then the whole matrix's where it runs the bucket."""
        for part in self.parts:
            part.bind_blocks(operands)
        super().bind_blocks(operands)

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
