"""The product of a planned matrix: the plan ``format="auto"`` chose, which tuning may replace.

A :class:`PlannedProduct` is the executor a planned ``SparseMatrix`` holds.  It runs the current
plan's executor (through its :class:`~cocktail.auto.online.OnlineTuner` while one is tuning), plans
the block products of each bucket of k and layout before the first of them runs (the block planner
and the whole-matrix rival of :mod:`cocktail.auto.block_plans`), pushing what it decided down to the
executor, which only runs it, and answers every other question of the matrix with the current
executor's answer.  A bound product or a captured CUDA graph holds the executor current when it was
made: it keeps that plan.
"""

from __future__ import annotations

from ..executors.base import block_key
from ..kernels.block_operands import BlockOperands
from . import block_plans


class PlannedProduct:
    """The current ``storage`` and executor (``current``) of ``report.plan``; ``tuner`` while tuning.  ``yielding``:
    the launch policy its plans were bound with, which the whole-matrix rival of each plan binds with too."""

    def __init__(self, report, storage, executor, deterministic: bool = False, vendor: bool = True,
                 yielding: bool = False):
        self.report, self.storage, self.current = report, storage, executor
        self.tuner = None
        self._deterministic, self._vendor, self._yielding = deterministic, vendor, yielding
        self._kept = []  # (storage, executor) pairs a captured CUDA graph may still read
        self._retired = []  # (event, objects): released once the products queued before them finished
        self._dress(executor, storage)

    @property
    def plan(self):
        """The plan running now (``report.plan``)."""
        return self.report.plan

    @property
    def measured(self) -> dict:
        """Plan label -> measured µs, kept in the report for ``explain()``."""
        return self.report.measured

    def run(self, x, y, alpha, beta) -> None:
        """``y = alpha*A@x + beta*y`` with the current plan (timed and tuned while a tuner runs)."""
        tuner = self.tuner
        if tuner is None:
            if self._retired:
                self._release()
            self.current.run(x, y, alpha, beta)
        else:
            tuner.run(x, y, alpha, beta)

    def fresh(self, x, y_empty, alpha):
        """``alpha*A@x`` into ``y_empty``."""
        self.run(x, y_empty, alpha, 0)
        return y_empty

    # --- block products: each bucket of k and layout planned before its first product -------------------------
    def run_block(self, X, Y, alpha, beta) -> None:
        """``Y = alpha*A@X + beta*Y`` with the current plan, the bucket of ``X`` and ``Y`` planned on first use."""
        self._plan(_operands(X, Y))
        self.current.run_block(X, Y, alpha, beta)

    def captures_block(self, X, Y) -> bool:
        """Whether the current plan's block product of ``X`` and ``Y`` can be captured (its bucket planned first)."""
        self._plan(_operands(X, Y))
        return self.current.captures_block(X, Y)

    def plan_blocks(self, operands) -> None:
        """Plan block products of ``operands``' bucket of k and layout now, again where a CUDA graph capture left
        it to the rule's choice (nothing can be timed inside one)."""
        self._plan(operands, again=True)

    def bind_blocks(self, operands) -> None:
        """:meth:`plan_blocks`, then bind what runs ``operands`` (ahead of a capture)."""
        self.plan_blocks(operands)
        self.current.bind_blocks(operands)

    def block_kernels(self, k: int, row_major: bool = True) -> tuple[str, ...]:
        """What the current plan's block product of ``k`` columns in that layout runs (its bucket planned first)."""
        self._plan(self._width(k, row_major))
        return self.current.block_kernels(k, row_major)

    def reads_once(self, k: int) -> tuple[bool, ...]:
        """Per part, whether the current plan's row-major block product of ``k`` columns reads the matrix once."""
        self._plan(self._width(k, True))
        return self.current.reads_once(k)

    def whole_for_width(self, k: int, row_major: bool = True):
        """The whole matrix's executor that runs aligned blocks of ``k`` columns in that layout, or None (its
        bucket planned first)."""
        self._plan(self._width(k, row_major))
        return self.current.whole_for_width(k, row_major)

    def _width(self, k: int, row_major: bool):
        """The operands of aligned blocks of ``k`` columns in that layout (None: one column, nothing to plan)."""
        if k == 1:
            return None
        return BlockOperands.of_width(k, self.storage.shape, row_major)

    def _plan(self, operands, again: bool = False) -> None:
        """Plan ``operands``' bucket of k and layout for the current executor where it is not planned yet
        (``again``: also where it was met inside a capture), pushing the decisions down
        (:func:`.block_plans.plan_bucket`); inside a capture nothing is timed: the bucket runs the rule's choice."""
        if operands is None:
            return
        key = block_key(operands)
        planned = self._buckets.get(key)
        if planned or (planned is not None and not again):
            return
        self._buckets[key] = block_plans.can_time()
        if self._buckets[key]:
            block_plans.plan_bucket(self.current, operands, self._planner, self._rival)

    def __getattr__(self, name):
        if name in ("current", "__setstate__"):  # not set yet: no delegation loop
            raise AttributeError(name)
        return getattr(self.current, name)

    def _dress(self, executor, storage) -> None:
        """Fresh block planning for ``executor`` (of ``storage``): no bucket planned yet, each timed on first use,
        and the whole matrix as one CSR as a rival where it may win."""
        rival = block_plans.WholeRival
        self._buckets = {}  # block_key -> planned (False: met inside a capture, the rule's choice ran)
        self._planner = block_plans.planner(self._deterministic, self._vendor)
        self._rival = (rival(storage, self._deterministic, self._vendor, self._yielding)
                       if rival.wanted(executor, storage) else None)

    def switch(self, plan, storage, executor) -> None:
        """Run ``plan`` (built as ``storage`` and ``executor``) from the next product on; the old one is retired."""
        self._dress(executor, storage)
        self.retire(self.storage, self.current)
        self.report.plan, self.storage, self.current = plan, storage, executor

    def keep_current(self) -> None:
        """A CUDA graph holds the current plan's launches (captured, or bound): keep its arrays as long as the
        matrix lives."""
        pair = (self.storage, self.current)
        if not any(pair[1] is kept[1] for kept in self._kept):
            self._kept.append(pair)

    def retire(self, *objects) -> None:
        """Release ``objects`` (storages, executors, arrays) once the products queued until now have finished:
        CuPy's pool may give their memory to the next allocation on another stream before then."""
        import cupy

        done = cupy.cuda.Event(disable_timing=True)
        done.record(cupy.cuda.get_current_stream())
        self._retired.append((done, objects))
        self._release()

    def _release(self) -> None:
        """Drop what was retired before products that have now finished."""
        self._retired = [(event, held) for event, held in self._retired if not event.done]


def _operands(X, Y):
    """The operands whose bucket a block product of ``X`` and ``Y`` runs: none for one column (the SpMV), C-ordered
    ones where a kernel cannot address them in place (the executor multiplies C-ordered copies)."""
    if X.shape[1] == 1:
        return None
    return BlockOperands.of(X, Y) or BlockOperands.row_major(X.shape[1])
