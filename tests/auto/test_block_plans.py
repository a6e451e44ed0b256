"""The pieces of planned block products that need no GPU: buckets of k, layouts, the block choices each SpMV
kernel offers, and where cuSPARSE's SpMM takes the operands."""

from __future__ import annotations

import pytest

from cocktail import kernels
from cocktail.executors.base import block_key
from cocktail.executors.cuda import BlockChoice, CudaExecutor
from cocktail.kernels import cusparse_spmm
from cocktail.kernels.block_operands import BlockOperands
from cocktail.tuning.kernel_rules import SPMM_K_BUCKETS, spmm_bucket


@pytest.mark.parametrize("k, bucket", [(1, 1), (2, 2), (3, 4), (5, 8), (8, 8), (9, 16), (64, 64), (65, 128),
                                       (256, 256), (257, 256), (4096, 256)])
def test_a_block_width_falls_in_the_smallest_bucket_holding_it(k, bucket):
    assert spmm_bucket(k) == bucket
    assert bucket in SPMM_K_BUCKETS


def test_block_keys_tell_buckets_and_layouts_apart():
    row, col = BlockOperands.row_major(12), BlockOperands(12, (1, 100), (1, 80))
    assert block_key(row) == (16, "row") and block_key(col) == (16, "col")
    assert block_key(BlockOperands(12, (12, 1), (1, 80))) == (16, "strided")
    assert block_key(BlockOperands.row_major(9)) == block_key(row)


@pytest.mark.parametrize("kernel, blocks", [
    ("cusparse_csr", ["csr_spmm_merge", "cusparse_spmm"]),
    ("csr_vector", ["csr_spmm", "cusparse_spmm"]),
    ("csr_merge", ["csr_spmm_merge", "cusparse_spmm"]),
])
def test_every_csr_kernel_offers_its_own_block_kernel_first_and_the_vendors_after(kernel, blocks):
    assert [s.name for s in kernels.blocks_for("csr", kernels.get(kernel))] == blocks
    assert kernels.block_for("csr", kernels.get(kernel)).name == blocks[0]


def test_the_vendors_block_kernel_is_offered_to_coo_but_to_no_other_format():
    assert "cusparse_spmm" in [s.name for s in kernels.blocks_for("coo", kernels.get("coo_atomic"))]
    assert "cusparse_spmm" not in [s.name for s in kernels.blocks_for("ell", kernels.get("ell"))]
    spec = kernels.get_block("cusparse_spmm")
    assert spec.vendor and not spec.default_for


@pytest.mark.parametrize("x_steps, y_steps, aligned, expected", [
    ((16, 1), (16, 1), True, ("row", 16, 16)),
    ((16, 1), (32, 1), True, ("row", 16, 32)),        # out a window of a wider array
    ((1, 30), (1, 20), True, ("col", 30, 20)),
    ((1, 30), (1, 40), True, ("col", 30, 40)),        # out a window of a taller array
    ((16, 1), (1, 20), True, None),                   # orders differ
    ((16, 1), (16, 1), False, None),                  # not 16-byte aligned
    ((8, 1), (16, 1), True, None),                    # a row step shorter than a row: not a layout
    ((2, 32), (16, 1), True, None),                   # strided both ways
])
def test_cusparse_spmm_takes_blocks_in_one_order_with_their_leading_dimensions(x_steps, y_steps, aligned, expected):
    operands = BlockOperands(16, x_steps, y_steps, aligned)
    assert cusparse_spmm.layout(operands, (20, 30)) == expected


def test_a_block_choice_names_itself_and_knows_the_vendor():
    spec = kernels.get_block("cusparse_spmm")
    assert BlockChoice(spec, (("alg", 2),)).label("csr_merge") == "cusparse_spmm(alg=2)"
    assert BlockChoice(spec, (("alg", 2),)).vendor
    assert BlockChoice(None).label("csr_merge") == "csr_merge per column" and not BlockChoice(None).vendor
    own = kernels.get_block("csr_spmm_merge")
    assert BlockChoice(own).label("csr_merge") == "csr_spmm_merge" and not BlockChoice(own).vendor


