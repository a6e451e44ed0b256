"""Block plans costed from the device profile's SpMM samples (no GPU): the samples' JSON and interpolation, the
pruning of the race, the planner with its timing replaced, the sampler's pure pieces and ``calibrate --spmm``."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from cocktail import kernels
from cocktail.auto import block_calibration, block_plans, profile
from cocktail.executors.cuda import BlockChoice
from cocktail.kernels.block_operands import BlockOperands

DEVICE = {"name": "Model GPU", "compute_capability": [9, 0], "cuda": 13000, "sm_count": 132}
ROWS, PER_ROW, KS = (1 << 14, 1 << 17, 1 << 20), (4, 16, 64), (2, 8, 32, 128)


def model_ratio(rows, per_row, k, scale=1.0):
    """A ratio growing with k and rows, falling with slots per row: what a block kernel's samples look like."""
    return scale * (0.5 + 0.1 * k * (math.log2(rows) / 14) / math.sqrt(per_row))


def spmm_section(keys=("csr_merge:csr_spmm_merge",), scale=1.0, layouts=("row", "col")):
    table = {key: {layout: [[m, p, k, model_ratio(m, p, k, scale)] for m in ROWS for p in PER_ROW for k in KS]
                   for layout in layouts} for key in keys}
    return {"ratios": {"float64": table}, "transpose_gbps": {"float64": 1500.0}, "mode": "full", "meta": {}}


def model(spmm=None, samples=None) -> profile.Profile:
    samples = samples if samples is not None else {"float64": {"csr_scalar": [[1024, 4, 3.0], [1 << 20, 4, 90.0]]}}
    return profile.Profile(dict(DEVICE), {"float32": 2.0, "float64": 2.0}, samples, "full", spmm=spmm or {})


# --- the profile's SpMM section -----------------------------------------------------------------------------------

def test_the_spmm_section_round_trips_through_json(tmp_path):
    prof = model(spmm_section())
    path = tmp_path / "p.json"
    prof.save(path)
    back = profile.Profile.load(path)
    assert back.spmm == json.loads(json.dumps(prof.spmm)) and back.has_spmm("float64", "row")
    assert not back.has_spmm("float32") and back.transpose_gbps(np.float64) == 1500.0
    args = ("csr_merge:csr_spmm_merge", "row", np.float64, 50_000, 10.0, 24)
    assert back.predict_block_ratio(*args) == pytest.approx(prof.predict_block_ratio(*args))


def test_a_profile_without_spmm_samples_loads_as_before_and_they_leave_the_digest_alone():
    old = model()
    doc = old.to_json()
    assert "spmm" not in doc
    back = profile.Profile.from_json(json.loads(json.dumps(doc)))
    assert back.spmm == {} and not back.has_spmm("float64") and back.transpose_gbps("float64") is None
    assert back.predict_block_ratio("csr_merge:csr_spmm_merge", "row", "float64", 1000, 4, 8) is None
    assert profile.Profile.from_json({**doc, "spmm": spmm_section()}).digest == back.digest
    for shipped in profile.shipped():  # the shipped profiles still load, keyed as before
        text = json.dumps([shipped.launch_us, shipped.samples, shipped.scattered], sort_keys=True)
        import hashlib

        assert shipped.digest == hashlib.sha256(text.encode()).hexdigest()[:16]


def test_ratios_are_given_back_at_the_samples_and_interpolated_between_them():
    prof = model(spmm_section())
    key = "csr_merge:csr_spmm_merge"
    for m in ROWS:
        for p in PER_ROW:
            for k in KS:
                assert prof.predict_block_ratio(key, "col", "float64", m, p, k) == pytest.approx(model_ratio(m, p, k))
    # between sampled k (and rows, slots per row): between the neighbours, rising with k
    by_k = [prof.predict_block_ratio(key, "row", "float64", 1 << 17, 16, k) for k in range(2, 129)]
    assert all(a <= b * (1 + 1e-12) for a, b in zip(by_k, by_k[1:]))
    mid = prof.predict_block_ratio(key, "row", "float64", 1 << 17, 16, 16)
    assert model_ratio(1 << 17, 16, 8) < mid < model_ratio(1 << 17, 16, 32)
    lo, hi = (prof.predict_block_ratio(key, "row", "float64", m, 16, 8) for m in (1 << 14, 1 << 17))
    assert lo < prof.predict_block_ratio(key, "row", "float64", 1 << 15, 16, 8) < hi


