"""The device profile, the planner and the decision cache, on the CPU with a modelled profile."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail.formats.csr import CSR
from cocktail.auto import decisions, planner, profile, variants
from cocktail.auto.features import compute

DEVICE = {"name": "Model GPU", "compute_capability": [9, 0], "cuda": 13000, "sm_count": 132}
LAUNCH_US = 2.0


def _bytes_per_slot(v) -> float:
    if v.pattern == "band":
        return 8.0
    if v.pattern == "blocks":
        r, c = v.block
        return 8.0 + 4.0 / (r * c)
    return {"coo": 16.0}.get(v.format, 12.0)


def modelled_us(v, rows: int, per_row: float) -> float:
    """A bandwidth model standing in for measured samples: launches + bytes at 2 TB/s + a per-row cost."""
    slots = rows * per_row
    row_cost = 0.0 if v.format == "coo" else 4.0 * rows / 2e6
    return v.launches * LAUNCH_US + slots * _bytes_per_slot(v) / 2e6 + row_cost


def model_profile(keys=None) -> profile.Profile:
    rows = [1 << k for k in (10, 13, 16, 19, 21)]
    samples = {}
    for dt in ("float32", "float64"):
        samples[dt] = {}
        for v in variants.VARIANTS:
            if keys is not None and v.key not in keys:
                continue
            samples[dt][v.key] = [[m, k, modelled_us(v, m, k)] for m in rows for k in (1, 4, 16, 64)]
    return profile.Profile(dict(DEVICE), {"float32": LAUNCH_US, "float64": LAUNCH_US}, samples, source="model")


def csr_of(S) -> CSR:
    S = sp.csr_array(S)
    S.sort_indices()
    return CSR.from_arrays(S.data, S.indices, S.indptr, S.shape)


def plan_of(S, prof=None):
    csr = csr_of(S)
    return planner.plan(csr, compute(csr), prof or model_profile(), np.float64)


# --- the profile -----------------------------------------------------------------------------------
def test_profile_interpolates_between_samples_and_scales_past_them():
    prof = model_profile(["csr_scalar"])
    v = variants.get("csr_scalar")
    for m, k in ((1 << 13, 4), (1 << 19, 64)):
        assert prof.predict_us("csr_scalar", "float64", m, m * k) == pytest.approx(modelled_us(v, m, k))
    mid = prof.predict_us("csr_scalar", "float64", 1 << 14, (1 << 14) * 8)
    lo = prof.predict_us("csr_scalar", "float64", 1 << 13, (1 << 13) * 4)
    hi = prof.predict_us("csr_scalar", "float64", 1 << 16, (1 << 16) * 16)
    assert lo < mid < hi
    big = prof.predict_us("csr_scalar", "float64", 1 << 23, (1 << 23) * 4)  # 4x the largest rows sampled
    assert big == pytest.approx(4 * prof.predict_us("csr_scalar", "float64", 1 << 21, (1 << 21) * 4))
    # never below the launches' fixed cost, and None for a variant without samples
    assert prof.predict_us("csr_scalar", "float64", 1, 0) >= LAUNCH_US
    assert prof.predict_us("ell", "float64", 100, 100) is None


def test_profile_json_round_trip(tmp_path):
    prof = model_profile(["dia", "csr_merge"])
    path = tmp_path / "p.json"
    prof.save(path)
    back = profile.Profile.load(path)
    assert back.samples == json.loads(json.dumps(prof.samples))
    assert back.key == profile.device_key("Model GPU", (9, 0), 13000) == "model-gpu-sm90-cuda13000"
    assert back.predict_us("dia", np.float32, 5000, 5000 * 3) == pytest.approx(
        prof.predict_us("dia", np.float32, 5000, 5000 * 3))
    doc = prof.to_json()
    doc["schema"] = 99
    with pytest.raises(ValueError, match="schema"):
        profile.Profile.from_json(doc)


def test_profile_for_device_prefers_the_users_then_the_nearest_shipped(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKTAIL_CACHE", str(tmp_path))
    profile.forget()
    h100 = model_profile(["csr_scalar"])
    h100.device = {"name": "NVIDIA H100", "compute_capability": [9, 0], "cuda": 13000, "sm_count": 132}
    a100 = model_profile(["csr_scalar"])
    a100.device = {"name": "NVIDIA A100", "compute_capability": [8, 0], "cuda": 13000, "sm_count": 108}
    monkeypatch.setattr(profile, "shipped", lambda: [a100, h100])
    other = {"name": "NVIDIA GH200", "compute_capability": [9, 0], "cuda": 12080, "sm_count": 132}
    with pytest.warns(profile.ProfileNotice, match="GH200.*H100"):
        got = profile.for_device(other)
    assert got is h100 and "cocktail calibrate" in got.notice
    profile.forget()
    mine = model_profile(["ell"])
    mine.device = dict(other)
    mine.save(profile.user_path(mine.key))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = profile.for_device(other)
    assert got.has("ell", "float64") and not got.notice
    profile.forget()


#: Variants newer than a shipped profile, by profile file: `cocktail calibrate --variants KEY` on that
#: GPU adds them (empty while every shipped profile covers every variant).  A profile without the vendor's
#: variants never races cuSPARSE (the H200's until 2026-11-27: `format="auto"` ran 0.65x cuSPARSE there).
AWAITING_CALIBRATION: dict[str, set] = {}


def test_shipped_profiles_cover_every_variant_and_dtype():
    for prof in profile.shipped():
        assert prof.launch_us["float32"] > 0 and prof.launch_us["float64"] > 0
        for dt in ("float32", "float64"):
            missing = [v.key for v in variants.VARIANTS if not prof.has(v.key, dt)]
            awaiting = AWAITING_CALIBRATION.get(prof.source, set())
            assert set(missing) <= awaiting, f"{prof.source} lacks {dt} samples of {missing}"
            assert prof.blends(dt), f"{prof.source} lacks {dt} samples of the flat variants on scattered columns"


def test_shipped_profiles_plan_without_the_variants_they_lack():
    S = stencil(300)  # two distinct values: DIA-VI could hold it
    for prof in profile.shipped():
        lacking = {v.key for v in variants.VARIANTS if not prof.has(v.key, "float64")}
        planning = plan_of(S, prof)
        used = {part.variant for p in planning.candidates for part in p.parts}
        assert used and not used & lacking


# --- the planner -----------------------------------------------------------------------------------
def stencil(k: int):
    n = k * k
    return sp.diags([-1.0, -1.0, 4.0, -1.0, -1.0], [-k, -1, 0, 1, k], shape=(n, n), format="csr")


def test_a_stencil_goes_to_a_diagonal_format():
    chosen = plan_of(stencil(300)).chosen
    assert chosen.single and variants.get(chosen.parts[0].variant).category == "diagonal"


def test_dense_diagonals_and_scattered_entries_make_a_cocktail():
    n = 1_000_000
    rng = np.random.default_rng(1)
    band = sp.diags([1.0] * 5, [-2, -1, 0, 1, 2], shape=(n, n), format="coo")
    rows = rng.integers(0, n, n)
    cols = rng.integers(0, n, n)
    S = sp.csr_array((np.r_[band.data, np.ones(n)], (np.r_[band.row, rows], np.r_[band.col, cols])), shape=(n, n))
    planning = plan_of(S)
    chosen = planning.chosen
    assert not chosen.single
    assert chosen.parts[0].selector[0] == "diagonals" and set(chosen.parts[0].selector[1]) >= {-2, -1, 0, 1, 2}
    assert sum(p.nnz for p in chosen.parts) == S.nnz
    assert chosen.predicted_us == pytest.approx(sum(p.predicted_us for p in chosen.parts))
    assert chosen.label(S.nnz).startswith(("DIA(", "BDIA("))
    assert chosen.predicted_us <= min(p.predicted_us for p in planning.candidates)


def test_a_tiny_matrix_keeps_one_launch():
    S = sp.random(300, 300, density=0.02, format="csr", random_state=3) + sp.eye(300)
    chosen = plan_of(S).chosen
    assert chosen.single


def test_candidates_are_sorted_and_cover_every_entry(monkeypatch):
    monkeypatch.setattr(planner, "CODED_CUT", False)  # summed duplicates give a few values: one kind each to measure
    rng = np.random.default_rng(2)
    lengths = np.minimum(rng.zipf(1.6, 20_000), 2_000)
    rows = np.repeat(np.arange(20_000), lengths)
    cols = rng.integers(0, 20_000, rows.size)
    S = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(20_000, 20_000))
    planning = plan_of(S)
    times = [p.predicted_us for p in planning.candidates]
    assert times == sorted(times) and len(times) > 5
    for p in planning.candidates:
        assert sum(part.nnz for part in p.parts) == S.nnz
        assert p.parts[-1].selector[0] in ("rest", "diagonals", "row_prefix")
        for part in p.parts:
            if not p.single:
                assert part.nnz >= planner.MIN_PART_SHARE * S.nnz or part.selector == ("rest",)
    measured = planning.to_measure()
    assert measured[:planner.MEASURE_TOP] == planning.candidates[:planner.MEASURE_TOP]
    kinds = [planner._kind(p) for p in measured[planner.MEASURE_TOP:]]
    assert len(kinds) == len(set(kinds)) and set(kinds).isdisjoint(planner._kind(p) for p in measured[:3])
    # Power-law rows: ELL on the whole matrix stores far too many slots to be a candidate.
    assert all(p.parts[0].variant != "ell" for p in planning.candidates if p.single)


def test_planner_skips_variants_the_profile_lacks():
    prof = model_profile(["csr_scalar", "coo_atomic"])
    planning = plan_of(stencil(50), prof)
    assert {part.variant for p in planning.candidates for part in p.parts} <= {"csr_scalar", "coo_atomic"}
    with pytest.raises(ValueError, match="no samples"):
        plan_of(stencil(50), model_profile([]))


def test_plan_json_round_trip_and_label():
    parts = (planner.Part("dia", ("diagonals", (-1, 0, 1)), 9, 12, 3.0, {"max_fill": None}),
             planner.Part("sell(C=32,t=2)", ("row_prefix", 4), 73, 80, 4.0, {"max_fill": None}),
             planner.Part("coo_atomic", ("rest",), 18, 18, 2.5))
    plan = planner.Plan(parts, 9.5)
    assert plan.label() == "DIA(9%) SELL(73%) COO(18%)"
    back = planner.Plan.from_json(json.loads(json.dumps(plan.to_json())))
    assert back.parts == plan.parts and back.predicted_us == 9.5
    assert back.parts[1].params() == {"slice_height": 32, "max_fill": None}
    assert back.parts[1].kernel_params == {"threads_per_row": 2}


def test_decision_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKTAIL_CACHE", str(tmp_path))
    k = decisions.key("f" * 32, "model-gpu-sm90-cuda13000", np.float64, np.int32)
    assert decisions.lookup(k) is None
    plan = planner.Plan((planner.Part("csr_scalar", ("rest",), 5, 5, 1.0),), 1.0, measured_us=0.9)
    decisions.store(k, plan)
    got = decisions.lookup(k)
    assert got.parts == plan.parts and got.measured_us == 0.9
    assert decisions.lookup(k.replace("float64", "float32")) is None
    decisions.path().write_text("{not json")
    assert decisions.lookup(k) is None  # an unreadable cache is no cache
    monkeypatch.setenv("COCKTAIL_DECISIONS", "off")
    decisions.store(k, plan)
    assert decisions.lookup(k) is None and decisions.path() is None


def test_the_decision_cache_keeps_the_latest_decisions(monkeypatch):
    plan = planner.Plan((planner.Part("csr_scalar", ("rest",), 10, 10, 1.0),), 1.0)
    monkeypatch.setattr(decisions, "MAX_ENTRIES", 3)

    def k(i, tune="model"):
        return decisions.key(f"{i:032d}", "dev", np.float64, np.int32, tune=tune, profile_digest="d")

    for i in (4, 3, 2, 1, 0):  # stored against alphabetical order, within one second
        decisions.store(k(i), plan)
    assert [i for i in range(5) if decisions.lookup(k(i))] == [0, 1, 2]  # the latest three
    assert len(json.loads(decisions.path().read_text())) == 3
    decisions.store(k(9, "measure"), plan)
    decisions.store(k(8), plan)
    decisions.store(k(7), plan)  # modelled decisions go before a measured one, the new one stays
    assert decisions.lookup(k(9, "measure")) and decisions.lookup(k(8)) and decisions.lookup(k(7))
    decisions.path().write_text("null")  # a file of another shape is no cache
    assert decisions.lookup(k(7)) is None
    decisions.store(k(7), plan)
    assert decisions.lookup(k(7)) is not None


def test_thresholds_are_sane():
    assert 0 < planner.MIN_PART_SHARE < 0.5 and planner.MAX_SLOTS_PER_ENTRY > 1
    assert planner.MEASURE_TOP >= 2 and math.log2(planner.TAIL_ROWS).is_integer()


# --- DIA-VI: planned only for a matrix whose values fit its table --------------------------------------
def cheap_dia_vi_profile(keys=None) -> profile.Profile:
    """The modelled profile with dia_vi reading 1 + 8 bytes per slot's worth less: half DIA's value traffic."""
    prof = model_profile(keys)
    for dt, by_variant in prof.samples.items():
        if "dia_vi" in by_variant:
            by_variant["dia_vi"] = [[m, k, LAUNCH_US + (us - LAUNCH_US) / 2] for m, k, us in by_variant["dia_vi"]]
    return prof


def with_values(S, values):
    """``S`` with its entries' values drawn from ``values`` (a fixed seed)."""
    S = sp.csr_array(S, copy=True)
    S.data = np.random.default_rng(5).choice(values, S.nnz)
    return S


