"""``tune="auto"``: the matrix tunes its plan on the user's own products, within a budget of their time.

The model's plan runs from the first product.  While the user multiplies, :class:`OnlineTuner`:

1. times the plan on its own products (every other call, between CUDA events read back without
   synchronising: :class:`EventClock`) until it holds :data:`SAMPLES` times;
2. asks the planning for the rivals the model ranks close to the plan's measured time (the plan without the
   coded cut, plans of ours of other families, the vendor's kernels, the plan's own family's other kinds and
   settings, taken in turn), at most :data:`MAX_RIVALS`;
3. builds one rival at a time aside (on a thread and a stream of their own: the user's products go on
   meanwhile, never waiting for a conversion, a kernel's compilation or an analysis), and only while
   the time spent tuning (building, and the rival's products where it ran slower) stays within
   :data:`BUDGET` of the time the user's products took: the first, in the planning's order, of those the
   products have paid for (a rival on the CSR's own arrays, which only binds, is paid for long before one that
   converts);
4. runs the rival in runs of :data:`RUN` products alternating with the plan's (each timed, the first of a run
   not judged: it finds the other side's matrix in L2), drops it once it measures :data:`GIVE_UP` slower, and
   moves to it once it measured faster by :data:`MARGIN` (:data:`SAMPLES` times each) and faster than the plan
   measured alone: the matrix never moves to a plan it has not measured faster (a trial whose products both read
   slower than alone, by whatever else shares the GPU meanwhile, is no reason to move: holdout_rmat's
   cuSPARSE CSR read 15.0 µs against its plan's 17.1 in a trial, 13.0 alone, and runs 11.8 against 9.6);
5. stops when no rival is left: the last plan stays, the decision is cached, the CSR it built rivals
   from is released, and what it did is kept for ``explain()`` (:attr:`OnlineTuner.history`).

Inside a CUDA graph capture nothing is timed or built: the product runs the current plan, which the
:class:`~cocktail.auto.plans.PlannedProduct` then keeps alive (the graph holds its arrays).

The clock, the build and where work aside runs are injected, so the state machine is tested on the CPU
with a fake clock.
"""

from __future__ import annotations

import math
import statistics
import time

#: Products timed per plan before comparing (the plan's alone first, then each side of a trial).
SAMPLES = 6
#: A rival is dropped once it measured this much slower than the plan after half of SAMPLES times.
GIVE_UP = 0.2
#: A rival replaces the plan only when measured faster by this share (more than the timing's noise).
MARGIN = 0.03
#: At most this many rivals are tried, in the planning's order (:meth:`~cocktail.auto.planner.Planning.tuning_rivals`).
MAX_RIVALS = 4
#: Tuning (building rivals, their products where slower) may cost this share of the products' time.
BUDGET = 0.05
#: A build is expected to cost this many of the plan's products: a rival on the CSR's own arrays binds only,
#: any other converts.  Choosing the rivals of a matrix whose plan came from the decision cache costs an
#: analysis of it (features and planning).
BIND_PRODUCTS, CONVERT_PRODUCTS, ANALYSIS_PRODUCTS = 10.0, 60.0, 40.0
#: A trial runs each side this many timed products in a row and judges by all but the first of each run: single
#: products in alternation evict each other's matrix from L2 and both read slower than alone (holdout_rmat's plan
#: 26.8 µs in alternation, 13.7 alone on an H200), enough to move to a plan that then runs slower.
RUN = 3


#: Where the GPU may be idle as a sample starts, a busy wait this long goes first: the host then queues the
#: product (the Python and the library's calls of a product, with room to spare) before the GPU reaches it,
#: so the sample times the product's kernels, not the host.  Counted in the tuning's cost.
HEAD_START_US = 30.0