def test_ratios_are_clamped_outside_the_samples():
    prof = model(spmm_section())
    key = "csr_merge:csr_spmm_merge"

    def at(m, p, k):
        return prof.predict_block_ratio(key, "row", "float64", m, p, k)

    assert at(1 << 17, 16, 256) == pytest.approx(at(1 << 17, 16, 128))    # past the largest k
    assert at(1 << 17, 16, 1) == pytest.approx(at(1 << 17, 16, 2))        # below the smallest
    assert at(1 << 24, 16, 8) == pytest.approx(at(1 << 20, 16, 8))        # a ratio does not grow with rows
    assert at(100, 16, 8) == pytest.approx(at(1 << 14, 16, 8))
    assert at(1 << 17, 512, 8) == pytest.approx(at(1 << 17, 64, 8))       # nor with slots per row
    assert prof.predict_block_ratio(key, "strided", "float64", 1 << 17, 16, 8) is None
    assert prof.predict_block_ratio("csr_vector:csr_spmm", "row", "float64", 1 << 17, 16, 8) is None


def test_spmm_samples_merge_into_a_profile_of_the_same_gpu_and_survive_a_spmv_merge():
    base = model(spmm_section(("csr_merge:csr_spmm_merge", "ell:ell_spmm")))
    new = spmm_section(("ell:ell_spmm",), scale=3.0)
    got = profile.merged_spmm(base, new, DEVICE["name"])
    key_args = ("row", "float64", 1 << 17, 16, 8)
    assert got.predict_block_ratio("ell:ell_spmm", *key_args) == pytest.approx(3 * model_ratio(1 << 17, 16, 8))
    assert got.predict_block_ratio("csr_merge:csr_spmm_merge", *key_args) == pytest.approx(model_ratio(1 << 17, 16, 8))
    assert got.samples == base.samples and got.digest == base.digest
    with pytest.raises(ValueError, match="cannot merge SpMM samples"):
        profile.merged_spmm(base, new, "Other GPU")
    assert profile.merged(got, model(), ["csr_scalar"]).spmm == got.spmm
    assert profile.spmm_key("coo_atomic", "cusparse_spmm(alg=2)") == "coo_atomic:cusparse_spmm(alg=2)"


# --- which choices race ---------------------------------------------------------------------------------------------

class _Spec:
    """What a block choice reads of a kernel spec: its name and whether a vendor's."""

    def __init__(self, name, vendor=False):
        self.name, self.vendor = name, vendor


LOOP = BlockChoice(None)
OWN = BlockChoice(_Spec("own_spmm"))
OTHER = BlockChoice(_Spec("other_spmm"))
V1, V2, V3 = (BlockChoice(_Spec("vendor_spmm", True), (("alg", a),)) for a in (1, 2, 3))
CHOICES = [LOOP, OWN, OTHER, V1, V2, V3]


def test_the_race_keeps_the_choices_predicted_within_the_range_in_their_order():
    predicted = {LOOP: 100.0, OWN: 10.0, OTHER: 19.0, V1: 15.0, V2: 25.0, V3: 40.0}
    assert block_plans.promising(CHOICES, predicted, OWN) == [OWN, OTHER, V1]
    assert block_plans.promising(CHOICES, predicted, OWN, within=3.0) == [OWN, OTHER, V1, V2]
    assert block_plans.promising(CHOICES, predicted, OWN, within=100.0, most=2) == [OWN, V1]


def test_the_race_always_holds_the_rules_choice_and_the_best_predicted_vendor():
    predicted = {LOOP: 10.0, OWN: 90.0, OTHER: 12.0, V1: 80.0, V2: 70.0, V3: 95.0}
    assert block_plans.promising(CHOICES, predicted, OWN) == [LOOP, OWN, OTHER, V2]
    assert block_plans.promising(CHOICES, predicted, LOOP, most=1) == [LOOP, V2]  # the cap spares both
    assert block_plans.promising([LOOP, OWN], {LOOP: 1.0, OWN: 50.0}, LOOP) == [LOOP]  # no vendor offered
    rule_left_out = BlockChoice(_Spec("deterministic_only"))
    assert block_plans.promising(CHOICES, predicted, rule_left_out) == [LOOP, OTHER, V2]