def test_dia_vi_only_when_the_values_fit_its_table():
    S = stencil(300)  # -1 and 4 (and the padding zero)
    f = compute(csr_of(S))
    assert f.distinct_values == 3
    v = variants.get("dia_vi")
    assert planner.holds_values(v, f) and planner.work(v, f) == planner.work(variants.get("dia"), f)
    chosen = plan_of(S, cheap_dia_vi_profile()).chosen
    assert chosen.single and chosen.parts[0].variant == "dia_vi"
    assert plan_of(S).chosen.parts[0].variant != "dia_vi"  # at DIA's cost it wins no tie

    many = with_values(S, np.arange(1.0, 400.0))  # 399 values: past the table
    f = compute(csr_of(many))
    assert f.distinct_values == 257  # the cap
    assert not planner.holds_values(v, f) and planner.work(v, f) is None
    planning = plan_of(many, cheap_dia_vi_profile())
    assert planning.candidates and all(part.variant != "dia_vi" for p in planning.candidates for part in p.parts)
    edge = with_values(S, np.arange(1.0, 256.0))  # 255 values and zero: exactly 256
    assert compute(csr_of(edge)).distinct_values == 256
    assert plan_of(edge, cheap_dia_vi_profile()).chosen.parts[0].variant == "dia_vi"