def test_own_block_kernels_offer_the_rules_setting_and_the_vendors_its_deterministic_algorithms():
    own = kernels.get_block("csr_spmm")
    assert own.settings_for(None, BlockOperands.row_major(4)) == ({},)
    assert own.settings_for(None, BlockOperands.row_major(4), deterministic=True) == ({},)

    class Stored:  # what settings() reads of a stored matrix
        name, nnz, shape = "csr", 10, (20, 30)

    if cusparse_spmm.available():
        algs = cusparse_spmm.settings(Stored, BlockOperands.row_major(16))
        assert algs == ({"alg": 1}, {"alg": 2}, {"alg": 3})
        assert cusparse_spmm.settings(Stored, BlockOperands.row_major(16), deterministic=True) == ({"alg": 3},)
    assert cusparse_spmm.settings(Stored, BlockOperands(16, (16, 1), (1, 20))) == ()


def test_cusparse_spmm_configure_names_a_bad_algorithm_and_a_layout_it_cannot_take():
    spec = kernels.get_block("cusparse_spmm")

    class Stored:
        name, nnz, shape = "coo", 10, (20, 30)

    with pytest.raises(ValueError, match=r"alg must be one of \[1, 2, 3, 4\] for coo"):
        spec.configure(spec, Stored, {"alg": 7, "operands": None}, None, None)
    with pytest.raises(ValueError, match="both row-major or both column-major"):
        spec.configure(spec, Stored, {"alg": 1, "operands": BlockOperands(16, (16, 1), (1, 20))}, None, None)
    config = spec.configure(spec, Stored, {"alg": 2, "operands": BlockOperands.row_major(16)}, None, None)
    assert spec.is_deterministic(config) and not spec.is_deterministic({**config, "alg": 1})


@pytest.mark.parametrize("k, row_major, itemsize, shape", [
    (16, True, 4, (4, 4)), (64, True, 4, (8, 4)), (2, True, 4, (4, 4)),   # float32: a 16-byte word a lane
    (16, True, 8, (8, 2)), (64, True, 8, (8, 2)),                         # float64: two columns a word
    (16, False, 4, (8, 2)), (3, False, 8, (4, 2)),                        # column-major X: scalar strips
])
def test_the_merge_kernels_strips_fill_a_16_byte_word_of_a_row_major_x(k, row_major, itemsize, shape):
    from cocktail.kernels.csr_spmm_merge.rules import merge_shape as spmm_merge_shape

    assert spmm_merge_shape(k, row_major, itemsize) == shape


def test_dia_vi_groups_span_16_bytes_of_rows():
    from cocktail.tuning.kernel_rules import spmm_diagonal_rows

    assert (spmm_diagonal_rows(4), spmm_diagonal_rows(8), spmm_diagonal_rows(2)) == (4, 2, 4)


# --- the block planner's decision, with its timing replaced (no GPU) ---------------------------------------------

class _Executor:
    """What the block planner reads of an executor: its choices, the rule's, determinism and a place for times."""

    kernel = "csr_merge"

    def __init__(self, deterministic=True):
        self.deterministic = deterministic
        self.block_times = {}
        own, vendor = kernels.get_block("csr_spmm_merge"), kernels.get_block("cusparse_spmm")
        self.choices = [BlockChoice(None), BlockChoice(own)] + [BlockChoice(vendor, (("alg", a),)) for a in (1, 2, 3)]

    def block_choices(self, operands, deterministic=False):
        det = {("alg", 3)}
        return [c for c in self.choices if not (deterministic and c.vendor and c.settings[0] not in det)]

    def rule_choice(self, k):
        return self.choices[1]


def _timed(monkeypatch, times_by_label):
    from cocktail.auto import block_plans

    seen = []

    def fake(executor, operands, choices):
        seen.append([c.label(executor.kernel) for c in choices])
        labels = {c: c.label(executor.kernel) for c in choices}
        return {c: times_by_label[label] for c, label in labels.items() if label in times_by_label}

    monkeypatch.setattr(block_plans, "_time_choices", fake)
    monkeypatch.setattr(block_plans, "device_profile", lambda: None)  # no SpMM samples: every choice is raced
    return seen


