"""The product of a planned matrix: the plan ``format="auto"`` chose, which tuning may replace.

A :class:`PlannedProduct` is the executor a planned ``SparseMatrix`` holds.  It runs the current
plan's executor (through its :class:`~cocktail.auto.online.OnlineTuner` while one is tuning), sets up
each executor it runs for block products (the block planner and the whole-matrix rival of
:mod:`cocktail.auto.block_plans`: planning stays here, the executors only run), and answers every
other question of the matrix with the current executor's answer.  A bound product or a captured
CUDA graph holds the executor current when it was made: it keeps that plan.
"""

from __future__ import annotations


class PlannedProduct:
    """The current ``storage`` and executor (``current``) of ``report.plan``; ``tuner`` while tuning."""

    def __init__(self, report, storage, executor, deterministic: bool = False, vendor: bool = True):
        self.report, self.storage, self.current = report, storage, executor
        self.tuner = None
        self._deterministic, self._vendor = deterministic, vendor
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

    def __getattr__(self, name):
        if name in ("current", "__setstate__"):  # not set yet: no delegation loop
            raise AttributeError(name)
        return getattr(self.current, name)

    def _dress(self, executor, storage) -> None:
        """Give ``executor`` (of ``storage``) its block planning: each bucket of k timed on first use, and the
        whole matrix as one CSR as a rival where it may win."""
        from .block_plans import WholeRival, planner

        for leaf in executor.block_executors():
            leaf.block_planner = planner(self._deterministic, self._vendor)
        if WholeRival.wanted(executor, storage):
            executor.block_rival = WholeRival(storage, self._deterministic, self._vendor)

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
