"""Block products on the matrix as stored (a Cocktail's parts one after another) or on the whole matrix as one
CSR (no GPU): the executor's dispatch per bucket of k and layout as it was set, the planned product deciding each
bucket once before it runs, and the rival's decision with its timings given."""

from __future__ import annotations

import numpy as np
import pytest

from cocktail import kernels
from cocktail.auto import block_plans
from cocktail.auto.block_plans import WholeRival
from cocktail.auto.block_plans import RACE_TIE
from cocktail.auto.plans import PlannedProduct
from cocktail.executors.base import Executor
from cocktail.executors.composed import Composed
from cocktail.executors.base import block_key
from cocktail.executors.cuda import BlockChoice
from cocktail.kernels.block_operands import BlockOperands


class _Part(Executor):
    """A part (or the whole matrix) that records what ran it, what was set and bound, and offers one choice with
    its time (recorded as timed once the choice is set)."""

    def __init__(self, name, choice=None, us=None):
        self.kernel, self.calls, self.planned, self.bound = name, [], [], []
        self.choice = BlockChoice(choice)
        self.block_times = {}
        self.us = us

    def run_block(self, X, Y, alpha, beta):
        self.calls.append(("block", X.shape[1], beta))

    def block_choices(self, operands, deterministic=False):
        return [self.choice]

    def rule_choice(self, k):
        return self.choice

    def set_block_choice(self, operands, choice):
        self.planned.append(operands)
        if self.us is not None:
            self.block_times[block_key(operands)] = {choice.label(self.kernel): self.us}

    def block_choice(self, operands):
        return self.choice

    def bind_blocks(self, operands):
        self.bound.append(operands)

    def block_kernels(self, k, row_major=True):
        return (f"{self.kernel} block",)

    def captures_block(self, X, Y):
        return self.kernel != "uncapturable"


class _Rival:
    """A rival that answers from a table of bucket -> whole executor, counting its calls."""

    def __init__(self, wholes):
        self.wholes, self.asked = wholes, []

    def __call__(self, composed, operands, whole=None):
        self.asked.append(block_key(operands))
        return self.wholes.get(block_key(operands)[0])


class _Stored:
    shape = (6, 5)


def _planned(monkeypatch, rival, timing=True):
    """A composition of two parts in a planned product with ``rival``, and whether candidates can be timed now
    (``clock["timing"]``: False inside a capture)."""
    parts = [_Part("a"), _Part("b")]
    product = PlannedProduct(None, _Stored(), Composed(parts))
    product._rival = rival
    clock = {"timing": timing}
    monkeypatch.setattr(block_plans, "can_time", lambda: clock["timing"])
    return product, parts, clock


def test_an_executor_runs_a_bucket_on_the_whole_matrix_where_it_was_set():
    whole = _Part("whole")
    c = Composed([_Part("a"), _Part("b")])
    X, Y = np.zeros((5, 12)), np.zeros((6, 12))
    c.set_whole(BlockOperands.of(X, Y), whole)
    c.run_block(X, Y, 1.0, 0.5)
    assert whole.calls == [("block", 12, 0.5)] and not c.parts[0].calls
    assert c.whole_for_width(16) is whole and c.whole_for_width(16, row_major=False) is None
    c.bind_blocks(BlockOperands.of(X, Y))  # the parts', then the whole's
    assert whole.bound and all(p.bound for p in c.parts)
    c.set_whole(BlockOperands.of(X, Y), None)
    c.run_block(X, Y, 1.0, 0.5)
    assert len(whole.calls) == 1 and c.parts[0].calls
    for name in ("block_planner", "block_rival", "plan_blocks", "plan_own_blocks"):  # nothing calls up into auto/
        assert not hasattr(c, name)


def test_a_bucket_the_whole_matrix_wins_runs_it_and_the_others_run_the_parts(monkeypatch):
    whole = _Part("whole")
    rival = _Rival({16: whole})
    product, (a, b), _ = _planned(monkeypatch, rival)
    X, Y = np.zeros((5, 12)), np.zeros((6, 12))
    product.run_block(X, Y, 1.0, 0.5)
    assert whole.calls == [("block", 12, 0.5)] and not a.calls and not b.calls
    product.run_block(X[:, :4], Y[:, :4], 1.0, 0.5)  # bucket 4: the parts, the later adding (beta = 1)
    assert a.calls == [("block", 4, 0.5)] and b.calls == [("block", 4, 1)]
    product.run_block(X[:, :1], Y[:, :1], 1.0, 0.0)  # one column: the parts' SpMV, never the rival
    assert rival.asked == [(16, "row"), (4, "row")]
    assert a.planned == b.planned == [BlockOperands.of(X, Y), BlockOperands.of(X[:, :4], Y[:, :4])]
    product.run_block(X[:, :10], Y[:, :10], 1.0, 0.0)  # same bucket and layout: decided once
    assert rival.asked == [(16, "row"), (4, "row")] and len(whole.calls) == 2
    assert product.block_kernels(16) == ("whole matrix: whole block",)
    assert product.block_kernels(4) == ("a block", "b block")
    assert product.reads_once(16) == whole.reads_once(16) * 2
    assert product.whole_for_width(16) is whole and rival.asked == [(16, "row"), (4, "row")]