def test_the_block_planner_keeps_the_fastest_and_records_what_it_timed(monkeypatch):
    from cocktail.auto.block_plans import planner

    times = {"csr_merge per column": 90.0, "csr_spmm_merge": 40.0, "cusparse_spmm(alg=1)": 60.0,
             "cusparse_spmm(alg=2)": 50.0, "cusparse_spmm(alg=3)": 70.0}
    seen = _timed(monkeypatch, times)
    ex = _Executor(deterministic=False)
    choice = planner()(ex, BlockOperands.row_major(12))
    assert choice.label(ex.kernel) == "csr_spmm_merge"
    assert seen == [list(times)] and ex.block_times == {(16, "row"): times}


def test_a_vendor_choice_within_the_tie_takes_the_place_of_ours(monkeypatch):
    from cocktail.auto.block_plans import planner
    from cocktail.auto.block_plans import RACE_TIE

    _timed(monkeypatch, {"csr_spmm_merge": 100.0, "cusparse_spmm(alg=2)": 100.0 * (1 + RACE_TIE / 2),
                         "cusparse_spmm(alg=1)": 100.0 * (1 + 2 * RACE_TIE)})
    assert planner()(_Executor(False), BlockOperands.row_major(4)).label("k") == "cusparse_spmm(alg=2)"


def test_the_block_planner_offers_only_what_the_matrix_allows(monkeypatch):
    from cocktail.auto.block_plans import planner

    times = {"csr_merge per column": 9.0, "csr_spmm_merge": 8.0, "cusparse_spmm(alg=1)": 1.0,
             "cusparse_spmm(alg=2)": 2.0, "cusparse_spmm(alg=3)": 3.0}
    seen = _timed(monkeypatch, times)
    assert planner(vendor=False)(_Executor(False), BlockOperands.row_major(8)).label("k") == "csr_spmm_merge"
    # a matrix planned deterministic keeps to deterministic algorithms; one whose SpMV kernel merely is takes any
    chosen = planner(deterministic=True)(_Executor(False), BlockOperands.row_major(8))
    assert chosen.label("k") == "cusparse_spmm(alg=3)"
    assert planner()(_Executor(True), BlockOperands.row_major(8)).label("k") == "cusparse_spmm(alg=1)"
    assert all("cusparse" not in label for label in seen[0])
    assert "cusparse_spmm(alg=1)" not in seen[1] and "cusparse_spmm(alg=1)" in seen[2]


def test_the_block_planner_takes_the_rules_choice_when_nothing_was_timed_or_memory_ran_out(monkeypatch):
    from cocktail.auto import block_plans

    ex = _Executor()
    _timed(monkeypatch, {})
    assert block_plans.planner()(ex, BlockOperands.row_major(8)) == ex.rule_choice(8) and not ex.block_times

    class OutOfMemoryError(MemoryError):
        __module__ = "cupy.cuda.memory"

    def no_memory(executor, operands, choices):
        raise OutOfMemoryError("Out of memory allocating 1,024 bytes")

    monkeypatch.setattr(block_plans, "_time_choices", no_memory)
    assert block_plans.planner()(ex, BlockOperands.row_major(8)) == ex.rule_choice(8)

    def broken(executor, operands, choices):
        raise ValueError("not a memory error")

    monkeypatch.setattr(block_plans, "_time_choices", broken)
    with pytest.raises(ValueError, match="not a memory error"):
        block_plans.planner()(ex, BlockOperands.row_major(8))


def test_a_column_loop_is_capturable_where_every_column_is_contiguous():
    import numpy as np

    from cocktail.executors.base import Executor

    ex = Executor()
    c, f = np.zeros((5, 3)), np.zeros((5, 3), order="F")
    assert ex.captures_block(f, f) and ex.captures_block(f[:, :2], np.zeros((7, 4), order="F")[:5, 1:3])
    assert not ex.captures_block(c, f) and not ex.captures_block(f, c)
    assert ex.captures_block(np.zeros((1, 3)), np.zeros((1, 3)))  # one row: each column one element
    assert ex.captures_block(c[:, :1], c[:, :1])  # one column: the SpMV on it