def test_a_dia_vi_diagonal_part_builds_as_a_cocktail():
    from cocktail import reference
    from cocktail.formats.cocktail import Cocktail
    from cocktail.tuning.format_rules import format_params

    n = 300_000
    rng = np.random.default_rng(1)
    band = sp.diags([1.0] * 5, [-2, -1, 0, 1, 2], shape=(n, n), format="coo")
    rows, cols = rng.integers(0, n, n), rng.integers(0, n, n)
    S = sp.csr_array((np.r_[band.data, np.full(n, 2.0)], (np.r_[band.row, rows], np.r_[band.col, cols])),
                     shape=(n, n))
    csr = csr_of(S)
    chosen = planner.plan(csr, compute(csr), cheap_dia_vi_profile(), np.float64).chosen
    assert not chosen.single and chosen.parts[0].variant == "dia_vi"
    assert chosen.parts[0].selector[0] == "diagonals" and chosen.label(S.nnz).startswith("DIA_VI(")
    parts = [(p.format, format_params(p.format, np.float64, p.params()), p.selector) for p in chosen.parts]
    fmt = Cocktail.from_csr(csr, parts=parts)
    assert fmt.parts[0].name == "dia_vi" and set(fmt.parts[0].table.tolist()) <= {0.0, 1.0, 3.0}  # 3: 1 + 2
    x = rng.standard_normal(n)
    np.testing.assert_allclose(reference.spmv(fmt, x), S @ x, rtol=1e-12, atol=1e-12)
    # scattered entries of many values: the features say no, however well the band alone would fit
    S.data[S.data == 2.0] = rng.standard_normal(int((S.data == 2.0).sum()))
    csr = csr_of(S)
    planning = planner.plan(csr, compute(csr), cheap_dia_vi_profile(), np.float64)
    assert all(part.variant != "dia_vi" for p in planning.candidates for part in p.parts)