def test_without_a_rival_or_while_nothing_can_be_timed_the_parts_run_and_plan_blocks_decides_later(monkeypatch):
    product, (a, b), _ = _planned(monkeypatch, None)
    X, Y = np.zeros((5, 8)), np.zeros((6, 8))
    product.run_block(X, Y, 1.0, 0.0)
    assert a.calls and b.calls and a.planned and b.planned
    whole = _Part("whole")
    rival = _Rival({8: whole})
    product, (a, b), clock = _planned(monkeypatch, rival, timing=False)
    product.run_block(X, Y, 1.0, 0.0)  # inside a capture: the parts, not planned
    assert a.calls and not whole.calls and rival.asked == [] and not a.planned
    clock["timing"] = True
    product.run_block(X, Y, 1.0, 0.0)  # met before: still the rule's choice until planned
    assert rival.asked == [] and not whole.calls
    product.bind_blocks(BlockOperands.of(X, Y))  # planned now: each part, the rival, then the launches bound
    assert rival.asked == [(8, "row")] and a.planned and b.planned and whole.bound and a.bound
    product.plan_blocks(BlockOperands.of(X, Y))  # planned once
    assert rival.asked == [(8, "row")] and len(a.planned) == 1
    product.run_block(X, Y, 1.0, 0.0)
    assert whole.calls == [("block", 8, 0.0)]


def test_captures_block_asks_what_runs_the_bucket(monkeypatch):
    whole = _Part("uncapturable")
    product, _, _ = _planned(monkeypatch, _Rival({16: whole}))
    X, Y = np.zeros((5, 16)), np.zeros((6, 16))
    assert not product.captures_block(X, Y)
    assert product.captures_block(X[:, :4], Y[:, :4])  # the parts (both capturable)


# --- the rival's decision -----------------------------------------------------------------------------------------

def _rival_parts(part_us, whole_us, whole_vendor):
    own, vendor = kernels.get_block("csr_spmm_merge"), kernels.get_block("cusparse_spmm")
    parts = [_Part("dia_vi", kernels.get_block("dia_vi_spmm"), us) for us in part_us]
    whole = _Part("csr_merge", vendor if whole_vendor else own, whole_us)
    return Composed(parts), whole


@pytest.mark.parametrize("part_us, whole_us, whole_vendor, wins", [
    ((40.0, 60.0), 80.0, False, True),                        # the whole clearly faster
    ((40.0, 60.0), 100.0 * (1 - RACE_TIE / 2), False, False),  # ours, within the tie: the parts stay
    ((40.0, 60.0), 100.0 * (1 + RACE_TIE / 2), True, True),    # the vendor, within the tie: the vendor
    ((40.0, 60.0), 100.0 * (1 + 2 * RACE_TIE), True, False),   # the vendor, slower: the parts
    ((40.0, None), 10.0, True, False),                         # a part that cannot be timed: the parts
])
def test_the_whole_matrix_wins_a_bucket_only_where_it_measured_faster_than_the_parts_summed(
        part_us, whole_us, whole_vendor, wins, monkeypatch):
    monkeypatch.setattr(block_plans, "_time_choices", lambda executor, operands, choices: {})
    composed, whole = _rival_parts(part_us, whole_us, whole_vendor)
    rival = WholeRival.__new__(WholeRival)  # its storage is never read: the whole executor is given
    rival._plan = block_plans.planner()
    operands = BlockOperands.row_major(16)
    for part in composed.parts:  # the matrix as stored, planned first (plan_bucket)
        part.set_block_choice(operands, part.choice)
    assert (rival(composed, operands, whole) is whole) is wins
    assert whole.planned == ([operands] if None not in part_us else [])  # planned where the parts were timed
    if None not in part_us:
        label = f"whole matrix: {whole.choice.label('csr_merge')}"
        assert composed.rival_times[(16, "row")] == {"as stored": sum(part_us), label: whole_us}


def test_the_rival_is_wanted_by_compositions_and_by_formats_other_than_csr():
    import scipy.sparse as sp

    from cocktail.formats import COO, CSR

    class Single(_Part):
        def __init__(self, *specs):
            super().__init__("k")
            self.block_specs = tuple(kernels.get_block(name) for name in specs)

    S = sp.random_array((20, 20), density=0.2, random_state=1, format="csr")
    csr = CSR.from_arrays(S.data, S.indices, S.indptr, S.shape)
    coo = COO.from_csr(csr)
    assert WholeRival.wanted(Composed([_Part("a")]), None)
    assert WholeRival.wanted(Composed([_Part("a"), _Part("b")]), None)
    assert WholeRival.wanted(Single("bcsr_spmm"), coo) and WholeRival.wanted(Single(), coo)  # HYB, PKT: none
    assert WholeRival.wanted(Single("csr_spmm_merge", "cusparse_spmm"), coo)  # COO's SpMM algorithms are others
    assert not WholeRival.wanted(Single("csr_spmm", "cusparse_spmm"), csr)  # the whole matrix is this CSR
    assert not WholeRival.wanted(_Part("a host executor"), coo)  # no GPU kernel