# --- a planned product plans each bucket before its first product and sets the choice on the executor ---------------

class _Leaf(CudaExecutor):
    """A cuda executor as a planned product sees it (no GPU): its choices, the rule's, and the table of choices set
    (CudaExecutor's own); a block product records the choice it ran."""

    kernel = "csr_merge"

    def __init__(self):
        self._block_plans, self._block_launches, self.block_times, self.ran = {}, {}, {}, []
        self.choices = _Executor(deterministic=False).choices

    def block_choices(self, operands, deterministic=False):
        return list(self.choices)

    def rule_choice(self, k):
        return self.choices[1]

    def run_block(self, X, Y, alpha, beta):
        self.ran.append(self.block_choice(BlockOperands.of(X, Y)).label(self.kernel))


def test_a_planned_product_plans_each_bucket_once_never_inside_a_capture_and_sets_the_choice(monkeypatch):
    import types

    import numpy as np

    from cocktail.auto import block_plans
    from cocktail.auto.plans import PlannedProduct

    times = {"csr_merge per column": 90.0, "csr_spmm_merge": 40.0, "cusparse_spmm(alg=1)": 60.0,
             "cusparse_spmm(alg=2)": 30.0, "cusparse_spmm(alg=3)": 70.0}
    seen = _timed(monkeypatch, times)
    clock = {"timing": False}
    monkeypatch.setattr(block_plans, "can_time", lambda: clock["timing"])

    class Stored:
        shape = (6, 5)

    leaf = _Leaf()
    product = PlannedProduct(types.SimpleNamespace(plan="first", measured={}), Stored(), leaf)
    assert product._rival is None  # a single executor that no format makes want the whole matrix's
    X, Y = np.zeros((5, 12)), np.zeros((6, 12))
    product.run_block(X, Y, 1.0, 0.0)  # inside a capture: the rule's choice, untimed
    clock["timing"] = True
    product.run_block(X, Y, 1.0, 0.0)  # the same bucket: still the rule's until planned again
    assert leaf.ran == ["csr_spmm_merge"] * 2 and not seen and not leaf.block_times
    product.plan_blocks(BlockOperands.of(X, Y))  # ... as prepare_block_products does
    product.run_block(X[:, :9], Y[:, :9], 1.0, 0.0)
    assert leaf.ran[-1] == "cusparse_spmm(alg=2)" and len(seen) == 1 and leaf.block_times == {(16, "row"): times}
    product.run_block(X[:, :4], Y[:, :4], 1.0, 0.0)  # a new bucket: planned on its first product
    product.run_block(X[:, :3], Y[:, :3], 1.0, 0.0)
    product.plan_blocks(BlockOperands.row_major(4))  # planned already: not timed again
    assert leaf.ran[-2:] == ["cusparse_spmm(alg=2)"] * 2 and len(seen) == 2
    product.run_block(X[:, :1], Y[:, :1], 1.0, 0.0)  # one column: nothing to plan
    assert len(seen) == 2 and product.block_kernels(1) == ("csr_merge",)

    monkeypatch.setattr(product, "retire", lambda *objects: None)
    fresh = _Leaf()
    product.switch("second", Stored(), fresh)  # a new current executor: its buckets planned afresh
    product.run_block(X, Y, 1.0, 0.0)
    assert fresh.ran == ["cusparse_spmm(alg=2)"] and len(seen) == 3 and (4, "row") in leaf.block_times


def test_setting_a_block_choice_drops_the_launches_bound_for_another():
    leaf = _Leaf()
    operands, other = BlockOperands.row_major(12), BlockOperands.row_major(4)
    leaf._block_launches = {operands: ("bound",), other: ("kept",)}  # bound for the rule's choice of each:
    leaf.block_choice(operands), leaf.block_choice(other)
    leaf.set_block_choice(operands, leaf.rule_choice(12))  # the choice it ran: its launches stay
    assert operands in leaf._block_launches
    leaf.set_block_choice(operands, leaf.choices[0])
    assert leaf.block_choice(BlockOperands.row_major(9)) == leaf.choices[0]
    assert leaf._block_launches == {other: ("kept",)}
