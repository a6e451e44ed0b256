"""tune="auto": the tuner's state machine on the user's products (a fake clock and fake plans: no GPU), and the
rivals it tries."""

from __future__ import annotations

import pytest

from cocktail.auto import online, planner, planning
from cocktail.errors import DeviceMemoryError


class FakePlan:
    def __init__(self, name, predicted_us, fmt="ell"):
        self.name, self.predicted_us, self.measured_us = name, predicted_us, None
        self.parts = (type("Part", (), {"format": fmt})(),)

    def detail(self):
        return self.name


class FakeExecutor:
    """Runs in ``us`` microseconds of the fake clock."""

    def __init__(self, clock, us):
        self.clock, self.us, self.runs = clock, us, 0

    def run(self, x, y, alpha, beta):
        self.runs += 1
        self.clock.ran(self.us)


class FakeClock:
    """Samples finish one product later (read without waiting); ``capturing`` as set."""

    def __init__(self, pairs=1000):
        self.capture, self.last, self.now_us = False, None, 0.0
        self.tokens, self.pairs, self.waited = [], pairs, []

    def capturing(self):
        return self.capture

    def ran(self, us):
        self.last = us
        self.now_us += us

    def start(self):
        if sum(t["age"] <= 1 for t in self.tokens) >= self.pairs:
            return None
        token = {"us": None, "age": 0}
        self.tokens.append(token)
        return token

    def wait(self, event):
        self.waited.append(event)

    def stop(self, token):
        token["us"] = self.last

    def read(self, token):
        token["age"] += 1
        return token["us"] if token["age"] > 1 else None


class FakeProduct:
    def __init__(self, plan, executor):
        self.plan, self.current, self.storage = plan, executor, "storage"
        self.tuner, self.measured, self.retired, self.kept, self.switched = None, {}, [], 0, []

    def run(self, *args):
        (self.current if self.tuner is None else self.tuner).run(*args)

    def switch(self, plan, storage, executor):
        self.retired.append(self.current)
        self.plan, self.storage, self.current = plan, storage, executor
        self.switched.append(plan.name)

    def retire(self, *objects):
        self.retired.extend(objects)

    def keep_current(self):
        self.kept += 1


def tuner_for(plan_us, rival_times, build_s=0.0, fits=True, predicted=None, pairs=1000, lazy=False, fails=(),
              aside=online.at_once):
    """A product running a plan of ``plan_us`` and a tuner whose rivals run in ``rival_times`` (name -> µs)."""
    clock = FakeClock(pairs)
    plan = FakePlan("plan", plan_us)
    product = FakeProduct(plan, FakeExecutor(clock, plan_us))
    rivals = [FakePlan(name, (predicted or {}).get(name, us)) for name, us in rival_times.items()]
    built, done, now = [], [], [0.0]

    def build(p):
        if not fits:
            raise DeviceMemoryError("rival", 1 << 30, 0)
        if p.name in fails:
            raise RuntimeError("a bug in a conversion")
        now[0] += build_s
        built.append(p.name)
        return ("storage-" + p.name, FakeExecutor(clock, rival_times[p.name]), "ready-" + p.name)

    product.tuner = online.OnlineTuner(product, lambda us: rivals, build, lambda p, crowded: done.append((p, crowded)),
                                       clock=clock, now=lambda: now[0], lazy_rivals=lazy, aside=aside)
    return product, clock, built, done


def multiply(product, calls):
    for _ in range(calls):
        product.run(None, None, 1, 0)


def test_the_plan_runs_from_the_first_product_and_moves_only_to_a_rival_measured_faster():
    product, clock, built, done = tuner_for(10.0, {"tie": 9.8, "fast": 8.0})
    history = product.tuner.history
    multiply(product, 5000)
    assert product.tuner is None and len(done) == 1  # stopped, once
    assert product.switched == ["fast"] and product.plan.name == "fast"
    assert built == ["tie", "fast"]  # each built once, in the order given
    assert product.measured == {"plan": pytest.approx(10.0), "fast": pytest.approx(8.0), "tie": pytest.approx(9.8)}
    assert any("kept its plan: tie" in words for _, words in history)  # 2% faster than the plan: within the margin
    assert any("moved to fast" in words for _, words in history)
    assert set(clock.waited) == {"ready-tie", "ready-fast"}  # each rival's products waited for its build