def test_calibration_draws_dia_vi_matrices_from_few_values():
    from cocktail.auto import calibration as calibrate

    for key in ("dia_vi", "dia", "csr_scalar", "bcsr(2x4)"):
        points = calibrate.points(variants.get(key), "quick")
        assert points and {p.values for p in points} == ({calibrate.TABLE_VALUES} if key == "dia_vi" else {None})
    assert calibrate.TABLE_VALUES + 1 <= 256  # with the padding zero


# --- the vendor's kernels and locality ---------------------------------------------------------------
def _with_scattered(prof: profile.Profile, factor: float) -> profile.Profile:
    """``prof`` with scattered samples of its flat variants ``factor`` times slower."""
    scattered = {dt: {key: [[m, k, us * factor] for m, k, us in samples]
                      for key, samples in by_variant.items() if variants.get(key).pattern == "rows"}
                 for dt, by_variant in prof.samples.items()}
    return profile.Profile(prof.device, prof.launch_us, prof.samples, prof.mode, prof.meta, source=prof.source,
                           scattered=scattered)


def test_profile_blends_scattered_samples_by_scatter(tmp_path):
    prof = _with_scattered(model_profile(["csr_scalar", "dia"]), 3.0)
    at = lambda key, s: prof.predict_us(key, "float64", 1 << 16, (1 << 16) * 8, s)  # noqa: E731
    assert at("csr_scalar", 1.0) == pytest.approx(3 * at("csr_scalar", 0.0))
    assert at("csr_scalar", 0.5) == pytest.approx(2 * at("csr_scalar", 0.0))
    assert at("dia", 1.0) == at("dia", 0.0)  # no scattered samples: the variant's own
    partial = _with_scattered(model_profile(["csr_scalar", "csr_stream(k=8)"]), 3.0)
    del partial.scattered["float64"]["csr_stream(k=8)"]  # one flat variant without them: nobody blends
    assert not partial.blends("float64") and partial.blends("float32")
    assert partial.predict_us("csr_scalar", "float64", 1 << 16, (1 << 16) * 8, 1.0) == \
        partial.predict_us("csr_scalar", "float64", 1 << 16, (1 << 16) * 8, 0.0)
    assert prof.has_scattered("csr_scalar", "float64") and not prof.has_scattered("dia", "float64")
    path = tmp_path / "p.json"
    prof.save(path)
    assert profile.Profile.load(path).scattered == json.loads(json.dumps(prof.scattered))
    assert "scattered" not in model_profile(["dia"]).to_json()  # older profiles' documents are unchanged