class EventClock:
    """Pairs of CUDA events around sampled products on the caller's stream, read back without synchronising.

    Every sample runs right after earlier work on the GPU: the previous sample had not finished as this one
    was queued, or a busy wait of :data:`HEAD_START_US` goes first.  Its time is then the product's alone (on
    an idle GPU it would include the host's time to launch it)."""

    def __init__(self, pairs: int = 32):
        import cupy

        self._cupy = cupy
        self._free, self._unmade = [], pairs  # pairs made as samples first need them: 64 events cost milliseconds
        self._last_end = None
        self.overhead_us = 0.0  # the busy waits queued so far

    def capturing(self) -> bool:
        """Whether the current stream is capturing a CUDA graph (nothing may be timed or built)."""
        return self._cupy.cuda.get_current_stream().is_capturing()

    def start(self):
        """A token for one sample, its first event recorded; None when every pair is in flight."""
        if not self._free:
            if not self._unmade:
                return None
            self._unmade -= 1
            self._free.append((self._cupy.cuda.Event(), self._cupy.cuda.Event()))
        from ..timing import spin

        pair = self._free.pop()
        stream = self._cupy.cuda.get_current_stream()
        if self._last_end is None or self._last_end.done:
            spin(HEAD_START_US * 1e-6, stream)
            self.overhead_us += HEAD_START_US
        pair[0].record(stream)
        return pair

    def wait(self, event) -> None:
        """Make the current stream wait for ``event`` (a rival's build on another stream); None waits for nothing."""
        if event is not None:
            self._cupy.cuda.get_current_stream().wait_event(event)

    def stop(self, token) -> None:
        """Record the sample's second event, after the product."""
        token[1].record(self._cupy.cuda.get_current_stream())
        self._last_end = token[1]

    def read(self, token):
        """The µs of a finished sample (its events returned to the pool), None while it runs."""
        if not token[1].done:
            return None
        self._free.append(token)
        return self._cupy.cuda.get_elapsed_time(token[0], token[1]) * 1e3


def at_once(work):
    """Run ``work()`` now, on the caller's thread: a finished :class:`concurrent.futures.Future` of its answer
    (or of its exception)."""
    from concurrent.futures import Future

    done = Future()
    try:
        done.set_result(work())
    except BaseException as exc:  # noqa: BLE001 - handed over with the answer, as a thread's would be
        done.set_exception(exc)
    return done


class _Trial:
    """A rival being tried: its plan, its ``(storage, executor)``, the event its build ends with (None: built on
    the caller's stream), and both sides' samples during the trial."""

    def __init__(self, plan, built, ready):
        self.plan, self.built, self.ready = plan, built, ready
        self.rival, self.current = [], []  # µs samples
        self.turn = 0