def test_the_race_holds_every_choice_without_a_prediction():
    predicted = {LOOP: 10.0, OWN: 11.0, OTHER: None, V1: None, V2: 500.0}
    assert block_plans.promising(CHOICES, predicted, OWN) == [LOOP, OWN, OTHER, V1, V2, V3]
    assert block_plans.promising(CHOICES, {}, OWN) == CHOICES


# --- the planner costing, with the SpMV and the race timed by a model -------------------------------------------------

class _Stored:
    """What the costing reads of a stored matrix."""

    shape, dtype, stored_slots, nnz = (1 << 17, 1 << 17), np.dtype("float64"), 16 << 17, 16 << 17


class _Executor:
    """A csr_merge matrix's executor as the block planner reads it."""

    kernel = "csr_merge"
    deterministic = False

    def __init__(self):
        self._storage = _Stored()
        self.block_times = {}
        own, vendor = kernels.get_block("csr_spmm_merge"), kernels.get_block("cusparse_spmm")
        self.choices = [BlockChoice(None), BlockChoice(own)] + [BlockChoice(vendor, (("alg", a),)) for a in (1, 2, 3)]

    def block_choices(self, operands, deterministic=False):
        return list(self.choices)

    def rule_choice(self, k):
        return self.choices[1]


def _costing(monkeypatch, prof, spmv=10.0, times=None):
    seen = []

    def race(executor, operands, choices):
        seen.append([c.label(executor.kernel) for c in choices])
        return {c: (times or {}).get(c.label(executor.kernel), 1.0) for c in choices}

    monkeypatch.setattr(block_plans, "device_profile", lambda: prof)
    monkeypatch.setattr(block_plans, "spmv_us", lambda executor: spmv)
    monkeypatch.setattr(block_plans, "_time_choices", race)
    return seen


def _vendor_keys(scales):
    return {f"csr_merge:cusparse_spmm(alg={a})": s for a, s in scales.items()}


def test_the_planner_races_only_the_choices_its_profile_predicts_promising(monkeypatch):
    section = spmm_section(("csr_merge:csr_spmm_merge",))
    for key, scale in _vendor_keys({1: 1.5, 2: 3.0, 3: 5.0}).items():
        section["ratios"]["float64"].update(spmm_section((key,), scale)["ratios"]["float64"])
    seen = _costing(monkeypatch, model(section), times={"csr_spmm_merge": 5.0, "cusparse_spmm(alg=1)": 4.0})
    ex = _Executor()
    choice = block_plans.planner()(ex, BlockOperands.row_major(12))
    assert seen == [["csr_spmm_merge", "cusparse_spmm(alg=1)"]]  # the loop (12 SpMVs) and algs 2, 3 left out
    assert choice.label(ex.kernel) == "cusparse_spmm(alg=1)" and set(ex.block_times[(16, "row")]) == set(seen[0])
    predicted = ex.block_predicted[(16, "row")]
    own = 10.0 * model_ratio(1 << 17, 16, 12)
    assert predicted["csr_spmm_merge"] == pytest.approx(own, rel=0.05)
    assert predicted["cusparse_spmm(alg=3)"] == pytest.approx(5 * predicted["csr_spmm_merge"])
    copies = 2 * (2 << 17) * 12 * 8 / (1500.0 * 1e3)  # X to its transpose and Y's back, at the sampled GB/s
    assert predicted["csr_merge per column"] == pytest.approx(12 * 10.0 + copies)
    # column-major blocks take the "col" samples and no copies
    block_plans.planner()(ex, BlockOperands(12, (1, 1 << 17), (1, 1 << 17)))
    assert ex.block_predicted[(16, "col")]["csr_merge per column"] == pytest.approx(12 * 10.0)