def test_merged_profile_takes_the_new_samples_of_the_named_variants():
    base = model_profile(["csr_scalar", "dia"])
    new = _with_scattered(model_profile(["csr_scalar", "coo_atomic"]), 2.0)
    new.samples["float64"]["csr_scalar"] = [[1024, 1.0, 99.0]]
    new.meta = {"date": "2026-11-25", "commit": "abc", "cupy": "14"}
    out = profile.merged(base, new, ["csr_scalar", "coo_atomic"])
    assert out.samples["float64"]["csr_scalar"] == [[1024, 1.0, 99.0]]
    assert out.samples["float64"]["dia"] == base.samples["float64"]["dia"]
    assert out.has("coo_atomic", "float64") and out.has_scattered("coo_atomic", "float64")
    assert out.meta["merged"][-1] == {"date": "2026-11-25", "commit": "abc", "cupy": "14",
                                      "variants": ["coo_atomic", "csr_scalar"], "patterns": "all"}
    own = profile.merged(out, model_profile(["coo_atomic"]), ["coo_atomic"], "own")  # the scattered stay
    assert own.has_scattered("coo_atomic", "float64") and own.samples["float64"]["coo_atomic"] == \
        model_profile(["coo_atomic"]).samples["float64"]["coo_atomic"]
    fresh = profile.merged(out, model_profile(["coo_atomic"]), ["coo_atomic"])  # all: stale scattered dropped
    assert not fresh.has_scattered("coo_atomic", "float64")
    other = profile.Profile({**DEVICE, "name": "Other"}, base.launch_us, {}, source="o")
    with pytest.raises(ValueError, match="cannot merge samples of Other"):
        profile.merged(base, other, ["csr_scalar"])


def test_calibration_samples_flat_variants_on_scattered_columns_too():
    from cocktail.auto import calibration as calibrate

    flat, band = variants.get("csr_stream(k=8)"), variants.get("dia")
    assert {p.pattern for p in calibrate.points(flat, "quick")} == {"rows", "scattered"}
    assert {p.pattern for p in calibrate.points(flat, "quick", "scattered")} == {"scattered"}
    assert {p.pattern for p in calibrate.points(flat, "quick", "own")} == {"rows"}
    assert {p.pattern for p in calibrate.points(band, "quick")} == {"band"}
    assert calibrate.points(band, "quick", "scattered") == []
    own, scattered = calibrate._grouped({"float64|ell|1024|4": [1024, 4.0, 3.0],
                                         "float64|ell|1024|4|scattered": [1024, 4.0, 5.0],
                                         "float64|ell|2048|4|scattered": None})
    assert own == {"float64": {"ell": [[1024, 4.0, 3.0]]}} and scattered == {"float64": {"ell": [[1024, 4.0, 5.0]]}}


def test_scattered_columns_turn_the_plan_to_the_kernel_that_gathers_best():
    # csr_stream is faster than cusparse_csr on adjacent columns and 3x slower on scattered ones.
    prof = model_profile(["csr_stream(k=8)", "cusparse_csr(alg=1)"])
    for dt in prof.samples:
        prof.samples[dt]["cusparse_csr(alg=1)"] = [[m, k, 1.2 * us] for m, k, us in prof.samples[dt]["csr_stream(k=8)"]]
    prof.scattered = {dt: {"csr_stream(k=8)": [[m, k, 3 * us] for m, k, us in prof.samples[dt]["csr_stream(k=8)"]],
                           "cusparse_csr(alg=1)": prof.samples[dt]["cusparse_csr(alg=1)"]} for dt in prof.samples}
    n = 50_000
    local = sp.diags_array([1.0] * 7, offsets=[-3, -2, -1, 0, 1, 2, 3], shape=(n, n), format="csr")
    scattered = sp.random_array((n, n), density=7 / n, format="csr", rng=np.random.default_rng(3))
    assert plan_of(local, prof).chosen.parts[0].variant == "csr_stream(k=8)"
    chosen = plan_of(scattered, prof).chosen
    assert chosen.parts[0].variant == "cusparse_csr(alg=1)" and chosen.delegates
    csr = csr_of(scattered)
    own = planner.plan(csr, compute(csr), prof, np.float64, vendor=False).chosen
    assert not own.delegates and own.parts[0].variant == "csr_stream(k=8)"