class OnlineTuner:
    """The state machine of ``tune="auto"`` for one :class:`~cocktail.auto.plans.PlannedProduct`.

    ``rivals(reference_us)``: the plans to try, in the order to try them, given the plan's measured µs
    (``lazy_rivals``: choosing them costs an analysis of the matrix, made only once the products have paid
    for it, as a build); ``build(plan)``: ``(storage, executor, ready)``, ``ready`` the event the build ends
    with (None: nothing to wait for), raising :class:`~cocktail.errors.DeviceMemoryError` where it does not
    fit; ``done(plan, crowded)``: called once when tuning stops (``crowded``: a rival did not fit in memory).
    A rival that fails to build otherwise loses (its error in :attr:`history`): tuning never fails a product.
    ``aside(work)``: runs ``work()`` (a build, or a lazy choice of the rivals) off the user's products and
    returns a :class:`~concurrent.futures.Future` of its answer (default :func:`at_once`: on the caller's
    thread); the products go on with the current plan until it is done.
    """

    def __init__(self, product, rivals, build, done, clock=None, now=time.perf_counter, lazy_rivals: bool = False,
                 aside=at_once):
        self.product, self._rivals, self._build, self._done = product, rivals, build, done
        self._lazy_rivals, self._aside = lazy_rivals, aside
        self._working = None  # (what, plan or None, future): work aside not finished yet
        self.clock = clock if clock is not None else EventClock()
        self._now = now
        self.calls = 0
        self.products_us = 0.0  # the user's products' time so far, estimated from the plan's measured time
        self.spent_us = 0.0  # building rivals, and rival products beyond the plan's time
        self.baseline = []  # the plan's samples before the rivals are chosen
        self._baseline_us = None  # their median, kept as they come (read on every product)
        self.queue = None  # the rivals left to try, once chosen
        self.trial = None
        self.crowded = False
        self.history = []  # what happened, for explain(): (call, words)
        self._pending = []  # (side, trial or None, token): "plan" / "rival" samples not read yet
        self._idle_until = 0  # products before which nothing is due (waiting for the products to pay a build)

    # -- a product -----------------------------------------------------------------------------------
    def run(self, x, y, alpha, beta) -> None:
        """One of the user's products: run it (timed where a sample is due) and advance the tuning."""
        product = self.product
        if self.clock.capturing():
            product.keep_current()
            product.current.run(x, y, alpha, beta)
            return
        if self.calls < self._idle_until:  # nothing due: the plan runs, untimed
            self.calls += 1
            self.products_us += self._idle_us
            product.current.run(x, y, alpha, beta)
            return
        self._read()
        self.calls += 1
        side, token = "plan", (self.clock.start() if self._sampled() else None)
        if token is not None and self.trial is not None:  # a trial alternates runs of timed products
            side = "rival" if (self.trial.turn // RUN) % 2 == 0 else "plan"
            if self.trial.turn % RUN == 0:
                side += " first"  # its L2 holds the other side's matrix: timed for the cost, not judged
            self.trial.turn += 1
        if side.startswith("rival"):  # only ever timed: with every event pair in flight the plan runs, untimed
            self.clock.wait(self.trial.ready)
            self.trial.built[1].run(x, y, alpha, beta)
        else:
            product.current.run(x, y, alpha, beta)
        if token is not None:
            self.clock.stop(token)
            self._pending.append((side, self.trial, token))
        self.products_us += self._plan_us()
        self._step()

    def _sampled(self) -> bool:
        """Every product of a trial is timed (where an event pair is free); the plan alone every other product
        until its rivals are being chosen."""
        return self.trial is not None or (self.queue is None and self._working is None and self.calls % 2 == 1)

    def _read(self) -> None:
        """Collect the finished samples (no synchronisation)."""
        still = []
        for side, trial, token in self._pending:
            got = self.clock.read(token)
            if got is None:
                still.append((side, trial, token))
            elif trial is None:
                self.baseline.append(got)
                self._baseline_us = statistics.median(self.baseline)
            elif trial is self.trial and side.startswith("rival"):
                if side == "rival":
                    trial.rival.append(got)
                self.spent_us += max(0.0, got - self._plan_us())
            elif trial is self.trial and side == "plan":
                trial.current.append(got)
        self._pending = still  # a finished trial's late samples are dropped

    def _plan_us(self) -> float:
        """The plan's time per product: measured where it has samples, else predicted."""
        if self._baseline_us is not None:
            return self._baseline_us
        return float(getattr(self.product.plan, "predicted_us", 0.0) or 0.0)

    # -- the state machine ---------------------------------------------------------------------------
    def _step(self) -> None:
        if self._working is not None:
            self._collect()
            return
        if self.queue is None:
            if len(self.baseline) >= SAMPLES and not self._waits_for(ANALYSIS_PRODUCTS if self._lazy_rivals else 0):
                measured = self._baseline_us
                self.product.plan.measured_us = measured
                self.product.measured[_label(self.product.plan)] = measured
                self._begin("rivals", None, lambda: list(self._rivals(measured))[:MAX_RIVALS])
            return
        if self.trial is not None:
            self._judge()
            return
        if not self.queue:
            self._finish()
            return
        # the first, in the planning's order, of the rivals the products have paid for: one that only binds the
        # CSR's arrays may go before one that converts
        cheapest = min(_build_products(p) for p in self.queue)
        if self._waits_for(cheapest):
            return
        plan = next(p for p in self.queue if self._short_us(_build_products(p)) <= 0)
        self.queue.remove(plan)
        self._start(plan)

    def _short_us(self, products: float) -> float:
        """How far the products' time is from paying, at BUDGET, for work expected to cost ``products`` of the
        plan's products on top of what tuning spent (positive: not yet)."""
        return self._spent_us() + products * self._plan_us() - BUDGET * self.products_us

    def _waits_for(self, products: float) -> bool:
        """Whether work expected to cost ``products`` of the plan's products must wait for the products to pay
        for it; if so, nothing is due, untimed, until they have."""
        short_us = self._short_us(products)
        if short_us <= 0:
            return False
        self._idle_us = self._plan_us()
        self._idle_until = self.calls + max(1, math.ceil(short_us / (BUDGET * max(self._idle_us, 1e-3))))
        return True

    def _spent_us(self) -> float:
        """What tuning cost so far: builds, rival products beyond the plan's time, the clock's busy waits."""
        return self.spent_us + getattr(self.clock, "overhead_us", 0.0)

    def _start(self, plan) -> None:
        self._begin("build", plan, lambda: self._build(plan))

    def _begin(self, what: str, plan, work) -> None:
        """Start ``work`` aside (the rivals' choice, or ``plan``'s build), timed from start to end where it ran."""
        def timed():
            t0 = self._now()
            try:
                return work(), self._now() - t0, None
            except Exception as exc:  # noqa: BLE001 - collected on the products' side: a rival that fails loses
                return None, self._now() - t0, exc

        try:
            future = self._aside(timed)
        except Exception as exc:  # noqa: BLE001 - nowhere to run it (the interpreter shutting down): it failed
            future = at_once(lambda: (None, 0.0, exc))
        self._working = (what, plan, future)
        self._collect()

    def _collect(self) -> None:
        """Take what was done aside, once done: the rivals to try, or a built rival to try (a failed build loses;
        choosing rivals that fails leaves none).  Its time counts in the tuning's cost."""
        from ..errors import DeviceMemoryError

        what, plan, future = self._working
        if not future.done():
            return
        self._working = None
        failed = future.exception()  # raised around the work (entering its device or stream), not by it
        if failed is not None and not isinstance(failed, Exception):
            raise failed  # an interrupt is the user's, not a failed rival
        answer, seconds, exc = (None, 0.0, failed) if failed is not None else future.result()
        self.spent_us += seconds * 1e6
        if what == "rivals":
            self.queue = [] if exc is not None else answer
            measured = self._plan_us()
            self._say(f"timed its plan on {len(self.baseline)} products: {measured:.3g} µs; "
                      + (f"choosing rivals failed ({type(exc).__name__}: {exc})" if exc is not None else
                         f"{len(self.queue)} rival(s) to try" if self.queue else "no rival close enough"))
        elif isinstance(exc, DeviceMemoryError):
            self.crowded = True
            self._say(f"{_label(plan)} did not fit in GPU memory")
        elif exc is not None:
            self._say(f"{_label(plan)} failed to build ({type(exc).__name__}: {exc})")
        else:
            storage, executor, ready = answer
            self.trial = _Trial(plan, (storage, executor), ready)
            self._say(f"built {_label(plan)} in {seconds * 1e3:.2f} ms; trying it")

    def _judge(self) -> None:
        trial = self.trial
        rival, current = trial.rival, trial.current
        if len(rival) >= SAMPLES // 2 and len(current) >= SAMPLES // 2:
            r, c = statistics.median(rival), statistics.median(current)
            if r > c * (1.0 + GIVE_UP) or (len(rival) >= SAMPLES and len(current) >= SAMPLES):
                trial.plan.measured_us = r
                if r * (1.0 + MARGIN) < c and r < self._baseline_us:
                    self.product.plan.measured_us = c
                    self._say(f"moved to {_label(trial.plan)}: {r:.3g} µs against {c:.3g} µs")
                    self.product.switch(trial.plan, *trial.built)
                    self.baseline, self._baseline_us = list(rival), r
                else:
                    alone = "" if r * (1.0 + MARGIN) >= c else f" (and {self._baseline_us:.3g} µs alone)"
                    self._say(f"kept its plan: {_label(trial.plan)} {r:.3g} µs against {c:.3g} µs{alone}")
                    self.product.retire(*trial.built)
                self.product.measured[_label(trial.plan)] = r
                self.trial = None

    def _finish(self) -> None:
        self._say(f"done after {self.calls} products; tuning cost {self._spent_us() / 1e3:.3g} ms against "
                  f"{self.products_us / 1e3:.3g} ms of products")
        self.product.tuner = None
        self._done(self.product.plan, self.crowded)

    def _say(self, words: str) -> None:
        self.history.append((self.calls, words))


def _label(plan) -> str:
    return plan.detail() if hasattr(plan, "detail") else str(plan)


def _build_products(plan) -> float:
    """What building ``plan`` is expected to cost, in the plan's products: a plan on the CSR's own arrays binds
    only (BIND_PRODUCTS), any other converts (CONVERT_PRODUCTS)."""
    shares = all(p.format == "csr" for p in plan.parts) if hasattr(plan, "parts") else False
    return BIND_PRODUCTS if shares else CONVERT_PRODUCTS