def test_the_planner_races_everything_without_samples_for_its_matrix(monkeypatch):
    everything = ["csr_merge per column", "csr_spmm_merge"] + [f"cusparse_spmm(alg={a})" for a in (1, 2, 3)]
    for prof in (None, model(), model(spmm_section(("csr_vector:csr_spmm",))),
                 model(spmm_section(layouts=("col",)))):  # no GPU, no samples, another kernel's, another layout's
        seen = _costing(monkeypatch, prof)
        ex = _Executor()
        block_plans.planner()(ex, BlockOperands.row_major(12))
        assert seen == [everything] and not getattr(ex, "block_predicted", {})


def test_vendor_choices_without_samples_race_beside_the_promising(monkeypatch):
    seen = _costing(monkeypatch, model(spmm_section()))
    block_plans.planner()(_Executor(), BlockOperands.row_major(64))
    assert seen == [["csr_spmm_merge"] + [f"cusparse_spmm(alg={a})" for a in (1, 2, 3)]]


# --- the sampler's pure pieces and the command line ------------------------------------------------------------------

def test_the_sampler_covers_every_format_with_a_block_kernel_on_its_own_pattern():
    fmts = block_calibration.spmm_formats()
    assert set(fmts) == {"csr", "coo", "ell", "sell", "dia", "dia_vi", "bdia", "bcsr", "bell", "sbell"}
    assert block_calibration.sample_kernels("csr") == ["csr_scalar", "csr_vector", "csr_merge", "csr_stream",
                                                       "cusparse_csr"]
    assert block_calibration.sample_kernels("bdia") == ["bdia", "bdia_direct"]
    assert block_calibration.SPMM_SAMPLE_K == (2, 4, 8, 16, 32, 64, 128, 256)
    for fmt in fmts:
        points = block_calibration.points(fmt, "full")
        assert points and {p.pattern for p in points} == {block_calibration.sample_variant(fmt).pattern}
    assert {p.block for p in block_calibration.points("bcsr", "quick")} == {(4, 4)}
    assert {p.values for p in block_calibration.points("dia_vi", "quick")} == {8}
    assert block_calibration.fits(1 << 20, 1 << 20, 256, 4) and not block_calibration.fits(1 << 20, 1 << 20, 256, 8)
    ops = block_calibration.operands_of("col", 8, (30, 20))
    assert ops.x_steps == (1, 20) and ops.y_steps == (1, 30)
    assert block_calibration.operands_of("row", 8, (30, 20)) == BlockOperands.row_major(8)


def test_the_sampler_turns_times_into_ratios_per_kernel_and_choice():
    record = {"rows": 1024, "per_row": 4.0, "spmv": {"csr_scalar": 2.0, "csr_merge": 4.0},
              "offers": {"csr_scalar": ["csr_spmm", "cusparse_spmm(alg=1)"],
                         "csr_merge": ["csr_spmm_merge", "cusparse_spmm(alg=1)"]},
              "block": {"csr_spmm|row|2": 3.0, "csr_spmm_merge|col|8": 8.0, "cusparse_spmm(alg=1)|row|2": 6.0,
                        "cusparse_spmm(alg=1)|col|2": None}}
    got = block_calibration.ratios({"float32|csr|1024|4": record, "float32|csr|2048|4": None})
    assert got == {"float32": {"csr_scalar:csr_spmm": {"row": [[1024, 4.0, 2, 1.5]]},
                               "csr_merge:csr_spmm_merge": {"col": [[1024, 4.0, 8, 2.0]]},
                               "csr_scalar:cusparse_spmm(alg=1)": {"row": [[1024, 4.0, 2, 3.0]]},
                               "csr_merge:cusparse_spmm(alg=1)": {"row": [[1024, 4.0, 2, 1.5]]}}}


def test_calibrate_takes_spmm_and_formats():
    from cocktail.cli import build_parser, main

    args = build_parser().parse_args(["calibrate", "--spmm", "--quick", "--formats", "csr,ell",
                                      "--merge-into", "p.json", "--dtype", "float32"])
    assert args.spmm and args.quick and args.formats == "csr,ell" and args.merge_into == "p.json"
    assert not build_parser().parse_args(["calibrate"]).spmm
    from cocktail.arrays import cuda_available

    if not cuda_available():
        assert main(["calibrate", "--spmm"]) == 2