def test_a_cocktail_part_that_delegates_is_labelled():
    parts = (planner.Part("dia", ("diagonals", (0,)), 20, 20, 1.0, {"max_fill": None}),
             planner.Part("cusparse_csr(alg=1)", ("rest",), 80, 80, 2.0))
    plan = planner.Plan(parts, 3.0)
    assert plan.label() == "DIA(20%) cuSPARSE-CSR(80%)" and plan.delegates
    assert not planner.Plan(parts[:1], 1.0).delegates


def test_variant_lists_keep_the_commas_of_their_keys():
    assert variants.parse("csr_scalar, sell(C=32,t=2),ell") == ["csr_scalar", "sell(C=32,t=2)", "ell"]
    flat = variants.parse("flat")
    assert "sell(C=256,t=8)" in flat and "cusparse_coo(alg=2)" in flat and "dia" not in flat
    with pytest.raises(ValueError, match="unknown kernel variant 'sell\\(C=3\\)'"):
        variants.parse("sell(C=3)")


def single(variant, us, coded=False, nnz=10):
    """A plan of one part holding every entry, predicted at ``us``."""
    return planner.Plan((planner.Part(variant, ("rest",), nnz, nnz, us, coded=coded),), us)


def test_vendor_rivals_are_the_close_vendor_singles_one_per_variant():
    ours, csr1, csr2, coo1 = (single("csr_stream(k=8)", 10.0), single("cusparse_csr(alg=1)", 12.0),
                              single("cusparse_csr(alg=2)", 13.0), single("cusparse_coo(alg=1)", 16.0))
    planning = planner.Planning(None, [ours, csr1, csr2, coo1], "model")
    assert planning.vendor_rivals(ours) == [csr1, csr2]  # the two fastest predicted vendor variants
    csr1.predicted_us = csr2.predicted_us = 25.0  # past 2x: only COO is close
    assert planning.vendor_rivals(ours) == [coo1]
    assert planning.vendor_rivals(csr1) == [csr2, coo1]  # a vendor plan races the other vendor variants
    assert {planner._kind(p) for p in (ours, csr1, coo1)} == {"flat:csr", "flat:csr:vendor", "flat:coo:vendor"}


def test_own_rivals_are_the_fastest_close_plans_of_other_families_and_kinds():
    bdia, bdia2, csr1 = single("bdia_direct", 10.0), single("bdia", 11.0), single("cusparse_csr(alg=1)", 11.5)
    bcsr, bcsr2 = single("bcsr(3x3)", 14.0), single("bcsr(2x2)", 14.2)
    vector, coo = single("csr_vector(t=8)", 14.5), single("coo_atomic", 14.8)
    planning = planner.Planning(None, [bdia, bdia2, csr1, bcsr, bcsr2, vector, coo], "model")
    # the fastest of each other family, and of each kind of the plan's own family: bdia is bdia_direct's own kind
    # with other settings; never the vendor's single
    assert planning.own_rivals(bdia) == [bdia2, bcsr, vector]
    for p in (bcsr, bcsr2, vector, coo):
        p.predicted_us += 2.0  # past 1.5x of bdia's prediction: no rival of ours
    assert planning.own_rivals(bdia) == [bdia2]
    assert planning.own_rivals(bdia, reference_us=11.0) == [bdia2, bcsr, vector]  # bdia measured slower: a wider range
    assert planning.own_rivals(csr1) == [bdia, bcsr, vector]  # a vendor plan races our fastest of each family
    assert planning.vendor_rivals(bdia) == [csr1] and planning.vendor_rivals(bdia, reference_us=5.0) == []
    sell, vector2 = single("sell(C=32,t=2)", 6.9), single("csr_vector(t=2)", 7.1)
    planning = planner.Planning(None, [sell, vector2, coo], "model")
    assert planning.own_rivals(sell) == [vector2]  # of the plan's own family, the fastest of another kind
    led = planner.Plan((planner.Part("bdia_direct", ("diagonals", (0, 1)), 90, 90, 9.0),
                        planner.Part("csr_vector(t=2)", ("rest",), 10, 10, 2.0)), 11.0)
    planning = planner.Planning(None, [bdia, led, bdia2, vector, bcsr], "model")
    assert planner._family(led) == "diagonal" and planner._kind(led) == "cocktail"
    # one per other family, one per kind of the plan's own: the Cocktail it leads and bdia, but bcsr(2x2) not too
    planning = planner.Planning(None, [bdia, led, bdia2, vector, bcsr, bcsr2], "model")
    assert planning.own_rivals(bdia, reference_us=11.0) == [led, bdia2, vector, bcsr]