def test_a_slower_rival_is_dropped_early_and_the_plan_stays():
    product, clock, built, done = tuner_for(10.0, {"slow": 20.0})
    multiply(product, 5000)
    assert product.switched == [] and done[0][0].name == "plan"
    assert product.measured["slow"] == pytest.approx(20.0)
    # dropped after SAMPLES // 2 judged samples of each side (in runs of RUN, their first not judged), not SAMPLES
    runs = -(-(online.SAMPLES // 2) // (online.RUN - 1))
    assert product.retired and product.retired[-1].runs <= runs * online.RUN + 1


def test_no_rival_is_built_before_the_products_paid_for_it():
    build_s = 0.001  # 1 ms: 100 products of 10 µs
    product, clock, built, done = tuner_for(10.0, {"r1": 9.0}, build_s=build_s)
    tuner = product.tuner
    multiply(product, 1000)
    assert built == []  # 1,000 products of 10 µs do not pay, at BUDGET, for a build expected to cost 60 of them
    multiply(product, 2000)
    assert built == ["r1"] and product.tuner is None
    assert tuner.spent_us <= online.BUDGET * tuner.products_us + build_s * 1e6  # within budget, but for one build


def test_a_rival_that_does_not_fit_loses_and_the_decision_is_not_kept():
    product, clock, built, done = tuner_for(10.0, {"big": 5.0}, fits=False)
    multiply(product, 5000)
    assert product.switched == [] and done == [(product.plan, True)]  # crowded: not a decision to cache


def test_inside_a_capture_nothing_is_timed_or_built_and_the_plan_is_kept_alive():
    product, clock, built, done = tuner_for(10.0, {"fast": 5.0})
    clock.capture = True
    multiply(product, 50)
    assert clock.tokens == [] and built == [] and product.kept == 50 and product.tuner is not None
    clock.capture = False
    multiply(product, 5000)
    assert product.switched == ["fast"]


def test_rivals_are_ranged_from_the_measured_time_when_the_plan_is_slower_than_predicted():
    def single(name, us):
        return planner.Plan((planner.Part(name, ("rest",), 100, 100, us),), us)

    bdia, bcsr = single("bdia_direct", 10.0), single("bcsr(3x3)", 18.0)  # bcsr predicted past 1.5x of bdia
    ranked = planner.Planning(None, [bdia, bcsr], "model")
    assert planning.rivals(ranked, bdia, 10.5) == []
    assert planning.rivals(ranked, bdia, 24.0) == [bcsr]  # measured 2.4x its prediction: bcsr is within 1.5x


def test_a_rival_runs_only_on_products_it_can_time():
    product, clock, built, done = tuner_for(10.0, {"slow": 100.0}, pairs=1)  # one sample in flight at a time
    multiply(product, 3000)
    assert built == ["slow"] and product.switched == []
    rival = product.retired[-1]
    assert rival.runs <= len(clock.tokens)  # never untimed: every run of the rival was a sample


def test_a_rival_that_fails_to_build_loses_and_the_products_go_on():
    product, clock, built, done = tuner_for(10.0, {"broken": 5.0, "fast": 8.0}, fails=("broken",))
    history = product.tuner.history
    multiply(product, 5000)
    assert product.switched == ["fast"] and any("broken failed to build (RuntimeError" in w for _, w in history)


def test_a_cached_plan_chooses_its_rivals_only_once_the_products_paid_for_the_analysis():
    product, clock, built, done = tuner_for(10.0, {"fast": 5.0}, lazy=True)
    tuner = product.tuner
    multiply(product, 100)
    assert tuner.queue is None  # 100 products of 10 µs do not pay, at BUDGET, for an analysis of 40 of them
    multiply(product, 5000)
    assert product.switched == ["fast"]


def test_the_clocks_busy_waits_count_in_the_tuning_cost():
    product, clock, built, done = tuner_for(10.0, {"fast": 5.0})
    clock.overhead_us = 1e9  # as if every sample had waited ages: nothing more may be built
    multiply(product, 5000)
    assert built == [] and product.tuner is not None


def test_a_rival_on_the_csrs_own_arrays_goes_before_a_dearer_one_the_products_have_not_paid_for():
    product, clock, built, done = tuner_for(10.0, {"converted": 9.9, "vendor": 8.0})
    rivals = product.tuner._rivals(10.0)
    rivals[1].parts = (type("Part", (), {"format": "csr"})(),)  # "vendor" binds the CSR's arrays only
    multiply(product, 400)
    assert built == ["vendor"] and product.switched == ["vendor"]  # paid for at 200 products; "converted" not yet
    multiply(product, 5000)
    assert built == ["vendor", "converted"]


class Deferred:
    """An ``aside`` that holds its work until :meth:`finish`: as a thread still converting would."""

    def __init__(self):
        self.held = []

    def __call__(self, work):
        from concurrent.futures import Future

        future = Future()
        self.held.append((work, future))
        return future

    def finish(self):
        for work, future in self.held:
            future.set_result(work())
        self.held = []


def test_work_aside_never_holds_up_the_products_which_run_the_plan_until_it_is_done():
    aside = Deferred()
    product, clock, built, done = tuner_for(10.0, {"fast": 5.0}, aside=aside)
    tuner = product.tuner
    multiply(product, 2000)
    assert tuner.queue is None and len(aside.held) == 1  # choosing the rivals: pending, the plan runs on
    aside.finish()
    multiply(product, 3000)
    assert built == [] and len(aside.held) == 1  # the build is due (paid for) but has not run yet
    runs = product.current.runs
    multiply(product, 500)
    assert product.current.runs == runs + 500 and product.switched == [] and tuner.trial is None
    aside.finish()
    multiply(product, 100)
    assert built == ["fast"] and product.switched == ["fast"]
    assert any("built fast" in words for _, words in tuner.history)


def test_choosing_rivals_that_fails_ends_the_tuning_and_the_products_go_on():
    def broken(us):
        raise RuntimeError("an analysis bug")

    product, clock, built, done = tuner_for(10.0, {"fast": 5.0})
    product.tuner._rivals = broken
    history = product.tuner.history
    multiply(product, 3000)
    assert product.tuner is None and done == [(product.plan, False)] and product.switched == []
    assert any("choosing rivals failed (RuntimeError: an analysis bug)" in w for _, w in history)


def test_the_plan_is_no_longer_timed_while_its_rivals_are_being_chosen():
    aside = Deferred()
    product, clock, built, done = tuner_for(10.0, {"fast": 5.0}, aside=aside)
    multiply(product, 3000)
    assert len(aside.held) == 1 and online.SAMPLES <= len(product.tuner.baseline) <= online.SAMPLES + 2
    assert len(clock.tokens) <= online.SAMPLES + 2


def test_work_that_cannot_be_set_aside_or_fails_around_it_loses_and_the_products_go_on():
    def nowhere(work):
        raise RuntimeError("cannot schedule new futures after interpreter shutdown")

    product, clock, built, done = tuner_for(10.0, {"fast": 5.0}, aside=nowhere)
    history = product.tuner.history
    multiply(product, 3000)
    assert product.tuner is None and product.switched == [] and built == []
    assert any("choosing rivals failed (RuntimeError: cannot schedule" in w for _, w in history)

    def broken_context(work):
        from concurrent.futures import Future

        future = Future()
        future.set_exception(ValueError("no such device"))  # raised before the work's own try
        return future

    product, clock, built, done = tuner_for(10.0, {"fast": 5.0}, aside=broken_context)
    history = product.tuner.history
    multiply(product, 3000)
    assert product.tuner is None and product.switched == []
    assert any("choosing rivals failed (ValueError: no such device)" in w for _, w in history)


def test_an_interrupt_raised_aside_reaches_the_user():
    def interrupted(work):
        from concurrent.futures import Future

        future = Future()
        future.set_exception(KeyboardInterrupt())
        return future

    product, clock, built, done = tuner_for(10.0, {"fast": 5.0}, aside=interrupted)
    with pytest.raises(KeyboardInterrupt):
        multiply(product, 3000)


class ColdExecutor(FakeExecutor):
    """Runs in ``us`` after a product of its own, in ``cold_us`` after another executor's (its matrix out of L2)."""

    def __init__(self, clock, us, cold_us):
        super().__init__(clock, us)
        self.cold_us = cold_us

    def run(self, x, y, alpha, beta):
        self.runs += 1
        self.clock.ran(self.us if self.clock.previous is self else self.cold_us)
        self.clock.previous = self


def test_a_trial_judges_warm_runs_not_products_that_find_the_other_sides_matrix_in_l2():
    # cold, the rival (9 µs) looks faster than the plan (20 µs); warm, as a product loop runs it, it is slower
    clock = FakeClock()
    clock.previous = None
    plan = FakePlan("plan", 10.0)
    product = FakeProduct(plan, ColdExecutor(clock, 10.0, 20.0))
    rival = FakePlan("rival", 9.0)
    done = []
    product.tuner = online.OnlineTuner(
        product, lambda us: [rival], lambda p: ("storage-rival", ColdExecutor(clock, 12.0, 9.0), None),
        lambda p, crowded: done.append(p), clock=clock, now=lambda: 0.0)
    multiply(product, 5000)
    assert product.switched == [] and done and done[0].name == "plan"
    assert product.measured["rival"] == pytest.approx(12.0)


class SharedExecutor(FakeExecutor):
    """Runs in ``us``, and ``shared_us`` while a trial runs (something else on the GPU meanwhile)."""

    def __init__(self, clock, us, shared_us, product):
        super().__init__(clock, us)
        self.shared_us, self.product = shared_us, product

    def run(self, x, y, alpha, beta):
        self.runs += 1
        tuner = self.product.tuner
        self.clock.ran(self.shared_us if tuner is not None and tuner.trial is not None else self.us)


def test_a_rival_faster_only_than_a_slowed_trial_of_the_plan_does_not_replace_it():
    # in the trial the plan reads 14 µs and the rival 12: faster there, but slower than the plan's 10 alone
    clock = FakeClock()
    product = FakeProduct(FakePlan("plan", 10.0), None)
    product.current = SharedExecutor(clock, 10.0, 14.0, product)
    done = []
    product.tuner = online.OnlineTuner(
        product, lambda us: [FakePlan("rival", 9.0)], lambda p: ("storage-rival", FakeExecutor(clock, 12.0), None),
        lambda p, crowded: done.append(p), clock=clock, now=lambda: 0.0)
    multiply(product, 5000)
    assert product.switched == [] and done and done[0].name == "plan"
    assert product.measured["rival"] == pytest.approx(12.0)