def test_tuning_rivals_take_each_source_in_turn():
    """Our other families, the vendor's kernels and the plan's own family take turns, fastest first within each:
    a family's many close variants do not crowd a vendor's kernel or another family out of the first few."""
    bdia = single("bdia_direct", 10.0)
    own = [single("bdia", 10.5), single("dia", 10.6), single("dia_vi", 10.7)]
    bcsr, vector = single("bcsr(3x3)", 12.0), single("csr_vector(t=8)", 13.0)
    csr1, coo1 = single("cusparse_csr(alg=1)", 12.5), single("cusparse_coo(alg=1)", 14.0)
    planning = planner.Planning(None, [bdia, *own, bcsr, csr1, vector, coo1], "model")
    assert planning.tuning_rivals(bdia, 10.0) == [bcsr, vector, csr1, own[0], coo1, own[1], own[2]]
    # measured slower than predicted: the range widens from what it measured
    assert planning.tuning_rivals(bdia, 5.0) == planning.tuning_rivals(bdia, 10.0)
    # each other family is a source of its own: beside the plans without the coded cut, a vendor's kernel and the
    # plan's own family, the second other family is still among the first five
    uncut = [single("csr_stream(k=8)", 9.0), single("bdia_direct", 10.0)]
    planning = planner.Planning(None, [bdia, own[1], vector, bcsr, csr1], "model", uncut=uncut)
    got = planning.tuning_rivals(bdia, 10.0)
    assert got[:5] == [uncut[0], vector, bcsr, csr1, own[1]]
    # a plan's next setting: csr_vector with other lanes, within 1.5x of what the plan measured
    sibling = single("csr_vector(t=4)", 20.0)  # predicted past 1.5x of 13 µs
    planning = planner.Planning(None, [vector, coo1, sibling], "model")
    assert planning.tuning_rivals(vector, 10.0) == [coo1]
    assert planning.tuning_rivals(vector, 14.0) == [coo1, sibling]


def test_where_the_coded_cut_was_made_the_race_without_it_runs_too():
    stream = planner.Part("csr_stream(k=8)", ("rest",), 90, 90, 6.0, coded=True)
    ell = planner.Part("ell", ("row_prefix", 2), 10, 10, 1.0)
    coded = planner.Plan((ell, stream), 7.0)
    bdia, dia, bcsr, vector = (single("bdia_direct", 8.0, nnz=100), single("dia", 9.0, nnz=100),
                               single("bcsr(3x3)", 9.5, nnz=100), single("csr_vector(t=8)", 10.0, nnz=100))
    planning = planner.Planning(None, [coded, bdia], "model", uncut=[bdia, dia, bcsr, vector])
    # the plan with its values, then the race without the cut: its chosen plan and that plan's own rivals
    [uncut, *before] = planning.uncut_rivals(coded)
    assert [p.coded for p in uncut.parts] == [False, False] and uncut.parts[0] is ell
    assert [p.format for p in uncut.parts] == ["ell", "csr"] and coded.parts[1].format == "csr_vi"
    assert uncut.detail() != coded.detail()  # the race records both times under their own names
    assert before == [bdia, dia, bcsr, vector]
    # a chosen plan the cut did not store still races without the cut: a coded Cocktail can take DIA's place
    led = planner.Plan((planner.Part("bdia_direct", ("diagonals", (0, 1)), 90, 90, 5.0),
                        planner.Part("csr_stream(k=8)", ("rest",), 10, 10, 1.0, coded=True)), 6.0)
    planning = planner.Planning(None, [bdia, led], "model", uncut=[bdia, dia, bcsr])
    assert planning.own_rivals(bdia) == [led] and planning.uncut_rivals(bdia) == [dia, bcsr]
    # the plan with its values is the uncut plan it was made from (its prediction not scaled by the cut)
    made_from = planner.Plan(uncut.parts, 8.1)
    again = planner.Planning(None, [coded], "model", uncut=[made_from])
    [values] = again.uncut_rivals(coded)  # each plan once
    assert values is made_from and values.predicted_us == 8.1
    # tune="measure" times the plans without the cut too, once each
    measured = planner.Planning(None, [coded, bdia], "model", uncut=[bdia, dia, bcsr, vector]).to_measure()
    assert [p.detail() for p in measured] == [p.detail() for p in [coded, bdia, uncut, dia, bcsr, vector]]
    assert planner.Planning(None, [bdia], "model").uncut_rivals(bdia) == []  # no cut made


def test_calibration_check_points_lie_off_the_grid():
    from cocktail.auto import calibration as calibrate

    for key in ("csr_stream(k=8)", "dia", "bcsr(2x4)", "sell(C=64,t=2)"):
        v = variants.get(key)
        grid = {(p.pattern, p.rows, p.per_row) for p in calibrate.points(v, "full")}
        checks = calibrate.check_points(v, "quick")
        assert checks and not grid & {(p.pattern, p.rows, p.per_row) for p in checks}
        assert ({p.pattern for p in checks} == {"rows", "scattered"}) == (v.pattern == "rows")
    median, worst, at = calibrate.prediction_errors([(1.1, 1.0), (1.0, 2.0), (1.0, 1.0)])
    assert median == pytest.approx(0.1) and worst == pytest.approx(0.5) and at == 1


def test_a_coded_plan_is_tried_against_the_plans_without_the_cut_each_once():
    from cocktail.auto import planning

    coded, bdia = single("csr_vector(t=8)", 6.0, coded=True), single("bdia_direct", 8.0)
    dia, vendor = single("dia", 8.5), single("cusparse_csr(alg=1)", 9.0)
    uncut = [bdia, dia, single("csr_vector(t=8)", 7.0), vendor]
    # the vendor single is both a rival of the coded plan and of the plan chosen without the cut: tried once
    got = planning.rivals(planner.Planning(None, [coded, bdia, vendor], "model", uncut=uncut), coded, 6.0)
    assert dia in got and len(got) == len({id(p) for p in got}) and coded not in got
    # each source in turn: the plan with its values and the plans without the cut, ours of other families, the
    # vendor's
    assert got == [uncut[2], bdia, vendor, dia]


def test_vectorised_predictions_match_the_profiles_own():
    rng = np.random.default_rng(0)
    for prof in [*profile.shipped(), model_profile(), _with_scattered(model_profile(), 2.0)]:
        for dt in ("float32", "float64"):
            pred = prof.predictions(dt)
            keys = list(pred.index)
            n = 2000
            v = rng.integers(0, len(keys), n)
            rows = np.exp(rng.uniform(0, 16, n)).round()
            slots = rows * np.exp(rng.uniform(-3, 9, n))
            slots[:50] = 0
            for scatter in (0.0, 0.4, 1.0):
                got = pred.us(v, rows, slots, scatter)
                want = [prof.predict_us(keys[i], dt, r, s, scatter) for i, r, s in zip(v, rows, slots)]
                np.testing.assert_allclose(got, want, rtol=1e-12)


def test_vectorised_padded_slots_match_the_features_own():
    from cocktail.auto.features import WIDTH_CAP, row_groups

    rng = np.random.default_rng(1)
    lengths = np.minimum(rng.zipf(1.5, 5000), 3 * WIDTH_CAP)  # some rows past the cap
    lengths[::7] = 0
    groups = row_groups(lengths)
    table = planner._Widths(groups)
    asks = [(g, n, limit, skip) for g in groups for n in (1, 2, 4, 8, 32) for limit in (None, 1, 3, 16, 5000)
            for skip in (0, 1, 4, 700)]
    got = table.padded_slots(*zip(*asks))
    assert got == [groups[g].padded_slots(n, limit, skip) for g, n, limit, skip in asks]
    assert table.covered([1, 5, 64]) == [groups[1].covered(w) for w in (1, 5, 64)]


def _table_diagonals(csr, features):
    """``features`` with its diagonals as the fused pass keeps a graph's: a count table read only when asked."""
    import dataclasses

    from cocktail.auto.features import TableDiagonals

    m, n = csr.shape
    rows = np.repeat(np.arange(m), np.diff(csr.indptr))
    table = np.bincount(csr.indices.astype(np.int64) - rows + m - 1, minlength=m + n - 1).astype(np.uint32)
    d = features.diagonal_counts
    lazy = TableDiagonals((m, n), table, len(d), d.most(), d.lowest())
    return dataclasses.replace(features, diagonal_counts=lazy), lazy


@pytest.mark.parametrize("density, diagonal", [(0.002, False), (0.02, False), (0.002, True)])
def test_table_diagonals_plan_as_the_listed_ones_and_read_their_table_only_when_asked(density, diagonal):
    S = sp.random(3000, 2500, density=density, format="csr", random_state=7) + sp.eye(3000, 2500) * diagonal
    S = sp.csr_matrix(S)
    S.sort_indices()
    csr = CSR.from_arrays(S.data, S.indices, S.indptr, S.shape)
    listed = compute(csr)
    lazy_features, lazy = _table_diagonals(csr, listed)
    prof = model_profile()
    want = planner.plan(csr, listed, prof, np.float64)
    got = planner.plan(csr, lazy_features, prof, np.float64)
    assert got.chosen == want.chosen and got.candidates == want.candidates
    assert "_arrays" not in vars(lazy)  # planning reads a full diagonal (``diagonal``) off the table, lists none
    assert len(lazy) == len(listed.diagonal_counts) and lazy.most() == listed.diagonal_counts.most()
    assert lazy == listed.diagonal_counts and lazy.lowest() == int(listed.diagonal_counts.offsets[0])
    np.testing.assert_array_equal(lazy.dense_diagonals(0.9), listed.diagonal_counts.dense_diagonals(0.9))
